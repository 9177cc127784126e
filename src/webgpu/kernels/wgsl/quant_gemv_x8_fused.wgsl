// y [M, N] = x [M, K] @ W^T + bias with W in Q4_0, Q8_0, Q4_K or Q6_K
// blocks and x rounded to 8 bits inside the kernel: the decode GEMV of a
// step, with the RMSNorm before it, the SwiGLU and the residual after it as
// wt_linear_quant_fused asks (the prelude flags NORM, SWIGLU, RESIDUAL of
// quant_gemv_slots.wgsl, whose Params and bindings this shares).
// Why: quant_gemv_x8.wgsl's integer dots cost a quarter of an instruction
// an element where the f32 kernels spend a conversion and a multiply-add,
// but it needs x rounded by a pass of its own (quant_x8.wgsl) and so can
// take no norm, which a decode step has before three of its four products.
// Here every workgroup rounds its row of x itself into workgroup memory
// (x is 8-22 KB, read from the L2 by each workgroup), after issuing its
// first weight loads, so that rounding overlaps them.
// x's rounding is quant_x8.wgsl's (per block of 32, d = max |x| / 127, q =
// round(x * 127 / max |x|)), applied to x * g under NORM: the 1/rms factor
// is taken out of the sums, and rounding is the same at any scale. Q4_0's
// offset 8 meets the rounded x too (d_w d_x sum (q_w - 8) q_x, as ggml's
// integer dots), so each element's product moves by at most d / 2 times
// |w|, the bound the header states: taking the offset with x's exact sum
// instead (quant_gemv_x8.wgsl) leaves the error on the nibble q_w (0-15)
// rather than on q_w - 8, twice as large on a Llama's steps.
// Q4_K's sub-blocks of 32 have a 6-bit scale and min each: a weight is
// d sc q - dmin m, and its sum against x is d sc d_x sum q q_x - dmin m
// times the rounded x's sum (ggml's Q4_K x Q8_K dot, with x's blocks of 32
// rather than 256: a smaller step, the same bound).
// Threads: LANES consecutive threads share ROWS weight rows (with SWIGLU a
// gate row and its up row N/2 below); a thread takes units of 64 weights:
// pairs of blocks (Q4_0: 36 bytes = 9 words, Q8_0: 68 bytes = 17 words,
// both whole words where a single 18- or 34-byte block is not) or a
// quarter of a Q4_K super-block (its 16-byte head of d, dmin and scales,
// which the four lanes of a super-block read from the same cache lines,
// and its 32 bytes of nibbles, three 16-byte loads through w4: twelve
// 4-byte loads and a scale decode that branched and indexed the head
// took 25.7 us where these take 19.3 on 14336x4096, an H100, so Q4_K
// rounds x by default) or a quarter of a Q6_K super-block (half its
// half's 64 nibble bytes' nibbles and 32 high-bit bytes' bits, which the
// quarter's neighbour lane reads from the same lines; its four scales and
// d; an odd super-block, 210 bytes, starts half a word in): all of a
// thread's units loaded at once where they are at most three, else the
// next unit's words loaded while the current one is summed.
// Prelude: TYPE (2: Q4_0, 8: Q8_0, 12: Q4_K, 14: Q6_K), HAS_BIAS, NORM,
// SWIGLU, RESIDUAL, ROWS (1 or 2; SwiGLU always reads its two), WG
// (threads a workgroup), LANES (a power of two dividing WG), KB (K / 32,
// even), ITER (pairs a lane: ceil(KB / 2 / LANES)); library f16_bits.

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
@group(0) @binding(5) var<storage, read> g: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> res: array<f32>;
// Q4_K: w as 16-byte words (the weight at a multiple of four words).
@group(0) @binding(7) var<storage, read> w4: array<vec4<u32>>;

const Q4: bool = TYPE == 2u;
const Q4K: bool = TYPE == 12u;
const Q6K: bool = TYPE == 14u;
const PAIR_WORDS: u32 = select(17u, 9u, Q4);
const SUPER_WORDS: u32 = 36u; // Q4_K: 144 bytes a super-block of 256
const NIBBLES: u32 = 0x0f0f0f0fu;

var<workgroup> xq: array<vec4<u32>, 2u * KB>; // block b: xq[2b] elements 0-15, xq[2b + 1] 16-31
var<workgroup> xd: array<f32, KB>;            // block b's step d
var<workgroup> xqsum: array<f32, 2u * KB>;    // half block h: d times the sum of its 16 q (Q4_0, Q4_K, Q6_K)
var<workgroup> xsq: array<f32, KB>;           // NORM: block b's sum of x^2 (x before g)
// stage_x: a half block's max |x|, sum, sum of x^2 and bad flag; then the
// lanes' sums
var<workgroup> red: array<vec4<f32>, WG>;

