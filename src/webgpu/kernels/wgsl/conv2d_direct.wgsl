// Direct 2-D convolution, one thread per output, for few input channels
// per group (depthwise above all), where im2col + matmul would be a
// matrix product with a tiny inner dimension:
//   out[n, o, y, x] = bias[o] + sum over c < CG, ky, kx of
//     x[n, g*CG + c, y*stride_h - pad_top + ky*dil_h, x*stride_w - pad_left + kx*dil_w]
//     * w[o, c, ky, kx],   g = o / OG,
// zero outside x. x any strides (p.x); w [O, CG, KH, KW] and bias
// contiguous from their offsets; out contiguous. Consecutive threads take
// consecutive output columns: their loads of x are neighbours, and the
// threads of a row read the same weights.
// Prelude constants: WG, HAS_BIAS; library: window.

struct Params {
    win: Window,
    x: View4,
    total: u32,
    o: u32,
    cg: u32,
    og: u32,
    w_offset: u32,
    bias_offset: u32,
    out_offset: u32,
    pad0: u32,
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
    let w = p.win;
    let ow = u32(w.out_w);
    let oh = u32(w.out_h);
    let o = (t / (ow * oh)) % p.o;
    let n = t / (ow * oh * p.o);
    let g = o / p.og;
    var sum = 0.0;
    if (HAS_BIAS) {
        sum = bias[p.bias_offset + o];
    }
    let y0 = i32((t / ow) % oh) * w.stride_h - w.pad_top;
    let x0 = i32(t % ow) * w.stride_w - w.pad_left;
    let kk = u32(w.kernel_h * w.kernel_w);
    for (var c = 0u; c < p.cg; c++) {
        let taps = p.w_offset + (o * p.cg + c) * kk;
        for (var ky = 0; ky < w.kernel_h; ky++) {
            let iy = y0 + ky * w.dil_h;
            if (iy < 0 || iy >= w.in_h) {
                continue;
            }
            for (var kx = 0; kx < w.kernel_w; kx++) {
                let ix = x0 + kx * w.dil_w;
                if (ix >= 0 && ix < w.in_w) {
                    let v = x[view4_at(p.x, n, g * p.cg + c, u32(iy), u32(ix))];
                    sum = fma(v, wt[taps + u32(ky * w.kernel_w + kx)], sum);
                }
            }
        }
    }
    out[p.out_offset + t] = sum;
}
