/* The bad-input matrix for functions whose signatures are their own
 * (convolution, pooling, norms, attention, shape and index ops, sorting,
 * training, runtime, model files): the driver of the slot rows
 * (bad_input_slots.h), the functions without a status, and the check that
 * every public function of the headers has a row.
 *
 * The driver calls each row once to learn its slots, then again for each
 * slot and each bad value of that slot's kind (NULL, a tensor of the
 * other context, of another dtype, a view that repeats elements, an axis
 * out of range, -1 for a count, NaN for eps, a buffer one byte short ...),
 * and checks the code, the message and that every out-pointer is NULL on
 * failure. A slot is the order the compiler evaluates the arguments in,
 * which is the same on every call of one build. */
#define _POSIX_C_SOURCE 200809L
#include "bad_input.h"
#include "bad_input_slots.h"
#include "header_text.h"
#include "test_util.h"

#include "fuzz/tokenizer_vocab.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The rows, family by family, in the order they run. */
static const slot_table *const TABLES[] = {&bad_input_rows_ops, &bad_input_rows_training, &bad_input_rows_runtime,
                                           &bad_input_rows_files};
#define NTABLES (sizeof TABLES / sizeof TABLES[0])

static size_t row_count(void)
{
    size_t n = 0;
    for (size_t t = 0; t < NTABLES; t++) n += TABLES[t]->count;
    return n;
}

/* The i-th row of all the tables, i < row_count(). */
static const slot_row *row_at(size_t i)
{
    size_t t = 0;
    while (i >= TABLES[t]->count) i -= TABLES[t++]->count;
    return &TABLES[t]->rows[i];
}

/* Functions without a status: called with NULL or an out-of-range value,
 * they must neither crash nor claim success. */
static const char *const NO_STATUS[] = {
    "wt_status_string", "wt_last_error", "wt_version", "wt_context_options_init", "wt_context_destroy",
    "wt_context_backend", "wt_kernel_destroy", "wt_event_destroy", "wt_context_last_error",
    "wt_context_last_message", "wt_context_last_status",
    "wt_tensor_ndim", "wt_tensor_shape", "wt_tensor_strides", "wt_tensor_offset", "wt_tensor_numel",
    "wt_tensor_dtype", "wt_tensor_is_contiguous", "wt_tensor_context", "wt_dtype_size", "wt_dtype_name",
    "wt_tensor_retain", "wt_tensor_release", "wt_op_count", "wt_op_name", "wt_op_family",
    "wt_conv_options_init", "wt_pool_options_init", "wt_batch_norm_options_init",
    "wt_cross_entropy_options_init", "wt_sgd_options_init", "wt_adamw_options_init",
    "wt_interpolate_options_init", "wt_attention_options_init", "wt_rope_options_init", "wt_sample_options_init",
    "wt_linear_fused_options_init", "wt_rope_kv_cache_options_init",
    "wt_group_norm_options_init", "wt_dropout_options_init", "wt_pool2d_options_init",
    "wt_tensor_requires_grad", "wt_backward_options_init", "wt_grad_enabled", "wt_op_gradient",
    "wt_safetensors_close", "wt_safetensors_count", "wt_safetensors_metadata",
    "wt_gguf_close", "wt_gguf_version", "wt_gguf_alignment", "wt_gguf_kv_count", "wt_gguf_tensor_count",
    "wt_gguf_writer_destroy", "wt_graph_release", "wt_graph_destroy", "wt_set_last_error", "wt_optimizer_lr", "wt_optimizer_steps",
    "wt_tokenizer_destroy", "wt_tokenizer_kind_of", "wt_tokenizer_vocab_size", "wt_tokenizer_bos",
    "wt_tokenizer_eos", "wt_tokenizer_adds_bos", "wt_tokenizer_is_end", "wt_tokenizer_unicode_version", "wt_detokenizer_destroy",
    "wt_optimizer_release", "wt_lr_schedule_options_init", "wt_set_log_handler",
    "wt_grad_scaler_options_init", "wt_grad_scaler_release",
};

