/*
 * `webtensor bench`: options, inputs, and the timing loop.
 *
 * A repetition is `inner` launches of the case back to back, then a wait
 * for the work. Where the backend has a GPU timer (WebGPU with timestamp
 * queries) the repetition runs between wt_context_timer_begin and
 * wt_context_timer_end, which waits like a sync: its time is the GPU's
 * busy time in the repetition's compute passes, without the submit and
 * sync overhead between them; the wall time around it is kept as well.
 * Elsewhere the time is the wall clock around the launches and one
 * wt_context_sync. Deferred GPU execution means a launch alone measures
 * nothing; the wait at the end of each repetition makes the time include
 * the work. `inner` is sized (by the wall clock) from a probe repetition
 * (steady state, not the first launch) so that a repetition lasts long
 * enough for the clock and the submit/sync overhead not to dominate; the
 * large size set also asks for at least BENCH_MIN_INNER_LARGE launches, as
 * the PyTorch peer times many launches between two CUDA events. The median
 * over the repetitions is reported per op: of the GPU times where there are
 * some, else of the wall times.
 */
#include "bench_engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Inputs are rotated over several sets when one set is small, so that
 * repeated runs do not find their inputs in a cache (CPU L2, GPU L2). */
#define ROTATE_BYTES (64.0 * 1024 * 1024)
#define MAX_SETS 4
#define MAX_INNER 100

typedef struct bench_options {
    bench_size size;
    bool want_cpu, want_webgpu;
    bool webgpu_optional;  /* "all": go on with the CPU alone if WebGPU is absent */
    wt_gpu_api gpu_api;
    int adapter_index;
    const char *filter;    /* comma-separated case names; NULL: all */
    int reps;              /* 0: the size set's default */
    int threads;           /* CPU backend threads; 0: the library's choice */
    bool check;            /* compare outputs between backends */
    bool cache_hot;        /* one input set for every repetition */
    bool wall_clock;       /* --timer wall: no GPU timer even where there is one */
    bool subgroup_matrix;  /* --subgroup-matrix: WT_EXPERIMENTAL_SUBGROUP_MATRIX */
    const char *csv_path, *json_path;
    bool profile;          /* --profile: per-op table of every backend */
    bool backend_given;    /* --backend named: software adapters count too */
} bench_options;

/* A repetition is not stretched past this by min_inner: a launch this long
 * already dwarfs the submit and sync overhead. */
#define MAX_MIN_INNER_REP_S 1.0

/* How long to measure, per size set. */
typedef struct bench_timing {
    int warmup, reps;
    double warmup_s;     /* and keep warming up at least this long (GPU clocks) */
    double target_rep_s; /* a repetition should last at least this long */
    double budget_s;     /* stop adding repetitions (beyond 3) past this */
    int min_inner;       /* launches per repetition at least (see MAX_MIN_INNER_REP_S) */
} bench_timing;

static bench_timing timing_for(bench_size size)
{
    switch (size) {
    case BENCH_SIZE_QUICK: return (bench_timing){2, 5, 0.0, 0.005, 1.0, 1};
    case BENCH_SIZE_LARGE: return (bench_timing){3, 10, 0.3, 0.020, 20.0, BENCH_MIN_INNER_LARGE};
    default: return (bench_timing){3, 10, 0.1, 0.020, 8.0, 1};
    }
}

