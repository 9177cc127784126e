// y [M, N] = x [M, K] @ W^T + bias with W quantised (core/node.h
// LINEAR_QUANT), the fused dequantise-GEMV for decode with f32 x, for
// Q4_0, Q8_0, Q4_K and Q6_K. quant_gemv_rows4.wgsl gives each thread
// whole units (36 to 68 bytes of weight, 64 elements of x), so the 32
// threads of a warp read weight bytes 36+ apart and x 256 bytes apart:
// every load instruction touches up to 32 cache lines for 128 to 512
// useful bytes.
// Here a row is cut into small slots that neighbouring threads take in
// turn, so one load instruction of a warp reads one contiguous stretch of
// the weight rows and of x:
//   Q4_0: a slot is one nibble word of a block (8 elements: 4 low nibbles,
//         4 high), 4 slots a block;
//   Q8_0: a slot is two quant words of a block (8 elements), 4 a block;
//   Q4_K: a slot is 16 nibble bytes of a 64-element chunk (32 elements: 16
//         of each of the chunk's two sub-blocks), 8 a super-block, read as
//         one vec4<u32> (the super-block's header as another);
//   Q6_K: a slot is four bytes of each of its two nibble runs and of its
//         high bits (16 elements), 16 a super-block.
// Each thread holds four weight rows in vec4 lanes (every x read serves
// four rows), LANES threads share those rows and add their sums in
// workgroup memory at the end.
// Quants become floats with one bit operation each: a field of 4 (8) bits
// at bit 4m (8m) ORed into the float 2^(23 - 4m) (2^(23 - 8m)), whose
// mantissa's bit 4m is worth 1, is that float plus the field exactly, and
// one subtraction takes off the float and the format's offset. A float's
// mantissa ends at bit 22, so fields above bit 19 (Q4) or 15 (Q8) are
// shifted down first. The products are exact as in the other kernels; only
// the f32 sums round.
// x is read as vec4 (its offset a multiple of 4 elements; K is); Q4_K
// needs the weight at a multiple of 4 words (w4 is the same buffer as w).
// Around the product, as wt_linear_quant_fused asks (prelude flags):
//   NORM: an RMSNorm of x first, with its 1/rms factored out: the
//         products read x * g, and the sums are scaled by 1/rms before the
//         bias. A row group's threads read each element of x once between
//         them, so they sum x's squares on the way (no pass of their own)
//         and add them up with the products;
//   SWIGLU: the four rows a thread holds are two gate rows and the two up
//         rows N/2 below them, so each thread writes silu(gate) * up of two
//         outputs;
//   RESIDUAL: res (the result's shape) added last.
// Prelude: TYPE, HAS_BIAS, NORM, SWIGLU, RESIDUAL, ROWS (thread rows per
// workgroup), LANES (a power of two, ROWS * LANES = 256).

