// The parameters and bindings of the native f16 elementwise kernels
// (ew_f16_x8.wgsl, ew_f16_strided.wgsl), a library so that both share one
// layout with the host (f16_params in kernels/elementwise_f16.c). W, from
// the prelude, is the unit a binding holds: vec4<u32> (8 halves) or u32
// (2 halves).

struct Params {
    n: u32,          // elements of out
    units: u32,      // units of out
    ndim: u32,       // merged axes (the strided walk)
    a_offset: u32,   // ew_f16_x8: in units; ew_f16_strided: in elements
    b_offset: u32,
    out_offset: u32, // in units
    p0: u32,         // the op's parameters (f32 bits); p1 is a scalar b
    p1: u32,
    shape: array<vec4<u32>, 2>,
    a_strides: array<vec4<u32>, 2>,
    b_strides: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<W>;
@group(0) @binding(2) var<storage, read> b: array<W>;
@group(0) @binding(3) var<storage, read_write> out: array<W>;
