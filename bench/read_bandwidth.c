/* Plain memory read bandwidth of the host: every thread sums its share of a
 * buffer far larger than the caches, in wide vectors, and the best of
 * several passes is reported in GB/s. The reference for the CPU
 * quantised GEMV's bytes per second (bench/RESULTS.md).
 *
 *   cc -O3 -march=native -fopenmp bench/read_bandwidth.c -o read_bandwidth
 *   ./read_bandwidth [MiB]          (default 512)
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    const size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 512;
    const size_t n = mib * 1024 * 1024 / sizeof(float);
    float *buf = aligned_alloc(64, n * sizeof(float));
    if (!buf) return 1;
#pragma omp parallel for
    for (size_t i = 0; i < n; i++) buf[i] = (float)(i & 7);
    double best = 1e30, sink = 0;
    for (int pass = 0; pass < 8; pass++) {
        const double t0 = now_s();
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
        const double t = now_s() - t0;
        if (t < best) best = t;
        sink += total;
    }
    printf("read bandwidth: %.2f GB/s (%zu MiB, %d threads, best of 8; checksum %g)\n",
           (double)(n * sizeof(float)) / best / 1e9, mib, omp_get_max_threads(), sink);
    free(buf);
    return 0;
}
