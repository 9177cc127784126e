/* scope <cpu|vulkan|gles>: scopes (webtensor.h, "scopes") release what was
 * made inside them and nothing else. Counts come from the context's memory
 * statistics (live storages and bytes): after each end exactly the tensors
 * the scope owned are gone; kept, retained and outside tensors stay
 * readable with their values; a tensor released by hand inside a scope is
 * not released again; scopes nest; ends out of order are refused. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *g_mode;
static wt_context *g_ctx;

static uint64_t live(void)
{
    wt_memory_stats ms;
    if (wt_context_memory_stats(g_ctx, &ms) != WT_OK) return UINT64_MAX;
    return ms.live_tensors;
}

static wt_tensor *vec(const float *v, int64_t n)
{
    wt_tensor *t = NULL;
    CHECK(wt_tensor_from_data(g_ctx, WT_F32, 1, &n, v, &t) == WT_OK, "from_data [%s]: %s", g_mode, wt_last_error());
    return t;
}

static bool reads(const wt_tensor *t, const float *want, int n)
{
    float got[16];
    if (!t || n > 16 || wt_tensor_read(t, got, sizeof(float) * (size_t)n) != WT_OK) return false;
    for (int i = 0; i < n; i++)
        if (fabsf(got[i] - want[i]) > 1e-5f * (1 + fabsf(want[i]))) return false;
    return true;
}

/* Results of ops, views and multi-output ops are released at the end; a
 * kept result outlives it with its values. */
static void test_basic(void)
{
    const float xv[4] = {1, -2, 3, -4}, wv[4] = {0.5f, 0.5f, 2, 2};
    wt_tensor *x = vec(xv, 4), *w = vec(wv, 4);
    const uint64_t base = live();
    wt_scope *s = NULL;
    if (!CHECK(wt_scope_begin(g_ctx, &s) == WT_OK, "begin [%s]: %s", g_mode, wt_last_error())) return;
    wt_tensor *p = NULL, *r = NULL, *y = NULL, *v = NULL, *parts[2] = {NULL, NULL}, *vals = NULL, *idx = NULL;
    const int64_t s22[2] = {2, 2};
    CHECK(wt_mul(x, w, &p) == WT_OK && wt_relu(p, &r) == WT_OK && wt_add_scalar(r, 1.0, &y) == WT_OK,
          "ops [%s]: %s", g_mode, wt_last_error());
    CHECK(wt_reshape(y, 2, s22, &v) == WT_OK, "reshape [%s]: %s", g_mode, wt_last_error());
    int nout = 0;
    CHECK(wt_chunk(x, 0, 2, &nout, parts) == WT_OK && nout == 2, "chunk [%s]: %s", g_mode, wt_last_error());
    CHECK(wt_sort(x, 0, false, &vals, &idx) == WT_OK, "sort [%s]: %s", g_mode, wt_last_error());
    /* x*w = .5 -1 6 -8; relu + 1 = 1.5 1 7 1 */
    const float want_y[4] = {1.5f, 1, 7, 1}, want_sorted[4] = {-4, -2, 1, 3};
    CHECK(reads(v, want_y, 4) && reads(vals, want_sorted, 4), "values inside the scope [%s]", g_mode);
    /* p, r, y, the sorted values and indices; the reshape and the chunks
     * are views (no storage of their own). */
    CHECK(live() == base + 5, "inside: %llu storages made, expected 5",
          (unsigned long long)(live() - base));
    CHECK(wt_scope_keep(s, v) == WT_OK, "keep [%s]: %s", g_mode, wt_last_error());
    CHECK(wt_scope_end(s) == WT_OK, "end [%s]: %s", g_mode, wt_last_error());
    /* v is a view of y's storage: that one storage stays. */
    CHECK(live() == base + 1, "after end: %llu storages over the baseline, expected 1 (the kept view's)",
          (unsigned long long)(live() - base));
    CHECK(reads(v, want_y, 4) && reads(x, xv, 4), "kept view and the input keep their values [%s]", g_mode);
    wt_tensor_release(v);
    CHECK(live() == base, "after releasing the kept tensor: back to the baseline [%s]", g_mode);
    wt_tensor_release(x);
    wt_tensor_release(w);
}

