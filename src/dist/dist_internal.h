/* What the parts of the distributed layer share: the group, its waits
 * with deadlines, its agreement rounds and its buckets (dist.c), used by
 * the collectives (dist.c) and the gradient synchroniser (grad_sync.c). */
#ifndef WT_DIST_INTERNAL_H
#define WT_DIST_INTERNAL_H

#include "webtensor_dist.h"

#define MSG_BYTES 512
/* MPI counts are int: larger messages go in pieces of this many bytes. */
#define MAX_PIECE_BYTES ((int64_t)1 << 30)

struct wt_dist {
    MPI_Comm comm;
    int rank, size;
    int local_rank, local_size;
    bool finalize;  /* MPI was initialised by wt_dist_init */
    bool broken;    /* a timeout or an MPI error: no further collectives */
    bool timed_out;
    char broken_msg[MSG_BYTES];
    double timeout;
    int64_t bucket_bytes;
    wt_dist_pack pack;
    bool f16;          /* reduce_f16: buckets travel as f16 */
    MPI_Op f16_sum;    /* the ranks' halves added (f16 mode) */
    wt_dist_stats stats;
    void *host;       /* the host staging of the collectives, reused */
    size_t host_cap;
    wt_dist_grad_sync **syncs; /* the live synchronisers, in creation order */
    int nsyncs, syncs_cap;
};

typedef struct waitset {
    MPI_Request *reqs; /* requests to keep progressing while waiting */
    double *done_at;   /* when each was seen complete (MPI_Wtime) */
    int n;
} waitset;

typedef struct bucket {
    int first, last;   /* tensors [first, last) */
    int64_t offset;    /* in floats, in the host buffer */
    int64_t count;     /* floats */
} bucket;

wt_status dist_failf(wt_status st, const char *fmt, ...);
/* An MPI error: the group is broken from now on. */
wt_status dist_mpi_fail(wt_dist *d, int code, const char *what);
int dist_progress(const waitset *ws);
wt_status dist_wait_request(wt_dist *d, MPI_Request *req, const waitset *ws, const char *what);
wt_status dist_wait_event(wt_dist *d, wt_event *e, const waitset *ws, const char *what);
int64_t dist_signature(int kind, int n, wt_tensor *const *ts);
/* The agreement round of every collective (dist.c's opening comment).
 * When it finds a failure, every synchroniser's step in progress is
 * abandoned first, on every rank alike (dist_grad_sync_abandon). */
wt_status dist_agree(wt_dist *d, wt_status local, const char *local_msg, int64_t signature, const char *what);
wt_status dist_usable(wt_dist *d, const char *what);
wt_status dist_check_tensors(const char *what, int n, wt_tensor *const *ts, bool f32_only, char *msg);
double dist_elapsed(double t0);
int dist_make_buckets(const wt_dist *d, int n, wt_tensor *const *tensors, bucket *bk);
/* Posts bucket b's reduction (MPI_SUM of floats, or of f16 halves in
 * f16 mode) in place in host + b->offset; an MPI error code. */
int dist_post_bucket(const wt_dist *d, MPI_Comm comm, float *host, const bucket *b, MPI_Request *req);
/* Multiplies bucket b's reduced values by scale (in f16 mode: each half
 * widened, multiplied in f32 and rounded back). */
void dist_scale_bucket(const wt_dist *d, float *host, const bucket *b, float scale);
/* Bytes of one element as the buckets move: 4, or 2 in f16 mode. */
int dist_elem_bytes(const wt_dist *d);

/* Writes bucket b's results (host + b->offset) into its tensors: on a GPU
 * (as wt_dist_pack says) one upload of the bucket, split on the device
 * into the tensors (exact copies) - one write of a few MB instead of one
 * per tensor; else one write per tensor. On failure, msg says why. */
wt_status dist_write_bucket(const wt_dist *d, wt_tensor *const *tensors, const bucket *b, const float *host, char *msg,
                            const char *what);
wt_status dist_read_bucket(const wt_dist *d, wt_tensor *const *tensors, const bucket *b, float *host, wt_event **ev,
                           char *msg, const char *what);

/* grad_sync.c: after a failed agreement round, brings s's reductions of
 * the step to the same point on every rank (the ranks may have posted
 * different numbers of buckets), waits for them and forgets the step.
 * Collective over d's communicator. */
wt_status dist_grad_sync_abandon(wt_dist_grad_sync *s);

#endif /* WT_DIST_INTERNAL_H */
