// The statistics of the attention backward's key kernel where the
// forward's log-sum-exp is at hand and dq comes from the product ds @ K
// (kernels/attention_backward.c): for each query row i, stats_i =
// (L_i, D_i = dout_i . out_i), a thread a row. The query kernel would
// compute the same with a workgroup of 128 a block of 32 rows and its
// tiles' workgroup memory, several times slower for this alone.
// f32, read as vec4. Prelude: DQ (head dim / 4) and g_head / g_at, where
// dout's and out's heads and rows start (they are [B, H, S, D], or the
// [B, H, S, D] views of rows [B, S, ..., H, D, ...]).

struct Params {
    rows: u32, dq: u32, hq: u32, sq: u32, // dq == DQ
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> g: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> o: array<vec4<f32>>; // the forward's output
@group(0) @binding(3) var<storage, read> lse: array<f32>;
@group(0) @binding(4) var<storage, read_write> stats: array<vec2<f32>>;

const WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let row = (wid.x + wid.y * nwg.x) * WG + lid;
    if (row >= p.rows) { return; }
    let bh = row / p.sq;
    let at = g_at(g_head(bh / p.hq, bh % p.hq), row % p.sq);
    var a = vec4<f32>(0.0);
    for (var d = 0u; d < DQ; d++) { a = fma(g[at + d], o[at + d], a); }
    // A row without keys has out = 0, so D = 0 there already.
    stats[row] = vec2<f32>(lse[row], a.x + a.y + a.z + a.w);
}
