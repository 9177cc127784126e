// Cross-entropy gradient: out[r, j] = (softmax(x[r, :])[j] - (j == label))
// * scale[r]; 0 for ignored rows, NaN for a label outside [0, cols). One
// workgroup per row; row stats from ce_row.wgsl.

struct Params {
    rows: u32,
    cols: u32,
    ignore: i32,
    x_offset: u32,
    y_offset: u32,
    out_offset: u32,
    s_offset: u32,
    s_stride: u32,  // 0 when one scale serves every row
    neg_inf: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> labels: array<i32>;
@group(0) @binding(3) var<storage, read> scale: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let r = wid.x + wid.y * nwg.x;
    if (r >= p.rows) { return; }
    let y = labels[p.y_offset + r];
    let base = p.x_offset + r * p.cols;
    let obase = p.out_offset + r * p.cols;
    let st = ce_row_stats(base, p.cols, lid, bitcast<f32>(p.neg_inf));
    if (y == p.ignore) {
        for (var j = lid; j < p.cols; j = j + WG) { out[obase + j] = 0.0; }
        return;
    }
    if (y < 0 || u32(y) >= p.cols) {
        for (var j = lid; j < p.cols; j = j + WG) { out[obase + j] = bitcast<f32>(p.neg_inf | 0x00400000u); }
        return;
    }
    let g = scale[p.s_offset + r * p.s_stride];
    let inv = 1.0 / st.y;
    for (var j = lid; j < p.cols; j = j + WG) {
        let hot = select(0.0, 1.0, j == u32(y));
        out[obase + j] = (exp(x[base + j] - st.x) * inv - hot) * g;
    }
}
