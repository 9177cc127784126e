// The mean and biased variance of every channel of x [N, C, S] (any
// strides), in two passes over x (the variance sums squared deviations
// from the mean, so a large mean costs no precision): batch norm's
// training statistics. Channel c's count = N*S elements, indexed
// e = n*S + s, are cut in `chunks` chunks of chunk_len; a workgroup takes
// one (channel, chunk) and combines its threads' sums in workgroup memory.
//   MODE 0: part[c*chunks + k] = sum of chunk k of channel c.
//   MODE 1: part[(C + c)*chunks + k] = sum of (x - mean_c)^2 over chunk
//           k, mean_c from channel c's MODE 0 sums.
//   MODE 2: one thread per channel: out[c] = mean, out[C + c] = variance.
// Bindings: MODE 0 and 1 read x (src) and write part (dst); MODE 2 reads
// part (src) and writes out (dst).
// Prelude constants: WG (a power of two), MODE.

struct Params {
    c: u32,
    s: u32,
    count: u32,
    chunks: u32,
    chunk_len: u32,
    x_offset: u32,
    xs_n: u32,
    xs_c: u32,
    xs_s: u32,
    out_offset: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;

var<workgroup> red: array<f32, WG>;

fn workgroup_sum(v: f32, lid: u32) -> f32 {
    red[lid] = v;
    workgroupBarrier();
    for (var half = WG / 2u; half > 0u; half = half >> 1u) {
        if (lid < half) {
            red[lid] += red[lid + half];
        }
        workgroupBarrier();
    }
    let r = red[0];
    workgroupBarrier(); // red is reused by the next sum
    return r;
}

fn channel_sum(first: u32, lid: u32) -> f32 {
    var acc = 0.0;
    for (var k = lid; k < p.chunks; k += WG) {
        acc += dst[first + k];
    }
    return workgroup_sum(acc, lid);
}

// MODE 2: thread c turns channel c's partial sums into its statistics.
fn finish(c: u32) {
    if (c >= p.c) {
        return;
    }
    var sum = 0.0;
    var sq = 0.0;
    for (var k = 0u; k < p.chunks; k++) {
        sum += src[c * p.chunks + k];
        sq += src[(p.c + c) * p.chunks + k];
    }
    dst[p.out_offset + c] = sum / f32(p.count);
    dst[p.out_offset + p.c + c] = sq / f32(p.count);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = wid.x + wid.y * nwg.x;
    if (MODE == 2u) {
        finish(w * WG + lid);
        return;
    }
    if (w >= p.c * p.chunks) {
        return; // uniform: the whole workgroup leaves
    }
    let c = w / p.chunks;
    let k = w % p.chunks;
    var mean = 0.0;
    if (MODE == 1u) {
        mean = channel_sum(c * p.chunks, lid) / f32(p.count);
    }
    let start = k * p.chunk_len;
    let end = min(start + p.chunk_len, p.count);
    let base = p.x_offset + c * p.xs_c;
    var acc = 0.0;
    for (var e = start + lid; e < end; e += WG) {
        let v = src[base + (e / p.s) * p.xs_n + (e % p.s) * p.xs_s];
        if (MODE == 0u) {
            acc += v;
        } else {
            acc += (v - mean) * (v - mean);
        }
    }
    let total = workgroup_sum(acc, lid);
    if (lid == 0u) {
        dst[(MODE * p.c + c) * p.chunks + k] = total;
    }
}
