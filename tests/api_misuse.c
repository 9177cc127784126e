/* api_misuse <cpu|vulkan>: every public function called wrongly — NULLs,
 * wrong shapes, bad axes, bad ranks and dims, huge sizes, unsupported
 * dtypes, tensors of two contexts in one op, short read buffers. Each call
 * must return the right code, leave a message in wt_last_error(), set its
 * out-pointer to NULL and not crash. Also the refcount promises of the
 * header: views keep storage alive, a destroyed context's tensors stay
 * readable. Run under valgrind (CPU) to catch leaks on error paths. */
#include "test_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where a call must write NULL on failure; never dereferenced. */
#define POISON ((wt_tensor *)(uintptr_t)0x10)

static const char *g_mode;

/* The status must be one of up to two codes (want2 = WT_OK: only want)
 * and carry a message. */
static bool expect_code(wt_status got, wt_status want, wt_status want2, const char *what)
{
    bool ok = got == want || (want2 != WT_OK && got == want2);
    if (want2 != WT_OK)
        CHECK(ok, "%s [%s]: returned %s, expected %s or %s", what, g_mode, wt_status_string(got),
              wt_status_string(want), wt_status_string(want2));
    else
        CHECK(ok, "%s [%s]: returned %s, expected %s", what, g_mode, wt_status_string(got),
              wt_status_string(want));
    if (got != WT_OK)
        CHECK(wt_last_error() && wt_last_error()[0], "%s [%s]: failed with an empty wt_last_error()",
              what, g_mode);
    return ok;
}

/* Calls `call` (which writes through &o), checks the code, that *out was
 * set to NULL on failure, and releases anything made by mistake. */
#define EXPECT_T2(call, want, want2, what)                                                  \
    do {                                                                                    \
        wt_tensor *o = POISON;                                                              \
        wt_status s_ = (call);                                                              \
        expect_code(s_, want, want2, what);                                                 \
        if (s_ != WT_OK)                                                                    \
            CHECK(o == NULL, "%s [%s]: *out not set to NULL on failure", what, g_mode);     \
        else if (o != POISON)                                                               \
            wt_tensor_release(o);                                                           \
    } while (0)
#define EXPECT_T(call, want, what) EXPECT_T2(call, want, WT_OK, what)

static wt_tensor *make(wt_context *ctx, int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    float *data = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        data[i] = (float)(i + 1);
    wt_tensor *t = NULL;
    wt_status s = wt_tensor_from_data(ctx, WT_F32, ndim, shape, data, &t);
    CHECK(s == WT_OK, "from_data for a test input failed: %s (%s)", wt_status_string(s),
          wt_last_error());
    free(data);
    return t;
}

/* ------------------------------------------------------ status, version */

static void test_status_and_version(void)
{
    static const struct { wt_status s; const char *name; } codes[] = {
        {WT_OK, "WT_OK"},
        {WT_ERR_INVALID_ARGUMENT, "WT_ERR_INVALID_ARGUMENT"},
        {WT_ERR_SHAPE, "WT_ERR_SHAPE"},
        {WT_ERR_OUT_OF_MEMORY, "WT_ERR_OUT_OF_MEMORY"},
        {WT_ERR_NO_DEVICE, "WT_ERR_NO_DEVICE"},
        {WT_ERR_DEVICE_LOST, "WT_ERR_DEVICE_LOST"},
        {WT_ERR_UNSUPPORTED, "WT_ERR_UNSUPPORTED"},
        {WT_ERR_SHADER, "WT_ERR_SHADER"},
        {WT_ERR_BACKEND, "WT_ERR_BACKEND"},
        {WT_ERR_IO, "WT_ERR_IO"},
        {WT_ERR_NOT_FOUND, "WT_ERR_NOT_FOUND"},
    };
    /* Appended codes: the earlier ones keep their values. */
    CHECK(WT_ERR_BACKEND == -8 && WT_ERR_IO == -9 && WT_ERR_NOT_FOUND == -10,
          "status values moved: BACKEND %d, IO %d, NOT_FOUND %d", (int)WT_ERR_BACKEND, (int)WT_ERR_IO,
          (int)WT_ERR_NOT_FOUND);
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        const char *n = wt_status_string(codes[i].s);
        CHECK(n && !strcmp(n, codes[i].name), "wt_status_string(%d) is \"%s\", expected \"%s\"",
              (int)codes[i].s, n ? n : "(null)", codes[i].name);
    }
    const char *unknown = wt_status_string((wt_status)-99);
    CHECK(unknown && unknown[0], "wt_status_string of an unknown code is NULL or empty");
    unknown = wt_status_string((wt_status)7);
    CHECK(unknown != NULL, "wt_status_string(7) is NULL");
    CHECK(wt_version() && !strcmp(wt_version(), WT_VERSION_STRING),
          "wt_version() is \"%s\", header says \"%s\"", wt_version() ? wt_version() : "(null)",
          WT_VERSION_STRING);
    CHECK(wt_last_error() != NULL, "wt_last_error() is NULL");
    CHECK(wt_dtype_size(WT_F32) == 4 && wt_dtype_size(WT_F16) == 2 && wt_dtype_size(WT_I32) == 4,
          "wt_dtype_size of F32/F16/I32");
    CHECK(wt_dtype_size((wt_dtype)99) == 0, "wt_dtype_size of an unknown dtype is not 0");
}

/* wt_context_create must fail with want (or want2), set *out to NULL,
 * and leave nothing behind if it wrongly succeeds. */
static void expect_create_fails(const wt_context_options *opts, wt_status want, wt_status want2,
                                const char *what)
{
    wt_context *c = (wt_context *)(uintptr_t)0x10;
    wt_status s = wt_context_create(opts, &c);
    expect_code(s, want, want2, what);
    if (s != WT_OK)
        CHECK(c == NULL, "%s [%s]: *out not set to NULL on failure", what, g_mode);
    else
        wt_context_destroy(c);
}

/* -------------------------------------------------------------- context */

