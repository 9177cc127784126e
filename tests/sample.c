/* wt_sample: token ids drawn from logits on the device. The references
 * are the softmax probabilities (float64, on the host) that the draws
 * must follow (a chi-square bound over many draws with a fixed seed), the
 * sets top-k and top-p allow (no draw outside them), the first index of
 * the largest logit for greedy, and the CPU backend's ids for the WebGPU
 * ones (the same algorithm in the same order: equal but for rare exp()
 * rounding). Also: the step read on the device in a captured graph,
 * bad rows, f16 logits, argument errors and the autograd marking. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static wt_context *g_ctx;
static test_backend g_backend;

static wt_tensor *from_f32(wt_context *c, int64_t B, int64_t V, const float *v)
{
    const int64_t shape[2] = {B, V};
    wt_tensor *t = NULL;
    CHECK(wt_tensor_from_data(c, WT_F32, 2, shape, v, &t) == WT_OK, "from_data: %s", wt_last_error());
    return t;
}

static wt_tensor *step_tensor(int32_t v)
{
    const int64_t one = 1;
    wt_tensor *t = NULL;
    CHECK(wt_tensor_from_data(g_ctx, WT_I32, 1, &one, &v, &t) == WT_OK, "step: %s", wt_last_error());
    return t;
}

/* ids of wt_sample on logits [B, V]; false (and a failure) on an error. */
static bool sample_ids(const wt_tensor *logits, const wt_sample_options *o, int32_t *ids, int64_t B)
{
    wt_tensor *out = NULL;
    wt_status st = wt_sample(logits, o, &out);
    CHECK(st == WT_OK, "wt_sample: %s", wt_last_error());
    if (st != WT_OK) return false;
    bool ok = wt_tensor_ndim(out) == 1 && wt_tensor_shape(out)[0] == B && wt_tensor_dtype(out) == WT_I32;
    CHECK(ok, "result is not i32 [%lld]", (long long)B);
    ok = ok && wt_tensor_read(out, ids, (size_t)B * sizeof *ids) == WT_OK;
    wt_tensor_release(out);
    return ok;
}

