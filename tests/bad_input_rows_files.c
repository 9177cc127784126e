/* Bad-input rows of the model files (npy, safetensors, GGUF) and the
 * tokenizers. */
#define _POSIX_C_SOURCE 200809L
#include "bad_input_slots.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* model files */
ROWFN(npy_save) { return wt_npy_save(PATH("path", e->dir_path), TA("t", e->m35)); }
ROWFN(npy_load) { return wt_npy_load(CTX("ctx", e->ctx), PATH("path", e->npy_path), OUT("out")); }
ROWFN(npy_load_memory)
{
    return wt_npy_load_memory(CTX("ctx", e->ctx), PTR("data", e->npy_bytes), BYTES("size", e->npy_size), OUT("out"));
}
ROWFN(safetensors_open) { return wt_safetensors_open(PATH("path", e->st_path), out_file(m, "out")); }
ROWFN(safetensors_open_memory)
{
    return wt_safetensors_open_memory(PTR("data", e->st_bytes), BYTES("size", e->st_size), out_file(m, "out"));
}
static wt_safetensors *open_st(const env2 *e)
{
    wt_safetensors *f = NULL;
    wt_safetensors_open_memory(e->st_bytes, e->st_size, &f);
    return f;
}
ROWFN(safetensors_entry_at)
{
    wt_safetensors *f = open_st(e);
    wt_safetensors_entry ent;
    wt_status st = wt_safetensors_entry_at(PTR("f", f), INDEX("i", 1), PTR("out", &ent));
    wt_safetensors_close(f);
    return st;
}
ROWFN(safetensors_find)
{
    wt_safetensors *f = open_st(e);
    int idx = 0;
    wt_status st = wt_safetensors_find(PTR("f", f), NAME("name", "b"), PTR("index", &idx));
    wt_safetensors_close(f);
    return st;
}
ROWFN(safetensors_load)
{
    wt_safetensors *f = open_st(e);
    wt_status st = wt_safetensors_load(PTR("f", f), CTX("ctx", e->ctx), NAME("name", "a"), DT("float_dtype", WT_F16),
                                       OUT("out"));
    wt_safetensors_close(f);
    return st;
}
ROWFN(safetensors_load_many)
{
    wt_safetensors *f = open_st(e);
    static const char *const names[2] = {"a", "b"};
    wt_status st = wt_safetensors_load_many(PTR("f", f), CTX("ctx", e->ctx), (int)POS("n", 2), PTRO("names", names),
                                            DT("float_dtype", WT_F32), out_array(m, "out", 2));
    wt_safetensors_close(f);
    return st;
}
ROWFN(safetensors_save)
{
    static const char *const names[2] = {"a", "b"};
    static const char *const keys[1] = {"format"}, *const values[1] = {"pt"};
    const wt_tensor *ts[2] = {TFREE("tensors[0]", e->m35), TFREE("tensors[1]", e->v5)};
    return wt_safetensors_save(PATH("path", e->dir_path), (int)POS("n", 2), PTR("names", names), PTR("tensors", ts), 1,
                               PTR("meta_keys", keys), PTR("meta_values", values));
}

/* GGUF: the file has tensors "a" [3,5] f32 and "b" [1,2,4,8] f32, keys
 * "n" (u32), "x" (f32), "flag" (bool), "s" (string), "arr" (u32 array). */
