// The backward of attention without a mask, pass 2 (kernels/
// attention_backward.c): one thread per key row c = (b, kv head, j) of
// k [B, HKV, SKV, D]. Over every query i of the q heads of its group that
// sees key j, with L and D of pass 1 (stats):
//   p = exp(scale q_i . k_j - L_i), dp = dout_i . v_j,
//   dv_j += p dout_i,  dk_j += scale p (dp - D_i) q_i.
// Prelude: WG, D, DV (array sizes; the loops take p.d, p.dv).

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
@group(0) @binding(5) var<storage, read> stats: array<f32>;
@group(0) @binding(6) var<storage, read_write> dk: array<f32>;
@group(0) @binding(7) var<storage, read_write> dv: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let c = (wid.x + wid.y * nwg.x) * WG + lid;
    if (c >= p.rows) {
        return;
    }
    let j = c % p.skv;
    let kh = (c / p.skv) % p.hkv;
    let b = c / (p.skv * p.hkv);
    var kj: array<f32, D>;
    var vj: array<f32, DV>;
    var ak: array<f32, D>;
    var av: array<f32, DV>;
    for (var d = 0u; d < p.d; d++) {
        kj[d] = k[c * p.d + d] * p.scale;
        ak[d] = 0.0;
    }
    for (var d = 0u; d < p.dv; d++) {
        vj[d] = v[c * p.dv + d];
        av[d] = 0.0;
    }
    // The first query that sees key j.
    var i0 = 0u;
    if (p.causal != 0u) {
        i0 = u32(max(i32(j) - (i32(p.skv) - i32(p.sq)), 0));
    }
    for (var h = kh * p.group; h < (kh + 1u) * p.group; h++) {
        for (var i = i0; i < p.sq; i++) {
            let r = (b * p.hq + h) * p.sq + i;
            var s = 0.0;
            for (var d = 0u; d < p.d; d++) {
                s += q[r * p.d + d] * kj[d];
            }
            var dp = 0.0;
            for (var d = 0u; d < p.dv; d++) {
                dp += g[r * p.dv + d] * vj[d];
            }
            let pr = exp(s - stats[2u * r]);
            let ds = pr * (dp - stats[2u * r + 1u]);
            for (var d = 0u; d < p.dv; d++) {
                av[d] += pr * g[r * p.dv + d];
            }
            for (var d = 0u; d < p.d; d++) {
                ak[d] += ds * q[r * p.d + d];
            }
        }
    }
    for (var d = 0u; d < p.d; d++) {
        dk[c * p.d + d] = ak[d] * p.scale;
    }
    for (var d = 0u; d < p.dv; d++) {
        dv[c * p.dv + d] = av[d];
    }
}
