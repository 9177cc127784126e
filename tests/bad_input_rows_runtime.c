/* Bad-input rows of the runtime: events, transfers, profiling, device
 * loss, autograd, optimizers, scopes, captured graphs, lent memory and
 * custom kernels. */
#define _POSIX_C_SOURCE 200809L
#include "bad_input_slots.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* runtime */
ROWFN(event_record) { return wt_event_record(CTX("ctx", e->ctx), out_event(m, "out")); }
ROWFN(event_query)
{
    wt_event *ev = NULL;
    bool done = false;
    if (wt_event_record(e->ctx, &ev) != WT_OK) return WT_ERR_BACKEND;
    wt_status st = wt_event_query(PTR("e", ev), PTR("done", &done));
    wt_event_destroy(ev);
    return st;
}
ROWFN(event_wait)
{
    wt_event *ev = NULL;
    if (wt_event_record(e->ctx, &ev) != WT_OK) return WT_ERR_BACKEND;
    wt_status st = wt_event_wait(PTR("e", ev));
    wt_event_destroy(ev);
    return st;
}
ROWFN(tensor_read_async)
{
    float dst[15];
    wt_event **done = out_event(m, "done");
    wt_status st = wt_tensor_read_async(TA("t", e->m35), PTR("dst", dst), BYTES("dst_bytes", sizeof dst), done);
    /* dst must stay valid until the read completes. */
    if (st == WT_OK && done && *done) wt_event_wait(*done);
    return st;
}
ROWFN(tensor_to) { return wt_tensor_to(TFREE("x", e->m35), CTX("dst", e->other), OUT("out")); }
ROWFN(context_profile_begin)
{
    wt_status st = wt_context_profile_begin(CTX("ctx", e->ctx));
    if (st == WT_OK) wt_context_profile_end(e->ctx);
    return st;
}
ROWFN(context_profile_end)
{
    wt_context_profile_begin(e->ctx);
    wt_status st = wt_context_profile_end(CTX("ctx", e->ctx));
    if (st != WT_OK) wt_context_profile_end(e->ctx);
    return st;
}
ROWFN(context_profile_summary)
{
    wt_profile_entry entries[4];
    int count = 0;
    bool gpu = false;
    return wt_context_profile_summary(CTX("ctx", e->ctx), PTR("entries", entries), (int)NONNEG("capacity", 4),
                                      PTR("count", &count), PTRO("gpu_timed", &gpu));
}
ROWFN(context_pipeline_stats)
{
    wt_pipeline_stats s = {0};
    return wt_context_pipeline_stats(CTX("ctx", e->ctx), PTR("out", &s));
}
ROWFN(context_get_info)
{
    wt_context_info info = {0};
    return wt_context_get_info(CTX("ctx", e->ctx), PTR("out", &info));
}
/* Device loss and recovery on a context of their own. */
ROWFN(context_lose_device)
{
    wt_context *c = NULL;
    if (wt_context_create(e->opts, &c) != WT_OK) return WT_ERR_BACKEND;
    wt_status st = wt_context_lose_device(CTX("ctx", c));
    wt_context_destroy(c);
    return st;
}
ROWFN(context_recover)
{
    wt_context *c = NULL;
    if (wt_context_create(e->opts, &c) != WT_OK) return WT_ERR_BACKEND;
    wt_context_lose_device(c); /* UNSUPPORTED on the CPU: recover of a live context */
    wt_status st = wt_context_recover(CTX("ctx", c));
    wt_context_destroy(c);
    return st;
}
/* Autograd, each row on tensors of its own (e's tensors never require grad). */
static wt_status grad_loss(const env2 *e, wt_tensor **w, wt_tensor **loss)
{
    *w = *loss = NULL;
    if (wt_copy(e->m35, w) != WT_OK || wt_tensor_set_requires_grad(*w, true) != WT_OK ||
        wt_sum(*w, 0, NULL, false, loss) != WT_OK)
        return WT_ERR_BACKEND;
    return WT_OK;
}
ROWFN(tensor_set_requires_grad)
{
    wt_tensor *t = NULL;
    if (wt_copy(e->m35, &t) != WT_OK) return WT_ERR_BACKEND;
    wt_status st = wt_tensor_set_requires_grad((wt_tensor *)T("t", t), true);
    wt_tensor_release(t);
    return st;
}
ROWFN(tensor_grad) { return wt_tensor_grad(TA("t", e->m35), OUT("grad")); }
ROWFN(tensor_zero_grad) { return wt_tensor_zero_grad((wt_tensor *)TA("t", e->m35)); }
static void ignore_ready(wt_tensor *grad, void *user) { (void)grad, (void)user; }
ROWFN(tensor_set_grad_ready_hook)
{
    wt_tensor *t = NULL;
    if (wt_copy(e->m35, &t) != WT_OK) return WT_ERR_BACKEND;
    wt_status st = wt_tensor_set_grad_ready_hook((wt_tensor *)TA("t", t), ignore_ready, NULL);
    wt_tensor_release(t);
    return st;
}
ROWFN(backward)
{
    wt_tensor *w, *loss;
    wt_status st = grad_loss(e, &w, &loss);
    if (st == WT_OK) st = wt_backward((wt_tensor *)TA("loss", loss));
    wt_tensor_release(loss);
    wt_tensor_release(w);
    return st;
}
ROWFN(backward_ex)
{
    wt_tensor *w, *loss;
    wt_backward_options o;
    wt_backward_options_init(&o);
    wt_status st = grad_loss(e, &w, &loss);
    if (st == WT_OK) st = wt_backward_ex(1, PTR("outputs", &loss), NULL, PTRO("opts", &o));
    wt_tensor_release(loss);
    wt_tensor_release(w);
    return st;
}
ROWFN(grad)
{
    wt_tensor *w, *loss, *g[1] = {NULL};
    wt_status st = grad_loss(e, &w, &loss);
    if (st == WT_OK) st = wt_grad(1, PTR("outputs", &loss), NULL, 1, PTR("inputs", &w), NULL, PTR("grads", g));
    wt_tensor_release(g[0]);
    wt_tensor_release(loss);
    wt_tensor_release(w);
    return st;
}
ROWFN(detach) { return wt_detach(TA("x", e->m35), OUT("out")); }
ROWFN(no_grad_begin)
{
    wt_status st = wt_no_grad_begin(CTX("ctx", e->ctx));
    if (st == WT_OK) wt_no_grad_end(e->ctx);
    return st;
}
ROWFN(no_grad_end)
{
    if (wt_no_grad_begin(e->ctx) != WT_OK) return WT_ERR_BACKEND;
    wt_status st = wt_no_grad_end(CTX("ctx", e->ctx));
    if (st != WT_OK) wt_no_grad_end(e->ctx);
    return st;
}
/* Scopes, each on a scope of its own over e->ctx. */
/* An SGD optimizer over a fresh parameter with a gradient. */
static wt_status grad_opt(const env2 *e, wt_tensor **w, wt_optimizer **opt)
{
    wt_tensor *loss = NULL;
    *opt = NULL;
    wt_status st = grad_loss(e, w, &loss);
    if (st == WT_OK && (wt_backward(loss) != WT_OK || wt_optimizer_create_sgd(1, w, NULL, opt) != WT_OK))
        st = WT_ERR_BACKEND;
    wt_tensor_release(loss);
    return st;
}
#define OPT_ROW(body)                                   \
    wt_tensor *w = NULL;                                \
    wt_optimizer *opt = NULL;                           \
    wt_status st = grad_opt(e, &w, &opt);               \
    if (st == WT_OK) st = (body);                       \
    wt_optimizer_release(opt);                          \
    wt_tensor_release(w);                               \
    return st
