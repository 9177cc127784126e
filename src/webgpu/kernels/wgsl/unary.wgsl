// out = apply(x), elementwise, out contiguous. Ways of walking the elements:
//   MODE 2: x and out contiguous with offsets that are multiples of 4, in
//           vec4 units (T = vec4<S>): n whole vec4s, then, when tail > 0,
//           one last vec4 of which only the first tail lanes belong to out
//           (the other lanes of out are read and written back unchanged;
//           those of x are read within its buffer, whose size is a
//           multiple of 16 bytes, and dropped);
//   MODE 1: x and out contiguous, in scalar units (T = S), tail 0;
//   MODE 0: x strided (shape / x_strides, ndim <= 8), T = S.
// Each thread handles VPT units, WG apart (a warp's accesses stay
// contiguous); a workgroup whose units are all in range loads them all
// before it stores any.
// Prelude constants: OP (see apply), MODE, WG, VPT, `alias T / U / B = ...;`
// (f32 or vec4<f32>, and the matching u32 and bool types) and LANES
// (T(0, 1, 2, 3)), then the unary_math library (apply).

struct Params {
    n: u32,
    tail: u32,
    ndim: u32,
    x_offset: u32,   // in units of T
    out_offset: u32, // in units of T
    p0: u32,         // the op's parameters (bits of S)
    p1: u32,
    pad0: u32,
    shape: array<vec4<u32>, 2>,     // uniform arrays need 16-byte elements
    x_strides: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<T>;
@group(0) @binding(2) var<storage, read_write> out: array<TO>;

// Where unit i of out comes from in x.
fn source(i: u32) -> u32 {
    if (MODE != 0u) {
        return p.x_offset + i;
    }
    var rem = i;
    var src = p.x_offset;
    for (var d = p.ndim; d > 0u; d = d - 1u) {
        let axis = d - 1u;
        let extent = p.shape[axis / 4u][axis % 4u];
        src = src + (rem % extent) * p.x_strides[axis / 4u][axis % 4u];
        rem = rem / extent;
    }
    return src;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let first = (wid.x + wid.y * nwg.x) * (WG * VPT) + lid;
    if (first + (VPT - 1u) * WG < p.n) {
        var v: array<T, VPT>;
        for (var k = 0u; k < VPT; k = k + 1u) {
            v[k] = x[source(first + k * WG)];
        }
        for (var k = 0u; k < VPT; k = k + 1u) {
            out[p.out_offset + first + k * WG] = apply(v[k]);
        }
        return;
    }
    for (var k = 0u; k < VPT; k = k + 1u) {
        let i = first + k * WG;
        if (i < p.n) {
            out[p.out_offset + i] = apply(x[source(i)]);
        } else if (i == p.n && p.tail != 0u) {
            let keep = LANES >= U(p.tail);
            out[p.out_offset + i] = select(apply(x[p.x_offset + i]), out[p.out_offset + i], keep);
        }
    }
}
