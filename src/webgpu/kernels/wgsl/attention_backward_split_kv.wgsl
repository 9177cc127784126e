// The backward of attention without a mask, pass 2 of 2, work split
// (kernels/attention_backward.c): the scheme of
// attention_backward_pipelined_kv.wgsl (a workgroup owns BK = 32 keys of
// one (batch, kv head), K scaled and V in workgroup memory; it walks the
// queries of every q head of the group that see its keys, BQ = 32 at a
// time, the next tile's rows loaded into registers while the current one
// is computed; dv_j += sum_i p_ij dout_i and dk_j += scale sum_i ds_ij q_i
// in registers), with the threads' work cut so that each value read from
// workgroup memory feeds more products:
//  - the tile's products: threads 0-63 compute the scores q . k, threads
//    64-127 dout . v, each 4 queries x 4 keys (8 quads read a head-dim
//    quad for 16 dot products; a thread doing both did 12 for 16). P and
//    dout . v meet in workgroup memory; ds = p (dp - D) is one more pass
//    over the tile;
//  - the accumulation: threads 0-63 take the tile's queries 0-15, threads
//    64-127 queries 16-31, each 4 keys x 2 quads of both dk and dv (6
//    quads read a query for 16 products; 4 keys x 1 quad read 4 for 8);
//    the two halves are added at the end.
// Phase 1 thread (role, tk, tq): keys tk + 8 i, queries tq + 8 r (i, r < 4).
// Phase 2 thread (half, kb, tq): keys kb + 8 i, quads tq + 8 c (c < DH).
// Keys kb + 8 i: consecutive lanes read consecutive rows (no bank
// conflicts on the padded rows); p_tile and ds_tile hold a query's four
// keys kb, kb + 8, kb + 16, kb + 24 as one vec4. Contiguous f32, read as
// vec4. Prelude: DQ, CAUSAL, UNROLL (as the tiled kernels).