/* Released by hand, retained, shared (wt_contiguous returns its input). */
static void test_hand_release_and_retain(void)
{
    const float xv[3] = {1, 2, 3};
    wt_tensor *x = vec(xv, 3);
    const uint64_t base = live();
    wt_scope *s = NULL;
    if (!CHECK(wt_scope_begin(g_ctx, &s) == WT_OK, "begin [%s]", g_mode)) return;
    wt_tensor *a = NULL, *b = NULL, *c = NULL, *same = NULL, *same2 = NULL;
    CHECK(wt_exp(x, &a) == WT_OK && wt_neg(x, &b) == WT_OK && wt_sqrt(x, &c) == WT_OK, "ops [%s]", g_mode);
    CHECK(live() == base + 3, "three results [%s]", g_mode);
    wt_tensor_release(a); /* by hand: gone now, and not released again at the end */
    CHECK(live() == base + 2, "a released by hand is gone at once [%s]", g_mode);
    wt_tensor_retain(b); /* the caller's own reference: b outlives the scope */
    /* x was made outside: wt_contiguous gives a view of it that the scope
     * owns; ops on x (which take and drop references to their inputs) do
     * not make the scope own x. */
    CHECK(wt_contiguous(x, &same) == WT_OK && same != x && reads(same, xv, 3),
          "contiguous of a contiguous tensor in a scope: a view with its values [%s]", g_mode);
    CHECK(wt_contiguous(c, &same2) == WT_OK && same2 != c, "contiguous of c [%s]", g_mode);
    wt_tensor *ln = NULL, *sm = NULL;
    CHECK(wt_layernorm(x, NULL, NULL, 1e-5f, &ln) == WT_OK && wt_softmax(x, 0, &sm) == WT_OK,
          "ops that take x contiguous as it is [%s]: %s", g_mode, wt_last_error());
    CHECK(live() == base + 4, "c, b, ln, sm alive, the views of x and c share storage [%s]: %llu", g_mode,
          (unsigned long long)(live() - base));
    CHECK(wt_scope_end(s) == WT_OK, "end [%s]: %s", g_mode, wt_last_error());
    const float want_b[3] = {-1, -2, -3};
    CHECK(live() == base + 1 && reads(b, want_b, 3), "after end only the retained b stays [%s]: %llu", g_mode,
          (unsigned long long)(live() - base));
    CHECK(reads(x, xv, 3), "x, made before the scope, is still the caller's [%s]", g_mode);
    wt_tensor_release(b);
    CHECK(live() == base, "baseline [%s]", g_mode);
    wt_tensor_release(x);
    CHECK(live() == base - 1, "x's one reference was the caller's: released once, gone [%s]", g_mode);
}

/* Nested scopes: the inner one releases its own; a kept tensor passes to
 * the outer one, which releases it unless it is kept again. */
