// In-place optimizer steps, one thread per element. The prelude gives OP
// (0 SGD, 1 AdamW), HAS_M (SGD with a momentum buffer), HAS_SCHED (the
// learning rate, bias corrections and step number come from an
// optimizer's device scalars, core/node.h WT_OPT_SCHED_*, at s_offset),
// WG and clip_factor(): 1, or, where the step clips, the factor of
// clipping min(1, max_norm / (norm + 1e-6)) from the global norm, which
// the prelude then binds at binding 6 (the gradient is taken times it and
// its buffer is not written). Absent buffers are bound to scratch buffers
// never touched.

struct Params {
    n: u32,
    p_offset: u32,
    g_offset: u32,
    m_offset: u32,
    v_offset: u32,
    nesterov: u32,
    lr: f32,
    weight_decay: f32,
    momentum: f32,
    dampening: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    bias1: f32,
    bias2: f32,
    s_offset: u32,
    c_offset: u32,
    max_norm: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> param: array<f32>;
@group(0) @binding(2) var<storage, read> grad: array<f32>;
@group(0) @binding(3) var<storage, read_write> m: array<f32>;
@group(0) @binding(4) var<storage, read_write> v: array<f32>;
@group(0) @binding(5) var<storage, read> sched: array<u32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * nwg.x) * WG + lid;
    if (i >= p.n) { return; }
    let g = grad[p.g_offset + i] * clip_factor();
    let w = param[p.p_offset + i];
    var lr = p.lr;
    var bias1 = p.bias1;
    var bias2 = p.bias2;
    var dampening = p.dampening;
    if (HAS_SCHED) {
        lr = bitcast<f32>(sched[p.s_offset + 1u]);
        bias1 = bitcast<f32>(sched[p.s_offset + 2u]);
        bias2 = bitcast<f32>(sched[p.s_offset + 3u]);
        // SGD's buffer is zeros at first: undamped on step 1 it becomes
        // the first gradient, as PyTorch starts it.
        if (sched[p.s_offset] == 1u) { dampening = 0.0; }
    }
    if (OP == 0u) {
        var gi = g + p.weight_decay * w;
        if (HAS_M) {
            let b = p.momentum * m[p.m_offset + i] + (1.0 - dampening) * gi;
            m[p.m_offset + i] = b;
            gi = select(b, gi + p.momentum * b, p.nesterov != 0u);
        }
        param[p.p_offset + i] = w - lr * gi;
    } else {
        let mi = p.beta1 * m[p.m_offset + i] + (1.0 - p.beta1) * g;
        let vi = p.beta2 * v[p.v_offset + i] + (1.0 - p.beta2) * g * g;
        m[p.m_offset + i] = mi;
        v[p.v_offset + i] = vi;
        param[p.p_offset + i] = w * (1.0 - lr * p.weight_decay) - lr * (mi / bias1) / (sqrt(vi / bias2) + p.eps);
    }
}
