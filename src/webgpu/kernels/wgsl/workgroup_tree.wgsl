// Max and sum over a workgroup by a tree in workgroup memory, every thread
// getting the result: the library (wg_launch.libraries) of the one-query
// attention kernels (attention_decode.wgsl, rope_kv_attention.wgsl). It
// uses their WG (threads, a power of two) and `red: array<f32, WG>` in
// workgroup memory; call from uniform control flow.

fn reduce_max(lid: u32, x: f32) -> f32 {
    red[lid] = x;
    workgroupBarrier();
    for (var h = WG / 2u; h > 0u; h /= 2u) {
        if (lid < h) { red[lid] = max(red[lid], red[lid + h]); }
        workgroupBarrier();
    }
    let r = red[0];
    workgroupBarrier(); // red is reused
    return r;
}

fn reduce_sum(lid: u32, x: f32) -> f32 {
    red[lid] = x;
    workgroupBarrier();
    for (var h = WG / 2u; h > 0u; h /= 2u) {
        if (lid < h) { red[lid] += red[lid + h]; }
        workgroupBarrier();
    }
    let r = red[0];
    workgroupBarrier();
    return r;
}
