// gemm.wgsl's b operand as a tensor read through its strides: b_batch_base
// and fetch_b (four elements from (gk, gn): along n when B_N_FAST, else
// along k; one aligned load when B_VEC; zeros past n and kend).

fn b_batch_base(batch: u32) -> u32 { return p.b_offset + batch * p.b_batch_stride; }

fn fetch_b(base: u32, gk: u32, gn: u32, kend: u32) -> vec4<f32> {
    var v = vec4<f32>(0.0);
    if (B_N_FAST) {
        if (B_VEC) {
            if (gn < p.n && gk < kend) { v = b4(base + gk * p.b_row_stride + gn); }
        } else {
            for (var c = 0u; c < 4u; c++) {
                if (gn + c < p.n && gk < kend) { v[c] = b1(base + gk * p.b_row_stride + (gn + c) * p.b_col_stride); }
            }
        }
    } else {
        if (B_VEC) {
            if (gn < p.n && gk < kend) { v = b4(base + gn * p.b_col_stride + gk); }
        } else {
            for (var c = 0u; c < 4u; c++) {
                if (gn < p.n && gk + c < kend) { v[c] = b1(base + (gk + c) * p.b_row_stride + gn * p.b_col_stride); }
            }
        }
    }
    return v;
}
