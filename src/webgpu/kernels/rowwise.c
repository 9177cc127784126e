/* Row-wise WebGPU kernels: softmax, layernorm, rmsnorm over the rows of a
 * [R, C] view (see rowwise.wgsl).
 *
 * Shape of a launch, chosen from the row length:
 *  - rows that fit in registers (at most REGISTER_FLOATS floats per thread
 *    with up to MAX_TPR threads per row) are read once and written once:
 *    TPR threads per row, the smallest power of two that gives each thread
 *    at most UNITS_PER_THREAD units, and short rows share a workgroup
 *    (at least MIN_WG threads per workgroup);
 *  - longer rows loop over global memory, one workgroup of MAX_TPR threads
 *    per row.
 * Units are vec4s when the rows are contiguous and every offset, stride
 * and C are multiples of 4, else single elements (any inner stride).
 * Workgroups of one row reduce with subgroup operations when the device
 * has them; otherwise (and for shared workgroups) in workgroup memory.
 *
 * f16 rows (x, out, weight and bias all f16) run in vec4 mode only, read
 * and written as halves through the f16 conversion library
 * (wg_f16_library), with the f32 arithmetic of f32 rows: half the
 * traffic of the f32 rows and none of a cast's passes. Other f16 layouts
 * return WT_ERR_UNSUPPORTED, and the API goes through f32 copies.
 *
 * Two environment knobs let one build compare and test the variants:
 * WT_ROWWISE_LOOPS=1 forces the loop kernel, WT_ROWWISE_SUBGROUPS=0 the
 * workgroup-memory reductions. */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"
#include "webgpu/wg_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TPR 256u
#define MIN_WG 128u
#define REGISTER_FLOATS 32u
#define UNITS_PER_THREAD 4u

enum rowwise_mode { MODE_REGISTERS = 0, MODE_LOOPS = 1 };

typedef struct rowwise_plan {
    enum rowwise_mode mode;
    bool vec4;
    uint32_t tpr, rows_per_wg, vpt;
    bool subgroups;
} rowwise_plan;

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

static bool aligned4(const wt_tensor *t) { return !t || t->offset % 4 == 0; }

static bool env_is(wt_knob id, const char *value)
{
    const char *v = wt_knob_text(id);
    return v && strcmp(v, value) == 0;
}

static void plan_launch(const wt_context *ctx, const wt_tensor *x, const wt_tensor *weight,
                        const wt_tensor *bias, const wt_tensor *out, rowwise_plan *plan)
{
    const uint64_t C = (uint64_t)x->shape[1];
    memset(plan, 0, sizeof *plan);
    plan->vec4 = x->strides[1] == 1 && C % 4 == 0 && (x->shape[0] == 1 || x->strides[0] % 4 == 0) &&
                 aligned4(x) && aligned4(out) && aligned4(weight) && aligned4(bias);
    const uint64_t width = plan->vec4 ? 4 : 1;
    const uint64_t units = C / width;
    const uint64_t max_vpt = REGISTER_FLOATS / width;
    if (units > (uint64_t)MAX_TPR * max_vpt || env_is(WT_KNOB_ROWWISE_LOOPS, "1")) {
        plan->mode = MODE_LOOPS;
        plan->tpr = MAX_TPR;
        plan->rows_per_wg = 1;
        plan->vpt = 1; /* unused */
    } else {
        plan->mode = MODE_REGISTERS;
        uint32_t tpr = 1;
        while (tpr < MAX_TPR && (uint64_t)tpr * UNITS_PER_THREAD < units) tpr *= 2;
        plan->tpr = tpr;
        plan->vpt = (uint32_t)ceil_div(units, tpr);
        plan->rows_per_wg = tpr >= MIN_WG ? 1 : MIN_WG / tpr;
    }
    /* Subgroup reductions assume the workgroup is one row. */
    plan->subgroups = wg_get_caps(ctx)->subgroups && plan->rows_per_wg == 1 &&
                      !env_is(WT_KNOB_ROWWISE_SUBGROUPS, "0");
}

/* The prelude: constants, T and its horizontal helpers, and the reduction
 * library. Returns false if it does not fit. */
