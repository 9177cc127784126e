// The backward of attention without a mask, tiled, pass 2 of 2
// (kernels/attention_backward.c): a workgroup owns BK = 32 keys of one
// (batch, kv head), holds their K (scaled) and V rows in workgroup memory
// and walks the queries of every q head of the group BQ = 16 at a time,
// from the first query that sees its first key. With L_i and D_i of
// pass 1 (stats) it recomputes
//   p_ij = exp(scale q_i . k_j - L_i),  ds_ij = p_ij (dout_i . v_j - D_i)
// for the tile and accumulates dv_j += sum_i p_ij dout_i and
// dk_j += scale sum_i ds_ij q_i in registers. Thread (ty, tx) of
// 128 = 8 x 16 owns keys 4 ty .. 4 ty + 3: query tx for the scores, quads
// tx, tx + 16, ... of dk and dv. Contiguous f32, read as vec4.
// Prelude: DQ, DT, D_EXACT, CAUSAL, UNROLL (as pass 1).

struct Params {
    hq: u32, hkv: u32, sq: u32, skv: u32,
    group: u32, blocks: u32, workgroups: u32, scale: f32,
    dq: u32, tile: u32, neg_inf: u32, pad0: u32, // dq == DQ, tile == BQ
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> k: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> v: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> g: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> stats: array<vec2<f32>>;
@group(0) @binding(6) var<storage, read_write> dk: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> dv: array<vec4<f32>>;

const BQ: u32 = 16u;
const BK: u32 = 32u;
const TX: u32 = 16u;
const WG: u32 = 128u;
const QS: u32 = DQ + 1u;
const RK: u32 = BK / 4u;

var<workgroup> k_tile: array<vec4<f32>, BK * QS>;
var<workgroup> v_tile: array<vec4<f32>, BK * QS>;
var<workgroup> q_tile: array<vec4<f32>, BQ * QS>;
var<workgroup> g_tile: array<vec4<f32>, BQ * QS>;
var<workgroup> p_tile: array<vec4<f32>, BQ * RK>;  // [query][key quad]
var<workgroup> ds_tile: array<vec4<f32>, BQ * RK>;
var<workgroup> st_tile: array<vec2<f32>, BQ>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let wgi = wid.x + wid.y * nwg.x;
    if (wgi >= p.workgroups) { return; } // uniform: the whole workgroup leaves
    // Causal: the first keys are seen by the most queries; they start first.
    let blk = wgi % p.blocks;
    let bkh = wgi / p.blocks; // b * hkv + kv head
    let kh = bkh % p.hkv;
    let b = bkh / p.hkv;
    let j0 = blk * BK;
    let krow0 = bkh * p.skv;
    let tx = lid % TX;
    let ty = lid / TX;
    let shift = i32(p.skv) - i32(p.sq); // query i sees keys j <= i + shift
    let dn = select(p.dq, DQ, UNROLL);
    let qn = select(p.tile, BQ, UNROLL);

    for (var e = lid; e < BK * DQ; e += WG) {
        let j = j0 + e / DQ;
        var x = vec4<f32>(0.0);
        var y = vec4<f32>(0.0);
        if (j < p.skv) {
            x = k[(krow0 + j) * DQ + e % DQ] * p.scale;
            y = v[(krow0 + j) * DQ + e % DQ];
        }
        k_tile[(e / DQ) * QS + e % DQ] = x;
        v_tile[(e / DQ) * QS + e % DQ] = y;
    }
    // The thread's keys; a key past the end is seen by no query.
    let jk = vec4<i32>(i32(j0 + ty * 4u)) + vec4<i32>(0, 1, 2, 3);
    let key_in = jk < vec4<i32>(i32(p.skv));
    var qstart = 0u;
    if (CAUSAL) { qstart = u32(max(i32(j0) - shift, 0)); }

    var ak: array<vec4<f32>, 4u * DT>; // [key][quad]
    var av: array<vec4<f32>, 4u * DT>;
    for (var c = 0u; c < 4u * DT; c++) {
        ak[c] = vec4<f32>(0.0);
        av[c] = vec4<f32>(0.0);
    }
    for (var hh = 0u; hh < p.group; hh++) {
        let qrow0 = (b * p.hq + kh * p.group + hh) * p.sq;
        for (var t0 = qstart; t0 < p.sq; t0 += BQ) {
            workgroupBarrier();
            for (var e = lid; e < BQ * DQ; e += WG) {
                let i = t0 + e / DQ;
                var x = vec4<f32>(0.0);
                var y = vec4<f32>(0.0);
                if (i < p.sq) {
                    x = q[(qrow0 + i) * DQ + e % DQ];
                    y = g[(qrow0 + i) * DQ + e % DQ];
                }
                q_tile[(e / DQ) * QS + e % DQ] = x;
                g_tile[(e / DQ) * QS + e % DQ] = y;
            }
            if (lid < BQ) {
                var st = vec2<f32>(3.0e38, 0.0);
                if (t0 + lid < p.sq) { st = stats[qrow0 + t0 + lid]; }
                st_tile[lid] = st;
            }
            workgroupBarrier();
            var s = vec4<f32>(0.0);
            var dp = vec4<f32>(0.0);
            for (var d = 0u; d < dn; d++) {
                let qv = q_tile[tx * QS + d];
                let gv = g_tile[tx * QS + d];
                for (var i = 0u; i < 4u; i++) {
                    s[i] += dot(qv, k_tile[(ty * 4u + i) * QS + d]);
                    dp[i] += dot(gv, v_tile[(ty * 4u + i) * QS + d]);
                }
            }
            let qi = i32(t0 + tx);
            var vis = key_in & vec4<bool>(qi < i32(p.sq));
            if (CAUSAL) { vis = vis & (jk <= vec4<i32>(qi + shift)); }
            let st = st_tile[tx];
            let pr = select(vec4<f32>(0.0), exp(s - st.x), vis);
            p_tile[tx * RK + ty] = pr;
            ds_tile[tx * RK + ty] = pr * (dp - st.y);
            workgroupBarrier();
            for (var r = 0u; r < qn; r++) {
                let pv = p_tile[r * RK + ty];
                let dsv = ds_tile[r * RK + ty];
                for (var c = 0u; c < DT; c++) {
                    let d = tx + c * TX;
                    if (D_EXACT || d < DQ) {
                        let gq = g_tile[r * QS + d];
                        let qq = q_tile[r * QS + d];
                        for (var i = 0u; i < 4u; i++) {
                            av[i * DT + c] = fma(vec4<f32>(pv[i]), gq, av[i * DT + c]);
                            ak[i * DT + c] = fma(vec4<f32>(dsv[i]), qq, ak[i * DT + c]);
                        }
                    }
                }
            }
        }
    }
    for (var i = 0u; i < 4u; i++) {
        let j = j0 + ty * 4u + i;
        if (j >= p.skv) { continue; }
        for (var c = 0u; c < DT; c++) {
            let d = tx + c * TX;
            if (D_EXACT || d < DQ) {
                dk[(krow0 + j) * DQ + d] = ak[i * DT + c] * p.scale;
                dv[(krow0 + j) * DQ + d] = av[i * DT + c];
            }
        }
    }
}