static void test_context(test_backend b, wt_context *ctx)
{
    wt_context_options_init(NULL); /* must not crash */
    wt_context_options opts;

    expect_code(wt_context_create(NULL, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "wt_context_create(NULL, NULL)");

    wt_context_options_init(&opts);
    opts.backend = (wt_backend)99;
    expect_create_fails(&opts, WT_ERR_INVALID_ARGUMENT, WT_OK, "wt_context_create(backend 99)");

    wt_context_options_init(&opts);
    opts.backend = WT_BACKEND_CPU;
    opts.num_threads = -3;
    expect_create_fails(&opts, WT_ERR_INVALID_ARGUMENT, WT_OK,
                        "wt_context_create(num_threads -3)");

    wt_context_options_init(&opts);
    opts.backend = WT_BACKEND_WEBGPU;
    opts.webgpu_library = "/nonexistent.so";
    expect_create_fails(&opts, WT_ERR_NO_DEVICE, WT_OK,
                        "wt_context_create(webgpu_library=/nonexistent.so)");

    int count = -1;
    expect_code(wt_list_adapters(&opts, NULL, 0, &count), WT_ERR_NO_DEVICE, WT_OK,
                "wt_list_adapters(/nonexistent.so)");
    /* Arguments are checked before any library is loaded (so these stay
     * INVALID_ARGUMENT with an unloadable library). */
    wt_adapter_info infos[2];
    expect_code(wt_list_adapters(&opts, infos, 2, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "wt_list_adapters(count NULL)");
    expect_code(wt_list_adapters(&opts, infos, -1, &count), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "wt_list_adapters(capacity -1)");
    expect_code(wt_list_adapters(&opts, NULL, 2, &count), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "wt_list_adapters(infos NULL, capacity 2)");

    if (b != TEST_BACKEND_CPU) {
        /* These load the WebGPU library; not under valgrind's CPU run. */
        wt_context_options_init(&opts);
        opts.backend = WT_BACKEND_WEBGPU;
        opts.gpu_api = (wt_gpu_api)77;
        expect_create_fails(&opts, WT_ERR_INVALID_ARGUMENT, WT_OK, "wt_context_create(gpu_api 77)");

        wt_context_options_init(&opts);
        opts.backend = WT_BACKEND_WEBGPU;
        opts.adapter_index = 1000;
        expect_create_fails(&opts, WT_ERR_NO_DEVICE, WT_ERR_INVALID_ARGUMENT,
                            "wt_context_create(adapter_index 1000)");

        count = -1;
        expect_code(wt_list_adapters(NULL, NULL, 0, &count), WT_OK, WT_OK,
                    "wt_list_adapters(NULL, NULL, 0, &count)");
        CHECK(count >= 1, "wt_list_adapters finds %d adapters, expected at least 1", count);
    }

    wt_context_destroy(NULL);
    expect_code(wt_context_sync(NULL), WT_ERR_INVALID_ARGUMENT, WT_OK, "wt_context_sync(NULL)");
    CHECK(wt_context_backend(NULL) == WT_BACKEND_AUTO, "wt_context_backend(NULL) is not AUTO");
    wt_memory_stats st;
    expect_code(wt_context_memory_stats(NULL, &st), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "wt_context_memory_stats(NULL, &st)");
    expect_code(wt_context_memory_stats(ctx, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "wt_context_memory_stats(ctx, NULL)");
    expect_code(wt_context_trim(NULL), WT_ERR_INVALID_ARGUMENT, WT_OK, "wt_context_trim(NULL)");
    expect_code(wt_context_trim(ctx), WT_OK, WT_OK, "wt_context_trim(ctx)");

    wt_adapter_info info;
    expect_code(wt_context_adapter_info(NULL, &info), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "wt_context_adapter_info(NULL, &info)");
    expect_code(wt_context_adapter_info(ctx, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "wt_context_adapter_info(ctx, NULL)");
    if (b == TEST_BACKEND_CPU)
        expect_code(wt_context_adapter_info(ctx, &info), WT_ERR_UNSUPPORTED, WT_OK,
                    "wt_context_adapter_info(cpu context)");
}

/* ---------------------------------------------------------------- timer */

/* The GPU timer's NULLs and ordering: begin twice, end without begin, and
 * UNSUPPORTED where there are no timestamp queries (CPU, OpenGL ES). */
static void test_timer(test_backend b, wt_context *ctx)
{
    double t = -1;
    expect_code(wt_context_timer_begin(NULL), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "wt_context_timer_begin(NULL)");
    expect_code(wt_context_timer_end(NULL, &t), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "wt_context_timer_end(NULL, &t)");
    CHECK(t == 0, "wt_context_timer_end(NULL, &t) left %g in *gpu_seconds, expected 0", t);
    expect_code(wt_context_timer_end(ctx, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "wt_context_timer_end(ctx, NULL)");

    wt_adapter_info info;
    bool timestamps = b != TEST_BACKEND_CPU && wt_context_adapter_info(ctx, &info) == WT_OK &&
                      info.timestamp_query;
    if (!timestamps) {
        expect_code(wt_context_timer_begin(ctx), WT_ERR_UNSUPPORTED, WT_OK,
                    "wt_context_timer_begin(no timestamp queries)");
        t = -1;
        expect_code(wt_context_timer_end(ctx, &t), WT_ERR_UNSUPPORTED, WT_OK,
                    "wt_context_timer_end(no timestamp queries)");
        CHECK(t == 0, "wt_context_timer_end failed but left %g in *gpu_seconds", t);
        return;
    }
    t = -1;
    expect_code(wt_context_timer_end(ctx, &t), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "wt_context_timer_end without begin");
    CHECK(t == 0, "wt_context_timer_end failed but left %g in *gpu_seconds", t);
    expect_code(wt_context_timer_begin(ctx), WT_OK, WT_OK, "wt_context_timer_begin");
    expect_code(wt_context_timer_begin(ctx), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "wt_context_timer_begin while a timer runs");
    /* The failed second begin leaves the first timer running. */
    const int64_t s4[1] = {4};
    wt_tensor *x = make(ctx, 1, s4), *y = NULL;
    if (x)
        CHECK(wt_exp(x, &y) == WT_OK, "exp under a timer: %s", wt_last_error());
    t = -1;
    expect_code(wt_context_timer_end(ctx, &t), WT_OK, WT_OK, "wt_context_timer_end");
    /* Loose: llvmpipe compiles a shader when it first runs it, inside the
     * pass, which takes seconds under valgrind. A misread timestamp is 0
     * or astronomically large. */
    CHECK(t > 0 && t < 600.0, "one timed exp took %g s on the GPU, expected (0, 600)", t);
    expect_code(wt_context_timer_end(ctx, &t), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "wt_context_timer_end twice");
    wt_tensor_release(y);
    wt_tensor_release(x);
}

/* ------------------------------------------------------------- creation */

static void test_creation(wt_context *ctx)
{
    const int64_t s23[2] = {2, 3}, sneg[2] = {2, -3}, s9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    const int64_t huge[2] = {INT64_C(1) << 31, INT64_C(1) << 31};      /* 2^62 elements */
    const int64_t tera[2] = {INT64_C(1) << 20, INT64_C(1) << 20};      /* 2^40 elements */
    const int64_t overflow[3] = {INT64_C(1) << 62, INT64_C(1) << 62, 4}; /* overflows int64 */
    const int64_t s0[2] = {3, 0};
    float data[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

    EXPECT_T(wt_tensor_from_data(NULL, WT_F32, 2, s23, data, &o), WT_ERR_INVALID_ARGUMENT,
             "from_data(ctx NULL)");
    expect_code(wt_tensor_from_data(ctx, WT_F32, 2, s23, data, NULL), WT_ERR_INVALID_ARGUMENT,
                WT_OK, "from_data(out NULL)");
    EXPECT_T(wt_tensor_from_data(ctx, WT_F32, 2, NULL, data, &o), WT_ERR_INVALID_ARGUMENT,
             "from_data(shape NULL)");
    EXPECT_T(wt_tensor_from_data(ctx, WT_F32, 2, s23, NULL, &o), WT_ERR_INVALID_ARGUMENT,
             "from_data(data NULL)");
    EXPECT_T(wt_tensor_from_data(ctx, WT_F32, 9, s9, data, &o), WT_ERR_INVALID_ARGUMENT,
             "from_data(ndim 9)");
    EXPECT_T(wt_tensor_from_data(ctx, WT_F32, -1, s23, data, &o), WT_ERR_INVALID_ARGUMENT,
             "from_data(ndim -1)");
    EXPECT_T(wt_tensor_from_data(ctx, WT_F32, 2, sneg, data, &o), WT_ERR_INVALID_ARGUMENT,
             "from_data(negative dim)");
    EXPECT_T(wt_tensor_from_data(ctx, (wt_dtype)7, 2, s23, data, &o), WT_ERR_INVALID_ARGUMENT,
             "from_data(dtype 7)");
    EXPECT_T2(wt_tensor_from_data(ctx, WT_F32, 2, huge, data, &o), WT_ERR_OUT_OF_MEMORY,
              WT_ERR_INVALID_ARGUMENT, "from_data(2^62 elements)");
    EXPECT_T2(wt_tensor_from_data(ctx, WT_F32, 3, overflow, data, &o), WT_ERR_INVALID_ARGUMENT,
              WT_ERR_OUT_OF_MEMORY, "from_data(element count overflows)");
    /* Empty tensors need no data; 0-d tensors no shape. */
    EXPECT_T(wt_tensor_from_data(ctx, WT_F32, 2, s0, NULL, &o), WT_OK, "from_data([3,0], data NULL)");
    EXPECT_T(wt_tensor_from_data(ctx, WT_F32, 0, NULL, data, &o), WT_OK, "from_data(0-d, shape NULL)");

    EXPECT_T(wt_tensor_zeros(NULL, WT_F32, 2, s23, &o), WT_ERR_INVALID_ARGUMENT, "zeros(ctx NULL)");
    expect_code(wt_tensor_zeros(ctx, WT_F32, 2, s23, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "zeros(out NULL)");
    EXPECT_T(wt_tensor_zeros(ctx, WT_F32, 2, NULL, &o), WT_ERR_INVALID_ARGUMENT, "zeros(shape NULL)");
    EXPECT_T(wt_tensor_zeros(ctx, WT_F32, 9, s9, &o), WT_ERR_INVALID_ARGUMENT, "zeros(ndim 9)");
    EXPECT_T(wt_tensor_zeros(ctx, WT_F32, -2, s23, &o), WT_ERR_INVALID_ARGUMENT, "zeros(ndim -2)");
    EXPECT_T(wt_tensor_zeros(ctx, WT_F32, 2, sneg, &o), WT_ERR_INVALID_ARGUMENT, "zeros(negative dim)");
    EXPECT_T(wt_tensor_zeros(ctx, (wt_dtype)-1, 2, s23, &o), WT_ERR_INVALID_ARGUMENT, "zeros(dtype -1)");
    EXPECT_T2(wt_tensor_zeros(ctx, WT_F32, 2, huge, &o), WT_ERR_OUT_OF_MEMORY, WT_ERR_INVALID_ARGUMENT,
              "zeros(2^62 elements)");
    EXPECT_T2(wt_tensor_zeros(ctx, WT_F32, 2, tera, &o), WT_ERR_OUT_OF_MEMORY, WT_ERR_INVALID_ARGUMENT,
              "zeros(2^40 elements)");
    EXPECT_T2(wt_tensor_zeros(ctx, WT_F32, 3, overflow, &o), WT_ERR_INVALID_ARGUMENT,
              WT_ERR_OUT_OF_MEMORY, "zeros(element count overflows)");

    EXPECT_T(wt_tensor_full(NULL, WT_F32, 2, s23, 1.0, &o), WT_ERR_INVALID_ARGUMENT, "full(ctx NULL)");
    expect_code(wt_tensor_full(ctx, WT_F32, 2, s23, 1.0, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "full(out NULL)");
    EXPECT_T(wt_tensor_full(ctx, WT_F32, 2, NULL, 1.0, &o), WT_ERR_INVALID_ARGUMENT, "full(shape NULL)");
    EXPECT_T(wt_tensor_full(ctx, WT_F32, 9, s9, 1.0, &o), WT_ERR_INVALID_ARGUMENT, "full(ndim 9)");
    EXPECT_T(wt_tensor_full(ctx, WT_F32, 2, sneg, 1.0, &o), WT_ERR_INVALID_ARGUMENT, "full(negative dim)");
    EXPECT_T(wt_tensor_full(ctx, (wt_dtype)4, 2, s23, 1.0, &o), WT_ERR_INVALID_ARGUMENT, "full(dtype 4)");
    EXPECT_T2(wt_tensor_full(ctx, WT_F32, 2, huge, 1.0, &o), WT_ERR_OUT_OF_MEMORY,
              WT_ERR_INVALID_ARGUMENT, "full(2^62 elements)");

    EXPECT_T(wt_tensor_zeros(ctx, WT_F16, 2, s23, &o), WT_OK, "zeros(WT_F16)");
    EXPECT_T(wt_tensor_zeros(ctx, WT_I32, 2, s23, &o), WT_OK, "zeros(WT_I32)");
    EXPECT_T(wt_tensor_zeros(ctx, WT_BOOL, 2, s23, &o), WT_OK, "zeros(WT_BOOL)");
    EXPECT_T(wt_tensor_from_data(ctx, WT_I32, 2, s23, data, &o), WT_OK, "from_data(WT_I32)");
    wt_tensor *i32 = NULL, *f32 = make(ctx, 2, s23);
    if (wt_tensor_zeros(ctx, WT_I32, 2, s23, &i32) == WT_OK && f32) {
        CHECK(wt_tensor_dtype(i32) == WT_I32, "an I32 tensor reports dtype %d", (int)wt_tensor_dtype(i32));
        /* Refused, or promoted to f32. */
        EXPECT_T2(wt_add(i32, f32, &o), WT_OK, WT_ERR_UNSUPPORTED, "add(I32, F32)");
    }
    wt_tensor_release(i32);

    /* wt_cast: NULLs, unknown and unsupported dtypes. */
    EXPECT_T(wt_cast(NULL, WT_F16, &o), WT_ERR_INVALID_ARGUMENT, "cast(x NULL)");
    if (f32) {
        expect_code(wt_cast(f32, WT_F16, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK, "cast(out NULL)");
        EXPECT_T(wt_cast(f32, (wt_dtype)4, &o), WT_ERR_INVALID_ARGUMENT, "cast(dtype 4)");
        EXPECT_T(wt_cast(f32, (wt_dtype)-1, &o), WT_ERR_INVALID_ARGUMENT, "cast(dtype -1)");
        EXPECT_T(wt_cast(f32, WT_I32, &o), WT_OK, "cast(to WT_I32)");
        EXPECT_T(wt_cast(f32, WT_BOOL, &o), WT_OK, "cast(to WT_BOOL)");
        EXPECT_T(wt_cast(f32, WT_F16, &o), WT_OK, "cast(to WT_F16)");
        EXPECT_T(wt_cast(f32, WT_F32, &o), WT_OK, "cast(to WT_F32)");
    }
    wt_tensor_release(f32);
}

/* ----------------------------------------------------- reads and getters */

static void test_read_and_getters(wt_context *ctx)
{
    const int64_t s23[2] = {2, 3};
    wt_tensor *t = make(ctx, 2, s23);
    if (!t)
        return;
    float buf[8];
    for (int i = 0; i < 8; i++)
        buf[i] = -7.0f;
    expect_code(wt_tensor_read(NULL, buf, sizeof buf), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "wt_tensor_read(NULL, ...)");
    expect_code(wt_tensor_read(t, NULL, sizeof buf), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "wt_tensor_read(t, NULL, ...)");
    expect_code(wt_tensor_read(t, buf, 6 * sizeof(float) - 1), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "wt_tensor_read(dst 1 byte too small)");
    expect_code(wt_tensor_read(t, buf, 0), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "wt_tensor_read(dst_bytes 0)");
    bool untouched = true;
    for (int i = 0; i < 8; i++)
        untouched &= buf[i] == -7.0f;
    CHECK(untouched, "a failed wt_tensor_read wrote into dst");
    expect_code(wt_tensor_read(t, buf, 6 * sizeof(float)), WT_OK, WT_OK, "wt_tensor_read(exact size)");
    CHECK(buf[0] == 1.0f && buf[5] == 6.0f && buf[6] == -7.0f, "wt_tensor_read(exact size) values");

    /* Getters on NULL must not crash; their values are only printed. */
    const int64_t *sh = wt_tensor_shape(NULL), *st = wt_tensor_strides(NULL);
    printf("getters on NULL: ndim %d, shape %p, strides %p, offset %" PRId64 ", numel %" PRId64
           ", dtype %d, contiguous %d, context %p\n",
           wt_tensor_ndim(NULL), (const void *)sh, (const void *)st, wt_tensor_offset(NULL),
           wt_tensor_numel(NULL), (int)wt_tensor_dtype(NULL), (int)wt_tensor_is_contiguous(NULL),
           (void *)wt_tensor_context(NULL));
    wt_tensor_retain(NULL);
    wt_tensor_release(NULL);
    CHECK(wt_tensor_context(t) == ctx, "wt_tensor_context is not the creating context");
    CHECK(wt_tensor_numel(t) == 6 && wt_tensor_is_contiguous(t) && wt_tensor_offset(t) == 0,
          "numel/contiguous/offset of a fresh [2,3] tensor");
    wt_tensor_release(t);
}

/* ----------------------------------------------------------------- views */

/* Sizes at the edge of int64: found by review, each once a silent wrong
 * result. */
static void test_overflow_edges(wt_context *ctx)
{
    const int64_t s5[1] = {5}, s00[2] = {0, 0}, huge2[2] = {(int64_t)1 << 32, (int64_t)1 << 32};
    wt_tensor *x = make(ctx, 1, s5);
    wt_tensor *e = make(ctx, 2, s00);
    if (x) {
        wt_tensor *v = NULL;
        /* x[0:5:INT64_MAX-1] is one element, not a negative count. */
        if (expect_code(wt_slice(x, 0, 0, 5, INT64_MAX - 1, &v), WT_OK, WT_OK, "slice(huge step)")) {
            CHECK(wt_tensor_numel(v) == 1 && wt_tensor_shape(v)[0] == 1,
                  "slice(huge step) [%s]: numel %lld, expected 1", g_mode,
                  (long long)wt_tensor_numel(v));
            wt_tensor_release(v);
        }
        wt_tensor *x1 = NULL;
        if (wt_slice(x, 0, 0, 1, 1, &x1) == WT_OK) {
            EXPECT_T(wt_expand(x1, 2, huge2, &o), WT_ERR_SHAPE, "expand to 2^64 elements");
            wt_tensor_release(x1);
        }
    }
    if (e) {
        /* max over an empty axis with an empty result is fine (NumPy). */
        int axis = 1;
        EXPECT_T(wt_max(e, 1, &axis, false, &o), WT_OK, "max([0,0], axis 1)");
    }
    wt_context_options opts;
    wt_context_options_init(&opts);
    opts.backend = WT_BACKEND_CPU;
    opts.num_threads = 100000;
    wt_context *c = (wt_context *)&opts;
    expect_code(wt_context_create(&opts, &c), WT_ERR_INVALID_ARGUMENT, WT_OK,
                "context_create(num_threads 100000)");
    CHECK(c == NULL, "context_create(num_threads 100000) [%s]: ctx not NULL", g_mode);
    wt_tensor_release(x);
    wt_tensor_release(e);
}

static void test_views(wt_context *ctx)
{
    const int64_t s23[2] = {2, 3}, s9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    wt_tensor *t = make(ctx, 2, s23);
    if (!t)
        return;
    const int64_t two_infer[2] = {-1, -1}, mismatch[2] = {4, 2}, neg2[2] = {-2, -3},
                  not_divisible[2] = {4, -1}, s6[1] = {6};

    EXPECT_T(wt_reshape(NULL, 1, s6, &o), WT_ERR_INVALID_ARGUMENT, "reshape(NULL)");
    expect_code(wt_reshape(t, 1, s6, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK, "reshape(out NULL)");
    EXPECT_T(wt_reshape(t, 2, NULL, &o), WT_ERR_INVALID_ARGUMENT, "reshape(shape NULL)");
    EXPECT_T(wt_reshape(t, 9, s9, &o), WT_ERR_INVALID_ARGUMENT, "reshape(ndim 9)");
    EXPECT_T(wt_reshape(t, -1, s6, &o), WT_ERR_INVALID_ARGUMENT, "reshape(ndim -1)");
    EXPECT_T2(wt_reshape(t, 2, two_infer, &o), WT_ERR_INVALID_ARGUMENT, WT_ERR_SHAPE,
              "reshape(two -1)");
    EXPECT_T(wt_reshape(t, 2, mismatch, &o), WT_ERR_SHAPE, "reshape(8 elements from 6)");
    EXPECT_T(wt_reshape(t, 2, not_divisible, &o), WT_ERR_SHAPE, "reshape([4,-1] from 6)");
    EXPECT_T2(wt_reshape(t, 2, neg2, &o), WT_ERR_INVALID_ARGUMENT, WT_ERR_SHAPE, "reshape(dim -2)");

    const int perm_rep[2] = {0, 0}, perm_oob[2] = {0, 2}, perm_neg[2] = {-3, 0};
    EXPECT_T(wt_permute(NULL, perm_rep, &o), WT_ERR_INVALID_ARGUMENT, "permute(NULL)");
    EXPECT_T(wt_permute(t, NULL, &o), WT_ERR_INVALID_ARGUMENT, "permute(perm NULL)");
    EXPECT_T(wt_permute(t, perm_rep, &o), WT_ERR_INVALID_ARGUMENT, "permute(repeated axis)");
    EXPECT_T(wt_permute(t, perm_oob, &o), WT_ERR_INVALID_ARGUMENT, "permute(axis 2 of 2-d)");
    EXPECT_T(wt_permute(t, perm_neg, &o), WT_ERR_INVALID_ARGUMENT, "permute(axis -3 of 2-d)");
    expect_code(wt_permute(t, perm_oob, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK, "permute(out NULL)");

    EXPECT_T(wt_transpose(NULL, 0, 1, &o), WT_ERR_INVALID_ARGUMENT, "transpose(NULL)");
    EXPECT_T(wt_transpose(t, 0, 2, &o), WT_ERR_INVALID_ARGUMENT, "transpose(axis 2 of 2-d)");
    EXPECT_T(wt_transpose(t, -3, 0, &o), WT_ERR_INVALID_ARGUMENT, "transpose(axis -3 of 2-d)");
    expect_code(wt_transpose(t, 0, 1, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK, "transpose(out NULL)");

    EXPECT_T(wt_slice(NULL, 0, 0, 1, 1, &o), WT_ERR_INVALID_ARGUMENT, "slice(NULL)");
    EXPECT_T(wt_slice(t, 2, 0, 1, 1, &o), WT_ERR_INVALID_ARGUMENT, "slice(axis 2 of 2-d)");
    EXPECT_T(wt_slice(t, -3, 0, 1, 1, &o), WT_ERR_INVALID_ARGUMENT, "slice(axis -3 of 2-d)");
    EXPECT_T(wt_slice(t, 0, 0, 1, 0, &o), WT_ERR_INVALID_ARGUMENT, "slice(step 0)");
    EXPECT_T(wt_slice(t, 0, 0, 1, -1, &o), WT_ERR_INVALID_ARGUMENT, "slice(step -1)");
    expect_code(wt_slice(t, 0, 0, 1, 1, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK, "slice(out NULL)");

    const int64_t bad_expand[2] = {2, 4}, fewer[1] = {3}, neg_expand[2] = {2, -5};
    EXPECT_T(wt_expand(NULL, 2, s23, &o), WT_ERR_INVALID_ARGUMENT, "expand(NULL)");
    EXPECT_T(wt_expand(t, 2, NULL, &o), WT_ERR_INVALID_ARGUMENT, "expand(shape NULL)");
    EXPECT_T(wt_expand(t, 2, bad_expand, &o), WT_ERR_SHAPE, "expand([2,3] to [2,4])");
    EXPECT_T(wt_expand(t, 1, fewer, &o), WT_ERR_SHAPE, "expand([2,3] to [3])");
    EXPECT_T(wt_expand(t, 9, s9, &o), WT_ERR_INVALID_ARGUMENT, "expand(ndim 9)");
    EXPECT_T2(wt_expand(t, 2, neg_expand, &o), WT_ERR_INVALID_ARGUMENT, WT_ERR_SHAPE,
              "expand(dim -5)");
    expect_code(wt_expand(t, 2, s23, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK, "expand(out NULL)");

    /* A huge view costs no memory, but anything that materialises it
     * must fail cleanly. */
    const int64_t huge[2] = {INT64_C(1) << 31, INT64_C(1) << 31};
    EXPECT_T(wt_reshape(t, 2, huge, &o), WT_ERR_SHAPE, "reshape(6 elements to 2^62)");
    wt_tensor *one = NULL, *big = NULL;
    const int64_t s11[2] = {1, 1};
    if (wt_reshape(t, 1, s6, &one) == WT_OK) {
        wt_tensor *first = NULL;
        if (wt_slice(one, 0, 0, 1, 1, &first) == WT_OK &&
            wt_reshape(first, 2, s11, &big) == WT_OK) {
            wt_tensor *v = NULL;
            wt_status s = wt_expand(big, 2, huge, &v);
            expect_code(s, WT_OK, WT_ERR_INVALID_ARGUMENT, "expand([1,1] to 2^62 elements)");
            if (s == WT_OK) {
                EXPECT_T2(wt_neg(v, &o), WT_ERR_OUT_OF_MEMORY, WT_ERR_INVALID_ARGUMENT,
                          "neg of a 2^62-element view");
                EXPECT_T2(wt_copy(v, &o), WT_ERR_OUT_OF_MEMORY, WT_ERR_INVALID_ARGUMENT,
                          "copy of a 2^62-element view");
                float small[4];
                expect_code(wt_tensor_read(v, small, sizeof small), WT_ERR_INVALID_ARGUMENT, WT_OK,
                            "read of a 2^62-element view into 16 bytes");
            }
            wt_tensor_release(v);
        }
        wt_tensor_release(first);
    }
    wt_tensor_release(big);
    wt_tensor_release(one);

    EXPECT_T(wt_copy(NULL, &o), WT_ERR_INVALID_ARGUMENT, "copy(NULL)");
    expect_code(wt_copy(t, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK, "copy(out NULL)");
    EXPECT_T(wt_contiguous(NULL, &o), WT_ERR_INVALID_ARGUMENT, "contiguous(NULL)");
    expect_code(wt_contiguous(t, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK, "contiguous(out NULL)");
    wt_tensor_release(t);
}

/* ------------------------------------------------------------------- ops */

typedef wt_status (*binary_fn)(const wt_tensor *, const wt_tensor *, wt_tensor **);
typedef wt_status (*unary_fn)(const wt_tensor *, wt_tensor **);
typedef wt_status (*reduce_fn)(const wt_tensor *, int, const int *, bool, wt_tensor **);

static void test_ops(wt_context *ctx, wt_context *other)
{
    const int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s234[3] = {2, 3, 4}, s345[3] = {3, 4, 5},
                  s30[2] = {3, 0};
    wt_tensor *a = make(ctx, 2, s23), *b = make(ctx, 2, s32), *c3 = make(ctx, 3, s234),
              *d3 = make(ctx, 3, s345), *e = make(ctx, 2, s30), *scalar = make(ctx, 0, NULL),
              *foreign = make(other, 2, s23);
    if (!a || !b || !c3 || !d3 || !e || !scalar || !foreign)
        goto done;

    static const struct { const char *name; binary_fn fn; } binary[] = {
        {"add", wt_add}, {"sub", wt_sub}, {"mul", wt_mul}, {"div", wt_div}};
    for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++) {
        char what[96];
        binary_fn fn = binary[i].fn;
        snprintf(what, sizeof what, "%s(NULL, b)", binary[i].name);
        EXPECT_T(fn(NULL, a, &o), WT_ERR_INVALID_ARGUMENT, what);
        snprintf(what, sizeof what, "%s(a, NULL)", binary[i].name);
        EXPECT_T(fn(a, NULL, &o), WT_ERR_INVALID_ARGUMENT, what);
        snprintf(what, sizeof what, "%s(out NULL)", binary[i].name);
        expect_code(fn(a, a, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK, what);
        snprintf(what, sizeof what, "%s([2,3], [3,2])", binary[i].name);
        EXPECT_T(fn(a, b, &o), WT_ERR_SHAPE, what);
        snprintf(what, sizeof what, "%s([2,3,4], [3,4,5])", binary[i].name);
        EXPECT_T(fn(c3, d3, &o), WT_ERR_SHAPE, what);
        snprintf(what, sizeof what, "%s(tensors of two contexts)", binary[i].name);
        EXPECT_T(fn(a, foreign, &o), WT_ERR_INVALID_ARGUMENT, what);
    }

    static const struct { const char *name; unary_fn fn; } unary[] = {
        {"neg", wt_neg}, {"exp", wt_exp}, {"log", wt_log}, {"sqrt", wt_sqrt}, {"relu", wt_relu},
        {"sigmoid", wt_sigmoid}, {"tanh", wt_tanh}};
    for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) {
        char what[96];
        snprintf(what, sizeof what, "%s(NULL)", unary[i].name);
        EXPECT_T(unary[i].fn(NULL, &o), WT_ERR_INVALID_ARGUMENT, what);
        snprintf(what, sizeof what, "%s(out NULL)", unary[i].name);
        expect_code(unary[i].fn(a, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK, what);
    }

    EXPECT_T(wt_matmul(NULL, b, &o), WT_ERR_INVALID_ARGUMENT, "matmul(NULL, b)");
    EXPECT_T(wt_matmul(a, NULL, &o), WT_ERR_INVALID_ARGUMENT, "matmul(a, NULL)");
    expect_code(wt_matmul(a, b, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK, "matmul(out NULL)");
    EXPECT_T(wt_matmul(a, a, &o), WT_ERR_SHAPE, "matmul([2,3], [2,3])");
    EXPECT_T(wt_matmul(c3, d3, &o), WT_ERR_SHAPE, "matmul([2,3,4], [3,4,5]) batch mismatch");
    EXPECT_T2(wt_matmul(scalar, a, &o), WT_ERR_SHAPE, WT_ERR_INVALID_ARGUMENT, "matmul(0-d, [2,3])");
    EXPECT_T(wt_matmul(a, foreign, &o), WT_ERR_INVALID_ARGUMENT, "matmul(tensors of two contexts)");

    static const struct { const char *name; reduce_fn fn; } reduce[] = {
        {"sum", wt_sum}, {"mean", wt_mean}, {"max", wt_max}, {"min", wt_min}};
    const int ax_oob[1] = {2}, ax_neg[1] = {-3}, ax_rep[2] = {0, 0}, ax_alias[2] = {1, -1},
              ax9[9] = {0, 1, 0, 1, 0, 1, 0, 1, 0}, ax1[1] = {1};
    for (size_t i = 0; i < sizeof reduce / sizeof reduce[0]; i++) {
        char what[96];
        reduce_fn fn = reduce[i].fn;
        const char *n = reduce[i].name;
        snprintf(what, sizeof what, "%s(NULL)", n);
        EXPECT_T(fn(NULL, 0, NULL, false, &o), WT_ERR_INVALID_ARGUMENT, what);
        snprintf(what, sizeof what, "%s(out NULL)", n);
        expect_code(fn(a, 0, NULL, false, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK, what);
        snprintf(what, sizeof what, "%s(axis 2 of 2-d)", n);
        EXPECT_T(fn(a, 1, ax_oob, false, &o), WT_ERR_INVALID_ARGUMENT, what);
        snprintf(what, sizeof what, "%s(axis -3 of 2-d)", n);
        EXPECT_T(fn(a, 1, ax_neg, true, &o), WT_ERR_INVALID_ARGUMENT, what);
        snprintf(what, sizeof what, "%s(axes {0,0})", n);
        EXPECT_T(fn(a, 2, ax_rep, false, &o), WT_ERR_INVALID_ARGUMENT, what);
        snprintf(what, sizeof what, "%s(axes {1,-1})", n);
        EXPECT_T(fn(a, 2, ax_alias, false, &o), WT_ERR_INVALID_ARGUMENT, what);
        snprintf(what, sizeof what, "%s(naxes -1)", n);
        EXPECT_T(fn(a, -1, ax1, false, &o), WT_ERR_INVALID_ARGUMENT, what);
        snprintf(what, sizeof what, "%s(naxes 9)", n);
        EXPECT_T(fn(a, 9, ax9, false, &o), WT_ERR_INVALID_ARGUMENT, what);
        snprintf(what, sizeof what, "%s(naxes 1, axes NULL)", n);
        EXPECT_T(fn(a, 1, NULL, false, &o), WT_ERR_INVALID_ARGUMENT, what);
        snprintf(what, sizeof what, "%s([3,0] over axis 1)", n);
        bool empty_is_error = fn == wt_max || fn == wt_min;
        EXPECT_T(fn(e, 1, ax1, false, &o), empty_is_error ? WT_ERR_SHAPE : WT_OK, what);
    }

    /* Row-wise ops: a [2,3] input normalises over C = 3. */
    const int ax_bad = 2;
    EXPECT_T(wt_softmax(NULL, -1, &o), WT_ERR_INVALID_ARGUMENT, "softmax(NULL)");
    expect_code(wt_softmax(a, -1, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK, "softmax(out NULL)");
    EXPECT_T(wt_softmax(a, ax_bad, &o), WT_ERR_INVALID_ARGUMENT, "softmax(axis 2 of 2-d)");
    EXPECT_T(wt_softmax(a, -3, &o), WT_ERR_INVALID_ARGUMENT, "softmax(axis -3 of 2-d)");
    const int64_t s3[1] = {3}, s4[1] = {4};
    wt_tensor *w3 = make(ctx, 1, s3), *w4 = make(ctx, 1, s4), *wf = make(other, 1, s3);
    if (w3 && w4 && wf) {
        EXPECT_T(wt_layernorm(NULL, w3, w3, 1e-5f, &o), WT_ERR_INVALID_ARGUMENT, "layernorm(NULL)");
        expect_code(wt_layernorm(a, w3, w3, 1e-5f, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK,
                    "layernorm(out NULL)");
        EXPECT_T(wt_layernorm(a, w4, NULL, 1e-5f, &o), WT_ERR_SHAPE, "layernorm(weight [4] for C=3)");
        EXPECT_T(wt_layernorm(a, NULL, w4, 1e-5f, &o), WT_ERR_SHAPE, "layernorm(bias [4] for C=3)");
        EXPECT_T(wt_layernorm(a, b, NULL, 1e-5f, &o), WT_ERR_SHAPE, "layernorm(2-d weight)");
        EXPECT_T(wt_layernorm(a, w3, NULL, -1.0f, &o), WT_ERR_INVALID_ARGUMENT, "layernorm(eps -1)");
        EXPECT_T(wt_layernorm(a, w3, NULL, NAN, &o), WT_ERR_INVALID_ARGUMENT, "layernorm(eps NaN)");
        EXPECT_T(wt_layernorm(a, wf, NULL, 1e-5f, &o), WT_ERR_INVALID_ARGUMENT,
                 "layernorm(weight of another context)");
        EXPECT_T(wt_layernorm(foreign, w3, NULL, 1e-5f, &o), WT_ERR_INVALID_ARGUMENT,
                 "layernorm(input of another context than its weight)");
        EXPECT_T(wt_rmsnorm(NULL, w3, 1e-5f, &o), WT_ERR_INVALID_ARGUMENT, "rmsnorm(NULL)");
        expect_code(wt_rmsnorm(a, w3, 1e-5f, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK,
                    "rmsnorm(out NULL)");
        EXPECT_T(wt_rmsnorm(a, w4, 1e-5f, &o), WT_ERR_SHAPE, "rmsnorm(weight [4] for C=3)");
        EXPECT_T(wt_rmsnorm(a, w3, -1.0f, &o), WT_ERR_INVALID_ARGUMENT, "rmsnorm(eps -1)");
        EXPECT_T(wt_rmsnorm(a, wf, 1e-5f, &o), WT_ERR_INVALID_ARGUMENT,
                 "rmsnorm(weight of another context)");
    }
    wt_tensor_release(w3);
    wt_tensor_release(w4);
    wt_tensor_release(wf);

done:
    wt_tensor_release(a);
    wt_tensor_release(b);
    wt_tensor_release(c3);
    wt_tensor_release(d3);
    wt_tensor_release(e);
    wt_tensor_release(scalar);
    wt_tensor_release(foreign);
}

/* ------------------------------------------------------------ refcounts */

static bool read_equals(const wt_tensor *t, const float *want, int n, const char *what)
{
    float buf[64];
    wt_status s = wt_tensor_read(t, buf, sizeof buf);
    if (!CHECK(s == WT_OK, "%s: read failed: %s (%s)", what, wt_status_string(s), wt_last_error()))
        return false;
    for (int i = 0; i < n; i++)
        if (!CHECK(buf[i] == want[i], "%s: element %d is %g, want %g", what, i, (double)buf[i],
                   (double)want[i]))
            return false;
    return true;
}

static void test_refcounts(test_backend b, wt_context *ctx)
{
    wt_memory_stats before, after;
    CHECK(wt_context_memory_stats(ctx, &before) == WT_OK, "memory stats");
    const int64_t s23[2] = {2, 3};
    wt_tensor *base = make(ctx, 2, s23), *tr = NULL, *sl = NULL;
    if (!base)
        return;
    /* base = [[1,2,3],[4,5,6]] */
    CHECK(wt_transpose(base, 0, 1, &tr) == WT_OK, "transpose: %s", wt_last_error());
    wt_tensor_release(base); /* the view keeps the storage */
    const float want_tr[6] = {1, 4, 2, 5, 3, 6};
    if (tr)
        read_equals(tr, want_tr, 6, "transposed view after its base was released");
    CHECK(tr && wt_slice(tr, 0, 1, 3, 1, &sl) == WT_OK, "slice of view: %s", wt_last_error());
    wt_tensor_release(tr);
    const float want_sl[4] = {2, 5, 3, 6};
    if (sl) {
        read_equals(sl, want_sl, 4, "slice of a released view");
        wt_tensor_retain(sl);
        wt_tensor_retain(sl);
        wt_tensor_release(sl);
        wt_tensor_release(sl);
        read_equals(sl, want_sl, 4, "slice after retain x2, release x2");
        wt_tensor_release(sl);
    }
    CHECK(wt_context_memory_stats(ctx, &after) == WT_OK, "memory stats");
    CHECK(after.live_tensors == before.live_tensors && after.live_bytes == before.live_bytes,
          "storage still live after every view was released: %" PRIu64 " -> %" PRIu64 " bytes",
          before.live_bytes, after.live_bytes);

    /* A destroyed context's tensors stay readable until released. */
    wt_context *ctx2 = NULL;
    if (test_create_context(b, &ctx2) != WT_OK)
        return;
    wt_tensor *t = make(ctx2, 2, s23), *v = NULL, *r = NULL;
    if (t) {
        CHECK(wt_transpose(t, 0, 1, &v) == WT_OK, "transpose: %s", wt_last_error());
        CHECK(wt_neg(t, &r) == WT_OK, "neg: %s", wt_last_error()); /* pending work on the GPU */
    }
    wt_context_destroy(ctx2);
    const float want_t[6] = {1, 2, 3, 4, 5, 6}, want_r[6] = {-1, -2, -3, -4, -5, -6};
    if (t)
        read_equals(t, want_t, 6, "tensor of a destroyed context");
    if (v)
        read_equals(v, want_tr, 6, "view of a destroyed context");
    if (r)
        read_equals(r, want_r, 6, "op result recorded before its context was destroyed");
    wt_tensor_release(v);
    wt_tensor_release(t);
    wt_tensor_release(r);
}

/* Scopes called wrongly: NULLs, ends out of order, keeps of tensors the
 * scope does not own. Nothing may be released by a refused call. */
static void test_scope_misuse(wt_context *ctx, wt_context *other)
{
    wt_scope *s = (wt_scope *)(uintptr_t)0x10, *inner = NULL;
    expect_code(wt_scope_begin(NULL, &s), WT_ERR_INVALID_ARGUMENT, WT_OK, "scope_begin(NULL ctx)");
    CHECK(s == NULL, "scope_begin(NULL ctx): *out not set to NULL");
    expect_code(wt_scope_begin(ctx, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK, "scope_begin(NULL out)");
    expect_code(wt_scope_end(NULL), WT_ERR_INVALID_ARGUMENT, WT_OK, "scope_end(NULL)");
    expect_code(wt_scope_keep(NULL, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK, "scope_keep(NULL, NULL)");

    const int64_t s2[1] = {2};
    wt_tensor *before = make(ctx, 1, s2), *foreign = make(other, 1, s2), *a = NULL, *b = NULL;
    if (!CHECK(wt_scope_begin(ctx, &s) == WT_OK, "scope_begin: %s", wt_last_error())) goto out;
    expect_code(wt_scope_keep(s, NULL), WT_ERR_INVALID_ARGUMENT, WT_OK, "scope_keep(scope, NULL)");
    CHECK(wt_neg(before, &a) == WT_OK, "neg in a scope: %s", wt_last_error());
    expect_code(wt_scope_keep(s, before), WT_ERR_INVALID_ARGUMENT, WT_OK, "keep of a tensor made before the scope");
    expect_code(wt_scope_keep(s, foreign), WT_ERR_INVALID_ARGUMENT, WT_OK, "keep of another context's tensor");
    if (CHECK(wt_scope_begin(ctx, &inner) == WT_OK, "inner scope_begin: %s", wt_last_error())) {
        expect_code(wt_scope_keep(inner, a), WT_ERR_INVALID_ARGUMENT, WT_OK, "keep of the outer scope's tensor");
        CHECK(wt_exp(a, &b) == WT_OK, "exp in the inner scope: %s", wt_last_error());
        expect_code(wt_scope_end(s), WT_ERR_INVALID_ARGUMENT, WT_OK, "ending the outer scope first");
        CHECK(strstr(wt_last_error(), "still open") != NULL, "the message says why: %s", wt_last_error());
        /* Refused: both scopes stay open and nothing was released. */
        float r[2];
        CHECK(a && b && wt_tensor_read(a, r, sizeof r) == WT_OK && r[0] == -1.0f &&
                  wt_tensor_read(b, r, sizeof r) == WT_OK,
              "tensors of both scopes are alive after the refused end");
        CHECK(wt_scope_end(inner) == WT_OK, "inner end: %s", wt_last_error());
    }
    /* A second keep of a tensor kept once: the scope no longer owns it. */
    CHECK(wt_scope_keep(s, a) == WT_OK, "keep: %s", wt_last_error());
    expect_code(wt_scope_keep(s, a), WT_ERR_INVALID_ARGUMENT, WT_OK, "second keep of one reference");
    CHECK(wt_scope_end(s) == WT_OK, "outer end: %s", wt_last_error());
    wt_tensor_release(a);
out:
    wt_tensor_release(before);
    wt_tensor_release(foreign);
}

int main(int argc, char **argv)
{
    test_backend b = test_parse_backend(argc > 1 ? argv[1] : NULL);
    if (b == TEST_BACKEND_INVALID) {
        fprintf(stderr, "usage: %s cpu|vulkan|gles|webgpu\n", argv[0]);
        return 2;
    }
    g_mode = test_backend_name(b);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "api_misuse %s", g_mode);

    test_status_and_version();
    wt_context *ctx = NULL, *other = NULL;
    if (test_create_context(b, &ctx) != WT_OK)
        return test_summary(prefix);
    /* Tensors of another context: a second one of the same backend. */
    if (test_create_context(b, &other) != WT_OK) {
        wt_context_destroy(ctx);
        return test_summary(prefix);
    }
    test_context(b, ctx);
    test_timer(b, ctx);
    test_creation(ctx);
    test_read_and_getters(ctx);
    test_views(ctx);
    test_overflow_edges(ctx);
    test_ops(ctx, other);
    test_scope_misuse(ctx, other);
    if (b != TEST_BACKEND_CPU) {
        /* And of a context of another backend. */
        wt_context *cpu = NULL;
        if (test_create_context(TEST_BACKEND_CPU, &cpu) == WT_OK) {
            const int64_t s2[1] = {2};
            wt_tensor *x = make(ctx, 1, s2), *y = make(cpu, 1, s2);
            if (x && y) {
                EXPECT_T(wt_add(x, y, &o), WT_ERR_INVALID_ARGUMENT, "add(webgpu tensor, cpu tensor)");
                EXPECT_T(wt_matmul(y, x, &o), WT_ERR_INVALID_ARGUMENT,
                         "matmul(cpu tensor, webgpu tensor)");
            }
            wt_tensor_release(x);
            wt_tensor_release(y);
            wt_context_destroy(cpu);
        }
    }
    test_refcounts(b, ctx);
    CHECK(wt_context_sync(ctx) == WT_OK, "final sync: %s", wt_last_error());
    wt_memory_stats st;
    if (CHECK(wt_context_memory_stats(ctx, &st) == WT_OK, "memory stats"))
        CHECK(st.live_tensors == 0 && st.live_bytes == 0,
              "after releasing everything: %" PRIu64 " storages, %" PRIu64 " bytes live",
              st.live_tensors, st.live_bytes);
    wt_context_destroy(other);
    wt_context_destroy(ctx);
    return test_summary(prefix);
}
