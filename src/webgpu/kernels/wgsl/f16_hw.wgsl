// f16 <-> f32 by the GPU's own conversions: the same two functions as
// f16_bits.wgsl, for the elementwise f16 kernels. WGSL leaves
// pack2x16float's rounding and overflow and unpack2x16float's subnormals
// loosely specified, so this library is used only where f16_probe.wgsl
// found both exact on the device (NaN may change its payload).

fn unpack_halves(w: u32) -> vec2<f32> { return unpack2x16float(w); }

fn pack_halves(v: vec2<f32>) -> u32 { return pack2x16float(v); }
