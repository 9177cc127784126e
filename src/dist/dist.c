/* The distributed layer (include/webtensor_dist.h): collectives on tensors
 * over MPI, through host buffers, never blocking without a deadline.
 *
 * Protocol: every collective is
 *   1. a start round: a non-blocking allreduce (MAX) of three int64 -
 *      the lowest failing rank (encoded size - rank, 0 for none) and a
 *      signature of the call (kind, tensor count, shapes, dtypes) and its
 *      negation, so that every rank learns whether any rank failed its
 *      argument checks (or called wt_dist_fail) and whether all ranks
 *      made the same call; a failure's message follows by broadcast from
 *      the failing rank;
 *   2. the data, in host buffers;
 *   3. an end round like the start, for failures during the data phase
 *      (a read-back that failed: the rank still takes part in every MPI
 *      call, with zeros, so that the others are not left waiting).
 * Every wait polls MPI_Test with the deadline; no collective calls a
 * blocking MPI function (only wt_dist_destroy does: MPI_Comm_free and,
 * where it initialised MPI, MPI_Finalize - skipped after a timeout). */
#define _POSIX_C_SOURCE 200809L
#include "dist/dist_internal.h"

#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

wt_status dist_failf(wt_status st, const char *fmt, ...)
{
    char msg[MSG_BYTES + 128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return wt_set_last_error(st, msg);
}

wt_status dist_mpi_fail(wt_dist *d, int code, const char *what)
{
    char s[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(code, s, &len);
    if (d) {
        d->broken = true;
        snprintf(d->broken_msg, sizeof d->broken_msg, "dist: MPI failed in %s: %s", what, s);
        return wt_set_last_error(WT_ERR_BACKEND, d->broken_msg);
    }
    return dist_failf(WT_ERR_BACKEND, "dist: MPI failed in %s: %s", what, s);
}

/* ------------------------------------------------------------ waiting */

static void pause_briefly(int polls)
{
    /* Spin briefly (latency), then sleep 50 us between polls, 200 us once
     * the wait is long: a rank that waits must leave the core to the
     * ranks still computing when there are more ranks than cores. */
    if (polls < 50) return;
    long ns = polls < 2000 ? 50000 : 200000;
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}


/* Drives the other outstanding requests: Open MPI's non-blocking
 * collectives progress only inside MPI calls. */
int dist_progress(const waitset *ws)
{
    if (!ws) return MPI_SUCCESS;
    for (int i = 0; i < ws->n; i++) {
        if (ws->reqs[i] == MPI_REQUEST_NULL) continue;
        int flag = 0, rc = MPI_Test(&ws->reqs[i], &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return rc;
        if (flag) {
            ws->reqs[i] = MPI_REQUEST_NULL;
            ws->done_at[i] = MPI_Wtime();
        }
    }
    return MPI_SUCCESS;
}

static wt_status timed_out(wt_dist *d, double start, const char *what)
{
    d->broken = d->timed_out = true;
    snprintf(d->broken_msg, sizeof d->broken_msg,
             "dist: rank %d: no answer from the other ranks within %.0f s in %s (a rank died or hangs)", d->rank,
             MPI_Wtime() - start, what);
    return wt_set_last_error(WT_ERR_BACKEND, d->broken_msg);
}

/* Waits for *req (others in ws keep progressing) until the deadline. */
wt_status dist_wait_request(wt_dist *d, MPI_Request *req, const waitset *ws, const char *what)
{
    double start = MPI_Wtime();
    for (int polls = 0;; polls++) {
        int flag = 0, rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return dist_mpi_fail(d, rc, what);
        if (flag) return WT_OK;
        if ((rc = dist_progress(ws)) != MPI_SUCCESS) return dist_mpi_fail(d, rc, what);
        if (d->timeout > 0 && MPI_Wtime() - start > d->timeout) return timed_out(d, start, what);
        pause_briefly(polls);
    }
}

/* Waits for a device read (its event), keeping MPI progressing. */
wt_status dist_wait_event(wt_dist *d, wt_event *e, const waitset *ws, const char *what)
{
    double start = MPI_Wtime();
    for (int polls = 0;; polls++) {
        bool done = false;
        wt_status st = wt_event_query(e, &done);
        if (st != WT_OK) return st;
        if (done) return wt_event_wait(e); /* the read's own status */
        int rc = dist_progress(ws);
        if (rc != MPI_SUCCESS) return dist_mpi_fail(d, rc, what);
        if (d->timeout > 0 && MPI_Wtime() - start > d->timeout) return timed_out(d, start, what);
        pause_briefly(polls);
    }
}

/* ------------------------------------------------------ agreement rounds */

/* A signature of a call: FNV-1a of its kind and tensors' shapes/dtypes. */
static int64_t sig_mix(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++) h = (h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ull;
    return (int64_t)(h >> 1);
}

int64_t dist_signature(int kind, int n, wt_tensor *const *ts)
{
    uint64_t h = 0xcbf29ce484222325ull;
    h = (uint64_t)sig_mix(h, (uint64_t)kind);
    h = (uint64_t)sig_mix(h, (uint64_t)n);
    for (int i = 0; i < n; i++) {
        if (!ts || !ts[i]) continue;
        h = (uint64_t)sig_mix(h, (uint64_t)wt_tensor_dtype(ts[i]));
        int nd = wt_tensor_ndim(ts[i]);
        const int64_t *shape = wt_tensor_shape(ts[i]);
        h = (uint64_t)sig_mix(h, (uint64_t)nd);
        for (int k = 0; k < nd; k++) h = (uint64_t)sig_mix(h, (uint64_t)shape[k]);
    }
    return (int64_t)h;
}

/* One round: every rank gives its failure (message or NULL) and the call's
 * signature; WT_OK on every rank, or a failure on every rank: a rank
 * that failed gets its own status and message back, the others
 * WT_ERR_BACKEND naming the lowest failing rank and its message. */
wt_status dist_agree(wt_dist *d, wt_status local, const char *local_msg, int64_t signature, const char *what)
{
    int64_t v[3] = {local != WT_OK ? d->size - d->rank : 0, signature, -signature}, r[3];
    MPI_Request req;
    int rc = MPI_Iallreduce(v, r, 3, MPI_INT64_T, MPI_MAX, d->comm, &req);
    if (rc != MPI_SUCCESS) return dist_mpi_fail(d, rc, what);
    wt_status st = dist_wait_request(d, &req, NULL, what);
    if (st != WT_OK) return st;
    /* Every rank saw the same failure: the synchronisers' steps end here
     * (their reductions brought to the same point everywhere). */
    for (int i = 0; (r[0] > 0 || r[1] != -r[2]) && i < d->nsyncs; i++)
        if ((st = dist_grad_sync_abandon(d->syncs[i])) != WT_OK) return st;
    if (r[0] > 0) {
        int root = d->size - (int)r[0];
        char msg[MSG_BYTES] = "";
        if (root == d->rank) snprintf(msg, sizeof msg, "%s", local_msg ? local_msg : "");
        if ((rc = MPI_Ibcast(msg, MSG_BYTES, MPI_CHAR, root, d->comm, &req)) != MPI_SUCCESS)
            return dist_mpi_fail(d, rc, what);
        if ((st = dist_wait_request(d, &req, NULL, what)) != WT_OK) return st;
        msg[MSG_BYTES - 1] = '\0';
        /* A rank that failed itself reports its own failure. */
        if (local != WT_OK) return dist_failf(local, "%s", local_msg ? local_msg : "");
        return dist_failf(WT_ERR_BACKEND, "dist: rank %d failed (%s): %s", root, what, msg);
    }
    if (r[1] != -r[2])
        return dist_failf(WT_ERR_INVALID_ARGUMENT,
                     "dist: %s: the ranks passed different tensors (count, shapes or dtypes differ)", what);
    return WT_OK;
}

/* ------------------------------------------------------------ set-up */

/* ------------------------------------------------------ f16 buckets */

/* IEEE 754 binary16 <-> binary32 on the host: widening is exact;
 * narrowing rounds to nearest even, with subnormals, overflow to
 * infinity and NaN kept a NaN. */
static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
    if (exp == 0) {
        float f = (float)man * 0x1p-24f; /* zero or subnormal: exact */
        return sign ? -f : f;
    }
    bits = exp == 31 ? sign | 0x7f800000u | (man << 13) : sign | ((exp + 112) << 23) | (man << 13);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint16_t float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* 65520 and up round to infinity */
    uint32_t e = ax >> 23, man = (ax & 0x7fffffu) | 0x800000u, shift, q;
    if (ax < 0x38800000u) { /* below 2^-14: a subnormal half, in units of 2^-24 */
        if (e < 102) return sign; /* below 2^-25: zero (2^-25 itself ties to even zero) */
        shift = 126 - e;
    } else {
        shift = 13;
        man = ax & 0x7fffffu;
    }
    q = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (ax >= 0x38800000u) q |= (e - 112) << 10;
    if (rem > half || (rem == half && (q & 1u))) q++; /* a carry moves into the exponent */
    return (uint16_t)(sign | q);
}

/* The same conversions eight at a time with x86's F16C instructions,
 * where the processor has them: the reduction of a 43 MB model's halves
 * is ~10 M of each per step. F16C rounds to nearest even like
 * float_to_half (the two agree on every one of the 2^32 floats but NaN
 * payloads), so ranks on different processors get the same bits. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_F16C_PATH 1
__attribute__((target("avx,f16c"))) static int64_t sum_halves_f16c(const uint16_t *a, uint16_t *b, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + i)));
        __m256 y = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b + i)));
        _mm_storeu_si128((__m128i *)(b + i), _mm256_cvtps_ph(_mm256_add_ps(x, y), _MM_FROUND_TO_NEAREST_INT));
    }
    return i;
}

__attribute__((target("avx,f16c"))) static int64_t scale_halves_f16c(uint16_t *h, int64_t n, float scale)
{
    int64_t i = 0;
    __m256 s = _mm256_set1_ps(scale);
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i)));
        _mm_storeu_si128((__m128i *)(h + i), _mm256_cvtps_ph(_mm256_mul_ps(x, s), _MM_FROUND_TO_NEAREST_INT));
    }
    return i;
}

/* F16C and AVX, and the operating system saving the AVX registers. */
static bool cpu_has_f16c(void)
{
    unsigned a = 0, b = 0, c = 0, d = 0, lo = 0, hi = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    if (!(c & bit_F16C) || !(c & bit_AVX) || !(c & bit_OSXSAVE)) return false;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    return (lo & 6u) == 6u;
}
#endif

#ifdef HAVE_F16C_PATH
/* -1 until asked; every thread that asks finds the same answer. */
static _Atomic int g_f16c = -1;

static bool use_f16c(void)
{
    int have = atomic_load(&g_f16c);
    if (have < 0) atomic_store(&g_f16c, have = cpu_has_f16c());
    return have == 1;
}
#endif

/* Leading elements done with F16C (0 where there is none). */
static int64_t sum_halves_fast(const uint16_t *a, uint16_t *b, int64_t n)
{
#ifdef HAVE_F16C_PATH
    if (use_f16c()) return sum_halves_f16c(a, b, n);
#endif
    (void)a, (void)b, (void)n;
    return 0;
}

static int64_t scale_halves_fast(uint16_t *h, int64_t n, float scale)
{
#ifdef HAVE_F16C_PATH
    if (use_f16c()) return scale_halves_f16c(h, n, scale);
#endif
    (void)h, (void)n, (void)scale;
    return 0;
}

/* The MPI operation of f16 buckets: each pair of halves added in f32 and
 * rounded to f16 (commutative; every rank gets the same bits). */
static void f16_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const uint16_t *a = in;
    uint16_t *b = inout;
    for (int64_t i = sum_halves_fast(a, b, *len); i < *len; i++)
        b[i] = float_to_half(half_to_float(a[i]) + half_to_float(b[i]));
}

int dist_elem_bytes(const wt_dist *d) { return d->f16 ? 2 : 4; }

int dist_post_bucket(const wt_dist *d, MPI_Comm comm, float *host, const bucket *b, MPI_Request *req)
{
    if (d->f16)
        return MPI_Iallreduce(MPI_IN_PLACE, host + b->offset, (int)b->count, MPI_UINT16_T, d->f16_sum, comm, req);
    return MPI_Iallreduce(MPI_IN_PLACE, host + b->offset, (int)b->count, MPI_FLOAT, MPI_SUM, comm, req);
}

void dist_scale_bucket(const wt_dist *d, float *host, const bucket *b, float scale)
{
    if (scale == 1.0f) return;
    if (d->f16) {
        uint16_t *h = (uint16_t *)(host + b->offset);
        for (int64_t j = scale_halves_fast(h, b->count, scale); j < b->count; j++)
            h[j] = float_to_half(half_to_float(h[j]) * scale);
        return;
    }
    float *p = host + b->offset;
    for (int64_t j = 0; j < b->count; j++) p[j] *= scale;
}

void wt_dist_options_init(wt_dist_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->timeout_seconds = 300;
    opts->bucket_bytes = 4 << 20;
}

void wt_dist_stats_init(wt_dist_stats *stats)
{
    if (!stats) return;
    memset(stats, 0, sizeof *stats);
    stats->struct_size = sizeof *stats;
}

wt_status wt_dist_init(MPI_Comm comm, const wt_dist_options *opts, wt_dist **out)
{
    if (!out) return dist_failf(WT_ERR_INVALID_ARGUMENT, "wt_dist_init: out is NULL");
    *out = NULL;
    wt_dist_options o;
    wt_dist_options_init(&o);
    if (opts) {
        if (opts->struct_size != sizeof *opts)
            return dist_failf(WT_ERR_INVALID_ARGUMENT, "wt_dist_init: opts->struct_size is %u, expected %zu (call wt_dist_options_init)",
                         opts->struct_size, sizeof *opts);
        o = *opts;
    }
    if (o.pack != WT_DIST_PACK_AUTO && o.pack != WT_DIST_PACK_NEVER && o.pack != WT_DIST_PACK_ALWAYS)
        return dist_failf(WT_ERR_INVALID_ARGUMENT, "wt_dist_init: pack %d is not a wt_dist_pack", (int)o.pack);
    if (!(o.timeout_seconds == o.timeout_seconds) || o.bucket_bytes < 4 || o.bucket_bytes > MAX_PIECE_BYTES)
        return dist_failf(WT_ERR_INVALID_ARGUMENT, "wt_dist_init: bucket_bytes %lld outside [4, 2^30] or timeout NaN",
                     (long long)o.bucket_bytes);
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (finalized) return dist_failf(WT_ERR_INVALID_ARGUMENT, "wt_dist_init: MPI was finalised already");
    bool own = false;
    if (!inited) {
        int provided = 0;
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
            return dist_failf(WT_ERR_BACKEND, "wt_dist_init: MPI_Init_thread failed");
        own = true;
        /* The process's MPI is ours: its errors are returned, never fatal. */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    }
    if (comm == MPI_COMM_NULL) {
        if (own) MPI_Finalize();
        return dist_failf(WT_ERR_INVALID_ARGUMENT, "wt_dist_init: comm is MPI_COMM_NULL");
    }
    wt_dist *d = calloc(1, sizeof *d);
    if (!d) {
        if (own) MPI_Finalize();
        return dist_failf(WT_ERR_OUT_OF_MEMORY, "wt_dist_init: out of host memory");
    }
    d->finalize = own;
    d->timeout = o.timeout_seconds;
    d->bucket_bytes = o.bucket_bytes;
    d->pack = o.pack;
    d->f16 = o.reduce_f16;
    d->f16_sum = MPI_OP_NULL;
    d->comm = MPI_COMM_NULL;
    wt_dist_stats_init(&d->stats);
    MPI_Request req;
    int rc = MPI_Comm_idup(comm, &d->comm, &req);
    wt_status st = rc == MPI_SUCCESS ? WT_OK : dist_mpi_fail(d, rc, "wt_dist_init (MPI_Comm_idup)");
    if (st == WT_OK) st = dist_wait_request(d, &req, NULL, "wt_dist_init (MPI_Comm_idup)");
    if (st == WT_OK && (rc = MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN)) != MPI_SUCCESS)
        st = dist_mpi_fail(d, rc, "wt_dist_init (MPI_Comm_set_errhandler)");
    if (st == WT_OK && d->f16 && (rc = MPI_Op_create(f16_sum, 1, &d->f16_sum)) != MPI_SUCCESS)
        st = dist_mpi_fail(d, rc, "wt_dist_init (MPI_Op_create)");
    if (st == WT_OK && ((rc = MPI_Comm_rank(d->comm, &d->rank)) != MPI_SUCCESS ||
                        (rc = MPI_Comm_size(d->comm, &d->size)) != MPI_SUCCESS))
        st = dist_mpi_fail(d, rc, "wt_dist_init");
    /* Local rank: the ranks before this one with the same host name. */
    char *names = NULL;
    if (st == WT_OK && !(names = calloc((size_t)d->size + 1, MPI_MAX_PROCESSOR_NAME)))
        st = dist_failf(WT_ERR_OUT_OF_MEMORY, "wt_dist_init: out of host memory");
    if (st == WT_OK) {
        char *mine = names + (size_t)d->size * MPI_MAX_PROCESSOR_NAME;
        int len = 0;
        MPI_Get_processor_name(mine, &len);
        rc = MPI_Iallgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, d->comm,
                            &req);
        st = rc == MPI_SUCCESS ? dist_wait_request(d, &req, NULL, "wt_dist_init (host names)")
                               : dist_mpi_fail(d, rc, "wt_dist_init (host names)");
        for (int r = 0; st == WT_OK && r < d->size; r++)
            if (strncmp(names + (size_t)r * MPI_MAX_PROCESSOR_NAME, mine, MPI_MAX_PROCESSOR_NAME) == 0) {
                if (r < d->rank) d->local_rank++;
                d->local_size++;
            }
    }
    free(names);
    if (st != WT_OK) {
        char msg[MSG_BYTES];
        snprintf(msg, sizeof msg, "%s", wt_last_error());
        wt_dist_destroy(d);
        return wt_set_last_error(st, msg);
    }
    *out = d;
    return WT_OK;
}

