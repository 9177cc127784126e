// wt_rope_kv_attention for a decode step (S = 1), in one dispatch:
// rope_kv_cache.wgsl's rotation and cache write, then
// attention_decode.wgsl's one-pass attention, one workgroup an output row
// (batch, q head):
//   1. this head's q (rotated, scaled), its kv head's new key (rotated)
//      and value -> workgroup memory, from qkv;
//   2. the first q head of each kv head writes that key and value into
//      the cache's row t0 = min(position, T - 1);
//   3. scores, softmax and P @ V as attention_decode.wgsl (but the
//      softmax's max and sum by one tree), over the cache's first
//      kv_length rows, where row t0 is taken from workgroup memory: no
//      workgroup reads a cache row another writes.
// The rotated q is never stored. Cache rows are whole aligned vec4s; D a
// multiple of 4 with D / 4 a power of two dividing WG. One query a head
// sees every key given (causal changes nothing when S = 1).
// Prelude: WG, D, SK, F16. Library: rope_turns (turns), f16_bits /
// f16_hw / f16_native (unpack_halves).

struct Params {
    x_off: u32, x_sb: u32, x_sh: u32, x_sd: u32,
    q_heads: u32, kv: u32, group: u32, t_n: u32,
    c_off: u32, c_sb: u32, c_sh: u32, c_st: u32,
    offset: u32, pos_at: u32, kv_at: u32, workgroups: u32, // pos_at, kv_at: ~0u none
    scale: f32, neg_inf: u32, pad0: u32, pad1: u32,        // neg_inf: bits of -inf
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read> freq: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> cache: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
// The position (read at pos_at) and the key count (at kv_at); else freq's
// words bound again.
@group(0) @binding(5) var<storage, read> position: array<i32>;
@group(0) @binding(6) var<storage, read> kv_length: array<i32>;

const HALF: u32 = D / 2u;
const DW: u32 = D / 4u;
const SLICES: u32 = WG / DW;

var<workgroup> q_row: array<vec4<f32>, DW>;
var<workgroup> k_new: array<vec4<f32>, DW>;
var<workgroup> v_new: array<vec4<f32>, DW>;
var<workgroup> s: array<f32, SK>;
var<workgroup> pair: array<vec2<f32>, WG>;
var<workgroup> acc_part: array<vec4<f32>, WG>;

fn x_at(i: u32) -> f32 {
    if (F16) {
        let v = unpack_halves(x[i >> 1u]);
        return select(v.x, v.y, (i & 1u) == 1u);
    }
    return bitcast<f32>(x[i]);
}

// A thread's (largest score m, sum l of exp(score - m)) combined over the
// workgroup: every thread gets the largest score of all and the sum of
// exp(score - it). A side without keys (l == 0) adds nothing, so that two
// such (m = -inf) never meet as exp(-inf - -inf).
fn reduce_max_sum(lid: u32, m: f32, l: f32) -> vec2<f32> {
    pair[lid] = vec2<f32>(m, l);
    workgroupBarrier();
    for (var h = WG / 2u; h > 0u; h /= 2u) {
        if (lid < h) {
            let a = pair[lid];
            let b = pair[lid + h];
            let mm = max(a.x, b.x);
            let la = select(a.y * exp(a.x - mm), 0.0, a.y == 0.0);
            let lb = select(b.y * exp(b.x - mm), 0.0, b.y == 0.0);
            pair[lid] = vec2<f32>(mm, la + lb);
        }
        workgroupBarrier();
    }
    let r = pair[0];
    workgroupBarrier(); // pair is reused
    return r;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let orow = wid.x + wid.y * nwg.x; // b * q_heads + h
    if (orow >= p.workgroups) { return; } // uniform: the whole workgroup leaves
    let h = orow % p.q_heads;
    let b = orow / p.q_heads;
    let kvh = h / p.group;

    var first = p.offset;
    if (p.pos_at != 0xffffffffu) { first += u32(max(position[p.pos_at], 0)); }
    let row = min(first, p.t_n - 1u);
    var kend = p.t_n;
    if (p.kv_at != 0xffffffffu) { kend = u32(clamp(kv_length[p.kv_at], 0, i32(p.t_n))); }

    // 1. rope_kv_cache.wgsl's rotation, at position `first`.
    let xb = p.x_off + b * p.x_sb;
    let qb = xb + h * p.x_sh;
    let kb = xb + (p.q_heads + kvh) * p.x_sh;
    let vb = xb + (p.q_heads + p.kv + kvh) * p.x_sh;
    for (var i = lid; i < HALF; i += WG) {
        var t = turns(first, i);
        t = select(t, t - 1.0, t >= 0.5);
        let ang = t * 6.283185307179586;
        let cs = cos(ang);
        let sn = sin(ang);
        let i2 = i + HALF;
        let q1 = x_at(qb + i * p.x_sd);
        let q2 = x_at(qb + i2 * p.x_sd);
        q_row[i / 4u][i % 4u] = (q1 * cs - q2 * sn) * p.scale;
        q_row[i2 / 4u][i2 % 4u] = (q2 * cs + q1 * sn) * p.scale;
        let k1 = x_at(kb + i * p.x_sd);
        let k2 = x_at(kb + i2 * p.x_sd);
        k_new[i / 4u][i % 4u] = k1 * cs - k2 * sn;
        k_new[i2 / 4u][i2 % 4u] = k2 * cs + k1 * sn;
        v_new[i / 4u][i % 4u] = x_at(vb + i * p.x_sd);
        v_new[i2 / 4u][i2 % 4u] = x_at(vb + i2 * p.x_sd);
    }
    workgroupBarrier();

    // 2. The cache write, once a kv head.
    let k_base = (p.c_off + b * p.c_sb + kvh * p.c_sh) / 4u;
    let v_base = (p.c_off + b * p.c_sb + (p.kv + kvh) * p.c_sh) / 4u;
    let c_row = p.c_st / 4u;
    if (h % p.group == 0u) {
        for (var e = lid; e < DW; e += WG) {
            cache[k_base + row * c_row + e] = k_new[e];
            cache[v_base + row * c_row + e] = v_new[e];
        }
    }

    // 3. Scores (row t0 from k_new), softmax and P @ V. Each thread keeps
    // the largest of its own scores and its sum of exp against that; one
    // tree then combines the (max, sum) pairs, rescaling each sum to the
    // larger max (one tree's barriers instead of a max tree's and a sum
    // tree's), and P @ V takes exp(s - max) itself.
    let neg_inf = bitcast<f32>(p.neg_inf);
    var mx = neg_inf;
    for (var j = lid; j < kend; j += WG) {
        var a = vec4<f32>(0.0);
        if (j == row) {
            for (var d = 0u; d < DW; d++) { a += q_row[d] * k_new[d]; }
        } else {
            let kr = k_base + j * c_row;
            for (var d = 0u; d < DW; d++) { a += q_row[d] * cache[kr + d]; }
        }
        let sc = a.x + a.y + a.z + a.w;
        s[j] = sc;
        mx = max(mx, sc);
    }
    var l = 0.0;
    for (var j = lid; j < kend; j += WG) {
        l += exp(s[j] - mx);
    }
    let ml = reduce_max_sum(lid, mx, l); // its barriers publish s too
    mx = ml.x;
    l = ml.y;

    let c = lid % DW;
    let slice = lid / DW;
    var a = vec4<f32>(0.0);
    for (var j = slice; j < kend; j += SLICES) {
        let e = exp(s[j] - mx);
        if (j == row) {
            a += e * v_new[c];
        } else {
            a += e * cache[v_base + j * c_row + c];
        }
    }
    acc_part[lid] = a;
    workgroupBarrier();
    for (var hh = SLICES / 2u; hh > 0u; hh /= 2u) {
        if (slice < hh) { acc_part[lid] += acc_part[lid + hh * DW]; }
        workgroupBarrier();
    }
    if (lid < DW) {
        // No visible key (l == 0): PyTorch's zeros.
        let inv = select(1.0 / l, 0.0, l == 0.0);
        let r = acc_part[lid] * inv;
        let o = orow * D + 4u * lid;
        out[o] = r.x;
        out[o + 1u] = r.y;
        out[o + 2u] = r.z;
        out[o + 3u] = r.w;
    }
}
