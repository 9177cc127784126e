// Elements of a and b behind element e of a contiguous out: e decoded over
// p.shape (p.ndim merged axes, at most 8) and walked with p.a_strides and
// p.b_strides from p.a_offset and p.b_offset. u32 arithmetic: negative
// strides wrap, and so do the sums, to the right element. A library of the
// strided walks (binary.wgsl, ew_f16_strided.wgsl), whose Params have these
// fields.

fn strided_sources(e: u32) -> vec2<u32> {
    var rem = e;
    var ia = p.a_offset;
    var ib = p.b_offset;
    for (var d = p.ndim; d > 0u; d = d - 1u) {
        let axis = d - 1u;
        let extent = p.shape[axis / 4u][axis % 4u];
        let c = rem % extent;
        ia = ia + c * p.a_strides[axis / 4u][axis % 4u];
        ib = ib + c * p.b_strides[axis / 4u][axis % 4u];
        rem = rem / extent;
    }
    return vec2<u32>(ia, ib);
}
