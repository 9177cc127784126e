// The backward of attention without a mask, pass 2 of 2, tiled and
// pipelined (kernels/attention_backward.c): a workgroup owns BK = 32 keys
// of one (batch, kv head), K scaled and V in workgroup memory; it walks the
// queries of every q head of the group that see its keys, from the first
// query that sees its first key, a tile of BQ at a time, recomputes
// p_ij = exp(scale q_i . k_j - L_i) and ds_ij = p_ij (dout_i . v_j - D_i)
// with L_i and D_i of pass 1 (stats) and accumulates dv_j += sum_i p_ij
// dout_i and dk_j += scale sum_i ds_ij q_i in registers. Two things keep
// the FP32 units busier than a plain tiled walk (measured in the file
// kernels/attention_backward.c names):
//  - the next tile's q, dout rows and statistics are loaded from global
//    memory into registers while the current tile is computed (they are
//    written to workgroup memory at the next tile's start), so no barrier
//    waits for a global load after the first tile;
//  - QPT queries a thread in the scores (BQ = 16 QPT): with QPT = 2 a tile
//    of 32 queries, twice the work between the two barriers of a tile,
//    where the device's workgroup memory holds it (42 KiB at head dim 64).
// Thread (ty, tx) of 128 = 8 x 16 owns 4 keys (key_of: 4 ty .. 4 ty + 3,
// or with LANES ty, ty + 8, ty + 16, ty + 24): queries tx, tx + 16, ... of
// a tile for the scores, quads tx, tx + 16, ... of dk and dv. f32, read as
// vec4.
// The key kernel's forms (prelude, kernels/attention_backward.c):
//  - LANES: a warp of 32 holds 4 ty x 8 tx, not 2 x 16, and a thread's
//    keys are 8 apart: a load of workgroup memory then touches 4 key rows
//    and 8 query rows or head-dim quads, one pass of the banks each
//    (2 x 16 needs two for the 16 queries; keys 4 apart would share banks);
//  - PAD_P: the rows of p and ds padded by a quad, so that the writes of a
//    warp's query rows fall on different banks;
//  - FMA_S: the scores as a chain of FMAs, not dot() and an add.
// WRITE_DS (short sequences, kernels/attention_backward.c): the kernel
// also stores scale ds_ij, zeros where query i does not see key j, as
// the rows [B, Hq, Sq, Skv] of a scratch matrix (store_ds, Skv a multiple
// of 4), so that dq = ds @ K is a batched matrix product instead of a
// query kernel that computes p and ds again.
// Prelude: DQ, DT, D_EXACT, CAUSAL, UNROLL (as pass 1), QPT, LANES, PAD_P,
// FMA_S, WRITE_DS, ZERO_DS and store_ds (the binding after dk and dv's where
// WRITE_DS), dk and dv's bindings with store_dk / store_dv (one binding
// where they share a buffer), and q_head / k_head / g_head, q_at / k_at /
// v_at / g_at (the quad where a head's first row starts, and where its
// row s starts: the operands are [B, H, S, D] or the [B, H, S, D] views
// of rows [B, S, ..., H, D, ...]).

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

const TX: u32 = 16u;
const BQ: u32 = TX * QPT;
const BK: u32 = 32u;
const WG: u32 = 128u;
const QS: u32 = DQ + 1u; // padded row length in quads: lanes on different rows hit different banks
const RK: u32 = BK / 4u;
const PR: u32 = RK + select(0u, 1u, PAD_P); // quads a row of p_tile and ds_tile
const PF: u32 = (BQ * DQ + WG - 1u) / WG; // quads of q (and of dout) a thread loads for a tile

var<workgroup> k_tile: array<vec4<f32>, BK * QS>;
var<workgroup> v_tile: array<vec4<f32>, BK * QS>;
var<workgroup> q_tile: array<vec4<f32>, BQ * QS>;
var<workgroup> g_tile: array<vec4<f32>, BQ * QS>;
var<workgroup> p_tile: array<vec4<f32>, BQ * PR>;  // [query][the keys of a thread's ty]
var<workgroup> ds_tile: array<vec4<f32>, BQ * PR>;
var<workgroup> st_tile: array<vec2<f32>, BQ>;

// The next tile, in flight from global memory.
var<private> next_q: array<vec4<f32>, PF>;
var<private> next_g: array<vec4<f32>, PF>;
var<private> next_st: vec2<f32>;

