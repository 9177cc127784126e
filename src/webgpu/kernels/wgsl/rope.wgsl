// Rotary position embedding (Llama / Hugging Face rotate_half) of x
// [A, S, C, D] (any strides) into contiguous out: one thread per pair
// (x[i], x[i + D/2]) of one (a, s, c).
//
// The angle p * f_i is formed in turns, exactly enough for any position
// below 2^24: freq holds f_i / (2 pi) as hi + lo (two f32s, made on the
// host in double); hi and p are each split into two 12-bit halves, so the
// four partial products are exact in f32 and their fractional parts add
// up to the angle mod 1 with an error near 1e-7 turns. sin and cos then
// see an argument in [-pi, pi), where GPUs are accurate.
//
// Prelude: WG. Library: rope_turns (turns).

struct Params {
    a_n: u32, s_n: u32, c_n: u32, half: u32,
    x_offset: u32, sa: u32, ss: u32, sc: u32,
    sd: u32, offset: u32, pairs: u32, pos_at: u32, // pos_at: ~0u none
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> freq: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
// wt_rope_options.position (read at pos_at, added to offset); else freq
// bound again.
@group(0) @binding(4) var<storage, read> position: array<i32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let n = (wid.x + wid.y * nwg.x) * WG + lid;
    if (n >= p.pairs) { return; }
    let i = n % p.half;
    let r = n / p.half; // (a, s, c) row, c fastest
    let c = r % p.c_n;
    let s = (r / p.c_n) % p.s_n;
    let a = r / (p.c_n * p.s_n);
    var first = p.offset;
    if (p.pos_at != 0xffffffffu) { first += u32(max(position[p.pos_at], 0)); }
    var t = turns(first + s, i);
    t = select(t, t - 1.0, t >= 0.5);
    let ang = t * 6.283185307179586;
    let cs = cos(ang);
    let sn = sin(ang);
    let base = p.x_offset + a * p.sa + s * p.ss + c * p.sc;
    let x1 = x[base + i * p.sd];
    let x2 = x[base + (i + p.half) * p.sd];
    let o = r * 2u * p.half + i;
    out[o] = x1 * cs - x2 * sn;
    out[o + p.half] = x2 * cs + x1 * sn;
}
