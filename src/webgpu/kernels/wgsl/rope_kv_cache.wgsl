// wt_rope_kv_cache: qkv [B, S, Hq + 2 Hkv, D] (any strides, f32 or f16
// words) -> q [B, Hq, S, D] (f32, contiguous) rotated, the cache's rows
// t0 + s (t0 = p clamped to [0, T - S]) of its k heads rotated and of its
// v heads copied; one thread per pair (i, i + D/2) of one (b, s, head).
// The rotation is rope.wgsl's.
// Prelude: WG, F16. Library: rope_turns (turns), f16_bits / f16_hw /
// f16_native (unpack_halves).

struct Params {
    b_n: u32, s_n: u32, heads: u32, half: u32,
    q_heads: u32, kv: u32, t_n: u32, offset: u32,
    x_offset: u32, sb: u32, ss: u32, sh: u32,
    sd: u32, pos_at: u32, c_offset: u32, cb: u32, // pos_at: ~0u none
    ch: u32, ct: u32, cd: u32, pairs: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read> freq: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> q: array<f32>;
@group(0) @binding(4) var<storage, read_write> cache: array<f32>;
// wt_rope_kv_cache_options.position (read at pos_at); else freq bound again.
@group(0) @binding(5) var<storage, read> position: array<i32>;

fn x_at(i: u32) -> f32 {
    if (F16) {
        let v = unpack_halves(x[i >> 1u]);
        return select(v.x, v.y, (i & 1u) == 1u);
    }
    return bitcast<f32>(x[i]);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let n = (wid.x + wid.y * nwg.x) * WG + lid;
    if (n >= p.pairs) { return; }
    let i = n % p.half;
    let r = n / p.half; // (b, s, head), head fastest
    let h = r % p.heads;
    let s = (r / p.heads) % p.s_n;
    let b = r / (p.heads * p.s_n);
    var first = p.offset;
    if (p.pos_at != 0xffffffffu) { first += u32(max(position[p.pos_at], 0)); }
    let base = p.x_offset + b * p.sb + s * p.ss + h * p.sh;
    let x1 = x_at(base + i * p.sd);
    let x2 = x_at(base + (i + p.half) * p.sd);
    var y1 = x1;
    var y2 = x2;
    if (h < p.q_heads + p.kv) {
        var t = turns(first + s, i);
        t = select(t, t - 1.0, t >= 0.5);
        let ang = t * 6.283185307179586;
        let cs = cos(ang);
        let sn = sin(ang);
        y1 = x1 * cs - x2 * sn;
        y2 = x2 * cs + x1 * sn;
    }
    if (h < p.q_heads) {
        let o = ((b * p.q_heads + h) * p.s_n + s) * 2u * p.half + i;
        q[o] = y1;
        q[o + p.half] = y2;
    } else {
        let row = min(first, p.t_n - p.s_n) + s;
        let o = p.c_offset + b * p.cb + (h - p.q_heads) * p.ch + row * p.ct;
        cache[o + i * p.cd] = y1;
        cache[o + (i + p.half) * p.cd] = y2;
    }
}
