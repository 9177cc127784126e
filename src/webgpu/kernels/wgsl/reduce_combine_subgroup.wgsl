// workgroup_combine for reduce_rows.wgsl with subgroup operations (the
// prelude starts with `enable subgroups;`). Each subgroup combines its
// lanes with one subgroup operation; the subgroup results meet in
// workgroup memory, and every subgroup then combines them all
// (redundantly), which keeps each subgroup operation in uniform control
// flow. Nothing assumes that a subgroup is a contiguous range of
// local_invocation_index. A library (wg_launch.libraries) of reduce_rows.wgsl.

struct LaneIds {
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) size: u32,
}

var<workgroup> partial: array<T, WG>;

// subgroupMax/Min leave NaNs unspecified: a NaN in any lane wins. (Products
// never come here: the host picks reduce_combine_shared for them.)
fn subgroup_combine(a: T) -> T {
    let nan = bitcast<T>(p.identity | 0x7fc00000u); // a quiet NaN, made at run time
    if (OP == 1u) { return select(subgroupMax(a), nan, subgroupAny(is_nan(a))); }
    if (OP == 2u) { return select(subgroupMin(a), nan, subgroupAny(is_nan(a))); }
    return subgroupAdd(a);
}

// Lane 0 of each subgroup leaves its subgroup's value at its own local
// index; every other slot holds the identity. Fixed positions keep the
// order of the sum the same from run to run. Every thread gets the result.
fn workgroup_combine(total: T, lid: u32, ids: LaneIds) -> T {
    let ident = bitcast<T>(p.identity);
    partial[lid] = select(ident, subgroup_combine(total), ids.lane == 0u);
    workgroupBarrier();
    var acc = ident;
    for (var j = ids.lane; j < WG; j += ids.size) {
        acc = combine(acc, partial[j]);
    }
    return subgroup_combine(acc);
}