static int descending(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

static int64_t host_argmax(const float *l, int64_t V)
{
    int64_t a = 0;
    for (int64_t i = 1; i < V; i++)
        if (l[i] > l[a]) a = i;
    return a;
}

/* The probabilities wt_sample draws from, in float64 from their
 * definitions: softmax(l / T), cut to logits >= the k-th largest, then to
 * the nucleus (tokens whose strictly larger tokens hold < top_p of the
 * mass), renormalised. */
static void host_probs(const float *l, int64_t V, double T, int64_t k, double top_p, double *p)
{
    double *sorted = malloc((size_t)V * sizeof *sorted);
    for (int64_t i = 0; i < V; i++) sorted[i] = l[i];
    for (int64_t i = 1; i < V; i++) /* descending insertion sort: V is small here */
        for (int64_t j = i; j > 0 && sorted[j] > sorted[j - 1]; j--) {
            double t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    const double kth = k > 0 && k < V ? sorted[k - 1] : -INFINITY, mx = sorted[0];
    double z = 0;
    for (int64_t i = 0; i < V; i++) z += p[i] = l[i] >= kth ? exp((l[i] - mx) / T) : 0;
    double z2 = 0;
    for (int64_t i = 0; i < V; i++) {
        double above = 0;
        for (int64_t j = 0; j < V; j++) above += l[j] > l[i] ? p[j] : 0;
        if (!(above < top_p * z)) p[i] = 0;
        z2 += p[i];
    }
    for (int64_t i = 0; i < V; i++) p[i] /= z2;
    free(sorted);
}

/* Draws of one row, replicated over B rows (each row has its own random
 * word) for `calls` steps, against host_probs: chi-square over the
 * allowed tokens (cells with expected count >= 5) within a bound that
 * a correct sampler exceeds with probability < 1e-6; no draw outside
 * the allowed set. */
static void check_distribution(const char *what, const float *row, int64_t V, double T, int64_t k, double top_p)
{
    /* 24576 draws on the CPU; 1024 on WebGPU, whose ids equal the CPU's
     * (test_against_cpu) and whose software adapters of the tests run a
     * workgroup a row slowly */
    const int B = g_backend == TEST_BACKEND_CPU ? 4096 : 512, CALLS = g_backend == TEST_BACKEND_CPU ? 6 : 2;
    float *l = malloc(sizeof *l * B * (size_t)V);
    double *p = malloc(sizeof *p * (size_t)V);
    int64_t *count = calloc((size_t)V, sizeof *count);
    int32_t *ids = malloc(sizeof *ids * B);
    for (int64_t b = 0; b < B; b++) memcpy(l + b * V, row, sizeof *l * (size_t)V);
    host_probs(row, V, T, k, top_p, p);
    wt_tensor *logits = from_f32(g_ctx, B, V, l), *step = step_tensor(0);
    wt_sample_options o;
    wt_sample_options_init(&o);
    o.temperature = T, o.top_k = k, o.top_p = top_p, o.seed = 12345, o.counter = step;
    int outside = 0;
    for (int32_t c = 0; c < CALLS; c++) {
        CHECK(wt_tensor_write(step, &c, sizeof c) == WT_OK, "write step");
        if (!sample_ids(logits, &o, ids, B)) break;
        for (int b = 0; b < B; b++) {
            if (ids[b] < 0 || ids[b] >= V || p[ids[b]] == 0) outside++;
            else count[ids[b]]++;
        }
    }
    const double n = (double)B * CALLS;
    double chi2 = 0;
    int cells = 0;
    for (int64_t i = 0; i < V; i++) {
        if (p[i] * n < 5) continue;
        chi2 += (count[i] - p[i] * n) * (count[i] - p[i] * n) / (p[i] * n);
        cells++;
    }
    /* chi-square quantile 1 - 1e-6 with d = cells - 1 degrees of freedom,
     * Wilson-Hilferty: d (1 - 2/(9d) + 4.75 sqrt(2/(9d)))^3 */
    const double d = cells > 1 ? cells - 1 : 1;
    const double bound = d * pow(1 - 2 / (9 * d) + 4.75 * sqrt(2 / (9 * d)), 3);
    printf("  %s: %d draws, chi-square %.2f over %d cells (bound %.2f), %d outside the allowed set\n", what,
           (int)n, chi2, cells, bound, outside);
    CHECK(outside == 0, "%s: %d draws outside the allowed set", what, outside);
    CHECK(chi2 <= bound, "%s: chi-square %.2f > %.2f", what, chi2, bound);
    wt_tensor_release(logits);
    wt_tensor_release(step);
    free(l), free(p), free(count), free(ids);
}

static void test_distributions(void)
{
    const float row[12] = {1.0f, 2.5f, 0.3f, -1.0f, 2.0f, 0.0f, 1.7f, -3.0f, 2.4f, 0.9f, -0.5f, 1.2f};
    check_distribution("T 1", row, 12, 1.0, 0, 1.0);
    check_distribution("T 0.7", row, 12, 0.7, 0, 1.0);
    check_distribution("T 1.5, top-k 5", row, 12, 1.5, 5, 1.0);
    check_distribution("T 1, top-p 0.8", row, 12, 1.0, 0, 0.8);
    check_distribution("T 0.9, top-k 6, top-p 0.7", row, 12, 0.9, 6, 0.7);
    /* a row past one chunk (V > 256): chunk sums and the walk across them */
    enum { V = 700 };
    float big[V];
    for (int i = 0; i < V; i++) big[i] = -2.0f - (float)((i * 37) % 101) / 25.0f;
    big[3] = 2.0f, big[299] = 2.2f, big[650] = 1.8f, big[699] = 1.0f;
    check_distribution("V 700, T 1", big, V, 1.0, 0, 1.0);
    check_distribution("V 700, top-k 40", big, V, 1.0, 40, 1.0);
}

/* Random logits over many chunks: greedy is the first largest; top-k and
 * top-p ids lie in the allowed sets; the same seed and step give the
 * same ids; another step gives others. */
static void test_sets_and_greedy(void)
{
    enum { B = 16, V = 50000 };
    float *l = malloc(sizeof *l * B * V);
    for (int64_t i = 0; i < (int64_t)B * V; i++) l[i] = test_rng_uniform(-4.0f, 4.0f);
    l[3 * V + 100] = l[3 * V + 4000] = 9.0f; /* a tie: the first wins */
    wt_tensor *logits = from_f32(g_ctx, B, V, l), *step = step_tensor(7);
    int32_t ids[B], again[B], other[B];
    float *sorted = malloc(sizeof *sorted * V);
    wt_sample_options o;
    wt_sample_options_init(&o);
    o.temperature = 0;
    if (sample_ids(logits, &o, ids, B)) {
        int bad = 0;
        for (int b = 0; b < B; b++) bad += ids[b] != host_argmax(l + (int64_t)b * V, V);
        CHECK(bad == 0, "greedy: %d rows differ from the first largest", bad);
        CHECK(ids[3] == 100, "greedy tie: %d, expected 100", ids[3]);
    }
    wt_sample_options_init(&o);
    o.top_k = 1, o.seed = 99; /* top-k 1 is greedy too */
    if (sample_ids(logits, &o, ids, B)) CHECK(ids[5] == host_argmax(l + 5 * V, V), "top_k 1 is not greedy");
    /* temperature -> 0: tiny temperatures end at the argmax (lifted 0.1
     * above the rest, e^-100 of the odds at T 1e-3) */
    float *lifted = malloc(sizeof *lifted * B * V);
    memcpy(lifted, l, sizeof *l * B * V);
    for (int b = 0; b < B; b++) lifted[(int64_t)b * V + host_argmax(l + (int64_t)b * V, V)] += 0.1f;
    wt_tensor *lifted_t = from_f32(g_ctx, B, V, lifted);
    const double temps[3] = {1e-3, 1e-6, 1e-30};
    for (int t = 0; t < 3; t++) {
        wt_sample_options_init(&o);
        o.temperature = temps[t], o.seed = 5, o.counter = step;
        if (!sample_ids(lifted_t, &o, ids, B)) break;
        int bad = 0;
        for (int b = 0; b < B; b++) bad += ids[b] != host_argmax(l + (int64_t)b * V, V);
        CHECK(bad == 0, "temperature %g: %d rows not at the largest logit", temps[t], bad);
    }
    wt_tensor_release(lifted_t);
    free(lifted);
    /* (top_k, top_p): a token is allowed when fewer than k logits are
     * larger than its own (logit >= the k-th largest) and the tokens
     * larger than it hold < top_p of the kept mass (float64; 1e-4 of slack
     * for the kernel's f32 sums) */
    const int64_t ks[4] = {2, 0, 3000, 400};
    const double ps[4] = {1.0, 0.5, 0.95, 0.3};
    for (int c = 0; c < 4; c++) {
        wt_sample_options_init(&o);
        o.temperature = 0.8, o.top_k = ks[c], o.top_p = ps[c], o.seed = 1000 + c, o.counter = step;
        if (!sample_ids(logits, &o, ids, B)) break;
        int outside = 0;
        for (int b = 0; b < B; b++) {
            const float *r = l + (int64_t)b * V;
            if (ids[b] < 0 || ids[b] >= V) {
                outside++;
                continue;
            }
            const float mine = r[ids[b]], mx = r[host_argmax(r, V)];
            int64_t larger = 0;
            for (int64_t i = 0; i < V; i++) larger += r[i] > mine;
            if (o.top_k > 0 && larger >= o.top_k) {
                outside++;
                continue;
            }
            memcpy(sorted, r, sizeof *sorted * V);
            qsort(sorted, V, sizeof *sorted, descending);
            const float kth = o.top_k > 0 ? sorted[o.top_k - 1] : -INFINITY;
            double z = 0, above = 0;
            for (int64_t i = 0; i < V; i++) {
                if (r[i] < kth) continue;
                const double w = exp(((double)r[i] - mx) / 0.8);
                z += w;
                if (r[i] > mine) above += w;
            }
            if (!(above < o.top_p * z * (1 + 1e-4))) outside++;
        }
        CHECK(outside == 0, "top-k %lld top-p %g: %d draws outside the allowed set", (long long)o.top_k, o.top_p,
              outside);
    }
    /* the same seed and step: the same ids; another step: others */
    wt_sample_options_init(&o);
    o.temperature = 1.0, o.seed = 42, o.counter = step;
    if (sample_ids(logits, &o, ids, B) && sample_ids(logits, &o, again, B)) {
        CHECK(memcmp(ids, again, sizeof ids) == 0, "the same seed and step gave other ids");
        const int32_t s8 = 8;
        CHECK(wt_tensor_write(step, &s8, sizeof s8) == WT_OK, "write step");
        if (sample_ids(logits, &o, other, B)) {
            int same = 0;
            for (int b = 0; b < B; b++) same += other[b] == ids[b];
            CHECK(same < B / 2, "another step gave %d of %d ids unchanged", same, B);
        }
    }
    wt_tensor_release(logits);
    wt_tensor_release(step);
    free(l);
    free(sorted);
}

/* The step read on the device: a captured wt_sample replayed after a new
 * step is written gives the eager call's ids at that step. */
static void test_captured(void)
{
    enum { B = 64, V = 300 };
    float *l = malloc(sizeof *l * B * V);
    for (int i = 0; i < B * V; i++) l[i] = test_rng_uniform(-3.0f, 3.0f);
    wt_tensor *logits = from_f32(g_ctx, B, V, l), *step = step_tensor(0), *out = NULL;
    wt_sample_options o;
    wt_sample_options_init(&o);
    o.temperature = 1.2, o.top_k = 50, o.top_p = 0.9, o.seed = 77, o.counter = step;
    wt_graph *g = NULL;
    CHECK(wt_graph_begin(g_ctx) == WT_OK, "graph_begin: %s", wt_last_error());
    wt_status st = wt_sample(logits, &o, &out);
    wt_status end = wt_graph_end(g_ctx, &g);
    CHECK(st == WT_OK && end == WT_OK, "capture: %s", wt_last_error());
    int32_t replayed[B], eager[B];
    int differ_steps = 0;
    for (int32_t s = 1; g && s <= 4; s++) {
        CHECK(wt_tensor_write(step, &s, sizeof s) == WT_OK, "write step");
        CHECK(wt_graph_replay(g) == WT_OK, "replay: %s", wt_last_error());
        CHECK(wt_tensor_read(out, replayed, sizeof replayed) == WT_OK, "read");
        if (!sample_ids(logits, &o, eager, B)) break;
        CHECK(memcmp(replayed, eager, sizeof eager) == 0, "step %d: replay differs from the eager call", s);
        static int32_t prev[B];
        if (s > 1 && memcmp(prev, replayed, sizeof prev) != 0) differ_steps++;
        memcpy(prev, replayed, sizeof prev);
    }
    CHECK(differ_steps == 3, "replays at new steps drew the same ids (%d of 3 changed)", differ_steps);
    wt_graph_release(g);
    wt_tensor_release(out);
    wt_tensor_release(logits);
    wt_tensor_release(step);
    free(l);
}

/* Rows with a NaN, a +inf or no finite logit give -1; -inf entries of a
 * good row are never drawn; f16 logits sample as their f32 values. */
static void test_bad_rows_and_f16(void)
{
    enum { B = 5, V = 600 };
    float l[B * V];
    for (int i = 0; i < B * V; i++) l[i] = test_rng_uniform(-1.0f, 1.0f);
    l[0 * V + 300] = NAN;
    l[1 * V + 599] = INFINITY;
    for (int i = 0; i < V; i++) l[2 * V + i] = -INFINITY;
    for (int i = 0; i < V; i++)
        if (i % 3) l[3 * V + i] = -INFINITY; /* row 3: only every third token possible */
    wt_tensor *logits = from_f32(g_ctx, B, V, l);
    wt_sample_options o;
    int32_t ids[B];
    for (int greedy = 0; greedy < 2; greedy++) {
        wt_sample_options_init(&o);
        o.temperature = greedy ? 0 : 1, o.top_p = 0.9;
        if (!sample_ids(logits, &o, ids, B)) break;
        CHECK(ids[0] == -1 && ids[1] == -1 && ids[2] == -1, "bad rows (%s): %d %d %d, expected -1",
              greedy ? "greedy" : "sampled", ids[0], ids[1], ids[2]);
        CHECK(ids[3] >= 0 && ids[3] % 3 == 0, "row with -inf logits drew %d", ids[3]);
        CHECK(ids[4] >= 0 && ids[4] < V, "good row drew %d", ids[4]);
    }
    for (int s = 0; s < 50; s++) { /* many draws of row 3 */
        wt_sample_options_init(&o);
        o.seed = (uint64_t)s * 7919;
        if (!sample_ids(logits, &o, ids, B)) break;
        if (ids[3] < 0 || ids[3] % 3 != 0) {
            CHECK(false, "seed %d: row with -inf logits drew %d", s, ids[3]);
            break;
        }
    }
    wt_tensor_release(logits);
    /* f16: the f32 values of the halves */
    uint16_t h[2 * 40];
    float hf[2 * 40];
    for (int i = 0; i < 80; i++) {
        h[i] = test_double_to_half(test_rng_uniform(-2.0f, 2.0f));
        hf[i] = (float)test_half_to_double(h[i]);
    }
    const int64_t shape[2] = {2, 40};
    wt_tensor *t16 = NULL, *t32 = from_f32(g_ctx, 2, 40, hf);
    CHECK(wt_tensor_from_data(g_ctx, WT_F16, 2, shape, h, &t16) == WT_OK, "f16: %s", wt_last_error());
    wt_sample_options_init(&o);
    o.seed = 3, o.top_k = 10;
    int32_t a[2], b[2];
    if (t16 && sample_ids(t16, &o, a, 2) && sample_ids(t32, &o, b, 2))
        CHECK(a[0] == b[0] && a[1] == b[1], "f16 logits: %d %d against f32's %d %d", a[0], a[1], b[0], b[1]);
    wt_tensor_release(t16);
    wt_tensor_release(t32);
}

/* The WebGPU ids against the CPU backend's: the same algorithm and sums,
 * so equal unless exp() rounds differently right at a boundary. */
static void test_against_cpu(void)
{
    if (g_backend == TEST_BACKEND_CPU) return;
    wt_context *cpu = NULL;
    if (test_create_context(TEST_BACKEND_CPU, &cpu) != WT_OK) return;
    enum { B = 256, V = 5000 };
    float *l = malloc(sizeof *l * B * V);
    for (int i = 0; i < B * V; i++) l[i] = test_rng_uniform(-5.0f, 5.0f);
    wt_tensor *lg = from_f32(g_ctx, B, V, l), *lc = from_f32(cpu, B, V, l);
    const double temps[3] = {1.0, 0.6, 1.0};
    const int64_t ks[3] = {0, 100, 0};
    const double ps[3] = {1.0, 0.9, 0.5};
    int32_t gi[B], ci[B];
    for (int c = 0; c < 3; c++) {
        wt_sample_options o;
        wt_sample_options_init(&o);
        o.temperature = temps[c], o.top_k = ks[c], o.top_p = ps[c], o.seed = 0x123456789abcull + c;
        if (!sample_ids(lg, &o, gi, B) || !sample_ids(lc, &o, ci, B)) break;
        int differ = 0;
        for (int b = 0; b < B; b++) differ += gi[b] != ci[b];
        printf("  against the CPU backend (T %g, top-k %lld, top-p %g): %d of %d rows differ\n", temps[c],
               (long long)ks[c], ps[c], differ, B);
        CHECK(differ <= 2, "%d of %d rows differ from the CPU backend's", differ, B);
    }
    wt_tensor_release(lg);
    wt_tensor_release(lc);
    wt_context_destroy(cpu);
    free(l);
}

static void test_errors_and_grad(void)
{
    float l[6] = {1, 2, 3, 4, 5, 6};
    wt_tensor *x = from_f32(g_ctx, 2, 3, l), *out = NULL, *two = NULL, *i32 = NULL, *flat = NULL;
    const int64_t s2 = 2, s6 = 6;
    CHECK(wt_tensor_zeros(g_ctx, WT_I32, 1, &s2, &two) == WT_OK, "zeros");
    CHECK(wt_tensor_zeros(g_ctx, WT_I32, 1, &s6, &i32) == WT_OK, "zeros");
    CHECK(wt_reshape(x, 1, &s6, &flat) == WT_OK, "reshape");
    wt_sample_options o;
    struct { const char *what; double t; int64_t k; double p; const wt_tensor *counter; wt_status want; } cases[] = {
        {"temperature -1", -1, 0, 1, NULL, WT_ERR_INVALID_ARGUMENT},
        {"temperature NaN", NAN, 0, 1, NULL, WT_ERR_INVALID_ARGUMENT},
        {"temperature inf", INFINITY, 0, 1, NULL, WT_ERR_INVALID_ARGUMENT},
        {"top_k -1", 1, -1, 1, NULL, WT_ERR_INVALID_ARGUMENT},
        {"top_p 0", 1, 0, 0, NULL, WT_ERR_INVALID_ARGUMENT},
        {"top_p 1.5", 1, 0, 1.5, NULL, WT_ERR_INVALID_ARGUMENT},
        {"a counter of 2 elements", 1, 0, 1, two, WT_ERR_INVALID_ARGUMENT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wt_sample_options_init(&o);
        o.temperature = cases[i].t, o.top_k = cases[i].k, o.top_p = cases[i].p, o.counter = cases[i].counter;
        out = NULL;
        wt_status st = wt_sample(x, &o, &out);
        CHECK(st == cases[i].want && !out, "%s: status %d", cases[i].what, (int)st);
        wt_tensor_release(out);
    }
    out = NULL;
    CHECK(wt_sample(flat, NULL, &out) == WT_ERR_SHAPE && !out, "1-D logits accepted");
    CHECK(wt_sample(i32, NULL, &out) != WT_OK && !out, "i32 logits accepted");
    wt_sample_options_init(&o);
    o.struct_size = 4;
    CHECK(wt_sample(x, &o, &out) == WT_ERR_INVALID_ARGUMENT && !out, "bad struct_size accepted");
    /* not differentiable: the catalogue says so; logits requiring grad
     * give ids that do not */
    int op = -1;
    for (int i = 0; i < wt_op_count(); i++)
        if (strcmp(wt_op_name(i), "sample") == 0) op = i;
    CHECK(op >= 0 && wt_op_gradient(op) == WT_OP_GRAD_NOT_DIFFERENTIABLE, "sample's autograd row");
    CHECK(wt_tensor_set_requires_grad(x, true) == WT_OK, "requires_grad");
    CHECK(wt_sample(x, NULL, &out) == WT_OK && out && !wt_tensor_requires_grad(out), "sample of tracked logits: %s",
          wt_last_error());
    wt_tensor_release(out);
    wt_tensor_release(x);
    wt_tensor_release(two);
    wt_tensor_release(i32);
    wt_tensor_release(flat);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "sample", argc, argv)) return run.status;
    g_ctx = run.ctx;
    g_backend = run.backend;
    test_rng_seed(test_seed());
    test_distributions();
    test_sets_and_greedy();
    test_captured();
    test_bad_rows_and_f16();
    test_against_cpu();
    test_errors_and_grad();
    test_check_nothing_alive(g_ctx);
    return test_end(&run);
}
