/* Reading a Llama-family checkpoint: see llama_model.h. */
#define _POSIX_C_SOURCE 200809L
#include "llama_model.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webtensor_io.h"

/* ------------------------------------------------------------------ JSON
 * A small reader of the whole of JSON: config files nest objects
 * (rope_parameters, rope_scaling) and lists (eos_token_id, layer_types),
 * and a key may appear at several depths. The library reads the JSON of
 * the files it loads (safetensors headers, tokenizer.json) with a reader
 * of its own that it does not export: its API holds tensors and their
 * files, and a program's own settings are read by the program, here with
 * this one. */

typedef enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_type;

typedef struct json {
    json_type type;
    bool boolean;
    double number;
    char *string;       /* JSON_STRING */
    int n;              /* items of an array or object */
    struct json *items; /* values */
    char **keys;        /* JSON_OBJECT: the key of each item */
} json;

typedef struct json_reader {
    const char *p, *end;
    int depth;
} json_reader;

static void json_free(json *v)
{
    if (!v) return;
    free(v->string);
    for (int i = 0; i < v->n; i++) {
        json_free(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    memset(v, 0, sizeof *v);
}

static void json_skip_space(json_reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) r->p++;
}

static bool json_literal(json_reader *r, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0) return false;
    r->p += n;
    return true;
}

static bool json_hex4(json_reader *r, unsigned *out)
{
    if (r->end - r->p < 4) return false;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = *r->p++;
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return false;
    }
    *out = v;
    return true;
}

/* A string after its opening quote, as UTF-8. */
static char *json_string(json_reader *r)
{
    size_t cap = 16, n = 0;
    char *s = malloc(cap);
    if (!s) return NULL;
    for (;;) {
        if (r->p >= r->end) goto bad;
        unsigned char c = (unsigned char)*r->p++;
        if (c == '"') break;
        if (c < 0x20) goto bad;
        unsigned cp = c;
        if (c == '\\') {
            if (r->p >= r->end) goto bad;
            char e = *r->p++;
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
                if (!json_hex4(r, &cp)) goto bad;
                if (cp >= 0xD800 && cp < 0xDC00) { /* a surrogate pair */
                    unsigned lo;
                    if (!json_literal(r, "\\u") || !json_hex4(r, &lo) || lo < 0xDC00 || lo > 0xDFFF) goto bad;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                break;
            default: goto bad;
            }
        }
        if (n + 5 > cap) {
            char *ns = realloc(s, cap *= 2);
            if (!ns) goto bad;
            s = ns;
        }
        if (c != '\\' || cp < 0x80) {
            s[n++] = (char)cp;
        } else if (cp < 0x800) {
            s[n++] = (char)(0xC0 | (cp >> 6));
            s[n++] = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            s[n++] = (char)(0xE0 | (cp >> 12));
            s[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            s[n++] = (char)(0x80 | (cp & 0x3F));
        } else {
            s[n++] = (char)(0xF0 | (cp >> 18));
            s[n++] = (char)(0x80 | ((cp >> 12) & 0x3F));
            s[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            s[n++] = (char)(0x80 | (cp & 0x3F));
        }
    }
    s[n] = 0;
    return s;
bad:
    free(s);
    return NULL;
}

static bool json_value(json_reader *r, json *v);

static bool json_push(json *v, json *item, char *key)
{
    json *ni = realloc(v->items, sizeof *ni * (size_t)(v->n + 1));
    if (!ni) return false;
    v->items = ni;
    if (v->type == JSON_OBJECT) {
        char **nk = realloc(v->keys, sizeof *nk * (size_t)(v->n + 1));
        if (!nk) return false;
        v->keys = nk;
        v->keys[v->n] = key;
    }
    v->items[v->n++] = *item;
    return true;
}

static bool json_container(json_reader *r, json *v, char close)
{
    json_skip_space(r);
    if (r->p < r->end && *r->p == close) {
        r->p++;
        return true;
    }
    for (;;) {
        char *key = NULL;
        json item;
        memset(&item, 0, sizeof item);
        json_skip_space(r);
        if (v->type == JSON_OBJECT) {
            if (r->p >= r->end || *r->p++ != '"' || !(key = json_string(r))) return false;
            json_skip_space(r);
            if (r->p >= r->end || *r->p++ != ':') { free(key); return false; }
        }
        if (!json_value(r, &item) || !json_push(v, &item, key)) {
            json_free(&item);
            free(key);
            return false;
        }
        json_skip_space(r);
        if (r->p >= r->end) return false;
        char c = *r->p++;
        if (c == close) return true;
        if (c != ',') return false;
    }
}

static bool json_value(json_reader *r, json *v)
{
    memset(v, 0, sizeof *v);
    json_skip_space(r);
    if (r->p >= r->end || ++r->depth > 64) return false;
    bool ok;
    char c = *r->p;
    if (c == '{' || c == '[') {
        r->p++;
        v->type = c == '{' ? JSON_OBJECT : JSON_ARRAY;
        ok = json_container(r, v, c == '{' ? '}' : ']');
    } else if (c == '"') {
        r->p++;
        v->type = JSON_STRING;
        ok = (v->string = json_string(r)) != NULL;
    } else if (json_literal(r, "null")) {
        v->type = JSON_NULL, ok = true;
    } else if (json_literal(r, "true")) {
        v->type = JSON_BOOL, v->boolean = true, ok = true;
    } else if (json_literal(r, "false")) {
        v->type = JSON_BOOL, ok = true;
    } else {
        /* strtod reads past a bound only into more number characters, and
         * the text ends in a 0 (llama_read_text). Infinity and NaN are not JSON. */
        char *end;
        errno = 0;
        v->type = JSON_NUMBER;
        v->number = strtod(r->p, &end);
        ok = end != r->p && end <= r->end && errno == 0 && isfinite(v->number) &&
             (c == '-' || (c >= '0' && c <= '9'));
        if (ok) r->p = end;
    }
    r->depth--;
    if (!ok) json_free(v);
    return ok;
}

static const json *json_get(const json *obj, const char *key)
{
    if (!obj || obj->type != JSON_OBJECT) return NULL;
    for (int i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0) return &obj->items[i];
    return NULL;
}

char *llama_read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, cap);
            if (!nb) { free(buf); fclose(f); return NULL; }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, 4096, f);
        n += got;
        if (got < 4096) break;
    }
    fclose(f);
    buf[n] = 0;
    return buf;
}

