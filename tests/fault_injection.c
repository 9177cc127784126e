/* fault_injection <cpu|vulkan|gles>: failures injected into a workload at
 * every point where it can fail, one point per run.
 *
 *  - Host memory: the program is linked with -Wl,--wrap for malloc,
 *    calloc, realloc and aligned_alloc (tests/CMakeLists.txt), which
 *    reroutes the library's own allocations (it is linked statically) to
 *    the hooks below; nothing of this is in the library. For N = 1, 2, ...
 *    the Nth allocation of the workload fails, until a run makes fewer
 *    than N. Context creation is part of the workload.
 *  - Device objects (WebGPU): the context's table of WebGPU entry points
 *    is patched so that the Nth buffer, shader module, compute pipeline or
 *    bind group is made and then reported failed (OutOfMemory for buffers,
 *    Validation for the rest) through Dawn's wgpuDeviceInjectError, inside
 *    the library's own error scope, as a real failure would be.
 *  - Device loss in the middle of a batch (wgpuDeviceForceLoss).
 *
 * Each failing run must return the right code (out of memory, shader,
 * backend), set its out-pointer to NULL, leave no tensor and no host block
 * alive, and leave the context usable: the same workload, run again,
 * gives the same numbers. A lost device must make every later call fail
 * with WT_ERR_DEVICE_LOST, tear down cleanly, and a new context must work.
 * The counts of injection points are printed. */
#include "host_faults.h"
#include "test_util.h"
#include "webgpu/wg_runtime.h"
#include "webtensor_io.h"
#include "webtensor_tokenizer.h"

#include "fuzz/tokenizer_vocab.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *g_mode;

/* ------------------------------------------------ device-object injection */

typedef enum dev_kind { DEV_BUFFER, DEV_SHADER_MODULE, DEV_PIPELINE, DEV_BIND_GROUP, DEV_KINDS } dev_kind;
static const char *const dev_kind_name[DEV_KINDS] = {"buffer", "shader module", "compute pipeline",
                                                     "bind group"};
static const wt_status dev_kind_code[DEV_KINDS] = {WT_ERR_OUT_OF_MEMORY, WT_ERR_SHADER, WT_ERR_SHADER,
                                                   WT_ERR_BACKEND};

typedef void (*inject_error_fn)(WGPUDevice, WGPUErrorType, WGPUStringView);
typedef void (*force_loss_fn)(WGPUDevice, WGPUDeviceLostReason, WGPUStringView);
static inject_error_fn g_inject_error;
static force_loss_fn g_force_loss;
static wgpu_procs g_real; /* the entry points before patching */
static dev_kind g_dev_kind;
static long g_dev_count, g_dev_fail_at, g_dev_injected;

static void dev_maybe_fail(WGPUDevice device, dev_kind kind)
{
    if (kind != g_dev_kind || g_dev_fail_at == 0) return;
    if (++g_dev_count != g_dev_fail_at) return;
    g_dev_injected++;
    static const char msg[] = "injected by fault_injection";
    g_inject_error(device, kind == DEV_BUFFER ? WGPUErrorType_OutOfMemory : WGPUErrorType_Validation,
                   (WGPUStringView){msg, sizeof msg - 1});
}

static WGPUBuffer hook_create_buffer(WGPUDevice d, const WGPUBufferDescriptor *desc)
{
    WGPUBuffer b = g_real.DeviceCreateBuffer(d, desc);
    dev_maybe_fail(d, DEV_BUFFER);
    return b;
}

static WGPUShaderModule hook_create_shader_module(WGPUDevice d, const WGPUShaderModuleDescriptor *desc)
{
    WGPUShaderModule m = g_real.DeviceCreateShaderModule(d, desc);
    dev_maybe_fail(d, DEV_SHADER_MODULE);
    return m;
}

static WGPUComputePipeline hook_create_pipeline(WGPUDevice d, const WGPUComputePipelineDescriptor *desc)
{
    WGPUComputePipeline p = g_real.DeviceCreateComputePipeline(d, desc);
    dev_maybe_fail(d, DEV_PIPELINE);
    return p;
}

static WGPUBindGroup hook_create_bind_group(WGPUDevice d, const WGPUBindGroupDescriptor *desc)
{
    WGPUBindGroup g = g_real.DeviceCreateBindGroup(d, desc);
    dev_maybe_fail(d, DEV_BIND_GROUP);
    return g;
}

/* Points the context's entry points at the hooks (and finds Dawn's
 * injection functions in the library the context loaded). */
static bool patch_device(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    if (!g_inject_error) {
        g_inject_error = (inject_error_fn)(uintptr_t)dlsym(w->lib.handle, "wgpuDeviceInjectError");
        g_force_loss = (force_loss_fn)(uintptr_t)dlsym(w->lib.handle, "wgpuDeviceForceLoss");
    }
    if (!g_inject_error || !g_force_loss) return false;
    g_real = w->lib.p;
    w->lib.p.DeviceCreateBuffer = hook_create_buffer;
    w->lib.p.DeviceCreateShaderModule = hook_create_shader_module;
    w->lib.p.DeviceCreateComputePipeline = hook_create_pipeline;
    w->lib.p.DeviceCreateBindGroup = hook_create_bind_group;
    return true;
}

/* ---------------------------------------------------------------- workload */

#define OUT_FLOATS 9

/* A little of everything: creation, broadcast, views, matmul, reductions,
 * row-wise ops, f16 casts, quantised weights (quantise, the fused linear
 * of Q4_0, alone and with a residual added, and, on the CPU, Q4_K, an
 * embedding lookup), wt_linear_fused, wt_rope_kv_cache, wt_rope_kv_attention,
 * a read. Writes 9 floats. Every tensor is released on every path; a
 * failing call's out-pointer must be NULL. */
