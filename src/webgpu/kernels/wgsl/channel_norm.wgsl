// out[n, c, s] = (x[n, c, s] - mean[c]) / sqrt(var[c] + eps) * weight[c]
// + bias[c]: the per-channel map that ends batch and group norm, in one
// pass. stats is [4, C] (rows mean, var, weight, bias); out contiguous.
// T = f32: x [N, C, S] with any strides, one element per thread.
// T = vec4<f32>: x contiguous, S, offsets a multiple of 4; four elements
// of one channel per thread, all offsets and sizes counted in vec4s.
// Prelude constants: WG, and `alias T`.

struct Params {
    total: u32,   // threads
    c: u32,
    s: u32,       // units (elements or vec4s) per channel
    x_offset: u32,
    xs_n: u32,
    xs_c: u32,
    xs_s: u32,
    stats_offset: u32,
    out_offset: u32,
    eps: f32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<T>;
@group(0) @binding(2) var<storage, read> stats: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<T>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = (wid.x + wid.y * nwg.x) * WG + lid;
    if (t >= p.total) {
        return;
    }
    let s = t % p.s;
    let c = (t / p.s) % p.c;
    let n = t / (p.s * p.c);
    let k = p.stats_offset + c;
    let scale = stats[k + 2u * p.c] / sqrt(stats[k + p.c] + p.eps);
    let v = x[p.x_offset + n * p.xs_n + c * p.xs_c + s * p.xs_s];
    out[p.out_offset + t] = (v - T(stats[k])) * T(scale) + T(stats[k + 3u * p.c]);
}
