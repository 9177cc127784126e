// quant_gemv_slots.wgsl's row-group sums with subgroup operations (the
// prelude starts with `enable subgroups;`): the lane of an invocation in
// its subgroup, the subgroup's size and its sums.

struct LaneIds {
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) size: u32,
}

fn lane_id(ids: LaneIds) -> u32 { return ids.lane; }
fn lane_count(ids: LaneIds) -> u32 { return ids.size; }
fn subgroup_sum4(v: vec4<f32>) -> vec4<f32> { return subgroupAdd(v); }
fn subgroup_sum(v: f32) -> f32 { return subgroupAdd(v); }
