/* Shared pieces of the test programs: seeded random numbers, pass/fail
 * counting, backend selection from argv, guarded reads. */
#ifndef WT_TEST_UTIL_H
#define WT_TEST_UTIL_H

#include "webtensor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------ counting */

extern int g_test_passed;
extern int g_test_failed;

/* Counts one check; on failure prints "FAIL <file>:<line>: <message>". */
bool test_check(bool ok, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
#define CHECK(cond, ...) test_check((cond), __FILE__, __LINE__, __VA_ARGS__)

/* Prints "<prefix>: N passed, M failed" and returns the exit status. */
int test_summary(const char *prefix);

/* --------------------------------------------------------------- random */

/* The seed: $WT_TEST_SEED if set, else a fixed default (reproducible CI). */
uint64_t test_seed(void);
void test_rng_seed(uint64_t seed);
uint64_t test_rng_next(void);
/* Uniform in [lo, hi), never exactly 0 (zeros hide missing writes). */
float test_rng_uniform(float lo, float hi);

/* ------------------------------------------------------------- backends */

typedef enum test_backend {
    TEST_BACKEND_CPU, TEST_BACKEND_VULKAN, TEST_BACKEND_GLES, TEST_BACKEND_WEBGPU_ANY,
    TEST_BACKEND_INVALID
} test_backend;

/* "cpu", "vulkan", "gles", "webgpu" (WebGPU on any API). */
test_backend test_parse_backend(const char *name);
const char *test_backend_name(test_backend b);
void test_backend_options(test_backend b, wt_context_options *opts);
/* Creates the context; for WebGPU also checks that the adapter runs on the
 * requested API. Failure is reported (with wt_last_error) and counted. */
wt_status test_create_context(test_backend b, wt_context **out);

/* ------------------------------------------------------------ a program */

/* What test_begin sets up for a program run as "<prog> <backend> [...]". */
typedef struct test_run {
    test_backend backend;
    const char *mode;  /* the backend's name: "cpu", "vulkan", "gles", "webgpu" */
    wt_context *ctx;   /* a context of that backend */
    char prefix[64];   /* "<prog> <backend>": the summary's (test_end) */
    int status;        /* the exit status when test_begin returns false */
} test_run;

/* The start every test program shares: parses the backend in argv[1]
 * (cpu when there is none; an unknown one prints the usage, then status
 * is 2), seeds the random numbers (test_seed(), printed), and makes the
 * context, on a WebGPU backend checked to run on the API asked for.
 * Returns false when the program must end now, with its exit status in
 * run->status (a context that could not be made is a counted failure). */
bool test_begin(test_run *run, const char *prog, int argc, char **argv);

/* Counts a failure for every tensor still alive in ctx: one the library or
 * the test leaked (temporaries, error paths). */
void test_check_nothing_alive(wt_context *ctx);

/* The end: destroys the context, prints the summary ("<prog> <backend>:
 * N passed, M failed") and returns the exit status. */
int test_end(test_run *run);

/* ---------------------------------------------------------------- reads */

/* Floats after the end of a read buffer that must stay untouched. */
#define TEST_GUARD_FLOATS 64
extern const uint32_t TEST_GUARD_BITS;

/* Reads t (f32) into a fresh buffer of numel + TEST_GUARD_FLOATS floats
 * whose whole size is offered to wt_tensor_read; returns NULL with the
 * reason in err if the read fails or touches the guard. The caller frees
 * the result. */
float *test_read_guarded(const wt_tensor *t, char *err, size_t err_size);

/* A whole file's bytes (one zero byte past them), or NULL; *size its
 * length. The caller frees the result. */
unsigned char *test_read_file(const char *path, size_t *size);
/* Whether t's elements read back as exactly the bytes expect. */
bool test_same_tensor_bytes(const wt_tensor *t, const void *expect, size_t bytes);

/* "[3,4,5]" into buf. */
const char *test_shape_str(int ndim, const int64_t *shape, char *buf, size_t size);

/* ------------------------------------------------------------------ f16 */

/* Host f16 <-> double, written independently of the library: exact decode;
 * encode rounds to nearest even (overflow to inf, NaN to 0x7e00). */
double test_half_to_double(uint16_t h);
uint16_t test_double_to_half(double v);

#endif /* WT_TEST_UTIL_H */