static void test_nesting(void)
{
    const float xv[2] = {4, 9};
    wt_tensor *x = vec(xv, 2);
    const uint64_t base = live();
    wt_scope *outer = NULL, *inner = NULL, *innermost = NULL;
    wt_tensor *o1 = NULL, *i1 = NULL, *i2 = NULL, *k = NULL, *deep = NULL;
    if (!CHECK(wt_scope_begin(g_ctx, &outer) == WT_OK, "outer [%s]", g_mode)) return;
    CHECK(wt_neg(x, &o1) == WT_OK, "o1");
    if (CHECK(wt_scope_begin(g_ctx, &inner) == WT_OK, "inner [%s]", g_mode)) {
        CHECK(wt_sqrt(x, &i1) == WT_OK && wt_exp(i1, &i2) == WT_OK && wt_add(i1, o1, &k) == WT_OK, "inner ops");
        if (CHECK(wt_scope_begin(g_ctx, &innermost) == WT_OK, "innermost [%s]", g_mode)) {
            CHECK(wt_mul(k, k, &deep) == WT_OK, "deep");
            CHECK(wt_scope_keep(innermost, deep) == WT_OK, "keep deep into inner [%s]: %s", g_mode, wt_last_error());
            CHECK(wt_scope_end(innermost) == WT_OK, "innermost end");
        }
        CHECK(live() == base + 5, "o1 i1 i2 k deep alive [%s]: %llu", g_mode, (unsigned long long)(live() - base));
        CHECK(wt_scope_keep(inner, k) == WT_OK, "keep k into the outer scope [%s]", g_mode);
        CHECK(wt_scope_keep(inner, deep) == WT_OK, "keep deep again, into the outer scope [%s]", g_mode);
        CHECK(wt_scope_end(inner) == WT_OK, "inner end [%s]", g_mode);
    }
    /* sqrt(x) = 2 3; k = 2-4, 3-9 = -2 -6; deep = 4 36 */
    const float want_k[2] = {-2, -6}, want_deep[2] = {4, 36};
    CHECK(live() == base + 3 && reads(k, want_k, 2), "after the inner end: o1, k and deep remain [%s]: %llu", g_mode,
          (unsigned long long)(live() - base));
    CHECK(wt_scope_keep(outer, deep) == WT_OK, "keep deep out of every scope [%s]", g_mode);
    CHECK(wt_scope_end(outer) == WT_OK, "outer end [%s]", g_mode);
    CHECK(live() == base + 1 && reads(deep, want_deep, 2), "only deep outlives the outer scope [%s]", g_mode);
    wt_tensor_release(deep);
    CHECK(live() == base, "baseline [%s]", g_mode);
    wt_tensor_release(x);
}

/* An end out of order is refused and releases nothing; a tensor made
 * while the inner scope is open, released in the outer one by hand, is
 * gone once. */
static void test_out_of_order(void)
{
    const float xv[2] = {1, 2};
    wt_tensor *x = vec(xv, 2);
    const uint64_t base = live();
    wt_scope *outer = NULL, *inner = NULL;
    wt_tensor *a = NULL, *b = NULL;
    if (!CHECK(wt_scope_begin(g_ctx, &outer) == WT_OK && wt_scope_begin(g_ctx, &inner) == WT_OK, "begin x2")) return;
    CHECK(wt_neg(x, &a) == WT_OK && wt_exp(x, &b) == WT_OK, "ops");
    wt_status st = wt_scope_end(outer);
    CHECK(st == WT_ERR_INVALID_ARGUMENT && wt_last_error()[0], "outer end while the inner is open [%s]: %s",
          g_mode, wt_status_string(st));
    CHECK(live() == base + 2, "nothing released by the refused end [%s]", g_mode);
    CHECK(wt_scope_end(inner) == WT_OK && live() == base, "inner end releases a and b [%s]", g_mode);
    CHECK(wt_scope_end(outer) == WT_OK, "then the outer end works [%s]: %s", g_mode, wt_last_error());
    /* By hand, from an enclosing scope. */
    CHECK(wt_scope_begin(g_ctx, &outer) == WT_OK && wt_scope_begin(g_ctx, &inner) == WT_OK, "begin x2");
    CHECK(wt_neg(x, &a) == WT_OK, "neg");
    CHECK(wt_scope_end(inner) == WT_OK && live() == base, "a released with the inner scope");
    CHECK(wt_sqrt(x, &b) == WT_OK && live() == base + 1, "b in the outer scope");
    wt_tensor_release(b);
    CHECK(live() == base && wt_scope_end(outer) == WT_OK && live() == base, "b by hand, then the end [%s]", g_mode);
    wt_tensor_release(x);
}