static wt_status workload(wt_context *ctx, float *result, bool *out_was_null)
{
    enum { A, B, W, S1, AT, AC, MM, SM, LN, RM, H, HF, EX, LG, SUM, MX, DV, SQ, QX, QR, QW, QY, QI, QE, LF, KS, K4, KC,
           KQ, SX, SR, SW, SY, QF, KA, QT, QG, NT };
    wt_tensor *t[NT];
    for (int i = 0; i < NT; i++)
        t[i] = NULL;
    static const float da[15] = {0.5f, -1, 2, 3, -0.25f, 1, 1.5f, -2, 0.75f, 4, -3, 2.5f, 0.125f, 1, -1};
    static const float db[5] = {1, 2, 3, 4, 5};
    const int64_t sa[2] = {3, 5}, sb[1] = {5};
    int axis1 = 1;
    wt_status st;
    *out_was_null = true;
#define STEP(call, slot)                                                  \
    do {                                                                  \
        t[slot] = (wt_tensor *)(uintptr_t)0x10;                           \
        st = (call);                                                      \
        if (st != WT_OK) {                                                \
            if (t[slot] != NULL) *out_was_null = false;                   \
            t[slot] = NULL;                                               \
            goto out;                                                     \
        }                                                                 \
    } while (0)
    STEP(wt_tensor_from_data(ctx, WT_F32, 2, sa, da, &t[A]), A);
    /* On the CPU, b is the caller's memory lent to the tensor. */
    static float db_lent[5];
    memcpy(db_lent, db, sizeof db_lent);
    if (wt_context_backend(ctx) == WT_BACKEND_CPU)
        STEP(wt_tensor_from_host_memory(ctx, WT_F32, 1, sb, NULL, db_lent, NULL, NULL, &t[B]), B);
    else
        STEP(wt_tensor_from_data(ctx, WT_F32, 1, sb, db, &t[B]), B);
    STEP(wt_tensor_full(ctx, WT_F32, 1, sb, 0.5, &t[W]), W);
    STEP(wt_add(t[A], t[B], &t[S1]), S1);
    STEP(wt_transpose(t[S1], 0, 1, &t[AT]), AT);
    STEP(wt_contiguous(t[AT], &t[AC]), AC);
    STEP(wt_matmul(t[S1], t[AC], &t[MM]), MM);
    STEP(wt_softmax(t[MM], -1, &t[SM]), SM);
    STEP(wt_layernorm(t[S1], t[W], t[B], 1e-5f, &t[LN]), LN);
    STEP(wt_rmsnorm(t[LN], t[W], 1e-6f, &t[RM]), RM);
    STEP(wt_cast(t[RM], WT_F16, &t[H]), H);
    STEP(wt_cast(t[H], WT_F32, &t[HF]), HF);
    STEP(wt_exp(t[HF], &t[EX]), EX);
    STEP(wt_log(t[EX], &t[LG]), LG);
    STEP(wt_sum(t[LG], 1, &axis1, false, &t[SUM]), SUM);
    STEP(wt_max(t[SM], 0, NULL, false, &t[MX]), MX);
    STEP(wt_div(t[SUM], t[MX], &t[DV]), DV);
    STEP(wt_sqrt(t[SM], &t[SQ]), SQ);
    const int64_t sq[2] = {2, 32}, s1[1] = {1};
    const int32_t row1 = 1;
    STEP(wt_tensor_arange(ctx, WT_F32, 0.0, 2.0, 1.0 / 32.0, &t[QX]), QX);
    STEP(wt_reshape(t[QX], 2, sq, &t[QR]), QR);
    STEP(wt_quantize(t[QR], WT_QUANT_Q4_0, &t[QW]), QW);
    STEP(wt_linear_quant(t[QR], t[QW], WT_QUANT_Q4_0, NULL, &t[QY]), QY);
    wt_linear_fused_options qo;
    wt_linear_fused_options_init(&qo);
    qo.residual = t[QY];
    STEP(wt_linear_quant_fused(t[QR], t[QW], WT_QUANT_Q4_0, NULL, &qo, &t[QF]), QF);
    /* the same written into a tensor of the caller's (into) */
    const int64_t s22[2] = {2, 2};
    STEP(wt_tensor_zeros(ctx, WT_F32, 2, s22, &t[QT]), QT);
    qo.into = t[QT];
    STEP(wt_linear_quant_fused(t[QR], t[QW], WT_QUANT_Q4_0, NULL, &qo, &t[QG]), QG);
    STEP(wt_tensor_from_data(ctx, WT_I32, 1, s1, &row1, &t[QI]), QI);
    STEP(wt_embedding_quant(t[QW], WT_QUANT_Q4_0, t[QI], WT_F32, &t[QE]), QE);
    /* a super-block format on the CPU, whose decode product rounds x to
     * 8 bits per 256 in a buffer of its own */
    const bool cpu = wt_context_backend(ctx) == WT_BACKEND_CPU;
    const int64_t ss[2] = {2, 256};
    if (cpu) {
        STEP(wt_tensor_arange(ctx, WT_F32, -8.0, 8.0, 1.0 / 32.0, &t[SX]), SX);
        STEP(wt_reshape(t[SX], 2, ss, &t[SR]), SR);
        STEP(wt_quantize(t[SR], WT_QUANT_Q4_K, &t[SW]), SW);
        STEP(wt_linear_quant(t[SR], t[SW], WT_QUANT_Q4_K, NULL, &t[SY]), SY);
    }
    wt_linear_fused_options lo;
    wt_linear_fused_options_init(&lo);
    lo.rms_norm = true;
    lo.norm_weight = t[W];
    lo.residual = t[MM];
    STEP(wt_linear_fused(t[S1], t[A], NULL, &lo, &t[LF]), LF);
    const int64_t s4[4] = {1, 1, 3, 2}, c4[4] = {1, 2, 4, 2};
    STEP(wt_slice(t[QX], 0, 0, 6, 1, &t[KS]), KS);
    STEP(wt_reshape(t[KS], 4, s4, &t[K4]), K4);
    STEP(wt_tensor_zeros(ctx, WT_F32, 4, c4, &t[KC]), KC);
    STEP(wt_rope_kv_cache(t[KC], t[K4], 1, NULL, &t[KQ]), KQ);
    STEP(wt_rope_kv_attention(t[KC], t[K4], 1, NULL, NULL, &t[KA]), KA);
    float sm[9], dv[3], qy[4], qf[4], qg[4], qe[32], lf[9], kq[2], ka[2], sy[4] = {0};
    st = wt_tensor_read(t[SQ], sm, sizeof sm);
    if (st == WT_OK) st = wt_tensor_read(t[DV], dv, sizeof dv);
    if (st == WT_OK) st = wt_tensor_read(t[QY], qy, sizeof qy);
    if (st == WT_OK) st = wt_tensor_read(t[QF], qf, sizeof qf);
    if (st == WT_OK) st = wt_tensor_read(t[QG], qg, sizeof qg);
    if (st == WT_OK) st = wt_tensor_read(t[QE], qe, sizeof qe);
    if (st == WT_OK) st = wt_tensor_read(t[LF], lf, sizeof lf);
    if (st == WT_OK) st = wt_tensor_read(t[KQ], kq, sizeof kq);
    if (st == WT_OK) st = wt_tensor_read(t[KA], ka, sizeof ka);
    if (st == WT_OK && cpu) st = wt_tensor_read(t[SY], sy, sizeof sy);
    if (st == WT_OK)
        for (int i = 0; i < OUT_FLOATS; i++)
            result[i] = sm[i] + (i < 3 ? dv[i] : 0) + (i < 4 ? qy[i] + qf[i] + qg[i] + sy[i] : 0) + qe[i] + lf[i] + (i < 2 ? kq[i] + ka[i] : 0);
#undef STEP
out:
    for (int i = 0; i < NT; i++)
        wt_tensor_release(t[i]);
    return st;
}

static bool same_result(const float *a, const float *b)
{
    for (int i = 0; i < OUT_FLOATS; i++)
        if (!(a[i] == b[i])) return false;
    return true;
}

/* After a failed (or recovered) run: no tensor alive, no more host blocks
 * than before, and the workload gives the reference numbers again. */
static void check_recovered(wt_context *ctx, long live_before, const float *ref, const char *what)
{
    wt_memory_stats ms;
    if (wt_context_memory_stats(ctx, &ms) == WT_OK)
        CHECK(ms.live_tensors == 0 && ms.live_bytes == 0,
              "%s [%s]: %llu storages (%llu bytes) still alive", what, g_mode,
              (unsigned long long)ms.live_tensors, (unsigned long long)ms.live_bytes);
    wt_context_trim(ctx);
    long live = host_live();
    CHECK(live <= live_before, "%s [%s]: %ld host blocks alive after trim, %ld before", what, g_mode,
          live, live_before);
    float again[OUT_FLOATS];
    bool null_ok;
    wt_status st = workload(ctx, again, &null_ok);
    CHECK(st == WT_OK && same_result(again, ref), "%s [%s]: rerun: %s (%s)", what, g_mode,
          wt_status_string(st), st == WT_OK ? "different numbers" : wt_last_error());
}

static wt_context *make_context(test_backend be)
{
    wt_context_options o;
    test_backend_options(be, &o);
    wt_context *ctx = NULL;
    if (wt_context_create(&o, &ctx) != WT_OK) return NULL;
    return ctx;
}

