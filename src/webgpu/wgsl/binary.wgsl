// out = a op b, elementwise, a and b already expanded to out's shape
// (broadcast axes have stride 0). Ways of walking the elements:
//   MODE 2: a, b, out contiguous, offsets and n multiples of 4: one vec4
//           per thread (T = vec4<f32>, n and offsets counted in vec4s);
//   MODE 1: all contiguous: one element per thread (T = f32);
//   MODE 0: strided (shape, a_strides, b_strides; ndim <= 8).
// Prelude constants: OP (0 add, 1 sub, 2 mul, 3 div), MODE, WG, `alias T`.

struct Params {
    n: u32,
    ndim: u32,
    a_offset: u32,
    b_offset: u32,
    out_offset: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
    shape: array<vec4<u32>, 2>,
    a_strides: array<vec4<u32>, 2>,
    b_strides: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<T>;
@group(0) @binding(2) var<storage, read> b: array<T>;
@group(0) @binding(3) var<storage, read_write> out: array<T>;

fn apply(u: T, v: T) -> T {
    switch OP {
        case 0u: { return u + v; }
        case 1u: { return u - v; }
        case 2u: { return u * v; }
        default: { return u / v; }
    }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * nwg.x) * WG + lid;
    if (i >= p.n) {
        return;
    }
    var ia = p.a_offset + i;
    var ib = p.b_offset + i;
    if (MODE == 0u) {
        var rem = i;
        ia = p.a_offset;
        ib = p.b_offset;
        for (var d = p.ndim; d > 0u; d = d - 1u) {
            let axis = d - 1u;
            let extent = p.shape[axis / 4u][axis % 4u];
            let c = rem % extent;
            ia = ia + c * p.a_strides[axis / 4u][axis % 4u];
            ib = ib + c * p.b_strides[axis / 4u][axis % 4u];
            rem = rem / extent;
        }
    }
    out[p.out_offset + i] = apply(a[ia], b[ib]);
}
