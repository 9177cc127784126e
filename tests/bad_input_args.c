/* The bad-input matrix for functions whose signatures are their own
 * (convolution, pooling, norms, attention, shape and index ops, sorting,
 * training, runtime, model files). Each row is a small function that
 * makes one valid call, wrapping every argument in a slot helper that
 * names its kind:
 *
 *   T   a tensor input (f32)         TI  an i32 index tensor
 *   TO  an optional tensor (NULL ok)  TA  a tensor of any dtype
 *   TW  a tensor written in place (TWA: of any dtype)
 *   OUT / OUTO  an out-pointer (optional)
 *   AX  an axis   POS  a count > 0    CTX a context   PTR / PTRO a pointer
 *   EPS an eps >= 0   DT a dtype   BYTES a buffer size   PATH  NAME
 *   CONV / POOL / INTERP  an options struct with its bad fields
 *   FACTOR  a scale factor (finite, > 0)
 *   QTYPE   a quantised weight's type (WT_QUANT_Q8_0 / Q4_0 / Q4_K / Q6_K)
 *
 * The driver calls the row once to learn its slots, then again for each
 * slot and each bad value of that slot's kind (NULL, a tensor of the
 * other context, of another dtype, a view that repeats elements, an axis
 * out of range, -1 for a count, NaN for eps, a buffer one byte short ...),
 * and checks the code, the message and that every out-pointer is NULL on
 * failure. A slot is the order the compiler evaluates the arguments in,
 * which is the same on every call of one build. */
#define _POSIX_C_SOURCE 200809L
#include "bad_input.h"
#include "test_util.h"
#include "webtensor_io.h"
#include "webtensor_tokenizer.h"

#include "fuzz/tokenizer_vocab.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { CLASS_VALID, CLASS_NULL, CLASS_OTHER_CTX, CLASS_DTYPE, CLASS_AXIS, CLASS_SIZE, CLASS_BUFFER,
       CLASS_VALUE, CLASS_ALIAS };

typedef enum kind {
    K_T, K_TI, K_TO, K_TA, K_TW, K_TWA, K_OUT, K_OUTO, K_AX, K_POS, K_CTX, K_PTR, K_PTRO, K_EPS, K_DT,
    K_BYTES, K_PATH, K_NAME, K_CONV, K_POOL, K_INDEX, K_NONNEG, K_TFREE, K_NEG2, K_KDESC, K_VALUE,
    K_INTERP, K_FACTOR, K_QTYPE
} kind;

#define MAX_SLOTS 16
#define POISON_PTR ((void *)(uintptr_t)0x10)

/* An out-pointer's target: whatever the function makes. */
typedef enum out_type { OUT_TENSOR, OUT_EVENT, OUT_KERNEL, OUT_FILE, OUT_GGUF, OUT_GGUF_WRITER, OUT_TOKENIZER,
                        OUT_DETOKENIZER } out_type;
typedef struct out_slot {
    out_type type;
    union {
        wt_tensor *t;
        wt_event *ev;
        wt_kernel *k;
        wt_safetensors *f;
        wt_gguf *g;
        wt_gguf_writer *w;
        wt_tokenizer *tok;
        wt_detokenizer *detok;
    } u;
    bool passed; /* given to the call (not replaced by NULL) */
    const char *name;
} out_slot;

/* What the rows draw from. */
typedef struct env2 {
    wt_context *ctx, *other;
    const wt_context_options *opts;
    wt_tensor *x4, *w4, *b4, *dy4, *x3, *w3, *c3, *c3pos, *m35, *v5, *w45, *b4v, *idx35, *idx2,
        *lab3, *q, *pool_dy, *pool_idx, *p5, *g5, *s5a, *s5b, *s5c, *table, *dy25, *one;
    wt_tensor *cache35, *start1; /* copy_into_at: f32 [3, 5] written in place, i32 [1] */
    wt_tensor *kvc, *qkv4;       /* rope_kv_cache: f32 [1, 2, 4, 2] written in place, [1, 1, 3, 2] */
    wt_tensor *qx, *qw, *qb; /* quantised linear: x [2, 32], Q8_0 weight [3, 32] (i32 [3, 9]), bias [3] */
    uint8_t qblocks[3 * 34]; /* the weight's blocks */
    char npy_path[64], st_path[64], gguf_path[64], dir_path[64];
    char tok_json_path[64], tok_gguf_path[64]; /* a SentencePiece vocabulary (tests/fuzz/tokenizer_vocab.h) */
    char *tok_json;
    void *npy_bytes, *st_bytes, *gguf_bytes;
    size_t npy_size, st_size, gguf_size;
} env2;

typedef struct M {
    const env2 *e;
    int slot, target, variant;
    bool discover, hit;
    kind kinds[MAX_SLOTS];
    const char *names[MAX_SLOTS];
    int nslots, ntensor_slots;
    wt_status want, want2;
    int cls;
    char what[96];
    out_slot outs[6];
    int nouts;
    wt_tensor *arr[4]; /* split / chunk / load_many outputs */
    int narr;
    wt_tensor *made[4]; /* tensors made for the case (casts, other context) */
    int nmade;
    wt_conv_options conv;
    wt_pool_options pool;
    wt_pool2d_options pool2d;
    wt_interpolate_options interp;
    bool shape_too; /* bad options may also show as a dy of the wrong shape */
} M;

/* Counts slot kinds on discovery; true when this slot is the one to break. */
static bool take(M *m, kind k, const char *name)
{
    int i = m->slot++;
    if (i >= MAX_SLOTS) return false;
    if (m->discover) {
        m->kinds[i] = k;
        m->names[i] = name;
        m->nslots = m->slot;
        if (k == K_T || k == K_TI || k == K_TO || k == K_TA || k == K_TW || k == K_TWA || k == K_CTX) m->ntensor_slots++;
    }
    return i == m->target;
}

static void expect(M *m, int cls, wt_status want, wt_status want2, const char *fmt, const char *name)
{
    m->hit = true;
    m->cls = cls;
    m->want = want;
    m->want2 = want2;
    snprintf(m->what, sizeof m->what, fmt, name);
}

static wt_tensor *keep(M *m, wt_tensor *t)
{
    if (t && m->nmade < 4) m->made[m->nmade++] = t;
    return t;
}

static const wt_tensor *tensor_slot(M *m, kind k, const char *name, const wt_tensor *valid)
{
    if (!take(m, k, name)) return valid;
    const wt_status INV = WT_ERR_INVALID_ARGUMENT, UNS = WT_ERR_UNSUPPORTED;
    wt_tensor *t = NULL;
    switch (m->variant) {
    case 0:
        expect(m, CLASS_NULL, k == K_TO ? WT_OK : INV, WT_OK, "%s NULL", name);
        return NULL;
    case 1: /* only where a second input or a context could disagree */
        if (k == K_TFREE || m->ntensor_slots < 2) return valid;
        if (wt_tensor_to(valid, m->e->other, &t) != WT_OK) return valid;
        expect(m, CLASS_OTHER_CTX, INV, WT_OK, "%s of another context", name);
        return keep(m, t);
    case 2:
    case 3: {
        if (k == K_TA || k == K_TWA || k == K_TFREE) return valid;
        wt_dtype to = k == K_TI ? (m->variant == 2 ? WT_F32 : WT_BOOL) : (m->variant == 2 ? WT_I32 : WT_BOOL);
        if (wt_cast(valid, to, &t) != WT_OK) return valid;
        expect(m, CLASS_DTYPE, INV, UNS, to == WT_F32 ? "%s f32" : to == WT_I32 ? "%s i32" : "%s bool",
               name);
        return keep(m, t);
    }
    case 4: {
        /* Written in place: a view that repeats one element must be refused. */
        if (k != K_TW && k != K_TWA) return valid;
        wt_tensor *one = NULL;
        const int64_t ones[WT_MAX_DIMS] = {1, 1, 1, 1, 1, 1, 1, 1};
        if (wt_tensor_full(m->e->ctx, WT_F32, wt_tensor_ndim(valid), ones, 0.0, &one) != WT_OK) return valid;
        keep(m, one);
        if (wt_expand(one, wt_tensor_ndim(valid), wt_tensor_shape(valid), &t) != WT_OK) return valid;
        expect(m, CLASS_ALIAS, INV, WT_OK, "%s an expanded view", name);
        return keep(m, t);
    }
    }
    return valid;
}
#define T(name, v) tensor_slot(m, K_T, name, v)
#define TI(name, v) tensor_slot(m, K_TI, name, v)
#define TO(name, v) tensor_slot(m, K_TO, name, v)
#define TA(name, v) tensor_slot(m, K_TA, name, v)
#define TFREE(name, v) tensor_slot(m, K_TFREE, name, v)
#define TW(name, v) ((wt_tensor *)tensor_slot(m, K_TW, name, v))
#define TWA(name, v) ((wt_tensor *)tensor_slot(m, K_TWA, name, v))

static out_slot *out_slot_take(M *m, kind k, const char *name, out_type type, bool *null)
{
    out_slot *o = &m->outs[m->nouts++];
    o->type = type;
    o->u.t = POISON_PTR;
    o->passed = true;
    o->name = name;
    *null = false;
    if (take(m, k, name) && m->variant == 0) {
        expect(m, CLASS_NULL, k == K_OUTO ? WT_OK : WT_ERR_INVALID_ARGUMENT, WT_OK, "%s NULL", name);
        o->passed = false;
        *null = true;
    }
    return o;
}
static wt_tensor **out_tensor(M *m, kind k, const char *name)
{
    bool null;
    out_slot *o = out_slot_take(m, k, name, OUT_TENSOR, &null);
    return null ? NULL : &o->u.t;
}
#define OUT(name) out_tensor(m, K_OUT, name)
#define OUTO(name) out_tensor(m, K_OUTO, name)
static wt_event **out_event(M *m, const char *name)
{
    bool null;
    out_slot *o = out_slot_take(m, K_OUT, name, OUT_EVENT, &null);
    return null ? NULL : &o->u.ev;
}
static wt_kernel **out_kernel(M *m, const char *name)
{
    bool null;
    out_slot *o = out_slot_take(m, K_OUT, name, OUT_KERNEL, &null);
    return null ? NULL : &o->u.k;
}
static wt_safetensors **out_file(M *m, const char *name)
{
    bool null;
    out_slot *o = out_slot_take(m, K_OUT, name, OUT_FILE, &null);
    return null ? NULL : &o->u.f;
}
static wt_gguf **out_gguf(M *m, const char *name)
{
    bool null;
    out_slot *o = out_slot_take(m, K_OUT, name, OUT_GGUF, &null);
    return null ? NULL : &o->u.g;
}
static wt_gguf_writer **out_gguf_writer(M *m, const char *name)
{
    bool null;
    out_slot *o = out_slot_take(m, K_OUT, name, OUT_GGUF_WRITER, &null);
    return null ? NULL : &o->u.w;
}

static wt_tokenizer **out_tokenizer(M *m, const char *name)
{
    bool null;
    out_slot *o = out_slot_take(m, K_OUT, name, OUT_TOKENIZER, &null);
    return null ? NULL : &o->u.tok;
}
static wt_detokenizer **out_detokenizer(M *m, const char *name)
{
    bool null;
    out_slot *o = out_slot_take(m, K_OUT, name, OUT_DETOKENIZER, &null);
    return null ? NULL : &o->u.detok;
}

/* An array of n out-tensors (split, chunk, load_many): on failure every
 * entry must be NULL. */
static wt_tensor **out_array(M *m, const char *name, int n)
{
    m->narr = n;
    for (int i = 0; i < n; i++) m->arr[i] = POISON_PTR;
    if (take(m, K_OUT, name) && m->variant == 0) {
        expect(m, CLASS_NULL, WT_ERR_INVALID_ARGUMENT, WT_OK, "%s NULL", name);
        m->narr = 0;
        return NULL;
    }
    return m->arr;
}

static int64_t scalar_slot(M *m, kind k, const char *name, int64_t valid)
{
    if (!take(m, k, name)) return valid;
    const wt_status INV = WT_ERR_INVALID_ARGUMENT;
    if (k == K_AX && m->variant < 2) {
        const int64_t v = m->variant == 0 ? 9 : INT_MIN;
        expect(m, CLASS_AXIS, INV, WT_OK, m->variant == 0 ? "%s 9" : "%s INT_MIN", name);
        return v;
    }
    if (k == K_POS && m->variant == 0) {
        expect(m, CLASS_SIZE, INV, WT_ERR_SHAPE, "%s -1", name);
        return -1;
    }
    if (k == K_NEG2 && m->variant == 0) {
        expect(m, CLASS_SIZE, INV, WT_OK, "%s -2", name);
        return -2;
    }
    if (k == K_NONNEG && m->variant == 0) {
        expect(m, CLASS_VALUE, INV, WT_OK, "%s -1", name);
        return -1;
    }
    if (k == K_INDEX && m->variant < 2) {
        expect(m, CLASS_VALUE, INV, WT_OK, m->variant == 0 ? "%s -1" : "%s past the end", name);
        return m->variant == 0 ? -1 : 1000;
    }
    if (k == K_DT && m->variant < 2) {
        expect(m, CLASS_DTYPE, INV, WT_OK, m->variant == 0 ? "%s 99" : "%s -1", name);
        return m->variant == 0 ? 99 : -1;
    }
    if (k == K_QTYPE && m->variant < 2) {
        /* 99: no ggml type; 1: ggml's F16, a type but not a block format */
        expect(m, CLASS_VALUE, INV, WT_OK, m->variant == 0 ? "%s 99" : "%s 1 (F16)", name);
        return m->variant == 0 ? 99 : 1;
    }
    if (k == K_BYTES && m->variant < 2) {
        expect(m, CLASS_BUFFER, INV, WT_OK, m->variant == 0 ? "%s one byte short" : "%s 0", name);
        return m->variant == 0 ? valid - 1 : 0;
    }
    return valid;
}
#define AX(name, v) ((int)scalar_slot(m, K_AX, name, v))
#define POS(name, v) scalar_slot(m, K_POS, name, v)
#define NONNEG(name, v) scalar_slot(m, K_NONNEG, name, v)
#define INDEX(name, v) ((int)scalar_slot(m, K_INDEX, name, v))
#define DT(name, v) ((wt_dtype)scalar_slot(m, K_DT, name, v))
#define BYTES(name, v) ((size_t)scalar_slot(m, K_BYTES, name, (int64_t)(v)))
#define QTYPE(name, v) ((wt_quant_type)scalar_slot(m, K_QTYPE, name, v))

