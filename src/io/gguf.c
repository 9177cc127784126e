/* GGUF files (llama.cpp / ggml): typed key-value metadata, tensor infos
 * and aligned tensor data. The reader parses the whole header into an
 * arena owned by the handle, checking every count and length against the
 * bytes left before it allocates or reads; tensor data is read later, per
 * tensor, straight from the source. The writer is gguf_writer.c; what
 * both use (ggml's type table, the arena), gguf_format.c. */
#include "io/gguf_format.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of header held at once when reading from a file. */
#define GGUF_WINDOW ((size_t)64 << 10)

/* ------------------------------------------------------------ the reader */

typedef struct gguf_kv {
    const char *key;
    wt_gguf_value v;
} gguf_kv;

typedef struct gguf_tensor {
    wt_gguf_tensor_info info;
    uint64_t at; /* where its info starts in the file, for messages */
} gguf_tensor;

struct wt_gguf {
    io_source src;
    gguf_arena mem;
    uint32_t version, alignment;
    gguf_kv *kv;
    int nkv;
    gguf_tensor *tensors;
    int ntensors;
    int *by_name; /* tensor indices sorted by name */
};

/* A read position over the source; from a file, through a window. */
typedef struct cur {
    const char *fn;
    const io_source *src;
    uint64_t pos;
    uint8_t *win;
    uint64_t win_off;
    size_t win_len;
} cur;

static wt_status past_end(const cur *c, uint64_t at, uint64_t n, const char *what)
{
    return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: byte %" PRIu64 ": %s (%" PRIu64 " bytes) runs past the end of the %" PRIu64 "-byte file",
                   c->fn, at, what, n, c->src->size);
}

static uint64_t cur_left(const cur *c) { return c->src->size - c->pos; }

static wt_status cur_read(cur *c, void *dst, uint64_t n, const char *what)
{
    if (n > cur_left(c)) return past_end(c, c->pos, n, what);
    if (n == 0) return WT_OK;
    wt_status st = WT_OK;
    if (c->src->fd < 0) {
        memcpy(dst, c->src->mem + c->pos, (size_t)n);
    } else if (n > GGUF_WINDOW) {
        st = io_source_read(c->fn, c->src, c->pos, dst, (size_t)n);
    } else {
        if (c->pos < c->win_off || c->pos + n > c->win_off + c->win_len) {
            uint64_t left = cur_left(c);
            size_t len = left < GGUF_WINDOW ? (size_t)left : GGUF_WINDOW;
            c->win_len = 0;
            if ((st = io_source_read(c->fn, c->src, c->pos, c->win, len)) != WT_OK) return st;
            c->win_off = c->pos;
            c->win_len = len;
        }
        memcpy(dst, c->win + (c->pos - c->win_off), (size_t)n);
    }
    if (st == WT_OK) c->pos += n;
    return st;
}

static wt_status cur_u32(cur *c, uint32_t *v, const char *what) { return cur_read(c, v, 4, what); }
static wt_status cur_u64(cur *c, uint64_t *v, const char *what) { return cur_read(c, v, 8, what); }

/* A length-prefixed string into the arena, NUL-terminated. nul_ok: the
 * string may hold NUL bytes (values may; keys and names may not, since
 * they are looked up as C strings). */
static wt_status read_string(wt_gguf *g, cur *c, const char *what, bool nul_ok, const char **out, uint64_t *len)
{
    uint64_t at = c->pos, n = 0;
    wt_status st = cur_u64(c, &n, what);
    if (st != WT_OK) return st;
    if (n > cur_left(c)) {
        char w[96];
        snprintf(w, sizeof w, "%s of length %" PRIu64, what, n);
        return past_end(c, at, n > UINT64_MAX - 8 ? UINT64_MAX : 8 + n, w);
    }
    /* (a file source may be larger than the address space) */
    char *s = n < SIZE_MAX ? gguf_arena_alloc(&g->mem, (size_t)n + 1) : NULL;
    if (!s) return gguf_oom(c->fn);
    if ((st = cur_read(c, s, n, what)) != WT_OK) return st;
    s[n] = 0;
    if (!nul_ok && memchr(s, 0, (size_t)n))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: byte %" PRIu64 ": %s holds a NUL byte", c->fn, at, what);
    *out = s;
    if (len) *len = n;
    return WT_OK;
}