static int no_status_checks(void)
{
    wt_kernel_destroy(NULL);
    wt_event_destroy(NULL);
    wt_graph_release(NULL);
    wt_graph_destroy(NULL);
    wt_conv_options_init(NULL);
    wt_pool_options_init(NULL);
    wt_batch_norm_options_init(NULL);
    wt_cross_entropy_options_init(NULL);
    wt_sgd_options_init(NULL);
    wt_adamw_options_init(NULL);
    wt_interpolate_options_init(NULL);
    wt_attention_options_init(NULL);
    wt_rope_options_init(NULL);
    wt_linear_fused_options_init(NULL);
    wt_rope_kv_cache_options_init(NULL);
    wt_group_norm_options_init(NULL);
    wt_dropout_options_init(NULL);
    wt_pool2d_options_init(NULL);
    wt_backward_options_init(NULL);
    wt_lr_schedule_options_init(NULL);
    wt_optimizer_release(NULL);
    wt_grad_scaler_release(NULL);
    wt_grad_scaler_options_init(NULL);
    wt_set_log_handler(NULL, NULL);
    CHECK(isnan(wt_optimizer_lr(NULL)) && wt_optimizer_steps(NULL) == 0, "optimizer queries of NULL: NaN and 0");
    CHECK(!wt_tensor_requires_grad(NULL) && !wt_grad_enabled(NULL) && wt_op_gradient(-1) == WT_OP_GRAD_UNKNOWN,
          "autograd queries of NULL and out-of-range values");
    wt_safetensors_close(NULL);
    wt_gguf_close(NULL);
    wt_gguf_writer_destroy(NULL);
    wt_status s = WT_OK;
    CHECK(wt_set_last_error(WT_ERR_IO, NULL) == WT_ERR_IO && wt_last_error()[0] == 0 &&
              wt_set_last_error(WT_ERR_BACKEND, "x") == WT_ERR_BACKEND && strcmp(wt_last_error(), "x") == 0,
          "set_last_error(NULL message) records \"\" and returns the status given");
    CHECK(wt_version() && wt_last_error() && wt_context_last_error(NULL, &s) != NULL && s == WT_OK,
          "version, last_error, context_last_error(NULL) give strings");
    CHECK(wt_context_last_message(NULL) != NULL && wt_context_last_message(NULL)[0] == 0 &&
              wt_context_last_status(NULL) == WT_OK,
          "context_last_message/status(NULL): \"\" and WT_OK");
    CHECK(wt_tensor_dtype(NULL) != WT_F32 || true, "tensor_dtype(NULL) returns");
    CHECK(wt_dtype_name((wt_dtype)99) != NULL, "dtype_name(99) gives a string");
    CHECK(wt_op_count() > 0 && wt_op_name(-1) == NULL && wt_op_name(wt_op_count()) == NULL &&
              wt_op_family(-1) == NULL,
          "op_name/op_family out of range: NULL");
    CHECK(wt_safetensors_count(NULL) == 0 && wt_safetensors_metadata(NULL, "k") == NULL,
          "safetensors count/metadata of NULL");
    CHECK(wt_gguf_version(NULL) == 0 && wt_gguf_alignment(NULL) == 0 && wt_gguf_kv_count(NULL) == 0 &&
              wt_gguf_tensor_count(NULL) == 0,
          "gguf version/alignment/counts of NULL");
    wt_tokenizer_destroy(NULL);
    wt_detokenizer_destroy(NULL);
    CHECK(wt_tokenizer_kind_of(NULL) == 0 && wt_tokenizer_vocab_size(NULL) == 0 && wt_tokenizer_bos(NULL) == -1 &&
              wt_tokenizer_eos(NULL) == -1 && !wt_tokenizer_adds_bos(NULL) && !wt_tokenizer_is_end(NULL, 2) && wt_tokenizer_unicode_version()[0],
          "tokenizer getters of NULL");
    return 16;
}

/* ------------------------------------------------------------- driver */

static void release_case(M *m)
{
    for (int i = 0; i < m->nmade; i++) wt_tensor_release(m->made[i]);
    m->nmade = 0;
}

