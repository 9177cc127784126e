/* Fuzz target: what the library parses besides model files - the context
 * options struct, the Dawn toggle list (wt_context_options.toggles and
 * $WT_DAWN_TOGGLES: "+name,-name,=name,dawn") and the numeric knobs read
 * from the environment per context or per call (WT_DISPATCHES_PER_SUBMIT,
 * WT_WEBGPU_POOL_LIMIT_MB, WT_CONV_CHUNK_BYTES). Whatever the bytes, a
 * context is made or refused with a known code, and ops give the same
 * numbers as with the defaults (a conv2d on the CPU, an add on WebGPU).
 *
 * Input: byte 0 chooses (bits 4-6 all set: a WebGPU context, one input in
 * eight, else the CPU options; bit 2: set the knobs), the rest are option
 * values and strings
 * separated by 0 bytes. Toggle names are upper-cased: Dawn's are lower
 * case, so the list is parsed in full (signs, separators, lengths, more
 * entries than fit) without turning on a real toggle. Knobs read once per
 * process (the tuning switches cached by wg_env_string) are not varied. */
#define _POSIX_C_SOURCE 200809L
#include "webtensor.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_main.h"

static wt_context *g_cpu;
static float g_conv_ref[2 * 4 * 6 * 6];

/* A conv2d whose im2col is cut into chunks of WT_CONV_CHUNK_BYTES. */
static wt_status small_conv(wt_context *ctx, float *out)
{
    static float x[2 * 3 * 8 * 8], w[4 * 3 * 3 * 3];
    for (int i = 0; i < (int)(sizeof x / sizeof x[0]); i++) x[i] = (float)(i % 13) * 0.25f - 1.0f;
    for (int i = 0; i < (int)(sizeof w / sizeof w[0]); i++) w[i] = (float)(i % 7) * 0.125f - 0.5f;
    const int64_t sx[4] = {2, 3, 8, 8}, sw[4] = {4, 3, 3, 3};
    wt_tensor *tx = NULL, *tw = NULL, *ty = NULL;
    wt_status st = wt_tensor_from_data(ctx, WT_F32, 4, sx, x, &tx);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_F32, 4, sw, w, &tw);
    if (st == WT_OK) st = wt_conv2d(tx, tw, NULL, NULL, &ty);
    if (st == WT_OK) st = wt_tensor_read(ty, out, sizeof g_conv_ref);
    wt_tensor_release(tx);
    wt_tensor_release(tw);
    wt_tensor_release(ty);
    return st;
}

/* g_conv_ref[i] + 1 on a tensor of g_conv_ref's values. */
static wt_status small_add(wt_context *ctx, float *out)
{
    const int64_t n = (int64_t)(sizeof g_conv_ref / sizeof g_conv_ref[0]), one = 1;
    wt_tensor *a = NULL, *b = NULL, *c = NULL;
    wt_status st = wt_tensor_from_data(ctx, WT_F32, 1, &n, g_conv_ref, &a);
    if (st == WT_OK) st = wt_tensor_full(ctx, WT_F32, 1, &one, 1.0, &b);
    if (st == WT_OK) st = wt_add(a, b, &c);
    if (st == WT_OK) st = wt_tensor_read(c, out, sizeof g_conv_ref);
    for (int64_t i = 0; st == WT_OK && i < n; i++) out[i] -= 1.0f;
    wt_tensor_release(a);
    wt_tensor_release(b);
    wt_tensor_release(c);
    return st;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    unsetenv("WT_CONV_CHUNK_BYTES");
    g_cpu = fuzz_cpu_context();
    if (small_conv(g_cpu, g_conv_ref) != WT_OK) abort();
    return 0;
}

/* The next 0-terminated string of the input (at most 200 bytes). */
static const char *next_string(const uint8_t **p, const uint8_t *end, char *buf, size_t cap, bool upper)
{
    size_t n = 0;
    while (*p < end && **p && n + 1 < cap && n < 200) {
        char c = (char)*(*p)++;
        buf[n++] = upper ? (char)toupper((unsigned char)c) : c;
    }
    if (*p < end) (*p)++;
    buf[n] = '\0';
    return buf;
}