// The words of a unit in fields, not an array, so that they stay in
// registers: a pair's words 0-15 in v0-v3, word 16 in e (Q4_0 uses v0, v1,
// v2.x); Q4_K's head in v0, its quarter's nibbles in v1 and v2; Q6_K's
// half super-block's 64 bytes of nibbles in v0-v3, its 32 bytes of high
// bits in v4 and v5, the quarter's four scales in e, d in f.
struct Pair {
    v0: vec4<u32>, v1: vec4<u32>, v2: vec4<u32>, v3: vec4<u32>, e: u32,
    v4: vec4<u32>, v5: vec4<u32>, f: u32,
}

// Q6_K: the 16-byte word starting at word k, or with odd two bytes into
// it (an odd super-block of 210 bytes starts half a word in).
fn run4(k: u32, odd: bool) -> vec4<u32> {
    let a = vec4<u32>(w[k], w[k + 1u], w[k + 2u], w[k + 3u]);
    return select(a, mid4(a, w[k + 4u]), odd);
}

// Unit pr of the row starting at word row.
fn load_pair(row: u32, pr: u32) -> Pair {
    var r: Pair;
    if (Q4K) {
        let h = (row + (pr / 4u) * SUPER_WORDS) / 4u;
        let n = h + 1u + 2u * (pr % 4u);
        r.v0 = w4[h];
        r.v1 = w4[n];
        r.v2 = w4[n + 1u];
        return r;
    }
    if (Q6K) {
        // Quarter q of super-block sb: part pp (elements 64 pp ..) of half
        // n, whose nibbles are the half's 64 ql bytes (low or high
        // nibbles) and whose high bits its 32 qh bytes (bits 0-3 or 4-7).
        let sb = pr / 4u;
        let n = (pr / 2u) % 2u;
        let pp = pr % 2u;
        let wb = row + (sb * 105u) / 2u; // 210 bytes: 52.5 words
        let odd = (sb & 1u) != 0u;
        let ql = wb + 16u * n;
        r.v0 = run4(ql, odd);
        r.v1 = run4(ql + 4u, odd);
        r.v2 = run4(ql + 8u, odd);
        r.v3 = run4(ql + 12u, odd);
        let qh = wb + 32u + 8u * n;
        r.v4 = run4(qh, odd);
        r.v5 = run4(qh + 4u, odd);
        // scales: bytes 192 + 8n + 4pp ..; d: bytes 208, 209 (word 52's
        // low half, or with odd its high half: never past the block)
        let sc = wb + 48u + 2u * n + pp;
        r.e = select(w[sc], (w[sc] >> 16u) | (w[sc + 1u] << 16u), odd);
        r.f = select(w[wb + 52u] & 0xffffu, w[wb + 52u] >> 16u, odd);
        return r;
    }
    let a = row + pr * PAIR_WORDS;
    r.v0 = vec4<u32>(w[a], w[a + 1u], w[a + 2u], w[a + 3u]);
    r.v1 = vec4<u32>(w[a + 4u], w[a + 5u], w[a + 6u], w[a + 7u]);
    if (Q4) {
        r.v2.x = w[a + 8u];
    } else {
        r.v2 = vec4<u32>(w[a + 8u], w[a + 9u], w[a + 10u], w[a + 11u]);
        r.v3 = vec4<u32>(w[a + 12u], w[a + 13u], w[a + 14u], w[a + 15u]);
        r.e = w[a + 16u];
    }
    return r;
}

fn dot16(a: vec4<u32>, v: vec4<u32>) -> i32 {
    return dot4I8Packed(a.x, v.x) + dot4I8Packed(a.y, v.y) + dot4I8Packed(a.z, v.z) + dot4I8Packed(a.w, v.w);
}


// The four bytes from two bytes into each word of a (its next word in b).
fn mid4(a: vec4<u32>, b: u32) -> vec4<u32> {
    return (a >> vec4<u32>(16u)) | (vec4<u32>(a.y, a.z, a.w, b) << vec4<u32>(16u));
}