ROWFN(optimizer_create_sgd)
{
    wt_tensor *w, *loss;
    wt_optimizer *opt = NULL;
    wt_sgd_options o;
    wt_sgd_options_init(&o);
    o.momentum = 0.9;
    wt_status st = grad_loss(e, &w, &loss);
    if (st == WT_OK) st = wt_optimizer_create_sgd((int)POS("nparams", 1), PTR("params", &w), PTRO("opts", &o), PTR("out", &opt));
    wt_optimizer_release(opt);
    wt_tensor_release(loss);
    wt_tensor_release(w);
    return st;
}
ROWFN(optimizer_create_adamw)
{
    wt_tensor *w, *loss;
    wt_optimizer *opt = NULL;
    wt_status st = grad_loss(e, &w, &loss);
    if (st == WT_OK) st = wt_optimizer_create_adamw((int)POS("nparams", 1), PTR("params", &w), PTRO("opts", NULL), PTR("out", &opt));
    wt_optimizer_release(opt);
    wt_tensor_release(loss);
    wt_tensor_release(w);
    return st;
}
ROWFN(optimizer_add_params)
{
    wt_tensor *w2 = NULL, *l2 = NULL;
    if (grad_loss(e, &w2, &l2) != WT_OK) return WT_ERR_BACKEND;
    wt_tensor_release(l2);
    wt_tensor *w = NULL;
    wt_optimizer *opt = NULL;
    wt_status st = grad_opt(e, &w, &opt);
    if (st == WT_OK) st = wt_optimizer_add_params(PTR("opt", opt), (int)POS("nparams", 1), PTR("params", &w2), 0.0);
    wt_optimizer_release(opt);
    wt_tensor_release(w);
    wt_tensor_release(w2);
    return st;
}
ROWFN(optimizer_step) { OPT_ROW(wt_optimizer_step(PTR("opt", opt))); }
ROWFN(optimizer_zero_grad) { OPT_ROW(wt_optimizer_zero_grad(PTR("opt", opt))); }
ROWFN(optimizer_set_lr) { OPT_ROW(wt_optimizer_set_lr(PTR("opt", opt), EPS("lr", 0.1f))); }
ROWFN(optimizer_read_steps)
{
    int64_t steps = 0;
    OPT_ROW(wt_optimizer_read_steps(PTR("opt", opt), PTR("steps", &steps)));
}
ROWFN(optimizer_clip_grad_norm)
{
    OPT_ROW(wt_optimizer_clip_grad_norm(PTR("opt", opt), EPS("max_norm", 1.0f), OUTO("total_norm")));
}
ROWFN(optimizer_step_clipped)
{
    OPT_ROW(wt_optimizer_step_clipped(PTR("opt", opt), EPS("max_norm", 1.0f), OUTO("total_norm")));
}
ROWFN(optimizer_set_schedule)
{
    wt_lr_schedule_options s;
    wt_lr_schedule_options_init(&s);
    s.kind = WT_LR_COSINE;
    OPT_ROW(wt_optimizer_set_schedule(PTR("opt", opt), PTRO("schedule", &s)));
}
ROWFN(clip_grad_norm)
{
    wt_tensor *w = NULL;
    wt_optimizer *opt = NULL;
    wt_status st = grad_opt(e, &w, &opt);
    if (st == WT_OK) st = wt_clip_grad_norm((int)POS("nparams", 1), PTR("params", &w), EPS("max_norm", 1.0f), OUTO("total_norm"));
    wt_optimizer_release(opt);
    wt_tensor_release(w);
    return st;
}
ROWFN(lr_schedule_at)
{
    (void)e;
    wt_lr_schedule_options s;
    wt_lr_schedule_options_init(&s);
    s.kind = WT_LR_STEP;
    double lr = 0;
    return wt_lr_schedule_at(PTR("schedule", &s), NONNEG("step", 3), PTR("lr", &lr));
}
ROWFN(grad_scaler_create)
{
    wt_grad_scaler *s = NULL;
    wt_status st = wt_grad_scaler_create(CTX("ctx", e->ctx), PTRO("opts", NULL), PTR("out", &s));
    wt_grad_scaler_release(s);
    return st;
}
#define SCALER_ROW(body)                                             \
    wt_tensor *w = NULL;                                             \
    wt_optimizer *opt = NULL;                                        \
    wt_grad_scaler *sc = NULL;                                       \
    wt_status st = grad_opt(e, &w, &opt);                            \
    if (st == WT_OK && wt_grad_scaler_create(e->ctx, NULL, &sc) != WT_OK) st = WT_ERR_BACKEND; \
    if (st == WT_OK) st = (body);                                    \
    wt_grad_scaler_release(sc);                                      \
    wt_optimizer_release(opt);                                       \
    wt_tensor_release(w);                                            \
    return st
