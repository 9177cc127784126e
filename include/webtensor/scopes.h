/* Section 4 of webtensor.h: scopes, and graphs captured once and replayed. */
#ifndef WEBTENSOR_SCOPES_H
#define WEBTENSOR_SCOPES_H

#include "errors.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======== 4. Scopes ====================================================== */
/* *
 * A scope releases the temporaries of a computation together. While a
 * scope is the innermost open scope of its context, every tensor made on
 * that context (the result of any op, a view, a created or loaded tensor)
 * is owned by the scope: the reference the call returns is the scope's,
 * and wt_scope_end releases it. The caller uses such a tensor as usual
 * until then:
 *
 *     wt_scope *s;
 *     wt_scope_begin(ctx, &s);
 *     wt_tensor *h, *y, *out;
 *     wt_linear(x, w1, NULL, &h);
 *     wt_relu(h, &y);
 *     wt_linear(y, w2, NULL, &out);
 *     wt_scope_keep(s, out);   (out outlives the scope)
 *     wt_scope_end(s);         (h and y are released)
 *
 *  - wt_scope_keep(s, t) hands the scope's reference to t on: to the
 *    enclosing scope of the context if there is one (which releases it
 *    when it ends, unless kept again), else to the caller, who releases it
 *    with wt_tensor_release. t must be owned by s (made while s was the
 *    innermost scope, or kept into s from a scope inside it), else
 *    WT_ERR_INVALID_ARGUMENT.
 *  - wt_tensor_retain adds a reference of the caller's own: the tensor
 *    then outlives the scope (one release of the caller's is due).
 *  - Releasing a tensor by hand inside the scope is allowed: the scope
 *    never releases a tensor that is gone, so nothing is released twice.
 *  - Scopes nest: wt_scope_begin inside an open scope opens an inner one,
 *    which owns what is made until it ends. They end in the reverse order:
 *    ending a scope while a scope begun after it is still open returns
 *    WT_ERR_INVALID_ARGUMENT, releases nothing and leaves both open.
 *  - wt_scope_end frees the handle (a later use of it is a use after
 *    free, like a second wt_tensor_release). A scope keeps its context
 *    alive: it may end after wt_context_destroy.
 *  - Every tensor a call returns inside a scope is a new handle the scope
 *    owns (wt_contiguous gives a view rather than its input); ops inside
 *    the library make and release their own temporaries, and take no
 *    lasting reference to their inputs, so a tensor made outside the scope
 *    is never released by it.
 *  - Thread safety: a scope belongs to its context (one thread at a time).
 *    Tensors of other contexts are not affected by it.
 *  - Costs: one pointer per tensor owned; a tensor made outside any scope
 *    costs nothing. Making a tensor inside a scope may fail with
 *    WT_ERR_OUT_OF_MEMORY when the scope's list cannot grow. */
typedef struct wt_scope wt_scope;
WT_API wt_status wt_scope_begin(wt_context *ctx, wt_scope **out);
WT_API wt_status wt_scope_keep(wt_scope *scope, wt_tensor *t);
WT_API wt_status wt_scope_end(wt_scope *scope);

/* --- captured graphs ---
 *
 * A graph records the kernels that a sequence of ops runs and runs them
 * again on wt_graph_replay without the ops' front-ends (argument checks,
 * shapes, dtype decisions, allocations): a prepared statement, or a CUDA
 * graph. Between wt_graph_begin and wt_graph_end the ops run as usual (their
 * results are real); the graph holds a reference to every tensor they
 * read or wrote:
 *
 *     wt_graph *g;
 *     wt_graph_begin(ctx);
 *     wt_linear(x, w, b, &h); wt_gelu(h, &y); wt_tensor_release(h);
 *     wt_graph_end(ctx, &g);
 *     for (each step) {
 *         wt_tensor_write(x, host_input, bytes);   (the new input, in place)
 *         wt_graph_replay(g);                      (y holds the new result)
 *         wt_tensor_read(y, host_output, bytes);
 *     }
 *     wt_graph_release(g);
 *
 *  - A replay runs the same kernels on the same tensors with the same
 *    parameters, so it gives the same bits as running the ops again on the
 *    same values. Inputs are changed in place (wt_tensor_write,
 *    wt_copy_into); results are read from the tensors the captured ops
 *    returned, which stay valid while the graph lives even if released.
 *    Temporaries no handle reaches any more (every handle released before
 *    the first replay) may share device memory in replays on WebGPU, as
 *    eager ops reuse freed buffers (WT_GRAPH_REPLAY_SHARE=0: never;
 *    wt_pipeline_stats.replay_shared_bytes counts them).
 *  - Everything an op decided at the capture is frozen: shapes, dtypes,
 *    scalars, the kernel chosen, and what an op read back from the device
 *    (one_hot with num_classes -1). Ops on other contexts are not captured.
 *  - An op that fails during the capture fails as usual and loses the
 *    capture: wt_graph_end then returns its error and no graph.
 *    Custom kernels (wt_kernel_dispatch) are not captured yet (the capture
 *    is lost with WT_ERR_UNSUPPORTED).
 *  - Values that change per step: a replay cannot change a captured
 *    scalar, so ops whose scalar moves from step to step read it from a
 *    small i32 tensor on the device instead, which the caller updates with
 *    wt_tensor_write before each replay: wt_rope_options.position (the
 *    position of the first token), wt_copy_into_at (the place a slice is
 *    written, e.g. a KV-cache row), wt_attention_options.kv_length (how
 *    many cached keys are valid). A decode step over a KV cache of fixed
 *    size is captured once and replayed for every token:
 *        int32_t pos = prompt_len + i;
 *        wt_tensor_write(position, &pos, sizeof pos);
 *        wt_graph_replay(step);
 *    Ops such as wt_embedding and wt_gather take their indices from a
 *    device tensor already (the next token, chosen by wt_argmax in the
 *    graph, stays on the device).
 *  - A whole training step is capturable: forward, wt_backward,
 *    wt_optimizer_clip_grad_norm and wt_optimizer_step, whose step number,
 *    learning rate and bias corrections live on the device and advance in
 *    every replay (see wt_optimizer_step).
 *  - Errors of a replay are the kernels': WT_ERR_DEVICE_LOST after a
 *    device loss (the graph's tensors died with it: release the graph),
 *    index checks found on a GPU at the next sync.
 *  - Autograd: the kernels of a backward pass captured are replayed like
 *    any others; a replay records nothing.
 *  - A graph keeps its context alive; wt_graph_end (or wt_graph_release
 *    of the capturing graph) must end a capture. One capture per context at a
 *    time; replay during a capture is WT_ERR_INVALID_ARGUMENT. */
typedef struct wt_graph wt_graph;
/* Ops of ctx run from here on are captured. */
WT_API wt_status wt_graph_begin(wt_context *ctx);
/* Ends the capture begun on ctx and gives its graph (or the error that
 * lost it, and no graph). */
WT_API wt_status wt_graph_end(wt_context *ctx, wt_graph **out);
/* Runs the captured kernels again on the tensors they were captured with. */
WT_API wt_status wt_graph_replay(wt_graph *graph);
/* The number of kernels (nodes) a replay runs. */
WT_API wt_status wt_graph_node_count(const wt_graph *graph, int64_t *count);
/* NULL is ignored. */
WT_API void wt_graph_release(wt_graph *graph);

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_SCOPES_H */
