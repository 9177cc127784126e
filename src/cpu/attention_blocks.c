/* Attention on the CPU through the BLAS: a block of queries at a time.
 *
 * For the queries [i0, i1) of one (batch, head), the scores against every
 * key they may see are one matrix product, S = scale Q K^T ([m, kend]), and
 * the output one more, O = P V. The backward, with P rebuilt from S and
 * dP = dO V^T, takes three more: dQ = dS K, dK += dS^T Q, dV += P^T dO,
 * where dS = P (dP - D) scale and D_i = sum_j p_ij dp_ij. These products
 * run at the BLAS's speed where the one-row loops of attention.c and
 * attention_backward.c compute a dot product at a time.
 *
 * Nothing of size Sq x Skv is held: a thread keeps the scores of its block
 * of queries (CPU_ATTN_BLOCK_Q rows of Skv floats, twice in the backward).
 * Longer key ranges than CPU_ATTN_MAX_KEYS go to the row loops, whose
 * scratch is a row.
 *
 * Work is split over (batch, head, block of queries) in the forward. The
 * backward's dK and dV of a key sum over every query of every head that
 * shares its kv head, so a thread takes a whole (batch, kv head): its dK
 * and dV rows and the dQ rows of its heads are its own, with no locks and
 * no reduction afterwards. OpenBLAS runs single-threaded inside (as in
 * matmul.c: its pool and OpenMP's would take turns on the same cores). */
/* As in rowwise.c: lets GCC turn vmath.h's selects into vector blends
 * (nothing here reads the floating-point flags). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

#include "cpu/blas.h"
#include "cpu/cpu.h"
#include "cpu/vmath.h"
#include "cpu/attention_blocks.h"
#include "core/knobs.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Keys [0, kend) that query i sees. */
static int64_t visible_keys(int64_t Sq, int64_t Skv, bool causal, int64_t i)
{
    if (!causal) return Skv;
    int64_t last = i + Skv - Sq;
    return last < 0 ? 0 : (last + 1 < Skv ? last + 1 : Skv);
}

static bool fits_int(int64_t x) { return x >= 0 && x <= INT_MAX; }

/* The row passes between the products, written for the vectoriser: libm's
 * expf and fmaxf are calls it cannot vectorise, and after the BLAS these
 * passes were half of the forward's time. */

/* The largest non-NaN element (-inf for none): a NaN score still makes
 * its row NaN, through exp. */
CPU_MULTIVERSION
static float row_max(const float *restrict s, int64_t n)
{
    float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
    for (int64_t j = 0; j < n; j++) mx = s[j] > mx ? s[j] : mx;
    return mx;
}

/* s = exp(s - shift), returning the sum (in double: long rows). */
CPU_MULTIVERSION
static double exp_shifted(float *restrict s, int64_t n, float shift)
{
    double l = 0.0;
#pragma omp simd reduction(+ : l)
    for (int64_t j = 0; j < n; j++) {
        const float e = vm_expf(s[j] - shift);
        s[j] = e;
        l += e;
    }
    return l;
}

/* p *= inv, returning sum p dp (in double). */
CPU_MULTIVERSION
static double scale_dot(float *restrict p, const float *restrict dp, int64_t n, float inv)
{
    double dd = 0.0;
#pragma omp simd reduction(+ : dd)
    for (int64_t j = 0; j < n; j++) {
        const float x = p[j] * inv;
        p[j] = x;
        dd += (double)x * dp[j];
    }
    return dd;
}

/* dp becomes dS = p (dp - Di) scale. */
CPU_MULTIVERSION
static void score_grads(float *restrict dp, const float *restrict p, int64_t n, float Di, float scale)
{
#pragma omp simd
    for (int64_t j = 0; j < n; j++) dp[j] = p[j] * (dp[j] - Di) * scale;
}

