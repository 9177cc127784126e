// Batched matrix product out[b] = a[b] @ b[b], register-tiled.
//
// a is [batch, M, K] and b [batch, K, N] with any element strides (a batch
// stride of 0 broadcasts); out is [batch, M, N] contiguous from out_offset.
// A workgroup of 256 threads (16 x 16) computes a TILE_M x 64 tile of one
// batch entry; each thread holds an RM x 4 block of it in registers. K is
// walked TK at a time: the workgroup stages a TILE_M x TK slab of a and a
// TK x 64 slab of b in workgroup memory (zeros past the edges), then every
// thread accumulates its block from there. TILE_M x TK + TK x 64 floats:
// 12 KiB at most, inside the 16 KiB every device offers.
//
// Prelude constants:
//   RM: rows per thread (4 or 8); TILE_M = 16 * RM.
//   A_K_FAST: a's loads walk k fastest (its k stride is 1), else m fastest.
//   B_N_FAST: b's loads walk n fastest (its n stride is 1), else k fastest.
// Choosing the fast axis by stride keeps the global loads coalesced for
// transposed views too.

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
    pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

const TILE_M: u32 = 16u * RM;
const TILE_N: u32 = 64u;
const TK: u32 = 16u;

// [k][m / 4] and [k][n / 4] as vec4s: a thread's RM rows and 4 columns
// are whole vec4s, so the inner loop reads RM / 4 + 1 of them per k.
const A_QUADS: u32 = TILE_M / 4u;
const B_QUADS: u32 = TILE_N / 4u;
var<workgroup> a_tile: array<vec4<f32>, TK * A_QUADS>;
var<workgroup> b_tile: array<vec4<f32>, TK * B_QUADS>;

fn load_a(a_base: u32, gm: u32, gk: u32) -> f32 {
    if (gm < p.m && gk < p.k) {
        return a[a_base + gm * p.a_row_stride + gk * p.a_col_stride];
    }
    return 0.0;
}

fn load_b(b_base: u32, gk: u32, gn: u32) -> f32 {
    if (gk < p.k && gn < p.n) {
        return b[b_base + gk * p.b_row_stride + gn * p.b_col_stride];
    }
    return 0.0;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = wid.x + wid.y * nwg.x;
    let tiles = p.tiles_m * p.tiles_n;
    if (w >= p.batch * tiles) { return; } // uniform: the whole workgroup leaves

    let batch = w / tiles;
    let tile = w % tiles;
    let m0 = (tile / p.tiles_n) * TILE_M;
    let n0 = (tile % p.tiles_n) * TILE_N;
    let a_base = p.a_offset + batch * p.a_batch_stride;
    let b_base = p.b_offset + batch * p.b_batch_stride;
    let tx = lid % 16u; // column block: n0 + tx * 4 ...
    let ty = lid / 16u; // row block: m0 + ty * RM ...

    var acc: array<vec4<f32>, RM>;
    for (var i = 0u; i < RM; i++) { acc[i] = vec4<f32>(0.0); }

    for (var k0 = 0u; k0 < p.k; k0 += TK) {
        // Each thread stages whole vec4s (4 rows of a, 4 columns of b).
        // Consecutive threads take consecutive addresses: along k when
        // that is the operand's unit stride, else along m (n).
        for (var i = 0u; i < RM / 4u; i++) {
            let e = lid + i * 256u;
            var mq: u32;
            var kk: u32;
            if (A_K_FAST) { kk = e % TK; mq = e / TK; } else { mq = e % A_QUADS; kk = e / A_QUADS; }
            let gm = m0 + mq * 4u;
            let gk = k0 + kk;
            a_tile[kk * A_QUADS + mq] = vec4<f32>(load_a(a_base, gm, gk), load_a(a_base, gm + 1u, gk),
                                                  load_a(a_base, gm + 2u, gk), load_a(a_base, gm + 3u, gk));
        }
        {
            var nq: u32;
            var kk: u32;
            if (B_N_FAST) { nq = lid % B_QUADS; kk = lid / B_QUADS; } else { kk = lid % TK; nq = lid / TK; }
            let gn = n0 + nq * 4u;
            let gk = k0 + kk;
            b_tile[kk * B_QUADS + nq] = vec4<f32>(load_b(b_base, gk, gn), load_b(b_base, gk, gn + 1u),
                                                  load_b(b_base, gk, gn + 2u), load_b(b_base, gk, gn + 3u));
        }
        workgroupBarrier();

        for (var kk = 0u; kk < TK; kk++) {
            let bv = b_tile[kk * B_QUADS + tx];
            for (var q = 0u; q < RM / 4u; q++) {
                let av = a_tile[kk * A_QUADS + ty * (RM / 4u) + q];
                acc[q * 4u] = fma(vec4<f32>(av.x), bv, acc[q * 4u]);
                acc[q * 4u + 1u] = fma(vec4<f32>(av.y), bv, acc[q * 4u + 1u]);
                acc[q * 4u + 2u] = fma(vec4<f32>(av.z), bv, acc[q * 4u + 2u]);
                acc[q * 4u + 3u] = fma(vec4<f32>(av.w), bv, acc[q * 4u + 3u]);
            }
        }
        workgroupBarrier();
    }

    let n_first = n0 + tx * 4u;
    for (var i = 0u; i < RM; i++) {
        let gm = m0 + ty * RM + i;
        if (gm >= p.m) { break; }
        let row = p.out_offset + (batch * p.m + gm) * p.n;
        for (var j = 0u; j < 4u; j++) {
            if (n_first + j < p.n) {
                out[row + n_first + j] = acc[i][j];
            }
        }
    }
}
