// The sliding window of the convolution and pooling shaders, a library
// placed before their bodies (kernels/conv.c fills it from wt_window2d):
// output (oy, ox) reads input rows oy*stride_h - pad_top + ky*dil_h for
// ky < kernel_h, columns alike. Also the layout of a 4-D strided view.
// Both are members of the shaders' uniform Params (16-byte multiples).

struct Window {
    in_h: i32,
    in_w: i32,
    out_h: i32,
    out_w: i32,
    kernel_h: i32,
    kernel_w: i32,
    stride_h: i32,
    stride_w: i32,
    pad_top: i32,
    pad_left: i32,
    pad_bottom: i32,
    pad_right: i32,
    dil_h: i32,
    dil_w: i32,
    pad0: i32,
    pad1: i32,
}

// Element offset and strides (n, c, h, w) of a [N, C, H, W] view.
struct View4 {
    offset: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
    strides: vec4<u32>,
}

fn view4_at(v: View4, n: u32, c: u32, y: u32, x: u32) -> u32 {
    return v.offset + n * v.strides.x + c * v.strides.y + y * v.strides.z + x * v.strides.w;
}
