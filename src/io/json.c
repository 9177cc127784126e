/* A strict JSON reader into a node array (see json.h). */
#include "io/json.h"

#include "core/internal.h"
#include "io/unicode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *fn;
    const uint8_t *p, *begin, *end;
    int max_depth;
    wt_json *doc;
} parser;

static wt_status bad(const parser *ps, const char *why)
{
    return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: malformed JSON at byte %zu: %s", ps->fn,
                   (size_t)(ps->p - ps->begin), why);
}

static void skip_space(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) ps->p++;
}

static wt_status new_node(parser *ps, wt_json_type type, int32_t *index)
{
    wt_json *d = ps->doc;
    if (d->count == d->cap) {
        if (d->cap >= INT32_MAX / 2) return bad(ps, "too many values");
        const int32_t cap = d->cap ? d->cap * 2 : 256;
        wt_json_node *n = realloc(d->nodes, sizeof *n * (size_t)cap);
        if (!n) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of memory for %d JSON values", ps->fn, cap);
        d->nodes = n;
        d->cap = cap;
    }
    wt_json_node *n = &d->nodes[d->count];
    memset(n, 0, sizeof *n);
    n->type = type;
    n->first = n->next = -1;
    *index = d->count++;
    return WT_OK;
}

static int hex_digit(uint8_t c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool read_hex4(parser *ps, uint32_t *v)
{
    if (ps->end - ps->p < 4) return false;
    *v = 0;
    for (int i = 0; i < 4; i++) {
        const int h = hex_digit(ps->p[i]);
        if (h < 0) return false;
        *v = *v << 4 | (uint32_t)h;
    }
    ps->p += 4;
    return true;
}

/* A string at ps->p (the opening quote), unescaped into the buffer. The
 * buffer holds the whole input's length plus one, and no string grows
 * when unescaped (its quotes pay for its NUL), so it never overflows. */
static wt_status read_string(parser *ps, const char **out, size_t *len)
{
    wt_json *d = ps->doc;
    ps->p++;
    char *start = d->strings + d->strings_used;
    char *w = start;
    for (;;) {
        if (ps->p >= ps->end) return bad(ps, "a string without its closing quote");
        const uint8_t c = *ps->p;
        if (c == '"') {
            ps->p++;
            break;
        }
        if (c < 0x20) return bad(ps, "a control character inside a string");
        if (c == '\\') {
            if (ps->end - ps->p < 2) return bad(ps, "an escape at the end of the text");
            const uint8_t e = ps->p[1];
            ps->p += 2;
            switch (e) {
            case '"': *w++ = '"'; break;
            case '\\': *w++ = '\\'; break;
            case '/': *w++ = '/'; break;
            case 'b': *w++ = '\b'; break;
            case 'f': *w++ = '\f'; break;
            case 'n': *w++ = '\n'; break;
            case 'r': *w++ = '\r'; break;
            case 't': *w++ = '\t'; break;
            case 'u': {
                uint32_t cp;
                if (!read_hex4(ps, &cp)) return bad(ps, "a \\u escape without four hex digits");
                if (cp >= 0xDC00 && cp <= 0xDFFF) return bad(ps, "a lone low surrogate escape");
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    uint32_t lo;
                    if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u')
                        return bad(ps, "a high surrogate escape without its low half");
                    ps->p += 2;
                    if (!read_hex4(ps, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                        return bad(ps, "a high surrogate escape without its low half");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                w += wt_utf8_encode(cp, (uint8_t *)w);
                break;
            }
            default: return bad(ps, "an unknown escape");
            }
            continue;
        }
        uint32_t cp;
        bool valid;
        const size_t n = wt_utf8_decode(ps->p, (size_t)(ps->end - ps->p), &cp, &valid);
        if (!valid) return bad(ps, "invalid UTF-8 inside a string");
        memcpy(w, ps->p, n);
        w += n;
        ps->p += n;
    }
    *w++ = 0;
    *out = start;
    *len = (size_t)(w - start) - 1;
    d->strings_used += (size_t)(w - start);
    return WT_OK;
}

/* A number; its text is kept beside the strings, where it always fits:
 * every number but one that ends the text is followed by a delimiter of
 * its own, which pays for its NUL as a string's quotes do. */
static wt_status read_number(parser *ps, double *out, const char **text, size_t *len)
{
    const uint8_t *s = ps->p;
    if (ps->p < ps->end && *ps->p == '-') ps->p++;
    if (ps->p >= ps->end) return bad(ps, "a number without digits");
    if (*ps->p == '0') ps->p++;
    else if (*ps->p >= '1' && *ps->p <= '9') while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
    else return bad(ps, "a number without digits");
    if (ps->p < ps->end && *ps->p == '.') {
        ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') return bad(ps, "a fraction without digits");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-')) ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') return bad(ps, "an exponent without digits");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
    }
    char buf[64];
    const size_t n = (size_t)(ps->p - s);
    if (n >= sizeof buf) return bad(ps, "a number longer than 63 characters");
    memcpy(buf, s, n);
    buf[n] = 0;
    *out = strtod(buf, NULL);
    wt_json *d = ps->doc;
    char *t = d->strings + d->strings_used;
    memcpy(t, buf, n + 1);
    d->strings_used += n + 1;
    *text = t;
    *len = n;
    return WT_OK;
}

static bool take_word(parser *ps, const char *w)
{
    const size_t n = strlen(w);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n) != 0) return false;
    ps->p += n;
    return true;
}