/* Launches per repetition for a launch of per_launch_s seconds. */
static int inner_for(const bench_timing *tm, double per_launch_s)
{
    if (per_launch_s <= 0) return MAX_INNER;
    double want = ceil(tm->target_rep_s / per_launch_s);
    double floor_n = floor(MAX_MIN_INNER_REP_S / per_launch_s);
    if (floor_n > tm->min_inner) floor_n = tm->min_inner;
    if (want < floor_n) want = floor_n;
    if (want < 1) want = 1;
    if (want > MAX_INNER) want = MAX_INNER;
    return (int)want;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Uniform in [-1, 1): seeded, so every backend sees the same inputs. */
static void fill_random(float *dst, int64_t n, uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    for (int64_t i = 0; i < n; i++) {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        uint64_t r = s * 0x2545F4914F6CDD1Dull;
        dst[i] = (float)(r >> 40) * (1.0f / 8388608.0f) - 1.0f;
    }
}

static int64_t shape_numel(const bench_shape *s)
{
    int64_t n = 1;
    for (int d = 0; d < s->ndim; d++) n *= s->dims[d];
    return n;
}

/* Keeps the message on one line (compiler messages span several), so that
 * it fits a table row and a CSV field. */
static void record_error(bench_result *res, wt_status s, const char *what)
{
    char raw[sizeof res->error];
    snprintf(raw, sizeof raw, "%s: %s: %s", what, wt_status_string(s), wt_last_error());
    size_t j = 0;
    for (size_t i = 0; raw[i]; i++) {
        char ch = raw[i] == '\n' || raw[i] == '\t' || raw[i] == '\r' ? ' ' : raw[i];
        if (ch == ' ' && (j == 0 || res->error[j - 1] == ' ')) continue;
        res->error[j++] = ch;
    }
    res->error[j] = '\0';
    res->status = s;
}

/* The inputs of one item on one backend: sets x ninputs tensors. */
typedef struct bench_inputs {
    int sets, ninputs;
    wt_tensor *t[MAX_SETS][BENCH_MAX_INPUTS];
} bench_inputs;

static void inputs_release(bench_inputs *in)
{
    for (int s = 0; s < in->sets; s++)
        for (int i = 0; i < in->ninputs; i++) wt_tensor_release(in->t[s][i]);
    memset(in, 0, sizeof *in);
}

/* One input of dtype from f32 host values: an f16 input is the f32 tensor
 * cast on the backend (made here, outside any timing). */
static wt_status input_from_floats(wt_context *ctx, wt_dtype dtype, const bench_shape *shape,
                                   const float *host, wt_tensor **out)
{
    wt_tensor *f32 = NULL;
    wt_status s = wt_tensor_from_data(ctx, WT_F32, shape->ndim, shape->dims, host, &f32);
    if (s != WT_OK || dtype == WT_F32) {
        *out = f32;
        return s;
    }
    s = wt_cast(f32, dtype, out);
    wt_tensor_release(f32);
    return s;
}

/* ggml's block sizes (webtensor.h, "quantised weights"): elements, bytes,
 * and where the f16 scales sit. */
static void quant_block(int type, int *elems, int *bytes)
{
    *elems = type == WT_QUANT_Q4_K || type == WT_QUANT_Q6_K ? 256 : 32;
    *bytes = type == WT_QUANT_Q8_0 ? 34 : type == WT_QUANT_Q4_0 ? 18 : type == WT_QUANT_Q4_K ? 144 : 210;
}

/* Bytes of the quantised weight [n, k] of type. */
static double quant_bytes(int type, const bench_shape *shape)
{
    int elems, bytes;
    quant_block(type, &elems, &bytes);
    return (double)shape_numel(shape) / elems * bytes;
}

/* A quantised weight of random blocks: random quants, scales of small
 * finite f16 values (so that every product is finite). */
static wt_status quant_input(wt_context *ctx, int type, const bench_shape *shape, uint64_t seed, wt_tensor **out)
{
    int elems, bytes;
    quant_block(type, &elems, &bytes);
    const int64_t n = shape->dims[0], k = shape->dims[1], blocks = n * (k / elems);
    uint8_t *host = malloc((size_t)(blocks * bytes));
    if (!host) return WT_ERR_OUT_OF_MEMORY;
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < blocks * bytes; i++) {
        s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
        host[i] = (uint8_t)((s * 0x2545F4914F6CDD1Dull) >> 56);
    }
    const uint16_t scale = 0x2000; /* f16 2^-7 */
    for (int64_t b = 0; b < blocks; b++) {
        uint8_t *blk = host + b * bytes;
        const int at = type == WT_QUANT_Q6_K ? 208 : 0;
        blk[at] = (uint8_t)(scale & 0xff), blk[at + 1] = (uint8_t)(scale >> 8);
        if (type == WT_QUANT_Q4_K) blk[2] = (uint8_t)(scale & 0xff), blk[3] = (uint8_t)(scale >> 8);
    }
    wt_status st = wt_quant_from_blocks(ctx, (wt_quant_type)type, n, k, host, (size_t)(blocks * bytes), out);
    free(host);
    return st;
}

