/* safetensors files: an 8-byte little-endian header length, a JSON header,
 * then the data. The header is read by the library's JSON reader (json.h);
 * this file knows the shape of the one document. */
#include "io/io.h"
#include "io/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

/* The reference implementation's limit on the header. */
#define ST_MAX_HEADER ((uint64_t)100 << 20)
/* Containers nested at most this deep, the header object counting as one:
 * a tensor entry's shape is at the third level, and unknown keys may nest
 * a few more, not without bound. */
#define ST_MAX_DEPTH 9

typedef struct st_entry {
    const char *name; /* in the header document */
    char dtype[16];
    io_kind kind;
    int ndim;
    int64_t shape[WT_MAX_DIMS];
    uint64_t begin, end;
} st_entry;

struct wt_safetensors {
    io_source src;
    uint64_t data_off; /* where the data section starts in the source */
    wt_json header;    /* names and metadata point into it */
    st_entry *entries;
    int count;
    const wt_json_node *meta; /* the __metadata__ object, or NULL */
};

static wt_status header_fault(const char *fn, const char *why)
{
    return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: malformed safetensors header: %s", fn, why);
}

/* Names, dtypes and metadata are handed out as C strings: one with a NUL
 * inside would read as another, shorter one. */
static bool c_string(const char *s, size_t len) { return strlen(s) == len; }

/* ------------------------------------------------------------- dtypes */

static const struct { const char *name; io_kind kind; } st_dtypes[] = {
    {"F64", IO_F64}, {"F32", IO_F32}, {"F16", IO_F16}, {"BF16", IO_BF16},
    {"I64", IO_I64}, {"I32", IO_I32}, {"I16", IO_I16}, {"I8", IO_I8},
    {"U16", IO_U16}, {"U8", IO_U8}, {"BOOL", IO_BOOL},
    /* In the format, but not loadable here. */
    {"U32", IO_UNSUPPORTED}, {"U64", IO_UNSUPPORTED}, {"F8_E4M3", IO_UNSUPPORTED},
    {"F8_E5M2", IO_UNSUPPORTED},
};

static size_t unsupported_size(const char *dtype)
{
    if (strcmp(dtype, "U32") == 0) return 4;
    if (strcmp(dtype, "U64") == 0) return 8;
    return 1; /* F8 kinds */
}

/* --------------------------------------------------------------- header */

static void st_free(wt_safetensors *f)
{
    free(f->entries);
    wt_json_free(&f->header);
    io_source_close(&f->src);
    free(f);
}

static wt_status read_metadata(const char *fn, wt_safetensors *f, const wt_json_node *m)
{
    if (f->meta) return header_fault(fn, "__metadata__ appears twice");
    if (m->type != WT_JSON_OBJECT) return header_fault(fn, "__metadata__ is not an object");
    for (const wt_json_node *v = wt_json_first(&f->header, m); v; v = wt_json_next(&f->header, v)) {
        if (v->type != WT_JSON_STRING) return header_fault(fn, "__metadata__ values must be strings");
        if (!c_string(v->key, v->key_len) || !c_string(v->str, v->len))
            return header_fault(fn, "NUL in a __metadata__ string");
    }
    f->meta = m;
    return WT_OK;
}

static wt_status read_dtype(const char *fn, const wt_json_node *d, st_entry *e)
{
    if (d->type != WT_JSON_STRING) return header_fault(fn, "dtype is not a string");
    for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
        if (d->len == strlen(st_dtypes[i].name) && memcmp(d->str, st_dtypes[i].name, d->len) == 0) {
            e->kind = st_dtypes[i].kind;
            snprintf(e->dtype, sizeof e->dtype, "%s", st_dtypes[i].name);
            return WT_OK;
        }
    return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: tensor '%s': unknown dtype '%.15s'", fn, e->name, d->str);
}

/* Sizes and offsets: whole numbers up to INT64_MAX, read exactly. */
static bool read_index(const wt_json_node *n, uint64_t *v) { return wt_json_uint(n, (uint64_t)INT64_MAX, v); }

