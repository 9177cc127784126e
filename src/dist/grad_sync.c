/* The gradient synchroniser (wt_dist_grad_sync_* in webtensor_dist.h):
 * wt_dist_allreduce's buckets, each started from inside wt_backward as
 * soon as its gradients are final.
 *
 * A step: the parameters' gradient-ready hooks give their slots; a bucket
 * whose slots are all given starts its device read at once; buckets are
 * posted to MPI_Iallreduce in a fixed order, the last bucket first, each
 * as soon as its read is done and the ones before it in that order are
 * posted (MPI wants collectives in the same order on every rank; the
 * order in which reads finish is not). The hooks never block: they poll.
 * Finish gives the slots no hook gave, holds an agreement round (so that
 * a rank that failed instead of finishing stops everyone), waits for the
 * rest and writes back.
 *
 * The reductions run on a communicator of the synchroniser's own, so that
 * a rank that fails before posting its buckets still meets the others in
 * the group's agreement round (on the group's communicator) instead of
 * leaving them waiting on a reduction. Every rank that learns of the
 * failure there then runs dist_grad_sync_abandon: the ranks agree on how
 * many buckets the furthest rank posted, each posts the missing ones with
 * zeros, and all wait for them - so no reduction is left half-matched and
 * the group stays usable. */
#define _POSIX_C_SOURCE 200809L
#include "dist/dist_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct slot_ref {
    wt_dist_grad_sync *s;
    int i;
} slot_ref;

struct wt_dist_grad_sync {
    wt_dist *d;
    MPI_Comm comm;
    wt_dist_reduce op;
    int n, nb;
    wt_tensor **tensors; /* as created (one reference each) */
    bool *hooked;        /* slot i is a parameter whose hook gives it */
    slot_ref *refs;      /* the hooks' user pointers */
    int *bucket_of;
    bucket *bk;
    float *host;
    int64_t total;
    /* The step in progress. */
    wt_tensor **given;   /* slot i's tensor (one reference), written back by finish */
    int *ngiven;         /* per bucket */
    bool *started;       /* per bucket: its read was started */
    bool *zeros;         /* per bucket: this rank sends zeros (its read failed) */
    wt_event **ev;       /* per tensor: its read (of a packed bucket: ev[first]) */
    MPI_Request *reqs;   /* per bucket */
    double *done_at;     /* per bucket */
    int posted;          /* buckets posted, in post order */
    int early;           /* of which before finish */
    double first_post;
    bool made;           /* the step's state is set (reset_step ran) */
    wt_status local;     /* this rank's first failure of the step */
    char local_msg[MSG_BYTES];
};

/* Post order: the last bucket first. */
static int post_bucket_at(const wt_dist_grad_sync *s, int p) { return s->nb - 1 - p; }

static void note_failure(wt_dist_grad_sync *s, wt_status st, const char *msg)
{
    if (s->local != WT_OK) return;
    s->local = st;
    snprintf(s->local_msg, sizeof s->local_msg, "%s", msg);
}

static void start_bucket(wt_dist_grad_sync *s, int k)
{
    char msg[MSG_BYTES] = "";
    s->started[k] = true;
    wt_status st = dist_read_bucket(s->d, s->given, &s->bk[k], s->host, s->ev, msg, "wt_dist_grad_sync");
    if (st != WT_OK) {
        s->zeros[k] = true;
        note_failure(s, st, msg);
    }
}

/* Bucket k's reads: finished? Without `block`, false at once while one is
 * still running; with it, waits (deadline, MPI progressing). A read that
 * failed makes the bucket zeros. WT_OK unless the group broke. */
static wt_status collect_bucket(wt_dist_grad_sync *s, int k, bool block, bool *ready)
{
    const bucket *b = &s->bk[k];
    waitset ws = {s->reqs, s->done_at, s->nb};
    *ready = false;
    for (int i = b->first; !block && i < b->last; i++) {
        bool done = true;
        if (s->ev[i] && (wt_event_query(s->ev[i], &done) != WT_OK || !done)) {
            if (!done) return WT_OK;
        }
    }
    for (int i = b->first; i < b->last; i++) {
        if (!s->ev[i]) continue;
        wt_status st = block ? dist_wait_event(s->d, s->ev[i], &ws, "wt_dist_grad_sync_finish") : wt_event_wait(s->ev[i]);
        if (s->d->broken) return dist_failf(WT_ERR_BACKEND, "%s", s->d->broken_msg);
        if (st != WT_OK) {
            char msg[MSG_BYTES];
            snprintf(msg, sizeof msg, "wt_dist_grad_sync: reading tensors[%d]: %s", i, wt_last_error());
            note_failure(s, st, msg);
            s->zeros[k] = true;
        }
        wt_event_destroy(s->ev[i]);
        s->ev[i] = NULL;
    }
    *ready = true;
    return WT_OK;
}

