// Cross-entropy rows: loss[r] = logsumexp(x[r, :]) - x[r, label[r]],
// valid[r] = 1 (0 and loss 0 for ignored rows; NaN loss for a label
// outside [0, cols)). One workgroup per row; row stats from ce_row.wgsl.

struct Params {
    rows: u32,
    cols: u32,
    ignore: i32,
    x_offset: u32,
    y_offset: u32,
    loss_offset: u32,
    valid_offset: u32,
    neg_inf: u32,   // bits of -inf
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> labels: array<i32>;
@group(0) @binding(3) var<storage, read_write> loss: array<f32>;
@group(0) @binding(4) var<storage, read_write> valid: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let r = wid.x + wid.y * nwg.x;
    if (r >= p.rows) { return; } // uniform: the whole workgroup leaves
    let y = labels[p.y_offset + r];
    let base = p.x_offset + r * p.cols;
    let st = ce_row_stats(base, p.cols, lid, bitcast<f32>(p.neg_inf));
    if (lid != 0u) { return; }
    if (y == p.ignore) {
        loss[p.loss_offset + r] = 0.0;
        valid[p.valid_offset + r] = 0.0;
        return;
    }
    valid[p.valid_offset + r] = 1.0;
    if (y < 0 || u32(y) >= p.cols) {
        loss[p.loss_offset + r] = bitcast<f32>(p.neg_inf | 0x00400000u);
        return;
    }
    loss[p.loss_offset + r] = st.x + log(st.y) - x[base + u32(y)];
}
