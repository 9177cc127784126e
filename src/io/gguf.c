/* GGUF files (llama.cpp / ggml): typed key-value metadata, tensor infos
 * and aligned tensor data. The reader parses the whole header into an
 * arena owned by the handle, checking every count and length against the
 * bytes left before it allocates or reads; tensor data is read later, per
 * tensor, straight from the source. */
#include "io/io.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GGUF_DEFAULT_ALIGNMENT 32u
/* Bytes of header held at once when reading from a file. */
#define GGUF_WINDOW ((size_t)64 << 10)

/* ------------------------------------------------------ ggml type table
 * Block size (elements per block) and type size (bytes per block), as in
 * ggml's type traits. Ids ggml removed or never used have no name. */
typedef struct ggml_type_row {
    const char *name;
    int block, size;
} ggml_type_row;

static const ggml_type_row GGML_TYPES[] = {
    [0] = {"F32", 1, 4},        [1] = {"F16", 1, 2},         [2] = {"Q4_0", 32, 18},
    [3] = {"Q4_1", 32, 20},     [6] = {"Q5_0", 32, 22},      [7] = {"Q5_1", 32, 24},
    [8] = {"Q8_0", 32, 34},     [9] = {"Q8_1", 32, 36},      [10] = {"Q2_K", 256, 84},
    [11] = {"Q3_K", 256, 110},  [12] = {"Q4_K", 256, 144},   [13] = {"Q5_K", 256, 176},
    [14] = {"Q6_K", 256, 210},  [15] = {"Q8_K", 256, 292},   [16] = {"IQ2_XXS", 256, 66},
    [17] = {"IQ2_XS", 256, 74}, [18] = {"IQ3_XXS", 256, 98}, [19] = {"IQ1_S", 256, 50},
    [20] = {"IQ4_NL", 32, 18},  [21] = {"IQ3_S", 256, 110},  [22] = {"IQ2_S", 256, 82},
    [23] = {"IQ4_XS", 256, 136}, [24] = {"I8", 1, 1},        [25] = {"I16", 1, 2},
    [26] = {"I32", 1, 4},       [27] = {"I64", 1, 8},        [28] = {"F64", 1, 8},
    [29] = {"IQ1_M", 256, 56},  [30] = {"BF16", 1, 2},       [34] = {"TQ1_0", 256, 54},
    [35] = {"TQ2_0", 256, 66},  [39] = {"MXFP4", 32, 17},    [40] = {"NVFP4", 64, 36},
};
#define GGML_NTYPES (sizeof GGML_TYPES / sizeof GGML_TYPES[0])

enum { GGML_F32 = 0, GGML_F16 = 1, GGML_I8 = 24, GGML_I16 = 25, GGML_I32 = 26, GGML_I64 = 27, GGML_F64 = 28,
       GGML_BF16 = 30 };

static const ggml_type_row *ggml_row(uint32_t t)
{
    return t < GGML_NTYPES && GGML_TYPES[t].name ? &GGML_TYPES[t] : NULL;
}

wt_status wt_gguf_type_info(uint32_t ggml_type, const char **name, int *block_size, int *type_size)
{
    const ggml_type_row *r = ggml_row(ggml_type);
    if (name) *name = r ? r->name : NULL;
    if (block_size) *block_size = r ? r->block : 0;
    if (type_size) *type_size = r ? r->size : 0;
    if (!r) return wt_fail(WT_ERR_UNSUPPORTED, "wt_gguf_type_info: unknown ggml type id %" PRIu32, ggml_type);
    return WT_OK;
}

/* Bytes of a tensor of this type and these dims (innermost first), or
 * false when a row is not a whole number of blocks or the size overflows
 * (why says which). */
