// f32 batched matrix product out[z] = a[z] @ b[z] for shapes that divide
// the tile: M % BM == 0, N % BN == 0 and every split's k range a whole
// number of BK slabs, both operands read as 16-byte words along their
// unit-stride axis (offsets, batch strides and the other stride multiples
// of 4). gemm.wgsl's structure without its edges: no bounds checks in the
// loads, no partial quads in the stores, every store a 16-byte word.
//
// A workgroup computes one BM x BN tile; each of its (BM/TM) x (BN/TN)
// threads keeps TM x TN sums as TM/4 x TN/4 quads spread across the tile
// (quad rows ty, ty + TY, ...; quad columns tx, tx + TX, ...), so that the
// threads of a warp read consecutive 16-byte words of workgroup memory.
// The slabs of a and b sit in workgroup memory as [k][m] and [k][n] rows
// (an operand whose loads walk k is stored transposed, one component at a
// time; PAD adds a 16-byte word to each of its rows so that the four rows
// one load fills fall in other banks). K goes BK at a time through two
// stages: the next slab is loaded into registers while the threads
// multiply out of one stage, then stored into the other; one barrier per
// slab. FRAG_AHEAD: each step's fragments are read from workgroup memory
// one step ahead of their products (two sets in turn, BK even). STAGE_REGS: the next slab waits in
// registers during the products (else it goes straight into the other
// stage, for fewer registers and the loads' latency left to other warps).
// WARP_8X4: the 32 threads of a warp (when TX > 8) as 8 columns x 4 rows
// of threads rather than TX x 32 / TX, so that a step's reads of b touch
// 8 words instead of TX (needs TY a multiple of 4).
//
// Raw sums, or with BIAS (one split only) the sums plus a bias per column,
// read once a thread before the stores: out is [splits, batch, M, N] from
// out_offset (slice z of split z); an activation goes through
// gemm_splitk.wgsl.
//
// Prelude constants: BM, BN, BK, TM, TN (TM, TN multiples of 4; BM BK / 4
// and BN BK / 4 multiples of the workgroup size), A_K_FAST / B_N_FAST (the
// loads walk k for a / n for b, else m / k), PAD, FRAG_AHEAD, STAGE_REGS,
// WARP_8X4, BIAS.

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
    k_chunk: u32,
    splits: u32,
    bias_offset: u32,
    a_batch_mod: u32,
    bias_rows: u32,
    // gemm.wgsl's convolution fields (unused here).
    c_kk: u32, c_kw: u32, c_ow: u32, c_groups: u32,
    c_sh: u32, c_sw: u32, c_dh: u32, c_dw: u32,
    c_pt: u32, c_pl: u32, c_in_h: u32, c_in_w: u32,
    c_xs_n: u32, c_xs_c: u32, c_xs_h: u32, c_xs_w: u32,
    c_cg: u32, aux_offset: u32, c_pad1: u32, c_pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;
// The bias (BIAS), else any buffer, unread.
@group(0) @binding(4) var<storage, read> bias: array<f32>;

const TX: u32 = BN / TN;
const TY: u32 = BM / TM;
const WG: u32 = TX * TY;
const AQ: u32 = BM / 4u;           // 16-byte words of a k row of the a stage
const BQ: u32 = BN / 4u;
const AP: u32 = AQ + select(0u, 1u, PAD && A_K_FAST);  // row pitch in words
const BP: u32 = BQ + select(0u, 1u, PAD && !B_N_FAST);
const A_LOADS: u32 = BM * BK / 4u / WG;
const B_LOADS: u32 = BN * BK / 4u / WG;
const QM: u32 = TM / 4u;
const QN: u32 = TN / 4u;
const KQ: u32 = BK / 4u;

var<workgroup> a_stage: array<vec4<f32>, 2u * BK * AP>;
var<workgroup> b_stage: array<vec4<f32>, 2u * BK * BP>;

// Load e of a slab: (m within the tile, k within the slab) for a; (n, k)
// for b. Along the fast axis a load is four consecutive elements.
fn a_slot(e: u32) -> vec2<u32> {
    if (A_K_FAST) { return vec2<u32>(e / KQ, (e % KQ) * 4u); }
    return vec2<u32>((e % AQ) * 4u, e / AQ);
}

