// Layer norm (OP 1) or RMS norm (OP 2) backward over the rows of a
// [rows, cols] view, one pass:
//   x^ = (x - mean) r,  r = 1 / sqrt(var + eps)   (biased var, as forward)
//   dx = r (g w - mean(g w) - x^ mean(g w x^))     g = dy, w the weight
// RMS norm: mean 0, var the mean square, and no mean(g w) term.
// and, with HAS_GXH, g x^ (the weight gradient's summand; the caller sums
// it over the rows). The composed rule takes a dozen passes over the
// [rows, cols] tensors; this reads x and dy once and writes dx (and g x^).
//
// The launch shape is rowwise.wgsl's registers mode: ROWS rows of TPR
// threads a workgroup, a thread keeping VPT units (T: vec4 or f32) of x
// and of dy; the same prelude (OP is unused), the same reduction
// libraries (row_sum / row_max, alternate slots). The statistics are the
// forward kernel's, from the same library (norm_stats.wgsl): the row
// scaled by a power of two, for layer norm its first element subtracted
// before the mean; x^ does not depend on the scale, and r is the scaled
// rstd times the scale.
//
// x and dy share strides (row_stride, col_stride); dy starts at b_offset.
// dx and g x^ are contiguous from out_offset. The prelude declares the
// g x^ binding (@binding(5)) and store_gxh when HAS_GXH.

struct Params {
    rows: u32,
    cols: u32,        // units of T per row
    row_stride: u32,  // units of T (vec4 mode) or elements; x and dy
    col_stride: u32,  // elements; 1 in vec4 mode
    x_offset: u32,    // units of T
    out_offset: u32,  // units of T: dx and g x^
    w_offset: u32,    // units of T
    b_offset: u32,    // units of T: dy's start
    eps: f32,
    count: f32,       // elements per row
    neg_inf: u32,     // unused here (rowwise.wgsl's block)
    pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<T>;
@group(0) @binding(2) var<storage, read_write> dx: array<T>;
// Without a weight, x is bound in its place (never read).
@group(0) @binding(3) var<storage, read> weight: array<T>;
@group(0) @binding(4) var<storage, read> dy: array<T>;

// Unit u of row r of x (norm_stats.wgsl reads the row's first through it).
fn load(r: u32, u: u32) -> T { return x[p.x_offset + r * p.row_stride + u * p.col_stride]; }
fn load_dy(r: u32, u: u32) -> T { return dy[p.b_offset + r * p.row_stride + u * p.col_stride]; }

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32,
        ids: LaneIds) {
    let g_id = wid.x + wid.y * nwg.x;
    if (g_id >= (p.rows + ROWS - 1u) / ROWS) { return; } // uniform: the whole workgroup leaves

    let row = g_id * ROWS + lid / TPR;
    let live = row < p.rows;
    // Threads of a row past the end compute on the last row (every thread
    // reaches the barriers) and write nothing.
    let r = min(row, p.rows - 1u);
    let t = lid % TPR;

    var v: array<T, VPT>;
    var g: array<T, VPT>;
    for (var k = 0u; k < VPT; k++) {
        let u = t + k * TPR;
        if (u < p.cols) {
            v[k] = load(r, u);
            g[k] = load_dy(r, u);
        } else {
            v[k] = T(0.0);
            g[k] = T(0.0);
        }
    }

    let n = norm_stats_registers(&v, r, t, lid, ids);
    let mean = n.mean;
    let rstd_scaled = n.rstd;

    // v becomes x^, g becomes g w; padding stays 0 in both.
    var s1 = 0.0;
    var s2 = 0.0;
    for (var k = 0u; k < VPT; k++) {
        let u = t + k * TPR;
        if (u < p.cols) {
            v[k] = (v[k] - mean) * rstd_scaled;
            if (HAS_GXH && live) { store_gxh(p.out_offset + r * p.cols + u, g[k] * v[k]); }
            if (HAS_WEIGHT) { g[k] = g[k] * weight[p.w_offset + u]; }
            s1 += hsum(g[k]);
            s2 += hsum(g[k] * v[k]);
        }
    }
    var mean_gw = 0.0;
    if (OP == 1u) { mean_gw = row_sum(s1, lid, ids, 1u) / p.count; }
    let mean_gwx = row_sum(s2, lid, ids, 0u) / p.count;
    let rstd = rstd_scaled * n.scale;
    if (live) {
        for (var k = 0u; k < VPT; k++) {
            let u = t + k * TPR;
            if (u < p.cols) { dx[p.out_offset + r * p.cols + u] = (g[k] - mean_gw - v[k] * mean_gwx) * rstd; }
        }
    }
}
