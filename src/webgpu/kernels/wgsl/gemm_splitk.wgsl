// Second pass of a split-k matrix product (gemm.wgsl with SPLIT): out[i] =
// act(sum over s of part[s * count + i] + bias[i % n], or per row) for the count =
// batch * M * N outputs. Thread t makes outputs 2t and 2t + 1 (one word of
// two halves with OUT_F16; n is then even).
// The partial sums are bound as the io library's a (read with part_at), so
// the pass binds four storage buffers, the fewest any adapter offers.
// Prelude: WG, BIAS, BIAS_ROWS (a bias per output row, see gemm.wgsl), ACT, OUT_F16,
// AUX and aux_at (as gemm.wgsl's: 1 a residual added last, 2 or 3 the
// result times gelu'(aux); f32 results). Libraries: gemm_io_f32 or gemm_io_f16, gemm_epilogue.

struct Params {
    count: u32,
    n: u32,
    splits: u32,
    out_offset: u32,
    bias_offset: u32,
    bias_rows: u32,      // BIAS_ROWS: the bias entry of output row r is r % bias_rows
    aux_offset: u32,     // AUX: aux's element of output 0
    pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;

fn finish(i: u32) -> f32 {
    var s = 0.0;
    for (var z = 0u; z < p.splits; z++) { s += part_at(z * p.count + i); }
    if (BIAS) { s += bias_at(p.bias_offset + select(i % p.n, (i / p.n) % p.bias_rows, BIAS_ROWS)); }
    if (AUX == 2u || AUX == 3u) { return s * gelu_grad(aux_at(p.aux_offset + i)); }
    let v = activate(s);
    if (AUX == 1u) { return v + aux_at(p.aux_offset + i); }
    return v;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = (wid.x + wid.y * nwg.x) * WG + lid;
    let i = 2u * t;
    if (i >= p.count) { return; }
    if (OUT_F16) {
        store_halves((p.out_offset + i) / 2u, vec2<f32>(finish(i), finish(i + 1u)));
    } else {
        store_f32(p.out_offset + i, finish(i));
        if (i + 1u < p.count) { store_f32(p.out_offset + i + 1u, finish(i + 1u)); }
    }
}