bool cpu_attention_blocks_fit(const wt_attention_args *a, int64_t Skv)
{
    const wt_tensor *q = a->q, *k = a->k, *v = a->v;
    if (Skv > CPU_ATTN_MAX_KEYS) return false;
    /* The BLAS wants rows of unit stride and int leading dimensions. */
    if (q->strides[3] != 1 || k->strides[3] != 1 || v->strides[3] != 1) return false;
    if (!fits_int(q->strides[2]) || !fits_int(k->strides[2]) || !fits_int(v->strides[2])) return false;
    /* A head dim of 0 is left to the row loops: the BLAS rejects (and
     * prints about) leading dimensions below 1. */
    if (q->shape[3] < 1 || v->shape[3] < 1 || !fits_int(q->shape[3]) || !fits_int(v->shape[3])) return false;
    return q->strides[2] >= q->shape[3] && k->strides[2] >= k->shape[3] && v->strides[2] >= v->shape[3];
}

/* Mask, causality and softmax over one row of scores s[0, kcols), in
 * place: s becomes exp(s - max) for the keys the query sees and 0 past
 * them. Returns the row's sum (0 when it sees no key; NaN scores make it
 * NaN, and so the row, as in the row loop); *mx_out the max. */
static double softmax_row(const wt_attention_args *a, int64_t b, int64_t h, int64_t i, int64_t kend,
                          int64_t kcols, float *s, float *mx_out)
{
    const wt_tensor *m = a->mask;
    if (m) {
        const int64_t base = m->offset + b * m->strides[0] + h * m->strides[1] + i * m->strides[2];
        const int64_t ms = m->strides[3];
        if (a->mask_is_bool) {
            const uint32_t *mk = (const uint32_t *)m->storage->host + base;
            for (int64_t j = 0; j < kend; j++)
                if (!mk[j * ms]) s[j] = -INFINITY;
        } else {
            const float *mf = (const float *)m->storage->host + base;
            for (int64_t j = 0; j < kend; j++) s[j] += mf[j * ms];
        }
    }
    const float mx = row_max(s, kend);
    *mx_out = mx;
    for (int64_t j = kend; j < kcols; j++) s[j] = 0.0f;
    if (mx == -INFINITY) {
        for (int64_t j = 0; j < kend; j++) s[j] = 0.0f;
        return 0.0;
    }
    return exp_shifted(s, kend, mx);
}