struct Params {
    hq: u32, hkv: u32, sq: u32, skv: u32,
    group: u32, blocks: u32, workgroups: u32, scale: f32,
    dq: u32, tile: u32, neg_inf: u32, pad0: u32, // dq == DQ, tile == BQ
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> k: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> v: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> g: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> stats: array<vec2<f32>>;
@group(0) @binding(6) var<storage, read_write> dk: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> dv: array<vec4<f32>>;

const BQ: u32 = 32u;
const BK: u32 = 32u;
const WG: u32 = 128u;
const QS: u32 = DQ + 1u; // padded row length in quads: lanes on different rows hit different banks
const PF: u32 = (BQ * DQ + WG - 1u) / WG; // quads of q (and of dout) a thread loads for a tile
const DH: u32 = (DQ + 7u) / 8u; // quads of dk and dv a thread owns
const GOFF: u32 = BQ * QS; // where the dout rows start in qg_tile
const VOFF: u32 = BK * QS; // where the V rows start in kv_tile

var<workgroup> kv_tile: array<vec4<f32>, 2u * BK * QS>;
var<workgroup> qg_tile: array<vec4<f32>, 2u * BQ * QS>; // also the halves' sums at the end
var<workgroup> p_tile: array<vec4<f32>, BQ * 8u>;  // [query][kb]: keys kb + 8 i
var<workgroup> ds_tile: array<vec4<f32>, BQ * 8u>; // dout . v, then ds
var<workgroup> st_tile: array<vec2<f32>, BQ>;

// The next tile, in flight from global memory.
var<private> next_q: array<vec4<f32>, PF>;
var<private> next_g: array<vec4<f32>, PF>;
var<private> next_st: vec2<f32>;

// Queries t0 .. t0 + BQ of the head starting at row qrow0 into registers;
// queries from sq on are zeros, their statistics those of a row without
// keys (p = 0).
fn fetch(qrow0: u32, t0: u32, lid: u32) {
    for (var c = 0u; c < PF; c++) {
        let e = lid + c * WG;
        let i = t0 + e / DQ;
        var x = vec4<f32>(0.0);
        var y = vec4<f32>(0.0);
        if (e < BQ * DQ && i < p.sq) {
            x = q[(qrow0 + i) * DQ + e % DQ];
            y = g[(qrow0 + i) * DQ + e % DQ];
        }
        next_q[c] = x;
        next_g[c] = y;
    }
    next_st = vec2<f32>(3.0e38, 0.0);
    if (lid < BQ && t0 + lid < p.sq) { next_st = stats[qrow0 + t0 + lid]; }
}

fn stage(lid: u32) {
    for (var c = 0u; c < PF; c++) {
        let e = lid + c * WG;
        if (e < BQ * DQ) {
            qg_tile[(e / DQ) * QS + e % DQ] = next_q[c];
            qg_tile[GOFF + (e / DQ) * QS + e % DQ] = next_g[c];
        }
    }
    if (lid < BQ) { st_tile[lid] = next_st; }
}

// acc + a . b as a chain of fused multiply-adds (no separate product and sum).
fn dot_fma(a: vec4<f32>, b: vec4<f32>, acc: f32) -> f32 {
    return fma(a.w, b.w, fma(a.z, b.z, fma(a.y, b.y, fma(a.x, b.x, acc))));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let wgi = wid.x + wid.y * nwg.x;
    if (wgi >= p.workgroups) { return; } // uniform: the whole workgroup leaves
    // Causal: the first keys are seen by the most queries; they start first.
    let blk = wgi % p.blocks;
    let bkh = wgi / p.blocks; // b * hkv + kv head
    let kh = bkh % p.hkv;
    let b = bkh / p.hkv;
    let j0 = blk * BK;
    let krow0 = bkh * p.skv;
    let shift = i32(p.skv) - i32(p.sq); // query i sees keys j <= i + shift
    let dn = select(p.dq, DQ, UNROLL);
    // Phase 1: role 0 the scores, role 1 dout . v.
    let role = lid / 64u;
    let tk = (lid % 64u) / 8u;
    let tq = lid % 8u;
    // Phase 2: half 0 queries 0-15 of a tile, half 1 16-31.
    let half = lid / 64u;
    let kb = (lid % 64u) / 8u;

    for (var e = lid; e < BK * DQ; e += WG) {
        let j = j0 + e / DQ;
        var x = vec4<f32>(0.0);
        var y = vec4<f32>(0.0);
        if (j < p.skv) {
            x = k[(krow0 + j) * DQ + e % DQ] * p.scale;
            y = v[(krow0 + j) * DQ + e % DQ];
        }
        kv_tile[(e / DQ) * QS + e % DQ] = x;
        kv_tile[VOFF + (e / DQ) * QS + e % DQ] = y;
    }
    // The phase-1 thread's keys; a key past the end is seen by no query.
    let jk = vec4<i32>(i32(j0 + tk)) + vec4<i32>(0, 8, 16, 24);
    let key_in = jk < vec4<i32>(i32(p.skv));
    var qstart = 0u;
    if (CAUSAL) { qstart = u32(max(i32(j0) - shift, 0)); }
    // Tiles of one q head, then of all heads of the group, in one walk so
    // that the prefetch crosses from one head to the next.
    let nt = select(0u, (p.sq - qstart + BQ - 1u) / BQ, qstart < p.sq);
    let tiles = p.group * nt;
    let head0 = (b * p.hq + kh * p.group) * p.sq; // first row of the group's first q head
    if (tiles > 0u) { fetch(head0, qstart, lid); }
    let kbase = role * VOFF;
    let qbase = role * GOFF;

    var ak: array<vec4<f32>, 4u * DH>; // [key][quad]
    var av: array<vec4<f32>, 4u * DH>;
    for (var c = 0u; c < 4u * DH; c++) {
        ak[c] = vec4<f32>(0.0);
        av[c] = vec4<f32>(0.0);
    }
    for (var n = 0u; n < tiles; n++) {
        let t0 = qstart + (n % nt) * BQ;
        workgroupBarrier(); // the previous tile's readers are done
        stage(lid);
        workgroupBarrier();
        if (n + 1u < tiles) {
            let n1 = n + 1u;
            fetch(head0 + (n1 / nt) * p.sq, qstart + (n1 % nt) * BQ, lid);
        }
        var acc: array<vec4<f32>, 4>; // [query r][key i]
        for (var r = 0u; r < 4u; r++) { acc[r] = vec4<f32>(0.0); }
        for (var d = 0u; d < dn; d++) {
            var kq: array<vec4<f32>, 4>;
            for (var i = 0u; i < 4u; i++) { kq[i] = kv_tile[kbase + (tk + 8u * i) * QS + d]; }
            for (var r = 0u; r < 4u; r++) {
                let qv = qg_tile[qbase + (tq + 8u * r) * QS + d];
                for (var i = 0u; i < 4u; i++) { acc[r][i] = dot_fma(qv, kq[i], acc[r][i]); }
            }
        }
        for (var r = 0u; r < 4u; r++) {
            let row = tq + 8u * r;
            if (role == 0u) {
                let qi = i32(t0 + row);
                var vis = key_in & vec4<bool>(qi < i32(p.sq));
                if (CAUSAL) { vis = vis & (jk <= vec4<i32>(qi + shift)); }
                p_tile[row * 8u + tk] = select(vec4<f32>(0.0), exp(acc[r] - st_tile[row].x), vis);
            } else {
                ds_tile[row * 8u + tk] = acc[r];
            }
        }
        workgroupBarrier();
        for (var e = lid; e < BQ * 8u; e += WG) { ds_tile[e] = p_tile[e] * (ds_tile[e] - st_tile[e / 8u].y); }
        workgroupBarrier();
        for (var rr = 0u; rr < BQ / 2u; rr++) {
            let r = half * (BQ / 2u) + rr;
            let pv = p_tile[r * 8u + kb];
            let dsv = ds_tile[r * 8u + kb];
            for (var c = 0u; c < DH; c++) {
                let d = tq + 8u * c;
                if (DQ % 8u == 0u || d < DQ) {
                    let gq = qg_tile[GOFF + r * QS + d];
                    let qq = qg_tile[r * QS + d];
                    for (var i = 0u; i < 4u; i++) {
                        av[i * DH + c] = fma(vec4<f32>(pv[i]), gq, av[i * DH + c]);
                        ak[i * DH + c] = fma(vec4<f32>(dsv[i]), qq, ak[i * DH + c]);
                    }
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
                if (DQ % 8u == 0u || d < DQ) {
                    qg_tile[(kb + 8u * i) * DQ + d] = ak[i * DH + c];
                    qg_tile[BK * DQ + (kb + 8u * i) * DQ + d] = av[i * DH + c];
                }
            }
        }
    }
    workgroupBarrier();
    if (half == 0u) {
        for (var i = 0u; i < 4u; i++) {
            let j = j0 + kb + 8u * i;
            if (j >= p.skv) { continue; }
            for (var c = 0u; c < DH; c++) {
                let d = tq + 8u * c;
                if (DQ % 8u == 0u || d < DQ) {
                    dk[(krow0 + j) * DQ + d] = (ak[i * DH + c] + qg_tile[(kb + 8u * i) * DQ + d]) * p.scale;
                    dv[(krow0 + j) * DQ + d] = av[i * DH + c] + qg_tile[BK * DQ + (kb + 8u * i) * DQ + d];
                }
            }
        }
    }
}
