// Row reduction: one workgroup per (row, chunk) of a [rows, row_len] view
// whose elements are contiguous along a row (row o starts at
// x_offset + o * row_stride). Each thread walks the chunk with a stride of
// WG, reading whole vec4s where the absolute element index allows it, then
// the workgroup combines its threads' values as a tree in workgroup memory
// (pairwise order: good accuracy for sums).
//
// Prelude constants: OP (0 sum, 1 max, 2 min), WG (threads per workgroup,
// a power of two <= 256).
//
// Work item w (the linear workgroup index) reduces chunk w % chunks of row
// w / chunks and writes out[out_offset + w]; a later pass combines chunks.

struct Params {
    work: u32,        // rows * chunks
    chunks: u32,      // chunks per row
    chunk_len: u32,   // elements per chunk (the last one may be shorter)
    row_len: u32,
    row_stride: u32,
    elem_stride: u32, // unused here: rows are contiguous
    x_offset: u32,
    out_offset: u32,
    divisor: f32,     // the result is divided by it (count for a mean, else 1)
    identity: u32,    // bits of the op's identity (0, -inf or +inf)
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
// The same storage twice: vec4 view for the aligned body of a chunk,
// scalar view for its unaligned ends.
@group(0) @binding(1) var<storage, read> x4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> x1: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

var<workgroup> partial: array<f32, WG>;

fn combine(a: f32, b: f32) -> f32 {
    if (OP == 1u) { return max(a, b); }
    if (OP == 2u) { return min(a, b); }
    return a + b;
}

fn combine4(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    if (OP == 1u) { return max(a, b); }
    if (OP == 2u) { return min(a, b); }
    return a + b;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = wid.x + wid.y * nwg.x;
    if (w >= p.work) { return; } // uniform: the whole workgroup leaves

    let row = w / p.chunks;
    let chunk = w % p.chunks;
    let start = chunk * p.chunk_len;
    let end = min(p.row_len, start + p.chunk_len);
    let s = p.x_offset + row * p.row_stride + start; // first element
    let e = s + (end - start);                       // one past the last

    // [s, head_end) scalars, [v0, body_end) vec4s, [tail_start, e) scalars.
    let v0 = (s + 3u) / 4u;
    let v1 = e / 4u;
    let head_end = min(e, v0 * 4u);
    let body_end = max(v0, v1);
    let tail_start = max(body_end * 4u, head_end);

    let ident = bitcast<f32>(p.identity);
    var acc4 = vec4<f32>(ident);
    for (var i = v0 + lid; i < body_end; i += WG) {
        acc4 = combine4(acc4, x4[i]);
    }
    var acc = combine(combine(acc4.x, acc4.y), combine(acc4.z, acc4.w));
    for (var i = s + lid; i < head_end; i += WG) {
        acc = combine(acc, x1[i]);
    }
    for (var i = tail_start + lid; i < e; i += WG) {
        acc = combine(acc, x1[i]);
    }

    partial[lid] = acc;
    workgroupBarrier();
    for (var half = WG / 2u; half > 0u; half = half >> 1u) {
        if (lid < half) {
            partial[lid] = combine(partial[lid], partial[lid + half]);
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        out[p.out_offset + w] = partial[0] / p.divisor;
    }
}
