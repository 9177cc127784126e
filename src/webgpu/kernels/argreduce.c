/* WebGPU argmax / argmin (argreduce.wgsl): the [rows, row_len] matrix of a
 * reduction (kept axes merged into rows, reduced axes into one run; other
 * layouts are gathered first); long rows with few of them are cut into
 * chunks whose (value, index) partials a further pass combines. */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Workgroups worth having; a chunk is at least MIN_CHUNK elements. */
#define ARG_GROUPS 2048u
#define ARG_MIN_CHUNK 2048u

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

wt_status wg_op_argreduce(wt_context *ctx, bool is_min, const wt_tensor *x, int nreduced, wt_tensor *out)
{
    if (out->dtype != WT_I32 || wt_dtype_storage_size(x->dtype) != 4 || x->dtype == WT_F16)
        return wt_fail(WT_ERR_UNSUPPORTED, "argreduce: dtype %d on webgpu", (int)x->dtype);
    const uint64_t rows = (uint64_t)out->numel;
    uint64_t row_len = 1;
    for (int i = out->ndim; i < x->ndim; i++) row_len *= (uint64_t)x->shape[i];
    if (rows == 0 || row_len == 0) return WT_OK;
    if (x->storage->bytes / 4 >= (1ull << 31) || rows >= (1ull << 31) || row_len >= (1ull << 31))
        return wt_fail(WT_ERR_UNSUPPORTED, "argreduce: %llu rows of %llu exceed 32-bit indexing",
                       (unsigned long long)rows, (unsigned long long)row_len);
    const bool is_float = x->dtype == WT_F32;
    wt_status st = WT_OK;
    wt_tensor *packed = NULL;
    const wt_storage *src = x->storage;
    uint64_t x_offset = (uint64_t)x->offset, row_stride, elem_stride, extent;
    if (!wg_merge_axes(x, 0, out->ndim, &extent, &row_stride) ||
        !wg_merge_axes(x, out->ndim, nreduced, &extent, &elem_stride)) {
        if ((st = wt_tensor_alloc(ctx, x->dtype, x->ndim, x->shape, &packed)) != WT_OK) return st;
        if ((st = is_float ? wg_op_copy(ctx, x, packed) : wg_op_cast(ctx, x, packed)) != WT_OK) {
            wt_tensor_release(packed);
            return st;
        }
        src = packed->storage, x_offset = 0, row_stride = row_len, elem_stride = 1;
    }
    uint32_t ident;
    if (is_float) {
        float f = is_min ? INFINITY : -INFINITY;
        memcpy(&ident, &f, 4);
    } else {
        ident = is_min ? 0x7fffffffu : 0x80000000u;
    }
    const uint32_t wg = wg_get_caps(ctx)->cpu_adapter ? 64 : 256;
    wt_storage *pv = NULL, *pi = NULL; /* the partials read by this pass */
    bool first = true;
    for (;;) {
        uint64_t chunks = 1;
        if (rows < ARG_GROUPS && row_len > 2 * ARG_MIN_CHUNK) {
            chunks = ceil_div(ARG_GROUPS, rows);
            uint64_t most = ceil_div(row_len, ARG_MIN_CHUNK);
            if (chunks > most) chunks = most;
        }
        /* Multiples of 4 keep every chunk's vec4s aligned as the row's. */
        const uint64_t chunk_len = ceil_div(ceil_div(row_len, chunks), 4) * 4;
        chunks = ceil_div(row_len, chunk_len);
        const bool last = chunks == 1;
        /* The last pass writes no values: a small scratch stands in for
         * them (two writable bindings of one buffer may not alias). */
        wt_storage *nv = NULL, *ni = NULL;
        if ((st = wg_scratch(ctx, last ? 16 : rows * chunks * 4, &nv)) != WT_OK ||
            (!last && (st = wg_scratch(ctx, rows * chunks * 4, &ni)) != WT_OK)) {
            if (nv) wg_scratch_release(ctx, nv);
            break;
        }
        arg_params p = {(uint32_t)(rows * chunks), (uint32_t)chunks, (uint32_t)chunk_len, (uint32_t)row_len,
                        (uint32_t)row_stride, (uint32_t)elem_stride, (uint32_t)x_offset,
                        (uint32_t)out->offset, ident, 0, 0, 0};
        const bool vec4 = first && elem_stride == 1 && x_offset % 4 == 0 && (rows == 1 || row_stride % 4 == 0);
        char prelude[256];
        snprintf(prelude, sizeof prelude,
                 "alias T = %s;\nconst FLOAT: bool = %s;\nconst IS_MIN: bool = %s;\nconst FIRST: bool = %s;\n"
                 "const LAST: bool = %s;\nconst VEC4: bool = %s;\nconst WG: u32 = %uu;\n",
                 is_float ? "f32" : "i32", is_float ? "true" : "false", is_min ? "true" : "false",
                 first ? "true" : "false", last ? "true" : "false", vec4 ? "true" : "false", wg);
        wg_launch l = {
            .shader = "argreduce", .prelude = prelude, .params = &p, .params_size = sizeof p,
            .bindings = {{first ? (wt_storage *)src : pv, false},
                         {first ? (wt_storage *)src : pi, false},
                         {nv, true},
                         {last ? out->storage : ni, true},
                         {first ? (wt_storage *)src : pv, false}},
            .nbindings = 5, .workgroups = rows * chunks};
        st = wg_dispatch(ctx, &l);
        if (pv) wg_scratch_release(ctx, pv);
        if (pi) wg_scratch_release(ctx, pi);
        pv = nv, pi = ni;
        if (st != WT_OK || last) break;
        first = false;
        row_len = chunks;
    }
    if (pv) wg_scratch_release(ctx, pv);
    if (pi) wg_scratch_release(ctx, pi);
    wt_tensor_release(packed);
    return st;
}