static wt_status post_next(wt_dist_grad_sync *s)
{
    int k = post_bucket_at(s, s->posted);
    const bucket *b = &s->bk[k];
    if (s->zeros[k]) memset(s->host + b->offset, 0, (size_t)b->count * sizeof(float));
    int rc = dist_post_bucket(s->d, s->comm, s->host, b, &s->reqs[k]);
    if (rc != MPI_SUCCESS) return dist_mpi_fail(s->d, rc, "wt_dist_grad_sync");
    if (s->posted == 0) s->first_post = MPI_Wtime();
    s->posted++;
    return WT_OK;
}

/* Posts every bucket that can go now, in order, without waiting. */
static void pump(wt_dist_grad_sync *s)
{
    while (!s->d->broken && s->posted < s->nb) {
        int k = post_bucket_at(s, s->posted);
        bool ready = false;
        if (!s->started[k] || collect_bucket(s, k, false, &ready) != WT_OK || !ready) break;
        if (post_next(s) != WT_OK) break;
    }
    waitset ws = {s->reqs, s->done_at, s->nb};
    if (!s->d->broken) {
        int rc = dist_progress(&ws);
        if (rc != MPI_SUCCESS) dist_mpi_fail(s->d, rc, "wt_dist_grad_sync");
    }
}

static bool same_shape(const wt_tensor *a, const wt_tensor *b)
{
    int nd = wt_tensor_ndim(a);
    return nd == wt_tensor_ndim(b) &&
           (nd == 0 || memcmp(wt_tensor_shape(a), wt_tensor_shape(b), (size_t)nd * sizeof(int64_t)) == 0);
}

static wt_status give(wt_dist_grad_sync *s, int i, wt_tensor *t)
{
    char msg[MSG_BYTES];
    wt_status st = WT_OK;
    if (s->given[i]) {
        snprintf(msg, sizeof msg,
                 "wt_dist_grad_sync: tensors[%d] was given twice in one step (one backward pass per step: "
                 "accumulate gradients with wt_dist_allreduce instead)",
                 i);
        st = WT_ERR_INVALID_ARGUMENT;
    } else if (wt_tensor_dtype(t) != WT_F32 || !wt_tensor_is_contiguous(t) || !same_shape(t, s->tensors[i])) {
        snprintf(msg, sizeof msg, "wt_dist_grad_sync: the tensor given for tensors[%d] is not f32, contiguous and of its shape", i);
        st = WT_ERR_INVALID_ARGUMENT;
    }
    if (st != WT_OK) {
        note_failure(s, st, msg);
        return wt_set_last_error(st, msg);
    }
    wt_tensor_retain(t);
    s->given[i] = t;
    int k = s->bucket_of[i];
    if (++s->ngiven[k] == s->bk[k].last - s->bk[k].first) start_bucket(s, k);
    pump(s);
    return WT_OK;
}

static void on_grad_ready(wt_tensor *grad, void *user)
{
    slot_ref *r = user;
    if (!r->s->d->broken) give(r->s, r->i, grad);
}

/* Forgets the step (every reduction complete, every read waited for). */
static void reset_step(wt_dist_grad_sync *s)
{
    for (int i = 0; i < s->n; i++) {
        wt_event_destroy(s->ev[i]);
        s->ev[i] = NULL;
        wt_tensor_release(s->given[i]);
        s->given[i] = NULL;
    }
    for (int k = 0; k < s->nb; k++) {
        s->ngiven[k] = 0;
        s->started[k] = s->zeros[k] = false;
        s->reqs[k] = MPI_REQUEST_NULL;
        s->done_at[k] = 0;
    }
    s->posted = s->early = 0;
    s->made = true;
    s->local = WT_OK;
    s->local_msg[0] = '\0';
}