static bool bad_value(M *m, const char *name, wt_status want, const char *what)
{
    if (!slot_take(m, K_VALUE, name) || m->variant != 0) return false;
    slot_expect(m, CLASS_VALUE, want, WT_OK, what, name);
    return true;
}
ROWFN(gguf_type_info)
{
    const char *name;
    int block, size;
    uint32_t type = bad_value(m, "ggml_type", WT_ERR_UNSUPPORTED, "%s 4 (removed)") ? 4 : 12;
    return wt_gguf_type_info(type, PTRO("name", &name), PTRO("block_size", &block), PTRO("type_size", &size));
}
ROWFN(gguf_open) { return wt_gguf_open(PATH("path", e->gguf_path), out_gguf(m, "out")); }
ROWFN(gguf_open_memory)
{
    return wt_gguf_open_memory(PTR("data", e->gguf_bytes), BYTES("size", e->gguf_size), out_gguf(m, "out"));
}
static wt_gguf *open_gguf(const env2 *e)
{
    wt_gguf *f = NULL;
    wt_gguf_open_memory(e->gguf_bytes, e->gguf_size, &f);
    return f;
}
ROWFN(gguf_kv_at)
{
    wt_gguf *f = open_gguf(e);
    const char *key;
    wt_gguf_value v;
    wt_status st = wt_gguf_kv_at(PTR("f", f), INDEX("i", 1), PTR("key", &key), PTR("value", &v));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_find_kv)
{
    wt_gguf *f = open_gguf(e);
    wt_gguf_value v;
    wt_status st = wt_gguf_find_kv(PTR("f", f), NAME("key", "s"), PTR("value", &v));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_get_int)
{
    wt_gguf *f = open_gguf(e);
    int64_t v;
    const char *key = bad_value(m, "key type", WT_ERR_INVALID_ARGUMENT, "%s a string") ? "s" : "n";
    wt_status st = wt_gguf_get_int(PTR("f", f), NAME("key", key), PTR("out", &v));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_get_float)
{
    wt_gguf *f = open_gguf(e);
    double v;
    const char *key = bad_value(m, "key type", WT_ERR_INVALID_ARGUMENT, "%s a u32") ? "n" : "x";
    wt_status st = wt_gguf_get_float(PTR("f", f), NAME("key", key), PTR("out", &v));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_get_bool)
{
    wt_gguf *f = open_gguf(e);
    bool v;
    const char *key = bad_value(m, "key type", WT_ERR_INVALID_ARGUMENT, "%s an f32") ? "x" : "flag";
    wt_status st = wt_gguf_get_bool(PTR("f", f), NAME("key", key), PTR("out", &v));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_get_string)
{
    wt_gguf *f = open_gguf(e);
    const char *v;
    size_t len;
    const char *key = bad_value(m, "key type", WT_ERR_INVALID_ARGUMENT, "%s a bool") ? "flag" : "s";
    wt_status st = wt_gguf_get_string(PTR("f", f), NAME("key", key), PTR("out", &v), PTRO("len", &len));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_get_array)
{
    wt_gguf *f = open_gguf(e);
    wt_gguf_value v;
    wt_gguf_type et = WT_GGUF_U32;
    if (bad_value(m, "elem_type", WT_ERR_INVALID_ARGUMENT, "%s 99")) et = (wt_gguf_type)99;
    if (bad_value(m, "elem_type", WT_ERR_INVALID_ARGUMENT, "%s i32 for a u32 array")) et = WT_GGUF_I32;
    wt_status st = wt_gguf_get_array(PTR("f", f), NAME("key", "arr"), et, PTR("out", &v));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_tensor_at)
{
    wt_gguf *f = open_gguf(e);
    wt_gguf_tensor_info info;
    wt_status st = wt_gguf_tensor_at(PTR("f", f), INDEX("i", 1), PTR("out", &info));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_find_tensor)
{
    wt_gguf *f = open_gguf(e);
    int idx = 0;
    wt_status st = wt_gguf_find_tensor(PTR("f", f), NAME("name", "b"), PTR("index", &idx));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_load)
{
    wt_gguf *f = open_gguf(e);
    wt_status st = wt_gguf_load(PTR("f", f), CTX("ctx", e->ctx), NAME("name", "a"), OUT("out"));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_read_raw)
{
    wt_gguf *f = open_gguf(e);
    float buf[15];
    wt_status st = wt_gguf_read_raw(PTR("f", f), NAME("name", "a"), PTR("dst", buf), BYTES("size", sizeof buf));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_writer_create) { return wt_gguf_writer_create(out_gguf_writer(m, "out")); }
