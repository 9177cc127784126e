// Sort, last step: out[r * k + c] = position of the c-th pair of row r
// (c < k), as i32.
// Prelude constants: WG.

struct Params {
    n: u32, // rows * k
    k: u32,
    log2_p: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> prm: Params;
@group(0) @binding(1) var<storage, read> pairs: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = (wid.x + wid.y * nwg.x) * WG + lid;
    if (t >= prm.n) {
        return;
    }
    let r = t / prm.k;
    let c = t % prm.k;
    out[t] = pairs[(r << prm.log2_p) + c].y;
}
