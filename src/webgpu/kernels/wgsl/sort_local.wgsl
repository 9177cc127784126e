// Sort, bitonic steps in workgroup memory on tiles of TILE pairs (rows are
// P-aligned blocks of the pair array, P a power of two, so a network on
// blocks of size <= P never mixes rows).
//   k_merge == 0: sorts every block of min(P, TILE) pairs completely
//                 (stages k = 2 .. min(P, TILE)).
//   k_merge > 0:  the steps j = TILE/2 .. 1 of stage k_merge (> TILE),
//                 after the global passes did the larger j.
// A pair at row position i sorts ascending within stage k when bit k of i
// is 0 (descending otherwise); at k == P every row ends ascending. Pairs
// compare by key, then position, so the order is total and the sort
// stable.
// Prelude constants: TILE, WG (TILE a multiple of 2 * WG).

struct Params {
    total: u32,
    p: u32,
    k_merge: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> prm: Params;
@group(0) @binding(1) var<storage, read_write> pairs: array<vec2<u32>>;

var<workgroup> s: array<vec2<u32>, TILE>;

fn greater(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.x > b.x || (a.x == b.x && a.y > b.y);
}

fn exchange(base: u32, lid: u32, k: u32, j: u32) {
    for (var m = 0u; m < TILE / 2u / WG; m = m + 1u) {
        let q = lid + m * WG;
        let i = ((q & ~(j - 1u)) << 1u) | (q & (j - 1u));
        let asc = (((base + i) & (prm.p - 1u)) & k) == 0u;
        let a = s[i];
        let b = s[i + j];
        if (greater(a, b) == asc) {
            s[i] = b;
            s[i + j] = a;
        }
    }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let base = (wid.x + wid.y * nwg.x) * TILE;
    for (var m = 0u; m < TILE / WG; m = m + 1u) {
        let l = lid + m * WG;
        let g = base + l;
        if (g < prm.total) {
            s[l] = pairs[g];
        } else {
            s[l] = vec2<u32>(0xffffffffu, 0xffffffffu);
        }
    }
    workgroupBarrier();
    if (prm.k_merge == 0u) {
        let top = min(prm.p, TILE);
        for (var k = 2u; k <= top; k = k << 1u) {
            for (var j = k >> 1u; j > 0u; j = j >> 1u) {
                exchange(base, lid, k, j);
                workgroupBarrier();
            }
        }
    } else {
        for (var j = TILE >> 1u; j > 0u; j = j >> 1u) {
            exchange(base, lid, prm.k_merge, j);
            workgroupBarrier();
        }
    }
    for (var m = 0u; m < TILE / WG; m = m + 1u) {
        let l = lid + m * WG;
        let g = base + l;
        if (g < prm.total) {
            pairs[g] = s[l];
        }
    }
}