/* A scalar's value from its little-endian bytes. */
static void scalar_from_bytes(wt_gguf_value *v, const uint8_t *p)
{
    switch (v->type) {
    case WT_GGUF_U8: v->u = p[0]; break;
    case WT_GGUF_BOOL: v->u = p[0] != 0; break;
    case WT_GGUF_I8: v->i = (int8_t)p[0]; break;
    case WT_GGUF_U16: { uint16_t x; memcpy(&x, p, 2); v->u = x; break; }
    case WT_GGUF_I16: { int16_t x; memcpy(&x, p, 2); v->i = x; break; }
    case WT_GGUF_U32: { uint32_t x; memcpy(&x, p, 4); v->u = x; break; }
    case WT_GGUF_I32: { int32_t x; memcpy(&x, p, 4); v->i = x; break; }
    case WT_GGUF_F32: { float x; memcpy(&x, p, 4); v->f = x; break; }
    case WT_GGUF_U64: memcpy(&v->u, p, 8); break;
    case WT_GGUF_I64: memcpy(&v->i, p, 8); break;
    case WT_GGUF_F64: memcpy(&v->f, p, 8); break;
    default: break;
    }
}

static wt_status read_value(wt_gguf *g, cur *c, wt_gguf_type type, wt_gguf_value *v, int depth)
{
    memset(v, 0, sizeof *v);
    v->type = type;
    size_t es = gguf_value_size(type);
    if (es) {
        uint8_t b[8];
        wt_status st = cur_read(c, b, es, "a value");
        if (st == WT_OK) scalar_from_bytes(v, b);
        return st;
    }
    if (type == WT_GGUF_STRING) return read_string(g, c, "a string", true, &v->str, &v->str_len);

    uint64_t at = c->pos;
    uint32_t et = 0;
    wt_status st = cur_u32(c, &et, "an array's element type");
    if (st == WT_OK) st = cur_u64(c, &v->count, "an array's length");
    if (st != WT_OK) return st;
    if (!gguf_type_known(et))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: byte %" PRIu64 ": array of unknown value type %" PRIu32, c->fn, at, et);
    if (depth >= WT_GGUF_MAX_NESTING)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: byte %" PRIu64 ": arrays nested deeper than %d", c->fn, at,
                       WT_GGUF_MAX_NESTING);
    v->elem_type = (wt_gguf_type)et;
    size_t ees = gguf_value_size(v->elem_type);
    /* Each element takes at least this many bytes of the file: a count the
     * rest of the file cannot hold is refused before anything is made. */
    uint64_t least = ees ? ees : (et == WT_GGUF_STRING ? 8 : 12);
    if (v->count > cur_left(c) / least) {
        char w[96];
        snprintf(w, sizeof w, "an array of %" PRIu64 " %s values", v->count, gguf_type_name(v->elem_type));
        return past_end(c, at, v->count > UINT64_MAX / least ? UINT64_MAX : v->count * least, w);
    }
    if (v->count > SIZE_MAX / sizeof(wt_gguf_value)) return gguf_oom(c->fn);
    if (ees) {
        void *e = gguf_arena_alloc(&g->mem, (size_t)(v->count * ees));
        if (!e) return gguf_oom(c->fn);
        v->elems = e;
        return cur_read(c, e, v->count * ees, "array elements");
    }
    size_t items_bytes;
    if (!wt_mul_size((size_t)v->count, sizeof(wt_gguf_value), &items_bytes)) return gguf_oom(c->fn);
    wt_gguf_value *items = gguf_arena_alloc(&g->mem, items_bytes);
    if (!items) return gguf_oom(c->fn);
    v->items = items;
    for (uint64_t k = 0; k < v->count; k++)
        if ((st = read_value(g, c, v->elem_type, &items[k], depth + 1)) != WT_OK) return st;
    return WT_OK;
}

static int cmp_tensor_name(const void *a, const void *b, const wt_gguf *g)
{
    return strcmp(g->tensors[*(const int *)a].info.name, g->tensors[*(const int *)b].info.name);
}