wt_status cpu_attention_blocks(wt_context *ctx, const wt_attention_args *a, int64_t Skv)
{
    const wt_tensor *q = a->q, *k = a->k, *v = a->v;
    const int64_t B = q->shape[0], Hq = q->shape[1], Sq = q->shape[2], D = q->shape[3];
    const int64_t Hkv = k->shape[1], Dv = v->shape[3], group = Hq / Hkv;
    const int64_t bq = CPU_ATTN_BLOCK_Q, qblocks = (Sq + bq - 1) / bq, tasks = B * Hq * qblocks;
    float *O = cpu_data(a->out);
    const double work = (double)B * Hq * Sq * (double)Skv * (double)(D + Dv);
    int threads = work >= CPU_PARALLEL_MIN ? cpu_threads(ctx) : 1;
    if (threads > tasks) threads = (int)(tasks ? tasks : 1);
    cpu_blas_threads(1);
    int failed = 0;
#pragma omp parallel num_threads(threads)
    {
        float *s = malloc(sizeof(float) * (size_t)(bq * (Skv ? Skv : 1)));
        if (!s) {
#pragma omp atomic write
            failed = 1;
        }
        /* The last blocks of a causal row see the most keys: they go first. */
#pragma omp for schedule(dynamic, 1)
        for (int64_t t = 0; t < tasks; t++) {
            if (!s) continue;
            const int64_t blk = qblocks - 1 - t % qblocks, h = (t / qblocks) % Hq, b = t / (qblocks * Hq);
            const int64_t i0 = blk * bq, m = Sq - i0 < bq ? Sq - i0 : bq, kh = h / group;
            const float *qp = cpu_data(q) + b * q->strides[0] + h * q->strides[1] + i0 * q->strides[2];
            const float *kp = cpu_data(k) + b * k->strides[0] + kh * k->strides[1];
            const float *vp = cpu_data(v) + b * v->strides[0] + kh * v->strides[1];
            float *o = O + ((b * Hq + h) * Sq + i0) * Dv;
            const int64_t kcols = visible_keys(Sq, Skv, a->causal, i0 + m - 1);
            float *lse = a->lse ? cpu_data(a->lse) + (b * Hq + h) * Sq + i0 : NULL;
            if (kcols == 0) {
                memset(o, 0, sizeof(float) * (size_t)(m * Dv));
                for (int64_t r = 0; lse && r < m; r++) lse[r] = 3.0e38f;
                continue;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)kcols, (int)D, a->scale, qp,
                        (int)q->strides[2], kp, (int)k->strides[2], 0.0f, s, (int)kcols);
            float inv[CPU_ATTN_BLOCK_Q];
            for (int64_t r = 0; r < m; r++) {
                const int64_t kend = visible_keys(Sq, Skv, a->causal, i0 + r);
                float mx;
                const double l = softmax_row(a, b, h, i0 + r, kend, kcols, s + r * kcols, &mx);
                inv[r] = l > 0.0 || isnan(l) ? (float)(1.0 / l) : 0.0f; /* no visible key: zeros */
                if (lse) lse[r] = l > 0.0 || isnan(l) ? mx + (float)log(l) : 3.0e38f;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)Dv, (int)kcols, 1.0f, s,
                        (int)kcols, vp, (int)v->strides[2], 0.0f, o, (int)Dv);
            for (int64_t r = 0; r < m; r++)
                for (int64_t d = 0; d < Dv; d++) o[r * Dv + d] *= inv[r];
        }
        free(s);
    }
    if (failed)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "cpu: attention: cannot allocate %lld floats of block scratch",
                       (long long)(bq * Skv));
    return WT_OK;
}

bool cpu_attention_backward_blocks_fit(const wt_tensor *q, const wt_tensor *k, const wt_tensor *v, int threads)
{
    const int64_t B = q->shape[0], Hkv = k->shape[1], Skv = k->shape[2];
    /* One thread per (batch, kv head): fewer of them than threads would
     * leave cores idle, where the row loops use them all. */
    if (B * Hkv < threads && threads > 1) return false;
    return Skv <= CPU_ATTN_MAX_KEYS && fits_int(q->shape[3]) && fits_int(v->shape[3]);
}

