/* The reduction family's rows (core/reduce_ops.def) as data. */
#include "core/internal.h"

#include <math.h>

static const wt_reduce_info g_reduce_info[] = {
#define WT_REDUCE_OP(ID, nm, comb, ident, sh, eok, dt, mc, fc, mw, fw) \
    {#nm, comb, ident, sh, eok, dt, mw, fw},
#include "core/reduce_ops.def"
#undef WT_REDUCE_OP
};

_Static_assert(sizeof g_reduce_info / sizeof g_reduce_info[0] == WT_REDUCE_COUNT,
               "one row per reduction op");

const wt_reduce_info *wt_reduce_info_of(wt_reduce_op op)
{
    return (unsigned)op < WT_REDUCE_COUNT ? &g_reduce_info[op] : NULL;
}
