// gemm.wgsl's operands as f16: a, b read as vec2<u32> (four halves, one
// 8-byte load), bias as words of two halves, out as words of two halves
// (f16 results) or as f32 bits (split-k partial sums). Needs unpack_halves
// and pack_halves (f16_hw or f16_bits) beside it.

@group(0) @binding(1) var<storage, read> a: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> b: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
@group(0) @binding(4) var<storage, read> bias: array<u32>;

fn a4(i: u32) -> vec4<f32> { let w = a[i >> 2u]; return vec4<f32>(unpack_halves(w.x), unpack_halves(w.y)); }
fn b4(i: u32) -> vec4<f32> { let w = b[i >> 2u]; return vec4<f32>(unpack_halves(w.x), unpack_halves(w.y)); }
fn a1(i: u32) -> f32 { return unpack_halves(a[i >> 2u][(i >> 1u) & 1u])[i & 1u]; }
fn b1(i: u32) -> f32 { return unpack_halves(b[i >> 2u][(i >> 1u) & 1u])[i & 1u]; }
fn bias_at(i: u32) -> f32 { return unpack_halves(bias[i >> 1u])[i & 1u]; }
// gemm_splitk.wgsl reads the partial sums (f32 bits) through a's binding.
fn part_at(i: u32) -> f32 { return bitcast<f32>(a[i >> 1u][i & 1u]); }
fn store_f32(i: u32, v: f32) { out[i] = bitcast<u32>(v); }
fn store_halves(w: u32, v: vec2<f32>) { out[w] = pack_halves(v); }
