// Row reduction: one workgroup per (row, chunk) of a [rows, row_len] view
// whose elements are contiguous along a row. Row o starts at
//   x_offset + (o / rows_per_batch) * batch_stride + (o % rows_per_batch) * row_stride
// (a plain reduction has one batch). Each thread walks the chunk with a
// stride of WG, reading whole vec4s where the absolute element index allows
// it, UNROLL independent loads per step so that several are in flight;
// then the workgroup combines its threads' values (workgroup_combine).
//
// With DOT, every vec4 is first multiplied by the matching vec4 of v (row
// element k pairs with v[v_offset + batch * v_batch_stride + k]): a
// matrix-vector product as a row reduction. The host then guarantees
// whole, aligned vec4s (row starts, row_len, v's offsets multiples of 4),
// so the scalar head and tail below are empty.
//
// The prelude gives the element types T and T4 (f32 or i32, and vec4s of
// them), the storage types X1 and X4 with fn load1(j) -> T (element j)
// and fn load4(i) -> T4 (elements 4i..4i+3) reading x1 and x4 (T and T4
// themselves, or for f16 input u32 and vec2<u32> words of halves widened
// to f32), FLOAT, OP (see reduce_terms.wgsl), the op's map(v, s), map4(v, s)
// and finish(a, s) (identities where this pass is not the first or the
// last; s is the output's shift, sh[shift_offset + row], when SHIFT),
// WG (threads per workgroup, a power of two), UNROLL (vec4 loads per
// thread and step), DOT (bool); the libraries reduce_terms.wgsl and a
// combine library (reduce_combine_subgroup.wgsl, after
// `enable subgroups;`, or reduce_combine_shared.wgsl) defining
// `struct LaneIds` and
//   fn workgroup_combine(total: T, lid: u32, ids: LaneIds) -> T
// which combines one value per thread (called by every thread, from
// uniform control flow) with combine() below, in an order fixed by lid
// alone, and returns the workgroup's result at least to thread 0.
//
// Work item w (the linear workgroup index) reduces chunk w % chunks of row
// w / chunks and writes out[out_offset + w]; a later pass combines chunks.

struct Params {
    work: u32,           // rows * chunks
    chunks: u32,         // chunks per row
    chunk_len: u32,      // elements per chunk (the last one may be shorter)
    row_len: u32,
    row_stride: u32,
    elem_stride: u32,    // unused here: rows are contiguous
    x_offset: u32,
    out_offset: u32,
    divisor: f32,        // n of the op's finish (the count a mean divides by)
    identity: u32,       // bits of the op's identity
    rows_per_batch: u32,
    batch_stride: u32,
    v_offset: u32,       // DOT only
    v_batch_stride: u32, // DOT only
    shift_offset: u32,   // SHIFT only
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
// The same storage twice: vec4 view for the aligned body of a chunk,
// scalar view for its unaligned ends.
@group(0) @binding(1) var<storage, read> x4: array<X4>;
@group(0) @binding(2) var<storage, read> x1: array<X1>;
@group(0) @binding(3) var<storage, read_write> out: array<T>;
// DOT's vector (a plain reduction binds x here too; it is never read).
@group(0) @binding(4) var<storage, read> v4: array<T4>;
// The shifts (without SHIFT x is bound here; it is never read).
@group(0) @binding(5) var<storage, read> sh: array<T>;

// The vec4 at index i of x, times v's matching vec4 for DOT (v_shift maps
// x's vec4 index to v's; wrapping u32 arithmetic is intended).
fn term(i: u32, v_shift: u32, shv: T) -> T4 {
    if (DOT) { return load4(i) * v4[i + v_shift]; }
    return map4(load4(i), shv);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32,
        ids: LaneIds) {
    let w = wid.x + wid.y * nwg.x;
    if (w >= p.work) { return; } // uniform: the whole workgroup leaves

    let row = w / p.chunks;
    let chunk = w % p.chunks;
    let batch = row / p.rows_per_batch;
    let row_start = p.x_offset + batch * p.batch_stride + (row % p.rows_per_batch) * p.row_stride;
    let start = chunk * p.chunk_len;
    let end = min(p.row_len, start + p.chunk_len);
    let s = row_start + start; // first element
    let e = row_start + end;   // one past the last
    let v_shift = (p.v_offset + batch * p.v_batch_stride) / 4u - row_start / 4u;

    // [s, head_end) scalars, [v0, body_end) vec4s, [tail_start, e) scalars.
    let v0 = (s + 3u) / 4u;
    let v1 = e / 4u;
    let head_end = min(e, v0 * 4u);
    let body_end = max(v0, v1);
    let tail_start = max(body_end * 4u, head_end);

    let ident = bitcast<T>(p.identity);
    var shv = T(0);
    if (SHIFT) { shv = sh[p.shift_offset + row]; }
    var acc: array<T4, UNROLL>;
    for (var u = 0u; u < UNROLL; u++) { acc[u] = T4(ident); }
    var i = v0 + lid;
    for (; i + (UNROLL - 1u) * WG < body_end; i += UNROLL * WG) {
        for (var u = 0u; u < UNROLL; u++) {
            acc[u] = combine4(acc[u], term(i + u * WG, v_shift, shv));
        }
    }
    for (; i < body_end; i += WG) {
        acc[0] = combine4(acc[0], term(i, v_shift, shv));
    }
    for (var u = 1u; u < UNROLL; u++) { acc[0] = combine4(acc[0], acc[u]); }
    var total = combine(combine(acc[0].x, acc[0].y), combine(acc[0].z, acc[0].w));
    for (var j = s + lid; j < head_end; j += WG) {
        total = combine(total, map(load1(j), shv));
    }
    for (var j = tail_start + lid; j < e; j += WG) {
        total = combine(total, map(load1(j), shv));
    }

    let result = workgroup_combine(total, lid, ids);
    if (lid == 0u) {
        out[p.out_offset + w] = finish(result, shv);
    }
}
