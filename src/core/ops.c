/* The op catalogue (ops.def) as data: names, families, dtype rules and the
 * support of each dtype, for the front-ends and `webtensor ops`. */
#include "core/internal.h"

#define N WT_SUPPORT_NATIVE
#define F WT_SUPPORT_VIA_F32
#define C WT_SUPPORT_VIA_CAST
#define X WT_SUPPORT_NONE

/* What an elementwise rule makes of each input dtype (f32, f16, i32,
 * bool), before a backend's correction (e.g. a CPU without f16 lanes). */
#define RULE_SUPPORT_FLOAT {N, N, F, F}
#define RULE_SUPPORT_NUM {N, N, N, X}
#define RULE_SUPPORT_ROUND {N, N, C, X}
#define RULE_SUPPORT_LOGIC {C, C, C, N}
#define RULE_SUPPORT_ARITH {N, N, N, X}
#define RULE_SUPPORT_INTDIV {N, N, N, X}
#define RULE_SUPPORT_CMP {N, F, N, N}

const wt_op_info wt_op_table[WT_OP_COUNT] = {
#define WT_UNARY(NAME, name, rule, nparams, c_f32, c_i32, wgsl) \
    [WT_OP_##NAME] = {#name, "elementwise", 1, nparams, WT_RULE_##rule, RULE_SUPPORT_##rule},
#define WT_BINARY(NAME, name, rule, c_f32, c_i32, wgsl) \
    [WT_OP_##NAME] = {#name, "elementwise", 2, 0, WT_RULE_##rule, RULE_SUPPORT_##rule},
#define WT_KERNEL(NAME, name, family, f32, f16, i32, bool_)                      \
    [WT_OP_##NAME] = {#name, family, 0, 0, WT_RULE_KERNEL,                       \
                      {WT_SUPPORT_##f32, WT_SUPPORT_##f16, WT_SUPPORT_##i32, WT_SUPPORT_##bool_}},
#include "core/ops.def"
};

/* Every row filled: a row's name is never NULL (checked in the tests too). */
enum {
    OPS_ROWS = 0
#define WT_UNARY(NAME, ...) +1
#define WT_BINARY(NAME, ...) +1
#define WT_KERNEL(NAME, ...) +1
#include "core/ops.def"
};
_Static_assert((int)OPS_ROWS == (int)WT_OP_COUNT, "one catalogue row per op");
_Static_assert(WT_F32 == 0 && WT_F16 == 1 && WT_I32 == 2 && WT_BOOL == 3, "support[] is indexed by dtype");

wt_support wt_op_support_on(const wt_context *ctx, wt_op op, wt_dtype dtype)
{
    if ((unsigned)op >= WT_OP_COUNT || (unsigned)dtype > WT_BOOL)
        return WT_SUPPORT_NONE;
    wt_support s = wt_op_table[op].support[dtype];
    return ctx->ops->supports ? ctx->ops->supports(ctx, op, dtype, s) : s;
}

int wt_op_count(void) { return WT_OP_COUNT; }

const char *wt_op_name(int op) { return op >= 0 && op < WT_OP_COUNT ? wt_op_table[op].name : NULL; }

const char *wt_op_family(int op) { return op >= 0 && op < WT_OP_COUNT ? wt_op_table[op].family : NULL; }

wt_status wt_op_support(const wt_context *ctx, int op, wt_dtype dtype, wt_support *out)
{
    if (out) *out = WT_SUPPORT_NONE;
    if (!ctx || !out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_op_support: ctx or out is NULL");
    if (op < 0 || op >= WT_OP_COUNT)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_op_support: op %d is not in [0, %d)", op, WT_OP_COUNT);
    if (wt_dtype_size(dtype) == 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_op_support: unknown dtype %d", (int)dtype);
    *out = wt_op_support_on(ctx, (wt_op)op, dtype);
    return WT_OK;
}
