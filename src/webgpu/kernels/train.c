/* WebGPU kernels of the training ops (front-ends in api/train.c): the
 * activation backward, cross-entropy rows and gradient, embedding
 * backward (float atomics from compare-and-swap) and the in-place
 * optimizer steps. Inputs are contiguous; offsets go in the parameters. */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"

#include <stdio.h>
#include <string.h>

#define ELEM_WG 256u
#define ROW_WG 64u

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Every index the shaders form is a u32 element count. */
static wt_status fits_u32(const char *fn, const wt_tensor *t)
{
    if (!t) return WT_OK;
    if (t->offset < 0 || (uint64_t)t->offset + (uint64_t)t->numel >= UINT32_MAX)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: tensor too large for 32-bit indexing", fn);
    return WT_OK;
}

static wt_status launch(wt_context *ctx, const char *shader, const char *library, const char *prelude,
                        const void *params, size_t params_size, const wg_binding *b, int nb, uint64_t workgroups)
{
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = shader;
    l.libraries[0] = library;
    l.prelude = prelude;
    l.params = params;
    l.params_size = params_size;
    for (int i = 0; i < nb; i++) l.bindings[i] = b[i];
    l.nbindings = nb;
    l.workgroups = workgroups;
    return wg_dispatch(ctx, &l);
}

wt_status wg_op_act_backward(wt_context *ctx, wt_activation act, const wt_tensor *dy, const wt_tensor *x,
                             wt_tensor *out)
{
    const char *fn = "webgpu activation backward";
    wt_status st;
    if ((st = fits_u32(fn, dy)) != WT_OK || (st = fits_u32(fn, x)) != WT_OK || (st = fits_u32(fn, out)) != WT_OK)
        return st;
    act_backward_params p = {
        (uint32_t)out->numel, (uint32_t)dy->offset, (uint32_t)x->offset, (uint32_t)out->offset};
    char prelude[96];
    snprintf(prelude, sizeof prelude, "const ACT: u32 = %uu;\nconst WG: u32 = %uu;\n", (unsigned)act, ELEM_WG);
    wg_binding b[3] = {{dy->storage, false}, {x->storage, false}, {out->storage, true}};
    return launch(ctx, "act_backward", NULL, prelude, &p, sizeof p, b, 3, ceil_div((uint64_t)out->numel, ELEM_WG));
}

static const char ROW_PRELUDE[] = "const WG: u32 = 64u;\n";

wt_status wg_op_cross_entropy(wt_context *ctx, const wt_tensor *logits, const wt_tensor *labels, int32_t ignore,
                              wt_tensor *loss, wt_tensor *valid)
{
    const char *fn = "webgpu cross_entropy";
    wt_status st;
    if ((st = fits_u32(fn, logits)) != WT_OK || (st = fits_u32(fn, labels)) != WT_OK ||
        (st = fits_u32(fn, loss)) != WT_OK || (st = fits_u32(fn, valid)) != WT_OK)
        return st;
    cross_entropy_params p = {
        (uint32_t)logits->shape[0], (uint32_t)logits->shape[1], ignore, (uint32_t)logits->offset,
        (uint32_t)labels->offset, (uint32_t)loss->offset, (uint32_t)valid->offset, 0xff800000u};
    wg_binding b[4] = {{logits->storage, false}, {labels->storage, false}, {loss->storage, true}, {valid->storage, true}};
    return launch(ctx, "cross_entropy", "ce_row", ROW_PRELUDE, &p, sizeof p, b, 4, (uint64_t)logits->shape[0]);
}

wt_status wg_op_cross_entropy_backward(wt_context *ctx, const wt_tensor *logits, const wt_tensor *labels,
                                       int32_t ignore, const wt_tensor *scale, wt_tensor *out)
{
    const char *fn = "webgpu cross_entropy_backward";
    wt_status st;
    if ((st = fits_u32(fn, logits)) != WT_OK || (st = fits_u32(fn, labels)) != WT_OK ||
        (st = fits_u32(fn, out)) != WT_OK || (st = fits_u32(fn, scale)) != WT_OK)
        return st;
    if (scale->strides[0] < 0 || scale->strides[0] > 1)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: scale stride must be 0 or 1", fn);
    cross_entropy_backward_params p = {(uint32_t)logits->shape[0], (uint32_t)logits->shape[1], ignore, (uint32_t)logits->offset,
           (uint32_t)labels->offset, (uint32_t)out->offset, (uint32_t)scale->offset, (uint32_t)scale->strides[0],
           0xff800000u};
    wg_binding b[4] = {{logits->storage, false}, {labels->storage, false}, {scale->storage, false}, {out->storage, true}};
    return launch(ctx, "cross_entropy_backward", "ce_row", ROW_PRELUDE, &p, sizeof p, b, 4, (uint64_t)logits->shape[0]);
}