void wt_dist_destroy(wt_dist *d)
{
    if (!d) return;
    while (d->nsyncs > 0) wt_dist_grad_sync_destroy(d->syncs[d->nsyncs - 1]);
    free(d->syncs);
    if (d->f16_sum != MPI_OP_NULL && !d->timed_out) MPI_Op_free(&d->f16_sum);
    if (d->comm != MPI_COMM_NULL && !d->timed_out) MPI_Comm_free(&d->comm);
    /* After a timeout MPI_Finalize would wait for the rank that is gone. */
    if (d->finalize && !d->timed_out) MPI_Finalize();
    free(d->host);
    free(d);
}

int wt_dist_rank(const wt_dist *d) { return d ? d->rank : -1; }
int wt_dist_size(const wt_dist *d) { return d ? d->size : -1; }
int wt_dist_local_rank(const wt_dist *d) { return d ? d->local_rank : -1; }
int wt_dist_local_size(const wt_dist *d) { return d ? d->local_size : -1; }

wt_status wt_dist_get_stats(const wt_dist *d, wt_dist_stats *out)
{
    if (!d || !out) return dist_failf(WT_ERR_INVALID_ARGUMENT, "wt_dist_get_stats: %s is NULL", d ? "out" : "d");
    /* A program built against an older header (a shorter struct, as its
     * struct_size says) gets the fields it knows. */
    size_t n = out->struct_size >= sizeof(uint32_t) && out->struct_size < sizeof *out ? out->struct_size : sizeof *out;
    uint32_t size = (uint32_t)n;
    memcpy(out, &d->stats, n);
    out->struct_size = size;
    return WT_OK;
}

