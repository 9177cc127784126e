// Inclusive scan (OP 0: sum, 1: product) of rows of a [rows, n] matrix in
// blocks of B = WG * ITEMS elements: one workgroup per (row, block). Row
// r's element k sits at offset + (r / inner) * n * inner + r % inner +
// k * inner (a contiguous [outer, n, inner] tensor scanned along n).
//
// The block is loaded into workgroup memory (consecutive threads on
// consecutive elements), each thread scans its ITEMS neighbours serially,
// the thread totals are scanned across the workgroup (Hillis-Steele), and
// each thread adds the prefix of the threads before it. With CARRY the
// inclusive scan of the block totals of the row (carry[r * blocks + b])
// supplies the prefix of the blocks before. TOTALS: only write block b's
// total to out[r * blocks + b] (the first phase of a long row).
// Prelude: T (f32, or i32: wrapping sums and products), OP, WG, ITEMS,
// CARRY, TOTALS.

struct Params {
    rows: u32,
    n: u32,
    inner: u32,
    blocks: u32,
    x_offset: u32,
    out_offset: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<T>;
@group(0) @binding(2) var<storage, read_write> out: array<T>;
@group(0) @binding(3) var<storage, read> carry: array<T>; // x when not CARRY

const B: u32 = WG * ITEMS;
var<workgroup> tile: array<T, B>;
var<workgroup> sums: array<T, WG>;

fn op(a: T, b: T) -> T {
    if (OP == 1u) { return a * b; }
    return a + b;
}

fn identity() -> T {
    if (OP == 1u) { return T(1); }
    return T(0);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = wid.x + wid.y * nwg.x;
    if (w >= p.rows * p.blocks) { return; } // uniform: the whole workgroup leaves
    let row = w / p.blocks;
    let b = w % p.blocks;
    let base = (row / p.inner) * p.n * p.inner + row % p.inner;
    let k0 = b * B;

    for (var j = 0u; j < ITEMS; j++) {
        let t = j * WG + lid;
        let k = k0 + t;
        var v = identity();
        if (k < p.n) { v = x[p.x_offset + base + k * p.inner]; }
        tile[t] = v;
    }
    workgroupBarrier();

    // Serial scan of this thread's ITEMS neighbours.
    var local: array<T, ITEMS>;
    var run = identity();
    for (var j = 0u; j < ITEMS; j++) {
        run = op(run, tile[lid * ITEMS + j]);
        local[j] = run;
    }
    sums[lid] = run;
    workgroupBarrier();
    for (var off = 1u; off < WG; off = off << 1u) {
        var v = sums[lid];
        if (lid >= off) { v = op(sums[lid - off], v); }
        workgroupBarrier();
        sums[lid] = v;
        workgroupBarrier();
    }

    if (TOTALS) {
        if (lid == 0u) { out[row * p.blocks + b] = sums[WG - 1u]; }
        return;
    }
    var prefix = identity();
    if (CARRY && b > 0u) { prefix = carry[row * p.blocks + b - 1u]; }
    if (lid > 0u) { prefix = op(prefix, sums[lid - 1u]); }
    workgroupBarrier();
    for (var j = 0u; j < ITEMS; j++) {
        tile[lid * ITEMS + j] = op(prefix, local[j]);
    }
    workgroupBarrier();
    for (var j = 0u; j < ITEMS; j++) {
        let t = j * WG + lid;
        let k = k0 + t;
        if (k < p.n) { out[p.out_offset + base + k * p.inner] = tile[t]; }
    }
}
