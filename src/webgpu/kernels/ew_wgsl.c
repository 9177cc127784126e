/* The elementwise rows of the catalogue (core/ops.def) as WGSL: every
 * shader variant of the elementwise kernels gets the lane types and an
 * apply() built from the op's row, so a new row needs no shader edit. */
#include "webgpu/wg.h"

#include <stdio.h>

/* The row's WGSL expression, by op (NULL for ops with kernels of their own). */
static const char *const k_expr[WT_OP_COUNT] = {
#define WT_UNARY(NAME, name, rule, nparams, c_f32, c_i32, wgsl) [WT_OP_##NAME] = wgsl,
#define WT_BINARY(NAME, name, rule, c_f32, c_i32, wgsl) [WT_OP_##NAME] = wgsl,
#include "core/ops.def"
};

/* The WGSL scalar a dtype's lanes are computed and stored in (f16 lanes
 * are computed in f32 by the f16 kernels, which convert the halves). */
static const char *scalar_of(wt_dtype d)
{
    switch (d) {
    case WT_I32: return "i32";
    case WT_BOOL: return "u32";
    case WT_F32:
    case WT_F16: break;
    }
    return "f32";
}

const char *wg_ew_library(wt_dtype lanes)
{
    return lanes == WT_I32 ? "ew_int" : lanes == WT_BOOL ? "ew_bool" : "ew_float";
}

int wg_ew_prelude(char *buf, size_t cap, int op, wt_dtype lanes, wt_dtype out, int width)
{
    const char *s = scalar_of(lanes), *so = scalar_of(out);
    char t[24], to[24];
    if (width > 1) {
        snprintf(t, sizeof t, "vec%d<%s>", width, s);
        snprintf(to, sizeof to, "vec%d<%s>", width, so);
    } else {
        snprintf(t, sizeof t, "%s", s);
        snprintf(to, sizeof to, "%s", so);
    }
    int n = snprintf(buf, cap, "alias S = %s;\nalias T = %s;\nalias TO = %s;\n", s, t, to);
    if (n < 0 || (size_t)n >= cap)
        return -1;
    int m;
    if (op < 0)
        m = snprintf(buf + n, cap - (size_t)n, "fn apply(v: T) -> TO { return v; }\n");
    else if (wt_op_table[op].arity == 1)
        m = snprintf(buf + n, cap - (size_t)n,
                     "fn apply(v: T) -> TO {\n    let P0 = T(bitcast<S>(p.p0));\n"
                     "    let P1 = T(bitcast<S>(p.p1));\n    return TO(%s);\n}\n",
                     k_expr[op]);
    else
        m = snprintf(buf + n, cap - (size_t)n, "fn apply(u: T, v: T) -> TO { return TO(%s); }\n",
                     k_expr[op]);
    if (m < 0 || (size_t)(n + m) >= cap)
        return -1;
    return n + m;
}