wt_status wt_dist_reset_stats(wt_dist *d)
{
    if (!d) return dist_failf(WT_ERR_INVALID_ARGUMENT, "wt_dist_reset_stats: d is NULL");
    wt_dist_stats_init(&d->stats);
    return WT_OK;
}

/* Checks shared by the collectives; WT_OK to go on. */
wt_status dist_usable(wt_dist *d, const char *what)
{
    if (!d) return dist_failf(WT_ERR_INVALID_ARGUMENT, "%s: d is NULL", what);
    if (d->broken) return dist_failf(WT_ERR_BACKEND, "%s: the group failed earlier: %s", what, d->broken_msg);
    return WT_OK;
}

static void *host_buffer(wt_dist *d, size_t bytes)
{
    if (bytes == 0) bytes = 1;
    if (d->host_cap < bytes) {
        void *p = realloc(d->host, bytes);
        if (!p) return NULL;
        d->host = p;
        d->host_cap = bytes;
    }
    return d->host;
}

/* ------------------------------------------------------------ allreduce */


/* Local argument checks of a list of in-place tensors; the message in msg. */
wt_status dist_check_tensors(const char *what, int n, wt_tensor *const *ts, bool f32_only, char *msg)
{
    if (n < 0 || (n > 0 && !ts)) {
        snprintf(msg, MSG_BYTES, "%s: %s", what, n < 0 ? "n is negative" : "tensors is NULL");
        return WT_ERR_INVALID_ARGUMENT;
    }
    for (int i = 0; i < n; i++) {
        if (!ts[i]) {
            snprintf(msg, MSG_BYTES, "%s: tensors[%d] is NULL", what, i);
            return WT_ERR_INVALID_ARGUMENT;
        }
        if (f32_only && wt_tensor_dtype(ts[i]) != WT_F32) {
            snprintf(msg, MSG_BYTES, "%s: tensors[%d] is %s; allreduce takes f32", what, i,
                     wt_dtype_name(wt_tensor_dtype(ts[i])));
            return WT_ERR_INVALID_ARGUMENT;
        }
        if (!wt_tensor_is_contiguous(ts[i])) {
            snprintf(msg, MSG_BYTES, "%s: tensors[%d] is not contiguous (it is written in place)", what, i);
            return WT_ERR_INVALID_ARGUMENT;
        }
    }
    return WT_OK;
}

