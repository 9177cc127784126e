// quant_gemv_slots.wgsl without subgroups (SUBGROUPS false: its workgroup
// tree does the sums): the names its subgroup branch refers to, never
// reached, each invocation a subgroup of its own.

struct LaneIds {
    @builtin(local_invocation_id) unused: vec3<u32>,
}

fn lane_id(ids: LaneIds) -> u32 { return 0u; }
fn lane_count(ids: LaneIds) -> u32 { return 1u; }
fn subgroup_sum4(v: vec4<f32>) -> vec4<f32> { return v; }
fn subgroup_sum(v: f32) -> f32 { return v; }