static bool tensor_bytes(const ggml_type_row *r, int n_dims, const uint64_t *dims, uint64_t *numel, uint64_t *bytes,
                         const char **why)
{
    uint64_t n = 1;
    for (int d = 0; d < n_dims; d++) {
        if (dims[d] > (uint64_t)INT64_MAX || (dims[d] != 0 && n > (uint64_t)INT64_MAX / dims[d])) {
            *why = "its element count overflows";
            return false;
        }
        n *= dims[d];
    }
    uint64_t row = n_dims > 0 ? dims[0] : 1;
    if (row % (uint64_t)r->block != 0) {
        *why = "its first dimension is not a whole number of blocks";
        return false;
    }
    uint64_t blocks = n / (uint64_t)r->block;
    if (blocks > UINT64_MAX / (uint64_t)r->size || blocks * (uint64_t)r->size > (uint64_t)SIZE_MAX) {
        *why = "its byte size overflows";
        return false;
    }
    *numel = n;
    *bytes = blocks * (uint64_t)r->size;
    return true;
}

/* ---------------------------------------------------------------- arena */

typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} arena_block;

typedef struct arena {
    arena_block *head;
} arena;

static void *arena_alloc(arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n == 0) n = 16;
    arena_block *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > ((size_t)64 << 10) ? n : ((size_t)64 << 10);
        if (cap > SIZE_MAX - sizeof *b) return NULL;
        b = malloc(sizeof *b + cap);
        if (!b) return NULL;
        b->used = 0;
        b->cap = cap;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

static void arena_free(arena *a)
{
    while (a->head) {
        arena_block *n = a->head->next;
        free(a->head);
        a->head = n;
    }
}

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
    arena mem;
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

static wt_status oom(const char *fn)
{
    return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
}

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
    char *s = n < SIZE_MAX ? arena_alloc(&g->mem, (size_t)n + 1) : NULL;
    if (!s) return oom(c->fn);
    if ((st = cur_read(c, s, n, what)) != WT_OK) return st;
    s[n] = 0;
    if (!nul_ok && memchr(s, 0, (size_t)n))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: byte %" PRIu64 ": %s holds a NUL byte", c->fn, at, what);
    *out = s;
    if (len) *len = n;
    return WT_OK;
}

static size_t value_size(wt_gguf_type t)
{
    switch (t) {
    case WT_GGUF_U8: case WT_GGUF_I8: case WT_GGUF_BOOL: return 1;
    case WT_GGUF_U16: case WT_GGUF_I16: return 2;
    case WT_GGUF_U32: case WT_GGUF_I32: case WT_GGUF_F32: return 4;
    case WT_GGUF_U64: case WT_GGUF_I64: case WT_GGUF_F64: return 8;
    default: return 0; /* STRING, ARRAY: variable */
    }
}

static bool type_known(uint32_t t) { return t <= WT_GGUF_F64; }

