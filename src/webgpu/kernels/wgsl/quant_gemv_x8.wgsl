// y [M, N] = x [M, K] @ W^T + bias with W quantised, x rounded to 8 bits
// per block of 32 by quant_x8.wgsl: each weight word meets its four x
// values in one dot4I8Packed (an integer dot product of four byte pairs),
// summed in i32 per block and scaled once by the weight's and x's scales.
// Per element that is a quarter of an instruction instead of the f32
// kernels' conversion and multiply-add of every element and its 4-byte x
// read (those kernels are bound by the elements, not by the weight's bytes).
// The offsets (Q4_0's 8) and minimums (Q4_K) take x's own f32 block sums,
// so only the quants' products see x's rounding: an error of at most
// d_x / 2 times |w| per element (d_x = the block's max |x| / 127).
// Threads and units as quant_gemv_rows.wgsl: LANES threads a weight row,
// ROWS rows a workgroup, a unit of 64 elements (Q8_0, Q4_0: two blocks;
// Q4_K: a sub-block pair) or 128 (Q6_K: half a super-block) a thread.
// Prelude: TYPE, BLOCK_BYTES, HAS_BIAS, ROWS, LANES (ROWS * LANES = 256),
// COOP (a unit's parts to consecutive threads: q8_part, q4_part,
// q4k_part; Q6_K keeps a unit a thread);
// libraries f16_bits and quant_blocks.

