#!/usr/bin/env python3
"""Writes three measurement-only variants of the 8-bit-x GEMV kernel
(src/webgpu/kernels/wgsl/quant_gemv_x8_fused.wgsl), for
quant_decode_decompose.sh: what a decode step's products cost without
rounding x, without loading their weights, and without either.

  nox:  stage_x replaced by constants written into workgroup memory (x is
        neither read nor rounded; the barrier after it stays);
  now:  load_rows makes its words from the row address and unit index
        (no weight is read);
  both: the two together;
  nored: both, and the lanes' sums not combined (no barrier tree: each
        group's first lane stores its own sum);
  empty: the kernel returns at once (its bindings still referenced, so
        that the layout stays the same): what a dispatch alone costs.

The results are wrong by design; only the time means anything. Usage:
  python3 bench/h200/x8_variants.py OUT_DIR   (writes OUT_DIR/x8_{nox,now,both,nored,empty}.wgsl)
Each replaces the kernel in a copy of the tree, built as its own library.
"""
import os
import sys

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src", "webgpu", "kernels", "wgsl",
                   "quant_gemv_x8_fused.wgsl")

FAKE_X = """
fn fake_x(lid: u32) {
    for (var t = lid; t < 2u * KB; t += WG) {
        xq[t] = vec4<u32>(0x01010101u + t);
        xqsum[t] = 1.0;
        if ((t & 1u) == 0u) { xd[t / 2u] = 0.001; xsq[t / 2u] = 1.0; }
    }
}
"""

LOAD_HEAD = """fn load_rows(a0: u32, a1: u32, pr: u32) -> Rows {
    var r: Rows;"""

FAKE_W = LOAD_HEAD + """
    r.a.v0 = vec4<u32>(a0 ^ pr, a0 + pr, pr * 3u, a0);
    r.a.v1 = vec4<u32>(a0 ^ (pr << 3u), a0 + 5u * pr, pr * 7u, a0 >> 2u);
    r.a.v2 = vec4<u32>(a0 * pr);
    r.b = r.a;
    r.b.v0.x = a1;
    return r;"""


TREE = """    for (var s = LANES / 2u; s > 0u; s = s / 2u) {
        if (lane < s) {
            red[lid] += red[lid + s];
        }
        workgroupBarrier();
    }
"""

GI = """    let gi = wid.x + wid.y * nwg.x; // uniform across the workgroup
"""

EMPTY = GI + """    if (p.m != 12345678u) {
        if (lid == 0u && gi == 0u && p.n == 7u) { out[0] = x[0].x + f32(w[0]) + bias[0] + g[0].x + res[0] + f32(w4[0].x); }
        return;
    }
"""


def replaced(text, old, new):
    if old not in text:
        sys.exit("x8_variants: the kernel changed; '%s' not found" % old.splitlines()[0])
    return text.replace(old, new)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    src = open(SRC).read()
    nox = replaced(src, "@compute @workgroup_size(WG)", FAKE_X + "\n@compute @workgroup_size(WG)")
    nox = replaced(nox, "    stage_x((p.x_offset + i * p.k) / 4u, lid);", "    fake_x(lid + 0u * p.x_offset);")
    now = replaced(src, LOAD_HEAD, FAKE_W)
    both = replaced(nox, LOAD_HEAD, FAKE_W)
    nored = replaced(both, TREE, "")
    empty = replaced(src, GI, EMPTY)
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, text in (("nox", nox), ("now", now), ("both", both), ("nored", nored), ("empty", empty)):
        with open(os.path.join(sys.argv[1], "x8_%s.wgsl" % name), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