/* qsort has no context argument: the handle being sorted. */
static _Thread_local const wt_gguf *g_sorting;
static int by_name_cmp(const void *a, const void *b) { return cmp_tensor_name(a, b, g_sorting); }
static int by_offset_cmp(const void *a, const void *b)
{
    const gguf_tensor *x = &g_sorting->tensors[*(const int *)a], *y = &g_sorting->tensors[*(const int *)b];
    return x->info.offset < y->info.offset ? -1 : x->info.offset > y->info.offset;
}

static wt_status check_alignment(const char *fn, wt_gguf *g)
{
    g->alignment = GGUF_DEFAULT_ALIGNMENT;
    for (int i = 0; i < g->nkv; i++) {
        if (strcmp(g->kv[i].key, "general.alignment") != 0) continue;
        const wt_gguf_value *v = &g->kv[i].v;
        if (v->type != WT_GGUF_U32)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: general.alignment is a %s, not a u32", fn, gguf_type_name(v->type));
        if (v->u == 0 || (v->u & (v->u - 1)) != 0)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: general.alignment %" PRIu64 " is not a power of two", fn, v->u);
        g->alignment = (uint32_t)v->u;
    }
    return WT_OK;
}

static wt_status read_tensor_info(wt_gguf *g, cur *c, gguf_tensor *t)
{
    wt_gguf_tensor_info *in = &t->info;
    t->at = c->pos;
    wt_status st = read_string(g, c, "a tensor name", false, &in->name, NULL);
    uint32_t n_dims = 0;
    if (st == WT_OK) st = cur_u32(c, &n_dims, "a tensor's n_dims");
    if (st != WT_OK) return st;
    if (n_dims > WT_GGUF_MAX_DIMS)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: byte %" PRIu64 ": tensor '%s' has %" PRIu32 " dims (at most %d)",
                       c->fn, t->at, in->name, n_dims, WT_GGUF_MAX_DIMS);
    in->n_dims = (int)n_dims;
    for (uint32_t d = 0; d < n_dims && st == WT_OK; d++) st = cur_u64(c, &in->dims[d], "a tensor's dims");
    if (st == WT_OK) st = cur_u32(c, &in->ggml_type, "a tensor's type");
    if (st == WT_OK) st = cur_u64(c, &in->offset, "a tensor's offset");
    if (st != WT_OK) return st;
    const ggml_type_row *r = gguf_ggml_type(in->ggml_type);
    if (!r)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: byte %" PRIu64 ": tensor '%s' has unknown ggml type id %" PRIu32,
                       c->fn, t->at, in->name, in->ggml_type);
    in->type_name = r->name;
    const char *why = NULL;
    if (!gguf_tensor_bytes(r, in->n_dims, in->dims, &in->numel, &in->bytes, &why))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: byte %" PRIu64 ": tensor '%s' (%s): %s", c->fn, t->at, in->name,
                       r->name, why);
    for (int d = 0; d < in->n_dims; d++) in->shape[d] = (int64_t)in->dims[in->n_dims - 1 - d];
    return WT_OK;
}

