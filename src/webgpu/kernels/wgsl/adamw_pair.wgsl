// The AdamW steps of two parameters in one dispatch, one thread per
// element of both (parameter 0's first): optimizer.wgsl's AdamW update with
// the optimizer's device scalars (the learning rate and the bias
// corrections at sched[s_offset + 1, 2, 3]), each parameter's first and
// second moments at its offsets of the moment buffers m and v. The prelude
// gives WG and clip_factor(), as optimizer.wgsl's.

struct Params {
    n0: u32,
    n1: u32,
    p_offset0: u32,
    p_offset1: u32,
    g_offset0: u32,
    g_offset1: u32,
    m_offset0: u32,
    m_offset1: u32,
    v_offset0: u32,
    v_offset1: u32,
    s_offset: u32,
    c_offset: u32,
    weight_decay: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    max_norm: f32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> param0: array<f32>;
@group(0) @binding(2) var<storage, read> grad0: array<f32>;
@group(0) @binding(3) var<storage, read_write> param1: array<f32>;
@group(0) @binding(4) var<storage, read> grad1: array<f32>;
@group(0) @binding(5) var<storage, read_write> m: array<f32>;
@group(0) @binding(6) var<storage, read_write> v: array<f32>;
@group(0) @binding(7) var<storage, read> sched: array<u32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * nwg.x) * WG + lid;
    if (i >= p.n0 + p.n1) { return; }
    let first = i < p.n0;
    let j = select(i - p.n0, i, first);
    let mo = select(p.m_offset1, p.m_offset0, first) + j;
    let vo = select(p.v_offset1, p.v_offset0, first) + j;
    var g: f32;
    var w: f32;
    if (first) {
        g = grad0[p.g_offset0 + j];
        w = param0[p.p_offset0 + j];
    } else {
        g = grad1[p.g_offset1 + j];
        w = param1[p.p_offset1 + j];
    }
    g = g * clip_factor();
    let lr = bitcast<f32>(sched[p.s_offset + 1u]);
    let bias1 = bitcast<f32>(sched[p.s_offset + 2u]);
    let bias2 = bitcast<f32>(sched[p.s_offset + 3u]);
    let mi = p.beta1 * m[mo] + (1.0 - p.beta1) * g;
    let vi = p.beta2 * v[vo] + (1.0 - p.beta2) * g * g;
    m[mo] = mi;
    v[vo] = vi;
    let updated = w * (1.0 - lr * p.weight_decay) - lr * (mi / bias1) / (sqrt(vi / bias2) + p.eps);
    if (first) {
        param0[p.p_offset0 + j] = updated;
    } else {
        param1[p.p_offset1 + j] = updated;
    }
}