struct Params {
    m: u32, n: u32, k: u32, words: u32,
    x_offset: u32, w_offset: u32, b_offset: u32, g_offset: u32,
    r_offset: u32, eps: f32, o_offset: u32, pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> w: array<u32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read> w4: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read> g: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read> res: array<f32>;

var<workgroup> partial: array<vec4<f32>, 256>;
var<workgroup> partial_sq: array<f32, 256>;
// NORM: this thread's sum of the squares of the x it has read.
var<private> x_squares: f32;

// The field (v & mask) | magic as float, minus sub.
fn field(v: vec4<u32>, mask: u32, magic: u32, sub: f32) -> vec4<f32> {
    return bitcast<vec4<f32>>((v & vec4<u32>(mask)) | vec4<u32>(magic)) - vec4<f32>(sub);
}

// The float bits of 2^23, 2^19, 2^15, 2^11, 2^7.
const M23: u32 = 0x4b000000u;
const M19: u32 = 0x49000000u;
const M15: u32 = 0x47000000u;
const M11: u32 = 0x45000000u;
const M7: u32 = 0x43000000u;

// The eight nibbles of one word of each row (nibble 2k: element k of xl,
// nibble 2k + 1: element k of xh), each minus off, dotted with x.
fn nibbles8(v: vec4<u32>, xl: vec4<f32>, xh: vec4<f32>, off: f32) -> vec4<f32> {
    let u = v >> vec4<u32>(12u);
    var s = field(v, 0xfu, M23, 8388608.0 + off) * xl.x;
    s += field(v, 0xf0u, M19, 524288.0 + off) * xh.x;
    s += field(v, 0xf00u, M15, 32768.0 + off) * xl.y;
    s += field(v, 0xf000u, M11, 2048.0 + off) * xh.y;
    s += field(v, 0xf0000u, M7, 128.0 + off) * xl.z;
    s += field(u, 0xf00u, M15, 32768.0 + off) * xh.z;
    s += field(u, 0xf000u, M11, 2048.0 + off) * xl.w;
    s += field(u, 0xf0000u, M7, 128.0 + off) * xh.w;
    return s;
}

// The low (even) and the high (odd) nibbles of one word of each row
// dotted with xl and xh apart (Q4_K: the two sub-blocks' own scales).
fn nibbles_lo(v: vec4<u32>, xl: vec4<f32>) -> vec4<f32> {
    let u = v >> vec4<u32>(12u);
    var s = field(v, 0xfu, M23, 8388608.0) * xl.x;
    s += field(v, 0xf00u, M15, 32768.0) * xl.y;
    s += field(v, 0xf0000u, M7, 128.0) * xl.z;
    s += field(u, 0xf000u, M11, 2048.0) * xl.w;
    return s;
}
fn nibbles_hi(v: vec4<u32>, xh: vec4<f32>) -> vec4<f32> {
    let u = v >> vec4<u32>(12u);
    var s = field(v, 0xf0u, M19, 524288.0) * xh.x;
    s += field(v, 0xf000u, M11, 2048.0) * xh.y;
    s += field(u, 0xf00u, M15, 32768.0) * xh.z;
    s += field(u, 0xf0000u, M7, 128.0) * xh.w;
    return s;
}

// The four bytes of one word of each row, each minus off, dotted with xv.
fn bytes4_minus(v: vec4<u32>, xv: vec4<f32>, off: f32) -> vec4<f32> {
    let u = v >> vec4<u32>(16u);
    var s = field(v, 0xffu, M23, 8388608.0 + off) * xv.x;
    s += field(v, 0xff00u, M15, 32768.0 + off) * xv.y;
    s += field(u, 0xffu, M23, 8388608.0 + off) * xv.z;
    s += field(u, 0xff00u, M15, 32768.0 + off) * xv.w;
    return s;
}

// Four int8 quants of one word of each row (sign bits flipped: q + 128)
// dotted with xv.
fn bytes4(q: vec4<u32>, xv: vec4<f32>) -> vec4<f32> {
    return bytes4_minus(q ^ vec4<u32>(0x80808080u), xv, 128.0);
}

// Four 6-bit quants of one word of each row (Q6_K's 0..63, offset 32)
// dotted with xv.
fn sixbits4(q: vec4<u32>, xv: vec4<f32>) -> vec4<f32> {
    return bytes4_minus(q, xv, 32.0);
}

// f16 bits (< 2^16) of each row to f32 (f16_bits' branchless form).
fn half4(h: vec4<u32>) -> vec4<f32> {
    return vec4<f32>(half_to_f32(h.x), half_to_f32(h.y), half_to_f32(h.z), half_to_f32(h.w));
}

// Word t of each of the four rows starting at words a.
fn words4(a: vec4<u32>, t: u32) -> vec4<u32> {
    return vec4<u32>(w[a.x + t], w[a.y + t], w[a.z + t], w[a.w + t]);
}

// The f16 at the even byte b of each row, as f32.
fn halves(rw: vec4<u32>, b: u32) -> vec4<f32> {
    return half4((words4(rw, b >> 2u) >> vec4<u32>((b & 2u) * 8u)) & vec4<u32>(0xffffu));
}

// The four bytes from the even byte b of each row: two words, shifted by
// half a word when b is not a multiple of 4.
fn quad4(rw: vec4<u32>, b: u32) -> vec4<u32> {
    let lo = words4(rw, b >> 2u);
    let hi = words4(rw, (b >> 2u) + 1u);
    return select(lo, (lo >> vec4<u32>(16u)) | (hi << vec4<u32>(16u)), vec4<bool>((b & 2u) != 0u));
}

// Q4_K: the 6-bit scale (x) and min (y) of sub-block s of a super-block
// whose scale words (bytes 4..15) are s1, s2, s3.
fn scale_min(s1: u32, s2: u32, s3: u32, s: u32) -> vec2<f32> {
    let sh = (s & 3u) * 8u;
    let a1 = s1 >> sh;
    let a2 = s2 >> sh;
    if (s < 4u) {
        return vec2<f32>(f32(a1 & 63u), f32(a2 & 63u));
    }
    let a3 = s3 >> sh;
    return vec2<f32>(f32((a3 & 15u) | (((a1 >> 6u) & 3u) << 4u)), f32(((a3 >> 4u) & 15u) | (((a2 >> 6u) & 3u) << 4u)));
}

// x's vec4 xi (row from vec4 xrow), times the norm weight with NORM.
fn xload(xi: u32, xrow: u32) -> vec4<f32> {
    if (NORM) {
        let v = x[xi];
        x_squares += dot(v, v);
        return v * g[p.g_offset / 4u + (xi - xrow)];
    }
    return x[xi];
}

// The sum of slot s of the four rows starting at words rw against x from
// xrow (vec4 index).
fn slot4(rw: vec4<u32>, s: u32, xrow: u32) -> vec4<f32> {
    if (TYPE == 2u) {
        let b = s >> 2u;
        let t = s & 3u;
        let xi = xrow + b * 8u + t;
        // Block b starts at byte 18b, in word o: with b even at its start
        // (d its low half, quad t from the high half of word o + t), with
        // b odd half a word in (d its high half, quad t word o + t + 1).
        let o = rw + vec4<u32>((b * 18u) >> 2u);
        let w0 = words4(o, t);
        let w1 = words4(o, t + 1u);
        let odd = vec4<bool>((b & 1u) != 0u);
        let q = select((w0 >> vec4<u32>(16u)) | (w1 << vec4<u32>(16u)), w1, odd);
        let dw = words4(o, 0u);
        let dh = select(dw & vec4<u32>(0xffffu), dw >> vec4<u32>(16u), odd);
        return half4(dh) * nibbles8(q, xload(xi, xrow), xload(xi + 4u, xrow), 8.0);
    }
    if (TYPE == 8u) {
        let b = s >> 2u;
        let t = s & 3u;
        let xi = xrow + b * 8u + 2u * t;
        let q0 = quad4(rw, b * 34u + 2u + 8u * t);
        let q1 = quad4(rw, b * 34u + 6u + 8u * t);
        return halves(rw, b * 34u) * (bytes4(q0, xload(xi, xrow)) + bytes4(q1, xload(xi + 1u, xrow)));
    }
    if (TYPE == 14u) {
        // Q6_K: slot s is the four l = 4t .. 4t + 3 of half n of
        // super-block b, 16 elements: l, l + 32, l + 64 and l + 96 of the
        // half, whose low nibbles are at ql[l] and ql[l + 32] (low, then
        // high half of the byte) and whose two high bits are qh[l]'s bits
        // 0-1, 2-3, 4-5, 6-7. A super-block is 210 bytes, so an odd one
        // starts half a word in (quad4 joins two words).
        let b = s >> 4u;
        let n = (s >> 3u) & 1u;
        let t = s & 7u;
        let base = b * 210u;
        let qa = quad4(rw, base + 64u * n + 4u * t);
        let qb = quad4(rw, base + 64u * n + 32u + 4u * t);
        let qh = quad4(rw, base + 128u + 32u * n + 4u * t);
        let lo = vec4<u32>(0x0f0f0f0fu);
        let xi = xrow + b * 64u + n * 32u + t;
        let s1 = sixbits4((qa & lo) | ((qh & vec4<u32>(0x03030303u)) << vec4<u32>(4u)), xload(xi, xrow));
        let s2 = sixbits4((qb & lo) | ((qh & vec4<u32>(0x0c0c0c0cu)) << vec4<u32>(2u)), xload(xi + 8u, xrow));
        let s3 = sixbits4(((qa >> vec4<u32>(4u)) & lo) | (qh & vec4<u32>(0x30303030u)), xload(xi + 16u, xrow));
        let s4 = sixbits4(((qb >> vec4<u32>(4u)) & lo) | ((qh >> vec4<u32>(2u)) & vec4<u32>(0x30303030u)),
                          xload(xi + 24u, xrow));
        // The int8 scales sc[8n + is + 0, 2, 4, 6] (is = l / 16), bytes 0
        // and 2 of the two shifted quads, sign bits flipped (+ 128).
        let sh = vec4<u32>(8u * (t >> 2u));
        let sa = (quad4(rw, base + 192u + 8u * n) >> sh) ^ vec4<u32>(0x00800080u);
        let sb = (quad4(rw, base + 196u + 8u * n) >> sh) ^ vec4<u32>(0x00800080u);
        let k = 8388608.0 + 128.0;
        let sum = field(sa, 0xffu, M23, k) * s1 + field(sa >> vec4<u32>(16u), 0xffu, M23, k) * s2 +
                  field(sb, 0xffu, M23, k) * s3 + field(sb >> vec4<u32>(16u), 0xffu, M23, k) * s4;
        return halves(rw, base + 208u) * sum;
    }
    // Q4_K: slot s is half h of chunk c of super-block sb.
    let sb = s >> 3u;
    let c = (s >> 1u) & 3u;
    let h = s & 1u;
    let v = rw / vec4<u32>(4u) + vec4<u32>(sb * 9u);
    let hx = w4[v.x];
    let hy = w4[v.y];
    let hz = w4[v.z];
    let hw = w4[v.w];
    let qo = 1u + 2u * c + h;
    let qx = w4[v.x + qo];
    let qy = w4[v.y + qo];
    let qz = w4[v.z + qo];
    let qw = w4[v.w + qo];
    let xi = xrow + sb * 64u + 16u * c + 4u * h;
    var sl = vec4<f32>(0.0);
    var sh = vec4<f32>(0.0);
    var xs = vec4<f32>(0.0); // x's sums of the low and the high elements
    for (var k = 0u; k < 4u; k++) {
        let q = vec4<u32>(qx[k], qy[k], qz[k], qw[k]);
        let xl = xload(xi + k, xrow);
        let xh = xload(xi + 8u + k, xrow);
        sl += nibbles_lo(q, xl);
        sh += nibbles_hi(q, xh);
        xs += vec4<f32>(xl.x + xl.y, xl.z + xl.w, xh.x + xh.y, xh.z + xh.w);
    }
    let tl = xs.x + xs.y;
    let th = xs.z + xs.w;
    let d = half4(vec4<u32>(hx.x, hy.x, hz.x, hw.x) & vec4<u32>(0xffffu));
    let dmin = half4(vec4<u32>(hx.x, hy.x, hz.x, hw.x) >> vec4<u32>(16u));
    let ax = scale_min(hx.y, hx.z, hx.w, 2u * c);
    let ay = scale_min(hy.y, hy.z, hy.w, 2u * c);
    let az = scale_min(hz.y, hz.z, hz.w, 2u * c);
    let aw = scale_min(hw.y, hw.z, hw.w, 2u * c);
    let bx = scale_min(hx.y, hx.z, hx.w, 2u * c + 1u);
    let by = scale_min(hy.y, hy.z, hy.w, 2u * c + 1u);
    let bz = scale_min(hz.y, hz.z, hz.w, 2u * c + 1u);
    let bw = scale_min(hw.y, hw.z, hw.w, 2u * c + 1u);
    let sc0 = vec4<f32>(ax.x, ay.x, az.x, aw.x);
    let mn0 = vec4<f32>(ax.y, ay.y, az.y, aw.y);
    let sc1 = vec4<f32>(bx.x, by.x, bz.x, bw.x);
    let mn1 = vec4<f32>(bx.y, by.y, bz.y, bw.y);
    return d * (sc0 * sl + sc1 * sh) - dmin * (mn0 * tl + mn1 * th);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    // Outputs of a thread: its four rows, or with SWIGLU two gate rows
    // (each with its up row).
    let per_thread = select(4u, 2u, SWIGLU);
    let outs = select(p.n, p.n / 2u, SWIGLU);
    let per_wg = ROWS * per_thread;
    let groups = (outs + per_wg - 1u) / per_wg;
    let gi = wid.x + wid.y * nwg.x; // uniform across the workgroup
    if (gi >= groups * p.m) {
        return;
    }
    let i = gi / groups;
    let c0 = (gi % groups) * per_wg + (lid / LANES) * per_thread;
    let lane = lid % LANES;
    let xrow = (p.x_offset + i * p.k) / 4u;
    x_squares = 0.0;
    var acc = vec4<f32>(0.0);
    var rows = vec4<u32>(0u);
    if (c0 < outs) {
        let last = outs - 1u;
        if (SWIGLU) {
            let c1 = min(c0 + 1u, last);
            rows = vec4<u32>(c0, c1, c0 + outs, c1 + outs);
        } else {
            rows = vec4<u32>(c0, min(c0 + 1u, last), min(c0 + 2u, last), min(c0 + 3u, last));
        }
        let rw = vec4<u32>(p.w_offset) + rows * p.words;
        var slots = p.k / 8u;
        if (TYPE == 12u) {
            slots = p.k / 32u;
        }
        if (TYPE == 14u) {
            slots = p.k / 16u;
        }
        // Two slots an iteration, so that each thread has both slots'
        // loads in flight at once.
        var s = lane;
        for (; s + LANES < slots; s += 2u * LANES) {
            let a = slot4(rw, s, xrow);
            let b = slot4(rw, s + LANES, xrow);
            acc += a + b;
        }
        if (s < slots) {
            acc += slot4(rw, s, xrow);
        }
    }
    partial[lid] = acc;
    if (NORM) {
        partial_sq[lid] = x_squares;
    }
    workgroupBarrier();
    for (var s = LANES / 2u; s > 0u; s = s / 2u) {
        if (lane < s) {
            partial[lid] += partial[lid + s];
            if (NORM) {
                partial_sq[lid] += partial_sq[lid + s];
            }
        }
        workgroupBarrier();
    }
    if (lane == 0u && c0 < outs) {
        var y = partial[lid];
        if (NORM) {
            y *= inverseSqrt(partial_sq[lid] / f32(p.k) + p.eps);
        }
        if (HAS_BIAS) {
            y += vec4<f32>(bias[p.b_offset + rows.x], bias[p.b_offset + rows.y], bias[p.b_offset + rows.z],
                           bias[p.b_offset + rows.w]);
        }
        for (var k = 0u; k < per_thread; k++) {
            let col = c0 + k;
            if (col < outs) {
                var v = y[k];
                if (SWIGLU) {
                    v = v / (1.0 + exp(-v)) * y[k + 2u];
                }
                if (RESIDUAL) {
                    v += res[p.r_offset + i * outs + col];
                }
                out[p.o_offset + i * outs + col] = v;
            }
        }
    }
}
