/* GGUF files: every metadata value type (nested arrays included) and
 * tensors written and read back, files built byte by byte as the format
 * lays them out (version 2, quantised blocks, custom alignment), and
 * malformed files (every truncation, huge counts, bad alignment, data out
 * of range or overlapping, too many dims, duplicate names, bit flips) that
 * must fail cleanly with the byte offset in the message.
 *
 *   model_files_gguf <cpu|vulkan|gles>
 *   model_files_gguf --sample PATH   writes the file tests/gguf_js checks
 */
#define _GNU_SOURCE /* mkdtemp */
#include "test_util.h"
#include "webtensor_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static wt_context *g_ctx;
static char g_dir[256];

static const char *tmp_path(const char *name)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", g_dir, name);
    return buf;
}

/* ------------------------------------------- the values of the sample file */

static const uint8_t U8S[3] = {0, 7, 255};
static const int8_t I8S[3] = {-128, 0, 127};
static const uint16_t U16S[2] = {0, 65535};
static const int16_t I16S[2] = {-32768, 32767};
static const uint32_t U32S[3] = {1, 2, 4000000000u};
static const int32_t I32S[2] = {-2147483647 - 1, 2147483647};
static const float F32S[3] = {1.5f, -0.25f, 3e38f};
static const uint8_t BOOLS[3] = {1, 0, 1};
static const uint64_t U64S[2] = {0, 18446744073709551615ull};
static const int64_t I64S[2] = {-9223372036854775807ll - 1, 1234567890123ll};
static const double F64S[2] = {3.141592653589793, -1e-300};

/* Sets every scalar type, an array of each, strings (one with a NUL byte
 * inside), an empty array and arrays nested three deep. */
static bool set_all_values(wt_gguf_writer *w)
{
    wt_gguf_value v;
    bool ok = true;
#define SET(key, ...) (v = (wt_gguf_value){__VA_ARGS__}, ok = ok && wt_gguf_writer_set(w, key, &v) == WT_OK)
    SET("t.u8", .type = WT_GGUF_U8, .u = 200);
    SET("t.i8", .type = WT_GGUF_I8, .i = -100);
    SET("t.u16", .type = WT_GGUF_U16, .u = 60000);
    SET("t.i16", .type = WT_GGUF_I16, .i = -30000);
    SET("t.u32", .type = WT_GGUF_U32, .u = 4000000000u);
    SET("t.i32", .type = WT_GGUF_I32, .i = -2000000000);
    SET("t.f32", .type = WT_GGUF_F32, .f = 1.5);
    SET("t.bool", .type = WT_GGUF_BOOL, .u = 1);
    SET("t.string", .type = WT_GGUF_STRING, .str = "h\xc3\xa9llo", .str_len = 6);
    SET("t.u64", .type = WT_GGUF_U64, .u = 9223372036854775813ull);
    SET("t.i64", .type = WT_GGUF_I64, .i = -4611686018427387904ll);
    SET("t.f64", .type = WT_GGUF_F64, .f = 2.718281828459045);
    SET("a.u8", .type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_U8, .count = 3, .elems = U8S);
    SET("a.i8", .type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_I8, .count = 3, .elems = I8S);
    SET("a.u16", .type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_U16, .count = 2, .elems = U16S);
    SET("a.i16", .type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_I16, .count = 2, .elems = I16S);
    SET("a.u32", .type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_U32, .count = 3, .elems = U32S);
    SET("a.i32", .type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_I32, .count = 2, .elems = I32S);
    SET("a.f32", .type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_F32, .count = 3, .elems = F32S);
    SET("a.bool", .type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_BOOL, .count = 3, .elems = BOOLS);
    SET("a.u64", .type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_U64, .count = 2, .elems = U64S);
    SET("a.i64", .type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_I64, .count = 2, .elems = I64S);
    SET("a.f64", .type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_F64, .count = 2, .elems = F64S);
    SET("a.empty", .type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_F32, .count = 0, .elems = NULL);
    const wt_gguf_value strs[3] = {{.type = WT_GGUF_STRING, .str = "<s>", .str_len = 3},
                                   {.type = WT_GGUF_STRING, .str = "", .str_len = 0},
                                   {.type = WT_GGUF_STRING, .str = "a\0b", .str_len = 3}};
    SET("a.string", .type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_STRING, .count = 3, .items = strs);
    /* [[1, 2], [], [3]] of i32, [["x"], ["y", "zz"]] and [[[5]]] */
    static const int32_t one_two[2] = {1, 2}, three[1] = {3};
    const wt_gguf_value inner[3] = {{.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_I32, .count = 2, .elems = one_two},
                                    {.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_I32, .count = 0},
                                    {.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_I32, .count = 1, .elems = three}};
    SET("a.nested", .type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_ARRAY, .count = 3, .items = inner);
    const wt_gguf_value sx[1] = {{.type = WT_GGUF_STRING, .str = "x", .str_len = 1}};
    const wt_gguf_value syz[2] = {{.type = WT_GGUF_STRING, .str = "y", .str_len = 1},
                                  {.type = WT_GGUF_STRING, .str = "zz", .str_len = 2}};
    const wt_gguf_value sinner[2] = {{.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_STRING, .count = 1, .items = sx},
                                     {.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_STRING, .count = 2, .items = syz}};
    SET("a.nested_strings", .type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_ARRAY, .count = 2, .items = sinner);
    static const uint8_t five[1] = {5};
    const wt_gguf_value d3[1] = {{.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_U8, .count = 1, .elems = five}};
    const wt_gguf_value d2[1] = {{.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_ARRAY, .count = 1, .items = d3}};
    SET("a.deep", .type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_ARRAY, .count = 1, .items = d2);
#undef SET
    return ok;
}