static float eps_slot(M *m, const char *name, float valid)
{
    if (!take(m, K_EPS, name) || m->variant >= 2) return valid;
    expect(m, CLASS_VALUE, WT_ERR_INVALID_ARGUMENT, WT_OK, m->variant == 0 ? "%s -1" : "%s NaN", name);
    return m->variant == 0 ? -1.0f : NAN;
}
#define EPS(name, v) eps_slot(m, name, v)

static void *ptr_slot(M *m, kind k, const char *name, const void *valid)
{
    if (!take(m, k, name) || m->variant > 0) return (void *)(uintptr_t)valid;
    expect(m, CLASS_NULL, k == K_PTRO ? WT_OK : WT_ERR_INVALID_ARGUMENT, WT_OK, "%s NULL", name);
    return NULL;
}
#define PTR(name, v) ptr_slot(m, K_PTR, name, v)
#define PTRO(name, v) ptr_slot(m, K_PTRO, name, v)

static wt_context *ctx_slot(M *m, const char *name, wt_context *valid)
{
    if (!take(m, K_CTX, name) || m->variant > 0) return valid;
    expect(m, CLASS_NULL, WT_ERR_INVALID_ARGUMENT, WT_OK, "%s NULL", name);
    return NULL;
}
#define CTX(name, v) ctx_slot(m, name, v)

/* A string argument: NULL, then a value that names nothing (a path in a
 * folder that does not exist: an I/O error; a tensor not in the file). */
static const char *string_slot(M *m, kind k, const char *name, const char *valid)
{
    if (!take(m, k, name) || m->variant >= 2) return valid;
    if (m->variant == 0) {
        expect(m, CLASS_NULL, WT_ERR_INVALID_ARGUMENT, WT_OK, "%s NULL", name);
        return NULL;
    }
    if (k == K_PATH) {
        expect(m, CLASS_VALUE, WT_ERR_IO, WT_OK, "%s in a missing folder", name);
        return "/nonexistent-folder-of-webtensor/x";
    }
    expect(m, CLASS_VALUE, WT_ERR_NOT_FOUND, WT_OK, "%s not in the file", name);
    return "no such tensor";
}
#define PATH(name, v) string_slot(m, K_PATH, name, v)
#define NAME(name, v) string_slot(m, K_NAME, name, v)

/* Options structs: NULL (defaults for convolutions; pooling needs a
 * kernel), then each field a caller can get wrong. */
static const wt_conv_options *conv_slot(M *m, const char *name)
{
    wt_conv_options_init(&m->conv);
    if (!take(m, K_CONV, name)) return &m->conv;
    const wt_status INV = WT_ERR_INVALID_ARGUMENT;
    switch (m->variant) {
    case 0: expect(m, CLASS_NULL, WT_OK, WT_OK, "%s NULL (defaults)", name); return NULL;
    case 1: m->conv.stride[0] = 0; expect(m, CLASS_VALUE, INV, WT_OK, "%s stride 0", name); break;
    case 2: m->conv.dilation[1] = -1; expect(m, CLASS_VALUE, INV, WT_OK, "%s dilation -1", name); break;
    case 3: m->conv.padding[2] = -1; expect(m, CLASS_VALUE, INV, WT_OK, "%s padding -1", name); break;
    case 4: m->conv.groups = 2; expect(m, CLASS_VALUE, INV, WT_ERR_SHAPE, "%s groups 2 for 3 channels", name); break;
    case 5: m->conv.stride[0] = INT64_MAX; expect(m, CLASS_VALUE, WT_ERR_SHAPE, WT_OK, "%s stride 2^63-1", name); break;
    case 6: m->conv.struct_size = 0; expect(m, CLASS_VALUE, INV, WT_OK, "%s not initialised", name); break;
    case 7: m->conv.dilation[0] = INT64_MAX; expect(m, CLASS_VALUE, WT_ERR_SHAPE, WT_OK, "%s dilation 2^63-1", name); break;
    case 8: m->conv.padding[1] = INT64_MAX; expect(m, CLASS_VALUE, WT_ERR_SHAPE, WT_OK, "%s padding 2^63-1", name); break;
    }
    /* The backward pass checks dy against the forward's output size too:
     * with bad options either code is right. */
    if (m->hit && m->want == INV && m->shape_too) m->want2 = WT_ERR_SHAPE;
    return &m->conv;
}
#define CONV(name) conv_slot(m, name)

static const wt_pool_options *pool_slot(M *m, const char *name)
{
    wt_pool_options_init(&m->pool);
    m->pool.kernel[0] = m->pool.kernel[1] = 2;
    if (!take(m, K_POOL, name)) return &m->pool;
    const wt_status INV = WT_ERR_INVALID_ARGUMENT;
    switch (m->variant) {
    case 0: expect(m, CLASS_NULL, INV, WT_OK, "%s NULL", name); return NULL;
    case 1: m->pool.kernel[1] = 0; expect(m, CLASS_VALUE, INV, WT_OK, "%s kernel 0", name); break;
    case 2: m->pool.stride[0] = -1; expect(m, CLASS_VALUE, INV, WT_OK, "%s stride -1", name); break;
    case 3: m->pool.padding[0] = 2; expect(m, CLASS_VALUE, INV, WT_OK, "%s padding past half the kernel", name); break;
    case 4: m->pool.kernel[0] = 100; expect(m, CLASS_VALUE, WT_ERR_SHAPE, INV, "%s kernel past the input", name); break;
    case 5: m->pool.struct_size = 0; expect(m, CLASS_VALUE, INV, WT_OK, "%s not initialised", name); break;
    }
    if (m->hit && m->want == INV && m->shape_too) m->want2 = WT_ERR_SHAPE;
    return &m->pool;
}
#define POOL(name) pool_slot(m, name)

static const wt_pool2d_options *pool2d_slot(M *m, const char *name)
{
    wt_pool2d_options_init(&m->pool2d);
    m->pool2d.kernel[0] = m->pool2d.kernel[1] = 2;
    if (!take(m, K_POOL, name)) return &m->pool2d;
    const wt_status INV = WT_ERR_INVALID_ARGUMENT;
    switch (m->variant) {
    case 0: expect(m, CLASS_NULL, INV, WT_OK, "%s NULL", name); return NULL;
    case 1: m->pool2d.kernel[1] = 0; expect(m, CLASS_VALUE, INV, WT_OK, "%s kernel 0", name); break;
    case 2: m->pool2d.stride[0] = -1; expect(m, CLASS_VALUE, INV, WT_OK, "%s stride -1", name); break;
    case 3: m->pool2d.padding[3] = 2; expect(m, CLASS_VALUE, INV, WT_OK, "%s right padding past half the kernel", name); break;
    case 4: m->pool2d.kernel[0] = 100; expect(m, CLASS_VALUE, WT_ERR_SHAPE, INV, "%s kernel past the input", name); break;
    case 5: m->pool2d.struct_size = 0; expect(m, CLASS_VALUE, INV, WT_OK, "%s not initialised", name); break;
    case 6: m->pool2d.padding[0] = -1; expect(m, CLASS_VALUE, INV, WT_OK, "%s top padding -1", name); break;
    }
    if (m->hit && m->want == INV && m->shape_too) m->want2 = WT_ERR_SHAPE;
    return &m->pool2d;
}
#define POOL2D(name) pool2d_slot(m, name)

/* Valid: bilinear to 3x3 (e->x4 [2, 3, 6, 6] to e->pool_dy's shape). */
static const wt_interpolate_options *interp_slot(M *m, const char *name)
{
    wt_interpolate_options_init(&m->interp);
    m->interp.mode = WT_INTERP_BILINEAR;
    m->interp.size[0] = m->interp.size[1] = 3;
    if (!take(m, K_INTERP, name)) return &m->interp;
    const wt_status INV = WT_ERR_INVALID_ARGUMENT;
    wt_interpolate_options *o = &m->interp;
    switch (m->variant) {
    case 0: expect(m, CLASS_NULL, INV, WT_OK, "%s NULL", name); return NULL;
    case 1: o->struct_size = 0; expect(m, CLASS_VALUE, INV, WT_OK, "%s not initialised", name); break;
    case 2: o->size[1] = -1; expect(m, CLASS_VALUE, INV, WT_OK, "%s size -1", name); break;
    case 3: o->size[0] = 0; expect(m, CLASS_VALUE, INV, WT_OK, "%s size 0", name); break;
    case 4: o->scale_factor[0] = o->scale_factor[1] = 2.0; expect(m, CLASS_VALUE, INV, WT_OK, "%s size and scale_factor", name); break;
    case 5: o->size[0] = o->size[1] = 0; o->scale_factor[0] = o->scale_factor[1] = NAN; expect(m, CLASS_VALUE, INV, WT_OK, "%s scale_factor NaN", name); break;
    case 6: o->size[0] = o->size[1] = 0; o->scale_factor[0] = o->scale_factor[1] = 1e-9; expect(m, CLASS_VALUE, WT_ERR_SHAPE, WT_OK, "%s scale_factor leaving no output", name); break;
    case 7: o->mode = WT_INTERP_NEAREST; o->align_corners = true; expect(m, CLASS_VALUE, INV, WT_OK, "%s align_corners with nearest", name); break;
    case 8: o->mode = (wt_interp_mode)9; expect(m, CLASS_VALUE, INV, WT_OK, "%s mode 9", name); break;
    }
    return &m->interp;
}
#define INTERP(name) interp_slot(m, name)

static double factor_slot(M *m, const char *name, double valid)
{
    if (!take(m, K_FACTOR, name) || m->variant >= 4) return valid;
    static const double bad[4] = {-1.0, 0.0, NAN, 1e-9};
    expect(m, m->variant == 3 ? CLASS_SIZE : CLASS_VALUE, m->variant == 3 ? WT_ERR_SHAPE : WT_ERR_INVALID_ARGUMENT,
           WT_OK, m->variant == 0 ? "%s -1" : m->variant == 1 ? "%s 0" : m->variant == 2 ? "%s NaN" : "%s 1e-9", name);
    return bad[m->variant];
}
#define FACTOR(name, v) factor_slot(m, name, v)

/* ---------------------------------------------------------------- rows */

typedef wt_status (*row_fn)(M *m, const env2 *e);
typedef struct slot_row {
    const char *name;
    row_fn fn;
    wt_status valid_alt; /* a valid call may also return this (e.g. CPU: no kernels) */
} slot_row;

#define ROWFN(f) static wt_status row_##f(M *m, const env2 *e)