double dist_elapsed(double t0) { return MPI_Wtime() - t0; }

/* Buckets of whole tensors, in order, of about bucket_bytes each (a
 * larger tensor alone); bk has room for n. Returns their number. */
int dist_make_buckets(const wt_dist *d, int n, wt_tensor *const *tensors, bucket *bk)
{
    int nb = 0;
    int64_t limit = d->bucket_bytes / (int64_t)sizeof(float), off = 0;
    for (int i = 0; i < n; i++) {
        int64_t c = wt_tensor_numel(tensors[i]);
        if (nb == 0 || bk[nb - 1].count + c > limit || bk[nb - 1].count + c > MAX_PIECE_BYTES / 4) {
            bk[nb] = (bucket){i, i, off, 0};
            nb++;
        }
        bk[nb - 1].last = i + 1;
        bk[nb - 1].count += c;
        off += c;
    }
    return nb;
}

/* Starts the device reads of bucket b into host + b->offset. On a GPU a
 * bucket of several tensors is first packed into one (a concatenation on
 * the device), read with one copy: each read is a submit, a staging
 * buffer and a map, which for a hundred small gradients costs more than
 * the bytes (wt_dist_pack says where). ev[i] is tensor i's read; of a
 * packed bucket, ev[first] is the bucket's. On failure, msg says why. */