static const char *type_name(wt_gguf_type t)
{
    static const char *const names[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool",
                                        "string", "array", "u64", "i64", "f64"};
    return type_known((uint32_t)t) ? names[t] : "unknown";
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
    size_t es = value_size(type);
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
    if (!type_known(et))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: byte %" PRIu64 ": array of unknown value type %" PRIu32, c->fn, at, et);
    if (depth >= WT_GGUF_MAX_NESTING)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: byte %" PRIu64 ": arrays nested deeper than %d", c->fn, at,
                       WT_GGUF_MAX_NESTING);
    v->elem_type = (wt_gguf_type)et;
    size_t ees = value_size(v->elem_type);
    /* Each element takes at least this many bytes of the file: a count the
     * rest of the file cannot hold is refused before anything is made. */
    uint64_t least = ees ? ees : (et == WT_GGUF_STRING ? 8 : 12);
    if (v->count > cur_left(c) / least) {
        char w[96];
        snprintf(w, sizeof w, "an array of %" PRIu64 " %s values", v->count, type_name(v->elem_type));
        return past_end(c, at, v->count > UINT64_MAX / least ? UINT64_MAX : v->count * least, w);
    }
    if (v->count > SIZE_MAX / sizeof(wt_gguf_value)) return oom(c->fn);
    if (ees) {
        void *e = arena_alloc(&g->mem, (size_t)(v->count * ees));
        if (!e) return oom(c->fn);
        v->elems = e;
        return cur_read(c, e, v->count * ees, "array elements");
    }
    size_t items_bytes;
    if (!wt_mul_size((size_t)v->count, sizeof(wt_gguf_value), &items_bytes)) return oom(c->fn);
    wt_gguf_value *items = arena_alloc(&g->mem, items_bytes);
    if (!items) return oom(c->fn);
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
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: general.alignment is a %s, not a u32", fn, type_name(v->type));
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
    const ggml_type_row *r = ggml_row(in->ggml_type);
    if (!r)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: byte %" PRIu64 ": tensor '%s' has unknown ggml type id %" PRIu32,
                       c->fn, t->at, in->name, in->ggml_type);
    in->type_name = r->name;
    const char *why = NULL;
    if (!tensor_bytes(r, in->n_dims, in->dims, &in->numel, &in->bytes, &why))
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
        return oom(fn);
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
    if (!p) return oom(fn);
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
    if (g->src.fd >= 0 && !win) return oom(fn);
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
        if (!g->kv) st = oom(fn);
    }
    for (uint64_t i = 0; i < nkv && st == WT_OK; i++) {
        gguf_kv *kv = &g->kv[i];
        uint64_t at = c.pos;
        uint32_t t;
        st = read_string(g, &c, "a key", false, &kv->key, NULL);
        if (st == WT_OK) st = cur_u32(&c, &t, "a value type");
        if (st == WT_OK && !type_known(t))
            st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: byte %" PRIu64 ": key '%s' has unknown value type %" PRIu32, fn, at,
                         kv->key, t);
        if (st == WT_OK) st = read_value(g, &c, (wt_gguf_type)t, &kv->v, 0);
        if (st == WT_OK) g->nkv++;
    }
    if (st == WT_OK) st = check_unique_keys(fn, g);
    if (st == WT_OK) st = check_alignment(fn, g);
    if (st == WT_OK && nt > 0) {
        g->tensors = calloc((size_t)nt, sizeof *g->tensors);
        if (!g->tensors) st = oom(fn);
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
    arena_free(&g->mem);
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
        return oom(fn);
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
    return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: key '%s' is a %s, not %s", fn, key, type_name(have), want);
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
    if (!type_known((uint32_t)elem_type))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: elem_type %d is not a GGUF value type", fn, (int)elem_type);
    if (kv->v.type != WT_GGUF_ARRAY) return mismatch(fn, key, kv->v.type, "an array");
    if (kv->v.elem_type != elem_type)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: key '%s' is an array of %s, not of %s", fn, key,
                       type_name(kv->v.elem_type), type_name(elem_type));
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

/* ------------------------------------------------------------ the writer */

typedef struct w_kv {
    char *key;
    arena mem; /* the value's copy */
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
    return *out ? WT_OK : oom("wt_gguf_writer_create");
}

