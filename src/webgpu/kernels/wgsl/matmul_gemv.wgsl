// Matrix-vector products: the matmul cases with M == 1 or N == 1, where a
// tiled kernel would compute mostly padding. Each output j of batch entry
// b is a dot product over k of
//   u[u_offset + b * u_batch_stride + j * u_out_stride + k * u_k_stride]
//   v[v_offset + b * v_batch_stride + k * v_k_stride]
// (for M == 1, u is the matrix b and v the row of a; for N == 1, u is a and
// v the column of b), written to out[out_offset + b * outputs + j].
//
// A workgroup of 256 threads takes OUTS outputs, LANES_K = 256 / OUTS
// threads each, which split k; their partial sums meet in workgroup
// memory. Prelude constants: OUTS; K_FAST (consecutive threads take
// consecutive k, for u with unit k stride; else consecutive outputs).

struct Params {
    batch: u32,
    outputs: u32,
    k: u32,
    out_offset: u32,
    u_offset: u32,
    u_batch_stride: u32,
    u_out_stride: u32,
    u_k_stride: u32,
    v_offset: u32,
    v_batch_stride: u32,
    v_k_stride: u32,
    groups_per_batch: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> u: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

const LANES_K: u32 = 256u / OUTS;

var<workgroup> partial: array<f32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = wid.x + wid.y * nwg.x;
    if (w >= p.batch * p.groups_per_batch) { return; } // uniform

    let batch = w / p.groups_per_batch;
    var lane: u32;
    var slot: u32;
    if (K_FAST) { lane = lid % LANES_K; slot = lid / LANES_K; } else { slot = lid % OUTS; lane = lid / OUTS; }
    let j = (w % p.groups_per_batch) * OUTS + slot;

    var acc = 0.0;
    if (j < p.outputs) {
        var ui = p.u_offset + batch * p.u_batch_stride + j * p.u_out_stride + lane * p.u_k_stride;
        var vi = p.v_offset + batch * p.v_batch_stride + lane * p.v_k_stride;
        let u_step = LANES_K * p.u_k_stride;
        let v_step = LANES_K * p.v_k_stride;
        for (var k = lane; k < p.k; k += LANES_K) {
            acc = fma(u[ui], v[vi], acc);
            ui += u_step;
            vi += v_step;
        }
    }
    partial[lid] = acc;
    workgroupBarrier();
    if (lid < OUTS) {
        let jj = (w % p.groups_per_batch) * OUTS + lid;
        if (jj < p.outputs) {
            var total = 0.0;
            for (var l = 0u; l < LANES_K; l++) {
                if (K_FAST) { total += partial[lid * LANES_K + l]; } else { total += partial[l * OUTS + lid]; }
            }
            out[p.out_offset + batch * p.outputs + jj] = total;
        }
    }
}
