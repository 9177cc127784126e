// y [M, N] = x [M, K] @ W^T + bias with W quantised (core/node.h
// LINEAR_QUANT), the fused dequantise-GEMV for decode: a workgroup takes
// ROWS rows of W for one row of x, LANES threads per row. The threads of
// a row take its units in turn (neighbours read neighbouring bytes), so
// each unit is read once, straight from storage, and never made dense:
//   Q4_0 / Q8_0: a pair of blocks (36 / 68 bytes: whole words from the
//                row's start), the last unit a single block when the row
//                has an odd count;
//   Q4_K:        64 elements (a quarter super-block: 32 bytes of nibbles
//                holding two sub-blocks);
//   Q6_K:        128 elements (half a super-block).
// Quants become floats without integer-to-float conversions: a value
// n < 2^23 ORed into the bits of 2^23 is the float 2^23 + n exactly, and
// one subtraction takes off 2^23 and the format's offset. Each thread
// sums its products in f32; the row's threads then add their sums in
// workgroup memory.
// x is read as vec4 (its offset a multiple of 4 elements; K is).
// Around the product, as wt_linear_quant_fused asks (prelude flags; the
// Q6_K weights of Q4_K_M and Q6_K files come here, so that their norms,
// SwiGLUs and residual adds are not kernels of their own):
//   NORM: an RMSNorm of x first, its 1/rms factored out: the products
//         read x * g, the sums are scaled by 1/rms before the bias; a
//         row's lanes sum x's squares between them in a pass of their own
//         (x is a few KB, read from the cache);
//   SWIGLU: a row's lanes take a gate row and its up row N/2 below, each
//         unit of both in turn, and write silu(gate) * up;
//   RESIDUAL: res (the result's shape) added last.
// Prelude: TYPE, BLOCK_BYTES, HAS_BIAS, NORM, SWIGLU, RESIDUAL, ROWS,
// LANES (a power of two, ROWS * LANES = 256); libraries f16_bits and
// quant_blocks.

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

var<workgroup> partial: array<f32, 256>;
var<workgroup> partial_up: array<f32, 256>; // SWIGLU: the up rows' sums
var<workgroup> partial_sq: array<f32, 256>;

// x's vec4 xi of the row starting at vec4 xrow, times the norm weight
// with NORM.
fn xg(xi: u32, xrow: u32) -> vec4<f32> {
    if (NORM) {
        return x[xi] * g[p.g_offset / 4u + xi - xrow];
    }
    return x[xi];
}

const MAGIC: u32 = 0x4b000000u; // the bits of 2^23
const TWO23: f32 = 8388608.0;

// The four bytes of v (each < 2^23 after masking) as floats minus off.
fn bytes4(v: u32, off: f32) -> vec4<f32> {
    return bitcast<vec4<f32>>(vec4<u32>(MAGIC | (v & 0xffu), MAGIC | ((v >> 8u) & 0xffu),
                                        MAGIC | ((v >> 16u) & 0xffu), MAGIC | (v >> 24u))) - (TWO23 + off);
}

// Q4_0: the 16 nibble bytes qs (four words) of one block dotted with the
// block's x (8 vec4 from xi), without d.
fn q4_0_dot(q0: u32, q1: u32, q2: u32, q3: u32, xi: u32, xrow: u32) -> f32 {
    let lo = 0x0f0f0f0fu;
    var s = dot(bytes4(q0 & lo, 8.0), xg(xi, xrow)) + dot(bytes4(q1 & lo, 8.0), xg(xi + 1u, xrow));
    s += dot(bytes4(q2 & lo, 8.0), xg(xi + 2u, xrow)) + dot(bytes4(q3 & lo, 8.0), xg(xi + 3u, xrow));
    s += dot(bytes4((q0 >> 4u) & lo, 8.0), xg(xi + 4u, xrow)) + dot(bytes4((q1 >> 4u) & lo, 8.0), xg(xi + 5u, xrow));
    s += dot(bytes4((q2 >> 4u) & lo, 8.0), xg(xi + 6u, xrow)) + dot(bytes4((q3 >> 4u) & lo, 8.0), xg(xi + 7u, xrow));
    return s;
}