/* Checks the outputs of one call and releases what it made. */
static void check_outputs(M *m, const char *fn, const char *mode, wt_status st)
{
    for (int i = 0; i < m->nouts; i++) {
        out_slot *o = &m->outs[i];
        if (!o->passed) continue;
        if (st != WT_OK) {
            CHECK(o->u.t == NULL, "%s(%s) [%s]: %s not NULL on failure", fn, m->what, mode, o->name);
            continue;
        }
        if (o->u.t == POISON_PTR || o->u.t == NULL) continue;
        switch (o->type) {
        case OUT_TENSOR: wt_tensor_release(o->u.t); break;
        case OUT_EVENT: wt_event_destroy(o->u.ev); break;
        case OUT_KERNEL: wt_kernel_destroy(o->u.k); break;
        case OUT_FILE: wt_safetensors_close(o->u.f); break;
        case OUT_GGUF: wt_gguf_close(o->u.g); break;
        case OUT_GGUF_WRITER: wt_gguf_writer_destroy(o->u.w); break;
        case OUT_TOKENIZER: wt_tokenizer_destroy(o->u.tok); break;
        case OUT_DETOKENIZER: wt_detokenizer_destroy(o->u.detok); break;
        }
    }
    /* With a bad count the function cannot know how many entries to clear. */
    const bool count_bad = m->target >= 0 && m->kinds[m->target] == K_POS;
    for (int i = 0; i < m->narr; i++) {
        if (st != WT_OK && !count_bad)
            CHECK(m->arr[i] == NULL, "%s(%s) [%s]: outs[%d] not NULL on failure", fn, m->what, mode, i);
        else if (m->arr[i] != POISON_PTR)
            wt_tensor_release(m->arr[i]);
    }
}

static wt_tensor *from(wt_context *c, wt_dtype dt, int ndim, const int64_t *shape, float scale, int mod)
{
    float buf[256];
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    for (int64_t i = 0; i < n && i < 256; i++) buf[i] = scale * (float)((i * 7) % mod) + (mod > 3 ? 0.25f : 0.0f);
    wt_tensor *t = NULL, *f = NULL;
    if (wt_tensor_from_data(c, WT_F32, ndim, shape, buf, &f) != WT_OK) return NULL;
    if (dt == WT_F32) return f;
    wt_cast(f, dt, &t);
    wt_tensor_release(f);
    return t;
}

static bool read_file(const char *path, void **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char *buf = malloc(1 << 16);
    size_t n = buf ? fread(buf, 1, 1 << 16, f) : 0;
    fclose(f);
    *data = buf;
    *size = n;
    return buf && n > 0;
}

