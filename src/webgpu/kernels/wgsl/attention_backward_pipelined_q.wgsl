// The backward of attention without a mask, pass 1 of 2, tiled and
// pipelined (kernels/attention_backward.c): a workgroup owns BQ = 32 query
// rows of one (batch, q head) and walks the keys of its kv head BK = 32 at
// a time, with s_ij = scale q_i . k_j and dp_ij = dout_i . v_j:
//   1. the row statistics for pass 2: L_i = m + log l (the log-sum-exp),
//      each thread online over its own keys (running maximum m,
//      l = sum exp(s - m)), merged across the 16 threads of a row through
//      workgroup memory, unless the forward's log-sum-exp is at hand
//      (HAVE_LSE), and D_i = dout_i . out_i from the forward's output;
//   2. dq_i = scale sum_j p_ij (dp_ij - D_i) k_j with p_ij = exp(s_ij - L_i).
// Nothing of size Sq x Skv leaves the workgroup. Two things keep the FP32
// units busier than a plain tiled walk:
//  - the next key tile's K and V rows are loaded from global memory into
//    registers while the current tile is computed, so no barrier of the
//    dq walk waits for a global load after the first tile;
//  - SPLIT_KV: K and V in workgroup memory side by side (38 KiB at head
//    dim 64) where the device holds it, three barriers a tile; otherwise
//    one buffer takes V, then K (five barriers a tile, 30 KiB).
// The statistics walk (without the forward's log-sum-exp) loads its tiles as
// it goes. Thread (ty, tx) of 128 = 8 x 16 owns rows 4 ty .. 4 ty + 3, keys
// tx and tx + 16 of each tile for the scores and quads tx, tx + 16, ... of
// its rows of dq. A row that sees no key gets L = 3e38 (every p is 0), D = 0
// and dq = 0. f32, read as vec4.
// Prelude: DQ (head dim / 4), DT (quads a thread: DQ / 16 rounded up),
// D_EXACT (DT * 16 == DQ), CAUSAL, UNROLL (the loops' bounds as constants),
// HAVE_LSE and load_lse (the forward's log-sum-exp), SPLIT_KV, DQ_PASS
// (false: the statistics alone, for the path that takes dq as a matrix
// product of the key kernel's ds; dq is then left as it is), and q_head /
// k_head / g_head, q_at / k_at / v_at / g_at (the quad where a head's
// first row starts, and where its row s starts: the operands are
// [B, H, S, D] or the [B, H, S, D] views of rows [B, S, ..., H, D, ...];
// q and dq alike, k and dk, v and dv, dout and out).

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
const QS: u32 = DQ + 1u; // padded row length in quads: lanes on different rows hit different banks
const RQ: u32 = BQ / 4u;

var<workgroup> q_tile: array<vec4<f32>, BQ * QS>;
var<workgroup> g_tile: array<vec4<f32>, BQ * QS>;
const VOFF: u32 = select(0u, BK * QS, SPLIT_KV); // where V starts in kv_tile
const PK: u32 = (BK * DQ + WG - 1u) / WG; // quads of K (and of V) a thread loads for a tile
var<workgroup> kv_tile: array<vec4<f32>, select(1u, 2u, SPLIT_KV) * BK * QS>;
var<workgroup> ds_tile: array<vec4<f32>, BK * RQ>; // [key][row quad]; also the statistics' merge

// Keys t0 .. t0 + BK of the head whose first row is at kbase (of v or k) into
// kv_tile; keys from kend on are zeros.
fn load_keys(from_v: bool, kbase: u32, t0: u32, kend: u32, lid: u32) {
    for (var e = lid; e < BK * DQ; e += WG) {
        let j = t0 + e / DQ;
        var x = vec4<f32>(0.0);
        if (j < kend) {
            if (from_v) { x = v[v_at(kbase, j) + e % DQ]; } else { x = k[k_at(kbase, j) + e % DQ]; }
        }
        kv_tile[(e / DQ) * QS + e % DQ] = x;
    }
}

// The next key tile, in flight from global memory.
var<private> next_k: array<vec4<f32>, PK>;
var<private> next_v: array<vec4<f32>, PK>;