static wt_status inputs_create(wt_context *ctx, const bench_plan *plan, int item_index, bool cache_hot,
                               bench_inputs *in, bench_result *res)
{
    double set_bytes = 0;
    int64_t largest = 0;
    for (int i = 0; i < plan->ninputs; i++) {
        int64_t n = shape_numel(&plan->inputs[i]);
        if (plan->quant_type && i == 0)
            set_bytes += quant_bytes(plan->quant_type, &plan->inputs[i]);
        else
            set_bytes += (plan->input_dtype == WT_F16 ? 2.0 : 4.0) * (double)n;
        if (n > largest) largest = n;
    }
    const double rotate = plan->rotate_bytes > 0 ? plan->rotate_bytes : ROTATE_BYTES;
    int sets = set_bytes > 0 ? (int)ceil(rotate / set_bytes) : 1;
    if (sets < 1) sets = 1;
    if (sets > MAX_SETS) sets = MAX_SETS;
    if (cache_hot) sets = 1;

    memset(in, 0, sizeof *in);
    in->ninputs = plan->ninputs;
    float *host = malloc((size_t)(largest > 0 ? largest : 1) * sizeof(float));
    if (!host) {
        res->status = WT_ERR_OUT_OF_MEMORY;
        snprintf(res->error, sizeof res->error, "inputs: no host memory for %lld floats",
                 (long long)largest);
        return res->status;
    }
    wt_status s = WT_OK;
    for (int set = 0; set < sets && s == WT_OK; set++) {
        in->sets = set + 1;
        for (int i = 0; i < plan->ninputs && s == WT_OK; i++) {
            const bench_shape *shape = &plan->inputs[i];
            const uint64_t seed = (uint64_t)item_index * 1000003u + (uint64_t)set * 101u + (uint64_t)i + 1u;
            if (plan->quant_type && i == 0) {
                s = quant_input(ctx, plan->quant_type, shape, seed, &in->t[set][i]);
                if (s != WT_OK) record_error(res, s, "inputs");
                continue;
            }
            fill_random(host, shape_numel(shape), seed);
            s = input_from_floats(ctx, plan->quant_type ? WT_F32 : plan->input_dtype, shape, host, &in->t[set][i]);
            if (s != WT_OK) record_error(res, s, "inputs");
        }
    }
    free(host);
    if (s != WT_OK) inputs_release(in);
    return s;
}

/* IEEE binary16 bits to float (exact: every half is a float). */
static float half_to_float(uint16_t h)
{
    int exponent = (h >> 10) & 0x1f;
    float mantissa = (float)(h & 0x3ff);
    float v;
    if (exponent == 0) v = ldexpf(mantissa, -24); /* zero or subnormal */
    else if (exponent == 31) v = mantissa ? NAN : INFINITY;
    else v = ldexpf(mantissa + 1024.0f, exponent - 25);
    return h & 0x8000 ? -v : v;
}

/* Sum of |x| of a result (f32 or f16): different backends must agree on it. */
static wt_status output_checksum(const wt_tensor *out, double *sum)
{
    int64_t n = wt_tensor_numel(out);
    bool half = wt_tensor_dtype(out) == WT_F16;
    size_t elem = half ? sizeof(uint16_t) : sizeof(float);
    void *host = malloc((size_t)(n > 0 ? n : 1) * elem);
    if (!host) return WT_ERR_OUT_OF_MEMORY;
    wt_status s = wt_tensor_read(out, host, (size_t)n * elem);
    double acc = 0;
    for (int64_t i = 0; s == WT_OK && i < n; i++)
        acc += fabs(half ? (double)half_to_float(((const uint16_t *)host)[i])
                         : (double)((const float *)host)[i]);
    free(host);
    *sum = acc;
    return s;
}

/* One timed run: launches of `inner` runs, rotating the input sets, then a
 * sync. Returns the wall time, and with gpu_seconds (not NULL) also the
 * GPU time of the GPU timer around the run. */
