// Clipping's factor min(1, max_norm / (norm + 1e-6)) from the global norm,
// a NaN kept (WGSL's min may drop it; PyTorch's clamp keeps it): the
// library (wg_launch.libraries) of grad_clip_scale.wgsl and of an
// optimizer step that clips (kernels/train.c).

fn clip_factor_of(norm: f32, max_norm: f32) -> f32 {
    let q = max_norm / (norm + 1e-6);
    let q_is_nan = (bitcast<u32>(q) & 0x7fffffffu) > 0x7f800000u;
    return select(min(q, 1.0), q, q_is_nan);
}
