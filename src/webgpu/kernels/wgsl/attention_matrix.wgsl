// Fused scaled dot-product attention with f16 q, k, v on the matrix units
// (Dawn's experimental subgroup matrices): flash attention's two products,
// S = q k^T and O += P V, as 16 x 16 x 16 products with f32 accumulation.
//
// A workgroup of SGS subgroups of 32 invocations takes BQ = 16 SGS
// queries of one (batch, q head) and walks the keys BK at a time (causal:
// only the key blocks its last query sees). Subgroup sg owns queries
// 16 sg .. 16 sg + 15: their q fragments (DF = D / 16 of them, staged
// once through workgroup memory, zero past the end) and their output
// accumulator (DF fragments) stay in registers all along. Per key block:
//   1. K's block (the registers loaded during the previous block's P V)
//      is in workgroup memory as 16 x 16 fragments; each subgroup
//      multiplies its q fragments by them (K's rows as the columns of a
//      col-major right operand) into one 16 x 16 score fragment at a time
//      and stores it to its rows of s_tile (f32; fragments have no
//      element access);
//   2. V's block goes into the same fragments (its loads were issued
//      before step 1); the two invocations of a row read its scores,
//      scaled into log2 units, hide the keys causality or the end of the
//      keys hides (-inf), and take the row maximum (one shuffle);
//   3. the row's running maximum m moves only when the block's maximum
//      exceeds it by more than 8 (log2 units), so that P = exp2(s - m)
//      stays below 2^8 (exact in f16, f32 sums) and the output accumulator
//      is rarely rescaled; when any row of the workgroup moved, every
//      subgroup rescales its accumulator through workgroup memory, one
//      fragment at a time (a workgroup-uniform branch);
//   4. P (rounded to f16) is written as 16 x 16 fragments, and each
//      subgroup adds P V into its accumulator; meanwhile the next K block
//      is read into registers.
// The end: the accumulator goes through workgroup memory once more, is
// divided by the row sums and rounded to f16. Rows that see no key give
// zeros (PyTorch's answer).
//
// bench/attention_matrix_emulated.mjs runs this file with the fragment
// builtins replaced by per-invocation stand-ins, on devices without them.
// Needs subgroups of 32 consecutive invocations (the host checks). The
// fragment offsets differ between the subgroups of a workgroup, which
// Dawn's uniformity analysis refuses unless told: the prelude turns that
// diagnostic off. Prelude: D (a multiple of 16, at most 128), SGS, BK (a
// multiple of 16), CAUSAL. Library: an f16 library (pack_halves).

