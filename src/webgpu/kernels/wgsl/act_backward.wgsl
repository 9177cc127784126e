// Activation backward: out[i] = dy[i] * act'(x[i]), all contiguous f32.
// The prelude gives ACT (wt_activation's value) and WG (threads per
// workgroup).

struct Params {
    n: u32,
    dy_offset: u32,
    x_offset: u32,
    out_offset: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> dy: array<f32>;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

fn sigmoid_(v: f32) -> f32 { return 1.0 / (1.0 + exp(-v)); }

// erf to about 1.5e-7 (Abramowitz and Stegun 7.1.26); WGSL has none.
fn erf_(v: f32) -> f32 {
    let a = abs(v);
    let t = 1.0 / (1.0 + 0.3275911 * a);
    let poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    let r = 1.0 - poly * exp(-a * a);
    return select(r, -r, v < 0.0);
}

// tanh without the overflow of exp(2v) for large |v|.
fn tanh_(v: f32) -> f32 {
    let e = exp(-2.0 * abs(v));
    let t = (1.0 - e) / (1.0 + e);
    return select(t, -t, v < 0.0);
}

fn act_grad(v: f32) -> f32 {
    switch ACT {
        case 0u: { return select(0.0, 1.0, v > 0.0); }
        case 1u: { let s = sigmoid_(v); return s * (1.0 - s); }
        case 2u: { let t = tanh_(v); return 1.0 - t * t; }
        case 3u: { let s = sigmoid_(v); return s * (1.0 + v * (1.0 - s)); }
        case 4u: {
            return 0.5 * (1.0 + erf_(v * 0.70710678118654752)) + v * 0.39894228040143268 * exp(-0.5 * v * v);
        }
        default: {
            let k = 0.79788456080286536;
            let c = 0.044715;
            let t = tanh_(k * (v + c * v * v * v));
            return 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * k * (1.0 + 3.0 * c * v * v);
        }
    }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * nwg.x) * WG + lid;
    if (i >= p.n) { return; }
    out[p.out_offset + i] = dy[p.dy_offset + i] * act_grad(x[p.x_offset + i]);
}