wt_status wg_op_scatter_add_rows(wt_context *ctx, const wt_tensor *dy, const wt_tensor *indices, int64_t plane,
                                 int64_t plane_rows, wt_tensor *out)
{
    return wg_op_scatter_add_rows_part(ctx, dy, indices, plane, plane_rows, 0, out->shape[0], out);
}

wt_status wg_op_scatter_add_rows_part(wt_context *ctx, const wt_tensor *dy, const wt_tensor *indices,
                                      int64_t plane, int64_t plane_rows, int64_t first_row, int64_t total_rows,
                                      wt_tensor *out)
{
    const char *fn = "webgpu scatter_add_rows";
    wt_status st;
    if ((st = fits_u32(fn, dy)) != WT_OK || (st = fits_u32(fn, indices)) != WT_OK || (st = fits_u32(fn, out)) != WT_OK)
        return st;
    if (first_row < 0 || first_row + out->shape[0] > total_rows || total_rows > UINT32_MAX)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: rows [%lld, +%lld) outside %lld", fn, (long long)first_row,
                       (long long)out->shape[0], (long long)total_rows);
    scatter_rows_params p = {
        (uint32_t)dy->shape[0], (uint32_t)dy->shape[1], (uint32_t)total_rows, (uint32_t)dy->offset,
        (uint32_t)indices->offset, (uint32_t)out->offset, (uint32_t)plane, (uint32_t)plane_rows,
        (uint32_t)first_row, (uint32_t)out->shape[0], 0, 0};
    char prelude[48];
    snprintf(prelude, sizeof prelude, "const WG: u32 = %uu;\n", ELEM_WG);
    wg_binding b[3] = {{dy->storage, false}, {indices->storage, false}, {out->storage, true}};
    return launch(ctx, "scatter_add_rows", NULL, prelude, &p, sizeof p, b, 3, ceil_div((uint64_t)dy->numel, ELEM_WG));
}

/* The advance of an optimizer's device scalars (u->param) to its next
 * step: one thread. */
wt_status wg_op_optimizer_advance(wt_context *ctx, const wt_optimizer_update *u)
{
    wt_status st = fits_u32("webgpu optimizer advance", u->param);
    if (st != WT_OK) return st;
    optimizer_advance_params p = {(uint32_t)u->param->offset, u->beta1, u->beta2, 0};
    wg_binding b[1] = {{u->param->storage, true}};
    return launch(ctx, "optimizer_advance", NULL, NULL, &p, sizeof p, b, 1, 1);
}

