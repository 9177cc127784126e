/* A Llama model from a GGUF file: llama_gguf.h says what is read and how
 * the Q/K rows are moved back from llama.cpp's interleaved order. */
#define _POSIX_C_SOURCE 200809L
#include "llama_gguf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webtensor_io.h"

/* ggml's type ids of the tensors read here */
enum { GGML_F32 = 0, GGML_F16 = 1, GGML_Q4_0 = 2, GGML_Q8_0 = 8, GGML_Q4_K = 12, GGML_Q6_K = 14, GGML_BF16 = 30 };

static bool failf(char *err, size_t err_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
    return false;
}

/* An integer key: required, or def when absent. */
static bool key_int(const wt_gguf *f, const char *key, bool required, int64_t def, int64_t *out, char *err,
                    size_t err_size)
{
    wt_status st = wt_gguf_get_int(f, key, out);
    if (st == WT_ERR_NOT_FOUND && !required) {
        *out = def;
        return true;
    }
    if (st != WT_OK) return failf(err, err_size, "GGUF key %s: %s", key, wt_last_error());
    if (*out <= 0) return failf(err, err_size, "GGUF key %s = %lld must be > 0", key, (long long)*out);
    return true;
}

static bool key_float(const wt_gguf *f, const char *key, double def, double *out, char *err, size_t err_size)
{
    wt_status st = wt_gguf_get_float(f, key, out);
    if (st == WT_ERR_NOT_FOUND) {
        *out = def;
        return true;
    }
    if (st != WT_OK) return failf(err, err_size, "GGUF key %s: %s", key, wt_last_error());
    if (!(*out > 0)) return failf(err, err_size, "GGUF key %s = %g must be > 0", key, *out);
    return true;
}

static bool read_config(const wt_gguf *f, llama_config *c, char *err, size_t err_size)
{
    memset(c, 0, sizeof *c);
    const char *arch = NULL;
    if (wt_gguf_get_string(f, "general.architecture", &arch, NULL) != WT_OK)
        return failf(err, err_size, "GGUF key general.architecture: %s", wt_last_error());
    if (strcmp(arch, "llama") != 0)
        return failf(err, err_size, "GGUF key general.architecture = \"%s\": only \"llama\" is supported", arch);
    snprintf(c->model_type, sizeof c->model_type, "llama");
    int64_t rope_dims = 0, key_len = 0, value_len = 0, vocab = 0;
    if (!key_int(f, "llama.block_count", true, 0, &c->layers, err, err_size) ||
        !key_int(f, "llama.embedding_length", true, 0, &c->dim, err, err_size) ||
        !key_int(f, "llama.feed_forward_length", true, 0, &c->hidden, err, err_size) ||
        !key_int(f, "llama.attention.head_count", true, 0, &c->heads, err, err_size) ||
        !key_int(f, "llama.attention.head_count_kv", false, c->heads, &c->kv_heads, err, err_size) ||
        !key_int(f, "llama.context_length", true, 0, &c->max_pos, err, err_size) ||
        !key_float(f, "llama.attention.layer_norm_rms_epsilon", 1e-5, &c->eps, err, err_size) ||
        !key_float(f, "llama.rope.freq_base", 10000.0, &c->theta, err, err_size))
        return false;
    if (c->dim % c->heads != 0 || c->heads % c->kv_heads != 0)
        return failf(err, err_size, "GGUF: embedding_length %lld, head_count %lld, head_count_kv %lld do not divide",
                     (long long)c->dim, (long long)c->heads, (long long)c->kv_heads);
    c->head_dim = c->dim / c->heads;
    if (!key_int(f, "llama.attention.key_length", false, c->head_dim, &key_len, err, err_size) ||
        !key_int(f, "llama.attention.value_length", false, key_len, &value_len, err, err_size))
        return false;
    if (key_len != value_len || key_len % 2 != 0)
        return failf(err, err_size, "GGUF keys llama.attention.key_length %lld and value_length %lld: supported "
                     "equal and even", (long long)key_len, (long long)value_len);
    c->head_dim = key_len;
    if (!key_int(f, "llama.rope.dimension_count", false, c->head_dim, &rope_dims, err, err_size)) return false;
    if (rope_dims != c->head_dim)
        return failf(err, err_size, "GGUF key llama.rope.dimension_count = %lld: partial rotary embeddings (head "
                     "dim %lld) are not supported", (long long)rope_dims, (long long)c->head_dim);
    const char *scaling = NULL;
    if (wt_gguf_get_string(f, "llama.rope.scaling.type", &scaling, NULL) == WT_OK && strcmp(scaling, "none") != 0)
        return failf(err, err_size, "GGUF key llama.rope.scaling.type = \"%s\": RoPE scaling of GGUF files is not "
                     "supported", scaling);
    c->rope_type = LLAMA_ROPE_DEFAULT;
    int index;
    if (wt_gguf_find_tensor(f, "token_embd.weight", &index) != WT_OK)
        return failf(err, err_size, "GGUF: no tensor token_embd.weight");
    wt_gguf_tensor_info info;
    if (wt_gguf_tensor_at(f, index, &info) != WT_OK || info.n_dims != 2)
        return failf(err, err_size, "GGUF: token_embd.weight is not 2-D");
    if (!key_int(f, "llama.vocab_size", false, info.shape[0], &vocab, err, err_size)) return false;
    c->vocab = vocab;
    c->tied = wt_gguf_find_tensor(f, "output.weight", &index) != WT_OK;
    int64_t eos = -1;
    if (wt_gguf_get_int(f, "tokenizer.ggml.eos_token_id", &eos) == WT_OK && eos >= 0 && eos < c->vocab) {
        c->eos[0] = (int32_t)eos;
        c->n_eos = 1;
    }
    return true;
}