static bool make_env(env2 *e)
{
    const int64_t s4[4] = {2, 3, 6, 6}, sw4[4] = {4, 3, 3, 3}, sdy4[4] = {2, 4, 4, 4}, s3[3] = {2, 3, 8},
                  sw3[3] = {4, 3, 3}, c3 = 3, c4 = 4, c5 = 5, s35[2] = {3, 5}, s45[2] = {4, 5}, n2 = 2,
                  sq[4] = {1, 2, 4, 8}, s25[2] = {2, 5}, s11[2] = {1, 5};
    wt_context *c = e->ctx;
    e->x4 = from(c, WT_F32, 4, s4, 0.5f, 11);
    e->w4 = from(c, WT_F32, 4, sw4, 0.25f, 5);
    e->dy4 = from(c, WT_F32, 4, sdy4, 0.5f, 7);
    e->x3 = from(c, WT_F32, 3, s3, 0.5f, 9);
    e->w3 = from(c, WT_F32, 3, sw3, 0.25f, 5);
    e->c3 = from(c, WT_F32, 1, &c3, 0.5f, 5);
    e->c3pos = from(c, WT_F32, 1, &c3, 1.0f, 5);
    e->b4v = from(c, WT_F32, 1, &c4, 0.5f, 5);
    e->m35 = from(c, WT_F32, 2, s35, 0.5f, 9);
    e->v5 = from(c, WT_F32, 1, &c5, 0.5f, 5);
    e->w45 = from(c, WT_F32, 2, s45, 0.25f, 5);
    e->idx35 = from(c, WT_I32, 2, s35, 1.0f, 3);
    e->idx2 = from(c, WT_I32, 1, &n2, 1.0f, 3);
    e->lab3 = from(c, WT_I32, 1, &c3, 1.0f, 3);
    e->q = from(c, WT_F32, 4, sq, 0.125f, 9);
    e->table = from(c, WT_F32, 2, s35, 0.5f, 9);
    e->dy25 = from(c, WT_F32, 2, s25, 0.5f, 9);
    e->one = from(c, WT_F32, 2, s11, 0.5f, 9);
    const int64_t c1 = 1;
    e->cache35 = from(c, WT_F32, 2, s35, 0.5f, 9);
    e->start1 = from(c, WT_I32, 1, &c1, 1.0f, 3);
    const int64_t skvc[4] = {1, 2, 4, 2}, sqkv[4] = {1, 1, 3, 2};
    e->kvc = from(c, WT_F32, 4, skvc, 0.5f, 5);
    e->qkv4 = from(c, WT_F32, 4, sqkv, 0.5f, 5);
    e->p5 = from(c, WT_F32, 1, &c5, 0.5f, 5);
    e->g5 = from(c, WT_F32, 1, &c5, 0.5f, 5);
    e->s5a = from(c, WT_F32, 1, &c5, 0.5f, 5);
    e->s5b = from(c, WT_F32, 1, &c5, 0.0f, 5);
    e->s5c = from(c, WT_F32, 1, &c5, 0.0f, 5);
    const int64_t sqx[2] = {2, 32}, c3q = 3;
    e->qx = from(c, WT_F32, 2, sqx, 0.5f, 9);
    e->qb = from(c, WT_F32, 1, &c3q, 0.5f, 5);
    for (size_t i = 0; i < sizeof e->qblocks; i++) e->qblocks[i] = (uint8_t)(i * 37 % 251);
    for (int r = 0; r < 3; r++) e->qblocks[r * 34 + 1] = 0x38; /* d = 0.5 + small: finite */
    if (wt_quant_from_blocks(c, WT_QUANT_Q8_0, 3, 32, e->qblocks, sizeof e->qblocks, &e->qw) != WT_OK) return false;
    wt_pool_options po;
    wt_pool_options_init(&po);
    po.kernel[0] = po.kernel[1] = 2;
    if (!e->x4 || wt_max_pool2d(e->x4, &po, &e->pool_dy, &e->pool_idx) != WT_OK) return false;
    /* Files: an .npy and a safetensors file with tensors "a" [3,5] and "b" [5]. */
    snprintf(e->dir_path, sizeof e->dir_path, "/tmp/wt_bad_input_%d.out", (int)getpid());
    snprintf(e->npy_path, sizeof e->npy_path, "/tmp/wt_bad_input_%d.npy", (int)getpid());
    snprintf(e->st_path, sizeof e->st_path, "/tmp/wt_bad_input_%d.safetensors", (int)getpid());
    snprintf(e->gguf_path, sizeof e->gguf_path, "/tmp/wt_bad_input_%d.gguf", (int)getpid());
    const char *names[2] = {"a", "b"};
    wt_tensor *ts[2] = {e->m35, e->v5};
    /* GGUF: "b" last and 256 bytes long, so the file ends where its data
     * does and a size one byte short cuts into it. */
    wt_gguf_writer *w = NULL;
    static const uint32_t arr[3] = {1, 2, 3};
    const wt_gguf_value av = {.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_U32, .count = 3, .elems = arr};
    const wt_gguf_value xv = {.type = WT_GGUF_F32, .f = 0.5}, fv = {.type = WT_GGUF_BOOL, .u = 1};
    bool gguf_ok = wt_gguf_writer_create(&w) == WT_OK && wt_gguf_writer_set_u32(w, "n", 7) == WT_OK &&
                   wt_gguf_writer_set(w, "x", &xv) == WT_OK && wt_gguf_writer_set(w, "flag", &fv) == WT_OK &&
                   wt_gguf_writer_set_string(w, "s", "text") == WT_OK && wt_gguf_writer_set(w, "arr", &av) == WT_OK &&
                   wt_gguf_writer_add_tensor(w, "a", e->m35) == WT_OK && e->q &&
                   wt_gguf_writer_add_tensor(w, "b", e->q) == WT_OK && wt_gguf_writer_save(w, e->gguf_path) == WT_OK;
    wt_gguf_writer_destroy(w);
    snprintf(e->tok_json_path, sizeof e->tok_json_path, "/tmp/wt_bad_input_%d.tokenizer.json", (int)getpid());
    snprintf(e->tok_gguf_path, sizeof e->tok_gguf_path, "/tmp/wt_bad_input_%d.tokenizer.gguf", (int)getpid());
    e->tok_json = vocab_spm_json();
    FILE *tf = fopen(e->tok_json_path, "wb");
    const bool tok_ok = tf && fwrite(e->tok_json, 1, strlen(e->tok_json), tf) == strlen(e->tok_json) &&
                        fclose(tf) == 0 && vocab_spm_gguf(e->tok_gguf_path) == WT_OK;
    return tok_ok && e->m35 && e->v5 && gguf_ok && wt_npy_save(e->npy_path, e->m35) == WT_OK &&
           wt_safetensors_save(e->st_path, 2, names, ts, 0, NULL, NULL) == WT_OK &&
           read_file(e->npy_path, &e->npy_bytes, &e->npy_size) && read_file(e->st_path, &e->st_bytes, &e->st_size) &&
           read_file(e->gguf_path, &e->gguf_bytes, &e->gguf_size);
}