/* Whether bucket b moves between host and device as one tensor (wt_dist_pack). */
static bool pack_bucket(const wt_dist *d, wt_tensor *const *tensors, const bucket *b)
{
    wt_context *bctx = wt_tensor_context(tensors[b->first]);
    bool pack = b->last - b->first > 1 && wt_context_backend(bctx) == WT_BACKEND_WEBGPU && d->pack != WT_DIST_PACK_NEVER;
    wt_adapter_info info;
    if (pack && d->pack == WT_DIST_PACK_AUTO)
        pack = wt_context_adapter_info(bctx, &info) == WT_OK && info.type != WT_ADAPTER_CPU;
    for (int i = b->first + 1; pack && i < b->last; i++) pack = wt_tensor_context(tensors[i]) == bctx;
    return pack;
}

wt_status dist_write_bucket(const wt_dist *d, wt_tensor *const *tensors, const bucket *b, const float *host, char *msg,
                            const char *what)
{
    wt_status st = WT_OK;
    const float *p = host + b->offset;
    if (!d->f16 && !pack_bucket(d, tensors, b)) {
        for (int i = b->first; i < b->last && st == WT_OK; i++) {
            int64_t c = wt_tensor_numel(tensors[i]);
            st = wt_tensor_write(tensors[i], p, (size_t)c * sizeof(float));
            if (st != WT_OK) snprintf(msg, MSG_BYTES, "%s: writing tensors[%d]: %s", what, i, wt_last_error());
            p += c;
        }
        return st;
    }
    int64_t count = b->count, off = 0;
    wt_tensor *packed = NULL;
    wt_context *ctx = wt_tensor_context(tensors[b->first]);
    /* Data written in place, as wt_tensor_write does: nothing recorded
     * (a tensor of the list may require grad, as the examples' loss). */
    if ((st = wt_no_grad_begin(ctx)) != WT_OK) {
        snprintf(msg, MSG_BYTES, "%s: %s", what, wt_last_error());
        return st;
    }
    if (d->f16) {
        /* Up as f16 (half the bytes), widened on the device (exact). */
        wt_tensor *halves = NULL;
        st = wt_tensor_from_data(ctx, WT_F16, 1, &count, p, &halves);
        if (st == WT_OK) st = wt_cast(halves, WT_F32, &packed);
        wt_tensor_release(halves);
    } else {
        st = wt_tensor_from_data(ctx, WT_F32, 1, &count, p, &packed);
    }
    for (int i = b->first; i < b->last && st == WT_OK; i++) {
        int64_t c = wt_tensor_numel(tensors[i]);
        wt_tensor *part = NULL, *shaped = NULL;
        st = wt_slice(packed, 0, off, off + c, 1, &part);
        if (st == WT_OK) st = wt_reshape(part, wt_tensor_ndim(tensors[i]), wt_tensor_shape(tensors[i]), &shaped);
        if (st == WT_OK) st = wt_copy_into(tensors[i], shaped);
        wt_tensor_release(shaped), wt_tensor_release(part);
        off += c;
    }
    wt_tensor_release(packed);
    wt_no_grad_end(ctx);
    if (st != WT_OK)
        snprintf(msg, MSG_BYTES, "%s: writing tensors %d..%d back: %s", what, b->first, b->last - 1, wt_last_error());
    return st;
}

