/* Replays of a captured graph (core/graph.c) on WebGPU.
 *
 * The first replay runs the graph's nodes through the backend like any
 * op and, while it runs, records every dispatch it makes: the pipeline,
 * the buffers bound, the parameter block and the grid. If nothing else
 * happened during it (no copy, no upload: work a list of dispatches cannot
 * repeat), the graph keeps that list with a parameter buffer and bind
 * groups of its own, and every later replay encodes the list straight into
 * the open compute pass and submits it: per dispatch, three encoder calls
 * and no front-end, kernel selection, pipeline lookup or bind-group hash.
 * The parameter blocks do not change between replays (what changes per
 * step is read by the kernels from device tensors), so they are written
 * once.
 *
 * Buffers: the storages a recorded dispatch binds are kept alive by the
 * graph (a reference each), scratch buffers an op released during the
 * recording included, so a buffer the list binds never goes back to the
 * pool while the graph lives. Index checks (checks.c) take a fresh slot of
 * the flag area on each replay, as the ops do; their dispatches bind the
 * slot through a bind group per slot index, made on first use.
 *
 * The first replay of the list lets temporaries whose dispatches do not
 * overlap share buffers (share_buffers), as eager ops reuse freed ones:
 * on an H200 the Fashion-MNIST step's GPU time fell from 0.714 to 0.679 ms
 * that way (bench/RESULTS.md). */
#include "webgpu/wg_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct replay_dispatch {
    WGPUComputePipeline pipeline; /* the context's cache owns it */
    WGPUBindGroupLayout layout;
    int nbindings;
    WGPUBuffer buffers[WG_MAX_BINDINGS];
    uint64_t offsets[WG_MAX_BINDINGS], sizes[WG_MAX_BINDINGS];
    uint32_t x, y, z;
    const char *shader;     /* the launch's kernel name (a static string) */
    uint32_t params_offset; /* in the graph's parameter buffer */
    WGPUBindGroup group;    /* NULL for a dispatch that binds a check slot */
    int check_binding;      /* -1, or the binding of its check slot */
    int check_ordinal;      /* which of the replay's checks */
    WGPUBindGroup *check_groups; /* by slot index, made on first use */
    /* The storage of each whole-buffer binding (NULL: a window or the
     * check area) and whether the kernel may write it: the uses that
     * share_buffers plans by. */
    wt_storage *storages[WG_MAX_BINDINGS];
    bool writes[WG_MAX_BINDINGS];
} replay_dispatch;

typedef struct replay_check {
    char op[32];
    int64_t extent;
} replay_check;

enum { REPLAY_UNTRIED, REPLAY_RECORDING, REPLAY_CACHED, REPLAY_UNCACHEABLE };

typedef struct wg_replay {
    /* The per-node path's bind groups, one slot per dispatch ordinal. */
    wg_bind_group_slot *slots;
    int64_t cap;
    int state;
    uint32_t generation; /* of the device the list was made on */
    replay_dispatch *list;
    int64_t n, cap_list;
    uint8_t *params; /* host copy while recording */
    int64_t cap_params;
    WGPUBuffer params_buffer;
    replay_check *checks;
    int nchecks;
    int slot_ordinal[256]; /* while recording: check slot index -> ordinal */
    wt_storage **held;     /* one reference each */
    int64_t nheld, cap_held;
    bool shared; /* share_buffers ran (on the first replay of the list) */
} wg_replay;

static wg_replay *replay_of(wt_context *ctx)
{
    return ctx->replay_state ? *ctx->replay_state : NULL;
}

static wt_status replay_state_get(wt_context *ctx, wg_replay **out)
{
    wg_replay *r = *ctx->replay_state;
    if (!r) {
        if (!(r = calloc(1, sizeof *r)))
            return wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu: out of host memory for a graph's state");
        *ctx->replay_state = r;
    }
    *out = r;
    return WT_OK;
}

wt_status wg_replay_slot(wt_context *ctx, int64_t ordinal, wg_bind_group_slot **out)
{
    wg_replay *r = NULL;
    wt_status st = replay_state_get(ctx, &r);
    if (st != WT_OK)
        return st;
    if (ordinal >= r->cap) {
        int64_t cap = r->cap ? r->cap * 2 : 64;
        while (cap <= ordinal)
            cap *= 2;
        wg_bind_group_slot *grown = realloc(r->slots, (size_t)cap * sizeof *grown);
        if (!grown)
            return wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu: out of host memory for a graph's bind groups");
        memset(grown + r->cap, 0, (size_t)(cap - r->cap) * sizeof *grown);
        r->slots = grown;
        r->cap = cap;
    }
    *out = &r->slots[ordinal];
    return WT_OK;
}

