// out (contiguous, n elements) = x read through a per-axis map (wt_remap in
// core/internal.h): along axis a the source index is start[a] +- o_a; one
// outside [0, x extent) is resolved by the axis's mode (0 constant: the
// fill value, 1 reflect, 2 replicate, 3 circular; +4: the axis is
// flipped); then tri 1 / 2 keeps the lower / upper triangle of the last
// two axes (col - row <= / >= diag) and fills the rest. Every index is
// clamped into x, whatever the parameters.
// Elements are moved as bits (library mv_words).
// Prelude constants: ELEM2 (bool), WG.

struct Params {
    n: u32,
    ndim: u32,
    x_offset: u32,
    fill: u32,
    tri: u32,
    diag: i32,
    pad0: u32,
    pad1: u32,
    out_shape: array<vec4<u32>, 2>,
    x_shape: array<vec4<u32>, 2>,
    x_strides: array<vec4<u32>, 2>,
    start: array<vec4<i32>, 2>,
    axis_mode: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

// The bits of out's element i.
fn value(i: u32) -> u32 {
    var rem = i;
    var src = p.x_offset;
    var fill = false;
    var row = 0u;
    var col = 0u;
    for (var d = p.ndim; d > 0u; d = d - 1u) {
        let a = d - 1u;
        let extent = p.out_shape[a / 4u][a % 4u];
        let o = rem % extent;
        rem = rem / extent;
        if (a + 1u == p.ndim) {
            col = o;
        }
        if (a + 2u == p.ndim) {
            row = o;
        }
        let n = i32(p.x_shape[a / 4u][a % 4u]);
        let am = p.axis_mode[a / 4u][a % 4u];
        var j = p.start[a / 4u][a % 4u] + select(i32(o), -i32(o), (am & 4u) != 0u);
        if (j < 0 || j >= n) {
            let mode = am & 3u;
            if (mode == 0u || n == 0) {
                fill = true;
            } else if (mode == 1u) {
                j = select(2 * (n - 1) - j, -j, j < 0);
            } else if (mode == 2u) {
                j = select(n - 1, 0, j < 0);
            } else {
                j = ((j % n) + n) % n;
            }
            j = clamp(j, 0, max(n - 1, 0));
        }
        src = src + u32(j) * p.x_strides[a / 4u][a % 4u];
    }
    if (p.tri == 1u && i32(col) - i32(row) > p.diag) {
        fill = true;
    }
    if (p.tri == 2u && i32(col) - i32(row) < p.diag) {
        fill = true;
    }
    if (fill) {
        return p.fill;
    }
    return x_elem(src);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    write_outputs((wid.x + wid.y * nwg.x) * WG + lid);
}
