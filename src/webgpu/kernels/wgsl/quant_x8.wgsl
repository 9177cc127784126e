// x [M, K] (K a multiple of 32, contiguous rows) rounded to 8 bits for
// quant_gemv_x8.wgsl: per block of 32 elements the scale d = max |x| / 127,
// the 32 values round(x / d) as int8 four a word (element 4j + b in byte b
// of word j, eight words a block) and the block's own sum of x in f32 (for
// the formats' offsets and minimums, which then take x unrounded). Each
// value is off by at most d / 2. A thread a word, eight a block: x is
// small, so the pass is one short step of latency before the GEMV. A block
// holding an inf or a NaN (found from the bits: arithmetic on them is not
// reliable in WGSL) gets a NaN scale and sum, so every result of its row
// is NaN rather than a finite number made from a meaningless rounding.
// Prelude: none needed beyond the Params.

struct Params {
    m: u32, n: u32, k: u32, words: u32,
    x_offset: u32, w_offset: u32, b_offset: u32, pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> xq: array<u32>;
@group(0) @binding(3) var<storage, read_write> xds: array<vec2<f32>>;

var<workgroup> block_max: array<f32, 256>;
var<workgroup> block_sum: array<f32, 256>;
var<workgroup> block_bad: array<u32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let word = (wid.x + wid.y * nwg.x) * 256u + lid;
    let live = word < p.m * (p.k / 4u);
    var v = vec4<f32>(0.0);
    if (live) {
        let e = p.x_offset + 4u * word;
        v = vec4<f32>(x[e], x[e + 1u], x[e + 2u], x[e + 3u]);
    }
    let a = abs(v);
    block_max[lid] = max(max(a.x, a.y), max(a.z, a.w));
    block_sum[lid] = (v.x + v.y) + (v.z + v.w);
    let exponent = bitcast<vec4<u32>>(v) & vec4<u32>(0x7f800000u);
    block_bad[lid] = select(0u, 1u, any(exponent == vec4<u32>(0x7f800000u)));
    workgroupBarrier();
    // the block's eight words start at a multiple of 8 (256 is one of 8)
    let first = lid & ~7u;
    var amax = 0.0;
    var sum = 0.0;
    var bad = 0u;
    for (var j = 0u; j < 8u; j++) {
        amax = max(amax, block_max[first + j]);
        sum += block_sum[first + j];
        bad |= block_bad[first + j];
    }
    if (!live) {
        return;
    }
    let inv = select(0.0, 127.0 / amax, amax > 0.0);
    let q = bitcast<vec4<u32>>(vec4<i32>(clamp(round(v * inv), vec4<f32>(-127.0), vec4<f32>(127.0)))) & vec4<u32>(0xffu);
    xq[word] = q.x | (q.y << 8u) | (q.z << 16u) | (q.w << 24u);
    if ((lid & 7u) == 0u) {
        let nan = bitcast<f32>(0x7f800000u | (bad << 22u)); // a quiet NaN where bad is 1 (not a constant: WGSL refuses one)
        xds[word / 8u] = select(vec2<f32>(amax / 127.0, sum), vec2<f32>(nan, nan), bad != 0u);
    }
}
