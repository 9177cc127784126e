// dst (2-byte elements, any view without repeated elements that is not one
// contiguous run) = src (dst's shape, any strides, broadcast axes with
// stride 0), as bits. Two threads may own the two halves of one dst word,
// so dst is written through atomics: atomicAnd / atomicOr on the word keep
// each other's half. (4-byte elements and contiguous runs: mv_copy_words.)
// Prelude constants: WG (ELEM2 is true here). Library: mv_copy (Params,
// dst_base).

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<u32>;
// wt_copy_into_at's start, read here (dyn_on); else src bound again.
@group(0) @binding(3) var<storage, read> start: array<i32>;
@group(0) @binding(2) var<storage, read_write> dst: array<atomic<u32>>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = (wid.x + wid.y * nwg.x) * WG + lid;
    if (t >= p.n) {
        return;
    }
    var rem = t;
    var se = p.src_offset;
    var de = dst_base();
    for (var d = p.ndim; d > 0u; d = d - 1u) {
        let a = d - 1u;
        let extent = p.shape[a / 4u][a % 4u];
        let o = rem % extent;
        rem = rem / extent;
        se = se + o * p.src_strides[a / 4u][a % 4u];
        de = de + o * p.dst_strides[a / 4u][a % 4u];
    }
    let v = (src[se / 2u] >> ((se & 1u) * 16u)) & 0xffffu;
    let sh = (de & 1u) * 16u;
    atomicAnd(&dst[de / 2u], ~(0xffffu << sh));
    atomicOr(&dst[de / 2u], v << sh);
}
