// The copies' shared part, a library placed before the bodies of
// mv_copy_words.wgsl and mv_copy_into.wgsl (kernels/movement.c): their
// Params, and where dst begins. dst has `shape` (ndim axes, at most 8);
// src and dst walk it with their own strides, src's broadcast axes with
// stride 0. Both bodies bind wt_copy_into_at's device-side start as
// `start: array<i32>` (the source again when dyn_on is 0).

struct Params {
    n: u32,
    ndim: u32,
    src_offset: u32,
    dst_offset: u32,
    shape: array<vec4<u32>, 2>,
    src_strides: array<vec4<u32>, 2>,
    dst_strides: array<vec4<u32>, 2>,
    dyn_stride: u32,
    dyn_limit: u32,
    dyn_at: u32,
    dyn_on: u32,
}

// Where dst begins: dst_offset, moved by the device-side start.
fn dst_base() -> u32 {
    if (p.dyn_on == 0u) {
        return p.dst_offset;
    }
    return p.dst_offset + u32(clamp(start[p.dyn_at], 0, i32(p.dyn_limit))) * p.dyn_stride;
}
