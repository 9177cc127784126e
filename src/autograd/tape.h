/* Reverse-mode automatic differentiation: the recorded graph.
 *
 * Recording happens at the level of the PUBLIC ops: a call of wt_mul,
 * wt_softmax, wt_conv2d ... whose inputs require grad becomes one node of
 * the graph (its catalogue op, edges to where its inputs' gradients go,
 * the tensors its derivative needs, its scalar parameters), and each
 * result gets a record pointing at that node. The op's body runs with
 * recording paused, so the public ops it is composed of are not recorded
 * again. A derivative is one rule per catalogue op (autograd/rules*.c,
 * the table in rules_table.c), written with public ops, which run with
 * recording off: backward works on every backend without kernels of its
 * own.
 *
 * The graph is held by the tensors (a result's record holds its node, a
 * node holds the nodes of its inputs), as in PyTorch: a forward pass that
 * is never differentiated is freed with its tensors. Saved tensors are
 * views of their storage without records (no cycle through a saved
 * result) and remember the storage's version (core/node.c bumps it on
 * every write), so an in-place change before backward is refused. */
#ifndef WT_AUTOGRAD_TAPE_H
#define WT_AUTOGRAD_TAPE_H

#include "api/api.h"

enum { WT_GRAD_MAX_IN = 8, WT_GRAD_MAX_SAVED_OUT = 2 };

typedef struct wt_grad_node wt_grad_node;

/* A tensor's part in autograd (wt_tensor.autograd). */
typedef struct wt_grad_meta {
    int refcount;        /* the tensor's, plus one per edge of a node to this leaf */
    bool requires_grad;  /* a leaf the caller marked */
    wt_grad_node *fn;    /* the node that made the tensor (one reference); NULL: a leaf */
    int slot;            /* which output of fn */
    int nondiff_op;      /* -1, or the non-differentiable op that made it (for the message) */
    wt_tensor *grad;     /* a leaf's accumulated gradient (f32, contiguous) */
    wt_tensor *pending;  /* during a backward pass: the gradient reaching this leaf */
    int want;            /* during wt_grad: the index of the input it is, else -1 */
    wt_grad_ready_fn ready_fn; /* wt_tensor_set_grad_ready_hook's, or NULL */
    void *ready_user;
    int ready_edges;     /* during backward: contributions still to come */
    bool ready_final;    /* during backward: pending is the final .grad */
} wt_grad_meta;

/* Where an input's gradient goes: a node's output, or a leaf; neither
 * when the input needs none. */
typedef struct wt_grad_edge {
    wt_grad_node *fn;
    int slot;
    wt_grad_meta *leaf;
} wt_grad_edge;

/* The scalar parameters of a call, as its front-end fills them. */
typedef struct wt_grad_params {
    int64_t i[2 * WT_MAX_DIMS + 4];
    double d[4];
    bool b[4];
    union {
        wt_conv_options conv;
        wt_pool2d_options pool;
        wt_cross_entropy_options ce;
        wt_interpolate_options interp;
    } o;
} wt_grad_params;

typedef struct wt_grad_out {
    int ndim;
    int64_t shape[WT_MAX_DIMS];
    wt_tensor *grad; /* during backward: the gradient reaching this output */
} wt_grad_out;

struct wt_grad_node {
    int refcount;
    wt_op op;
    wt_context *ctx;
    int nin, nout;
    wt_grad_edge next[WT_GRAD_MAX_IN];
    bool given[WT_GRAD_MAX_IN]; /* the input was not NULL */
    int in_ndim[WT_GRAD_MAX_IN];
    int64_t in_shape[WT_GRAD_MAX_IN][WT_MAX_DIMS];
    wt_dtype in_dtype[WT_GRAD_MAX_IN];
    /* Saved for the rule (views without records); NULL where not saved. */
    wt_tensor *saved_in[WT_GRAD_MAX_IN];
    wt_tensor *saved_out[WT_GRAD_MAX_SAVED_OUT];
    wt_tensor *extra[2]; /* tensors a front-end keeps (max_pool2d's indices) */
    uint64_t version_in[WT_GRAD_MAX_IN], version_out[WT_GRAD_MAX_SAVED_OUT], version_extra[2];
    wt_grad_params p;
    wt_grad_out *out;   /* nout entries */
    bool released;      /* a backward without retain_graph has used it */
    /* --- during a backward pass --- */
    int topo;           /* -1 outside a pass */
    int deps;           /* edges from nodes of the pass not yet processed */
};