/* Host allocations: creation of a context and the workload in it. */
static void host_phase(test_backend be, const float *ref)
{
    long points = 0, recovered = 0, total = -1;
    /* Context creation (CPU: cheap, so every point; WebGPU: the library's
     * own allocations around Dawn's). */
    for (long n = 1;; n++) {
        long live_before = host_live();
        host_arm(n);
        wt_context_options o;
        test_backend_options(be, &o);
        wt_context *ctx = (wt_context *)(uintptr_t)0x10;
        wt_status st = wt_context_create(&o, &ctx);
        long injected = host_injected();
        host_arm(0);
        if (injected == 0) {
            CHECK(st == WT_OK, "create [%s]: %s", g_mode, wt_last_error());
            wt_context_destroy(ctx);
            total = n - 1;
            break;
        }
        points++;
        if (st == WT_OK) {
            recovered++;
            wt_context_destroy(ctx);
        } else {
            CHECK(st == WT_ERR_OUT_OF_MEMORY, "create, allocation %ld failing [%s]: %s (%s)", n,
                  g_mode, wt_status_string(st), wt_last_error());
            CHECK(ctx == NULL, "create, allocation %ld failing [%s]: *out not NULL", n, g_mode);
        }
        CHECK(host_live() <= live_before, "create, allocation %ld failing [%s]: %ld host blocks leaked",
              n, g_mode, host_live() - live_before);
    }
    printf("host allocations of wt_context_create [%s]: %ld, each failed once: %ld failures, "
           "%ld recovered inside the call\n", g_mode, total, points, recovered);

    wt_context *ctx = make_context(be);
    if (!CHECK(ctx != NULL, "context [%s]: %s", g_mode, wt_last_error())) return;
    float warm[OUT_FLOATS];
    bool warm_null;
    CHECK(workload(ctx, warm, &warm_null) == WT_OK, "warm-up [%s]: %s", g_mode, wt_last_error());
    points = recovered = 0;
    for (long n = 1;; n++) {
        wt_context_trim(ctx); /* so that the pool does not hide allocations */
        long live_before = host_live();
        float got[OUT_FLOATS];
        bool null_ok = true;
        host_arm(n);
        wt_status st = workload(ctx, got, &null_ok);
        long injected = host_injected();
        host_arm(0);
        if (injected == 0) {
            CHECK(st == WT_OK && same_result(got, ref), "workload [%s]: %s", g_mode, wt_last_error());
            total = n - 1;
            break;
        }
        points++;
        char what[96];
        snprintf(what, sizeof what, "workload, allocation %ld failing", n);
        if (st == WT_OK) {
            recovered++;
            CHECK(same_result(got, ref), "%s [%s]: recovered with different numbers", what, g_mode);
        } else {
            CHECK(st == WT_ERR_OUT_OF_MEMORY, "%s [%s]: %s (%s)", what, g_mode, wt_status_string(st),
                  wt_last_error());
            CHECK(null_ok, "%s [%s]: *out not NULL on failure", what, g_mode);
            CHECK(wt_last_error()[0] != 0, "%s [%s]: no message", what, g_mode);
        }
        check_recovered(ctx, live_before, ref, what);
    }
    wt_context_destroy(ctx);
    printf("host allocations of the workload [%s]: %ld, each failed once: %ld failures, "
           "%ld recovered inside the call\n", g_mode, total, points, recovered);
}

/* ------------------------------------------------------------------ scopes */

#define SCOPE_FLOATS 6

/* Temporaries owned by two nested scopes, enough of them that both grow
 * (the inner one while ops run, the outer one when the result is kept
 * into it), a result kept out of both, a read. */
static wt_status scoped_workload(wt_context *ctx, float *result)
{
    static const float da[SCOPE_FLOATS] = {0.5f, -1, 2, 3, -0.25f, 1};
    const int64_t s23[2] = {2, 3}, s6[1] = {6};
    wt_scope *outer = NULL, *inner = NULL;
    wt_tensor *a = NULL, *v = NULL, *b = NULL, *c = NULL;
    wt_status st = wt_scope_begin(ctx, &outer);
    if (st != WT_OK) return st;
    st = wt_tensor_from_data(ctx, WT_F32, 2, s23, da, &a);
    for (int i = 0; i < 31 && st == WT_OK; i++) /* views: the outer scope's slots fill up */
        st = wt_reshape(a, 1, s6, &v);
    if (st == WT_OK && (st = wt_scope_begin(ctx, &inner)) == WT_OK) {
        b = a;
        for (int i = 0; i < 40 && st == WT_OK; i++) st = wt_add_scalar(b, 0.5, &b);
        if (st == WT_OK) st = wt_softmax(b, -1, &c);
        if (st == WT_OK) st = wt_scope_keep(inner, c); /* into the full outer scope */
        wt_scope_end(inner);
    }
    if (st == WT_OK) st = wt_scope_keep(outer, c);
    wt_scope_end(outer);
    if (st != WT_OK) return st;
    st = wt_tensor_read(c, result, sizeof(float) * SCOPE_FLOATS);
    wt_tensor_release(c);
    return st;
}

/* A captured graph: a chain of 70 kernels captured (the graph's lists
 * grow), a new input written, two replays, the result read. */
static wt_status graph_workload(wt_context *ctx, float *result)
{
    static const float d0[SCOPE_FLOATS] = {0.5f, -1, 2, 3, -0.25f, 1};
    static const float d1[SCOPE_FLOATS] = {1, 0.5f, -0.75f, 0.25f, 2, -1};
    const int64_t s23[2] = {2, 3};
    wt_tensor *x = NULL, *y = NULL;
    wt_graph *g = NULL;
    wt_status st = wt_tensor_from_data(ctx, WT_F32, 2, s23, d0, &x);
    if (st == WT_OK && (st = wt_graph_begin(ctx)) == WT_OK) {
        wt_tensor *b = x;
        for (int i = 0; i < 70 && st == WT_OK; i++) {
            wt_tensor *n = NULL;
            st = wt_add_scalar(b, 0.25, &n);
            if (b != x) wt_tensor_release(b);
            b = st == WT_OK ? n : x;
        }
        if (st == WT_OK) st = wt_softmax(b, -1, &y);
        if (b != x) wt_tensor_release(b);
        wt_status end = wt_graph_end(ctx, &g);
        if (st == WT_OK) st = end;
    }
    if (st == WT_OK) st = wt_tensor_write(x, d1, sizeof d1);
    if (st == WT_OK) st = wt_graph_replay(g);
    if (st == WT_OK) st = wt_graph_replay(g);
    if (st == WT_OK) st = wt_tensor_read(y, result, sizeof(float) * SCOPE_FLOATS);
    wt_graph_release(g);
    wt_tensor_release(y);
    wt_tensor_release(x);
    return st;
}

/* A decode step over a 3-row cache with its values on the device:
 * rope at a device position, the row written with copy_into_at, attention
 * over kv_length keys; captured at position 0, replayed at 1 and 2 with
 * new inputs; the cache (6 floats) read. */
static wt_status step_values_workload(wt_context *ctx, float *result)
{
    static const float x0[2] = {0.5f, -1}, x1[2] = {2, 0.25f}, x2[2] = {-0.75f, 1.5f};
    const int64_t s4[4] = {1, 1, 1, 2}, c4[4] = {1, 1, 3, 2}, one[1] = {1};
    const int32_t zero = 0, first_len = 1;
    wt_tensor *x = NULL, *cache = NULL, *pos = NULL, *len = NULL, *r = NULL, *a = NULL;
    wt_graph *g = NULL;
    wt_status st = wt_tensor_from_data(ctx, WT_F32, 4, s4, x0, &x);
    if (st == WT_OK) st = wt_tensor_zeros(ctx, WT_F32, 4, c4, &cache);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_I32, 1, one, &zero, &pos);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_I32, 1, one, &first_len, &len);
    if (st == WT_OK && (st = wt_graph_begin(ctx)) == WT_OK) {
        wt_rope_options ro;
        wt_rope_options_init(&ro);
        ro.position = pos;
        wt_attention_options ao;
        wt_attention_options_init(&ao);
        ao.causal = true;
        ao.kv_length = len;
        st = wt_rope_v2(x, &ro, &r);
        if (st == WT_OK) st = wt_copy_into_at(cache, 2, pos, r);
        if (st == WT_OK) st = wt_scaled_dot_product_attention_v2(r, cache, cache, NULL, &ao, &a);
        wt_status end = wt_graph_end(ctx, &g);
        if (st == WT_OK) st = end;
    }
    for (int32_t p = 1; p <= 2 && st == WT_OK; p++) {
        const int32_t l = p + 1;
        st = wt_tensor_write(x, p == 1 ? x1 : x2, sizeof x1);
        if (st == WT_OK) st = wt_tensor_write(pos, &p, sizeof p);
        if (st == WT_OK) st = wt_tensor_write(len, &l, sizeof l);
        if (st == WT_OK) st = wt_graph_replay(g);
    }
    if (st == WT_OK) st = wt_tensor_read(cache, result, sizeof(float) * SCOPE_FLOATS);
    wt_graph_release(g);
    wt_tensor *all[] = {x, cache, pos, len, r, a};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wt_tensor_release(all[i]);
    return st;
}

