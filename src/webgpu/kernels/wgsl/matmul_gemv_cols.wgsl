// Vector-matrix products whose outputs are contiguous in the matrix:
// out[b, j] = sum_k v[b, k] * u[b, k, j] with u's rows (along k) made of
// whole aligned vec4s (x @ B for a row-major B). Threads run across the
// outputs, each owning 4 consecutive columns, so a subgroup reads whole
// rows of u; a workgroup of WG threads is CT column threads (4 * CT
// outputs) times KL = WG / CT lanes that split k, and the lanes' sums
// meet in workgroup memory. When the columns alone would give the device
// too few workgroups, k is also cut into k_splits ranges across
// workgroups: PASS 1 then writes partial sums, partial[(b * k_splits + s)
// * n + j], and PASS 2 adds them up (one thread per output).
//
// Prelude constants: WG, CT (a power of two dividing WG), PASS (1 or 2),
// UNROLL (rows of u in flight per lane and step).
// Bindings: PASS 1: u (vec4s), v (scalars), out (the output, or the
// partials when k_splits > 1). PASS 2: partials (bound as u and as v,
// read through v), out.

struct Params {
    batch: u32,
    n: u32,              // outputs per batch entry, a multiple of 4
    k: u32,
    out_offset: u32,
    u_offset: u32,       // elements; multiples of 4 from here ...
    u_batch_stride: u32,
    u_k_stride: u32,     // ... to here
    v_offset: u32,
    v_batch_stride: u32,
    v_k_stride: u32,
    col_groups: u32,     // workgroups across n per batch entry
    k_splits: u32,
    k_chunk: u32,        // k per split
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> u4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

const KL: u32 = WG / CT;

var<workgroup> partial: array<vec4<f32>, WG>;

fn products(w: u32, lid: u32) {
    let per_batch = p.col_groups * p.k_splits;
    if (w >= p.batch * per_batch) { return; } // uniform: the whole workgroup leaves
    let batch = w / per_batch;
    let split = (w % per_batch) / p.col_groups;
    let group = w % p.col_groups;
    let ct = lid % CT;
    let kl = lid / CT;
    let col4 = group * CT + ct; // this thread's vec4 of outputs
    let valid = col4 * 4u < p.n;

    var acc: array<vec4<f32>, UNROLL>;
    for (var q = 0u; q < UNROLL; q++) { acc[q] = vec4<f32>(0.0); }
    if (valid) {
        let k_end = min(p.k, (split + 1u) * p.k_chunk);
        let row4 = p.u_k_stride / 4u;
        let u_base = (p.u_offset + batch * p.u_batch_stride) / 4u + col4;
        let v_base = p.v_offset + batch * p.v_batch_stride;
        var k = split * p.k_chunk + kl;
        for (; k + (UNROLL - 1u) * KL < k_end; k += UNROLL * KL) {
            for (var q = 0u; q < UNROLL; q++) {
                let kk = k + q * KL;
                acc[q] = fma(u4[u_base + kk * row4], vec4<f32>(v[v_base + kk * p.v_k_stride]), acc[q]);
            }
        }
        for (; k < k_end; k += KL) {
            acc[0] = fma(u4[u_base + k * row4], vec4<f32>(v[v_base + k * p.v_k_stride]), acc[0]);
        }
        for (var q = 1u; q < UNROLL; q++) { acc[0] += acc[q]; }
    }

    partial[lid] = acc[0];
    for (var half = KL / 2u; half > 0u; half = half >> 1u) {
        workgroupBarrier();
        if (kl < half) {
            partial[lid] = partial[lid] + partial[lid + half * CT];
        }
    }
    workgroupBarrier();
    if (kl == 0u && valid) {
        let total = partial[ct];
        var at: u32;
        if (p.k_splits == 1u) {
            at = p.out_offset + batch * p.n + col4 * 4u;
        } else {
            at = (batch * p.k_splits + split) * p.n + col4 * 4u;
        }
        out[at] = total.x;
        out[at + 1u] = total.y;
        out[at + 2u] = total.z;
        out[at + 3u] = total.w;
    }
}

fn combine_splits(w: u32, lid: u32) {
    let g = w * WG + lid;
    if (g >= p.batch * p.n) { return; }
    let batch = g / p.n;
    let j = g % p.n;
    var total = 0.0;
    for (var s = 0u; s < p.k_splits; s++) {
        total += v[(batch * p.k_splits + s) * p.n + j];
    }
    out[p.out_offset + g] = total;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = wid.x + wid.y * nwg.x;
    if (PASS == 1u) {
        products(w, lid);
    } else {
        combine_splits(w, lid);
    }
}
