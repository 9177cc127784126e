// f16 matrix-vector product: out[r] = sum_k u[r, k] v[k] for the rows of u
// (f16, each row contiguous along k) and v (f16, contiguous), accumulated
// in f32, rounded once to f16. TPR threads share a row and read 16 bytes
// (eight halves) of it at a time, ROWS = WG / TPR rows a workgroup; the
// partial sums meet in workgroup memory. Rows are written in pairs (one
// word): for an odd row count the last word's upper half is 0 (out is a
// fresh tensor that owns its whole buffer). Offsets, strides and k are
// multiples of 8 elements.
// Prelude: WG, TPR. Library: f16_hw or f16_bits (unpack_halves, pack_halves).

struct Params {
    rows: u32,            // batch * rows_per_batch
    rows_per_batch: u32,
    k: u32,
    out_word: u32,        // out_offset / 2
    u_offset: u32,
    u_batch_stride: u32,
    u_row_stride: u32,
    v_offset: u32,
    v_batch_stride: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> u: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> v: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;

const ROWS: u32 = WG / TPR;
var<workgroup> partial: array<f32, WG>;

fn dot8(a: vec4<u32>, b: vec4<u32>) -> f32 {
    let s = unpack_halves(a.x) * unpack_halves(b.x) + unpack_halves(a.y) * unpack_halves(b.y) +
            unpack_halves(a.z) * unpack_halves(b.z) + unpack_halves(a.w) * unpack_halves(b.w);
    return s.x + s.y;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if (g * ROWS >= p.rows) { return; } // uniform
    let row = g * ROWS + lid / TPR;
    let lane = lid % TPR;
    var s = 0.0;
    if (row < p.rows) {
        let batch = row / p.rows_per_batch;
        let r = row % p.rows_per_batch;
        let ub = (p.u_offset + batch * p.u_batch_stride + r * p.u_row_stride) / 8u;
        let vb = (p.v_offset + batch * p.v_batch_stride) / 8u;
        let n8 = p.k / 8u;
        var s2 = 0.0;
        var i = lane;
        for (; i + TPR < n8; i += 2u * TPR) {
            s += dot8(u[ub + i], v[vb + i]);
            s2 += dot8(u[ub + i + TPR], v[vb + i + TPR]);
        }
        if (i < n8) { s += dot8(u[ub + i], v[vb + i]); }
        s += s2;
    }
    partial[lid] = s;
    workgroupBarrier();
    for (var h = TPR / 2u; h > 0u; h /= 2u) {
        if (lane < h) { partial[lid] += partial[lid + h]; }
        workgroupBarrier();
    }
    if (lid < ROWS / 2u) {
        let r0 = g * ROWS + 2u * lid;
        if (r0 < p.rows) {
            let hi = select(0.0, partial[(2u * lid + 1u) * TPR], r0 + 1u < p.rows);
            out[p.out_word + r0 / 2u] = pack_halves(vec2<f32>(partial[2u * lid * TPR], hi));
        }
    }
}
