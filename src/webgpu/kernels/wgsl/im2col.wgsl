// col = the windows of x laid out as columns (convolution as a matrix
// product). x is [n, C, H, W] with any strides (p.x); col is
// [C*KH*KW, ncols] contiguous with ncols = n * rows * OW: row
// (c*KH + ky)*KW + kx, column (i*rows + r)*OW + ox holds x[i, c, iy, ix]
// with iy = (row0 + r)*stride_h - pad_top + ky*dil_h (ix alike), 0 where
// (iy, ix) falls in the padding. One thread per element of col;
// consecutive threads write consecutive columns.
// Prelude constants: WG; library: window.

struct Params {
    win: Window,
    x: View4,
    total: u32,
    ncols: u32,
    rows: u32,
    row0: u32,
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
    let w = p.win;
    let kw = u32(w.kernel_w);
    let kk = u32(w.kernel_h) * kw;
    let r = t / p.ncols;
    let j = t % p.ncols;
    let ow = u32(w.out_w);
    let per_image = p.rows * ow;
    let rem = j % per_image;
    let iy = i32(p.row0 + rem / ow) * w.stride_h - w.pad_top + i32((r % kk) / kw) * w.dil_h;
    let ix = i32(rem % ow) * w.stride_w - w.pad_left + i32(r % kw) * w.dil_w;
    var v = 0.0;
    if (iy >= 0 && iy < w.in_h && ix >= 0 && ix < w.in_w) {
        v = x[view4_at(p.x, j / per_image, r / kk, u32(iy), u32(ix))];
    }
    col[t] = v;
}
