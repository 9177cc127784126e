/* core_api_check <cpu|webgpu>: a program written only against the core
 * API spellings promised in DESIGN.md ("Core of the API"), the way a user
 * outside the project would write it. It uses nothing else from the
 * header and no helpers from the test folder. */
#include <webtensor.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

static int passed, failed;

static void check(int ok, const char *what)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL %s (last error: \"%s\")\n", what, wt_last_error());
    }
}

static int close_to(float got, double want, double tol)
{
    return !isnan(got) && fabs((double)got - want) <= tol * (1.0 + fabs(want));
}

int main(int argc, char **argv)
{
    int webgpu = argc > 1 && !strcmp(argv[1], "webgpu");
    if (argc < 2 || (!webgpu && strcmp(argv[1], "cpu"))) {
        fprintf(stderr, "usage: %s cpu|webgpu\n", argv[0]);
        return 2;
    }
    check(strcmp(wt_version(), "") != 0, "wt_version is not empty");
    check(wt_status_string(WT_OK) != NULL && wt_status_string(WT_ERR_SHAPE) != NULL,
          "wt_status_string names codes");
    check(WT_OK == 0 && WT_ERR_INVALID_ARGUMENT == -1 && WT_ERR_SHAPE == -2 &&
              WT_ERR_OUT_OF_MEMORY == -3 && WT_ERR_NO_DEVICE == -4 && WT_ERR_DEVICE_LOST == -5 &&
              WT_ERR_UNSUPPORTED == -6 && WT_ERR_SHADER == -7 && WT_ERR_BACKEND == -8,
          "status values");
    check(WT_BACKEND_AUTO == 0 && WT_BACKEND_CPU == 1 && WT_BACKEND_WEBGPU == 2, "backend values");

    wt_context_options opts;
    wt_context_options_init(&opts);
    opts.backend = webgpu ? WT_BACKEND_WEBGPU : WT_BACKEND_CPU;
    wt_context *ctx = NULL;
    wt_status s = wt_context_create(&opts, &ctx);
    check(s == WT_OK && ctx != NULL, "wt_context_create");
    if (s != WT_OK || !ctx) {
        printf("core_api %s: %d passed, %d failed\n", argv[1], passed, failed);
        return 1;
    }
    check(wt_context_backend(ctx) == opts.backend, "wt_context_backend is the one requested");

    /* a = [[1,2,3],[4,5,6]], b = [[0.5],[1.5]] (column broadcast) */
    const int64_t sa[2] = {2, 3}, sb[2] = {2, 1};
    const float da[6] = {1, 2, 3, 4, 5, 6}, db[2] = {0.5f, 1.5f};
    wt_tensor *a = NULL, *b = NULL, *z = NULL, *c = NULL, *e = NULL, *m = NULL, *sum = NULL,
              *sumk = NULL;
    check(wt_tensor_from_data(ctx, WT_F32, 2, sa, da, &a) == WT_OK && a, "from_data a");
    check(wt_tensor_from_data(ctx, WT_F32, 2, sb, db, &b) == WT_OK && b, "from_data b");
    check(wt_tensor_zeros(ctx, WT_F32, 2, sa, &z) == WT_OK && z, "zeros");
    if (!a || !b || !z)
        goto done;
    check(wt_tensor_ndim(a) == 2 && wt_tensor_shape(a)[0] == 2 && wt_tensor_shape(a)[1] == 3,
          "ndim/shape of a");
    check(wt_tensor_dtype(a) == WT_F32, "dtype of a");

    float buf[6];
    memset(buf, 0x55, sizeof buf);
    check(wt_tensor_read(z, buf, sizeof buf) == WT_OK, "read zeros");
    int zeros_ok = 1;
    for (int i = 0; i < 6; i++)
        zeros_ok &= buf[i] == 0.0f;
    check(zeros_ok, "zeros are zero");

    /* add with broadcasting */
    check(wt_add(a, b, &c) == WT_OK && c, "add");
    if (c) {
        check(wt_tensor_read(c, buf, sizeof buf) == WT_OK, "read add");
        const double want[6] = {1.5, 2.5, 3.5, 5.5, 6.5, 7.5};
        int ok = 1;
        for (int i = 0; i < 6; i++)
            ok &= close_to(buf[i], want[i], 1e-6);
        check(ok, "add values");
    }

    /* exp */
    check(wt_exp(a, &e) == WT_OK && e, "exp");
    if (e) {
        check(wt_tensor_read(e, buf, sizeof buf) == WT_OK, "read exp");
        int ok = 1;
        for (int i = 0; i < 6; i++)
            ok &= close_to(buf[i], exp(da[i]), 2e-6);
        check(ok, "exp values");
    }

    /* matmul: a [2,3] @ a^T-like [3,2] built from data */
    const int64_t st[2] = {3, 2};
    const float dt[6] = {1, 0, 0, 1, 1, 1};
    wt_tensor *t = NULL;
    check(wt_tensor_from_data(ctx, WT_F32, 2, st, dt, &t) == WT_OK && t, "from_data t");
    if (t) {
        check(wt_matmul(a, t, &m) == WT_OK && m, "matmul");
        if (m) {
            check(wt_tensor_ndim(m) == 2 && wt_tensor_shape(m)[0] == 2 && wt_tensor_shape(m)[1] == 2,
                  "matmul shape");
            float mb[4];
            check(wt_tensor_read(m, mb, sizeof mb) == WT_OK, "read matmul");
            /* [[1+3, 2+3], [4+6, 5+6]] */
            check(close_to(mb[0], 4, 1e-6) && close_to(mb[1], 5, 1e-6) &&
                      close_to(mb[2], 10, 1e-6) && close_to(mb[3], 11, 1e-6),
                  "matmul values");
        }
    }

    /* sum over all axes: 0-d, and with keepdims: [1,1] */
    check(wt_sum(a, 0, NULL, false, &sum) == WT_OK && sum, "sum all");
    if (sum) {
        check(wt_tensor_ndim(sum) == 0, "sum all is 0-d");
        float v = 0;
        check(wt_tensor_read(sum, &v, sizeof v) == WT_OK && close_to(v, 21, 1e-6), "sum value");
    }
    check(wt_sum(a, 0, NULL, true, &sumk) == WT_OK && sumk, "sum all keepdims");
    if (sumk) {
        check(wt_tensor_ndim(sumk) == 2 && wt_tensor_shape(sumk)[0] == 1 &&
                  wt_tensor_shape(sumk)[1] == 1,
              "sum keepdims shape [1,1]");
        float v = 0;
        check(wt_tensor_read(sumk, &v, sizeof v) == WT_OK && close_to(v, 21, 1e-6),
              "sum keepdims value");
    }
    int axis = 1;
    wt_tensor *rows = NULL;
    check(wt_sum(a, 1, &axis, false, &rows) == WT_OK && rows, "sum axis 1");
    if (rows) {
        float rv[2] = {0, 0};
        check(wt_tensor_read(rows, rv, sizeof rv) == WT_OK && close_to(rv[0], 6, 1e-6) &&
                  close_to(rv[1], 15, 1e-6),
              "sum axis 1 values");
        wt_tensor_release(rows);
    }

    /* retain/release: a retained tensor survives one release */
    wt_tensor_retain(a);
    wt_tensor_release(a);
    check(wt_tensor_read(a, buf, sizeof buf) == WT_OK && buf[5] == 6.0f, "retained tensor readable");

    /* an error: shapes that do not broadcast */
    {
        wt_tensor *bad = (wt_tensor *)&passed; /* must be overwritten with NULL */
        wt_tensor *m2 = NULL;
        check(wt_matmul(a, a, &m2) == WT_ERR_SHAPE && m2 == NULL, "matmul shape error");
        check(wt_last_error()[0] != '\0', "error message present");
        check(wt_add(a, t, &bad) == WT_ERR_SHAPE && bad == NULL, "add shape error sets out NULL");
    }
    check(wt_context_sync(ctx) == WT_OK, "sync");
    wt_tensor_release(t);

done:
    wt_tensor_release(a);
    wt_tensor_release(b);
    wt_tensor_release(z);
    wt_tensor_release(c);
    wt_tensor_release(e);
    wt_tensor_release(m);
    wt_tensor_release(sum);
    wt_tensor_release(sumk);
    wt_context_destroy(ctx);
    printf("core_api %s: %d passed, %d failed\n", argv[1], passed, failed);
    return failed ? 1 : 0;
}