/* Waits for every posted reduction and every started read. */
static wt_status drain(wt_dist_grad_sync *s, const char *what)
{
    waitset ws = {s->reqs, s->done_at, s->nb};
    for (int k = 0; k < s->nb; k++) {
        bool ready;
        if (s->started[k] && collect_bucket(s, k, true, &ready) != WT_OK) return WT_ERR_BACKEND;
        if (s->reqs[k] != MPI_REQUEST_NULL) {
            wt_status st = dist_wait_request(s->d, &s->reqs[k], &ws, what);
            if (st != WT_OK) return st;
        }
    }
    return WT_OK;
}

wt_status dist_grad_sync_abandon(wt_dist_grad_sync *s)
{
    const char *what = "wt_dist_grad_sync (abandoning the step)";
    wt_dist *d = s->d;
    int64_t mine = s->posted, most = 0;
    MPI_Request req;
    int rc = MPI_Iallreduce(&mine, &most, 1, MPI_INT64_T, MPI_MAX, d->comm, &req);
    if (rc != MPI_SUCCESS) return dist_mpi_fail(d, rc, what);
    wt_status st = dist_wait_request(d, &req, NULL, what);
    if (st != WT_OK) return st;
    while (s->posted < most) {
        int k = post_bucket_at(s, s->posted);
        bool ready;
        /* Its memory must be the host's before MPI touches it. */
        if (s->started[k] && (st = collect_bucket(s, k, true, &ready)) != WT_OK) return st;
        s->zeros[k] = true;
        if ((st = post_next(s)) != WT_OK) return st;
    }
    if ((st = drain(s, what)) != WT_OK) return st;
    reset_step(s);
    return WT_OK;
}

/* ------------------------------------------------------------ public API */

static void unregister(wt_dist_grad_sync *s)
{
    wt_dist *d = s->d;
    for (int i = 0; i < d->nsyncs; i++)
        if (d->syncs[i] == s) {
            memmove(&d->syncs[i], &d->syncs[i + 1], (size_t)(d->nsyncs - i - 1) * sizeof *d->syncs);
            d->nsyncs--;
            return;
        }
}

void wt_dist_grad_sync_destroy(wt_dist_grad_sync *s)
{
    if (!s) return;
    if (!s->d->broken && s->made) drain(s, "wt_dist_grad_sync_destroy");
    for (int i = 0; s->tensors && i < s->n; i++) {
        if (s->hooked && s->hooked[i]) wt_tensor_set_grad_ready_hook(s->tensors[i], NULL, NULL);
        wt_tensor_release(s->tensors[i]);
        if (s->ev && s->ev[i]) wt_event_destroy(s->ev[i]);
        if (s->given) wt_tensor_release(s->given[i]);
    }
    if (s->comm != MPI_COMM_NULL && !s->d->timed_out) MPI_Comm_free(&s->comm);
    unregister(s);
    free(s->tensors), free(s->hooked), free(s->refs), free(s->bucket_of), free(s->bk), free(s->host);
    free(s->given), free(s->ngiven), free(s->started), free(s->zeros), free(s->ev), free(s->reqs), free(s->done_at);
    free(s);
}

