// Column reduction by blocks: the reduce_columns case (rows adjacent,
// row_stride 1; rows, elem_stride and x_offset multiples of 4, so rows
// 4q..4q+3 of step r are one aligned vec4), with a workgroup per (band
// of BANDQ quads, block of chunk_len steps). The workgroup's threads are
// BANDQ quads by LANES = WG / BANDQ lanes: lane l of the block sums steps
// l, l + LANES, ... with four vec4 accumulators (four loads in flight),
// consecutive threads of a lane read consecutive vec4s (coalesced), and
// the lanes then meet in a fixed tree in workgroup memory. One partial
// per column and block: a [blocks, rows] matrix for the next pass, so a
// bias gradient of 16384 steps takes two passes (blocks, then one block
// over their partials) instead of reduce_columns' three. The combine
// order depends on the shape alone (deterministic).
//
// The prelude gives T, T4, FLOAT, OP, SHIFT (never set here), map4,
// finish, X1, X4, load1, load4 as for reduce_rows.wgsl, WG (threads per
// workgroup) and BANDQ (quads a band, a power of two dividing WG); the
// library reduce_terms.wgsl the combine.

struct Params {
    work: u32,        // bands * blocks: the workgroups that have work
    rows: u32,
    chunk_len: u32,   // steps per block (the last one may be shorter)
    row_len: u32,
    row_stride: u32,  // 1
    elem_stride: u32,
    x_offset: u32,
    out_offset: u32,
    divisor: f32,     // n of the op's finish
    identity: u32,    // bits of the op's identity
    rows_per_batch: u32, // the rest: reduce_rows' fields, unused here
    batch_stride: u32,
    v_offset: u32,
    v_batch_stride: u32,
    shift_offset: u32,
    pad1: u32,
}

const LANES: u32 = WG / BANDQ;

@group(0) @binding(0) var<uniform> p: Params;
// The same storage twice: the prelude's load1 names x1; only x4 is read.
@group(0) @binding(1) var<storage, read> x4: array<X4>;
@group(0) @binding(2) var<storage, read> x1: array<X1>;
@group(0) @binding(3) var<storage, read_write> out: array<T>;

var<workgroup> lanes_total: array<T4, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = wid.x + wid.y * nwg.x;
    if (w >= p.work) { return; } // the whole workgroup: the barriers stay uniform

    let quads = p.rows / 4u;
    let bands = (quads + BANDQ - 1u) / BANDQ;
    let band = w % bands;
    let block = w / bands;
    let q = lid % BANDQ;
    let lane = lid / BANDQ;
    let quad = band * BANDQ + q;
    let start = block * p.chunk_len;
    let end = min(p.row_len, start + p.chunk_len);
    let step = p.elem_stride / 4u;
    let lane_step = LANES * step;
    let s = T(0);
    let id = T4(bitcast<T>(p.identity));
    var acc0 = id;
    var acc1 = id;
    var acc2 = id;
    var acc3 = id;
    if (quad < quads) {
        var r = start + lane;
        var at = (p.x_offset + quad * 4u) / 4u + r * step;
        for (; r + 3u * LANES < end; r += 4u * LANES) {
            acc0 = combine4(acc0, map4(load4(at), s));
            acc1 = combine4(acc1, map4(load4(at + lane_step), s));
            acc2 = combine4(acc2, map4(load4(at + 2u * lane_step), s));
            acc3 = combine4(acc3, map4(load4(at + 3u * lane_step), s));
            at += 4u * lane_step;
        }
        for (; r < end; r += LANES) {
            acc0 = combine4(acc0, map4(load4(at), s));
            at += lane_step;
        }
    }
    lanes_total[lid] = combine4(combine4(acc0, acc1), combine4(acc2, acc3));
    workgroupBarrier();
    for (var width = LANES / 2u; width > 0u; width = width / 2u) {
        if (lane < width) {
            lanes_total[lid] = combine4(lanes_total[lid], lanes_total[lid + width * BANDQ]);
        }
        workgroupBarrier();
    }
    if (lane == 0u && quad < quads) {
        let a = lanes_total[q];
        let o = p.out_offset + block * p.rows + quad * 4u;
        out[o] = finish(a.x, s);
        out[o + 1u] = finish(a.y, s);
        out[o + 2u] = finish(a.z, s);
        out[o + 3u] = finish(a.w, s);
    }
}
