/* soak <cpu|vulkan|gles> [ops] [contexts]: a long random workload, then
 * checks that nothing accumulated.
 *
 * Workload: rounds of 32 ops (every op kind of the header on random shapes
 * of up to 3 axes and 1..40 elements each, f32 and f16, views), each op on
 * fresh inputs made from the same host values on the backend under test
 * and on a CPU reference context; every result is read and compared with
 * the reference's (so the numbers still match after any number of ops).
 *
 * The sequence of op kinds and shapes is one pass of 2,000 ops, repeated
 * with new values. After the first pass (the shader variants compiled,
 * the pools filled) the memory statistics, the resident memory of the
 * process and the number of compiled pipelines are the baseline; at the
 * end (after wt_context_trim) live storages and bytes must be zero, the
 * resident memory within 16 MiB of the baseline, and the pipeline cache
 * as large as after the first pass: the same ops need the same variants,
 * so a later pipeline is one keyed on something it should not be (the
 * values, an address, a counter).
 *
 * Then `contexts` contexts are created, used once and destroyed; resident
 * memory after them is compared with after the first 10.
 *
 * Defaults are a bounded run (20,000 ops, 40 contexts); ctest passes
 * smaller counts for WebGPU, the long run of tests/RELIABILITY.md larger. */
#include "test_util.h"
#include "webgpu/wg_runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *g_mode;

static double rss_mib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
}

static int pipelines(wt_context *ctx)
{
    return wt_context_backend(ctx) == WT_BACKEND_WEBGPU ? wg_ctx(ctx)->cache.npipelines : 0;
}

/* Two generators: the values, and the sequence of op kinds and shapes,
 * which restarts with every pass of the workload. */
static uint64_t g_rng = 0x2545F4914F6CDD1Dull, g_spec_rng;
static uint32_t next_of(uint64_t *s, uint32_t n)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)((*s >> 20) % n);
}
static uint32_t rnd(uint32_t n) { return next_of(&g_rng, n); }
static uint32_t srnd(uint32_t n) { return next_of(&g_spec_rng, n); }

#define MAXN 8192 /* > 12 * 12 * 40 */
static float g_a[MAXN], g_b[MAXN], g_w[64];

typedef struct spec {
    int op, ndim;
    int64_t sa[3], sb[3];
    int axis;
    bool f16;
} spec;

enum { K_UNARY, K_BINARY, K_MATMUL, K_REDUCE, K_SOFTMAX, K_LAYERNORM, K_RMSNORM, K_CAST, K_TRANSPOSE,
       K_SLICE, K_KINDS };

static wt_status make(wt_context *ctx, bool f16, int ndim, const int64_t *shape, const float *v,
                      wt_tensor **out)
{
    wt_tensor *t = NULL;
    wt_status st = wt_tensor_from_data(ctx, WT_F32, ndim, shape, v, &t);
    if (st != WT_OK || !f16) {
        *out = t;
        return st;
    }
    st = wt_cast(t, WT_F16, out);
    wt_tensor_release(t);
    return st;
}