// The 6-bit scales and mins (sc0, m0, sc1, m1) of sub-blocks 2c and 2c + 1
// of a Q4_K head (scales in words 1-3), without branches or a dynamic
// index into the head (neighbouring lanes take different c): sub-blocks
// 0-3 are the low 6 bits of bytes 0-3 (scales) and 4-7 (mins); 4-7 take
// their low 4 bits from the nibbles of bytes 8-11 and their top 2 from
// bytes 0-7's top 2.
fn scale_min_pair(head: vec4<u32>, c: u32) -> vec4<f32> {
    let sh = 16u * (c & 1u);
    let a = head.y >> sh;
    let b = head.z >> sh;
    let e = head.w >> sh;
    let ab = vec4<u32>(a, b, a >> 8u, b >> 8u);
    let low = ab & vec4<u32>(63u);
    let high = (vec4<u32>(e, e >> 4u, e >> 8u, e >> 12u) & vec4<u32>(15u)) | ((ab >> vec4<u32>(2u)) & vec4<u32>(0x30u));
    return vec4<f32>(select(low, high, c >= 2u));
}

// The unit's two blocks of 32 (2 pr, 2 pr + 1) against x's.
fn pair_dot(q: Pair, pr: u32) -> f32 {
    let b0 = 2u * pr;
    let xa = xd[b0];
    let xb = xd[b0 + 1u];
    if (Q4K) {
        // Quarter c of the super-block: its 32 bytes' low nibbles are
        // sub-block 2c (x's block b0), the high ones sub-block 2c + 1.
        let n = vec4<u32>(NIBBLES);
        let sa = dot16(q.v1 & n, xq[2u * b0]) + dot16(q.v2 & n, xq[2u * b0 + 1u]);
        let sb = dot16((q.v1 >> vec4<u32>(4u)) & n, xq[2u * b0 + 2u]) +
                 dot16((q.v2 >> vec4<u32>(4u)) & n, xq[2u * b0 + 3u]);
        let m = scale_min_pair(q.v0, pr % 4u);
        let oa = xqsum[2u * b0] + xqsum[2u * b0 + 1u];
        let ob = xqsum[2u * b0 + 2u] + xqsum[2u * b0 + 3u];
        return half_to_f32(q.v0.x & 0xffffu) * (m.x * xa * f32(sa) + m.z * xb * f32(sb)) -
               half_to_f32(q.v0.x >> 16u) * (m.y * oa + m.w * ob);
    }
    if (Q6K) {
        // Block b0: the half's elements l = 0..31 (ql bytes 0-31, qh bits
        // 4pp, 4pp + 1), block b0 + 1: l + 32 (ql bytes 32-63, qh bits
        // 4pp + 2, 4pp + 3); quants 0..63 with the offset 32 taken with
        // x's sums; an int8 scale a sub-block of 16.
        let sh = vec4<u32>(4u * (pr % 2u));
        let n = vec4<u32>(NIBBLES);
        let two = vec4<u32>(0x03030303u);
        let h0 = q.v4 >> sh;
        let h1 = q.v5 >> sh;
        let s0 = dot16(((q.v0 >> sh) & n) | ((h0 & two) << vec4<u32>(4u)), xq[2u * b0]);
        let s1 = dot16(((q.v1 >> sh) & n) | ((h1 & two) << vec4<u32>(4u)), xq[2u * b0 + 1u]);
        let s2 = dot16(((q.v2 >> sh) & n) | ((h0 & (two << vec4<u32>(2u))) << vec4<u32>(2u)), xq[2u * b0 + 2u]);
        let s3 = dot16(((q.v3 >> sh) & n) | ((h1 & (two << vec4<u32>(2u))) << vec4<u32>(2u)), xq[2u * b0 + 3u]);
        let e = bitcast<i32>(q.e);
        let sc = vec4<f32>(vec4<i32>(e << 24u, e << 16u, e << 8u, e) >> vec4<u32>(24u));
        let t = vec4<f32>(xa * f32(s0) - 32.0 * xqsum[2u * b0], xa * f32(s1) - 32.0 * xqsum[2u * b0 + 1u],
                          xb * f32(s2) - 32.0 * xqsum[2u * b0 + 2u], xb * f32(s3) - 32.0 * xqsum[2u * b0 + 3u]);
        return half_to_f32(q.f) * dot(sc, t);
    }
    if (Q4) {
        // Block 0: d in the low half of word 0, its 16 nibble bytes from
        // byte 2; block 1: d in the high half of word 4, nibbles words 5-8.
        let qa = mid4(q.v0, q.v1.x);
        let qb = vec4<u32>(q.v1.y, q.v1.z, q.v1.w, q.v2.x);
        let n = vec4<u32>(NIBBLES);
        let sa = dot16(qa & n, xq[2u * b0]) + dot16((qa >> vec4<u32>(4u)) & n, xq[2u * b0 + 1u]);
        let sb = dot16(qb & n, xq[2u * b0 + 2u]) + dot16((qb >> vec4<u32>(4u)) & n, xq[2u * b0 + 3u]);
        let oa = xqsum[2u * b0] + xqsum[2u * b0 + 1u];
        let ob = xqsum[2u * b0 + 2u] + xqsum[2u * b0 + 3u];
        return half_to_f32(q.v0.x & 0xffffu) * (xa * f32(sa) - 8.0 * oa) +
               half_to_f32(q.v1.x >> 16u) * (xb * f32(sb) - 8.0 * ob);
    }
    // Q8_0: block 0's d in the low half of word 0, its 32 int8 from byte
    // 2; block 1's d in the high half of word 8, its int8 words 9-16.
    let sa = dot16(mid4(q.v0, q.v1.x), xq[2u * b0]) + dot16(mid4(q.v1, q.v2.x), xq[2u * b0 + 1u]);
    let sb = dot16(vec4<u32>(q.v2.y, q.v2.z, q.v2.w, q.v3.x), xq[2u * b0 + 2u]) +
             dot16(vec4<u32>(q.v3.y, q.v3.z, q.v3.w, q.e), xq[2u * b0 + 3u]);
    return half_to_f32(q.v0.x & 0xffffu) * xa * f32(sa) + half_to_f32(q.v2.x >> 16u) * xb * f32(sb);
}

