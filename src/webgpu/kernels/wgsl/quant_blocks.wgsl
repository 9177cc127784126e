// ggml's Q8_0 / Q4_0 / Q4_K / Q6_K blocks (webtensor.h, "quantised
// weights"), a library for the shaders that read a quantised weight from
// `w` (its i32 words as array<u32>, declared by the shader): a row starts
// at word `row`, block b of the row at byte b * BLOCK_BYTES, byte i of the
// row in bits 8*(i%4) of word i/4. Every block size is even, so every
// block and its f16 fields start on an even byte: an f16 never straddles
// two words, and four bytes from an even byte take at most two.
// Prelude: TYPE (ggml's type id: 2 Q4_0, 8 Q8_0, 12 Q4_K, 14 Q6_K), Q8
// (TYPE == 8), BLOCK_BYTES (18, 34, 144, 210).
// Needs the f16_bits library (half_to_f32_bits: d converted exactly,
// subnormals included).

// The four bytes from the even byte b of the row, as one little-endian word.
fn quad_at(row: u32, b: u32) -> u32 {
    let i = row + (b >> 2u);
    if ((b & 2u) == 0u) {
        return w[i];
    }
    return (w[i] >> 16u) | (w[i + 1u] << 16u);
}

fn byte_at(row: u32, b: u32) -> u32 {
    return (w[row + (b >> 2u)] >> ((b & 3u) * 8u)) & 0xffu;
}

// The f16 at the even byte b of the row, as f32.
fn half_at(row: u32, b: u32) -> f32 {
    return bitcast<f32>(half_to_f32_bits((w[row + (b >> 2u)] >> ((b & 2u) * 8u)) & 0xffffu));
}

// d of block blk (Q8_0 / Q4_0).
fn block_scale(row: u32, blk: u32) -> f32 {
    return half_at(row, blk * BLOCK_BYTES);
}

// Q8_0: quants 4g .. 4g+3 of block blk (g < 8), sign-extended.
fn q8_quad(row: u32, blk: u32, g: u32) -> vec4<f32> {
    let v = quad_at(row, blk * BLOCK_BYTES + 2u + 4u * g);
    return vec4<f32>(vec4<i32>(bitcast<i32>(v << 24u) >> 24u, bitcast<i32>(v << 16u) >> 24u,
                               bitcast<i32>(v << 8u) >> 24u, bitcast<i32>(v) >> 24u));
}

// Q4_0: bytes 4g .. 4g+3 of the block's nibbles (g < 4) as nibble - 8:
// the low nibbles are elements 4g .. 4g+3, the high ones 16 + 4g ...
fn q4_low(v: u32) -> vec4<f32> {
    return vec4<f32>(vec4<u32>(v & 15u, (v >> 8u) & 15u, (v >> 16u) & 15u, (v >> 24u) & 15u)) - 8.0;
}
fn q4_high(v: u32) -> vec4<f32> {
    return q4_low(v >> 4u);
}

// Element j (< 32) of block blk, without d: the int8 (Q8_0) or nibble - 8.
fn block_quant(row: u32, blk: u32, j: u32) -> f32 {
    var b = blk * BLOCK_BYTES + 2u;
    if (Q8) {
        b += j;
    } else {
        b += j & 15u;
    }
    let byte = byte_at(row, b);
    if (Q8) {
        return f32(bitcast<i32>(byte << 24u) >> 24u);
    }
    return f32(i32(select(byte & 15u, byte >> 4u, j >= 16u)) - 8);
}

// Q4_K: the 6-bit scale (x) and min (y) of sub-block s (< 8) of the
// super-block at byte base.
fn q4k_scale_min(row: u32, base: u32, s: u32) -> vec2<u32> {
    let S = base + 4u;
    if (s < 4u) {
        return vec2<u32>(byte_at(row, S + s) & 63u, byte_at(row, S + s + 4u) & 63u);
    }
    let hi = byte_at(row, S + s + 4u);
    return vec2<u32>((hi & 15u) | ((byte_at(row, S + s - 4u) >> 6u) << 4u),
                     (hi >> 4u) | ((byte_at(row, S + s) >> 6u) << 4u));
}

// Element e of the row, dequantised (the values the header states: the
// products are exact in f32, Q4_K's difference is rounded once).
fn weight_at(row: u32, e: u32) -> f32 {
    if (TYPE == 12u) {
        let base = (e / 256u) * BLOCK_BYTES;
        let r = e % 256u;
        let s = r / 32u;
        let sm = q4k_scale_min(row, base, s);
        let q = (byte_at(row, base + 16u + 32u * (r / 64u) + (r % 32u)) >> ((s & 1u) * 4u)) & 15u;
        return (half_at(row, base) * f32(sm.x)) * f32(q) - half_at(row, base + 2u) * f32(sm.y);
    }
    if (TYPE == 14u) {
        let base = (e / 256u) * BLOCK_BYTES;
        let r = e % 256u;
        let h = r / 128u;
        let g = (r % 128u) / 32u;
        let l = r % 32u;
        let lo = (byte_at(row, base + 64u * h + 32u * (g & 1u) + l) >> ((g / 2u) * 4u)) & 15u;
        let hi = (byte_at(row, base + 128u + 32u * h + l) >> (2u * g)) & 3u;
        let q = i32(lo | (hi << 4u)) - 32;
        let sc = bitcast<i32>(byte_at(row, base + 192u + 8u * h + 2u * g + l / 16u) << 24u) >> 24u;
        return (half_at(row, base + 208u) * f32(sc)) * f32(q);
    }
    let blk = e / 32u;
    return block_quant(row, blk, e & 31u) * block_scale(row, blk);
}

// The units a GEMV's threads share out of a row of k weights (units of the
// row kernels, quant_gemv_rows / _rows4 / _x8): pairs of Q4_0 / Q8_0
// blocks (the last pair may be one block), halves of a Q4_K super-block
// (64 weights) or Q6_K's quarters (128).
fn gemv_units(k: u32) -> u32 {
    if (TYPE == 2u || TYPE == 8u) { return (k / 32u + 1u) / 2u; }
    if (TYPE == 12u) { return k / 64u; }
    return k / 128u;
}