/* shape ops */
ROWFN(squeeze) { static const int ax[1] = {0}; return wt_squeeze(TA("x", e->one), 1, PTR("axes", ax), OUT("out")); }
ROWFN(unsqueeze) { return wt_unsqueeze(TA("x", e->m35), AX("axis", 1), OUT("out")); }
ROWFN(flatten) { return wt_flatten(TA("x", e->x4), AX("start", 1), AX("end", -1), OUT("out")); }
ROWFN(concat)
{
    const wt_tensor *xs[2] = {TA("xs[0]", e->m35), T("xs[1]", e->m35)};
    return wt_concat((int)POS("n", 2), PTR("xs", xs), AX("axis", 0), OUT("out"));
}
ROWFN(stack)
{
    const wt_tensor *xs[2] = {TA("xs[0]", e->m35), T("xs[1]", e->m35)};
    return wt_stack((int)POS("n", 2), PTR("xs", xs), AX("axis", 0), OUT("out"));
}
ROWFN(split)
{
    static const int64_t sizes[2] = {2, 3};
    return wt_split(TA("x", e->m35), AX("axis", 1), (int)POS("n", 2), PTR("sizes", sizes), out_array(m, "outs", 2));
}
ROWFN(chunk)
{
    int nout = 0;
    return wt_chunk(TA("x", e->m35), AX("axis", 1), (int)POS("chunks", 2), PTR("nout", &nout), out_array(m, "outs", 2));
}
ROWFN(gather) { return wt_gather(TA("x", e->m35), AX("axis", 0), TI("index", e->idx35), OUT("out")); }
ROWFN(index_select) { return wt_index_select(TA("x", e->m35), AX("axis", 0), TI("index", e->idx2), OUT("out")); }
ROWFN(embedding) { return wt_embedding(TA("table", e->table), TI("index", e->idx2), OUT("out")); }
ROWFN(scatter_add)
{
    return wt_scatter_add(T("x", e->m35), AX("axis", 0), TI("index", e->idx35), T("src", e->m35), OUT("out"));
}
ROWFN(index_add)
{
    return wt_index_add(T("x", e->table), AX("axis", 0), TI("index", e->idx2), T("src", e->dy25), OUT("out"));
}
ROWFN(copy_into_at)
{
    return wt_copy_into_at(TWA("dst", e->cache35), AX("axis", 0), TI("start", e->start1), TA("src", e->v5));
}
/* num_classes -1 means max(index) + 1: -2 is the bad count. */
ROWFN(one_hot) { return wt_one_hot(TI("index", e->idx2), scalar_slot(m, K_NEG2, "num_classes", 4), OUT("out")); }
ROWFN(pad)
{
    static const int64_t pads[2] = {1, 2};
    return wt_pad(TA("x", e->m35), (int)POS("npads", 2), PTR("pads", pads), WT_PAD_CONSTANT, 0.0, OUT("out"));
}
ROWFN(repeat)
{
    static const int64_t reps[2] = {2, 1};
    return wt_repeat(TA("x", e->m35), (int)POS("n", 2), PTR("repeats", reps), OUT("out"));
}
ROWFN(tile)
{
    static const int64_t reps[2] = {2, 1};
    return wt_tile(TA("x", e->m35), (int)POS("n", 2), PTR("reps", reps), OUT("out"));
}
ROWFN(flip) { static const int ax[1] = {1}; return wt_flip(TA("x", e->m35), (int)POS("naxes", 1), PTR("axes", ax), OUT("out")); }
ROWFN(roll)
{
    static const int ax[1] = {1};
    static const int64_t sh[1] = {2};
    return wt_roll(TA("x", e->m35), (int)POS("naxes", 1), PTR("shifts", sh), PTR("axes", ax), OUT("out"));
}
ROWFN(tril) { return wt_tril(TA("x", e->m35), 0, OUT("out")); }
ROWFN(triu) { return wt_triu(TA("x", e->m35), 0, OUT("out")); }
ROWFN(sort) { return wt_sort(TA("x", e->m35), AX("axis", 1), false, OUT("values"), OUTO("indices")); }
ROWFN(argsort) { return wt_argsort(TA("x", e->m35), AX("axis", 1), true, OUT("out")); }
ROWFN(topk) { return wt_topk(TA("x", e->m35), INDEX("k", 2), true, OUT("values"), OUTO("indices")); }
ROWFN(topk_v2)
{
    return wt_topk_v2(TA("x", e->m35), INDEX("k", 2), AX("axis", 0), false, OUT("values"), OUTO("indices"));
}

/* creation (the dtype-second forms) and dropout */
static const int64_t SHAPE23[2] = {2, 3};
ROWFN(tensor_arange) { return wt_tensor_arange(CTX("ctx", e->ctx), DT("dtype", WT_F32), 0.0, 5.0, 1.0, OUT("out")); }
ROWFN(tensor_linspace)
{
    return wt_tensor_linspace(CTX("ctx", e->ctx), DT("dtype", WT_F32), 0.0, 1.0, NONNEG("num", 5), true, OUT("out"));
}
ROWFN(tensor_eye)
{
    return wt_tensor_eye(CTX("ctx", e->ctx), DT("dtype", WT_F32), NONNEG("n", 3), NONNEG("m", 4), 1, OUT("out"));
}
ROWFN(tensor_rand)
{
    return wt_tensor_rand(CTX("ctx", e->ctx), DT("dtype", WT_F32), (int)POS("ndim", 2), PTR("shape", SHAPE23), 7,
                          OUT("out"));
}
ROWFN(tensor_randn)
{
    return wt_tensor_randn(CTX("ctx", e->ctx), DT("dtype", WT_F16), (int)POS("ndim", 2), PTR("shape", SHAPE23), 7,
                           OUT("out"));
}
ROWFN(dropout_v2)
{
    wt_dropout_options o;
    wt_dropout_options_init(&o);
    o.p = 0.25;
    return wt_dropout_v2(TA("x", e->m35), PTRO("opts", &o), OUT("out"));
}

/* convolution, pooling, normalisation */
ROWFN(conv2d) { return wt_conv2d(T("x", e->x4), T("w", e->w4), TO("bias", e->b4v), CONV("opts"), OUT("out")); }
ROWFN(conv1d) { return wt_conv1d(T("x", e->x3), T("w", e->w3), TO("bias", e->b4v), CONV("opts"), OUT("out")); }
ROWFN(conv_transpose2d)
{
    return wt_conv_transpose2d(T("x", e->dy4), T("w", e->w4), TO("bias", e->c3), CONV("opts"), OUT("out"));
}
ROWFN(max_pool2d) { return wt_max_pool2d(T("x", e->x4), POOL("opts"), OUT("out"), OUTO("indices")); }
ROWFN(avg_pool2d) { return wt_avg_pool2d(T("x", e->x4), POOL("opts"), OUT("out")); }
ROWFN(max_pool2d_v2) { return wt_max_pool2d_v2(T("x", e->x4), POOL2D("opts"), OUT("out"), OUTO("indices")); }
ROWFN(avg_pool2d_v2) { return wt_avg_pool2d_v2(T("x", e->x4), POOL2D("opts"), OUT("out")); }
ROWFN(adaptive_avg_pool2d) { return wt_adaptive_avg_pool2d(T("x", e->x4), POS("out_h", 2), POS("out_w", 3), OUT("out")); }
ROWFN(adaptive_max_pool2d)
{
    return wt_adaptive_max_pool2d(T("x", e->x4), POS("out_h", 2), POS("out_w", 3), OUT("out"), OUTO("indices"));
}
ROWFN(interpolate) { return wt_interpolate(T("x", e->x4), INTERP("opts"), OUT("out")); }
ROWFN(upsample2d) { return wt_upsample2d(T("x", e->x4), FACTOR("scale_factor", 2.0), WT_INTERP_BILINEAR, OUT("out")); }
ROWFN(global_avg_pool2d) { return wt_global_avg_pool2d(T("x", e->x4), OUT("out")); }
ROWFN(global_max_pool2d) { return wt_global_max_pool2d(T("x", e->x4), OUT("out")); }
ROWFN(batch_norm)
{
    wt_batch_norm_options o;
    wt_batch_norm_options_init(&o);
    o.training = true;
    /* Running statistics of their own for each call (updated in place). */
    wt_tensor *rm = NULL, *rv = NULL;
    const int64_t c = 3;
    if (wt_tensor_zeros(e->ctx, WT_F32, 1, &c, &rm) != WT_OK || wt_tensor_ones(e->ctx, WT_F32, 1, &c, &rv) != WT_OK) {
        wt_tensor_release(rm);
        return WT_ERR_BACKEND;
    }
    wt_status st = wt_batch_norm(T("x", e->x4), TW("running_mean", rm), TW("running_var", rv), TO("weight", e->c3),
                                 TO("bias", e->c3), PTRO("opts", &o), OUT("out"), OUTO("batch_mean"),
                                 OUTO("batch_var"));
    wt_tensor_release(rm);
    wt_tensor_release(rv);
    return st;
}
ROWFN(group_norm)
{
    return wt_group_norm(T("x", e->x4), POS("num_groups", 3), TO("weight", e->c3), TO("bias", e->c3), EPS("eps", 1e-5f),
                         OUT("out"));
}
ROWFN(group_norm_v2)
{
    return wt_group_norm_v2(T("x", e->x4), POS("num_groups", 3), TO("weight", e->c3), TO("bias", e->c3),
                            PTRO("opts", NULL), OUT("out"));
}
ROWFN(layer_norm)
{
    return wt_layer_norm(T("x", e->m35), (int)POS("normalized_ndim", 1), TO("weight", e->v5), TO("bias", e->v5),
                         EPS("eps", 1e-5f), OUT("out"));
}
ROWFN(rms_norm)
{
    return wt_rms_norm(T("x", e->m35), (int)POS("normalized_ndim", 1), TO("weight", e->v5), EPS("eps", 1e-5f), OUT("out"));
}
ROWFN(scaled_dot_product_attention)
{
    return wt_scaled_dot_product_attention(T("q", e->q), T("k", e->q), T("v", e->q), TO("mask", NULL), false, 0.0f,
                                           OUT("out"));
}
ROWFN(rope) { return wt_rope(T("x", e->q), 10000.0, NONNEG("offset", 0), WT_ROPE_BHSD, OUT("out")); }
ROWFN(scaled_dot_product_attention_v2)
{
    wt_attention_options o;
    wt_attention_options_init(&o);
    o.causal = true;
    return wt_scaled_dot_product_attention_v2(T("q", e->q), T("k", e->q), T("v", e->q), TO("mask", NULL),
                                              PTRO("opts", &o), OUT("out"));
}
ROWFN(rope_v2)
{
    wt_rope_options o;
    wt_rope_options_init(&o);
    o.offset = NONNEG("offset", 0);
    return wt_rope_v2(T("x", e->q), PTRO("opts", &o), OUT("out"));
}
ROWFN(linear) { return wt_linear(T("x", e->m35), T("w", e->w45), TO("bias", e->b4v), OUT("out")); }
ROWFN(rope_kv_cache)
{
    wt_rope_kv_cache_options o;
    wt_rope_kv_cache_options_init(&o);
    o.offset = NONNEG("offset", 0);
    return wt_rope_kv_cache(TW("kv_cache", e->kvc), T("qkv", e->qkv4), POS("q_heads", 1), PTRO("opts", &o),
                            OUT("q"));
}
ROWFN(linear_fused)
{
    wt_linear_fused_options o;
    wt_linear_fused_options_init(&o);
    o.rms_norm = true;
    o.norm_weight = e->v5;
    return wt_linear_fused(T("x", e->m35), T("w", e->w45), TO("bias", e->b4v), PTRO("opts", &o), OUT("out"));
}
ROWFN(sample)
{
    wt_sample_options o;
    wt_sample_options_init(&o);
    o.top_k = NONNEG("top_k", 0);
    return wt_sample(T("logits", e->m35), PTRO("opts", &o), OUT("out"));
}
/* quantised weights */
ROWFN(quant_from_blocks)
{
    return wt_quant_from_blocks(CTX("ctx", e->ctx), QTYPE("type", WT_QUANT_Q8_0), POS("n", 3), POS("k", 32),
                                PTR("blocks", e->qblocks), BYTES("bytes", sizeof e->qblocks), OUT("out"));
}
ROWFN(quantize) { return wt_quantize(T("x", e->qx), QTYPE("type", WT_QUANT_Q4_0), OUT("out")); }
ROWFN(dequantize)
{
    return wt_dequantize(TI("w", e->qw), QTYPE("type", WT_QUANT_Q8_0), DT("dtype", WT_F16), OUT("out"));
}
ROWFN(linear_quant)
{
    return wt_linear_quant(T("x", e->qx), TI("w", e->qw), QTYPE("type", WT_QUANT_Q8_0), TO("bias", e->qb),
                           OUT("out"));
}
ROWFN(embedding_quant)
{
    return wt_embedding_quant(TI("table", e->qw), QTYPE("type", WT_QUANT_Q8_0), TI("index", e->idx2),
                              DT("dtype", WT_F32), OUT("out"));
}