static wt_status read_tensor(const char *fn, const wt_json *doc, const wt_json_node *t, st_entry *e)
{
    if (t->type != WT_JSON_OBJECT) return header_fault(fn, "a tensor entry is not an object");
    const wt_json_node *dtype = wt_json_get(doc, t, "dtype"), *shape = wt_json_get(doc, t, "shape"),
                       *offsets = wt_json_get(doc, t, "data_offsets");
    if (!dtype || !shape || !offsets) return header_fault(fn, "a tensor lacks dtype, shape or data_offsets");
    wt_status st = read_dtype(fn, dtype, e);
    if (st) return st;
    if (shape->type != WT_JSON_ARRAY) return header_fault(fn, "shape is not an array");
    if (shape->len > WT_MAX_DIMS)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: tensor '%s': more than %d dimensions", fn, e->name, WT_MAX_DIMS);
    for (const wt_json_node *d = wt_json_first(doc, shape); d; d = wt_json_next(doc, d)) {
        uint64_t v;
        if (!read_index(d, &v)) return header_fault(fn, "a shape entry is not an integer in [0, 2^63)");
        e->shape[e->ndim++] = (int64_t)v;
    }
    const wt_json_node *begin = wt_json_first(doc, offsets), *end = wt_json_next(doc, begin);
    if (offsets->type != WT_JSON_ARRAY || offsets->len != 2 || !read_index(begin, &e->begin) ||
        !read_index(end, &e->end))
        return header_fault(fn, "data_offsets is not [begin, end] of integers in [0, 2^63)");
    return WT_OK;
}

static int by_offset(const void *a, const void *b)
{
    const st_entry *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

static wt_status check_entries(const char *fn, wt_safetensors *f, uint64_t data_size)
{
    for (int i = 0; i < f->count; i++) {
        st_entry *e = &f->entries[i];
        size_t numel = 1, bytes;
        for (int d = 0; d < e->ndim; d++) {
            size_t dim;
            if (!wt_size_of_i64(e->shape[d], &dim) || !wt_mul_size(numel, dim, &numel))
                return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: tensor '%s': shape overflows", fn, e->name);
        }
        size_t es = e->kind == IO_UNSUPPORTED ? unsupported_size(e->dtype) : io_kind_size(e->kind);
        if (!wt_mul_size(numel, es, &bytes))
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: tensor '%s': size overflows", fn, e->name);
        if (e->begin > e->end || e->end > data_size)
            return wt_fail(WT_ERR_INVALID_ARGUMENT,
                           "%s: tensor '%s': data_offsets [%llu, %llu] outside the %llu data bytes", fn,
                           e->name, (unsigned long long)e->begin, (unsigned long long)e->end,
                           (unsigned long long)data_size);
        if (e->end - e->begin != (uint64_t)bytes)
            return wt_fail(WT_ERR_INVALID_ARGUMENT,
                           "%s: tensor '%s': %llu data bytes for a %s tensor of %zu elements (%zu bytes)", fn,
                           e->name, (unsigned long long)(e->end - e->begin), e->dtype, numel, bytes);
    }
    /* A file of metadata alone has no entries (and entries may be NULL,
     * which qsort must not be given even for 0 elements). */
    if (f->count > 1) qsort(f->entries, (size_t)f->count, sizeof *f->entries, by_offset);
    for (int i = 1; i < f->count; i++)
        if (f->entries[i].begin < f->entries[i - 1].end)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: tensors '%s' and '%s' overlap", fn,
                           f->entries[i - 1].name, f->entries[i].name);
    for (int i = 0; i < f->count; i++)
        for (int k = i + 1; k < f->count; k++)
            if (strcmp(f->entries[i].name, f->entries[k].name) == 0)
                return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: tensor name '%s' appears twice", fn,
                               f->entries[i].name);
    return WT_OK;
}