static wt_status timed_rep(wt_context *ctx, const bench_case *c, const int64_t *params,
                           const bench_inputs *in, int inner, int *cursor, double *seconds,
                           double *gpu_seconds)
{
    double t0 = now_s();
    wt_status s = gpu_seconds ? wt_context_timer_begin(ctx) : WT_OK;
    bool timing = gpu_seconds && s == WT_OK;
    for (int i = 0; i < inner && s == WT_OK; i++) {
        wt_tensor *out = NULL;
        s = c->run(in->t[*cursor], params, &out);
        *cursor = (*cursor + 1) % in->sets;
        wt_tensor_release(out);
    }
    if (timing) {
        /* Waits like a sync; ends the timer after a failed launch too. */
        wt_status end = wt_context_timer_end(ctx, gpu_seconds);
        if (s == WT_OK) s = end;
    } else if (s == WT_OK) {
        s = wt_context_sync(ctx);
    }
    *seconds = now_s() - t0;
    return s;
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), compare_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void measure(wt_context *ctx, bool gpu_timer, const bench_case *c, const bench_item *item,
                    int item_index, const bench_plan *plan, const bench_options *opt,
                    bench_result *res)
{
    bench_timing tm = timing_for(opt->size);
    if (opt->reps > 0) tm.reps = opt->reps;
    bench_inputs in;
    res->ran = true;
    if (inputs_create(ctx, plan, item_index, opt->cache_hot, &in, res) != WT_OK) return;
    res->sets = in.sets;

    int cursor = 0;
    double t = 0;
    wt_status s = WT_OK;
    /* The check reads the output back first: that leaves the GPU idle for
     * as long as the host copy takes, and a GPU that idled clocks down, so
     * the warm-up must come after it (measured on an H200: timed runs right
     * after a 1 GiB read-back were up to 2x slower). */
    if (opt->check) {
        wt_tensor *out = NULL;
        s = c->run(in.t[0], item->params, &out);
        if (s == WT_OK) s = output_checksum(out, &res->checksum);
        wt_tensor_release(out);
        if (s != WT_OK) {
            record_error(res, s, "check run");
            goto done;
        }
    }

    /* Warm up by count and by time: a GPU that sat idle while the inputs
     * were made needs a few hundred milliseconds of work to reach its
     * working clocks. */
    double warm_start = now_s();
    for (int w = 0; (w < tm.warmup || now_s() - warm_start < tm.warmup_s) && s == WT_OK; w++)
        s = timed_rep(ctx, c, item->params, &in, 1, &cursor, &t, NULL);
    if (s != WT_OK) {
        record_error(res, s, "warm-up");
        goto done;
    }
    /* A single launch's time includes one submit and one sync, so it
     * overstates a launch in a stream of them: it only sizes a probe
     * repetition, whose time per launch sizes the timed ones. */
    int inner = inner_for(&tm, t);
    if (inner > 1) {
        s = timed_rep(ctx, c, item->params, &in, inner, &cursor, &t, NULL);
        if (s != WT_OK) {
            record_error(res, s, "probe run");
            goto done;
        }
        inner = inner_for(&tm, t / inner);
    }
    res->inner = inner;

    /* Per op: wall times, then GPU times. */
    double *samples = malloc((size_t)tm.reps * 2 * sizeof(double));
    if (!samples) {
        res->status = WT_ERR_OUT_OF_MEMORY;
        snprintf(res->error, sizeof res->error, "no memory for %d samples", tm.reps);
        goto done;
    }
    double *gpu_samples = samples + tm.reps;
    double start = now_s();
    int n = 0;
    for (; n < tm.reps; n++) {
        if (n >= 3 && now_s() - start > tm.budget_s) break;
        double gpu = 0;
        s = timed_rep(ctx, c, item->params, &in, inner, &cursor, &t, gpu_timer ? &gpu : NULL);
        if (s != WT_OK) break;
        double ops = (double)inner * plan->ops_per_run;
        samples[n] = t / ops;
        gpu_samples[n] = gpu / ops;
    }
    if (s != WT_OK) {
        record_error(res, s, "timed run");
    } else {
        res->reps = n;
        res->wall_median_s = median_of(samples, n);
        res->median_s = gpu_timer ? median_of(gpu_samples, n) : res->wall_median_s;
        res->gpu_timed = gpu_timer;
        /* GB/s or GFLOP/s */
        res->rate = res->median_s > 0 ? plan->work / res->median_s / 1e9 : 0;
    }
    free(samples);
done:
    inputs_release(&in);
}