/* Tensors of the sample file: f32 [2,3], f16 [5], i32 [2,2,2], a 0-d f32,
 * Q8_0 blocks (dims {64, 2}) and one Q4_K block, all from fixed bytes. */
static const float W23[6] = {1, -2, 3.5f, 0, 1e-3f, -7};
static const uint16_t H5[5] = {0x3c00, 0xc000, 0x7c00, 0x0001, 0x7bff};
static const int32_t I222[8] = {0, -1, 2, -3, 4, 2147483647, -2147483647 - 1, 42};

static void fill_bytes(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)((i * 131 + seed * 17 + (i >> 3)) & 0xff);
}

static bool add_sample_tensors(wt_gguf_writer *w, wt_tensor **made)
{
    int64_t s23[2] = {2, 3}, s5[1] = {5}, s222[3] = {2, 2, 2};
    float scalar = 9.5f;
    uint8_t q8[136], q4k[144];
    fill_bytes(q8, sizeof q8, 1);
    fill_bytes(q4k, sizeof q4k, 2);
    const uint64_t q8_dims[2] = {64, 2}, q4k_dims[1] = {256};
    return wt_tensor_from_data(g_ctx, WT_F32, 2, s23, W23, &made[0]) == WT_OK &&
           wt_tensor_from_data(g_ctx, WT_F16, 1, s5, H5, &made[1]) == WT_OK &&
           wt_tensor_from_data(g_ctx, WT_I32, 3, s222, I222, &made[2]) == WT_OK &&
           wt_tensor_from_data(g_ctx, WT_F32, 0, NULL, &scalar, &made[3]) == WT_OK &&
           wt_gguf_writer_add_tensor(w, "blk.0.w", made[0]) == WT_OK &&
           wt_gguf_writer_add_tensor(w, "h", made[1]) == WT_OK &&
           wt_gguf_writer_add_tensor(w, "ids", made[2]) == WT_OK &&
           wt_gguf_writer_add_tensor(w, "scalar", made[3]) == WT_OK &&
           wt_gguf_writer_add_raw(w, "q8", 8, 2, q8_dims, q8, sizeof q8) == WT_OK &&
           wt_gguf_writer_add_raw(w, "q4k", 12, 1, q4k_dims, q4k, sizeof q4k) == WT_OK;
}

static bool write_sample(const char *path)
{
    wt_gguf_writer *w = NULL;
    wt_tensor *made[4] = {0};
    bool ok = wt_gguf_writer_create(&w) == WT_OK && wt_gguf_writer_set_string(w, "general.architecture", "llama") == WT_OK && set_all_values(w) &&
         add_sample_tensors(w, made) && wt_gguf_writer_save(w, path) == WT_OK;
    if (!ok) fprintf(stderr, "write_sample: %s\n", wt_last_error());
    wt_gguf_writer_destroy(w);
    for (int i = 0; i < 4; i++) wt_tensor_release(made[i]);
    return ok;
}

/* --------------------------------------------------------------- checks */

static bool value_is(const wt_gguf *f, const char *key, wt_gguf_type type, wt_gguf_value *v)
{
    return wt_gguf_find_kv(f, key, v) == WT_OK && v->type == type;
}