// Queries t0 .. t0 + BQ of the head whose first row is at qbase (its
// dout's at gbase, row qrow0 of the statistics) into registers;
// queries from sq on are zeros, their statistics those of a row without
// keys (p = 0).
fn fetch(qrow0: u32, qbase: u32, gbase: u32, t0: u32, lid: u32) {
    for (var c = 0u; c < PF; c++) {
        let e = lid + c * WG;
        let i = t0 + e / DQ;
        var x = vec4<f32>(0.0);
        var y = vec4<f32>(0.0);
        if (e < BQ * DQ && i < p.sq) {
            x = q[q_at(qbase, i) + e % DQ];
            y = g[g_at(gbase, i) + e % DQ];
        }
        next_q[c] = x;
        next_g[c] = y;
    }
    next_st = vec2<f32>(3.0e38, 0.0);
    if (lid < BQ && t0 + lid < p.sq) { next_st = stats[qrow0 + t0 + lid]; }
}

// Key i (0..3) of the threads of row ty, within the block.
fn key_of(ty: u32, i: u32) -> u32 {
    if (LANES) { return ty + RK * i; }
    return ty * 4u + i;
}

// ds of row r's keys 4 c .. 4 c + 3 (ds_tile holds a thread's keys).
fn ds_quad(r: u32, c: u32) -> vec4<f32> {
    if (!LANES) { return ds_tile[r * PR + c]; }
    var x: vec4<f32>;
    for (var m = 0u; m < 4u; m++) { x[m] = ds_tile[r * PR + (4u * c + m) % RK][(4u * c + m) / RK]; }
    return x;
}