ROWFN(grad_scaler_scale) { SCALER_ROW(wt_grad_scaler_scale(PTR("scaler", sc), TA("loss", e->one), OUT("out"))); }
ROWFN(grad_scaler_unscale) { SCALER_ROW(wt_grad_scaler_unscale(PTR("scaler", sc), PTR("opt", opt))); }
ROWFN(grad_scaler_step) { SCALER_ROW(wt_grad_scaler_step(PTR("scaler", sc), PTR("opt", opt))); }
ROWFN(grad_scaler_current_scale) { SCALER_ROW(wt_grad_scaler_current_scale(PTR("scaler", sc), OUT("scale"))); }
ROWFN(grad_scaler_found_inf) { SCALER_ROW(wt_grad_scaler_found_inf(PTR("scaler", sc), OUT("found"))); }
ROWFN(scope_begin)
{
    wt_scope *s = NULL;
    wt_status st = wt_scope_begin(CTX("ctx", e->ctx), PTR("out", &s));
    if (st == WT_OK) st = wt_scope_end(s);
    return st;
}
ROWFN(scope_keep)
{
    wt_scope *s = NULL;
    wt_tensor *t = NULL;
    if (wt_scope_begin(e->ctx, &s) != WT_OK) return WT_ERR_BACKEND;
    if (wt_neg(e->m35, &t) != WT_OK) {
        wt_scope_end(s);
        return WT_ERR_BACKEND;
    }
    wt_status st = wt_scope_keep(PTR("scope", s), (wt_tensor *)TA("t", t));
    wt_scope_end(s); /* releases t unless it was kept */
    if (st == WT_OK) wt_tensor_release(t);
    return st;
}
ROWFN(scope_end)
{
    wt_scope *s = NULL;
    if (wt_scope_begin(e->ctx, &s) != WT_OK) return WT_ERR_BACKEND;
    wt_status st = wt_scope_end(PTR("scope", s));
    if (st != WT_OK) wt_scope_end(s);
    return st;
}
/* Captured graphs, each capture of its own over e->ctx (a capture a row
 * leaves open is ended, so the next row starts without one). */