/* ------------------------------------------------------------ recording */

bool wg_replay_recording(const wt_context *ctx)
{
    const wg_replay *r = ctx->replay_state ? *ctx->replay_state : NULL;
    return r && r->state == REPLAY_RECORDING;
}

void wg_replay_not_cacheable(wt_context *ctx)
{
    wg_replay *r = replay_of(ctx);
    if (r && r->state == REPLAY_RECORDING)
        r->state = REPLAY_UNCACHEABLE;
}

static bool grow(void **items, int64_t *cap, int64_t need, size_t size)
{
    if (need <= *cap)
        return true;
    int64_t c = *cap ? *cap * 2 : 64;
    while (c < need)
        c *= 2;
    void *p = realloc(*items, (size_t)c * size);
    if (!p)
        return false;
    *items = p;
    *cap = c;
    return true;
}

static void storage_unref(wt_context *ctx, wt_storage *s)
{
    if (s->backend_scratch)
        wg_scratch_release(ctx, s);
    else
        wt_storage_unref(s);
}

static bool hold(wg_replay *r, wt_storage *s)
{
    for (int64_t i = r->nheld - 1; i >= 0 && i >= r->nheld - 16; i--)
        if (r->held[i] == s)
            return true; /* held just now (bindings repeat from op to op) */
    if (!grow((void **)&r->held, &r->cap_held, r->nheld + 1, sizeof *r->held))
        return false;
    s->refcount++;
    r->held[r->nheld++] = s;
    return true;
}

/* Whether parent is the buffer of one of the node's tensors. */
static bool node_holds(const wt_node *n, const wg_buffer *parent)
{
    for (int i = 0; n && i < WT_NODE_MAX_IN + WT_NODE_MAX_OUT; i++) {
        const wt_tensor *t = i < WT_NODE_MAX_IN ? n->in[i] : n->out[i - WT_NODE_MAX_IN];
        if (t && t->storage && t->storage->device == parent)
            return true;
    }
    return false;
}

void wg_replay_note_check(wt_context *ctx, int slot, const char *op, int64_t extent)
{
    wg_replay *r = replay_of(ctx);
    if (!r || r->state != REPLAY_RECORDING)
        return;
    replay_check *grown = realloc(r->checks, (size_t)(r->nchecks + 1) * sizeof *grown);
    if (!grown || slot < 0 || slot >= 256) {
        if (grown)
            r->checks = grown;
        r->state = REPLAY_UNCACHEABLE;
        return;
    }
    r->checks = grown;
    snprintf(r->checks[r->nchecks].op, sizeof r->checks[r->nchecks].op, "%s", op ? op : "op");
    r->checks[r->nchecks].extent = extent;
    r->slot_ordinal[slot] = r->nchecks++;
}

void wg_replay_note_dispatch(wt_context *ctx, const wg_pipeline *pipe, const wg_launch *launch,
                             uint32_t x, uint32_t y, uint32_t z)
{
    wg_context *w = wg_ctx(ctx);
    wg_replay *r = replay_of(ctx);
    if (!r || r->state != REPLAY_RECORDING)
        return;
    if (!grow((void **)&r->list, &r->cap_list, r->n + 1, sizeof *r->list) ||
        !grow((void **)&r->params, &r->cap_params, (r->n + 1) * (int64_t)w->rec.slot_size, 1)) {
        r->state = REPLAY_UNCACHEABLE;
        return;
    }
    replay_dispatch *d = &r->list[r->n];
    memset(d, 0, sizeof *d);
    d->pipeline = pipe->pipeline;
    d->layout = pipe->layout;
    d->nbindings = launch->nbindings;
    d->x = x;
    d->y = y;
    d->z = z;
    d->shader = launch->shader;
    d->check_binding = -1;
    d->params_offset = (uint32_t)r->n * w->rec.slot_size;
    memset(r->params + d->params_offset, 0, w->rec.slot_size);
    if (launch->params_size)
        memcpy(r->params + d->params_offset, launch->params, launch->params_size);
    for (int i = 0; i < launch->nbindings; i++) {
        wt_storage *s = launch->bindings[i].storage;
        const wg_buffer *b = s->device;
        d->buffers[i] = b->buffer;
        d->offsets[i] = b->parent ? b->offset : 0;
        d->sizes[i] = b->parent ? b->size : WGPU_WHOLE_SIZE;
        if (b->parent && b->parent == w->check_area) {
            if (d->check_binding >= 0 || w->check_align == 0) { /* two checks in one dispatch */
                r->state = REPLAY_UNCACHEABLE;
                return;
            }
            int slot = (int)(b->offset / w->check_align);
            d->check_binding = i;
            d->check_ordinal = slot >= 0 && slot < 256 ? r->slot_ordinal[slot] : -1;
            if (d->check_ordinal < 0 || d->check_ordinal >= r->nchecks) {
                r->state = REPLAY_UNCACHEABLE;
                return;
            }
        } else if (b->parent ? !node_holds(ctx->node, b->parent) : !hold(r, s)) {
            /* A window's storage lives in the op that made it: the list
             * keeps it only over a buffer of the node's own tensors, which
             * the graph holds. */
            r->state = REPLAY_UNCACHEABLE;
            return;
        } else if (!b->parent) {
            d->storages[i] = s;
            d->writes[i] = launch->bindings[i].writable;
        }
    }
    r->n++;
}

