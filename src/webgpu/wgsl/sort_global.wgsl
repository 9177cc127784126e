// Sort, one bitonic step (stage k, distance j >= TILE) over the whole pair
// array in global memory: thread q compares pair i and i + j, where i is
// the q-th index with bit j clear; direction as in sort_local.
// Prelude constants: WG.

struct Params {
    half_total: u32,
    p: u32,
    k: u32,
    j: u32,
}

@group(0) @binding(0) var<uniform> prm: Params;
@group(0) @binding(1) var<storage, read_write> pairs: array<vec2<u32>>;

fn greater(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.x > b.x || (a.x == b.x && a.y > b.y);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let q = (wid.x + wid.y * nwg.x) * WG + lid;
    if (q >= prm.half_total) {
        return;
    }
    let j = prm.j;
    let i = ((q & ~(j - 1u)) << 1u) | (q & (j - 1u));
    let asc = ((i & (prm.p - 1u)) & prm.k) == 0u;
    let a = pairs[i];
    let b = pairs[i + j];
    if (greater(a, b) == asc) {
        pairs[i] = b;
        pairs[i + j] = a;
    }
}
