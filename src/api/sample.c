/* wt_sample: a token id per row of logits on the device (greedy,
 * temperature, top-k, top-p), the random word from Philox keyed by the
 * seed with the step read from a device tensor (webtensor.h, "sampling
 * the next token"). The kernels are cpu/sample.c and
 * webgpu/kernels/sample.c, one algorithm in one summation order. */
#include "api/api.h"
#include "autograd/tape.h"

#include <float.h>
#include <math.h>
#include <string.h>

void wt_sample_options_init(wt_sample_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->temperature = 1.0;
    opts->top_p = 1.0;
}

static wt_status run(const char *fn, const wt_tensor *logits, const wt_sample_options *o, wt_tensor **out)
{
    wt_context *ctx = wt_ctx_of(logits);
    if (!wt_backend_runs(ctx, WT_NODE_SAMPLE))
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the %s backend", fn, ctx->ops->name);
    wt_tensor *src = NULL, *t = NULL;
    wt_status st;
    if (wt_layout_is_contiguous(logits->ndim, logits->shape, logits->strides)) {
        wt_tensor_retain((wt_tensor *)logits);
        src = (wt_tensor *)logits;
    } else if ((st = wt_contiguous(logits, &src)) != WT_OK) {
        return st;
    }
    const int64_t B = logits->shape[0];
    if ((st = wt_tensor_alloc(ctx, WT_I32, 1, &B, &t)) == WT_OK && B > 0) {
        /* 1 / temperature; 0 (greedy) for temperature 0, top_k 1, or a
         * temperature so small that its inverse is no float */
        const double inv = o->temperature > 0 ? 1.0 / o->temperature : 0;
        const float inv_temp = o->top_k == 1 || !(inv <= FLT_MAX) ? 0.0f : (float)inv;
        st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_SAMPLE,
                                         .in = {src, o->counter},
                                         .out = {t},
                                         .p.sample = {inv_temp, (float)o->top_p, o->top_k, o->seed}});
    }
    wt_tensor_release(src);
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

wt_status wt_sample(const wt_tensor *logits, const wt_sample_options *opts, wt_tensor **out)
{
    const char *fn = "wt_sample";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, logits)) != WT_OK) return st;
    wt_sample_options o;
    wt_sample_options_init(&o);
    if (opts) {
        if (opts->struct_size != sizeof *opts)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options not initialised with wt_sample_options_init", fn);
        o = *opts;
    }
    if (o.counter && (st = wt_check_step_value(fn, "counter", logits, o.counter)) != WT_OK) return st;
    /* The ids are integers: nothing flows back to the logits. */
    WT_GRAD_HOOK((logits, NULL, NULL, NULL), 1, out, wt_sample(logits, &o, out), .op = WT_OP_SAMPLE, .nin = 1,
                 .in = {logits});
    if (!(o.temperature >= 0) || isinf(o.temperature))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: temperature %g must be finite and >= 0", fn, o.temperature);
    if (o.top_k < 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: top_k %lld is negative", fn, (long long)o.top_k);
    if (!(o.top_p > 0 && o.top_p <= 1))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: top_p %g is outside (0, 1]", fn, o.top_p);
    if (logits->dtype != WT_F32 && logits->dtype != WT_F16)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: logits must be f32 or f16 (got %s)", fn,
                       wt_dtype_name(logits->dtype));
    if (logits->ndim != 2 || logits->shape[1] < 1)
        return wt_fail(WT_ERR_SHAPE, "%s: logits must be [B, V] with V >= 1 (got %d dims)", fn, logits->ndim);
    if (logits->shape[1] >= ((int64_t)1 << 31))
        return wt_fail(WT_ERR_SHAPE, "%s: %lld logits a row exceed 32-bit ids", fn, (long long)logits->shape[1]);
    if (logits->dtype == WT_F16) {
        wt_tensor *l32 = NULL;
        if ((st = wt_cast(logits, WT_F32, &l32)) != WT_OK) return st;
        st = run(fn, l32, &o, out);
        wt_tensor_release(l32);
        return st;
    }
    return run(fn, logits, &o, out);
}