static wt_status check_tensors(const char *fn, wt_gguf *g, uint64_t data_start)
{
    uint64_t data_size = g->src.size - data_start;
    for (int i = 0; i < g->ntensors; i++) {
        gguf_tensor *t = &g->tensors[i];
        wt_gguf_tensor_info *in = &t->info;
        if (in->offset % g->alignment != 0)
            return wt_fail(WT_ERR_INVALID_ARGUMENT,
                           "%s: byte %" PRIu64 ": tensor '%s' data offset %" PRIu64 " is not a multiple of the alignment %" PRIu32,
                           fn, t->at, in->name, in->offset, g->alignment);
        if (in->offset > data_size || in->bytes > data_size - in->offset)
            return wt_fail(WT_ERR_INVALID_ARGUMENT,
                           "%s: byte %" PRIu64 ": tensor '%s' data (bytes %" PRIu64 "..+%" PRIu64 " of the data section at byte %" PRIu64
                           ") runs past the end of the %" PRIu64 "-byte file",
                           fn, t->at, in->name, in->offset, in->bytes, data_start, g->src.size);
        in->file_offset = data_start + in->offset;
    }
    if (g->ntensors == 0) return WT_OK;
    int *order = malloc(sizeof *order * (size_t)g->ntensors);
    g->by_name = malloc(sizeof *g->by_name * (size_t)g->ntensors);
    if (!order || !g->by_name) {
        free(order);
        return gguf_oom(fn);
    }
    for (int i = 0; i < g->ntensors; i++) order[i] = g->by_name[i] = i;
    g_sorting = g;
    qsort(order, (size_t)g->ntensors, sizeof *order, by_offset_cmp);
    qsort(g->by_name, (size_t)g->ntensors, sizeof *g->by_name, by_name_cmp);
    g_sorting = NULL;
    wt_status st = WT_OK;
    uint64_t end = 0;
    int last = -1;
    for (int k = 0; k < g->ntensors && st == WT_OK; k++) {
        const gguf_tensor *t = &g->tensors[order[k]];
        if (t->info.bytes == 0) continue; /* an empty tensor overlaps nothing */
        if (last >= 0 && t->info.offset < end)
            st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: byte %" PRIu64 ": tensor '%s' data overlaps tensor '%s'", fn, t->at,
                         t->info.name, g->tensors[last].info.name);
        end = t->info.offset + t->info.bytes;
        last = order[k];
    }
    for (int k = 1; k < g->ntensors && st == WT_OK; k++) {
        const gguf_tensor *a = &g->tensors[g->by_name[k - 1]], *b = &g->tensors[g->by_name[k]];
        if (strcmp(a->info.name, b->info.name) == 0)
            st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: byte %" PRIu64 ": tensor name '%s' appears twice", fn,
                         a->at > b->at ? a->at : b->at, b->info.name);
    }
    free(order);
    return st;
}

static int by_key_cmp(const void *a, const void *b)
{
    const gguf_kv *x = *(const gguf_kv *const *)a, *y = *(const gguf_kv *const *)b;
    return strcmp(x->key, y->key);
}

static wt_status check_unique_keys(const char *fn, wt_gguf *g)
{
    if (g->nkv < 2) return WT_OK;
    const gguf_kv **p = malloc(sizeof *p * (size_t)g->nkv);
    if (!p) return gguf_oom(fn);
    for (int i = 0; i < g->nkv; i++) p[i] = &g->kv[i];
    qsort(p, (size_t)g->nkv, sizeof *p, by_key_cmp);
    wt_status st = WT_OK;
    for (int i = 1; i < g->nkv && st == WT_OK; i++)
        if (strcmp(p[i - 1]->key, p[i]->key) == 0)
            st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: key '%s' appears twice", fn, p[i]->key);
    free(p);
    return st;
}

