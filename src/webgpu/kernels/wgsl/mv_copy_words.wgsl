// dst = src (dst's shape; src any strides, broadcast axes with stride 0),
// as bits, with plain stores where no two threads can share a word:
//  - 4-byte elements: one thread per element, dst any view without
//    repeated elements;
//  - ELEM2 (2-byte elements) into a contiguous dst run of n elements from
//    dst_offset: thread t owns the whole word t of the run and writes both
//    halves, keeping a half that lies outside the run.
// A 2-byte dst that is not one run goes through mv_copy_into's atomics.
// Prelude constants: ELEM2 (bool), WG. Library: mv_copy (Params,
// dst_base).

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<u32>;
// wt_copy_into_at's start, read here (dyn_on); else src bound again.
@group(0) @binding(3) var<storage, read> start: array<i32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

// The bits of element i (row-major position in shape) of src.
fn src_elem(i: u32) -> u32 {
    var rem = i;
    var e = p.src_offset;
    for (var d = p.ndim; d > 0u; d = d - 1u) {
        let a = d - 1u;
        let extent = p.shape[a / 4u][a % 4u];
        e = e + (rem % extent) * p.src_strides[a / 4u][a % 4u];
        rem = rem / extent;
    }
    if (ELEM2) {
        return (src[e / 2u] >> ((e & 1u) * 16u)) & 0xffffu;
    }
    return src[e];
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = (wid.x + wid.y * nwg.x) * WG + lid;
    let base = dst_base();
    if (ELEM2) {
        let w = base / 2u + t;
        let lo = 2u * w;      // element in the word's low half
        let end = base + p.n;
        if (lo >= end) {
            return;
        }
        let lo_ours = lo >= base;
        let hi_ours = lo + 1u < end;
        var word: u32;
        if (!lo_ours || !hi_ours) {
            word = dst[w];
        }
        if (lo_ours) {
            word = (word & 0xffff0000u) | src_elem(lo - base);
        }
        if (hi_ours) {
            word = (word & 0xffffu) | (src_elem(lo + 1u - base) << 16u);
        }
        dst[w] = word;
        return;
    }
    if (t >= p.n) {
        return;
    }
    var rem = t;
    var e = base;
    for (var d = p.ndim; d > 0u; d = d - 1u) {
        let a = d - 1u;
        let extent = p.shape[a / 4u][a % 4u];
        e = e + (rem % extent) * p.dst_strides[a / 4u][a % 4u];
        rem = rem / extent;
    }
    dst[e] = src_elem(t);
}