struct Params {
    m: u32, n: u32, k: u32, words: u32,
    x_offset: u32, w_offset: u32, b_offset: u32, pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> xq: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> xds: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read> w: array<u32>;
@group(0) @binding(4) var<storage, read> bias: array<f32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;

var<workgroup> partial: array<f32, 256>;

const NIBBLES: u32 = 0x0f0f0f0fu;

fn lo16(v: u32) -> f32 { return bitcast<f32>(half_to_f32_bits(v & 0xffffu)); }
fn hi16(v: u32) -> f32 { return bitcast<f32>(half_to_f32_bits(v >> 16u)); }

// The four bytes starting two bytes into word i (a block at an odd place).
fn mid(i: u32) -> u32 { return (w[i] >> 16u) | (w[i + 1u] << 16u); }

// Sixteen int8 products: four weight words against the x words of v.
fn dot16(a: vec4<u32>, v: vec4<u32>) -> i32 {
    return dot4I8Packed(a.x, v.x) + dot4I8Packed(a.y, v.y) + dot4I8Packed(a.z, v.z) + dot4I8Packed(a.w, v.w);
}

// Q4_0: a block's nibble words q (bytes 4g..4g+3 in q[g]) against x block
// xb: the low nibbles are elements 0-15, the high ones 16-31.
fn q4_block(d: f32, q: vec4<u32>, xb: u32) -> f32 {
    let n = vec4<u32>(NIBBLES);
    let s = dot16(q & n, xq[2u * xb]) + dot16((q >> vec4<u32>(4u)) & n, xq[2u * xb + 1u]);
    let ds = xds[xb];
    return d * (ds.x * f32(s) - 8.0 * ds.y);
}

// Q8_0: a block's int8 words (two vec4) against x block xb.
fn q8_block(d: f32, q0: vec4<u32>, q1: vec4<u32>, xb: u32) -> f32 {
    let s = dot16(q0, xq[2u * xb]) + dot16(q1, xq[2u * xb + 1u]);
    return d * xds[xb].x * f32(s);
}

// Q6_K: 6-bit codes c (four a word, each 0..63) as the signed bytes c - 32:
// bit 5 flipped is (c - 32) mod 64, and its new bit 5 is the sign.
fn q6_signed(c: u32) -> u32 {
    let t = c ^ 0x20202020u;
    let s = t & 0x20202020u;
    return t | (s << 1u) | (s << 2u);
}

fn sbyte_at(row: u32, b: u32) -> f32 { return f32(bitcast<i32>(byte_at(row, b) << 24u) >> 24u); }

// Q8_0 with COOP: part s (< 8) of unit u, a quarter of one of its two
// blocks (two int8 words), so that consecutive threads read consecutive
// words (a unit a thread puts 68 bytes between neighbours' reads).
fn q8_part(rw: u32, u: u32, s: u32, xrow: u32, nblocks: u32) -> f32 {
    let h = s / 4u;
    let jj = 2u * (s % 4u);
    if (2u * u + h >= nblocks) {
        return 0.0;
    }
    let a = rw + u * 17u;
    // block 0's words start two bytes into word a, block 1's at word a + 9
    let i = a + jj + 9u * h;
    let v0 = w[i];
    let v1 = w[i + 1u];
    let v2 = w[min(i + 2u, a + 16u)];
    let first = h == 0u;
    let q0 = select(v0, (v0 >> 16u) | (v1 << 16u), first);
    let q1 = select(v1, (v1 >> 16u) | (v2 << 16u), first);
    let dw = w[a + 8u * h];
    let d = bitcast<f32>(half_to_f32_bits(select(dw >> 16u, dw & 0xffffu, first)));
    let xb = xrow + 2u * u + h;
    let xv = xq[2u * xb + jj / 4u];
    let sel = jj % 4u;
    let s8 = dot4I8Packed(q0, xv[sel]) + dot4I8Packed(q1, xv[sel + 1u]);
    return d * xds[xb].x * f32(s8);
}

// Q4_0 with COOP: part s (< 4) of unit u, half of one of its blocks (two
// nibble words); the part of a block's first half adds its offset.
fn q4_part(rw: u32, u: u32, s: u32, xrow: u32, nblocks: u32) -> f32 {
    let h = s / 2u;
    let g = 2u * (s % 2u);
    if (2u * u + h >= nblocks) {
        return 0.0;
    }
    let a = rw + u * 9u;
    // block 0's nibbles start two bytes into word a, block 1's at word a + 5
    let i = a + g + 5u * h;
    let v0 = w[i];
    let v1 = w[i + 1u];
    let v2 = w[min(i + 2u, a + 8u)];
    let first = h == 0u;
    let q0 = select(v0, (v0 >> 16u) | (v1 << 16u), first);
    let q1 = select(v1, (v1 >> 16u) | (v2 << 16u), first);
    let dw = w[a + 4u * h];
    let d = bitcast<f32>(half_to_f32_bits(select(dw >> 16u, dw & 0xffffu, first)));
    let xb = xrow + 2u * u + h;
    let xl = xq[2u * xb];
    let xh = xq[2u * xb + 1u];
    let sum = dot4I8Packed(q0 & NIBBLES, xl[g]) + dot4I8Packed(q1 & NIBBLES, xl[g + 1u]) +
              dot4I8Packed((q0 >> 4u) & NIBBLES, xh[g]) + dot4I8Packed((q1 >> 4u) & NIBBLES, xh[g + 1u]);
    let ds = xds[xb];
    return d * (ds.x * f32(sum) - select(0.0, 8.0 * ds.y, g == 0u));
}

// Q4_K with COOP: part s (< 8) of super-block sb, half (16 bytes) of the
// nibbles of sub-block pair s / 2; the pair's first half adds the minimums.
fn q4k_part(rw: u32, sb: u32, s: u32, xrow: u32) -> f32 {
    let c = s / 2u;
    let half = s % 2u;
    let a = rw + sb * 36u;
    let dd = w[a];
    let qi = a + 4u + 8u * c + 4u * half;
    let q = vec4<u32>(w[qi], w[qi + 1u], w[qi + 2u], w[qi + 3u]);
    let n = vec4<u32>(NIBBLES);
    let xb = xrow + sb * 8u + 2u * c;
    let s0 = dot16(q & n, xq[2u * xb + half]);
    let s1 = dot16((q >> vec4<u32>(4u)) & n, xq[2u * xb + 2u + half]);
    let m0 = q4k_scale_min(rw, sb * 144u, 2u * c);
    let m1 = q4k_scale_min(rw, sb * 144u, 2u * c + 1u);
    let x0 = xds[xb];
    let x1 = xds[xb + 1u];
    let mins = select(0.0, hi16(dd) * (f32(m0.y) * x0.y + f32(m1.y) * x1.y), half == 0u);
    return lo16(dd) * (f32(m0.x) * x0.x * f32(s0) + f32(m1.x) * x1.x * f32(s1)) - mins;
}

fn unit(rw: u32, u: u32, xrow: u32, nblocks: u32) -> f32 {
    if (TYPE == 2u) {
        let a = rw + u * 9u;
        let b0 = xrow + 2u * u;
        var r = q4_block(lo16(w[a]), vec4<u32>(mid(a), mid(a + 1u), mid(a + 2u), mid(a + 3u)), b0);
        if (2u * u + 1u < nblocks) {
            r += q4_block(hi16(w[a + 4u]), vec4<u32>(w[a + 5u], w[a + 6u], w[a + 7u], w[a + 8u]), b0 + 1u);
        }
        return r;
    }
    if (TYPE == 8u) {
        let a = rw + u * 17u;
        let b0 = xrow + 2u * u;
        var r = q8_block(lo16(w[a]), vec4<u32>(mid(a), mid(a + 1u), mid(a + 2u), mid(a + 3u)),
                         vec4<u32>(mid(a + 4u), mid(a + 5u), mid(a + 6u), mid(a + 7u)), b0);
        if (2u * u + 1u < nblocks) {
            r += q8_block(hi16(w[a + 8u]), vec4<u32>(w[a + 9u], w[a + 10u], w[a + 11u], w[a + 12u]),
                          vec4<u32>(w[a + 13u], w[a + 14u], w[a + 15u], w[a + 16u]), b0 + 1u);
        }
        return r;
    }
    if (TYPE == 12u) {
        // sub-blocks 2c (low nibbles) and 2c + 1 (high) of super-block sb
        let sb = u / 4u;
        let c = u % 4u;
        let a = rw + sb * 36u;
        let dd = w[a];
        let q = a + 4u + 8u * c;
        let q0 = vec4<u32>(w[q], w[q + 1u], w[q + 2u], w[q + 3u]);
        let q1 = vec4<u32>(w[q + 4u], w[q + 5u], w[q + 6u], w[q + 7u]);
        let n = vec4<u32>(NIBBLES);
        let four = vec4<u32>(4u);
        let xb = xrow + 2u * u;
        let s0 = dot16(q0 & n, xq[2u * xb]) + dot16(q1 & n, xq[2u * xb + 1u]);
        let s1 = dot16((q0 >> four) & n, xq[2u * xb + 2u]) + dot16((q1 >> four) & n, xq[2u * xb + 3u]);
        let m0 = q4k_scale_min(rw, sb * 144u, 2u * c);
        let m1 = q4k_scale_min(rw, sb * 144u, 2u * c + 1u);
        let x0 = xds[xb];
        let x1 = xds[xb + 1u];
        return lo16(dd) * (f32(m0.x) * x0.x * f32(s0) + f32(m1.x) * x1.x * f32(s1)) -
               hi16(dd) * (f32(m0.y) * x0.y + f32(m1.y) * x1.y);
    }
    // Q6_K: half h of super-block sb; quarter g of the half is x block
    // xrow + 4u + g, its first 16 elements under scale 2g, the rest 2g + 1.
    let sb = u / 2u;
    let h = u % 2u;
    let base = sb * 210u;
    let ql = base + 64u * h;
    let qh = base + 128u + 32u * h;
    let sc = base + 192u + 8u * h;
    var t = 0.0;
    for (var half = 0u; half < 2u; half++) {
        var c0 = vec4<u32>(0u);
        var c1 = vec4<u32>(0u);
        var c2 = vec4<u32>(0u);
        var c3 = vec4<u32>(0u);
        for (var jj = 0u; jj < 4u; jj++) {
            let j = 4u * half + jj;
            let l0 = quad_at(rw, ql + 4u * j);
            let l1 = quad_at(rw, ql + 32u + 4u * j);
            let hb = quad_at(rw, qh + 4u * j);
            c0[jj] = q6_signed((l0 & NIBBLES) | ((hb & 0x03030303u) << 4u));
            c1[jj] = q6_signed((l1 & NIBBLES) | (((hb >> 2u) & 0x03030303u) << 4u));
            c2[jj] = q6_signed(((l0 >> 4u) & NIBBLES) | (((hb >> 4u) & 0x03030303u) << 4u));
            c3[jj] = q6_signed(((l1 >> 4u) & NIBBLES) | (((hb >> 6u) & 0x03030303u) << 4u));
        }
        let xb = xrow + 4u * u;
        t += xds[xb].x * sbyte_at(rw, sc + half) * f32(dot16(c0, xq[2u * xb + half]));
        t += xds[xb + 1u].x * sbyte_at(rw, sc + 2u + half) * f32(dot16(c1, xq[2u * xb + 2u + half]));
        t += xds[xb + 2u].x * sbyte_at(rw, sc + 4u + half) * f32(dot16(c2, xq[2u * xb + 4u + half]));
        t += xds[xb + 3u].x * sbyte_at(rw, sc + 6u + half) * f32(dot16(c3, xq[2u * xb + 6u + half]));
    }
    return half_at(rw, base + 208u) * t;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let groups = (p.n + ROWS - 1u) / ROWS;
    let g = wid.x + wid.y * nwg.x; // uniform across the workgroup
    if (g >= groups * p.m) {
        return;
    }
    let i = g / groups;
    let r = (g % groups) * ROWS + lid / LANES;
    let lane = lid % LANES;
    var acc = 0.0;
    if (r < p.n) {
        let rw = p.w_offset + r * p.words;
        let nblocks = p.k / 32u;
        let xrow = i * nblocks;
        let units = gemv_units(p.k);
        if (TYPE == 8u && COOP) {
            for (var q = lane; q < units * 8u; q += LANES) {
                acc += q8_part(rw, q / 8u, q % 8u, xrow, nblocks);
            }
        } else if (TYPE == 2u && COOP) {
            for (var q = lane; q < units * 4u; q += LANES) {
                acc += q4_part(rw, q / 4u, q % 4u, xrow, nblocks);
            }
        } else if (TYPE == 12u && COOP) {
            for (var q = lane; q < p.k / 32u; q += LANES) {
                acc += q4k_part(rw, q / 8u, q % 8u, xrow);
            }
        } else {
            for (var u = lane; u < units; u += LANES) {
                acc += unit(rw, u, xrow, nblocks);
            }
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
    if (lane == 0u && r < p.n) {
        var v = partial[lid];
        if (HAS_BIAS) {
            v += bias[p.b_offset + r];
        }
        out[i * p.n + r] = v;
    }
}
