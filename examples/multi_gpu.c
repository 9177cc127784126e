/* Several GPUs: a batched matmul C[b] = A[b] @ B[b] split over one context
 * per GPU (batch slices), computed concurrently, gathered on the host and
 * checked against one GPU doing all of it. Prints the speed-up over one
 * GPU and what the transfers cost (host -> GPUs, GPUs -> host, and one
 * GPU -> GPU move with wt_tensor_to).
 *
 * Run:   ./multi_gpu [--batch B] [--size M] [--reps R] [--same-adapter N]
 *   one context per real GPU adapter (of the best GPU API); --same-adapter
 *   N makes N contexts on adapter 0 instead (for a machine with one GPU,
 *   or a software adapter, where it shows the mechanics, not a speed-up).
 * Build: cc multi_gpu.c $(pkg-config --cflags --libs webtensor) -lm */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "webtensor.h"

#define MAX_GPUS 16

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define TRY(call)                                                                          \
    do {                                                                                   \
        wt_status s_ = (call);                                                             \
        if (s_ != WT_OK) {                                                                 \
            fprintf(stderr, "%s: %s: %s\n", #call, wt_status_string(s_), wt_last_error()); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

/* Splits the batch over the contexts, uploads, multiplies, waits; the
 * results stay on the devices in out[]. Returns the compute seconds
 * (median over reps of: record on every context, then wait for all). */
static double run_split(wt_context **ctx, int n, const float *ha, const float *hb, int64_t B,
                        int64_t M, int64_t K, int64_t N, int reps, wt_tensor **out,
                        double *upload_s)
{
    wt_tensor *a[MAX_GPUS], *b[MAX_GPUS];
    double t0 = now();
    for (int g = 0; g < n; g++) {
        int64_t b0 = B * g / n, b1 = B * (g + 1) / n;
        int64_t sa[3] = {b1 - b0, M, K}, sb[3] = {b1 - b0, K, N};
        TRY(wt_tensor_from_data(ctx[g], WT_F32, 3, sa, ha + b0 * M * K, &a[g]));
        TRY(wt_tensor_from_data(ctx[g], WT_F32, 3, sb, hb + b0 * K * N, &b[g]));
    }
    for (int g = 0; g < n; g++) TRY(wt_context_sync(ctx[g]));
    *upload_s = now() - t0;
    double times[64];
    if (reps > 64) reps = 64;
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up (compiles) */
        for (int g = 0; g < n; g++) wt_tensor_release(out[g]), out[g] = NULL;
        double s = now();
        for (int g = 0; g < n; g++) {
            TRY(wt_matmul(a[g], b[g], &out[g]));
            TRY(wt_context_flush(ctx[g])); /* start it now; the next GPU records meanwhile */
        }
        for (int g = 0; g < n; g++) TRY(wt_context_sync(ctx[g]));
        if (r >= 0) times[r] = now() - s;
    }
    for (int g = 0; g < n; g++) wt_tensor_release(a[g]), wt_tensor_release(b[g]);
    qsort(times, (size_t)reps, sizeof times[0], cmp_double);
    return times[reps / 2];
}

/* Reads every slice back with non-blocking reads, waits for all. */
static double gather(wt_tensor **out, int n, float *hc, int64_t B, int64_t M, int64_t N)
{
    wt_event *ev[MAX_GPUS];
    double t0 = now();
    for (int g = 0; g < n; g++) {
        int64_t b0 = B * g / n, b1 = B * (g + 1) / n;
        TRY(wt_tensor_read_async(out[g], hc + b0 * M * N, sizeof(float) * (size_t)((b1 - b0) * M * N),
                                 &ev[g]));
    }
    for (int g = 0; g < n; g++) {
        TRY(wt_event_wait(ev[g]));
        wt_event_destroy(ev[g]);
    }
    return now() - t0;
}

int main(int argc, char **argv)
{
    int64_t B = 64, S = 512;
    int reps = 5, same = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--batch")) B = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--size")) S = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--same-adapter")) same = atoi(argv[i + 1]);
    }
    const int64_t M = S, K = S, N = S;

    /* The GPUs: real adapters of the best API (each GPU once). */
    wt_adapter_info ad[32];
    int na = 0;
    TRY(wt_list_adapters(NULL, ad, 32, &na));
    int use[MAX_GPUS], n = 0;
    if (same > 0) {
        for (int i = 0; i < same && i < MAX_GPUS; i++) use[n++] = 0;
    } else {
        for (int i = 0; i < na && i < 32 && n < MAX_GPUS; i++)
            if (ad[i].type != WT_ADAPTER_CPU && ad[i].api == ad[0].api) use[n++] = i;
    }
    if (n == 0 || na == 0) {
        printf("no real GPU adapter; run with --same-adapter 2 to see the mechanics on adapter 0\n");
        return 0;
    }
    wt_context *ctx[MAX_GPUS];
    for (int g = 0; g < n; g++) {
        wt_context_options o;
        wt_context_options_init(&o);
        o.backend = WT_BACKEND_WEBGPU;
        o.adapter_index = use[g];
        TRY(wt_context_create(&o, &ctx[g]));
        printf("context %d: adapter %d, %s\n", g, use[g], ad[use[g]].name);
    }

    size_t na_el = (size_t)(B * M * K), nb_el = (size_t)(B * K * N), nc_el = (size_t)(B * M * N);
    float *ha = malloc(na_el * 4), *hb = malloc(nb_el * 4), *h1 = malloc(nc_el * 4), *hn = malloc(nc_el * 4);
    if (!ha || !hb || !h1 || !hn) return 1;
    unsigned seed = 12345;
    for (size_t i = 0; i < na_el; i++) seed = seed * 1103515245u + 12345u, ha[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
    for (size_t i = 0; i < nb_el; i++) seed = seed * 1103515245u + 12345u, hb[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
    double flops = 2.0 * (double)B * (double)M * (double)N * (double)K;
    printf("batched matmul: %lld x [%lld x %lld] @ [%lld x %lld], f32, %.1f GFLOP\n", (long long)B,
           (long long)M, (long long)K, (long long)K, (long long)N, flops * 1e-9);

    /* One GPU, all of the batch. */
    wt_tensor *one[MAX_GPUS] = {NULL}, *many[MAX_GPUS] = {NULL};
    double up1 = 0, upn = 0;
    double t1 = run_split(ctx, 1, ha, hb, B, M, K, N, reps, one, &up1);
    double down1 = gather(one, 1, h1, B, M, N);
    /* Every GPU, a slice each. */
    double tn = run_split(ctx, n, ha, hb, B, M, K, N, reps, many, &upn);
    double downn = gather(many, n, hn, B, M, N);

    double max_diff = 0, max_ref = 0;
    for (size_t i = 0; i < nc_el; i++) {
        double d = fabs((double)h1[i] - hn[i]);
        if (d > max_diff) max_diff = d;
    }
    for (int t = 0; t < 64; t++) { /* spot checks against doubles */
        size_t bi = (size_t)(t * 7 % B), r = (size_t)(t * 13 % M), c = (size_t)(t * 29 % N);
        double ref = 0;
        for (int64_t k = 0; k < K; k++)
            ref += (double)ha[bi * M * K + r * K + k] * hb[bi * K * N + k * N + c];
        double e = fabs(ref - hn[bi * M * N + r * N + c]) / (1.0 + fabs(ref));
        if (e > max_ref) max_ref = e;
    }
    double bytes_in = (double)(na_el + nb_el) * 4, bytes_out = (double)nc_el * 4;
    printf("1 GPU : compute %8.3f ms (%6.2f TFLOP/s)\n", t1 * 1e3, flops / t1 * 1e-12);
    printf("%d GPUs: compute %8.3f ms (%6.2f TFLOP/s), speed-up %.2fx\n", n, tn * 1e3,
           flops / tn * 1e-12, t1 / tn);
    printf("transfers: host->GPUs %.3f ms (%.2f GB/s; one GPU %.3f ms), GPUs->host %.3f ms "
           "(%.2f GB/s; one GPU %.3f ms)\n",
           upn * 1e3, bytes_in / upn * 1e-9, up1 * 1e3, downn * 1e3, bytes_out / downn * 1e-9,
           down1 * 1e3);
    if (n > 1) { /* a GPU -> GPU move of the second slice */
        wt_tensor *moved = NULL;
        wt_context_sync(ctx[0]);
        double s = now();
        TRY(wt_tensor_to(many[1], ctx[0], &moved));
        TRY(wt_context_sync(ctx[0]));
        double tm = now() - s;
        printf("move of one result slice GPU 1 -> GPU 0 (wt_tensor_to, via the host): %.3f ms, "
               "%.2f GB/s\n",
               tm * 1e3, (double)wt_tensor_numel(moved) * 4 / tm * 1e-9);
        wt_tensor_release(moved);
    }
    printf("check: max |split - one GPU| = %.3g, max relative error against doubles = %.3g\n",
           max_diff, max_ref);
    for (int g = 0; g < n; g++) wt_tensor_release(one[g]), wt_tensor_release(many[g]);
    for (int g = 0; g < n; g++) wt_context_destroy(ctx[g]);
    free(ha), free(hb), free(h1), free(hn);
    return max_diff <= 1e-4 && max_ref <= 1e-4 ? 0 : 1;
}
