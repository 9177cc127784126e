/* Tensors past one binding: on lavapipe maxStorageBufferBindingSize is
 * 128 MiB, and these tensors are 140 MB, so every op below runs through
 * binding windows (src/webgpu/windows/windows.c). Checked against float64
 * references; prints the time each op takes.
 *
 *   runtime_big vulkan|gles|cpu
 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROWS 7000
#define COLS 5000 /* 7000 x 5000 f32 = 140,000,000 bytes */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float va(int64_t i) { return (float)(i % 1000) * 0.5f - 250.0f; }
static float vb(int64_t i) { return (float)(i % 7) - 3.0f; }

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "runtime_big", argc, argv)) return run.status;
    const test_backend b = run.backend;
    wt_context *ctx = run.ctx;
    wt_context_info ci;
    wt_context_get_info(ctx, &ci);
    const int64_t n = (int64_t)ROWS * COLS;
    printf("tensors of %lld bytes; one binding holds %llu\n", (long long)(n * 4),
           (unsigned long long)ci.max_binding_size);
    /* On devices whose binding holds 140 MB (an H200: 4 GiB), WT_WINDOW_BYTES
     * lowers the window so that the same path runs. */
    const char *forced = getenv("WT_WINDOW_BYTES");
    if (b != TEST_BACKEND_CPU)
        CHECK((uint64_t)n * 4 > ci.max_binding_size || (forced && (uint64_t)atoll(forced) < (uint64_t)n * 4),
              "the case must exceed the binding limit (or WT_WINDOW_BYTES)");

    float *ha = malloc((size_t)n * 4), *hb = malloc((size_t)n * 4), *r = malloc((size_t)n * 4);
    if (!CHECK(ha && hb && r, "host memory")) return test_end(&run);
    for (int64_t i = 0; i < n; i++) ha[i] = va(i), hb[i] = vb(i);
    int64_t shape[2] = {ROWS, COLS};
    wt_tensor *A = NULL, *B = NULL, *C = NULL, *V = NULL, *D = NULL, *S = NULL, *R = NULL;
    wt_status s = wt_tensor_from_data(ctx, WT_F32, 2, shape, ha, &A);
    if (s == WT_OK) s = wt_tensor_from_data(ctx, WT_F32, 2, shape, hb, &B);
    CHECK(s == WT_OK, "upload: %s %s", wt_status_string(s), wt_last_error());

    /* add */
    double t0 = now();
    if (s == WT_OK && (s = wt_add(A, B, &C)) == WT_OK) s = wt_context_sync(ctx);
    double t_add = now() - t0;
    if (CHECK(s == WT_OK, "add: %s %s", wt_status_string(s), wt_last_error()) &&
        CHECK(wt_tensor_read(C, r, (size_t)n * 4) == WT_OK, "read add: %s", wt_last_error())) {
        int64_t bad = 0;
        for (int64_t i = 0; i < n; i++) bad += r[i] != (float)((double)ha[i] + hb[i]);
        CHECK(bad == 0, "add: %lld wrong elements", (long long)bad);
    }

    /* copy of a strided view: every other column */
    t0 = now();
    if (s == WT_OK && (s = wt_slice(A, 1, 1, COLS, 2, &V)) == WT_OK && (s = wt_copy(V, &D)) == WT_OK)
        s = wt_context_sync(ctx);
    double t_copy = now() - t0;
    if (CHECK(s == WT_OK, "copy: %s %s", wt_status_string(s), wt_last_error()) &&
        CHECK(wt_tensor_read(D, r, (size_t)n * 2) == WT_OK, "read copy: %s", wt_last_error())) {
        int64_t bad = 0;
        for (int64_t i = 0; i < ROWS; i++)
            for (int64_t j = 0; j < COLS / 2; j++)
                bad += r[i * (COLS / 2) + j] != ha[i * COLS + 2 * j + 1];
        CHECK(bad == 0, "copy: %lld wrong elements", (long long)bad);
    }

    /* sum of everything (partial sums) and row sums (kept axis split) */
    t0 = now();
    if (s == WT_OK && (s = wt_sum(C, 0, NULL, false, &S)) == WT_OK) s = wt_context_sync(ctx);
    double t_sum = now() - t0;
    float total = 0;
    if (CHECK(s == WT_OK, "sum: %s %s", wt_status_string(s), wt_last_error()) &&
        CHECK(wt_tensor_read(S, &total, 4) == WT_OK, "read sum")) {
        double ref = 0, mag = 0;
        for (int64_t i = 0; i < n; i++) ref += (double)ha[i] + hb[i], mag += fabs((double)ha[i] + hb[i]);
        CHECK(fabs(total - ref) <= 1e-5 * mag, "sum %.9g, reference %.9g", total, ref);
    }
    int axis = 1;
    if (s == WT_OK && (s = wt_max(A, 1, &axis, false, &R)) == WT_OK) s = wt_context_sync(ctx);
    if (CHECK(s == WT_OK, "row max: %s %s", wt_status_string(s), wt_last_error()) &&
        CHECK(wt_tensor_read(R, r, ROWS * 4) == WT_OK, "read row max")) {
        int64_t bad = 0;
        for (int64_t i = 0; i < ROWS; i++) {
            float m = -INFINITY;
            for (int64_t j = 0; j < COLS; j++) m = fmaxf(m, ha[i * COLS + j]);
            bad += r[i] != m;
        }
        CHECK(bad == 0, "row max: %lld wrong rows", (long long)bad);
    }
    printf("add %.3f s, strided copy %.3f s, sum of all %.3f s (140 MB operands, %s)\n", t_add,
           t_copy, t_sum, test_backend_name(b));
    wt_tensor_release(A); wt_tensor_release(B); wt_tensor_release(C); wt_tensor_release(V);
    wt_tensor_release(D); wt_tensor_release(S); wt_tensor_release(R);
    wt_context_destroy(ctx);
    free(ha); free(hb); free(r);
    return test_summary(run.prefix);
}