// Q8_0: four bytes of int8 quants: flipping the sign bits makes them
// q + 128 (0 .. 255).
fn q8_dot(q: u32, xv: vec4<f32>) -> f32 {
    return dot(bytes4(q ^ 0x80808080u, 128.0), xv);
}

fn lo16(v: u32) -> f32 { return bitcast<f32>(half_to_f32_bits(v & 0xffffu)); }
fn hi16(v: u32) -> f32 { return bitcast<f32>(half_to_f32_bits(v >> 16u)); }

// The sum of unit u of the row (words from rw) against x from xrow (vec4
// index).
fn unit_sum(rw: u32, u: u32, xrow: u32, nblocks: u32) -> f32 {
    if (TYPE == 2u) {
        let a = rw + u * 9u; // a pair: 36 bytes
        let xi = xrow + u * 16u;
        let a0 = w[a];
        let a1 = w[a + 1u];
        let a2 = w[a + 2u];
        let a3 = w[a + 3u];
        let a4 = w[a + 4u];
        var s = lo16(a0) * q4_0_dot((a0 >> 16u) | (a1 << 16u), (a1 >> 16u) | (a2 << 16u),
                                    (a2 >> 16u) | (a3 << 16u), (a3 >> 16u) | (a4 << 16u), xi, xrow);
        if (2u * u + 1u < nblocks) {
            s += hi16(a4) * q4_0_dot(w[a + 5u], w[a + 6u], w[a + 7u], w[a + 8u], xi + 8u, xrow);
        }
        return s;
    }
    if (TYPE == 8u) {
        let a = rw + u * 17u; // a pair: 68 bytes
        let xi = xrow + u * 16u;
        var prev = w[a];
        let d0 = lo16(prev);
        var s0 = 0.0;
        for (var j = 0u; j < 8u; j++) {
            let nxt = w[a + 1u + j];
            s0 += q8_dot((prev >> 16u) | (nxt << 16u), xg(xi + j, xrow));
            prev = nxt;
        }
        var s = d0 * s0;
        if (2u * u + 1u < nblocks) {
            var s1 = 0.0;
            for (var j = 0u; j < 8u; j++) {
                s1 += q8_dot(w[a + 9u + j], xg(xi + 8u + j, xrow));
            }
            s += hi16(prev) * s1;
        }
        return s;
    }
    if (TYPE == 12u) {
        let sb = u / 4u;
        let c = u % 4u;
        let a = rw + sb * 36u; // 144 bytes
        let dd = unpack_halves(w[a]);
        let base = sb * 144u;
        let sm0 = q4k_scale_min(rw, base, 2u * c);
        let sm1 = q4k_scale_min(rw, base, 2u * c + 1u);
        let q = a + 4u + 8u * c;
        let xi = xrow + u * 16u;
        let lo = 0x0f0f0f0fu;
        var sq0 = 0.0;
        var sq1 = 0.0;
        var sx0 = vec4<f32>(0.0);
        var sx1 = vec4<f32>(0.0);
        for (var j = 0u; j < 8u; j++) {
            let v = w[q + j];
            let x0 = xg(xi + j, xrow);
            let x1 = xg(xi + 8u + j, xrow);
            sq0 += dot(bytes4(v & lo, 0.0), x0);
            sq1 += dot(bytes4((v >> 4u) & lo, 0.0), x1);
            sx0 += x0;
            sx1 += x1;
        }
        let m0 = dot(sx0, vec4<f32>(1.0));
        let m1 = dot(sx1, vec4<f32>(1.0));
        return dd.x * (f32(sm0.x) * sq0 + f32(sm1.x) * sq1) - dd.y * (f32(sm0.y) * m0 + f32(sm1.y) * m1);
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
    // Quarters g = 0..3 of 32 elements; each has two sub-blocks of 16
    // (half 0: l < 16, half 1: l >= 16) with a scale each, sc[2g + half].
    var t = 0.0;
    for (var half = 0u; half < 2u; half++) {
        var sums = vec4<f32>(0.0); // by quarter
        for (var jj = 0u; jj < 4u; jj++) {
            let j = 4u * half + jj;
            let l0 = quad_at(rw, ql + 4u * j);
            let l1 = quad_at(rw, ql + 32u + 4u * j);
            let hb = quad_at(rw, qh + 4u * j);
            sums += vec4<f32>(dot(bytes4((l0 & lo) | ((hb & two) << 4u), 32.0), xg(xi + j, xrow)),
                              dot(bytes4((l1 & lo) | (((hb >> 2u) & two) << 4u), 32.0), xg(xi + 8u + j, xrow)),
                              dot(bytes4(((l0 >> 4u) & lo) | (((hb >> 4u) & two) << 4u), 32.0), xg(xi + 16u + j, xrow)),
                              dot(bytes4(((l1 >> 4u) & lo) | (((hb >> 6u) & two) << 4u), 32.0), xg(xi + 24u + j, xrow)));
        }
        // the int8 scales sc[half], sc[2 + half], sc[4 + half], sc[6 + half]
        let sa = quad_at(rw, base + 192u + 8u * h) >> (8u * half);
        let sb2 = quad_at(rw, base + 196u + 8u * h) >> (8u * half);
        let sc = vec4<f32>(vec4<i32>(bitcast<i32>(sa << 24u) >> 24u, bitcast<i32>(sa << 8u) >> 24u,
                                     bitcast<i32>(sb2 << 24u) >> 24u, bitcast<i32>(sb2 << 8u) >> 24u));
        t += dot(sc, sums);
    }
    return half_at(rw, base + 208u) * t;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    // The outputs: a row each, or with SWIGLU a gate row r and its up
    // row r + N/2 each.
    let outs = select(p.n, p.n / 2u, SWIGLU);
    let groups = (outs + ROWS - 1u) / ROWS;
    let g = wid.x + wid.y * nwg.x; // uniform across the workgroup
    if (g >= groups * p.m) {
        return;
    }
    let i = g / groups;
    let r = (g % groups) * ROWS + lid / LANES;
    let lane = lid % LANES;
    var acc = 0.0;
    var acc_up = 0.0;
    var sq = 0.0;
    let xrow = (p.x_offset + i * p.k) / 4u;
    if (r < outs) {
        let rw = p.w_offset + r * p.words;
        let rw_up = p.w_offset + (r + outs) * p.words;
        let units = gemv_units(p.k);
        let nblocks = p.k / 32u; // Q4_0 / Q8_0 only
        for (var u = lane; u < units; u += LANES) {
            acc += unit_sum(rw, u, xrow, nblocks);
            if (SWIGLU) {
                acc_up += unit_sum(rw_up, u, xrow, nblocks);
            }
        }
    }
    if (NORM) {
        for (var v = lane; v < p.k / 4u; v += LANES) {
            let t = x[xrow + v];
            sq += dot(t, t);
        }
        partial_sq[lid] = sq;
    }
    partial[lid] = acc;
    if (SWIGLU) {
        partial_up[lid] = acc_up;
    }
    workgroupBarrier();
    for (var s = LANES / 2u; s > 0u; s = s / 2u) {
        if (lane < s) {
            partial[lid] += partial[lid + s];
            if (SWIGLU) {
                partial_up[lid] += partial_up[lid + s];
            }
            if (NORM) {
                partial_sq[lid] += partial_sq[lid + s];
            }
        }
        workgroupBarrier();
    }
    if (lane == 0u && r < outs) {
        var y = vec2<f32>(partial[lid], 0.0);
        if (SWIGLU) {
            y.y = partial_up[lid];
        }
        if (NORM) {
            y *= inverseSqrt(partial_sq[lid] / f32(p.k) + p.eps);
        }
        if (HAS_BIAS) {
            y.x += bias[p.b_offset + r];
            if (SWIGLU) {
                y.y += bias[p.b_offset + r + outs];
            }
        }
        var v = y.x;
        if (SWIGLU) {
            v = y.x / (1.0 + exp(-y.x)) * y.y;
        }
        if (RESIDUAL) {
            v += res[p.r_offset + i * outs + r];
        }
        out[p.o_offset + i * outs + r] = v;
    }
}
