// Row-wise ops over a [rows, cols] view x into contiguous out:
//   OP 0 softmax:   exp(x - max) / sum(exp(x - max))
//   OP 1 layernorm: (x - mean) / sqrt(var + eps) * w + b   (biased var)
//   OP 2 rmsnorm:   x / sqrt(mean(x^2) + eps) * w
//   OP 3 log_softmax: x - max - log(sum(exp(x - max)))
//
// A workgroup holds ROWS rows of TPR threads each (WG = ROWS * TPR). Row
// data is counted in units of T: vec4<f32> when the row is contiguous and
// everything is 4-aligned (cols, strides and offsets then count vec4s),
// else f32 with an element stride (col_stride).
//
// MODE 0 (registers): a thread keeps its VPT units of the row in
//   registers (units t, t + TPR, ...: coalesced), so global memory is read
//   once and written once; statistics come from the registers (layernorm:
//   mean first, then the sum of squared deviations - no cancellation).
// MODE 1 (loops): rows too long for registers; softmax reads twice (an
//   online max/sum pass, then the write), layernorm three times, rmsnorm
//   twice. Correct for any length.
//
// The tensors are stored as X (`alias X` in the prelude): T itself, or for
// f16 rows vec2<u32> (four halves, vec4 mode only), read through widen()
// and written through narrow() (identities for f32; for f16 the prelude's
// conversions with an f16 library), so the arithmetic and its f32
// accumulation are the same for both.
// The prelude gives OP, MODE, TPR, ROWS, WG, VPT, HAS_WEIGHT, HAS_BIAS,
// `alias T`, `alias X`, widen/narrow, the horizontal helpers hsum/hmax for
// T, and a reduction
// library (rowwise_reduce_subgroup.wgsl or rowwise_reduce_shared.wgsl)
// defining `struct LaneIds` and row_sum / row_max, which combine one value
// per thread over the TPR threads of a row (every thread gets the result;
// called from uniform control flow; the last argument is the reduction's
// slot, 0 or 1: consecutive reductions take alternate slots, so the
// barrier of the one between keeps a slot's readers ahead of its next
// writers).
//
// The norms' statistics come from norm_stats.wgsl (a library, shared
// with their backward): the row scaled by a power of two against overflow
// and underflow, layer norm's first element subtracted before the mean.

