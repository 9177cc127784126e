/* The decode products on the CPU backend against the host's memory read
 * bandwidth, in one process: y = W x for a weight W [N, K] in f32, f16,
 * Q8_0, Q4_0, Q4_K and Q6_K, each rotating through copies of the weight
 * that together exceed the caches (at least `MiB`, default 512), against
 * a plain read of a buffer of that size by the same threads. Every figure
 * is the best of `rounds` rounds (default 5), each round timing one pass
 * over all copies: on a shared machine other processes only ever make a
 * pass slower, so the best pass is the one closest to an idle machine.
 * Beside the wall clock, each line gives the rate per second of this
 * process's CPU time (GB per CPU-second): with one thread, the speed of
 * that thread while it runs, which other processes taking turns on the
 * cores change far less than the wall clock (run with
 * OMP_WAIT_POLICY=passive so that waiting threads do not spin).
 *
 *   cc -O3 -march=native -fopenmp -Iinclude bench/cpu_decode_gemv.c \
 *      -Lbuild -lwebtensor -Wl,-rpath,$PWD/build -o cpu_decode_gemv
 *   ./cpu_decode_gemv [N K [MiB [rounds [threads]]]]     (4096 4096 512 5 0)
 */
#define _POSIX_C_SOURCE 200809L
#include "webtensor.h"

#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint8_t next_byte(void)
{
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return (uint8_t)((rng * 0x2545F4914F6CDD1Dull) >> 56);
}

/* kind: 0 f32, 1 f16, else a wt_quant_type */
static const char *kind_name(int kind)
{
    switch (kind) {
    case 0: return "f32";
    case 1: return "f16";
    case WT_QUANT_Q8_0: return "Q8_0";
    case WT_QUANT_Q4_0: return "Q4_0";
    case WT_QUANT_Q4_K: return "Q4_K";
    default: return "Q6_K";
    }
}

static double weight_bytes(int kind, int64_t n, int64_t k)
{
    const double e = (double)n * (double)k;
    switch (kind) {
    case 0: return 4 * e;
    case 1: return 2 * e;
    case WT_QUANT_Q8_0: return e / 32 * 34;
    case WT_QUANT_Q4_0: return e / 32 * 18;
    case WT_QUANT_Q4_K: return e / 256 * 144;
    default: return e / 256 * 210;
    }
}

static wt_status make_weight(wt_context *ctx, int kind, int64_t n, int64_t k, wt_tensor **out)
{
    if (kind <= 1) {
        const int64_t shape[2] = {n, k};
        float *h = malloc(sizeof(float) * (size_t)(n * k));
        if (!h) return WT_ERR_OUT_OF_MEMORY;
        for (int64_t i = 0; i < n * k; i++) h[i] = (float)next_byte() / 128.0f - 1.0f;
        wt_tensor *t = NULL;
        wt_status st = wt_tensor_from_data(ctx, WT_F32, 2, shape, h, &t);
        free(h);
        if (st != WT_OK || kind == 0) {
            *out = t;
            return st;
        }
        st = wt_cast(t, WT_F16, out);
        wt_tensor_release(t);
        return st;
    }
    const int be = kind == WT_QUANT_Q4_K || kind == WT_QUANT_Q6_K ? 256 : 32;
    const int bb = (int)(weight_bytes(kind, 1, be));
    const int64_t blocks = n * (k / be);
    uint8_t *h = malloc((size_t)(blocks * bb));
    if (!h) return WT_ERR_OUT_OF_MEMORY;
    for (int64_t i = 0; i < blocks * bb; i++) h[i] = next_byte();
    for (int64_t b = 0; b < blocks; b++) { /* scales 2^-7 (f16 0x2000) */
        uint8_t *blk = h + b * bb + (kind == WT_QUANT_Q6_K ? 208 : 0);
        blk[0] = 0x00, blk[1] = 0x20;
        if (kind == WT_QUANT_Q4_K) blk[2] = 0x00, blk[3] = 0x20;
    }
    wt_status st = wt_quant_from_blocks(ctx, (wt_quant_type)kind, n, k, h, (size_t)(blocks * bb), out);
    free(h);
    return st;
}

/* One product of the kind; the result is released. */
static wt_status product(int kind, const wt_tensor *w, const wt_tensor *x, const wt_tensor *xh)
{
    wt_tensor *y = NULL;
    wt_status st = kind == 0   ? wt_linear(x, w, NULL, &y)
                   : kind == 1 ? wt_linear(xh, w, NULL, &y)
                               : wt_linear_quant(x, w, (wt_quant_type)kind, NULL, &y);
    wt_tensor_release(y);
    return st;
}

