// Merges the per-chunk partial results of attention.wgsl (SPLIT): for
// every output row, splits records of DV + 2 floats (unnormalised sums,
// max m, sum of exps l); one thread per output element:
//   out = sum_s acc_s * exp(m_s - M) / sum_s l_s * exp(m_s - M), M = max m_s
// and 0 for a row that saw no key (every l_s == 0).
//
// Prelude: WG, DV.

struct Params {
    rows: u32, splits: u32, neg_inf: u32, pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> part: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let n = (wid.x + wid.y * nwg.x) * WG + lid;
    if (n >= p.rows * DV) { return; }
    let row = n / DV;
    let d = n % DV;
    let neg_inf = bitcast<f32>(p.neg_inf);
    var mx = neg_inf;
    for (var s = 0u; s < p.splits; s++) {
        mx = max(mx, part[(s * p.rows + row) * (DV + 2u) + DV]);
    }
    let shift = select(mx, 0.0, mx == neg_inf);
    var l = 0.0;
    var acc = 0.0;
    for (var s = 0u; s < p.splits; s++) {
        let base = (s * p.rows + row) * (DV + 2u);
        let w = exp(part[base + DV] - shift);
        l += part[base + DV + 1u] * w;
        acc += part[base + d] * w;
    }
    out[n] = select(acc / l, 0.0, l == 0.0);
}