/* training */
ROWFN(activation_backward) { return wt_activation_backward(WT_ACT_SILU, T("dy", e->m35), T("x", e->m35), OUT("dx")); }
ROWFN(relu_backward) { return wt_relu_backward(T("dy", e->m35), T("x", e->m35), OUT("dx")); }
ROWFN(sigmoid_backward) { return wt_sigmoid_backward(T("dy", e->m35), T("x", e->m35), OUT("dx")); }
ROWFN(tanh_backward) { return wt_tanh_backward(T("dy", e->m35), T("x", e->m35), OUT("dx")); }
ROWFN(silu_backward) { return wt_silu_backward(T("dy", e->m35), T("x", e->m35), OUT("dx")); }
ROWFN(gelu_backward) { return wt_gelu_backward(T("dy", e->m35), T("x", e->m35), OUT("dx")); }
ROWFN(gelu_tanh_backward) { return wt_gelu_tanh_backward(T("dy", e->m35), T("x", e->m35), OUT("dx")); }
ROWFN(cross_entropy)
{
    wt_cross_entropy_options o;
    wt_cross_entropy_options_init(&o);
    return wt_cross_entropy(T("logits", e->m35), TI("labels", e->lab3), PTRO("opts", &o), OUT("loss"));
}
ROWFN(cross_entropy_backward)
{
    return wt_cross_entropy_backward(T("logits", e->m35), TI("labels", e->lab3), TO("dloss", NULL), PTRO("opts", NULL),
                                     OUT("dlogits"));
}
ROWFN(cross_entropy_backward_v2)
{
    return wt_cross_entropy_backward_v2(TO("dloss", NULL), T("logits", e->m35), TI("labels", e->lab3),
                                        PTRO("opts", NULL), OUT("dlogits"));
}
ROWFN(embedding_backward)
{
    return wt_embedding_backward(T("dy", e->dy25), TI("indices", e->idx2), POS("num_embeddings", 3), OUT("dweight"));
}
ROWFN(layernorm_backward)
{
    return wt_layernorm_backward(T("x", e->m35), T("weight", e->v5), T("dy", e->m35), EPS("eps", 1e-5f), OUTO("dx"),
                                 OUTO("dweight"), OUTO("dbias"));
}
ROWFN(layer_norm_backward)
{
    return wt_layer_norm_backward(T("dy", e->m35), T("x", e->m35), (int)POS("normalized_ndim", 1), T("weight", e->v5),
                                  EPS("eps", 1e-5f), OUTO("dx"), OUTO("dweight"), OUTO("dbias"));
}
ROWFN(batch_norm_backward)
{
    return wt_batch_norm_backward(T("x", e->x4), T("weight", e->c3), T("running_mean", e->c3), T("running_var", e->c3pos),
                                  false, EPS("eps", 1e-5f), T("dy", e->x4), OUTO("dx"), OUTO("dweight"), OUTO("dbias"));
}
ROWFN(batch_norm_backward_v2)
{
    return wt_batch_norm_backward_v2(T("dy", e->x4), T("x", e->x4), T("running_mean", e->c3),
                                     T("running_var", e->c3pos), T("weight", e->c3), PTRO("opts", NULL), OUTO("dx"),
                                     OUTO("dweight"), OUTO("dbias"));
}
ROWFN(sgd_step)
{
    wt_sgd_options o;
    wt_sgd_options_init(&o);
    o.momentum = 0.9f;
    return wt_sgd_step(TW("param", e->s5a), T("grad", e->g5), TW("momentum_buf", e->s5b), PTRO("opts", &o));
}
ROWFN(adamw_step)
{
    wt_adamw_options o;
    wt_adamw_options_init(&o);
    return wt_adamw_step(TW("param", e->s5a), T("grad", e->g5), TW("m", e->s5b), TW("v", e->s5c), POS("step", 1),
                         PTRO("opts", &o));
}
ROWFN(conv2d_backward)
{
    m->shape_too = true;
    return wt_conv2d_backward(T("x", e->x4), T("w", e->w4), T("dy", e->dy4), CONV("opts"), OUTO("dx"), OUTO("dw"),
                              OUTO("dbias"));
}
ROWFN(conv2d_backward_v2)
{
    m->shape_too = true;
    return wt_conv2d_backward_v2(T("dy", e->dy4), T("x", e->x4), T("w", e->w4), CONV("opts"), OUTO("dx"), OUTO("dw"),
                                 OUTO("dbias"));
}
ROWFN(max_pool2d_backward)
{
    return wt_max_pool2d_backward(T("dy", e->pool_dy), TI("indices", e->pool_idx), T("x", e->x4), OUT("dx"));
}
ROWFN(interpolate_backward)
{
    return wt_interpolate_backward(T("dy", e->pool_dy), T("x", e->x4), INTERP("opts"), OUT("dx"));
}
ROWFN(avg_pool2d_backward) { m->shape_too = true; return wt_avg_pool2d_backward(T("dy", e->pool_dy), T("x", e->x4), POOL("opts"), OUT("dx")); }
ROWFN(avg_pool2d_backward_v2)
{
    m->shape_too = true;
    return wt_avg_pool2d_backward_v2(T("dy", e->pool_dy), T("x", e->x4), POOL2D("opts"), OUT("dx"));
}

/* runtime */
ROWFN(event_record) { return wt_event_record(CTX("ctx", e->ctx), out_event(m, "out")); }
ROWFN(event_query)
{
    wt_event *ev = NULL;
    bool done = false;
    if (wt_event_record(e->ctx, &ev) != WT_OK) return WT_ERR_BACKEND;
    wt_status st = wt_event_query(PTR("e", ev), PTR("done", &done));
    wt_event_destroy(ev);
    return st;
}
ROWFN(event_wait)
{
    wt_event *ev = NULL;
    if (wt_event_record(e->ctx, &ev) != WT_OK) return WT_ERR_BACKEND;
    wt_status st = wt_event_wait(PTR("e", ev));
    wt_event_destroy(ev);
    return st;
}
ROWFN(tensor_read_async)
{
    float dst[15];
    wt_event **done = out_event(m, "done");
    wt_status st = wt_tensor_read_async(TA("t", e->m35), PTR("dst", dst), BYTES("dst_bytes", sizeof dst), done);
    /* dst must stay valid until the read completes. */
    if (st == WT_OK && done && *done) wt_event_wait(*done);
    return st;
}
ROWFN(tensor_to) { return wt_tensor_to(TFREE("x", e->m35), CTX("dst", e->other), OUT("out")); }
ROWFN(context_profile_begin)
{
    wt_status st = wt_context_profile_begin(CTX("ctx", e->ctx));
    if (st == WT_OK) wt_context_profile_end(e->ctx);
    return st;
}
ROWFN(context_profile_end)
{
    wt_context_profile_begin(e->ctx);
    wt_status st = wt_context_profile_end(CTX("ctx", e->ctx));
    if (st != WT_OK) wt_context_profile_end(e->ctx);
    return st;
}
ROWFN(context_profile_summary)
{
    wt_profile_entry entries[4];
    int count = 0;
    bool gpu = false;
    return wt_context_profile_summary(CTX("ctx", e->ctx), PTR("entries", entries), (int)NONNEG("capacity", 4),
                                      PTR("count", &count), PTRO("gpu_timed", &gpu));
}
ROWFN(context_pipeline_stats)
{
    wt_pipeline_stats s;
    return wt_context_pipeline_stats(CTX("ctx", e->ctx), PTR("out", &s));
}
ROWFN(context_get_info)
{
    wt_context_info info;
    return wt_context_get_info(CTX("ctx", e->ctx), PTR("out", &info));
}
/* Device loss and recovery on a context of their own. */
ROWFN(context_lose_device)
{
    wt_context *c = NULL;
    if (wt_context_create(e->opts, &c) != WT_OK) return WT_ERR_BACKEND;
    wt_status st = wt_context_lose_device(CTX("ctx", c));
    wt_context_destroy(c);
    return st;
}
ROWFN(context_recover)
{
    wt_context *c = NULL;
    if (wt_context_create(e->opts, &c) != WT_OK) return WT_ERR_BACKEND;
    wt_context_lose_device(c); /* UNSUPPORTED on the CPU: recover of a live context */
    wt_status st = wt_context_recover(CTX("ctx", c));
    wt_context_destroy(c);
    return st;
}
/* Autograd, each row on tensors of its own (e's tensors never require grad). */
static wt_status grad_loss(const env2 *e, wt_tensor **w, wt_tensor **loss)
{
    *w = *loss = NULL;
    if (wt_copy(e->m35, w) != WT_OK || wt_tensor_set_requires_grad(*w, true) != WT_OK ||
        wt_sum(*w, 0, NULL, false, loss) != WT_OK)
        return WT_ERR_BACKEND;
    return WT_OK;
}
ROWFN(tensor_set_requires_grad)
{
    wt_tensor *t = NULL;
    if (wt_copy(e->m35, &t) != WT_OK) return WT_ERR_BACKEND;
    wt_status st = wt_tensor_set_requires_grad((wt_tensor *)T("t", t), true);
    wt_tensor_release(t);
    return st;
}
ROWFN(tensor_grad) { return wt_tensor_grad(TA("t", e->m35), OUT("grad")); }
ROWFN(tensor_zero_grad) { return wt_tensor_zero_grad((wt_tensor *)TA("t", e->m35)); }
static void ignore_ready(wt_tensor *grad, void *user) { (void)grad, (void)user; }
ROWFN(tensor_set_grad_ready_hook)
{
    wt_tensor *t = NULL;
    if (wt_copy(e->m35, &t) != WT_OK) return WT_ERR_BACKEND;
    wt_status st = wt_tensor_set_grad_ready_hook((wt_tensor *)TA("t", t), ignore_ready, NULL);
    wt_tensor_release(t);
    return st;
}
ROWFN(backward)
{
    wt_tensor *w, *loss;
    wt_status st = grad_loss(e, &w, &loss);
    if (st == WT_OK) st = wt_backward((wt_tensor *)TA("loss", loss));
    wt_tensor_release(loss);
    wt_tensor_release(w);
    return st;
}
ROWFN(backward_ex)
{
    wt_tensor *w, *loss;
    wt_backward_options o;
    wt_backward_options_init(&o);
    wt_status st = grad_loss(e, &w, &loss);
    if (st == WT_OK) st = wt_backward_ex(1, PTR("outputs", &loss), NULL, PTRO("opts", &o));
    wt_tensor_release(loss);
    wt_tensor_release(w);
    return st;
}
ROWFN(grad)
{
    wt_tensor *w, *loss, *g[1] = {NULL};
    wt_status st = grad_loss(e, &w, &loss);
    if (st == WT_OK) st = wt_grad(1, PTR("outputs", &loss), NULL, 1, PTR("inputs", &w), NULL, PTR("grads", g));
    wt_tensor_release(g[0]);
    wt_tensor_release(loss);
    wt_tensor_release(w);
    return st;
}
ROWFN(detach) { return wt_detach(TA("x", e->m35), OUT("out")); }
ROWFN(no_grad_begin)
{
    wt_status st = wt_no_grad_begin(CTX("ctx", e->ctx));
    if (st == WT_OK) wt_no_grad_end(e->ctx);
    return st;
}
ROWFN(no_grad_end)
{
    if (wt_no_grad_begin(e->ctx) != WT_OK) return WT_ERR_BACKEND;
    wt_status st = wt_no_grad_end(CTX("ctx", e->ctx));
    if (st != WT_OK) wt_no_grad_end(e->ctx);
    return st;
}
/* Scopes, each on a scope of its own over e->ctx. */
/* An SGD optimizer over a fresh parameter with a gradient. */
static wt_status grad_opt(const env2 *e, wt_tensor **w, wt_optimizer **opt)
{
    wt_tensor *loss = NULL;
    *opt = NULL;
    wt_status st = grad_loss(e, w, &loss);
    if (st == WT_OK && (wt_backward(loss) != WT_OK || wt_optimizer_create_sgd(1, w, NULL, opt) != WT_OK))
        st = WT_ERR_BACKEND;
    wt_tensor_release(loss);
    return st;
}
#define OPT_ROW(body)                                   \
    wt_tensor *w = NULL;                                \
    wt_optimizer *opt = NULL;                           \
    wt_status st = grad_opt(e, &w, &opt);               \
    if (st == WT_OK) st = (body);                       \
    wt_optimizer_release(opt);                          \
    wt_tensor_release(w);                               \
    return st
ROWFN(optimizer_create_sgd)
{
    wt_tensor *w, *loss;
    wt_optimizer *opt = NULL;
    wt_sgd_options o;
    wt_sgd_options_init(&o);
    o.momentum = 0.9;
    wt_status st = grad_loss(e, &w, &loss);
    if (st == WT_OK) st = wt_optimizer_create_sgd((int)POS("nparams", 1), PTR("params", &w), PTRO("opts", &o), PTR("out", &opt));
    wt_optimizer_release(opt);
    wt_tensor_release(loss);
    wt_tensor_release(w);
    return st;
}
ROWFN(optimizer_create_adamw)
{
    wt_tensor *w, *loss;
    wt_optimizer *opt = NULL;
    wt_status st = grad_loss(e, &w, &loss);
    if (st == WT_OK) st = wt_optimizer_create_adamw((int)POS("nparams", 1), PTR("params", &w), PTRO("opts", NULL), PTR("out", &opt));
    wt_optimizer_release(opt);
    wt_tensor_release(loss);
    wt_tensor_release(w);
    return st;
}
ROWFN(optimizer_add_params)
{
    wt_tensor *w2 = NULL, *l2 = NULL;
    if (grad_loss(e, &w2, &l2) != WT_OK) return WT_ERR_BACKEND;
    wt_tensor_release(l2);
    wt_tensor *w = NULL;
    wt_optimizer *opt = NULL;
    wt_status st = grad_opt(e, &w, &opt);
    if (st == WT_OK) st = wt_optimizer_add_params(PTR("opt", opt), (int)POS("nparams", 1), PTR("params", &w2), 0.0);
    wt_optimizer_release(opt);
    wt_tensor_release(w);
    wt_tensor_release(w2);
    return st;
}
ROWFN(optimizer_step) { OPT_ROW(wt_optimizer_step(PTR("opt", opt))); }
ROWFN(optimizer_zero_grad) { OPT_ROW(wt_optimizer_zero_grad(PTR("opt", opt))); }
ROWFN(optimizer_set_lr) { OPT_ROW(wt_optimizer_set_lr(PTR("opt", opt), EPS("lr", 0.1f))); }
ROWFN(optimizer_read_steps)
{
    int64_t steps = 0;
    OPT_ROW(wt_optimizer_read_steps(PTR("opt", opt), PTR("steps", &steps)));
}
ROWFN(optimizer_clip_grad_norm)
{
    OPT_ROW(wt_optimizer_clip_grad_norm(PTR("opt", opt), EPS("max_norm", 1.0f), OUTO("total_norm")));
}
ROWFN(optimizer_set_schedule)
{
    wt_lr_schedule_options s;
    wt_lr_schedule_options_init(&s);
    s.kind = WT_LR_COSINE;
    OPT_ROW(wt_optimizer_set_schedule(PTR("opt", opt), PTRO("schedule", &s)));
}
ROWFN(clip_grad_norm)
{
    wt_tensor *w = NULL;
    wt_optimizer *opt = NULL;
    wt_status st = grad_opt(e, &w, &opt);
    if (st == WT_OK) st = wt_clip_grad_norm((int)POS("nparams", 1), PTR("params", &w), EPS("max_norm", 1.0f), OUTO("total_norm"));
    wt_optimizer_release(opt);
    wt_tensor_release(w);
    return st;
}
ROWFN(lr_schedule_at)
{
    (void)e;
    wt_lr_schedule_options s;
    wt_lr_schedule_options_init(&s);
    s.kind = WT_LR_STEP;
    double lr = 0;
    return wt_lr_schedule_at(PTR("schedule", &s), NONNEG("step", 3), PTR("lr", &lr));
}
ROWFN(grad_scaler_create)
{
    wt_grad_scaler *s = NULL;
    wt_status st = wt_grad_scaler_create(CTX("ctx", e->ctx), PTRO("opts", NULL), PTR("out", &s));
    wt_grad_scaler_release(s);
    return st;
}
#define SCALER_ROW(body)                                             \
    wt_tensor *w = NULL;                                             \
    wt_optimizer *opt = NULL;                                        \
    wt_grad_scaler *sc = NULL;                                       \
    wt_status st = grad_opt(e, &w, &opt);                            \
    if (st == WT_OK && wt_grad_scaler_create(e->ctx, NULL, &sc) != WT_OK) st = WT_ERR_BACKEND; \
    if (st == WT_OK) st = (body);                                    \
    wt_grad_scaler_release(sc);                                      \
    wt_optimizer_release(opt);                                       \
    wt_tensor_release(w);                                            \
    return st