wt_status dist_read_bucket(const wt_dist *d, wt_tensor *const *tensors, const bucket *b, float *host, wt_event **ev,
                           char *msg, const char *what)
{
    wt_status data = WT_OK;
    int cnt = b->last - b->first;
    if (d->f16 || pack_bucket(d, tensors, b)) {
        /* Packed on the device, and in f16 mode narrowed there (round to
         * nearest even): half the bytes come back. */
        wt_context *ctx = wt_tensor_context(tensors[b->first]);
        bool nograd = d->f16 && wt_no_grad_begin(ctx) == WT_OK;
        wt_tensor **flat = calloc((size_t)cnt, sizeof *flat), *packed = NULL, *halves = NULL;
        data = flat ? WT_OK : wt_set_last_error(WT_ERR_OUT_OF_MEMORY, "out of host memory");
        for (int i = 0; i < cnt && data == WT_OK; i++) data = wt_flatten(tensors[b->first + i], 0, -1, &flat[i]);
        if (data == WT_OK) data = wt_concat(cnt, flat, 0, &packed);
        if (data == WT_OK && d->f16) data = wt_cast(packed, WT_F16, &halves);
        if (data == WT_OK)
            data = wt_tensor_read_async(halves ? halves : packed, host + b->offset,
                                        (size_t)b->count * (size_t)dist_elem_bytes(d), &ev[b->first]);
        if (nograd) wt_no_grad_end(ctx);
        /* The read already holds what it copies. */
        wt_tensor_release(halves);
        wt_tensor_release(packed);
        for (int i = 0; flat && i < cnt; i++) wt_tensor_release(flat[i]);
        free(flat);
        if (data != WT_OK) snprintf(msg, MSG_BYTES, "%s: packing tensors %d..%d: %s", what, b->first, b->last - 1, wt_last_error());
        return data;
    }
    int64_t off = b->offset;
    for (int i = b->first; i < b->last && data == WT_OK; off += wt_tensor_numel(tensors[i]), i++) {
        int64_t c = wt_tensor_numel(tensors[i]);
        data = wt_tensor_read_async(tensors[i], host + off, (size_t)c * sizeof(float), &ev[i]);
        if (data != WT_OK) snprintf(msg, MSG_BYTES, "%s: reading tensors[%d]: %s", what, i, wt_last_error());
    }
    return data;
}

wt_status wt_dist_allreduce(wt_dist *d, int n, wt_tensor *const *tensors, wt_dist_reduce op)
{
    const char *what = "wt_dist_allreduce";
    wt_status st = dist_usable(d, what);
    if (st != WT_OK) return st;
    double t_call = MPI_Wtime();
    char msg[MSG_BYTES] = "";
    wt_status local = dist_check_tensors(what, n, tensors, true, msg);
    if (local == WT_OK && op != WT_DIST_SUM && op != WT_DIST_MEAN) {
        snprintf(msg, sizeof msg, "%s: op %d is not WT_DIST_SUM or WT_DIST_MEAN", what, (int)op);
        local = WT_ERR_INVALID_ARGUMENT;
    }
    /* Buckets of whole tensors, in order. */
    bucket *bk = NULL;
    wt_event **ev = NULL;
    MPI_Request *reqs = NULL;
    double *done_at = NULL;
    int nb = 0;
    int64_t total = 0;
    float *host = NULL;
    for (int i = 0; local == WT_OK && i < n; i++)
        if (wt_tensor_numel(tensors[i]) > INT_MAX) {
            snprintf(msg, sizeof msg, "%s: tensors[%d] has more than 2^31 - 1 elements (one MPI message)", what, i);
            local = WT_ERR_INVALID_ARGUMENT;
        }
    if (local == WT_OK && n > 0) {
        bk = calloc((size_t)n, sizeof *bk);
        ev = calloc((size_t)n, sizeof *ev);
        reqs = malloc((size_t)n * sizeof *reqs);
        done_at = calloc((size_t)n, sizeof *done_at);
        for (int i = 0; i < n; i++) total += wt_tensor_numel(tensors[i]);
        host = bk && ev && reqs && done_at ? host_buffer(d, (size_t)total * sizeof(float)) : NULL;
        if (!host) {
            snprintf(msg, sizeof msg, "%s: out of host memory (%lld bytes)", what, (long long)total * 4);
            local = WT_ERR_OUT_OF_MEMORY;
        } else {
            nb = dist_make_buckets(d, n, tensors, bk);
            for (int k = 0; k < nb; k++) reqs[k] = MPI_REQUEST_NULL;
        }
    }
    st = dist_agree(d, local, msg, dist_signature(1, local == WT_OK ? n : -1, local == WT_OK ? tensors : NULL), what);
    if (st != WT_OK || n == 0) {
        free(bk), free(ev), free(reqs), free(done_at);
        return st;
    }
    /* Every read starts now: the device copies them out one after another
     * while the host reduces the buckets already read. */
    wt_status data = WT_OK; /* this rank's first failure in the data phase */
    char data_msg[MSG_BYTES] = "";
    for (int k = 0; k < nb && data == WT_OK; k++) data = dist_read_bucket(d, tensors, &bk[k], host, ev, data_msg, what);
    waitset ws = {reqs, done_at, nb};
    float scale = op == WT_DIST_MEAN ? 1.0f / (float)d->size : 1.0f;
    double first_post = 0, last_done = 0;
    int written = 0; /* buckets [0, written) are reduced and written back */
/* Scales bucket wk (its reduction done) and writes it back to the device
 * (wt_tensor_write returns before the copy lands). */
#define WRITE_BACK(wk)                                                                                    \
    do {                                                                                                  \
        if (done_at[wk] > last_done) last_done = done_at[wk];                                             \
        if (data != WT_OK) break;                                                                         \
        double t1 = MPI_Wtime();                                                                          \
        dist_scale_bucket(d, host, &bk[wk], scale);                                                       \
        data = dist_write_bucket(d, tensors, &bk[wk], host, data_msg, what);                              \
        d->stats.write_seconds += dist_elapsed(t1);                                                            \
    } while (0)
    for (int k = 0; k < nb && !d->broken; k++) {
        double t0 = MPI_Wtime();
        for (int i = bk[k].first; i < bk[k].last; i++) {
            if (data == WT_OK && ev[i]) {
                data = dist_wait_event(d, ev[i], &ws, what);
                if (data != WT_OK && !d->broken)
                    snprintf(data_msg, sizeof data_msg, "%s: reading tensors[%d]: %s", what, i, wt_last_error());
            }
            wt_event_destroy(ev[i]);
            ev[i] = NULL;
        }
        d->stats.read_seconds += dist_elapsed(t0);
        if (d->broken) break;
        /* A rank whose read failed still takes part, with zeros. */
        if (data != WT_OK) memset(host + bk[k].offset, 0, (size_t)bk[k].count * sizeof(float));
        int rc = dist_post_bucket(d, d->comm, host, &bk[k], &reqs[k]);
        if (rc != MPI_SUCCESS) {
            dist_mpi_fail(d, rc, what);
            break;
        }
        if (k == 0) first_post = last_done = MPI_Wtime();
        /* The buckets whose reduction ended meanwhile go back now, while
         * the later ones are read and reduced. */
        while (written < k && reqs[written] == MPI_REQUEST_NULL) {
            WRITE_BACK(written);
            written++;
        }
    }
    /* The rest, in order: wait for each reduction, write it back. */
    for (int k = written; k < nb && !d->broken; k++) {
        if (reqs[k] != MPI_REQUEST_NULL) {
            double t0 = MPI_Wtime();
            wt_status w = dist_wait_request(d, &reqs[k], &ws, what);
            d->stats.mpi_wait_seconds += dist_elapsed(t0);
            if (w != WT_OK) break;
            done_at[k] = MPI_Wtime();
        }
        WRITE_BACK(k);
    }
#undef WRITE_BACK
    d->stats.mpi_seconds += last_done - first_post;
    for (int i = 0; i < n; i++) wt_event_destroy(ev[i]);
    free(bk), free(ev), free(reqs), free(done_at);
    if (d->broken) return dist_failf(WT_ERR_BACKEND, "%s", d->broken_msg);
    st = dist_agree(d, data, data_msg, 0, what);
    d->stats.calls++;
    d->stats.bytes_reduced += (uint64_t)total * (uint64_t)dist_elem_bytes(d);
    d->stats.total_seconds += dist_elapsed(t_call);
    return st;
}