static wt_status parse(const char *fn, wt_gguf *g)
{
    uint8_t *win = g->src.fd >= 0 ? malloc(GGUF_WINDOW) : NULL;
    if (g->src.fd >= 0 && !win) return gguf_oom(fn);
    cur c = {fn, &g->src, 0, win, 0, 0};
    uint8_t magic[4];
    uint64_t nt = 0, nkv = 0;
    wt_status st = cur_read(&c, magic, 4, "the magic");
    if (st == WT_OK && memcmp(magic, "GGUF", 4) != 0)
        st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: byte 0: not a GGUF file (no 'GGUF' magic)", fn);
    if (st == WT_OK) st = cur_u32(&c, &g->version, "the version");
    if (st == WT_OK && g->version != 2 && g->version != 3) {
        if (g->version != 0 && (g->version & 0xffff) == 0)
            st = wt_fail(WT_ERR_UNSUPPORTED, "%s: byte 4: a big-endian GGUF file (only little-endian is read)", fn);
        else
            st = wt_fail(WT_ERR_UNSUPPORTED, "%s: byte 4: GGUF version %" PRIu32 " (versions 2 and 3 are read)", fn,
                         g->version);
    }
    if (st == WT_OK) st = cur_u64(&c, &nt, "the tensor count");
    if (st == WT_OK) st = cur_u64(&c, &nkv, "the key-value count");
    /* A key-value pair takes at least 8 + 4 + 1 bytes, a tensor info 8 + 4 + 4 + 8. */
    if (st == WT_OK && (nkv > cur_left(&c) / 13 || nkv > INT32_MAX))
        st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: byte 16: %" PRIu64 " key-value pairs cannot fit in the %" PRIu64 "-byte file",
                     fn, nkv, g->src.size);
    if (st == WT_OK && (nt > cur_left(&c) / 24 || nt > INT32_MAX))
        st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: byte 8: %" PRIu64 " tensors cannot fit in the %" PRIu64 "-byte file", fn,
                     nt, g->src.size);
    if (st == WT_OK && nkv > 0) {
        g->kv = calloc((size_t)nkv, sizeof *g->kv);
        if (!g->kv) st = gguf_oom(fn);
    }
    for (uint64_t i = 0; i < nkv && st == WT_OK; i++) {
        gguf_kv *kv = &g->kv[i];
        uint64_t at = c.pos;
        uint32_t t;
        st = read_string(g, &c, "a key", false, &kv->key, NULL);
        if (st == WT_OK) st = cur_u32(&c, &t, "a value type");
        if (st == WT_OK && !gguf_type_known(t))
            st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: byte %" PRIu64 ": key '%s' has unknown value type %" PRIu32, fn, at,
                         kv->key, t);
        if (st == WT_OK) st = read_value(g, &c, (wt_gguf_type)t, &kv->v, 0);
        if (st == WT_OK) g->nkv++;
    }
    if (st == WT_OK) st = check_unique_keys(fn, g);
    if (st == WT_OK) st = check_alignment(fn, g);
    if (st == WT_OK && nt > 0) {
        g->tensors = calloc((size_t)nt, sizeof *g->tensors);
        if (!g->tensors) st = gguf_oom(fn);
    }
    for (uint64_t i = 0; i < nt && st == WT_OK; i++) {
        st = read_tensor_info(g, &c, &g->tensors[i]);
        if (st == WT_OK) g->ntensors++;
    }
    free(win);
    if (st != WT_OK) return st;
    /* The data section starts at the next multiple of the alignment. */
    uint64_t data_start = (c.pos + g->alignment - 1) / g->alignment * g->alignment;
    if (g->ntensors > 0 && data_start > g->src.size)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: byte %" PRIu64 ": the data section (aligned to byte %" PRIu64
                       ") starts past the end of the %" PRIu64 "-byte file",
                       fn, c.pos, data_start, g->src.size);
    return check_tensors(fn, g, data_start);
}

static void gguf_free(wt_gguf *g)
{
    io_source_close(&g->src);
    gguf_arena_free(&g->mem);
    free(g->kv);
    free(g->tensors);
    free(g->by_name);
    free(g);
}

static wt_status open_source(const char *fn, io_source src, wt_gguf **out)
{
    wt_gguf *g = calloc(1, sizeof *g);
    if (!g) {
        io_source_close(&src);
        return gguf_oom(fn);
    }
    g->src = src;
    wt_status st = parse(fn, g);
    if (st != WT_OK) {
        gguf_free(g);
        return st;
    }
    *out = g;
    return WT_OK;
}

