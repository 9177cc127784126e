/* The gradient checks of the autograd suite (autograd_gradcheck.c) and
 * its parts: autograd_ops.c (elementwise, reductions, views and
 * movement), autograd_nn.c (nn ops, f16, fused attention), autograd.c
 * (the tape's contract, memory, the catalogue, a small MLP, main). */
#ifndef WT_TEST_AUTOGRAD_H
#define WT_TEST_AUTOGRAD_H

#include "test_util.h"

#include <stdbool.h>
#include <stdint.h>

extern wt_context *g_ctx; /* the backend under test */
extern wt_context *g_cpu; /* finite differences */

/* SPREAD: distinct magnitudes 0.07 apart (no near-ties for max-like ops
 * within the finite-difference step). */
enum { ANY = 0, POSITIVE, AWAY_FROM_0, SMALL, INDEX, SPREAD, ABOVE_1 };

typedef struct spec {
    int ndim;
    int64_t shape[5];
    int kind;         /* how values are drawn */
    bool grad;        /* requires grad (checked) */
    bool transposed;  /* a transposed view of the last two axes */
    int32_t index_hi; /* INDEX: values in [0, index_hi) */
} spec;

typedef wt_status (*fwd_fn)(wt_tensor *const *in, wt_tensor **out);

/* d/dx sum(r * f(inputs)) through the tape on g_ctx against float64 central
 * finite differences of f on the CPU backend: |tape - fd| <= atol + rtol * |fd|. */
void gradcheck(const char *name, fwd_fn f, int nin, const spec *sp, double rtol, double atol);

/* The gradient of sum(r * f(inputs)) with every float input f16 (leaves
 * of f16, so activations are f16 and gradients f32) against the same with
 * f32 inputs holding the same values: max |g16 - g32| <= tol * max |g32|.
 * f16 rounds each activation to 11 bits (relative 4.9e-4), so a few
 * roundings on the way give about 1e-3 of the largest gradient; the
 * stated tolerance is 5e-3. */
void f16check(const char *name, fwd_fn f, int nin, const spec *sp);

#define S1(a) {1, {a}}
#define S2(a, b) {2, {a, b}}
#define S3(a, b, c) {3, {a, b, c}}
#define S4(a, b, c, d) {4, {a, b, c, d}}

/* Shared by the movement rows and the f16 checks. */
wt_status fwd_embedding(wt_tensor *const *in, wt_tensor **out);

/* The suites, in the order main runs them (the draws of one seed). */
void test_unary(void);
void test_binary(void);
void test_select(void);
void test_reductions(void);
void test_movement(void);
void test_nn(void);
void test_f16(void);
void test_attention_fused(test_backend b);
void test_attention_fused_shapes(test_backend b);
void test_attention_head_views(test_backend b);
void test_attention_qkv_rows(test_backend b);
void test_norm_backward_fused(test_backend b);

#endif
