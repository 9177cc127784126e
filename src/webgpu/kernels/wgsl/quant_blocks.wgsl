// ggml's Q8_0 / Q4_0 blocks (webtensor.h, "quantised weights"), a library
// for the shaders that read a quantised weight from `w` (its i32 words as
// array<u32>, declared by the shader): a row starts at word `row`, block b
// of the row at byte b * BLOCK_BYTES, byte i of the row in bits 8*(i%4) of
// word i/4. Both block sizes are even, so every block, its f16 d and its
// quants start on an even byte: d never straddles two words, and four
// bytes from an even byte take at most two.
// Prelude: Q8 (true: Q8_0, false: Q4_0), BLOCK_BYTES (34 or 18).
// Needs the f16_bits library (d converted exactly, subnormals included).

// The four bytes from the even byte b of the row, as one little-endian word.
fn quad_at(row: u32, b: u32) -> u32 {
    let i = row + (b >> 2u);
    if ((b & 2u) == 0u) {
        return w[i];
    }
    return (w[i] >> 16u) | (w[i + 1u] << 16u);
}

// d of block blk.
fn block_scale(row: u32, blk: u32) -> f32 {
    let b = blk * BLOCK_BYTES;
    let h = (w[row + (b >> 2u)] >> ((b & 2u) * 8u)) & 0xffffu;
    return bitcast<f32>(half_to_f32_bits(h));
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
    let byte = (w[row + (b >> 2u)] >> ((b & 3u) * 8u)) & 0xffu;
    if (Q8) {
        return f32(bitcast<i32>(byte << 24u) >> 24u);
    }
    return f32(i32(select(byte & 15u, byte >> 4u, j >= 16u)) - 8);
}
