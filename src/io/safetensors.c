/* safetensors files: an 8-byte little-endian header length, a JSON header,
 * then the data. The header is parsed by a small strict JSON reader that
 * knows the shape of this one document. */
#include "io/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

/* The reference implementation's limit on the header. */
#define ST_MAX_HEADER ((uint64_t)100 << 20)
#define ST_MAX_DEPTH 8

typedef struct st_entry {
    char *name;
    char dtype[16];
    io_kind kind;
    int ndim;
    int64_t shape[WT_MAX_DIMS];
    uint64_t begin, end;
} st_entry;

struct wt_safetensors {
    io_source src;
    uint64_t data_off; /* where the data section starts in the source */
    st_entry *entries;
    int count, cap;
    char **meta; /* key, value, key, value ... */
    int nmeta;
};

/* ------------------------------------------------------------ JSON text */

typedef struct jr {
    const char *p, *end;
    const char *fn;
} jr;

static wt_status jbad(const jr *j, const char *why)
{
    return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: malformed safetensors header: %s", j->fn, why);
}

static void jspace(jr *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static bool jtake(jr *j, char c)
{
    jspace(j);
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return true;
    }
    return false;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool hex4(jr *j, uint32_t *v)
{
    if (j->end - j->p < 4) return false;
    *v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(j->p[i]);
        if (h < 0) return false;
        *v = *v << 4 | (uint32_t)h;
    }
    j->p += 4;
    return true;
}

/* A JSON string, decoded to UTF-8 in a new allocation (*out; NULL when
 * out is NULL: the string is only skipped). */
static wt_status jstring(jr *j, char **out)
{
    if (out) *out = NULL;
    if (!jtake(j, '"')) return jbad(j, "expected a string");
    /* The raw span bounds the decoded length (escapes only shrink). */
    const char *q = j->p;
    while (q < j->end && *q != '"') q += (*q == '\\' && q + 1 < j->end) ? 2 : 1;
    size_t cap = (size_t)(q - j->p) + 1;
    char *s = out ? malloc(cap) : NULL;
    if (out && !s) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", j->fn);
    size_t n = 0;
    for (;;) {
        if (j->p >= j->end) {
            free(s);
            return jbad(j, "unterminated string");
        }
        unsigned char c = (unsigned char)*j->p++;
        if (c == '"') break;
        if (c < 0x20) {
            free(s);
            return jbad(j, "control character in a string");
        }
        if (c != '\\') {
            if (s) s[n++] = (char)c;
            continue;
        }
        if (j->p >= j->end) {
            free(s);
            return jbad(j, "unterminated escape");
        }
        char e = *j->p++;
        uint32_t cp;
        switch (e) {
        case '"': cp = '"'; break;
        case '\\': cp = '\\'; break;
        case '/': cp = '/'; break;
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u':
            if (!hex4(j, &cp)) {
                free(s);
                return jbad(j, "bad \\u escape");
            }
            if (cp >= 0xd800 && cp < 0xdc00) { /* a surrogate pair */
                uint32_t lo;
                if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u' || (j->p += 2, !hex4(j, &lo)) ||
                    lo < 0xdc00 || lo >= 0xe000) {
                    free(s);
                    return jbad(j, "unpaired surrogate");
                }
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            } else if (cp >= 0xdc00 && cp < 0xe000) {
                free(s);
                return jbad(j, "unpaired surrogate");
            }
            break;
        default:
            free(s);
            return jbad(j, "unknown escape");
        }
        if (cp == 0) {
            free(s);
            return jbad(j, "NUL in a string");
        }
        if (!s) continue;
        /* An escape is at least 2 bytes of input and at most 4 of output
         * (a surrogate pair is 12 of input), so s never overflows. */
        if (cp < 0x80) {
            s[n++] = (char)cp;
        } else if (cp < 0x800) {
            s[n++] = (char)(0xc0 | cp >> 6);
            s[n++] = (char)(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
            s[n++] = (char)(0xe0 | cp >> 12);
            s[n++] = (char)(0x80 | (cp >> 6 & 0x3f));
            s[n++] = (char)(0x80 | (cp & 0x3f));
        } else {
            s[n++] = (char)(0xf0 | cp >> 18);
            s[n++] = (char)(0x80 | (cp >> 12 & 0x3f));
            s[n++] = (char)(0x80 | (cp >> 6 & 0x3f));
            s[n++] = (char)(0x80 | (cp & 0x3f));
        }
    }
    if (s) {
        s[n] = 0;
        *out = s;
    }
    return WT_OK;
}

