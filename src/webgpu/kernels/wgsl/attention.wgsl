// Fused scaled dot-product attention with an online softmax
// (flash-attention's scheme): no score matrix leaves the workgroup.
//
// For one (batch, kv head), the rows are the (query, q head) pairs that
// share that kv head: row r is query r / group of q head
// kvh * group + r % group, so grouped-query heads share every K/V tile a
// workgroup loads. A workgroup takes BQ consecutive rows with TPQ threads
// each (WG = BQ * TPQ) and walks the keys in tiles of BK:
//   1. K tile -> kv_tile (workgroup memory, rows padded to KS floats so
//      that lanes reading different keys hit different banks; q_tile,
//      s_tile and p_tile rows are padded likewise, to QS and PS, for the
//      lanes of different rows);
//   2. each thread scores its KPT keys of the tile for its row (scale,
//      causal limit, mask) -> s_tile;
//   3. V tile -> kv_tile (K is no longer needed); each thread takes the
//      tile's row maximum, rescales its running state and writes
//      exp(score - max) of its keys -> p_tile;
//   4. each thread adds p_tile @ V to its DVT output units
//      (lane, lane + TPQ, ...) and the row sum.
// Units: vec4<f32> (W = 4) when D and DV are multiples of 4, so the dot
// products and the P @ V updates read workgroup memory 16 bytes at a
// time; else f32 (W = 1). Global loads stay scalar and coalesced.
// Causal blocks stop at the last key their last row sees.
// SPLIT (few workgroups for many keys, as in decoding): the keys are cut
// into p.splits chunks, one workgroup each, which leave their partial
// state; attention_combine.wgsl merges the chunks.
//
// Prelude: D, DV, W, DVW (DV / W), KS, QS, PS, BQ, BK, SPLIT, GV, TPQ,
// WG, KPT, DVT, DV_EXACT (DVW == DVT * TPQ), `alias V`, `alias KT`, the
// helpers vdot, unit, put_q, put_kv, k_at, v_at, k_unit, v_unit (see
// kernels/attention.c),
// MASK (0 none, 1 added f32, 2 bool words), CAUSAL, and `alias MT` (the
// mask's element type). The loops over D and over a tile's keys take
// their bounds from the parameters (p.dw, p.bk: the same values) so that
// shader compilers do not unroll them whole: fully unrolled, a variant
// took seconds to compile on a software Vulkan.

struct Params {
    q_off: u32, q_sb: u32, q_sh: u32, q_ss: u32,
    q_sd: u32, k_off: u32, k_sb: u32, k_sh: u32,
    k_ss: u32, k_sd: u32, v_off: u32, v_sb: u32,
    v_sh: u32, v_ss: u32, v_sd: u32, m_off: u32,
    m_sb: u32, m_sh: u32, m_ss: u32, m_sk: u32,
    hq: u32, hkv: u32, sq: u32, skv: u32,
    group: u32, blocks: u32, workgroups: u32, neg_inf: u32, // bits of -inf
    scale: f32, dw: u32, bk: u32, rows_total: u32, // dw == D / W, bk == BK
    splits: u32, chunk: u32, kv_at: u32, kv_on: u32, // kv_on: keys = kv_length[kv_at]
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
// KT: vec4<f32> when GV (K and V rows are whole aligned vec4s), else f32;
// k_at / v_at read one float, k_unit / v_unit one unit at a float index.
@group(0) @binding(2) var<storage, read> k: array<KT>;
@group(0) @binding(3) var<storage, read> v: array<KT>;
// Without a mask, q is bound here (never read).
@group(0) @binding(4) var<storage, read> mask: array<MT>;
// SPLIT: partial results, DV + 2 floats per (split, output row): the
// unnormalised sums, then the row's max and sum of exps.
@group(0) @binding(5) var<storage, read_write> out: array<f32>;
// wt_attention_options.kv_length (kv_on), else q bound again.
@group(0) @binding(6) var<storage, read> kv_length: array<i32>;

// Query and K/V tiles hold units of V (vec4<f32> or f32, W floats); QS
// and KS count units.
var<workgroup> q_tile: array<V, BQ * QS>;
var<workgroup> kv_tile: array<V, BK * KS>;
var<workgroup> s_tile: array<f32, BQ * PS>;
var<workgroup> p_tile: array<f32, BQ * PS>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if (g >= p.workgroups) { return; } // uniform: the whole workgroup leaves
    let neg_inf = bitcast<f32>(p.neg_inf);
    let split = g % p.splits;
    let gb = g / p.splits;
    let blk = gb % p.blocks;
    let kvh = (gb / p.blocks) % p.hkv;
    let b = gb / (p.blocks * p.hkv);
    let rows = p.group * p.sq;
    let row0 = blk * BQ;

    // Threads of rows past the end work on the last row (every thread
    // reaches every barrier) and write nothing.
    let lr = lid / TPQ;
    let lane = lid % TPQ;
    let live = row0 + lr < rows;
    let r = min(row0 + lr, rows - 1u);
    let qi = r / p.group;
    let h = kvh * p.group + r % p.group;
    // The keys that exist this step: all, or the first kv_length.
    var skv = p.skv;
    if (p.kv_on != 0u) { skv = u32(clamp(kv_length[p.kv_at], 0, i32(p.skv))); }
    let shift_causal = i32(skv) - i32(p.sq); // query i sees keys j <= i + shift

    for (var e = lid; e < BQ * D; e += WG) {
        let er = min(row0 + e / D, rows - 1u);
        let eh = kvh * p.group + er % p.group;
        let x = q[p.q_off + b * p.q_sb + eh * p.q_sh + (er / p.group) * p.q_ss + (e % D) * p.q_sd] * p.scale;
        put_q((e / D) * QS + (e % D) / W, (e % D) % W, x);
    }