wt_status wt_dist_grad_sync_create(wt_dist *d, int n, wt_tensor *const *tensors, wt_dist_reduce op,
                                   wt_dist_grad_sync **out)
{
    const char *what = "wt_dist_grad_sync_create";
    if (out) *out = NULL;
    wt_status st = dist_usable(d, what);
    if (st != WT_OK) return st;
    char msg[MSG_BYTES] = "";
    wt_status local = dist_check_tensors(what, n, tensors, true, msg);
    if (local == WT_OK && !out) {
        snprintf(msg, sizeof msg, "%s: out is NULL", what);
        local = WT_ERR_INVALID_ARGUMENT;
    }
    if (local == WT_OK && n < 1) {
        snprintf(msg, sizeof msg, "%s: n is %d; at least one tensor", what, n);
        local = WT_ERR_INVALID_ARGUMENT;
    }
    if (local == WT_OK && op != WT_DIST_SUM && op != WT_DIST_MEAN) {
        snprintf(msg, sizeof msg, "%s: op %d is not WT_DIST_SUM or WT_DIST_MEAN", what, (int)op);
        local = WT_ERR_INVALID_ARGUMENT;
    }
    for (int i = 0; local == WT_OK && i < n; i++)
        if (wt_tensor_numel(tensors[i]) > INT_MAX) {
            snprintf(msg, sizeof msg, "%s: tensors[%d] has more than 2^31 - 1 elements (one MPI message)", what, i);
            local = WT_ERR_INVALID_ARGUMENT;
        }
    wt_dist_grad_sync *s = local == WT_OK ? calloc(1, sizeof *s) : NULL;
    if (local == WT_OK && s) {
        s->d = d;
        s->comm = MPI_COMM_NULL;
        s->op = op;
        s->n = n;
        size_t un = (size_t)n;
        s->tensors = calloc(un, sizeof *s->tensors);
        s->hooked = calloc(un, sizeof *s->hooked);
        s->refs = calloc(un, sizeof *s->refs);
        s->bucket_of = calloc(un, sizeof *s->bucket_of);
        s->bk = calloc(un, sizeof *s->bk);
        s->given = calloc(un, sizeof *s->given);
        s->ngiven = calloc(un, sizeof *s->ngiven);
        s->started = calloc(un, sizeof *s->started);
        s->zeros = calloc(un, sizeof *s->zeros);
        s->ev = calloc(un, sizeof *s->ev);
        s->reqs = calloc(un, sizeof *s->reqs);
        s->done_at = calloc(un, sizeof *s->done_at);
        for (int i = 0; i < n; i++) s->total += wt_tensor_numel(tensors[i]);
        s->host = malloc((size_t)(s->total > 0 ? s->total : 1) * sizeof(float));
    }
    bool have = s && s->tensors && s->hooked && s->refs && s->bucket_of && s->bk && s->given && s->ngiven &&
                s->started && s->zeros && s->ev && s->reqs && s->done_at && s->host;
    if (local == WT_OK && !have) {
        snprintf(msg, sizeof msg, "%s: out of host memory", what);
        local = WT_ERR_OUT_OF_MEMORY;
    }
    if (local == WT_OK) {
        s->nb = dist_make_buckets(d, n, tensors, s->bk);
        for (int k = 0; k < s->nb; k++)
            for (int i = s->bk[k].first; i < s->bk[k].last; i++) s->bucket_of[i] = k;
        reset_step(s);
        for (int i = 0; i < n; i++) {
            wt_tensor_retain(tensors[i]);
            s->tensors[i] = tensors[i];
        }
        for (int i = 0; local == WT_OK && i < n; i++) {
            if (!wt_tensor_requires_grad(tensors[i])) continue;
            s->refs[i] = (slot_ref){s, i};
            local = wt_tensor_set_grad_ready_hook(tensors[i], on_grad_ready, &s->refs[i]);
            if (local != WT_OK) snprintf(msg, sizeof msg, "%s: tensors[%d]: %s", what, i, wt_last_error());
            else s->hooked[i] = true;
        }
    }
    if (local == WT_OK && d->nsyncs == d->syncs_cap) {
        int cap = d->syncs_cap ? 2 * d->syncs_cap : 4;
        wt_dist_grad_sync **p = realloc(d->syncs, (size_t)cap * sizeof *p);
        if (p) d->syncs = p, d->syncs_cap = cap;
        else {
            snprintf(msg, sizeof msg, "%s: out of host memory", what);
            local = WT_ERR_OUT_OF_MEMORY;
        }
    }
    st = dist_agree(d, local, msg, dist_signature(5, local == WT_OK ? n : -1, local == WT_OK ? tensors : NULL), what);
    if (st == WT_OK) {
        MPI_Request req;
        int rc = MPI_Comm_idup(d->comm, &s->comm, &req);
        st = rc == MPI_SUCCESS ? dist_wait_request(d, &req, NULL, what) : dist_mpi_fail(d, rc, what);
        if (st == WT_OK && (rc = MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN)) != MPI_SUCCESS)
            st = dist_mpi_fail(d, rc, what);
    }
    if (st != WT_OK) {
        if (s) {
            char keep[MSG_BYTES];
            snprintf(keep, sizeof keep, "%s", wt_last_error());
            wt_dist_grad_sync_destroy(s);
            wt_set_last_error(st, keep);
        }
        return st;
    }
    d->syncs[d->nsyncs++] = s;
    *out = s;
    return WT_OK;
}

