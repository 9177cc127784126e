/* A program built against an installed webtensor the way the README says
 * (cc prog.c $(pkg-config --cflags --libs webtensor)): the installed
 * headers compile (webtensor.h with the parts it includes from
 * webtensor/, and the headers beside it), and the header and the library
 * found agree on the version and compute a sum. Built and run by
 * install_consumer.sh. */
#include <webtensor.h>
#include <webtensor_io.h>
#include <webtensor_tokenizer.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    if (strcmp(wt_version(), WT_VERSION_STRING) != 0) {
        printf("FAIL: the library is %s, the installed header %s\n", wt_version(), WT_VERSION_STRING);
        return 1;
    }
    wt_context_options opts;
    wt_context_options_init(&opts);
    opts.backend = WT_BACKEND_CPU;
    wt_context *ctx = NULL;
    wt_tensor *a = NULL, *b = NULL, *sum = NULL;
    const int64_t shape[1] = {3};
    const float xa[3] = {1.0f, 2.0f, 3.0f}, xb[3] = {0.5f, -4.0f, 8.0f};
    float got[3] = {0};
    wt_status st = wt_context_create(&opts, &ctx);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_F32, 1, shape, xa, &a);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_F32, 1, shape, xb, &b);
    if (st == WT_OK) st = wt_add(a, b, &sum);
    if (st == WT_OK) st = wt_tensor_read(sum, got, sizeof got);
    if (st != WT_OK) printf("FAIL: %s: %s\n", wt_status_string(st), wt_last_error());
    wt_tensor_release(sum);
    wt_tensor_release(b);
    wt_tensor_release(a);
    wt_context_destroy(ctx);
    if (st != WT_OK) return 1;
    for (int i = 0; i < 3; i++) {
        if (got[i] != xa[i] + xb[i]) {
            printf("FAIL: element %d is %g, not %g\n", i, (double)got[i], (double)(xa[i] + xb[i]));
            return 1;
        }
    }
    printf("install_consumer: webtensor %s, built against the installed headers, added [1 2 3] + [0.5 -4 8]\n",
           wt_version());
    return 0;
}