struct Params {
    rows: u32,
    cols: u32,        // units of T per row
    row_stride: u32,  // units of T (vec4 mode) or elements
    col_stride: u32,  // elements; 1 in vec4 mode
    x_offset: u32,    // units of T
    out_offset: u32,  // units of T
    w_offset: u32,    // units of T
    b_offset: u32,    // units of T
    eps: f32,
    count: f32,       // elements per row
    neg_inf: u32,     // bits of -inf (a constant -inf does not compile)
    pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<X>;
@group(0) @binding(2) var<storage, read_write> out: array<X>;
// When the op has no weight or bias, x is bound in their place.
@group(0) @binding(3) var<storage, read> weight: array<X>;
@group(0) @binding(4) var<storage, read> bias: array<X>;

fn load(r: u32, u: u32) -> T {
    return widen(x[p.x_offset + r * p.row_stride + u * p.col_stride]);
}

fn store(r: u32, u: u32, v: T) {
    out[p.out_offset + r * p.cols + u] = narrow(v);
}

// The normalised value v (already scaled) with weight and bias applied,
// stored at unit u of row r.
fn store_norm(r: u32, u: u32, v: T) {
    var y = v;
    if (HAS_WEIGHT) { y = y * widen(weight[p.w_offset + u]); }
    if (HAS_BIAS) { y = y + widen(bias[p.b_offset + u]); }
    store(r, u, y);
}

// Softmax's shift: the row maximum, or 0 for a row without a finite one
// below +inf (all -inf: exp(-inf - 0) = 0 gives 0/0 = NaN, as on the CPU).
fn softmax_shift(m: f32) -> f32 {
    return select(m, 0.0, m == bitcast<f32>(p.neg_inf));
}

fn rows_in_registers(r: u32, t: u32, live: bool, lid: u32, ids: LaneIds) {
    let neg_inf = bitcast<f32>(p.neg_inf);
    var v: array<T, VPT>;
    for (var k = 0u; k < VPT; k++) {
        let u = t + k * TPR;
        if (u < p.cols) { v[k] = load(r, u); } else { v[k] = T(0.0); }
    }

    if (OP == 0u || OP == 3u) {
        var m = neg_inf;
        for (var k = 0u; k < VPT; k++) {
            if (t + k * TPR < p.cols) { m = max(m, hmax(v[k])); }
        }
        let shift = softmax_shift(row_max(m, lid, ids, 0u));
        var s = 0.0;
        for (var k = 0u; k < VPT; k++) {
            if (t + k * TPR < p.cols) {
                let e = exp(v[k] - shift);
                if (OP == 0u) { v[k] = e; }
                s += hsum(e);
            }
        }
        let total = row_sum(s, lid, ids, 1u);
        // softmax scales the exps; log_softmax is (x - max) - log(sum)
        // (x - max first: exact for x near the max, whatever its size).
        let inv = 1.0 / total;
        let log_total = log(total);
        if (live) {
            for (var k = 0u; k < VPT; k++) {
                let u = t + k * TPR;
                if (u < p.cols) {
                    if (OP == 0u) {
                        store(r, u, v[k] * inv);
                    } else {
                        store(r, u, (v[k] - shift) - log_total);
                    }
                }
            }
        }
        return;
    }

    let n = norm_stats_registers(&v, r, t, lid, ids);
    if (live) {
        for (var k = 0u; k < VPT; k++) {
            let u = t + k * TPR;
            if (u < p.cols) { store_norm(r, u, (v[k] - n.mean) * n.rstd); }
        }
    }
}

fn rows_in_loops(r: u32, t: u32, live: bool, lid: u32, ids: LaneIds) {
    let neg_inf = bitcast<f32>(p.neg_inf);
    if (OP == 0u || OP == 3u) {
        // Online softmax: running max m and sum s of exp(x - m).
        var m = neg_inf;
        var s = 0.0;
        for (var u = t; u < p.cols; u += TPR) {
            let xv = load(r, u);
            let nm = max(m, hmax(xv));
            let base = softmax_shift(nm);
            s = s * exp(m - base) + hsum(exp(xv - base));
            m = nm;
        }
        let shift = softmax_shift(row_max(m, lid, ids, 0u));
        let total = row_sum(s * exp(m - shift), lid, ids, 1u);
        let inv = 1.0 / total;
        let log_total = log(total);
        if (live) {
            for (var u = t; u < p.cols; u += TPR) {
                if (OP == 0u) {
                    store(r, u, exp(load(r, u) - shift) * inv);
                } else {
                    store(r, u, (load(r, u) - shift) - log_total);
                }
            }
        }
        return;
    }

    let n = norm_stats_loops(r, t, lid, ids);
    if (live) {
        for (var u = t; u < p.cols; u += TPR) {
            store_norm(r, u, ((load(r, u) * n.scale - n.shift) - n.mean) * n.rstd);
        }
    }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32,
        ids: LaneIds) {
    let g = wid.x + wid.y * nwg.x;
    if (g >= (p.rows + ROWS - 1u) / ROWS) { return; } // uniform: the whole workgroup leaves

    let row = g * ROWS + lid / TPR;
    let live = row < p.rows;
    // Threads of a row past the end compute on the last row (so that every
    // thread reaches the barriers) and write nothing.
    let r = min(row, p.rows - 1u);
    let t = lid % TPR;
    if (MODE == 0u) {
        rows_in_registers(r, t, live, lid, ids);
    } else {
        rows_in_loops(r, t, live, lid, ids);
    }
}
