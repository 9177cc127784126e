// out = bias + the columns of col summed back into the plane they were
// taken from (the adjoint of im2col.wgsl; transposed convolution, and
// with a 1x1 window the store of a convolution's product into its
// output). out is [n, C, H, W] with any strides (no two elements at one
// place); col is [C*KH*KW, n*OH*OW] contiguous. One thread per element of
// out gathers the taps that land on it:
//   out[i, c, y, x] = bias[c] + sum col[(c*KH + ky)*KW + kx, (i*OH + oy)*OW + ox]
// over y = oy*stride_h - pad_top + ky*dil_h (x alike), 0 <= oy < OH.
// Deterministic: no atomics, a fixed order of the sum.
// Prelude constants: WG, HAS_BIAS.

struct Params {
    total: u32,
    c: u32,
    h: u32,
    w: u32,
    kh: u32,
    kw: u32,
    oh: u32,
    ow: u32,
    stride_h: i32,
    stride_w: i32,
    pad_top: i32,
    pad_left: i32,
    dil_h: i32,
    dil_w: i32,
    ncols: u32,
    out_offset: u32,
    os_n: u32,
    os_c: u32,
    os_h: u32,
    os_w: u32,
    bias_offset: u32,
    bias_stride: u32,
    pad0: u32,
    pad1: u32,
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
    let xx = t % p.w;
    let y = (t / p.w) % p.h;
    let c = (t / (p.w * p.h)) % p.c;
    let i = t / (p.w * p.h * p.c);
    var sum = 0.0;
    if (HAS_BIAS) {
        sum = bias[p.bias_offset + c * p.bias_stride];
    }
    let image = i * p.oh * p.ow;
    for (var ky = 0u; ky < p.kh; ky++) {
        let ny = i32(y) + p.pad_top - i32(ky) * p.dil_h;
        if (ny < 0) {
            break; // later taps sit higher still
        }
        if (ny % p.stride_h != 0 || ny / p.stride_h >= i32(p.oh)) {
            continue;
        }
        let oy = u32(ny / p.stride_h);
        for (var kx = 0u; kx < p.kw; kx++) {
            let nx = i32(xx) + p.pad_left - i32(kx) * p.dil_w;
            if (nx < 0) {
                break;
            }
            if (nx % p.stride_w != 0 || nx / p.stride_w >= i32(p.ow)) {
                continue;
            }
            let ox = u32(nx / p.stride_w);
            let row = (c * p.kh + ky) * p.kw + kx;
            sum += col[row * p.ncols + image + oy * p.ow + ox];
        }
    }
    out[p.out_offset + i * p.os_n + c * p.os_c + y * p.os_h + xx * p.os_w] = sum;
}