/* ------------------------------------------------------------ options */

void bench_usage(FILE *f)
{
    fprintf(f,
            "usage: webtensor bench [options]\n"
            "  --quick               small sizes (under a minute on a small CPU machine)\n"
            "  --size quick|default|large\n"
            "                        large (also --h200): sizes for a data-centre GPU\n"
            "  --backend cpu|webgpu|all   (default: the CPU, and WebGPU on a real GPU; all: any\n"
            "                        adapter, software renderers too)\n"
            "  --api vulkan|gles     the GPU API WebGPU runs on (default: AUTO's choice)\n"
            "  --adapter N           an adapter index from `webtensor info`\n"
            "  --filter NAME[,NAME]  only these cases\n"
            "  --reps N              timed repetitions per case\n"
            "  --threads N           CPU backend threads (default: the library's choice)\n"
            "  --no-check            skip comparing outputs between backends\n"
            "  --cache-hot           one set of inputs for every repetition, so that what fits\n"
            "                        comes from the GPU's cache (default: sets rotated through\n"
            "                        64 MB or more, 256 MB for the quantised products)\n"
            "  --profile             per-op time table of every backend (WebGPU: GPU time by\n"
            "                        kernel, ops then run one per pass, and pipeline-cache\n"
            "                        statistics; CPU: host time by op)\n"
            "  --subgroup-matrix     WebGPU: the matrix units where the adapter has them\n"
            "                        (experimental: WT_EXPERIMENTAL_SUBGROUP_MATRIX)\n"
            "  --timer gpu|wall      gpu (default): GPU time from timestamp queries where the\n"
            "                        device has them, else the wall clock; wall: wall clock only\n"
            "  --csv FILE            also write the results as CSV\n"
            "  --json FILE           also write the results as JSON\n"
            "cases:\n");
    bench_print_cases(f);
}

static bool parse_int(const char *s, int *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (!s[0] || *end || v < -1 || v > 1000000) return false;
    *out = (int)v;
    return true;
}

static bool known_cases(const char *filter)
{
    const char *p = filter;
    while (*p) {
        size_t len = strcspn(p, ",");
        char word[64];
        if (len >= sizeof word) return false;
        memcpy(word, p, len);
        word[len] = '\0';
        if (len > 0 && !bench_find_case(word)) {
            fprintf(stderr, "webtensor bench: no case named %s\n", word);
            return false;
        }
        p += len;
        if (*p == ',') p++;
    }
    return true;
}

/* The per-op table and the pipeline cache of a profiled context. */
static void bench_print_profile(wt_context *ctx, const char *name)
{
    enum { MAX_ENTRIES = 64 };
    wt_profile_entry e[MAX_ENTRIES];
    int n = 0;
    bool gpu = false;
    if (wt_context_profile_end(ctx) != WT_OK ||
        wt_context_profile_summary(ctx, e, MAX_ENTRIES, &n, &gpu) != WT_OK) {
        printf("profile of %s: %s\n", name, wt_last_error());
        return;
    }
    bool cpu = wt_context_backend(ctx) == WT_BACKEND_CPU;
    printf("\nprofile of %s (%s), by %s:\n", name,
           gpu ? "GPU time from timestamp queries" : "host time around each op", cpu ? "op" : "kernel");
    printf("  %-28s %10s %12s %12s %7s\n", cpu ? "op" : "kernel", "count", "total ms", "mean us", "share");
    for (int i = 0; i < n && i < MAX_ENTRIES; i++)
        printf("  %-28s %10llu %12.3f %12.2f %6.1f%%\n", e[i].name, (unsigned long long)e[i].count,
               e[i].total_seconds * 1e3, e[i].mean_seconds * 1e6, e[i].share * 100);
    wt_pipeline_stats ps;
    if (!cpu && wt_context_pipeline_stats(ctx, &ps) == WT_OK)
        printf("pipeline cache: %llu variants, %llu compiles in %.3f s, %llu hits; bind groups "
               "%llu made, %llu reused; %llu dispatches in %llu submits\n",
               (unsigned long long)ps.variants, (unsigned long long)ps.compiles, ps.compile_seconds,
               (unsigned long long)ps.hits, (unsigned long long)ps.bind_groups_made,
               (unsigned long long)ps.bind_group_hits, (unsigned long long)ps.dispatches,
               (unsigned long long)ps.submits);
}

