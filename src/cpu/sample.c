/* Token sampling on the CPU (wt_sample): the algorithm of
 * kernels/wgsl/sample.wgsl step for step - the same 256 chunks of a row
 * (chunk c: elements c, c + 256, c + 512 ..., the shader's thread c),
 * each summed in that order, the same pairwise tree over the chunks'
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
    const uint32_t negative = (uint32_t)((int32_t)u >> 31); /* all ones for a set sign bit */
    return u ^ (negative | 0x80000000u);                    /* ~u, or u with the sign bit set */
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

/* part[c] = chunk c's weights with keys >= cut, each chunk summed in
 * index order. tk, tw: the row's keys and weights, padded with 0 to whole
 * sweeps of CHUNKS (adding +0 leaves a sum's bits), so that one sweep adds
 * an element to every chunk's sum in contiguous vector lanes. */
static void chunk_sums(const uint32_t *restrict tk, const float *restrict tw, int64_t L, uint32_t cut,
                       float *restrict part)
{
    /* signed comparisons (vector units compare signed words): a ^ 2^31 >= b ^ 2^31 as i32 is a >= b as u32 */
    const int32_t scut = (int32_t)(cut ^ 0x80000000u);
    for (int c = 0; c < CHUNKS; c++) part[c] = 0.0f;
    for (int64_t j = 0; j < L; j++) {
        const uint32_t *restrict k = tk + j * CHUNKS;
        const float *restrict w = tw + j * CHUNKS;
        for (int c = 0; c < CHUNKS; c++) {
            const float wc = w[c]; /* loaded whatever the comparison says: no branch in the loop */
            part[c] += (int32_t)(k[c] ^ 0x80000000u) >= scut ? wc : 0.0f;
        }
    }
}

/* How many keys are >= cut (> 0, so the padding's 0 keys never count). */
static int64_t count_at_least(const uint32_t *tk, int64_t n, uint32_t cut)
{
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) count += tk[i] >= cut;
    return count;
}

static int32_t sample_row(const float *l, int64_t V, float inv_temp, int64_t top_k, float top_p, uint32_t key0,
                          uint32_t key1, uint32_t step, uint32_t row, uint32_t *tk, float *tw)
{
    const int64_t L = (V + CHUNKS - 1) / CHUNKS, n = L * CHUNKS;

    int64_t arg = 0;
    uint32_t best = 0;
    for (int64_t i = 0; i < V; i++) {
        uint32_t bits;
        memcpy(&bits, &l[i], 4);
        if ((bits & 0x7fffffffu) >= 0x7f800000u && bits != 0xff800000u) return -1; /* NaN or +inf */
        const uint32_t k = ordered_bits(l[i]);
        if (i == 0 || k > best) best = k, arg = i; /* the first largest key (+0 above -0, as the shader) */
    }
    if (best <= NEG_INF_KEY) return -1; /* every logit -inf */
    const float max = l[arg];
    if (inv_temp == 0.0f || top_k == 1) return (int32_t)arg;
    memset(tk, 0, sizeof *tk * (size_t)n);
    memset(tw, 0, sizeof *tw * (size_t)n);
    for (int64_t i = 0; i < V; i++) tk[i] = ordered_bits(l[i]);
    uint32_t kth = 0; /* top-k: the k-th largest key, bit by bit from the top */
    if (top_k > 0 && top_k < V) {
        for (int bit = 31; bit >= 0; bit--) {
            const uint32_t cand = kth | (1u << bit);
            if (count_at_least(tk, n, cand) >= top_k) kth = cand;
        }
    }
    for (int64_t i = 0; i < V; i++) tw[i] = tk[i] >= kth ? weight_of(l[i], max, inv_temp) : 0.0f;
    float part[CHUNKS];
    uint32_t thr = kth;
    if (top_p < 1.0f) {
        chunk_sums(tk, tw, L, 0, part);
        const float target = top_p * tree_sum(part);
        uint32_t tp = 0;
        for (int bit = 31; bit >= 0; bit--) {
            const uint32_t cand = tp | (1u << bit);
            chunk_sums(tk, tw, L, cand, part);
            if (tree_sum(part) >= target) tp = cand;
        }
        if (tp > thr) thr = tp;
    }
    /* The draw: chunk partials of the kept weights, their running sum in
     * chunk order, the first chunk whose end passes u * total, then the
     * first index of that chunk whose running sum does. */
    chunk_sums(tk, tw, L, thr, part);
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
    for (int64_t i = chosen; i < V; i += CHUNKS) {
        const float wi = tk[i] >= thr ? tw[i] : 0.0f;
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
    const int64_t B = logits->shape[0], V = logits->shape[1], n = (V + CHUNKS - 1) / CHUNKS * CHUNKS;
    const uint32_t s = step ? (uint32_t)((const int32_t *)step->storage->host)[step->offset] : 0u;
    /* greedy needs no scratch */
    const bool greedy = inv_temp == 0.0f || top_k == 1;
    uint32_t *keys = greedy ? NULL : malloc((size_t)n * sizeof *keys);
    float *w = greedy ? NULL : malloc((size_t)n * sizeof *w);
    if (!greedy && (!keys || !w)) {
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