/* Sampling with the step on the device: wt_sample (top-k, top-p) of 6
 * rows captured at step 0, replayed at step 1; the ids read as floats. */
static wt_status sample_workload(wt_context *ctx, float *result)
{
    static const float lg[SCOPE_FLOATS * 4] = {1, 2, 0.5f, -1, 3, 0, 0.25f, 1, 2, -2, 1, 1.5f,
                                               0, 0, 1, 2, -1, 0.5f, 2, 2, 1, 0, 3, -0.5f};
    const int64_t s[2] = {SCOPE_FLOATS, 4}, one[1] = {1};
    const int32_t zero = 0, step1 = 1;
    wt_tensor *logits = NULL, *step = NULL, *ids = NULL, *f = NULL;
    wt_graph *g = NULL;
    wt_status st = wt_tensor_from_data(ctx, WT_F32, 2, s, lg, &logits);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_I32, 1, one, &zero, &step);
    if (st == WT_OK && (st = wt_graph_begin(ctx)) == WT_OK) {
        wt_sample_options o;
        wt_sample_options_init(&o);
        o.top_k = 3, o.top_p = 0.9, o.seed = 11, o.counter = step;
        st = wt_sample(logits, &o, &ids);
        wt_status end = wt_graph_end(ctx, &g);
        if (st == WT_OK) st = end;
    }
    if (st == WT_OK) st = wt_tensor_write(step, &step1, sizeof step1);
    if (st == WT_OK) st = wt_graph_replay(g);
    if (st == WT_OK) st = wt_cast(ids, WT_F32, &f);
    if (st == WT_OK) st = wt_tensor_read(f, result, sizeof(float) * SCOPE_FLOATS);
    wt_graph_release(g);
    wt_tensor *all[] = {logits, step, ids, f};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wt_tensor_release(all[i]);
    return st;
}

/* The tape: a recorded forward pass (mul, tanh, softmax, a weighted sum),
 * backward, and the leaf's gradient read. */
static wt_status tape_workload(wt_context *ctx, float *result)
{
    static const float dw[SCOPE_FLOATS] = {0.5f, -1, 2, 3, -0.25f, 1};
    static const float dx[SCOPE_FLOATS] = {1, 0.5f, -0.75f, 0.25f, 2, -1};
    const int64_t s23[2] = {2, 3};
    wt_tensor *w = NULL, *x = NULL, *p = NULL, *t = NULL, *sm = NULL, *q = NULL, *l = NULL, *g = NULL;
    wt_status st = wt_tensor_from_data(ctx, WT_F32, 2, s23, dw, &w);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_F32, 2, s23, dx, &x);
    if (st == WT_OK) st = wt_tensor_set_requires_grad(w, true);
    if (st == WT_OK) st = wt_mul(w, x, &p);
    if (st == WT_OK) st = wt_tanh(p, &t);
    if (st == WT_OK) st = wt_softmax(t, -1, &sm);
    if (st == WT_OK) st = wt_mul(sm, x, &q);
    if (st == WT_OK) st = wt_sum(q, 0, NULL, false, &l);
    if (st == WT_OK) st = wt_backward(l);
    if (st == WT_OK) st = wt_tensor_grad(w, &g);
    if (st == WT_OK) st = wt_tensor_read(g, result, sizeof(float) * SCOPE_FLOATS);
    wt_tensor *all[] = {w, x, p, t, sm, q, l, g};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wt_tensor_release(all[i]);
    return st;
}

/* Attention recorded for autograd (no mask, causal: the forward keeps its
 * rows' log-sum-exp for the fused backward) over seq positions (3 or 4:
 * on WebGPU 4 keys take dq as the product ds @ K, with its scratch),
 * backward, q's gradient read; in_scope: all of it inside a scope, and a
 * failed attention call must leave no more tensors alive than before it
 * (nothing waits for the scope's end). */
static wt_status attention_grad_run(wt_context *ctx, float *result, bool in_scope, int seq)
{
    float dq[16], dk[16], dv[16], g12[16];
    for (int i = 0; i < 16; i++) {
        dq[i] = 0.25f * (float)(i % 5) - 0.5f;
        dk[i] = 0.125f * (float)(i % 7) - 0.25f;
        dv[i] = 0.5f * (float)(i % 3) - 0.75f;
    }
    const int64_t s4[4] = {1, 1, seq, 4};
    wt_scope *scope = NULL;
    wt_tensor *q = NULL, *k = NULL, *v = NULL, *a = NULL, *l = NULL, *g = NULL;
    wt_status st = in_scope ? wt_scope_begin(ctx, &scope) : WT_OK;
    if (st != WT_OK) return st;
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_F32, 4, s4, dq, &q);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_F32, 4, s4, dk, &k);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_F32, 4, s4, dv, &v);
    for (int i = 0; i < 3 && st == WT_OK; i++) st = wt_tensor_set_requires_grad((wt_tensor *[]){q, k, v}[i], true);
    if (st == WT_OK) {
        wt_memory_stats before, after;
        wt_attention_options o;
        wt_attention_options_init(&o);
        o.causal = true;
        st = wt_context_memory_stats(ctx, &before);
        if (st == WT_OK && (st = wt_scaled_dot_product_attention_v2(q, k, v, NULL, &o, &a)) != WT_OK) {
            const wt_status failed = st;
            if (wt_context_memory_stats(ctx, &after) == WT_OK)
                CHECK(after.live_tensors == before.live_tensors,
                      "attention recorded, failing [%s%s]: %llu storages alive after it, %llu before", g_mode,
                      in_scope ? ", in a scope" : "", (unsigned long long)after.live_tensors,
                      (unsigned long long)before.live_tensors);
            st = failed;
        }
    }
    if (st == WT_OK) st = wt_sum(a, 0, NULL, false, &l);
    if (st == WT_OK) st = wt_backward(l);
    if (st == WT_OK) st = wt_tensor_grad(q, &g);
    if (st == WT_OK) st = wt_tensor_read(g, g12, sizeof(float) * 4 * (size_t)seq);
    if (st == WT_OK) memcpy(result, g12, sizeof(float) * SCOPE_FLOATS);
    if (in_scope) {
        wt_scope_end(scope);
        return st;
    }
    wt_tensor *all[] = {q, k, v, a, l, g};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wt_tensor_release(all[i]);
    return st;
}

static wt_status attention_grad_workload(wt_context *ctx, float *result)
{
    return attention_grad_run(ctx, result, false, 3);
}

static wt_status attention_grad_product_workload(wt_context *ctx, float *result)
{
    return attention_grad_run(ctx, result, false, 4);
}

static wt_status attention_grad_scoped_workload(wt_context *ctx, float *result)
{
    return attention_grad_run(ctx, result, true, 3);
}

/* The norms' one-pass backward (the NORM_BACKWARD node, its parameter
 * gradients column sums): x, weight and bias leaves, a weighted sum of the
 * layer-normalised and RMS-normalised rows, backward, x's gradient read;
 * then the public wt_layer_norm_backward on the same rows. */
