// 2-D pooling of x [N, C, H, W] (any strides) into out [N, C, OH, OW]
// (contiguous), one thread per output. The window rules are those of
// wt_pool2d_desc (src/core/internal.h), as the CPU's cpu/pooling.c:
//   max: the dilated taps inside the plane; NaN wins (the last NaN's
//        position), else the first largest; -inf and the first tap inside
//        when nothing beats -inf;
//   avg: the sum over the window clipped to the plane, divided by
//        `divisor` (> 0), else by the window clipped to the padded plane
//        (COUNT_PAD) or to the plane;
//   adaptive: window rows [floor(oy*H/OH), ceil((oy+1)*H/OH)).
// Prelude constants: WG, OP (0 max, 1 avg, 2 adaptive max, 3 adaptive
// avg), COUNT_PAD, and store_index(o, v), which writes the position of a
// maximum to the indices binding (3) when there is one; library: window.

struct Params {
    win: Window,
    x: View4,
    total: u32,
    c: u32,
    divisor: u32,
    neg_inf: u32,
    out_offset: u32,
    idx_offset: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

const ADAPTIVE: bool = OP >= 2u;
const IS_MAX: bool = OP == 0u || OP == 2u;

fn is_nan(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

// [lo, hi) of the inputs along one axis, the first tap (start, may lie in
// the padding) and the extent of the window clipped to the padded plane.
struct Span {
    lo: i32,
    hi: i32,
    start: i32,
    padded: i32,
}

fn span(o: u32, n: u32, outs: u32, k: i32, s: i32, before: i32, after: i32, d: i32) -> Span {
    var r: Span;
    if (ADAPTIVE) {
        r.lo = i32(o * n / outs);
        r.hi = i32(((o + 1u) * n + outs - 1u) / outs);
        r.start = r.lo;
        r.padded = r.hi - r.lo;
        return r;
    }
    r.start = i32(o) * s - before;
    var end = r.start + (k - 1) * d + 1;
    if (!IS_MAX) {
        end = min(r.start + k, i32(n) + after);
    }
    r.padded = end - r.start;
    r.lo = max(r.start, 0);
    r.hi = min(end, i32(n));
    return r;
}

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
    let ox = t % ow;
    let oy = (t / ow) % oh;
    let plane = t / (ow * oh);
    let base = view4_at(p.x, plane / p.c, plane % p.c, 0u, 0u);
    let sy = span(oy, u32(w.in_h), oh, w.kernel_h, w.stride_h, w.pad_top, w.pad_bottom, w.dil_h);
    let sx = span(ox, u32(w.in_w), ow, w.kernel_w, w.stride_w, w.pad_left, w.pad_right, w.dil_w);
    if (!IS_MAX) {
        var sum = 0.0;
        for (var y = sy.lo; y < sy.hi; y++) {
            for (var xx = sx.lo; xx < sx.hi; xx++) {
                sum += x[base + u32(y) * p.x.strides.z + u32(xx) * p.x.strides.w];
            }
        }
        var div = f32((sy.hi - sy.lo) * (sx.hi - sx.lo));
        if (p.divisor > 0u) {
            div = f32(p.divisor);
        } else if (COUNT_PAD && !ADAPTIVE) {
            div = f32(sy.padded * sx.padded);
        }
        out[p.out_offset + t] = sum / div;
        return;
    }
    var dy = 1;
    var dx = 1;
    if (!ADAPTIVE) {
        dy = w.dil_h;
        dx = w.dil_w;
    }
    // The first tap inside the plane along each axis.
    var y0 = sy.start;
    if (y0 < 0) {
        y0 += ((-y0 + dy - 1) / dy) * dy;
    }
    var x0 = sx.start;
    if (x0 < 0) {
        x0 += ((-x0 + dx - 1) / dx) * dx;
    }
    var m = bitcast<f32>(p.neg_inf);
    var best = y0 * w.in_w + x0;
    for (var y = y0; y < sy.hi; y += dy) {
        for (var xx = x0; xx < sx.hi; xx += dx) {
            let v = x[base + u32(y) * p.x.strides.z + u32(xx) * p.x.strides.w];
            if (v > m || is_nan(v)) {
                m = v;
                best = y * w.in_w + xx;
            }
        }
    }
    out[p.out_offset + t] = m;
    store_index(p.idx_offset + t, best);
}