bool llama_gguf_config(const char *path, llama_config *c, char *err, size_t err_size)
{
    wt_gguf *f = NULL;
    if (wt_gguf_open(path, &f) != WT_OK) return failf(err, err_size, "%s: %s", path, wt_last_error());
    bool ok = read_config(f, c, err, err_size);
    wt_gguf_close(f);
    return ok;
}

wt_status llama_linear(const llama *m, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                       wt_tensor **out)
{
    for (int i = 0; i < m->n_quant; i++)
        if (m->quant[i].w == w) return wt_linear_quant(x, w, m->quant[i].type, bias, out);
    return wt_linear(x, w, bias, out);
}

wt_status llama_linear_fused(const llama *m, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                             const wt_linear_fused_options *o, wt_tensor **out)
{
    for (int i = 0; i < m->n_quant; i++)
        if (m->quant[i].w == w) return wt_linear_quant_fused(x, w, m->quant[i].type, bias, o, out);
    return wt_linear_fused(x, w, bias, o, out);
}

typedef struct loader {
    const wt_gguf *f;
    wt_context *ctx;
    wt_dtype dtype;
    llama *m;
    bool *used; /* per tensor of the file */
    char *err;
    size_t err_size;
} loader;

/* The rows of a GGUF attn_q / attn_k weight [heads * hd, K] back in
 * Hugging Face's order: HF row h*hd + half*hd/2 + j is GGUF row
 * h*hd + 2j + half (the converter's reshape [heads, 2, hd/2] + swap). */
static wt_status unpermute_rows(const loader *ld, int64_t heads, int64_t hd, wt_tensor **w)
{
    const int64_t rows = heads * hd;
    int32_t *idx = malloc(sizeof *idx * (size_t)rows);
    if (!idx) return WT_ERR_OUT_OF_MEMORY;
    for (int64_t h = 0; h < heads; h++)
        for (int64_t half = 0; half < 2; half++)
            for (int64_t j = 0; j < hd / 2; j++) idx[h * hd + half * (hd / 2) + j] = (int32_t)(h * hd + 2 * j + half);
    wt_tensor *it = NULL, *moved = NULL;
    wt_status st = wt_tensor_from_data(ld->ctx, WT_I32, 1, &rows, idx, &it);
    free(idx);
    if (st == WT_OK) st = wt_index_select(*w, 0, it, &moved);
    wt_tensor_release(it);
    if (st != WT_OK) return st;
    wt_tensor_release(*w);
    *w = moved;
    return WT_OK;
}

/* Tensor name of shape [d0] (d1 0) or [d0, d1] into *out: floats in the
 * loader's dtype; Q8_0 / Q4_0 (2-D only) as blocks, registered in
 * m->quant. heads > 0: an attention weight whose rows are unpermuted. */