static void check_values(const wt_gguf *f)
{
    wt_gguf_value v;
    CHECK(value_is(f, "t.u8", WT_GGUF_U8, &v) && v.u == 200, "u8");
    CHECK(value_is(f, "t.i8", WT_GGUF_I8, &v) && v.i == -100, "i8");
    CHECK(value_is(f, "t.u16", WT_GGUF_U16, &v) && v.u == 60000, "u16");
    CHECK(value_is(f, "t.i16", WT_GGUF_I16, &v) && v.i == -30000, "i16");
    CHECK(value_is(f, "t.u32", WT_GGUF_U32, &v) && v.u == 4000000000u, "u32");
    CHECK(value_is(f, "t.i32", WT_GGUF_I32, &v) && v.i == -2000000000, "i32");
    CHECK(value_is(f, "t.f32", WT_GGUF_F32, &v) && v.f == 1.5, "f32");
    CHECK(value_is(f, "t.bool", WT_GGUF_BOOL, &v) && v.u == 1, "bool");
    CHECK(value_is(f, "t.string", WT_GGUF_STRING, &v) && v.str_len == 6 && memcmp(v.str, "h\xc3\xa9llo", 7) == 0,
          "string (NUL-terminated)");
    CHECK(value_is(f, "t.u64", WT_GGUF_U64, &v) && v.u == 9223372036854775813ull, "u64");
    CHECK(value_is(f, "t.i64", WT_GGUF_I64, &v) && v.i == -4611686018427387904ll, "i64");
    CHECK(value_is(f, "t.f64", WT_GGUF_F64, &v) && v.f == 2.718281828459045, "f64");
    struct { const char *key; wt_gguf_type t; const void *data; size_t count, es; } arrs[] = {
        {"a.u8", WT_GGUF_U8, U8S, 3, 1},    {"a.i8", WT_GGUF_I8, I8S, 3, 1},     {"a.u16", WT_GGUF_U16, U16S, 2, 2},
        {"a.i16", WT_GGUF_I16, I16S, 2, 2}, {"a.u32", WT_GGUF_U32, U32S, 3, 4},  {"a.i32", WT_GGUF_I32, I32S, 2, 4},
        {"a.f32", WT_GGUF_F32, F32S, 3, 4}, {"a.bool", WT_GGUF_BOOL, BOOLS, 3, 1}, {"a.u64", WT_GGUF_U64, U64S, 2, 8},
        {"a.i64", WT_GGUF_I64, I64S, 2, 8}, {"a.f64", WT_GGUF_F64, F64S, 2, 8},
    };
    for (size_t i = 0; i < sizeof arrs / sizeof arrs[0]; i++) {
        bool ok = wt_gguf_get_array(f, arrs[i].key, arrs[i].t, &v) == WT_OK && v.type == WT_GGUF_ARRAY &&
                  v.count == arrs[i].count && v.elems && memcmp(v.elems, arrs[i].data, arrs[i].count * arrs[i].es) == 0;
        CHECK(ok, "array %s: %s", arrs[i].key, wt_last_error());
    }
    CHECK(wt_gguf_get_array(f, "a.empty", WT_GGUF_F32, &v) == WT_OK && v.count == 0, "empty array");
    CHECK(wt_gguf_get_array(f, "a.string", WT_GGUF_STRING, &v) == WT_OK && v.count == 3 && v.items &&
              strcmp(v.items[0].str, "<s>") == 0 && v.items[1].str_len == 0 && v.items[1].str[0] == 0 &&
              v.items[2].str_len == 3 && memcmp(v.items[2].str, "a\0b", 3) == 0,
          "string array (empty and NUL-holding strings)");
    bool nested = wt_gguf_get_array(f, "a.nested", WT_GGUF_ARRAY, &v) == WT_OK && v.count == 3 && v.items;
    if (nested) {
        const wt_gguf_value *it = v.items;
        nested = it[0].elem_type == WT_GGUF_I32 && it[0].count == 2 && ((const int32_t *)it[0].elems)[1] == 2 &&
                 it[1].count == 0 && it[2].count == 1 && ((const int32_t *)it[2].elems)[0] == 3;
    }
    CHECK(nested, "nested i32 arrays");
    nested = wt_gguf_get_array(f, "a.nested_strings", WT_GGUF_ARRAY, &v) == WT_OK && v.count == 2 && v.items &&
             v.items[1].elem_type == WT_GGUF_STRING && v.items[1].count == 2 &&
             strcmp(v.items[1].items[1].str, "zz") == 0 && strcmp(v.items[0].items[0].str, "x") == 0;
    CHECK(nested, "nested string arrays");
    nested = wt_gguf_get_array(f, "a.deep", WT_GGUF_ARRAY, &v) == WT_OK && v.count == 1 &&
             v.items[0].elem_type == WT_GGUF_ARRAY && v.items[0].items[0].elem_type == WT_GGUF_U8 &&
             ((const uint8_t *)v.items[0].items[0].elems)[0] == 5;
    CHECK(nested, "arrays three deep");

    /* Typed getters, their conversions and refusals. */
    int64_t iv = 0;
    double dv = 0;
    bool bv = false;
    const char *sv = NULL;
    size_t sl = 0;
    CHECK(wt_gguf_get_int(f, "t.u32", &iv) == WT_OK && iv == 4000000000ll, "get_int u32");
    CHECK(wt_gguf_get_int(f, "t.i8", &iv) == WT_OK && iv == -100, "get_int i8");
    CHECK(wt_gguf_get_int(f, "t.u64", &iv) == WT_ERR_INVALID_ARGUMENT && strstr(wt_last_error(), "int64"),
          "get_int u64 beyond int64: %s", wt_last_error());
    CHECK(wt_gguf_get_int(f, "t.f32", &iv) == WT_ERR_INVALID_ARGUMENT && strstr(wt_last_error(), "f32") &&
              strstr(wt_last_error(), "t.f32"),
          "get_int of an f32 names key and type: %s", wt_last_error());
    CHECK(wt_gguf_get_float(f, "t.f64", &dv) == WT_OK && dv == 2.718281828459045, "get_float f64");
    CHECK(wt_gguf_get_float(f, "t.i32", &dv) == WT_ERR_INVALID_ARGUMENT, "get_float of an i32");
    CHECK(wt_gguf_get_bool(f, "t.bool", &bv) == WT_OK && bv, "get_bool");
    CHECK(wt_gguf_get_bool(f, "t.u8", &bv) == WT_ERR_INVALID_ARGUMENT, "get_bool of a u8");
    CHECK(wt_gguf_get_string(f, "general.architecture", &sv, &sl) == WT_OK && strcmp(sv, "llama") == 0 && sl == 5,
          "get_string");
    CHECK(wt_gguf_get_string(f, "a.string", &sv, NULL) == WT_ERR_INVALID_ARGUMENT && sv == NULL &&
              strstr(wt_last_error(), "array"),
          "get_string of an array: %s", wt_last_error());
    CHECK(wt_gguf_get_array(f, "a.u8", WT_GGUF_I8, &v) == WT_ERR_INVALID_ARGUMENT &&
              strstr(wt_last_error(), "array of u8"),
          "get_array of the wrong element type: %s", wt_last_error());
    CHECK(wt_gguf_get_int(f, "no.such.key", &iv) == WT_ERR_NOT_FOUND && strstr(wt_last_error(), "no.such.key"),
          "missing key");
    /* Iteration: the order set, general.architecture first. */
    const char *key = NULL;
    CHECK(wt_gguf_kv_count(f) == 29, "kv count %d", wt_gguf_kv_count(f));
    CHECK(wt_gguf_kv_at(f, 0, &key, &v) == WT_OK && strcmp(key, "general.architecture") == 0, "kv 0");
    CHECK(wt_gguf_kv_at(f, 28, &key, &v) == WT_OK && strcmp(key, "a.deep") == 0, "kv 28");
    CHECK(wt_gguf_kv_at(f, 29, &key, &v) == WT_ERR_INVALID_ARGUMENT && key == NULL, "kv past the end");
}