#define VALUE_OPTIONS "--size --backend --api --adapter --reps --threads --timer --filter --csv --json"

/* 0: ok; 2: bad usage (message printed). */
static int parse_options(int argc, char **argv, bench_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = BENCH_SIZE_DEFAULT;
    o->want_cpu = o->want_webgpu = o->webgpu_optional = true;
    o->adapter_index = -1;
    o->check = true;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes_value = true;
        if (strcmp(a, "--quick") == 0) {
            o->size = BENCH_SIZE_QUICK, takes_value = false;
        } else if (strcmp(a, "--h200") == 0) {
            o->size = BENCH_SIZE_LARGE, takes_value = false;
        } else if (strcmp(a, "--subgroup-matrix") == 0) {
            o->subgroup_matrix = true, takes_value = false;
        } else if (strcmp(a, "--no-check") == 0) {
            o->check = false, takes_value = false;
        } else if (strcmp(a, "--cache-hot") == 0) {
            o->cache_hot = true, takes_value = false;
        } else if (strcmp(a, "--profile") == 0) {
            o->profile = true, takes_value = false;
        } else if (!v) {
            fprintf(stderr, "webtensor bench: %s: %s\n",
                    a[0] == '-' && a[1] == '-' && strstr(VALUE_OPTIONS, a) ? "missing value for"
                                                                         : "unknown option",
                    a);
            return 2;
        } else if (strcmp(a, "--size") == 0) {
            if (strcmp(v, "quick") == 0) o->size = BENCH_SIZE_QUICK;
            else if (strcmp(v, "default") == 0) o->size = BENCH_SIZE_DEFAULT;
            else if (strcmp(v, "large") == 0 || strcmp(v, "h200") == 0) o->size = BENCH_SIZE_LARGE;
            else goto bad_value;
        } else if (strcmp(a, "--backend") == 0) {
            o->webgpu_optional = false;
            o->backend_given = true;
            if (strcmp(v, "cpu") == 0) o->want_cpu = true, o->want_webgpu = false;
            else if (strcmp(v, "webgpu") == 0) o->want_cpu = false, o->want_webgpu = true;
            else if (strcmp(v, "all") == 0) o->want_cpu = o->want_webgpu = o->webgpu_optional = true;
            else goto bad_value;
        } else if (strcmp(a, "--api") == 0) {
            if (strcmp(v, "vulkan") == 0) o->gpu_api = WT_GPU_API_VULKAN;
            else if (strcmp(v, "gles") == 0 || strcmp(v, "opengles") == 0) o->gpu_api = WT_GPU_API_OPENGLES;
            else if (strcmp(v, "auto") == 0) o->gpu_api = WT_GPU_API_AUTO;
            else goto bad_value;
        } else if (strcmp(a, "--adapter") == 0) {
            if (!parse_int(v, &o->adapter_index)) goto bad_value;
        } else if (strcmp(a, "--reps") == 0) {
            if (!parse_int(v, &o->reps) || o->reps < 1) goto bad_value;
        } else if (strcmp(a, "--threads") == 0) {
            if (!parse_int(v, &o->threads) || o->threads < 1) goto bad_value;
        } else if (strcmp(a, "--timer") == 0) {
            if (strcmp(v, "wall") == 0) o->wall_clock = true;
            else if (strcmp(v, "gpu") == 0) o->wall_clock = false;
            else goto bad_value;
        } else if (strcmp(a, "--filter") == 0) {
            if (!known_cases(v)) return 2;
            o->filter = v;
        } else if (strcmp(a, "--csv") == 0) {
            o->csv_path = v;
        } else if (strcmp(a, "--json") == 0) {
            o->json_path = v;
        } else {
            fprintf(stderr, "webtensor bench: unknown option: %s\n", a);
            return 2;
        }
        if (takes_value) i++;
        continue;
    bad_value:
        fprintf(stderr, "webtensor bench: bad value for %s: %s\n", a, v);
        return 2;
    }
    return 0;
}

