// Sort, bitonic steps (stage k, distance j >= TILE) over the whole pair
// array in global memory; direction as in sort_local.
//   TWO false: one step; thread q compares pair i and i + j, where i is the
//              q-th index with bit j clear.
//   TWO true:  the steps j and j / 2 at once; thread q owns the four pairs
//              i, i + j/2, i + j, i + 3j/2 (i: the q-th index with bits j
//              and j/2 clear), which no other thread touches in either
//              step, so one pass reads and writes them once for two steps.
// Prelude constants: TWO (bool), WG.

struct Params {
    threads: u32,
    p: u32,
    k: u32,
    j: u32,
}

@group(0) @binding(0) var<uniform> prm: Params;
@group(0) @binding(1) var<storage, read_write> pairs: array<vec2<u32>>;

fn greater(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.x > b.x || (a.x == b.x && a.y > b.y);
}

// a and b in the step's order (ascending or not).
fn ordered(a: vec2<u32>, b: vec2<u32>, asc: bool) -> bool {
    return greater(a, b) != asc;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let q = (wid.x + wid.y * nwg.x) * WG + lid;
    if (q >= prm.threads) {
        return;
    }
    let j = prm.j;
    if (TWO) {
        let h = j >> 1u;
        let i = ((q & ~(h - 1u)) << 2u) | (q & (h - 1u));
        let asc = ((i & (prm.p - 1u)) & prm.k) == 0u;
        var a = pairs[i];
        var b = pairs[i + h];
        var c = pairs[i + j];
        var d = pairs[i + j + h];
        if (!ordered(a, c, asc)) {
            let t = a;
            a = c;
            c = t;
        }
        if (!ordered(b, d, asc)) {
            let t = b;
            b = d;
            d = t;
        }
        if (!ordered(a, b, asc)) {
            let t = a;
            a = b;
            b = t;
        }
        if (!ordered(c, d, asc)) {
            let t = c;
            c = d;
            d = t;
        }
        pairs[i] = a;
        pairs[i + h] = b;
        pairs[i + j] = c;
        pairs[i + j + h] = d;
        return;
    }
    let i = ((q & ~(j - 1u)) << 1u) | (q & (j - 1u));
    let asc = ((i & (prm.p - 1u)) & prm.k) == 0u;
    let a = pairs[i];
    let b = pairs[i + j];
    if (greater(a, b) == asc) {
        pairs[i] = b;
        pairs[i + j] = a;
    }
}