static wt_status norm_backward_workload(wt_context *ctx, float *result)
{
    static const float dx[SCOPE_FLOATS] = {0.5f, -1, 2, 3, -0.25f, 1};
    static const float ds[SCOPE_FLOATS] = {1, 0.5f, -0.75f, 0.25f, 2, -1};
    static const float dw[3] = {1.5f, -0.5f, 2}, db[3] = {0.25f, 0, -1};
    const int64_t s23[2] = {2, 3}, s3[1] = {3};
    wt_tensor *x = NULL, *s = NULL, *w = NULL, *b = NULL, *y = NULL, *q = NULL, *l = NULL, *g = NULL;
    wt_tensor *ry = NULL, *sy = NULL, *pdx = NULL, *pdw = NULL, *pdb = NULL;
    wt_status st = wt_tensor_from_data(ctx, WT_F32, 2, s23, dx, &x);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_F32, 2, s23, ds, &s);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_F32, 1, s3, dw, &w);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_F32, 1, s3, db, &b);
    if (st == WT_OK) st = wt_tensor_set_requires_grad(x, true);
    if (st == WT_OK) st = wt_tensor_set_requires_grad(w, true);
    if (st == WT_OK) st = wt_tensor_set_requires_grad(b, true);
    if (st == WT_OK) st = wt_layer_norm(x, 1, w, b, 1e-5f, &y);
    if (st == WT_OK) st = wt_rms_norm(x, 1, w, 1e-5f, &ry);
    if (st == WT_OK) st = wt_add(y, ry, &sy);
    if (st == WT_OK) st = wt_mul(sy, s, &q);
    if (st == WT_OK) st = wt_sum(q, 0, NULL, false, &l);
    if (st == WT_OK) st = wt_backward(l);
    if (st == WT_OK) st = wt_tensor_grad(x, &g);
    if (st == WT_OK) st = wt_tensor_read(g, result, sizeof(float) * SCOPE_FLOATS);
    if (st == WT_OK) st = wt_layer_norm_backward(s, x, 1, w, 1e-5, &pdx, &pdw, &pdb);
    float public_dx[SCOPE_FLOATS];
    if (st == WT_OK) st = wt_tensor_read(pdx, public_dx, sizeof public_dx);
    for (int i = 0; st == WT_OK && i < SCOPE_FLOATS; i++) result[i] += public_dx[i];
    wt_tensor *all[] = {x, s, w, b, y, q, l, g, ry, sy, pdx, pdw, pdb};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wt_tensor_release(all[i]);
    return st;
}

/* wt_linear_fused as one recorded op over three rows (on the GPU the
 * residual in the product's stores, GELU's backward in those of dy @ w):
 * x (the pre-activation), w, bias and residual leaves, a weighted sum of
 * gelu(x) @ w^T + bias + residual, backward, x's gradient read. */
static wt_status linear_rows_workload(wt_context *ctx, float *result)
{
    static const float dx[SCOPE_FLOATS] = {0.5f, -1, 2, 3, -0.25f, 1};
    static const float ds[SCOPE_FLOATS] = {1, 0.5f, -0.75f, 0.25f, 2, -1};
    static const float dw[4] = {1.5f, -0.5f, 2, 0.25f}, db[2] = {0.25f, -1};
    const int64_t s32[2] = {3, 2}, s22[2] = {2, 2}, s2[1] = {2};
    wt_tensor *x = NULL, *s = NULL, *w = NULL, *b = NULL, *r = NULL, *y = NULL, *q = NULL, *l = NULL, *g = NULL;
    wt_status st = wt_tensor_from_data(ctx, WT_F32, 2, s32, dx, &x);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_F32, 2, s32, ds, &s);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_F32, 2, s22, dw, &w);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_F32, 1, s2, db, &b);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_F32, 2, s32, ds, &r);
    for (int i = 0; i < 4 && st == WT_OK; i++) st = wt_tensor_set_requires_grad((wt_tensor *[]){x, w, b, r}[i], true);
    wt_linear_fused_options o;
    wt_linear_fused_options_init(&o);
    o.input_gelu = true;
    o.residual = r;
    if (st == WT_OK) st = wt_linear_fused(x, w, b, &o, &y);
    if (st == WT_OK) st = wt_mul(y, s, &q);
    if (st == WT_OK) st = wt_sum(q, 0, NULL, false, &l);
    if (st == WT_OK) st = wt_backward(l);
    if (st == WT_OK) st = wt_tensor_grad(x, &g);
    if (st == WT_OK) st = wt_tensor_read(g, result, sizeof(float) * SCOPE_FLOATS);
    wt_tensor *all[] = {x, s, w, b, r, y, q, l, g};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wt_tensor_release(all[i]);
    return st;
}

/* An optimizer's life: made over three leaves (AdamW; one of more
 * elements than a workgroup of the batched clipping norms sums, so that
 * they take their second pass), gradients from a backward of a scaled
 * loss, unscaled, clipped, one step through the scaler, zero_grad,
 * released; the weights read. */
enum { OPT_BIG = 5000 };
static wt_status optimizer_workload(wt_context *ctx, float *result)
{
    static const float dw[SCOPE_FLOATS] = {0.5f, -1, 2, 3, -0.25f, 1};
    const int64_t s23[2] = {2, 3}, s3 = 3, sbig = OPT_BIG;
    wt_tensor *w = NULL, *b = NULL, *y = NULL, *l = NULL, *norm = NULL, *scaled = NULL;
    wt_tensor *big = NULL, *lb = NULL, *lt = NULL;
    wt_optimizer *opt = NULL;
    wt_grad_scaler *sc = NULL;
    wt_status st = wt_tensor_from_data(ctx, WT_F32, 2, s23, dw, &w);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_F32, 1, &s3, dw, &b);
    if (st == WT_OK) st = wt_tensor_full(ctx, WT_F32, 1, &sbig, 0.01, &big);
    if (st == WT_OK) st = wt_tensor_set_requires_grad(w, true);
    if (st == WT_OK) st = wt_tensor_set_requires_grad(b, true);
    if (st == WT_OK) st = wt_tensor_set_requires_grad(big, true);
    if (st == WT_OK) st = wt_optimizer_create_adamw(1, &w, NULL, &opt);
    if (st == WT_OK) st = wt_optimizer_add_params(opt, 1, &b, 0.0);
    if (st == WT_OK) st = wt_optimizer_add_params(opt, 1, &big, 0.0);
    if (st == WT_OK) st = wt_mul(w, b, &y);
    if (st == WT_OK) st = wt_sum(y, 0, NULL, false, &lt);
    if (st == WT_OK) st = wt_sum(big, 0, NULL, false, &lb);
    if (st == WT_OK) st = wt_add(lt, lb, &l);
    if (st == WT_OK) st = wt_grad_scaler_create(ctx, NULL, &sc);
    if (st == WT_OK) st = wt_grad_scaler_scale(sc, l, &scaled);
    if (st == WT_OK) st = wt_backward(scaled);
    if (st == WT_OK) st = wt_grad_scaler_unscale(sc, opt);
    if (st == WT_OK) st = wt_optimizer_clip_grad_norm(opt, 1.0, &norm);
    if (st == WT_OK) st = wt_grad_scaler_step(sc, opt);
    if (st == WT_OK) st = wt_optimizer_zero_grad(opt);
    if (st == WT_OK) st = wt_tensor_read(w, result, sizeof(float) * SCOPE_FLOATS);
    wt_optimizer_release(opt);
    wt_grad_scaler_release(sc);
    wt_tensor *all[] = {w, b, y, l, norm, scaled, big, lb, lt};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wt_tensor_release(all[i]);
    return st;
}

