/* The first program to read: a context, two tensors, a few ops, a read.
 * Build: cc hello.c $(pkg-config --cflags --libs webtensor) */
#include <stdio.h>
#include <webtensor.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        wt_status s_ = (call);                                                         \
        if (s_ != WT_OK) {                                                             \
            fprintf(stderr, "%s: %s\n", wt_status_string(s_), wt_last_error());       \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

int main(void)
{
    wt_context *ctx;
    CHECK(wt_context_create(NULL, &ctx)); /* WebGPU if a real adapter exists, else CPU */
    printf("webtensor %s on %s\n", wt_version(),
           wt_context_backend(ctx) == WT_BACKEND_WEBGPU ? "WebGPU" : "CPU");

    int64_t shape_a[2] = {2, 3}, shape_b[2] = {3, 2};
    float a_data[6] = {1, 2, 3, 4, 5, 6};
    float b_data[6] = {0.5f, -1, 2, 0.25f, -0.5f, 1};
    wt_tensor *a, *b, *c, *s;
    CHECK(wt_tensor_from_data(ctx, WT_F32, 2, shape_a, a_data, &a));
    CHECK(wt_tensor_from_data(ctx, WT_F32, 2, shape_b, b_data, &b));
    CHECK(wt_matmul(a, b, &c));             /* [2, 2] */
    int axis = 1;
    CHECK(wt_sum(c, 1, &axis, false, &s));  /* row sums: [2] */

    float out[4], sums[2];
    CHECK(wt_tensor_read(c, out, sizeof out));
    CHECK(wt_tensor_read(s, sums, sizeof sums));
    printf("a @ b = [[%g, %g], [%g, %g]], row sums = [%g, %g]\n", out[0], out[1], out[2], out[3],
           sums[0], sums[1]);

    wt_tensor_release(s);
    wt_tensor_release(c);
    wt_tensor_release(b);
    wt_tensor_release(a);
    wt_context_destroy(ctx);
    return 0;
}