static wt_status read_header(const char *fn, wt_safetensors *f)
{
    const wt_json *doc = &f->header;
    const wt_json_node *root = &doc->nodes[0];
    if (root->type != WT_JSON_OBJECT) return header_fault(fn, "not a JSON object");
    if (root->len > 0) {
        f->entries = calloc(root->len, sizeof *f->entries);
        if (!f->entries) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    }
    for (const wt_json_node *m = wt_json_first(doc, root); m; m = wt_json_next(doc, m)) {
        if (!c_string(m->key, m->key_len)) return header_fault(fn, "NUL in a tensor name");
        wt_status st;
        if (strcmp(m->key, "__metadata__") == 0) {
            st = read_metadata(fn, f, m);
        } else {
            st_entry *e = &f->entries[f->count++];
            e->name = m->key;
            st = read_tensor(fn, doc, m, e);
        }
        if (st) return st;
    }
    return WT_OK;
}

static wt_status parse(const char *fn, wt_safetensors *f)
{
    uint8_t len8[8];
    wt_status st;
    if (f->src.size < 8) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: file shorter than 8 bytes", fn);
    if ((st = io_source_read(fn, &f->src, 0, len8, 8)) != WT_OK) return st;
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | len8[i];
    if (n > ST_MAX_HEADER) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: header length %llu exceeds 100 MB", fn, (unsigned long long)n);
    if (n > f->src.size - 8)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: header length %llu runs past the end of the %llu-byte file", fn,
                       (unsigned long long)n, (unsigned long long)f->src.size);
    f->data_off = 8 + n;
    char *text = malloc(n ? n : 1);
    if (!text) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory (%llu bytes)", fn, (unsigned long long)n);
    if ((st = io_source_read(fn, &f->src, 8, text, n)) != WT_OK) {
        free(text);
        return st;
    }
    /* The JSON reader's messages name the header and a byte offset in it. */
    char where[64];
    snprintf(where, sizeof where, "%s: safetensors header", fn);
    st = wt_json_parse_nested(where, text, (size_t)n, ST_MAX_DEPTH, &f->header);
    free(text);
    if (st == WT_OK) st = read_header(fn, f);
    if (st == WT_OK) st = check_entries(fn, f, f->src.size - f->data_off);
    return st;
}

static wt_status open_source(const char *fn, io_source src, wt_safetensors **out)
{
    wt_safetensors *f = calloc(1, sizeof *f);
    if (!f) {
        io_source_close(&src);
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    }
    f->src = src;
    wt_status st = parse(fn, f);
    if (st != WT_OK) {
        st_free(f);
        return st;
    }
    *out = f;
    return WT_OK;
}

