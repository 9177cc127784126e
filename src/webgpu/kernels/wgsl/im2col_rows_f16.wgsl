// The f16 operands of a convolution on the matrix units (kernels/gemm.c,
// gemm_conv_matrix), four halves a thread, zero past k:
//   MODE 0: col [images, P, KP], the windows of x as rows: row (i, q) for
//     output pixel q = oy * OW + ox of image image0 + i, column
//     k = (c * KH + ky) * KW + kx < K holds x[n, c, iy, ix] with
//     iy = oy * stride_h - pad_top + ky * dil_h (ix alike), 0 in the
//     padding. The product reads it as b stored [n, k].
//   MODE 1: w [O, K] (contiguous from x.offset) copied to [O, KP]: rows
//     padded to KP, a multiple of 8 (16-byte rows for the matrix loads).
// Consecutive threads write consecutive 8-byte words of a row.
// Prelude: enable f16, WG, MODE; library: window.

struct Params {
    win: Window,
    x: View4,
    total: u32,  // words of four halves written
    kp4: u32,    // KP / 4
    k: u32,      // K
    pixels: u32, // P = OH * OW (MODE 0)
    image0: u32, // first image (MODE 0)
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f16>;
@group(0) @binding(2) var<storage, read_write> col: array<vec4<f16>>;

fn tap(row: u32, k: u32) -> f16 {
    if (k >= p.k) { return f16(0.0); }
    if (MODE == 1u) { return x[p.x.offset + row * p.k + k]; }
    let w = p.win;
    let kw = u32(w.kernel_w);
    let kk = u32(w.kernel_h) * kw;
    let ow = u32(w.out_w);
    let q = row % p.pixels;
    let iy = i32(q / ow) * w.stride_h - w.pad_top + i32((k % kk) / kw) * w.dil_h;
    let ix = i32(q % ow) * w.stride_w - w.pad_left + i32(k % kw) * w.dil_w;
    if (iy < 0 || iy >= w.in_h || ix < 0 || ix >= w.in_w) { return f16(0.0); }
    return x[view4_at(p.x, p.image0 + row / p.pixels, k / kk, u32(iy), u32(ix))];
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = (wid.x + wid.y * nwg.x) * WG + lid;
    if (t >= p.total) {
        return;
    }
    let row = t / p.kp4;
    let k = (t % p.kp4) * 4u;
    col[t] = vec4<f16>(tap(row, k), tap(row, k + 1u), tap(row, k + 2u), tap(row, k + 3u));
}
