// A token id per row of logits (wt_sample; core/node.h SAMPLE): one
// workgroup of 256 threads per row, thread t owning chunk t of the row
// (elements t, t + 256, t + 512 ... below v: neighbouring threads read
// neighbouring words). Every sum is the chunk's in that order, then the
// pairwise tree below; cpu/sample.c does the same steps in the same order. Control flow around the barriers depends on
// the parameters and the row only (uniform); what the reductions find
// (a bad row, the thresholds) is data, and thread 0 decides at the end.
// Library: philox.

struct Params {
    rows: u32, v: u32, pad0: u32, x_offset: u32,
    out_offset: u32, step_offset: u32, has_step: u32, top_k: u32,
    key0: u32, key1: u32, inv_temp: f32, top_p: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> step: array<i32>;
@group(0) @binding(3) var<storage, read_write> out: array<i32>;

const WG: u32 = 256u;
const NEG_INF_KEY: u32 = 0x007fffffu; // ordered(-inf)

var<workgroup> red_f: array<f32, 256>;
var<workgroup> red_u: array<u32, 256>;
var<workgroup> red_i: array<u32, 256>;
var<workgroup> red_k: array<u32, 256>;

// The bits of f mapped so that unsigned order is float order.
fn ordered(f: f32) -> u32 {
    let u = bitcast<u32>(f);
    return select(u | 0x80000000u, ~u, (u & 0x80000000u) != 0u);
}

// exp((l - mx) * inv_temp); 0 for -inf logits and arguments below -80.
fn weight(l: f32, mx: f32) -> f32 {
    let a = (l - mx) * p.inv_temp;
    return select(exp(a), 0.0, a < -80.0 || ordered(l) <= NEG_INF_KEY);
}

fn tree_f(lid: u32) -> f32 {
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (lid < s) {
            red_f[lid] += red_f[lid + s];
        }
        workgroupBarrier();
    }
    let r = red_f[0];
    workgroupBarrier();
    return r;
}

fn tree_u(lid: u32) -> u32 {
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (lid < s) {
            red_u[lid] += red_u[lid + s];
        }
        workgroupBarrier();
    }
    let r = red_u[0];
    workgroupBarrier();
    return r;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let row = wid.x + wid.y * nwg.x;
    if (row >= p.rows) {
        return;
    }
    let base = p.x_offset + row * p.v;

    // The largest key (first index on ties) and whether a NaN or +inf is seen.
    var best = 0u;
    var best_i = 0xffffffffu;
    var bad = 0u;
    for (var i = lid; i < p.v; i += WG) {
        let bits = bitcast<u32>(x[base + i]);
        if ((bits & 0x7fffffffu) >= 0x7f800000u && bits != 0xff800000u) {
            bad = 1u;
        }
        let k = ordered(x[base + i]);
        if (best_i == 0xffffffffu || k > best) {
            best = k;
            best_i = i;
        }
    }
    red_u[lid] = bad;
    red_i[lid] = best_i;
    red_k[lid] = best;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (lid < s) {
            let ka = red_k[lid];
            let kb = red_k[lid + s];
            let ia = red_i[lid];
            let ib = red_i[lid + s];
            // an empty chunk (index ~0) loses; else the larger key, the lower index on ties
            if (ia == 0xffffffffu || (ib != 0xffffffffu && (kb > ka || (kb == ka && ib < ia)))) {
                red_k[lid] = kb;
                red_i[lid] = ib;
            }
            red_u[lid] = red_u[lid] | red_u[lid + s];
        }
        workgroupBarrier();
    }
    let max_key = red_k[0];
    let arg = red_i[0];
    let row_bad = red_u[0] != 0u || max_key <= NEG_INF_KEY;
    workgroupBarrier();
    let mx = x[base + arg];
    let greedy = p.inv_temp == 0.0;

    // top-k: the k-th largest key, bit by bit from the top.
    var thr = 0u;
    if (!greedy && p.top_k != 0u) {
        for (var bit = 31; bit >= 0; bit--) {
            let cand = thr | (1u << u32(bit));
            var c = 0u;
            for (var i = lid; i < p.v; i += WG) {
                c += select(0u, 1u, ordered(x[base + i]) >= cand);
            }
            red_u[lid] = c;
            if (tree_u(lid) >= p.top_k) {
                thr = cand;
            }
        }
    }
    // top-p: the largest key whose kept weights at or above it reach
    // top_p of the kept total.
    if (!greedy && p.top_p < 1.0) {
        var s0 = 0.0;
        for (var i = lid; i < p.v; i += WG) {
            let l = x[base + i];
            s0 += select(0.0, weight(l, mx), ordered(l) >= thr);
        }
        red_f[lid] = s0;
        let goal = p.top_p * tree_f(lid);
        var tp = 0u;
        for (var bit = 31; bit >= 0; bit--) {
            let cand = tp | (1u << u32(bit));
            let cut = max(cand, thr);
            var s = 0.0;
            for (var i = lid; i < p.v; i += WG) {
                let l = x[base + i];
                s += select(0.0, weight(l, mx), ordered(l) >= cut);
            }
            red_f[lid] = s;
            if (tree_f(lid) >= goal) {
                tp = cand;
            }
        }
        thr = max(thr, tp);
    }
    // The draw: each chunk's kept weights, then thread 0 walks them.
    var part = 0.0;
    if (!greedy) {
        for (var i = lid; i < p.v; i += WG) {
            let l = x[base + i];
            part += select(0.0, weight(l, mx), ordered(l) >= thr);
        }
    }
    red_f[lid] = part;
    workgroupBarrier();
    if (lid != 0u) {
        return;
    }
    var pick = i32(arg);
    if (row_bad) {
        pick = -1;
    } else if (!greedy) {
        var total = 0.0;
        for (var c = 0u; c < WG; c++) {
            total += red_f[c];
        }
        var stepv = 0u;
        if (p.has_step != 0u) {
            stepv = u32(step[p.step_offset]);
        }
        let word = philox(vec4<u32>(stepv, row, 1u, 0u), vec2<u32>(p.key0, p.key1)).x;
        let u = f32(word >> 8u) * (1.0 / 16777216.0);
        let goal = u * total;
        var acc = 0.0;
        var chosen = WG;
        var last_nonempty = 0u;
        for (var c = 0u; c < WG; c++) {
            if (red_f[c] > 0.0) {
                last_nonempty = c;
            }
            let next = acc + red_f[c];
            if (next > goal && red_f[c] > 0.0) {
                chosen = c;
                break;
            }
            acc = next;
        }
        if (chosen == WG) { // u * total rounded up to the total
            chosen = last_nonempty;
            acc = 0.0;
            for (var c = 0u; c < chosen; c++) {
                acc += red_f[c];
            }
        }
        for (var i = chosen; i < p.v; i += WG) {
            let l = x[base + i];
            let w = select(0.0, weight(l, mx), ordered(l) >= thr);
            if (w > 0.0) {
                pick = i32(i);
                acc += w;
                if (acc > goal) {
                    break;
                }
            }
        }
    }
    out[p.out_offset + row] = pick;
}