static void check_tensors(const wt_gguf *f)
{
    CHECK(wt_gguf_tensor_count(f) == 6, "tensor count %d", wt_gguf_tensor_count(f));
    wt_gguf_tensor_info in;
    int idx = -1;
    CHECK(wt_gguf_find_tensor(f, "ids", &idx) == WT_OK && idx == 2, "find ids");
    CHECK(wt_gguf_find_tensor(f, "nope", &idx) == WT_ERR_NOT_FOUND && idx == -1, "find missing");
    CHECK(wt_gguf_tensor_at(f, 0, &in) == WT_OK && strcmp(in.name, "blk.0.w") == 0 && in.n_dims == 2 &&
              in.dims[0] == 3 && in.dims[1] == 2 && in.shape[0] == 2 && in.shape[1] == 3 && in.ggml_type == 0 &&
              strcmp(in.type_name, "F32") == 0 && in.offset == 0 && in.bytes == 24 && in.numel == 6 &&
              in.file_offset % 32 == 0,
          "tensor 0 info (dims innermost first, shape reversed)");
    uint64_t prev_end = 24;
    for (int i = 1; i < 6; i++) {
        CHECK(wt_gguf_tensor_at(f, i, &in) == WT_OK && in.offset % 32 == 0 && in.offset >= prev_end,
              "tensor %d offset aligned, after the previous", i);
        prev_end = in.offset + in.bytes;
    }
    CHECK(wt_gguf_tensor_at(f, 3, &in) == WT_OK && in.n_dims == 1 && in.dims[0] == 1, "0-d written as 1-d of 1");
    CHECK(wt_gguf_tensor_at(f, 4, &in) == WT_OK && strcmp(in.type_name, "Q8_0") == 0 && in.bytes == 136 &&
              in.shape[0] == 2 && in.shape[1] == 64,
          "Q8_0 info");

    wt_tensor *t = NULL;
    CHECK(wt_gguf_load(f, g_ctx, "blk.0.w", &t) == WT_OK && wt_tensor_dtype(t) == WT_F32 && wt_tensor_ndim(t) == 2 &&
              wt_tensor_shape(t)[0] == 2 && wt_tensor_shape(t)[1] == 3 && test_same_tensor_bytes(t, W23, sizeof W23),
          "f32 round trip: %s", wt_last_error());
    wt_tensor_release(t);
    t = NULL;
    CHECK(wt_gguf_load(f, g_ctx, "h", &t) == WT_OK && wt_tensor_dtype(t) == WT_F16 && test_same_tensor_bytes(t, H5, 10),
          "f16 round trip");
    wt_tensor_release(t);
    t = NULL;
    CHECK(wt_gguf_load(f, g_ctx, "ids", &t) == WT_OK && wt_tensor_dtype(t) == WT_I32 && wt_tensor_ndim(t) == 3 &&
              test_same_tensor_bytes(t, I222, sizeof I222),
          "i32 round trip");
    wt_tensor_release(t);
    t = NULL;
    float scalar = 9.5f;
    CHECK(wt_gguf_load(f, g_ctx, "scalar", &t) == WT_OK && wt_tensor_numel(t) == 1 && test_same_tensor_bytes(t, &scalar, 4),
          "scalar round trip");
    wt_tensor_release(t);
    t = (wt_tensor *)1;
    CHECK(wt_gguf_load(f, g_ctx, "q8", &t) == WT_ERR_UNSUPPORTED && t == NULL && strstr(wt_last_error(), "Q8_0") &&
              strstr(wt_last_error(), "wt_gguf_read_raw"),
          "Q8_0 load refused, naming the type: %s", wt_last_error());
    uint8_t q8[136], want[136], q4k[144], want4[144];
    fill_bytes(want, sizeof want, 1);
    fill_bytes(want4, sizeof want4, 2);
    CHECK(wt_gguf_read_raw(f, "q8", q8, sizeof q8) == WT_OK && memcmp(q8, want, sizeof q8) == 0, "Q8_0 raw bytes");
    CHECK(wt_gguf_read_raw(f, "q4k", q4k, sizeof q4k) == WT_OK && memcmp(q4k, want4, sizeof q4k) == 0, "Q4_K raw bytes");
    CHECK(wt_gguf_read_raw(f, "q8", q8, 135) == WT_ERR_INVALID_ARGUMENT, "raw with the wrong size");
}