fn b_slot(e: u32) -> vec2<u32> {
    if (B_N_FAST) { return vec2<u32>((e % BQ) * 4u, e / BQ); }
    return vec2<u32>(e / KQ, (e % KQ) * 4u);
}

fn store_a(base: u32, e: u32, v: vec4<f32>) {
    let s = a_slot(e);
    if (A_K_FAST) {
        for (var c = 0u; c < 4u; c++) { a_stage[base + (s.y + c) * AP + s.x / 4u][s.x % 4u] = v[c]; }
    } else {
        a_stage[base + s.y * AP + s.x / 4u] = v;
    }
}

fn store_b(base: u32, e: u32, v: vec4<f32>) {
    let s = b_slot(e);
    if (B_N_FAST) {
        b_stage[base + s.y * BP + s.x / 4u] = v;
    } else {
        for (var c = 0u; c < 4u; c++) { b_stage[base + (s.y + c) * BP + s.x / 4u][s.x % 4u] = v[c]; }
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
    let kbeg = split * p.k_chunk;
    let slabs = (min(p.k, kbeg + p.k_chunk) - kbeg) / BK;
    var tx = lid % TX;
    var ty = lid / TX;
    if (WARP_8X4 && TX > 8u) {
        // A warp as 8 x 4 threads: 8 words of b and 4 of a a step.
        let wl = lid % 32u;
        let wi = lid / 32u;
        tx = wl % 8u + 8u * (wi % (TX / 8u));
        ty = wl / 8u + 4u * (wi / (TX / 8u));
    }

    // Each load's 16-byte word in its operand at the first slab, and the
    // words from one slab to the next.
    let a_base = p.a_offset + (batch % p.a_batch_mod) * p.a_batch_stride;
    let b_base = p.b_offset + batch * p.b_batch_stride;
    var pa: array<u32, A_LOADS>;
    var pb: array<u32, B_LOADS>;
    for (var i = 0u; i < A_LOADS; i++) {
        let s = a_slot(lid + i * WG);
        pa[i] = (a_base + (m0 + s.x) * p.a_row_stride + (kbeg + s.y) * p.a_col_stride) / 4u;
    }
    for (var i = 0u; i < B_LOADS; i++) {
        let s = b_slot(lid + i * WG);
        pb[i] = (b_base + (kbeg + s.y) * p.b_row_stride + (n0 + s.x) * p.b_col_stride) / 4u;
    }
    let a_step = BK * p.a_col_stride / 4u;
    let b_step = BK * p.b_row_stride / 4u;

    var acc: array<vec4<f32>, QM * 4u * QN>;
    var ra: array<vec4<f32>, A_LOADS>;
    var rb: array<vec4<f32>, B_LOADS>;

    for (var i = 0u; i < A_LOADS; i++) { store_a(0u, lid + i * WG, a[pa[i]]); }
    for (var i = 0u; i < B_LOADS; i++) { store_b(0u, lid + i * WG, b[pb[i]]); }
    workgroupBarrier();

    var stage = 0u;
    for (var t = 1u; t <= slabs; t++) {
        let more = t < slabs;
        let next = 1u - stage;
        if (more) {
            if (STAGE_REGS) {
                for (var i = 0u; i < A_LOADS; i++) { pa[i] += a_step; ra[i] = a[pa[i]]; }
                for (var i = 0u; i < B_LOADS; i++) { pb[i] += b_step; rb[i] = b[pb[i]]; }
            } else {
                for (var i = 0u; i < A_LOADS; i++) { pa[i] += a_step; store_a(next * (BK * AP), lid + i * WG, a[pa[i]]); }
                for (var i = 0u; i < B_LOADS; i++) { pb[i] += b_step; store_b(next * (BK * BP), lid + i * WG, b[pb[i]]); }
            }
        }
        let ab = stage * (BK * AP) + ty;
        let bb = stage * (BK * BP) + tx;
        if (FRAG_AHEAD) {
            // Two sets of fragments in turn (no copies between them): the
            // next step's set is read while the products of this one run.
            var av0: array<vec4<f32>, QM>;
            var bv0: array<vec4<f32>, QN>;
            var av1: array<vec4<f32>, QM>;
            var bv1: array<vec4<f32>, QN>;
            for (var i = 0u; i < QM; i++) { av0[i] = a_stage[ab + i * TY]; }
            for (var j = 0u; j < QN; j++) { bv0[j] = b_stage[bb + j * TX]; }
            for (var kk = 0u; kk < BK; kk += 2u) {
                for (var i = 0u; i < QM; i++) { av1[i] = a_stage[ab + (kk + 1u) * AP + i * TY]; }
                for (var j = 0u; j < QN; j++) { bv1[j] = b_stage[bb + (kk + 1u) * BP + j * TX]; }
                for (var i = 0u; i < QM; i++) {
                    for (var r = 0u; r < 4u; r++) {
                        let s = vec4<f32>(av0[i][r]);
                        for (var j = 0u; j < QN; j++) {
                            let x = (i * 4u + r) * QN + j;
                            acc[x] = fma(s, bv0[j], acc[x]);
                        }
                    }
                }
                if (kk + 2u < BK) {
                    for (var i = 0u; i < QM; i++) { av0[i] = a_stage[ab + (kk + 2u) * AP + i * TY]; }
                    for (var j = 0u; j < QN; j++) { bv0[j] = b_stage[bb + (kk + 2u) * BP + j * TX]; }
                }
                for (var i = 0u; i < QM; i++) {
                    for (var r = 0u; r < 4u; r++) {
                        let s = vec4<f32>(av1[i][r]);
                        for (var j = 0u; j < QN; j++) {
                            let x = (i * 4u + r) * QN + j;
                            acc[x] = fma(s, bv1[j], acc[x]);
                        }
                    }
                }
            }
        } else {
            for (var kk = 0u; kk < BK; kk++) {
                var av: array<vec4<f32>, QM>;
                var bv: array<vec4<f32>, QN>;
                for (var i = 0u; i < QM; i++) { av[i] = a_stage[ab + kk * AP + i * TY]; }
                for (var j = 0u; j < QN; j++) { bv[j] = b_stage[bb + kk * BP + j * TX]; }
                for (var i = 0u; i < QM; i++) {
                    for (var r = 0u; r < 4u; r++) {
                        let s = vec4<f32>(av[i][r]);
                        for (var j = 0u; j < QN; j++) {
                            let x = (i * 4u + r) * QN + j;
                            acc[x] = fma(s, bv[j], acc[x]);
                        }
                    }
                }
            }
        }
        if (more && STAGE_REGS) {
            for (var i = 0u; i < A_LOADS; i++) { store_a(next * (BK * AP), lid + i * WG, ra[i]); }
            for (var i = 0u; i < B_LOADS; i++) { store_b(next * (BK * BP), lid + i * WG, rb[i]); }
        }
        workgroupBarrier();
        stage = 1u - stage;
    }

    // Row gm's quads start at word (out_offset + (zb M + gm) N + n0) / 4.
    let row0 = (p.out_offset + (zb * p.m + m0) * p.n + n0) / 4u;
    let nq = p.n / 4u;
    var bq: array<vec4<f32>, QN>;
    if (BIAS) {
        for (var j = 0u; j < QN; j++) {
            let gn = p.bias_offset + n0 + (tx + j * TX) * 4u;
            bq[j] = vec4<f32>(bias[gn], bias[gn + 1u], bias[gn + 2u], bias[gn + 3u]);
        }
    }
    for (var i = 0u; i < QM; i++) {
        for (var r = 0u; r < 4u; r++) {
            let row = row0 + ((ty + i * TY) * 4u + r) * nq;
            for (var j = 0u; j < QN; j++) {
                var s = acc[(i * 4u + r) * QN + j];
                if (BIAS) { s += bq[j]; }
                out[row + tx + j * TX] = s;
            }
        }
    }
}
