// The tiled transpose of transpose.wgsl moving 16 bytes per access: used
// when x is contiguous along rows and every extent, stride and offset is a
// multiple of 4, so that 4 consecutive rows of x and 4 consecutive columns
// of out are each one vec4. A TILE x TILE tile is read as columns of
// TILE/4 vec4s, stored transposed in workgroup memory (rows TILE + 1 floats
// apart, so both phases stay free of bank conflicts), and written as rows
// of TILE/4 vec4s. Edges are guarded per vec4: with extents that are
// multiples of 4 a vec4 is either wholly inside or wholly outside.
// Prelude constants: TILE (32 or 64). Library: transpose_tile (Params,
// shared with transpose.wgsl; strides and offsets in floats). Workgroup:
// 256 threads.

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
    if (g >= p.tiles_r * p.tiles_c * p.nbatch) {
        return; // past the end of the 2-D fold; uniform per workgroup
    }
    let at = tile_at(g);

    // Read: thread i takes vec4 i % QUADS of tile column i / QUADS; all
    // loads are issued before any is stored.
    var v: array<vec4<f32>, PER_THREAD>;
    for (var k = 0u; k < PER_THREAD; k = k + 1u) {
        let i = tid + k * 256u;
        let r = at.r0 + (i % QUADS) * 4u;
        let c = at.c0 + i / QUADS;
        if (r < p.rows && c < p.cols) {
            v[k] = x[(at.xb + c * p.x_col_stride + r) / 4u];
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
        let r = at.r0 + j;
        let c = at.c0 + q;
        if (r < p.rows && c < p.cols) {
            out[(at.ob + r * p.out_row_stride + c) / 4u] =
                vec4<f32>(tile[q * PITCH + j], tile[(q + 1u) * PITCH + j],
                          tile[(q + 2u) * PITCH + j], tile[(q + 3u) * PITCH + j]);
        }
    }
}