/* ------------------------------------------------------------ the list */

static wt_status make_group(wg_context *w, const wg_replay *r, const replay_dispatch *d,
                            uint64_t check_offset, WGPUBindGroup *out)
{
    WGPUBindGroupEntry entries[WG_MAX_BINDINGS + 1];
    memset(entries, 0, sizeof entries);
    entries[0].binding = 0;
    entries[0].buffer = r->params_buffer;
    entries[0].size = WG_MAX_PARAMS;
    for (int i = 0; i < d->nbindings; i++) {
        entries[i + 1].binding = (uint32_t)i + 1;
        entries[i + 1].buffer = d->buffers[i];
        entries[i + 1].offset = i == d->check_binding ? check_offset : d->offsets[i];
        entries[i + 1].size = d->sizes[i];
    }
    WGPUBindGroupDescriptor desc;
    memset(&desc, 0, sizeof desc);
    desc.layout = d->layout;
    desc.entryCount = (size_t)d->nbindings + 1;
    desc.entries = entries;
    *out = w->lib.p.DeviceCreateBindGroup(w->device, &desc);
    w->counters.bind_groups_made++;
    return *out ? WT_OK : wt_fail(WT_ERR_BACKEND, "webgpu: creating a bind group for a replay failed");
}

static void drop_list(wt_context *ctx, wg_replay *r)
{
    wg_context *w = wg_ctx(ctx);
    for (int64_t i = 0; i < r->n; i++) {
        replay_dispatch *d = &r->list[i];
        if (d->group)
            w->lib.p.BindGroupRelease(d->group);
        if (d->check_groups) {
            for (int k = 0; k < 256; k++)
                if (d->check_groups[k])
                    w->lib.p.BindGroupRelease(d->check_groups[k]);
            free(d->check_groups);
        }
    }
    free(r->list);
    r->list = NULL;
    r->n = r->cap_list = 0;
    free(r->params);
    r->params = NULL;
    r->cap_params = 0;
    if (r->params_buffer)
        w->lib.p.BufferRelease(r->params_buffer);
    r->params_buffer = NULL;
    free(r->checks);
    r->checks = NULL;
    r->nchecks = 0;
    for (int64_t i = 0; i < r->nheld; i++)
        storage_unref(ctx, r->held[i]);
    free(r->held);
    r->held = NULL;
    r->nheld = r->cap_held = 0;
}

/* After the recording replay: the list becomes the graph's, or is given up. */
static wt_status finish_list(wt_context *ctx, wg_replay *r)
{
    wg_context *w = wg_ctx(ctx);
    if (r->n == 0)
        return wt_fail(WT_ERR_UNSUPPORTED, "nothing to replay");
    size_t bytes = (size_t)r->n * w->rec.slot_size;
    wt_status st = wg_create_buffer(ctx, bytes, WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst,
                                    "webtensor graph params", &r->params_buffer);
    if (st != WT_OK)
        return st;
    w->lib.p.QueueWriteBuffer(w->queue, r->params_buffer, 0, r->params, bytes);
    free(r->params);
    r->params = NULL;
    r->cap_params = 0;
    w->lib.p.DevicePushErrorScope(w->device, WGPUErrorFilter_Validation);
    for (int64_t i = 0; i < r->n && st == WT_OK; i++)
        if (r->list[i].check_binding < 0)
            st = make_group(w, r, &r->list[i], 0, &r->list[i].group);
        else if (!(r->list[i].check_groups = calloc(256, sizeof(WGPUBindGroup))))
            st = wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu: out of host memory for a graph's bind groups");
    wt_status scope = wg_pop_error_scope(ctx, WT_ERR_BACKEND, "making a graph's bind groups");
    return st != WT_OK ? st : scope;
}