static bool write_prelude(char *buf, size_t cap, wt_rowwise_op op, const rowwise_plan *plan,
                          bool has_weight, bool has_bias, bool f16)
{
    const char *storage =
        !f16 ? "alias X = T;\nfn widen(v: X) -> T { return v; }\nfn narrow(v: T) -> X { return v; }\n"
             : "alias X = vec2<u32>;\n"
               "fn widen(v: X) -> T { return T(unpack_halves(v.x), unpack_halves(v.y)); }\n"
               "fn narrow(v: T) -> X { return X(pack_halves(v.xy), pack_halves(v.zw)); }\n";
    const char *helpers =
        plan->vec4 ? "alias T = vec4<f32>;\n"
                     "fn hsum(v: T) -> f32 { return (v.x + v.y) + (v.z + v.w); }\n"
                     "fn hmax(v: T) -> f32 { return max(max(v.x, v.y), max(v.z, v.w)); }\n"
                     "fn lane0(v: T) -> f32 { return v.x; }\n"
                   : "alias T = f32;\n"
                     "fn hsum(v: T) -> f32 { return v; }\n"
                     "fn hmax(v: T) -> f32 { return v; }\n"
                     "fn lane0(v: T) -> f32 { return v; }\n";
    int n = snprintf(buf, cap,
                     "%sconst OP: u32 = %uu;\nconst MODE: u32 = %uu;\nconst TPR: u32 = %uu;\n"
                     "const ROWS: u32 = %uu;\nconst WG: u32 = %uu;\nconst VPT: u32 = %uu;\n"
                     "const HAS_WEIGHT: bool = %s;\nconst HAS_BIAS: bool = %s;\n%s%s",
                     plan->subgroups ? "enable subgroups;\n" : "", (unsigned)op,
                     (unsigned)plan->mode, plan->tpr, plan->rows_per_wg,
                     plan->tpr * plan->rows_per_wg, plan->vpt, has_weight ? "true" : "false",
                     has_bias ? "true" : "false", helpers, storage);
    return n > 0 && (size_t)n < cap;
}

static wt_status check_tensor(const char *what, const wt_tensor *t, wt_dtype dtype)
{
    if (!t) return WT_OK;
    if (t->dtype != dtype)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu rowwise: %s must be %s like x", what, wt_dtype_name(dtype));
    /* Every index the shader forms is a u32 count of elements. */
    if (t->offset < 0 || t->storage->bytes / wt_dtype_storage_size(dtype) >= (1ull << 31))
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "webgpu rowwise: %s is too large for 32-bit indexing", what);
    for (int d = 0; d < t->ndim; d++)
        if (t->strides[d] < 0 || t->strides[d] > UINT32_MAX || t->shape[d] > UINT32_MAX)
            return wt_fail(WT_ERR_UNSUPPORTED,
                           "webgpu rowwise: %s has strides or shape beyond 32-bit indexing", what);
    return WT_OK;
}

/* The parameter block of rows of x [R, C] (vec4 units where the plan
 * reads them): x's layout, out's and the weight's and bias's offsets (the
 * bias's slot carries dy for the norm backward). */
static void rowwise_fill_params(rowwise_params *p, const rowwise_plan *plan, uint64_t R, uint64_t C,
                                const wt_tensor *x, const wt_tensor *out, const wt_tensor *weight,
                                const wt_tensor *bias, float eps)
{
    const uint32_t div = plan->vec4 ? 4 : 1;
    memset(p, 0, sizeof *p);
    p->rows = (uint32_t)R;
    p->cols = (uint32_t)(C / div);
    /* One row: its stride is never used to step, any value will do. */
    p->row_stride = R == 1 ? 0 : (uint32_t)(x->strides[0] / div);
    p->col_stride = plan->vec4 ? 1 : (uint32_t)x->strides[1];
    p->x_offset = (uint32_t)(x->offset / div);
    p->out_offset = (uint32_t)(out->offset / div);
    p->w_offset = weight ? (uint32_t)(weight->offset / div) : 0;
    p->b_offset = bias ? (uint32_t)(bias->offset / div) : 0;
    p->eps = eps;
    p->count = (float)C;
}

