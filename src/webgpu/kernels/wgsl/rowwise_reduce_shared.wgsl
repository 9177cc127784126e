// Row reductions for rowwise.wgsl in workgroup memory only (no subgroup
// operations): the TPR threads of each row (a power of two, consecutive
// local indices) combine their values as a tree. A library (wg_launch.libraries) of
// rowwise.wgsl; the row's result goes to every thread. Consecutive
// reductions of a kernel take alternate slots of `red`, so no barrier is
// needed to protect one reduction's data from the next (the one between
// has its barriers).

// The entry point takes a LaneIds; this variant needs no lane builtins.
struct LaneIds {
    @builtin(local_invocation_id) unused: vec3<u32>,
}

var<workgroup> red: array<f32, 2u * WG>;

fn row_combine(v: f32, lid: u32, slot: u32, is_max: bool) -> f32 {
    let i = slot * WG + lid;
    red[i] = v;
    workgroupBarrier();
    let first = i - lid % TPR;
    for (var half = TPR / 2u; half > 0u; half = half >> 1u) {
        if (i - first < half) {
            let a = red[i];
            let b = red[i + half];
            red[i] = select(a + b, max(a, b), is_max);
        }
        workgroupBarrier();
    }
    return red[first];
}

fn row_sum(v: f32, lid: u32, ids: LaneIds, slot: u32) -> f32 {
    return row_combine(v, lid, slot, false);
}
fn row_max(v: f32, lid: u32, ids: LaneIds, slot: u32) -> f32 {
    return row_combine(v, lid, slot, true);
}
