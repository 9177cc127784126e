// linear_fused.wgsl's operands read one element at a time, for any k,
// offset, row stride and pair of dtypes (an f16 element is the half of
// its word that its index's parity picks).

@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read> w: array<u32>;
@group(0) @binding(3) var<storage, read> g: array<u32>;

const E: u32 = 1u;
const EX: u32 = 1u;

fn x_at(i: u32) -> f32 { return word_at(x[select(i, i >> 1u, X_F16)], i, X_F16); }
fn w_at(i: u32) -> f32 { return word_at(w[select(i, i >> 1u, W_F16)], i, W_F16); }
fn g_at(i: u32) -> f32 { return word_at(g[select(i, i >> 1u, X_F16)], i, X_F16); }

// Element offsets: x's row, w's row (and the up row), g.
fn row_terms(xb: u32, wb: u32, wb2: u32, gb: u32, lane: u32) -> vec3<f32> {
    var s = vec3<f32>(0.0);
    for (var i = lane; i < p.k; i += TPR) {
        let v = x_at(xb + i);
        var h = v;
        if (NORM_W) { h *= g_at(gb + i); }
        s.x += w_at(wb + i) * h;
        if (SWIGLU) { s.y += w_at(wb2 + i) * h; }
        s.z += v * v;
    }
    return s;
}