static wt_status read_value(parser *ps, int depth, int32_t *index);

/* Appends child to parent's list (tail kept by the caller). */
static void link_child(wt_json *d, int32_t parent, int32_t *tail, int32_t child)
{
    if (*tail < 0) d->nodes[parent].first = child;
    else d->nodes[*tail].next = child;
    *tail = child;
    d->nodes[parent].len++;
}

static wt_status read_container(parser *ps, int depth, bool object, int32_t *index)
{
    if (depth >= ps->max_depth) return bad(ps, "nested too deep");
    wt_status st = new_node(ps, object ? WT_JSON_OBJECT : WT_JSON_ARRAY, index);
    if (st) return st;
    const int32_t self = *index;
    int32_t tail = -1;
    ps->p++;
    skip_space(ps);
    const uint8_t close = object ? '}' : ']';
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return WT_OK;
    }
    for (;;) {
        const char *key = NULL;
        size_t key_len = 0;
        if (object) {
            skip_space(ps);
            if (ps->p >= ps->end || *ps->p != '"') return bad(ps, "an object key that is not a string");
            if ((st = read_string(ps, &key, &key_len))) return st;
            skip_space(ps);
            if (ps->p >= ps->end || *ps->p != ':') return bad(ps, "a key without ':'");
            ps->p++;
        }
        int32_t child;
        if ((st = read_value(ps, depth + 1, &child))) return st;
        ps->doc->nodes[child].key = key;
        ps->doc->nodes[child].key_len = key_len;
        link_child(ps->doc, self, &tail, child);
        skip_space(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            return WT_OK;
        }
        return bad(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static wt_status read_value(parser *ps, int depth, int32_t *index)
{
    skip_space(ps);
    if (ps->p >= ps->end) return bad(ps, "a value is missing");
    const uint8_t c = *ps->p;
    wt_status st;
    if (c == '{' || c == '[') return read_container(ps, depth, c == '{', index);
    if (c == '"') {
        if ((st = new_node(ps, WT_JSON_STRING, index))) return st;
        const char *s;
        size_t n = 0;
        if ((st = read_string(ps, &s, &n))) return st;
        ps->doc->nodes[*index].str = s;
        ps->doc->nodes[*index].len = n;
        return WT_OK;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        if ((st = new_node(ps, WT_JSON_NUMBER, index))) return st;
        double v = 0;
        const char *text = NULL;
        size_t n = 0;
        if ((st = read_number(ps, &v, &text, &n))) return st;
        ps->doc->nodes[*index].number = v;
        ps->doc->nodes[*index].str = text;
        ps->doc->nodes[*index].len = n;
        return WT_OK;
    }
    if (take_word(ps, "true") || take_word(ps, "false")) {
        if ((st = new_node(ps, WT_JSON_BOOL, index))) return st;
        ps->doc->nodes[*index].boolean = ps->p[-1] == 'e' && ps->p[-2] == 'u';
        return WT_OK;
    }
    if (take_word(ps, "null")) return new_node(ps, WT_JSON_NULL, index);
    return bad(ps, "an unexpected character");
}

static wt_status check_unique_keys(const char *fn, const wt_json *d)
{
    /* Keys of one object compared after sorting a list of their nodes. */
    for (int32_t i = 0; i < d->count; i++) {
        const wt_json_node *o = &d->nodes[i];
        if (o->type != WT_JSON_OBJECT || o->len < 2) continue;
        if (o->len <= 16) {
            for (int32_t a = o->first; a >= 0; a = d->nodes[a].next)
                for (int32_t b = d->nodes[a].next; b >= 0; b = d->nodes[b].next)
                    if (d->nodes[a].key_len == d->nodes[b].key_len &&
                        memcmp(d->nodes[a].key, d->nodes[b].key, d->nodes[a].key_len) == 0)
                        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: malformed JSON: duplicate key \"%s\"", fn,
                                       d->nodes[a].key);
        }
        /* Larger objects (a vocabulary) are checked by their reader, which
         * hashes the keys anyway. */
    }
    return WT_OK;
}

wt_status wt_json_parse(const char *fn, const void *data, size_t size, wt_json *doc)
{
    return wt_json_parse_nested(fn, data, size, WT_JSON_MAX_DEPTH, doc);
}

wt_status wt_json_parse_nested(const char *fn, const void *data, size_t size, int max_depth, wt_json *doc)
{
    memset(doc, 0, sizeof *doc);
    if (max_depth < 1 || max_depth > WT_JSON_MAX_DEPTH)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: JSON nesting limit %d outside [1, %d]", fn, max_depth,
                       WT_JSON_MAX_DEPTH);
    if (size == SIZE_MAX) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: JSON text too large", fn);
    doc->strings = malloc(size + 1);
    if (!doc->strings) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu bytes of JSON", fn, size);
    doc->strings_cap = size + 1;
    parser ps = {fn, data, data, (const uint8_t *)data + size, max_depth, doc};
    int32_t root;
    wt_status st = read_value(&ps, 0, &root);
    if (!st) {
        skip_space(&ps);
        if (ps.p != ps.end) st = bad(&ps, "text after the value");
    }
    if (!st) st = check_unique_keys(fn, doc);
    if (st) wt_json_free(doc);
    return st;
}