static wt_gguf_writer *new_writer(void)
{
    wt_gguf_writer *w = NULL;
    wt_gguf_writer_create(&w);
    return w;
}
ROWFN(gguf_writer_set)
{
    (void)e;
    wt_gguf_writer *w = new_writer();
    static const uint32_t three[3] = {1, 2, 3};
    wt_gguf_value v = {.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_U32, .count = 3, .elems = three};
    if (bad_value(m, "value.elem_type", WT_ERR_INVALID_ARGUMENT, "%s 13")) v.elem_type = (wt_gguf_type)13;
    if (bad_value(m, "value.elems", WT_ERR_INVALID_ARGUMENT, "%s NULL with count 3")) v.elems = NULL;
    const char *key = bad_value(m, "key", WT_ERR_INVALID_ARGUMENT, "%s general.alignment for an array")
                          ? "general.alignment"
                          : "k";
    wt_status st = wt_gguf_writer_set(PTR("w", w), PTR("key", key), PTR("value", &v));
    wt_gguf_writer_destroy(w);
    return st;
}
ROWFN(gguf_writer_set_u32)
{
    (void)e;
    wt_gguf_writer *w = new_writer();
    const bool bad = bad_value(m, "v", WT_ERR_INVALID_ARGUMENT, "%s 3 for general.alignment");
    wt_status st = wt_gguf_writer_set_u32(PTR("w", w), PTR("key", "general.alignment"), bad ? 3 : 64);
    wt_gguf_writer_destroy(w);
    return st;
}
ROWFN(gguf_writer_set_string)
{
    (void)e;
    wt_gguf_writer *w = new_writer();
    wt_status st = wt_gguf_writer_set_string(PTR("w", w), PTR("key", "general.name"), PTR("s", "tiny"));
    wt_gguf_writer_destroy(w);
    return st;
}
ROWFN(gguf_writer_add_tensor)
{
    wt_gguf_writer *w = new_writer();
    const char *name = bad_value(m, "name", WT_ERR_INVALID_ARGUMENT, "%s empty") ? "" : "a";
    wt_status st = wt_gguf_writer_add_tensor(PTR("w", w), PTR("name", name), TFREE("t", e->m35));
    wt_gguf_writer_destroy(w);
    return st;
}
ROWFN(gguf_writer_add_raw)
{
    (void)e;
    wt_gguf_writer *w = new_writer();
    static const uint64_t dims[2] = {32, 2};
    static const uint8_t blocks[68];
    uint32_t type = bad_value(m, "ggml_type", WT_ERR_UNSUPPORTED, "%s 99") ? 99 : 8; /* Q8_0 */
    int n_dims = bad_value(m, "n_dims", WT_ERR_INVALID_ARGUMENT, "%s 5") ? 5 : 2;
    wt_status st = wt_gguf_writer_add_raw(PTR("w", w), PTR("name", "q"), type, n_dims, PTR("dims", dims),
                                          PTR("data", blocks), BYTES("bytes", sizeof blocks));
    wt_gguf_writer_destroy(w);
    return st;
}
/* --- tokenizers --- */
static wt_tokenizer *open_tokenizer(const env2 *e)
{
    wt_tokenizer *t = NULL;
    wt_tokenizer_from_json_memory(e->tok_json, strlen(e->tok_json), &t);
    return t;
}
ROWFN(tokenizer_from_gguf)
{
    wt_gguf *g = NULL;
    wt_gguf_open(e->tok_gguf_path, &g);
    wt_status st = wt_tokenizer_from_gguf(PTR("f", g), out_tokenizer(m, "out"));
    wt_gguf_close(g);
    return st;
}
ROWFN(tokenizer_load_json) { return wt_tokenizer_load_json(PATH("path", e->tok_json_path), out_tokenizer(m, "out")); }
ROWFN(tokenizer_from_json_memory)
{
    return wt_tokenizer_from_json_memory(PTR("data", e->tok_json), BYTES("size", strlen(e->tok_json)),
                                         out_tokenizer(m, "out"));
}
ROWFN(tokenizer_token)
{
    wt_tokenizer *t = open_tokenizer(e);
    const char *text;
    size_t len;
    wt_token_type type;
    wt_status st = wt_tokenizer_token(PTR("t", t), INDEX("id", 5), PTRO("text", &text), PTRO("len", &len),
                                      PTRO("type", &type));
    wt_tokenizer_destroy(t);
    return st;
}
ROWFN(tokenizer_find)
{
    wt_tokenizer *t = open_tokenizer(e);
    int32_t id;
    wt_status st = wt_tokenizer_find(PTR("t", t), PTR("text", "\xE2\x96\x81the"), 6, PTR("id", &id));
    wt_tokenizer_destroy(t);
    return st;
}
ROWFN(tokenizer_encode)
{
    wt_tokenizer *t = open_tokenizer(e);
    int32_t ids[8];
    size_t n;
    const unsigned flags = bad_value(m, "flags", WT_ERR_INVALID_ARGUMENT, "%s unknown bits") ? 0x100u : WT_TOKENIZE_ADD_BOS;
    /* "the x" -> <s> ▁the ▁ <0x78>: 4 ids */
    wt_status st = wt_tokenizer_encode(PTR("t", t), PTR("text", "the x"), 5, flags, PTR("ids", ids),
                                       BYTES("capacity", 4), PTR("n_ids", &n));
    wt_tokenizer_destroy(t);
    return st;
}
ROWFN(tokenizer_token_bytes)
{
    wt_tokenizer *t = open_tokenizer(e);
    char buf[8];
    size_t len;
    /* token 277 is ▁the: 4 bytes " the" */
    wt_status st = wt_tokenizer_token_bytes(PTR("t", t), INDEX("id", 277), PTR("buf", buf), BYTES("capacity", 4),
                                            PTR("len", &len));
    wt_tokenizer_destroy(t);
    return st;
}
ROWFN(tokenizer_decode)
{
    wt_tokenizer *t = open_tokenizer(e);
    static const int32_t ids[2] = {1, 277};
    char text[8];
    size_t len;
    const unsigned flags = bad_value(m, "flags", WT_ERR_INVALID_ARGUMENT, "%s unknown bits") ? 0x100u : 0;
    /* "<s> the" and its NUL: 8 bytes */
    wt_status st = wt_tokenizer_decode(PTR("t", t), PTR("ids", ids), 2, flags, PTR("text", text), BYTES("capacity", 8),
                                       PTR("len", &len));
    wt_tokenizer_destroy(t);
    return st;
}
ROWFN(detokenizer_create)
{
    wt_tokenizer *t = open_tokenizer(e);
    const unsigned flags = bad_value(m, "flags", WT_ERR_INVALID_ARGUMENT, "%s unknown bits") ? 0x100u : 0;
    wt_status st = wt_detokenizer_create(PTR("t", t), flags, out_detokenizer(m, "out"));
    wt_tokenizer_destroy(t);
    return st;
}
static wt_detokenizer *open_detokenizer(const wt_tokenizer *t)
{
    wt_detokenizer *d = NULL;
    wt_detokenizer_create(t, 0, &d);
    return d;
}
ROWFN(detokenizer_push)
{
    wt_tokenizer *t = open_tokenizer(e);
    wt_detokenizer *d = open_detokenizer(t);
    const char *text;
    size_t len;
    wt_status st = wt_detokenizer_push(PTR("d", d), INDEX("id", 277), PTR("text", &text), PTR("len", &len));
    wt_detokenizer_destroy(d);
    wt_tokenizer_destroy(t);
    return st;
}
ROWFN(detokenizer_flush)
{
    wt_tokenizer *t = open_tokenizer(e);
    wt_detokenizer *d = open_detokenizer(t);
    const char *text;
    size_t len;
    wt_status st = wt_detokenizer_flush(PTR("d", d), PTR("text", &text), PTR("len", &len));
    wt_detokenizer_destroy(d);
    wt_tokenizer_destroy(t);
    return st;
}
ROWFN(gguf_writer_save)
{
    wt_gguf_writer *w = new_writer();
    wt_gguf_writer_set_u32(w, "n", 7);
    wt_gguf_writer_add_tensor(w, "a", e->m35);
    wt_status st = wt_gguf_writer_save(PTR("w", w), PATH("path", e->dir_path));
    wt_gguf_writer_destroy(w);
    return st;
}