static uint32_t next_u32(const uint8_t **p, const uint8_t *end)
{
    uint32_t v = 0;
    for (int i = 0; i < 4 && *p < end; i++) v |= (uint32_t)*(*p)++ << (8 * i);
    return v;
}

static void check_status(wt_status st, const char *what)
{
    if (st == WT_OK) return;
    fuzz_require(wt_last_error()[0] != 0, what);
    fuzz_require(st == WT_ERR_INVALID_ARGUMENT || st == WT_ERR_UNSUPPORTED || st == WT_ERR_OUT_OF_MEMORY ||
                     st == WT_ERR_NO_DEVICE,
                 what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    const uint8_t *p = data + 1, *end = data + size;
    const uint8_t mode = data[0];
    char s1[256], s2[256], s3[256];
    wt_context_options o;
    wt_context_options_init(&o);
    const uint32_t sizes[4] = {(uint32_t)sizeof o, 0, 8, 0xffffffffu};
    o.struct_size = sizes[next_u32(&p, end) % 4];
    const bool webgpu = (mode & 0x70) == 0x70;
    const bool knobs = (mode & 4) != 0;
    if (webgpu) {
        o.backend = WT_BACKEND_WEBGPU;
        o.gpu_api = WT_GPU_API_VULKAN;
        o.dispatches_per_submit = next_u32(&p, end) % 5000;
        o.toggles = next_string(&p, end, s1, sizeof s1, true);
        o.memory_limit = next_u32(&p, end);
    } else {
        const int backends[3] = {WT_BACKEND_CPU, 7, -1};
        o.backend = (wt_backend)backends[next_u32(&p, end) % 3];
        o.num_threads = (int)(int16_t)next_u32(&p, end);
        o.memory_limit = (uint64_t)next_u32(&p, end) << (next_u32(&p, end) % 40);
        o.adapter_index = (int)(int8_t)next_u32(&p, end);
        o.power_preference = (wt_power_preference)(int8_t)next_u32(&p, end);
        o.toggles = next_string(&p, end, s1, sizeof s1, true);
    }
    if (knobs) {
        setenv("WT_CONV_CHUNK_BYTES", next_string(&p, end, s2, sizeof s2, false), 1);
        setenv("WT_DISPATCHES_PER_SUBMIT", next_string(&p, end, s3, sizeof s3, false), 1);
        setenv("WT_WEBGPU_POOL_LIMIT_MB", next_string(&p, end, s3, sizeof s3, false), 1);
        setenv("WT_DAWN_TOGGLES", next_string(&p, end, s3, sizeof s3, true), 1);
    }
    wt_context *ctx = (wt_context *)(uintptr_t)1;
    wt_status st = wt_context_create(&o, &ctx);
    check_status(st, "options: context create failed without a message or with an unexpected code");
    if (st != WT_OK) {
        fuzz_require(ctx == NULL, "options: a failed create left its out-pointer set");
    } else {
        /* Same numbers as the default context's, whatever the knobs (on
         * WebGPU an add: a conv's pipelines take seconds to compile on a
         * software adapter, and the chunk knob is the CPU's concern). */
        float got[sizeof g_conv_ref / sizeof g_conv_ref[0]];
        st = webgpu ? small_add(ctx, got) : small_conv(ctx, got);
        /* A memory limit may refuse the tensors; nothing else may fail. */
        if (st == WT_ERR_OUT_OF_MEMORY) {
            fuzz_require(o.memory_limit > 0, "options: out of memory without a limit");
        } else {
            fuzz_require(st == WT_OK, "options: an op failed on a context the options made");
            for (size_t i = 0; i < sizeof got / sizeof got[0]; i++)
                fuzz_require(fabsf(got[i] - g_conv_ref[i]) <= 1e-4f * (1.0f + fabsf(g_conv_ref[i])),
                             "options: an op differs from the default context's");
        }
        wt_context_destroy(ctx);
    }
    if (knobs) {
        unsetenv("WT_CONV_CHUNK_BYTES");
        unsetenv("WT_DISPATCHES_PER_SUBMIT");
        unsetenv("WT_WEBGPU_POOL_LIMIT_MB");
        unsetenv("WT_DAWN_TOGGLES");
    }
    return 0;
}