fn stage(lid: u32) {
    for (var c = 0u; c < PF; c++) {
        let e = lid + c * WG;
        if (e < BQ * DQ) {
            q_tile[(e / DQ) * QS + e % DQ] = next_q[c];
            g_tile[(e / DQ) * QS + e % DQ] = next_g[c];
        }
    }
    if (lid < BQ) { st_tile[lid] = next_st; }
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
    let kbase = k_head(b, kh);
    var tx = lid % TX;
    var ty = lid / TX;
    if (LANES) {
        tx = lid % 8u + 8u * ((lid / 32u) % 2u);
        ty = (lid / 8u) % 4u + 4u * (lid / 64u);
    }
    let shift = i32(p.skv) - i32(p.sq); // query i sees keys j <= i + shift
    let dn = select(p.dq, DQ, UNROLL);
    let qn = select(p.tile, BQ, UNROLL);

    for (var e = lid; e < BK * DQ; e += WG) {
        let j = j0 + e / DQ;
        var x = vec4<f32>(0.0);
        var y = vec4<f32>(0.0);
        if (j < p.skv) {
            x = k[k_at(kbase, j) + e % DQ] * p.scale;
            y = v[v_at(kbase, j) + e % DQ];
        }
        k_tile[(e / DQ) * QS + e % DQ] = x;
        v_tile[(e / DQ) * QS + e % DQ] = y;
    }
    // The thread's keys; a key past the end is seen by no query.
    let jk = vec4<i32>(i32(j0 + key_of(ty, 0u)), i32(j0 + key_of(ty, 1u)), i32(j0 + key_of(ty, 2u)),
                       i32(j0 + key_of(ty, 3u)));
    let key_in = jk < vec4<i32>(i32(p.skv));
    var qstart = 0u;
    if (CAUSAL) { qstart = u32(max(i32(j0) - shift, 0)); }
    // Tiles of one q head, then of all heads of the group, in one walk so
    // that the prefetch crosses from one head to the next.
    let nt = select(0u, (p.sq - qstart + BQ - 1u) / BQ, qstart < p.sq);
    let tiles = p.group * nt;
    let head0 = (b * p.hq + kh * p.group) * p.sq; // first row of the group's first q head
    if (tiles > 0u) { fetch(head0, q_head(b, kh * p.group), g_head(b, kh * p.group), qstart, lid); }

    var ak: array<vec4<f32>, 4u * DT>; // [key][quad]
    var av: array<vec4<f32>, 4u * DT>;
    for (var c = 0u; c < 4u * DT; c++) {
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
            let h1 = kh * p.group + n1 / nt;
            fetch(head0 + (n1 / nt) * p.sq, q_head(b, h1), g_head(b, h1), qstart + (n1 % nt) * BQ, lid);
        }
        var s: array<vec4<f32>, QPT>;
        var dp: array<vec4<f32>, QPT>;
        for (var r = 0u; r < QPT; r++) {
            s[r] = vec4<f32>(0.0);
            dp[r] = vec4<f32>(0.0);
        }
        for (var d = 0u; d < dn; d++) {
            var kq: array<vec4<f32>, 4>;
            var vq: array<vec4<f32>, 4>;
            for (var i = 0u; i < 4u; i++) {
                kq[i] = k_tile[key_of(ty, i) * QS + d];
                vq[i] = v_tile[key_of(ty, i) * QS + d];
            }
            for (var r = 0u; r < QPT; r++) {
                let qv = q_tile[(tx + r * TX) * QS + d];
                let gv = g_tile[(tx + r * TX) * QS + d];
                for (var i = 0u; i < 4u; i++) {
                    if (FMA_S) {
                        s[r][i] = fma(qv.w, kq[i].w, fma(qv.z, kq[i].z, fma(qv.y, kq[i].y, fma(qv.x, kq[i].x, s[r][i]))));
                        dp[r][i] = fma(gv.w, vq[i].w, fma(gv.z, vq[i].z, fma(gv.y, vq[i].y, fma(gv.x, vq[i].x, dp[r][i]))));
                    } else {
                        s[r][i] += dot(qv, kq[i]);
                        dp[r][i] += dot(gv, vq[i]);
                    }
                }
            }
        }
        for (var r = 0u; r < QPT; r++) {
            let row = tx + r * TX;
            let qi = i32(t0 + row);
            var vis = key_in & vec4<bool>(qi < i32(p.sq));
            if (CAUSAL) { vis = vis & (jk <= vec4<i32>(qi + shift)); }
            let st = st_tile[row];
            let pr = select(vec4<f32>(0.0), exp(s[r] - st.x), vis);
            p_tile[row * PR + ty] = pr;
            ds_tile[row * PR + ty] = pr * (dp[r] - st.y);
        }
        workgroupBarrier();
        if (WRITE_DS) {
            // Whole quads of consecutive keys of a row from consecutive
            // threads: 128 contiguous bytes a row.
            let row0 = head0 + (n / nt) * p.sq + t0; // the tile's first row of all heads
            for (var e = lid; e < BQ * RK; e += WG) {
                let r = e / RK;
                let c = e % RK;
                if (t0 + r < p.sq && j0 + 4u * c < p.skv) {
                    store_ds((row0 + r) * (p.skv / 4u) + j0 / 4u + c, ds_quad(r, c) * p.scale);
                }
            }
        }
        for (var r = 0u; r < qn; r++) {
            let pv = p_tile[r * PR + ty];
            let dsv = ds_tile[r * PR + ty];
            for (var c = 0u; c < DT; c++) {
                let d = tx + c * TX;
                if (D_EXACT || d < DQ) {
                    let gq = g_tile[r * QS + d];
                    let qq = q_tile[r * QS + d];
                    for (var i = 0u; i < 4u; i++) {
                        av[i * DT + c] = fma(vec4<f32>(pv[i]), gq, av[i * DT + c]);
                        ak[i * DT + c] = fma(vec4<f32>(dsv[i]), qq, ak[i * DT + c]);
                    }
                }
            }
        }
    }
    if (WRITE_DS && ZERO_DS) {
        // The rows before qstart see none of these keys (causal): zeros,
        // for a product that multiplies them (the dq kernel reads them as
        // zeros without looking).
        let rows = min(qstart, p.sq);
        for (var g = 0u; g < p.group; g++) {
            for (var e = lid; e < rows * RK; e += WG) {
                let r = e / RK;
                let c = e % RK;
                if (j0 + 4u * c < p.skv) { store_ds((head0 + g * p.sq + r) * (p.skv / 4u) + j0 / 4u + c, vec4<f32>(0.0)); }
            }
        }
    }
    for (var i = 0u; i < 4u; i++) {
        let j = j0 + key_of(ty, i);
        if (j >= p.skv) { continue; }
        for (var c = 0u; c < DT; c++) {
            let d = tx + c * TX;
            if (D_EXACT || d < DQ) {
                store_dk(k_at(kbase, j) + d, ak[i * DT + c] * p.scale);
                store_dv(v_at(kbase, j) + d, av[i * DT + c]);
            }
        }
    }
}
