// Fused scaled dot-product attention, register-tiled with more work a
// thread than attention_tiled.wgsl: fewer workgroup-memory loads for each
// multiply-add, and three barriers a key tile instead of four.
//
// Rows are (query, q head) pairs of one (batch, kv head), as in
// attention_tiled.wgsl. A workgroup of 128 threads (TY x TX) takes
// BQ = 4 TY rows and walks the keys BK = 32 at a time. Thread (ty, tx)
// owns rows ty, ty + TY, ty + 2 TY, ty + 3 TY (one vec4 holds a value of
// each), so the rows a warp reads at once lie in different banks. With
// TY = 16 (64 rows, TX = 8):
//   scores: keys tx + TX c (c < KPT = 4) of its four rows, 16 a thread:
//     per quad of the head dim 4 loads of q and 4 of k for 64 FMAs
//     (attention_tiled.wgsl: 6 loads for 32);
//   P V: output quads tx + TX c (c < DVT) of its rows: per key one load
//     of P (four rows) and DVT of V for 16 DVT FMAs.
// The tile maxima come from each thread's maximum over its own keys
// (part_max: TX loads a thread, not BK). K and V have tiles of their own;
// the next ones are loaded into registers once the scores are done (no
// registers held for them during the scores) and stored where no thread
// reads the tiles any more:
//   scores (k_tile) -> part_max; barrier A;
//   next K and V -> registers; maxima, exp -> p_tile; barrier B;
//   P V (p_tile, v_tile); next K -> k_tile; barrier C; next V -> v_tile.
// Blocks run in reverse order, so the causal blocks with the most keys
// start first. Everything is accumulated in f32 (a score as a chain of
// FMAs over the head dim); the io library reads f32 or f16 (q4, k4, v4)
// and writes the result (store4).
//
// Prelude: TY (row quads: 8 or 16), DQ (head dim / 4), DVT (output quads
// of a row per thread: ceil(DQ / TX)), DV_EXACT (DQ == DVT * TX), CAUSAL,
// UNROLL, OUT_HEADS_INNER (the result laid out [B, Sq, Hq, D]),
// WRITE_LSE and store_lse (binding 5, as in attention_tiled.wgsl).
// Library: attention_io_f32 or attention_io_f16 (+ its f16 library).

struct Params {
    q_off: u32, q_sb: u32, q_sh: u32, q_ss: u32,
    k_off: u32, k_sb: u32, k_sh: u32, k_ss: u32,
    v_off: u32, v_sb: u32, v_sh: u32, v_ss: u32,
    hq: u32, hkv: u32, sq: u32, skv: u32,
    group: u32, blocks: u32, workgroups: u32, neg_inf: u32, // bits of -inf
    scale: f32, dq: u32, bk: u32, pad0: u32,               // dq == DQ, bk == BK
}

@group(0) @binding(0) var<uniform> p: Params;

const WG: u32 = 128u;
const BK: u32 = 32u;
const TX: u32 = WG / TY;
const BQ: u32 = 4u * TY;
const KPT: u32 = BK / TX;  // keys a thread scores in a tile
const QS: u32 = DQ + 1u;   // padded row length, in quads
const PS: u32 = TY + 1u;   // padded key row of p_tile: one warp's stores spread over the banks
const LOADS: u32 = (BK * DQ + WG - 1u) / WG; // quads of a K or V tile a thread moves