/* An AdamW step clipped inside its update kernels
 * (wt_optimizer_step_clipped) over the leaves of optimizer_workload, the
 * norm kept; the weights read. */
static wt_status clipped_step_workload(wt_context *ctx, float *result)
{
    static const float dw[SCOPE_FLOATS] = {0.5f, -1, 2, 3, -0.25f, 1};
    const int64_t s23[2] = {2, 3}, sbig = OPT_BIG;
    wt_tensor *w = NULL, *big = NULL, *y = NULL, *l = NULL, *lb = NULL, *lt = NULL, *norm = NULL;
    wt_optimizer *opt = NULL;
    wt_status st = wt_tensor_from_data(ctx, WT_F32, 2, s23, dw, &w);
    if (st == WT_OK) st = wt_tensor_full(ctx, WT_F32, 1, &sbig, 0.01, &big);
    if (st == WT_OK) st = wt_tensor_set_requires_grad(w, true);
    if (st == WT_OK) st = wt_tensor_set_requires_grad(big, true);
    wt_tensor *ps[2] = {w, big};
    if (st == WT_OK) st = wt_optimizer_create_adamw(2, ps, NULL, &opt);
    if (st == WT_OK) st = wt_mul(w, w, &y);
    if (st == WT_OK) st = wt_sum(y, 0, NULL, false, &lt);
    if (st == WT_OK) st = wt_sum(big, 0, NULL, false, &lb);
    if (st == WT_OK) st = wt_add(lt, lb, &l);
    if (st == WT_OK) st = wt_backward(l);
    if (st == WT_OK) st = wt_optimizer_step_clipped(opt, 0.5, &norm);
    if (st == WT_OK) st = wt_tensor_read(w, result, sizeof(float) * SCOPE_FLOATS);
    wt_optimizer_release(opt);
    wt_tensor *all[] = {w, big, y, l, lb, lt, norm};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wt_tensor_release(all[i]);
    return st;
}

/* Every host allocation of a workload fails once: out of memory or
 * recovered, and afterwards no tensor alive, no host block leaked. */
static void alloc_phase(test_backend be, const char *what, wt_status (*run_workload)(wt_context *, float *))
{
    wt_context *ctx = make_context(be);
    if (!CHECK(ctx != NULL, "context [%s]: %s", g_mode, wt_last_error())) return;
    float ref[SCOPE_FLOATS], got[SCOPE_FLOATS];
    if (!CHECK(run_workload(ctx, ref) == WT_OK, "%s workload [%s]: %s", what, g_mode, wt_last_error())) {
        wt_context_destroy(ctx);
        return;
    }
    long points = 0, total = 0;
    for (long n = 1;; n++) {
        wt_context_trim(ctx);
        long live_before = host_live();
        host_arm(n);
        wt_status st = run_workload(ctx, got);
        long injected = host_injected();
        host_arm(0);
        if (injected == 0) {
            total = n - 1;
            break;
        }
        points++;
        if (st == WT_OK)
            CHECK(memcmp(got, ref, sizeof ref) == 0, "%s, allocation %ld failing [%s]: other numbers", what, n, g_mode);
        else
            CHECK(st == WT_ERR_OUT_OF_MEMORY && wt_last_error()[0], "%s, allocation %ld failing [%s]: %s (%s)", what, n,
                  g_mode, wt_status_string(st), wt_last_error());
        wt_memory_stats ms;
        CHECK(wt_context_memory_stats(ctx, &ms) == WT_OK && ms.live_tensors == 0,
              "%s, allocation %ld failing [%s]: %llu storages alive", what, n, g_mode,
              (unsigned long long)ms.live_tensors);
        wt_context_trim(ctx);
        CHECK(host_live() <= live_before, "%s, allocation %ld failing [%s]: %ld host blocks leaked", what, n, g_mode,
              host_live() - live_before);
    }
    CHECK(run_workload(ctx, got) == WT_OK && memcmp(got, ref, sizeof ref) == 0, "%s after the faults [%s]",
          what, g_mode);
    wt_context_destroy(ctx);
    printf("host allocations of the %s workload [%s]: %ld, each failed once: %ld failures\n", what, g_mode, total,
           points);
}

/* The device's index checks across a sync that fails for host memory:
 * an out-of-range index_select raises its check on the GPU, each host
 * allocation of the sync that would report it fails once, and then a
 * valid gather (another extent) and a sync must not be blamed for the earlier index (a
 * check slot left raised and handed out again). */
static void index_check_phase(test_backend be)
{
    wt_context *ctx = make_context(be);
    if (!CHECK(ctx != NULL, "context [%s]: %s", g_mode, wt_last_error())) return;
    static const float dx[5] = {1, 2, 3, 4, 5};
    static const int32_t bad_i[1] = {7}, good_i[1] = {1};
    const int64_t s4[1] = {4}, s5[1] = {5}, s1[1] = {1};
    wt_tensor *x = NULL, *y = NULL, *bad = NULL, *good = NULL;
    wt_status st = wt_tensor_from_data(ctx, WT_F32, 1, s4, dx, &x);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_F32, 1, s5, dx, &y);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_I32, 1, s1, bad_i, &bad);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_I32, 1, s1, good_i, &good);
    long points = 0;
    for (long n = 1; st == WT_OK && n < 1000; n++) {
        wt_tensor *t = NULL;
        if (!CHECK(wt_index_select(x, 0, bad, &t) == WT_OK, "index_select [%s]: %s", g_mode, wt_last_error())) break;
        wt_tensor_release(t);
        host_arm(n);
        wt_status sst = wt_context_sync(ctx);
        long injected = host_injected();
        host_arm(0);
        if (injected == 0) {
            CHECK(sst == WT_ERR_INVALID_ARGUMENT, "sync after an out-of-range index [%s]: %s", g_mode,
                  wt_status_string(sst));
            break;
        }
        points++;
        t = NULL;
        if (!CHECK(wt_gather(y, 0, good, &t) == WT_OK, "gather [%s]: %s", g_mode, wt_last_error())) break;
        wt_tensor_release(t);
        /* The earlier index may still be reported (its check not read yet:
         * extent 4), never against the valid gather (extent 5). */
        wt_status gst = wt_context_sync(ctx);
        CHECK(gst == WT_OK || strstr(wt_last_error(), "extent 5") == NULL,
              "sync %ld failing, then a valid gather [%s]: %s", n, g_mode, wt_last_error());
        wt_context_sync(ctx);
    }
    CHECK(st == WT_OK, "index check tensors [%s]: %s", g_mode, wt_last_error());
    wt_tensor_release(x);
    wt_tensor_release(y);
    wt_tensor_release(bad);
    wt_tensor_release(good);
    wt_context_destroy(ctx);
    printf("host allocations of a sync reporting an index check [%s]: %ld failures\n", g_mode, points);
}

/* CPU tensor memory refused at every size class (with a full pool, which
 * the allocator gives back before it gives up): WT_ERR_OUT_OF_MEMORY, the
 * bytes in the message, nothing alive after. */