/* Many tensors, half released by hand in a scattered order: the slots of
 * the gone ones are reused, and the end releases the rest exactly. */
static void test_many(void)
{
    const float xv[1] = {2};
    wt_tensor *x = vec(xv, 1);
    const uint64_t base = live();
    enum { N = 600 };
    wt_tensor *t[N];
    wt_scope *s = NULL;
    if (!CHECK(wt_scope_begin(g_ctx, &s) == WT_OK, "begin")) return;
    int made = 0;
    for (int i = 0; i < N; i++) {
        t[i] = NULL;
        if (wt_mul_scalar(x, (double)i, &t[i]) == WT_OK) made++;
        if (i % 3 == 1 && i >= 3) { /* release an older one: holes in the middle */
            wt_tensor_release(t[i - 3]);
            t[i - 3] = NULL;
            made--;
        }
    }
    CHECK(live() == base + (uint64_t)made, "%d alive inside [%s]: %llu", made, g_mode,
          (unsigned long long)(live() - base));
    const float want[1] = {2.0f * (N - 1)};
    CHECK(reads(t[N - 1], want, 1), "last value [%s]", g_mode);
    CHECK(wt_scope_keep(s, t[N - 2]) == WT_OK, "keep one of many");
    CHECK(wt_scope_end(s) == WT_OK && live() == base + 1, "end releases the rest [%s]: %llu", g_mode,
          (unsigned long long)(live() - base));
    wt_tensor_release(t[N - 2]);
    wt_tensor_release(x);
}

/* Another context's tensors are not the scope's; a scope may end after
 * its context was destroyed, and its tensors stay readable until then. */
static void test_contexts(test_backend be)
{
    wt_context *c2 = NULL;
    if (test_create_context(be, &c2) != WT_OK) return;
    const float xv[2] = {1, 2};
    int64_t n = 2;
    wt_tensor *x2 = NULL, *y2 = NULL, *mine = NULL;
    CHECK(wt_tensor_from_data(c2, WT_F32, 1, &n, xv, &x2) == WT_OK, "x2");
    const uint64_t base = live();
    wt_scope *s = NULL;
    CHECK(wt_scope_begin(g_ctx, &s) == WT_OK, "begin");
    CHECK(wt_neg(x2, &y2) == WT_OK, "an op on the other context inside the scope");
    CHECK(wt_tensor_to(x2, g_ctx, &mine) == WT_OK, "a copy onto the scope's context");
    CHECK(wt_scope_end(s) == WT_OK && live() == base, "the copy on the scope's context was released [%s]", g_mode);
    const float want[2] = {-1, -2};
    CHECK(reads(y2, want, 2), "the other context's result is the caller's [%s]", g_mode);
    wt_tensor_release(y2);

    wt_scope *s2 = NULL;
    wt_tensor *z = NULL;
    CHECK(wt_scope_begin(c2, &s2) == WT_OK && wt_neg(x2, &z) == WT_OK, "a scope on the second context");
    wt_context_destroy(c2);
    CHECK(reads(z, want, 2), "a scope's tensor after its context was destroyed [%s]", g_mode);
    CHECK(wt_scope_end(s2) == WT_OK, "the scope ends after the destroy [%s]: %s", g_mode, wt_last_error());
    wt_tensor_release(x2); /* the context's last tensor: it goes now */
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "scope", argc, argv)) return run.status;
    g_ctx = run.ctx;
    g_mode = run.mode;
    const test_backend b = run.backend;
    const uint64_t start = live();
    test_basic();
    test_hand_release_and_retain();
    test_nesting();
    test_out_of_order();
    test_many();
    test_contexts(b);
    CHECK(live() == start, "every test left the context as it found it [%s]: %llu -> %llu", g_mode,
          (unsigned long long)start, (unsigned long long)live());
    return test_end(&run);
}