static double read_pass(const float *buf, size_t n, double *sink, double *cpu)
{
    const double t0 = now_s(), c0 = cpu_s();
    double total = 0;
#pragma omp parallel for reduction(+ : total)
    for (size_t c = 0; c < n / 1024; c++) {
        float acc[16] = {0};
        const float *p = buf + c * 1024;
        for (int i = 0; i < 1024; i += 16)
            for (int l = 0; l < 16; l++) acc[l] += p[i + l];
        float s = 0;
        for (int l = 0; l < 16; l++) s += acc[l];
        total += s;
    }
    *sink += total;
    *cpu = cpu_s() - c0;
    return now_s() - t0;
}

int main(int argc, char **argv)
{
    const int64_t n = argc > 2 ? atol(argv[1]) : 4096, k = argc > 2 ? atol(argv[2]) : 4096;
    const double mib = argc > 3 ? atof(argv[3]) : 512;
    const int rounds = argc > 4 ? atoi(argv[4]) : 5, threads = argc > 5 ? atoi(argv[5]) : 0;
    if (threads > 0) omp_set_num_threads(threads);
    wt_context_options o;
    wt_context_options_init(&o);
    o.backend = WT_BACKEND_CPU;
    o.num_threads = threads;
    wt_context *ctx = NULL;
    if (wt_context_create(&o, &ctx) != WT_OK) {
        fprintf(stderr, "context: %s\n", wt_last_error());
        return 1;
    }
    const size_t rn = (size_t)(mib * 1024 * 1024 / sizeof(float));
    float *buf = malloc(rn * sizeof(float));
    if (!buf) return 1;
#pragma omp parallel for
    for (size_t i = 0; i < rn; i++) buf[i] = (float)(i & 7);
    double sink = 0, best_read = 1e30, best_read_cpu = 1e30;
    for (int r = 0; r < rounds; r++) {
        double c = 0;
        const double t = read_pass(buf, rn, &sink, &c);
        if (t < best_read) best_read = t;
        if (c < best_read_cpu) best_read_cpu = c;
    }
    const double read_gbs = (double)(rn * sizeof(float)) / best_read / 1e9;
    const double read_cpu = (double)(rn * sizeof(float)) / best_read_cpu / 1e9;
    free(buf);
    printf("N x K = %lld x %lld, threads %d, rotating >= %.0f MiB, best of %d passes\n", (long long)n, (long long)k,
           omp_get_max_threads(), mib, rounds);
    printf("read %.0f MiB: %.2f GB/s, %.2f GB per CPU-second (checksum %g)\n", mib, read_gbs, read_cpu, sink);
    const int64_t xs[2] = {1, k};
    wt_tensor *x = NULL, *xh = NULL;
    if (wt_tensor_full(ctx, WT_F32, 2, xs, 0.5, &x) != WT_OK || wt_cast(x, WT_F16, &xh) != WT_OK) return 1;
    const int kinds[6] = {0, 1, WT_QUANT_Q8_0, WT_QUANT_Q4_0, WT_QUANT_Q4_K, WT_QUANT_Q6_K};
    for (int ki = 0; ki < 6; ki++) {
        const int kind = kinds[ki];
        const double wb = weight_bytes(kind, n, k);
        int copies = (int)(mib * 1024 * 1024 / wb + 0.999);
        if (copies < 1) copies = 1;
        wt_tensor **w = calloc((size_t)copies, sizeof *w);
        wt_status st = w ? WT_OK : WT_ERR_OUT_OF_MEMORY;
        for (int c = 0; c < copies && st == WT_OK; c++) st = make_weight(ctx, kind, n, k, &w[c]);
        if (st == WT_OK) st = product(kind, w[0], x, xh);
        double best = 1e30, best_cpu = 1e30;
        for (int r = 0; r < rounds && st == WT_OK; r++) {
            const double t0 = now_s(), c0 = cpu_s();
            for (int c = 0; c < copies && st == WT_OK; c++) st = product(kind, w[c], x, xh);
            if (st == WT_OK) st = wt_context_sync(ctx);
            const double t = (now_s() - t0) / copies, tc = (cpu_s() - c0) / copies;
            if (t < best) best = t;
            if (tc < best_cpu) best_cpu = tc;
        }
        if (st != WT_OK)
            printf("%-5s failed: %s\n", kind_name(kind), wt_last_error());
        else
            printf("%-5s %8.1f MB x %3d: %8.3f ms, %6.2f GB/s = %3.0f%% of the read; %6.2f GB per CPU-second = %3.0f%%\n",
                   kind_name(kind), wb / 1e6, copies, best * 1e3, wb / best / 1e9, 100.0 * wb / best / 1e9 / read_gbs,
                   wb / best_cpu / 1e9, 100.0 * wb / best_cpu / 1e9 / read_cpu);
        for (int c = 0; w && c < copies; c++) wt_tensor_release(w[c]);
        free(w);
    }
    wt_tensor_release(x);
    wt_tensor_release(xh);
    wt_context_destroy(ctx);
    return 0;
}
