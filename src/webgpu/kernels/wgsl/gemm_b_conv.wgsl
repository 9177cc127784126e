// gemm.wgsl's b operand as a 2-D convolution's input x [N, C, H, W] (any
// strides) read as its im2col matrix, which is never stored: row
// k = (c, ky, kx) of the channels of one group, column n = (oy, ox) of one
// image's output plane. The product's batch entry is image * groups +
// group, so the result lands in NCHW order; a (the weights) is
// [groups, O / groups, k], its batch entry batch % groups.
// TRANSPOSED: the adjoint (conv_transpose2d): column n is a pixel of the
// result, whose tap (ky, kx) reads x where y + pad_top - ky dh is a
// multiple of the stride (c_ow: the result's width; c_in_h, c_in_w: x's
// plane).
// Needs B_N_FAST (four consecutive output pixels a load) and POINTWISE:
// a 1x1 window with unit stride and no padding over rows stored back to
// back with unit column stride, where column n is element n of the plane
// (then B_VEC allows 16-byte loads).

fn b_batch_base(batch: u32) -> u32 {
    return p.b_offset + (batch / p.c_groups) * p.c_xs_n + (batch % p.c_groups) * p.c_cg * p.c_xs_c;
}

fn fetch_b(base: u32, gk: u32, gn: u32, kend: u32) -> vec4<f32> {
    var v = vec4<f32>(0.0);
    if (gk >= kend) { return v; }
    if (POINTWISE) {
        let row = base + gk * p.c_xs_c;
        if (B_VEC) {
            if (gn < p.n) { v = b4(row + gn); }
        } else {
            for (var e = 0u; e < 4u; e++) {
                if (gn + e < p.n) { v[e] = b1(row + gn + e); }
            }
        }
        return v;
    }
    let c = gk / p.c_kk;
    let r = gk - c * p.c_kk;
    let ky = r / p.c_kw;
    let kx = r - ky * p.c_kw;
    let dy = i32(ky * p.c_dh) - i32(p.c_pt);
    let dx = i32(kx * p.c_dw) - i32(p.c_pl);
    let plane = base + c * p.c_xs_c;
    if (TRANSPOSED) {
        let ty = i32(p.c_pt) - i32(ky * p.c_dh);
        let tx = i32(p.c_pl) - i32(kx * p.c_dw);
        for (var e = 0u; e < 4u; e++) {
            let n = gn + e;
            if (n < p.n) {
                let y = n / p.c_ow;
                let sy = i32(y) + ty;
                let sx = i32(n - y * p.c_ow) + tx;
                if (sy >= 0 && sx >= 0 && u32(sy) % p.c_sh == 0u && u32(sx) % p.c_sw == 0u) {
                    let iy = u32(sy) / p.c_sh;
                    let ix = u32(sx) / p.c_sw;
                    if (iy < p.c_in_h && ix < p.c_in_w) { v[e] = b1(plane + iy * p.c_xs_h + ix * p.c_xs_w); }
                }
            }
        }
        return v;
    }
    for (var e = 0u; e < 4u; e++) {
        let n = gn + e;
        if (n < p.n) {
            let oy = n / p.c_ow;
            let iy = i32(oy * p.c_sh) + dy;
            let ix = i32((n - oy * p.c_ow) * p.c_sw) + dx;
            if (iy >= 0 && iy < i32(p.c_in_h) && ix >= 0 && ix < i32(p.c_in_w)) {
                v[e] = b1(plane + u32(iy) * p.c_xs_h + u32(ix) * p.c_xs_w);
            }
        }
    }
    return v;
}
