// f16 <-> f32 through WGSL's own f16 type, for devices with shader-f16
// (pipeline.c puts `enable f16;` first for launches that take this
// library): the same two functions as f16_bits.wgsl and f16_hw.wgsl, at
// a few instructions a pair. Widening is exact for every half. Narrowing
// is the device's conversion, which WGSL leaves indeterminate beyond the
// f16 range and for NaN: both are spelt out (|v| >= 65520 rounds to inf
// under round-to-nearest-even; a NaN stays a quiet NaN of its sign); the
// rounding of the rest is the hardware's, hence the f16 tolerances of the
// tests on this path.

fn unpack_halves(w: u32) -> vec2<f32> { return vec2<f32>(bitcast<vec2<f16>>(w)); }

fn pack_halves(v: vec2<f32>) -> u32 {
    let bits = bitcast<vec2<u32>>(v);
    let mag = bits & vec2<u32>(0x7fffffffu);
    let sign = (bits >> vec2<u32>(16u)) & vec2<u32>(0x8000u);
    let lim = vec2<f32>(65504.0);
    let w = bitcast<u32>(vec2<f16>(clamp(v, -lim, lim)));
    var h = vec2<u32>(w & 0xffffu, w >> 16u);
    h = select(h, sign | vec2<u32>(0x7c00u), mag >= vec2<u32>(0x477ff000u)); // |v| >= 65520
    h = select(h, sign | vec2<u32>(0x7e00u), mag > vec2<u32>(0x7f800000u));  // NaN
    return h.x | (h.y << 16u);
}