// TWO: a group of lanes reads two rows (ROWS 2, or SwiGLU's gate and up).
const TWO: bool = SWIGLU || ROWS == 2u;

// Pair pr of the group's rows at words a0 and a1 (the second only with TWO).
struct Rows {
    a: Pair, b: Pair,
}

fn load_rows(a0: u32, a1: u32, pr: u32) -> Rows {
    var r: Rows;
    r.a = load_pair(a0, pr);
    if (TWO) {
        r.b = load_pair(a1, pr);
    }
    return r;
}

fn dot_rows(r: Rows, pr: u32) -> vec2<f32> {
    var d = vec2<f32>(pair_dot(r.a, pr), 0.0);
    if (TWO) {
        d.y = pair_dot(r.b, pr);
    }
    return d;
}

// Four values rounded to int8 by inv = 127 / max |x| of their block.
fn round8(v: vec4<f32>, inv: f32) -> vec4<i32> {
    return vec4<i32>(clamp(round(v * inv), vec4<f32>(-127.0), vec4<f32>(127.0)));
}

// Four int8 in the bytes of a word, element 0 in the low byte.
fn pack8(q: vec4<i32>) -> u32 {
    let b = bitcast<vec4<u32>>(q) & vec4<u32>(0xffu);
    return b.x | (b.y << 8u) | (b.z << 16u) | (b.w << 24u);
}