static void end_capture(wt_context *ctx)
{
    wt_graph *g = NULL;
    if (wt_graph_end(ctx, &g) == WT_OK) wt_graph_release(g);
}
ROWFN(graph_begin)
{
    wt_status st = wt_graph_begin(CTX("ctx", e->ctx));
    end_capture(e->ctx);
    return st;
}
ROWFN(graph_end)
{
    if (wt_graph_begin(e->ctx) != WT_OK) return WT_ERR_BACKEND;
    wt_graph *g = NULL;
    wt_status st = wt_graph_end(CTX("ctx", e->ctx), PTR("out", &g));
    end_capture(e->ctx);
    wt_graph_release(g);
    return st;
}
/* The deprecated names of the two above. */
ROWFN(graph_capture_begin)
{
    wt_status st = wt_graph_capture_begin(CTX("ctx", e->ctx));
    end_capture(e->ctx);
    return st;
}
ROWFN(graph_capture_end)
{
    if (wt_graph_begin(e->ctx) != WT_OK) return WT_ERR_BACKEND;
    wt_graph *g = NULL;
    wt_status st = wt_graph_capture_end(CTX("ctx", e->ctx), PTR("out", &g));
    end_capture(e->ctx);
    wt_graph_destroy(g);
    return st;
}
/* An empty graph of e->ctx, or NULL. */
static wt_graph *empty_graph(const env2 *e)
{
    wt_graph *g = NULL;
    if (wt_graph_begin(e->ctx) != WT_OK) return NULL;
    if (wt_graph_end(e->ctx, &g) != WT_OK) return NULL;
    return g;
}
ROWFN(graph_replay)
{
    wt_graph *g = empty_graph(e);
    if (!g) return WT_ERR_BACKEND;
    wt_status st = wt_graph_replay(PTR("graph", g));
    wt_graph_release(g);
    return st;
}
ROWFN(graph_node_count)
{
    wt_graph *g = empty_graph(e);
    if (!g) return WT_ERR_BACKEND;
    int64_t n = -1;
    wt_status st = wt_graph_node_count(PTR("graph", g), PTR("count", &n));
    wt_graph_release(g);
    return st;
}
/* Writes m35's own values back, so the other rows see what they expect. */
ROWFN(tensor_write)
{
    float v[15];
    if (wt_tensor_read(e->m35, v, sizeof v) != WT_OK) return WT_ERR_BACKEND;
    return wt_tensor_write((wt_tensor *)TA("t", e->m35), PTR("src", v), BYTES("src_bytes", sizeof v));
}
/* Lent memory: the CPU backend's (WebGPU refuses it: R_ALT). A call that
 * fails must not call release. */