static void free_env(env2 *e)
{
    wt_tensor *all[] = {e->x4, e->w4, e->b4, e->dy4, e->x3, e->w3, e->c3, e->c3pos, e->m35, e->v5, e->w45,
                        e->b4v, e->idx35, e->idx2, e->lab3, e->q, e->pool_dy, e->pool_idx, e->p5, e->g5,
                        e->s5a, e->s5b, e->s5c, e->table, e->dy25, e->one, e->qx, e->qw, e->qb, e->cache35, e->start1,
                        e->kvc, e->qkv4};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wt_tensor_release(all[i]);
    free(e->npy_bytes);
    free(e->st_bytes);
    free(e->gguf_bytes);
    remove(e->gguf_path);
    free(e->tok_json);
    remove(e->tok_json_path);
    remove(e->tok_gguf_path);
    remove(e->npy_path);
    remove(e->st_path);
    remove(e->dir_path);
}

void bad_input_slot_rows(wt_context *ctx, wt_context *other, const wt_context_options *opts,
                         const char *mode, int *functions, int *cases, int *per_class)
{
    env2 e;
    memset(&e, 0, sizeof e);
    e.ctx = ctx;
    e.other = other;
    e.opts = opts;
    if (!CHECK(make_env(&e), "slot rows: inputs [%s]: %s", mode, wt_last_error())) {
        free_env(&e);
        return;
    }
    const size_t nrows = row_count();
    for (size_t r = 0; r < nrows; r++) {
        const slot_row *row = row_at(r);
        M m;
        memset(&m, 0, sizeof m);
        m.e = &e;
        m.discover = true;
        m.target = -1;
        wt_status st = row->fn(&m, &e);
        snprintf(m.what, sizeof m.what, "valid");
        CHECK(st == WT_OK || st == row->valid_alt, "%s(valid) [%s]: %s: %s", row->name, mode,
              wt_status_string(st), wt_last_error());
        check_outputs(&m, row->name, mode, st);
        release_case(&m);
        per_class[CLASS_VALID]++;
        int row_cases = 1;
        const int nslots = m.nslots;
        for (int s = 0; s < nslots; s++) {
            for (int v = 0; v < 10; v++) {
                m.discover = false;
                m.slot = 0;
                m.target = s;
                m.variant = v;
                m.hit = false;
                m.nouts = 0;
                m.narr = 0;
                st = row->fn(&m, &e);
                if (!m.hit) {
                    check_outputs(&m, row->name, mode, st);
                    release_case(&m);
                    continue;
                }
                bool ok = st == m.want || (m.want2 != WT_OK && st == m.want2) ||
                          (row->valid_alt != WT_OK && st == row->valid_alt);
                CHECK(ok, "%s(%s) [%s]: returned %s, expected %s%s%s (%s)", row->name, m.what, mode,
                      wt_status_string(st), wt_status_string(m.want), m.want2 != WT_OK ? " or " : "",
                      m.want2 != WT_OK ? wt_status_string(m.want2) : "", st != WT_OK ? wt_last_error() : "");
                if (st != WT_OK)
                    CHECK(wt_last_error()[0] != 0, "%s(%s) [%s]: failed without a message", row->name, m.what, mode);
                check_outputs(&m, row->name, mode, st);
                release_case(&m);
                per_class[m.cls]++;
                row_cases++;
            }
        }
        CHECK(row_cases > 1, "%s: no bad-argument case generated", row->name);
        *cases += row_cases;
    }
    *cases += no_status_checks();
    *functions += (int)nrows;
    free_env(&e);
}