wt_status wg_op_optimizer_step(wt_context *ctx, const wt_optimizer_update *u)
{
    const char *fn = "webgpu optimizer step";
    wt_status st;
    if ((st = fits_u32(fn, u->param)) != WT_OK || (st = fits_u32(fn, u->grad)) != WT_OK ||
        (st = fits_u32(fn, u->m)) != WT_OK || (st = fits_u32(fn, u->v)) != WT_OK ||
        (st = fits_u32(fn, u->sched)) != WT_OK || (st = fits_u32(fn, u->clip_norm)) != WT_OK)
        return st;
    if (u->clip_norm && (u->clip_norm->dtype != WT_F32 || wg_get_caps(ctx)->max_storage_buffers < 6))
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: clipping inside the step needs an f32 norm and 6 storage buffers", fn);
    optimizer_params p = {(uint32_t)u->param->numel, (uint32_t)u->param->offset, (uint32_t)u->grad->offset,
           u->m ? (uint32_t)u->m->offset : 0, u->v ? (uint32_t)u->v->offset : 0, u->nesterov,
           u->lr, u->weight_decay, u->momentum, u->dampening, u->beta1, u->beta2, u->eps, u->bias1, u->bias2,
           u->sched ? (uint32_t)u->sched->offset : 0, u->clip_norm ? (uint32_t)u->clip_norm->offset : 0,
           u->max_norm};
    /* Absent buffers: small scratch buffers stand in (never touched), one
     * per slot: one buffer bound writable twice, or writable and read-only,
     * in a dispatch is refused by WebGPU. */
    wt_storage *dummy[3] = {NULL, NULL, NULL};
    wg_binding b[6] = {{u->param->storage, true}, {u->grad->storage, false},
                       {u->m ? u->m->storage : NULL, true}, {u->v ? u->v->storage : NULL, true},
                       {u->sched ? u->sched->storage : NULL, false}, {u->clip_norm ? u->clip_norm->storage : NULL, false}};
    for (int i = 0; i < 3 && st == WT_OK; i++)
        if (!b[2 + i].storage && (st = wg_scratch(ctx, 16, &dummy[i])) == WT_OK) b[2 + i].storage = dummy[i];
    /* The factor as grad_clip_scale.wgsl takes it (the clip_factor
     * library); the norm's binding only where the step clips. */
    static const char *k_clip = "@group(0) @binding(6) var<storage, read> clip_norm: array<f32>;\n"
                                "fn clip_factor() -> f32 { return clip_factor_of(clip_norm[p.c_offset], p.max_norm); }\n";
    char prelude[512];
    snprintf(prelude, sizeof prelude,
             "const OP: u32 = %uu;\nconst HAS_M: bool = %s;\nconst HAS_SCHED: bool = %s;\nconst WG: u32 = %uu;\n%s",
             u->kind == WT_OPT_SGD ? 0u : 1u, u->m ? "true" : "false", u->sched ? "true" : "false", ELEM_WG,
             u->clip_norm ? k_clip : "fn clip_factor() -> f32 { return 1.0; }\n");
    if (st == WT_OK)
        st = launch(ctx, "optimizer", u->clip_norm ? "clip_factor" : NULL, prelude, &p, sizeof p, b, u->clip_norm ? 6 : 5,
                    ceil_div((uint64_t)u->param->numel, ELEM_WG));
    for (int i = 0; i < 3; i++)
        if (dummy[i]) wg_scratch_release(ctx, dummy[i]);
    return st;
}

wt_status wg_op_grad_clip_scale(wt_context *ctx, const wt_tensor *norm, double max_norm, wt_tensor *const g[3])
{
    const char *fn = "webgpu grad_clip_scale";
    wt_status st = fits_u32(fn, norm);
    if (st != WT_OK) return st;
    if (norm->dtype != WT_F32) return wt_fail(WT_ERR_UNSUPPORTED, "%s: f32 tensors only", fn);
    uint32_t n[3] = {0, 0, 0}, off[3] = {0, 0, 0};
    uint64_t total = 0;
    for (int k = 0; k < 3; k++) {
        if (!g[k]) continue;
        if ((st = fits_u32(fn, g[k])) != WT_OK) return st;
        if (g[k]->dtype != WT_F32) return wt_fail(WT_ERR_UNSUPPORTED, "%s: f32 tensors only", fn);
        n[k] = (uint32_t)g[k]->numel, off[k] = (uint32_t)g[k]->offset;
        total += (uint64_t)g[k]->numel;
    }
    if (total >= UINT32_MAX) return wt_fail(WT_ERR_UNSUPPORTED, "%s: too many elements for 32-bit indexing", fn);
    if (total == 0) return WT_OK;
    grad_clip_scale_params p = {n[0], n[1], n[2], (uint32_t)norm->offset, off[0], off[1], off[2], (float)max_norm};
    char prelude[48];
    snprintf(prelude, sizeof prelude, "const WG: u32 = %uu;\n", ELEM_WG);
    /* Absent gradients: a scratch buffer each (one buffer bound writable
     * twice in a dispatch is refused by WebGPU). */
    wt_storage *dummy[3] = {NULL, NULL, NULL};
    wg_binding b[4] = {{g[0] ? g[0]->storage : NULL, true}, {g[1] ? g[1]->storage : NULL, true},
                       {g[2] ? g[2]->storage : NULL, true}, {norm->storage, false}};
    for (int k = 0; k < 3 && st == WT_OK; k++)
        if (!b[k].storage && (st = wg_scratch(ctx, 16, &dummy[k])) == WT_OK) b[k].storage = dummy[k];
    if (st == WT_OK) st = launch(ctx, "grad_clip_scale", "clip_factor", prelude, &p, sizeof p, b, 4, ceil_div(total, ELEM_WG));
    for (int k = 0; k < 3; k++)
        if (dummy[k]) wg_scratch_release(ctx, dummy[k]);
    return st;
}