static wt_status load(loader *ld, const char *name, int64_t d0, int64_t d1, int64_t heads, wt_tensor **out)
{
    *out = NULL;
    int index;
    wt_gguf_tensor_info info;
    if (wt_gguf_find_tensor(ld->f, name, &index) != WT_OK || wt_gguf_tensor_at(ld->f, index, &info) != WT_OK) {
        failf(ld->err, ld->err_size, "GGUF: no tensor %s", name);
        return WT_ERR_INVALID_ARGUMENT;
    }
    ld->used[index] = true;
    const int ndim = d1 ? 2 : 1;
    if (info.n_dims != ndim || info.shape[0] != d0 || (d1 && info.shape[1] != d1)) {
        failf(ld->err, ld->err_size, "GGUF tensor %s: expected shape [%lld%s%lld] (webtensor order)", name,
              (long long)d0, d1 ? ", " : "", (long long)d1);
        return WT_ERR_SHAPE;
    }
    wt_status st;
    wt_tensor *t = NULL;
    if (info.ggml_type == GGML_Q8_0 || info.ggml_type == GGML_Q4_0 || info.ggml_type == GGML_Q4_K ||
        info.ggml_type == GGML_Q6_K) {
        if (ndim != 2) {
            failf(ld->err, ld->err_size, "GGUF tensor %s: a quantised 1-D tensor", name);
            return WT_ERR_UNSUPPORTED;
        }
        const wt_quant_type type = (wt_quant_type)info.ggml_type; /* webtensor's ids are ggml's */
        void *blocks = malloc(info.bytes ? (size_t)info.bytes : 1);
        if (!blocks) return WT_ERR_OUT_OF_MEMORY;
        st = wt_gguf_read_raw(ld->f, name, blocks, (size_t)info.bytes);
        if (st == WT_OK) st = wt_quant_from_blocks(ld->ctx, type, d0, d1, blocks, (size_t)info.bytes, &t);
        free(blocks);
        if (st == WT_OK && heads > 0) st = unpermute_rows(ld, heads, d0 / heads, &t);
        if (st == WT_OK) {
            llama_quant_weight *q = realloc(ld->m->quant, sizeof *q * (size_t)(ld->m->n_quant + 1));
            if (!q) st = WT_ERR_OUT_OF_MEMORY;
            else {
                ld->m->quant = q;
                q[ld->m->n_quant++] = (llama_quant_weight){t, type};
            }
        }
    } else if (info.ggml_type == GGML_F32 || info.ggml_type == GGML_F16 || info.ggml_type == GGML_BF16) {
        wt_tensor *raw = NULL;
        st = wt_gguf_load(ld->f, ld->ctx, name, &raw);
        if (st == WT_OK) st = wt_cast(raw, ld->dtype, &t);
        wt_tensor_release(raw);
        if (st == WT_OK && heads > 0) st = unpermute_rows(ld, heads, d0 / heads, &t);
    } else {
        failf(ld->err, ld->err_size, "GGUF tensor %s has type %s: supported F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K", name,
              info.type_name);
        return WT_ERR_UNSUPPORTED;
    }
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

/* The quantised type of w among m's weights (its entry in *at), or -1. */
static int quant_of(const llama *m, const wt_tensor *w, int *at)
{
    for (int i = 0; i < m->n_quant; i++)
        if (m->quant[i].w == w) return *at = i, (int)m->quant[i].type;
    return -1;
}

static void forget_quant(llama *m, const wt_tensor *w)
{
    int at;
    if (quant_of(m, w, &at) >= 0) m->quant[at] = m->quant[--m->n_quant];
}

/* *out = the rows of parts[0..n) in turn, parts of one type (or all
 * dense): a quantised result is registered as the parts were (each row
 * holds whole blocks), and one part is kept as it is. The parts are
 * released (NULL after). */
static wt_status join_run(loader *ld, wt_tensor **parts, int n, wt_tensor **out)
{
    llama *m = ld->m;
    if (n == 1) {
        *out = parts[0];
        parts[0] = NULL;
        return WT_OK;
    }
    int at;
    const int type = quant_of(m, parts[0], &at);
    wt_status st = wt_concat(n, parts, 0, out);
    if (st != WT_OK) return st;
    for (int i = 0; i < n; i++) {
        forget_quant(m, parts[i]);
        wt_tensor_release(parts[i]);
        parts[i] = NULL;
    }
    if (type >= 0) {
        llama_quant_weight *q = realloc(m->quant, sizeof *q * (size_t)(m->n_quant + 1));
        if (!q) return WT_ERR_OUT_OF_MEMORY;
        m->quant = q;
        q[m->n_quant++] = (llama_quant_weight){*out, (wt_quant_type)type};
    }
    return WT_OK;
}

/* The rows of parts[0..n) in turn (q, k, v; gate, up), as the forward pass
 * takes them. Parts of one type: one tensor, *out, one GEMV a group. Mixed
 * types (llama.cpp's Q4_K_M keeps some v in Q6_K): with runs, each run of
 * neighbouring parts of one type joined into runs[0 .. *n_runs), *out
 * NULL (q, k, v: one product a run, llama.c joins their results);
 * without (gate and up, whose SwiGLU needs one product), made dense in the
 * loader's dtype. The parts are released (NULL after, unless it fails
 * before the join). */
static wt_status join_rows(loader *ld, wt_tensor **parts, int n, wt_tensor **out, wt_tensor **runs, int *n_runs)
{
    llama *m = ld->m;
    int at, type = quant_of(m, parts[0], &at);
    bool same = true;
    for (int i = 1; i < n; i++) same = same && quant_of(m, parts[i], &at) == type;
    *out = NULL;
    if (same) return join_run(ld, parts, n, out);
    if (runs) {
        *n_runs = 0;
        for (int i = 0; i < n;) {
            int j = i + 1;
            while (j < n && quant_of(m, parts[j], &at) == quant_of(m, parts[i], &at)) j++;
            const wt_status st = join_run(ld, parts + i, j - i, &runs[(*n_runs)++]);
            if (st != WT_OK) return st;
            i = j;
        }
        return WT_OK;
    }
    wt_status st = WT_OK;
    wt_tensor *dense[3] = {NULL, NULL, NULL};
    for (int i = 0; i < n && st == WT_OK; i++) {
        const int t = quant_of(m, parts[i], &at);
        if (t >= 0) st = wt_dequantize(parts[i], (wt_quant_type)t, ld->dtype, &dense[i]);
        else wt_tensor_retain(dense[i] = parts[i]);
    }
    if (st == WT_OK) {
        for (int i = 0; i < n; i++) {
            forget_quant(m, parts[i]);
            wt_tensor_release(parts[i]);
            parts[i] = NULL;
        }
        st = join_run(ld, dense, n, out);
    }
    for (int i = 0; i < n; i++) wt_tensor_release(dense[i]); /* NULL once joined */
    return st;
}

static uint64_t bytes_of(const wt_tensor *t) { return (uint64_t)wt_tensor_numel(t) * wt_dtype_size(wt_tensor_dtype(t)); }

#define CK(call)                                  \
    do {                                          \
        if ((st = (call)) != WT_OK) goto done;    \
    } while (0)

wt_status llama_gguf_load(const char *path, wt_context *ctx, wt_dtype dtype, int64_t batch, int64_t max_seq,
                          llama *m, char *err, size_t err_size)
{
    const llama_config c = m->c;
    err[0] = 0;
    wt_gguf *f = NULL;
    wt_status st = wt_gguf_open(path, &f);
    if (st != WT_OK) return st;
    loader ld = {f, ctx, dtype, m, calloc((size_t)wt_gguf_tensor_count(f) + 1, sizeof(bool)), err, err_size};
    wt_tensor *embed_q = NULL;
    m->dtype = dtype;
    m->batch = batch > 0 ? batch : 1;
    m->layer = calloc((size_t)c.layers, sizeof *m->layer);
    if (!m->layer || !ld.used) { st = WT_ERR_OUT_OF_MEMORY; goto done; }
    const int64_t D = c.dim, I = c.hidden, qd = c.heads * c.head_dim, kd = c.kv_heads * c.head_dim;
    /* The embedding table: rows gathered by wt_embedding, so a quantised
     * table is made dense once (its blocks stay as the tied head). */
    CK(load(&ld, "token_embd.weight", c.vocab, D, 0, &embed_q));
    bool embed_quantised = m->n_quant > 0;
    if (embed_quantised) {
        CK(wt_dequantize(embed_q, m->quant[0].type, dtype, &m->embed));
        if (c.tied) {
            m->head = embed_q;
            embed_q = NULL;
        } else {
            m->n_quant = 0; /* embed_q is dropped below */
        }
    } else {
        m->embed = embed_q;
        embed_q = NULL;
        if (c.tied) m->head = m->embed;
    }
    CK(load(&ld, "output_norm.weight", D, 0, 0, &m->norm));
    if (!c.tied) CK(load(&ld, "output.weight", c.vocab, D, 0, &m->head));
    char name[96];
    for (int64_t l = 0; l < c.layers; l++) {
        llama_layer *y = &m->layer[l];
        struct {
            const char *suffix;
            int64_t d0, d1, heads;
            wt_tensor **dst;
        } t[] = {
            {"attn_norm.weight", D, 0, 0, &y->in_norm},   {"attn_q.weight", qd, D, c.heads, &y->q},
            {"attn_k.weight", kd, D, c.kv_heads, &y->k},  {"attn_v.weight", kd, D, 0, &y->v},
            {"attn_output.weight", D, qd, 0, &y->o},      {"ffn_norm.weight", D, 0, 0, &y->post_norm},
            {"ffn_gate.weight", I, D, 0, &y->gate},       {"ffn_up.weight", I, D, 0, &y->up},
            {"ffn_down.weight", D, I, 0, &y->down},
        };
        for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
            snprintf(name, sizeof name, "blk.%lld.%s", (long long)l, t[i].suffix);
            CK(load(&ld, name, t[i].d0, t[i].d1, t[i].heads, t[i].dst));
            m->decode_bytes += bytes_of(*t[i].dst);
        }
        wt_tensor *qkv[3] = {y->q, y->k, y->v}, *gate_up[2] = {y->gate, y->up};
        y->q = y->k = y->v = y->gate = y->up = NULL;
        st = join_rows(&ld, qkv, 3, &y->qkv, y->qkv_runs, &y->n_qkv_runs);
        if (st == WT_OK) st = join_rows(&ld, gate_up, 2, &y->gate_up, NULL, NULL);
        for (int i = 0; i < 3; i++) wt_tensor_release(qkv[i]); /* NULL unless the join failed */
        for (int i = 0; i < 2; i++) wt_tensor_release(gate_up[i]);
        if (st != WT_OK) goto done;
        if (y->n_qkv_runs > 0 && m->batch == 1) { /* the decode step's q|k|v, written by the runs in place */
            const int64_t qkv_shape[2] = {1, qd + 2 * kd};
            CK(wt_tensor_zeros(ctx, WT_F32, 2, qkv_shape, &y->qkv_step));
        }
        CK(llama_kv_cache(ctx, &c, m->batch, max_seq, y));
    }
    for (int i = 0; i < wt_gguf_tensor_count(f); i++) {
        wt_gguf_tensor_info info;
        if (!ld.used[i] && wt_gguf_tensor_at(f, i, &info) == WT_OK) {
            failf(err, err_size, "GGUF tensor %s is not used by the model (%s)", info.name,
                  strcmp(info.name, "rope_freqs.weight") == 0 ? "Llama 3 RoPE factors are not supported"
                                                              : "refused rather than ignored");
            st = WT_ERR_UNSUPPORTED;
            goto done;
        }
    }
    /* A decode step reads the layers, one embedding row, the final norm
     * and the head. */
    const uint64_t embed_bytes = bytes_of(m->embed);
    m->decode_bytes += embed_bytes / (uint64_t)c.vocab + bytes_of(m->norm) + bytes_of(m->head);
    m->weight_bytes = m->decode_bytes - embed_bytes / (uint64_t)c.vocab + embed_bytes;
    if (c.tied && m->head == m->embed) m->weight_bytes -= bytes_of(m->head);
done:
    wt_tensor_release(embed_q);
    free(ld.used);
    wt_gguf_close(f);
    if (st != WT_OK) llama_free(m);
    return st;
}