/* ------------------------------------------------------ header check */

/* The WebAssembly programs have no host files to read: the header check
 * is a property of the sources, run by the native build of this test. */
#ifdef __EMSCRIPTEN__
void bad_input_check_header(const char *const *names, size_t n)
{
    (void)names;
    (void)n;
    printf("header check: run by the native build\n");
}
#else

static bool listed(const char *name, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name)) return true;
    return false;
}

void bad_input_check_header(const char *const *names, size_t n)
{
    static const char *const headers[3] = {WT_INCLUDE_DIR "/webtensor.h", WT_INCLUDE_DIR "/webtensor_io.h",
                                           WT_INCLUDE_DIR "/webtensor_tokenizer.h"};
    int total = 0, missing = 0;
    for (int h = 0; h < 3; h++) {
        char failed[512];
        char *text = header_text_read(headers[h], failed, sizeof failed);
        if (!CHECK(text != NULL, "header %s not read", failed)) continue;
        /* Each "WT_API <type> <name>(": the identifier before the first '('
         * past a WT_DEPRECATED(...) tag, on the line or the next one (the
         * #define of WT_API itself has none before its line ends). */
        for (char *p = strstr(text, "WT_API "); p; p = strstr(p + 1, "WT_API ")) {
            char *from = p;
            if (!strncmp(p + 7, "WT_DEPRECATED(", 14) && (from = strchr(p + 7, ')')) == NULL) continue;
            char *paren = strchr(from + 1, '(');
            char *semi = strchr(from, ';');
            char *eol = strchr(from, '\n');
            if (eol && paren && eol < paren && !strncmp(from, ") wt_", 5)) eol = strchr(eol + 1, '\n');
            if (!paren || (semi && semi < paren) || (eol && eol < paren)) continue;
            char *end = paren;
            while (end > p && end[-1] == ' ') end--;
            char *begin = end;
            while (begin > p && (begin[-1] == '_' || (begin[-1] >= 'a' && begin[-1] <= 'z') ||
                                 (begin[-1] >= '0' && begin[-1] <= '9')))
                begin--;
            char name[96];
            size_t len2 = (size_t)(end - begin);
            if (len2 == 0 || len2 >= sizeof name || strncmp(begin, "wt_", 3)) continue;
            memcpy(name, begin, len2);
            name[len2] = '\0';
            total++;
            bool have = listed(name, names, n) ||
                        listed(name, NO_STATUS, sizeof NO_STATUS / sizeof NO_STATUS[0]);
            for (size_t r = 0; !have && r < row_count(); r++) have = !strcmp(row_at(r)->name, name);
            if (!have) missing++;
            CHECK(have, "%s (%s) has no row in the bad-input matrix", name, headers[h]);
        }
        free(text);
    }
    printf("bad_input: %d public functions in the headers, %d without a row\n", total, missing);
}
#endif