ROWFN(grad_scaler_scale) { SCALER_ROW(wt_grad_scaler_scale(PTR("scaler", sc), TA("loss", e->one), OUT("out"))); }
ROWFN(grad_scaler_unscale) { SCALER_ROW(wt_grad_scaler_unscale(PTR("scaler", sc), PTR("opt", opt))); }
ROWFN(grad_scaler_step) { SCALER_ROW(wt_grad_scaler_step(PTR("scaler", sc), PTR("opt", opt))); }
ROWFN(grad_scaler_current_scale) { SCALER_ROW(wt_grad_scaler_current_scale(PTR("scaler", sc), OUT("scale"))); }
ROWFN(grad_scaler_found_inf) { SCALER_ROW(wt_grad_scaler_found_inf(PTR("scaler", sc), OUT("found"))); }
ROWFN(scope_begin)
{
    wt_scope *s = NULL;
    wt_status st = wt_scope_begin(CTX("ctx", e->ctx), PTR("out", &s));
    if (st == WT_OK) st = wt_scope_end(s);
    return st;
}
ROWFN(scope_keep)
{
    wt_scope *s = NULL;
    wt_tensor *t = NULL;
    if (wt_scope_begin(e->ctx, &s) != WT_OK) return WT_ERR_BACKEND;
    if (wt_neg(e->m35, &t) != WT_OK) {
        wt_scope_end(s);
        return WT_ERR_BACKEND;
    }
    wt_status st = wt_scope_keep(PTR("scope", s), (wt_tensor *)TA("t", t));
    wt_scope_end(s); /* releases t unless it was kept */
    if (st == WT_OK) wt_tensor_release(t);
    return st;
}
ROWFN(scope_end)
{
    wt_scope *s = NULL;
    if (wt_scope_begin(e->ctx, &s) != WT_OK) return WT_ERR_BACKEND;
    wt_status st = wt_scope_end(PTR("scope", s));
    if (st != WT_OK) wt_scope_end(s);
    return st;
}
/* Captured graphs, each capture of its own over e->ctx (a capture a row
 * leaves open is ended, so the next row starts without one). */
static void end_capture(wt_context *ctx)
{
    wt_graph *g = NULL;
    if (wt_graph_end(ctx, &g) == WT_OK) wt_graph_release(g);
}
ROWFN(graph_begin)
{
    wt_status st = wt_graph_begin(CTX("ctx", e->ctx));
    end_capture(e->ctx);
    return st;
}
ROWFN(graph_end)
{
    if (wt_graph_begin(e->ctx) != WT_OK) return WT_ERR_BACKEND;
    wt_graph *g = NULL;
    wt_status st = wt_graph_end(CTX("ctx", e->ctx), PTR("out", &g));
    end_capture(e->ctx);
    wt_graph_release(g);
    return st;
}
/* The deprecated names of the two above. */
ROWFN(graph_capture_begin)
{
    wt_status st = wt_graph_capture_begin(CTX("ctx", e->ctx));
    end_capture(e->ctx);
    return st;
}
ROWFN(graph_capture_end)
{
    if (wt_graph_begin(e->ctx) != WT_OK) return WT_ERR_BACKEND;
    wt_graph *g = NULL;
    wt_status st = wt_graph_capture_end(CTX("ctx", e->ctx), PTR("out", &g));
    end_capture(e->ctx);
    wt_graph_destroy(g);
    return st;
}
/* An empty graph of e->ctx, or NULL. */
static wt_graph *empty_graph(const env2 *e)
{
    wt_graph *g = NULL;
    if (wt_graph_begin(e->ctx) != WT_OK) return NULL;
    if (wt_graph_end(e->ctx, &g) != WT_OK) return NULL;
    return g;
}
ROWFN(graph_replay)
{
    wt_graph *g = empty_graph(e);
    if (!g) return WT_ERR_BACKEND;
    wt_status st = wt_graph_replay(PTR("graph", g));
    wt_graph_release(g);
    return st;
}
ROWFN(graph_node_count)
{
    wt_graph *g = empty_graph(e);
    if (!g) return WT_ERR_BACKEND;
    int64_t n = -1;
    wt_status st = wt_graph_node_count(PTR("graph", g), PTR("count", &n));
    wt_graph_release(g);
    return st;
}
/* Writes m35's own values back, so the other rows see what they expect. */
ROWFN(tensor_write)
{
    float v[15];
    if (wt_tensor_read(e->m35, v, sizeof v) != WT_OK) return WT_ERR_BACKEND;
    return wt_tensor_write((wt_tensor *)TA("t", e->m35), PTR("src", v), BYTES("src_bytes", sizeof v));
}
/* Lent memory: the CPU backend's (WebGPU refuses it: R_ALT). A call that
 * fails must not call release. */
static int g_host_releases;
static void count_host_release(void *user_data)
{
    (void)user_data;
    g_host_releases++;
}
ROWFN(tensor_from_host_memory)
{
    (void)e;
    static float lent[15];
    static const int64_t shape[2] = {3, 5}, strides[2] = {5, 1};
    const int before = g_host_releases;
    wt_status st = wt_tensor_from_host_memory(CTX("ctx", e->ctx), DT("dtype", WT_F32), (int)NONNEG("ndim", 2),
                                              PTR("shape", shape), PTRO("strides", strides), PTR("data", lent),
                                              count_host_release, NULL, OUT("out"));
    if (st != WT_OK && g_host_releases != before) return WT_ERR_BACKEND; /* released on failure */
    return st;
}
ROWFN(tensor_host_data)
{
    void *p = NULL;
    return wt_tensor_host_data((wt_tensor *)TA("t", e->m35), PTR("data", &p));
}
static const char KERNEL_WGSL[] =
    "@group(0) @binding(1) var<storage, read_write> a: array<f32>;\n"
    "@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) i: vec3<u32>) {\n"
    "  if (i.x < arrayLength(&a)) { a[i.x] = a[i.x] * 2.0; }\n}\n";
/* The kernel description: NULL, then each field a caller can get wrong. */
static const wt_kernel_desc *kdesc_slot(M *m, const char *name, wt_kernel_desc *d)
{
    if (!take(m, K_KDESC, name)) return d;
    const wt_status INV = WT_ERR_INVALID_ARGUMENT;
    switch (m->variant) {
    case 0: expect(m, CLASS_NULL, INV, WT_OK, "%s NULL", name); return NULL;
    case 1: d->source = NULL; expect(m, CLASS_NULL, INV, WT_OK, "%s source NULL", name); break;
    case 2: d->source = "fn main( {"; expect(m, CLASS_VALUE, WT_ERR_SHADER, WT_OK, "%s bad WGSL", name); break;
    case 3: d->entry_point = "absent"; expect(m, CLASS_VALUE, WT_ERR_SHADER, INV, "%s entry point absent", name); break;
    case 4: d->num_tensors = 9; expect(m, CLASS_SIZE, INV, WT_OK, "%s 9 tensors", name); break;
    case 5: d->num_tensors = -1; expect(m, CLASS_SIZE, INV, WT_OK, "%s -1 tensors", name); break;
    case 6: d->params_size = 257; expect(m, CLASS_SIZE, INV, WT_OK, "%s params of 257 bytes", name); break;
    }
    return d;
}

ROWFN(kernel_create)
{
    wt_kernel_desc d = {KERNEL_WGSL, NULL, 1, 1u, 0};
    return wt_kernel_create(CTX("ctx", e->ctx), kdesc_slot(m, "desc", &d), out_kernel(m, "out"));
}
/* On the CPU no kernel can be made: the row then passes NULL, and its
 * valid call is the NULL case (WT_ERR_INVALID_ARGUMENT, the row's alt). */
ROWFN(kernel_dispatch)
{
    wt_kernel_desc d = {KERNEL_WGSL, NULL, 1, 1u, 0};
    wt_kernel *k = NULL;
    wt_kernel_create(e->ctx, &d, &k);
    wt_tensor *a = NULL;
    const int64_t n = 15;
    if (wt_tensor_zeros(e->ctx, WT_F32, 1, &n, &a) != WT_OK) {
        wt_kernel_destroy(k);
        return WT_ERR_BACKEND;
    }
    wt_tensor *ts[1] = {a};
    static const uint32_t params[1] = {0};
    /* params: none was declared, so 4 bytes of them are a size mismatch;
     * groups: past maxComputeWorkgroupsPerDimension (65535 at least). */
    const bool bad_params = take(m, K_VALUE, "params") && m->variant == 0;
    if (bad_params) expect(m, CLASS_SIZE, WT_ERR_INVALID_ARGUMENT, WT_OK, "%s of 4 bytes, none declared", "params");
    const bool bad_groups = take(m, K_VALUE, "groups_x") && m->variant == 0;
    if (bad_groups) expect(m, CLASS_SIZE, WT_ERR_INVALID_ARGUMENT, WT_OK, "%s 2^31", "groups_x");
    wt_status st = wt_kernel_dispatch(PTR("k", k), (int)POS("ntensors", 1), PTR("tensors", ts), bad_params ? params : NULL,
                                      bad_params ? sizeof params : 0, bad_groups ? 1u << 31 : 1, 1, 1);
    wt_tensor_release(a);
    wt_kernel_destroy(k);
    return st;
}

/* model files */
ROWFN(npy_save) { return wt_npy_save(PATH("path", e->dir_path), TA("t", e->m35)); }
ROWFN(npy_load) { return wt_npy_load(CTX("ctx", e->ctx), PATH("path", e->npy_path), OUT("out")); }
ROWFN(npy_load_memory)
{
    return wt_npy_load_memory(CTX("ctx", e->ctx), PTR("data", e->npy_bytes), BYTES("size", e->npy_size), OUT("out"));
}
ROWFN(safetensors_open) { return wt_safetensors_open(PATH("path", e->st_path), out_file(m, "out")); }
ROWFN(safetensors_open_memory)
{
    return wt_safetensors_open_memory(PTR("data", e->st_bytes), BYTES("size", e->st_size), out_file(m, "out"));
}
static wt_safetensors *open_st(const env2 *e)
{
    wt_safetensors *f = NULL;
    wt_safetensors_open_memory(e->st_bytes, e->st_size, &f);
    return f;
}
ROWFN(safetensors_entry_at)
{
    wt_safetensors *f = open_st(e);
    wt_safetensors_entry ent;
    wt_status st = wt_safetensors_entry_at(PTR("f", f), INDEX("i", 1), PTR("out", &ent));
    wt_safetensors_close(f);
    return st;
}
ROWFN(safetensors_find)
{
    wt_safetensors *f = open_st(e);
    int idx = 0;
    wt_status st = wt_safetensors_find(PTR("f", f), NAME("name", "b"), PTR("index", &idx));
    wt_safetensors_close(f);
    return st;
}
ROWFN(safetensors_load)
{
    wt_safetensors *f = open_st(e);
    wt_status st = wt_safetensors_load(PTR("f", f), CTX("ctx", e->ctx), NAME("name", "a"), DT("float_dtype", WT_F16),
                                       OUT("out"));
    wt_safetensors_close(f);
    return st;
}
ROWFN(safetensors_load_many)
{
    wt_safetensors *f = open_st(e);
    static const char *const names[2] = {"a", "b"};
    wt_status st = wt_safetensors_load_many(PTR("f", f), CTX("ctx", e->ctx), (int)POS("n", 2), PTRO("names", names),
                                            DT("float_dtype", WT_F32), out_array(m, "out", 2));
    wt_safetensors_close(f);
    return st;
}
ROWFN(safetensors_save)
{
    static const char *const names[2] = {"a", "b"};
    static const char *const keys[1] = {"format"}, *const values[1] = {"pt"};
    const wt_tensor *ts[2] = {TFREE("tensors[0]", e->m35), TFREE("tensors[1]", e->v5)};
    return wt_safetensors_save(PATH("path", e->dir_path), (int)POS("n", 2), PTR("names", names), PTR("tensors", ts), 1,
                               PTR("meta_keys", keys), PTR("meta_values", values));
}

/* GGUF: the file has tensors "a" [3,5] f32 and "b" [1,2,4,8] f32, keys
 * "n" (u32), "x" (f32), "flag" (bool), "s" (string), "arr" (u32 array). */