wt_status cpu_attention_backward_blocks(wt_context *ctx, const wt_tensor *q, const wt_tensor *k, const wt_tensor *v,
                                        const wt_tensor *dout, const float *lse, bool causal, float scale,
                                        wt_tensor *dq, wt_tensor *dk, wt_tensor *dv)
{
    const int64_t B = q->shape[0], Hq = q->shape[1], Sq = q->shape[2], D = q->shape[3];
    const int64_t Hkv = k->shape[1], Skv = k->shape[2], Dv = v->shape[3], group = Hq / Hkv;
    const int64_t bq = CPU_ATTN_BLOCK_Q, tasks = B * Hkv;
    const float *Q = cpu_data(q), *K = cpu_data(k), *V = cpu_data(v), *dO = cpu_data(dout);
    float *dQ = cpu_data(dq), *dK = cpu_data(dk), *dV = cpu_data(dv);
    const double work = (double)B * Hq * Sq * (double)Skv * (double)(D + Dv);
    int threads = work >= CPU_PARALLEL_MIN ? cpu_threads(ctx) : 1;
    if (threads > tasks) threads = (int)(tasks ? tasks : 1);
    cpu_blas_threads(1);
    int failed = 0;
#pragma omp parallel num_threads(threads)
    {
        /* p (the scores, then the probabilities) and ds (dP, then dS). */
        float *p = malloc(sizeof(float) * (size_t)(2 * bq * (Skv ? Skv : 1)));
        float *ds = p ? p + bq * (Skv ? Skv : 1) : NULL;
        if (!p) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t t = 0; t < tasks; t++) {
            if (!p) continue;
            const int64_t kh = t % Hkv, b = t / Hkv;
            const float *kp = K + (b * Hkv + kh) * Skv * D, *vp = V + (b * Hkv + kh) * Skv * Dv;
            float *dkp = dK + (b * Hkv + kh) * Skv * D, *dvp = dV + (b * Hkv + kh) * Skv * Dv;
            memset(dkp, 0, sizeof(float) * (size_t)(Skv * D));
            memset(dvp, 0, sizeof(float) * (size_t)(Skv * Dv));
            for (int64_t h = kh * group; h < (kh + 1) * group; h++) {
                for (int64_t i0 = 0; i0 < Sq; i0 += bq) {
                    const int64_t m = Sq - i0 < bq ? Sq - i0 : bq, row0 = (b * Hq + h) * Sq + i0;
                    const float *qp = Q + row0 * D, *gp = dO + row0 * Dv;
                    float *dqp = dQ + row0 * D;
                    const int64_t kcols = visible_keys(Sq, Skv, causal, i0 + m - 1);
                    if (kcols == 0) { /* rows that see no key: zero gradients */
                        memset(dqp, 0, sizeof(float) * (size_t)(m * D));
                        continue;
                    }
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)kcols, (int)D, scale, qp,
                                (int)D, kp, (int)D, 0.0f, p, (int)kcols);
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)kcols, (int)Dv, 1.0f, gp,
                                (int)Dv, vp, (int)Dv, 0.0f, ds, (int)kcols);
                    for (int64_t r = 0; r < m; r++) {
                        float *pr = p + r * kcols, *dr = ds + r * kcols;
                        const int64_t kend = visible_keys(Sq, Skv, causal, i0 + r);
                        if (lse) { /* the forward's log-sum-exp: p = exp(s - L) at once */
                            const float L = lse[row0 + r];
                            if (L >= 3.0e38f) {
                                memset(pr, 0, sizeof(float) * (size_t)kcols);
                                memset(dr, 0, sizeof(float) * (size_t)kcols);
                                continue;
                            }
                            exp_shifted(pr, kend, L);
                            const float Di = (float)scale_dot(pr, dr, kend, 1.0f);
                            score_grads(dr, pr, kend, Di, scale);
                            for (int64_t j = kend; j < kcols; j++) pr[j] = dr[j] = 0.0f;
                            continue;
                        }
                        const float mx = row_max(pr, kend);
                        if (mx == -INFINITY) { /* p = 0 for every key */
                            memset(pr, 0, sizeof(float) * (size_t)kcols);
                            memset(dr, 0, sizeof(float) * (size_t)kcols);
                            continue;
                        }
                        /* p = exp(s - max) / l: the softmax of the forward. */
                        const double l = exp_shifted(pr, kend, mx);
                        const float Di = (float)scale_dot(pr, dr, kend, (float)(1.0 / l));
                        score_grads(dr, pr, kend, Di, scale);
                        for (int64_t j = kend; j < kcols; j++) pr[j] = dr[j] = 0.0f;
                    }
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)D, (int)kcols, 1.0f, ds,
                                (int)kcols, kp, (int)D, 0.0f, dqp, (int)D);
                    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)kcols, (int)D, (int)m, 1.0f, ds,
                                (int)kcols, qp, (int)D, 1.0f, dkp, (int)D);
                    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)kcols, (int)Dv, (int)m, 1.0f, p,
                                (int)kcols, gp, (int)Dv, 1.0f, dvp, (int)Dv);
                }
            }
        }
        free(p);
    }
    if (failed)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "cpu: attention backward: cannot allocate %lld floats of block scratch",
                       (long long)(2 * bq * Skv));
    return WT_OK;
}

bool cpu_attention_rows_only(void)
{
    const char *knob = wt_knob_text(WT_KNOB_CPU_ATTENTION);
    return knob && strcmp(knob, "rows") == 0;
}
