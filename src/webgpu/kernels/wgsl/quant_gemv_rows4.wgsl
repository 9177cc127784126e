// y [M, N] = x [M, K] @ W^T + bias with W quantised (core/node.h
// LINEAR_QUANT), the fused dequantise-GEMV of quant_gemv_rows.wgsl with
// four rows of W per thread: each x vec4 read is used for four rows (the
// single-row kernel reads as many bytes of x as of W, from cache, and its
// speed is bound by those reads). A thread holds one word of each of its
// four rows in a vec4<u32>, so every bit operation and product runs on
// the four rows at once. The units are quant_gemv_rows.wgsl's; rows past
// N repeat row N - 1 and are not written.
// Prelude: TYPE, BLOCK_BYTES, HAS_BIAS, ROWS (thread rows per workgroup),
// LANES (a power of two, ROWS * LANES = 256); libraries f16_bits and
// quant_blocks.

struct Params {
    m: u32, n: u32, k: u32, words: u32,
    x_offset: u32, w_offset: u32, b_offset: u32, pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> w: array<u32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

var<workgroup> partial: array<vec4<f32>, 256>;

const MAGIC: u32 = 0x4b000000u; // the bits of 2^23
const TWO23: f32 = 8388608.0;

fn shr(v: vec4<u32>, n: u32) -> vec4<u32> { return v >> vec4<u32>(n); }
fn shl(v: vec4<u32>, n: u32) -> vec4<u32> { return v << vec4<u32>(n); }
fn band(v: vec4<u32>, m: u32) -> vec4<u32> { return v & vec4<u32>(m); }

// Values v (< 2^23) as floats minus off.
fn mag4(v: vec4<u32>, off: f32) -> vec4<f32> {
    return bitcast<vec4<f32>>(v | vec4<u32>(MAGIC)) - vec4<f32>(TWO23 + off);
}

// Word t of each of the four rows starting at words a.
fn words4(a: vec4<u32>, t: u32) -> vec4<u32> {
    return vec4<u32>(w[a.x + t], w[a.y + t], w[a.z + t], w[a.w + t]);
}

fn half4(v: vec4<u32>) -> vec4<f32> {
    return bitcast<vec4<f32>>(vec4<u32>(half_to_f32_bits(v.x), half_to_f32_bits(v.y), half_to_f32_bits(v.z),
                                        half_to_f32_bits(v.w)));
}
fn lo16v(v: vec4<u32>) -> vec4<f32> { return half4(band(v, 0xffffu)); }
fn hi16v(v: vec4<u32>) -> vec4<f32> { return half4(shr(v, 16u)); }

// The fields of width mask bits at bit shift of each byte of q (one word
// per row) minus off, dotted with the four x values of those bytes.
fn fields4(q: vec4<u32>, shift: u32, mask: u32, xv: vec4<f32>, off: f32) -> vec4<f32> {
    var s = mag4(band(shr(q, shift), mask), off) * xv.x;
    s += mag4(band(shr(q, shift + 8u), mask), off) * xv.y;
    s += mag4(band(shr(q, shift + 16u), mask), off) * xv.z;
    s += mag4(band(shr(q, shift + 24u), mask), off) * xv.w;
    return s;
}

// Q4_0: a quad of nibble bytes; low nibbles with xl, high with xh.
fn q4_quad4(q: vec4<u32>, xl: vec4<f32>, xh: vec4<f32>) -> vec4<f32> {
    return fields4(q, 0u, 15u, xl, 8.0) + fields4(q, 4u, 15u, xh, 8.0);
}

// Q8_0: four int8 quants (sign bits flipped: q + 128).
fn q8_quad4(q: vec4<u32>, xv: vec4<f32>) -> vec4<f32> {
    return fields4(q ^ vec4<u32>(0x80808080u), 0u, 255u, xv, 128.0);
}

// Sign-extended byte (at bit shift) of each row's word.
fn sbyte(v: vec4<u32>, shift: u32) -> vec4<f32> {
    return vec4<f32>(bitcast<vec4<i32>>(shl(v, 24u - shift)) >> vec4<u32>(24u));
}

fn quad4(rw: vec4<u32>, b: u32) -> vec4<u32> {
    return vec4<u32>(quad_at(rw.x, b), quad_at(rw.y, b), quad_at(rw.z, b), quad_at(rw.w, b));
}

fn unit4(rw: vec4<u32>, u: u32, xrow: u32, nblocks: u32) -> vec4<f32> {
    if (TYPE == 2u) {
        let a = rw + vec4<u32>(u * 9u);
        let xi = xrow + u * 16u;
        let a0 = words4(a, 0u);
        let a1 = words4(a, 1u);
        let a2 = words4(a, 2u);
        let a3 = words4(a, 3u);
        let a4 = words4(a, 4u);
        var s = q4_quad4(shr(a0, 16u) | shl(a1, 16u), x[xi], x[xi + 4u]);
        s += q4_quad4(shr(a1, 16u) | shl(a2, 16u), x[xi + 1u], x[xi + 5u]);
        s += q4_quad4(shr(a2, 16u) | shl(a3, 16u), x[xi + 2u], x[xi + 6u]);
        s += q4_quad4(shr(a3, 16u) | shl(a4, 16u), x[xi + 3u], x[xi + 7u]);
        var r = lo16v(a0) * s;
        if (2u * u + 1u < nblocks) {
            var t = q4_quad4(words4(a, 5u), x[xi + 8u], x[xi + 12u]);
            t += q4_quad4(words4(a, 6u), x[xi + 9u], x[xi + 13u]);
            t += q4_quad4(words4(a, 7u), x[xi + 10u], x[xi + 14u]);
            t += q4_quad4(words4(a, 8u), x[xi + 11u], x[xi + 15u]);
            r += hi16v(a4) * t;
        }
        return r;
    }
    if (TYPE == 8u) {
        let a = rw + vec4<u32>(u * 17u);
        let xi = xrow + u * 16u;
        var prev = words4(a, 0u);
        let d0 = lo16v(prev);
        var s = vec4<f32>(0.0);
        for (var j = 0u; j < 8u; j++) {
            let nxt = words4(a, 1u + j);
            s += q8_quad4(shr(prev, 16u) | shl(nxt, 16u), x[xi + j]);
            prev = nxt;
        }
        var r = d0 * s;
        if (2u * u + 1u < nblocks) {
            var t = vec4<f32>(0.0);
            for (var j = 0u; j < 8u; j++) {
                t += q8_quad4(words4(a, 9u + j), x[xi + 8u + j]);
            }
            r += hi16v(prev) * t;
        }
        return r;
    }
    if (TYPE == 12u) {
        let sb = u / 4u;
        let c = u % 4u;
        let a = rw + vec4<u32>(sb * 36u);
        let dd = words4(a, 0u);
        let base = sb * 144u;
        let m0x = q4k_scale_min(rw.x, base, 2u * c);
        let m0y = q4k_scale_min(rw.y, base, 2u * c);
        let m0z = q4k_scale_min(rw.z, base, 2u * c);
        let m0w = q4k_scale_min(rw.w, base, 2u * c);
        let m1x = q4k_scale_min(rw.x, base, 2u * c + 1u);
        let m1y = q4k_scale_min(rw.y, base, 2u * c + 1u);
        let m1z = q4k_scale_min(rw.z, base, 2u * c + 1u);
        let m1w = q4k_scale_min(rw.w, base, 2u * c + 1u);
        let xi = xrow + u * 16u;
        var sq0 = vec4<f32>(0.0);
        var sq1 = vec4<f32>(0.0);
        var sx0 = vec4<f32>(0.0);
        var sx1 = vec4<f32>(0.0);
        for (var j = 0u; j < 8u; j++) {
            let q = words4(a, 4u + 8u * c + j);
            let x0 = x[xi + j];
            let x1 = x[xi + 8u + j];
            sq0 += fields4(q, 0u, 15u, x0, 0.0);
            sq1 += fields4(q, 4u, 15u, x1, 0.0);
            sx0 += x0;
            sx1 += x1;
        }
        let t0 = dot(sx0, vec4<f32>(1.0));
        let t1 = dot(sx1, vec4<f32>(1.0));
        let sc0 = vec4<f32>(f32(m0x.x), f32(m0y.x), f32(m0z.x), f32(m0w.x));
        let mn0 = vec4<f32>(f32(m0x.y), f32(m0y.y), f32(m0z.y), f32(m0w.y));
        let sc1 = vec4<f32>(f32(m1x.x), f32(m1y.x), f32(m1z.x), f32(m1w.x));
        let mn1 = vec4<f32>(f32(m1x.y), f32(m1y.y), f32(m1z.y), f32(m1w.y));
        return lo16v(dd) * (sc0 * sq0 + sc1 * sq1) - hi16v(dd) * (mn0 * t0 + mn1 * t1);
    }
    // Q6_K: half h of super-block sb.
    let sb = u / 2u;
    let h = u % 2u;
    let base = sb * 210u;
    let ql = base + 64u * h;
    let qh = base + 128u + 32u * h;
    let xi = xrow + u * 32u;
    let lo = 0x0f0f0f0fu;
    let two = 0x03030303u;
    var t = vec4<f32>(0.0);
    for (var half = 0u; half < 2u; half++) {
        var s0 = vec4<f32>(0.0);
        var s1 = vec4<f32>(0.0);
        var s2 = vec4<f32>(0.0);
        var s3 = vec4<f32>(0.0);
        for (var jj = 0u; jj < 4u; jj++) {
            let j = 4u * half + jj;
            let l0 = quad4(rw, ql + 4u * j);
            let l1 = quad4(rw, ql + 32u + 4u * j);
            let hb = quad4(rw, qh + 4u * j);
            s0 += fields4(band(l0, lo) | shl(band(hb, two), 4u), 0u, 63u, x[xi + j], 32.0);
            s1 += fields4(band(l1, lo) | shl(band(shr(hb, 2u), two), 4u), 0u, 63u, x[xi + 8u + j], 32.0);
            s2 += fields4(band(shr(l0, 4u), lo) | shl(band(shr(hb, 4u), two), 4u), 0u, 63u, x[xi + 16u + j], 32.0);
            s3 += fields4(band(shr(l1, 4u), lo) | shl(band(shr(hb, 6u), two), 4u), 0u, 63u, x[xi + 24u + j], 32.0);
        }
        // int8 scales sc[2g + half] of quarter g: bytes half, 2 + half of
        // the word at 192 + 8h, and of the word at 196 + 8h
        let sa = quad4(rw, base + 192u + 8u * h);
        let sc = quad4(rw, base + 196u + 8u * h);
        t += sbyte(sa, 8u * half) * s0 + sbyte(sa, 16u + 8u * half) * s1 + sbyte(sc, 8u * half) * s2 +
             sbyte(sc, 16u + 8u * half) * s3;
    }
    let d = vec4<f32>(half_at(rw.x, base + 208u), half_at(rw.y, base + 208u), half_at(rw.z, base + 208u),
                      half_at(rw.w, base + 208u));
    return d * t;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let per_wg = ROWS * 4u;
    let groups = (p.n + per_wg - 1u) / per_wg;
    let g = wid.x + wid.y * nwg.x; // uniform across the workgroup
    if (g >= groups * p.m) {
        return;
    }
    let i = g / groups;
    let r0 = (g % groups) * per_wg + (lid / LANES) * 4u;
    let lane = lid % LANES;
    var acc = vec4<f32>(0.0);
    if (r0 < p.n) {
        let last = p.n - 1u;
        let rows = vec4<u32>(r0, min(r0 + 1u, last), min(r0 + 2u, last), min(r0 + 3u, last));
        let rw = vec4<u32>(p.w_offset) + rows * p.words;
        let xrow = (p.x_offset + i * p.k) / 4u;
        let units = gemv_units(p.k);
        let nblocks = p.k / 32u; // Q4_0 / Q8_0 only
        for (var u = lane; u < units; u += LANES) {
            acc += unit4(rw, u, xrow, nblocks);
        }
    }
    partial[lid] = acc;
    workgroupBarrier();
    for (var s = LANES / 2u; s > 0u; s = s / 2u) {
        if (lane < s) {
            partial[lid] += partial[lid + s];
        }
        workgroupBarrier();
    }
    if (lane == 0u && r0 < p.n) {
        let y = partial[lid];
        for (var k = 0u; k < 4u; k++) {
            if (r0 + k < p.n) {
                var v = y[k];
                if (HAS_BIAS) {
                    v += bias[p.b_offset + r0 + k];
                }
                out[i * p.n + r0 + k] = v;
            }
        }
    }
}
