// Library of the data-movement shaders that write a contiguous output of
// element bits (mv_remap, mv_gather). The shader declares `x` (input words),
// `out` (output words), `p.n` (output elements), ELEM2 (2-byte elements)
// and `fn value(i: u32) -> u32` (the bits of output element i).
// 4-byte elements are words. With ELEM2, element e is the low (e even) or
// high half of word e / 2, and thread t writes the whole output word t
// (elements 2t and 2t + 1), so no two threads share a word; a last odd
// element keeps the other half of its word.

fn x_elem(e: u32) -> u32 {
    if (ELEM2) {
        return (x[e / 2u] >> ((e & 1u) * 16u)) & 0xffffu;
    }
    return x[e];
}

fn write_outputs(t: u32) {
    if (ELEM2) {
        let i = 2u * t;
        if (i >= p.n) {
            return;
        }
        let lo = value(i);
        if (i + 1u < p.n) {
            out[t] = lo | (value(i + 1u) << 16u);
        } else {
            out[t] = (out[t] & 0xffff0000u) | lo;
        }
        return;
    }
    if (t < p.n) {
        out[t] = value(t);
    }
}