static void round_trip(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s", tmp_path("sample.gguf"));
    CHECK(write_sample(path), "sample written");
    CHECK(access(tmp_path("sample.gguf.tmp"), F_OK) != 0, "no temporary left behind");
    size_t n = 0;
    unsigned char *raw = test_read_file(path, &n);
    CHECK(raw && n > 24 && memcmp(raw, "GGUF\x03\0\0\0", 8) == 0 && n % 32 == 0, "magic, version 3, padded size");
    wt_gguf *f = NULL;
    CHECK(wt_gguf_open(path, &f) == WT_OK, "open: %s", wt_last_error());
    if (f) {
        CHECK(wt_gguf_version(f) == 3 && wt_gguf_alignment(f) == 32, "version and alignment");
        check_values(f);
        check_tensors(f);
        wt_gguf_close(f);
    }
    /* The same from memory, and as version 2 (the same layout). */
    if (raw) {
        f = NULL;
        CHECK(wt_gguf_open_memory(raw, n, &f) == WT_OK, "open memory: %s", wt_last_error());
        if (f) check_tensors(f);
        wt_gguf_close(f);
        raw[4] = 2;
        f = NULL;
        CHECK(wt_gguf_open_memory(raw, n, &f) == WT_OK && wt_gguf_version(f) == 2, "version 2");
        if (f) check_values(f);
        wt_gguf_close(f);
        raw[4] = 1;
        CHECK(wt_gguf_open_memory(raw, n, &f) == WT_ERR_UNSUPPORTED && !f && strstr(wt_last_error(), "version 1"),
              "version 1 refused");
        raw[4] = 0;
        raw[7] = 3;
        CHECK(wt_gguf_open_memory(raw, n, &f) == WT_ERR_UNSUPPORTED && !f && strstr(wt_last_error(), "big-endian"),
              "big-endian refused: %s", wt_last_error());
    }
    free(raw);

    /* Alignment 64, set by key, and a tensor of another context. */
    wt_gguf_writer *w = NULL;
    wt_tensor *t = NULL, *back = NULL;
    int64_t s3[1] = {3};
    float v3[3] = {1, 2, 3};
    CHECK(wt_gguf_writer_create(&w) == WT_OK && wt_gguf_writer_set_u32(w, "general.alignment", 64) == WT_OK &&
              wt_tensor_from_data(g_ctx, WT_F32, 1, s3, v3, &t) == WT_OK &&
              wt_gguf_writer_add_tensor(w, "a", t) == WT_OK && wt_gguf_writer_add_tensor(w, "b", t) == WT_OK,
          "writer with alignment 64: %s", wt_last_error());
    wt_tensor_release(t); /* the writer holds its own reference */
    CHECK(wt_gguf_writer_save(w, tmp_path("a64.gguf")) == WT_OK, "save a64: %s", wt_last_error());
    wt_gguf_writer_destroy(w);
    f = NULL;
    wt_gguf_tensor_info in;
    CHECK(wt_gguf_open(tmp_path("a64.gguf"), &f) == WT_OK && wt_gguf_alignment(f) == 64 &&
              wt_gguf_tensor_at(f, 1, &in) == WT_OK && in.offset == 64 && in.file_offset % 64 == 0,
          "alignment 64 read back");
    CHECK(f && wt_gguf_load(f, g_ctx, "b", &back) == WT_OK && test_same_tensor_bytes(back, v3, sizeof v3), "a64 data");
    wt_tensor_release(back);
    wt_gguf_close(f);
}

/* ------------------------------------------------ files built by hand */

typedef struct buf {
    unsigned char b[4096];
    size_t n;
} buf;

static void b_put(buf *b, const void *p, size_t n)
{
    if (b->n + n <= sizeof b->b) memcpy(b->b + b->n, p, n);
    b->n += n;
}
static void b_u32(buf *b, uint32_t v) { b_put(b, &v, 4); }
static void b_u64(buf *b, uint64_t v) { b_put(b, &v, 8); }
static void b_str(buf *b, const char *s) { b_u64(b, strlen(s)); b_put(b, s, strlen(s)); }
static void b_pad(buf *b, size_t a) { while (b->n % a) b_put(b, "", 1); }
static void b_head(buf *b, uint64_t nt, uint64_t nkv)
{
    b->n = 0;
    b_put(b, "GGUF", 4);
    b_u32(b, 3);
    b_u64(b, nt);
    b_u64(b, nkv);
}
static void b_tensor(buf *b, const char *name, uint32_t n_dims, const uint64_t *dims, uint32_t type, uint64_t off)
{
    b_str(b, name);
    b_u32(b, n_dims);
    for (uint32_t d = 0; d < n_dims; d++) b_u64(b, dims[d]);
    b_u32(b, type);
    b_u64(b, off);
}

static wt_status open_buf(const buf *b, wt_gguf **f)
{
    *f = NULL;
    return wt_gguf_open_memory(b->b, b->n, f);
}

/* Expects a refusal with the code and, in the message, the text. */
static void refused(const buf *b, wt_status want, const char *text, const char *what)
{
    wt_gguf *f = NULL;
    wt_status st = wt_gguf_open_memory(b->b, b->n, &f);
    CHECK(st == want && f == NULL && strstr(wt_last_error(), text) != NULL, "%s: got %s (%s)", what,
          wt_status_string(st), wt_last_error());
    wt_gguf_close(f);
}

