/* The training examples' --dist: data-parallel training over MPI with
 * libwebtensor_dist (include/webtensor_dist.h), under mpirun -np N. One
 * process is rank 0 of 1; a build without MPI refuses --dist. */
#ifndef WT_EXAMPLE_DIST_H
#define WT_EXAMPLE_DIST_H

#include <webtensor.h>
#ifdef WT_HAVE_DIST
#include <webtensor_dist.h>
#endif

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dist_group {
#ifdef WT_HAVE_DIST
    wt_dist *d;
    wt_dist_grad_sync *sync; /* dist_sync_begin's, when overlapping */
#endif
    int rank, size, local_rank; /* 0, 1, -1 without --dist */
    bool overlap;               /* --dist-overlap: reduce during backward (on by default) */
} dist_group;

/* 1 on success; 0 with a message. timeout: seconds a collective waits
 * for the other ranks (0: the library's default); pack: how allreduce
 * reads buckets back from a GPU, "auto", "never" or "always"
 * (wt_dist_pack; NULL: auto); f16: gradients reduced in f16
 * (wt_dist_options.reduce_f16). */
static inline int dist_start(bool on, double timeout, const char *pack, bool f16, dist_group *g)
{
    memset(g, 0, sizeof *g);
    g->size = 1;
    g->local_rank = -1;
    g->overlap = true;
    if (!on) return 1;
#ifdef WT_HAVE_DIST
    wt_dist_options o;
    wt_dist_options_init(&o);
    if (timeout > 0) o.timeout_seconds = timeout;
    o.reduce_f16 = f16;
    if (pack && strcmp(pack, "never") == 0) o.pack = WT_DIST_PACK_NEVER;
    else if (pack && strcmp(pack, "always") == 0) o.pack = WT_DIST_PACK_ALWAYS;
    else if (pack && strcmp(pack, "auto") != 0) {
        fprintf(stderr, "error: --dist-pack is auto, never or always\n");
        return 0;
    }
    if (wt_dist_init(MPI_COMM_WORLD, &o, &g->d) != WT_OK) {
        fprintf(stderr, "error: --dist: %s\n", wt_last_error());
        return 0;
    }
    g->rank = wt_dist_rank(g->d);
    g->size = wt_dist_size(g->d);
    g->local_rank = wt_dist_local_rank(g->d);
    return 1;
#else
    (void)timeout, (void)pack, (void)f16;
    fprintf(stderr, "error: --dist: this build has no MPI (libwebtensor_dist was not built)\n");
    return 0;
#endif
}

static inline void dist_stop(dist_group *g)
{
#ifdef WT_HAVE_DIST
    wt_dist_grad_sync_destroy(g->sync);
    g->sync = NULL;
    wt_dist_destroy(g->d);
    g->d = NULL;
#endif
    (void)g;
}

static inline bool dist_on(const dist_group *g)
{
#ifdef WT_HAVE_DIST
    return g->d != NULL;
#else
    (void)g;
    return false;
#endif
}

/* The collectives the examples use; WT_OK at once on a single process. */
static inline wt_status dist_broadcast(dist_group *g, int n, wt_tensor *const *ts)
{
#ifdef WT_HAVE_DIST
    if (g->d) return wt_dist_broadcast(g->d, n, ts, 0);
#endif
    (void)g, (void)n, (void)ts;
    return WT_OK;
}

static inline wt_status dist_mean(dist_group *g, int n, wt_tensor *const *ts)
{
#ifdef WT_HAVE_DIST
    if (g->d) return wt_dist_allreduce(g->d, n, ts, WT_DIST_MEAN);
#endif
    (void)g, (void)n, (void)ts;
    return WT_OK;
}

/* With --dist and overlap on: the mean of the n parameters' gradients and
 * of a 0-d loss (slot n, given each step with dist_sync_give_loss) starts
 * during wt_backward and ends in dist_sync_finish (wt_dist_grad_sync);
 * the same buckets and bits as dist_mean on the same list. WT_OK and
 * nothing to do otherwise. Collective. */
static inline wt_status dist_sync_begin(dist_group *g, wt_context *ctx, int n, wt_tensor *const *params)
{
#ifdef WT_HAVE_DIST
    if (!g->d || !g->overlap) return WT_OK;
    wt_tensor **list = malloc((size_t)(n + 1) * sizeof *list), *loss = NULL;
    float zero = 0;
    wt_status st = list ? wt_tensor_from_data(ctx, WT_F32, 0, NULL, &zero, &loss)
                        : wt_set_last_error(WT_ERR_OUT_OF_MEMORY, "out of host memory");
    if (list) {
        memcpy(list, params, (size_t)n * sizeof *list);
        list[n] = loss;
    }
    /* A failure here is every rank's: the creation is collective. */
    st = wt_dist_grad_sync_create(g->d, n + 1, list, WT_DIST_MEAN, &g->sync);
    wt_tensor_release(loss);
    free(list);
    return st;
#else
    (void)g, (void)ctx, (void)n, (void)params;
    return WT_OK;
#endif
}