/* 1: parsed; 0: no such file; -1: not JSON (err says where). */
static int json_load(const char *path, json *out, char *err, size_t err_size)
{
    char *text = llama_read_text(path);
    if (!text) return 0;
    json_reader r = {text, text + strlen(text), 0};
    bool ok = json_value(&r, out);
    if (ok) {
        json_skip_space(&r);
        ok = r.p == r.end;
        if (!ok) json_free(out);
    }
    if (!ok) snprintf(err, err_size, "%s: not valid JSON (near byte %ld)", path, (long)(r.p - text));
    free(text);
    return ok ? 1 : -1;
}

/* ---------------------------------------------------------------- config */

typedef struct config_reader {
    const char *path;
    char *err;
    size_t err_size;
    bool failed;
} config_reader;

static void fail(config_reader *cr, const char *fmt, ...)
{
    if (cr->failed) return;
    cr->failed = true;
    int n = snprintf(cr->err, cr->err_size, "%s: ", cr->path);
    if (n < 0 || (size_t)n >= cr->err_size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cr->err + n, cr->err_size - (size_t)n, fmt, ap);
    va_end(ap);
}

/* An integer in [lo, hi] at key (named as where in messages); def when
 * absent or null, or a failure when required. */
static int64_t config_int(config_reader *cr, const json *obj, const char *key, const char *where, bool required,
                          int64_t def, int64_t lo, int64_t hi)
{
    const json *v = json_get(obj, key);
    if (!v || v->type == JSON_NULL) {
        if (required) fail(cr, "\"%s\" is missing", where);
        return def;
    }
    if (v->type != JSON_NUMBER || v->number != floor(v->number) || v->number < (double)lo ||
        v->number > (double)hi) {
        fail(cr, "\"%s\" must be an integer in [%lld, %lld]", where, (long long)lo, (long long)hi);
        return def;
    }
    return (int64_t)v->number;
}

