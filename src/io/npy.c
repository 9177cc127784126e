/* NumPy .npy files: the header is a Python dict literal,
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and a newline; the data follows in C order. */
#include "io/io.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

static const char MAGIC[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};
/* NumPy itself refuses headers beyond this size by default. */
#define NPY_MAX_HEADER 10000u

typedef struct npy_header {
    char descr[32];
    bool have_descr, have_order, have_shape, fortran;
    int ndim;
    int64_t shape[WT_MAX_DIMS];
} npy_header;

typedef struct cursor {
    const char *p, *end;
} cursor;

static void skip_space(cursor *c)
{
    while (c->p < c->end && isspace((unsigned char)*c->p)) c->p++;
}

static bool take(cursor *c, char ch)
{
    skip_space(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

/* A quoted Python string without escapes (header keys and dtypes). */
static bool quoted(cursor *c, char *buf, size_t size)
{
    skip_space(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return false;
    char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || n + 1 >= size) return false;
        buf[n++] = *c->p++;
    }
    if (c->p >= c->end) return false;
    c->p++;
    buf[n] = 0;
    return true;
}

static bool word(cursor *c, const char *w)
{
    skip_space(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0) return false;
    c->p += n;
    return true;
}

/* A non-negative Python int (an 'L' suffix of old files allowed). */
static bool integer(cursor *c, int64_t *v)
{
    skip_space(c);
    if (c->p >= c->end || !isdigit((unsigned char)*c->p)) return false;
    int64_t x = 0;
    while (c->p < c->end && isdigit((unsigned char)*c->p)) {
        int d = *c->p++ - '0';
        if (x > (INT64_MAX - d) / 10) return false;
        x = x * 10 + d;
    }
    if (c->p < c->end && *c->p == 'L') c->p++;
    *v = x;
    return true;
}

static wt_status bad(const char *fn, const char *why)
{
    return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: malformed .npy header: %s", fn, why);
}

static wt_status parse_header(const char *fn, const char *text, size_t len, npy_header *h)
{
    memset(h, 0, sizeof *h);
    cursor c = {text, text + len};
    if (!take(&c, '{')) return bad(fn, "no '{'");
    while (!take(&c, '}')) {
        char key[32];
        if (!quoted(&c, key, sizeof key) || !take(&c, ':')) return bad(fn, "expected 'key':");
        if (strcmp(key, "descr") == 0) {
            skip_space(&c);
            if (c.p < c.end && *c.p == '[')
                return wt_fail(WT_ERR_UNSUPPORTED, "%s: structured dtypes are not supported", fn);
            if (!quoted(&c, h->descr, sizeof h->descr)) return bad(fn, "descr is not a string");
            h->have_descr = true;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (word(&c, "True")) h->fortran = true;
            else if (word(&c, "False")) h->fortran = false;
            else return bad(fn, "fortran_order is not True or False");
            h->have_order = true;
        } else if (strcmp(key, "shape") == 0) {
            if (!take(&c, '(')) return bad(fn, "shape is not a tuple");
            h->ndim = 0;
            while (!take(&c, ')')) {
                int64_t v;
                if (!integer(&c, &v)) return bad(fn, "shape holds something other than a non-negative int");
                if (h->ndim == WT_MAX_DIMS)
                    return wt_fail(WT_ERR_UNSUPPORTED, "%s: more than %d dimensions", fn, WT_MAX_DIMS);
                h->shape[h->ndim++] = v;
                if (!take(&c, ',')) {
                    if (!take(&c, ')')) return bad(fn, "shape tuple not closed");
                    break;
                }
            }
            h->have_shape = true;
        } else {
            return bad(fn, "unknown key");
        }
        if (!take(&c, ',')) {
            if (!take(&c, '}')) return bad(fn, "expected ',' or '}'");
            break;
        }
    }
    skip_space(&c);
    if (c.p != c.end) return bad(fn, "text after the dict");
    if (!h->have_descr || !h->have_order || !h->have_shape) return bad(fn, "descr, fortran_order or shape missing");
    return WT_OK;
}

/* Maps a descr like '<f4' to a kind; *swap when the byte order is not the
 * host's (little-endian hosts only are supported by the library). */
static wt_status parse_descr(const char *fn, const char *d, io_kind *k, bool *swap)
{
    char order = d[0];
    if (order != '<' && order != '>' && order != '|' && order != '=')
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: dtype '%s' is not supported", fn, d);
    *swap = order == '>';
    const char *t = d + 1;
    static const struct { const char *code; io_kind kind; } table[] = {
        {"f4", IO_F32}, {"f2", IO_F16}, {"f8", IO_F64}, {"i4", IO_I32}, {"i8", IO_I64},
        {"i2", IO_I16}, {"i1", IO_I8}, {"u2", IO_U16}, {"u1", IO_U8}, {"b1", IO_BOOL}, {"?", IO_BOOL},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(t, table[i].code) == 0) {
            *k = table[i].kind;
            return WT_OK;
        }
    if (t[0] == 'O') return wt_fail(WT_ERR_UNSUPPORTED, "%s: object arrays ('%s') are not supported", fn, d);
    return wt_fail(WT_ERR_UNSUPPORTED,
                   "%s: dtype '%s' is not supported (float16/32/64, int8/16/32/64, uint8/16 and bool are)",
                   fn, d);
}

static wt_status load(const char *fn, wt_context *ctx, const io_source *src, wt_tensor **out)
{
    uint8_t pre[12];
    wt_status st;
    if (src->size < 10) return bad(fn, "file shorter than the preamble");
    if ((st = io_source_read(fn, src, 0, pre, 10)) != WT_OK) return st;
    if (memcmp(pre, MAGIC, 6) != 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: not a .npy file (bad magic)", fn);
    uint8_t major = pre[6];
    uint64_t hlen, hoff;
    if (major == 1) {
        hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
        hoff = 10;
    } else if (major == 2 || major == 3) {
        if ((st = io_source_read(fn, src, 0, pre, 12)) != WT_OK) return st;
        hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 | (uint64_t)pre[11] << 24;
        hoff = 12;
    } else {
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: .npy format version %u is not supported", fn, major);
    }
    if (hlen > NPY_MAX_HEADER) return bad(fn, "header longer than 10000 bytes");
    if (hoff + hlen > src->size) return bad(fn, "header runs past the end of the file");
    char *text = malloc(hlen + 1);
    if (!text) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    npy_header h;
    st = io_source_read(fn, src, hoff, text, hlen);
    if (st == WT_OK) st = parse_header(fn, text, hlen, &h);
    free(text);
    if (st != WT_OK) return st;
    if (h.fortran)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: Fortran-order arrays are not supported (save with np.ascontiguousarray)", fn);
    io_kind k = IO_UNSUPPORTED;
    bool swap = false;
    if ((st = parse_descr(fn, h.descr, &k, &swap)) != WT_OK) return st;
    return io_load_tensor(fn, "array", src, hoff + hlen, k, swap, io_kind_target(k, k == IO_F16 ? WT_F16 : WT_F32),
                          h.ndim, h.shape, ctx, out);
}

wt_status wt_npy_load(wt_context *ctx, const char *path, wt_tensor **out)
{
    const char *fn = "wt_npy_load";
    if (!out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: context is NULL", fn);
    io_source src;
    wt_status st = io_source_open_file(fn, path, &src);
    if (st != WT_OK) return st;
    st = load(fn, ctx, &src, out);
    io_source_close(&src);
    return st;
}

wt_status wt_npy_load_memory(wt_context *ctx, const void *data, size_t size, wt_tensor **out)
{
    const char *fn = "wt_npy_load_memory";
    if (!out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: context is NULL", fn);
    if (!data && size > 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: data is NULL", fn);
    io_source src;
    io_source_memory(data, size, &src);
    return load(fn, ctx, &src, out);
}

static const char *descr_of(wt_dtype d)
{
    switch (d) {
    case WT_F32: return "<f4";
    case WT_F16: return "<f2";
    case WT_I32: return "<i4";
    case WT_BOOL: return "|b1";
    }
    return NULL;
}

wt_status wt_npy_save(const char *path, const wt_tensor *t)
{
    const char *fn = "wt_npy_save";
    if (!path) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: path is NULL", fn);
    if (!t) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: tensor is NULL", fn);
    const char *descr = descr_of(wt_tensor_dtype(t));
    if (!descr) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: unknown dtype", fn);

    /* Header: the dict, then spaces and '\n' so that the data starts at a
     * multiple of 64 bytes (what NumPy writes). */
    char dict[512];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    const int64_t *shape = wt_tensor_shape(t);
    for (int i = 0; i < wt_tensor_ndim(t); i++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld,%s", (long long)shape[i],
                      i + 1 < wt_tensor_ndim(t) ? " " : "");
    if (wt_tensor_ndim(t) > 1) n--; /* a 1-tuple keeps its comma: (5,) */
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    size_t total = 10 + (size_t)n + 1;
    size_t padded = (total + 63) / 64 * 64;
    size_t hlen = padded - 10;

    void *data = NULL;
    size_t bytes = 0;
    wt_status st = io_read_tensor(fn, t, &data, &bytes);
    if (st != WT_OK) return st;
    FILE *f = fopen(path, "wb");
    if (!f) {
        const int err = errno;
        free(data);
        return wt_fail(WT_ERR_IO, "%s: cannot create '%s': %s", fn, path, strerror(err));
    }
    uint8_t pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (uint8_t)(hlen & 0xff), (uint8_t)(hlen >> 8)};
    char pad[64];
    memset(pad, ' ', sizeof pad);
    bool ok = io_write_all(f, pre, 10) && io_write_all(f, dict, (size_t)n) &&
              io_write_all(f, pad, hlen - (size_t)n - 1) && io_write_all(f, "\n", 1) &&
              io_write_all(f, data, bytes);
    ok = fclose(f) == 0 && ok;
    free(data);
    if (!ok) {
        remove(path);
        return wt_fail(WT_ERR_IO, "%s: writing '%s' failed", fn, path);
    }
    return WT_OK;
}
