// Shared by the cross-entropy kernels: the max and the sum of exp(x - max)
// of one row of x, over the WG threads of a workgroup (tree in workgroup
// memory). Every thread gets both. Called from uniform control flow. The
// body declares `x: array<f32>` and the prelude WG (a power of two).

var<workgroup> ce_red: array<f32, WG>;

// A bit test: compilers may fold v != v to false.
fn ce_is_nan(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u; }

fn ce_combine_max(lid: u32, v: f32) -> f32 {
    ce_red[lid] = v;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if (lid < s) {
            let o = ce_red[lid + s];
            // NaN wins, so a NaN row gives NaN.
            ce_red[lid] = select(max(ce_red[lid], o), o, ce_is_nan(o));
        }
        workgroupBarrier();
    }
    let r = ce_red[0];
    workgroupBarrier();
    return r;
}

fn ce_combine_sum(lid: u32, v: f32) -> f32 {
    ce_red[lid] = v;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if (lid < s) { ce_red[lid] = ce_red[lid] + ce_red[lid + s]; }
        workgroupBarrier();
    }
    let r = ce_red[0];
    workgroupBarrier();
    return r;
}

// vec2(max, sum of exp(x - max)) of the row starting at base.
fn ce_row_stats(base: u32, cols: u32, lid: u32, neg_inf: f32) -> vec2<f32> {
    var m = neg_inf;
    for (var j = lid; j < cols; j = j + WG) {
        let v = x[base + j];
        m = select(max(m, v), v, ce_is_nan(v));
    }
    m = ce_combine_max(lid, m);
    var s = 0.0;
    for (var j = lid; j < cols; j = j + WG) { s = s + exp(x[base + j] - m); }
    s = ce_combine_sum(lid, s);
    return vec2<f32>(m, s);
}