static double config_number(config_reader *cr, const json *obj, const char *key, const char *where, double def,
                            double lo)
{
    const json *v = json_get(obj, key);
    if (!v || v->type == JSON_NULL) return def;
    if (v->type != JSON_NUMBER || !(v->number > lo)) {
        fail(cr, "\"%s\" must be a number above %g", where, lo);
        return def;
    }
    return v->number;
}

static bool config_bool(config_reader *cr, const json *obj, const char *key, bool def)
{
    const json *v = json_get(obj, key);
    if (!v || v->type == JSON_NULL) return def;
    if (v->type != JSON_BOOL) {
        fail(cr, "\"%s\" must be true or false", key);
        return def;
    }
    return v->boolean;
}

/* The RoPE of a rope_parameters (5.x) or rope_scaling (4.x) object;
 * name is the key it came from. */
static void config_rope(config_reader *cr, const json *rp, const char *name, llama_config *c)
{
    if (!rp || rp->type == JSON_NULL) return;
    if (rp->type != JSON_OBJECT) {
        fail(cr, "\"%s\" must be an object or null", name);
        return;
    }
    const json *t = json_get(rp, "rope_type");
    if (!t) t = json_get(rp, "type"); /* the spelling of older 4.x files */
    char where[96];
    if (!t) {
        /* 5.x writes one set per attention kind for models that mix them. */
        fail(cr, "\"%s\" has no rope_type (RoPE parameters per layer type are not supported)", name);
        return;
    }
    if (t->type != JSON_STRING) {
        fail(cr, "\"%s.rope_type\" must be a string", name);
        return;
    }
    snprintf(where, sizeof where, "%s.rope_theta", name);
    c->theta = config_number(cr, rp, "rope_theta", where, c->theta, 0);
    const json *prf = json_get(rp, "partial_rotary_factor");
    if (prf && !(prf->type == JSON_NUMBER && prf->number == 1.0)) {
        fail(cr, "\"%s.partial_rotary_factor\" other than 1 is not supported", name);
        return;
    }
    const json *af = json_get(rp, "attention_factor");
    if (af && af->type != JSON_NULL && !(af->type == JSON_NUMBER && af->number == 1.0)) {
        fail(cr, "\"%s.attention_factor\" other than 1 is not supported", name);
        return;
    }
    if (strcmp(t->string, "default") == 0) {
        c->rope_type = LLAMA_ROPE_DEFAULT;
        return;
    }
    snprintf(where, sizeof where, "%s.factor", name);
    c->rope_factor = config_number(cr, rp, "factor", where, 0, 0);
    if (!cr->failed && c->rope_factor <= 0) fail(cr, "\"%s\" is missing", where);
    if (strcmp(t->string, "linear") == 0) {
        c->rope_type = LLAMA_ROPE_LINEAR;
    } else if (strcmp(t->string, "llama3") == 0) {
        c->rope_type = LLAMA_ROPE_LLAMA3;
        snprintf(where, sizeof where, "%s.low_freq_factor", name);
        c->low_freq_factor = config_number(cr, rp, "low_freq_factor", where, 0, 0);
        snprintf(where, sizeof where, "%s.high_freq_factor", name);
        c->high_freq_factor = config_number(cr, rp, "high_freq_factor", where, 0, 0);
        snprintf(where, sizeof where, "%s.original_max_position_embeddings", name);
        c->rope_original_max_pos =
            config_int(cr, rp, "original_max_position_embeddings", where, true, 0, 1, 1000000000);
        if (!cr->failed && !(c->low_freq_factor > 0 && c->high_freq_factor > c->low_freq_factor))
            fail(cr, "\"%s\": llama3 RoPE needs 0 < low_freq_factor < high_freq_factor", name);
    } else {
        fail(cr, "\"%s.rope_type\" \"%s\" is not supported (default, linear, llama3)", name, t->string);
    }
}