var<workgroup> q_tile: array<vec4<f32>, BQ * QS>;
var<workgroup> k_tile: array<vec4<f32>, BK * QS>;
var<workgroup> v_tile: array<vec4<f32>, BK * QS>;
var<workgroup> p_tile: array<vec4<f32>, BK * PS>;
var<workgroup> part_max: array<vec4<f32>, TX * TY>; // [thread tx][row quad]

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
        let r = min(row0 + ty + TY * i, rows - 1u);
        limit[i] = select(i32(p.skv) - 1, i32(r / p.group) + shift_causal, CAUSAL);
    }
    var kend = p.skv;
    if (CAUSAL) {
        let last_q = i32((min(row0 + BQ, rows) - 1u) / p.group);
        kend = u32(clamp(last_q + shift_causal + 1, 0, i32(p.skv)));
    }
    let k_base = p.k_off + b * p.k_sb + kvh * p.k_sh;
    let v_base = p.v_off + b * p.v_sb + kvh * p.v_sh;

    // The first K and V tiles; later ones come through registers.
    for (var i = 0u; i < LOADS; i++) {
        let e = lid + i * WG;
        if (e < BK * DQ) {
            var x = vec4<f32>(0.0);
            var y = vec4<f32>(0.0);
            if (e / DQ < kend) {
                x = k4(k_base + (e / DQ) * p.k_ss + (e % DQ) * 4u);
                y = v4(v_base + (e / DQ) * p.v_ss + (e % DQ) * 4u);
            }
            k_tile[(e / DQ) * QS + e % DQ] = x;
            v_tile[(e / DQ) * QS + e % DQ] = y;
        }
    }
    workgroupBarrier();

    var m = vec4<f32>(neg_inf); // running maxima of the four rows
    var l = vec4<f32>(0.0);     // running sums of exp(score - m)
    var acc: array<vec4<f32>, 4u * DVT>; // [row][quad]
    var k_next: array<vec4<f32>, LOADS>;
    var v_next: array<vec4<f32>, LOADS>;
    for (var t0 = 0u; t0 < kend; t0 += BK) {
        // Declared with a value: a declaration in a loop without one is not
        // zeroed again on every pass by every compiler.
        var s = array<vec4<f32>, KPT>(); // [key c][row i]
        for (var d = 0u; d < dn; d++) {
            var kv: array<vec4<f32>, KPT>;
            for (var c = 0u; c < KPT; c++) { kv[c] = k_tile[(tx + TX * c) * QS + d]; }
            for (var i = 0u; i < 4u; i++) {
                let qv = q_tile[(ty + TY * i) * QS + d];
                for (var c = 0u; c < KPT; c++) {
                    s[c][i] = fma(qv.w, kv[c].w, fma(qv.z, kv[c].z, fma(qv.y, kv[c].y, fma(qv.x, kv[c].x, s[c][i]))));
                }
            }
        }
        var pm = vec4<f32>(neg_inf);
        for (var c = 0u; c < KPT; c++) {
            let j = i32(t0 + tx + TX * c);
            for (var i = 0u; i < 4u; i++) {
                s[c][i] = select(neg_inf, s[c][i], j < i32(kend) && j <= limit[i]);
            }
            pm = max(pm, s[c]);
        }
        part_max[tx * TY + ty] = pm;
        workgroupBarrier(); // A: k_tile read, part_max written

        // The next K and V tiles into registers: in flight during P V.
        let t1 = t0 + BK;
        for (var i = 0u; i < LOADS; i++) {
            let e = lid + i * WG;
            k_next[i] = vec4<f32>(0.0);
            v_next[i] = vec4<f32>(0.0);
            if (e < BK * DQ && t1 + e / DQ < kend) {
                k_next[i] = k4(k_base + (t1 + e / DQ) * p.k_ss + (e % DQ) * 4u);
                v_next[i] = v4(v_base + (t1 + e / DQ) * p.v_ss + (e % DQ) * 4u);
            }
        }
        var tmax = vec4<f32>(neg_inf);
        for (var x = 0u; x < TX; x++) { tmax = max(tmax, part_max[x * TY + ty]); }
        let m_new = max(m, tmax);
        // Nothing seen yet: subtract 0, so exp(-inf) gives 0 instead of NaN.
        let shift = select(m_new, vec4<f32>(0.0), m_new == vec4<f32>(neg_inf));
        let alpha = exp(m - shift);
        for (var c = 0u; c < KPT; c++) { p_tile[(tx + TX * c) * PS + ty] = exp(s[c] - shift); }
        workgroupBarrier(); // B: p_tile written

        for (var i = 0u; i < 4u; i++) {
            for (var c = 0u; c < DVT; c++) { acc[i * DVT + c] *= alpha[i]; }
        }
        var psum = vec4<f32>(0.0);
        for (var kk = 0u; kk < kn; kk++) {
            var vv = array<vec4<f32>, DVT>(); // zeros past the row (quads never stored)
            for (var c = 0u; c < DVT; c++) {
                let d = tx + c * TX;
                if (DV_EXACT || d < DQ) { vv[c] = v_tile[kk * QS + d]; }
            }
            let pv = p_tile[kk * PS + ty];
            psum += pv;
            for (var c = 0u; c < DVT; c++) {
                for (var i = 0u; i < 4u; i++) { acc[i * DVT + c] = fma(vec4<f32>(pv[i]), vv[c], acc[i * DVT + c]); }
            }
        }
        l = l * alpha + psum;
        m = m_new;
        for (var i = 0u; i < LOADS; i++) {
            let e = lid + i * WG;
            if (e < BK * DQ) { k_tile[(e / DQ) * QS + e % DQ] = k_next[i]; }
        }
        workgroupBarrier(); // C: v_tile and p_tile read, the next K stored
        for (var i = 0u; i < LOADS; i++) {
            let e = lid + i * WG;
            if (e < BK * DQ) { v_tile[(e / DQ) * QS + e % DQ] = v_next[i]; }
        }
    }

    for (var i = 0u; i < 4u; i++) {
        let r = row0 + ty + TY * i;
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
