/* A small strict JSON reader for documents such as tokenizer.json: the
 * whole text parsed into an array of nodes (children linked in document
 * order), strings unescaped into one buffer. Nesting at most
 * WT_JSON_MAX_DEPTH deep; invalid UTF-8 inside a string, a lone surrogate
 * escape, a control character, trailing text, a duplicate key in an object
 * of up to 16 members are errors (a larger object, a vocabulary, is left
 * to its reader: a tokenizer's vocabulary with a text twice encodes it as
 * its first id).
 * Never reads outside [data, data + size). */
#ifndef WT_IO_JSON_H
#define WT_IO_JSON_H

#include "webtensor.h"

#define WT_JSON_MAX_DEPTH 64

typedef enum wt_json_type { WT_JSON_NULL, WT_JSON_BOOL, WT_JSON_NUMBER, WT_JSON_STRING, WT_JSON_ARRAY,
                            WT_JSON_OBJECT } wt_json_type;

typedef struct wt_json_node {
    wt_json_type type;
    bool boolean;
    double number;
    const char *str;  /* STRING: unescaped, NUL-terminated (may hold NUL: use len);
                       * NUMBER: the number as written (for exact integers) */
    size_t len;       /* STRING, NUMBER: bytes of str; ARRAY and OBJECT: number of children */
    const char *key;  /* a member of an object: its key (NUL-terminated) */
    size_t key_len;
    int32_t first;    /* ARRAY and OBJECT: the first child, -1 if none */
    int32_t next;     /* the next sibling, -1 if none */
} wt_json_node;

typedef struct wt_json {
    wt_json_node *nodes; /* nodes[0] is the root */
    int32_t count, cap;
    char *strings;
    size_t strings_used, strings_cap;
} wt_json;

/* Parses data; fn names the caller in messages (with the byte offset of a
 * fault). On failure the document is empty and needs no free. */
wt_status wt_json_parse(const char *fn, const void *data, size_t size, wt_json *doc);
/* The same with containers nested at most max_depth deep (the root
 * container is one), for formats whose documents are shallow by nature:
 * max_depth in [1, WT_JSON_MAX_DEPTH]. */
wt_status wt_json_parse_nested(const char *fn, const void *data, size_t size, int max_depth, wt_json *doc);
void wt_json_free(wt_json *doc);
/* The member of object node obj with this key, or NULL (also when obj is
 * not an object). */
const wt_json_node *wt_json_get(const wt_json *doc, const wt_json_node *obj, const char *key);
/* The child after c in its parent, or NULL. */
const wt_json_node *wt_json_next(const wt_json *doc, const wt_json_node *c);
const wt_json_node *wt_json_first(const wt_json *doc, const wt_json_node *parent);
/* A NUMBER node written as a whole number without sign, fraction or
 * exponent and no larger than max: true and its exact value (a double
 * holds integers exactly only up to 2^53; sizes and offsets go further). */
bool wt_json_uint(const wt_json_node *n, uint64_t max, uint64_t *v);

#endif
