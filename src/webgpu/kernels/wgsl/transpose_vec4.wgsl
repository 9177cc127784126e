// The tiled transpose of transpose.wgsl moving 16 bytes per access: used
// when x is contiguous along rows and every extent, stride and offset is a
// multiple of 4, so that 4 consecutive rows of x and 4 consecutive columns
// of out are each one vec4. A TILE x TILE tile is read as columns of
// TILE/4 vec4s, stored transposed in workgroup memory (rows TILE + 1 floats
// apart, so both phases stay free of bank conflicts), and written as rows
// of TILE/4 vec4s. Edges are guarded per vec4: with extents that are
// multiples of 4 a vec4 is either wholly inside or wholly outside.
// Same Params as transpose.wgsl; strides and offsets are in floats.
// Prelude constants: TILE (32 or 64). Workgroup: 256 threads.

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

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<f32>>;

const QUADS: u32 = TILE / 4u;        // vec4s along one tile column or row
const PER_THREAD: u32 = TILE * QUADS / 256u;
const PITCH: u32 = TILE + 1u;

var<workgroup> tile: array<f32, TILE * (TILE + 1u)>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let g = wid.x + wid.y * nwg.x;
    let per_batch = p.tiles_r * p.tiles_c;
    if (g >= per_batch * p.nbatch) {
        return; // past the end of the 2-D fold; uniform per workgroup
    }
    let t = g % per_batch;
    let r0 = (t / p.tiles_c) * TILE;
    let c0 = (t % p.tiles_c) * TILE;

    var rem = g / per_batch;
    var xb = p.x_offset;
    var ob = p.out_offset;
    for (var d = p.nbatch_dims; d > 0u; d = d - 1u) {
        let axis = d - 1u;
        let extent = p.batch_shape[axis / 4u][axis % 4u];
        let c = rem % extent;
        xb = xb + c * p.batch_x_strides[axis / 4u][axis % 4u];
        ob = ob + c * p.batch_out_strides[axis / 4u][axis % 4u];
        rem = rem / extent;
    }

    // Read: thread i takes vec4 i % QUADS of tile column i / QUADS; all
    // loads are issued before any is stored.
    var v: array<vec4<f32>, PER_THREAD>;
    for (var k = 0u; k < PER_THREAD; k = k + 1u) {
        let i = tid + k * 256u;
        let r = r0 + (i % QUADS) * 4u;
        let c = c0 + i / QUADS;
        if (r < p.rows && c < p.cols) {
            v[k] = x[(xb + c * p.x_col_stride + r) / 4u];
        }
    }
    for (var k = 0u; k < PER_THREAD; k = k + 1u) {
        let i = tid + k * 256u;
        let base = (i / QUADS) * PITCH + (i % QUADS) * 4u;
        tile[base] = v[k].x;
        tile[base + 1u] = v[k].y;
        tile[base + 2u] = v[k].z;
        tile[base + 3u] = v[k].w;
    }
    workgroupBarrier();
    // Write: thread i takes vec4 i % QUADS of out's tile row i / QUADS.
    for (var k = 0u; k < PER_THREAD; k = k + 1u) {
        let i = tid + k * 256u;
        let j = i / QUADS;            // row within the tile
        let q = (i % QUADS) * 4u;     // first column within the tile
        let r = r0 + j;
        let c = c0 + q;
        if (r < p.rows && c < p.cols) {
            out[(ob + r * p.out_row_stride + c) / 4u] =
                vec4<f32>(tile[q * PITCH + j], tile[(q + 1u) * PITCH + j],
                          tile[(q + 2u) * PITCH + j], tile[(q + 3u) * PITCH + j]);
        }
    }
}
