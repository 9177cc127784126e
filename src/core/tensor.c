/* Storage and tensor objects: lifetime, layout queries, views, and the
 * scopes that own references to them (one file: each needs the other). */
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

/* A zeroed block. Not calloc: glibc's calloc bypasses its per-thread cache,
 * so a small-op loop that makes and frees a tensor and a storage per op
 * went through the arena's bins each time (and, with the blocks beside the
 * heap's top, consolidated the fast bins on every free: about 200
 * instructions an op in callgrind). */
static void *zalloc(size_t size)
{
    void *p = malloc(size);
    if (p) memset(p, 0, size);
    return p;
}

size_t wt_dtype_size(wt_dtype dtype)
{
    switch (dtype) {
    case WT_F32: return 4;
    case WT_F16: return 2;
    case WT_I32: return 4;
    case WT_BOOL: return 1;
    }
    return 0;
}

size_t wt_dtype_storage_size(wt_dtype dtype)
{
    return dtype == WT_BOOL ? 4 : wt_dtype_size(dtype);
}

const char *wt_dtype_name(wt_dtype dtype)
{
    switch (dtype) {
    case WT_F32: return "f32";
    case WT_F16: return "f16";
    case WT_I32: return "i32";
    case WT_BOOL: return "bool";
    }
    return "?";
}

int64_t wt_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides)
{
    int64_t n = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = n;
        n *= shape[i];
    }
    return n;
}

bool wt_layout_is_contiguous(int ndim, const int64_t *shape, const int64_t *strides)
{
    int64_t expect = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        if (shape[i] == 0) return true;
        if (shape[i] != 1 && strides[i] != expect) return false;
        expect *= shape[i];
    }
    return true;
}

static void storage_release(wt_storage *s)
{
    if (!s || --s->refcount > 0) return;
    wt_context *ctx = s->ctx;
    if (s->borrowed) {
        /* Not the context's memory: counted as a storage, not in its bytes. */
        if (s->release) s->release(s->release_data);
        ctx->stats.live_tensors--;
    } else {
        ctx->ops->storage_free(ctx, s);
        wt_stats_on_free(ctx, s->bytes);
    }
    free(s);
    wt_context_unref(ctx);
}

void wt_storage_unref(wt_storage *s)
{
    storage_release(s);
}

static wt_status storage_create(wt_context *ctx, size_t bytes, wt_storage **out)
{
    wt_storage *s = zalloc(sizeof *s);
    if (!s) return wt_fail(WT_ERR_OUT_OF_MEMORY, "out of host memory (%zu bytes requested)", sizeof *s);
    s->refcount = 1;
    s->ctx = ctx;
    s->bytes = bytes;
    wt_status st = wt_memory_limit_check(ctx, bytes);
    if (st == WT_OK) st = ctx->ops->storage_alloc(ctx, s);
    if (st != WT_OK) {
        wt_context_record_error(ctx, st);
        free(s);
        return st;
    }
    wt_context_ref(ctx);
    wt_stats_on_alloc(ctx, bytes);
    *out = s;
    return WT_OK;
}

