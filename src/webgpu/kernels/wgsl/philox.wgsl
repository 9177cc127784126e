// Philox4x32-10 (src/core/philox.h) in 32-bit integer arithmetic, a library
// of random.wgsl and sample.wgsl.

// The 64-bit product a * b as (high word, low word), from 16-bit halves.
fn mulhilo(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    let hi = a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
    return vec2<u32>(hi, a * b);
}

fn philox(ctr: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
    var c = ctr;
    var k = key;
    for (var round = 0u; round < 10u; round++) {
        let m0 = mulhilo(0xD2511F53u, c.x);
        let m1 = mulhilo(0xCD9E8D57u, c.z);
        c = vec4<u32>(m1.x ^ c.y ^ k.x, m1.y, m0.x ^ c.w ^ k.y, m0.y);
        k = k + vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
    }
    return c;
}
