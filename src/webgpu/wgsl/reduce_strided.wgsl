// Strided reduction: one thread per (row, chunk) of a [rows, row_len] view
// where element (o, r) is x[x_offset + o * row_stride + r * elem_stride].
// Thread g takes row g % rows and chunk g / rows, so consecutive threads
// take consecutive rows: coalesced when row_stride is 1 (a reduction over
// the outer axes, like a column sum), and used as well for short rows.
// Each thread combines its chunk serially and writes out[out_offset + g],
// so the partials of one pass form a [chunks, rows] matrix for the next.
//
// Prelude constants: OP (0 sum, 1 max, 2 min), WG (threads per workgroup).

struct Params {
    work: u32,        // rows * chunks
    rows: u32,
    chunk_len: u32,   // elements per chunk (the last one may be shorter)
    row_len: u32,
    row_stride: u32,
    elem_stride: u32,
    x_offset: u32,
    out_offset: u32,
    divisor: f32,     // the result is divided by it (count for a mean, else 1)
    identity: u32,    // bits of the op's identity (0, -inf or +inf)
    rows_per_batch: u32, // the rest: reduce_rows' fields, unused here
    batch_stride: u32,
    v_offset: u32,
    v_batch_stride: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

fn is_nan(a: f32) -> bool {
    return (bitcast<u32>(a) & 0x7fffffffu) > 0x7f800000u;
}

// NaN-propagating max/min (NumPy's semantics; see reduce_rows.wgsl).
fn combine(a: f32, b: f32) -> f32 {
    if (OP == 1u) { return select(max(a, b), a + b, is_nan(a) || is_nan(b)); }
    if (OP == 2u) { return select(min(a, b), a + b, is_nan(a) || is_nan(b)); }
    return a + b;
}

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
    var acc0 = bitcast<f32>(p.identity);
    var acc1 = acc0;
    var r = start;
    for (; r + 1u < end; r += 2u) {
        acc0 = combine(acc0, x[at]);
        acc1 = combine(acc1, x[at + p.elem_stride]);
        at += 2u * p.elem_stride;
    }
    if (r < end) {
        acc0 = combine(acc0, x[at]);
    }
    out[p.out_offset + g] = combine(acc0, acc1) / p.divisor;
}