/* ------------------------------------------------- broadcast, allgather */

/* Runs a byte collective in pieces of at most MAX_PIECE_BYTES. */
static wt_status bcast_bytes(wt_dist *d, void *buf, int64_t bytes, int root, const char *what)
{
    for (int64_t off = 0; off < bytes; off += MAX_PIECE_BYTES) {
        int64_t len = bytes - off < MAX_PIECE_BYTES ? bytes - off : MAX_PIECE_BYTES;
        MPI_Request req;
        int rc = MPI_Ibcast((char *)buf + off, (int)len, MPI_BYTE, root, d->comm, &req);
        if (rc != MPI_SUCCESS) return dist_mpi_fail(d, rc, what);
        wt_status st = dist_wait_request(d, &req, NULL, what);
        if (st != WT_OK) return st;
    }
    return WT_OK;
}

wt_status wt_dist_broadcast(wt_dist *d, int n, wt_tensor *const *tensors, int root)
{
    const char *what = "wt_dist_broadcast";
    wt_status st = dist_usable(d, what);
    if (st != WT_OK) return st;
    double t_call = MPI_Wtime();
    char msg[MSG_BYTES] = "";
    wt_status local = dist_check_tensors(what, n, tensors, false, msg);
    if (local == WT_OK && (root < 0 || root >= d->size)) {
        snprintf(msg, sizeof msg, "%s: root %d outside [0, %d)", what, root, d->size);
        local = WT_ERR_INVALID_ARGUMENT;
    }
    int64_t total = 0;
    if (local == WT_OK)
        for (int i = 0; i < n; i++) total += wt_tensor_numel(tensors[i]) * (int64_t)wt_dtype_size(wt_tensor_dtype(tensors[i]));
    unsigned char *host = local == WT_OK ? host_buffer(d, (size_t)total) : NULL;
    if (local == WT_OK && !host) {
        snprintf(msg, sizeof msg, "%s: out of host memory (%lld bytes)", what, (long long)total);
        local = WT_ERR_OUT_OF_MEMORY;
    }
    st = dist_agree(d, local, msg, dist_signature(2 + 1000 * root, local == WT_OK ? n : -1, local == WT_OK ? tensors : NULL),
               what);
    if (st != WT_OK) return st;
    wt_status data = WT_OK;
    char data_msg[MSG_BYTES] = "";
    if (d->rank == root) {
        double t0 = MPI_Wtime();
        int64_t off = 0;
        for (int i = 0; i < n && data == WT_OK; i++) {
            size_t b = (size_t)wt_tensor_numel(tensors[i]) * wt_dtype_size(wt_tensor_dtype(tensors[i]));
            data = wt_tensor_read(tensors[i], host + off, b);
            if (data != WT_OK) snprintf(data_msg, sizeof data_msg, "%s: reading tensors[%d]: %s", what, i, wt_last_error());
            off += (int64_t)b;
        }
        d->stats.read_seconds += dist_elapsed(t0);
    }
    /* The root's read failing is known before the data go. */
    if ((st = dist_agree(d, data, data_msg, 0, what)) != WT_OK) return st;
    if ((st = bcast_bytes(d, host, total, root, what)) != WT_OK) return st;
    if (d->rank != root) {
        double t0 = MPI_Wtime();
        int64_t off = 0;
        for (int i = 0; i < n && data == WT_OK; i++) {
            size_t b = (size_t)wt_tensor_numel(tensors[i]) * wt_dtype_size(wt_tensor_dtype(tensors[i]));
            data = wt_tensor_write(tensors[i], host + off, b);
            if (data != WT_OK) snprintf(data_msg, sizeof data_msg, "%s: writing tensors[%d]: %s", what, i, wt_last_error());
            off += (int64_t)b;
        }
        d->stats.write_seconds += dist_elapsed(t0);
    }
    st = dist_agree(d, data, data_msg, 0, what);
    d->stats.calls++;
    d->stats.total_seconds += dist_elapsed(t_call);
    return st;
}