/* What a rule does (rules_table.c). */
typedef enum wt_grad_kind {
    WT_GRAD_MISSING = 0,   /* no entry: a test fails for it */
    WT_GRAD_RULE,          /* differentiable: rule below */
    WT_GRAD_NONDIFF,       /* not differentiable (indices, comparisons, random, integers) */
    WT_GRAD_NO_INPUTS,     /* makes tensors from nothing (creation, random numbers) */
    WT_GRAD_IN_PLACE,      /* updates its arguments (copy_into, optimizer steps): never recorded */
    WT_GRAD_NO_RULE_YET,   /* differentiable, no rule yet: refused with WT_ERR_UNSUPPORTED */
    WT_GRAD_COMPOSED       /* differentiable: while recording, the front-end runs the public ops it
                            * is made of, each recorded with its own rule (linear_fused) */
} wt_grad_kind;

/* gout[k]: the gradient of output k (never NULL: zeros where none came);
 * the rule writes gin[i] (new references, the input's shape) for the
 * inputs that need one (wt_grad_needs) and may leave the others NULL. */
typedef wt_status (*wt_grad_rule_fn)(const wt_grad_node *n, wt_tensor *const *gout, wt_tensor **gin);

typedef struct wt_grad_rule {
    wt_grad_kind kind;
    wt_grad_rule_fn rule;
    unsigned save_in;  /* bit i: keep input i for the rule */
    unsigned save_out; /* bit k: keep output k */
} wt_grad_rule;

extern const wt_grad_rule wt_grad_rules[WT_OP_COUNT];

static inline bool wt_grad_needs(const wt_grad_node *n, int i)
{
    return n->next[i].fn || n->next[i].leaf;
}

/* Frees a node's saved tensors (once a backward has used them). */
void wt_grad_node_release_saved(wt_grad_node *n);

/* --- recording, from the front-ends --- */

/* One call of a public op as its front-end describes it. */
typedef struct wt_grad_call {
    wt_op op;
    int nin;
    const wt_tensor *in[WT_GRAD_MAX_IN];
    wt_grad_params p;
    wt_tensor *extra[2]; /* references the node takes (released on failure) */
    bool nondiff;        /* this call's results are constants (a cast to i32 or bool) */
    wt_context *ctx;     /* set by wt_grad_begin */
} wt_grad_call;

/* The fast test every hooked front-end makes first: whether any given
 * tensor has a record at all (inference tensors never do). */
static inline bool wt_grad_any(const wt_tensor *a, const wt_tensor *b, const wt_tensor *c,
                               const wt_tensor *d)
{
    return (a && a->autograd) || (b && b->autograd) || (c && c->autograd) || (d && d->autograd);
}

/* True when the call must be recorded (recording is on for the context
 * and an input requires grad): recording is then paused until
 * wt_grad_end, and the caller runs the op's body. */
bool wt_grad_begin(wt_grad_call *c);
/* Resumes recording; when st is WT_OK records the call with its nout
 * results outs[0..nout-1] (a result that is an input returned as it is
 * keeps its record). A failure to record releases the results, sets them
 * NULL and returns the error; c->extra is released on any failure. */
wt_status wt_grad_end(wt_grad_call *c, wt_status st, int nout, wt_tensor **outs);

