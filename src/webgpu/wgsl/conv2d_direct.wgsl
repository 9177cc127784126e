// Direct 2-D convolution, one thread per output, for few input channels
// per group (depthwise above all), where im2col + matmul would be a
// matrix product with a tiny inner dimension:
//   out[n, o, y, x] = bias[o] + sum over c < CG, ky, kx of
//     x[n, g*CG + c, y*stride_h - pad_top + ky*dil_h, x*stride_w - pad_left + kx*dil_w]
//     * w[o, c, ky, kx],   g = o / OG,
// zero outside x. x any strides; w [O, CG, KH, KW] and bias contiguous
// from their offsets; out contiguous. Consecutive threads take
// consecutive output columns: their loads of x are neighbours, and every
// thread of a row reads the same weights.
// Prelude constants: WG, HAS_BIAS.

struct Params {
    total: u32,
    o: u32,
    oh: u32,
    ow: u32,
    cg: u32,
    og: u32,
    kh: u32,
    kw: u32,
    h: i32,
    w: i32,
    stride_h: i32,
    stride_w: i32,
    pad_top: i32,
    pad_left: i32,
    dil_h: i32,
    dil_w: i32,
    x_offset: u32,
    xs_n: u32,
    xs_c: u32,
    xs_h: u32,
    xs_w: u32,
    w_offset: u32,
    bias_offset: u32,
    out_offset: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> wt: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = (wid.x + wid.y * nwg.x) * WG + lid;
    if (t >= p.total) {
        return;
    }
    let ox = i32(t % p.ow);
    let oy = i32((t / p.ow) % p.oh);
    let o = (t / (p.ow * p.oh)) % p.o;
    let n = t / (p.ow * p.oh * p.o);
    let g = o / p.og;
    var sum = 0.0;
    if (HAS_BIAS) {
        sum = bias[p.bias_offset + o];
    }
    let y0 = oy * p.stride_h - p.pad_top;
    let x0 = ox * p.stride_w - p.pad_left;
    for (var c = 0u; c < p.cg; c++) {
        let plane = p.x_offset + n * p.xs_n + (g * p.cg + c) * p.xs_c;
        let taps = p.w_offset + (o * p.cg + c) * p.kh * p.kw;
        for (var ky = 0u; ky < p.kh; ky++) {
            let iy = y0 + i32(ky) * p.dil_h;
            if (iy < 0 || iy >= p.h) {
                continue;
            }
            let row = plane + u32(iy) * p.xs_h;
            for (var kx = 0u; kx < p.kw; kx++) {
                let ix = x0 + i32(kx) * p.dil_w;
                if (ix >= 0 && ix < p.w) {
                    sum = fma(x[row + u32(ix) * p.xs_w], wt[taps + ky * p.kw + kx], sum);
                }
            }
        }
    }
    out[p.out_offset + t] = sum;
}