bool wg_graph_replay_begin(wt_context *ctx, void **state)
{
    wg_context *w = wg_ctx(ctx);
    wg_replay *r = *state;
    if (!r) {
        if (!(r = calloc(1, sizeof *r)))
            return false;
        *state = r;
    }
    const char *knob = wt_knob_text(WT_KNOB_GRAPH_REPLAY_LIST);
    bool wanted = !(knob && strcmp(knob, "0") == 0);
    /* Profiling times ops one by one, validation runs each op alone, a
     * pipeline cache that recompiles releases the pipelines the list names. */
    bool plain = !w->prof.active && !w->opts.validation && !w->opts.disable_pipeline_cache &&
                 !ctx->host_log && wanted;
    if (r->state == REPLAY_UNTRIED && plain) {
        r->state = REPLAY_RECORDING;
        memset(r->slot_ordinal, 0xff, sizeof r->slot_ordinal);
        r->generation = w->generation;
    }
    return r->state == REPLAY_CACHED && plain;
}

void wg_graph_replay_end(wt_context *ctx, void *state, wt_status ran)
{
    wg_replay *r = state;
    if (!r || (r->state != REPLAY_RECORDING && r->state != REPLAY_UNCACHEABLE))
        return;
    if (r->state == REPLAY_RECORDING && ran == WT_OK && finish_list(ctx, r) == WT_OK) {
        r->state = REPLAY_CACHED;
        return;
    }
    drop_list(ctx, r);
    /* A recording that failed for lack of memory is not tried again. */
    r->state = REPLAY_UNCACHEABLE;
}

/* ------------------------------------------------------ shared buffers */

/* A temporary of the graph: a storage only the graph holds, the first and
 * last dispatches of the list that bind it. */
typedef struct temp_use {
    wt_storage *s;
    int64_t first, last;
    bool written_first; /* every binding of it in its first dispatch writable */
} temp_use;

typedef struct shared_buffer {
    WGPUBuffer buffer;
    uint64_t size;
    int64_t busy_until; /* the last dispatch of its current temporary */
} shared_buffer;

static int64_t held_count(const wg_replay *r, const wt_storage *s)
{
    int64_t n = 0;
    for (int64_t i = 0; i < r->nheld; i++)
        n += r->held[i] == s;
    return n;
}

