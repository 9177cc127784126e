// The advance of an optimizer's device scalars to its next step, one
// thread (core/node.h, WT_OPT_SCHED_*: 32-bit words, u32 or f32 bits).
// The same operations as the CPU backend's (src/cpu/train.c), so the
// learning rate is wt_lr_schedule_at's to float rounding.

struct Params {
    offset: u32,       // the scalars' first word
    one_minus_b1: f32, // 1 - beta1, rounded from double
    one_minus_b2: f32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> w: array<u32>;

fn word(i: u32) -> f32 { return bitcast<f32>(w[p.offset + i]); }

// sin(pi/2 q) for q in [0, 1]: the Taylor series to q^15, Horner form.
fn sin_half_pi(q: f32) -> f32 {
    let y = 1.57079632679489662 * q;
    let y2 = y * y;
    var s = -7.6471637318198164759e-13;
    s = s * y2 + 1.6059043836821614599e-10;
    s = s * y2 - 2.5052108385441718775e-8;
    s = s * y2 + 2.7557319223985890653e-6;
    s = s * y2 - 1.9841269841269841270e-4;
    s = s * y2 + 8.3333333333333333333e-3;
    s = s * y2 - 1.6666666666666666667e-1;
    s = s * y2 + 1.0;
    return y * s;
}

// The schedule's learning rate at step i (from 0); cosine as
// min_lr + (lr - min_lr) sin^2(pi/2 (1 - p)) = its (1 + cos(pi p)) / 2.
fn sched_lr(i: u32) -> f32 {
    let warmup = w[p.offset + 9u];
    let total = w[p.offset + 11u];
    let peak = word(12u);
    let min_lr = word(13u);
    if (i < warmup) { return peak * f32(i + 1u) / f32(warmup); }
    let after = i - warmup;
    let kind = w[p.offset + 8u];
    if (kind == 1u) {
        var k = after / w[p.offset + 10u];
        var base = word(14u);
        var r: f32 = 1.0;
        loop {
            if (k == 0u) { break; }
            if ((k & 1u) != 0u) { r = r * base; }
            k = k >> 1u;
            base = base * base;
        }
        return peak * r;
    }
    if (kind == 2u) {
        var q: f32 = 1.0;
        if (total > warmup) { q = min(f32(after) / f32(total - warmup), 1.0); }
        let s = sin_half_pi(1.0 - q);
        return min_lr + (peak - min_lr) * (s * s);
    }
    return peak;
}

@compute @workgroup_size(1)
fn main() {
    let t = w[p.offset] + 1u;
    w[p.offset] = t;
    let c1 = word(2u);
    let c2 = word(3u);
    w[p.offset + 2u] = bitcast<u32>(c1 + p.one_minus_b1 * (1.0 - c1));
    w[p.offset + 3u] = bitcast<u32>(c2 + p.one_minus_b2 * (1.0 - c2));
    var lr = word(6u);
    if (w[p.offset + 7u] != 0u) { lr = sched_lr(t - 1u); }
    w[p.offset + 1u] = bitcast<u32>(lr);
}