/* A non-negative integer without sign, fraction or exponent, <= INT64_MAX. */
static wt_status juint(jr *j, uint64_t *v)
{
    jspace(j);
    if (j->p >= j->end || *j->p < '0' || *j->p > '9') return jbad(j, "expected a non-negative integer");
    if (*j->p == '0' && j->end - j->p > 1 && j->p[1] >= '0' && j->p[1] <= '9')
        return jbad(j, "leading zero in a number");
    uint64_t x = 0;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
        uint64_t d = (uint64_t)(*j->p++ - '0');
        if (x > ((uint64_t)INT64_MAX - d) / 10) return jbad(j, "integer too large");
        x = x * 10 + d;
    }
    if (j->p < j->end && (*j->p == '.' || *j->p == 'e' || *j->p == 'E')) return jbad(j, "expected an integer");
    *v = x;
    return WT_OK;
}

/* Skips any JSON value (unknown keys), nesting at most ST_MAX_DEPTH. */
static wt_status jskip(jr *j, int depth)
{
    if (depth > ST_MAX_DEPTH) return jbad(j, "nested too deeply");
    jspace(j);
    if (j->p >= j->end) return jbad(j, "expected a value");
    char c = *j->p;
    if (c == '"') return jstring(j, NULL);
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        j->p++;
        if (jtake(j, close)) return WT_OK;
        for (;;) {
            wt_status st;
            if (c == '{') {
                if ((st = jstring(j, NULL)) != WT_OK) return st;
                if (!jtake(j, ':')) return jbad(j, "expected ':'");
            }
            if ((st = jskip(j, depth + 1)) != WT_OK) return st;
            if (jtake(j, close)) return WT_OK;
            if (!jtake(j, ',')) return jbad(j, "expected ',' or a closing bracket");
        }
    }
    static const char *const words[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(j->end - j->p) >= n && memcmp(j->p, words[i], n) == 0) {
            j->p += n;
            return WT_OK;
        }
    }
    /* A number: JSON's grammar, loosely (it is skipped, not used). */
    const char *start = j->p;
    if (j->p < j->end && *j->p == '-') j->p++;
    while (j->p < j->end && ((*j->p >= '0' && *j->p <= '9') || *j->p == '.' || *j->p == 'e' || *j->p == 'E' ||
                             *j->p == '+' || *j->p == '-'))
        j->p++;
    return j->p > start ? WT_OK : jbad(j, "unexpected character");
}

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
    for (int i = 0; i < f->count; i++) free(f->entries[i].name);
    free(f->entries);
    for (int i = 0; i < 2 * f->nmeta; i++) free(f->meta[i]);
    free(f->meta);
    io_source_close(&f->src);
    free(f);
}

static wt_status parse_metadata(jr *j, wt_safetensors *f)
{
    if (f->meta) return jbad(j, "__metadata__ appears twice");
    if (!jtake(j, '{')) return jbad(j, "__metadata__ is not an object");
    if (jtake(j, '}')) return WT_OK;
    int cap = 0;
    for (;;) {
        if (f->nmeta == cap) {
            cap = cap ? 2 * cap : 8;
            char **m = realloc(f->meta, sizeof *m * 2 * (size_t)cap);
            if (!m) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", j->fn);
            f->meta = m;
        }
        wt_status st;
        char *k = NULL, *v = NULL;
        if ((st = jstring(j, &k)) != WT_OK) return st;
        if (!jtake(j, ':')) {
            free(k);
            return jbad(j, "expected ':'");
        }
        if ((st = jstring(j, &v)) != WT_OK) {
            free(k);
            return st == WT_ERR_INVALID_ARGUMENT ? jbad(j, "__metadata__ values must be strings") : st;
        }
        f->meta[2 * f->nmeta] = k;
        f->meta[2 * f->nmeta + 1] = v;
        f->nmeta++;
        if (jtake(j, '}')) return WT_OK;
        if (!jtake(j, ',')) return jbad(j, "expected ',' or '}'");
    }
}

