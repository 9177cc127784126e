// col = the windows of x laid out as columns (convolution as a matrix
// product). x is [n, C, H, W] with any strides; col is [C*KH*KW, ncols]
// contiguous with ncols = n * rows * OW: row (c*KH + ky)*KW + kx, column
// (i*rows + r)*OW + ox holds x[i, c, iy, ix] with
//   iy = (row0 + r)*stride_h - pad_top + ky*dil_h,
//   ix = ox*stride_w - pad_left + kx*dil_w,
// and 0 where (iy, ix) falls in the padding. One thread per element of
// col; consecutive threads write consecutive columns.
// Prelude constants: WG (threads per workgroup).

struct Params {
    total: u32,
    ncols: u32,
    ow: u32,
    rows: u32,
    kh: u32,
    kw: u32,
    row0: u32,
    x_offset: u32,
    h: i32,
    w: i32,
    stride_h: i32,
    stride_w: i32,
    pad_top: i32,
    pad_left: i32,
    dil_h: i32,
    dil_w: i32,
    xs_n: u32,
    xs_c: u32,
    xs_h: u32,
    xs_w: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> col: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = (wid.x + wid.y * nwg.x) * WG + lid;
    if (t >= p.total) {
        return;
    }
    let r = t / p.ncols;
    let j = t % p.ncols;
    let kk = p.kh * p.kw;
    let c = r / kk;
    let ky = i32((r / p.kw) % p.kh);
    let kx = i32(r % p.kw);
    let per_image = p.rows * p.ow;
    let i = j / per_image;
    let rem = j % per_image;
    let oy = i32(p.row0 + rem / p.ow);
    let ox = i32(rem % p.ow);
    let iy = oy * p.stride_h - p.pad_top + ky * p.dil_h;
    let ix = ox * p.stride_w - p.pad_left + kx * p.dil_w;
    var v = 0.0;
    if (iy >= 0 && iy < p.h && ix >= 0 && ix < p.w) {
        v = x[p.x_offset + i * p.xs_n + c * p.xs_c + u32(iy) * p.xs_h + u32(ix) * p.xs_w];
    }
    col[t] = v;
}