/* eos_token_id: an integer, a list of them, or null; added to c->eos. */
static void config_eos(config_reader *cr, const json *root, llama_config *c)
{
    const json *v = json_get(root, "eos_token_id");
    if (!v || v->type == JSON_NULL) return;
    int n = v->type == JSON_ARRAY ? v->n : 1;
    for (int i = 0; i < n; i++) {
        const json *e = v->type == JSON_ARRAY ? &v->items[i] : v;
        if (e->type != JSON_NUMBER || e->number != floor(e->number) || e->number < 0 ||
            e->number >= (double)c->vocab) {
            fail(cr, "\"eos_token_id\" must be token ids below vocab_size (%lld), or a list of them",
                 (long long)c->vocab);
            return;
        }
        if (llama_is_eos(c, (int32_t)e->number)) continue;
        if (c->n_eos == LLAMA_MAX_EOS) {
            fail(cr, "\"eos_token_id\" lists more than %d ids", LLAMA_MAX_EOS);
            return;
        }
        c->eos[c->n_eos++] = (int32_t)e->number;
    }
}

bool llama_is_eos(const llama_config *c, int32_t token)
{
    for (int i = 0; i < c->n_eos; i++)
        if (c->eos[i] == token) return true;
    return false;
}

static void config_read(config_reader *cr, const json *root, llama_config *c)
{
    if (root->type != JSON_OBJECT) {
        fail(cr, "not a JSON object");
        return;
    }
    const json *mt = json_get(root, "model_type");
    const char *type = mt && mt->type == JSON_STRING ? mt->string : "llama";
    if (strcmp(type, "llama") != 0 && strcmp(type, "qwen2") != 0) {
        fail(cr, "\"model_type\" \"%s\" is not supported (llama, qwen2)", type);
        return;
    }
    snprintf(c->model_type, sizeof c->model_type, "%s", type);
    const json *act = json_get(root, "hidden_act");
    if (act && !(act->type == JSON_STRING && strcmp(act->string, "silu") == 0)) {
        fail(cr, "\"hidden_act\" %s%s%s is not supported (silu)", act->type == JSON_STRING ? "\"" : "",
             act->type == JSON_STRING ? act->string : "(not a string)", act->type == JSON_STRING ? "\"" : "");
        return;
    }
    if (json_get(root, "quantization_config")) {
        fail(cr, "\"quantization_config\": quantized checkpoints are not supported");
        return;
    }
    const int64_t big = 1000000000;
    c->vocab = config_int(cr, root, "vocab_size", "vocab_size", true, 0, 1, INT32_MAX);
    c->dim = config_int(cr, root, "hidden_size", "hidden_size", true, 0, 1, big);
    c->hidden = config_int(cr, root, "intermediate_size", "intermediate_size", true, 0, 1, big);
    c->layers = config_int(cr, root, "num_hidden_layers", "num_hidden_layers", true, 0, 1, 100000);
    c->heads = config_int(cr, root, "num_attention_heads", "num_attention_heads", true, 0, 1, 100000);
    c->max_pos = config_int(cr, root, "max_position_embeddings", "max_position_embeddings", true, 0, 1, big);
    c->kv_heads = config_int(cr, root, "num_key_value_heads", "num_key_value_heads", false, c->heads, 1, 100000);
    if (cr->failed) return;
    c->head_dim = config_int(cr, root, "head_dim", "head_dim", false, c->dim / c->heads, 2, 100000);
    c->eps = config_number(cr, root, "rms_norm_eps", "rms_norm_eps", 1e-6, 0);
    c->theta = config_number(cr, root, "rope_theta", "rope_theta", 10000.0, 0);
    c->rope_type = LLAMA_ROPE_DEFAULT;
    const json *rp = json_get(root, "rope_parameters");
    if (rp && rp->type != JSON_NULL) config_rope(cr, rp, "rope_parameters", c);
    else config_rope(cr, json_get(root, "rope_scaling"), "rope_scaling", c);
    const json *prf = json_get(root, "partial_rotary_factor");
    if (prf && !(prf->type == JSON_NUMBER && prf->number == 1.0))
        fail(cr, "\"partial_rotary_factor\" other than 1 is not supported");
    c->tied = config_bool(cr, root, "tie_word_embeddings", false);
    if (strcmp(type, "qwen2") == 0) {
        c->qkv_bias = true;
        if (config_bool(cr, root, "use_sliding_window", false))
            fail(cr, "\"use_sliding_window\": sliding-window attention is not supported");
    } else {
        c->qkv_bias = c->o_bias = config_bool(cr, root, "attention_bias", false);
        c->mlp_bias = config_bool(cr, root, "mlp_bias", false);
    }
    const json *lt = json_get(root, "layer_types");
    if (lt && lt->type == JSON_ARRAY)
        for (int i = 0; i < lt->n; i++)
            if (!(lt->items[i].type == JSON_STRING && strcmp(lt->items[i].string, "full_attention") == 0)) {
                fail(cr, "\"layer_types\"[%d]: only \"full_attention\" layers are supported", i);
                break;
            }
    if (cr->failed) return;
    if (c->heads % c->kv_heads != 0)
        fail(cr, "\"num_attention_heads\" (%lld) is not a multiple of \"num_key_value_heads\" (%lld)",
             (long long)c->heads, (long long)c->kv_heads);
    else if (c->head_dim % 2 != 0)
        fail(cr, "\"head_dim\" (%lld) must be even for rotary embeddings", (long long)c->head_dim);
    config_eos(cr, root, c);
}