static bool bad_value(M *m, const char *name, wt_status want, const char *what)
{
    if (!take(m, K_VALUE, name) || m->variant != 0) return false;
    expect(m, CLASS_VALUE, want, WT_OK, what, name);
    return true;
}
ROWFN(gguf_type_info)
{
    const char *name;
    int block, size;
    uint32_t type = bad_value(m, "ggml_type", WT_ERR_UNSUPPORTED, "%s 4 (removed)") ? 4 : 12;
    return wt_gguf_type_info(type, PTRO("name", &name), PTRO("block_size", &block), PTRO("type_size", &size));
}
ROWFN(gguf_open) { return wt_gguf_open(PATH("path", e->gguf_path), out_gguf(m, "out")); }
ROWFN(gguf_open_memory)
{
    return wt_gguf_open_memory(PTR("data", e->gguf_bytes), BYTES("size", e->gguf_size), out_gguf(m, "out"));
}
static wt_gguf *open_gguf(const env2 *e)
{
    wt_gguf *f = NULL;
    wt_gguf_open_memory(e->gguf_bytes, e->gguf_size, &f);
    return f;
}
ROWFN(gguf_kv_at)
{
    wt_gguf *f = open_gguf(e);
    const char *key;
    wt_gguf_value v;
    wt_status st = wt_gguf_kv_at(PTR("f", f), INDEX("i", 1), PTR("key", &key), PTR("value", &v));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_find_kv)
{
    wt_gguf *f = open_gguf(e);
    wt_gguf_value v;
    wt_status st = wt_gguf_find_kv(PTR("f", f), NAME("key", "s"), PTR("value", &v));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_get_int)
{
    wt_gguf *f = open_gguf(e);
    int64_t v;
    const char *key = bad_value(m, "key type", WT_ERR_INVALID_ARGUMENT, "%s a string") ? "s" : "n";
    wt_status st = wt_gguf_get_int(PTR("f", f), NAME("key", key), PTR("out", &v));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_get_float)
{
    wt_gguf *f = open_gguf(e);
    double v;
    const char *key = bad_value(m, "key type", WT_ERR_INVALID_ARGUMENT, "%s a u32") ? "n" : "x";
    wt_status st = wt_gguf_get_float(PTR("f", f), NAME("key", key), PTR("out", &v));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_get_bool)
{
    wt_gguf *f = open_gguf(e);
    bool v;
    const char *key = bad_value(m, "key type", WT_ERR_INVALID_ARGUMENT, "%s an f32") ? "x" : "flag";
    wt_status st = wt_gguf_get_bool(PTR("f", f), NAME("key", key), PTR("out", &v));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_get_string)
{
    wt_gguf *f = open_gguf(e);
    const char *v;
    size_t len;
    const char *key = bad_value(m, "key type", WT_ERR_INVALID_ARGUMENT, "%s a bool") ? "flag" : "s";
    wt_status st = wt_gguf_get_string(PTR("f", f), NAME("key", key), PTR("out", &v), PTRO("len", &len));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_get_array)
{
    wt_gguf *f = open_gguf(e);
    wt_gguf_value v;
    wt_gguf_type et = WT_GGUF_U32;
    if (bad_value(m, "elem_type", WT_ERR_INVALID_ARGUMENT, "%s 99")) et = (wt_gguf_type)99;
    if (bad_value(m, "elem_type", WT_ERR_INVALID_ARGUMENT, "%s i32 for a u32 array")) et = WT_GGUF_I32;
    wt_status st = wt_gguf_get_array(PTR("f", f), NAME("key", "arr"), et, PTR("out", &v));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_tensor_at)
{
    wt_gguf *f = open_gguf(e);
    wt_gguf_tensor_info info;
    wt_status st = wt_gguf_tensor_at(PTR("f", f), INDEX("i", 1), PTR("out", &info));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_find_tensor)
{
    wt_gguf *f = open_gguf(e);
    int idx = 0;
    wt_status st = wt_gguf_find_tensor(PTR("f", f), NAME("name", "b"), PTR("index", &idx));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_load)
{
    wt_gguf *f = open_gguf(e);
    wt_status st = wt_gguf_load(PTR("f", f), CTX("ctx", e->ctx), NAME("name", "a"), OUT("out"));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_read_raw)
{
    wt_gguf *f = open_gguf(e);
    float buf[15];
    wt_status st = wt_gguf_read_raw(PTR("f", f), NAME("name", "a"), PTR("dst", buf), BYTES("size", sizeof buf));
    wt_gguf_close(f);
    return st;
}
ROWFN(gguf_writer_create) { return wt_gguf_writer_create(out_gguf_writer(m, "out")); }
static wt_gguf_writer *new_writer(void)
{
    wt_gguf_writer *w = NULL;
    wt_gguf_writer_create(&w);
    return w;
}
ROWFN(gguf_writer_set)
{
    (void)e;
    wt_gguf_writer *w = new_writer();
    static const uint32_t three[3] = {1, 2, 3};
    wt_gguf_value v = {.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_U32, .count = 3, .elems = three};
    if (bad_value(m, "value.elem_type", WT_ERR_INVALID_ARGUMENT, "%s 13")) v.elem_type = (wt_gguf_type)13;
    if (bad_value(m, "value.elems", WT_ERR_INVALID_ARGUMENT, "%s NULL with count 3")) v.elems = NULL;
    const char *key = bad_value(m, "key", WT_ERR_INVALID_ARGUMENT, "%s general.alignment for an array")
                          ? "general.alignment"
                          : "k";
    wt_status st = wt_gguf_writer_set(PTR("w", w), PTR("key", key), PTR("value", &v));
    wt_gguf_writer_destroy(w);
    return st;
}
ROWFN(gguf_writer_set_u32)
{
    (void)e;
    wt_gguf_writer *w = new_writer();
    const bool bad = bad_value(m, "v", WT_ERR_INVALID_ARGUMENT, "%s 3 for general.alignment");
    wt_status st = wt_gguf_writer_set_u32(PTR("w", w), PTR("key", "general.alignment"), bad ? 3 : 64);
    wt_gguf_writer_destroy(w);
    return st;
}
ROWFN(gguf_writer_set_string)
{
    (void)e;
    wt_gguf_writer *w = new_writer();
    wt_status st = wt_gguf_writer_set_string(PTR("w", w), PTR("key", "general.name"), PTR("s", "tiny"));
    wt_gguf_writer_destroy(w);
    return st;
}
ROWFN(gguf_writer_add_tensor)
{
    wt_gguf_writer *w = new_writer();
    const char *name = bad_value(m, "name", WT_ERR_INVALID_ARGUMENT, "%s empty") ? "" : "a";
    wt_status st = wt_gguf_writer_add_tensor(PTR("w", w), PTR("name", name), TFREE("t", e->m35));
    wt_gguf_writer_destroy(w);
    return st;
}
ROWFN(gguf_writer_add_raw)
{
    (void)e;
    wt_gguf_writer *w = new_writer();
    static const uint64_t dims[2] = {32, 2};
    static const uint8_t blocks[68];
    uint32_t type = bad_value(m, "ggml_type", WT_ERR_UNSUPPORTED, "%s 99") ? 99 : 8; /* Q8_0 */
    int n_dims = bad_value(m, "n_dims", WT_ERR_INVALID_ARGUMENT, "%s 5") ? 5 : 2;
    wt_status st = wt_gguf_writer_add_raw(PTR("w", w), PTR("name", "q"), type, n_dims, PTR("dims", dims),
                                          PTR("data", blocks), BYTES("bytes", sizeof blocks));
    wt_gguf_writer_destroy(w);
    return st;
}
/* --- tokenizers --- */
static wt_tokenizer *open_tokenizer(const env2 *e)
{
    wt_tokenizer *t = NULL;
    wt_tokenizer_from_json_memory(e->tok_json, strlen(e->tok_json), &t);
    return t;
}
ROWFN(tokenizer_from_gguf)
{
    wt_gguf *g = NULL;
    wt_gguf_open(e->tok_gguf_path, &g);
    wt_status st = wt_tokenizer_from_gguf(PTR("f", g), out_tokenizer(m, "out"));
    wt_gguf_close(g);
    return st;
}
ROWFN(tokenizer_load_json) { return wt_tokenizer_load_json(PATH("path", e->tok_json_path), out_tokenizer(m, "out")); }
ROWFN(tokenizer_from_json_memory)
{
    return wt_tokenizer_from_json_memory(PTR("data", e->tok_json), BYTES("size", strlen(e->tok_json)),
                                         out_tokenizer(m, "out"));
}
ROWFN(tokenizer_token)
{
    wt_tokenizer *t = open_tokenizer(e);
    const char *text;
    size_t len;
    wt_token_type type;
    wt_status st = wt_tokenizer_token(PTR("t", t), INDEX("id", 5), PTRO("text", &text), PTRO("len", &len),
                                      PTRO("type", &type));
    wt_tokenizer_destroy(t);
    return st;
}
ROWFN(tokenizer_find)
{
    wt_tokenizer *t = open_tokenizer(e);
    int32_t id;
    wt_status st = wt_tokenizer_find(PTR("t", t), PTR("text", "\xE2\x96\x81the"), 6, PTR("id", &id));
    wt_tokenizer_destroy(t);
    return st;
}
ROWFN(tokenizer_encode)
{
    wt_tokenizer *t = open_tokenizer(e);
    int32_t ids[8];
    size_t n;
    const unsigned flags = bad_value(m, "flags", WT_ERR_INVALID_ARGUMENT, "%s unknown bits") ? 0x100u : WT_TOKENIZE_ADD_BOS;
    /* "the x" -> <s> ▁the ▁ <0x78>: 4 ids */
    wt_status st = wt_tokenizer_encode(PTR("t", t), PTR("text", "the x"), 5, flags, PTR("ids", ids),
                                       BYTES("capacity", 4), PTR("n_ids", &n));
    wt_tokenizer_destroy(t);
    return st;
}
ROWFN(tokenizer_token_bytes)
{
    wt_tokenizer *t = open_tokenizer(e);
    char buf[8];
    size_t len;
    /* token 277 is ▁the: 4 bytes " the" */
    wt_status st = wt_tokenizer_token_bytes(PTR("t", t), INDEX("id", 277), PTR("buf", buf), BYTES("capacity", 4),
                                            PTR("len", &len));
    wt_tokenizer_destroy(t);
    return st;
}
ROWFN(tokenizer_decode)
{
    wt_tokenizer *t = open_tokenizer(e);
    static const int32_t ids[2] = {1, 277};
    char text[8];
    size_t len;
    const unsigned flags = bad_value(m, "flags", WT_ERR_INVALID_ARGUMENT, "%s unknown bits") ? 0x100u : 0;
    /* "<s> the" and its NUL: 8 bytes */
    wt_status st = wt_tokenizer_decode(PTR("t", t), PTR("ids", ids), 2, flags, PTR("text", text), BYTES("capacity", 8),
                                       PTR("len", &len));
    wt_tokenizer_destroy(t);
    return st;
}
ROWFN(detokenizer_create)
{
    wt_tokenizer *t = open_tokenizer(e);
    const unsigned flags = bad_value(m, "flags", WT_ERR_INVALID_ARGUMENT, "%s unknown bits") ? 0x100u : 0;
    wt_status st = wt_detokenizer_create(PTR("t", t), flags, out_detokenizer(m, "out"));
    wt_tokenizer_destroy(t);
    return st;
}
static wt_detokenizer *open_detokenizer(const wt_tokenizer *t)
{
    wt_detokenizer *d = NULL;
    wt_detokenizer_create(t, 0, &d);
    return d;
}
ROWFN(detokenizer_push)
{
    wt_tokenizer *t = open_tokenizer(e);
    wt_detokenizer *d = open_detokenizer(t);
    const char *text;
    size_t len;
    wt_status st = wt_detokenizer_push(PTR("d", d), INDEX("id", 277), PTR("text", &text), PTR("len", &len));
    wt_detokenizer_destroy(d);
    wt_tokenizer_destroy(t);
    return st;
}
ROWFN(detokenizer_flush)
{
    wt_tokenizer *t = open_tokenizer(e);
    wt_detokenizer *d = open_detokenizer(t);
    const char *text;
    size_t len;
    wt_status st = wt_detokenizer_flush(PTR("d", d), PTR("text", &text), PTR("len", &len));
    wt_detokenizer_destroy(d);
    wt_tokenizer_destroy(t);
    return st;
}
ROWFN(gguf_writer_save)
{
    wt_gguf_writer *w = new_writer();
    wt_gguf_writer_set_u32(w, "n", 7);
    wt_gguf_writer_add_tensor(w, "a", e->m35);
    wt_status st = wt_gguf_writer_save(PTR("w", w), PATH("path", e->dir_path));
    wt_gguf_writer_destroy(w);
    return st;
}

