// The backward of attention without a mask, pass 1 of 2, work split
// (kernels/attention_backward.c): the scheme of
// attention_backward_pipelined_q.wgsl (a workgroup owns BQ = 32 query rows
// of one (batch, q head): the rows' statistics L and D for pass 2, then
// dq_i = scale sum_j p_ij (dp_ij - D_i) k_j over key tiles of BK = 32, K
// and V side by side in workgroup memory, the next tile loaded into
// registers while the current one is computed), with the threads' work
// cut so that each value read from workgroup memory feeds more products:
//  - the tile's products: threads 0-63 compute the scores q . k, threads
//    64-127 dout . v, each 4 rows x 4 keys (8 quads read a head-dim quad
//    for 16 dot products; a thread doing both did 12 for 16). P and
//    dout . v meet in workgroup memory; ds = p (dp - D) is one more pass
//    over the tile;
//  - the dq accumulation: threads 0-63 take the tile's keys 0-15, threads
//    64-127 keys 16-31, each 4 rows x 2 quads (3 quads read a key for 8
//    products; 4 rows x 1 quad read 2 for 4); the halves are added at the
//    end.
// Tile threads (role, tr, tk): rows tr + 8 i, keys tk + 8 j (i, j < 4);
// accumulation threads (half, tr, tq): rows tr + 8 i, quads tq + 8 c
// (c < DH). Rows and keys 8 apart: consecutive lanes read consecutive
// padded rows (no bank conflicts); p_tile and ds_tile hold a key's four
// rows tr, tr + 8, tr + 16, tr + 24 as one vec4.
// The statistics (without the forward's log-sum-exp: a walk over the keys
// for L, as the tiled kernel) take the tiled kernel's thread layout:
// (ty, tx) of 8 x 16, rows 4 ty .. 4 ty + 3, keys tx and tx + 16.
// A row that sees no key gets L = 3e38 (every p is 0), D = 0 and dq = 0.
// Every tensor is contiguous f32, read as vec4.
// Prelude: DQ, CAUSAL, UNROLL, HAVE_LSE and load_lse (as the tiled kernel).