bool llama_config_load(const char *dir, llama_config *c, char *err, size_t err_size)
{
    char path[4096];
    json root;
    memset(c, 0, sizeof *c);
    err[0] = 0;
    snprintf(path, sizeof path, "%s/config.json", dir);
    int got = json_load(path, &root, err, err_size);
    if (got == 0) snprintf(err, err_size, "cannot read %s", path);
    if (got <= 0) return false;
    config_reader cr = {path, err, err_size, false};
    config_read(&cr, &root, c);
    json_free(&root);
    if (cr.failed) return false;
    /* generation_config.json holds the EOS ids that generation stops at
     * (Llama 3 instruct models list more there than in config.json). */
    snprintf(path, sizeof path, "%s/generation_config.json", dir);
    got = json_load(path, &root, err, err_size);
    if (got < 0) return false;
    if (got > 0) {
        cr.path = path;
        config_eos(&cr, &root, c);
        json_free(&root);
        if (cr.failed) return false;
    }
    return true;
}

/* --------------------------------------------------------------- weights */

/* The checkpoint's files: model.safetensors, or the distinct files of
 * model.safetensors.index.json's weight_map. */
typedef struct weight_files {
    int n;
    wt_safetensors **file;
    char **used; /* per file: a flag per tensor, set when loaded */
} weight_files;

static void weight_files_close(weight_files *w)
{
    for (int i = 0; i < w->n; i++) {
        wt_safetensors_close(w->file[i]);
        free(w->used[i]);
    }
    free(w->file);
    free(w->used);
    memset(w, 0, sizeof *w);
}

static wt_status weight_files_add(weight_files *w, const char *path)
{
    wt_safetensors **nf = realloc(w->file, sizeof *nf * (size_t)(w->n + 1));
    if (!nf) return WT_ERR_OUT_OF_MEMORY;
    w->file = nf;
    char **nu = realloc(w->used, sizeof *nu * (size_t)(w->n + 1));
    if (!nu) return WT_ERR_OUT_OF_MEMORY;
    w->used = nu;
    wt_safetensors *f;
    wt_status st = wt_safetensors_open(path, &f);
    if (st != WT_OK) return st;
    char *used = calloc((size_t)wt_safetensors_count(f) + 1, 1);
    if (!used) {
        wt_safetensors_close(f);
        return WT_ERR_OUT_OF_MEMORY;
    }
    w->file[w->n] = f;
    w->used[w->n++] = used;
    return WT_OK;
}