static int by_first(const void *a, const void *b)
{
    const temp_use *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* Eager ops reuse a freed buffer for the next temporary of its size, so a
 * step's temporaries stay within a few buffers hot in the GPU's cache; a
 * captured graph keeps every temporary's buffer alive, each its own. Here
 * the temporaries whose dispatches do not overlap share buffers again:
 * a temporary (a storage only the graph and this list hold, which nothing
 * outside can read) is bound to a buffer that an earlier temporary, no
 * longer used, had, if large enough. Only one whose first dispatch writes
 * it (nothing carried from the replay before) and that no window reaches.
 * Runs once, on the first replay of the list, when the capture's scope
 * has let go of its temporaries. */
static wt_status share_buffers(wt_context *ctx, wg_replay *r)
{
    wg_context *w = wg_ctx(ctx);
    if (!ctx->replaying || r->n == 0)
        return WT_OK;
    temp_use *uses = calloc((size_t)r->n * WG_MAX_BINDINGS, sizeof *uses);
    shared_buffer *bufs = calloc((size_t)r->n * WG_MAX_BINDINGS, sizeof *bufs);
    WGPUBuffer *moved = calloc((size_t)r->n * WG_MAX_BINDINGS, sizeof *moved);
    if (!uses || !bufs || !moved) {
        free(uses);
        free(bufs);
        free(moved);
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu: out of host memory planning a graph's buffers");
    }
    int64_t nuses = 0, nbufs = 0;
    for (int64_t i = 0; i < r->n; i++) {
        const replay_dispatch *d = &r->list[i];
        for (int k = 0; k < d->nbindings; k++) {
            wt_storage *s = d->storages[k];
            if (!s)
                continue;
            int64_t u = 0;
            while (u < nuses && uses[u].s != s)
                u++;
            if (u == nuses) {
                uses[nuses++] = (temp_use){s, i, i, true};
            }
            uses[u].last = i;
            if (uses[u].first == i && !d->writes[k])
                uses[u].written_first = false;
        }
    }
    /* Buffers some dispatch reaches through a window: not planned. */
    int64_t keep = 0;
    for (int64_t u = 0; u < nuses; u++) {
        const wg_buffer *b = uses[u].s->device;
        bool windowed = false;
        for (int64_t i = 0; i < r->n && !windowed; i++)
            for (int k = 0; k < r->list[i].nbindings && !windowed; k++)
                windowed = !r->list[i].storages[k] && r->list[i].buffers[k] == b->buffer;
        const bool temporary = uses[u].s->refcount ==
                               wt_graph_storage_refs(ctx->replaying, uses[u].s) + held_count(r, uses[u].s);
        if (temporary && uses[u].written_first && !windowed)
            uses[keep++] = uses[u];
    }
    nuses = keep;
    qsort(uses, (size_t)nuses, sizeof *uses, by_first);
    int64_t nmoved = 0;
    uint64_t shared_bytes = 0;
    for (int64_t u = 0; u < nuses; u++) {
        const wg_buffer *b = uses[u].s->device;
        int64_t best = -1;
        for (int64_t j = 0; j < nbufs; j++)
            if (bufs[j].busy_until < uses[u].first && bufs[j].size >= b->size &&
                (best < 0 || bufs[j].size < bufs[best].size))
                best = j;
        if (best < 0) { /* its own buffer, free for a later one after it */
            bufs[nbufs++] = (shared_buffer){b->buffer, b->size, uses[u].last};
            continue;
        }
        bufs[best].busy_until = uses[u].last;
        shared_bytes += b->size;
        for (int64_t i = uses[u].first; i <= uses[u].last; i++) {
            replay_dispatch *d = &r->list[i];
            for (int k = 0; k < d->nbindings; k++)
                if (d->storages[k] == uses[u].s) {
                    d->buffers[k] = bufs[best].buffer;
                    d->offsets[k] = 0;
                    d->sizes[k] = b->size; /* what the kernel saw (arrayLength) */
                    moved[i] = bufs[best].buffer;
                }
        }
        nmoved++;
    }
    free(uses);
    free(bufs);
    /* New bind groups for the dispatches that now bind other buffers. */
    wt_status st = WT_OK;
    w->lib.p.DevicePushErrorScope(w->device, WGPUErrorFilter_Validation);
    for (int64_t i = 0; i < r->n && st == WT_OK && nmoved; i++) {
        replay_dispatch *d = &r->list[i];
        if (!moved[i])
            continue;
        if (d->check_binding < 0) {
            w->lib.p.BindGroupRelease(d->group);
            d->group = NULL;
            st = make_group(w, r, d, 0, &d->group);
        } else {
            for (int k = 0; k < 256; k++)
                if (d->check_groups[k]) {
                    w->lib.p.BindGroupRelease(d->check_groups[k]);
                    d->check_groups[k] = NULL;
                }
        }
    }
    wt_status scope = wg_pop_error_scope(ctx, WT_ERR_BACKEND, "sharing a graph's buffers");
    free(moved);
    if (st == WT_OK && scope == WT_OK)
        w->counters.replay_shared_bytes += shared_bytes;
    return st != WT_OK ? st : scope;
}

/* Whether the comma-separated list names kernel (WT_GRAPH_REPLAY_SKIP: a
 * measurement of what a step's kernels of one kind cost, by leaving them
 * out of the replayed list; the step's results are then meaningless). */
static bool names_kernel(const char *list, const char *kernel)
{
    const size_t n = kernel ? strlen(kernel) : 0;
    for (const char *p = list; n && *p;) {
        const char *e = strchr(p, ',');
        const size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, kernel, n) == 0)
            return true;
        p += len + (e ? 1 : 0);
    }
    return false;
}

