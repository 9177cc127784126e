// Batched matrix product out[z] = act(a[z] @ b[z] + bias), register-tiled.
//
// a is [batch, M, K] and b [batch, K, N] with any element strides (a batch
// stride of 0 broadcasts, a transposed operand is a stride swap); out is
// [batch, M, N] contiguous from out_offset. A workgroup computes one BM x BN
// tile of one batch entry; each of its (BM/TM) x (BN/TN) threads keeps a
// TM x TN block in registers, as TM/4 x TN/4 quads spread across the tile
// (quad rows ty, ty + TY, ...; quad columns tx, tx + TX, ...) so that the
// threads of a subgroup read consecutive 16-byte words of workgroup memory
// and never collide on a bank. K is walked BK at a time through two
// workgroup-memory stages: while the threads multiply out of one, the next
// slab of a and b is already in flight into registers, and is stored into
// the other stage afterwards: one barrier per slab.
//
// Split-k (SPLIT): workgroup z of `splits` groups covers k in
// [z k_chunk, (z+1) k_chunk) and writes its raw f32 sums to slice z of out
// ([splits, batch, M, N]); gemm_splitk.wgsl adds the slices up and applies
// the epilogue. The large tiles take that route (one split) for an
// activation too: with the activation's code in this kernel the H200's
// compiler kept their 64 accumulators in local memory (a 8192 x 4096 x
// 4096 product with bias and gelu took 116.9 ms, against 7.54 ms without).
// A bias per column alone stays here: each thread reads its columns' bias
// once, before the stores, and adds it a quad at a time.
//
// Prelude constants: BM, BN, BK, TM, TN (TM, TN multiples of 4; BM BK / 4
// and BN BK / 4 multiples of the workgroup size); A_K_FAST / B_N_FAST:
// the loads walk k (for a) / n (for b) fastest, else m / k; A_VEC / B_VEC:
// the fast axis has unit stride, an extent that is a multiple of 4 and
// 4-aligned starts, so four elements are one aligned load; SPLIT, BIAS,
// ACT, OUT_F16 (pairs of halves; needs N and out_offset even), BIAS_ROWS
// (a bias per output row, as a convolution's per channel, instead of per
// column), AUX (an f32 operand of the result's layout, read with aux_at
// from aux_offset: 0 none; 1 added last, a residual; 2 GELU's backward,
// out = (acc + bias) * gelu'(aux), never with SPLIT, over what this
// thread stored, read back with out_get; 3 the same computed in the
// stores themselves, for measurements), with aux_at and out_get.
// Libraries: gemm_io_f32 or gemm_io_f16 (+ its f16 library), gemm_epilogue,
// and the b operand's: gemm_b_strided (a tensor through its strides) or
// gemm_b_conv (a convolution's input read as its im2col matrix). Either
// gives b_batch_base(batch) and fetch_b(base, gk, gn, kend).