/* One op of spec s on ctx; the result as an f32 tensor. */
static wt_status run(wt_context *ctx, const spec *s, wt_tensor **out)
{
    typedef wt_status (*un)(const wt_tensor *, wt_tensor **);
    typedef wt_status (*bin)(const wt_tensor *, const wt_tensor *, wt_tensor **);
    typedef wt_status (*red)(const wt_tensor *, int, const int *, bool, wt_tensor **);
    static const un unary[] = {wt_neg, wt_exp, wt_sqrt, wt_relu, wt_sigmoid, wt_tanh, wt_copy};
    static const bin binary[] = {wt_add, wt_sub, wt_mul, wt_div};
    static const red reduce[] = {wt_sum, wt_mean, wt_max, wt_min};
    wt_tensor *a = NULL, *b = NULL, *w = NULL, *r = NULL, *v = NULL;
    *out = NULL;
    int64_t c = s->sa[s->ndim - 1];
    wt_status st = make(ctx, s->f16, s->ndim, s->sa, g_a, &a);
    if (st == WT_OK && (s->op == K_BINARY || s->op == K_MATMUL))
        st = make(ctx, s->f16, s->ndim, s->sb, g_b, &b);
    if (st == WT_OK && (s->op == K_LAYERNORM || s->op == K_RMSNORM))
        st = wt_tensor_from_data(ctx, WT_F32, 1, &c, g_w, &w);
    if (st != WT_OK) goto done;
    switch (s->op) {
    case K_UNARY: st = unary[s->axis % 7](a, &r); break;
    case K_BINARY: st = binary[s->axis % 4](a, b, &r); break;
    case K_MATMUL: st = wt_matmul(a, b, &r); break;
    case K_REDUCE: {
        int ax = s->axis % s->ndim;
        st = reduce[s->axis % 4](a, 1, &ax, s->axis & 1, &r);
        break;
    }
    case K_SOFTMAX: st = wt_softmax(a, -1, &r); break;
    case K_LAYERNORM: st = wt_layernorm(a, w, NULL, 1e-5f, &r); break;
    case K_RMSNORM: st = wt_rmsnorm(a, w, 1e-5f, &r); break;
    case K_CAST: st = wt_cast(a, s->f16 ? WT_F32 : WT_F16, &r); break;
    case K_TRANSPOSE:
        st = wt_transpose(a, 0, s->ndim - 1, &v);
        if (st == WT_OK) st = wt_contiguous(v, &r);
        break;
    case K_SLICE:
        st = wt_slice(a, s->ndim - 1, 1, c, 2, &v);
        if (st == WT_OK) st = wt_exp(v, &r);
        break;
    }
    if (st == WT_OK && wt_tensor_dtype(r) == WT_F16) {
        wt_tensor *f = NULL;
        st = wt_cast(r, WT_F32, &f);
        wt_tensor_release(r);
        r = st == WT_OK ? f : NULL;
    }
done:
    wt_tensor_release(a);
    wt_tensor_release(b);
    wt_tensor_release(w);
    wt_tensor_release(v);
    *out = r;
    return st;
}

static void random_spec(spec *s)
{
    memset(s, 0, sizeof *s);
    s->op = (int)srnd(K_KINDS);
    s->ndim = 1 + (int)srnd(3);
    s->f16 = srnd(4) == 0;
    s->axis = (int)srnd(1000);
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++) {
        s->sa[i] = 1 + srnd(i == s->ndim - 1 ? 40 : 12);
        n *= s->sa[i];
    }
    (void)n;
    if (s->op == K_BINARY)
        for (int i = 0; i < s->ndim; i++)
            s->sb[i] = srnd(3) == 0 ? 1 : s->sa[i];
    if (s->op == K_MATMUL) {
        memcpy(s->sb, s->sa, sizeof s->sb);
        s->sb[s->ndim - 1] = 1 + srnd(16);
        if (s->ndim >= 2) s->sb[s->ndim - 2] = s->sa[s->ndim - 1];
        if (s->ndim == 1) s->sb[0] = s->sa[0];
    }
}

static long g_compared;