static wt_status weight_files_open(const char *dir, weight_files *w, char *err, size_t err_size)
{
    char path[4096];
    json index;
    memset(w, 0, sizeof *w);
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    int got = json_load(path, &index, err, err_size);
    if (got < 0) return WT_ERR_INVALID_ARGUMENT;
    if (got == 0) {
        snprintf(path, sizeof path, "%s/model.safetensors", dir);
        return weight_files_add(w, path);
    }
    wt_status st = WT_OK;
    const json *map = json_get(&index, "weight_map");
    if (!map || map->type != JSON_OBJECT || map->n == 0) {
        snprintf(err, err_size, "%s: \"weight_map\" is missing or empty", path);
        st = WT_ERR_INVALID_ARGUMENT;
    }
    for (int i = 0; st == WT_OK && i < map->n; i++) {
        const json *fn = &map->items[i];
        if (fn->type != JSON_STRING || !fn->string[0] || strchr(fn->string, '/') || strstr(fn->string, "..")) {
            snprintf(err, err_size, "%s: \"weight_map\".\"%s\" is not a file name in the directory", path,
                     map->keys[i]);
            st = WT_ERR_INVALID_ARGUMENT;
            break;
        }
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) seen = strcmp(map->items[j].string, fn->string) == 0;
        if (seen) continue;
        char shard[4096];
        snprintf(shard, sizeof shard, "%s/%s", dir, fn->string);
        st = weight_files_add(w, shard);
    }
    json_free(&index);
    if (st != WT_OK) weight_files_close(w);
    return st;
}

static bool weight_files_find(const weight_files *w, const char *name, int *file, int *index)
{
    for (int i = 0; i < w->n; i++)
        if (wt_safetensors_find(w->file[i], name, index) == WT_OK) {
            *file = i;
            return true;
        }
    return false;
}

/* The tensor name, of shape [d0] or [d0, d1], in dtype. */
static wt_status load_weight(weight_files *w, wt_context *ctx, wt_dtype dtype, const char *name, int ndim,
                             int64_t d0, int64_t d1, wt_tensor **out, char *err, size_t err_size)
{
    int file, index;
    if (!weight_files_find(w, name, &file, &index)) {
        snprintf(err, err_size, "the checkpoint has no tensor named '%s'", name);
        return WT_ERR_INVALID_ARGUMENT;
    }
    wt_status st = wt_safetensors_load(w->file[file], ctx, name, dtype, out);
    if (st != WT_OK) return st;
    w->used[file][index] = 1;
    const int64_t *s = wt_tensor_shape(*out);
    if (wt_tensor_ndim(*out) != ndim || s[0] != d0 || (ndim == 2 && s[1] != d1)) {
        char want[64];
        if (ndim == 2) snprintf(want, sizeof want, "[%lld, %lld]", (long long)d0, (long long)d1);
        else snprintf(want, sizeof want, "[%lld]", (long long)d0);
        snprintf(err, err_size, "%s has the wrong shape for the config (expected %s)", name, want);
        wt_tensor_release(*out);
        *out = NULL;
        return WT_ERR_SHAPE;
    }
    return WT_OK;
}

/* A tensor left over means a model this loader does not know (a bias the
 * config did not announce, another architecture's layer): refused rather
 * than ignored. The rotary table some old checkpoints carry is derived
 * data, not a weight. */
