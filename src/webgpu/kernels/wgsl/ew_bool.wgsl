// Helpers of the elementwise rows (src/core/ops.def) on bool lanes: T is
// u32 or a vector of u32 holding 0 or 1 (set by the prelude), with B the
// matching bool type. Bools compare as 0 and 1.

fn wt_eq(u: T, v: T) -> B { return u == v; }
fn wt_ne(u: T, v: T) -> B { return u != v; }
fn wt_lt(u: T, v: T) -> B { return u < v; }
fn wt_le(u: T, v: T) -> B { return u <= v; }
