// out[n, c, s] = (x[n, c, s] - coef[0, c]) * coef[1, c] + coef[2, c]:
// the per-channel map that ends batch and group normalisation, in one
// pass. x is [N, C, S] with any strides, coef [3, C] and out contiguous.
// Prelude constants: WG.

struct Params {
    total: u32,
    c: u32,
    s: u32,
    x_offset: u32,
    xs_n: u32,
    xs_c: u32,
    xs_s: u32,
    coef_offset: u32,
    out_offset: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> coef: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

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
    let v = x[p.x_offset + n * p.xs_n + c * p.xs_c + s * p.xs_s];
    let k = p.coef_offset + c;
    out[p.out_offset + t] = (v - coef[k]) * coef[k + p.c] + coef[k + 2u * p.c];
}
