// The backward of attention without a mask, pass 1 (kernels/
// attention_backward.c): one thread per query row r = (b, h, i) of
// q [B, HQ, SQ, D] (contiguous, like every tensor here). With
// s_j = scale q_i . k_j over the keys the row sees, it walks the keys three
// times: the row's maximum, then L = log-sum-exp, then D = sum_j p_j dp_j
// (p_j = exp(s_j - L), dp_j = dout_i . v_j), then
// dq_i = scale sum_j p_j (dp_j - D) k_j. It writes dq and (L, D) per row
// for pass 2; nothing of size SQ x SKV is stored. A row that sees no key
// gets dq = 0 and is never read by pass 2.
// Prelude: WG, D, DV (array sizes; the loops take p.d, p.dv so that
// compilers do not unroll them whole).

struct Params {
    hq: u32, hkv: u32, sq: u32, skv: u32,
    group: u32, rows: u32, causal: u32, scale: f32,
    d: u32, dv: u32, pad0: u32, pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> g: array<f32>;
@group(0) @binding(5) var<storage, read_write> dq: array<f32>;
@group(0) @binding(6) var<storage, read_write> stats: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let r = (wid.x + wid.y * nwg.x) * WG + lid;
    if (r >= p.rows) {
        return;
    }
    let i = r % p.sq;
    let h = (r / p.sq) % p.hq;
    let b = r / (p.sq * p.hq);
    let kbase = (b * p.hkv + h / p.group) * p.skv;
    var kend = p.skv;
    if (p.causal != 0u) {
        kend = u32(clamp(i32(i) + i32(p.skv) - i32(p.sq) + 1, 0, i32(p.skv)));
    }
    var qi: array<f32, D>;
    var gi: array<f32, DV>;
    var acc: array<f32, D>;
    for (var d = 0u; d < p.d; d++) {
        qi[d] = q[r * p.d + d] * p.scale;
        acc[d] = 0.0;
    }
    for (var d = 0u; d < p.dv; d++) {
        gi[d] = g[r * p.dv + d];
    }
    if (kend == 0u) {
        for (var d = 0u; d < p.d; d++) {
            dq[r * p.d + d] = 0.0;
        }
        stats[2u * r] = 0.0;
        stats[2u * r + 1u] = 0.0;
        return;
    }
    var mx = -3.4e38;
    for (var j = 0u; j < kend; j++) {
        var s = 0.0;
        for (var d = 0u; d < p.d; d++) {
            s += qi[d] * k[(kbase + j) * p.d + d];
        }
        mx = max(mx, s);
    }
    var l = 0.0;
    for (var j = 0u; j < kend; j++) {
        var s = 0.0;
        for (var d = 0u; d < p.d; d++) {
            s += qi[d] * k[(kbase + j) * p.d + d];
        }
        l += exp(s - mx);
    }
    let lse = mx + log(l);
    var dd = 0.0;
    for (var j = 0u; j < kend; j++) {
        var s = 0.0;
        for (var d = 0u; d < p.d; d++) {
            s += qi[d] * k[(kbase + j) * p.d + d];
        }
        var dp = 0.0;
        for (var d = 0u; d < p.dv; d++) {
            dp += gi[d] * v[(kbase + j) * p.dv + d];
        }
        dd += exp(s - lse) * dp;
    }
    for (var j = 0u; j < kend; j++) {
        var s = 0.0;
        for (var d = 0u; d < p.d; d++) {
            s += qi[d] * k[(kbase + j) * p.d + d];
        }
        var dp = 0.0;
        for (var d = 0u; d < p.dv; d++) {
            dp += gi[d] * v[(kbase + j) * p.dv + d];
        }
        let ds = exp(s - lse) * (dp - dd);
        for (var d = 0u; d < p.d; d++) {
            acc[d] += ds * k[(kbase + j) * p.d + d];
        }
    }
    for (var d = 0u; d < p.d; d++) {
        dq[r * p.d + d] = acc[d] * p.scale;
    }
    stats[2u * r] = lse;
    stats[2u * r + 1u] = dd;
}
