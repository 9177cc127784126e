// Scatter-add of rows (embedding and max-pool backward):
// out[row(i), j] += dy[i, j] for i < n, j < d, row(i) = idx[i] (+ the
// plane's first row when plane > 0: (i / plane) * plane_rows), with f32
// atomic adds built from compare-and-swap on the bits (WGSL has no float
// atomics). Indices outside [0, v) (planes: [0, plane_rows)) are skipped.
// One thread per (i, j); out starts as zeros. out may hold only the rows
// [first_row, first_row + rows) of the whole (an out past one binding is
// added to part by part); rows outside it are skipped.

struct Params {
    n: u32,
    d: u32,
    v: u32,
    dy_offset: u32,
    idx_offset: u32,
    out_offset: u32,
    plane: u32,
    plane_rows: u32,
    first_row: u32,
    rows: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> dy: array<f32>;
@group(0) @binding(2) var<storage, read> idx: array<i32>;
@group(0) @binding(3) var<storage, read_write> out: array<atomic<u32>>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = (wid.x + wid.y * nwg.x) * WG + lid;
    if (t >= p.n * p.d) { return; }
    let i = t / p.d;
    let j = t % p.d;
    let row = idx[p.idx_offset + i];
    let limit = select(p.v, p.plane_rows, p.plane > 0u);
    if (row < 0 || u32(row) >= limit) { return; }
    var base = 0u;
    if (p.plane > 0u) { base = (i / p.plane) * p.plane_rows; }
    let r = base + u32(row) - p.first_row; // wraps past rows when below first_row
    if (r >= p.rows) { return; }
    let g = dy[p.dy_offset + t];
    let k = p.out_offset + r * p.d + j;
    var old = atomicLoad(&out[k]);
    loop {
        let r = atomicCompareExchangeWeak(&out[k], old, bitcast<u32>(bitcast<f32>(old) + g));
        if (r.exchanged) { break; }
        old = r.old_value;
    }
}