void wt_json_free(wt_json *doc)
{
    free(doc->nodes);
    free(doc->strings);
    memset(doc, 0, sizeof *doc);
}

const wt_json_node *wt_json_get(const wt_json *doc, const wt_json_node *obj, const char *key)
{
    if (!obj || obj->type != WT_JSON_OBJECT) return NULL;
    const size_t n = strlen(key);
    for (int32_t c = obj->first; c >= 0; c = doc->nodes[c].next)
        if (doc->nodes[c].key_len == n && memcmp(doc->nodes[c].key, key, n) == 0) return &doc->nodes[c];
    return NULL;
}

const wt_json_node *wt_json_first(const wt_json *doc, const wt_json_node *parent)
{
    if (!parent || (parent->type != WT_JSON_ARRAY && parent->type != WT_JSON_OBJECT) || parent->first < 0)
        return NULL;
    return &doc->nodes[parent->first];
}

const wt_json_node *wt_json_next(const wt_json *doc, const wt_json_node *c)
{
    return c && c->next >= 0 ? &doc->nodes[c->next] : NULL;
}

bool wt_json_uint(const wt_json_node *n, uint64_t max, uint64_t *v)
{
    if (!n || n->type != WT_JSON_NUMBER || n->len == 0) return false;
    uint64_t x = 0;
    for (size_t i = 0; i < n->len; i++) {
        const char c = n->str[i];
        if (c < '0' || c > '9') return false; /* a sign, a fraction or an exponent */
        const uint64_t d = (uint64_t)(c - '0');
        if (d > max || x > (max - d) / 10) return false;
        x = x * 10 + d;
    }
    *v = x;
    return true;
}
