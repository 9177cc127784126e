/* Scopes: the references to tensors made while a scope is open, released
 * together when it ends (webtensor.h, "scopes").
 *
 * A scope owns references, not tensors: each slot stands for one
 * reference that wt_scope_end will drop. A tensor counts the slots that
 * name it (scope_refs), so that freeing it, by whoever drops its last
 * reference, clears those slots and the scope never releases it again. */
#include "core/internal.h"

#include <stdlib.h>

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
