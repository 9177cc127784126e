/* Data movement on the CPU: elements are 2- or 4-byte bit patterns, moved
 * without looking at their values (except scatter_add's sums and sort's
 * keys). Indices are checked before anything is written. */
#include "cpu/cpu.h"
#include "cpu/half.h"

#include <stdlib.h>
#include <string.h>

static inline uint32_t load(const void *base, size_t es, int64_t e)
{
    return es == 2 ? ((const uint16_t *)base)[e] : ((const uint32_t *)base)[e];
}

static inline void store(void *base, size_t es, int64_t e, uint32_t v)
{
    if (es == 2) ((uint16_t *)base)[e] = (uint16_t)v;
    else ((uint32_t *)base)[e] = v;
}

/* Element of a view behind row-major position i of shape (its own, or one
 * of the same extents). */
static inline int64_t element_at(int64_t i, int ndim, const int64_t *shape, const int64_t *strides,
                                 int64_t offset)
{
    int64_t e = offset;
    for (int d = ndim - 1; d >= 0; d--) {
        e += (i % shape[d]) * strides[d];
        i /= shape[d];
    }
    return e;
}

/* --------------------------------------------------------------- remap */

/* Source index along one axis, or -1 for the fill value. */
static inline int64_t remap_axis(const wt_remap *r, int d, int64_t o, int64_t n)
{
    int64_t j = r->start[d] + (r->flip[d] ? -o : o);
    if (j >= 0 && j < n) return j;
    if (n == 0) return -1;
    switch (r->mode[d]) {
    case WT_REMAP_CONSTANT: return -1;
    case WT_REMAP_REFLECT: j = j < 0 ? -j : 2 * (n - 1) - j; break;
    case WT_REMAP_REPLICATE: j = j < 0 ? 0 : n - 1; break;
    case WT_REMAP_CIRCULAR: j = ((j % n) + n) % n; break;
    }
    return j < 0 ? 0 : j >= n ? n - 1 : j;
}

wt_status cpu_remap(wt_context *ctx, const wt_tensor *x, const wt_remap *map, wt_tensor *out)
{
    const size_t es = wt_dtype_storage_size(x->dtype);
    const void *src = x->storage->host;
    void *dst = out->storage->host;
    if (out->ndim == 0) {
        store(dst, es, out->offset, load(src, es, x->offset));
        return WT_OK;
    }
    /* By rows of the last axis: the outer axes' source once per row. */
    const int nd = out->ndim, last = nd - 1;
    const int64_t inner = out->shape[last], rows = out->numel / inner;
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (out->numel >= CPU_PARALLEL_MIN) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        int64_t rem = r, e = x->offset, row = 0;
        bool fill = false;
        for (int d = last - 1; d >= 0; d--) {
            int64_t o = rem % out->shape[d];
            rem /= out->shape[d];
            if (d == last - 1) row = o;
            int64_t j = remap_axis(map, d, o, x->shape[d]);
            if (j < 0) fill = true;
            else e += j * x->strides[d];
        }
        const int64_t o0 = out->offset + r * inner;
        for (int64_t c = 0; c < inner; c++) {
            int64_t j = fill ? -1 : remap_axis(map, last, c, x->shape[last]);
            bool f = j < 0 || (map->tri == WT_TRI_LOWER && c - row > map->diag) ||
                     (map->tri == WT_TRI_UPPER && c - row < map->diag);
            store(dst, es, o0 + c, f ? map->fill_bits : load(src, es, e + j * x->strides[last]));
        }
    }
    return WT_OK;
}

/* ----------------------------------------------------------- copy_into */

