// argmax / argmin: one workgroup per (row, chunk) of a [rows, row_len]
// matrix; the threads stride through the chunk keeping the best (value,
// index) pair, then meet as a tree in workgroup memory. The order does
// not matter: `better` is a total order (NaN first, then the extremum,
// then the lower index), so the first NaN, else the first extremum, wins.
//
// First pass (FIRST): element (o, r) is x[x_offset + o * row_stride +
// r * elem_stride], its index r. Later passes read the partial (value,
// index) pairs of the previous one, row o's at o * row_len. The last pass
// (LAST) writes the index to out[out_offset + o]; others write pairs to
// pv/pi at w = o * chunks + chunk.
// With VEC4 (first pass, rows contiguous and 16-byte aligned, chunk_len a
// multiple of 4) the threads read whole vec4s, the last partial one as
// scalars.
// Prelude: T (f32 or i32), FLOAT, IS_MIN, FIRST, LAST, VEC4, WG.

struct Params {
    work: u32,       // rows * chunks
    chunks: u32,
    chunk_len: u32,
    row_len: u32,
    row_stride: u32,
    elem_stride: u32,
    x_offset: u32,
    out_offset: u32,
    ident: u32,      // bits of the start value (-inf / +inf, INT_MIN / INT_MAX)
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<T>;          // first pass: the input
@group(0) @binding(2) var<storage, read> in_i: array<u32>;     // later passes: partial indices
@group(0) @binding(3) var<storage, read_write> out_v: array<T>;
@group(0) @binding(4) var<storage, read_write> out_i: array<u32>;
@group(0) @binding(5) var<storage, read> x4: array<vec4<T>>;          // x again, as vec4s

var<workgroup> wv: array<T, WG>;
var<workgroup> wi: array<u32, WG>;

fn is_nan(a: T) -> bool {
    return FLOAT && (bitcast<u32>(a) & 0x7fffffffu) > 0x7f800000u;
}

// Whether (bv, bi) goes before (av, ai).
fn better(av: T, ai: u32, bv: T, bi: u32) -> bool {
    let an = is_nan(av);
    let bn = is_nan(bv);
    if (an || bn) { return bn && (!an || bi < ai); }
    if (bv == av) { return bi < ai; }
    if (IS_MIN) { return bv < av; }
    return bv > av;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = wid.x + wid.y * nwg.x;
    if (w >= p.work) { return; } // uniform: the whole workgroup leaves
    let row = w / p.chunks;
    let chunk = w % p.chunks;
    let start = chunk * p.chunk_len;
    let end = min(p.row_len, start + p.chunk_len);

    var bv = bitcast<T>(p.ident);
    var bi = 0xffffffffu;
    var r = start + lid;
    if (VEC4) {
        let base = p.x_offset + row * p.row_stride; // a multiple of 4
        let vend = end / 4u;
        for (var q = start / 4u + lid; q < vend; q += WG) {
            let v = x4[(base / 4u) + q];
            for (var k = 0u; k < 4u; k++) {
                if (better(bv, bi, v[k], q * 4u + k)) { bv = v[k]; bi = q * 4u + k; }
            }
        }
        r = vend * 4u + lid;
    }
    for (; r < end; r += WG) {
        var v: T;
        var i: u32;
        if (FIRST) {
            v = x[p.x_offset + row * p.row_stride + r * p.elem_stride];
            i = r;
        } else {
            v = x[row * p.row_len + r];
            i = in_i[row * p.row_len + r];
        }
        if (better(bv, bi, v, i)) { bv = v; bi = i; }
    }
    wv[lid] = bv;
    wi[lid] = bi;
    workgroupBarrier();
    for (var half = WG / 2u; half > 0u; half = half >> 1u) {
        if (lid < half && better(wv[lid], wi[lid], wv[lid + half], wi[lid + half])) {
            wv[lid] = wv[lid + half];
            wi[lid] = wi[lid + half];
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        if (LAST) {
            out_i[p.out_offset + w] = wi[0];
        } else {
            out_v[w] = wv[0];
            out_i[w] = wi[0];
        }
    }
}