wt_status wt_safetensors_open(const char *path, wt_safetensors **out)
{
    const char *fn = "wt_safetensors_open";
    if (!out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    io_source src;
    wt_status st = io_source_open_file(fn, path, &src);
    return st != WT_OK ? st : open_source(fn, src, out);
}

wt_status wt_safetensors_open_memory(const void *data, size_t size, wt_safetensors **out)
{
    const char *fn = "wt_safetensors_open_memory";
    if (!out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    if (!data && size > 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: data is NULL", fn);
    io_source src;
    io_source_memory(data, size, &src);
    return open_source(fn, src, out);
}

void wt_safetensors_close(wt_safetensors *f)
{
    if (f) st_free(f);
}

int wt_safetensors_count(const wt_safetensors *f) { return f ? f->count : 0; }

wt_status wt_safetensors_entry_at(const wt_safetensors *f, int i, wt_safetensors_entry *out)
{
    if (!f || !out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_safetensors_entry_at: NULL argument");
    if (i < 0 || i >= f->count)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_safetensors_entry_at: index %d outside [0, %d)", i, f->count);
    const st_entry *e = &f->entries[i];
    memset(out, 0, sizeof *out);
    out->name = e->name;
    out->dtype = e->dtype;
    out->ndim = e->ndim;
    memcpy(out->shape, e->shape, sizeof e->shape);
    out->data_begin = e->begin;
    out->data_end = e->end;
    return WT_OK;
}

wt_status wt_safetensors_find(const wt_safetensors *f, const char *name, int *index)
{
    if (!f || !name || !index) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_safetensors_find: NULL argument");
    for (int i = 0; i < f->count; i++)
        if (strcmp(f->entries[i].name, name) == 0) {
            *index = i;
            return WT_OK;
        }
    *index = -1;
    return wt_fail(WT_ERR_NOT_FOUND, "wt_safetensors_find: no tensor named '%s'", name);
}

const char *wt_safetensors_metadata(const wt_safetensors *f, const char *key)
{
    if (!f || !key) return NULL;
    const wt_json_node *v = wt_json_get(&f->header, f->meta, key);
    return v ? v->str : NULL;
}

static wt_status load_entry(const char *fn, const wt_safetensors *f, const st_entry *e, wt_context *ctx,
                            wt_dtype float_dtype, wt_tensor **out)
{
    if (e->kind == IO_UNSUPPORTED)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: tensor '%s' has dtype %s, which webtensor cannot hold", fn,
                       e->name, e->dtype);
    return io_load_tensor(fn, e->name, &f->src, f->data_off + e->begin, e->kind, false,
                          io_kind_target(e->kind, float_dtype), e->ndim, e->shape, ctx, out);
}

static wt_status check_load_args(const char *fn, const wt_safetensors *f, wt_context *ctx, wt_dtype float_dtype)
{
    if (!f) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: file handle is NULL", fn);
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: context is NULL", fn);
    if (float_dtype != WT_F32 && float_dtype != WT_F16)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: float_dtype must be WT_F32 or WT_F16", fn);
    return WT_OK;
}

wt_status wt_safetensors_load(const wt_safetensors *f, wt_context *ctx, const char *name, wt_dtype float_dtype,
                              wt_tensor **out)
{
    const char *fn = "wt_safetensors_load";
    if (!out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    wt_status st = check_load_args(fn, f, ctx, float_dtype);
    if (st != WT_OK) return st;
    if (!name) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: name is NULL", fn);
    int i;
    if ((st = wt_safetensors_find(f, name, &i)) != WT_OK) return st;
    return load_entry(fn, f, &f->entries[i], ctx, float_dtype, out);
}

wt_status wt_safetensors_load_many(const wt_safetensors *f, wt_context *ctx, int n, const char *const *names,
                                   wt_dtype float_dtype, wt_tensor **out)
{
    const char *fn = "wt_safetensors_load_many";
    if (!out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    for (int i = 0; i < n; i++) out[i] = NULL; /* before any failure that knows n */
    wt_status st = check_load_args(fn, f, ctx, float_dtype);
    if (st != WT_OK) return st;
    if (n < 0 || (!names && n != f->count))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: n is %d; without names it must be the count (%d)", fn, n,
                       f->count);
    for (int i = 0; i < n && st == WT_OK; i++) {
        int k = i;
        if (names) {
            if (!names[i]) st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: names[%d] is NULL", fn, i);
            else st = wt_safetensors_find(f, names[i], &k);
        }
        if (st == WT_OK) st = load_entry(fn, f, &f->entries[k], ctx, float_dtype, &out[i]);
    }
    if (st != WT_OK)
        for (int i = 0; i < n; i++) {
            wt_tensor_release(out[i]);
            out[i] = NULL;
        }
    return st;
}

/* ---------------------------------------------------------------- write */

/* Appends to a growing buffer; false when out of memory. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
    bool oom;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_json_string(sbuf *b, const char *s)
{
    sb_put(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            sb_put(b, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            sb_put(b, esc, 6);
        } else {
            sb_put(b, (const char *)&c, 1);
        }
    }
    sb_put(b, "\"", 1);
}

static const char *st_dtype_of(wt_dtype d)
{
    switch (d) {
    case WT_F32: return "F32";
    case WT_F16: return "F16";
    case WT_I32: return "I32";
    case WT_BOOL: return "BOOL";
    }
    return NULL;
}

wt_status wt_safetensors_save(const char *path, int n, const char *const *names, wt_tensor *const *tensors,
                              int nmeta, const char *const *meta_keys, const char *const *meta_values)
{
    const char *fn = "wt_safetensors_save";
    if (!path) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: path is NULL", fn);
    if (n < 0 || (n > 0 && (!names || !tensors)))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: n is negative or names/tensors NULL", fn);
    if (nmeta < 0 || (nmeta > 0 && (!meta_keys || !meta_values)))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: nmeta is negative or the metadata arrays NULL", fn);
    for (int i = 0; i < n; i++) {
        if (!names[i] || !names[i][0] || !tensors[i])
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: entry %d has no name or no tensor", fn, i);
        if (strcmp(names[i], "__metadata__") == 0)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: '__metadata__' is reserved", fn);
        if (!st_dtype_of(wt_tensor_dtype(tensors[i])))
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: tensor '%s' has an unknown dtype", fn, names[i]);
        for (int k = 0; k < i; k++)
            if (strcmp(names[i], names[k]) == 0)
                return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: name '%s' appears twice", fn, names[i]);
    }
    for (int i = 0; i < nmeta; i++)
        if (!meta_keys[i] || !meta_values[i])
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: metadata entry %d is NULL", fn, i);

    /* The header first: offsets follow from the sizes, tensors lie back to
     * back in the given order (the reference reader requires no gaps). */
    sbuf h = {0};
    sb_str(&h, "{");
    if (nmeta > 0) {
        sb_str(&h, "\"__metadata__\":{");
        for (int i = 0; i < nmeta; i++) {
            if (i) sb_str(&h, ",");
            sb_json_string(&h, meta_keys[i]);
            sb_str(&h, ":");
            sb_json_string(&h, meta_values[i]);
        }
        sb_str(&h, "}");
    }
    uint64_t off = 0;
    for (int i = 0; i < n; i++) {
        const wt_tensor *t = tensors[i];
        char num[64];
        if (i || nmeta > 0) sb_str(&h, ",");
        sb_json_string(&h, names[i]);
        sb_str(&h, ":{\"dtype\":\"");
        sb_str(&h, st_dtype_of(wt_tensor_dtype(t)));
        sb_str(&h, "\",\"shape\":[");
        for (int d = 0; d < wt_tensor_ndim(t); d++) {
            snprintf(num, sizeof num, "%s%lld", d ? "," : "", (long long)wt_tensor_shape(t)[d]);
            sb_str(&h, num);
        }
        uint64_t bytes = (uint64_t)wt_tensor_numel(t) * wt_dtype_size(wt_tensor_dtype(t));
        snprintf(num, sizeof num, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off,
                 (unsigned long long)(off + bytes));
        sb_str(&h, num);
        off += bytes;
    }
    sb_str(&h, "}");
    while (!h.oom && h.n % 8 != 0) sb_str(&h, " "); /* data 8-byte aligned */
    if (h.oom) {
        free(h.p);
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    }

    size_t plen = strlen(path);
    char *tmp = malloc(plen + 5);
    if (!tmp) {
        free(h.p);
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    }
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp", 5);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        const int err = errno;
        free(h.p);
        free(tmp);
        return wt_fail(WT_ERR_IO, "%s: cannot create '%s': %s", fn, path, strerror(err));
    }
    uint8_t len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (uint8_t)((uint64_t)h.n >> (8 * i));
    wt_status st = WT_OK;
    bool ok = io_write_all(f, len8, 8) && io_write_all(f, h.p, h.n);
    free(h.p);
    for (int i = 0; i < n && ok && st == WT_OK; i++) {
        void *data = NULL;
        size_t bytes = 0;
        st = io_read_tensor(fn, tensors[i], &data, &bytes);
        if (st == WT_OK) ok = io_write_all(f, data, bytes);
        free(data);
    }
    ok = fclose(f) == 0 && ok;
    if (st == WT_OK && !ok) st = wt_fail(WT_ERR_IO, "%s: writing '%s' failed", fn, path);
    if (st == WT_OK && rename(tmp, path) != 0) st = wt_fail(WT_ERR_IO, "%s: cannot rename the file into '%s'", fn, path);
    if (st != WT_OK) remove(tmp);
    free(tmp);
    return st;
}
