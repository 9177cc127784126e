// Fused scaled dot-product attention, register-tiled (flash-attention's
// scheme on the FP32 units): no score matrix leaves the workgroup.
//
// Rows are (query, q head) pairs of one (batch, kv head), as in
// attention.wgsl, so grouped-query heads share each K/V tile. A workgroup
// of 128 threads (TY = 8 x TX = 16) takes BQ = 32 rows and walks the keys
// BK = 32 at a time; thread (ty, tx) owns rows 4 ty .. 4 ty + 3, keys tx
// and tx + 16 of each tile for the scores, and output quads tx, tx + 16,
// ... of its rows:
//   1. K tile -> kv_tile ([key][d quad], rows padded by one quad: the
//      lanes reading different keys hit different banks); each K and V
//      tile is loaded into registers one stage ahead (V during the
//      scores, the next K during P V) and stored after a barrier, so the
//      global loads overlap the arithmetic;
//   2. scores S = (scale q) k^T for the thread's 4 x 2 entries, out of the
//      query tile (loaded once) and kv_tile, -inf where causality or the
//      end of the keys hides them -> s_tile ([key][row quad]);
//   3. V tile -> kv_tile; each thread reads its rows' tile maxima from
//      s_tile (one vec4 of four rows a key), rescales its running state
//      and writes exp(s - max) of its entries -> p_tile;
//   4. O += P V: per key, one vec4 of P (four rows) and DVT quads of V;
//      the row sums come from the same P reads.
// Blocks run in reverse order, so the causal blocks with the most keys
// start first. Everything is accumulated in f32; the io library reads
// f32 or f16 (q4, k4, v4: four elements from an index that is a multiple
// of 4) and writes the result (store4).
//
// Prelude: DQ (head dim / 4), DVT (quads of a row per thread:
// ceil(DQ / TX)), DV_EXACT (DQ == DVT * TX), CAUSAL, UNROLL,
// OUT_HEADS_INNER (the result laid out [B, Sq, Hq, D], not [B, Hq, Sq, D]),
// WRITE_LSE and store_lse (the rows' log-sum-exp m + log l, binding 5, for the
// backward; an empty function when not wanted). Library:
// attention_io_f32 or attention_io_f16 (+ its f16 library).

struct Params {
    q_off: u32, q_sb: u32, q_sh: u32, q_ss: u32,
    k_off: u32, k_sb: u32, k_sh: u32, k_ss: u32,
    v_off: u32, v_sb: u32, v_sh: u32, v_ss: u32,
    hq: u32, hkv: u32, sq: u32, skv: u32,
    group: u32, blocks: u32, workgroups: u32, neg_inf: u32, // bits of -inf
    scale: f32, dq: u32, bk: u32, pad0: u32,               // dq == DQ, bk == BK
}

@group(0) @binding(0) var<uniform> p: Params;

const BQ: u32 = 32u;
const BK: u32 = 32u;
const TX: u32 = 16u;
const WG: u32 = 128u;
const QS: u32 = DQ + 1u;   // padded row length, in quads
const RQ: u32 = BQ / 4u;   // row quads of a tile
const LOADS: u32 = (BK * DQ + WG - 1u) / WG; // quads of a K or V tile a thread moves

