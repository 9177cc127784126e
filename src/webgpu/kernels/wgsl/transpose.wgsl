// A copy whose source walks memory across the output's rows: out
// (contiguous) seen as [batch..., rows, cols] where x's stride along rows
// is small (typically 1) and along cols large, e.g. x = y^T. Reading x in
// out's order would touch one element per cache line; instead each
// workgroup stages a TILE x TILE tile in workgroup memory: it reads the
// tile with neighbouring threads on neighbouring rows (x's contiguous
// direction), then writes it with neighbouring threads on neighbouring
// columns (out's contiguous direction). The tile rows are TILE + 1 floats
// apart so that the column-wise reads of the second phase hit distinct
// memory banks.
// Prelude constants: TILE (32 or 64). Library: transpose_tile (Params,
// the axes, where a workgroup's tile lies). Workgroup: 32 x 8 threads.

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

var<workgroup> tile: array<f32, TILE * (TILE + 1u)>;

@compute @workgroup_size(32, 8)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) tid: vec3<u32>) {
    let g = wid.x + wid.y * nwg.x;
    if (g >= p.tiles_r * p.tiles_c * p.nbatch) {
        return; // past the end of the 2-D fold; uniform per workgroup
    }
    let at = tile_at(g);

    // Whole tiles (all but the edges) skip the per-element bounds checks;
    // the branch is uniform per workgroup.
    let whole = at.r0 + TILE <= p.rows && at.c0 + TILE <= p.cols;
    // Read: tid.x runs along rows (x's contiguous direction).
    if (whole) {
        for (var j = tid.y; j < TILE; j = j + 8u) {
            let xc = at.xb + (at.c0 + j) * p.x_col_stride + at.r0 * p.x_row_stride;
            for (var q = tid.x; q < TILE; q = q + 32u) {
                tile[j * (TILE + 1u) + q] = x[xc + q * p.x_row_stride];
            }
        }
    } else {
        for (var j = tid.y; j < TILE; j = j + 8u) {
            for (var q = tid.x; q < TILE; q = q + 32u) {
                let r = at.r0 + q;
                let c = at.c0 + j;
                if (r < p.rows && c < p.cols) {
                    tile[j * (TILE + 1u) + q] = x[at.xb + r * p.x_row_stride + c * p.x_col_stride];
                }
            }
        }
    }
    workgroupBarrier();
    // Write: tid.x runs along cols (out's contiguous direction).
    if (whole) {
        for (var j = tid.y; j < TILE; j = j + 8u) {
            let orow = at.ob + (at.r0 + j) * p.out_row_stride + at.c0;
            for (var q = tid.x; q < TILE; q = q + 32u) {
                out[orow + q] = tile[q * (TILE + 1u) + j];
            }
        }
    } else {
        for (var j = tid.y; j < TILE; j = j + 8u) {
            for (var q = tid.x; q < TILE; q = q + 32u) {
                let r = at.r0 + j;
                let c = at.c0 + q;
                if (r < p.rows && c < p.cols) {
                    out[at.ob + r * p.out_row_stride + c] = tile[q * (TILE + 1u) + j];
                }
            }
        }
    }
}