static void hand_built(void)
{
    buf b;
    wt_gguf *f = NULL;
    const uint64_t d4[1] = {4}, d2x2[2] = {2, 2};
    float four[4] = {1, 2, 3, 4};
    uint16_t bf[4] = {0x3f80, 0xc000, 0x3f00, 0x7f80}; /* 1, -2, 0.5, inf */
    float bf32[4] = {1, -2, 0.5f, INFINITY};

    /* A good file: one key, BF16 [2,2] and F32 [4], as the format lays it out. */
    b_head(&b, 2, 1);
    b_str(&b, "general.name");
    b_u32(&b, WT_GGUF_STRING);
    b_str(&b, "tiny");
    b_tensor(&b, "bf", 2, d2x2, 30, 0);
    b_tensor(&b, "w", 1, d4, 0, 32);
    b_pad(&b, 32);
    b_put(&b, bf, 8);
    b_pad(&b, 32);
    b_put(&b, four, 16);
    CHECK(open_buf(&b, &f) == WT_OK, "hand-built file: %s", wt_last_error());
    if (f) {
        wt_tensor *t = NULL;
        CHECK(wt_gguf_load(f, g_ctx, "bf", &t) == WT_OK && wt_tensor_dtype(t) == WT_F32 &&
                  test_same_tensor_bytes(t, bf32, sizeof bf32),
              "BF16 -> f32: %s", wt_last_error());
        wt_tensor_release(t);
        wt_gguf_close(f);
    }
    /* Every truncation fails cleanly, with a byte offset in the message. */
    const buf good = b;
    int clean = 0, with_offset = 0;
    for (size_t len = 0; len < good.n; len++) {
        wt_status st = wt_gguf_open_memory(good.b, len, &f);
        clean += st == WT_ERR_INVALID_ARGUMENT && !f;
        with_offset += strstr(wt_last_error(), "byte ") != NULL;
        wt_gguf_close(f);
        f = NULL;
    }
    CHECK(clean == (int)good.n && with_offset == (int)good.n, "truncations: %d of %zu refused, %d with an offset",
          clean, good.n, with_offset);

    /* Huge counts and lengths: refused before any allocation. */
    b_head(&b, 0, UINT64_MAX / 2);
    refused(&b, WT_ERR_INVALID_ARGUMENT, "key-value pairs", "huge key-value count");
    b_head(&b, UINT64_MAX, 0);
    refused(&b, WT_ERR_INVALID_ARGUMENT, "tensors", "huge tensor count");
    b_head(&b, 0, 1);
    b_u64(&b, 1ull << 62);
    b_put(&b, "k.and.more.bytes", 16);
    refused(&b, WT_ERR_INVALID_ARGUMENT, "byte 24", "huge key length");
    b_head(&b, 0, 1);
    b_str(&b, "k");
    b_u32(&b, WT_GGUF_ARRAY);
    b_u32(&b, WT_GGUF_U64);
    b_u64(&b, 1ull << 61);
    refused(&b, WT_ERR_INVALID_ARGUMENT, "array of 2305843009213693952 u64", "huge array length");
    b_head(&b, 0, 1);
    b_str(&b, "k");
    b_u32(&b, WT_GGUF_ARRAY);
    b_u32(&b, WT_GGUF_STRING);
    b_u64(&b, 1000);
    b_str(&b, "x");
    refused(&b, WT_ERR_INVALID_ARGUMENT, "runs past the end", "string array longer than the file");
    b_head(&b, 0, 1);
    b_str(&b, "k");
    b_u32(&b, WT_GGUF_STRING);
    b_u64(&b, UINT64_MAX);
    refused(&b, WT_ERR_INVALID_ARGUMENT, "string of length 18446744073709551615", "huge string length");
    /* Arrays nested past the limit; unknown value types. */
    b_head(&b, 0, 1);
    b_str(&b, "k");
    b_u32(&b, WT_GGUF_ARRAY);
    for (int d = 0; d < WT_GGUF_MAX_NESTING + 1; d++) {
        b_u32(&b, WT_GGUF_ARRAY);
        b_u64(&b, 1);
    }
    b_u32(&b, WT_GGUF_U8);
    b_u64(&b, 0);
    refused(&b, WT_ERR_INVALID_ARGUMENT, "nested deeper", "nesting too deep");
    b_head(&b, 0, 1);
    b_str(&b, "k");
    b_u32(&b, 13);
    b_u32(&b, 0);
    refused(&b, WT_ERR_INVALID_ARGUMENT, "unknown value type 13", "value type 13");
    b_head(&b, 0, 2);
    b_str(&b, "k");
    b_u32(&b, WT_GGUF_U8);
    b_put(&b, "\1", 1);
    b_str(&b, "k");
    b_u32(&b, WT_GGUF_U8);
    b_put(&b, "\2", 1);
    refused(&b, WT_ERR_INVALID_ARGUMENT, "appears twice", "duplicate key");
    b_head(&b, 0, 1);
    b_u64(&b, 3);
    b_put(&b, "a\0b", 3);
    b_u32(&b, WT_GGUF_U8);
    b_put(&b, "\2", 1);
    refused(&b, WT_ERR_INVALID_ARGUMENT, "NUL byte", "NUL inside a key");

    /* Alignment: zero, not a power of two, not a u32. */
    struct { uint32_t type; uint64_t v; const char *msg; } al[] = {
        {WT_GGUF_U32, 0, "not a power of two"}, {WT_GGUF_U32, 48, "not a power of two"},
        {WT_GGUF_U64, 32, "not a u32"}};
    for (size_t i = 0; i < sizeof al / sizeof al[0]; i++) {
        b_head(&b, 0, 1);
        b_str(&b, "general.alignment");
        b_u32(&b, al[i].type);
        if (al[i].type == WT_GGUF_U32) b_u32(&b, (uint32_t)al[i].v);
        else b_u64(&b, al[i].v);
        refused(&b, WT_ERR_INVALID_ARGUMENT, al[i].msg, "bad alignment");
    }
    /* Tensors: a body of 64 zero bytes after the infos. */
    struct { const char *name; uint32_t n_dims; uint64_t dims[5]; uint32_t type; uint64_t off; wt_status want;
             const char *msg; } bad[] = {
        {"w", 5, {1, 1, 1, 1, 1}, 0, 0, WT_ERR_INVALID_ARGUMENT, "5 dims"},
        {"w", 3, {1ull << 32, 1ull << 32, 1ull << 32}, 0, 0, WT_ERR_INVALID_ARGUMENT, "overflows"},
        {"w", 2, {1ull << 62, 4}, 0, 0, WT_ERR_INVALID_ARGUMENT, "overflows"},
        {"w", 1, {4}, 99, 0, WT_ERR_UNSUPPORTED, "ggml type id 99"},
        {"w", 1, {4}, 4, 0, WT_ERR_UNSUPPORTED, "ggml type id 4"},
        {"w", 1, {33}, 8, 0, WT_ERR_INVALID_ARGUMENT, "whole number of blocks"},
        {"w", 1, {4}, 0, 8, WT_ERR_INVALID_ARGUMENT, "not a multiple of the alignment"},
        {"w", 1, {4}, 0, 64, WT_ERR_INVALID_ARGUMENT, "runs past the end"},
        {"w", 1, {17}, 0, 0, WT_ERR_INVALID_ARGUMENT, "runs past the end"},
        {"w", 1, {4}, 0, UINT64_MAX - 31, WT_ERR_INVALID_ARGUMENT, "runs past the end"},
    };
    unsigned char zeros[64] = {0};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        b_head(&b, 1, 0);
        b_tensor(&b, bad[i].name, bad[i].n_dims, bad[i].dims, bad[i].type, bad[i].off);
        b_pad(&b, 32);
        b_put(&b, zeros, sizeof zeros);
        char what[64];
        snprintf(what, sizeof what, "bad tensor %zu", i);
        refused(&b, bad[i].want, bad[i].msg, what);
        CHECK(strstr(wt_last_error(), "byte 24"), "%s: the message names the info's byte: %s", what, wt_last_error());
    }
    /* Two tensors: overlapping data, the same name. */
    b_head(&b, 2, 0);
    b_tensor(&b, "a", 1, d4, 0, 0);
    b_tensor(&b, "b", 1, (const uint64_t[]){16}, 0, 0);
    b_pad(&b, 32);
    b_put(&b, zeros, sizeof zeros);
    refused(&b, WT_ERR_INVALID_ARGUMENT, "overlaps", "overlapping data");
    b_head(&b, 2, 0);
    b_tensor(&b, "a", 1, d4, 0, 0);
    b_tensor(&b, "a", 1, d4, 0, 32);
    b_pad(&b, 32);
    b_put(&b, zeros, sizeof zeros);
    refused(&b, WT_ERR_INVALID_ARGUMENT, "appears twice", "duplicate tensor names");
    /* Bad magic; no data section at all. */
    b_head(&b, 0, 0);
    b.b[0] = 'X';
    refused(&b, WT_ERR_INVALID_ARGUMENT, "magic", "bad magic");
    b_head(&b, 1, 0);
    b_tensor(&b, "a", 1, d4, 0, 0);
    refused(&b, WT_ERR_INVALID_ARGUMENT, "data section", "tensor infos but no data");
    /* A file of metadata alone ends with no padding and opens. */
    b_head(&b, 0, 1);
    b_str(&b, "k");
    b_u32(&b, WT_GGUF_BOOL);
    b_put(&b, "\1", 1);
    CHECK(open_buf(&b, &f) == WT_OK && wt_gguf_tensor_count(f) == 0, "metadata only: %s", wt_last_error());
    wt_gguf_close(f);

    /* 2,000 seeded byte flips of the good file: open and load either work
     * or fail cleanly (the sanitized build checks for leaks). */
    test_rng_seed(test_seed());
    buf m;
    int opened = 0, loaded = 0;
    for (int iter = 0; iter < 2000; iter++) {
        m = good;
        int flips = 1 + (int)(test_rng_next() % 3);
        for (int k = 0; k < flips; k++) m.b[test_rng_next() % m.n] = (unsigned char)test_rng_next();
        if (open_buf(&m, &f) != WT_OK) {
            CHECK(f == NULL && wt_last_error()[0], "a failed open leaves NULL and a message");
            continue;
        }
        opened++;
        for (int i = 0; i < wt_gguf_tensor_count(f); i++) {
            wt_gguf_tensor_info in;
            wt_tensor *t = NULL;
            if (wt_gguf_tensor_at(f, i, &in) == WT_OK && wt_gguf_load(f, g_ctx, in.name, &t) == WT_OK) loaded++;
            wt_tensor_release(t);
        }
        wt_gguf_close(f);
    }
    printf("gguf mutations: 2000 tried, %d opened, %d tensors loaded\n", opened, loaded);
    CHECK(opened > 0, "some mutants stay valid (the flips reach the data)");
}

