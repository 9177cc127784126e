/* The backward of attention without a mask on the CPU, as
 * flash-attention computes it: nothing of size Sq x Skv is stored.
 *
 * With s_ij = scale q_i . k_j, p_ij = exp(s_ij - L_i) (L_i the row's
 * log-sum-exp) and dp_ij = dout_i . v_j:
 *   D_i  = sum_j p_ij dp_ij                 (= dout_i . out_i)
 *   dq_i = scale sum_j p_ij (dp_ij - D_i) k_j
 *   dk_j = scale sum_i p_ij (dp_ij - D_i) q_i
 *   dv_j = sum_i p_ij dout_i
 * Pass 1, one thread per query row: L_i, D_i and dq_i, with the row's
 * scores, then p_ij, and dp_ij kept in the thread's 2 Skv floats (each dot
 * product is computed once, not once per walk over the keys). Pass 2, one
 * thread per key row of a kv head: dk_j and dv_j over the queries of every q head of its group, from L and D.
 * Causal: query i sees key j only if j <= i + Skv - Sq; a query that sees
 * none has zero gradients (its output was zeros). With the forward's
 * log-sum-exp (node in5), L_i is taken from it instead of a pass of exp
 * over the row's scores. */
#include "cpu/cpu.h"
#include "cpu/attention_blocks.h"

#include <math.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct bw_dims {
    int64_t B, Hq, Sq, D, Hkv, Skv, Dv, group;
} bw_dims;

static float dotf(const float *restrict a, const float *restrict b, int64_t n)
{
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t d = 0; d < n; d++) s += a[d] * b[d];
    return s;
}

/* Keys [0, kend) that query i sees. */
static int64_t key_end(const bw_dims *n, bool causal, int64_t i)
{
    if (!causal) return n->Skv;
    int64_t last = i + n->Skv - n->Sq;
    return last < 0 ? 0 : (last + 1 < n->Skv ? last + 1 : n->Skv);
}

