/* The GGUF writer: keys and values copied as they are set, tensors
 * retained (or their raw bytes copied) until wt_gguf_writer_save writes
 * the file. */
#include "io/gguf_format.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the writer */

typedef struct w_kv {
    char *key;
    gguf_arena mem; /* the value's copy */
    wt_gguf_value v;
} w_kv;

typedef struct w_tensor {
    char *name;
    uint32_t type;
    int n_dims;
    uint64_t dims[WT_GGUF_MAX_DIMS];
    uint64_t bytes;
    wt_tensor *t; /* retained; or */
    void *raw;    /* a copy of the bytes */
} w_tensor;

struct wt_gguf_writer {
    w_kv *kv;
    int nkv, kv_cap;
    w_tensor *tensors;
    int ntensors, t_cap;
};

wt_status wt_gguf_writer_create(wt_gguf_writer **out)
{
    if (!out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_gguf_writer_create: out is NULL");
    *out = calloc(1, sizeof **out);
    return *out ? WT_OK : gguf_oom("wt_gguf_writer_create");
}

void wt_gguf_writer_destroy(wt_gguf_writer *w)
{
    if (!w) return;
    for (int i = 0; i < w->nkv; i++) {
        free(w->kv[i].key);
        gguf_arena_free(&w->kv[i].mem);
    }
    for (int i = 0; i < w->ntensors; i++) {
        free(w->tensors[i].name);
        wt_tensor_release(w->tensors[i].t);
        free(w->tensors[i].raw);
    }
    free(w->kv);
    free(w->tensors);
    free(w);
}

/* Checks a caller's value and deep-copies it into a. */
static wt_status copy_value(const char *fn, gguf_arena *a, const wt_gguf_value *src, wt_gguf_value *dst, int depth)
{
    if (!gguf_type_known((uint32_t)src->type))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: value type %d is not a GGUF value type", fn, (int)src->type);
    memset(dst, 0, sizeof *dst);
    dst->type = src->type;
    if (gguf_value_size(src->type)) {
        dst->u = src->type == WT_GGUF_BOOL ? src->u != 0 : src->u;
        dst->i = src->i;
        dst->f = src->f;
        return WT_OK;
    }
    if (src->type == WT_GGUF_STRING) {
        if (!src->str && src->str_len > 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: a string value is NULL", fn);
        if (src->str_len >= SIZE_MAX) return gguf_oom(fn);
        char *s = gguf_arena_alloc(a, (size_t)src->str_len + 1);
        if (!s) return gguf_oom(fn);
        if (src->str_len) memcpy(s, src->str, (size_t)src->str_len);
        s[src->str_len] = 0;
        dst->str = s;
        dst->str_len = src->str_len;
        return WT_OK;
    }
    if (!gguf_type_known((uint32_t)src->elem_type))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: array element type %d is not a GGUF value type", fn,
                       (int)src->elem_type);
    if (depth >= WT_GGUF_MAX_NESTING)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: arrays nested deeper than %d", fn, WT_GGUF_MAX_NESTING);
    dst->elem_type = src->elem_type;
    dst->count = src->count;
    size_t es = gguf_value_size(src->elem_type), bytes;
    if (es) {
        if (!src->elems && src->count > 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: array elems is NULL", fn);
        if (src->count > SIZE_MAX || !wt_mul_size((size_t)src->count, es, &bytes)) return gguf_oom(fn);
        void *e = gguf_arena_alloc(a, bytes);
        if (!e) return gguf_oom(fn);
        if (bytes) memcpy(e, src->elems, bytes);
        if (src->elem_type == WT_GGUF_BOOL)
            for (size_t k = 0; k < bytes; k++) ((uint8_t *)e)[k] = ((uint8_t *)e)[k] != 0;
        dst->elems = e;
        return WT_OK;
    }
    if (!src->items && src->count > 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: array items is NULL", fn);
    if (src->count > SIZE_MAX || !wt_mul_size((size_t)src->count, sizeof(wt_gguf_value), &bytes)) return gguf_oom(fn);
    wt_gguf_value *items = gguf_arena_alloc(a, bytes);
    if (!items) return gguf_oom(fn);
    dst->items = items;
    for (uint64_t k = 0; k < src->count; k++) {
        if (src->items[k].type != src->elem_type)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: array item %" PRIu64 " is a %s in an array of %s", fn, k,
                           gguf_type_name(src->items[k].type), gguf_type_name(src->elem_type));
        wt_status st = copy_value(fn, a, &src->items[k], &items[k], depth + 1);
        if (st != WT_OK) return st;
    }
    return WT_OK;
}

static char *dup_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

wt_status wt_gguf_writer_set(wt_gguf_writer *w, const char *key, const wt_gguf_value *value)
{
    const char *fn = "wt_gguf_writer_set";
    if (!w || !key || !value) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: NULL argument", fn);
    if (!key[0]) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: key is empty", fn);
    if (strcmp(key, "general.alignment") == 0 &&
        (value->type != WT_GGUF_U32 || value->u == 0 || value->u > UINT32_MAX || (value->u & (value->u - 1)) != 0))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: general.alignment must be a u32 power of two", fn);
    w_kv nk = {0};
    wt_status st = copy_value(fn, &nk.mem, value, &nk.v, 0);
    if (st != WT_OK) {
        gguf_arena_free(&nk.mem);
        return st;
    }
    for (int i = 0; i < w->nkv; i++)
        if (strcmp(w->kv[i].key, key) == 0) { /* replaced in place */
            gguf_arena_free(&w->kv[i].mem);
            w->kv[i].mem = nk.mem;
            w->kv[i].v = nk.v;
            return WT_OK;
        }
    nk.key = dup_string(key);
    if (!nk.key || (w->nkv == w->kv_cap && w->kv_cap > INT32_MAX / 2)) {
        free(nk.key);
        gguf_arena_free(&nk.mem);
        return gguf_oom(fn);
    }
    if (w->nkv == w->kv_cap) {
        int cap = w->kv_cap ? 2 * w->kv_cap : 16;
        w_kv *p = realloc(w->kv, sizeof *p * (size_t)cap);
        if (!p) {
            free(nk.key);
            gguf_arena_free(&nk.mem);
            return gguf_oom(fn);
        }
        w->kv = p;
        w->kv_cap = cap;
    }
    w->kv[w->nkv++] = nk;
    return WT_OK;
}

wt_status wt_gguf_writer_set_u32(wt_gguf_writer *w, const char *key, uint32_t v)
{
    wt_gguf_value val = {.type = WT_GGUF_U32, .u = v};
    return wt_gguf_writer_set(w, key, &val);
}

wt_status wt_gguf_writer_set_string(wt_gguf_writer *w, const char *key, const char *s)
{
    if (!s) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_gguf_writer_set_string: s is NULL");
    wt_gguf_value val = {.type = WT_GGUF_STRING, .str = s, .str_len = strlen(s)};
    return wt_gguf_writer_set(w, key, &val);
}

/* ggml's readers refuse names of GGML_MAX_NAME (64) bytes or more. */
#define GGUF_MAX_NAME 63

static wt_status add_entry(const char *fn, wt_gguf_writer *w, const char *name, w_tensor *e)
{
    if (!name || !name[0] || strlen(name) > GGUF_MAX_NAME)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: a tensor name must have 1 to %d bytes", fn, GGUF_MAX_NAME);
    for (int i = 0; i < w->ntensors; i++)
        if (strcmp(w->tensors[i].name, name) == 0)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: tensor name '%s' is taken", fn, name);
    if (w->ntensors == w->t_cap) {
        if (w->t_cap > INT32_MAX / 2) return gguf_oom(fn);
        int cap = w->t_cap ? 2 * w->t_cap : 16;
        w_tensor *p = realloc(w->tensors, sizeof *p * (size_t)cap);
        if (!p) return gguf_oom(fn);
        w->tensors = p;
        w->t_cap = cap;
    }
    if (!(e->name = dup_string(name))) return gguf_oom(fn);
    w->tensors[w->ntensors++] = *e;
    return WT_OK;
}

wt_status wt_gguf_writer_add_tensor(wt_gguf_writer *w, const char *name, const wt_tensor *t)
{
    const char *fn = "wt_gguf_writer_add_tensor";
    if (!w || !t) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: NULL argument", fn);
    w_tensor e = {0};
    switch (wt_tensor_dtype(t)) {
    case WT_F32: e.type = GGML_F32; break;
    case WT_F16: e.type = GGML_F16; break;
    case WT_I32: e.type = GGML_I32; break;
    default:
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: dtype %s has no GGUF type here (F32, F16 and I32 are written)", fn,
                       wt_dtype_name(wt_tensor_dtype(t)));
    }
    int nd = wt_tensor_ndim(t);
    if (nd > WT_GGUF_MAX_DIMS)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: %d dims (GGUF holds at most %d)", fn, nd, WT_GGUF_MAX_DIMS);
    const int64_t *shape = wt_tensor_shape(t);
    e.n_dims = nd ? nd : 1;
    e.dims[0] = 1;
    for (int d = 0; d < nd; d++) e.dims[d] = (uint64_t)shape[nd - 1 - d];
    e.bytes = (uint64_t)wt_tensor_numel(t) * wt_dtype_size(wt_tensor_dtype(t));
    e.t = (wt_tensor *)t;
    wt_status st = add_entry(fn, w, name, &e);
    if (st == WT_OK) wt_tensor_retain((wt_tensor *)t);
    return st;
}

wt_status wt_gguf_writer_add_raw(wt_gguf_writer *w, const char *name, uint32_t ggml_type, int n_dims,
                                 const uint64_t *dims, const void *data, size_t bytes)
{
    const char *fn = "wt_gguf_writer_add_raw";
    if (!w || !dims) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: NULL argument", fn);
    const ggml_type_row *r = gguf_ggml_type(ggml_type);
    if (!r) return wt_fail(WT_ERR_UNSUPPORTED, "%s: unknown ggml type id %" PRIu32, fn, ggml_type);
    if (n_dims < 1 || n_dims > WT_GGUF_MAX_DIMS)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: n_dims %d outside [1, %d]", fn, n_dims, WT_GGUF_MAX_DIMS);
    w_tensor e = {.type = ggml_type, .n_dims = n_dims};
    memcpy(e.dims, dims, sizeof *dims * (size_t)n_dims);
    uint64_t numel;
    const char *why;
    if (!gguf_tensor_bytes(r, n_dims, e.dims, &numel, &e.bytes, &why))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: tensor '%s' (%s): %s", fn, name ? name : "(null)", r->name, why);
    if (bytes != e.bytes)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s dims need %" PRIu64 " bytes, %zu given", fn, r->name, e.bytes,
                       bytes);
    if (!data && bytes > 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: data is NULL", fn);
    e.raw = malloc(bytes ? bytes : 1);
    if (!e.raw) return gguf_oom(fn);
    if (bytes) memcpy(e.raw, data, bytes);
    wt_status st = add_entry(fn, w, name, &e);
    if (st != WT_OK) free(e.raw);
    return st;
}

static bool put(FILE *f, const void *p, size_t n) { return io_write_all(f, p, n); }
static bool put_u32(FILE *f, uint32_t v) { return put(f, &v, 4); }
static bool put_u64(FILE *f, uint64_t v) { return put(f, &v, 8); }
static bool put_str(FILE *f, const char *s, uint64_t n) { return put_u64(f, n) && put(f, s, (size_t)n); }

static bool put_value(FILE *f, const wt_gguf_value *v)
{
    uint8_t b[8];
    switch (v->type) {
    case WT_GGUF_U8: case WT_GGUF_BOOL: b[0] = (uint8_t)v->u; return put(f, b, 1);
    case WT_GGUF_I8: b[0] = (uint8_t)(int8_t)v->i; return put(f, b, 1);
    case WT_GGUF_U16: { uint16_t x = (uint16_t)v->u; return put(f, &x, 2); }
    case WT_GGUF_I16: { int16_t x = (int16_t)v->i; return put(f, &x, 2); }
    case WT_GGUF_U32: { uint32_t x = (uint32_t)v->u; return put(f, &x, 4); }
    case WT_GGUF_I32: { int32_t x = (int32_t)v->i; return put(f, &x, 4); }
    case WT_GGUF_F32: { float x = (float)v->f; return put(f, &x, 4); }
    case WT_GGUF_U64: return put(f, &v->u, 8);
    case WT_GGUF_I64: return put(f, &v->i, 8);
    case WT_GGUF_F64: return put(f, &v->f, 8);
    case WT_GGUF_STRING: return put_str(f, v->str, v->str_len);
    case WT_GGUF_ARRAY: {
        if (!put_u32(f, (uint32_t)v->elem_type) || !put_u64(f, v->count)) return false;
        size_t es = gguf_value_size(v->elem_type);
        if (es) return put(f, v->elems, (size_t)v->count * es);
        for (uint64_t k = 0; k < v->count; k++)
            if (!put_value(f, &v->items[k])) return false;
        return true;
    }
    }
    return false;
}

static bool put_pad(FILE *f, uint64_t pos, uint32_t align)
{
    static const uint8_t zeros[256];
    uint64_t pad = (align - pos % align) % align;
    while (pad > 0) {
        size_t n = pad < sizeof zeros ? (size_t)pad : sizeof zeros;
        if (!put(f, zeros, n)) return false;
        pad -= n;
    }
    return true;
}

static uint64_t align_up(uint64_t v, uint32_t a) { return (v + a - 1) / a * a; }

wt_status wt_gguf_writer_save(const wt_gguf_writer *w, const char *path)
{
    const char *fn = "wt_gguf_writer_save";
    if (!w || !path) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: NULL argument", fn);
    uint32_t align = GGUF_DEFAULT_ALIGNMENT;
    for (int i = 0; i < w->nkv; i++)
        if (strcmp(w->kv[i].key, "general.alignment") == 0) align = (uint32_t)w->kv[i].v.u;
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 5);
    if (!tmp) return gguf_oom(fn);
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp", 5);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        free(tmp);
        return wt_fail(WT_ERR_IO, "%s: cannot create '%s'", fn, path);
    }
    bool ok = put(f, "GGUF", 4) && put_u32(f, 3) && put_u64(f, (uint64_t)w->ntensors) && put_u64(f, (uint64_t)w->nkv);
    for (int i = 0; i < w->nkv && ok; i++)
        ok = put_str(f, w->kv[i].key, strlen(w->kv[i].key)) && put_u32(f, (uint32_t)w->kv[i].v.type) &&
             put_value(f, &w->kv[i].v);
    uint64_t off = 0;
    for (int i = 0; i < w->ntensors && ok; i++) {
        const w_tensor *t = &w->tensors[i];
        ok = put_str(f, t->name, strlen(t->name)) && put_u32(f, (uint32_t)t->n_dims);
        for (int d = 0; d < t->n_dims && ok; d++) ok = put_u64(f, t->dims[d]);
        ok = ok && put_u32(f, t->type) && put_u64(f, off);
        off = align_up(off + t->bytes, align);
    }
    long here = ok ? ftell(f) : -1;
    ok = ok && here >= 0 && put_pad(f, (uint64_t)here, align);
    wt_status st = WT_OK;
    for (int i = 0; i < w->ntensors && ok; i++) {
        const w_tensor *t = &w->tensors[i];
        if (t->raw) {
            ok = put(f, t->raw, (size_t)t->bytes);
        } else {
            void *data = NULL;
            size_t bytes = 0;
            st = io_read_tensor(fn, t->t, &data, &bytes);
            ok = st == WT_OK && put(f, data, bytes);
            free(data);
        }
        ok = ok && put_pad(f, t->bytes, align);
    }
    ok = fclose(f) == 0 && ok;
    if (st == WT_OK && !ok) st = wt_fail(WT_ERR_IO, "%s: writing '%s' failed", fn, path);
    if (st == WT_OK && rename(tmp, path) != 0)
        st = wt_fail(WT_ERR_IO, "%s: cannot rename the file into '%s'", fn, path);
    if (st != WT_OK) remove(tmp);
    free(tmp);
    return st;
}