wt_status cpu_copy_into(wt_context *ctx, const wt_tensor *src, wt_tensor *dst)
{
    const size_t es = wt_dtype_storage_size(dst->dtype);
    int nd;
    int64_t shape[WT_MAX_DIMS], strides[2][WT_MAX_DIMS];
    wt_coalesce_pair(dst, dst->strides, src->strides, &nd, shape, strides);
    const void *s = src->storage->host;
    void *d = dst->storage->host;
    const int64_t n = dst->numel, inner = shape[nd - 1], ds = strides[0][nd - 1], ss = strides[1][nd - 1];
    const int64_t rows = n / inner;
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (n >= CPU_PARALLEL_MIN) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        int64_t de = element_at(r, nd - 1, shape, strides[0], dst->offset);
        int64_t se = element_at(r, nd - 1, shape, strides[1], src->offset);
        if (ds == 1 && ss == 1) {
            memcpy((char *)d + de * (int64_t)es, (const char *)s + se * (int64_t)es, (size_t)inner * es);
            continue;
        }
        for (int64_t i = 0; i < inner; i++) store(d, es, de + i * ds, load(s, es, se + i * ss));
    }
    return WT_OK;
}

/* The i32 value of a one-element tensor (a step value the graph reads). */
static int64_t step_value(const wt_tensor *t)
{
    return ((const int32_t *)t->storage->host)[t->offset];
}

wt_status cpu_copy_into_at(wt_context *ctx, const wt_tensor *src, const wt_tensor *start, int64_t stride, int64_t limit,
                           wt_tensor *dst)
{
    int64_t s = step_value(start);
    s = s < 0 ? 0 : s > limit ? limit : s;
    wt_tensor moved = *dst; /* the same storage, the window moved */
    moved.offset += s * stride;
    return cpu_copy_into(ctx, src, &moved);
}

/* ------------------------------------------------------ gather / scatter */

/* Every index in [0, extent), else the message names the first that is not.
 * An axis the index is broadcast along (stride 0) is read once: an
 * embedding's index spread over the row width is as many values as tokens,
 * and walking all its elements cost more than the gather's copies. */
static wt_status check_indices(const wt_tensor *index, int64_t extent)
{
    const int32_t *iv = (const int32_t *)index->storage->host;
    int64_t shape[WT_MAX_DIMS], count = 1;
    for (int d = 0; d < index->ndim; d++) {
        shape[d] = index->strides[d] == 0 ? 1 : index->shape[d];
        count *= shape[d];
    }
    if (index->numel == 0) count = 0;
    for (int64_t i = 0; i < count; i++) {
        int32_t v = iv[element_at(i, index->ndim, shape, index->strides, index->offset)];
        if (v < 0 || v >= extent)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "index %d is out of range for an axis of extent %lld", v,
                           (long long)extent);
    }
    return WT_OK;
}

wt_status cpu_gather_index(wt_context *ctx, const wt_tensor *x, int axis, const wt_tensor *index, bool trusted,
                            wt_tensor *out)
{
    (void)trusted;
    wt_status st = check_indices(index, x->shape[axis]);
    if (st != WT_OK) return st;
    const size_t es = wt_dtype_storage_size(x->dtype);
    const int32_t *iv = (const int32_t *)index->storage->host;
    const void *src = x->storage->host;
    void *dst = out->storage->host;
    /* Walked by rows of the last axis: the row's start once, then a run
     * (an embedding row is one memcpy: the index is fixed along it). */
    const int nd = out->ndim, last = nd - 1;
    const int64_t inner = out->shape[last], rows = out->numel / inner;
    const int64_t xs = x->strides[last], is = index->strides[last];
    const bool fixed_index = last != axis && is == 0;
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (out->numel >= CPU_PARALLEL_MIN) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        int64_t rem = r, e = x->offset, ie = index->offset;
        for (int d = last - 1; d >= 0; d--) {
            int64_t o = rem % out->shape[d];
            rem /= out->shape[d];
            ie += o * index->strides[d];
            if (d != axis) e += o * x->strides[d];
        }
        const int64_t o0 = out->offset + r * inner;
        if (fixed_index) {
            e += (int64_t)iv[ie] * x->strides[axis];
            if (xs == 1) {
                memcpy((char *)dst + o0 * (int64_t)es, (const char *)src + e * (int64_t)es, (size_t)inner * es);
                continue;
            }
            for (int64_t c = 0; c < inner; c++) store(dst, es, o0 + c, load(src, es, e + c * xs));
        } else if (last == axis) {
            for (int64_t c = 0; c < inner; c++)
                store(dst, es, o0 + c, load(src, es, e + (int64_t)iv[ie + c * is] * xs));
        } else {
            for (int64_t c = 0; c < inner; c++)
                store(dst, es, o0 + c,
                      load(src, es, e + c * xs + (int64_t)iv[ie + c * is] * x->strides[axis]));
        }
    }
    return WT_OK;
}

