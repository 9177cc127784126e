/*
 * webtensor: tensor compute on any GPU through WebGPU, with a CPU backend.
 *
 * The whole public C API (webtensor_io.h adds model files: .npy,
 * safetensors, GGUF). By concept, one header each under webtensor/, which
 * this one includes in this order:
 *
 *    1. errors and version               webtensor/errors.h
 *    2. types                            webtensor/types.h
 *    3. contexts: the runtime            webtensor/context.h
 *    4. scopes                           webtensor/scopes.h
 *    5. tensors: make, read, inspect     webtensor/tensor.h
 *    6. dtypes and casts                 webtensor/dtypes.h
 *    7. views and copies                 webtensor/views.h
 *    8. elementwise                      webtensor/elementwise.h
 *    9. reductions and scans             webtensor/reductions.h
 *   10. data movement                    webtensor/movement.h
 *   11. linear algebra                   webtensor/linalg.h
 *   12. networks                         webtensor/networks.h
 *   13. training                         webtensor/training.h
 *   14. the op catalogue                 webtensor/catalogue.h
 *   15. custom kernels, several devices  webtensor/kernels.h
 *   16. deprecated names                 webtensor/deprecated.h
 *
 * Programs include this header, not the parts: which part holds a
 * declaration is no promise (one may move to another). Each part includes
 * the parts whose names it uses, so each compiles on its own (the build
 * checks it); a later section may use the types of an earlier one, never
 * the other way round.
 *
 * ------------------------------------------------------------- the rules
 * Every declaration of this header's parts follows them; tests/api_rules.c
 * checks the ones marked [checked] on every function and struct (the
 * deprecated names of section 16 excepted), so a new function that breaks
 * one fails the build's tests.
 *
 *  1. Status and results. A call that can fail returns a wt_status
 *     (WT_OK == 0, errors negative) and writes its results through
 *     out-pointers. On failure every tensor out-pointer is set to NULL,
 *     nothing leaks and wt_last_error() holds a message for the calling
 *     thread.
 *  2. Argument order: what the call works on first (the tensor an op
 *     reads, the context of a creation function, the handle of a
 *     runtime call); then the op's other arguments in the order of
 *     PyTorch's functional form where it has one (wt_layer_norm(x,
 *     normalized_ndim, weight, bias, eps) as F.layer_norm), with an axis
 *     before the index tensor or sizes it qualifies (wt_gather(x, axis,
 *     index), wt_split(x, axis, n, sizes)) and a count right before its
 *     array (n, xs; naxes, axes); the options struct after the tensors and
 *     scalars; the out-pointers last, in the order of the results.
 *     [checked: no argument follows a wt_tensor ** except another one]
 *  3. Backward ops, wt_<op>_backward (or _backward_v2, rule 11) for the
 *     forward op wt_<op>: the upstream gradient first (dy, or dloss for a
 *     loss); then the forward's results that the gradient reads
 *     (max_pool2d's indices); then the forward's arguments that it reads,
 *     in the forward's order (tensors, scalars and options alike; a
 *     tensor of which only the size is needed is given by that size after
 *     the tensors, as embedding's num_embeddings); then the gradient
 *     out-pointers (dx, dweight, ...) in the order of the forward's inputs,
 *     any of them NULL to skip it where the op says so. [checked: the
 *     first argument is a const wt_tensor * named d..., every out-pointer
 *     comes last and is named d...]
 *  4. Ops never modify their inputs: input tensors are `const wt_tensor *`
 *     and results are new tensors (contiguous, unless the op makes a
 *     view). A tensor whose elements a call writes in place is a
 *     `wt_tensor *` and comes first: wt_copy_into's dst, the optimizer
 *     steps' param. The only other tensors written in place are state the
 *     caller keeps between calls: the optimizer steps' moments
 *     (momentum_buf, m, v) and batch norm's running_mean and running_var in
 *     training; each op says so. [checked: a wt_tensor * argument is the
 *     first one or one of these]
 *  5. Creation functions are wt_tensor_<what>(ctx, dtype, ...): the
 *     dtype comes right after the context. [checked]
 *  6. Options: an op with more than two tunables, or one whose PyTorch
 *     form has tunables still to come (attention, rope, group norm,
 *     dropout), takes `const wt_<op>_options *opts` after its tensors and
 *     before its out-pointers; NULL means the defaults, which
 *     wt_<op>_options_init writes. Every options struct begins with
 *     uint32_t struct_size, set by its _init, so that later versions can
 *     add fields without breaking programs built against this one.
 *     [checked: struct_size first in every wt_*_options, and an _init]
 *  7. Host scalars are double (integers for counts, extents and axes,
 *     bool for switches, enums for modes); a kernel that computes in f32 rounds them once and
 *     refuses values that are not finite in f32. [checked: no float
 *     argument or options field]
 *  8. Arrays of input tensors are `wt_tensor *const *`, so that a
 *     wt_tensor ** (or wt_tensor *[]) passes without a cast.
 *  9. Names: one name per op, PyTorch's spelling where PyTorch has the op
 *     (layer_norm, rms_norm, scaled_dot_product_attention); an axis
 *     argument is `axis` (int, negative counts from the end), a list of
 *     them `naxes, axes`; sort order is `descending` for every op that
 *     orders (sort, argsort, topk); a 2-D padding is int64_t padding[4],
 *     (top, bottom, left, right), for convolution and pooling alike.
 *     [checked: no options struct has a padding[2]] Getters are wt_<object>_<property>
 *     (wt_tensor_shape, wt_context_backend, wt_context_memory_stats); one
 *     that fills a struct takes it last, as out; get_ only where C gives
 *     the plain name to the struct (wt_context_get_info fills a
 *     wt_context_info).
 * 10. Handles: a function that creates a handle returns one reference to
 *     it; drop it with the matching _release/_destroy (NULL is ignored).
 *     Views share storage and keep it alive.
 * 11. A changed signature gets a new name (the _v2 suffix where the name
 *     itself is right); the old name stays a working, exported function
 *     for one release and is listed in section 16, the only place where
 *     deprecated names are declared.
 *
 * Threads: a context and everything made from it (tensors, views,
 * kernels, events, scopes) are used by one thread at a time; a context may
 * move between threads between calls. Different contexts may be used
 * concurrently from different threads, and created from several threads
 * at once (the library's global state, the loaded WebGPU library, the EGL
 * loader and the environment reads, is set up under pthread_once and a
 * lock). wt_tensor_to uses two contexts: both must be free for the calling
 * thread. wt_list_adapters may run from any thread at any time.
 * wt_last_error() is per thread; wt_context_last_message() and
 * wt_context_last_status() are per context.
 *
 * Execution is deferred on the GPU: ops are recorded and submitted in
 * batches. wt_tensor_read() and wt_context_sync() wait for the work.
 */
#ifndef WEBTENSOR_H
#define WEBTENSOR_H

#include "webtensor/errors.h"
#include "webtensor/types.h"
#include "webtensor/context.h"
#include "webtensor/scopes.h"
#include "webtensor/tensor.h"
#include "webtensor/dtypes.h"
#include "webtensor/views.h"
#include "webtensor/elementwise.h"
#include "webtensor/reductions.h"
#include "webtensor/movement.h"
#include "webtensor/linalg.h"
#include "webtensor/networks.h"
#include "webtensor/training.h"
#include "webtensor/catalogue.h"
#include "webtensor/kernels.h"
#include "webtensor/deprecated.h"

#endif /* WEBTENSOR_H */