struct Params {
    batch: u32,
    m: u32,
    n: u32,
    k: u32,
    a_offset: u32,
    a_batch_stride: u32,
    a_row_stride: u32,   // along m
    a_col_stride: u32,   // along k
    b_offset: u32,
    b_batch_stride: u32,
    b_row_stride: u32,   // along k
    b_col_stride: u32,   // along n
    out_offset: u32,
    tiles_m: u32,
    tiles_n: u32,
    k_chunk: u32,        // k per split (a multiple of BK), or k
    splits: u32,
    bias_offset: u32,
    a_batch_mod: u32,    // a's batch entry is batch % a_batch_mod
    bias_rows: u32,      // BIAS_ROWS: the bias entry of output row r is r % bias_rows
    // The convolution's input window, read by gemm_b_conv (zero otherwise).
    c_kk: u32, c_kw: u32, c_ow: u32, c_groups: u32,
    c_sh: u32, c_sw: u32, c_dh: u32, c_dw: u32,
    c_pt: u32, c_pl: u32, c_in_h: u32, c_in_w: u32,
    c_xs_n: u32, c_xs_c: u32, c_xs_h: u32, c_xs_w: u32,
    c_cg: u32, aux_offset: u32, c_pad1: u32, c_pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;

const TX: u32 = BN / TN;
const TY: u32 = BM / TM;
const WG: u32 = TX * TY;
const AQ: u32 = BM / 4u;          // vec4s per k row of the a stage
const BQ: u32 = BN / 4u;
const A_LOADS: u32 = BM * BK / 4u / WG; // four-element loads per thread and slab
const B_LOADS: u32 = BN * BK / 4u / WG;
const QM: u32 = TM / 4u;
const QN: u32 = TN / 4u;

// Two stages each, [k][m / 4] and [k][n / 4].
var<workgroup> a_stage: array<vec4<f32>, 2u * BK * AQ>;
var<workgroup> b_stage: array<vec4<f32>, 2u * BK * BQ>;

// Load e of a slab: which row/column of the tile and which k it covers.
// Along the fast axis a load is four consecutive elements.
fn a_slot(e: u32) -> vec2<u32> { // (m within tile, k within slab)
    if (A_K_FAST) { return vec2<u32>(e / (BK / 4u), (e % (BK / 4u)) * 4u); }
    return vec2<u32>((e % AQ) * 4u, e / AQ);
}

fn b_slot(e: u32) -> vec2<u32> { // (n within tile, k within slab)
    if (B_N_FAST) { return vec2<u32>((e % BQ) * 4u, e / BQ); }
    return vec2<u32>(e / (BK / 4u), (e % (BK / 4u)) * 4u);
}

fn fetch_a(base: u32, gm: u32, gk: u32, kend: u32) -> vec4<f32> {
    var v = vec4<f32>(0.0);
    if (A_K_FAST) {
        if (A_VEC) {
            if (gm < p.m && gk < kend) { v = a4(base + gm * p.a_row_stride + gk); }
        } else {
            for (var c = 0u; c < 4u; c++) {
                if (gm < p.m && gk + c < kend) { v[c] = a1(base + gm * p.a_row_stride + (gk + c) * p.a_col_stride); }
            }
        }
    } else {
        if (A_VEC) {
            if (gm < p.m && gk < kend) { v = a4(base + gk * p.a_col_stride + gm); }
        } else {
            for (var c = 0u; c < 4u; c++) {
                if (gm + c < p.m && gk < kend) { v[c] = a1(base + (gm + c) * p.a_row_stride + gk * p.a_col_stride); }
            }
        }
    }
    return v;
}

fn store_a(stage: u32, e: u32, v: vec4<f32>) {
    let s = a_slot(e);
    let base = stage * BK * AQ;
    if (A_K_FAST) {
        // Four k values of one row: one component in each of four k rows.
        for (var c = 0u; c < 4u; c++) { a_stage[base + (s.y + c) * AQ + s.x / 4u][s.x % 4u] = v[c]; }
    } else {
        a_stage[base + s.y * AQ + s.x / 4u] = v;
    }
}

fn store_b(stage: u32, e: u32, v: vec4<f32>) {
    let s = b_slot(e);
    let base = stage * BK * BQ;
    if (B_N_FAST) {
        b_stage[base + s.y * BQ + s.x / 4u] = v;
    } else {
        for (var c = 0u; c < 4u; c++) { b_stage[base + (s.y + c) * BQ + s.x / 4u][s.x % 4u] = v[c]; }
    }
}

// Outputs (gm, gn .. gn + 3) of slice zb (a batch entry, or a split's
// batch entry) from their sums; gm < M and gn < N.
fn finish(zb: u32, gm: u32, gn: u32, sums: vec4<f32>) {
    let row = p.out_offset + (zb * p.m + gm) * p.n;
    var v = sums;
    if (!SPLIT) {
        // A bias per column came with the sums (main reads it once).
        if (BIAS && BIAS_ROWS) { v += vec4<f32>(bias_at(p.bias_offset + (zb * p.m + gm) % p.bias_rows)); }
        for (var c = 0u; c < 4u; c++) { v[c] = activate(v[c]); }
        if (AUX == 1u || AUX == 3u) {
            let ra = p.aux_offset + (zb * p.m + gm) * p.n + gn;
            for (var c = 0u; c < 4u; c++) {
                if (gn + c < p.n) {
                    if (AUX == 1u) { v[c] += aux_at(ra + c); } else { v[c] *= gelu_grad(aux_at(ra + c)); }
                }
            }
        }
    }
    if (OUT_F16 && !SPLIT) {
        // n even: the pairs (gn, gn + 1), (gn + 2, gn + 3) are whole words.
        store_halves((row + gn) / 2u, v.xy);
        if (gn + 2u < p.n) { store_halves((row + gn) / 2u + 1u, v.zw); }
    } else {
        for (var c = 0u; c < 4u; c++) {
            if (gn + c < p.n) { store_f32(row + gn + c, v[c]); }
        }
    }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = wid.x + wid.y * nwg.x;
    let tiles = p.tiles_m * p.tiles_n;
    if (w >= p.splits * p.batch * tiles) { return; } // uniform: the whole workgroup leaves

    let zb = w / tiles;          // split * batch + batch entry
    let batch = zb % p.batch;
    let split = zb / p.batch;
    let tile = w % tiles;
    let m0 = (tile / p.tiles_n) * BM;
    let n0 = (tile % p.tiles_n) * BN;
    let a_base = p.a_offset + (batch % p.a_batch_mod) * p.a_batch_stride;
    let b_base = b_batch_base(batch);
    let kbeg = split * p.k_chunk;
    let kend = min(p.k, kbeg + p.k_chunk);
    let tx = lid % TX;
    let ty = lid / TX;

    var acc: array<vec4<f32>, QM * 4u * QN>;
    for (var i = 0u; i < QM * 4u * QN; i++) { acc[i] = vec4<f32>(0.0); }
    var ra: array<vec4<f32>, A_LOADS>;
    var rb: array<vec4<f32>, B_LOADS>;

    // The first slab.
    for (var i = 0u; i < A_LOADS; i++) {
        let s = a_slot(lid + i * WG);
        store_a(0u, lid + i * WG, fetch_a(a_base, m0 + s.x, kbeg + s.y, kend));
    }
    for (var i = 0u; i < B_LOADS; i++) {
        let s = b_slot(lid + i * WG);
        store_b(0u, lid + i * WG, fetch_b(b_base, kbeg + s.y, n0 + s.x, kend));
    }
    workgroupBarrier();

    var stage = 0u;
    for (var k0 = kbeg; k0 < kend; k0 += BK) {
        let more = k0 + BK < kend;
        if (more) {
            for (var i = 0u; i < A_LOADS; i++) {
                let s = a_slot(lid + i * WG);
                ra[i] = fetch_a(a_base, m0 + s.x, k0 + BK + s.y, kend);
            }
            for (var i = 0u; i < B_LOADS; i++) {
                let s = b_slot(lid + i * WG);
                rb[i] = fetch_b(b_base, k0 + BK + s.y, n0 + s.x, kend);
            }
        }
        let ab = stage * BK * AQ;
        let bb = stage * BK * BQ;
        // The fragments of step kk + 1 are read from workgroup memory before
        // the products of step kk (H200, f32: 4096^3 3.682 -> 3.643 ms,
        // 64 x 512^3 471.5 -> 461.5 us).
        var av: array<vec4<f32>, QM>;
        var bv: array<vec4<f32>, QN>;
        for (var i = 0u; i < QM; i++) { av[i] = a_stage[ab + ty + i * TY]; }
        for (var j = 0u; j < QN; j++) { bv[j] = b_stage[bb + tx + j * TX]; }
        for (var kk = 0u; kk < BK; kk++) {
            var an: array<vec4<f32>, QM>;
            var bn: array<vec4<f32>, QN>;
            if (kk + 1u < BK) {
                for (var i = 0u; i < QM; i++) { an[i] = a_stage[ab + (kk + 1u) * AQ + ty + i * TY]; }
                for (var j = 0u; j < QN; j++) { bn[j] = b_stage[bb + (kk + 1u) * BQ + tx + j * TX]; }
            }
            for (var i = 0u; i < QM; i++) {
                for (var r = 0u; r < 4u; r++) {
                    let s = vec4<f32>(av[i][r]);
                    for (var j = 0u; j < QN; j++) {
                        let x = (i * 4u + r) * QN + j;
                        acc[x] = fma(s, bv[j], acc[x]);
                    }
                }
            }
            av = an;
            bv = bn;
        }
        if (more) {
            for (var i = 0u; i < A_LOADS; i++) { store_a(1u - stage, lid + i * WG, ra[i]); }
            for (var i = 0u; i < B_LOADS; i++) { store_b(1u - stage, lid + i * WG, rb[i]); }
        }
        workgroupBarrier();
        stage = 1u - stage;
    }

    // The bias of this thread's columns, a quad per column quad (zeros
    // past n; those columns are never stored).
    var bq: array<vec4<f32>, QN>;
    if (BIAS && !BIAS_ROWS && !SPLIT) {
        for (var j = 0u; j < QN; j++) {
            let gn = n0 + (tx + j * TX) * 4u;
            for (var c = 0u; c < 4u; c++) {
                if (gn + c < p.n) { bq[j][c] = bias_at(p.bias_offset + gn + c); }
            }
        }
    }
    for (var i = 0u; i < QM; i++) {
        for (var r = 0u; r < 4u; r++) {
            let gm = m0 + (ty + i * TY) * 4u + r;
            if (gm >= p.m) { continue; }
            for (var j = 0u; j < QN; j++) {
                let gn = n0 + (tx + j * TX) * 4u;
                var s = acc[(i * 4u + r) * QN + j];
                if (BIAS && !BIAS_ROWS && !SPLIT) { s += bq[j]; }
                if (gn < p.n) { finish(zb, gm, gn, s); }
            }
        }
    }
    // GELU's backward over what this thread just stored: a loop apart from
    // the stores above, so that its code never keeps the accumulators out
    // of registers (see the activation above; in the stores themselves,
    // AUX 3, the GPT step's dy @ w2 took a step from 40 to 87 ms on an
    // H200). This loop kept them, but at 657 us against 524 us for the
    // product and 107 us for the separate pass: autograd asks for it only
    // under WT_MATMUL_EPILOGUE=2.
    if (AUX == 2u && !SPLIT) {
        for (var i = 0u; i < QM; i++) {
            for (var r = 0u; r < 4u; r++) {
                let gm = m0 + (ty + i * TY) * 4u + r;
                if (gm >= p.m) { continue; }
                for (var j = 0u; j < QN; j++) {
                    let gn = n0 + (tx + j * TX) * 4u;
                    let o = (zb * p.m + gm) * p.n + gn;
                    for (var c = 0u; c < 4u; c++) {
                        if (gn + c < p.n) {
                            let v = out_get(p.out_offset + o + c);
                            store_f32(p.out_offset + o + c, v * gelu_grad(aux_at(p.aux_offset + o + c)));
                        }
                    }
                }
            }
        }
    }
}
