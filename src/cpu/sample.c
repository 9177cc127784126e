/* Token sampling on the CPU (wt_sample): the algorithm of
 * kernels/wgsl/sample.wgsl step for step - the same 256 chunks of a row,
 * each summed in index order, the same pairwise tree over the chunks'
 * partials, the same bisections over the logits' ordered bits - so that
 * only exp() can make the two differ. */
#include "core/philox.h"
#include "cpu/cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHUNKS 256
#define NEG_INF_KEY 0x007fffffu /* ordered_bits(-inf) */

/* The bits of f mapped so that unsigned order is float order (-0 < +0). */
static uint32_t ordered_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

/* exp(arg), with arguments below -80 (results near the bottom of f32's
 * normal range) taken as 0 on every backend instead of some flushing
 * denormals and some not. */
static float weight_of(float l, float max, float inv_temp)
{
    const float arg = (l - max) * inv_temp;
    return arg < -80.0f || ordered_bits(l) <= NEG_INF_KEY ? 0.0f : expf(arg);
}

/* The pairwise tree of the shader's workgroup reduction. */
static float tree_sum(float *a)
{
    for (int s = CHUNKS / 2; s > 0; s >>= 1)
        for (int t = 0; t < s; t++) a[t] += a[t + s];
    return a[0];
}

static int32_t sample_row(const float *l, int64_t V, float inv_temp, int64_t top_k, float top_p, uint32_t key0,
                          uint32_t key1, uint32_t step, uint32_t row, uint32_t *keys, float *w)
{
    const int64_t L = (V + CHUNKS - 1) / CHUNKS;
    int64_t arg = 0;
    for (int64_t i = 0; i < V; i++) {
        uint32_t bits;
        memcpy(&bits, &l[i], 4);
        if ((bits & 0x7fffffffu) >= 0x7f800000u && bits != 0xff800000u) return -1; /* NaN or +inf */
        keys[i] = ordered_bits(l[i]);
        if (keys[i] > keys[arg]) arg = i; /* the first largest key (+0 above -0, as the shader) */
    }
    if (keys[arg] <= NEG_INF_KEY) return -1; /* every logit -inf */
    const float max = l[arg];
    if (inv_temp == 0.0f || top_k == 1) return (int32_t)arg;
    uint32_t tk = 0;
    if (top_k > 0 && top_k < V) {
        for (int bit = 31; bit >= 0; bit--) {
            const uint32_t cand = tk | (1u << bit);
            int64_t count = 0;
            for (int64_t i = 0; i < V; i++) count += keys[i] >= cand;
            if (count >= top_k) tk = cand;
        }
    }
    for (int64_t i = 0; i < V; i++) w[i] = keys[i] >= tk ? weight_of(l[i], max, inv_temp) : 0.0f;
    float part[CHUNKS];
    uint32_t thr = tk;
    if (top_p < 1.0f) {
        for (int c = 0; c < CHUNKS; c++) {
            float s = 0;
            for (int64_t i = c * L; i < (c + 1) * L && i < V; i++) s += w[i];
            part[c] = s;
        }
        const float target = top_p * tree_sum(part);
        uint32_t tp = 0;
        for (int bit = 31; bit >= 0; bit--) {
            const uint32_t cand = tp | (1u << bit);
            for (int c = 0; c < CHUNKS; c++) {
                float s = 0;
                for (int64_t i = c * L; i < (c + 1) * L && i < V; i++) s += keys[i] >= cand ? w[i] : 0.0f;
                part[c] = s;
            }
            if (tree_sum(part) >= target) tp = cand;
        }
        if (tp > thr) thr = tp;
    }
    /* The draw: chunk partials of the kept weights, their running sum in
     * chunk order, the first chunk whose end passes u * total, then the
     * first index of that chunk whose running sum does. */
    for (int c = 0; c < CHUNKS; c++) {
        float s = 0;
        for (int64_t i = c * L; i < (c + 1) * L && i < V; i++) s += keys[i] >= thr ? w[i] : 0.0f;
        part[c] = s;
    }
    float total = 0;
    for (int c = 0; c < CHUNKS; c++) total += part[c];
    const uint32_t ctr[4] = {step, row, 1u, 0u}, key[2] = {key0, key1};
    uint32_t words[4];
    wt_philox4x32_10(ctr, key, words);
    const float u = (float)(words[0] >> 8) * (1.0f / 16777216.0f);
    const float target = u * total;
    float acc = 0;
    int chosen = -1, last_nonempty = 0;
    for (int c = 0; c < CHUNKS; c++) {
        if (part[c] > 0.0f) last_nonempty = c;
        const float next = acc + part[c];
        if (chosen < 0 && next > target && part[c] > 0.0f) {
            chosen = c;
            break;
        }
        acc = next;
    }
    if (chosen < 0) { /* u * total rounded up to the total */
        chosen = last_nonempty;
        acc = 0;
        for (int c = 0; c < chosen; c++) acc += part[c];
    }
    int64_t pick = -1;
    for (int64_t i = chosen * L; i < (chosen + 1) * L && i < V; i++) {
        const float wi = keys[i] >= thr ? w[i] : 0.0f;
        if (wi > 0.0f) {
            pick = i;
            acc += wi;
            if (acc > target) break;
        }
    }
    return (int32_t)pick;
}

wt_status cpu_sample(wt_context *ctx, const wt_tensor *logits, const wt_tensor *step, float inv_temp, int64_t top_k,
                     float top_p, uint64_t seed, wt_tensor *out)
{
    (void)ctx;
    const int64_t B = logits->shape[0], V = logits->shape[1];
    const uint32_t s = step ? (uint32_t)((const int32_t *)step->storage->host)[step->offset] : 0u;
    uint32_t *keys = malloc((size_t)V * sizeof *keys);
    float *w = malloc((size_t)V * sizeof *w);
    if (!keys || !w) {
        free(keys);
        free(w);
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "sample: %lld-element scratch", (long long)V);
    }
    const float *l = cpu_data(logits);
    int32_t *o = (int32_t *)cpu_data(out);
    for (int64_t b = 0; b < B; b++)
        o[b] = sample_row(l + b * V, V, inv_temp, top_k, top_p, (uint32_t)seed, (uint32_t)(seed >> 32), s,
                          (uint32_t)b, keys, w);
    free(keys);
    free(w);
    return WT_OK;
}