var<workgroup> q_tile: array<vec4<f32>, BQ * QS>;
var<workgroup> kv_tile: array<vec4<f32>, BK * QS>;
var<workgroup> s_tile: array<vec4<f32>, BK * RQ>;
var<workgroup> p_tile: array<vec4<f32>, BK * RQ>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if (g >= p.workgroups) { return; } // uniform: the whole workgroup leaves
    let neg_inf = bitcast<f32>(p.neg_inf);
    let blk = p.blocks - 1u - g % p.blocks;
    let kvh = (g / p.blocks) % p.hkv;
    let b = g / (p.blocks * p.hkv);
    let rows = p.group * p.sq;
    let row0 = blk * BQ;
    let tx = lid % TX;
    let ty = lid / TX;
    let shift_causal = i32(p.skv) - i32(p.sq); // query i sees keys j <= i + shift
    // Loop bounds: constants the compiler may unroll (UNROLL), or the same
    // values from the parameters, which a software adapter compiles fast.
    let dn = select(p.dq, DQ, UNROLL);
    let kn = select(p.bk, BK, UNROLL);

    // The query tile, scaled; rows past the end repeat the last row.
    for (var e = lid; e < BQ * DQ; e += WG) {
        let r = min(row0 + e / DQ, rows - 1u);
        let h = kvh * p.group + r % p.group;
        let i = p.q_off + b * p.q_sb + h * p.q_sh + (r / p.group) * p.q_ss + (e % DQ) * 4u;
        q_tile[(e / DQ) * QS + e % DQ] = q4(i) * p.scale;
    }
    // The last key each of the thread's rows sees.
    var limit: array<i32, 4>;
    for (var i = 0u; i < 4u; i++) {
        let r = min(row0 + ty * 4u + i, rows - 1u);
        limit[i] = select(i32(p.skv) - 1, i32(r / p.group) + shift_causal, CAUSAL);
    }
    var kend = p.skv;
    if (CAUSAL) {
        let last_q = i32((min(row0 + BQ, rows) - 1u) / p.group);
        kend = u32(clamp(last_q + shift_causal + 1, 0, i32(p.skv)));
    }
    let k_base = p.k_off + b * p.k_sb + kvh * p.k_sh;
    let v_base = p.v_off + b * p.v_sb + kvh * p.v_sh;

    var m = vec4<f32>(neg_inf); // running maxima of the four rows
    var l = vec4<f32>(0.0);     // running sums of exp(score - m)
    var acc: array<vec4<f32>, 4u * DVT>; // [row][quad]
    // The first K tile; later ones come through registers (below).
    var stage: array<vec4<f32>, LOADS>;
    for (var i = 0u; i < LOADS; i++) {
        let e = lid + i * WG;
        if (e < BK * DQ) {
            var x = vec4<f32>(0.0);
            if (e / DQ < kend) { x = k4(k_base + (e / DQ) * p.k_ss + (e % DQ) * 4u); }
            kv_tile[(e / DQ) * QS + e % DQ] = x;
        }
    }
    workgroupBarrier();
    for (var t0 = 0u; t0 < kend; t0 += BK) {
        // This tile's V into registers: in flight while the scores run.
        for (var i = 0u; i < LOADS; i++) {
            let e = lid + i * WG;
            stage[i] = vec4<f32>(0.0);
            if (e < BK * DQ && t0 + e / DQ < kend) { stage[i] = v4(v_base + (t0 + e / DQ) * p.v_ss + (e % DQ) * 4u); }
        }

        var s0 = vec4<f32>(0.0); // key tx, rows 0..3
        var s1 = vec4<f32>(0.0); // key tx + 16
        for (var d = 0u; d < dn; d++) {
            let k0 = kv_tile[tx * QS + d];
            let k1 = kv_tile[(tx + TX) * QS + d];
            for (var i = 0u; i < 4u; i++) {
                let qv = q_tile[(ty * 4u + i) * QS + d];
                s0[i] += dot(qv, k0);
                s1[i] += dot(qv, k1);
            }
        }
        let j0 = i32(t0 + tx);
        let j1 = j0 + i32(TX);
        for (var i = 0u; i < 4u; i++) {
            s0[i] = select(neg_inf, s0[i], j0 < i32(kend) && j0 <= limit[i]);
            s1[i] = select(neg_inf, s1[i], j1 < i32(kend) && j1 <= limit[i]);
        }
        s_tile[tx * RQ + ty] = s0;
        s_tile[(tx + TX) * RQ + ty] = s1;
        workgroupBarrier();

        for (var i = 0u; i < LOADS; i++) {
            let e = lid + i * WG;
            if (e < BK * DQ) { kv_tile[(e / DQ) * QS + e % DQ] = stage[i]; }
        }
        var tmax = vec4<f32>(neg_inf);
        for (var kk = 0u; kk < kn; kk++) { tmax = max(tmax, s_tile[kk * RQ + ty]); }
        let m_new = max(m, tmax);
        // Nothing seen yet: subtract 0, so exp(-inf) gives 0 instead of NaN.
        let shift = select(m_new, vec4<f32>(0.0), m_new == vec4<f32>(neg_inf));
        let alpha = exp(m - shift);
        p_tile[tx * RQ + ty] = exp(s0 - shift);
        p_tile[(tx + TX) * RQ + ty] = exp(s1 - shift);
        workgroupBarrier();

        // The next K tile into registers: in flight while P V runs.
        let t1 = t0 + BK;
        for (var i = 0u; i < LOADS; i++) {
            let e = lid + i * WG;
            stage[i] = vec4<f32>(0.0);
            if (e < BK * DQ && t1 + e / DQ < kend) { stage[i] = k4(k_base + (t1 + e / DQ) * p.k_ss + (e % DQ) * 4u); }
        }
        for (var i = 0u; i < 4u; i++) {
            for (var c = 0u; c < DVT; c++) { acc[i * DVT + c] *= alpha[i]; }
        }
        var psum = vec4<f32>(0.0);
        for (var kk = 0u; kk < kn; kk++) {
            let pv = p_tile[kk * RQ + ty];
            psum += pv;
            for (var c = 0u; c < DVT; c++) {
                let d = tx + c * TX;
                if (DV_EXACT || d < DQ) {
                    let vv = kv_tile[kk * QS + d];
                    for (var i = 0u; i < 4u; i++) { acc[i * DVT + c] = fma(vec4<f32>(pv[i]), vv, acc[i * DVT + c]); }
                }
            }
        }
        l = l * alpha + psum;
        m = m_new;
        workgroupBarrier();
        for (var i = 0u; i < LOADS; i++) {
            let e = lid + i * WG;
            if (e < BK * DQ) { kv_tile[(e / DQ) * QS + e % DQ] = stage[i]; }
        }
        workgroupBarrier();
    }

    for (var i = 0u; i < 4u; i++) {
        let r = row0 + ty * 4u + i;
        if (r >= rows) { continue; }
        let h = kvh * p.group + r % p.group;
        let o = select((b * p.hq + h) * p.sq + r / p.group, (b * p.sq + r / p.group) * p.hq + h, OUT_HEADS_INNER) * DQ * 4u;
        // No visible key (l == 0): PyTorch's zeros.
        let inv = select(1.0 / l[i], 0.0, l[i] == 0.0);
        // The row's log-sum-exp for the backward (3e38: no key, so that
        // exp(s - it) is 0 there too).
        if (WRITE_LSE && tx == 0u) {
            store_lse((b * p.hq + h) * p.sq + r / p.group, select(m[i] + log(l[i]), 3.0e38, l[i] == 0.0));
        }
        for (var c = 0u; c < DVT; c++) {
            let d = tx + c * TX;
            if (DV_EXACT || d < DQ) { store4(o + d * 4u, acc[i * DVT + c] * inv); }
        }
    }
}