static wt_status check_all_used(const weight_files *w, const llama_config *c, char *err, size_t err_size)
{
    for (int i = 0; i < w->n; i++) {
        for (int j = 0; j < wt_safetensors_count(w->file[i]); j++) {
            wt_safetensors_entry e;
            if (w->used[i][j] || wt_safetensors_entry_at(w->file[i], j, &e) != WT_OK) continue;
            const size_t n = strlen(e.name), tail = strlen("rotary_emb.inv_freq");
            if (n >= tail && strcmp(e.name + n - tail, "rotary_emb.inv_freq") == 0) continue;
            if (c->tied && strcmp(e.name, "lm_head.weight") == 0) continue;
            snprintf(err, err_size,
                     "the checkpoint has a tensor '%s' that a %s model of this config does not use", e.name,
                     c->model_type);
            return WT_ERR_UNSUPPORTED;
        }
    }
    return WT_OK;
}

void llama_free(llama *m)
{
    if (m->layer) {
        for (int64_t l = 0; l < m->c.layers; l++) {
            llama_layer *y = &m->layer[l];
            wt_tensor *all[] = {y->in_norm, y->q, y->k, y->v, y->o, y->post_norm, y->gate, y->up, y->down,
                                y->q_bias, y->k_bias, y->v_bias, y->o_bias, y->gate_bias, y->up_bias,
                                y->down_bias, y->kv_cache, y->k_cache, y->v_cache, y->qkv, y->qkv_bias, y->gate_up,
                                y->gate_up_bias, y->qkv_runs[0], y->qkv_runs[1], y->qkv_runs[2], y->qkv_step};
            for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wt_tensor_release(all[i]);
        }
        free(m->layer);
    }
    if (m->head != m->embed) wt_tensor_release(m->head);
    wt_tensor_release(m->embed);
    wt_tensor_release(m->norm);
    free(m->quant); /* its tensors are the layers' and the head */
    llama_config c = m->c;
    memset(m, 0, sizeof *m);
    m->c = c;
}

/* *out = the rows of *a, *b (and *c) in turn; the parts are released. */
static wt_status join_rows(wt_tensor **a, wt_tensor **b, wt_tensor **c, wt_tensor **out)
{
    wt_tensor *parts[3] = {*a, *b, c ? *c : NULL};
    wt_status st = wt_concat(c ? 3 : 2, parts, 0, out);
    if (st != WT_OK) return st;
    for (int i = 0; i < 3; i++) wt_tensor_release(parts[i]);
    *a = *b = NULL;
    if (c) *c = NULL;
    return WT_OK;
}

#define CK(call)                                  \
    do {                                          \
        if ((st = (call)) != WT_OK) goto done;    \
    } while (0)