struct Params {
    q_off: u32, q_sb: u32, q_sh: u32, q_ss: u32,
    k_off: u32, k_sb: u32, k_sh: u32, k_ss: u32,
    v_off: u32, v_sb: u32, v_sh: u32, v_ss: u32,
    hq: u32, hkv: u32, sq: u32, skv: u32,
    group: u32, blocks: u32, workgroups: u32, neg_inf: u32, // bits of -inf
    scale: f32, dq: u32, bk: u32, pad0: u32,               // scale: times log2(e)
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<vec4<u32>>;  // words of 8 halves
@group(0) @binding(2) var<storage, read> k: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> v: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> out: array<u32>; // pairs of halves

const WG: u32 = 32u * SGS;
const BQ: u32 = 16u * SGS;
const DF: u32 = D / 16u;      // fragments along the head dim
const DW: u32 = D / 8u;       // words of a row
const KF: u32 = BK / 16u;     // fragments along a key block
const CPL: u32 = BK / 2u;     // scores of a row an invocation takes
const SS: u32 = BK + 4u;      // row stride of s_tile (16-byte rows, fewer bank conflicts)
const KV_WORDS: u32 = BK * DW;
const KV_PER: u32 = (KV_WORDS + WG - 1u) / WG;
const MOVE: f32 = 8.0;        // log2 units the running maximum may lag

// A K or V block: fragment (key / 16) * DF + d / 16, 16 rows of keys of 2 words.
var<workgroup> kv_tile: array<array<vec4<u32>, 32>, KF * DF>;
// Scores, then the accumulator's fragments when they pass through: [row][key], SS apart.
var<workgroup> s_tile: array<f32, BQ * SS>;
// P of each subgroup, fragments (sg, key / 16); the q fragments are staged here first.
var<workgroup> p_tile: array<array<vec4<u32>, 32>, SGS * KF>;
var<workgroup> alpha_tile: array<f32, BQ>;
var<workgroup> moved: u32;

alias Left = subgroup_matrix_left<f16, 16, 16>;
alias Right = subgroup_matrix_right<f16, 16, 16>;
alias Acc = subgroup_matrix_result<f32, 16, 16>;

fn k_frag(kf: u32, df: u32) -> Right {
    return subgroupMatrixLoad<Right, col_major>(&kv_tile[kf * DF + df], 0u, 2u);
}

fn v_frag(kf: u32, df: u32) -> Right {
    return subgroupMatrixLoad<Right, row_major>(&kv_tile[kf * DF + df], 0u, 2u);
}

fn p_frag(sg: u32, kf: u32) -> Left {
    return subgroupMatrixLoad<Left, row_major>(&p_tile[sg * KF + kf], 0u, 2u);
}

// Word i of a K or V block from rows key0.. at base (words), zero past the keys.
fn kv_word(kv_k: bool, base: u32, ss_w: u32, key0: u32, i: u32) -> vec4<u32> {
    let key = key0 + i / DW;
    if (i >= KV_WORDS || key >= p.skv) { return vec4<u32>(0u); }
    let idx = base + key * ss_w + i % DW;
    if (kv_k) { return k[idx]; }
    return v[idx];
}

fn put_kv(lid: u32, regs: array<vec4<u32>, KV_PER>) {
    for (var j = 0u; j < KV_PER; j++) {
        let i = lid + j * WG;
        if (i < KV_WORDS) {
            let key = i / DW;
            let w = i % DW;
            kv_tile[(key / 16u) * DF + w / 2u][(key % 16u) * 2u + w % 2u] = regs[j];
        }
    }
}

// The accumulator fragment's rows times the subgroup's alpha_tile entries,
// through its rows of s_tile. Uniform control flow (barriers).
fn rescale(o: Acc, sg: u32, lane: u32) -> Acc {
    let base = sg * 16u * SS;
    subgroupMatrixStore<row_major>(&s_tile, base, o, SS);
    workgroupBarrier();
    let r = lane / 2u;
    let a = alpha_tile[sg * 16u + r];
    for (var c = 0u; c < 8u; c++) {
        let idx = base + r * SS + (lane % 2u) * 8u + c;
        s_tile[idx] = s_tile[idx] * a;
    }
    workgroupBarrier();
    return subgroupMatrixLoad<Acc, row_major>(&s_tile, base, SS);
}

// Columns 16 df.. of the subgroup's rows, divided by the row sum l, to
// the output as f16 pairs. Lane t writes row t / 2, columns (t % 2) 8 .. + 8.
fn finish(o: Acc, df: u32, sg: u32, lane: u32, out_row0: u32, row0: u32, l: f32) {
    let base = sg * 16u * SS;
    subgroupMatrixStore<row_major>(&s_tile, base, o, SS);
    workgroupBarrier();
    let r = lane / 2u;
    let row = row0 + sg * 16u + r;
    let inv = select(1.0 / l, 0.0, l == 0.0);
    if (row < p.sq) {
        let src_at = base + r * SS + (lane % 2u) * 8u;
        let o_at = (out_row0 + row) * D + df * 16u + (lane % 2u) * 8u; // even
        for (var c = 0u; c < 8u; c += 2u) {
            out[(o_at + c) / 2u] = pack_halves(vec2<f32>(s_tile[src_at + c], s_tile[src_at + c + 1u]) * inv);
        }
    }
    workgroupBarrier();
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if (g >= p.workgroups) { return; } // uniform: the whole workgroup leaves
    let neg_inf = bitcast<f32>(p.neg_inf);
    let blk = p.blocks - 1u - g % p.blocks; // the causal blocks with the most keys first
    let h = (g / p.blocks) % p.hq;
    let b = g / (p.blocks * p.hq);
    let kvh = h / p.group;
    let row0 = blk * BQ;
    let sg = lid / 32u;
    let lane = lid % 32u;
    let shift_causal = i32(p.skv) - i32(p.sq); // query i sees keys j <= i + shift

    // The q fragments, 16 of the head dim at a time through p_tile.
    let q_w = (p.q_off + b * p.q_sb + h * p.q_sh) / 8u;
    var q0: Left; var q1: Left; var q2: Left; var q3: Left;
    var q4: Left; var q5: Left; var q6: Left; var q7: Left;
    for (var df = 0u; df < DF; df++) {
        for (var i = lid; i < BQ * 2u; i += WG) {
            let r = i / 2u;
            var x = vec4<u32>(0u);
            if (row0 + r < p.sq) { x = q[q_w + (row0 + r) * (p.q_ss / 8u) + df * 2u + i % 2u]; }
            p_tile[(r / 16u) * KF][(r % 16u) * 2u + i % 2u] = x;
        }
        workgroupBarrier();
        let f = p_frag(sg, 0u);
        switch (df) {
            case 0u: { q0 = f; }
            case 1u: { q1 = f; }
            case 2u: { q2 = f; }
            case 3u: { q3 = f; }
            case 4u: { q4 = f; }
            case 5u: { q5 = f; }
            case 6u: { q6 = f; }
            default: { q7 = f; }
        }
        workgroupBarrier();
    }

    // This invocation's row of the softmax: r, the side of the block's keys.
    let r = lane / 2u;
    let side = lane % 2u;
    let row = row0 + sg * 16u + r;
    var limit = select(i32(p.skv) - 1, i32(row) + shift_causal, CAUSAL);
    if (row >= p.sq) { limit = -1; }
    var kend = p.skv;
    if (CAUSAL) {
        let last_q = i32(min(row0 + BQ, p.sq)) - 1;
        kend = u32(clamp(last_q + shift_causal + 1, 0, i32(p.skv)));
    }
    let k_w = (p.k_off + b * p.k_sb + kvh * p.k_sh) / 8u;
    let v_w = (p.v_off + b * p.v_sb + kvh * p.v_sh) / 8u;
    let k_ssw = p.k_ss / 8u;
    let v_ssw = p.v_ss / 8u;

    var m = neg_inf; // the row's running maximum (log2 units), shared by the pair
    var l = 0.0;     // this invocation's side of the row sum of exp2(s - m)
    var o0: Acc; var o1: Acc; var o2: Acc; var o3: Acc;
    var o4: Acc; var o5: Acc; var o6: Acc; var o7: Acc;
    var regs: array<vec4<u32>, KV_PER>;
    for (var j = 0u; j < KV_PER; j++) { regs[j] = kv_word(true, k_w, k_ssw, 0u, lid + j * WG); }
    put_kv(lid, regs);
    if (lid == 0u) { moved = 0u; }
    workgroupBarrier();
    let s_row = sg * 16u * SS;
    for (var t0 = 0u; t0 < kend; t0 += BK) {
        // V's block into registers while the scores run.
        for (var j = 0u; j < KV_PER; j++) { regs[j] = kv_word(false, v_w, v_ssw, t0, lid + j * WG); }
        // 1. Scores, one 16 x 16 fragment of keys at a time.
        for (var kf = 0u; kf < KF; kf++) {
            var s = Acc();
            s = subgroupMatrixMultiplyAccumulate(q0, k_frag(kf, 0u), s);
            if (DF > 1u) { s = subgroupMatrixMultiplyAccumulate(q1, k_frag(kf, 1u), s); }
            if (DF > 2u) { s = subgroupMatrixMultiplyAccumulate(q2, k_frag(kf, 2u), s); }
            if (DF > 3u) { s = subgroupMatrixMultiplyAccumulate(q3, k_frag(kf, 3u), s); }
            if (DF > 4u) { s = subgroupMatrixMultiplyAccumulate(q4, k_frag(kf, 4u), s); }
            if (DF > 5u) { s = subgroupMatrixMultiplyAccumulate(q5, k_frag(kf, 5u), s); }
            if (DF > 6u) { s = subgroupMatrixMultiplyAccumulate(q6, k_frag(kf, 6u), s); }
            if (DF > 7u) { s = subgroupMatrixMultiplyAccumulate(q7, k_frag(kf, 7u), s); }
            subgroupMatrixStore<row_major>(&s_tile, s_row + kf * 16u, s, SS);
        }
        workgroupBarrier();
        // 2. V's block in, the row's scores out.
        put_kv(lid, regs);
        var sv: array<f32, CPL>;
        var bmax = neg_inf;
        for (var c = 0u; c < CPL; c++) {
            let col = side * CPL + c;
            let x = s_tile[s_row + r * SS + col] * p.scale;
            sv[c] = select(neg_inf, x, i32(t0 + col) <= limit);
            bmax = max(bmax, sv[c]);
        }
        bmax = max(bmax, subgroupShuffleXor(bmax, 1u));
        // 3. The running maximum moves only by more than MOVE.
        var alpha = 1.0;
        if (bmax > m + MOVE) {
            if (m != neg_inf) { alpha = exp2(m - bmax); }
            m = bmax;
        }
        if (side == 0u) { alpha_tile[sg * 16u + r] = alpha; }
        if (alpha != 1.0) { moved = 1u; }
        l *= alpha;
        if (workgroupUniformLoad(&moved) != 0u) {
            o0 = rescale(o0, sg, lane);
            if (DF > 1u) { o1 = rescale(o1, sg, lane); }
            if (DF > 2u) { o2 = rescale(o2, sg, lane); }
            if (DF > 3u) { o3 = rescale(o3, sg, lane); }
            if (DF > 4u) { o4 = rescale(o4, sg, lane); }
            if (DF > 5u) { o5 = rescale(o5, sg, lane); }
            if (DF > 6u) { o6 = rescale(o6, sg, lane); }
            if (DF > 7u) { o7 = rescale(o7, sg, lane); }
        }
        // 4. P as f16 fragments (no key seen yet: m = -inf, P = 0).
        let seen = m != neg_inf;
        for (var w = 0u; w < CPL / 8u; w++) {
            var e: array<f32, 8>;
            for (var c = 0u; c < 8u; c++) {
                e[c] = select(0.0, exp2(sv[w * 8u + c] - m), seen);
                l += e[c];
            }
            let col = side * CPL + w * 8u;
            p_tile[sg * KF + col / 16u][r * 2u + (col / 8u) % 2u] =
                vec4<u32>(pack_halves(vec2<f32>(e[0], e[1])), pack_halves(vec2<f32>(e[2], e[3])),
                          pack_halves(vec2<f32>(e[4], e[5])), pack_halves(vec2<f32>(e[6], e[7])));
        }
        if (lid == 0u) { moved = 0u; }
        workgroupBarrier();
        // The next K block into registers while P V runs.
        let t1 = t0 + BK;
        if (t1 < kend) {
            for (var j = 0u; j < KV_PER; j++) { regs[j] = kv_word(true, k_w, k_ssw, t1, lid + j * WG); }
        }
        for (var kf = 0u; kf < KF; kf++) {
            let pf = p_frag(sg, kf);
            o0 = subgroupMatrixMultiplyAccumulate(pf, v_frag(kf, 0u), o0);
            if (DF > 1u) { o1 = subgroupMatrixMultiplyAccumulate(pf, v_frag(kf, 1u), o1); }
            if (DF > 2u) { o2 = subgroupMatrixMultiplyAccumulate(pf, v_frag(kf, 2u), o2); }
            if (DF > 3u) { o3 = subgroupMatrixMultiplyAccumulate(pf, v_frag(kf, 3u), o3); }
            if (DF > 4u) { o4 = subgroupMatrixMultiplyAccumulate(pf, v_frag(kf, 4u), o4); }
            if (DF > 5u) { o5 = subgroupMatrixMultiplyAccumulate(pf, v_frag(kf, 5u), o5); }
            if (DF > 6u) { o6 = subgroupMatrixMultiplyAccumulate(pf, v_frag(kf, 6u), o6); }
            if (DF > 7u) { o7 = subgroupMatrixMultiplyAccumulate(pf, v_frag(kf, 7u), o7); }
        }
        workgroupBarrier();
        if (t1 < kend) { put_kv(lid, regs); }
        workgroupBarrier();
    }

    let total = l + subgroupShuffleXor(l, 1u);
    let out_row0 = (b * p.hq + h) * p.sq;
    finish(o0, 0u, sg, lane, out_row0, row0, total);
    if (DF > 1u) { finish(o1, 1u, sg, lane, out_row0, row0, total); }
    if (DF > 2u) { finish(o2, 2u, sg, lane, out_row0, row0, total); }
    if (DF > 3u) { finish(o3, 3u, sg, lane, out_row0, row0, total); }
    if (DF > 4u) { finish(o4, 4u, sg, lane, out_row0, row0, total); }
    if (DF > 5u) { finish(o5, 5u, sg, lane, out_row0, row0, total); }
    if (DF > 6u) { finish(o6, 6u, sg, lane, out_row0, row0, total); }
    if (DF > 7u) { finish(o7, 7u, sg, lane, out_row0, row0, total); }
}