/* count ops in rounds of 32; false on the first failure. */
static bool workload(wt_context *ctx, wt_context *ref, long count)
{
    enum { ROUND = 32 };
    static float got[MAXN], want[MAXN];
    for (long done = 0; done < count; done += ROUND) {
        spec specs[ROUND];
        wt_tensor *res[ROUND];
        for (int i = 0; i < ROUND; i++) {
            random_spec(&specs[i]);
            for (int k = 0; k < MAXN; k++) {
                g_a[k] = (float)rnd(4001) / 1000.0f - 2.0f + 0.001f;
                g_b[k] = (float)rnd(4001) / 1000.0f + 0.5f; /* divisors away from 0 */
            }
            for (int k = 0; k < 64; k++)
                g_w[k] = 0.5f + (float)rnd(100) / 100.0f;
            /* sqrt of positive values only */
            if (specs[i].op == K_UNARY)
                for (int k = 0; k < MAXN; k++)
                    g_a[k] = fabsf(g_a[k]) + 0.01f;
            wt_status st = run(ctx, &specs[i], &res[i]);
            wt_tensor *r = NULL;
            wt_status sr = run(ref, &specs[i], &r);
            if (!CHECK(st == WT_OK && sr == WT_OK, "soak op %ld [%s]: kind %d: %s / %s (%s)", done + i,
                       g_mode, specs[i].op, wt_status_string(st), wt_status_string(sr), wt_last_error())) {
                for (int j = 0; j <= i; j++)
                    wt_tensor_release(res[j]);
                wt_tensor_release(r);
                return false;
            }
            /* The reference is read now; the backend's result after the round. */
            int64_t n = wt_tensor_numel(r);
            wt_tensor_read(r, want + 0, (size_t)n * sizeof(float));
            wt_tensor_release(r);
            /* keep the reference values beside the handle */
            static float keep[ROUND][MAXN];
            memcpy(keep[i], want, (size_t)n * sizeof(float));
            if (i == ROUND - 1) {
                bool ok = true;
                for (int j = 0; j < ROUND && ok; j++) {
                    int64_t m = wt_tensor_numel(res[j]);
                    if (wt_tensor_read(res[j], got, (size_t)m * sizeof(float)) != WT_OK) {
                        ok = CHECK(false, "soak read [%s]: %s", g_mode, wt_last_error());
                        break;
                    }
                    bool f16 = specs[j].f16 || specs[j].op == K_CAST;
                    double tol = f16 ? 2e-3 : 2e-4;
                    for (int64_t k = 0; k < m; k++) {
                        double d = fabs((double)got[k] - keep[j][k]);
                        if (d > tol * (1 + fabs((double)keep[j][k])) * (specs[j].op == K_MATMUL ? 8 : 1)) {
                            ok = CHECK(false, "soak op %ld [%s]: kind %d element %lld: %g, cpu %g", done + j,
                                       g_mode, specs[j].op, (long long)k, (double)got[k],
                                       (double)keep[j][k]);
                            break;
                        }
                    }
                    g_compared++;
                }
                for (int j = 0; j < ROUND; j++)
                    wt_tensor_release(res[j]);
                if (!ok) return false;
            }
        }
    }
    return true;
}

static wt_context *make_context(test_backend be)
{
    wt_context_options o;
    test_backend_options(be, &o);
    wt_context *c = NULL;
    return wt_context_create(&o, &c) == WT_OK ? c : NULL;
}