wt_status llama_load(const char *dir, wt_context *ctx, wt_dtype dtype, int64_t batch, int64_t max_seq, llama *m,
                     char *err, size_t err_size)
{
    const llama_config c = m->c;
    weight_files w;
    char name[256];
    err[0] = 0;
    wt_status st = weight_files_open(dir, &w, err, err_size);
    if (st != WT_OK) return st;
    m->dtype = dtype;
    m->batch = batch > 0 ? batch : 1;
    m->layer = calloc((size_t)c.layers, sizeof *m->layer);
    if (!m->layer) { st = WT_ERR_OUT_OF_MEMORY; goto done; }
    const size_t es = wt_dtype_size(dtype);
    const int64_t D = c.dim, I = c.hidden, qd = c.heads * c.head_dim, kd = c.kv_heads * c.head_dim;
    CK(load_weight(&w, ctx, dtype, "model.embed_tokens.weight", 2, c.vocab, D, &m->embed, err, err_size));
    CK(load_weight(&w, ctx, dtype, "model.norm.weight", 1, D, 0, &m->norm, err, err_size));
    if (c.tied) {
        m->head = m->embed;
    } else {
        int file, index;
        if (!weight_files_find(&w, "lm_head.weight", &file, &index)) {
            snprintf(err, err_size,
                     "the checkpoint has no tensor named 'lm_head.weight' and config.json does not set "
                     "\"tie_word_embeddings\": true");
            st = WT_ERR_INVALID_ARGUMENT;
            goto done;
        }
        CK(load_weight(&w, ctx, dtype, "lm_head.weight", 2, c.vocab, D, &m->head, err, err_size));
    }
    for (int64_t l = 0; l < c.layers; l++) {
        llama_layer *y = &m->layer[l];
        struct {
            const char *suffix;
            bool present;
            int ndim;
            int64_t d0, d1;
            wt_tensor **dst;
        } t[] = {
            {"input_layernorm.weight", true, 1, D, 0, &y->in_norm},
            {"self_attn.q_proj.weight", true, 2, qd, D, &y->q},
            {"self_attn.k_proj.weight", true, 2, kd, D, &y->k},
            {"self_attn.v_proj.weight", true, 2, kd, D, &y->v},
            {"self_attn.o_proj.weight", true, 2, D, qd, &y->o},
            {"post_attention_layernorm.weight", true, 1, D, 0, &y->post_norm},
            {"mlp.gate_proj.weight", true, 2, I, D, &y->gate},
            {"mlp.up_proj.weight", true, 2, I, D, &y->up},
            {"mlp.down_proj.weight", true, 2, D, I, &y->down},
            {"self_attn.q_proj.bias", c.qkv_bias, 1, qd, 0, &y->q_bias},
            {"self_attn.k_proj.bias", c.qkv_bias, 1, kd, 0, &y->k_bias},
            {"self_attn.v_proj.bias", c.qkv_bias, 1, kd, 0, &y->v_bias},
            {"self_attn.o_proj.bias", c.o_bias, 1, D, 0, &y->o_bias},
            {"mlp.gate_proj.bias", c.mlp_bias, 1, I, 0, &y->gate_bias},
            {"mlp.up_proj.bias", c.mlp_bias, 1, I, 0, &y->up_bias},
            {"mlp.down_proj.bias", c.mlp_bias, 1, D, 0, &y->down_bias},
        };
        for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
            if (!t[i].present) continue;
            snprintf(name, sizeof name, "model.layers.%lld.%s", (long long)l, t[i].suffix);
            CK(load_weight(&w, ctx, dtype, name, t[i].ndim, t[i].d0, t[i].d1, t[i].dst, err, err_size));
            m->decode_bytes += (uint64_t)wt_tensor_numel(*t[i].dst) * es;
        }
        CK(join_rows(&y->q, &y->k, &y->v, &y->qkv));
        CK(join_rows(&y->gate, &y->up, NULL, &y->gate_up));
        if (c.qkv_bias) CK(join_rows(&y->q_bias, &y->k_bias, &y->v_bias, &y->qkv_bias));
        if (c.mlp_bias) CK(join_rows(&y->gate_bias, &y->up_bias, NULL, &y->gate_up_bias));
        /* The cache is f32 for f16 weights too: the f16 keys and values
         * are exact in f32, and attention over f16 keys would convert the
         * whole cached prefix to f32 on every step. */
        CK(llama_kv_cache(ctx, &c, m->batch, max_seq, y));
    }
    CK(check_all_used(&w, &c, err, err_size));
    /* A decode step reads one row of the embedding table, the final norm
     * and the LM head beside the layers. */
    m->decode_bytes += (uint64_t)(D + D + c.vocab * D) * es;
    m->weight_bytes = c.tied ? m->decode_bytes - (uint64_t)D * es
                             : m->decode_bytes + (uint64_t)((c.vocab - 1) * D) * es;
done:
    weight_files_close(&w);
    if (st != WT_OK) llama_free(m);
    return st;
}

wt_status llama_kv_cache(wt_context *ctx, const llama_config *c, int64_t batch, int64_t max_seq, llama_layer *y)
{
    const int64_t shape[4] = {batch, 2 * c->kv_heads, max_seq, c->head_dim};
    wt_status st = wt_tensor_zeros(ctx, WT_F32, 4, shape, &y->kv_cache);
    if (st == WT_OK) st = wt_slice(y->kv_cache, 1, 0, c->kv_heads, 1, &y->k_cache);
    if (st == WT_OK) st = wt_slice(y->kv_cache, 1, c->kv_heads, 2 * c->kv_heads, 1, &y->v_cache);
    return st;
}
