// Resampling of [N, C, H, W] planes (core/node.h, wt_interp2d), one thread
// per element of out (contiguous, at the start of its binding):
//   forward:  src = x (any strides), out [N, C, OH, OW]; each output reads
//             its one (nearest) or four (bilinear) taps;
//   backward: src = dy [N, C, OH, OW] (any strides), out = dx [N, C, H, W];
//             each input pixel gathers the outputs that read it (no
//             atomics: one order of every sum). The outputs that read
//             input row i are contiguous (the source index never falls as
//             the output index grows), found by binary search.
// The source coordinates are f32, with PyTorch's formulas.
// Prelude: WG, LINEAR, ALIGN (align_corners), BACKWARD.

struct Params {
    total: u32, c: u32, in_h: u32, in_w: u32,     // the forward's input extents
    out_h: u32, out_w: u32, scale_h: f32, scale_w: f32, // and output extents
    src_offset: u32, pad0: u32, pad1: u32, pad2: u32,
    src_strides: vec4<u32>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

// Output o reads inputs i0 and i1 with weights w0 and w1 (nearest: i1 ==
// i0, w1 == 0, never multiplied in the forward pass).
struct Tap {
    i0: u32,
    i1: u32,
    w0: f32,
    w1: f32,
}

fn tap_of(o: u32, scale: f32, n_in: u32) -> Tap {
    var t: Tap;
    if (!LINEAR) {
        let i = min(u32(floor(f32(o) * scale)), n_in - 1u);
        t.i0 = i;
        t.i1 = i;
        t.w0 = 1.0;
        t.w1 = 0.0;
        return t;
    }
    var r: f32;
    if (ALIGN) {
        r = scale * f32(o);
    } else {
        r = max(scale * (f32(o) + 0.5) - 0.5, 0.0);
    }
    let i = min(u32(r), n_in - 1u);
    let l1 = clamp(r - f32(i), 0.0, 1.0);
    t.i0 = i;
    t.i1 = select(i, i + 1u, i < n_in - 1u);
    t.w0 = 1.0 - l1;
    t.w1 = l1;
    return t;
}

fn weight_to(t: Tap, i: u32) -> f32 {
    return select(0.0, t.w0, t.i0 == i) + select(0.0, t.w1, t.i1 == i);
}

// The first output whose i0 is at least i (n_out when there is none).
fn first_reading(i: u32, n_out: u32, scale: f32, n_in: u32) -> u32 {
    var lo = 0u;
    var hi = n_out;
    loop {
        if (lo >= hi) { break; }
        let mid = lo + (hi - lo) / 2u;
        if (tap_of(mid, scale, n_in).i0 >= i) {
            hi = mid;
        } else {
            lo = mid + 1u;
        }
    }
    return lo;
}

// The outputs [x, y) that read input i: i0 == i, or (bilinear) i0 == i - 1.
fn readers(i: u32, n_out: u32, scale: f32, n_in: u32) -> vec2<u32> {
    var first = first_reading(i, n_out, scale, n_in);
    if (LINEAR && i > 0u) {
        first = first_reading(i - 1u, n_out, scale, n_in);
    }
    return vec2<u32>(first, first_reading(i + 1u, n_out, scale, n_in));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = (wid.x + wid.y * nwg.x) * WG + lid;
    if (t >= p.total) {
        return;
    }
    let s = p.src_strides;
    if (!BACKWARD) {
        let ox = t % p.out_w;
        let oy = (t / p.out_w) % p.out_h;
        let pl = t / p.out_w / p.out_h;
        let base = p.src_offset + (pl / p.c) * s.x + (pl % p.c) * s.y;
        let ty = tap_of(oy, p.scale_h, p.in_h);
        let tx = tap_of(ox, p.scale_w, p.in_w);
        let r0 = base + ty.i0 * s.z;
        if (!LINEAR) {
            out[t] = src[r0 + tx.i0 * s.w];
            return;
        }
        let r1 = base + ty.i1 * s.z;
        let c0 = tx.i0 * s.w;
        let c1 = tx.i1 * s.w;
        out[t] = ty.w0 * (tx.w0 * src[r0 + c0] + tx.w1 * src[r0 + c1]) +
                 ty.w1 * (tx.w0 * src[r1 + c0] + tx.w1 * src[r1 + c1]);
        return;
    }
    let ix = t % p.in_w;
    let iy = (t / p.in_w) % p.in_h;
    let pl = t / p.in_w / p.in_h;
    let base = p.src_offset + (pl / p.c) * s.x + (pl % p.c) * s.y;
    let ry = readers(iy, p.out_h, p.scale_h, p.in_h);
    let rx = readers(ix, p.out_w, p.scale_w, p.in_w);
    var sum = 0.0;
    for (var oy = ry.x; oy < ry.y; oy++) {
        let g = base + oy * s.z;
        var row = 0.0;
        for (var ox = rx.x; ox < rx.y; ox++) {
            row += weight_to(tap_of(ox, p.scale_w, p.in_w), ix) * src[g + ox * s.w];
        }
        sum += weight_to(tap_of(oy, p.scale_h, p.in_h), iy) * row;
    }
    out[t] = sum;
}