wt_status wt_gguf_open(const char *path, wt_gguf **out)
{
    const char *fn = "wt_gguf_open";
    if (!out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    io_source src;
    wt_status st = io_source_open_file(fn, path, &src);
    return st != WT_OK ? st : open_source(fn, src, out);
}

wt_status wt_gguf_open_memory(const void *data, size_t size, wt_gguf **out)
{
    const char *fn = "wt_gguf_open_memory";
    if (!out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    if (!data && size > 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: data is NULL", fn);
    io_source src;
    io_source_memory(data, size, &src);
    return open_source(fn, src, out);
}

void wt_gguf_close(wt_gguf *f)
{
    if (f) gguf_free(f);
}

uint32_t wt_gguf_version(const wt_gguf *f) { return f ? f->version : 0; }
uint32_t wt_gguf_alignment(const wt_gguf *f) { return f ? f->alignment : 0; }
int wt_gguf_kv_count(const wt_gguf *f) { return f ? f->nkv : 0; }
int wt_gguf_tensor_count(const wt_gguf *f) { return f ? f->ntensors : 0; }

wt_status wt_gguf_kv_at(const wt_gguf *f, int i, const char **key, wt_gguf_value *value)
{
    const char *fn = "wt_gguf_kv_at";
    if (key) *key = NULL;
    if (!f || !key || !value) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: NULL argument", fn);
    if (i < 0 || i >= f->nkv) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: index %d outside [0, %d)", fn, i, f->nkv);
    *key = f->kv[i].key;
    *value = f->kv[i].v;
    return WT_OK;
}

static const gguf_kv *find_kv(const wt_gguf *f, const char *key)
{
    for (int i = 0; i < f->nkv; i++)
        if (strcmp(f->kv[i].key, key) == 0) return &f->kv[i];
    return NULL;
}

/* The key's entry, or a failure naming it. */
static wt_status lookup(const char *fn, const wt_gguf *f, const char *key, const void *out, const gguf_kv **kv)
{
    *kv = NULL;
    if (!f || !key || !out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: NULL argument", fn);
    if (!(*kv = find_kv(f, key))) return wt_fail(WT_ERR_NOT_FOUND, "%s: no key '%s'", fn, key);
    return WT_OK;
}

static wt_status mismatch(const char *fn, const char *key, wt_gguf_type have, const char *want)
{
    return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: key '%s' is a %s, not %s", fn, key, gguf_type_name(have), want);
}

wt_status wt_gguf_find_kv(const wt_gguf *f, const char *key, wt_gguf_value *value)
{
    const gguf_kv *kv;
    wt_status st = lookup("wt_gguf_find_kv", f, key, value, &kv);
    if (st == WT_OK) *value = kv->v;
    return st;
}

wt_status wt_gguf_get_int(const wt_gguf *f, const char *key, int64_t *out)
{
    const char *fn = "wt_gguf_get_int";
    const gguf_kv *kv;
    wt_status st = lookup(fn, f, key, out, &kv);
    if (st != WT_OK) return st;
    switch (kv->v.type) {
    case WT_GGUF_U8: case WT_GGUF_U16: case WT_GGUF_U32: case WT_GGUF_U64:
        if (kv->v.u > (uint64_t)INT64_MAX)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: key '%s': %" PRIu64 " does not fit in int64", fn, key, kv->v.u);
        *out = (int64_t)kv->v.u;
        return WT_OK;
    case WT_GGUF_I8: case WT_GGUF_I16: case WT_GGUF_I32: case WT_GGUF_I64:
        *out = kv->v.i;
        return WT_OK;
    default:
        return mismatch(fn, key, kv->v.type, "an integer");
    }
}

wt_status wt_gguf_get_float(const wt_gguf *f, const char *key, double *out)
{
    const gguf_kv *kv;
    wt_status st = lookup("wt_gguf_get_float", f, key, out, &kv);
    if (st != WT_OK) return st;
    if (kv->v.type != WT_GGUF_F32 && kv->v.type != WT_GGUF_F64)
        return mismatch("wt_gguf_get_float", key, kv->v.type, "an f32 or f64");
    *out = kv->v.f;
    return WT_OK;
}

wt_status wt_gguf_get_bool(const wt_gguf *f, const char *key, bool *out)
{
    const gguf_kv *kv;
    wt_status st = lookup("wt_gguf_get_bool", f, key, out, &kv);
    if (st != WT_OK) return st;
    if (kv->v.type != WT_GGUF_BOOL) return mismatch("wt_gguf_get_bool", key, kv->v.type, "a bool");
    *out = kv->v.u != 0;
    return WT_OK;
}

wt_status wt_gguf_get_string(const wt_gguf *f, const char *key, const char **out, size_t *len)
{
    if (out) *out = NULL;
    const gguf_kv *kv;
    wt_status st = lookup("wt_gguf_get_string", f, key, out, &kv);
    if (st != WT_OK) return st;
    if (kv->v.type != WT_GGUF_STRING) return mismatch("wt_gguf_get_string", key, kv->v.type, "a string");
    *out = kv->v.str;
    if (len) *len = (size_t)kv->v.str_len;
    return WT_OK;
}

wt_status wt_gguf_get_array(const wt_gguf *f, const char *key, wt_gguf_type elem_type, wt_gguf_value *out)
{
    const char *fn = "wt_gguf_get_array";
    const gguf_kv *kv;
    wt_status st = lookup(fn, f, key, out, &kv);
    if (st != WT_OK) return st;
    if (!gguf_type_known((uint32_t)elem_type))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: elem_type %d is not a GGUF value type", fn, (int)elem_type);
    if (kv->v.type != WT_GGUF_ARRAY) return mismatch(fn, key, kv->v.type, "an array");
    if (kv->v.elem_type != elem_type)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: key '%s' is an array of %s, not of %s", fn, key,
                       gguf_type_name(kv->v.elem_type), gguf_type_name(elem_type));
    *out = kv->v;
    return WT_OK;
}

wt_status wt_gguf_tensor_at(const wt_gguf *f, int i, wt_gguf_tensor_info *out)
{
    if (!f || !out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_gguf_tensor_at: NULL argument");
    if (i < 0 || i >= f->ntensors)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_gguf_tensor_at: index %d outside [0, %d)", i, f->ntensors);
    *out = f->tensors[i].info;
    return WT_OK;
}

static int find_tensor(const wt_gguf *f, const char *name)
{
    int lo = 0, hi = f->ntensors - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(f->tensors[f->by_name[mid]].info.name, name);
        if (c == 0) return f->by_name[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

wt_status wt_gguf_find_tensor(const wt_gguf *f, const char *name, int *index)
{
    if (!f || !name || !index) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_gguf_find_tensor: NULL argument");
    *index = find_tensor(f, name);
    if (*index < 0) return wt_fail(WT_ERR_NOT_FOUND, "wt_gguf_find_tensor: no tensor named '%s'", name);
    return WT_OK;
}

static wt_status named_tensor(const char *fn, const wt_gguf *f, const char *name, const gguf_tensor **t)
{
    *t = NULL;
    if (!f) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: file handle is NULL", fn);
    if (!name) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: name is NULL", fn);
    int i = find_tensor(f, name);
    if (i < 0) return wt_fail(WT_ERR_NOT_FOUND, "%s: no tensor named '%s'", fn, name);
    *t = &f->tensors[i];
    return WT_OK;
}

wt_status wt_gguf_load(const wt_gguf *f, wt_context *ctx, const char *name, wt_tensor **out)
{
    const char *fn = "wt_gguf_load";
    if (!out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: context is NULL", fn);
    const gguf_tensor *t;
    wt_status st = named_tensor(fn, f, name, &t);
    if (st != WT_OK) return st;
    io_kind k;
    switch (t->info.ggml_type) {
    case GGML_F32: k = IO_F32; break;
    case GGML_F16: k = IO_F16; break;
    case GGML_BF16: k = IO_BF16; break;
    case GGML_F64: k = IO_F64; break;
    case GGML_I8: k = IO_I8; break;
    case GGML_I16: k = IO_I16; break;
    case GGML_I32: k = IO_I32; break;
    case GGML_I64: k = IO_I64; break;
    default:
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "%s: tensor '%s' is %s (ggml type %" PRIu32 "), a block-quantised type: read its bytes with wt_gguf_read_raw",
                       fn, name, t->info.type_name, t->info.ggml_type);
    }
    wt_dtype target = io_kind_target(k, k == IO_F16 ? WT_F16 : WT_F32);
    return io_load_tensor(fn, t->info.name, &f->src, t->info.file_offset, k, false, target, t->info.n_dims,
                          t->info.shape, ctx, out);
}

wt_status wt_gguf_read_raw(const wt_gguf *f, const char *name, void *dst, size_t size)
{
    const char *fn = "wt_gguf_read_raw";
    const gguf_tensor *t;
    wt_status st = named_tensor(fn, f, name, &t);
    if (st != WT_OK) return st;
    if (!dst && size > 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: dst is NULL", fn);
    if (size != t->info.bytes)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: tensor '%s' has %" PRIu64 " bytes, size is %zu", fn, name,
                       t->info.bytes, size);
    return io_source_read(fn, &f->src, t->info.file_offset, dst, size);
}
