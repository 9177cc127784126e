/* Elementwise kernels: fill, copy (strided gather), unary and binary ops.
 * Each picks the cheapest way to walk its elements: vec4s when everything
 * is contiguous and 4-aligned, scalars when contiguous, else strided
 * index decoding (after merging axes with wt_coalesce). */
#include "webgpu/wg.h"

#include <stdio.h>
#include <string.h>

#define ELEMENTWISE_WG 256u

enum walk_mode { WALK_STRIDED = 0, WALK_CONTIGUOUS = 1, WALK_VEC4 = 2 };

/* Value of the shader's OP for a plain copy (see unary.wgsl). */
#define UNARY_SHADER_COPY 100u

typedef struct strided_layout {
    int ndim;
    int64_t shape[WT_MAX_DIMS];
    int64_t strides[3][WT_MAX_DIMS]; /* per operand; out's is row-major */
} strided_layout;

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Merged layout of out (contiguous) and up to two inputs of its shape. */
static void merge_layout(const wt_tensor *out, const wt_tensor *a, const wt_tensor *b,
                         strided_layout *l)
{
    memset(l, 0, sizeof *l);
    l->ndim = out->ndim;
    memcpy(l->shape, out->shape, sizeof l->shape);
    wt_contiguous_strides(out->ndim, out->shape, l->strides[0]);
    int n = 1;
    if (a)
        memcpy(l->strides[n++], a->strides, sizeof l->strides[0]);
    if (b)
        memcpy(l->strides[n++], b->strides, sizeof l->strides[0]);
    wt_coalesce(&l->ndim, l->shape, n, l->strides);
}

static bool is_unit_stride(const strided_layout *l, int operand)
{
    return l->ndim == 1 && l->strides[operand][0] == 1;
}

/* Every index a kernel computes is a u32. Bindings are smaller than 4 GiB,
 * so this only fails for layouts that could not be bound anyway. */
static wt_status check_u32(const char *op, const wt_tensor *t)
{
    if (t->offset < 0 || t->offset > UINT32_MAX || t->numel > UINT32_MAX)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: tensor too large for 32-bit indexing", op);
    for (int d = 0; d < t->ndim; d++)
        if (t->strides[d] < 0 || t->strides[d] > UINT32_MAX || t->shape[d] > UINT32_MAX)
            return wt_fail(WT_ERR_UNSUPPORTED,
                           "webgpu %s: strides or shape beyond 32-bit indexing", op);
    return WT_OK;
}

static void pack_u32x8(uint32_t dst[8], const int64_t *src, int n)
{
    memset(dst, 0, 8 * sizeof dst[0]);
    for (int i = 0; i < n; i++)
        dst[i] = (uint32_t)src[i];
}

static void set_prelude(char *buf, size_t cap, unsigned op, enum walk_mode mode)
{
    snprintf(buf, cap, "const OP: u32 = %uu;\nconst MODE: u32 = %uu;\nconst WG: u32 = %uu;\n"
                       "alias T = %s;\n",
             op, (unsigned)mode, ELEMENTWISE_WG, mode == WALK_VEC4 ? "vec4<f32>" : "f32");
}

static wt_status check_f32(const char *op, const wt_tensor *t)
{
    if (t->dtype != WT_F32)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: only f32 tensors are supported so far",
                       op);
    return WT_OK;
}

/* --------------------------------------------------------------- fill */

typedef struct fill_params {
    uint32_t n, out_offset;
    float value;
    uint32_t pad0;
} fill_params;

wt_status wg_op_fill(wt_context *ctx, wt_tensor *out, float value)
{
    wt_status st;
    if ((st = check_f32("fill", out)) != WT_OK || (st = check_u32("fill", out)) != WT_OK)
        return st;
    fill_params p = {(uint32_t)out->numel, (uint32_t)out->offset, value, 0};
    char prelude[64];
    snprintf(prelude, sizeof prelude, "const WG: u32 = %uu;\n", ELEMENTWISE_WG);
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "fill";
    l.prelude = prelude;
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){out->storage, true};
    l.nbindings = 1;
    l.workgroups = ceil_div((uint64_t)out->numel, ELEMENTWISE_WG);
    return wg_dispatch(ctx, &l);
}

/* -------------------------------------------------------------- unary */

typedef struct unary_params {
    uint32_t n, ndim, x_offset, out_offset;
    uint32_t shape[8];
    uint32_t x_strides[8];
} unary_params;

