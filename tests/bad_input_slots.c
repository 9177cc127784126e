/* The slot helpers of the bad-input rows: each returns the valid value
 * given, or, when its slot is the one to break, a bad value of its kind
 * (NULL, a tensor of the other context or of another dtype, an axis out of
 * range, -1 for a count, NaN for eps ...) and what the call must return. */
#define _POSIX_C_SOURCE 200809L
#include "bad_input_slots.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Counts slot kinds on discovery; true when this slot is the one to break. */
bool slot_take(M *m, kind k, const char *name)
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

void slot_expect(M *m, int cls, wt_status want, wt_status want2, const char *fmt, const char *name)
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

const wt_tensor *tensor_slot(M *m, kind k, const char *name, const wt_tensor *valid)
{
    if (!slot_take(m, k, name)) return valid;
    const wt_status INV = WT_ERR_INVALID_ARGUMENT, UNS = WT_ERR_UNSUPPORTED;
    wt_tensor *t = NULL;
    switch (m->variant) {
    case 0:
        slot_expect(m, CLASS_NULL, k == K_TO ? WT_OK : INV, WT_OK, "%s NULL", name);
        return NULL;
    case 1: /* only where a second input or a context could disagree */
        if (k == K_TFREE || m->ntensor_slots < 2) return valid;
        if (wt_tensor_to(valid, m->e->other, &t) != WT_OK) return valid;
        slot_expect(m, CLASS_OTHER_CTX, INV, WT_OK, "%s of another context", name);
        return keep(m, t);
    case 2:
    case 3: {
        if (k == K_TA || k == K_TWA || k == K_TFREE) return valid;
        wt_dtype to = k == K_TI ? (m->variant == 2 ? WT_F32 : WT_BOOL) : (m->variant == 2 ? WT_I32 : WT_BOOL);
        if (wt_cast(valid, to, &t) != WT_OK) return valid;
        slot_expect(m, CLASS_DTYPE, INV, UNS, to == WT_F32 ? "%s f32" : to == WT_I32 ? "%s i32" : "%s bool",
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
        slot_expect(m, CLASS_ALIAS, INV, WT_OK, "%s an expanded view", name);
        return keep(m, t);
    }
    }
    return valid;
}

static out_slot *out_slot_take(M *m, kind k, const char *name, out_type type, bool *null)
{
    out_slot *o = &m->outs[m->nouts++];
    o->type = type;
    o->u.t = POISON_PTR;
    o->passed = true;
    o->name = name;
    *null = false;
    if (slot_take(m, k, name) && m->variant == 0) {
        slot_expect(m, CLASS_NULL, k == K_OUTO ? WT_OK : WT_ERR_INVALID_ARGUMENT, WT_OK, "%s NULL", name);
        o->passed = false;
        *null = true;
    }
    return o;
}
wt_tensor **out_tensor(M *m, kind k, const char *name)
{
    bool null;
    out_slot *o = out_slot_take(m, k, name, OUT_TENSOR, &null);
    return null ? NULL : &o->u.t;
}
wt_event **out_event(M *m, const char *name)
{
    bool null;
    out_slot *o = out_slot_take(m, K_OUT, name, OUT_EVENT, &null);
    return null ? NULL : &o->u.ev;
}
wt_kernel **out_kernel(M *m, const char *name)
{
    bool null;
    out_slot *o = out_slot_take(m, K_OUT, name, OUT_KERNEL, &null);
    return null ? NULL : &o->u.k;
}
wt_safetensors **out_file(M *m, const char *name)
{
    bool null;
    out_slot *o = out_slot_take(m, K_OUT, name, OUT_FILE, &null);
    return null ? NULL : &o->u.f;
}
wt_gguf **out_gguf(M *m, const char *name)
{
    bool null;
    out_slot *o = out_slot_take(m, K_OUT, name, OUT_GGUF, &null);
    return null ? NULL : &o->u.g;
}
wt_gguf_writer **out_gguf_writer(M *m, const char *name)
{
    bool null;
    out_slot *o = out_slot_take(m, K_OUT, name, OUT_GGUF_WRITER, &null);
    return null ? NULL : &o->u.w;
}

wt_tokenizer **out_tokenizer(M *m, const char *name)
{
    bool null;
    out_slot *o = out_slot_take(m, K_OUT, name, OUT_TOKENIZER, &null);
    return null ? NULL : &o->u.tok;
}
wt_detokenizer **out_detokenizer(M *m, const char *name)
{
    bool null;
    out_slot *o = out_slot_take(m, K_OUT, name, OUT_DETOKENIZER, &null);
    return null ? NULL : &o->u.detok;
}

/* An array of n out-tensors (split, chunk, load_many): on failure every
 * entry must be NULL. */
wt_tensor **out_array(M *m, const char *name, int n)
{
    m->narr = n;
    for (int i = 0; i < n; i++) m->arr[i] = POISON_PTR;
    if (slot_take(m, K_OUT, name) && m->variant == 0) {
        slot_expect(m, CLASS_NULL, WT_ERR_INVALID_ARGUMENT, WT_OK, "%s NULL", name);
        m->narr = 0;
        return NULL;
    }
    return m->arr;
}

int64_t scalar_slot(M *m, kind k, const char *name, int64_t valid)
{
    if (!slot_take(m, k, name)) return valid;
    const wt_status INV = WT_ERR_INVALID_ARGUMENT;
    if (k == K_AX && m->variant < 2) {
        const int64_t v = m->variant == 0 ? 9 : INT_MIN;
        slot_expect(m, CLASS_AXIS, INV, WT_OK, m->variant == 0 ? "%s 9" : "%s INT_MIN", name);
        return v;
    }
    if (k == K_POS && m->variant == 0) {
        slot_expect(m, CLASS_SIZE, INV, WT_ERR_SHAPE, "%s -1", name);
        return -1;
    }
    if (k == K_NEG2 && m->variant == 0) {
        slot_expect(m, CLASS_SIZE, INV, WT_OK, "%s -2", name);
        return -2;
    }
    if (k == K_NONNEG && m->variant == 0) {
        slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s -1", name);
        return -1;
    }
    if (k == K_INDEX && m->variant < 2) {
        slot_expect(m, CLASS_VALUE, INV, WT_OK, m->variant == 0 ? "%s -1" : "%s past the end", name);
        return m->variant == 0 ? -1 : 1000;
    }
    if (k == K_DT && m->variant < 2) {
        slot_expect(m, CLASS_DTYPE, INV, WT_OK, m->variant == 0 ? "%s 99" : "%s -1", name);
        return m->variant == 0 ? 99 : -1;
    }
    if (k == K_QTYPE && m->variant < 2) {
        /* 99: no ggml type; 1: ggml's F16, a type but not a block format */
        slot_expect(m, CLASS_VALUE, INV, WT_OK, m->variant == 0 ? "%s 99" : "%s 1 (F16)", name);
        return m->variant == 0 ? 99 : 1;
    }
    if (k == K_BYTES && m->variant < 2) {
        slot_expect(m, CLASS_BUFFER, INV, WT_OK, m->variant == 0 ? "%s one byte short" : "%s 0", name);
        return m->variant == 0 ? valid - 1 : 0;
    }
    return valid;
}

float eps_slot(M *m, const char *name, float valid)
{
    if (!slot_take(m, K_EPS, name) || m->variant >= 2) return valid;
    slot_expect(m, CLASS_VALUE, WT_ERR_INVALID_ARGUMENT, WT_OK, m->variant == 0 ? "%s -1" : "%s NaN", name);
    return m->variant == 0 ? -1.0f : NAN;
}

void *ptr_slot(M *m, kind k, const char *name, const void *valid)
{
    if (!slot_take(m, k, name) || m->variant > 0) return (void *)(uintptr_t)valid;
    slot_expect(m, CLASS_NULL, k == K_PTRO ? WT_OK : WT_ERR_INVALID_ARGUMENT, WT_OK, "%s NULL", name);
    return NULL;
}

wt_context *ctx_slot(M *m, const char *name, wt_context *valid)
{
    if (!slot_take(m, K_CTX, name) || m->variant > 0) return valid;
    slot_expect(m, CLASS_NULL, WT_ERR_INVALID_ARGUMENT, WT_OK, "%s NULL", name);
    return NULL;
}

/* A string argument: NULL, then a value that names nothing (a path in a
 * folder that does not exist: an I/O error; a tensor not in the file). */
const char *string_slot(M *m, kind k, const char *name, const char *valid)
{
    if (!slot_take(m, k, name) || m->variant >= 2) return valid;
    if (m->variant == 0) {
        slot_expect(m, CLASS_NULL, WT_ERR_INVALID_ARGUMENT, WT_OK, "%s NULL", name);
        return NULL;
    }
    if (k == K_PATH) {
        slot_expect(m, CLASS_VALUE, WT_ERR_IO, WT_OK, "%s in a missing folder", name);
        return "/nonexistent-folder-of-webtensor/x";
    }
    slot_expect(m, CLASS_VALUE, WT_ERR_NOT_FOUND, WT_OK, "%s not in the file", name);
    return "no such tensor";
}

/* Options structs: NULL (defaults for convolutions; pooling needs a
 * kernel), then each field a caller can get wrong. */
const wt_conv_options *conv_slot(M *m, const char *name)
{
    wt_conv_options_init(&m->conv);
    if (!slot_take(m, K_CONV, name)) return &m->conv;
    const wt_status INV = WT_ERR_INVALID_ARGUMENT;
    switch (m->variant) {
    case 0: slot_expect(m, CLASS_NULL, WT_OK, WT_OK, "%s NULL (defaults)", name); return NULL;
    case 1: m->conv.stride[0] = 0; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s stride 0", name); break;
    case 2: m->conv.dilation[1] = -1; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s dilation -1", name); break;
    case 3: m->conv.padding[2] = -1; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s padding -1", name); break;
    case 4: m->conv.groups = 2; slot_expect(m, CLASS_VALUE, INV, WT_ERR_SHAPE, "%s groups 2 for 3 channels", name); break;
    case 5: m->conv.stride[0] = INT64_MAX; slot_expect(m, CLASS_VALUE, WT_ERR_SHAPE, WT_OK, "%s stride 2^63-1", name); break;
    case 6: m->conv.struct_size = 0; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s not initialised", name); break;
    case 7: m->conv.dilation[0] = INT64_MAX; slot_expect(m, CLASS_VALUE, WT_ERR_SHAPE, WT_OK, "%s dilation 2^63-1", name); break;
    case 8: m->conv.padding[1] = INT64_MAX; slot_expect(m, CLASS_VALUE, WT_ERR_SHAPE, WT_OK, "%s padding 2^63-1", name); break;
    }
    /* The backward pass checks dy against the forward's output size too:
     * with bad options either code is right. */
    if (m->hit && m->want == INV && m->shape_too) m->want2 = WT_ERR_SHAPE;
    return &m->conv;
}

const wt_pool_options *pool_slot(M *m, const char *name)
{
    wt_pool_options_init(&m->pool);
    m->pool.kernel[0] = m->pool.kernel[1] = 2;
    if (!slot_take(m, K_POOL, name)) return &m->pool;
    const wt_status INV = WT_ERR_INVALID_ARGUMENT;
    switch (m->variant) {
    case 0: slot_expect(m, CLASS_NULL, INV, WT_OK, "%s NULL", name); return NULL;
    case 1: m->pool.kernel[1] = 0; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s kernel 0", name); break;
    case 2: m->pool.stride[0] = -1; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s stride -1", name); break;
    case 3: m->pool.padding[0] = 2; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s padding past half the kernel", name); break;
    case 4: m->pool.kernel[0] = 100; slot_expect(m, CLASS_VALUE, WT_ERR_SHAPE, INV, "%s kernel past the input", name); break;
    case 5: m->pool.struct_size = 0; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s not initialised", name); break;
    }
    if (m->hit && m->want == INV && m->shape_too) m->want2 = WT_ERR_SHAPE;
    return &m->pool;
}

const wt_pool2d_options *pool2d_slot(M *m, const char *name)
{
    wt_pool2d_options_init(&m->pool2d);
    m->pool2d.kernel[0] = m->pool2d.kernel[1] = 2;
    if (!slot_take(m, K_POOL, name)) return &m->pool2d;
    const wt_status INV = WT_ERR_INVALID_ARGUMENT;
    switch (m->variant) {
    case 0: slot_expect(m, CLASS_NULL, INV, WT_OK, "%s NULL", name); return NULL;
    case 1: m->pool2d.kernel[1] = 0; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s kernel 0", name); break;
    case 2: m->pool2d.stride[0] = -1; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s stride -1", name); break;
    case 3: m->pool2d.padding[3] = 2; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s right padding past half the kernel", name); break;
    case 4: m->pool2d.kernel[0] = 100; slot_expect(m, CLASS_VALUE, WT_ERR_SHAPE, INV, "%s kernel past the input", name); break;
    case 5: m->pool2d.struct_size = 0; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s not initialised", name); break;
    case 6: m->pool2d.padding[0] = -1; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s top padding -1", name); break;
    }
    if (m->hit && m->want == INV && m->shape_too) m->want2 = WT_ERR_SHAPE;
    return &m->pool2d;
}

/* Valid: bilinear to 3x3 (e->x4 [2, 3, 6, 6] to e->pool_dy's shape). */
const wt_interpolate_options *interp_slot(M *m, const char *name)
{
    wt_interpolate_options_init(&m->interp);
    m->interp.mode = WT_INTERP_BILINEAR;
    m->interp.size[0] = m->interp.size[1] = 3;
    if (!slot_take(m, K_INTERP, name)) return &m->interp;
    const wt_status INV = WT_ERR_INVALID_ARGUMENT;
    wt_interpolate_options *o = &m->interp;
    switch (m->variant) {
    case 0: slot_expect(m, CLASS_NULL, INV, WT_OK, "%s NULL", name); return NULL;
    case 1: o->struct_size = 0; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s not initialised", name); break;
    case 2: o->size[1] = -1; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s size -1", name); break;
    case 3: o->size[0] = 0; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s size 0", name); break;
    case 4: o->scale_factor[0] = o->scale_factor[1] = 2.0; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s size and scale_factor", name); break;
    case 5: o->size[0] = o->size[1] = 0; o->scale_factor[0] = o->scale_factor[1] = NAN; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s scale_factor NaN", name); break;
    case 6: o->size[0] = o->size[1] = 0; o->scale_factor[0] = o->scale_factor[1] = 1e-9; slot_expect(m, CLASS_VALUE, WT_ERR_SHAPE, WT_OK, "%s scale_factor leaving no output", name); break;
    case 7: o->mode = WT_INTERP_NEAREST; o->align_corners = true; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s align_corners with nearest", name); break;
    case 8: o->mode = (wt_interp_mode)9; slot_expect(m, CLASS_VALUE, INV, WT_OK, "%s mode 9", name); break;
    }
    return &m->interp;
}

double factor_slot(M *m, const char *name, double valid)
{
    if (!slot_take(m, K_FACTOR, name) || m->variant >= 4) return valid;
    static const double bad[4] = {-1.0, 0.0, NAN, 1e-9};
    slot_expect(m, m->variant == 3 ? CLASS_SIZE : CLASS_VALUE, m->variant == 3 ? WT_ERR_SHAPE : WT_ERR_INVALID_ARGUMENT,
                WT_OK, m->variant == 0 ? "%s -1" : m->variant == 1 ? "%s 0" : m->variant == 2 ? "%s NaN" : "%s 1e-9", name);
    return bad[m->variant];
}
