/* Model files: .npy and safetensors round trips, files written byte by byte
 * the way NumPy and the safetensors reference write them, and malformed
 * files (truncated at every length, oversized offsets, wrong dtypes, bit
 * flips) that must fail cleanly.
 *
 *   model_files <cpu|vulkan|gles>
 */
#define _GNU_SOURCE /* memmem, mkdtemp */
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

/* ----------------------------------------------------------------- .npy */

/* A .npy file as NumPy writes it: version 1.0, dict padded with spaces to
 * a 64-byte boundary, then '\n'. */
static size_t make_npy(unsigned char *out, const char *dict, const void *data, size_t bytes)
{
    size_t n = strlen(dict), total = (10 + n + 1 + 63) / 64 * 64, hlen = total - 10;
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (unsigned char)(hlen & 0xff);
    out[9] = (unsigned char)(hlen >> 8);
    memcpy(out + 10, dict, n);
    memset(out + 10 + n, ' ', hlen - n - 1);
    out[total - 1] = '\n';
    memcpy(out + total, data, bytes);
    return total + bytes;
}

static void npy_round_trips(void)
{
    float f[6] = {1.5f, -2.0f, 0.0f, INFINITY, 3.25f, -0.5f};
    int64_t s23[2] = {2, 3};
    wt_tensor *t = NULL, *back = NULL;
    CHECK(wt_tensor_from_data(g_ctx, WT_F32, 2, s23, f, &t) == WT_OK, "from_data: %s", wt_last_error());
    CHECK(wt_npy_save(tmp_path("a.npy"), t) == WT_OK, "npy save: %s", wt_last_error());
    /* Byte for byte what NumPy writes for np.save of a float32 (2, 3). */
    unsigned char expect[256];
    size_t en = make_npy(expect, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f, sizeof f);
    size_t got_n = 0;
    unsigned char *got = test_read_file(tmp_path("a.npy"), &got_n);
    CHECK(got && got_n == en && memcmp(got, expect, en) == 0, "npy save: bytes differ from NumPy's layout");
    free(got);
    CHECK(wt_npy_load(g_ctx, tmp_path("a.npy"), &back) == WT_OK, "npy load: %s", wt_last_error());
    CHECK(back && wt_tensor_dtype(back) == WT_F32 && wt_tensor_ndim(back) == 2 && wt_tensor_shape(back)[1] == 3 &&
              test_same_tensor_bytes(back, f, sizeof f),
          "npy f32 round trip");
    wt_tensor_release(back);

    /* A transposed view is saved in its logical (row-major) order. */
    wt_tensor *tr = NULL;
    float ft[6] = {1.5f, INFINITY, -2.0f, 3.25f, 0.0f, -0.5f};
    CHECK(wt_transpose(t, 0, 1, &tr) == WT_OK, "transpose");
    CHECK(wt_npy_save(tmp_path("t.npy"), tr) == WT_OK, "npy save view: %s", wt_last_error());
    back = NULL;
    CHECK(wt_npy_load(g_ctx, tmp_path("t.npy"), &back) == WT_OK && wt_tensor_shape(back)[0] == 3 &&
              test_same_tensor_bytes(back, ft, sizeof ft),
          "npy view round trip");
    wt_tensor_release(back);
    wt_tensor_release(tr);
    wt_tensor_release(t);

    /* f16, i32, bool, 0-d, 1-d (the 1-tuple "(5,)"), empty. */
    uint16_t h[5] = {0x3c00, 0xc000, 0x7c00, 0x0001, 0x7bff};
    int32_t iv[5] = {0, -1, 2147483647, -2147483647 - 1, 42};
    uint8_t bv[5] = {1, 0, 0, 1, 1};
    struct { wt_dtype d; const void *data; size_t es; const char *descr; } cases[] = {
        {WT_F16, h, 2, "<f2"}, {WT_I32, iv, 4, "<i4"}, {WT_BOOL, bv, 1, "|b1"},
    };
    int64_t s5[1] = {5};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        t = back = NULL;
        CHECK(wt_tensor_from_data(g_ctx, cases[c].d, 1, s5, cases[c].data, &t) == WT_OK, "from_data %s: %s",
              cases[c].descr, wt_last_error());
        CHECK(wt_npy_save(tmp_path("c.npy"), t) == WT_OK, "save %s: %s", cases[c].descr, wt_last_error());
        char dict[128];
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (5,), }", cases[c].descr);
        en = make_npy(expect, dict, cases[c].data, 5 * cases[c].es);
        got = test_read_file(tmp_path("c.npy"), &got_n);
        CHECK(got && got_n == en && memcmp(got, expect, en) == 0, "npy %s bytes", cases[c].descr);
        free(got);
        CHECK(wt_npy_load(g_ctx, tmp_path("c.npy"), &back) == WT_OK && wt_tensor_dtype(back) == cases[c].d &&
                  test_same_tensor_bytes(back, cases[c].data, 5 * cases[c].es),
              "npy %s round trip: %s", cases[c].descr, wt_last_error());
        wt_tensor_release(back);
        wt_tensor_release(t);
    }
    float scalar = 7.0f;
    t = back = NULL;
    CHECK(wt_tensor_from_data(g_ctx, WT_F32, 0, NULL, &scalar, &t) == WT_OK, "0-d");
    CHECK(wt_npy_save(tmp_path("s.npy"), t) == WT_OK, "save 0-d");
    got = test_read_file(tmp_path("s.npy"), &got_n);
    CHECK(got && got_n > 60 && memmem(got, got_n, "'shape': ()", 11) != NULL, "0-d shape is ()");
    free(got);
    CHECK(wt_npy_load(g_ctx, tmp_path("s.npy"), &back) == WT_OK && wt_tensor_ndim(back) == 0 &&
              test_same_tensor_bytes(back, &scalar, 4),
          "0-d round trip");
    wt_tensor_release(back);
    wt_tensor_release(t);
    int64_t s03[2] = {0, 3};
    t = back = NULL;
    CHECK(wt_tensor_zeros(g_ctx, WT_F32, 2, s03, &t) == WT_OK, "empty");
    CHECK(wt_npy_save(tmp_path("e.npy"), t) == WT_OK, "save empty");
    CHECK(wt_npy_load(g_ctx, tmp_path("e.npy"), &back) == WT_OK && wt_tensor_numel(back) == 0 &&
              wt_tensor_shape(back)[1] == 3,
          "empty round trip");
    wt_tensor_release(back);
    wt_tensor_release(t);
}

