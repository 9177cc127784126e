// Sort, step 1: pairs[r * P + j] = (key, j) for element j of row r of x
// (j < n), and (max, max) for the padding up to P (a power of two), which
// sorts after every real pair. key orders the values as wt_sort_key does
// (floats by value with -0 == +0 and every NaN above +inf; i32 by value;
// masks 0 < 1); DESC inverts it, so that one ascending sort serves both
// directions and ties stay in position order.
// Rows are the leading axes of x (ndim of them, shape / strides), the
// sorted axis has extent n and stride inner.
// Prelude constants: KIND (0 f32, 1 f16, 2 i32, 3 mask), DESC (bool), WG.

struct Params {
    total: u32, // rows * P
    n: u32,
    log2_p: u32,
    ndim: u32,
    x_offset: u32,
    inner: u32,
    pad0: u32,
    pad1: u32,
    shape: array<vec4<u32>, 2>,
    strides: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read_write> pairs: array<vec2<u32>>;

fn sort_key(bits: u32) -> u32 {
    if (KIND == 1u) {
        let h = bits & 0xffffu;
        if ((h & 0x7fffu) > 0x7c00u) {
            return 0xffffffffu;
        }
        if ((h & 0x7fffu) == 0u) {
            return 0x80000000u;
        }
        let k = select(h | 0x8000u, ~h & 0xffffu, (h & 0x8000u) != 0u);
        return k << 16u;
    }
    if (KIND == 0u) {
        if ((bits & 0x7fffffffu) > 0x7f800000u) {
            return 0xffffffffu;
        }
        if ((bits & 0x7fffffffu) == 0u) {
            return 0x80000000u;
        }
        return select(bits | 0x80000000u, ~bits, (bits & 0x80000000u) != 0u);
    }
    if (KIND == 2u) {
        return bits ^ 0x80000000u;
    }
    return bits;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = (wid.x + wid.y * nwg.x) * WG + lid;
    if (t >= p.total) {
        return;
    }
    let j = t & ((1u << p.log2_p) - 1u);
    if (j >= p.n) {
        pairs[t] = vec2<u32>(0xffffffffu, 0xffffffffu);
        return;
    }
    var rem = t >> p.log2_p;
    var e = p.x_offset + j * p.inner;
    for (var d = p.ndim; d > 0u; d = d - 1u) {
        let a = d - 1u;
        let extent = p.shape[a / 4u][a % 4u];
        e = e + (rem % extent) * p.strides[a / 4u][a % 4u];
        rem = rem / extent;
    }
    var bits: u32;
    if (KIND == 1u) {
        bits = (x[e / 2u] >> ((e & 1u) * 16u)) & 0xffffu;
    } else {
        bits = x[e];
    }
    var key = sort_key(bits);
    if (DESC) {
        key = ~key;
    }
    pairs[t] = vec2<u32>(key, j);
}
