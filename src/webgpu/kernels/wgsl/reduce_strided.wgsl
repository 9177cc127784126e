// Strided reduction: one thread per (row, chunk) of a [rows, row_len] view
// where element (o, r) is x[x_offset + o * row_stride + r * elem_stride].
// Thread g takes row g % rows and chunk g / rows, so consecutive threads
// take consecutive rows: coalesced when row_stride is 1 (a reduction over
// the outer axes, like a column sum), and used as well for short rows.
// Each thread combines its chunk serially and writes out[out_offset + g],
// so the partials of one pass form a [chunks, rows] matrix for the next.
//
// The prelude gives T, T4, FLOAT, OP, SHIFT, map, map4, finish, X1 and
// load1 as for reduce_rows.wgsl, and WG (threads per workgroup); the
// library reduce_terms.wgsl the combine.

struct Params {
    work: u32,        // rows * chunks
    rows: u32,
    chunk_len: u32,   // elements per chunk (the last one may be shorter)
    row_len: u32,
    row_stride: u32,
    elem_stride: u32,
    x_offset: u32,
    out_offset: u32,
    divisor: f32,     // n of the op's finish
    identity: u32,    // bits of the op's identity
    rows_per_batch: u32, // the rest: reduce_rows' fields, unused here
    batch_stride: u32,
    v_offset: u32,
    v_batch_stride: u32,
    shift_offset: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x1: array<X1>;
@group(0) @binding(2) var<storage, read_write> out: array<T>;
@group(0) @binding(3) var<storage, read> sh: array<T>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = (wid.x + wid.y * nwg.x) * WG + lid;
    if (g >= p.work) { return; }

    let row = g % p.rows;
    let chunk = g / p.rows;
    let start = chunk * p.chunk_len;
    let end = min(p.row_len, start + p.chunk_len);
    var at = p.x_offset + row * p.row_stride + start * p.elem_stride;
    // Two accumulators halve the serial dependency chain (and, for sums,
    // the length of each f32 running total).
    var shv = T(0);
    if (SHIFT) { shv = sh[p.shift_offset + row]; }
    var acc0 = bitcast<T>(p.identity);
    var acc1 = acc0;
    var r = start;
    for (; r + 1u < end; r += 2u) {
        acc0 = combine(acc0, map(load1(at), shv));
        acc1 = combine(acc1, map(load1(at + p.elem_stride), shv));
        at += 2u * p.elem_stride;
    }
    if (r < end) {
        acc0 = combine(acc0, map(load1(at), shv));
    }
    out[p.out_offset + g] = finish(combine(acc0, acc1), shv);
}
