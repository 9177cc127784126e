/* Asynchronous work: many ops recorded with small batches, reads started
 * in the middle while recording goes on, every value checked; events
 * polled and waited; flush.
 *
 *   runtime_async cpu|vulkan|gles
 */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

enum { N = 4099, STEPS = 240, EVERY = 12, READS = STEPS / EVERY };

int main(int argc, char **argv)
{
    test_backend b = test_parse_backend(argc > 1 ? argv[1] : "");
    if (b == TEST_BACKEND_INVALID) {
        fprintf(stderr, "usage: runtime_async cpu|vulkan|gles\n");
        return 2;
    }
    wt_context_options o;
    test_backend_options(b, &o);
    o.dispatches_per_submit = 5; /* the knob: many submits along the way */
    wt_context *ctx = NULL;
    wt_status s = wt_context_create(&o, &ctx);
    if (!CHECK(s == WT_OK, "context: %s", wt_last_error())) return test_summary("runtime_async");
    wt_context_info ci;
    CHECK(wt_context_get_info(ctx, &ci) == WT_OK &&
              (b == TEST_BACKEND_CPU || ci.dispatches_per_submit == 5),
          "dispatches per submit %u", ci.dispatches_per_submit);

    static float init[N], got[READS][N], strided[READS][N / 2 + 1];
    for (int i = 0; i < N; i++) init[i] = (float)(i % 97);
    int64_t n = N, one = 1;
    wt_tensor *x = NULL, *inc = NULL;
    CHECK(wt_tensor_from_data(ctx, WT_F32, 1, &n, init, &x) == WT_OK, "x");
    CHECK(wt_tensor_full(ctx, WT_F32, 1, &one, 1.0, &inc) == WT_OK, "1");
    wt_event *reads[READS] = {0}, *views[READS] = {0};
    int nr = 0;
    for (int step = 1; step <= STEPS && x; step++) {
        wt_tensor *y = NULL;
        s = wt_add(x, inc, &y); /* x + step after this */
        if (!CHECK(s == WT_OK, "add %d: %s", step, wt_last_error())) break;
        wt_tensor_release(x);
        x = y;
        if (step % EVERY == 0) {
            CHECK(wt_tensor_read_async(x, got[nr], sizeof got[nr], &reads[nr]) == WT_OK,
                  "read_async: %s", wt_last_error());
            wt_tensor *v = NULL; /* every other element: a view, gathered first */
            CHECK(wt_slice(x, 0, 0, N, 2, &v) == WT_OK &&
                      wt_tensor_read_async(v, strided[nr], sizeof strided[nr], &views[nr]) == WT_OK,
                  "read_async of a view: %s", wt_last_error());
            wt_tensor_release(v);
            nr++;
        }
        if (step == STEPS / 2) CHECK(wt_context_flush(ctx) == WT_OK, "flush");
    }
    /* An event after everything; poll it until done, then wait on the reads. */
    wt_event *mark = NULL;
    CHECK(wt_event_record(ctx, &mark) == WT_OK, "record: %s", wt_last_error());
    bool done = false;
    for (int spin = 0; spin < 2000000 && !done; spin++)
        CHECK(wt_event_query(mark, &done) == WT_OK, "query");
    CHECK(done, "the event completes while polled");
    CHECK(wt_event_wait(mark) == WT_OK, "wait on a completed event");
    for (int r = 0; r < nr; r++) {
        CHECK(wt_event_wait(reads[r]) == WT_OK && wt_event_wait(views[r]) == WT_OK, "wait %d: %s", r,
              wt_last_error());
        float add = (float)((r + 1) * EVERY);
        int bad = 0;
        for (int i = 0; i < N; i++) bad += got[r][i] != init[i] + add;
        for (int i = 0; i < (N + 1) / 2; i++) bad += strided[r][i] != init[2 * i] + add;
        CHECK(bad == 0, "read %d (after step %d): %d stale or wrong values", r, (r + 1) * EVERY, bad);
    }
    for (int r = 0; r < nr; r++) {
        wt_event_destroy(reads[r]);
        wt_event_destroy(views[r]);
    }
    wt_event_destroy(mark);
    /* A pending event destroyed at once: waits, no leak, no crash. */
    wt_event *e = NULL;
    float one_back[N];
    CHECK(wt_tensor_read_async(x, one_back, sizeof one_back, &e) == WT_OK, "read to destroy");
    wt_event_destroy(e);
    CHECK(one_back[0] == init[0] + STEPS, "the destroyed read still landed: %g", one_back[0]);
    bool d;
    CHECK(wt_event_query(NULL, &d) == WT_ERR_INVALID_ARGUMENT, "query NULL");
    CHECK(wt_tensor_read_async(x, NULL, 4, &e) == WT_ERR_INVALID_ARGUMENT && !e, "NULL dst");
    CHECK(wt_tensor_read_async(x, one_back, 4, &e) == WT_ERR_INVALID_ARGUMENT && !e, "short dst");
    wt_tensor_release(x);
    wt_tensor_release(inc);
    wt_context_destroy(ctx);
    return test_summary("runtime_async");
}
