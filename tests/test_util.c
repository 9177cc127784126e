#include "test_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int g_test_passed;
int g_test_failed;

bool test_check(bool ok, const char *file, int line, const char *fmt, ...)
{
    if (ok) {
        g_test_passed++;
        return true;
    }
    g_test_failed++;
    fprintf(stdout, "FAIL %s:%d: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
    return false;
}

int test_summary(const char *prefix)
{
    printf("%s: %d passed, %d failed\n", prefix, g_test_passed, g_test_failed);
    fflush(stdout);
    return g_test_failed == 0 ? 0 : 1;
}

/* ---------------------------------------------------------------- random */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

uint64_t test_seed(void)
{
    const char *env = getenv("WT_TEST_SEED");
    if (env && *env)
        return strtoull(env, NULL, 0);
    return 20261121u;
}

void test_rng_seed(uint64_t seed) { rng_state = seed ^ 0x9E3779B97F4A7C15ull; }

/* splitmix64: tiny, fast and good enough for test data. */
uint64_t test_rng_next(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float test_rng_uniform(float lo, float hi)
{
    for (;;) {
        double u = (double)(test_rng_next() >> 11) * (1.0 / 9007199254740992.0);
        float v = (float)(lo + (hi - lo) * u);
        if (v != 0.0f && v >= lo && v < hi)
            return v;
    }
}

/* -------------------------------------------------------------- backends */

test_backend test_parse_backend(const char *name)
{
    if (!name)
        return TEST_BACKEND_INVALID;
    if (!strcmp(name, "cpu"))
        return TEST_BACKEND_CPU;
    if (!strcmp(name, "vulkan"))
        return TEST_BACKEND_VULKAN;
    if (!strcmp(name, "gles"))
        return TEST_BACKEND_GLES;
    if (!strcmp(name, "webgpu"))
        return TEST_BACKEND_WEBGPU_ANY;
    return TEST_BACKEND_INVALID;
}

const char *test_backend_name(test_backend b)
{
    switch (b) {
    case TEST_BACKEND_CPU: return "cpu";
    case TEST_BACKEND_VULKAN: return "vulkan";
    case TEST_BACKEND_GLES: return "gles";
    case TEST_BACKEND_WEBGPU_ANY: return "webgpu";
    default: return "?";
    }
}

void test_backend_options(test_backend b, wt_context_options *opts)
{
    wt_context_options_init(opts);
    switch (b) {
    case TEST_BACKEND_CPU:
        opts->backend = WT_BACKEND_CPU;
        break;
    case TEST_BACKEND_VULKAN:
        opts->backend = WT_BACKEND_WEBGPU;
        opts->gpu_api = WT_GPU_API_VULKAN;
        break;
    case TEST_BACKEND_GLES:
        opts->backend = WT_BACKEND_WEBGPU;
        opts->gpu_api = WT_GPU_API_OPENGLES;
        break;
    default:
        opts->backend = WT_BACKEND_WEBGPU;
        opts->gpu_api = WT_GPU_API_AUTO;
        break;
    }
}

static const char *gpu_api_name(wt_gpu_api api)
{
    switch (api) {
    case WT_GPU_API_VULKAN: return "Vulkan";
    case WT_GPU_API_OPENGLES: return "OpenGL ES";
    case WT_GPU_API_METAL: return "Metal";
    case WT_GPU_API_D3D12: return "D3D12";
    case WT_GPU_API_BROWSER: return "browser";
    default: return "auto/unknown";
    }
}

wt_status test_create_context(test_backend b, wt_context **out)
{
    wt_context_options opts;
    test_backend_options(b, &opts);
    *out = NULL;
    wt_context *ctx = NULL;
    wt_status s = wt_context_create(&opts, &ctx);
    if (!CHECK(s == WT_OK && ctx, "%s: context creation failed: %s (%s)", test_backend_name(b),
               wt_status_string(s), wt_last_error()))
        return s == WT_OK ? WT_ERR_BACKEND : s;
    wt_backend want = b == TEST_BACKEND_CPU ? WT_BACKEND_CPU : WT_BACKEND_WEBGPU;
    CHECK(wt_context_backend(ctx) == want, "%s: wt_context_backend is %d, expected %d",
          test_backend_name(b), (int)wt_context_backend(ctx), (int)want);
    if (b != TEST_BACKEND_CPU) {
        wt_adapter_info info;
        memset(&info, 0, sizeof info);
        s = wt_context_adapter_info(ctx, &info);
        if (CHECK(s == WT_OK, "%s: wt_context_adapter_info failed: %s (%s)", test_backend_name(b),
                  wt_status_string(s), wt_last_error())) {
            printf("%s: adapter \"%s\" (%s), api %s, type %d%s\n", test_backend_name(b),
                   info.name, info.driver, gpu_api_name(info.api), (int)info.type,
                   info.compatibility_mode ? ", compatibility mode" : "");
            if (opts.gpu_api != WT_GPU_API_AUTO)
                CHECK(info.api == opts.gpu_api, "%s: adapter runs on %s, requested %s",
                      test_backend_name(b), gpu_api_name(info.api), gpu_api_name(opts.gpu_api));
            CHECK(info.name[0] != '\0', "%s: adapter has no name", test_backend_name(b));
            CHECK(info.max_compute_workgroups_per_dimension >= 65535 ||
                      info.max_compute_workgroups_per_dimension == 0,
                  "%s: adapter reports max %u workgroups per dimension", test_backend_name(b),
                  info.max_compute_workgroups_per_dimension);
        }
    }
    *out = ctx;
    return WT_OK;
}

/* ----------------------------------------------------------------- reads */

const uint32_t TEST_GUARD_BITS = 0x7FC0DEADu; /* a NaN no kernel produces */

const char *test_shape_str(int ndim, const int64_t *shape, char *buf, size_t size)
{
    size_t n = 0;
    n += (size_t)snprintf(buf + n, size - n, "[");
    for (int i = 0; i < ndim && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%" PRId64, i ? "," : "", shape[i]);
    if (n < size)
        snprintf(buf + n, size - n, "]");
    return buf;
}

float *test_read_guarded(const wt_tensor *t, char *err, size_t err_size)
{
    int64_t numel = wt_tensor_numel(t);
    if (numel < 0) {
        snprintf(err, err_size, "numel %" PRId64, numel);
        return NULL;
    }
    size_t total = (size_t)numel + TEST_GUARD_FLOATS;
    float *buf = malloc(total * sizeof(float));
    if (!buf) {
        snprintf(err, err_size, "test could not allocate %zu floats", total);
        return NULL;
    }
    /* The whole buffer starts as guard: elements the read skips show up as
     * mismatches, writes past numel as a touched guard. */
    for (size_t i = 0; i < total; i++)
        memcpy(&buf[i], &TEST_GUARD_BITS, sizeof(float));
    wt_status s = wt_tensor_read(t, buf, total * sizeof(float));
    if (s != WT_OK) {
        snprintf(err, err_size, "wt_tensor_read failed: %s (%s)", wt_status_string(s),
                 wt_last_error());
        free(buf);
        return NULL;
    }
    for (size_t i = (size_t)numel; i < total; i++) {
        uint32_t bits;
        memcpy(&bits, &buf[i], sizeof bits);
        if (bits != TEST_GUARD_BITS) {
            snprintf(err, err_size,
                     "wt_tensor_read wrote past the end (float %zu after numel %" PRId64 ")",
                     i - (size_t)numel, numel);
            free(buf);
            return NULL;
        }
    }
    return buf;
}

/* ------------------------------------------------------------------ f16 */

/* Host f16 <-> double: exact decode; encode by scaling to the f16 grid and
 * rounding to nearest even with rint (the default rounding mode). */
double test_half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double s = (h & 0x8000) ? -1.0 : 1.0;
    if (e == 0x1f) return m ? NAN : s * INFINITY;
    if (e == 0) return s * ldexp(m, -24);
    return s * ldexp(1024 + m, e - 25);
}

uint16_t test_double_to_half(double v)
{
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    double a = fabs(v);
    if (isnan(v)) return 0x7e00;
    if (a >= 65520.0) return sign | 0x7c00;
    int e;
    frexp(a, &e); /* a = f * 2^e, f in [0.5, 1) */
    int q = e - 11 < -24 ? -24 : e - 11; /* the grid step 2^q of a's binade */
    double units = rint(ldexp(a, -q));
    double r = ldexp(units, q);
    /* Re-encode from the rounded value (exact, it is on the grid). */
    if (r == 0) return sign;
    if (r < ldexp(1, -14)) return sign | (uint16_t)ldexp(r, 24);
    int re;
    double f = frexp(r, &re);                       /* r = f * 2^re */
    uint16_t man = (uint16_t)(ldexp(f, 11) - 1024); /* 1.man * 2^(re-1) */
    return sign | (uint16_t)((re - 1 + 15) << 10) | man;
}

/* ------------------------------------------------------------- a program */

bool test_begin(test_run *run, const char *prog, int argc, char **argv)
{
    memset(run, 0, sizeof *run);
    run->backend = test_parse_backend(argc > 1 ? argv[1] : "cpu");
    if (run->backend == TEST_BACKEND_INVALID) {
        fprintf(stderr, "usage: %s cpu|vulkan|gles|webgpu\n", prog);
        run->status = 2;
        return false;
    }
    run->mode = test_backend_name(run->backend);
    snprintf(run->prefix, sizeof run->prefix, "%s %s", prog, run->mode);
    const uint64_t seed = test_seed();
    printf("%s: seed %llu (set WT_TEST_SEED to change)\n", run->prefix, (unsigned long long)seed);
    test_rng_seed(seed);
    if (test_create_context(run->backend, &run->ctx) != WT_OK) {
        run->status = test_summary(run->prefix);
        return false;
    }
    return true;
}

void test_check_nothing_alive(wt_context *ctx)
{
    wt_memory_stats st;
    if (CHECK(wt_context_memory_stats(ctx, &st) == WT_OK, "memory stats: %s", wt_last_error()))
        CHECK(st.live_tensors == 0, "%llu storages left alive", (unsigned long long)st.live_tensors);
}

int test_end(test_run *run)
{
    wt_context_destroy(run->ctx);
    run->ctx = NULL;
    return test_summary(run->prefix);
}

unsigned char *test_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b) b[n] = 0;
    fclose(f);
    *size = n >= 0 ? (size_t)n : 0;
    return b;
}

bool test_same_tensor_bytes(const wt_tensor *t, const void *expect, size_t bytes)
{
    void *buf = malloc(bytes + 1);
    bool ok = buf && wt_tensor_read(t, buf, bytes) == WT_OK && memcmp(buf, expect, bytes) == 0;
    free(buf);
    return ok;
}