wt_status wg_graph_replay_list(wt_context *ctx, void *state)
{
    wg_context *w = wg_ctx(ctx);
    wg_replay *r = state;
    wt_status st = wg_check_device(ctx);
    if (st != WT_OK)
        return st;
    if (r->generation != w->generation)
        return wt_fail(WT_ERR_DEVICE_LOST,
                       "webgpu: the graph was captured on a device this context lost (before "
                       "wt_context_recover); capture it again");
    if (!r->shared) {
        r->shared = true;
        const char *knob = wt_knob_text(WT_KNOB_GRAPH_REPLAY_SHARE);
        if (!(knob && strcmp(knob, "0") == 0) && (st = share_buffers(ctx, r)) != WT_OK) {
            /* Half rebound: the list is given up (the next replay runs the
             * nodes, on their own buffers). */
            r->state = REPLAY_UNCACHEABLE;
            return st;
        }
    }
    /* The replay's index checks take their slots before the pass opens (a
     * full flag area is read back first, which ends the open pass). */
    int slots[256];
    if (r->nchecks > 256)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu: a graph with more than 256 index checks");
    if (r->nchecks && w->ncheck + r->nchecks > 256 && (st = wg_checks_verify(ctx)) != WT_OK)
        return st;
    for (int j = 0; j < r->nchecks; j++) {
        wt_storage *flag = NULL;
        if ((st = wg_checks_slot(ctx, r->checks[j].op, r->checks[j].extent, &flag)) != WT_OK)
            return st;
        slots[j] = (int)(((const wg_buffer *)flag->device)->offset / w->check_align);
    }
    if ((st = wg_recorder_open_pass(ctx)) != WT_OK)
        return st;
    WGPUComputePassEncoder pass = w->rec.pass;
    WGPUComputePipeline current = NULL;
    const char *skip = wt_knob_text(WT_KNOB_GRAPH_REPLAY_SKIP);
    const uint64_t piece_knob = wt_knob_number(WT_KNOB_GRAPH_REPLAY_PER_SUBMIT, 128);
    const uint64_t piece = piece_knob > w->rec.per_submit ? piece_knob : w->rec.per_submit;
    for (int64_t i = 0; i < r->n; i++) {
        replay_dispatch *d = &r->list[i];
        if (skip && names_kernel(skip, d->shader))
            continue;
        WGPUBindGroup group = d->group;
        if (d->check_binding >= 0) {
            int slot = slots[d->check_ordinal];
            if (!d->check_groups[slot]) {
                w->lib.p.DevicePushErrorScope(w->device, WGPUErrorFilter_Validation);
                st = make_group(w, r, d, (uint64_t)slot * w->check_align, &d->check_groups[slot]);
                wt_status scope = wg_pop_error_scope(ctx, WT_ERR_BACKEND, "making a graph's bind group");
                if (st == WT_OK)
                    st = scope;
                if (st != WT_OK)
                    return st;
            }
            group = d->check_groups[slot];
        }
        if (d->pipeline != current)
            w->lib.p.ComputePassEncoderSetPipeline(pass, current = d->pipeline);
        w->lib.p.ComputePassEncoderSetBindGroup(pass, 0, group, 1, &d->params_offset);
        w->lib.p.ComputePassEncoderDispatchWorkgroups(pass, d->x, d->y, d->z);
        /* Submitted in pieces, so that the GPU starts on the first while
         * the host encodes the next: one submit for a long list made the
         * GPU wait for the host's whole encoding (an f32 decode step of
         * 262 dispatches on an H200: 248 tok/s, against 466 replaying the
         * nodes, which submit every 64). Yet each submit costs the GPU
         * time of its own: a Q4_0 decode step of 85 dispatches ran at
         * 1,335 tok/s in pieces of 64 and 1,376 in one (bench/RESULTS.md),
         * so a replay's pieces are larger than eager ops' batches. */
        if ((i + 1) % piece == 0 && i + 1 < r->n) {
            if ((st = wg_flush(ctx)) != WT_OK || (st = wg_recorder_open_pass(ctx)) != WT_OK)
                return st;
            pass = w->rec.pass;
            current = NULL;
        }
    }
    w->counters.dispatches += (uint64_t)r->n;
    return wg_flush(ctx);
}

int64_t wg_graph_storage_refs(const void *state, const wt_storage *s)
{
    return state ? held_count(state, s) : 0;
}

void wg_graph_state_free(wt_context *ctx, void *state)
{
    wg_replay *r = state;
    for (int64_t i = 0; i < r->cap; i++)
        if (r->slots[i].group)
            wg_ctx(ctx)->lib.p.BindGroupRelease(r->slots[i].group);
    free(r->slots);
    drop_list(ctx, r);
    free(r);
}