wt_status wg_op_rowwise(wt_context *ctx, wt_rowwise_op op, const wt_tensor *x,
                        const wt_tensor *weight, const wt_tensor *bias, float eps, wt_tensor *out)
{
    if ((unsigned)op >= WT_ROW_COUNT)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu rowwise: unknown op %d", (int)op);
    if (x->ndim != 2 || out->ndim != 2 || x->shape[0] != out->shape[0] ||
        x->shape[1] != out->shape[1] || x->shape[1] <= 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "webgpu rowwise: x and out must be [R, C], C > 0");
    if (op == WT_ROW_SOFTMAX || op == WT_ROW_LOG_SOFTMAX) weight = bias = NULL; /* softmax takes neither */
    if (op == WT_ROW_RMSNORM) bias = NULL;
    wt_status st;
    const wt_dtype dt = x->dtype;
    if (dt != WT_F32 && dt != WT_F16)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu rowwise: x must be f32 or f16");
    if ((st = check_tensor("x", x, dt)) != WT_OK || (st = check_tensor("out", out, dt)) != WT_OK ||
        (st = check_tensor("weight", weight, dt)) != WT_OK ||
        (st = check_tensor("bias", bias, dt)) != WT_OK)
        return st;
    const uint64_t R = (uint64_t)x->shape[0], C = (uint64_t)x->shape[1];
    if (R == 0) return WT_OK;
    /* --- transformer ops --- */
    /* A few long rows would leave most of the GPU idle at one workgroup a
     * row: the softmax-axis kernel cuts them over several. */
    if (dt == WT_F32 && (op == WT_ROW_SOFTMAX || op == WT_ROW_LOG_SOFTMAX) && C >= 8192 && out->offset == 0 &&
        R < (wg_get_caps(ctx)->cpu_adapter ? 8u : 512u)) {
        const int64_t shape3[3] = {x->shape[0], x->shape[1], 1}, xs[3] = {x->strides[0], x->strides[1], 1},
                      os[3] = {x->shape[1], 1, 1};
        wt_tensor *x3 = NULL, *o3 = NULL;
        if ((st = wt_tensor_view(x, 3, shape3, xs, x->offset, &x3)) == WT_OK &&
            (st = wt_tensor_view(out, 3, shape3, os, 0, &o3)) == WT_OK)
            st = wg_op_softmax_axis(ctx, op, x3, o3);
        wt_tensor_release(x3);
        wt_tensor_release(o3);
        return st;
    }

    rowwise_plan plan;
    plan_launch(ctx, x, weight, bias, out, &plan);
    if (dt == WT_F16 && !plan.vec4)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu rowwise: f16 rows need 4-element alignment");

    rowwise_params p;
    rowwise_fill_params(&p, &plan, R, C, x, out, weight, bias, eps);
    p.neg_inf = 0xff800000u;

    char prelude[1024];
    if (!write_prelude(prelude, sizeof prelude, op, &plan, weight != NULL, bias != NULL, dt == WT_F16))
        return wt_fail(WT_ERR_BACKEND, "webgpu rowwise: shader prelude does not fit");

    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "rowwise";
    l.libraries[0] = plan.subgroups ? "rowwise_reduce_subgroup" : "rowwise_reduce_shared";
    l.libraries[1] = "norm_stats";
    if (dt == WT_F16) l.libraries[2] = wg_f16_library(ctx);
    l.prelude = prelude;
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){x->storage, false};
    l.bindings[1] = (wg_binding){out->storage, true};
    /* Absent weight or bias: x stands in (the shader never reads it). */
    l.bindings[2] = (wg_binding){weight ? weight->storage : x->storage, false};
    l.bindings[3] = (wg_binding){bias ? bias->storage : x->storage, false};
    l.nbindings = 4;
    l.workgroups = ceil_div(R, plan.rows_per_wg);
    return wg_dispatch(ctx, &l);
}

bool wg_norm_backward_fits(const wt_context *ctx, int64_t rows, int64_t cols)
{
    /* The registers mode holds up to MAX_TPR threads of REGISTER_FLOATS
     * floats (vec4 units or single floats alike); each [R, C] tensor must
     * fit one binding (with room for its offset's alignment) and 32-bit
     * element indexing. */
    const uint64_t bytes = (uint64_t)rows * (uint64_t)cols * 4u;
    const uint64_t binding = wg_ctx(ctx)->limits.maxStorageBufferBindingSize & ~(uint64_t)15;
    return cols > 0 && (uint64_t)cols <= (uint64_t)MAX_TPR * REGISTER_FLOATS &&
           !env_is(WT_KNOB_ROWWISE_LOOPS, "1") && bytes + 256u <= binding && bytes / 4u < (1ull << 31);
}

