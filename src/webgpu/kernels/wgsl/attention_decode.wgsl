// Attention for a decode step (one query a head, a few hundred to a few
// thousand keys), f32, in one dispatch: one workgroup an output row
// (batch, q head, query), all of that row's keys. attention.wgsl's tiles
// give a lone query too few workgroups and make it split the keys over a
// second (combine) dispatch; here every q head has its own workgroup and
// the keys are cut over its threads instead:
//   1. the scaled query -> workgroup memory;
//   2. scores: thread t scores keys t, t + WG, ... (a whole K row each,
//      16-byte loads) -> s, and the row maximum (tree over the threads);
//   3. s -> exp(s - max) in place, and their sum (tree);
//   4. P @ V: the threads are DVW columns (vec4s of the output row) x
//      SLICES slices of the keys (j = slice, slice + SLICES, ...): each
//      V row read by DVW neighbouring threads; the slices summed (tree).
// Exact two-pass softmax (no running rescale): the scores of every key
// fit workgroup memory (SK floats, the host's key capacity rounded up).
//
// K and V rows are whole aligned vec4s (unit stride, offsets and strides
// multiples of 4); D and DV multiples of 4; DVW divides WG.
// Prelude: WG, D, DV, SK, CAUSAL.

struct Params {
    q_off: u32, q_sb: u32, q_sh: u32, q_ss: u32,
    q_sd: u32, k_off: u32, k_sb: u32, k_sh: u32,
    k_ss: u32, k_sd: u32, v_off: u32, v_sb: u32,
    v_sh: u32, v_ss: u32, v_sd: u32, m_off: u32,
    m_sb: u32, m_sh: u32, m_ss: u32, m_sk: u32,
    hq: u32, hkv: u32, sq: u32, skv: u32,
    group: u32, blocks: u32, workgroups: u32, neg_inf: u32, // bits of -inf
    scale: f32, dw: u32, bk: u32, rows_total: u32,
    splits: u32, chunk: u32, kv_at: u32, kv_on: u32, // kv_on: keys = kv_length[kv_at]
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> v: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
// wt_attention_options.kv_length (kv_on), else q bound again.
@group(0) @binding(5) var<storage, read> kv_length: array<i32>;

const DW: u32 = D / 4u;
const DVW: u32 = DV / 4u;
const SLICES: u32 = WG / DVW;

var<workgroup> q_row: array<vec4<f32>, DW>;
var<workgroup> s: array<f32, SK>;
var<workgroup> red: array<f32, WG>;
var<workgroup> acc_part: array<vec4<f32>, WG>;

// reduce_max / reduce_sum: the workgroup_tree library.

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let orow = wid.x + wid.y * nwg.x; // (b * hq + h) * sq + qi
    if (orow >= p.workgroups) { return; } // uniform: the whole workgroup leaves
    let neg_inf = bitcast<f32>(p.neg_inf);
    let qi = orow % p.sq;
    let h = (orow / p.sq) % p.hq;
    let b = orow / (p.sq * p.hq);
    let kvh = h / p.group;

    var skv = p.skv;
    if (p.kv_on != 0u) { skv = u32(clamp(kv_length[p.kv_at], 0, i32(p.skv))); }
    var kend = skv;
    // Causal, aligned to the end of the keys: query qi sees keys j <= qi + skv - sq.
    if (CAUSAL) { kend = u32(clamp(i32(qi) + i32(skv) - i32(p.sq) + 1, 0, i32(skv))); }

    let qb = p.q_off + b * p.q_sb + h * p.q_sh + qi * p.q_ss;
    for (var e = lid; e < D; e += WG) { q_row[e / 4u][e % 4u] = q[qb + e * p.q_sd] * p.scale; }
    workgroupBarrier();

    let k_base = p.k_off + b * p.k_sb + kvh * p.k_sh;
    var mx = neg_inf;
    for (var j = lid; j < kend; j += WG) {
        let kb = (k_base + j * p.k_ss) / 4u;
        var a = vec4<f32>(0.0);
        for (var d = 0u; d < DW; d++) { a += q_row[d] * k[kb + d]; }
        let sc = a.x + a.y + a.z + a.w;
        s[j] = sc;
        mx = max(mx, sc);
    }
    mx = reduce_max(lid, mx);

    var l = 0.0;
    for (var j = lid; j < kend; j += WG) {
        let e = exp(s[j] - mx);
        s[j] = e;
        l += e;
    }
    l = reduce_sum(lid, l); // its barriers publish s too

    let c = lid % DVW;
    let slice = lid / DVW;
    let v_base = (p.v_off + b * p.v_sb + kvh * p.v_sh) / 4u + c;
    let v_row = p.v_ss / 4u;
    var a = vec4<f32>(0.0);
    for (var j = slice; j < kend; j += SLICES) { a += s[j] * v[v_base + j * v_row]; }
    acc_part[lid] = a;
    workgroupBarrier();
    for (var hh = SLICES / 2u; hh > 0u; hh /= 2u) {
        if (slice < hh) { acc_part[lid] += acc_part[lid + hh * DVW]; }
        workgroupBarrier();
    }
    if (lid < DVW) {
        // No visible key (l == 0): PyTorch's zeros.
        let inv = select(1.0 / l, 0.0, l == 0.0);
        let r = acc_part[lid] * inv;
        let o = orow * DV + 4u * lid;
        out[o] = r.x;
        out[o + 1u] = r.y;
        out[o + 2u] = r.z;
        out[o + 3u] = r.w;
    }
}