static int g_host_releases;
static void count_host_release(void *user_data)
{
    (void)user_data;
    g_host_releases++;
}
ROWFN(tensor_from_host_memory)
{
    (void)e;
    static float lent[15];
    static const int64_t shape[2] = {3, 5}, strides[2] = {5, 1};
    const int before = g_host_releases;
    wt_status st = wt_tensor_from_host_memory(CTX("ctx", e->ctx), DT("dtype", WT_F32), (int)NONNEG("ndim", 2),
                                              PTR("shape", shape), PTRO("strides", strides), PTR("data", lent),
                                              count_host_release, NULL, OUT("out"));
    if (st != WT_OK && g_host_releases != before) return WT_ERR_BACKEND; /* released on failure */
    return st;
}
ROWFN(tensor_host_data)
{
    void *p = NULL;
    return wt_tensor_host_data((wt_tensor *)TA("t", e->m35), PTR("data", &p));
}
static const char KERNEL_WGSL[] =
    "@group(0) @binding(1) var<storage, read_write> a: array<f32>;\n"
    "@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) i: vec3<u32>) {\n"
    "  if (i.x < arrayLength(&a)) { a[i.x] = a[i.x] * 2.0; }\n}\n";
/* The kernel description: NULL, then each field a caller can get wrong. */
static const wt_kernel_desc *kdesc_slot(M *m, const char *name, wt_kernel_desc *d)
{
    if (!slot_take(m, K_KDESC, name)) return d;
    const wt_status INV = WT_ERR_INVALID_ARGUMENT;
    switch (m->variant) {
    case 0: slot_expect(m, CLASS_NULL, INV, WT_OK, "%s NULL", name); return NULL;
    case 1: d->source = NULL; slot_expect(m, CLASS_NULL, INV, WT_OK, "%s source NULL", name); break;
    case 2: d->source = "fn main( {"; slot_expect(m, CLASS_VALUE, WT_ERR_SHADER, WT_OK, "%s bad WGSL", name); break;
    case 3: d->entry_point = "absent"; slot_expect(m, CLASS_VALUE, WT_ERR_SHADER, INV, "%s entry point absent", name); break;
    case 4: d->num_tensors = 9; slot_expect(m, CLASS_SIZE, INV, WT_OK, "%s 9 tensors", name); break;
    case 5: d->num_tensors = -1; slot_expect(m, CLASS_SIZE, INV, WT_OK, "%s -1 tensors", name); break;
    case 6: d->params_size = 257; slot_expect(m, CLASS_SIZE, INV, WT_OK, "%s params of 257 bytes", name); break;
    }
    return d;
}

