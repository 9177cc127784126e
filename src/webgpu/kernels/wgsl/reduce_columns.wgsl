// Column reduction: the reduce_strided case where rows are adjacent
// elements (row_stride 1), four rows at a time. Element (o, r) of the
// [rows, row_len] view is x[x_offset + o + r * elem_stride]; the host
// guarantees rows, elem_stride and x_offset are multiples of 4, so rows
// 4q..4q+3 of step r are one aligned vec4. This is the sum of a
// contiguous tensor over its leading axes (a bias gradient): thread g
// takes the four rows 4 * (g % quads) .. + 3 and chunk g / quads, so
// consecutive threads read consecutive vec4s, and each keeps four
// independent vec4 accumulators (four loads in flight) over its chunk.
// Partials form a [chunks, rows] matrix, as reduce_strided's do; the
// combine order depends on the shape alone (deterministic).
//
// The prelude gives T, T4, FLOAT, OP, SHIFT (never set here), map4,
// finish, X1, X4, load1, load4 as for reduce_rows.wgsl, and WG (threads
// per workgroup); the library reduce_terms.wgsl the combine.

struct Params {
    work: u32,        // quads * chunks
    rows: u32,
    chunk_len: u32,   // elements per chunk (the last one may be shorter)
    row_len: u32,
    row_stride: u32,  // 1
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
// The same storage twice: the prelude's load1 names x1; only x4 is read.
@group(0) @binding(1) var<storage, read> x4: array<X4>;
@group(0) @binding(2) var<storage, read> x1: array<X1>;
@group(0) @binding(3) var<storage, read_write> out: array<T>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = (wid.x + wid.y * nwg.x) * WG + lid;
    if (g >= p.work) { return; }

    let quads = p.rows / 4u;
    let quad = g % quads;
    let chunk = g / quads;
    let start = chunk * p.chunk_len;
    let end = min(p.row_len, start + p.chunk_len);
    let step = p.elem_stride / 4u;
    var at = (p.x_offset + quad * 4u) / 4u + start * step;
    let s = T(0);
    let id = T4(bitcast<T>(p.identity));
    var acc0 = id;
    var acc1 = id;
    var acc2 = id;
    var acc3 = id;
    var r = start;
    for (; r + 3u < end; r += 4u) {
        acc0 = combine4(acc0, map4(load4(at), s));
        acc1 = combine4(acc1, map4(load4(at + step), s));
        acc2 = combine4(acc2, map4(load4(at + 2u * step), s));
        acc3 = combine4(acc3, map4(load4(at + 3u * step), s));
        at += 4u * step;
    }
    for (; r < end; r += 1u) {
        acc0 = combine4(acc0, map4(load4(at), s));
        at += step;
    }
    let a = combine4(combine4(acc0, acc1), combine4(acc2, acc3));
    let o = p.out_offset + chunk * p.rows + quad * 4u;
    out[o] = finish(a.x, s);
    out[o + 1u] = finish(a.y, s);
    out[o + 2u] = finish(a.z, s);
    out[o + 3u] = finish(a.w, s);
}
