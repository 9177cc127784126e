// Row reduction, subgroup variant of reduce_rows.wgsl (same parameters,
// bindings and work items; see there). The prelude starts with
// `enable subgroups;`. Each subgroup combines its lanes with one subgroup
// operation; the subgroup results meet in workgroup memory, and every
// subgroup then combines them all (redundantly), which keeps each
// subgroup operation in uniform control flow. Nothing assumes that a
// subgroup is a contiguous range of local_invocation_index.
//
// Prelude constants: OP (0 sum, 1 max, 2 min), WG (threads per workgroup).

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

fn subgroup_combine(v: f32) -> f32 {
    if (OP == 1u) { return subgroupMax(v); }
    if (OP == 2u) { return subgroupMin(v); }
    return subgroupAdd(v);
}

fn combine4(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    if (OP == 1u) { return max(a, b); }
    if (OP == 2u) { return min(a, b); }
    return a + b;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) lane: u32,
        @builtin(subgroup_size) sg_size: u32) {
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

    // Lane 0 of each subgroup leaves its subgroup's value at its own
    // local index; every other slot holds the identity. Fixed positions
    // keep the order of the sum the same from run to run.
    let sg_value = subgroup_combine(acc);
    partial[lid] = select(ident, sg_value, lane == 0u);
    workgroupBarrier();
    var acc2 = ident;
    for (var i = lane; i < WG; i += sg_size) {
        acc2 = combine(acc2, partial[i]);
    }
    let total = subgroup_combine(acc2);
    if (lid == 0u) {
        out[p.out_offset + w] = total / p.divisor;
    }
}