ROWFN(kernel_create)
{
    wt_kernel_desc d = {KERNEL_WGSL, NULL, 1, 1u, 0};
    return wt_kernel_create(CTX("ctx", e->ctx), kdesc_slot(m, "desc", &d), out_kernel(m, "out"));
}
/* On the CPU no kernel can be made: the row then passes NULL, and its
 * valid call is the NULL case (WT_ERR_INVALID_ARGUMENT, the row's alt). */
ROWFN(kernel_dispatch)
{
    wt_kernel_desc d = {KERNEL_WGSL, NULL, 1, 1u, 0};
    wt_kernel *k = NULL;
    wt_kernel_create(e->ctx, &d, &k);
    wt_tensor *a = NULL;
    const int64_t n = 15;
    if (wt_tensor_zeros(e->ctx, WT_F32, 1, &n, &a) != WT_OK) {
        wt_kernel_destroy(k);
        return WT_ERR_BACKEND;
    }
    wt_tensor *ts[1] = {a};
    static const uint32_t params[1] = {0};
    /* params: none was declared, so 4 bytes of them are a size mismatch;
     * groups: past maxComputeWorkgroupsPerDimension (65535 at least). */
    const bool bad_params = slot_take(m, K_VALUE, "params") && m->variant == 0;
    if (bad_params) slot_expect(m, CLASS_SIZE, WT_ERR_INVALID_ARGUMENT, WT_OK, "%s of 4 bytes, none declared", "params");
    const bool bad_groups = slot_take(m, K_VALUE, "groups_x") && m->variant == 0;
    if (bad_groups) slot_expect(m, CLASS_SIZE, WT_ERR_INVALID_ARGUMENT, WT_OK, "%s 2^31", "groups_x");
    wt_status st = wt_kernel_dispatch(PTR("k", k), (int)POS("ntensors", 1), PTR("tensors", ts), bad_params ? params : NULL,
                                      bad_params ? sizeof params : 0, bad_groups ? 1u << 31 : 1, 1, 1);
    wt_tensor_release(a);
    wt_kernel_destroy(k);
    return st;
}

static const slot_row ROWS[] = {
    R(event_record), R(event_query), R(event_wait), R(tensor_read_async), R(tensor_to),
    R_ALT(context_profile_begin, WT_ERR_UNSUPPORTED), R_ALT(context_profile_end, WT_ERR_UNSUPPORTED),
    R_ALT(context_profile_summary, WT_ERR_UNSUPPORTED),
    R(context_pipeline_stats), R(context_get_info), R_ALT(context_lose_device, WT_ERR_UNSUPPORTED),
    R(context_recover), R(scope_begin), R(scope_keep), R(scope_end), R(graph_begin),
    R(graph_end), R(graph_capture_begin), R(graph_capture_end), R(graph_replay), R(graph_node_count), R(tensor_write),
    R_ALT(tensor_from_host_memory, WT_ERR_UNSUPPORTED), R_ALT(tensor_host_data, WT_ERR_UNSUPPORTED),
    R(tensor_set_requires_grad), R(tensor_grad), R(tensor_zero_grad), R(tensor_set_grad_ready_hook), R(backward), R(backward_ex), R(grad),
    R(detach), R(no_grad_begin), R(no_grad_end), R(optimizer_create_sgd), R(optimizer_create_adamw),
    R(optimizer_add_params), R(optimizer_step), R(optimizer_zero_grad), R(optimizer_set_lr), R(optimizer_read_steps),
    R(optimizer_clip_grad_norm), R(optimizer_step_clipped), R(optimizer_set_schedule), R(clip_grad_norm), R(lr_schedule_at),
    R(grad_scaler_create), R(grad_scaler_scale), R(grad_scaler_unscale), R(grad_scaler_step),
    R(grad_scaler_current_scale), R(grad_scaler_found_inf), R_ALT(kernel_create, WT_ERR_UNSUPPORTED),
    R_ALT(kernel_dispatch, WT_ERR_INVALID_ARGUMENT),
};
const slot_table bad_input_rows_runtime = {ROWS, sizeof ROWS / sizeof ROWS[0]};
