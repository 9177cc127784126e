/* Attention on the CPU: one fused loop per query row (threads over
 * batch x heads x queries). A row's scores live in a per-thread buffer of
 * Skv floats; nothing of size Sq x Skv is ever stored. */
#include "cpu/cpu.h"
#include "cpu/attention_blocks.h"

#include <math.h>
#include <stdlib.h>

CPU_MULTIVERSION
static float dot_unit(const float *restrict a, const float *restrict b, int64_t n)
{
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t d = 0; d < n; d++) s += a[d] * b[d];
    return s;
}

CPU_MULTIVERSION
static void axpy_unit(float *restrict acc, float p, const float *restrict v, int64_t n)
{
#pragma omp simd
    for (int64_t d = 0; d < n; d++) acc[d] += p * v[d];
}

typedef struct attn_dims {
    int64_t B, Hq, Sq, D, Hkv, Skv, Dv, group;
} attn_dims;

/* One query row (b, h, i) into o (Dv floats) and, when lse is not NULL,
 * its log-sum-exp into *lse. s: Skv floats, qb: D, acc: Dv. */
static void attend_row(const wt_attention_args *a, const attn_dims *n, int64_t b, int64_t h, int64_t i,
                       float *s, float *qb, float *acc, float *o, float *lse)
{
    const wt_tensor *q = a->q, *k = a->k, *v = a->v, *m = a->mask;
    const int64_t kh = h / n->group;
    const float *qp = cpu_data(q) + b * q->strides[0] + h * q->strides[1] + i * q->strides[2];
    const float *kp = cpu_data(k) + b * k->strides[0] + kh * k->strides[1];
    const float *vp = cpu_data(v) + b * v->strides[0] + kh * v->strides[1];
    int64_t kend = n->Skv;
    if (a->causal) {
        int64_t last = i + n->Skv - n->Sq; /* the last key this query sees */
        kend = last < 0 ? 0 : (last + 1 < n->Skv ? last + 1 : n->Skv);
    }
    for (int64_t d = 0; d < n->D; d++) qb[d] = qp[d * q->strides[3]] * a->scale;
    const int64_t ks = k->strides[3];
    float mx = -INFINITY;
    for (int64_t j = 0; j < kend; j++) {
        const float *kj = kp + j * k->strides[2];
        float x;
        if (ks == 1) {
            x = dot_unit(qb, kj, n->D);
        } else {
            x = 0.0f;
            for (int64_t d = 0; d < n->D; d++) x += qb[d] * kj[d * ks];
        }
        if (m) {
            const int64_t mi = m->offset + b * m->strides[0] + h * m->strides[1] + i * m->strides[2] +
                               j * m->strides[3];
            if (a->mask_is_bool)
                x = ((const uint32_t *)m->storage->host)[mi] ? x : -INFINITY;
            else
                x += ((const float *)m->storage->host)[mi];
        }
        s[j] = x;
        mx = fmaxf(mx, x);
    }
    for (int64_t d = 0; d < n->Dv; d++) acc[d] = 0.0f;
    if (mx == -INFINITY) { /* no visible key: PyTorch's zeros */
        for (int64_t d = 0; d < n->Dv; d++) o[d] = 0.0f;
        if (lse) *lse = 3.0e38f;
        return;
    }
    /* A NaN score (fmaxf skipped it) gives p = NaN: the row is NaN. */
    double l = 0.0;
    const int64_t vs = v->strides[3];
    for (int64_t j = 0; j < kend; j++) {
        float p = expf(s[j] - mx);
        l += p;
        if (p == 0.0f) continue;
        const float *vj = vp + j * v->strides[2];
        if (vs == 1) {
            axpy_unit(acc, p, vj, n->Dv);
        } else {
            for (int64_t d = 0; d < n->Dv; d++) acc[d] += p * vj[d * vs];
        }
    }
    const float inv = (float)(1.0 / l);
    for (int64_t d = 0; d < n->Dv; d++) o[d] = acc[d] * inv;
    if (lse) *lse = mx + (float)log(l);
}

bool cpu_attention_writes_lse(wt_context *ctx, const wt_attention_args *a)
{
    (void)ctx;
    return !a->mask && !a->kv_length && a->q->dtype == WT_F32;
}

wt_status cpu_attention(wt_context *ctx, const wt_attention_args *a)
{
    wt_status st = cpu_check_f32("attention", a->q);
    if (st != WT_OK || (st = cpu_check_f32("attention", a->k)) != WT_OK ||
        (st = cpu_check_f32("attention", a->v)) != WT_OK || (st = cpu_check_f32("attention", a->out)) != WT_OK)
        return st; /* f16: the API runs it in f32 */
    if (a->lse && (a->mask || a->kv_length || (st = cpu_check_f32("attention", a->lse)) != WT_OK))
        return st != WT_OK ? st : wt_fail(WT_ERR_UNSUPPORTED, "cpu: attention: no log-sum-exp with a mask or kv_length");
    attn_dims n = {a->q->shape[0], a->q->shape[1], a->q->shape[2], a->q->shape[3],
                   a->k->shape[1], a->k->shape[2], a->v->shape[3], 0};
    n.group = n.Hq / n.Hkv;
    if (a->kv_length) { /* only the first kv_length keys exist this step */
        const int64_t kl = ((const int32_t *)a->kv_length->storage->host)[a->kv_length->offset];
        n.Skv = kl < 0 ? 0 : kl < n.Skv ? kl : n.Skv;
    }
    if (!cpu_attention_rows_only() && cpu_attention_blocks_fit(a, n.Skv)) return cpu_attention_blocks(ctx, a, n.Skv);
    const int64_t rows = n.B * n.Hq * n.Sq;
    const double work = (double)rows * (double)n.Skv * (double)(n.D + n.Dv);
    int threads = work >= CPU_PARALLEL_MIN ? cpu_threads(ctx) : 1;
    if (threads > rows) threads = (int)rows;
    float *o = cpu_data(a->out), *lse = a->lse ? cpu_data(a->lse) : NULL;
    int failed = 0;
#pragma omp parallel num_threads(threads)
    {
        float *buf = malloc(sizeof(float) * (size_t)(n.Skv + n.D + n.Dv));
        if (!buf) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 4)
        for (int64_t r = 0; r < rows; r++) {
            if (!buf) continue;
            const int64_t i = r % n.Sq, h = (r / n.Sq) % n.Hq, b = r / (n.Sq * n.Hq);
            attend_row(a, &n, b, h, i, buf, buf + n.Skv, buf + n.Skv + n.D, o + r * n.Dv, lse ? lse + r : NULL);
        }
        free(buf);
    }
    if (failed)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "cpu: attention: cannot allocate %lld floats of row scratch",
                       (long long)(n.Skv + n.D + n.Dv));
    return WT_OK;
}
