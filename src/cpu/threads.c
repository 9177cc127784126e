/* The CPU backend's thread count when the caller leaves it to the library
 * (wt_context_options.num_threads 0, WT_NUM_THREADS unset): the cores that
 * other processes leave free, re-measured as the program runs.
 *
 * Why not one thread per core: an OpenMP parallel region ends in a
 * barrier, and libgomp's idle workers spin before they sleep. When another
 * process keeps a core busy, the worker placed on that core waits for the
 * scheduler's time slice while the others spin at the barrier, so every
 * region costs milliseconds: a small training step ran 25-35x slower with
 * a thread per core than with one thread. The spinning can only be turned
 * off from the environment before the program starts (GOMP_SPINCOUNT,
 * OMP_WAIT_POLICY), and libgomp's dynamic mode follows the 15-minute load
 * average, which counts this process's own threads. So the library counts
 * the busy time of the cores it may run on (Linux: /proc/stat, the CPUs of
 * its affinity mask), takes away its own CPU time, and runs as many
 * threads as there are cores left, at least one, re-measured every
 * LOAD_WINDOW_S while ops run. Elsewhere it keeps one thread per core. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_ISSET */
#endif
#include "cpu/cpu.h"
#include "cpu/blas.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__) && defined(_OPENMP)
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#define WT_LOAD_AWARE 1
#endif

#define LOAD_WINDOW_S 0.1

static int cores(void)
{
#ifdef _OPENMP
    const int n = omp_get_num_procs();
    return n > 0 ? n : 1;
#else
    return 1;
#endif
}

#ifdef WT_LOAD_AWARE

static atomic_int chosen;        /* 0 until the first measurement */
static _Atomic double next_look; /* monotonic seconds of the next measurement */
static pthread_mutex_t measure_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    bool have;
    double wall, self, busy; /* seconds: monotonic, this process's CPU, busy CPU of the mask */
} last;

static double clock_s(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0) return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Busy seconds so far of the CPUs this process may run on, from
 * /proc/stat's per-CPU lines (user nice system idle iowait irq softirq
 * steal, in clock ticks); false when unreadable. */
static bool busy_seconds(double *out)
{
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof mask, &mask) != 0) return false;
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return false;
    const long hz = sysconf(_SC_CLK_TCK);
    char line[512];
    unsigned long long busy = 0;
    int seen = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "cpu", 3) != 0) break; /* the CPU lines come first */
        int cpu;
        unsigned long long v[8] = {0};
        if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2], &v[3], &v[4],
                   &v[5], &v[6], &v[7]) < 5)
            continue; /* the total line ("cpu  ...") */
        if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &mask)) continue;
        busy += v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
        seen++;
    }
    fclose(f);
    if (seen == 0 || hz <= 0) return false;
    *out = (double)busy / (double)hz;
    return true;
}

static int clamp_threads(double free_cores, int n)
{
    /* A core counts as free when others leave most of it idle: a thread
     * on a core that is a quarter busy still waits at barriers. */
    int t = (int)(free_cores + 0.25);
    return t < 1 ? 1 : t > n ? n : t;
}

static void measure(double now)
{
    const int n = cores();
    double busy, self = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    if (!busy_seconds(&busy)) {
        atomic_store(&chosen, n);
        atomic_store(&next_look, now + 3600.0); /* no /proc: a thread per core */
        return;
    }
    if (!last.have) {
        /* The first look has no window yet: the 1-minute load average
         * stands in (this process has not computed much yet). */
        double load[1];
        const int t = getloadavg(load, 1) == 1 ? clamp_threads(n - load[0], n) : n;
        atomic_store(&chosen, t);
    } else {
        const double dt = now - last.wall;
        double others = ((busy - last.busy) - (self - last.self)) / dt;
        if (others < 0) others = 0;
        atomic_store(&chosen, clamp_threads(n - others, n));
    }
    last.have = true;
    last.wall = now, last.self = self, last.busy = busy;
    atomic_store(&next_look, now + LOAD_WINDOW_S);
}

int cpu_auto_threads(void)
{
    const double now = clock_s(CLOCK_MONOTONIC_COARSE);
    int t = atomic_load(&chosen);
    if (t > 0 && now < atomic_load(&next_look)) return t;
    /* One thread measures; the others go on with the last choice. */
    if (t > 0 ? pthread_mutex_trylock(&measure_lock) != 0 : pthread_mutex_lock(&measure_lock) != 0)
        return t > 0 ? t : cores();
    if (atomic_load(&chosen) == 0 || now >= atomic_load(&next_look)) measure(now);
    t = atomic_load(&chosen);
    pthread_mutex_unlock(&measure_lock);
    return t;
}

#else

int cpu_auto_threads(void)
{
    return cores();
}

#endif

/* OpenBLAS's own thread pool (process-wide): matmul.c keeps it at one
 * thread and splits products over the context's OpenMP threads instead.
 * Set only when it changes. */
void cpu_blas_threads(int n)
{
#if defined(WT_HAVE_CBLAS) && defined(OPENBLAS_VERSION)
    static atomic_int current;
    if (atomic_exchange(&current, n) != n) openblas_set_num_threads(n);
#else
    (void)n;
#endif
}
