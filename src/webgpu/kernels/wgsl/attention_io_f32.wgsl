// attention_tiled.wgsl's operands as f32: q, k, v read as vec4s (element i,
// a multiple of 4, is vec4 i / 4), the result written as vec4s.

@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> k: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> v: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> out: array<vec4<f32>>;

fn q4(i: u32) -> vec4<f32> { return q[i >> 2u]; }
fn k4(i: u32) -> vec4<f32> { return k[i >> 2u]; }
fn v4(i: u32) -> vec4<f32> { return v[i >> 2u]; }
fn store4(i: u32, x: vec4<f32>) { out[i >> 2u] = x; }