/* Elements a workgroup of grad_norms sums: sixteen a thread. */
#define GRAD_NORMS_CHUNK (ELEM_WG * 16u)

wt_status wg_op_grad_norms(wt_context *ctx, int count, const wt_tensor *const x[6], wt_tensor *out)
{
    const char *fn = "webgpu grad_norms";
    if (count < 1 || count > 6) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %d inputs (1..6)", fn, count);
    /* Six gradients and the sums a dispatch. */
    if (wg_get_caps(ctx)->max_storage_buffers < 7)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: the device binds fewer than 7 storage buffers", fn);
    wt_status st = fits_u32(fn, out);
    if (st != WT_OK) return st;
    if (out->dtype != WT_F32 || out->numel < count)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: out must be f32 with %d elements", fn, count);
    uint32_t n[6] = {0}, off[6] = {0}, start[7] = {0};
    uint64_t groups = 0;
    bool direct = true;
    for (int k = 0; k < count; k++) {
        if ((st = fits_u32(fn, x[k])) != WT_OK) return st;
        if (x[k]->dtype != WT_F32 || x[k]->numel < 1)
            return wt_fail(WT_ERR_UNSUPPORTED, "%s: f32 inputs that are not empty only", fn);
        n[k] = (uint32_t)x[k]->numel, off[k] = (uint32_t)x[k]->offset;
        start[k] = (uint32_t)groups;
        uint64_t chunks = ceil_div(n[k], GRAD_NORMS_CHUNK);
        if (chunks > 1) direct = false;
        groups += chunks;
    }
    for (int k = count; k < 7; k++) start[k] = UINT32_MAX; /* past every workgroup */
    grad_norms_params p = {n[0], n[1], n[2], n[3], n[4], n[5],
                           off[0], off[1], off[2], off[3], off[4], off[5],
                           start[1], start[2], start[3], start[4], start[5],
                           (uint32_t)groups, GRAD_NORMS_CHUNK, (uint32_t)out->offset};
    wt_storage *partials = NULL, *dummy[6] = {NULL};
    if (!direct) st = wg_scratch(ctx, (size_t)groups * sizeof(float), &partials);
    /* Absent gradients: a scratch buffer each, never read. */
    wg_binding b[8] = {{NULL, false}};
    for (int k = 0; k < 6 && st == WT_OK; k++) {
        b[k] = (wg_binding){k < count ? x[k]->storage : NULL, false};
        if (!b[k].storage && (st = wg_scratch(ctx, 16, &dummy[k])) == WT_OK) b[k].storage = dummy[k];
    }
    b[6] = (wg_binding){direct ? out->storage : partials, true};
    char prelude[80];
    snprintf(prelude, sizeof prelude, "const WG: u32 = %uu;\nconst DIRECT: bool = %s;\n", ELEM_WG,
             direct ? "true" : "false");
    if (st == WT_OK) st = launch(ctx, "grad_norms", NULL, prelude, &p, sizeof p, b, 7, groups);
    if (st == WT_OK && !direct) {
        uint32_t s[6];
        for (int k = 1; k < 6; k++) s[k] = k < count ? start[k] : (uint32_t)groups;
        grad_norms_finish_params f = {s[1], s[2], s[3], s[4], s[5], (uint32_t)groups, (uint32_t)count,
                                      (uint32_t)out->offset};
        wg_binding fb[2] = {{partials, false}, {out->storage, true}};
        snprintf(prelude, sizeof prelude, "const WG: u32 = %uu;\n", ELEM_WG);
        st = launch(ctx, "grad_norms_finish", NULL, prelude, &f, sizeof f, fb, 2, (uint64_t)count);
    }
    if (partials) wg_scratch_release(ctx, partials);
    for (int k = 0; k < 6; k++)
        if (dummy[k]) wg_scratch_release(ctx, dummy[k]);
    return st;
}