/* Serial, in index order: the sums are the same on every run. */
wt_status cpu_scatter_add(wt_context *ctx, wt_tensor *out, int axis, const wt_tensor *index,
                                 const wt_tensor *src)
{
    (void)ctx;
    wt_status st = check_indices(index, out->shape[axis]);
    if (st != WT_OK) return st;
    const int32_t *iv = (const int32_t *)index->storage->host;
    const int nd = index->ndim;
    for (int64_t i = 0; i < index->numel; i++) {
        int64_t rem = i, e = out->offset, ie = index->offset, se = src->offset;
        for (int d = nd - 1; d >= 0; d--) {
            int64_t o = rem % index->shape[d];
            rem /= index->shape[d];
            ie += o * index->strides[d];
            se += o * src->strides[d];
            if (d != axis) e += o * out->strides[d];
        }
        e += (int64_t)iv[ie] * out->strides[axis];
        if (out->dtype == WT_F32) {
            ((float *)out->storage->host)[e] += ((const float *)src->storage->host)[se];
        } else if (out->dtype == WT_I32) {
            int32_t *o = (int32_t *)out->storage->host + e;
            *o = (int32_t)((uint32_t)*o + (uint32_t)((const int32_t *)src->storage->host)[se]);
        } else {
            uint16_t *o = (uint16_t *)out->storage->host + e;
            float a, b;
            uint32_t ab = cpu_half_to_f32_bits(*o), bb = cpu_half_to_f32_bits(((const uint16_t *)src->storage->host)[se]);
            memcpy(&a, &ab, 4);
            memcpy(&b, &bb, 4);
            a += b;
            memcpy(&ab, &a, 4);
            *o = cpu_f32_bits_to_half(ab);
        }
    }
    return WT_OK;
}

/* ---------------------------------------------------------------- sort */

typedef struct sort_pair {
    uint32_t key, pos;
} sort_pair;

static int pair_cmp(const void *pa, const void *pb)
{
    const sort_pair *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

wt_status cpu_argsort_rows(wt_context *ctx, const wt_tensor *x, bool descending, int64_t k,
                                  wt_tensor *out)
{
    const size_t es = wt_dtype_storage_size(x->dtype);
    const int nd = x->ndim;
    const int64_t n = x->shape[nd - 1], rows = x->numel / n, step = x->strides[nd - 1];
    if (n > UINT32_MAX) return wt_fail(WT_ERR_UNSUPPORTED, "cpu sort: rows of more than 2^32 elements");
    const void *src = x->storage->host;
    int32_t *dst = (int32_t *)out->storage->host;
    bool failed = false;
#pragma omp parallel num_threads(cpu_threads(ctx)) if (x->numel >= CPU_PARALLEL_MIN)
    {
        sort_pair *p = malloc((size_t)n * sizeof *p);
        if (!p) {
#pragma omp atomic write
            failed = true;
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t r = 0; r < rows; r++) {
            if (!p) continue;
            int64_t e = element_at(r, nd - 1, x->shape, x->strides, x->offset);
            for (int64_t i = 0; i < n; i++) {
                uint32_t key = wt_sort_key(x->dtype, load(src, es, e + i * step));
                p[i] = (sort_pair){descending ? ~key : key, (uint32_t)i};
            }
            qsort(p, (size_t)n, sizeof *p, pair_cmp);
            for (int64_t i = 0; i < k; i++) dst[out->offset + r * k + i] = (int32_t)p[i].pos;
        }
        free(p);
    }
    if (failed) return wt_fail(WT_ERR_OUT_OF_MEMORY, "cpu sort: out of host memory for a row of %lld", (long long)n);
    return WT_OK;
}