// Row xrow (vec4 index) of x, times g under NORM, rounded into xq, xd and
// xqsum (and its squares into xsq): a thread half a block (16 elements, one
// vec4 of xq), its partner (lid ^ 1) the other half, so that every thread
// of the workgroup shares the work and each holds a short chain.
fn stage_x(xrow: u32, lid: u32) {
    for (var c = 0u; c < 2u * KB; c += WG) { // uniform: KB is a constant
        let t = c + lid;
        let live = t < 2u * KB;
        var h: array<vec4<f32>, 4>;
        var amax = 0.0;
        var sq = 0.0;
        var bad = false;
        if (live) {
            for (var j = 0u; j < 4u; j++) {
                let raw = x[xrow + 4u * t + j];
                var v = raw;
                if (NORM) {
                    sq += dot(raw, raw);
                    v = raw * g[p.g_offset / 4u + 4u * t + j];
                }
                h[j] = v;
                let a = abs(v);
                amax = max(amax, max(max(a.x, a.y), max(a.z, a.w)));
                // inf and NaN found from the bits: arithmetic on them is
                // not reliable in WGSL
                bad = bad || any((bitcast<vec4<u32>>(v) & vec4<u32>(0x7f800000u)) == vec4<u32>(0x7f800000u));
            }
        }
        red[lid] = vec4<f32>(amax, 0.0, sq, select(0.0, 1.0, bad));
        workgroupBarrier();
        let o = red[lid ^ 1u];
        workgroupBarrier(); // red is written again next
        if (live) {
            let m = max(amax, o.x);
            let inv = select(0.0, 127.0 / m, m > 0.0);
            let q0 = round8(h[0], inv);
            let q1 = round8(h[1], inv);
            let q2 = round8(h[2], inv);
            let q3 = round8(h[3], inv);
            xq[t] = vec4<u32>(pack8(q0), pack8(q1), pack8(q2), pack8(q3));
            let d = m / 127.0;
            let qs = (q0 + q1) + (q2 + q3);
            // A block with an inf or a NaN makes its rows NaN
            // (quant_x8.wgsl's rule), not a finite number from a
            // meaningless rounding.
            let any_bad = bad || o.w != 0.0;
            let nan = bitcast<f32>(0x7fc00000u | u32(any_bad));
            xqsum[t] = select(d * f32((qs.x + qs.y) + (qs.z + qs.w)), nan, any_bad);
            if ((t & 1u) == 0u) {
                xd[t / 2u] = select(d, nan, any_bad);
                xsq[t / 2u] = sq + o.z;
            }
        }
    }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    const GROUPS = WG / LANES;
    // The outputs of a group: ROWS rows, or one SwiGLU output (its gate
    // and up rows).
    let per_group = select(ROWS, 1u, SWIGLU);
    let outs = select(p.n, p.n / 2u, SWIGLU);
    let per_wg = GROUPS * per_group;
    let wgs = (outs + per_wg - 1u) / per_wg;
    let gi = wid.x + wid.y * nwg.x; // uniform across the workgroup
    if (gi >= wgs * p.m) {
        return;
    }
    let i = gi / wgs;
    let c0 = (gi % wgs) * per_wg + (lid / LANES) * per_group;
    let lane = lid % LANES;
    let last = outs - 1u;
    // The group's rows (out-of-range groups read the last row and write
    // nothing).
    let c = min(c0, last);
    let r0 = c;
    let r1 = select(min(c + 1u, last), c + outs, SWIGLU);
    let a0 = p.w_offset + r0 * p.words;
    let a1 = p.w_offset + r1 * p.words;
    let pairs = KB / 2u;
    // A lane's first pair is on its way while x is rounded; where a lane
    // has at most three (ITER), all of them, so that it waits on memory
    // once; else each next pair is loaded while the current one is summed.
    let p1 = lane + LANES;
    let p2 = lane + 2u * LANES;
    var w0 = Rows();
    var w1 = Rows();
    var w2 = Rows();
    if (lane < pairs) { w0 = load_rows(a0, a1, lane); }
    if (ITER <= 3u) {
        if (ITER > 1u && p1 < pairs) { w1 = load_rows(a0, a1, p1); }
        if (ITER > 2u && p2 < pairs) { w2 = load_rows(a0, a1, p2); }
    }
    stage_x((p.x_offset + i * p.k) / 4u, lid);
    workgroupBarrier();
    var acc = vec2<f32>(0.0);
    if (ITER <= 3u) {
        if (lane < pairs) { acc += dot_rows(w0, lane); }
        if (ITER > 1u && p1 < pairs) { acc += dot_rows(w1, p1); }
        if (ITER > 2u && p2 < pairs) { acc += dot_rows(w2, p2); }
    } else {
        for (var pr = lane; pr < pairs; pr += LANES) {
            let cur = w0;
            if (pr + LANES < pairs) { w0 = load_rows(a0, a1, pr + LANES); }
            acc += dot_rows(cur, pr);
        }
    }
    var sq = 0.0;
    if (NORM) {
        for (var b = lane; b < KB; b += LANES) {
            sq += xsq[b];
        }
    }
    red[lid] = vec4<f32>(acc, sq, 0.0);
    workgroupBarrier();
    for (var s = LANES / 2u; s > 0u; s = s / 2u) {
        if (lane < s) {
            red[lid] += red[lid + s];
        }
        workgroupBarrier();
    }
    if (lane != 0u || c0 >= outs) {
        return;
    }
    var y = red[lid].xy;
    if (NORM) {
        y *= inverseSqrt(red[lid].z / f32(p.k) + p.eps);
    }
    if (HAS_BIAS) {
        y += vec2<f32>(bias[p.b_offset + r0], bias[p.b_offset + r1]);
    }
    if (SWIGLU) {
        var v = y.x / (1.0 + exp(-y.x)) * y.y;
        if (RESIDUAL) {
            v += res[p.r_offset + i * outs + c0];
        }
        out[p.o_offset + i * outs + c0] = v;
        return;
    }
    for (var k = 0u; k < ROWS; k++) {
        let col = c0 + k;
        if (col < outs) {
            var v = y[k];
            if (RESIDUAL) {
                v += res[p.r_offset + i * outs + col];
            }
            out[p.o_offset + i * outs + col] = v;
        }
    }
}
