// Softmax (OP 0) or log-softmax (OP 3) along the middle axis of x [O, C, I]
// (any strides) into contiguous out [O, C, I].
//
// A workgroup takes TI consecutive columns i of one outer index o, with TC
// threads per column splitting C (WG = TI * TC; local index tc * TI + ti,
// so neighbouring threads read neighbouring columns: coalesced when x is
// contiguous along I; with I = 1, neighbouring threads read neighbouring
// elements of the row). Each thread keeps an online (max, sum of
// exp(x - max)) over its share of C; the TC partial states of a column
// are merged as a tree in workgroup memory.
//
// PHASE 0: one workgroup per (o, column group) does all of C: the merged
//   state, then a second pass over its columns writes.
// With few columns and long C, C is cut into p.chunks chunks, one
// workgroup each (g = (o * col_groups + group) * chunks + chunk):
// PHASE 1: each leaves its chunk's state (max, sum) in stats;
// PHASE 2: each merges the states of all chunks of its columns, then
//   writes its chunk.
//
// Prelude: OP, TI, TC, WG, PHASE, get_stat, put_stat.

struct Params {
    outer: u32, cols: u32, inner: u32, x_offset: u32,
    so: u32, sc: u32, si: u32, col_groups: u32,
    neg_inf: u32, chunks: u32, chunk_len: u32, pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
// PHASE 1 and 2 bind the chunk states, [O, chunks, I] pairs (max, sum),
// at binding 3 and read and write them through get_stat / put_stat, from
// the prelude (PHASE 0 has no such binding, and stubs).

var<workgroup> red_m: array<f32, WG>;
var<workgroup> red_s: array<f32, WG>;

// exp(v - m) with exp(-inf - -inf) taken as 0 (nothing seen yet).
fn shifted_exp(v: f32, m: f32) -> f32 {
    return exp(v - select(m, 0.0, m == bitcast<f32>(p.neg_inf)));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if (g >= p.outer * p.col_groups * p.chunks) { return; } // uniform
    let chunk = g % p.chunks;
    let og = g / p.chunks;
    let o = og / p.col_groups;
    let ti = lid % TI;
    let tc = lid / TI;
    let col = (og % p.col_groups) * TI + ti;
    let live = col < p.inner;
    let i = min(col, p.inner - 1u);
    let base = p.x_offset + o * p.so + i * p.si;
    let neg_inf = bitcast<f32>(p.neg_inf);
    let c_lo = chunk * p.chunk_len;
    let c_hi = min(p.cols, c_lo + p.chunk_len);
    let st = ((o * p.chunks) * p.inner + col) * 2u; // this column's chunk 0 state

    var shift = 0.0;
    var total = 0.0;
    if (PHASE != 2u) {
        // One exp per element: rescale the sum only when the max grows.
        var m = neg_inf;
        var s = 0.0;
        for (var c = c_lo + tc; c < c_hi; c += TC) {
            let v = x[base + c * p.sc];
            if (v > m) {
                s = s * shifted_exp(m, v) + 1.0;
                m = v;
            } else {
                s += shifted_exp(v, m);
            }
        }
        red_m[lid] = m;
        red_s[lid] = s;
        workgroupBarrier();
        for (var half = TC / 2u; half > 0u; half = half >> 1u) {
            if (tc < half) {
                let m2 = red_m[lid + half * TI];
                let s2 = red_s[lid + half * TI];
                let m1 = red_m[lid];
                let nm = max(m1, m2);
                red_s[lid] = red_s[lid] * shifted_exp(m1, nm) + s2 * shifted_exp(m2, nm);
                red_m[lid] = nm;
            }
            workgroupBarrier();
        }
        if (PHASE == 1u) {
            if (live && tc == 0u) {
                put_stat(st + chunk * p.inner * 2u, red_m[ti]);
                put_stat(st + chunk * p.inner * 2u + 1u, red_s[ti]);
            }
            return;
        }
        shift = red_m[ti];
        total = red_s[ti];
    } else if (live) {
        var m = neg_inf;
        for (var k = 0u; k < p.chunks; k++) { m = max(m, get_stat(st + k * p.inner * 2u)); }
        for (var k = 0u; k < p.chunks; k++) {
            total += get_stat(st + k * p.inner * 2u + 1u) * shifted_exp(get_stat(st + k * p.inner * 2u), m);
        }
        shift = m;
    }
    // A column of -inf: shift 0, sum 0 -> NaN, as the math gives.
    shift = select(shift, 0.0, shift == neg_inf);
    let inv = 1.0 / total;
    let log_total = log(total);
    if (!live) { return; }
    let obase = o * p.cols * p.inner + col;
    for (var c = c_lo + tc; c < c_hi; c += TC) {
        let v = x[base + c * p.sc];
        if (OP == 0u) {
            out[obase + c * p.inner] = exp(v - shift) * inv;
        } else {
            out[obase + c * p.inner] = (v - shift) - log_total;
        }
    }
}
