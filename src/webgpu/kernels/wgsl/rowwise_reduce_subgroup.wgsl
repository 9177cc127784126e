// Row reductions for rowwise.wgsl with subgroup operations (the prelude
// starts with `enable subgroups;`), for workgroups of one row (TPR == WG).
// Each subgroup combines its lanes; lane 0 of each leaves the result at its
// own local index (every other slot holds the identity), and every
// subgroup then combines all slots itself. That works for any subgroup
// size and layout, and keeps every subgroup operation in uniform control
// flow. A library (wg_launch.libraries) of rowwise.wgsl. Consecutive
// reductions of a kernel take alternate slots of `red`, so one barrier
// each does (a slot's next writer has passed the barrier of the reduction
// between, which its last reader reached first).

struct LaneIds {
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) size: u32,
}

var<workgroup> red: array<f32, 2u * WG>;

fn row_sum(v: f32, lid: u32, ids: LaneIds, slot: u32) -> f32 {
    let s = subgroupAdd(v);
    red[slot * WG + lid] = select(0.0, s, ids.lane == 0u);
    workgroupBarrier();
    var acc = 0.0;
    for (var i = ids.lane; i < WG; i += ids.size) { acc += red[slot * WG + i]; }
    return subgroupAdd(acc);
}

fn row_max(v: f32, lid: u32, ids: LaneIds, slot: u32) -> f32 {
    let neg_inf = bitcast<f32>(p.neg_inf);
    let m = subgroupMax(v);
    red[slot * WG + lid] = select(neg_inf, m, ids.lane == 0u);
    workgroupBarrier();
    var acc = neg_inf;
    for (var i = ids.lane; i < WG; i += ids.size) { acc = max(acc, red[slot * WG + i]); }
    return subgroupMax(acc);
}
