// out = apply(a, b), elementwise, out contiguous; a and b are already
// expanded to out's shape (broadcast axes have stride 0). Ways of walking:
//   MODE 2: in vec4 units (T = vec4<S>): n whole vec4s of out, then, when
//           tail > 0, one last vec4 of which only the first tail lanes
//           belong to out (the other lanes are read and written back
//           unchanged);
//   MODE 1: in scalar units (T = S), tail 0;
//   MODE 0: strided (shape, a_strides, b_strides; ndim <= 8), T = S.
// In MODE 1 and 2 each operand is read in one of four ways (A_MODE,
// B_MODE), out being [rows, inner] (inner in units of T):
//   0 contiguous like out: offset + i              (binding of T)
//   1 one scalar:          element offset          (binding of S, splat)
//   2 a row repeated:      offset + i % inner      (binding of T)
//   3 a column repeated:   element offset + (i / inner) * col_stride
//                                                   (binding of S, splat)
//   4 (b only) a scalar given in p.b_bits, the bits of an S (the binding
//     of b is not read).
// Each thread handles VPT units, WG apart; a workgroup whose units are all
// in range loads them all before it stores any.
// Prelude: MODE, WG, VPT, A_MODE, B_MODE, `alias S / T / U / B / TO / TA /
// TB = ...;` (lane scalar and unit, the matching u32 and bool units, the
// output unit, the binding types of a and b), LANES (U(0, 1, 2, 3)) and
// `fn apply(u: T, v: T) -> TO` (generated from the op's row of ops.def),
// then the helper library of the lanes (ew_float, ew_int or ew_bool) and
// ew_strided_index (MODE 0's walk).

struct Params {
    n: u32,
    tail: u32,
    ndim: u32,
    inner: u32,
    a_offset: u32,
    b_offset: u32,
    out_offset: u32,
    a_col_stride: u32,
    b_col_stride: u32,
    b_bits: u32,
    pad1: u32,
    pad2: u32,
    shape: array<vec4<u32>, 2>,
    a_strides: array<vec4<u32>, 2>,
    b_strides: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<TA>;
@group(0) @binding(2) var<storage, read> b: array<TB>;
@group(0) @binding(3) var<storage, read_write> out: array<TO>;

fn operand_index(mode: u32, offset: u32, col_stride: u32, i: u32) -> u32 {
    switch mode {
        case 0u: { return offset + i; }
        case 1u: { return offset; }
        case 2u: { return offset + i % p.inner; }
        default: { return offset + (i / p.inner) * col_stride; }
    }
}

// Indices into a and b of unit i of out.
fn sources(i: u32) -> vec2<u32> {
    if (MODE != 0u) {
        return vec2<u32>(operand_index(A_MODE, p.a_offset, p.a_col_stride, i),
                         operand_index(B_MODE, p.b_offset, p.b_col_stride, i));
    }
    return strided_sources(i);
}

fn load_b(index: u32) -> T {
    if (B_MODE == 4u) {
        return T(bitcast<S>(p.b_bits));
    }
    return T(b[index]);
}

fn value(i: u32) -> TO {
    let s = sources(i);
    return apply(T(a[s.x]), load_b(s.y));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let first = (wid.x + wid.y * nwg.x) * (WG * VPT) + lid;
    if (first + (VPT - 1u) * WG < p.n) {
        var u: array<T, VPT>;
        var v: array<T, VPT>;
        for (var k = 0u; k < VPT; k = k + 1u) {
            let s = sources(first + k * WG);
            u[k] = T(a[s.x]);
            v[k] = load_b(s.y);
        }
        for (var k = 0u; k < VPT; k = k + 1u) {
            out[p.out_offset + first + k * WG] = apply(u[k], v[k]);
        }
        return;
    }
    for (var k = 0u; k < VPT; k = k + 1u) {
        let i = first + k * WG;
        if (i < p.n) {
            out[p.out_offset + i] = value(i);
        } else if (i == p.n && p.tail != 0u) {
            let keep = LANES >= U(p.tail);
            out[p.out_offset + i] = select(value(i), out[p.out_offset + i], keep);
        }
    }
}
