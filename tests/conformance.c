/* conformance <cpu|vulkan|gles>: every op of the op table over every shape
 * class of its kind, against float64 references.
 *
 * Each case checks: the status (and that the library refuses what NumPy
 * refuses), the result's shape and contiguity, its values within the op's
 * tolerance, that the read wrote nothing past the result, and that every
 * input (view and base) is unchanged afterwards. One line per failing
 * case; the last line is "conformance <backend>: N passed, M failed". */
#include "conformance.h"
#include "op_table.h"
#include "test_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static wt_context *g_ctx;
static const char *g_backend;
static uint64_t g_seed;
static int g_cases_passed, g_cases_failed;

/* The case being run, for failure lines. */
typedef struct case_ctx {
    const op_entry *op;
    const char *cls;
    const char *inputs;
    bool failed;
} case_ctx;

static void case_fail(case_ctx *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void case_fail(case_ctx *c, const char *fmt, ...)
{
    c->failed = true;
    /* One line per failure, even when a message (a shader compiler's) has
     * several. */
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    printf("FAIL op=%s class=\"%s\" inputs=%s backend=%s seed=%" PRIu64 ": %s\n", c->op->name,
           c->cls, c->inputs, g_backend, g_seed, msg);
    fflush(stdout);
}

static void case_end(case_ctx *c)
{
    if (c->failed)
        g_cases_failed++;
    else
        g_cases_passed++;
}

/* ------------------------------------------------------------ comparing */

static double allowed_error(tol_class tol, const ref_result *ref, int64_t i)
{
    double want = ref->value[i];
    switch (tol) {
    case TOL_EXACT:
        return 0.0;
    case TOL_ELEMENTWISE:
        return 1e-6 + 1e-5 * fabs(want);
    case TOL_TRANSCENDENTAL:
        return 1e-6 + 1.2e-5 * fabs(want);
    case TOL_ACCUMULATE: {
        /* Rounding grows with the number of terms; 1e-5 of sum |terms| up
         * to 1024 terms, then like sqrt(K). */
        double k = (double)(ref->terms > 1 ? ref->terms : 1);
        double rtol = 1e-5 * (k > 1024 ? sqrt(k / 1024.0) : 1.0);
        return 1e-6 + rtol * (ref->abs_terms ? ref->abs_terms[i] : fabs(want)) +
               6e-8 * fabs(want);
    }
    }
    return 0.0;
}

/* Compares got with ref; reports the count of wrong values and the worst
 * one (by error over allowed error). NaN where the reference is a number,
 * or a number where it is NaN, is always wrong. */
static void compare_values(case_ctx *c, const float *got, const ref_result *ref)
{
    int64_t bad = 0, worst_i = -1;
    double worst_ratio = -1, max_err = 0;
    for (int64_t i = 0; i < ref->numel; i++) {
        double want = ref->value[i], g = got[i];
        float want_f = (float)want;
        double err, allowed = allowed_error(c->op->tol, ref, i);
        bool ok;
        if (isnan(want) || isnan(g)) {
            ok = isnan(want) && isnan(g);
            err = ok ? 0 : INFINITY;
        } else if (isinf(want_f) || isinf(g)) {
            ok = g == (double)want_f;
            err = ok ? 0 : INFINITY;
        } else if (c->op->tol == TOL_EXACT) {
            /* Exact ops must give the f32 rounding of the reference. */
            err = fabs(g - (double)want_f);
            ok = err == 0;
        } else {
            err = fabs(g - want);
            ok = err <= allowed;
        }
        if (err > max_err)
            max_err = err;
        if (!ok) {
            bad++;
            double ratio = allowed > 0 ? err / allowed : INFINITY;
            if (ratio > worst_ratio) {
                worst_ratio = ratio;
                worst_i = i;
            }
        }
    }
    if (bad > 0) {
        int64_t i = worst_i;
        case_fail(c,
                  "%" PRId64 " of %" PRId64 " values wrong, max error %.3g; worst element %" PRId64
                  ": got %.9g, want %.9g (allowed error %.3g)",
                  bad, ref->numel, max_err, i, (double)got[i], ref->value[i],
                  allowed_error(c->op->tol, ref, i));
    }
}

/* Reads t and compares it bit for bit with the host data (inputs must be
 * unchanged by ops). */
static void check_unchanged(case_ctx *c, const wt_tensor *t, const host_tensor *h,
                            const char *which)
{
    char err[300];
    float *got = test_read_guarded(t, err, sizeof err);
    if (!got) {
        case_fail(c, "%s: reading it back after the op: %s", which, err);
        return;
    }
    if (h->numel > 0 && memcmp(got, h->data, (size_t)h->numel * sizeof(float)) != 0) {
        int64_t i = 0;
        while (i < h->numel && memcmp(&got[i], &h->data[i], sizeof(float)) == 0)
            i++;
        case_fail(c, "%s was modified by the op (element %" PRId64 ": %.9g, was %.9g)", which, i,
                  (double)got[i], (double)h->data[i]);
    }
    free(got);
}

static void check_inputs(case_ctx *c, const test_input *in, int n)
{
    for (int i = 0; i < n; i++) {
        char what[64];
        snprintf(what, sizeof what, "input %d", i);
        check_unchanged(c, in[i].dev, &in[i].host, what);
        snprintf(what, sizeof what, "input %d's base", i);
        check_unchanged(c, in[i].dev_base, &in[i].base, what);
    }
}

/* Checks a result against its reference: shape, contiguity, values. */
static void check_result(case_ctx *c, const wt_tensor *out, const ref_result *ref, bool contiguous)
{
    char want[160], got[160];
    int nd = wt_tensor_ndim(out);
    const int64_t *sh = wt_tensor_shape(out);
    if (nd != ref->ndim || (nd > 0 && (!sh || memcmp(sh, ref->shape, (size_t)nd * sizeof *sh)))) {
        case_fail(c, "result shape %s, expected %s",
                  sh || nd == 0 ? test_shape_str(nd, sh, got, sizeof got) : "(null)",
                  test_shape_str(ref->ndim, ref->shape, want, sizeof want));
        return;
    }
    wt_dtype want_dtype = c->op->out_bool ? WT_BOOL : WT_F32;
    if (wt_tensor_dtype(out) != want_dtype)
        case_fail(c, "result dtype %s, expected %s", wt_dtype_name(wt_tensor_dtype(out)),
                  wt_dtype_name(want_dtype));
    if (contiguous && !wt_tensor_is_contiguous(out))
        case_fail(c, "result is not contiguous");
    /* A bool result is read as 0/1 floats (wt_cast is checked on its own
     * in the dtypes suite). */
    wt_tensor *as_f32 = NULL;
    if (wt_tensor_dtype(out) == WT_BOOL) {
        wt_status s = wt_cast(out, WT_F32, &as_f32);
        if (s != WT_OK) {
            case_fail(c, "casting the bool result to f32: %s", wt_last_error());
            return;
        }
        out = as_f32;
    }
    char err[300];
    float *vals = test_read_guarded(out, err, sizeof err);
    wt_tensor_release(as_f32);
    if (!vals) {
        case_fail(c, "reading the result: %s", err);
        return;
    }
    compare_values(c, vals, ref);
    free(vals);
}

/* Builds inputs from case strings; reports and returns false on failure. */
static bool build_inputs(case_ctx *c, const char *const *texts, const float *lo, const float *hi,
                         const float *special, int nspecial, test_input *in, int n)
{
    memset(in, 0, (size_t)n * sizeof *in);
    for (int i = 0; i < n; i++) {
        input_spec spec;
        char err[256];
        if (!spec_parse(texts[i], &spec, err, sizeof err)) {
            case_fail(c, "bad case: %s", err);
            return false;
        }
        wt_status s = input_build(g_ctx, &spec, lo[i], hi[i], special, nspecial, &in[i], err,
                                  sizeof err);
        if (s != WT_OK) {
            case_fail(c, "building input %d (%s) failed: %s", i, texts[i], err);
            for (int j = 0; j < i; j++)
                input_free(&in[j]);
            return false;
        }
    }
    return true;
}

/* Runs what the library did against what the reference said. expect_ok:
 * the reference accepted the shapes; want_error: the code a refusal must
 * carry (0: any error). */
static void check_status(case_ctx *c, wt_status s, wt_tensor *out, bool expect_ok,
                         const char *ref_err, wt_status want_error)
{
    if (expect_ok && s != WT_OK)
        case_fail(c, "returned %s (%s), expected success", wt_status_string(s), wt_last_error());
    if (!expect_ok) {
        if (s == WT_OK)
            case_fail(c, "succeeded, expected an error (%s)", ref_err);
        else if (want_error != WT_OK && s != want_error)
            case_fail(c, "returned %s, expected %s (%s)", wt_status_string(s),
                      wt_status_string(want_error), ref_err);
        else if (!wt_last_error()[0])
            case_fail(c, "returned %s with an empty wt_last_error()", wt_status_string(s));
        if (out)
            case_fail(c, "set *out on failure");
    }
}

/* ------------------------------------------------------------- op kinds */

static void run_unary(const op_entry *op, const char *cls, const char *x, const float *special,
                      int nspecial)
{
    case_ctx c = {op, cls, x, false};
    test_input in;
    if (build_inputs(&c, &x, &op->lo, &op->hi, special, nspecial, &in, 1)) {
        ref_result ref;
        bool ref_ok = op->kind == OP_COPY ? ref_identity(&in.host, &ref)
                                          : ref_unary(op->ref1, &in.host, &ref);
        if (!ref_ok) {
            case_fail(&c, "reference out of memory");
        } else {
            wt_tensor *out = NULL;
            wt_status s = op->unary(in.dev, &out);
            check_status(&c, s, out, true, "", WT_OK);
            if (s == WT_OK && out) {
                check_result(&c, out, &ref, true);
                if (op->unary == wt_contiguous && wt_tensor_is_contiguous(in.dev) && out != in.dev)
                    case_fail(&c, "wt_contiguous of a contiguous tensor did not return it");
                if (op->unary == wt_copy && out == in.dev)
                    case_fail(&c, "wt_copy returned its input");
            }
            wt_tensor_release(out);
            check_inputs(&c, &in, 1);
            ref_free(&ref);
        }
        input_free(&in);
    }
    case_end(&c);
}

static void run_binary(const op_entry *op, const binary_case *bc)
{
    char label[256];
    snprintf(label, sizeof label, "%s,%s", bc->a, bc->b);
    case_ctx c = {op, bc->cls, label, false};
    const char *texts[2] = {bc->a, bc->b};
    float lo[2] = {op->lo, op->lo2}, hi[2] = {op->hi, op->hi2};
    test_input in[2];
    if (build_inputs(&c, texts, lo, hi, NULL, 0, in, 2)) {
        ref_result ref;
        char err[256] = "";
        bool ref_ok = op->kind == OP_MATMUL
                          ? ref_matmul(&in[0].host, &in[1].host, &ref, err, sizeof err)
                          : ref_binary(op->ref2, &in[0].host, &in[1].host, &ref, err, sizeof err);
        wt_tensor *out = NULL;
        wt_status s = op->binary(in[0].dev, in[1].dev, &out);
        check_status(&c, s, out, ref_ok, err, WT_ERR_SHAPE);
        if (ref_ok && s == WT_OK && out)
            check_result(&c, out, &ref, true);
        wt_tensor_release(out);
        check_inputs(&c, in, 2);
        if (ref_ok)
            ref_free(&ref);
        input_free(&in[0]);
        input_free(&in[1]);
    }
    case_end(&c);
}

static void run_reduce(const op_entry *op, const reduce_case *rc)
{
    char label[256];
    int n = snprintf(label, sizeof label, "%s axes={", rc->x);
    for (int i = 0; i < rc->naxes; i++)
        n += snprintf(label + n, sizeof label - (size_t)n, "%s%d", i ? "," : "", rc->axes[i]);
    snprintf(label + n, sizeof label - (size_t)n, "} keepdims=%d", (int)rc->keepdims);
    case_ctx c = {op, rc->cls, label, false};
    float lo = rc->lo != rc->hi ? rc->lo : op->lo, hi = rc->lo != rc->hi ? rc->hi : op->hi;
    test_input in;
    if (build_inputs(&c, &rc->x, &lo, &hi, NULL, 0, &in, 1)) {
        ref_result ref;
        char err[256] = "";
        bool ref_ok = ref_reduce(op->ref_reduce, &in.host, rc->naxes, rc->axes, rc->keepdims, &ref,
                                 err, sizeof err);
        wt_tensor *out = NULL;
        wt_status s = op->reduce(in.dev, rc->naxes, rc->naxes ? rc->axes : NULL, rc->keepdims, &out);
        check_status(&c, s, out, ref_ok, err, WT_ERR_SHAPE);
        if (ref_ok && s == WT_OK && out)
            check_result(&c, out, &ref, true);
        wt_tensor_release(out);
        check_inputs(&c, &in, 1);
        if (ref_ok)
            ref_free(&ref);
        input_free(&in);
    }
    case_end(&c);
}

/* softmax, layernorm, rmsnorm: x, and for the norms an optional weight and
 * bias. */
static void run_rowwise(const op_entry *op, const rowwise_case *rc)
{
    bool norm = op->row != ROW_SOFTMAX;
    char label[256];
    if (norm)
        snprintf(label, sizeof label, "%s weight=%s%s%s", rc->x, rc->w ? rc->w : "NULL",
                 op->row == ROW_LAYERNORM ? " bias=" : "",
                 op->row == ROW_LAYERNORM ? (rc->b ? rc->b : "NULL") : "");
    else
        snprintf(label, sizeof label, "%s axis=%d", rc->x, rc->axis);
    case_ctx c = {op, rc->cls, label, false};
    const char *texts[3] = {rc->x, NULL, NULL};
    float lo[3] = {rc->lo != rc->hi ? rc->lo : op->lo, op->lo2, -1.0f};
    float hi[3] = {rc->lo != rc->hi ? rc->hi : op->hi, op->hi2, 1.0f};
    int n = 1, wi = -1, bi = -1;
    if (norm && rc->w)
        wi = n, texts[n++] = rc->w;
    if (op->row == ROW_LAYERNORM && rc->b) {
        bi = n, texts[n] = rc->b;
        lo[n] = -1.0f, hi[n] = 1.0f;
        n++;
    }
    test_input in[3];
    if (build_inputs(&c, texts, lo, hi, NULL, 0, in, n)) {
        ref_result ref;
        char err[256] = "";
        const double eps = 1e-5;
        bool ref_ok = norm ? ref_norm(op->row == ROW_RMSNORM, &in[0].host,
                                      wi >= 0 ? &in[wi].host : NULL, bi >= 0 ? &in[bi].host : NULL,
                                      eps, &ref, err, sizeof err)
                           : ref_softmax(&in[0].host, rc->axis, &ref, err, sizeof err);
        wt_tensor *out = NULL, *w = wi >= 0 ? in[wi].dev : NULL, *b = bi >= 0 ? in[bi].dev : NULL;
        wt_status s;
        if (op->row == ROW_SOFTMAX)
            s = wt_softmax(in[0].dev, rc->axis, &out);
        else if (op->row == ROW_LAYERNORM)
            s = wt_layernorm(in[0].dev, w, b, (float)eps, &out);
        else
            s = wt_rmsnorm(in[0].dev, w, (float)eps, &out);
        check_status(&c, s, out, ref_ok, err, norm ? WT_ERR_SHAPE : WT_ERR_INVALID_ARGUMENT);
        if (ref_ok && s == WT_OK && out)
            check_result(&c, out, &ref, true);
        wt_tensor_release(out);
        check_inputs(&c, in, n);
        if (ref_ok)
            ref_free(&ref);
        for (int i = 0; i < n; i++)
            input_free(&in[i]);
    }
    case_end(&c);
}

/* A view case: everything but the last step builds the input; the last
 * step is the op under test. */
static void run_view(const op_entry *op, const view_case *vc)
{
    case_ctx c = {op, vc->cls, vc->x, false};
    input_spec spec;
    char err[256];
    if (!spec_parse(vc->x, &spec, err, sizeof err) || spec.nviews == 0) {
        case_fail(&c, "bad case: %s", err);
        case_end(&c);
        return;
    }
    view_step step = spec.views[--spec.nviews];
    test_input in;
    wt_status s = input_build(g_ctx, &spec, op->lo, op->hi, NULL, 0, &in, err, sizeof err);
    if (s != WT_OK) {
        case_fail(&c, "building the input failed: %s", err);
        case_end(&c);
        return;
    }
    host_tensor want;
    if (!host_apply_view(&in.host, &step, &want)) {
        case_fail(&c, "bad case: the view does not apply on the host");
    } else {
        wt_memory_stats before, after;
        memset(&before, 0, sizeof before);
        memset(&after, 0, sizeof after);
        wt_status st1 = wt_context_memory_stats(g_ctx, &before);
        wt_tensor *out = NULL;
        s = device_apply_view(in.dev, &step, &out);
        wt_status st2 = wt_context_memory_stats(g_ctx, &after);
        if (st1 != WT_OK || st2 != WT_OK)
            case_fail(&c, "wt_context_memory_stats failed: %s", wt_last_error());
        check_status(&c, s, out, true, "", WT_OK);
        if (s == WT_OK && out) {
            /* Views move no data (reshape may copy when strides demand). */
            if (step.kind != VIEW_RESHAPE && after.live_bytes != before.live_bytes)
                case_fail(&c, "the view allocated memory (%" PRIu64 " -> %" PRIu64 " live bytes)",
                          before.live_bytes, after.live_bytes);
            ref_result ref;
            if (ref_identity(&want, &ref)) {
                check_result(&c, out, &ref, false);
                ref_free(&ref);
            }
            /* The view must keep working as an op input. */
            wt_tensor *neg = NULL;
            s = wt_neg(out, &neg);
            if (s != WT_OK) {
                case_fail(&c, "wt_neg of the view failed: %s (%s)", wt_status_string(s),
                          wt_last_error());
            } else {
                float *vals = test_read_guarded(neg, err, sizeof err);
                if (!vals) {
                    case_fail(&c, "reading neg of the view: %s", err);
                } else {
                    for (int64_t i = 0; i < want.numel; i++)
                        if (vals[i] != -want.data[i]) {
                            case_fail(&c, "neg of the view: element %" PRId64 " is %.9g, want %.9g",
                                      i, (double)vals[i], -(double)want.data[i]);
                            break;
                        }
                    free(vals);
                }
            }
            wt_tensor_release(neg);
        }
        wt_tensor_release(out);
        check_inputs(&c, &in, 1);
        host_free(&want);
    }
    input_free(&in);
    case_end(&c);
}

/* ---------------------------------------------------------------- main */

static void run_op(const op_entry *op)
{
    switch (op->kind) {
    case OP_UNARY:
    case OP_COPY:
        for (int i = 0; i < g_n_unary_cases; i++) {
            const unary_case *uc = &g_unary_cases[i];
            if ((uc->big && !op_runs_big_cases(op)) || (uc->heavy && !op_runs_heavy_cases(op)) ||
                (uc->only && strcmp(uc->only, op->name)))
                continue;
            run_unary(op, uc->cls, uc->x, NULL, 0);
        }
        if (op->nspecial > 0) {
            char text[64];
            snprintf(text, sizeof text, "[%d]", op->nspecial * 13);
            run_unary(op, "special values", text, op->special, op->nspecial);
        }
        break;
    case OP_BINARY:
    case OP_MATMUL: {
        const binary_case *cases = op->kind == OP_MATMUL ? g_matmul_cases : g_binary_cases;
        int n = op->kind == OP_MATMUL ? g_n_matmul_cases : g_n_binary_cases;
        for (int i = 0; i < n; i++)
            if ((!cases[i].big || op_runs_big_cases(op)) && (!cases[i].heavy || op_runs_heavy_cases(op)))
                run_binary(op, &cases[i]);
        break;
    }
    case OP_REDUCE:
        for (int i = 0; i < g_n_reduce_cases; i++)
            if (!g_reduce_cases[i].big || op->big)
                run_reduce(op, &g_reduce_cases[i]);
        break;
    case OP_ROWWISE:
        for (int i = 0; i < g_n_rowwise_cases; i++) {
            const rowwise_case *rc = &g_rowwise_cases[i];
            if (!rc->only || !strcmp(rc->only, op->name))
                run_rowwise(op, rc);
        }
        break;
    case OP_VIEW:
        for (int i = 0; i < g_n_view_cases; i++) {
            input_spec spec;
            char err[256];
            if (spec_parse(g_view_cases[i].x, &spec, err, sizeof err) && spec.nviews > 0 &&
                spec.views[spec.nviews - 1].kind == op->view)
                run_view(op, &g_view_cases[i]);
        }
        break;
    }
}

int main(int argc, char **argv)
{
    test_backend b = test_parse_backend(argc > 1 ? argv[1] : NULL);
    if (b == TEST_BACKEND_INVALID) {
        fprintf(stderr, "usage: %s cpu|vulkan|gles [op ... | -op ...]\n", argv[0]);
        return 2;
    }
    /* Optional filter: "conformance cpu add exp" runs those ops only,
     * "conformance cpu -add -exp" every op but those. A name that is no op
     * is an error, so a list that went stale does not pass silently. */
    bool only_named = false;
    for (int j = 2; j < argc; j++) {
        const char *want = argv[j] + (argv[j][0] == '-');
        bool known = false;
        for (int i = 0; i < g_nops; i++)
            known |= !strcmp(want, g_ops[i].name);
        if (!known) {
            fprintf(stderr, "conformance: no op named %s\n", want);
            return 2;
        }
        only_named |= argv[j][0] != '-';
    }
    g_backend = test_backend_name(b);
    g_seed = test_seed();
    test_rng_seed(g_seed);
    printf("conformance %s: seed %" PRIu64 " (set WT_TEST_SEED to change)\n", g_backend, g_seed);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "conformance %s", g_backend);

    if (test_create_context(b, &g_ctx) != WT_OK) {
        printf("%s: 0 passed, 1 failed\n", prefix);
        return 1;
    }
    g_cases_failed += g_test_failed; /* adapter checks */
    g_test_failed = 0;

    for (int i = 0; i < g_nops; i++) {
        const op_entry *op = &g_ops[i];
        bool selected = !only_named;
        for (int j = 2; j < argc; j++) {
            if (argv[j][0] == '-' && !strcmp(argv[j] + 1, op->name)) selected = false;
            if (argv[j][0] != '-' && !strcmp(argv[j], op->name)) selected = true;
        }
        if (!selected)
            continue;
        clock_t t0 = clock();
        int failed0 = g_cases_failed, passed0 = g_cases_passed;
        run_op(op);
        printf("  %-12s %3d cases, %d failed (%.2f s cpu)\n", op->name,
               g_cases_passed - passed0 + g_cases_failed - failed0, g_cases_failed - failed0,
               (double)(clock() - t0) / CLOCKS_PER_SEC);
        fflush(stdout);
    }

    /* A device error in the recorded work surfaces here at the latest. */
    wt_status s = wt_context_sync(g_ctx);
    if (s != WT_OK) {
        printf("FAIL backend=%s: wt_context_sync: %s (%s)\n", g_backend, wt_status_string(s),
               wt_last_error());
        g_cases_failed++;
    } else {
        g_cases_passed++;
    }
    /* Every tensor has been released: nothing may stay alive. */
    wt_memory_stats st;
    s = wt_context_memory_stats(g_ctx, &st);
    if (s != WT_OK || st.live_tensors != 0 || st.live_bytes != 0) {
        printf("FAIL backend=%s: after releasing every tensor: %" PRIu64 " storages, %" PRIu64
               " bytes still live (%s)\n",
               g_backend, st.live_tensors, st.live_bytes, wt_status_string(s));
        g_cases_failed++;
    } else {
        g_cases_passed++;
    }
    wt_context_destroy(g_ctx);

    printf("%s: %d passed, %d failed\n", prefix, g_cases_passed, g_cases_failed);
    return g_cases_failed ? 1 : 0;
}
