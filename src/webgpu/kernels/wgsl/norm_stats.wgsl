// A row's layer norm (OP 1) or RMS norm (OP 2) statistics: the library
// (wg_launch.libraries) that rowwise.wgsl (the forward) and
// norm_backward.wgsl (the backward, which must normalise exactly as the
// forward did) share. It uses their prelude (OP, TPR, VPT, T, hsum, hmax,
// lane0), their reduction library (row_max / row_sum, alternate slots),
// the parameter block p (cols, count, eps) and each shader's
// load(r, u) -> T, unit u of row r of x.
//
// The norms cannot overflow for finite input: a row whose max |x| passes
// 2^44 is scaled by a power of two first (exact), so the squares of up
// to 2^31 elements stay below 2^121, and eps is scaled with them. Nor do
// their squares underflow: a row whose max |x| is below 2^-20 is scaled up
// so that its max lies in [1, 2) (a nonzero deviation is then at least
// 2^-24, its square a normal number).
// layernorm also subtracts the row's first element (scaled) before the
// mean, so a row of equal values has exactly zero deviations.

fn is_finite(m: f32) -> bool {
    return (bitcast<u32>(m) & 0x7f800000u) != 0x7f800000u;
}

// 2^-k with k the smallest power that brings max |x| (m) below 2^45, or
// 2^-e (e = m's exponent) for rows below 2^-20; 1 for the rows between,
// for zero and subnormal maxima, and for rows with inf or NaN (m's
// exponent field all ones), which keep the unscaled arithmetic and its
// non-finite results. An eps scaled up past f32 gives rstd 0: the exact
// result there is within 2^-20 / sqrt(eps) of the bias.
fn norm_scale(m: f32) -> f32 {
    let e = i32((bitcast<u32>(m) >> 23u) & 0xffu) - 127;
    if (e > 44 && e <= 127) { return bitcast<f32>(u32(127 - (e - 44)) << 23u); } // e - 44 <= 83
    if (e < -20 && e > -127) { return bitcast<f32>(u32(127 - e) << 23u); }      // 2^-e <= 2^126
    return 1.0;
}

// 1 / sqrt(var + eps) in the scaled units (var_s = var * s^2). When eps
// underflowed with the scale and every deviation is zero, the row is
// constant: its rstd is irrelevant (0 * rstd), so 0 instead of inf.
fn norm_rstd(q: f32, s: f32) -> f32 {
    let denom = q / p.count + (p.eps * s) * s;
    return select(1.0 / sqrt(denom), 0.0, denom == 0.0 && p.eps > 0.0);
}

// The statistics of row r in the scaled units: x^ = (x * scale - shift -
// mean) * rstd. shift and mean are 0 for RMS norm.
struct NormStats {
    scale: f32,
    shift: f32,
    mean: f32,
    rstd: f32,
}

// The row's max |x| over the TPR threads (m: this thread's), its scale
// and its shift.
fn norm_scale_shift(m: f32, r: u32, lid: u32, ids: LaneIds) -> vec2<f32> {
    let row_m = row_max(m, lid, ids, 0u);
    let sc = norm_scale(row_m);
    var shift = 0.0;
    if (OP == 1u && is_finite(row_m)) { shift = lane0(load(r, 0u)) * sc; }
    return vec2<f32>(sc, shift);
}

// The registers mode: *v holds this thread's units t, t + TPR, ... of row
// r (0 past the row's end). They become x * scale - shift (the padding
// stays 0), the units the statistics are of. Called from uniform control
// flow by every thread of the row (the reductions' barriers).
fn norm_stats_registers(v: ptr<function, array<T, VPT>>, r: u32, t: u32, lid: u32, ids: LaneIds) -> NormStats {
    var m = 0.0;
    for (var k = 0u; k < VPT; k++) { m = max(m, hmax(abs((*v)[k]))); } // padding is 0
    let ss = norm_scale_shift(m, r, lid, ids);
    let sc = ss.x;
    let shift = ss.y;
    for (var k = 0u; k < VPT; k++) {
        if (t + k * TPR < p.cols) { (*v)[k] = (*v)[k] * sc - shift; }
    }
    // OP is a constant: the reductions stay in uniform control flow.
    var mean = 0.0;
    if (OP == 1u) {
        var s = 0.0;
        for (var k = 0u; k < VPT; k++) { s += hsum((*v)[k]); } // padding is 0
        mean = row_sum(s, lid, ids, 1u) / p.count;
    }
    var q = 0.0;
    for (var k = 0u; k < VPT; k++) {
        if (t + k * TPR < p.cols) {
            let d = (*v)[k] - mean;
            q += hsum(d * d);
        }
    }
    return NormStats(sc, shift, mean, norm_rstd(row_sum(q, lid, ids, select(1u, 0u, OP == 1u)), sc));
}

// The loops mode: row r read from global memory, units t, t + TPR, ...,
// three times for layer norm, twice for RMS norm.
fn norm_stats_loops(r: u32, t: u32, lid: u32, ids: LaneIds) -> NormStats {
    var m = 0.0;
    for (var u = t; u < p.cols; u += TPR) { m = max(m, hmax(abs(load(r, u)))); }
    let ss = norm_scale_shift(m, r, lid, ids);
    let sc = ss.x;
    let shift = ss.y;
    var mean = 0.0;
    if (OP == 1u) {
        var s = 0.0;
        for (var u = t; u < p.cols; u += TPR) { s += hsum(load(r, u) * sc - shift); }
        mean = row_sum(s, lid, ids, 1u) / p.count;
    }
    var q = 0.0;
    for (var u = t; u < p.cols; u += TPR) {
        let d = (load(r, u) * sc - shift) - mean;
        q += hsum(d * d);
    }
    return NormStats(sc, shift, mean, norm_rstd(row_sum(q, lid, ids, select(1u, 0u, OP == 1u)), sc));
}