wt_status wt_tensor_alloc(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape,
                          wt_tensor **out)
{
    *out = NULL;
    size_t esize = wt_dtype_storage_size(dtype);
    size_t numel = 1, bytes;
    for (int i = 0; i < ndim; i++) {
        size_t dim;
        if (!wt_size_of_i64(shape[i], &dim) || !wt_mul_size(numel, dim, &numel))
            return wt_fail(WT_ERR_OUT_OF_MEMORY, "tensor of more than SIZE_MAX elements requested");
    }
    if (!wt_mul_size(numel, esize, &bytes) || (uint64_t)numel > (uint64_t)INT64_MAX / 8)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "tensor of %zu elements is too large", numel);
    wt_tensor *t = zalloc(sizeof *t);
    if (!t) return wt_fail(WT_ERR_OUT_OF_MEMORY, "out of host memory");
    wt_status st = storage_create(ctx, bytes, &t->storage);
    if (st != WT_OK) {
        free(t);
        return st;
    }
    t->refcount = 1;
    t->dtype = dtype;
    t->ndim = ndim;
    if (ndim > 0) memcpy(t->shape, shape, sizeof(int64_t) * (size_t)ndim);
    t->numel = wt_contiguous_strides(ndim, t->shape, t->strides);
    /* Every tensor is made here or in wt_tensor_view: an open scope owns
     * it from the start, whichever op made it. */
    if ((st = wt_scope_adopt(ctx, t)) != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

wt_status wt_tensor_borrow(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape,
                           const int64_t *strides, void *data, size_t bytes, wt_host_release_fn release,
                           void *release_data, wt_tensor **out)
{
    *out = NULL;
    wt_tensor *t = zalloc(sizeof *t);
    wt_storage *s = zalloc(sizeof *s);
    if (!t || !s) {
        free(t);
        free(s);
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    s->refcount = 1;
    s->ctx = ctx;
    s->bytes = bytes;
    s->host = data;
    s->borrowed = true;
    s->release = release;
    s->release_data = release_data;
    wt_context_ref(ctx);
    ctx->stats.live_tensors++;
    t->refcount = 1;
    t->storage = s;
    t->dtype = dtype;
    t->ndim = ndim;
    t->numel = 1;
    for (int i = 0; i < ndim; i++) {
        t->shape[i] = shape[i];
        t->strides[i] = strides[i];
        t->numel *= shape[i];
    }
    wt_status st = wt_scope_adopt(ctx, t);
    if (st != WT_OK) {
        /* The caller keeps its memory on failure: no release call. */
        s->release = NULL;
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

wt_status wt_tensor_view(const wt_tensor *x, int ndim, const int64_t *shape,
                         const int64_t *strides, int64_t offset, wt_tensor **out)
{
    *out = NULL;
    wt_tensor *t = zalloc(sizeof *t);
    if (!t) return wt_fail(WT_ERR_OUT_OF_MEMORY, "out of host memory");
    t->refcount = 1;
    t->storage = x->storage;
    t->storage->refcount++;
    t->dtype = x->dtype;
    t->ndim = ndim;
    t->offset = offset;
    t->numel = 1;
    for (int i = 0; i < ndim; i++) {
        t->shape[i] = shape[i];
        t->strides[i] = strides[i];
        t->numel *= shape[i];
    }
    wt_context *ctx = t->storage->ctx;
    if (x->autograd && !ctx->grad_paused && !ctx->no_grad_depth) {
        t->autograd = x->autograd;
        wt_grad_hooks_get()->meta_share(x->autograd);
    }
    wt_status st = wt_scope_adopt(ctx, t);
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

wt_status wt_tensor_alias(const wt_tensor *x, wt_tensor **out)
{
    *out = NULL;
    wt_tensor *t = zalloc(sizeof *t);
    if (!t) return wt_fail(WT_ERR_OUT_OF_MEMORY, "out of host memory");
    memcpy(t, x, sizeof *t);
    t->refcount = 1;
    t->scope_refs = 0;
    t->autograd = NULL;
    t->storage->refcount++;
    *out = t;
    return WT_OK;
}

wt_status wt_tensor_share(const wt_tensor *x, wt_tensor **out)
{
    /* Inside a scope, a new handle: one more reference to x itself would
     * be owned by nobody, since ops also take and drop such references on
     * their inputs (a weight made outside the scope must not go with it). */
    if (x->storage->ctx->scope) return wt_tensor_view(x, x->ndim, x->shape, x->strides, x->offset, out);
    wt_tensor_retain((wt_tensor *)x);
    *out = (wt_tensor *)x;
    return WT_OK;
}

void wt_tensor_retain(wt_tensor *t)
{
    if (t) t->refcount++;
}

void wt_tensor_release(wt_tensor *t)
{
    if (!t || --t->refcount > 0) return;
    if (t->scope_refs > 0) wt_scope_forget(t);
    if (t->autograd) wt_grad_hooks_get()->meta_drop(t->autograd);
    storage_release(t->storage);
    free(t);
}

int wt_tensor_ndim(const wt_tensor *t) { return t ? t->ndim : 0; }
const int64_t *wt_tensor_shape(const wt_tensor *t) { return t ? t->shape : NULL; }
const int64_t *wt_tensor_strides(const wt_tensor *t) { return t ? t->strides : NULL; }
int64_t wt_tensor_offset(const wt_tensor *t) { return t ? t->offset : 0; }
int64_t wt_tensor_numel(const wt_tensor *t) { return t ? t->numel : 0; }
wt_dtype wt_tensor_dtype(const wt_tensor *t) { return t ? t->dtype : WT_F32; }
wt_context *wt_tensor_context(const wt_tensor *t) { return t ? t->storage->ctx : NULL; }

bool wt_tensor_is_contiguous(const wt_tensor *t)
{
    return t && wt_layout_is_contiguous(t->ndim, t->shape, t->strides);
}

void wt_coalesce(int *ndim, int64_t *shape, int n, int64_t (*strides)[WT_MAX_DIMS])
{
    int out = 0;
    for (int i = 0; i < *ndim; i++) {
        if (shape[i] == 1) continue; /* size-1 axes never move the index */
        if (out > 0) {
            /* Axis i folds into the previous kept axis when, for every
             * layout, stepping the previous axis once equals stepping
             * axis i across its whole extent. */
            bool mergeable = true;
            for (int k = 0; k < n; k++)
                if (strides[k][out - 1] != strides[k][i] * shape[i]) mergeable = false;
            if (mergeable) {
                shape[out - 1] *= shape[i];
                for (int k = 0; k < n; k++) strides[k][out - 1] = strides[k][i];
                continue;
            }
        }
        shape[out] = shape[i];
        for (int k = 0; k < n; k++) strides[k][out] = strides[k][i];
        out++;
    }
    if (out == 0) {
        shape[0] = 1;
        for (int k = 0; k < n; k++) strides[k][0] = 1;
        out = 1;
    }
    *ndim = out;
}

void wt_coalesce_pair(const wt_tensor *t, const int64_t *a, const int64_t *b, int *ndim, int64_t *shape,
                      int64_t (*strides)[WT_MAX_DIMS])
{
    const int64_t *layouts[2] = {a, b};
    *ndim = t->ndim;
    memcpy(shape, t->shape, sizeof(int64_t) * WT_MAX_DIMS);
    for (int k = 0; k < 2; k++) {
        if (layouts[k])
            memcpy(strides[k], layouts[k], sizeof(int64_t) * WT_MAX_DIMS);
        else
            wt_contiguous_strides(t->ndim, t->shape, strides[k]);
    }
    wt_coalesce(ndim, shape, 2, strides);
}

/* ---------------------------------------------------------------- scopes */

/* Scopes: the references to tensors made while a scope is open, released
 * together when it ends (webtensor.h, "scopes").
 *
 * A scope owns references, not tensors: each slot stands for one
 * reference that wt_scope_end will drop. A tensor counts the slots that
 * name it (scope_refs), so that freeing it, by whoever drops its last
 * reference, clears those slots and the scope never releases it again. */

/* Appends t to s's slots, growing them (or squeezing out the empty ones
 * when more than half are empty). */
static wt_status scope_push(wt_scope *s, wt_tensor *t)
{
    if (s->count == s->cap && s->holes * 2 > s->count) {
        int j = 0;
        for (int i = 0; i < s->count; i++)
            if (s->owned[i]) s->owned[j++] = s->owned[i];
        s->count = j;
        s->holes = 0;
    }
    if (s->count == s->cap) {
        if (s->cap > (1 << 28)) return wt_fail(WT_ERR_OUT_OF_MEMORY, "scope: more than 2^29 tensors owned");
        const int cap = s->cap ? s->cap * 2 : 32;
        wt_tensor **owned = realloc(s->owned, sizeof *owned * (size_t)cap);
        if (!owned)
            return wt_fail(WT_ERR_OUT_OF_MEMORY, "scope: out of host memory (%zu bytes requested)",
                           sizeof *owned * (size_t)cap);
        s->owned = owned;
        s->cap = cap;
    }
    s->owned[s->count++] = t;
    t->scope_refs++;
    return WT_OK;
}

/* Empties slot i (its tensor's count is the caller's to lower); trailing
 * empty slots are dropped so that a scope whose temporaries come and go
 * in order does not grow. */
static void scope_clear(wt_scope *s, int i)
{
    s->owned[i] = NULL;
    s->holes++;
    while (s->count > 0 && !s->owned[s->count - 1]) {
        s->count--;
        s->holes--;
    }
}

wt_status wt_scope_adopt(wt_context *ctx, wt_tensor *t)
{
    return ctx->scope ? scope_push(ctx->scope, t) : WT_OK;
}

void wt_scope_forget(wt_tensor *t)
{
    /* Newest slots first: temporaries of an op are freed right after
     * they are made, at the end of the innermost scope. */
    for (wt_scope *s = t->storage->ctx->scope; s && t->scope_refs > 0; s = s->parent)
        for (int i = s->count - 1; i >= 0 && t->scope_refs > 0; i--)
            if (s->owned[i] == t) {
                scope_clear(s, i);
                t->scope_refs--;
            }
}

wt_status wt_scope_begin(wt_context *ctx, wt_scope **out)
{
    if (!out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_scope_begin: out is NULL");
    *out = NULL;
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_scope_begin: ctx is NULL");
    wt_scope *s = calloc(1, sizeof *s);
    if (!s) return wt_fail(WT_ERR_OUT_OF_MEMORY, "wt_scope_begin: out of host memory");
    s->ctx = ctx;
    s->parent = ctx->scope;
    ctx->scope = s;
    wt_context_ref(ctx);
    *out = s;
    return WT_OK;
}

wt_status wt_scope_keep(wt_scope *scope, wt_tensor *t)
{
    if (!scope || !t)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_scope_keep: %s is NULL", !scope ? "scope" : "t");
    if (t->storage->ctx != scope->ctx)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_scope_keep: the tensor belongs to another context");
    int i = scope->count - 1;
    while (i >= 0 && scope->owned[i] != t) i--;
    if (i < 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "wt_scope_keep: the scope does not own this tensor (made outside it, "
                       "already kept, or owned by another scope)");
    /* Into the enclosing scope first: if that fails, nothing has moved. */
    if (scope->parent) {
        wt_status st = scope_push(scope->parent, t);
        if (st != WT_OK) return st;
    }
    scope_clear(scope, i);
    t->scope_refs--;
    return WT_OK;
}

wt_status wt_scope_end(wt_scope *scope)
{
    if (!scope) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_scope_end: scope is NULL");
    wt_context *ctx = scope->ctx;
    if (ctx->scope != scope)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "wt_scope_end: a scope begun inside this one is still open; end scopes in the "
                       "reverse order of wt_scope_begin (nothing was released)");
    /* The scope stays the innermost one while its tensors go, so that a
     * tensor freed here finds (and clears) its other slots. */
    for (int i = scope->count - 1; i >= 0; i--) {
        if (i >= scope->count || !scope->owned[i]) continue;
        wt_tensor *t = scope->owned[i];
        scope_clear(scope, i);
        t->scope_refs--;
        wt_tensor_release(t);
    }
    ctx->scope = scope->parent;
    free(scope->owned);
    free(scope);
    wt_context_unref(ctx);
    return WT_OK;
}

/* ------------------------------------------------------- autograd hooks */

static _Atomic(const wt_grad_hooks *) grad_hooks;

void wt_grad_hooks_install(const wt_grad_hooks *hooks) { grad_hooks = hooks; }

const wt_grad_hooks *wt_grad_hooks_get(void) { return grad_hooks; }