static void cpu_size_classes(void)
{
    wt_context *ctx = make_context(TEST_BACKEND_CPU);
    if (!CHECK(ctx != NULL, "cpu context: %s", wt_last_error())) return;
    int classes = 0;
    for (int64_t n = 1; n <= ((int64_t)1 << 28); n *= 8, classes++) {
        /* 192 bytes: a pooled block of no size class below, which the
         * pool must give back (not hand out) before it gives up. */
        const int64_t keep_shape[1] = {48};
        wt_tensor *keep = NULL, *t = (wt_tensor *)(uintptr_t)0x10;
        wt_tensor_zeros(ctx, WT_F32, 1, keep_shape, &keep);
        wt_tensor_release(keep); /* now pooled */
        host_fail_all_aligned(true);
        const int64_t shape[1] = {n};
        wt_status st = wt_tensor_zeros(ctx, WT_F32, 1, shape, &t);
        long injected = host_fail_all_aligned(false);
        char bytes[32];
        snprintf(bytes, sizeof bytes, "%lld", (long long)(n * 4));
        CHECK(st == WT_ERR_OUT_OF_MEMORY && t == NULL && strstr(wt_last_error(), bytes) != NULL &&
                  injected >= 1,
              "cpu tensor of %s bytes with aligned_alloc failing: %s (%s)", bytes, wt_status_string(st),
              wt_last_error());
        wt_memory_stats ms;
        CHECK(wt_context_memory_stats(ctx, &ms) == WT_OK && ms.live_tensors == 0,
              "cpu tensor of %s bytes refused: storages still alive", bytes);
        if (st == WT_OK) wt_tensor_release(t);
    }
    wt_context_destroy(ctx);
    printf("cpu tensor memory refused at %d size classes (4 B to 1 GiB): WT_ERR_OUT_OF_MEMORY\n", classes);
}

/* Device objects. Pipelines (and their shader modules) are cached for the
 * context's life, so each of their points gets a fresh context; buffers
 * and the bind groups that name them are made again after a trim, so one
 * warm context serves. */
static void device_phase(test_backend be, const float *ref)
{
    for (int k = 0; k < DEV_KINDS; k++) {
        long points = 0, total = -1;
        bool fresh = k == DEV_SHADER_MODULE || k == DEV_PIPELINE;
        wt_context *ctx = NULL;
        for (long n = 1;; n++) {
            if (!ctx) {
                ctx = make_context(be);
                if (!CHECK(ctx != NULL, "context [%s]: %s", g_mode, wt_last_error())) return;
                if (!CHECK(patch_device(ctx), "[%s] Dawn exports no wgpuDeviceInjectError/ForceLoss",
                           g_mode)) {
                    wt_context_destroy(ctx);
                    return;
                }
                float warm[OUT_FLOATS];
                bool warm_null;
                if (!fresh)
                    CHECK(workload(ctx, warm, &warm_null) == WT_OK, "warm-up [%s]", g_mode);
            }
            wt_context_trim(ctx);
            g_dev_kind = (dev_kind)k;
            g_dev_count = g_dev_injected = 0;
            g_dev_fail_at = n;
            float got[OUT_FLOATS];
            bool null_ok = true;
            wt_status st = workload(ctx, got, &null_ok);
            g_dev_fail_at = 0;
            char what[96];
            snprintf(what, sizeof what, "workload, %s %ld failing", dev_kind_name[k], n);
            if (g_dev_injected == 0) {
                CHECK(st == WT_OK && same_result(got, ref), "%s [%s]: %s", what, g_mode, wt_last_error());
                total = n - 1;
                wt_context_destroy(ctx);
                break;
            }
            points++;
            CHECK(st == dev_kind_code[k], "%s [%s]: %s, expected %s (%s)", what, g_mode,
                  wt_status_string(st), wt_status_string(dev_kind_code[k]), wt_last_error());
            CHECK(null_ok, "%s [%s]: *out not NULL on failure", what, g_mode);
            check_recovered(ctx, host_live(), ref, what);
            if (fresh) {
                wt_context_destroy(ctx);
                ctx = NULL;
            }
        }
        printf("device %ss made by the workload [%s]: %ld, each failed once: %ld failures\n",
               dev_kind_name[k], g_mode, total, points);
    }
}

/* Device loss after `after` ops of a batch: the call that sees it and every
 * later one fail with WT_ERR_DEVICE_LOST; teardown is clean; a new context
 * works. */
static void loss_phase(test_backend be, const float *ref)
{
    wt_context *ctx = make_context(be);
    if (!CHECK(ctx != NULL && patch_device(ctx), "context [%s]: %s", g_mode, wt_last_error())) {
        wt_context_destroy(ctx);
        return;
    }
    const int64_t shape[1] = {1000};
    wt_tensor *x = NULL, *y = NULL, *z = NULL;
    CHECK(wt_tensor_full(ctx, WT_F32, 1, shape, 2.0, &x) == WT_OK, "full [%s]", g_mode);
    CHECK(wt_exp(x, &y) == WT_OK, "exp before the loss [%s]", g_mode); /* recorded, not submitted */
    static const char msg[] = "forced by fault_injection";
    g_force_loss(wg_ctx(ctx)->device, WGPUDeviceLostReason_Unknown, (WGPUStringView){msg, sizeof msg - 1});
    /* Recording may still succeed; reading must not. */
    wt_status st = wt_add(x, y, &z);
    CHECK(st == WT_OK || st == WT_ERR_DEVICE_LOST, "add after the loss [%s]: %s", g_mode,
          wt_status_string(st));
    float buf[1000];
    st = wt_tensor_read(z ? z : y, buf, sizeof buf);
    CHECK(st == WT_ERR_DEVICE_LOST, "read after the loss [%s]: %s, expected WT_ERR_DEVICE_LOST (%s)",
          g_mode, wt_status_string(st), wt_last_error());
    CHECK(wt_context_sync(ctx) == WT_ERR_DEVICE_LOST, "sync after the loss [%s]", g_mode);
    wt_tensor *w2 = (wt_tensor *)(uintptr_t)0x10;
    st = wt_mul(x, x, &w2);
    CHECK(st == WT_ERR_DEVICE_LOST && w2 == NULL, "mul after the loss [%s]: %s", g_mode,
          wt_status_string(st));
    if (st == WT_OK) wt_tensor_release(w2);
    wt_tensor_release(z);
    wt_tensor_release(y);
    wt_tensor_release(x);
    wt_context_destroy(ctx);
    printf("device lost in the middle of a batch [%s]: later calls fail with WT_ERR_DEVICE_LOST\n", g_mode);

    ctx = make_context(be);
    float got[OUT_FLOATS];
    bool null_ok;
    CHECK(ctx && workload(ctx, got, &null_ok) == WT_OK && same_result(got, ref),
          "a new context after a device loss [%s]: %s", g_mode, wt_last_error());
    wt_context_destroy(ctx);
}

/* ------------------------------------------------------------- tokenizers */

/* Loads a tokenizer from JSON text, encodes, decodes and streams a text;
 * the ids and the decoded bytes come out in ids / text. */
static wt_status tokenizer_workload(const char *json, int32_t *ids, size_t *n_ids, char *text, size_t *len,
                                    bool *out_was_null)
{
    static const char sample[] = "the thing's 12345 \xF0\x9F\xA6\x99 <tool>the  there\xC3";
    wt_tokenizer *t = (wt_tokenizer *)(uintptr_t)0x10;
    wt_status st = wt_tokenizer_from_json_memory(json, strlen(json), &t);
    if (st != WT_OK) {
        *out_was_null = t == NULL;
        return st;
    }
    st = wt_tokenizer_encode(t, sample, sizeof sample - 1, WT_TOKENIZE_SPECIAL, ids, 128, n_ids);
    if (st == WT_OK) st = wt_tokenizer_decode(t, ids, *n_ids, 0, text, 256, len);
    wt_detokenizer *d = (wt_detokenizer *)(uintptr_t)0x10;
    if (st == WT_OK) {
        st = wt_detokenizer_create(t, 0, &d);
        if (st != WT_OK) *out_was_null = d == NULL;
    }
    if (st == WT_OK) {
        const char *piece;
        size_t k;
        for (size_t i = 0; i < *n_ids && st == WT_OK; i++) st = wt_detokenizer_push(d, ids[i], &piece, &k);
        if (st == WT_OK) st = wt_detokenizer_flush(d, &piece, &k);
        wt_detokenizer_destroy(d);
    }
    wt_tokenizer_destroy(t);
    return st;
}

/* Every allocation of loading, encoding and decoding fails once, for a
 * byte-level and a SentencePiece vocabulary: out of memory, NULL
 * out-pointers, nothing leaked; the ids of a run that recovers are the
 * fault-free run's. */