wt_status wt_dist_grad_sync_give(wt_dist_grad_sync *s, int i, wt_tensor *t)
{
    const char *what = "wt_dist_grad_sync_give";
    if (!s || !t) return dist_failf(WT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", what, s ? "t" : "s");
    if (i < 0 || i >= s->n) return dist_failf(WT_ERR_INVALID_ARGUMENT, "%s: i %d outside [0, %d)", what, i, s->n);
    wt_status st = dist_usable(s->d, what);
    return st != WT_OK ? st : give(s, i, t);
}

wt_status wt_dist_grad_sync_finish(wt_dist_grad_sync *s)
{
    const char *what = "wt_dist_grad_sync_finish";
    if (!s) return dist_failf(WT_ERR_INVALID_ARGUMENT, "%s: s is NULL", what);
    wt_dist *d = s->d;
    wt_status st = dist_usable(d, what);
    if (st != WT_OK) return st;
    double t_call = MPI_Wtime();
    int early = s->posted;
    /* The slots no hook gave. */
    for (int i = 0; i < s->n && s->local == WT_OK; i++) {
        if (s->given[i]) continue;
        char msg[MSG_BYTES];
        wt_tensor *g = NULL;
        if (!s->hooked[i]) {
            snprintf(msg, sizeof msg, "%s: tensors[%d] was not given this step (wt_dist_grad_sync_give)", what, i);
            note_failure(s, WT_ERR_INVALID_ARGUMENT, msg);
        } else if (wt_tensor_grad(s->tensors[i], &g) != WT_OK || !g) {
            snprintf(msg, sizeof msg, "%s: tensors[%d] (a parameter) has no gradient this step", what, i);
            note_failure(s, WT_ERR_INVALID_ARGUMENT, msg);
        } else {
            give(s, i, g);
        }
        wt_tensor_release(g);
    }
    /* A rank that failed - here, or in wt_dist_fail instead of this call -
     * stops every rank before anyone waits for reductions it will never
     * post; dist_agree then abandons the step everywhere. */
    char local_msg[MSG_BYTES]; /* dist_agree's abandoning resets the step's */
    snprintf(local_msg, sizeof local_msg, "%s", s->local_msg);
    st = dist_agree(d, s->local, local_msg, dist_signature(5, s->n, s->tensors), what);
    if (st != WT_OK) return st;
    waitset ws = {s->reqs, s->done_at, s->nb};
    while (s->posted < s->nb && !d->broken) {
        int k = post_bucket_at(s, s->posted);
        double t0 = MPI_Wtime();
        bool ready;
        st = collect_bucket(s, k, true, &ready);
        d->stats.read_seconds += dist_elapsed(t0);
        if (st != WT_OK || post_next(s) != WT_OK) break;
    }
    float scale = s->op == WT_DIST_MEAN ? 1.0f / (float)d->size : 1.0f;
    double last_done = s->first_post;
    for (int p = 0; p < s->nb && !d->broken; p++) {
        int k = post_bucket_at(s, p);
        if (s->reqs[k] != MPI_REQUEST_NULL) {
            double t0 = MPI_Wtime();
            st = dist_wait_request(d, &s->reqs[k], &ws, what);
            d->stats.mpi_wait_seconds += dist_elapsed(t0);
            if (st != WT_OK) break;
            s->done_at[k] = MPI_Wtime();
        }
        if (s->done_at[k] > last_done) last_done = s->done_at[k];
        if (s->local != WT_OK) continue;
        /* As wt_dist_allreduce: the float 1/size, the same bits everywhere. */
        double t1 = MPI_Wtime();
        dist_scale_bucket(d, s->host, &s->bk[k], scale);
        char msg[MSG_BYTES];
        wt_status w = dist_write_bucket(d, s->given, &s->bk[k], s->host, msg, what);
        if (w != WT_OK) note_failure(s, w, msg);
        d->stats.write_seconds += dist_elapsed(t1);
    }
    if (d->broken) return dist_failf(WT_ERR_BACKEND, "%s", d->broken_msg);
    d->stats.mpi_seconds += last_done - s->first_post;
    d->stats.calls++;
    d->stats.bytes_reduced += (uint64_t)s->total * (uint64_t)dist_elem_bytes(d);
    d->stats.buckets += (uint64_t)s->nb;
    d->stats.buckets_early += (uint64_t)early;
    wt_status data = s->local;
    char data_msg[MSG_BYTES];
    snprintf(data_msg, sizeof data_msg, "%s", s->local_msg);
    reset_step(s);
    st = dist_agree(d, data, data_msg, 0, what);
    d->stats.total_seconds += dist_elapsed(t_call);
    return st;
}
