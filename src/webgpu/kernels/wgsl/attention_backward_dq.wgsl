// dq = ds @ K of the attention backward for short sequences
// (kernels/attention_backward.c): ds is the scratch [B, Hq, Sq, Skv] the
// key kernel stores (scale ds_ij, Skv a multiple of 4), K and dq are read
// and written in their own layouts (q_head / q_at, k_head / k_at), so no
// dense copies are made around the product.
// A workgroup owns BR = 64 query rows of one (batch, q head) and 64 head
// dims (16 quads) of dq, and walks the keys a chunk of BK = 32 at a time,
// only up to the last key its last row sees when causal: about half the
// product a dense GEMM would run. Keys a row does not see are read as
// zeros (select, so the key kernel need not write them). The next chunk
// is loaded from global memory into registers while the current one is
// computed, as in the key kernel.
// Thread (ty, tx) of 128 = 8 x 16 owns rows ty, ty + 8, ... ty + 56 and
// head-dim quad tx: per 4 keys 8 loads of ds (the same for the 16 threads
// of a row group) and 4 of K for 128 FMAs.
// Prelude: DQ (head dim / 4), CAUSAL, q_head / q_at, k_head / k_at.

struct Params {
    hq: u32, hkv: u32, sq: u32, skv: u32,
    group: u32, blocks: u32, workgroups: u32, scale: f32,
    dq: u32, tile: u32, neg_inf: u32, pad0: u32, // blocks: row blocks of a head; tile: quad blocks of the head dim
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> ds: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> k: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> dq: array<vec4<f32>>;

const TX: u32 = 16u;
const TY: u32 = 8u;
const WG: u32 = 128u;
const BR: u32 = 64u;
const BK: u32 = 32u;
const RPT: u32 = BR / TY;       // rows a thread
const KQ: u32 = BK / 4u;        // key quads of a ds row in a chunk
const AS: u32 = KQ + 1u;        // padded: a warp's two row groups read different banks
const PF: u32 = BR * KQ / WG;   // quads of ds a thread loads a chunk (4)
const PB: u32 = BK * TX / WG;   // quads of K a thread loads a chunk (4)

var<workgroup> a_tile: array<vec4<f32>, BR * AS>; // [row][key quad]
var<workgroup> b_tile: array<vec4<f32>, BK * TX>; // [key][head-dim quad]

var<private> next_a: array<vec4<f32>, PF>;
var<private> next_b: array<vec4<f32>, PB>;

// Chunk k0's ds rows r0 .. r0 + BR of the head whose row 0 is dsrow0 and
// its keys' quads d0 .. d0 + TX into registers; what is out of range, or
// not seen under causality, as zeros.
fn fetch(dsrow0: u32, r0: u32, kbase: u32, d0: u32, k0: u32, lid: u32) {
    let shift = i32(p.skv) - i32(p.sq);
    let quads = p.skv / 4u;
    for (var c = 0u; c < PF; c++) {
        let e = lid + c * WG;
        let r = r0 + e / KQ;
        let j = k0 + 4u * (e % KQ);
        var x = vec4<f32>(0.0);
        if (r < p.sq && j < p.skv) {
            x = ds[(dsrow0 + r) * quads + j / 4u];
            if (CAUSAL) {
                let seen = (vec4<i32>(i32(j)) + vec4<i32>(0, 1, 2, 3)) <= vec4<i32>(i32(r) + shift);
                x = select(vec4<f32>(0.0), x, seen);
            }
        }
        next_a[c] = x;
    }
    for (var c = 0u; c < PB; c++) {
        let e = lid + c * WG;
        let j = k0 + e / TX;
        let d = d0 + e % TX;
        var y = vec4<f32>(0.0);
        if (j < p.skv && d < DQ) { y = k[k_at(kbase, j) + d]; }
        next_b[c] = y;
    }
}

fn stage(lid: u32) {
    for (var c = 0u; c < PF; c++) {
        let e = lid + c * WG;
        a_tile[(e / KQ) * AS + e % KQ] = next_a[c];
    }
    for (var c = 0u; c < PB; c++) { b_tile[lid + c * WG] = next_b[c]; }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let wgi = wid.x + wid.y * nwg.x;
    if (wgi >= p.workgroups) { return; } // uniform: the whole workgroup leaves
    // Causal: the last row blocks walk the most keys; they start first.
    let rblk = p.blocks - 1u - wgi % p.blocks;
    let rest = wgi / p.blocks;
    let d0 = (rest % p.tile) * TX;
    let bh = rest / p.tile; // b * hq + q head
    let h = bh % p.hq;
    let b = bh / p.hq;
    let r0 = rblk * BR;
    let kbase = k_head(b, h / p.group);
    let qbase = q_head(b, h);
    let dsrow0 = bh * p.sq;
    let tx = lid % TX;
    let ty = lid / TX;
    // Keys 0 .. kend - 1 are seen by some row of the block.
    var kend = p.skv;
    if (CAUSAL) {
        let last = i32(min(r0 + BR, p.sq)) + i32(p.skv) - i32(p.sq); // the block's last row sees keys < last
        kend = u32(clamp(last, 0, i32(p.skv)));
    }
    let chunks = (kend + BK - 1u) / BK;

    var acc: array<vec4<f32>, RPT>;
    for (var m = 0u; m < RPT; m++) { acc[m] = vec4<f32>(0.0); }
    if (chunks > 0u) { fetch(dsrow0, r0, kbase, d0, 0u, lid); }
    for (var n = 0u; n < chunks; n++) {
        workgroupBarrier(); // the previous chunk's readers are done
        stage(lid);
        workgroupBarrier();
        if (n + 1u < chunks) { fetch(dsrow0, r0, kbase, d0, (n + 1u) * BK, lid); }
        for (var kq = 0u; kq < KQ; kq++) {
            let b0 = b_tile[(4u * kq) * TX + tx];
            let b1 = b_tile[(4u * kq + 1u) * TX + tx];
            let b2 = b_tile[(4u * kq + 2u) * TX + tx];
            let b3 = b_tile[(4u * kq + 3u) * TX + tx];
            for (var m = 0u; m < RPT; m++) {
                let a = a_tile[(ty + m * TY) * AS + kq];
                var s = acc[m];
                s = fma(vec4<f32>(a.x), b0, s);
                s = fma(vec4<f32>(a.y), b1, s);
                s = fma(vec4<f32>(a.z), b2, s);
                acc[m] = fma(vec4<f32>(a.w), b3, s);
            }
        }
    }
    let d = d0 + tx;
    if (d >= DQ) { return; }
    for (var m = 0u; m < RPT; m++) {
        let r = r0 + ty + m * TY;
        if (r < p.sq) { dq[q_at(qbase, r) + d] = acc[m]; }
    }
}
