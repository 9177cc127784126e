/* Device <-> host copy speed of a context, as the distributed layer uses
 * it (include/webtensor_dist.h reads gradients back and writes the
 * reduced ones):
 *
 *   bench_transfer [--backend auto|cpu|webgpu|vulkan|gles] [--gpu N] [--reps 10]
 *
 * For tensors of 1, 4, 16, 64 and 256 MB: wt_tensor_read (blocking),
 * wt_tensor_read_async (issued, then waited), wt_tensor_write followed by
 * wt_context_sync; and "grads": 100 tensors holding 43 MB (the GPT
 * example's gradients) read with read_async all issued at once, packed
 * into one tensor on the device and read with one copy, and written back.
 * GB/s = 1e9 bytes per second, the median of --reps. Each size's write is
 * also read back and checked. WT_WEBGPU_UPLOAD_STAGED=1 and
 * WT_WEBGPU_UPLOAD_PIECE_BYTES choose the write path (docs/KNOBS.md). */
#define _POSIX_C_SOURCE 200809L
#include <webtensor.h>

#include "../examples/example_context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define TRY(call)                                                        \
    do {                                                                 \
        if ((call) != WT_OK) {                                           \
            fprintf(stderr, "error: %s: %s\n", #call, wt_last_error());  \
            return 1;                                                    \
        }                                                                \
    } while (0)

int main(int argc, char **argv)
{
    const char *backend = "auto";
    int gpu = -1, reps = 10;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--backend") == 0) backend = argv[i + 1];
        else if (strcmp(argv[i], "--gpu") == 0) gpu = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--reps") == 0) reps = atoi(argv[i + 1]);
        else { fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
    }
    if (reps < 1 || reps > 1000) reps = 10;
    wt_context *ctx = NULL;
    if (!make_context_on(backend, gpu, &ctx)) return 1;
    double *t = malloc((size_t)reps * sizeof *t);
    const int mbs[5] = {1, 4, 16, 64, 256};
    const char *staged = getenv("WT_WEBGPU_UPLOAD_STAGED"), *piece = getenv("WT_WEBGPU_UPLOAD_PIECE_BYTES");
    printf("writes: %s, pieces of %s bytes\n",
           staged && strcmp(staged, "1") == 0 ? "through the context's mapped staging ring (WT_WEBGPU_UPLOAD_STAGED=1)"
                                              : "queue writes",
           piece ? piece : "4194304");
    printf("%8s %14s %14s %14s\n", "MB", "read GB/s", "async GB/s", "write GB/s");
    for (int k = 0; k < 5; k++) {
        size_t bytes = (size_t)mbs[k] << 20;
        int64_t n = (int64_t)(bytes / 4);
        float *host = malloc(bytes);
        if (!host) return 1;
        for (int64_t j = 0; j < n; j++) host[j] = (float)(j & 1023);
        wt_tensor *x = NULL;
        TRY(wt_tensor_from_data(ctx, WT_F32, 1, &n, host, &x));
        TRY(wt_tensor_read(x, host, bytes)); /* warm-up */
        double gb[3];
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            TRY(wt_tensor_read(x, host, bytes));
            t[r] = now() - t0;
        }
        gb[0] = bytes / median(t, reps) / 1e9;
        for (int r = 0; r < reps; r++) {
            wt_event *e = NULL;
            double t0 = now();
            TRY(wt_tensor_read_async(x, host, bytes, &e));
            TRY(wt_event_wait(e));
            t[r] = now() - t0;
            wt_event_destroy(e);
        }
        gb[1] = bytes / median(t, reps) / 1e9;
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            TRY(wt_tensor_write(x, host, bytes));
            TRY(wt_context_sync(ctx));
            t[r] = now() - t0;
        }
        gb[2] = bytes / median(t, reps) / 1e9;
        /* What was written is what is there (the staged path's pieces). */
        for (int64_t j = 0; j < n; j++) host[j] = (float)((j * 7) & 2047);
        TRY(wt_tensor_write(x, host, bytes));
        memset(host, 0, bytes);
        TRY(wt_tensor_read(x, host, bytes));
        for (int64_t j = 0; j < n; j++)
            if (host[j] != (float)((j * 7) & 2047)) {
                fprintf(stderr, "error: element %lld of the %d MB write reads back as %g\n", (long long)j, mbs[k],
                        host[j]);
                return 1;
            }
        printf("%8d %14.2f %14.2f %14.2f\n", mbs[k], gb[0], gb[1], gb[2]);
        wt_tensor_release(x);
        free(host);
    }
    /* The GPT's gradients: 100 tensors, 43 MB. */
    enum { NT = 100 };
    wt_tensor *g[NT];
    int64_t total = 0, sz[NT];
    for (int i = 0; i < NT; i++) {
        sz[i] = i % 4 == 0 ? 384 : i % 4 == 1 ? 147456 : i % 4 == 2 ? 1536 : 294912; /* biases, D*D, 4D, 4D*D/2 */
        total += sz[i];
    }
    float *host = malloc((size_t)total * 4);
    if (!host) return 1;
    memset(host, 0, (size_t)total * 4);
    for (int i = 0; i < NT; i++) TRY(wt_tensor_from_data(ctx, WT_F32, 1, &sz[i], host, &g[i]));
    double tr[2];
    for (int pass = 0; pass < 2; pass++) {
        for (int r = 0; r < reps; r++) {
            wt_event *e[NT];
            double t0 = now();
            for (int i = 0, off = 0; i < NT; off += (int)sz[i], i++)
                if (pass == 0) TRY(wt_tensor_read_async(g[i], host + off, (size_t)sz[i] * 4, &e[i]));
                else TRY(wt_tensor_write(g[i], host + off, (size_t)sz[i] * 4));
            if (pass == 0)
                for (int i = 0; i < NT; i++) {
                    TRY(wt_event_wait(e[i]));
                    wt_event_destroy(e[i]);
                }
            else
                TRY(wt_context_sync(ctx));
            t[r] = now() - t0;
        }
        tr[pass] = total * 4.0 / median(t, reps) / 1e9;
    }
    /* Packed on the device first (as wt_dist_allreduce does on a GPU):
     * one concatenation and one read. */
    for (int r = 0; r < reps; r++) {
        wt_tensor *packed = NULL;
        wt_event *e = NULL;
        double t0 = now();
        TRY(wt_concat(NT, g, 0, &packed));
        TRY(wt_tensor_read_async(packed, host, (size_t)total * 4, &e));
        TRY(wt_event_wait(e));
        t[r] = now() - t0;
        wt_event_destroy(e);
        wt_tensor_release(packed);
    }
    double packed_gb = total * 4.0 / median(t, reps) / 1e9;
    printf("grads (%d tensors, %.1f MB): read_async one by one %.2f GB/s, packed on the device and read at once "
           "%.2f GB/s, write %.2f GB/s\n",
           NT, total * 4 / 1e6, tr[0], packed_gb, tr[1]);
    for (int i = 0; i < NT; i++) wt_tensor_release(g[i]);
    free(host);
    free(t);
    wt_context_destroy(ctx);
    return 0;
}