static wt_status run_unary(wt_context *ctx, const char *name, unsigned shader_op,
                           const wt_tensor *x, wt_tensor *out)
{
    wt_status st;
    if ((st = check_f32(name, x)) != WT_OK || (st = check_f32(name, out)) != WT_OK ||
        (st = check_u32(name, x)) != WT_OK || (st = check_u32(name, out)) != WT_OK)
        return st;
    if (out->numel == 0)
        return WT_OK;
    strided_layout lay;
    merge_layout(out, x, NULL, &lay);
    enum walk_mode mode = WALK_STRIDED;
    if (is_unit_stride(&lay, 1))
        mode = out->numel % 4 == 0 && x->offset % 4 == 0 && out->offset % 4 == 0
                   ? WALK_VEC4
                   : WALK_CONTIGUOUS;
    uint32_t div = mode == WALK_VEC4 ? 4 : 1;
    unary_params p;
    memset(&p, 0, sizeof p);
    p.n = (uint32_t)(out->numel / div);
    p.ndim = (uint32_t)lay.ndim;
    p.x_offset = (uint32_t)(x->offset / div);
    p.out_offset = (uint32_t)(out->offset / div);
    pack_u32x8(p.shape, lay.shape, lay.ndim);
    pack_u32x8(p.x_strides, lay.strides[1], lay.ndim);

    char prelude[160];
    set_prelude(prelude, sizeof prelude, shader_op, mode);
    wg_launch l;
    memset(&l, 0, sizeof l);
    /* The strided plain copy has its own shader without the op switch. */
    l.shader = mode == WALK_STRIDED && shader_op == UNARY_SHADER_COPY ? "copy" : "unary";
    if (strcmp(l.shader, "copy") == 0)
        snprintf(prelude, sizeof prelude, "const WG: u32 = %uu;\n", ELEMENTWISE_WG);
    l.prelude = prelude;
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){x->storage, false};
    l.bindings[1] = (wg_binding){out->storage, true};
    l.nbindings = 2;
    l.workgroups = ceil_div(p.n, ELEMENTWISE_WG);
    return wg_dispatch(ctx, &l);
}

wt_status wg_op_copy(wt_context *ctx, const wt_tensor *x, wt_tensor *out)
{
    return run_unary(ctx, "copy", UNARY_SHADER_COPY, x, out);
}

wt_status wg_op_unary(wt_context *ctx, wt_unary_op op, const wt_tensor *x, wt_tensor *out)
{
    /* The shader's OP numbers follow wt_unary_op. */
    if ((unsigned)op >= WT_UNARY_COUNT)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu unary: unknown op %d", (int)op);
    return run_unary(ctx, "unary", (unsigned)op, x, out);
}

/* ------------------------------------------------------------- binary */

typedef struct binary_params {
    uint32_t n, ndim, a_offset, b_offset, out_offset, pad0, pad1, pad2;
    uint32_t shape[8];
    uint32_t a_strides[8];
    uint32_t b_strides[8];
} binary_params;

wt_status wg_op_binary(wt_context *ctx, wt_binary_op op, const wt_tensor *a,
                       const wt_tensor *b, wt_tensor *out)
{
    wt_status st;
    if ((unsigned)op >= WT_BINARY_COUNT)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu binary: unknown op %d", (int)op);
    const wt_tensor *all[3] = {a, b, out};
    for (int i = 0; i < 3; i++)
        if ((st = check_f32("binary", all[i])) != WT_OK ||
            (st = check_u32("binary", all[i])) != WT_OK)
            return st;
    if (out->numel == 0)
        return WT_OK;
    strided_layout lay;
    merge_layout(out, a, b, &lay);
    enum walk_mode mode = WALK_STRIDED;
    if (is_unit_stride(&lay, 1) && is_unit_stride(&lay, 2))
        mode = out->numel % 4 == 0 && a->offset % 4 == 0 && b->offset % 4 == 0 &&
                       out->offset % 4 == 0
                   ? WALK_VEC4
                   : WALK_CONTIGUOUS;
    uint32_t div = mode == WALK_VEC4 ? 4 : 1;
    binary_params p;
    memset(&p, 0, sizeof p);
    p.n = (uint32_t)(out->numel / div);
    p.ndim = (uint32_t)lay.ndim;
    p.a_offset = (uint32_t)(a->offset / div);
    p.b_offset = (uint32_t)(b->offset / div);
    p.out_offset = (uint32_t)(out->offset / div);
    pack_u32x8(p.shape, lay.shape, lay.ndim);
    pack_u32x8(p.a_strides, lay.strides[1], lay.ndim);
    pack_u32x8(p.b_strides, lay.strides[2], lay.ndim);

    char prelude[160];
    set_prelude(prelude, sizeof prelude, (unsigned)op, mode);
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "binary";
    l.prelude = prelude;
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){a->storage, false};
    l.bindings[1] = (wg_binding){b->storage, false};
    l.bindings[2] = (wg_binding){out->storage, true};
    l.nbindings = 3;
    l.workgroups = ceil_div(p.n, ELEMENTWISE_WG);
    return wg_dispatch(ctx, &l);
}