#define R(f) {"wt_" #f, row_##f, WT_OK}
#define R_ALT(f, alt) {"wt_" #f, row_##f, alt}
static const slot_row ROWS[] = {
    /* --- shape and index ops, sorting --- */
    R(squeeze), R(unsqueeze), R(flatten), R(concat), R(stack), R(split), R(chunk), R(gather),
    R(index_select), R(embedding), R(scatter_add), R(index_add), R(copy_into_at), R(one_hot), R(pad), R(repeat),
    R(tile), R(flip), R(roll), R(tril), R(triu), R(sort), R(argsort), R(topk),
    R(topk_v2), R(tensor_arange), R(tensor_linspace), R(tensor_eye), R(tensor_rand), R(tensor_randn),
    R(dropout_v2),
    /* --- convolution, pooling, normalisation, transformer ops --- */
    R(conv2d), R(conv1d), R(conv_transpose2d), R(max_pool2d), R(avg_pool2d), R(adaptive_avg_pool2d),
    R(adaptive_max_pool2d), R(global_avg_pool2d), R(global_max_pool2d), R(batch_norm), R(group_norm),
    R(interpolate), R(upsample2d),
    R(layer_norm), R(rms_norm), R(scaled_dot_product_attention), R(rope), R(linear), R(linear_fused), R(rope_kv_cache),
    R(group_norm_v2), R(scaled_dot_product_attention_v2), R(rope_v2),
    R(quant_from_blocks), R(quantize), R(dequantize), R(linear_quant), R(embedding_quant),
    R(sample),
    /* --- training --- */
    R(activation_backward), R(cross_entropy), R(cross_entropy_backward), R(embedding_backward),
    R(layernorm_backward), R(batch_norm_backward), R(sgd_step), R(adamw_step), R(conv2d_backward),
    R(max_pool2d_backward), R(avg_pool2d_backward), R(interpolate_backward),
    R(relu_backward), R(sigmoid_backward), R(tanh_backward), R(silu_backward), R(gelu_backward),
    R(gelu_tanh_backward), R(cross_entropy_backward_v2), R(layer_norm_backward), R(batch_norm_backward_v2),
    R(conv2d_backward_v2), R(max_pool2d_v2), R(avg_pool2d_v2), R(avg_pool2d_backward_v2),
    /* --- runtime --- */
    R(event_record), R(event_query), R(event_wait), R(tensor_read_async), R(tensor_to),
    R_ALT(context_profile_begin, WT_ERR_UNSUPPORTED), R_ALT(context_profile_end, WT_ERR_UNSUPPORTED),
    R_ALT(context_profile_summary, WT_ERR_UNSUPPORTED),
    R(context_pipeline_stats), R(context_get_info), R_ALT(context_lose_device, WT_ERR_UNSUPPORTED),
    R(context_recover), R(scope_begin), R(scope_keep), R(scope_end), R(graph_begin),
    R(graph_end), R(graph_capture_begin), R(graph_capture_end), R(graph_replay), R(graph_node_count), R(tensor_write),
    R_ALT(tensor_from_host_memory, WT_ERR_UNSUPPORTED), R_ALT(tensor_host_data, WT_ERR_UNSUPPORTED),
    R(tensor_set_requires_grad), R(tensor_grad), R(tensor_zero_grad), R(tensor_set_grad_ready_hook), R(backward), R(backward_ex), R(grad),
    R(detach), R(no_grad_begin), R(no_grad_end), R(optimizer_create_sgd), R(optimizer_create_adamw),
    R(optimizer_add_params), R(optimizer_step), R(optimizer_zero_grad), R(optimizer_set_lr), R(optimizer_read_steps),
    R(optimizer_clip_grad_norm), R(optimizer_set_schedule), R(clip_grad_norm), R(lr_schedule_at),
    R(grad_scaler_create), R(grad_scaler_scale), R(grad_scaler_unscale), R(grad_scaler_step),
    R(grad_scaler_current_scale), R(grad_scaler_found_inf), R_ALT(kernel_create, WT_ERR_UNSUPPORTED),
    R_ALT(kernel_dispatch, WT_ERR_INVALID_ARGUMENT),
    /* --- model files --- */
    R(npy_save), R(npy_load), R(npy_load_memory), R(safetensors_open), R(safetensors_open_memory),
    R(safetensors_entry_at), R(safetensors_find), R(safetensors_load), R(safetensors_load_many),
    R(safetensors_save), R(gguf_type_info), R(gguf_open), R(gguf_open_memory), R(gguf_kv_at), R(gguf_find_kv),
    R(gguf_get_int), R(gguf_get_float), R(gguf_get_bool), R(gguf_get_string), R(gguf_get_array),
    R(gguf_tensor_at), R(gguf_find_tensor), R(gguf_load), R(gguf_read_raw), R(gguf_writer_create),
    R(gguf_writer_set), R(gguf_writer_set_u32), R(gguf_writer_set_string), R(gguf_writer_add_tensor),
    R(gguf_writer_add_raw), R(gguf_writer_save),
    /* --- tokenizers --- */
    R(tokenizer_from_gguf), R(tokenizer_load_json), R(tokenizer_from_json_memory), R(tokenizer_token),
    R(tokenizer_find), R(tokenizer_encode), R(tokenizer_token_bytes), R(tokenizer_decode), R(detokenizer_create),
    R(detokenizer_push), R(detokenizer_flush),
};

/* Functions without a status: called with NULL or an out-of-range value,
 * they must neither crash nor claim success. */
static const char *const NO_STATUS[] = {
    "wt_status_string", "wt_last_error", "wt_version", "wt_context_options_init", "wt_context_destroy",
    "wt_context_backend", "wt_kernel_destroy", "wt_event_destroy", "wt_context_last_error",
    "wt_context_last_message", "wt_context_last_status",
    "wt_tensor_ndim", "wt_tensor_shape", "wt_tensor_strides", "wt_tensor_offset", "wt_tensor_numel",
    "wt_tensor_dtype", "wt_tensor_is_contiguous", "wt_tensor_context", "wt_dtype_size", "wt_dtype_name",
    "wt_tensor_retain", "wt_tensor_release", "wt_op_count", "wt_op_name", "wt_op_family",
    "wt_conv_options_init", "wt_pool_options_init", "wt_batch_norm_options_init",
    "wt_cross_entropy_options_init", "wt_sgd_options_init", "wt_adamw_options_init",
    "wt_interpolate_options_init", "wt_attention_options_init", "wt_rope_options_init", "wt_sample_options_init",
    "wt_linear_fused_options_init", "wt_rope_kv_cache_options_init",
    "wt_group_norm_options_init", "wt_dropout_options_init", "wt_pool2d_options_init",
    "wt_tensor_requires_grad", "wt_backward_options_init", "wt_grad_enabled", "wt_op_gradient",
    "wt_safetensors_close", "wt_safetensors_count", "wt_safetensors_metadata",
    "wt_gguf_close", "wt_gguf_version", "wt_gguf_alignment", "wt_gguf_kv_count", "wt_gguf_tensor_count",
    "wt_gguf_writer_destroy", "wt_graph_release", "wt_graph_destroy", "wt_set_last_error", "wt_optimizer_lr", "wt_optimizer_steps",
    "wt_tokenizer_destroy", "wt_tokenizer_kind_of", "wt_tokenizer_vocab_size", "wt_tokenizer_bos",
    "wt_tokenizer_eos", "wt_tokenizer_adds_bos", "wt_tokenizer_is_end", "wt_tokenizer_unicode_version", "wt_detokenizer_destroy",
    "wt_optimizer_release", "wt_lr_schedule_options_init", "wt_set_log_handler",
    "wt_grad_scaler_options_init", "wt_grad_scaler_release",
};

static int no_status_checks(void)
{
    wt_kernel_destroy(NULL);
    wt_event_destroy(NULL);
    wt_graph_release(NULL);
    wt_graph_destroy(NULL);
    wt_conv_options_init(NULL);
    wt_pool_options_init(NULL);
    wt_batch_norm_options_init(NULL);
    wt_cross_entropy_options_init(NULL);
    wt_sgd_options_init(NULL);
    wt_adamw_options_init(NULL);
    wt_interpolate_options_init(NULL);
    wt_attention_options_init(NULL);
    wt_rope_options_init(NULL);
    wt_linear_fused_options_init(NULL);
    wt_rope_kv_cache_options_init(NULL);
    wt_group_norm_options_init(NULL);
    wt_dropout_options_init(NULL);
    wt_pool2d_options_init(NULL);
    wt_backward_options_init(NULL);
    wt_lr_schedule_options_init(NULL);
    wt_optimizer_release(NULL);
    wt_grad_scaler_release(NULL);
    wt_grad_scaler_options_init(NULL);
    wt_set_log_handler(NULL, NULL);
    CHECK(isnan(wt_optimizer_lr(NULL)) && wt_optimizer_steps(NULL) == 0, "optimizer queries of NULL: NaN and 0");
    CHECK(!wt_tensor_requires_grad(NULL) && !wt_grad_enabled(NULL) && wt_op_gradient(-1) == WT_OP_GRAD_UNKNOWN,
          "autograd queries of NULL and out-of-range values");
    wt_safetensors_close(NULL);
    wt_gguf_close(NULL);
    wt_gguf_writer_destroy(NULL);
    wt_status s = WT_OK;
    CHECK(wt_set_last_error(WT_ERR_IO, NULL) == WT_ERR_IO && wt_last_error()[0] == 0 &&
              wt_set_last_error(WT_ERR_BACKEND, "x") == WT_ERR_BACKEND && strcmp(wt_last_error(), "x") == 0,
          "set_last_error(NULL message) records \"\" and returns the status given");
    CHECK(wt_version() && wt_last_error() && wt_context_last_error(NULL, &s) != NULL && s == WT_OK,
          "version, last_error, context_last_error(NULL) give strings");
    CHECK(wt_context_last_message(NULL) != NULL && wt_context_last_message(NULL)[0] == 0 &&
              wt_context_last_status(NULL) == WT_OK,
          "context_last_message/status(NULL): \"\" and WT_OK");
    CHECK(wt_tensor_dtype(NULL) != WT_F32 || true, "tensor_dtype(NULL) returns");
    CHECK(wt_dtype_name((wt_dtype)99) != NULL, "dtype_name(99) gives a string");
    CHECK(wt_op_count() > 0 && wt_op_name(-1) == NULL && wt_op_name(wt_op_count()) == NULL &&
              wt_op_family(-1) == NULL,
          "op_name/op_family out of range: NULL");
    CHECK(wt_safetensors_count(NULL) == 0 && wt_safetensors_metadata(NULL, "k") == NULL,
          "safetensors count/metadata of NULL");
    CHECK(wt_gguf_version(NULL) == 0 && wt_gguf_alignment(NULL) == 0 && wt_gguf_kv_count(NULL) == 0 &&
              wt_gguf_tensor_count(NULL) == 0,
          "gguf version/alignment/counts of NULL");
    wt_tokenizer_destroy(NULL);
    wt_detokenizer_destroy(NULL);
    CHECK(wt_tokenizer_kind_of(NULL) == 0 && wt_tokenizer_vocab_size(NULL) == 0 && wt_tokenizer_bos(NULL) == -1 &&
              wt_tokenizer_eos(NULL) == -1 && !wt_tokenizer_adds_bos(NULL) && !wt_tokenizer_is_end(NULL, 2) && wt_tokenizer_unicode_version()[0],
          "tokenizer getters of NULL");
    return 16;
}

/* ------------------------------------------------------------- driver */

static void release_case(M *m)
{
    for (int i = 0; i < m->nmade; i++) wt_tensor_release(m->made[i]);
    m->nmade = 0;
}

/* Checks the outputs of one call and releases what it made. */
static void check_outputs(M *m, const char *fn, const char *mode, wt_status st)
{
    for (int i = 0; i < m->nouts; i++) {
        out_slot *o = &m->outs[i];
        if (!o->passed) continue;
        if (st != WT_OK) {
            CHECK(o->u.t == NULL, "%s(%s) [%s]: %s not NULL on failure", fn, m->what, mode, o->name);
            continue;
        }
        if (o->u.t == POISON_PTR || o->u.t == NULL) continue;
        switch (o->type) {
        case OUT_TENSOR: wt_tensor_release(o->u.t); break;
        case OUT_EVENT: wt_event_destroy(o->u.ev); break;
        case OUT_KERNEL: wt_kernel_destroy(o->u.k); break;
        case OUT_FILE: wt_safetensors_close(o->u.f); break;
        case OUT_GGUF: wt_gguf_close(o->u.g); break;
        case OUT_GGUF_WRITER: wt_gguf_writer_destroy(o->u.w); break;
        case OUT_TOKENIZER: wt_tokenizer_destroy(o->u.tok); break;
        case OUT_DETOKENIZER: wt_detokenizer_destroy(o->u.detok); break;
        }
    }
    /* With a bad count the function cannot know how many entries to clear. */
    const bool count_bad = m->target >= 0 && m->kinds[m->target] == K_POS;
    for (int i = 0; i < m->narr; i++) {
        if (st != WT_OK && !count_bad)
            CHECK(m->arr[i] == NULL, "%s(%s) [%s]: outs[%d] not NULL on failure", fn, m->what, mode, i);
        else if (m->arr[i] != POISON_PTR)
            wt_tensor_release(m->arr[i]);
    }
}

static wt_tensor *from(wt_context *c, wt_dtype dt, int ndim, const int64_t *shape, float scale, int mod)
{
    float buf[256];
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    for (int64_t i = 0; i < n && i < 256; i++) buf[i] = scale * (float)((i * 7) % mod) + (mod > 3 ? 0.25f : 0.0f);
    wt_tensor *t = NULL, *f = NULL;
    if (wt_tensor_from_data(c, WT_F32, ndim, shape, buf, &f) != WT_OK) return NULL;
    if (dt == WT_F32) return f;
    wt_cast(f, dt, &t);
    wt_tensor_release(f);
    return t;
}

static bool read_file(const char *path, void **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char *buf = malloc(1 << 16);
    size_t n = buf ? fread(buf, 1, 1 << 16, f) : 0;
    fclose(f);
    *data = buf;
    *size = n;
    return buf && n > 0;
}

