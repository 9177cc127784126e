// Batch-norm statistics of an x cut into parts along N (each part's
// moments from channel_moments): one thread per channel combines the
// parts' means and biased variances (Chan et al.): the mean is the count-
// weighted mean of the means, the variance the count-weighted mean of
// (variance + squared deviation of the part's mean). Part p holds
// min(per, n - p*per) images of s elements each; its mean of channel c is
// src[p*2c + c], its variance src[p*2c + C + c].
// Bindings: src (the parts' moments), dst (out [2, C] at out_offset).
// Prelude constant: WG.

struct Params {
    c: u32,
    parts: u32,
    per: u32,
    n: u32,
    s: f32,
    out_offset: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;

fn images(k: u32) -> f32 {
    return f32(min(p.per, p.n - k * p.per));
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let ch = gid.x;
    if (ch >= p.c) {
        return;
    }
    let total = f32(p.n) * p.s;
    var mean = 0.0;
    for (var k = 0u; k < p.parts; k++) {
        mean += src[k * 2u * p.c + ch] * (images(k) * p.s / total);
    }
    var v = 0.0;
    for (var k = 0u; k < p.parts; k++) {
        let d = src[k * 2u * p.c + ch] - mean;
        v += (src[k * 2u * p.c + p.c + ch] + d * d) * (images(k) * p.s / total);
    }
    dst[p.out_offset + ch] = mean;
    dst[p.out_offset + p.c + ch] = v;
}