wt_status cpu_attention_backward(wt_context *ctx, const wt_tensor *q, const wt_tensor *k, const wt_tensor *v,
                                 const wt_tensor *dout, const wt_tensor *lse_in, bool causal, float scale,
                                 wt_tensor *dq, wt_tensor *dk, wt_tensor *dv)
{
    const wt_tensor *all[7] = {q, k, v, dout, dq, dk, dv};
    for (int t = 0; t < 7; t++) {
        wt_status st = cpu_check_f32("attention backward", all[t]);
        if (st != WT_OK) return st;
    }
    bw_dims n = {q->shape[0], q->shape[1], q->shape[2], q->shape[3], k->shape[1], k->shape[2], v->shape[3], 0};
    n.group = n.Hq / n.Hkv;
    /* The forward's log-sum-exp (3e38 for a row without keys), or NULL. */
    if (lse_in && (cpu_check_f32("attention backward", lse_in) != WT_OK || lse_in->numel != n.B * n.Hq * n.Sq))
        lse_in = NULL;
    const float *L_in = lse_in ? cpu_data(lse_in) : NULL;
    if (!cpu_attention_rows_only() && cpu_attention_backward_blocks_fit(q, k, v, cpu_threads(ctx)))
        return cpu_attention_backward_blocks(ctx, q, k, v, dout, L_in, causal, scale, dq, dk, dv);
    const int64_t rows = n.B * n.Hq * n.Sq, keys = n.B * n.Hkv * n.Skv;
    float *lse = malloc(sizeof(float) * (size_t)(2 * (rows ? rows : 1)));
    if (!lse)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "cpu: attention backward: cannot allocate %lld floats", (long long)(2 * rows));
    float *dsum = lse + rows;
    const float *Q = cpu_data(q), *K = cpu_data(k), *V = cpu_data(v), *dO = cpu_data(dout);
    float *dQ = cpu_data(dq), *dK = cpu_data(dk), *dV = cpu_data(dv);
    const double work = (double)rows * (double)n.Skv * (double)(n.D + n.Dv);
    int threads = work >= CPU_PARALLEL_MIN ? cpu_threads(ctx) : 1;
    /* Per thread: the row's scores, then its p_ij, and its dp_ij. */
    const size_t per_thread = 2 * (size_t)(n.Skv ? n.Skv : 1);
    float *row_scratch = malloc(sizeof(float) * per_thread * (size_t)threads);
    if (!row_scratch) {
        free(lse);
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "cpu: attention backward: cannot allocate %lld floats of row scratch",
                       (long long)(per_thread * (size_t)threads));
    }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4)
    for (int64_t r = 0; r < rows; r++) {
#ifdef _OPENMP
        float *sc = row_scratch + per_thread * (size_t)omp_get_thread_num();
#else
        float *sc = row_scratch;
#endif
        float *dp = sc + per_thread / 2;
        const int64_t i = r % n.Sq, h = (r / n.Sq) % n.Hq, b = r / (n.Sq * n.Hq), kh = h / n.group;
        const float *qi = Q + r * n.D, *gi = dO + r * n.Dv;
        const float *kp = K + (b * n.Hkv + kh) * n.Skv * n.D, *vp = V + (b * n.Hkv + kh) * n.Skv * n.Dv;
        float *dqi = dQ + r * n.D;
        const int64_t kend = key_end(&n, causal, i);
        float mx = -INFINITY;
        for (int64_t j = 0; j < kend; j++) {
            sc[j] = scale * dotf(qi, kp + j * n.D, n.D);
            mx = fmaxf(mx, sc[j]);
        }
        for (int64_t d = 0; d < n.D; d++) dqi[d] = 0.0f;
        if (kend == 0 || mx == -INFINITY) {
            lse[r] = INFINITY; /* p = 0 for every key */
            dsum[r] = 0.0f;
            continue;
        }
        if (L_in && L_in[r] >= 3.0e38f) {
            lse[r] = INFINITY;
            dsum[r] = 0.0f;
            continue;
        }
        double dd = 0.0;
        float L;
        if (L_in) {
            L = L_in[r];
        } else {
            double l = 0.0;
            for (int64_t j = 0; j < kend; j++) l += exp((double)(sc[j] - mx));
            L = mx + (float)log(l);
        }
        for (int64_t j = 0; j < kend; j++) {
            sc[j] = expf(sc[j] - L); /* the score becomes p_ij */
            dp[j] = dotf(gi, vp + j * n.Dv, n.Dv);
            dd += (double)sc[j] * dp[j];
        }
        const float Di = (float)dd;
        for (int64_t j = 0; j < kend; j++) {
            const float *kj = kp + j * n.D;
            float ds = sc[j] * (dp[j] - Di) * scale;
            for (int64_t d = 0; d < n.D; d++) dqi[d] += ds * kj[d];
        }
        lse[r] = L;
        dsum[r] = Di;
    }
    free(row_scratch);
    threads = work >= CPU_PARALLEL_MIN ? cpu_threads(ctx) : 1;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4)
    for (int64_t c = 0; c < keys; c++) {
        const int64_t j = c % n.Skv, kh = (c / n.Skv) % n.Hkv, b = c / (n.Skv * n.Hkv);
        const float *kj = K + c * n.D, *vj = V + c * n.Dv;
        float *dkj = dK + c * n.D, *dvj = dV + c * n.Dv;
        for (int64_t d = 0; d < n.D; d++) dkj[d] = 0.0f;
        for (int64_t d = 0; d < n.Dv; d++) dvj[d] = 0.0f;
        /* The first query that sees key j. */
        int64_t i0 = causal ? j - (n.Skv - n.Sq) : 0;
        if (i0 < 0) i0 = 0;
        for (int64_t h = kh * n.group; h < (kh + 1) * n.group; h++) {
            for (int64_t i = i0; i < n.Sq; i++) {
                const int64_t r = (b * n.Hq + h) * n.Sq + i;
                if (lse[r] == INFINITY) continue;
                const float *qi = Q + r * n.D, *gi = dO + r * n.Dv;
                float p = expf(scale * dotf(qi, kj, n.D) - lse[r]);
                float ds = p * (dotf(gi, vj, n.Dv) - dsum[r]) * scale;
                for (int64_t d = 0; d < n.Dv; d++) dvj[d] += p * gi[d];
                for (int64_t d = 0; d < n.D; d++) dkj[d] += ds * qi[d];
            }
        }
    }
    free(lse);
    return WT_OK;
}