void wt_gguf_writer_destroy(wt_gguf_writer *w)
{
    if (!w) return;
    for (int i = 0; i < w->nkv; i++) {
        free(w->kv[i].key);
        arena_free(&w->kv[i].mem);
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
static wt_status copy_value(const char *fn, arena *a, const wt_gguf_value *src, wt_gguf_value *dst, int depth)
{
    if (!type_known((uint32_t)src->type))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: value type %d is not a GGUF value type", fn, (int)src->type);
    memset(dst, 0, sizeof *dst);
    dst->type = src->type;
    if (value_size(src->type)) {
        dst->u = src->type == WT_GGUF_BOOL ? src->u != 0 : src->u;
        dst->i = src->i;
        dst->f = src->f;
        return WT_OK;
    }
    if (src->type == WT_GGUF_STRING) {
        if (!src->str && src->str_len > 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: a string value is NULL", fn);
        if (src->str_len >= SIZE_MAX) return oom(fn);
        char *s = arena_alloc(a, (size_t)src->str_len + 1);
        if (!s) return oom(fn);
        if (src->str_len) memcpy(s, src->str, (size_t)src->str_len);
        s[src->str_len] = 0;
        dst->str = s;
        dst->str_len = src->str_len;
        return WT_OK;
    }
    if (!type_known((uint32_t)src->elem_type))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: array element type %d is not a GGUF value type", fn,
                       (int)src->elem_type);
    if (depth >= WT_GGUF_MAX_NESTING)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: arrays nested deeper than %d", fn, WT_GGUF_MAX_NESTING);
    dst->elem_type = src->elem_type;
    dst->count = src->count;
    size_t es = value_size(src->elem_type), bytes;
    if (es) {
        if (!src->elems && src->count > 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: array elems is NULL", fn);
        if (src->count > SIZE_MAX || !wt_mul_size((size_t)src->count, es, &bytes)) return oom(fn);
        void *e = arena_alloc(a, bytes);
        if (!e) return oom(fn);
        if (bytes) memcpy(e, src->elems, bytes);
        if (src->elem_type == WT_GGUF_BOOL)
            for (size_t k = 0; k < bytes; k++) ((uint8_t *)e)[k] = ((uint8_t *)e)[k] != 0;
        dst->elems = e;
        return WT_OK;
    }
    if (!src->items && src->count > 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: array items is NULL", fn);
    if (src->count > SIZE_MAX || !wt_mul_size((size_t)src->count, sizeof(wt_gguf_value), &bytes)) return oom(fn);
    wt_gguf_value *items = arena_alloc(a, bytes);
    if (!items) return oom(fn);
    dst->items = items;
    for (uint64_t k = 0; k < src->count; k++) {
        if (src->items[k].type != src->elem_type)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: array item %" PRIu64 " is a %s in an array of %s", fn, k,
                           type_name(src->items[k].type), type_name(src->elem_type));
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
        arena_free(&nk.mem);
        return st;
    }
    for (int i = 0; i < w->nkv; i++)
        if (strcmp(w->kv[i].key, key) == 0) { /* replaced in place */
            arena_free(&w->kv[i].mem);
            w->kv[i].mem = nk.mem;
            w->kv[i].v = nk.v;
            return WT_OK;
        }
    nk.key = dup_string(key);
    if (!nk.key || (w->nkv == w->kv_cap && w->kv_cap > INT32_MAX / 2)) {
        free(nk.key);
        arena_free(&nk.mem);
        return oom(fn);
    }
    if (w->nkv == w->kv_cap) {
        int cap = w->kv_cap ? 2 * w->kv_cap : 16;
        w_kv *p = realloc(w->kv, sizeof *p * (size_t)cap);
        if (!p) {
            free(nk.key);
            arena_free(&nk.mem);
            return oom(fn);
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
        if (w->t_cap > INT32_MAX / 2) return oom(fn);
        int cap = w->t_cap ? 2 * w->t_cap : 16;
        w_tensor *p = realloc(w->tensors, sizeof *p * (size_t)cap);
        if (!p) return oom(fn);
        w->tensors = p;
        w->t_cap = cap;
    }
    if (!(e->name = dup_string(name))) return oom(fn);
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
    const ggml_type_row *r = ggml_row(ggml_type);
    if (!r) return wt_fail(WT_ERR_UNSUPPORTED, "%s: unknown ggml type id %" PRIu32, fn, ggml_type);
    if (n_dims < 1 || n_dims > WT_GGUF_MAX_DIMS)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: n_dims %d outside [1, %d]", fn, n_dims, WT_GGUF_MAX_DIMS);
    w_tensor e = {.type = ggml_type, .n_dims = n_dims};
    memcpy(e.dims, dims, sizeof *dims * (size_t)n_dims);
    uint64_t numel;
    const char *why;
    if (!tensor_bytes(r, n_dims, e.dims, &numel, &e.bytes, &why))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: tensor '%s' (%s): %s", fn, name ? name : "(null)", r->name, why);
    if (bytes != e.bytes)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s dims need %" PRIu64 " bytes, %zu given", fn, r->name, e.bytes,
                       bytes);
    if (!data && bytes > 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: data is NULL", fn);
    e.raw = malloc(bytes ? bytes : 1);
    if (!e.raw) return oom(fn);
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
        size_t es = value_size(v->elem_type);
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
    if (!tmp) return oom(fn);
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