static wt_status parse_tensor(jr *j, st_entry *e)
{
    bool have_dtype = false, have_shape = false, have_off = false;
    if (!jtake(j, '{')) return jbad(j, "a tensor entry is not an object");
    if (jtake(j, '}')) return jbad(j, "empty tensor entry");
    for (;;) {
        char *key = NULL;
        wt_status st = jstring(j, &key);
        if (st != WT_OK) return st;
        if (!jtake(j, ':')) {
            free(key);
            return jbad(j, "expected ':'");
        }
        if (strcmp(key, "dtype") == 0) {
            char *d = NULL;
            if ((st = jstring(j, &d)) == WT_OK) {
                e->kind = IO_UNSUPPORTED;
                bool known = false;
                for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
                    if (strcmp(d, st_dtypes[i].name) == 0) {
                        e->kind = st_dtypes[i].kind;
                        known = true;
                    }
                if (!known) st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: unknown dtype '%.15s'", j->fn, d);
                else snprintf(e->dtype, sizeof e->dtype, "%s", d);
                free(d);
            }
            have_dtype = true;
        } else if (strcmp(key, "shape") == 0) {
            if (!jtake(j, '[')) st = jbad(j, "shape is not an array");
            e->ndim = 0;
            if (st == WT_OK && !jtake(j, ']')) {
                for (;;) {
                    uint64_t v;
                    if ((st = juint(j, &v)) != WT_OK) break;
                    if (e->ndim == WT_MAX_DIMS) {
                        st = wt_fail(WT_ERR_UNSUPPORTED, "%s: more than %d dimensions", j->fn, WT_MAX_DIMS);
                        break;
                    }
                    e->shape[e->ndim++] = (int64_t)v;
                    if (jtake(j, ']')) break;
                    if (!jtake(j, ',')) {
                        st = jbad(j, "expected ',' or ']' in shape");
                        break;
                    }
                }
            }
            have_shape = true;
        } else if (strcmp(key, "data_offsets") == 0) {
            if (!jtake(j, '[') || (st = juint(j, &e->begin)) != WT_OK || !jtake(j, ',') ||
                (st = juint(j, &e->end)) != WT_OK || !jtake(j, ']'))
                st = st != WT_OK ? st : jbad(j, "data_offsets is not [begin, end]");
            have_off = true;
        } else {
            st = jskip(j, 2);
        }
        free(key);
        if (st != WT_OK) return st;
        if (jtake(j, '}')) break;
        if (!jtake(j, ',')) return jbad(j, "expected ',' or '}'");
    }
    if (!have_dtype || !have_shape || !have_off) return jbad(j, "a tensor lacks dtype, shape or data_offsets");
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
    jr j = {text, text + n, fn};
    if (!jtake(&j, '{')) st = jbad(&j, "not a JSON object");
    if (st == WT_OK && !jtake(&j, '}')) {
        for (;;) {
            char *key = NULL;
            if ((st = jstring(&j, &key)) != WT_OK) break;
            if (!jtake(&j, ':')) {
                free(key);
                st = jbad(&j, "expected ':'");
                break;
            }
            if (strcmp(key, "__metadata__") == 0) {
                free(key);
                if ((st = parse_metadata(&j, f)) != WT_OK) break;
            } else {
                if (f->count == f->cap) {
                    int cap = f->cap ? 2 * f->cap : 16;
                    st_entry *e = realloc(f->entries, sizeof *e * (size_t)cap);
                    if (!e) {
                        free(key);
                        st = wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
                        break;
                    }
                    f->entries = e;
                    f->cap = cap;
                }
                st_entry *e = &f->entries[f->count];
                memset(e, 0, sizeof *e);
                e->name = key;
                f->count++;
                if ((st = parse_tensor(&j, e)) != WT_OK) break;
            }
            if (jtake(&j, '}')) break;
            if (!jtake(&j, ',')) {
                st = jbad(&j, "expected ',' or '}'");
                break;
            }
        }
    }
    if (st == WT_OK) {
        jspace(&j);
        if (j.p != j.end) st = jbad(&j, "text after the JSON object");
    }
    free(text);
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
    for (int i = 0; i < f->nmeta; i++)
        if (strcmp(f->meta[2 * i], key) == 0) return f->meta[2 * i + 1];
    return NULL;
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