/* Is name one of the comma-separated names of filter? */
static bool filter_matches(const char *filter, const char *name)
{
    if (!filter || !filter[0]) return true;
    const char *p = filter;
    while (*p) {
        size_t len = strcspn(p, ",");
        char word[64];
        if (len > 0 && len < sizeof word) {
            memcpy(word, p, len);
            word[len] = '\0';
            if (strcmp(name, word) == 0) return true;
        }
        p += len;
        if (*p == ',') p++;
    }
    return false;
}

/* --------------------------------------------------------------- main */

static wt_status open_backend(const bench_options *o, wt_backend backend, wt_context **ctx,
                              bench_backend_run *run)
{
    wt_context_options copts;
    wt_context_options_init(&copts);
    copts.backend = backend;
    if (backend == WT_BACKEND_CPU) copts.num_threads = o->threads;
    if (backend == WT_BACKEND_WEBGPU) {
        copts.gpu_api = o->gpu_api;
        copts.adapter_index = o->adapter_index;
        if (o->subgroup_matrix) copts.experimental |= WT_EXPERIMENTAL_SUBGROUP_MATRIX;
    }
    run->backend = backend;
    run->gpu_timer = false;
    run->name = backend == WT_BACKEND_CPU ? "cpu" : "webgpu";
    if (o->threads > 0)
        snprintf(run->device, sizeof run->device, "CPU backend, %d thread%s", o->threads,
                 o->threads > 1 ? "s" : "");
    else
        snprintf(run->device, sizeof run->device, "CPU backend, the library's thread count (the cores left free)");
    wt_status s = wt_context_create(&copts, ctx);
    if (s != WT_OK) return s;
    wt_adapter_info info;
    if (backend == WT_BACKEND_WEBGPU && wt_context_adapter_info(*ctx, &info) == WT_OK)
        snprintf(run->device, sizeof run->device, "%s", info.name);
    /* GPU time where the timer works (timestamp queries), else the wall
     * clock: an empty timed section tells which. */
    double gpu = 0;
    if (!o->wall_clock && wt_context_timer_begin(*ctx) == WT_OK)
        run->gpu_timer = wt_context_timer_end(*ctx, &gpu) == WT_OK;
    return WT_OK;
}

/* Relative agreement of two checksums; results of different summation
 * orders differ in the last bits, garbage differs in the first. */
static bool checksums_agree(double a, double b, double atol)
{
    double scale = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= 1e-3 * scale + 1e-6 + atol;
}

