// wt_linear_fused for the few rows of a decode step: out[m, j] =
// act(inv_rms[m] * sum_k w[j, k] g[k] x[m, k] + bias[j]) + res[m, j], one
// output (m, j) per TPR threads, ROWS = WG / TPR outputs a workgroup. The
// RMSNorm's inverse root factors out of the dot product, so its sum of
// squares is taken in the same loop, from the x words the dot product
// reads anyway. With SWIGLU the threads of output j read weight rows j
// (gate) and j + n_out (up): silu(gate) * up. Sums in f32, one rounding.
// Tensors are bound as words (u32: f32 bits or two halves), each with its
// own dtype (X_F16 for x and g, W_F16, B_F16, R_F16, O_F16); f16 results
// are written in pairs (one word), so ROWS is even and out's offset too
// (a fresh tensor that owns its buffer: an odd count's last upper half is
// written as 0).
// Prelude: WG, TPR, X_F16, W_F16, B_F16, R_F16, O_F16, NORM, NORM_W, BIAS,
// RESID, SWIGLU.
// Library: linear_fused_vec or linear_fused_scalar (x, w, g, E and
// row_terms), f16_bits / f16_hw / f16_native (unpack_halves, pack_halves).

struct Params {
    outputs: u32,      // M * n_out
    n_out: u32,
    k: u32,
    w_offset: u32,     // elements
    w_row_stride: u32,
    x_offset: u32,
    g_offset: u32,
    bias_offset: u32,
    res_offset: u32,
    out_offset: u32,
    eps: f32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(4) var<storage, read> bias: array<u32>;
@group(0) @binding(5) var<storage, read> res: array<u32>;
@group(0) @binding(6) var<storage, read_write> out: array<u32>;

const ROWS: u32 = WG / TPR;
var<workgroup> partial: array<vec3<f32>, WG>;

// Element i of an array whose word holds it (f16: the half i's parity picks).
fn word_at(word: u32, i: u32, f16: bool) -> f32 {
    if (f16) {
        let v = unpack_halves(word);
        return select(v.x, v.y, (i & 1u) == 1u);
    }
    return bitcast<f32>(word);
}

fn bias_at(i: u32) -> f32 { return word_at(bias[select(i, i >> 1u, B_F16)], i, B_F16); }
fn res_at(i: u32) -> f32 { return word_at(res[select(i, i >> 1u, R_F16)], i, R_F16); }

// The result of the workgroup's output r (partial sums reduced).
fn finish(g: u32, r: u32) -> f32 {
    let o = g * ROWS + r;
    let j = o % p.n_out;
    let t = partial[r * TPR];
    var scale = 1.0;
    if (NORM) { scale = 1.0 / sqrt(t.z / f32(p.k) + p.eps); }
    var y = t.x * scale;
    if (BIAS) { y += bias_at(p.bias_offset + j); }
    if (SWIGLU) {
        var u = t.y * scale;
        if (BIAS) { u += bias_at(p.bias_offset + j + p.n_out); }
        y = y / (1.0 + exp(-y)) * u;
    }
    if (RESID) { y += res_at(p.res_offset + o); }
    return y;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if (g * ROWS >= p.outputs) { return; } // uniform
    let o = g * ROWS + lid / TPR;
    let lane = lid % TPR;
    var t = vec3<f32>(0.0);
    if (o < p.outputs) {
        let m = o / p.n_out;
        let j = o % p.n_out;
        let wb = p.w_offset + j * p.w_row_stride;
        t = row_terms((p.x_offset + m * p.k) / EX, wb / E, (wb + p.n_out * p.w_row_stride) / E,
                      p.g_offset / EX, lane);
    }
    partial[lid] = t;
    workgroupBarrier();
    for (var h = TPR / 2u; h > 0u; h /= 2u) {
        if (lane < h) { partial[lid] += partial[lid + h]; }
        workgroupBarrier();
    }
    if (O_F16) {
        if (lid < ROWS / 2u) {
            let o0 = g * ROWS + 2u * lid;
            if (o0 < p.outputs) {
                let lo = finish(g, 2u * lid);
                var hi = 0.0;
                if (o0 + 1u < p.outputs) { hi = finish(g, 2u * lid + 1u); }
                out[(p.out_offset + o0) / 2u] = pack_halves(vec2<f32>(lo, hi));
            }
        }
    } else if (lid < ROWS && g * ROWS + lid < p.outputs) {
        out[p.out_offset + g * ROWS + lid] = bitcast<u32>(finish(g, lid));
    }
}