struct Params {
    hq: u32, hkv: u32, sq: u32, skv: u32,
    group: u32, blocks: u32, workgroups: u32, scale: f32,
    dq: u32, tile: u32, neg_inf: u32, pad0: u32, // dq == DQ, tile == BK; neg_inf: bits of -inf
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> k: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> v: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> g: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> dq: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> stats: array<vec2<f32>>;
@group(0) @binding(7) var<storage, read> o: array<vec4<f32>>; // the forward's output

const BQ: u32 = 32u;
const BK: u32 = 32u;
const TX: u32 = 16u;
const WG: u32 = 128u;
const QS: u32 = DQ + 1u; // padded row length in quads
const RQ: u32 = BQ / 4u;
const GOFF: u32 = BQ * QS; // where the dout rows start in qg_tile
const VOFF: u32 = BK * QS; // where the V rows start in kv_tile
const PK: u32 = (BK * DQ + WG - 1u) / WG; // quads of K (and of V) a thread loads for a tile
const DH: u32 = (DQ + 7u) / 8u; // quads of dq a thread owns
const ST: u32 = (DQ + TX - 1u) / TX; // quads of dout . out a statistics thread sums

var<workgroup> qg_tile: array<vec4<f32>, 2u * BQ * QS>; // q rows (scaled), dout rows; the halves' sums at the end
var<workgroup> kv_tile: array<vec4<f32>, 2u * BK * QS>; // K rows, V rows
var<workgroup> p_tile: array<vec4<f32>, BK * RQ>;  // [key][tr]: rows tr + 8 i
var<workgroup> ds_tile: array<vec4<f32>, BK * RQ>; // dout . v, then ds; also the statistics' merge
var<workgroup> rs_tile: array<vec2<f32>, BQ>;      // each row's (L, D)

// The next key tile, in flight from global memory.
var<private> next_k: array<vec4<f32>, PK>;
var<private> next_v: array<vec4<f32>, PK>;

// Keys t0 .. t0 + BK of the head starting at row krow0 into registers;
// keys from kend on are zeros.
fn fetch_keys(krow0: u32, t0: u32, kend: u32, lid: u32) {
    for (var c = 0u; c < PK; c++) {
        let e = lid + c * WG;
        let j = t0 + e / DQ;
        var x = vec4<f32>(0.0);
        var y = vec4<f32>(0.0);
        if (e < BK * DQ && j < kend) {
            x = k[(krow0 + j) * DQ + e % DQ];
            y = v[(krow0 + j) * DQ + e % DQ];
        }
        next_k[c] = x;
        next_v[c] = y;
    }
}

fn stage_keys(lid: u32) {
    for (var c = 0u; c < PK; c++) {
        let e = lid + c * WG;
        if (e < BK * DQ) {
            kv_tile[(e / DQ) * QS + e % DQ] = next_k[c];
            kv_tile[VOFF + (e / DQ) * QS + e % DQ] = next_v[c];
        }
    }
}

// acc + a . b as a chain of fused multiply-adds.
fn dot_fma(a: vec4<f32>, b: vec4<f32>, acc: f32) -> f32 {
    return fma(a.w, b.w, fma(a.z, b.z, fma(a.y, b.y, fma(a.x, b.x, acc))));
}

// The statistics walk's tile: keys t0 .. t0 + BK of K into kv_tile, then
// the scores of the thread's four rows (4 ty .. 4 ty + 3) against keys tx
// and tx + TX. Has barriers: called from uniform control flow.
struct TileDots {
    lo: vec4<f32>, // key tx, a lane a row
    hi: vec4<f32>, // key tx + TX
}

fn score_tile(krow0: u32, t0: u32, kend: u32, lid: u32, tx: u32, ty: u32) -> TileDots {
    workgroupBarrier();
    for (var e = lid; e < BK * DQ; e += WG) {
        let j = t0 + e / DQ;
        var x = vec4<f32>(0.0);
        if (j < kend) { x = k[(krow0 + j) * DQ + e % DQ]; }
        kv_tile[(e / DQ) * QS + e % DQ] = x;
    }
    workgroupBarrier();
    let dn = select(p.dq, DQ, UNROLL);
    var lo = vec4<f32>(0.0);
    var hi = vec4<f32>(0.0);
    for (var d = 0u; d < dn; d++) {
        let k0 = kv_tile[tx * QS + d];
        let k1 = kv_tile[(tx + TX) * QS + d];
        for (var i = 0u; i < 4u; i++) {
            let row = qg_tile[(ty * 4u + i) * QS + d];
            lo[i] += dot(row, k0);
            hi[i] += dot(row, k1);
        }
    }
    return TileDots(lo, hi);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let wgi = wid.x + wid.y * nwg.x;
    if (wgi >= p.workgroups) { return; } // uniform: the whole workgroup leaves
    let neg_inf = bitcast<f32>(p.neg_inf);
    // Causal blocks with the most keys start first.
    let blk = p.blocks - 1u - wgi % p.blocks;
    let bh = wgi / p.blocks; // b * hq + h
    let h = bh % p.hq;
    let b = bh / p.hq;
    let krow0 = (b * p.hkv + h / p.group) * p.skv;
    let qrow0 = bh * p.sq;
    let i0 = blk * BQ;
    let tx = lid % TX;
    let ty = lid / TX;
    let shift = i32(p.skv) - i32(p.sq); // query i sees keys j <= i + shift

    for (var e = lid; e < BQ * DQ; e += WG) {
        let i = i0 + e / DQ;
        var x = vec4<f32>(0.0);
        var y = vec4<f32>(0.0);
        if (i < p.sq) {
            x = q[(qrow0 + i) * DQ + e % DQ] * p.scale;
            y = g[(qrow0 + i) * DQ + e % DQ];
        }
        qg_tile[(e / DQ) * QS + e % DQ] = x;
        qg_tile[GOFF + (e / DQ) * QS + e % DQ] = y;
    }
    var kend = p.skv;
    if (CAUSAL) {
        let last = min(i0 + BQ, p.sq) - 1u;
        kend = u32(clamp(i32(last) + shift + 1, 0, i32(p.skv)));
    }

    // 1. Statistics, in the (ty, tx) layout (with the forward's
    // log-sum-exp, D alone: no walk).
    {
        var limit = vec4<i32>(-1); // the last key each of the thread's rows sees (-1: none)
        for (var i = 0u; i < 4u; i++) {
            let r = i0 + ty * 4u + i;
            if (r < p.sq) { limit[i] = select(i32(p.skv) - 1, min(i32(r) + shift, i32(p.skv) - 1), CAUSAL); }
        }
        var m = vec4<f32>(neg_inf);
        var l = vec4<f32>(0.0);
        let stats_end = select(kend, 0u, HAVE_LSE);
        for (var t0 = 0u; t0 < stats_end; t0 += BK) {
            let sd = score_tile(krow0, t0, kend, lid, tx, ty);
            var s0 = sd.lo;
            var s1 = sd.hi;
            let j0 = vec4<i32>(i32(t0 + tx));
            s0 = select(vec4<f32>(neg_inf), s0, j0 <= limit);
            s1 = select(vec4<f32>(neg_inf), s1, j0 + vec4<i32>(i32(TX)) <= limit);
            let m_new = max(m, max(s0, s1));
            // Nothing seen yet: subtract 0, so exp(-inf) gives 0 instead of NaN.
            let sh = select(m_new, vec4<f32>(0.0), m_new == vec4<f32>(neg_inf));
            l = l * exp(m - sh) + exp(s0 - sh) + exp(s1 - sh);
            m = m_new;
        }
        // The thread's share of D: dout . out over its quads of its rows
        // (the barrier: with HAVE_LSE no walk above has waited for the rows).
        workgroupBarrier();
        var a = vec4<f32>(0.0);
        for (var c = 0u; c < ST; c++) {
            let d = tx + c * TX;
            if (d < DQ) {
                for (var i = 0u; i < 4u; i++) {
                    let r = i0 + ty * 4u + i;
                    if (r < p.sq) { a[i] += dot(qg_tile[GOFF + (ty * 4u + i) * QS + d], o[(qrow0 + r) * DQ + d]); }
                }
            }
        }
        // Merge the 16 threads of each row: maxima and sums first, then D.
        workgroupBarrier();
        ds_tile[tx * RQ + ty] = m;
        ds_tile[(TX + tx) * RQ + ty] = l;
        workgroupBarrier();
        var mm = vec4<f32>(neg_inf);
        for (var t = 0u; t < TX; t++) { mm = max(mm, ds_tile[t * RQ + ty]); }
        let msh = select(mm, vec4<f32>(0.0), mm == vec4<f32>(neg_inf));
        var ll = vec4<f32>(0.0);
        for (var t = 0u; t < TX; t++) { ll += ds_tile[(TX + t) * RQ + ty] * exp(ds_tile[t * RQ + ty] - msh); }
        workgroupBarrier();
        ds_tile[tx * RQ + ty] = a;
        workgroupBarrier();
        var aa = vec4<f32>(0.0);
        for (var t = 0u; t < TX; t++) { aa += ds_tile[t * RQ + ty]; }
        var seen = ll > vec4<f32>(0.0);
        var lse = select(vec4<f32>(3.0e38), msh + log(ll), seen);
        if (HAVE_LSE) {
            // A row without keys has out = 0, so D = 0 there already.
            seen = vec4<bool>(true);
            for (var i = 0u; i < 4u; i++) {
                let r = i0 + ty * 4u + i;
                if (r < p.sq) { lse[i] = load_lse(qrow0 + r); }
            }
        }
        let dd = select(vec4<f32>(0.0), aa, seen);
        if (tx == 0u) {
            for (var i = 0u; i < 4u; i++) {
                let r = i0 + ty * 4u + i;
                var st = vec2<f32>(3.0e38, 0.0);
                if (r < p.sq) {
                    st = vec2<f32>(lse[i], dd[i]);
                    stats[qrow0 + r] = st;
                }
                rs_tile[ty * 4u + i] = st;
            }
        }
    }
    workgroupBarrier();

    // 2. dq, in the split layouts.
    let role = lid / 64u; // tile products: 0 the scores, 1 dout . v
    let half = lid / 64u; // accumulation: 0 keys 0-15 of a tile, 1 keys 16-31
    let tr = (lid % 64u) / 8u;
    let tk = lid % 8u; // tile products: keys tk + 8 j
    let tq = lid % 8u; // accumulation: quads tq + 8 c
    var lse_r = vec4<f32>(3.0e38);
    var limit = vec4<i32>(-1);
    for (var i = 0u; i < 4u; i++) {
        let row = tr + 8u * i;
        lse_r[i] = rs_tile[row].x;
        let r = i0 + row;
        if (r < p.sq) { limit[i] = select(i32(p.skv) - 1, min(i32(r) + shift, i32(p.skv) - 1), CAUSAL); }
    }
    let kbase = role * VOFF;
    let qbase = role * GOFF;
    let dn = select(p.dq, DQ, UNROLL);

    var acc: array<vec4<f32>, 4u * DH>; // [row i][quad c]
    for (var c = 0u; c < 4u * DH; c++) { acc[c] = vec4<f32>(0.0); }
    if (kend > 0u) { fetch_keys(krow0, 0u, kend, lid); }
    for (var t0 = 0u; t0 < kend; t0 += BK) {
        workgroupBarrier(); // the previous tile's readers are done
        stage_keys(lid);
        workgroupBarrier();
        if (t0 + BK < kend) { fetch_keys(krow0, t0 + BK, kend, lid); }
        var sc: array<vec4<f32>, 4>; // [key j][row i]
        for (var j = 0u; j < 4u; j++) { sc[j] = vec4<f32>(0.0); }
        for (var d = 0u; d < dn; d++) {
            var rq: array<vec4<f32>, 4>;
            for (var i = 0u; i < 4u; i++) { rq[i] = qg_tile[qbase + (tr + 8u * i) * QS + d]; }
            for (var j = 0u; j < 4u; j++) {
                let kq = kv_tile[kbase + (tk + 8u * j) * QS + d];
                for (var i = 0u; i < 4u; i++) { sc[j][i] = dot_fma(rq[i], kq, sc[j][i]); }
            }
        }
        for (var j = 0u; j < 4u; j++) {
            let key = tk + 8u * j;
            if (role == 0u) {
                let vis = vec4<i32>(i32(t0 + key)) <= limit;
                p_tile[key * RQ + tr] = select(vec4<f32>(0.0), exp(sc[j] - lse_r), vis);
            } else {
                ds_tile[key * RQ + tr] = sc[j];
            }
        }
        workgroupBarrier();
        for (var e = lid; e < BK * RQ; e += WG) {
            let rg = e % RQ;
            let dd = vec4<f32>(rs_tile[rg].y, rs_tile[rg + 8u].y, rs_tile[rg + 16u].y, rs_tile[rg + 24u].y);
            ds_tile[e] = p_tile[e] * (ds_tile[e] - dd);
        }
        workgroupBarrier();
        for (var kk = 0u; kk < BK / 2u; kk++) {
            let key = half * (BK / 2u) + kk;
            let dsv = ds_tile[key * RQ + tr];
            for (var c = 0u; c < DH; c++) {
                let d = tq + 8u * c;
                if (DQ % 8u == 0u || d < DQ) {
                    let kq = kv_tile[key * QS + d];
                    for (var i = 0u; i < 4u; i++) { acc[i * DH + c] = fma(vec4<f32>(dsv[i]), kq, acc[i * DH + c]); }
                }
            }
        }
    }
    // The halves' sums: half 1 hands its own to half 0 through qg_tile.
    workgroupBarrier();
    if (half == 1u) {
        for (var i = 0u; i < 4u; i++) {
            for (var c = 0u; c < DH; c++) {
                let d = tq + 8u * c;
                if (DQ % 8u == 0u || d < DQ) { qg_tile[(tr + 8u * i) * DQ + d] = acc[i * DH + c]; }
            }
        }
    }
    workgroupBarrier();
    if (half == 0u) {
        for (var i = 0u; i < 4u; i++) {
            let r = i0 + tr + 8u * i;
            if (r >= p.sq) { continue; }
            for (var c = 0u; c < DH; c++) {
                let d = tq + 8u * c;
                if (DQ % 8u == 0u || d < DQ) {
                    dq[(qrow0 + r) * DQ + d] = (acc[i * DH + c] + qg_tile[(tr + 8u * i) * DQ + d]) * p.scale;
                }
            }
        }
    }
}