// Keys t0 .. t0 + BK of the head whose first row is at kbase into registers;
// keys from kend on are zeros.
fn fetch_keys(kbase: u32, t0: u32, kend: u32, lid: u32) {
    for (var c = 0u; c < PK; c++) {
        let e = lid + c * WG;
        let j = t0 + e / DQ;
        var x = vec4<f32>(0.0);
        var y = vec4<f32>(0.0);
        if (e < BK * DQ && j < kend) {
            x = k[k_at(kbase, j) + e % DQ];
            y = v[v_at(kbase, j) + e % DQ];
        }
        next_k[c] = x;
        next_v[c] = y;
    }
}

// The fetched keys into kv_tile: K and V side by side (SPLIT_KV), else
// the values (of_v) or the keys alone.
fn stage_keys(of_v: bool, lid: u32) {
    for (var c = 0u; c < PK; c++) {
        let e = lid + c * WG;
        if (e < BK * DQ) {
            let at = (e / DQ) * QS + e % DQ;
            if (SPLIT_KV) {
                kv_tile[at] = next_k[c];
                kv_tile[VOFF + at] = next_v[c];
            } else {
                kv_tile[at] = select(next_k[c], next_v[c], of_v);
            }
        }
    }
}

// The thread's four rows (4 ty .. 4 ty + 3) of q_tile (of g_tile when
// of_v) dotted with its two keys (tx and tx + TX) of the tile in kv_tile
// (its values at VOFF when of_v). No barriers.
fn dots(of_v: bool, tx: u32, ty: u32) -> TileDots {
    let dn = select(p.dq, DQ, UNROLL);
    let base = select(0u, VOFF, of_v);
    var lo = vec4<f32>(0.0);
    var hi = vec4<f32>(0.0);
    for (var d = 0u; d < dn; d++) {
        let k0 = kv_tile[base + tx * QS + d];
        let k1 = kv_tile[base + (tx + TX) * QS + d];
        for (var i = 0u; i < 4u; i++) {
            let at = (ty * 4u + i) * QS + d;
            var row: vec4<f32>;
            if (of_v) { row = g_tile[at]; } else { row = q_tile[at]; }
            lo[i] += dot(row, k0);
            hi[i] += dot(row, k1);
        }
    }
    return TileDots(lo, hi);
}

// Keys t0 .. t0 + BK (values when of_v) into kv_tile (load_keys), then
// the thread's four rows (4 ty .. 4 ty + 3) of q_tile (of g_tile when
// of_v) dotted with its two of them (tx and tx + TX): the scores against
// keys, dout . v against values. of_v is a constant at each call. Has
// barriers: called from uniform control flow.
struct TileDots {
    lo: vec4<f32>, // key tx, a lane a row
    hi: vec4<f32>, // key tx + TX
}