wt_status wt_dist_allgather(wt_dist *d, const wt_tensor *x, wt_tensor **out)
{
    const char *what = "wt_dist_allgather";
    if (out) *out = NULL;
    wt_status st = dist_usable(d, what);
    if (st != WT_OK) return st;
    double t_call = MPI_Wtime();
    char msg[MSG_BYTES] = "";
    wt_status local = WT_OK;
    if (!x || !out) {
        snprintf(msg, sizeof msg, "%s: %s is NULL", what, x ? "out" : "x");
        local = WT_ERR_INVALID_ARGUMENT;
    } else if (wt_tensor_ndim(x) >= 8) {
        snprintf(msg, sizeof msg, "%s: x has %d axes; the result would have more than 8", what, wt_tensor_ndim(x));
        local = WT_ERR_INVALID_ARGUMENT;
    }
    int64_t bytes = local == WT_OK ? wt_tensor_numel(x) * (int64_t)wt_dtype_size(wt_tensor_dtype(x)) : 0;
    if (local == WT_OK && bytes * d->size > MAX_PIECE_BYTES) {
        snprintf(msg, sizeof msg, "%s: %lld bytes gathered; at most %lld", what, (long long)(bytes * d->size),
                 (long long)MAX_PIECE_BYTES);
        local = WT_ERR_INVALID_ARGUMENT;
    }
    unsigned char *host = local == WT_OK ? host_buffer(d, (size_t)(bytes * (d->size + 1))) : NULL;
    if (local == WT_OK && !host) {
        snprintf(msg, sizeof msg, "%s: out of host memory", what);
        local = WT_ERR_OUT_OF_MEMORY;
    }
    wt_tensor *one[1] = {(wt_tensor *)x};
    st = dist_agree(d, local, msg, dist_signature(3, local == WT_OK ? 1 : -1, local == WT_OK ? one : NULL), what);
    if (st != WT_OK) return st;
    wt_status data = WT_OK;
    char data_msg[MSG_BYTES] = "";
    unsigned char *mine = host + bytes * d->size;
    double t0 = MPI_Wtime();
    data = wt_tensor_read(x, mine, (size_t)bytes);
    if (data != WT_OK) {
        snprintf(data_msg, sizeof data_msg, "%s: reading x: %s", what, wt_last_error());
        memset(mine, 0, (size_t)bytes);
    }
    d->stats.read_seconds += dist_elapsed(t0);
    MPI_Request req;
    int rc = MPI_Iallgather(mine, (int)bytes, MPI_BYTE, host, (int)bytes, MPI_BYTE, d->comm, &req);
    if (rc != MPI_SUCCESS) return dist_mpi_fail(d, rc, what);
    if ((st = dist_wait_request(d, &req, NULL, what)) != WT_OK) return st;
    if (data == WT_OK) {
        int nd = wt_tensor_ndim(x);
        int64_t shape[9];
        shape[0] = d->size;
        memcpy(shape + 1, wt_tensor_shape(x), (size_t)nd * sizeof(int64_t));
        double t1 = MPI_Wtime();
        data = wt_tensor_from_data(wt_tensor_context(x), wt_tensor_dtype(x), nd + 1, shape, host, out);
        if (data != WT_OK) snprintf(data_msg, sizeof data_msg, "%s: making the result: %s", what, wt_last_error());
        d->stats.write_seconds += dist_elapsed(t1);
    }
    st = dist_agree(d, data, data_msg, 0, what);
    if (st != WT_OK && *out) {
        wt_tensor_release(*out);
        *out = NULL;
    }
    d->stats.calls++;
    d->stats.total_seconds += dist_elapsed(t_call);
    return st;
}

wt_status wt_dist_barrier(wt_dist *d)
{
    wt_status st = dist_usable(d, "wt_dist_barrier");
    if (st != WT_OK) return st;
    /* The agreement round is an allreduce over every rank: a barrier. */
    return dist_agree(d, WT_OK, NULL, 4, "wt_dist_barrier");
}

wt_status wt_dist_fail(wt_dist *d, const char *message)
{
    wt_status st = dist_usable(d, "wt_dist_fail");
    if (st != WT_OK) return st;
    char msg[MSG_BYTES];
    snprintf(msg, sizeof msg, "%s", message && message[0] ? message : "(no message)");
    st = dist_agree(d, WT_ERR_BACKEND, msg, 0, "wt_dist_fail");
    return st != WT_OK ? st : dist_failf(WT_ERR_BACKEND, "%s", msg);
}
