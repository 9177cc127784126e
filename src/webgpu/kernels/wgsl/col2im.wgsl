// out = bias + the columns of col summed back into the plane they were
// taken from (the adjoint of im2col.wgsl: transposed convolution, and
// with a 1x1 window the store of a convolution's product into its
// output). out is [n, C, H, W] (H, W = win.in_h, in_w) with any strides
// (p.out; no two elements at one place); col is [C*KH*KW, n*OH*OW]
// contiguous. One thread per element of out gathers the taps that land
// on it:
//   out[i, c, y, x] = bias[c] + sum col[(c*KH + ky)*KW + kx, (i*OH + oy)*OW + ox]
// over y = oy*stride_h - pad_top + ky*dil_h (x alike), 0 <= oy < OH.
// Deterministic: no atomics, a fixed order of the sum.
// Prelude constants: WG, HAS_BIAS; library: window.

struct Params {
    win: Window,
    out: View4,
    total: u32,
    c: u32,
    bias_offset: u32,
    bias_stride: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> col: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = (wid.x + wid.y * nwg.x) * WG + lid;
    if (t >= p.total) {
        return;
    }
    let w = p.win;
    let h = u32(w.in_h);
    let wd = u32(w.in_w);
    let xx = t % wd;
    let y = (t / wd) % h;
    let c = (t / (wd * h)) % p.c;
    let i = t / (wd * h * p.c);
    var sum = 0.0;
    if (HAS_BIAS) {
        sum = bias[p.bias_offset + c * p.bias_stride];
    }
    let oh = u32(w.out_h);
    let ow = u32(w.out_w);
    let ncols = (p.total / (wd * h * p.c)) * oh * ow; // images * OH * OW
    let image = i * oh * ow;
    for (var ky = 0; ky < w.kernel_h; ky++) {
        let ny = i32(y) + w.pad_top - ky * w.dil_h;
        if (ny < 0) {
            break; // later taps sit higher still
        }
        if (ny % w.stride_h != 0 || ny / w.stride_h >= w.out_h) {
            continue;
        }
        let oy = u32(ny / w.stride_h);
        for (var kx = 0; kx < w.kernel_w; kx++) {
            let nx = i32(xx) + w.pad_left - kx * w.dil_w;
            if (nx < 0) {
                break;
            }
            if (nx % w.stride_w != 0 || nx / w.stride_w >= w.out_w) {
                continue;
            }
            let row = (c * u32(w.kernel_h) + u32(ky)) * u32(w.kernel_w) + u32(kx);
            sum += col[row * ncols + image + oy * ow + u32(nx / w.stride_w)];
        }
    }
    out[view4_at(p.out, i, c, y, xx)] = sum;
}
