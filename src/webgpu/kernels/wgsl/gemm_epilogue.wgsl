// The matrix products' epilogue: out = act(acc + bias[n]), shared by
// gemm.wgsl and gemm_splitk.wgsl. ACT follows wt_matmul_act: 0 none,
// 1 relu, 2 gelu (erf), 3 gelu (tanh form); gelu_grad serves
// WT_MATMUL_ACT_GELU_GRAD (the products' AUX == 2).

// erfc(z) for z >= 0 with a relative error under 1.2e-7 everywhere
// (Chebyshev fit of Numerical Recipes' erfcc): no cancellation in the tail,
// so gelu keeps its relative precision for negative inputs.
fn erfc_pos(z: f32) -> f32 {
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
            t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
            t * (-0.82215223 + t * 0.17087277))))))));
    return t * exp(r);
}

fn activate(x: f32) -> f32 {
    switch ACT {
        case 1u: { return select(x, 0.0, x < 0.0); } // NaN stays NaN
        case 2u: {
            // gelu(x) = x/2 * erfc(-x / sqrt 2); erfc(-z) = 2 - erfc(z) for z >= 0.
            let z = abs(x) * 0.70710678118654752;
            let e = erfc_pos(min(z, 10.0));
            return 0.5 * x * select(e, 2.0 - e, x > 0.0);
        }
        case 3u: {
            // x/2 (1 + tanh(u)) = x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3);
            // exp of -|2u| never overflows.
            let u = 1.5957691216057308 * (x + 0.044715 * x * x * x);
            let e = exp(-abs(u));
            return x * select(e / (1.0 + e), 1.0 / (1.0 + e), u >= 0.0);
        }
        default: { return x; }
    }
}

// gelu'(x) = Phi(x) + x phi(x), with act_backward.wgsl's erf (Abramowitz
// and Stegun 7.1.26), so that GELU's backward in a product's stores
// matches the separate pass.
fn gelu_grad(v: f32) -> f32 {
    let a = abs(v) * 0.70710678118654752;
    let t = 1.0 / (1.0 + 0.3275911 * a);
    let poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    let e = 1.0 - poly * exp(-a * a);
    let erf_v = select(e, -e, v < 0.0);
    return 0.5 * (1.0 + erf_v) + v * 0.39894228040143268 * exp(-0.5 * v * v);
}