static inline bool dist_overlapping(const dist_group *g)
{
#ifdef WT_HAVE_DIST
    return g->sync != NULL;
#else
    (void)g;
    return false;
#endif
}

static inline wt_status dist_sync_give_loss(dist_group *g, int n, wt_tensor *loss)
{
#ifdef WT_HAVE_DIST
    if (g->sync) return wt_dist_grad_sync_give(g->sync, n, loss);
#endif
    (void)g, (void)n, (void)loss;
    return WT_OK;
}

static inline wt_status dist_sync_finish(dist_group *g)
{
#ifdef WT_HAVE_DIST
    if (g->sync) return wt_dist_grad_sync_finish(g->sync);
#endif
    (void)g;
    return WT_OK;
}

/* This rank's failure, told to every rank (they stop with its message). */
static inline wt_status dist_fail(dist_group *g, const char *message)
{
#ifdef WT_HAVE_DIST
    if (g->d) return wt_dist_fail(g->d, message);
#endif
    (void)g;
    return wt_set_last_error(WT_ERR_BACKEND, message);
}

/* 1 if every tensor holds the same bits on every rank (all of them packed
 * into one, gathered from all ranks and compared); 0 with a message. */
static inline int dist_identical(dist_group *g, int n, wt_tensor *const *ts)
{
#ifdef WT_HAVE_DIST
    if (!g->d) return 1;
    wt_tensor **flat = calloc((size_t)n, sizeof *flat), *packed = NULL, *all = NULL;
    /* Off the tape: the parameters require grad. */
    wt_context *ctx = n > 0 ? wt_tensor_context(ts[0]) : NULL;
    bool nograd = ctx && wt_no_grad_begin(ctx) == WT_OK;
    int same = flat != NULL && nograd;
    for (int i = 0; same && i < n; i++) same = wt_flatten(ts[i], 0, -1, &flat[i]) == WT_OK;
    if (same) same = wt_concat(n, flat, 0, &packed) == WT_OK;
    if (nograd) wt_no_grad_end(ctx);
    size_t bytes = packed ? (size_t)wt_tensor_numel(packed) * wt_dtype_size(wt_tensor_dtype(packed)) : 0;
    unsigned char *host = same ? malloc(bytes * (size_t)g->size + 1) : NULL;
    same = host && wt_dist_allgather(g->d, packed, &all) == WT_OK &&
           wt_tensor_read(all, host, bytes * (size_t)g->size) == WT_OK;
    if (!same) fprintf(stderr, "error: comparing parameters across ranks: %s\n", wt_last_error());
    for (int r = 1; same && r < g->size; r++)
        if (memcmp(host, host + bytes * (size_t)r, bytes) != 0) {
            fprintf(stderr, "error: the parameters differ between rank 0 and rank %d\n", r);
            same = 0;
        }
    free(host);
    wt_tensor_release(all);
    wt_tensor_release(packed);
    for (int i = 0; flat && i < n; i++) wt_tensor_release(flat[i]);
    free(flat);
    return same;
#else
    (void)g, (void)n, (void)ts;
    return 1;
#endif
}

/* Rank 0 prints where the time of the collectives went over `steps` steps
 * of `secs` seconds. */
static inline void dist_report(dist_group *g, int steps, double secs)
{
#ifdef WT_HAVE_DIST
    wt_dist_stats s;
    wt_dist_stats_init(&s);
    if (!g->d || wt_dist_get_stats(g->d, &s) != WT_OK || g->rank != 0 || steps <= 0) return;
    double per = 1e3 / steps;
    printf("dist: %d ranks, %.1f ms/step: collectives %.2f ms/step (waiting for the gradients and device->host "
           "%.2f, host->device %.2f, MPI reduction %.2f of which %.2f not overlapped), %.1f MB reduced/step",
           g->size, 1e3 * secs / steps, s.total_seconds * per, s.read_seconds * per, s.write_seconds * per,
           s.mpi_seconds * per, s.mpi_wait_seconds * per, s.bytes_reduced / 1e6 / steps);
    if (s.buckets > 0)
        printf("; overlapped with backward: %llu of %llu buckets posted before backward returned",
               (unsigned long long)s.buckets_early, (unsigned long long)s.buckets);
    printf("\n");
#else
    (void)g, (void)steps, (void)secs;
#endif
}

static inline void dist_reset_stats(dist_group *g)
{
#ifdef WT_HAVE_DIST
    if (g->d) wt_dist_reset_stats(g->d);
#endif
    (void)g;
}

#endif /* WT_EXAMPLE_DIST_H */
