// gemm.wgsl's operands as f32: a, b (read as vec4s, so that aligned runs of
// four elements are one 16-byte load), bias and out. Element i of an
// operand is component i % 4 of vec4 i / 4; every storage is a whole
// number of vec4s (the pool rounds buffers to 16 bytes).

@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read> bias: array<f32>;

// Four elements from i, i % 4 == 0.
fn a4(i: u32) -> vec4<f32> { return a[i >> 2u]; }
fn b4(i: u32) -> vec4<f32> { return b[i >> 2u]; }
fn a1(i: u32) -> f32 { return a[i >> 2u][i & 3u]; }
fn b1(i: u32) -> f32 { return b[i >> 2u][i & 3u]; }
fn bias_at(i: u32) -> f32 { return bias[i]; }
// gemm_splitk.wgsl reads the partial sums (f32) through a's binding.
fn part_at(i: u32) -> f32 { return a[i >> 2u][i & 3u]; }
fn store_f32(i: u32, v: f32) { out[i] = v; }
// f16 results only (never chosen with this library).
fn store_halves(w: u32, v: vec2<f32>) { out[w] = v.x; }