/* The hook at the top of a front-end, for inputs (a, b, c, d) (NULL where
 * unused): when recording is due, calls `call` (the front-end itself,
 * now with recording paused) and records it; fields are wt_grad_call's.
 *     WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_softmax(x, axis, out),
 *                  .op = WT_OP_SOFTMAX, .nin = 1, .in = {x}, .p.i = {axis});  */
#define WT_GRAD_HOOK(ins, nout, outs, call, ...)                                         \
    do {                                                                                \
        if (wt_grad_any ins) {                                                          \
            wt_grad_call gc_ = {__VA_ARGS__};                                           \
            if (wt_grad_begin(&gc_)) return wt_grad_end(&gc_, (call), (nout), (outs));  \
        }                                                                               \
    } while (0)

/* wt_grad_end for an op whose differentiable result comes with i32
 * indices (max pools, sort, topk): the body was run with &own indices;
 * the node keeps them for the rule and *indices (NULL: not wanted) gets
 * them. */
wt_status wt_grad_end_indexed(wt_grad_call *c, wt_status st, wt_tensor **out, wt_tensor *own, wt_tensor **indices);
/* The parameters of a reduction: p.i[0] naxes, p.i[1..] axes, p.b[0]
 * keepdims, p.d[0] d0 (correction, ord). */
wt_grad_params wt_grad_axes(int naxes, const int *axes, bool keepdims, double d0);

/* Parameters p.i[0..n-1] = v (a permutation ...). */
wt_grad_params wt_grad_ints(int n, const int *v);
/* Whether t requires grad (a marked leaf or a recorded result). */
bool wt_grad_tracks(const wt_tensor *t);
/* Whether ops on ctx are recorded now. */
bool wt_grad_recording(const wt_context *ctx);

/* The parameters of the ops taking options structs (p.o) are filled by
 * their front-ends (grad_params in api/conv.c, pool.c, interpolate.c,
 * train.c), which own the options' defaults. */

/* The hook of concat and stack (a list of n inputs, at most
 * WT_GRAD_MAX_IN recorded): *handled when the call is to be recorded
 * (recording paused, c ready for wt_grad_end). */
wt_status wt_grad_hook_list(wt_op op, int n, wt_tensor *const *xs, int axis, bool *handled,
                            wt_grad_call *c);
#define WT_GRAD_HOOK_LIST(op, n, xs, axis, call, out)                                      \
    do {                                                                                  \
        bool handled_ = false;                                                            \
        wt_grad_call gc_;                                                                 \
        wt_status hst_ = wt_grad_hook_list(op, n, xs, axis, &handled_, &gc_);             \
        if (hst_ != WT_OK) return hst_;                                                   \
        if (handled_) return wt_grad_end(&gc_, (call), 1, (out));                         \
    } while (0)

/* Pauses recording (and the context's open scope, whose tensors the
 * library's own work must not join) around internal work. */
typedef struct wt_grad_pause {
    wt_context *ctx;
    wt_scope *scope;
} wt_grad_pause;
void wt_grad_pause_begin(wt_context *ctx, wt_grad_pause *p);
void wt_grad_pause_end(wt_grad_pause *p);

/* --- helpers of the rules (rules_util.c) --- */

/* g summed over the axes it was broadcast along, to shape (a new reference). */
wt_status wt_grad_reduce_to(const wt_tensor *g, int ndim, const int64_t *shape, wt_tensor **out);
/* The same for input i of n. */
wt_status wt_grad_reduce_in(const wt_grad_node *n, int i, const wt_tensor *g, wt_tensor **out);
/* f32 zeros of input i's shape. */
wt_status wt_grad_zeros_in(const wt_grad_node *n, int i, wt_tensor **out);

/* Drops one reference to a record (the tensor or edge holding it goes). */
void wt_grad_meta_drop(struct wt_grad_meta *m);

#endif /* WT_AUTOGRAD_TAPE_H */