/* Layer or RMS norm backward over the rows of x [R, C] (norm_backward.wgsl):
 * dx [R, C] and, when gxh is not NULL, dy * x^ [R, C], both contiguous
 * from the same offset; dy must share x's strides; weight [C] or NULL.
 * f32 rows that fit the registers mode only: WT_ERR_UNSUPPORTED otherwise
 * (the caller composes the backward from other ops). */
wt_status wg_op_norm_backward(wt_context *ctx, wt_rowwise_op op, const wt_tensor *dy, const wt_tensor *x,
                              const wt_tensor *weight, float eps, wt_tensor *dx, wt_tensor *gxh)
{
    const char *fn = "webgpu norm_backward";
    if (op != WT_ROW_LAYERNORM && op != WT_ROW_RMSNORM)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: layer or RMS norm only, not op %d", fn, (int)op);
    if (x->ndim != 2 || dy->ndim != 2 || dx->ndim != 2 || x->shape[1] <= 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: x, dy and dx must be [R, C], C > 0", fn);
    for (int d = 0; d < 2; d++) {
        if (dy->shape[d] != x->shape[d] || dx->shape[d] != x->shape[d] || (gxh && gxh->shape[d] != x->shape[d]))
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: x, dy, dx and dy x^ must share a shape", fn);
        if (dy->strides[d] != x->strides[d] && x->shape[d] > 1)
            return wt_fail(WT_ERR_UNSUPPORTED, "%s: dy must share x's strides", fn);
    }
    if (gxh && gxh->offset != dx->offset)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: dx and dy x^ must start at the same offset", fn);
    if (x->dtype != WT_F32)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: f32 rows only", fn);
    wt_status st;
    if ((st = check_tensor("x", x, WT_F32)) != WT_OK || (st = check_tensor("dy", dy, WT_F32)) != WT_OK ||
        (st = check_tensor("dx", dx, WT_F32)) != WT_OK || (st = check_tensor("dy x^", gxh, WT_F32)) != WT_OK ||
        (st = check_tensor("weight", weight, WT_F32)) != WT_OK)
        return st;
    if (!wt_layout_is_contiguous(2, dx->shape, dx->strides) ||
        (gxh && !wt_layout_is_contiguous(2, gxh->shape, gxh->strides)))
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: dx and dy x^ must be contiguous", fn);
    const uint64_t R = (uint64_t)x->shape[0], C = (uint64_t)x->shape[1];
    if (R == 0) return WT_OK;
    rowwise_plan plan;
    plan_launch(ctx, x, weight, dy, dx, &plan); /* dy's alignment checked as the bias's */
    if (plan.mode != MODE_REGISTERS)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: rows of %llu are longer than the registers hold", fn,
                       (unsigned long long)C);
    rowwise_params p;
    rowwise_fill_params(&p, &plan, R, C, x, dx, weight, dy, eps); /* dy in the bias's slot */

    char prelude[1536];
    size_t used = 0;
    if (!write_prelude(prelude, sizeof prelude, op, &plan, weight != NULL, false, false))
        return wt_fail(WT_ERR_BACKEND, "%s: shader prelude does not fit", fn);
    used = strlen(prelude);
    int n = snprintf(prelude + used, sizeof prelude - used,
                     gxh ? "const HAS_GXH: bool = true;\n"
                           "@group(0) @binding(5) var<storage, read_write> gxh: array<T>;\n"
                           "fn store_gxh(i: u32, v: T) { gxh[i] = v; }\n"
                         : "const HAS_GXH: bool = false;\nfn store_gxh(i: u32, v: T) {}\n");
    if (n < 0 || (size_t)n >= sizeof prelude - used)
        return wt_fail(WT_ERR_BACKEND, "%s: shader prelude does not fit", fn);

    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "norm_backward";
    l.libraries[0] = plan.subgroups ? "rowwise_reduce_subgroup" : "rowwise_reduce_shared";
    l.libraries[1] = "norm_stats";
    l.prelude = prelude;
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){x->storage, false};
    l.bindings[1] = (wg_binding){dx->storage, true};
    l.bindings[2] = (wg_binding){weight ? weight->storage : x->storage, false};
    l.bindings[3] = (wg_binding){dy->storage, false};
    l.nbindings = 4;
    if (gxh) l.bindings[l.nbindings++] = (wg_binding){gxh->storage, true};
    l.workgroups = ceil_div(R, plan.rows_per_wg);
    return wg_dispatch(ctx, &l);
}
