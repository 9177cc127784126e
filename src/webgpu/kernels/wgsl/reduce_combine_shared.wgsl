// workgroup_combine for reduce_rows.wgsl in workgroup memory only: the
// threads' values combine as a tree (pairwise order: good accuracy for
// sums). A library (wg_launch.libraries) of reduce_rows.wgsl.

// The entry point takes a LaneIds; this variant needs no lane builtins.
struct LaneIds {
    @builtin(local_invocation_id) unused: vec3<u32>,
}

var<workgroup> partial: array<T, WG>;

fn workgroup_combine(total: T, lid: u32, ids: LaneIds) -> T {
    partial[lid] = total;
    workgroupBarrier();
    for (var half = WG / 2u; half > 0u; half = half >> 1u) {
        if (lid < half) {
            partial[lid] = combine(partial[lid], partial[lid + half]);
        }
        workgroupBarrier();
    }
    return partial[0];
}