static void tokenizer_phase(void)
{
    char *jsons[2] = {vocab_bpe_json(1, 1), vocab_spm_json()};
    for (int v = 0; v < 2; v++) {
        int32_t ref[128], got[128];
        char ref_text[256], got_text[256];
        size_t ref_n = 0, ref_len = 0;
        bool null_ok = true;
        if (!CHECK(tokenizer_workload(jsons[v], ref, &ref_n, ref_text, &ref_len, &null_ok) == WT_OK,
                   "tokenizer %d without faults: %s", v, wt_last_error()))
            continue;
        long points = 0, total = 0;
        for (long n = 1;; n++) {
            const long live_before = host_live();
            size_t n_ids = 0, len = 0;
            null_ok = true;
            host_arm(n);
            const wt_status st = tokenizer_workload(jsons[v], got, &n_ids, got_text, &len, &null_ok);
            const long injected = host_injected();
            host_arm(0);
            if (injected == 0) {
                CHECK(st == WT_OK && n_ids == ref_n && !memcmp(got, ref, n_ids * sizeof *got), "tokenizer %d: %s", v,
                      wt_last_error());
                total = n - 1;
                break;
            }
            points++;
            if (st == WT_OK) {
                CHECK(n_ids == ref_n && !memcmp(got, ref, n_ids * sizeof *got) && len == ref_len &&
                          !memcmp(got_text, ref_text, len),
                      "tokenizer %d, allocation %ld failing: recovered with other ids", v, n);
            } else {
                CHECK(st == WT_ERR_OUT_OF_MEMORY && wt_last_error()[0], "tokenizer %d, allocation %ld failing: %s (%s)",
                      v, n, wt_status_string(st), wt_last_error());
                CHECK(null_ok, "tokenizer %d, allocation %ld failing: *out not NULL", v, n);
            }
            CHECK(host_live() <= live_before, "tokenizer %d, allocation %ld failing: %ld host blocks leaked", v, n,
                  host_live() - live_before);
        }
        printf("host allocations of the tokenizer workload %d: %ld, each failed once: %ld failures\n", v, total, points);
    }
    free(jsons[0]);
    free(jsons[1]);
}

/* ------------------------------------------------------------ safetensors */

/* Opens a safetensors file held in memory and reads back what its header
 * says: every name, dtype and shape, and a metadata value, as one line. */
static wt_status safetensors_workload(const unsigned char *file, size_t size, char *said, size_t cap,
                                      bool *out_was_null)
{
    wt_safetensors *f = (wt_safetensors *)(uintptr_t)0x10;
    wt_status st = wt_safetensors_open_memory(file, size, &f);
    if (st != WT_OK) {
        *out_was_null = f == NULL;
        return st;
    }
    const char *format = wt_safetensors_metadata(f, "format");
    size_t used = (size_t)snprintf(said, cap, "%s", format ? format : "-");
    for (int i = 0; i < wt_safetensors_count(f) && st == WT_OK && used < cap; i++) {
        wt_safetensors_entry e;
        st = wt_safetensors_entry_at(f, i, &e);
        if (st == WT_OK)
            used += (size_t)snprintf(said + used, cap - used, " %s:%s:%d:%lld", e.name, e.dtype, e.ndim,
                                     (long long)(e.ndim ? e.shape[0] : 0));
    }
    wt_safetensors_close(f);
    return st;
}

/* Every allocation of opening a safetensors file fails once: out of
 * memory, a NULL handle, nothing leaked, and a run that recovers reads
 * what the fault-free run read. */
static void safetensors_phase(void)
{
    static const char header[] =
        "{\"__metadata__\":{\"format\":\"pt\",\"note\":\"caf\\u00e9\"},"
        "\"w\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
        "\"b\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[16,24],\"x\":[1,{\"y\":null}]}}";
    unsigned char file[512] = {0};
    const uint64_t n = sizeof header - 1;
    for (int i = 0; i < 8; i++) file[i] = (unsigned char)(n >> (8 * i));
    memcpy(file + 8, header, n);
    const size_t size = 8 + n + 24;
    char ref[256], got[256];
    bool null_ok = true;
    if (!CHECK(safetensors_workload(file, size, ref, sizeof ref, &null_ok) == WT_OK,
               "safetensors without faults: %s", wt_last_error()))
        return;
    long points = 0, total = 0;
    for (long k = 1;; k++) {
        const long live_before = host_live();
        null_ok = true;
        got[0] = 0;
        host_arm(k);
        const wt_status st = safetensors_workload(file, size, got, sizeof got, &null_ok);
        const long injected = host_injected();
        host_arm(0);
        if (injected == 0) {
            CHECK(st == WT_OK && strcmp(got, ref) == 0, "safetensors: %s", wt_last_error());
            total = k - 1;
            break;
        }
        points++;
        if (st == WT_OK) {
            CHECK(strcmp(got, ref) == 0, "safetensors, allocation %ld failing: recovered reading \"%s\"", k, got);
        } else {
            CHECK(st == WT_ERR_OUT_OF_MEMORY && wt_last_error()[0], "safetensors, allocation %ld failing: %s (%s)", k,
                  wt_status_string(st), wt_last_error());
            CHECK(null_ok, "safetensors, allocation %ld failing: *out not NULL", k);
        }
        CHECK(host_live() <= live_before, "safetensors, allocation %ld failing: %ld host blocks leaked", k,
              host_live() - live_before);
    }
    CHECK(points > 0, "safetensors: no allocation was failed");
    printf("host allocations of opening a safetensors file: %ld, each failed once: %ld failures (read: %s)\n", total,
           points, ref);
}

int main(int argc, char **argv)
{
    test_backend be = argc > 1 ? test_parse_backend(argv[1]) : TEST_BACKEND_INVALID;
    if (be == TEST_BACKEND_INVALID || be == TEST_BACKEND_WEBGPU_ANY) {
        fprintf(stderr, "usage: %s cpu|vulkan|gles\n", argv[0]);
        return 2;
    }
    g_mode = argv[1];
    /* The reference numbers: the workload without faults. */
    wt_context *ctx = NULL;
    if (test_create_context(be, &ctx) != WT_OK) return test_summary("fault_injection");
    float ref[OUT_FLOATS];
    bool null_ok;
    wt_status st = workload(ctx, ref, &null_ok);
    wt_context_destroy(ctx);
    if (!CHECK(st == WT_OK, "workload without faults [%s]: %s", g_mode, wt_last_error()))
        return test_summary("fault_injection");

    host_phase(be, ref);
    alloc_phase(be, "scoped", scoped_workload);
    alloc_phase(be, "autograd", tape_workload);
    alloc_phase(be, "attention autograd", attention_grad_workload);
    alloc_phase(be, "attention autograd, scoped", attention_grad_scoped_workload);
    alloc_phase(be, "attention autograd, 4 keys", attention_grad_product_workload);
    alloc_phase(be, "norm backward", norm_backward_workload);
    alloc_phase(be, "linear_fused rows, autograd", linear_rows_workload);
    alloc_phase(be, "optimizer", optimizer_workload);
    alloc_phase(be, "optimizer, clipped in the step", clipped_step_workload);
    alloc_phase(be, "graph", graph_workload);
    alloc_phase(be, "graph with step values", step_values_workload);
    alloc_phase(be, "sampling, captured", sample_workload);
    if (be == TEST_BACKEND_CPU) {
        cpu_size_classes();
        tokenizer_phase();
        safetensors_phase();
    }
    if (be != TEST_BACKEND_CPU) {
        device_phase(be, ref);
        index_check_phase(be);
        loss_phase(be, ref);
    }
    char prefix[64];
    snprintf(prefix, sizeof prefix, "fault_injection %s", g_mode);
    return test_summary(prefix);
}
