// out = op(x) on f16 tensors read and written as u32 words of two halves:
// x and out contiguous, of the same length n, each starting at a word
// (even element offset). Thread t converts word t to f32 (f16_bits),
// applies the generated apply to both halves and writes the word back
// rounded to nearest even, so no two threads touch one word. For odd n the
// upper half of the last word lies beyond out and is written 0 (out is a
// fresh tensor that owns its whole buffer).
// Prelude: WG, `alias S / T / U / B / TO` (f32, vec2 of f32 / u32 / bool,
// vec2<f32>) and the generated `fn apply(v: T) -> TO`, then the f16_bits
// (or f16_hw) and ew_float libraries.

struct Params {
    n: u32,        // elements
    x_word: u32,   // first word of x
    out_word: u32, // first word of out
    pad0: u32,
    p0: u32,       // the op's parameters (f32 bits)
    p1: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = (wid.x + wid.y * nwg.x) * WG + lid;
    if (t >= (p.n + 1u) / 2u) {
        return;
    }
    let r = pack_halves(apply(unpack_halves(x[p.x_word + t])));
    out[p.out_word + t] = select(r, r & 0xffffu, 2u * t + 1u == p.n);
}