static const slot_row ROWS[] = {
    /* --- model files --- */
    R(npy_save), R(npy_load), R(npy_load_memory), R(safetensors_open), R(safetensors_open_memory),
    R(safetensors_entry_at), R(safetensors_find), R(safetensors_load), R(safetensors_load_many),
    R(safetensors_save), R(gguf_type_info), R(gguf_open), R(gguf_open_memory), R(gguf_kv_at), R(gguf_find_kv),
    R(gguf_get_int), R(gguf_get_float), R(gguf_get_bool), R(gguf_get_string), R(gguf_get_array),
    R(gguf_tensor_at), R(gguf_find_tensor), R(gguf_load), R(gguf_read_raw), R(gguf_writer_create),
    R(gguf_writer_set), R(gguf_writer_set_u32), R(gguf_writer_set_string), R(gguf_writer_add_tensor),
    R(gguf_writer_add_raw), R(gguf_writer_save),
    /* --- tokenizers --- */
    R(tokenizer_from_gguf), R(tokenizer_load_json), R(tokenizer_from_json_memory), R(tokenizer_token),
    R(tokenizer_find), R(tokenizer_encode), R(tokenizer_token_bytes), R(tokenizer_decode), R(detokenizer_create),
    R(detokenizer_push), R(detokenizer_flush),
};
const slot_table bad_input_rows_files = {ROWS, sizeof ROWS / sizeof ROWS[0]};