    var kend = skv;
    if (CAUSAL) {
        let last_q = i32((min(row0 + BQ, rows) - 1u) / p.group);
        kend = u32(clamp(last_q + shift_causal + 1, 0, i32(skv)));
    }
    // This workgroup's share of the keys: [k_lo, kend).
    let k_lo = split * p.chunk;
    kend = min(kend, k_lo + p.chunk);
    // (k_lo may lie past kend: the loop below does not run and the chunk
    // leaves an empty state, which the combine weighs by 0.)
    let k_base = p.k_off + b * p.k_sb + kvh * p.k_sh;
    let v_base = p.v_off + b * p.v_sb + kvh * p.v_sh;
    let m_base = p.m_off + b * p.m_sb + h * p.m_sh + qi * p.m_ss;

    var m = neg_inf; // running maximum of the row's scores
    var l = 0.0;     // running sum of exp(score - m)
    var acc: array<V, DVT>;
    for (var t0 = k_lo; t0 < kend; t0 += BK) {
        if (GV) {
            for (var e = lid; e < BK * (D / W); e += WG) {
                let j = t0 + e / (D / W);
                var x = V(0.0);
                if (j < kend) { x = k_unit(k_base + j * p.k_ss + (e % (D / W)) * W); }
                kv_tile[(e / (D / W)) * KS + e % (D / W)] = x;
            }
        } else {
            for (var e = lid; e < BK * D; e += WG) {
                let j = t0 + e / D;
                var x = 0.0;
                if (j < kend) { x = k_at(k_base + j * p.k_ss + (e % D) * p.k_sd); }
                put_kv((e / D) * KS + (e % D) / W, (e % D) % W, x);
            }
        }
        workgroupBarrier();

        // The row's query unit is read once per d for all KPT keys.
        var scs: array<f32, KPT>;
        // Zeroed explicitly: some compilers keep the last tile's values.
        for (var c = 0u; c < KPT; c++) { scs[c] = 0.0; }
        for (var d = 0u; d < p.dw; d++) {
            let qv = q_tile[lr * QS + d];
            for (var c = 0u; c < KPT; c++) { scs[c] += vdot(qv, kv_tile[(lane + c * TPQ) * KS + d]); }
        }
        for (var c = 0u; c < KPT; c++) {
            let kk = lane + c * TPQ;
            let j = t0 + kk;
            var sc = scs[c];
            var visible = j < kend;
            if (CAUSAL) { visible = visible && i32(j) <= i32(qi) + shift_causal; }
            if (MASK != 0u && j < kend) {
                let mv = mask[m_base + j * p.m_sk];
                if (MASK == 1u) { sc += f32(mv); } else { visible = visible && u32(mv) != 0u; }
            }
            s_tile[lr * PS + kk] = select(neg_inf, sc, visible);
        }
        workgroupBarrier();

        if (GV) {
            for (var e = lid; e < BK * DVW; e += WG) {
                let j = t0 + e / DVW;
                var x = V(0.0);
                if (j < kend) { x = v_unit(v_base + j * p.v_ss + (e % DVW) * W); }
                kv_tile[(e / DVW) * KS + e % DVW] = x;
            }
        } else {
            for (var e = lid; e < BK * DV; e += WG) {
                let j = t0 + e / DV;
                var x = 0.0;
                if (j < kend) { x = v_at(v_base + j * p.v_ss + (e % DV) * p.v_sd); }
                put_kv((e / DV) * KS + (e % DV) / W, (e % DV) % W, x);
            }
        }
        var tmax = neg_inf;
        for (var kk = 0u; kk < p.bk; kk++) { tmax = max(tmax, s_tile[lr * PS + kk]); }
        let m_new = max(m, tmax);
        // Nothing seen yet: subtract 0, so exp(-inf) gives 0 instead of NaN.
        let shift = select(m_new, 0.0, m_new == neg_inf);
        let alpha = exp(m - shift);
        for (var c = 0u; c < KPT; c++) {
            let kk = lane + c * TPQ;
            p_tile[lr * PS + kk] = exp(s_tile[lr * PS + kk] - shift);
        }
        workgroupBarrier();

        for (var c = 0u; c < DVT; c++) { acc[c] *= alpha; }
        var psum = 0.0;
        for (var kk = 0u; kk < p.bk; kk++) {
            let pk = p_tile[lr * PS + kk];
            psum += pk;
            for (var c = 0u; c < DVT; c++) {
                let d = lane + c * TPQ;
                if (DV_EXACT || d < DVW) { acc[c] += pk * kv_tile[kk * KS + d]; }
            }
        }
        l = l * alpha + psum;
        m = m_new;
        workgroupBarrier();
    }

    let orow = (b * p.hq + h) * p.sq + qi;
    if (SPLIT) {
        if (live) {
            let o = (split * p.rows_total + orow) * (DV + 2u);
            for (var c = 0u; c < DVT; c++) {
                let d = lane + c * TPQ;
                if (DV_EXACT || d < DVW) {
                    for (var i = 0u; i < W; i++) { out[o + d * W + i] = unit(acc[c], i); }
                }
            }
            if (lane == 0u) {
                out[o + DV] = m;
                out[o + DV + 1u] = l;
            }
        }
        return;
    }
    if (live) {
        // No visible key (l == 0): PyTorch's zeros.
        let inv = select(1.0 / l, 0.0, l == 0.0);
        let o = orow * DV;
        for (var c = 0u; c < DVT; c++) {
            let d = lane + c * TPQ;
            if (DV_EXACT || d < DVW) {
                for (var i = 0u; i < W; i++) { out[o + d * W + i] = unit(acc[c], i) * inv; }
            }
        }
    }
}