fn tile_dots(of_v: bool, kbase: u32, t0: u32, kend: u32, lid: u32, tx: u32, ty: u32) -> TileDots {
    workgroupBarrier();
    load_keys(of_v, kbase, t0, kend, lid);
    workgroupBarrier();
    let dn = select(p.dq, DQ, UNROLL);
    var lo = vec4<f32>(0.0);
    var hi = vec4<f32>(0.0);
    for (var d = 0u; d < dn; d++) {
        let k0 = kv_tile[tx * QS + d];
        let k1 = kv_tile[(tx + TX) * QS + d];
        for (var i = 0u; i < 4u; i++) {
            let at = (ty * 4u + i) * QS + d;
            var row: vec4<f32>;
            if (of_v) { row = g_tile[at]; } else { row = q_tile[at]; }
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
    let kbase = k_head(b, h / p.group);
    let qrow0 = bh * p.sq; // in the statistics
    let qbase = q_head(b, h);
    let gbase = g_head(b, h); // of dout and out
    let i0 = blk * BQ;
    let tx = lid % TX;
    let ty = lid / TX;
    let shift = i32(p.skv) - i32(p.sq); // query i sees keys j <= i + shift
    let kn = select(p.tile, BK, UNROLL);

    for (var e = lid; e < BQ * DQ; e += WG) {
        let i = i0 + e / DQ;
        var x = vec4<f32>(0.0);
        var y = vec4<f32>(0.0);
        if (i < p.sq) {
            x = q[q_at(qbase, i) + e % DQ] * p.scale;
            y = g[g_at(gbase, i) + e % DQ];
        }
        q_tile[(e / DQ) * QS + e % DQ] = x;
        g_tile[(e / DQ) * QS + e % DQ] = y;
    }
    // The last key each of the thread's rows sees (-1: none).
    var limit = vec4<i32>(-1);
    for (var i = 0u; i < 4u; i++) {
        let r = i0 + ty * 4u + i;
        if (r < p.sq) { limit[i] = select(i32(p.skv) - 1, min(i32(r) + shift, i32(p.skv) - 1), CAUSAL); }
    }
    var kend = p.skv;
    if (CAUSAL) {
        let last = min(i0 + BQ, p.sq) - 1u;
        kend = u32(clamp(i32(last) + shift + 1, 0, i32(p.skv)));
    }

    // 1. Statistics (with the forward's log-sum-exp, D alone: no walk).
    var m = vec4<f32>(neg_inf);
    var l = vec4<f32>(0.0);
    let stats_end = select(kend, 0u, HAVE_LSE);
    for (var t0 = 0u; t0 < stats_end; t0 += BK) {
        let sd = tile_dots(false, kbase, t0, kend, lid, tx, ty);
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
    // The thread's share of D: dout . out over its quads of its rows (the
    // barrier: with HAVE_LSE no walk above has waited for g_tile).
    workgroupBarrier();
    var a = vec4<f32>(0.0);
    for (var c = 0u; c < DT; c++) {
        let d = tx + c * TX;
        if (D_EXACT || d < DQ) {
            for (var i = 0u; i < 4u; i++) {
                let r = i0 + ty * 4u + i;
                if (r < p.sq) { a[i] += dot(g_tile[(ty * 4u + i) * QS + d], o[g_at(gbase, r) + d]); }
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
            if (r < p.sq) { stats[qrow0 + r] = vec2<f32>(lse[i], dd[i]); }
        }
    }

    // 2. dq.
    let dq_end = select(0u, kend, DQ_PASS);
    var acc: array<vec4<f32>, 4u * DT>; // [row][quad]
    for (var c = 0u; c < 4u * DT; c++) { acc[c] = vec4<f32>(0.0); }
    if (dq_end > 0u) { fetch_keys(kbase, 0u, kend, lid); }
    for (var t0 = 0u; t0 < dq_end; t0 += BK) {
        workgroupBarrier(); // the previous tile's readers are done
        var pd: TileDots;
        if (SPLIT_KV) {
            stage_keys(true, lid);
            workgroupBarrier();
            if (t0 + BK < kend) { fetch_keys(kbase, t0 + BK, kend, lid); }
            pd = dots(true, tx, ty);
        } else {
            stage_keys(true, lid);
            workgroupBarrier();
            pd = dots(true, tx, ty);
            workgroupBarrier();
            stage_keys(false, lid);
            workgroupBarrier();
            if (t0 + BK < kend) { fetch_keys(kbase, t0 + BK, kend, lid); }
        }
        let p0 = pd.lo;
        let p1 = pd.hi;
        let sd = dots(false, tx, ty);
        let j0 = vec4<i32>(i32(t0 + tx));
        let pr0 = select(vec4<f32>(0.0), exp(sd.lo - lse), j0 <= limit);
        let pr1 = select(vec4<f32>(0.0), exp(sd.hi - lse), j0 + vec4<i32>(i32(TX)) <= limit);
        ds_tile[tx * RQ + ty] = pr0 * (p0 - dd);
        ds_tile[(tx + TX) * RQ + ty] = pr1 * (p1 - dd);
        workgroupBarrier();
        for (var kk = 0u; kk < kn; kk++) {
            let dsv = ds_tile[kk * RQ + ty];
            for (var c = 0u; c < DT; c++) {
                let d = tx + c * TX;
                if (D_EXACT || d < DQ) {
                    let kv = kv_tile[kk * QS + d];
                    for (var i = 0u; i < 4u; i++) { acc[i * DT + c] = fma(vec4<f32>(dsv[i]), kv, acc[i * DT + c]); }
                }
            }
        }
    }
    for (var i = 0u; i < 4u; i++) {
        let r = i0 + ty * 4u + i;
        if (!DQ_PASS || r >= p.sq) { continue; }
        for (var c = 0u; c < DT; c++) {
            let d = tx + c * TX;
            if (D_EXACT || d < DQ) { dq[q_at(qbase, r) + d] = acc[i * DT + c] * p.scale; }
        }
    }
}
