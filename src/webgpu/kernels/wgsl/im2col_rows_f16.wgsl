// The f16 operands of a convolution on the matrix units (kernels/gemm.c,
// gemm_conv_matrix), in words of eight halves (16 bytes), zero past the
// data:
//   MODE 0: col [images, KP, PP], the windows of x as columns: row
//     k = (c * KH + ky) * KW + kx < K, column q = oy * OW + ox < P of image
//     image0 + i holds x[n, c, iy, ix] with iy = oy * stride_h - pad_top +
//     ky * dil_h (ix alike), 0 in the padding. A word is eight consecutive
//     pixels of one row, so that consecutive threads read (stride 1)
//     neighbouring pixels of x and write consecutive words.
//   MODE 1: w [O, K] (contiguous from x.offset) copied to [O, KP].
// KP and PP are K and P rounded up to 8 (whole words a row). The divisors
// are prelude constants (a multiply and a shift each, not a division).
// Prelude: enable f16, WG, MODE, KW (kernel_w), KK (kernel_h * kernel_w),
// OW (out_w), WORDS_PER_ROW (PP / 8 or KP / 8), KP; library: window.

struct Params {
    win: Window,
    x: View4,
    total: u32,  // words written
    k: u32,      // K
    pixels: u32, // P = OH * OW (MODE 0)
    image0: u32, // first image (MODE 0)
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f16>;
@group(0) @binding(2) var<storage, read_write> col: array<vec4<u32>>;

fn put(t: u32, v: array<f16, 8>) {
    let lo = vec4<f16>(v[0], v[1], v[2], v[3]);
    let hi = vec4<f16>(v[4], v[5], v[6], v[7]);
    col[t] = vec4<u32>(bitcast<vec2<u32>>(lo), bitcast<vec2<u32>>(hi));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = (wid.x + wid.y * nwg.x) * WG + lid;
    if (t >= p.total) {
        return;
    }
    var v: array<f16, 8>;
    let row = t / WORDS_PER_ROW;
    let first = (t % WORDS_PER_ROW) * 8u;
    if (MODE == 1u) {
        for (var j = 0u; j < 8u; j++) {
            if (first + j < p.k) { v[j] = x[p.x.offset + row * p.k + first + j]; }
        }
        put(t, v);
        return;
    }
    let k = row % KP;
    let image = p.image0 + row / KP;
    let w = p.win;
    if (k < p.k) {
        let c = k / KK;
        let ky = i32((k % KK) / KW);
        let kx = i32(k % KW);
        var oy = first / OW;
        var ox = first % OW;
        for (var j = 0u; j < 8u; j++) {
            if (first + j < p.pixels) {
                let iy = i32(oy) * w.stride_h - w.pad_top + ky * w.dil_h;
                let ix = i32(ox) * w.stride_w - w.pad_left + kx * w.dil_w;
                if (iy >= 0 && iy < w.in_h && ix >= 0 && ix < w.in_w) {
                    v[j] = x[view4_at(p.x, image, c, u32(iy), u32(ix))];
                }
            }
            ox += 1u;
            if (ox == OW) {
                ox = 0u;
                oy += 1u;
            }
        }
    }
    put(t, v);
}