static bool make_env(env2 *e)
{
    const int64_t s4[4] = {2, 3, 6, 6}, sw4[4] = {4, 3, 3, 3}, sdy4[4] = {2, 4, 4, 4}, s3[3] = {2, 3, 8},
                  sw3[3] = {4, 3, 3}, c3 = 3, c4 = 4, c5 = 5, s35[2] = {3, 5}, s45[2] = {4, 5}, n2 = 2,
                  sq[4] = {1, 2, 4, 8}, s25[2] = {2, 5}, s11[2] = {1, 5};
    wt_context *c = e->ctx;
    e->x4 = from(c, WT_F32, 4, s4, 0.5f, 11);
    e->w4 = from(c, WT_F32, 4, sw4, 0.25f, 5);
    e->dy4 = from(c, WT_F32, 4, sdy4, 0.5f, 7);
    e->x3 = from(c, WT_F32, 3, s3, 0.5f, 9);
    e->w3 = from(c, WT_F32, 3, sw3, 0.25f, 5);
    e->c3 = from(c, WT_F32, 1, &c3, 0.5f, 5);
    e->c3pos = from(c, WT_F32, 1, &c3, 1.0f, 5);
    e->b4v = from(c, WT_F32, 1, &c4, 0.5f, 5);
    e->m35 = from(c, WT_F32, 2, s35, 0.5f, 9);
    e->v5 = from(c, WT_F32, 1, &c5, 0.5f, 5);
    e->w45 = from(c, WT_F32, 2, s45, 0.25f, 5);
    e->idx35 = from(c, WT_I32, 2, s35, 1.0f, 3);
    e->idx2 = from(c, WT_I32, 1, &n2, 1.0f, 3);
    e->lab3 = from(c, WT_I32, 1, &c3, 1.0f, 3);
    e->q = from(c, WT_F32, 4, sq, 0.125f, 9);
    e->table = from(c, WT_F32, 2, s35, 0.5f, 9);
    e->dy25 = from(c, WT_F32, 2, s25, 0.5f, 9);
    e->one = from(c, WT_F32, 2, s11, 0.5f, 9);
    const int64_t c1 = 1;
    e->cache35 = from(c, WT_F32, 2, s35, 0.5f, 9);
    e->start1 = from(c, WT_I32, 1, &c1, 1.0f, 3);
    const int64_t skvc[4] = {1, 2, 4, 2}, sqkv[4] = {1, 1, 3, 2};
    e->kvc = from(c, WT_F32, 4, skvc, 0.5f, 5);
    e->qkv4 = from(c, WT_F32, 4, sqkv, 0.5f, 5);
    e->p5 = from(c, WT_F32, 1, &c5, 0.5f, 5);
    e->g5 = from(c, WT_F32, 1, &c5, 0.5f, 5);
    e->s5a = from(c, WT_F32, 1, &c5, 0.5f, 5);
    e->s5b = from(c, WT_F32, 1, &c5, 0.0f, 5);
    e->s5c = from(c, WT_F32, 1, &c5, 0.0f, 5);
    const int64_t sqx[2] = {2, 32}, c3q = 3;
    e->qx = from(c, WT_F32, 2, sqx, 0.5f, 9);
    e->qb = from(c, WT_F32, 1, &c3q, 0.5f, 5);
    for (size_t i = 0; i < sizeof e->qblocks; i++) e->qblocks[i] = (uint8_t)(i * 37 % 251);
    for (int r = 0; r < 3; r++) e->qblocks[r * 34 + 1] = 0x38; /* d = 0.5 + small: finite */
    if (wt_quant_from_blocks(c, WT_QUANT_Q8_0, 3, 32, e->qblocks, sizeof e->qblocks, &e->qw) != WT_OK) return false;
    wt_pool_options po;
    wt_pool_options_init(&po);
    po.kernel[0] = po.kernel[1] = 2;
    if (!e->x4 || wt_max_pool2d(e->x4, &po, &e->pool_dy, &e->pool_idx) != WT_OK) return false;
    /* Files: an .npy and a safetensors file with tensors "a" [3,5] and "b" [5]. */
    snprintf(e->dir_path, sizeof e->dir_path, "/tmp/wt_bad_input_%d.out", (int)getpid());
    snprintf(e->npy_path, sizeof e->npy_path, "/tmp/wt_bad_input_%d.npy", (int)getpid());
    snprintf(e->st_path, sizeof e->st_path, "/tmp/wt_bad_input_%d.safetensors", (int)getpid());
    snprintf(e->gguf_path, sizeof e->gguf_path, "/tmp/wt_bad_input_%d.gguf", (int)getpid());
    const char *names[2] = {"a", "b"};
    wt_tensor *ts[2] = {e->m35, e->v5};
    /* GGUF: "b" last and 256 bytes long, so the file ends where its data
     * does and a size one byte short cuts into it. */
    wt_gguf_writer *w = NULL;
    static const uint32_t arr[3] = {1, 2, 3};
    const wt_gguf_value av = {.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_U32, .count = 3, .elems = arr};
    const wt_gguf_value xv = {.type = WT_GGUF_F32, .f = 0.5}, fv = {.type = WT_GGUF_BOOL, .u = 1};
    bool gguf_ok = wt_gguf_writer_create(&w) == WT_OK && wt_gguf_writer_set_u32(w, "n", 7) == WT_OK &&
                   wt_gguf_writer_set(w, "x", &xv) == WT_OK && wt_gguf_writer_set(w, "flag", &fv) == WT_OK &&
                   wt_gguf_writer_set_string(w, "s", "text") == WT_OK && wt_gguf_writer_set(w, "arr", &av) == WT_OK &&
                   wt_gguf_writer_add_tensor(w, "a", e->m35) == WT_OK && e->q &&
                   wt_gguf_writer_add_tensor(w, "b", e->q) == WT_OK && wt_gguf_writer_save(w, e->gguf_path) == WT_OK;
    wt_gguf_writer_destroy(w);
    snprintf(e->tok_json_path, sizeof e->tok_json_path, "/tmp/wt_bad_input_%d.tokenizer.json", (int)getpid());
    snprintf(e->tok_gguf_path, sizeof e->tok_gguf_path, "/tmp/wt_bad_input_%d.tokenizer.gguf", (int)getpid());
    e->tok_json = vocab_spm_json();
    FILE *tf = fopen(e->tok_json_path, "wb");
    const bool tok_ok = tf && fwrite(e->tok_json, 1, strlen(e->tok_json), tf) == strlen(e->tok_json) &&
                        fclose(tf) == 0 && vocab_spm_gguf(e->tok_gguf_path) == WT_OK;
    return tok_ok && e->m35 && e->v5 && gguf_ok && wt_npy_save(e->npy_path, e->m35) == WT_OK &&
           wt_safetensors_save(e->st_path, 2, names, ts, 0, NULL, NULL) == WT_OK &&
           read_file(e->npy_path, &e->npy_bytes, &e->npy_size) && read_file(e->st_path, &e->st_bytes, &e->st_size) &&
           read_file(e->gguf_path, &e->gguf_bytes, &e->gguf_size);
}

static void free_env(env2 *e)
{
    wt_tensor *all[] = {e->x4, e->w4, e->b4, e->dy4, e->x3, e->w3, e->c3, e->c3pos, e->m35, e->v5, e->w45,
                        e->b4v, e->idx35, e->idx2, e->lab3, e->q, e->pool_dy, e->pool_idx, e->p5, e->g5,
                        e->s5a, e->s5b, e->s5c, e->table, e->dy25, e->one, e->qx, e->qw, e->qb, e->cache35, e->start1,
                        e->kvc, e->qkv4};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wt_tensor_release(all[i]);
    free(e->npy_bytes);
    free(e->st_bytes);
    free(e->gguf_bytes);
    remove(e->gguf_path);
    free(e->tok_json);
    remove(e->tok_json_path);
    remove(e->tok_gguf_path);
    remove(e->npy_path);
    remove(e->st_path);
    remove(e->dir_path);
}

void bad_input_slot_rows(wt_context *ctx, wt_context *other, const wt_context_options *opts,
                         const char *mode, int *functions, int *cases, int *per_class)
{
    env2 e;
    memset(&e, 0, sizeof e);
    e.ctx = ctx;
    e.other = other;
    e.opts = opts;
    if (!CHECK(make_env(&e), "slot rows: inputs [%s]: %s", mode, wt_last_error())) {
        free_env(&e);
        return;
    }
    const size_t nrows = sizeof ROWS / sizeof ROWS[0];
    for (size_t r = 0; r < nrows; r++) {
        const slot_row *row = &ROWS[r];
        M m;
        memset(&m, 0, sizeof m);
        m.e = &e;
        m.discover = true;
        m.target = -1;
        wt_status st = row->fn(&m, &e);
        snprintf(m.what, sizeof m.what, "valid");
        CHECK(st == WT_OK || st == row->valid_alt, "%s(valid) [%s]: %s: %s", row->name, mode,
              wt_status_string(st), wt_last_error());
        check_outputs(&m, row->name, mode, st);
        release_case(&m);
        per_class[CLASS_VALID]++;
        int row_cases = 1;
        const int nslots = m.nslots;
        for (int s = 0; s < nslots; s++) {
            for (int v = 0; v < 10; v++) {
                m.discover = false;
                m.slot = 0;
                m.target = s;
                m.variant = v;
                m.hit = false;
                m.nouts = 0;
                m.narr = 0;
                st = row->fn(&m, &e);
                if (!m.hit) {
                    check_outputs(&m, row->name, mode, st);
                    release_case(&m);
                    continue;
                }
                bool ok = st == m.want || (m.want2 != WT_OK && st == m.want2) ||
                          (row->valid_alt != WT_OK && st == row->valid_alt);
                CHECK(ok, "%s(%s) [%s]: returned %s, expected %s%s%s (%s)", row->name, m.what, mode,
                      wt_status_string(st), wt_status_string(m.want), m.want2 != WT_OK ? " or " : "",
                      m.want2 != WT_OK ? wt_status_string(m.want2) : "", st != WT_OK ? wt_last_error() : "");
                if (st != WT_OK)
                    CHECK(wt_last_error()[0] != 0, "%s(%s) [%s]: failed without a message", row->name, m.what, mode);
                check_outputs(&m, row->name, mode, st);
                release_case(&m);
                per_class[m.cls]++;
                row_cases++;
            }
        }
        CHECK(row_cases > 1, "%s: no bad-argument case generated", row->name);
        *cases += row_cases;
    }
    *cases += no_status_checks();
    *functions += (int)nrows;
    free_env(&e);
}

/* ------------------------------------------------------ header check */

/* The WebAssembly programs have no host files to read: the header check
 * is a property of the sources, run by the native build of this test. */
#ifdef __EMSCRIPTEN__
void bad_input_check_header(const char *const *names, size_t n)
{
    (void)names;
    (void)n;
    printf("header check: run by the native build\n");
}
#else

static bool listed(const char *name, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name)) return true;
    return false;
}

void bad_input_check_header(const char *const *names, size_t n)
{
    static const char *const headers[3] = {WT_INCLUDE_DIR "/webtensor.h", WT_INCLUDE_DIR "/webtensor_io.h",
                                           WT_INCLUDE_DIR "/webtensor_tokenizer.h"};
    int total = 0, missing = 0;
    for (int h = 0; h < 3; h++) {
        void *data = NULL;
        size_t size = 0;
        FILE *f = fopen(headers[h], "rb");
        if (!CHECK(f != NULL, "header %s not found", headers[h])) continue;
        fseek(f, 0, SEEK_END);
        long len = ftell(f);
        fseek(f, 0, SEEK_SET);
        data = malloc((size_t)len + 1);
        size = data ? fread(data, 1, (size_t)len, f) : 0;
        fclose(f);
        if (!data) continue;
        char *text = data;
        text[size] = '\0';
        /* Each "WT_API <type> <name>(": the identifier before the first '('
         * past a WT_DEPRECATED(...) tag, on the line or the next one (the
         * #define of WT_API itself has none before its line ends). */
        for (char *p = strstr(text, "WT_API "); p; p = strstr(p + 1, "WT_API ")) {
            char *from = p;
            if (!strncmp(p + 7, "WT_DEPRECATED(", 14) && (from = strchr(p + 7, ')')) == NULL) continue;
            char *paren = strchr(from + 1, '(');
            char *semi = strchr(from, ';');
            char *eol = strchr(from, '\n');
            if (eol && paren && eol < paren && !strncmp(from, ") wt_", 5)) eol = strchr(eol + 1, '\n');
            if (!paren || (semi && semi < paren) || (eol && eol < paren)) continue;
            char *end = paren;
            while (end > p && end[-1] == ' ') end--;
            char *begin = end;
            while (begin > p && (begin[-1] == '_' || (begin[-1] >= 'a' && begin[-1] <= 'z') ||
                                 (begin[-1] >= '0' && begin[-1] <= '9')))
                begin--;
            char name[96];
            size_t len2 = (size_t)(end - begin);
            if (len2 == 0 || len2 >= sizeof name || strncmp(begin, "wt_", 3)) continue;
            memcpy(name, begin, len2);
            name[len2] = '\0';
            total++;
            bool have = listed(name, names, n) ||
                        listed(name, NO_STATUS, sizeof NO_STATUS / sizeof NO_STATUS[0]);
            for (size_t r = 0; !have && r < sizeof ROWS / sizeof ROWS[0]; r++) have = !strcmp(ROWS[r].name, name);
            if (!have) missing++;
            CHECK(have, "%s (%s) has no row in the bad-input matrix", name, headers[h]);
        }
        free(data);
    }
    printf("bad_input: %d public functions in the headers, %d without a row\n", total, missing);
}
#endif