int main(int argc, char **argv)
{
    test_backend be = argc > 1 ? test_parse_backend(argv[1]) : TEST_BACKEND_INVALID;
    if (be == TEST_BACKEND_INVALID || be == TEST_BACKEND_WEBGPU_ANY) {
        fprintf(stderr, "usage: %s cpu|vulkan|gles [ops] [contexts] [fresh]\n", argv[0]);
        return 2;
    }
    g_mode = argv[1];
    long ops = argc > 2 ? atol(argv[2]) : 20000;
    long contexts = argc > 3 ? atol(argv[3]) : 40;
    /* "fresh": every pass draws new shapes (the pipeline count is then
     * reported, not required equal: shape classes may still appear). */
    bool fresh = argc > 4 && !strcmp(argv[4], "fresh");
    wt_context *ctx = NULL, *ref = make_context(TEST_BACKEND_CPU);
    if (!ref || test_create_context(be, &ctx) != WT_OK) return test_summary("soak");

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const long pass = ops < 2000 ? ops : 2000;
    g_spec_rng = 0x9E3779B97F4A7C15ull;
    bool ok = workload(ctx, ref, pass);
    wt_context_trim(ctx);
    wt_memory_stats base;
    wt_context_memory_stats(ctx, &base);
    double rss0 = rss_mib();
    int pipes0 = pipelines(ctx);
    for (long done = pass; ok && done < ops; done += pass) {
        if (!fresh) g_spec_rng = 0x9E3779B97F4A7C15ull;
        ok = workload(ctx, ref, ops - done < pass ? ops - done : pass);
    }
    wt_context_trim(ctx);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    wt_memory_stats end;
    wt_context_memory_stats(ctx, &end);
    double rss1 = rss_mib();
    int pipes1 = pipelines(ctx);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("soak [%s]: %ld ops (%ld results compared with the cpu) in %.1f s; live storages %llu -> %llu, "
           "live bytes %llu -> %llu, pooled %llu -> %llu, peak %llu; RSS %.1f -> %.1f MiB; pipelines "
           "%d -> %d\n",
           g_mode, ops, g_compared, secs, (unsigned long long)base.live_tensors,
           (unsigned long long)end.live_tensors, (unsigned long long)base.live_bytes,
           (unsigned long long)end.live_bytes, (unsigned long long)base.pooled_bytes,
           (unsigned long long)end.pooled_bytes, (unsigned long long)end.peak_bytes, rss0, rss1, pipes0,
           pipes1);
    CHECK(ok, "soak [%s]: the workload failed", g_mode);
    CHECK(end.live_tensors == 0 && end.live_bytes == 0 && end.pooled_bytes == 0,
          "soak [%s]: memory statistics did not return to zero", g_mode);
#if defined(__SANITIZE_ADDRESS__)
    /* ASan keeps freed memory in quarantine: resident memory says nothing. */
    (void)rss1;
#else
    CHECK(rss1 <= rss0 + 16.0, "soak [%s]: resident memory grew from %.1f to %.1f MiB", g_mode, rss0, rss1);
#endif
    CHECK(fresh || pipes1 == pipes0, "soak [%s]: %d pipelines after the warm-up, %d at the end", g_mode,
          pipes0, pipes1);
    wt_context_destroy(ctx);
    wt_context_destroy(ref);

    /* Contexts in a loop. */
    double rss_after10 = 0;
    for (long i = 0; i < contexts; i++) {
        wt_context *c = make_context(be);
        if (!CHECK(c != NULL, "context %ld [%s]: %s", i, g_mode, wt_last_error())) break;
        const int64_t shape[1] = {256};
        wt_tensor *x = NULL, *y = NULL;
        float out[256];
        CHECK(wt_tensor_full(c, WT_F32, 1, shape, 1.0, &x) == WT_OK && wt_exp(x, &y) == WT_OK &&
                  wt_tensor_read(y, out, sizeof out) == WT_OK && fabsf(out[255] - 2.7182817f) < 1e-5f,
              "context %ld [%s]: exp: %s", i, g_mode, wt_last_error());
        wt_tensor_release(y);
        wt_tensor_release(x);
        wt_context_destroy(c);
        if (i == 9 || (contexts <= 10 && i == contexts - 1)) rss_after10 = rss_mib();
    }
    double rss_end = rss_mib();
#if !defined(__SANITIZE_ADDRESS__)
    if (contexts > 10)
        CHECK(rss_end <= rss_after10 + 16.0, "contexts [%s]: resident memory grew from %.1f to %.1f MiB",
              g_mode, rss_after10, rss_end);
#endif
    printf("contexts [%s]: %ld created, used and destroyed; RSS after 10: %.1f MiB, after %ld: %.1f MiB "
           "(%.1f KiB per context)\n",
           g_mode, contexts, rss_after10, contexts, rss_end,
           contexts > 10 ? (rss_end - rss_after10) * 1024.0 / (double)(contexts - 10) : 0.0);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "soak %s", g_mode);
    return test_summary(prefix);
}