int bench_main(int argc, char **argv)
{
    bench_options opt;
    int rc = parse_options(argc, argv, &opt);
    if (rc) {
        bench_usage(stderr);
        return rc;
    }

    wt_context *ctx[BENCH_MAX_BACKENDS] = {NULL};
    bench_backend_run runs[BENCH_MAX_BACKENDS];
    int nb = 0;
    if (opt.want_cpu) {
        wt_status s = open_backend(&opt, WT_BACKEND_CPU, &ctx[nb], &runs[nb]);
        if (s != WT_OK) {
            fprintf(stderr, "webtensor bench: no CPU context: %s: %s\n", wt_status_string(s),
                    wt_last_error());
            return 1;
        }
        nb++;
    }
    /* --- runtime: by default WebGPU is measured where AUTO would take it
     * (a real GPU); a software renderer only with --backend. */
    if (opt.want_webgpu && !opt.backend_given && opt.adapter_index < 0) {
        wt_context_options lo;
        wt_context_options_init(&lo);
        lo.gpu_api = opt.gpu_api;
        wt_adapter_info ad[16];
        int na = 0;
        bool real = false;
        if (wt_list_adapters(&lo, ad, 16, &na) == WT_OK)
            for (int i = 0; i < na && i < 16; i++) real = real || ad[i].auto_choice;
        if (!real && na > 0) {
            printf("note: the only WebGPU adapters are software renderers (%s), slower than the CPU "
                   "backend, which AUTO takes; measuring the CPU alone (--backend all measures "
                   "both)\n",
                   ad[0].name);
            opt.want_webgpu = false;
        }
    }
    if (opt.want_webgpu) {
        wt_status s = open_backend(&opt, WT_BACKEND_WEBGPU, &ctx[nb], &runs[nb]);
        if (s == WT_OK) {
            nb++;
        } else if (opt.webgpu_optional) {
            printf("note: no WebGPU context (%s: %s); measuring the CPU alone\n",
                   wt_status_string(s), wt_last_error());
        } else {
            fprintf(stderr, "webtensor bench: no WebGPU context: %s: %s\n", wt_status_string(s),
                    wt_last_error());
            for (int b = 0; b < nb; b++) wt_context_destroy(ctx[b]);
            return 1;
        }
    }

    bench_report report = {0};
    report.nbackends = nb;
    report.backends = runs;
    rc = 0;
    if (opt.csv_path && !(report.csv = fopen(opt.csv_path, "w"))) {
        fprintf(stderr, "webtensor bench: cannot write %s\n", opt.csv_path);
        rc = 1;
    }
    if (!rc && opt.json_path && !(report.json = fopen(opt.json_path, "w"))) {
        fprintf(stderr, "webtensor bench: cannot write %s\n", opt.json_path);
        rc = 1;
    }

    int count = 0, matched = 0;
    const bench_item *items = bench_size_items(opt.size, &count);
    /* rc so far: the output files could not be opened; later also any case
     * that failed or disagreed between backends (all cases still run). */
    bool files_ok = rc == 0;
    if (files_ok) {
        bench_timing tm = timing_for(opt.size);
        bench_report_header(&report, opt.size, opt.reps ? opt.reps : tm.reps, tm.target_rep_s,
                            tm.min_inner, MAX_INNER);
    }
    /* --- runtime: --profile times every op of every backend (WebGPU:
     * each in a pass of its own, so its timings above include that cost). */
    for (int b = 0; opt.profile && b < nb; b++)
        if (wt_context_profile_begin(ctx[b]) != WT_OK)
            printf("note: no profile on %s: %s\n", runs[b].name, wt_last_error());
    for (int i = 0; files_ok && i < count; i++) {
        const bench_case *c = bench_find_case(items[i].case_name);
        if (!c || !filter_matches(opt.filter, c->name)) continue;
        matched++;
        bench_plan plan;
        memset(&plan, 0, sizeof plan);
        plan.ops_per_run = 1;
        c->plan(items[i].params, &plan);
        bench_result results[BENCH_MAX_BACKENDS];
        memset(results, 0, sizeof results);
        for (int b = 0; b < nb; b++)
            measure(ctx[b], runs[b].gpu_timer && !c->latency, c, &items[i], i, &plan, &opt,
                    &results[b]);
        const char *check = "-";
        for (int b = 0; b < nb; b++)
            if (results[b].status != WT_OK) rc = 1;
        if (opt.check && nb > 1 && results[0].status == WT_OK && results[1].status == WT_OK) {
            check = "ok";
            if (!checksums_agree(results[0].checksum, results[1].checksum, plan.check_atol)) {
                check = "MISMATCH";
                rc = 1;
            }
        }
        bench_report_row(&report, c, &plan, results, check);
        if (strcmp(check, "MISMATCH") == 0)
            printf("    outputs differ: sum of |out| is %.9g on %s, %.9g on %s\n", results[0].checksum,
                   runs[0].name, results[1].checksum, runs[1].name);
    }
    if (!matched && opt.filter) {
        fprintf(stderr, "webtensor bench: no case matches --filter %s\n", opt.filter);
        rc = 2;
    }
    bench_report_finish(&report);
    for (int b = 0; opt.profile && b < nb; b++) bench_print_profile(ctx[b], runs[b].name);
    /* After the cases: which f16 path the kernels took and what the matrix
     * units ran (chosen at the first f16 kernel, so not known before). */
    for (int b = 0; b < nb; b++) {
        wt_context_info ci;
        if (runs[b].backend == WT_BACKEND_WEBGPU && wt_context_get_info(ctx[b], &ci) == WT_OK)
            printf("%s features: %s\n", runs[b].name, ci.features);
    }
    if (report.csv) fclose(report.csv);
    if (report.json) fclose(report.json);
    for (int b = 0; b < nb; b++) wt_context_destroy(ctx[b]);
    return rc;
}