static wt_status npy_load_mem(const void *data, size_t n, wt_tensor **out)
{
    *out = NULL;
    return wt_npy_load_memory(g_ctx, data, n, out);
}

static void npy_conversions_and_errors(void)
{
    unsigned char file[512];
    wt_tensor *t = NULL;
    /* Big-endian float32 and int32. */
    const unsigned char be_f[8] = {0x3f, 0xc0, 0, 0, 0xc0, 0x20, 0, 0}; /* 1.5, -2.5 */
    float le_f[2] = {1.5f, -2.5f};
    size_t n = make_npy(file, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", be_f, 8);
    CHECK(npy_load_mem(file, n, &t) == WT_OK && test_same_tensor_bytes(t, le_f, 8), "big-endian f4: %s", wt_last_error());
    wt_tensor_release(t);
    /* float64 rounds to f32; int64 narrows to i32; uint8 widens. */
    double d[3] = {0.1, -1e300, 3.0};
    float fd[3] = {0.1f, -INFINITY, 3.0f};
    n = make_npy(file, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", d, sizeof d);
    CHECK(npy_load_mem(file, n, &t) == WT_OK && wt_tensor_dtype(t) == WT_F32 && test_same_tensor_bytes(t, fd, sizeof fd),
          "f8 -> f32: %s", wt_last_error());
    wt_tensor_release(t);
    int64_t i8[3] = {-5, 2147483647, 7};
    int32_t i4[3] = {-5, 2147483647, 7};
    n = make_npy(file, "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", i8, sizeof i8);
    CHECK(npy_load_mem(file, n, &t) == WT_OK && wt_tensor_dtype(t) == WT_I32 && test_same_tensor_bytes(t, i4, sizeof i4),
          "i8 -> i32: %s", wt_last_error());
    wt_tensor_release(t);
    i8[1] = 2147483648LL;
    n = make_npy(file, "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", i8, sizeof i8);
    CHECK(npy_load_mem(file, n, &t) == WT_ERR_INVALID_ARGUMENT && !t && strstr(wt_last_error(), "int32"),
          "i8 out of int32 range refused: %s", wt_last_error());
    uint8_t u1[4] = {0, 255, 1, 128};
    int32_t u1w[4] = {0, 255, 1, 128};
    n = make_npy(file, "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2), }", u1, 4);
    CHECK(npy_load_mem(file, n, &t) == WT_OK && test_same_tensor_bytes(t, u1w, sizeof u1w), "u1 -> i32");
    wt_tensor_release(t);

    /* Refusals, each with its code. */
    float two[2] = {1, 2};
    struct { const char *dict; size_t bytes; wt_status want; const char *what; } bad[] = {
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8, WT_ERR_UNSUPPORTED, "Fortran"},
        {"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 8, WT_ERR_UNSUPPORTED, "object"},
        {"{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", 8, WT_ERR_UNSUPPORTED, "complex"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8, WT_ERR_UNSUPPORTED, "structured"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 8, WT_ERR_INVALID_ARGUMENT, "truncated data"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 8, WT_ERR_INVALID_ARGUMENT, "negative shape"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", 8,
         WT_ERR_INVALID_ARGUMENT, "overflowing shape"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 4, WT_ERR_UNSUPPORTED,
         "9 dimensions"},
        {"{'descr': '<f4', 'shape': (2,), }", 8, WT_ERR_INVALID_ARGUMENT, "missing key"},
        {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", 8, WT_ERR_INVALID_ARGUMENT, "bad bool"},
        {"['descr']", 8, WT_ERR_INVALID_ARGUMENT, "not a dict"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } x", 8, WT_ERR_INVALID_ARGUMENT, "trailing text"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        n = make_npy(file, bad[i].dict, two, bad[i].bytes);
        wt_status st = npy_load_mem(file, n, &t);
        CHECK(st == bad[i].want && !t, "npy %s: got %s (%s)", bad[i].what, wt_status_string(st), wt_last_error());
        wt_tensor_release(t);
    }
    /* Preamble faults. */
    n = make_npy(file, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", two, 8);
    unsigned char copy[512];
    memcpy(copy, file, n);
    copy[1] = 'X';
    CHECK(npy_load_mem(copy, n, &t) == WT_ERR_INVALID_ARGUMENT, "bad magic");
    memcpy(copy, file, n);
    copy[6] = 9;
    CHECK(npy_load_mem(copy, n, &t) == WT_ERR_UNSUPPORTED, "version 9");
    memcpy(copy, file, n);
    copy[8] = 0xff;
    copy[9] = 0x7f;
    CHECK(npy_load_mem(copy, n, &t) == WT_ERR_INVALID_ARGUMENT, "header length past the end");
    /* Every truncation of a good file fails cleanly; the whole file loads. */
    int clean = 0;
    for (size_t len = 0; len < n; len++) {
        wt_status st = npy_load_mem(file, len, &t);
        clean += st == WT_ERR_INVALID_ARGUMENT && !t;
        wt_tensor_release(t);
    }
    CHECK(clean == (int)n, "npy truncations: %d of %zu refused cleanly", clean, n);
    CHECK(wt_npy_load(g_ctx, tmp_path("does-not-exist.npy"), &t) == WT_ERR_IO && strstr(wt_last_error(), "does-not-exist"),
          "missing file: WT_ERR_IO naming the path: %s", wt_last_error());
    CHECK(wt_npy_load(g_ctx, g_dir, &t) == WT_ERR_IO, "a directory: %s", wt_last_error());
    CHECK(wt_npy_load(NULL, tmp_path("a.npy"), &t) == WT_ERR_INVALID_ARGUMENT, "NULL context");
    CHECK(wt_npy_load(g_ctx, tmp_path("a.npy"), NULL) == WT_ERR_INVALID_ARGUMENT, "NULL out");
    CHECK(wt_npy_save(NULL, NULL) == WT_ERR_INVALID_ARGUMENT, "save NULL");
}

/* ---------------------------------------------------------- safetensors */

/* A safetensors file from a header text and a data section. */
static size_t make_st(unsigned char *out, const char *json, const void *data, size_t bytes)
{
    uint64_t n = strlen(json);
    for (int i = 0; i < 8; i++) out[i] = (unsigned char)(n >> (8 * i));
    memcpy(out + 8, json, n);
    memcpy(out + 8 + n, data, bytes);
    return 8 + n + bytes;
}

static void st_round_trip(void)
{
    float w[6] = {1, 2, 3, 4, 5, 6};
    uint16_t hb[3] = {0x3c00, 0x4000, 0xbc00};
    int32_t ids[4] = {3, 1, 4, 1};
    uint8_t mask[3] = {1, 0, 1};
    int64_t s23[2] = {2, 3}, s3[1] = {3}, s4[1] = {4};
    wt_tensor *t[4] = {0};
    CHECK(wt_tensor_from_data(g_ctx, WT_F32, 2, s23, w, &t[0]) == WT_OK, "w");
    CHECK(wt_tensor_from_data(g_ctx, WT_F16, 1, s3, hb, &t[1]) == WT_OK, "h");
    CHECK(wt_tensor_from_data(g_ctx, WT_I32, 1, s4, ids, &t[2]) == WT_OK, "ids");
    CHECK(wt_tensor_from_data(g_ctx, WT_BOOL, 1, s3, mask, &t[3]) == WT_OK, "mask: %s", wt_last_error());
    const char *names[4] = {"model.layers.0.w", "h\"quoted\\", "ids", "mask"};
    const char *mk[1] = {"format"}, *mv[1] = {"pt"};
    CHECK(wt_safetensors_save(tmp_path("m.safetensors"), 4, names, t, 1, mk, mv) == WT_OK,
          "save: %s", wt_last_error());
    size_t fn_ = 0;
    unsigned char *raw = test_read_file(tmp_path("m.safetensors"), &fn_);
    uint64_t hlen = 0;
    for (int i = 7; raw && i >= 0; i--) hlen = hlen << 8 | raw[i];
    CHECK(raw && (8 + hlen) % 8 == 0 && fn_ == 8 + hlen + 24 + 6 + 16 + 3, "file layout (header %llu, size %zu)",
          (unsigned long long)hlen, fn_);
    free(raw);
    CHECK(access(tmp_path("m.safetensors.tmp"), F_OK) != 0, "no temporary left behind");

    wt_safetensors *f = NULL;
    CHECK(wt_safetensors_open(tmp_path("m.safetensors"), &f) == WT_OK, "open: %s", wt_last_error());
    if (!f) return;
    CHECK(wt_safetensors_count(f) == 4, "count %d", wt_safetensors_count(f));
    const char *meta = wt_safetensors_metadata(f, "format");
    CHECK(meta && strcmp(meta, "pt") == 0, "metadata");
    CHECK(wt_safetensors_metadata(f, "nope") == NULL, "absent metadata");
    wt_safetensors_entry e;
    CHECK(wt_safetensors_entry_at(f, 1, &e) == WT_OK && strcmp(e.name, "h\"quoted\\") == 0 &&
              strcmp(e.dtype, "F16") == 0 && e.ndim == 1 && e.shape[0] == 3 && e.data_begin == 24,
          "entry 1 (escaped name, offsets)");
    wt_tensor *all[4] = {0};
    CHECK(wt_safetensors_load_many(f, g_ctx, 4, NULL, WT_F32, all) == WT_OK, "load all: %s", wt_last_error());
    float h32[3] = {1, 2, -1};
    CHECK(all[0] && test_same_tensor_bytes(all[0], w, sizeof w), "F32 -> f32");
    CHECK(all[1] && wt_tensor_dtype(all[1]) == WT_F32 && test_same_tensor_bytes(all[1], h32, sizeof h32), "F16 -> f32");
    CHECK(all[2] && wt_tensor_dtype(all[2]) == WT_I32 && test_same_tensor_bytes(all[2], ids, sizeof ids), "I32");
    CHECK(all[3] && wt_tensor_dtype(all[3]) == WT_BOOL && test_same_tensor_bytes(all[3], mask, sizeof mask), "BOOL");
    for (int i = 0; i < 4; i++) wt_tensor_release(all[i]);
    const char *sub[2] = {"mask", "model.layers.0.w"};
    wt_tensor *two[2] = {0};
    uint16_t w16[6] = {0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600};
    CHECK(wt_safetensors_load_many(f, g_ctx, 2, sub, WT_F16, two) == WT_OK && wt_tensor_dtype(two[1]) == WT_F16 &&
              test_same_tensor_bytes(two[1], w16, sizeof w16) && test_same_tensor_bytes(two[0], mask, 3),
          "subset, F32 -> f16");
    wt_tensor_release(two[0]);
    wt_tensor_release(two[1]);
    const char *missing[2] = {"ids", "nope"};
    two[0] = two[1] = (wt_tensor *)1;
    CHECK(wt_safetensors_load_many(f, g_ctx, 2, missing, WT_F32, two) == WT_ERR_NOT_FOUND && !two[0] &&
              !two[1],
          "a missing name fails with WT_ERR_NOT_FOUND and keeps nothing");
    int idx = 7;
    CHECK(wt_safetensors_find(f, "nope", &idx) == WT_ERR_NOT_FOUND && idx == -1 && strstr(wt_last_error(), "nope"),
          "find of a missing name: WT_ERR_NOT_FOUND, index -1: %s", wt_last_error());
    CHECK(wt_safetensors_find(f, "ids", &idx) == WT_OK && idx >= 0, "find of a present name");
    wt_tensor *one = NULL;
    CHECK(wt_safetensors_load(f, g_ctx, "nope", WT_F32, &one) == WT_ERR_NOT_FOUND && !one, "load of a missing name");
    CHECK(wt_safetensors_load(f, g_ctx, "ids", WT_I32, &one) == WT_ERR_INVALID_ARGUMENT, "float_dtype i32 refused");
    CHECK(wt_safetensors_load(f, g_ctx, "ids", WT_F32, &one) == WT_OK, "load by name");
    wt_tensor_release(one);
    wt_safetensors_close(f);
    for (int i = 0; i < 4; i++) wt_tensor_release(t[i]);
}

static wt_status st_open_mem(const void *data, size_t n, wt_safetensors **f)
{
    *f = NULL;
    return wt_safetensors_open_memory(data, n, f);
}

static void st_conversions_and_errors(void)
{
    unsigned char file[1024];
    wt_safetensors *f = NULL;
    wt_tensor *t = NULL;
    /* BF16 (1.0, -2.0, 0.5) and I64 written by hand. */
    uint16_t bf[3] = {0x3f80, 0xc000, 0x3f00};
    int64_t i64[2] = {-7, 123456};
    unsigned char data[22];
    memcpy(data, bf, 6);
    memcpy(data + 6, i64, 16);
    size_t n = make_st(file,
                       "{\"b\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[0,6]},"
                       "\"i\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[6,22]},\"__metadata__\":{}}",
                       data, sizeof data);
    CHECK(st_open_mem(file, n, &f) == WT_OK, "bf16/i64 file: %s", wt_last_error());
    if (f) {
        float fb[3] = {1.0f, -2.0f, 0.5f};
        uint16_t hb[3] = {0x3c00, 0xc000, 0x3800};
        int32_t i32[2] = {-7, 123456};
        CHECK(wt_safetensors_load(f, g_ctx, "b", WT_F32, &t) == WT_OK && test_same_tensor_bytes(t, fb, sizeof fb),
              "BF16 -> f32");
        wt_tensor_release(t);
        CHECK(wt_safetensors_load(f, g_ctx, "b", WT_F16, &t) == WT_OK && test_same_tensor_bytes(t, hb, sizeof hb),
              "BF16 -> f16");
        wt_tensor_release(t);
        CHECK(wt_safetensors_load(f, g_ctx, "i", WT_F32, &t) == WT_OK && wt_tensor_dtype(t) == WT_I32 &&
                  test_same_tensor_bytes(t, i32, sizeof i32),
              "I64 -> i32");
        wt_tensor_release(t);
        wt_safetensors_close(f);
    }
    /* A file good but for one thing, each in turn. */
    unsigned char zeros[64] = {0};
    struct { const char *json; size_t bytes; wt_status want; const char *what; } bad[] = {
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4, WT_ERR_INVALID_ARGUMENT, "truncated data"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,9223372036854775807]}}", 8,
         WT_ERR_INVALID_ARGUMENT, "oversized offset"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8, WT_ERR_INVALID_ARGUMENT, "end before begin"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 16, WT_ERR_INVALID_ARGUMENT,
         "bytes do not match the shape"},
        {"{\"a\":{\"dtype\":\"F33\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, WT_ERR_INVALID_ARGUMENT, "unknown dtype"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 16, WT_ERR_INVALID_ARGUMENT, "overlap"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, WT_ERR_INVALID_ARGUMENT, "duplicate name"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, WT_ERR_INVALID_ARGUMENT, "negative dim"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}", 8, WT_ERR_INVALID_ARGUMENT, "float dim"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}", 8,
         WT_ERR_INVALID_ARGUMENT, "overflowing shape"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8, WT_ERR_INVALID_ARGUMENT, "missing offsets"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}", 8, WT_ERR_INVALID_ARGUMENT, "unclosed"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":[[[[[[[[[[1]]]]]]]]]]}}", 8,
         WT_ERR_INVALID_ARGUMENT, "nested too deeply"},
        {"{\"__metadata__\":{\"k\":1}}", 0, WT_ERR_INVALID_ARGUMENT, "metadata value not a string"},
        {"{\"a\\ud800\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}", 4, WT_ERR_INVALID_ARGUMENT,
         "unpaired surrogate"},
        {"[]", 0, WT_ERR_INVALID_ARGUMENT, "not an object"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4, WT_ERR_UNSUPPORTED,
         "9 dimensions"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        n = make_st(file, bad[i].json, zeros, bad[i].bytes);
        wt_status st = st_open_mem(file, n, &f);
        CHECK(st == bad[i].want && !f, "safetensors %s: got %s (%s)", bad[i].what, wt_status_string(st),
              wt_last_error());
        wt_safetensors_close(f);
    }
    /* Sizes read exactly where a double cannot hold them (2^53 + 1), and
     * a name with an escaped NUL refused (it would read as another). */
    n = make_st(file, "{\"z\":{\"dtype\":\"F32\",\"shape\":[9007199254740993,0],\"data_offsets\":[0,0]}}", NULL, 0);
    CHECK(st_open_mem(file, n, &f) == WT_OK, "a zero-size tensor with a large dim: %s", wt_last_error());
    if (f) {
        wt_safetensors_entry e;
        CHECK(wt_safetensors_entry_at(f, 0, &e) == WT_OK && e.ndim == 2 && e.shape[0] == 9007199254740993LL &&
                  e.shape[1] == 0,
              "2^53 + 1 read exactly");
        wt_safetensors_close(f);
    }
    n = make_st(file, "{\"a\\u0000b\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}", zeros, 4);
    CHECK(st_open_mem(file, n, &f) == WT_ERR_INVALID_ARGUMENT && !f, "a name with a NUL");
    /* Header length faults. */
    n = make_st(file, "{}", NULL, 0);
    file[0] = 200;
    CHECK(st_open_mem(file, n, &f) == WT_ERR_INVALID_ARGUMENT, "header length past the end");
    file[0] = 2;
    file[5] = 1; /* 2^40 + 2 */
    CHECK(st_open_mem(file, n, &f) == WT_ERR_INVALID_ARGUMENT && strstr(wt_last_error(), "100 MB"),
          "header length beyond the limit");
    /* A dtype the format has and webtensor lacks: opens, refuses to load. */
    n = make_st(file, "{\"u\":{\"dtype\":\"U32\",\"shape\":[2],\"data_offsets\":[0,8]}}", zeros, 8);
    CHECK(st_open_mem(file, n, &f) == WT_OK, "U32 opens");
    if (f) {
        CHECK(wt_safetensors_load(f, g_ctx, "u", WT_F32, &t) == WT_ERR_UNSUPPORTED && !t, "U32 load refused");
        wt_safetensors_close(f);
    }
    n = make_st(file, "{\"i\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}}", (int64_t[]){1LL << 40}, 8);
    CHECK(st_open_mem(file, n, &f) == WT_OK, "I64 opens");
    if (f) {
        CHECK(wt_safetensors_load(f, g_ctx, "i", WT_F32, &t) == WT_ERR_INVALID_ARGUMENT && !t, "I64 beyond int32");
        wt_safetensors_close(f);
    }

    /* Every prefix of a good file, and 2,000 seeded byte flips: never a
     * crash, each open and load either works or fails cleanly. */
    float vals[6] = {1, 2, 3, 4, 5, 6};
    n = make_st(file,
                "{\"__metadata__\":{\"a\":\"b\"},\"x\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
                "\"y\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[16,24]}}",
                vals, 24);
    int refused = 0;
    for (size_t len = 0; len < n; len++) {
        wt_status st = st_open_mem(file, len, &f);
        refused += st != WT_OK && !f;
        wt_safetensors_close(f);
    }
    CHECK(refused == (int)n, "safetensors truncations: %d of %zu refused", refused, n);
    CHECK(st_open_mem(file, n, &f) == WT_OK, "the whole file opens");
    wt_safetensors_close(f);
    test_rng_seed(test_seed());
    unsigned char mutant[1024];
    int opened = 0, loaded = 0;
    for (int iter = 0; iter < 2000; iter++) {
        memcpy(mutant, file, n);
        int flips = 1 + (int)(test_rng_next() % 3);
        for (int k = 0; k < flips; k++) mutant[test_rng_next() % n] = (unsigned char)test_rng_next();
        if (st_open_mem(mutant, n, &f) != WT_OK) continue;
        opened++;
        wt_tensor *ts[8] = {0};
        int cnt = wt_safetensors_count(f);
        if (cnt <= 8 && wt_safetensors_load_many(f, g_ctx, cnt, NULL, WT_F32, ts) == WT_OK) {
            loaded++;
            for (int k = 0; k < cnt; k++) wt_tensor_release(ts[k]);
        }
        wt_safetensors_close(f);
    }
    printf("safetensors mutations: 2000 tried, %d opened, %d loaded\n", opened, loaded);
    CHECK(opened > 0, "some mutants stay valid (the flips reach the data)");

    CHECK(wt_safetensors_open(tmp_path("nope.safetensors"), &f) == WT_ERR_IO && !f, "missing file");
    const char *dup[2] = {"a", "a"};
    wt_tensor *tt[2] = {0};
    int64_t s1[1] = {1};
    float one = 1;
    wt_tensor_from_data(g_ctx, WT_F32, 1, s1, &one, &tt[0]);
    tt[1] = tt[0];
    CHECK(wt_safetensors_save(tmp_path("d.safetensors"), 2, dup, tt, 0, NULL, NULL) ==
              WT_ERR_INVALID_ARGUMENT,
          "save: duplicate names refused");
    const char *meta_name[1] = {"__metadata__"};
    CHECK(wt_safetensors_save(tmp_path("d.safetensors"), 1, meta_name, tt, 0, NULL,
                              NULL) == WT_ERR_INVALID_ARGUMENT,
          "save: reserved name refused");
    CHECK(wt_safetensors_save("/nonexistent-dir/x.safetensors", 1, dup, tt, 0, NULL,
                              NULL) == WT_ERR_IO,
          "save: unwritable path");
    CHECK(wt_npy_save("/nonexistent-dir/x.npy", tt[0]) == WT_ERR_IO && strstr(wt_last_error(), "nonexistent-dir"),
          "npy save: unwritable path: %s", wt_last_error());
    wt_tensor_release(tt[0]);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "model_files", argc, argv)) return run.status;
    g_ctx = run.ctx;
    snprintf(g_dir, sizeof g_dir, "/tmp/wt_model_files_XXXXXX");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        test_end(&run);
        return 2;
    }
    npy_round_trips();
    npy_conversions_and_errors();
    st_round_trip();
    st_conversions_and_errors();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    return test_end(&run);
}
