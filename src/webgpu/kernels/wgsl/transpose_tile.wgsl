// The tiled transposes' shared part, a library placed before the bodies
// of transpose.wgsl and transpose_vec4.wgsl (kernels/elementwise.c): their
// Params and where a workgroup's tile lies. The axes of out are: batch
// axes (nbatch_dims of them, any order), the rows axis and the cols axis
// (innermost in out); x walks the same axes with its own strides. Strides
// and offsets count floats. The prelude sets TILE.

struct Params {
    rows: u32,
    cols: u32,
    x_row_stride: u32,
    x_col_stride: u32,
    out_row_stride: u32,
    x_offset: u32,
    out_offset: u32,
    nbatch_dims: u32,
    tiles_r: u32,
    tiles_c: u32,
    nbatch: u32,
    pad0: u32,
    batch_shape: array<vec4<u32>, 2>,
    batch_x_strides: array<vec4<u32>, 2>,
    batch_out_strides: array<vec4<u32>, 2>,
}

// The first row and column of a tile, and its batch's first element in x
// and in out.
struct TileAt {
    r0: u32,
    c0: u32,
    xb: u32,
    ob: u32,
}

// Workgroup g's tile: g < tiles_r * tiles_c * nbatch (the body leaves
// first when g is past the end of the 2-D fold).
fn tile_at(g: u32) -> TileAt {
    let per_batch = p.tiles_r * p.tiles_c;
    let t = g % per_batch;
    var at: TileAt;
    at.r0 = (t / p.tiles_c) * TILE;
    at.c0 = (t % p.tiles_c) * TILE;
    var rem = g / per_batch;
    at.xb = p.x_offset;
    at.ob = p.out_offset;
    for (var d = p.nbatch_dims; d > 0u; d = d - 1u) {
        let axis = d - 1u;
        let extent = p.batch_shape[axis / 4u][axis % 4u];
        let c = rem % extent;
        at.xb = at.xb + c * p.batch_x_strides[axis / 4u][axis % 4u];
        at.ob = at.ob + c * p.batch_out_strides[axis / 4u][axis % 4u];
        rem = rem / extent;
    }
    return at;
}
