// attention_tiled.wgsl's operands as f16: four halves (element i, a
// multiple of 4) are one 8-byte word pair; the result is rounded to f16.
// Needs unpack_halves and pack_halves (f16_hw or f16_bits) beside it.

@group(0) @binding(1) var<storage, read> q: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> k: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> v: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read_write> out: array<vec2<u32>>;

fn halves4(w: vec2<u32>) -> vec4<f32> { return vec4<f32>(unpack_halves(w.x), unpack_halves(w.y)); }
fn q4(i: u32) -> vec4<f32> { return halves4(q[i >> 2u]); }
fn k4(i: u32) -> vec4<f32> { return halves4(k[i >> 2u]); }
fn v4(i: u32) -> vec4<f32> { return halves4(v[i >> 2u]); }
fn store4(i: u32, x: vec4<f32>) { out[i >> 2u] = vec2<u32>(pack_halves(x.xy), pack_halves(x.zw)); }