/* -------------------------------------------------------- writer errors */

static void writer_errors(void)
{
    wt_gguf_writer *w = NULL;
    CHECK(wt_gguf_writer_create(&w) == WT_OK, "create");
    if (!w) return;
    wt_tensor *t = NULL, *bt = NULL, *big = NULL;
    int64_t s2[1] = {2}, s5d[5] = {1, 1, 1, 1, 1};
    float two[2] = {1, 2};
    wt_tensor_from_data(g_ctx, WT_F32, 1, s2, two, &t);
    wt_tensor_zeros(g_ctx, WT_BOOL, 1, s2, &bt);
    wt_tensor_zeros(g_ctx, WT_F32, 5, s5d, &big);
    CHECK(wt_gguf_writer_add_tensor(w, "a", t) == WT_OK, "add a");
    CHECK(wt_gguf_writer_add_tensor(w, "a", t) == WT_ERR_INVALID_ARGUMENT, "duplicate name refused");
    CHECK(wt_gguf_writer_add_tensor(w, "b", bt) == WT_ERR_UNSUPPORTED, "bool refused");
    CHECK(wt_gguf_writer_add_tensor(w, "c", big) == WT_ERR_UNSUPPORTED, "5 dims refused");
    char longname[80];
    memset(longname, 'x', 64);
    longname[64] = 0;
    CHECK(wt_gguf_writer_add_tensor(w, longname, t) == WT_ERR_INVALID_ARGUMENT, "a 64-byte name refused");
    const uint64_t d33[1] = {33}, d32[1] = {32};
    uint8_t blocks[34] = {0};
    CHECK(wt_gguf_writer_add_raw(w, "q", 8, 1, d33, blocks, 34) == WT_ERR_INVALID_ARGUMENT, "partial block refused");
    CHECK(wt_gguf_writer_add_raw(w, "q", 8, 1, d32, blocks, 33) == WT_ERR_INVALID_ARGUMENT, "raw size mismatch");
    CHECK(wt_gguf_writer_add_raw(w, "q", 31, 1, d32, blocks, 34) == WT_ERR_UNSUPPORTED &&
              strstr(wt_last_error(), "31"),
          "removed type 31 refused");
    CHECK(wt_gguf_writer_set_u32(w, "general.alignment", 0) == WT_ERR_INVALID_ARGUMENT, "alignment 0 refused");
    wt_gguf_value deep[WT_GGUF_MAX_NESTING + 2];
    deep[WT_GGUF_MAX_NESTING + 1] = (wt_gguf_value){.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_U8};
    for (int d = WT_GGUF_MAX_NESTING; d >= 0; d--)
        deep[d] = (wt_gguf_value){.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_ARRAY, .count = 1, .items = &deep[d + 1]};
    CHECK(wt_gguf_writer_set(w, "deep", &deep[0]) == WT_ERR_INVALID_ARGUMENT, "nesting too deep refused");
    wt_gguf_value mixed[2] = {{.type = WT_GGUF_STRING, .str = "a", .str_len = 1}, {.type = WT_GGUF_U8, .u = 1}};
    wt_gguf_value arr = {.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_STRING, .count = 2, .items = mixed};
    CHECK(wt_gguf_writer_set(w, "mixed", &arr) == WT_ERR_INVALID_ARGUMENT, "mixed item types refused");
    /* A key set twice keeps its place and takes the new value. */
    CHECK(wt_gguf_writer_set_string(w, "k", "one") == WT_OK && wt_gguf_writer_set_u32(w, "j", 1) == WT_OK &&
              wt_gguf_writer_set_string(w, "k", "two") == WT_OK,
          "set twice");
    CHECK(wt_gguf_writer_save(w, "/nonexistent-dir/x.gguf") == WT_ERR_IO, "unwritable path");
    CHECK(wt_gguf_writer_save(w, tmp_path("w.gguf")) == WT_OK, "save: %s", wt_last_error());
    wt_gguf *f = NULL;
    const char *key = NULL, *s = NULL;
    wt_gguf_value v;
    CHECK(wt_gguf_open(tmp_path("w.gguf"), &f) == WT_OK && wt_gguf_kv_count(f) == 2 &&
              wt_gguf_kv_at(f, 0, &key, &v) == WT_OK && strcmp(key, "k") == 0 &&
              wt_gguf_get_string(f, "k", &s, NULL) == WT_OK && strcmp(s, "two") == 0 && wt_gguf_tensor_count(f) == 1,
          "the saved file");
    wt_gguf_close(f);
    const char *name = NULL;
    int bs = 0, ts = 0;
    CHECK(wt_gguf_type_info(14, &name, &bs, &ts) == WT_OK && strcmp(name, "Q6_K") == 0 && bs == 256 && ts == 210,
          "type info Q6_K");
    CHECK(wt_gguf_type_info(2, &name, &bs, &ts) == WT_OK && strcmp(name, "Q4_0") == 0 && bs == 32 && ts == 18,
          "type info Q4_0");
    CHECK(wt_gguf_type_info(1000, &name, &bs, &ts) == WT_ERR_UNSUPPORTED && !name && strstr(wt_last_error(), "1000"),
          "type info of an unknown id");
    CHECK(wt_gguf_open(tmp_path("nope.gguf"), &f) == WT_ERR_IO && !f, "missing file");
    wt_gguf_writer_destroy(w); /* releases its reference to t */
    wt_tensor_release(t);
    wt_tensor_release(bt);
    wt_tensor_release(big);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--sample") == 0) {
        wt_context_options o;
        wt_context_options_init(&o);
        o.backend = WT_BACKEND_CPU;
        if (wt_context_create(&o, &g_ctx) != WT_OK) return 2;
        bool ok = write_sample(argv[2]);
        wt_context_destroy(g_ctx);
        return ok ? 0 : 1;
    }
    test_run run;
    if (!test_begin(&run, "model_files_gguf", argc, argv)) return run.status;
    g_ctx = run.ctx;
    snprintf(g_dir, sizeof g_dir, "/tmp/wt_model_files_gguf_XXXXXX");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        test_end(&run);
        return 2;
    }
    round_trip();
    hand_built();
    writer_errors();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    return test_end(&run);
}
