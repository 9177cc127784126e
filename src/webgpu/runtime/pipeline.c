/* Compiled shaders and bind groups, cached so that steady-state launches
 * make no device objects: pipelines by (shader, binding signature,
 * prelude), layouts by binding signature, bind groups by (layout, buffers)
 * in a direct-mapped table. */
#include "webgpu/wg_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint32_t writable_mask(const wg_launch *launch)
{
    uint32_t mask = 0;
    for (int i = 0; i < launch->nbindings; i++)
        if (launch->bindings[i].writable)
            mask |= 1u << i;
    return mask;
}

/* ------------------------------------------------------------ layouts */

static wt_status layout_get(wt_context *ctx, uint32_t nbindings, uint32_t writable,
                            const wg_layout **out)
{
    wg_context *w = wg_ctx(ctx);
    wg_pipeline_cache *c = &w->cache;
    for (int i = 0; i < c->nlayouts; i++)
        if (c->layouts[i].nbindings == nbindings && c->layouts[i].writable == writable) {
            *out = &c->layouts[i];
            return WT_OK;
        }
    if (c->nlayouts == c->cap_layouts) {
        int cap = c->cap_layouts ? c->cap_layouts * 2 : 8;
        wg_layout *grown = realloc(c->layouts, (size_t)cap * sizeof *grown);
        if (!grown)
            return wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu: out of host memory");
        c->layouts = grown;
        c->cap_layouts = cap;
    }
    WGPUBindGroupLayoutEntry entries[WG_MAX_BINDINGS + 1];
    memset(entries, 0, sizeof entries);
    entries[0].binding = 0;
    entries[0].visibility = WGPUShaderStage_Compute;
    entries[0].buffer.type = WGPUBufferBindingType_Uniform;
    entries[0].buffer.hasDynamicOffset = 1;
    for (uint32_t i = 0; i < nbindings; i++) {
        WGPUBindGroupLayoutEntry *e = &entries[i + 1];
        e->binding = i + 1;
        e->visibility = WGPUShaderStage_Compute;
        e->buffer.type = (writable >> i) & 1 ? WGPUBufferBindingType_Storage
                                             : WGPUBufferBindingType_ReadOnlyStorage;
    }
    WGPUBindGroupLayoutDescriptor desc;
    memset(&desc, 0, sizeof desc);
    desc.entryCount = nbindings + 1;
    desc.entries = entries;
    w->lib.p.DevicePushErrorScope(w->device, WGPUErrorFilter_Validation);
    WGPUBindGroupLayout bgl = w->lib.p.DeviceCreateBindGroupLayout(w->device, &desc);
    WGPUPipelineLayoutDescriptor pdesc;
    memset(&pdesc, 0, sizeof pdesc);
    pdesc.bindGroupLayoutCount = 1;
    pdesc.bindGroupLayouts = &bgl;
    WGPUPipelineLayout pl = bgl ? w->lib.p.DeviceCreatePipelineLayout(w->device, &pdesc) : NULL;
    wt_status st = wg_pop_error_scope(ctx, WT_ERR_BACKEND, "creating a bind group layout");
    if (st == WT_OK && (!bgl || !pl))
        st = wt_fail(WT_ERR_BACKEND, "webgpu: creating a bind group layout failed");
    if (st != WT_OK) {
        if (pl)
            w->lib.p.PipelineLayoutRelease(pl);
        if (bgl)
            w->lib.p.BindGroupLayoutRelease(bgl);
        return st;
    }
    wg_layout *l = &c->layouts[c->nlayouts++];
    l->nbindings = nbindings;
    l->writable = writable;
    l->layout = bgl;
    l->pipeline_layout = pl;
    *out = l;
    return WT_OK;
}

/* ---------------------------------------------------------- pipelines */

/* "lib1,lib2," for the launch's libraries. */
static void library_names(const wg_launch *launch, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < WG_MAX_LIBRARIES && launch->libraries[i] && used < cap; i++) {
        int n = snprintf(buf + used, cap - used, "%s,", launch->libraries[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

static char *make_key(const wg_launch *launch)
{
    const char *prelude = launch->prelude ? launch->prelude : "";
    char libs[128];
    library_names(launch, libs, sizeof libs);
    size_t n = strlen(launch->shader) + strlen(libs) + strlen(prelude) + 32;
    char *key = malloc(n);
    if (key)
        snprintf(key, n, "%s\n%d:%x\n%s\n%s", launch->shader, launch->nbindings,
                 writable_mask(launch), libs, prelude);
    return key;
}

/* FNV-1a over the parts of the key, so that a cache hit allocates nothing. */
static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static uint64_t key_hash(const wg_launch *launch)
{
    uint64_t h = fnv1a(0xcbf29ce484222325ull, launch->shader);
    h = (h ^ (uint64_t)launch->nbindings) * 0x100000001b3ull;
    h = (h ^ writable_mask(launch)) * 0x100000001b3ull;
    for (int i = 0; i < WG_MAX_LIBRARIES && launch->libraries[i]; i++)
        h = fnv1a(h, launch->libraries[i]);
    return fnv1a(h, launch->prelude ? launch->prelude : "");
}

/* Whether a stored key is the one make_key would build for launch. */
static bool key_matches(const char *key, const wg_launch *launch)
{
    char head[320], libs[128];
    library_names(launch, libs, sizeof libs);
    int n = snprintf(head, sizeof head, "%s\n%d:%x\n%s\n", launch->shader, launch->nbindings,
                     writable_mask(launch), libs);
    if (n < 0 || (size_t)n >= sizeof head) {
        char *full = make_key(launch);
        bool same = full && strcmp(full, key) == 0;
        free(full);
        return same;
    }
    return strncmp(key, head, (size_t)n) == 0 &&
           strcmp(key + n, launch->prelude ? launch->prelude : "") == 0;
}

static wt_status compile(wt_context *ctx, const wg_launch *launch, const wg_layout *layout,
                         WGPUComputePipeline *out)
{
    wg_context *w = wg_ctx(ctx);
    bool custom = strncmp(launch->shader, WG_CUSTOM_PREFIX, strlen(WG_CUSTOM_PREFIX)) == 0;
    const char *entry = custom ? launch->shader + strlen(WG_CUSTOM_PREFIX) : "main";
    const char *body = custom ? "" : wg_shader_source(launch->shader);
    if (!body)
        return wt_fail(WT_ERR_SHADER, "webgpu: no shader named \"%s\" is built in",
                       launch->shader);
    const char *prelude = launch->prelude ? launch->prelude : "";
    const char *libs[WG_MAX_LIBRARIES] = {0};
    size_t n = strlen(prelude) + 1 + strlen(body) + 1 + 16;
    /* WGSL's f16 type needs its enable directive ahead of everything. */
    bool needs_f16 = false;
    for (int i = 0; i < WG_MAX_LIBRARIES && launch->libraries[i]; i++)
        needs_f16 = needs_f16 || strcmp(launch->libraries[i], "f16_native") == 0;
    if (strstr(prelude, "enable f16;")) needs_f16 = false;
    for (int i = 0; i < WG_MAX_LIBRARIES && launch->libraries[i]; i++) {
        if (!(libs[i] = wg_shader_source(launch->libraries[i])))
            return wt_fail(WT_ERR_SHADER, "webgpu: no shader library named \"%s\" is built in",
                           launch->libraries[i]);
        n += strlen(libs[i]) + 1;
    }
    char *source = malloc(n);
    if (!source)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu: out of host memory");
    /* Prelude first (enable directives, constants and aliases the
     * libraries use), then the libraries, then the body. */
    size_t used = (size_t)snprintf(source, n, "%s%s\n", needs_f16 ? "enable f16;\n" : "", prelude);
    for (int i = 0; i < WG_MAX_LIBRARIES && libs[i]; i++)
        used += (size_t)snprintf(source + used, n - used, "%s\n", libs[i]);
    snprintf(source + used, n - used, "%s", body);

    WGPUShaderSourceWGSL wgsl;
    memset(&wgsl, 0, sizeof wgsl);
    wgsl.chain.sType = WGPUSType_ShaderSourceWGSL;
    wgsl.code = (WGPUStringView){source, WGPU_STRLEN};
    WGPUShaderModuleDescriptor mdesc;
    memset(&mdesc, 0, sizeof mdesc);
    mdesc.nextInChain = &wgsl.chain;
    mdesc.label = (WGPUStringView){launch->shader, WGPU_STRLEN};

    /* Compile errors arrive as validation errors (with the compiler's
     * message); a driver that fails to build the pipeline reports an
     * internal error. Both mean the shader cannot run here. */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    w->lib.p.DevicePushErrorScope(w->device, WGPUErrorFilter_Internal);
    w->lib.p.DevicePushErrorScope(w->device, WGPUErrorFilter_Validation);
    WGPUShaderModule module = w->lib.p.DeviceCreateShaderModule(w->device, &mdesc);
    WGPUComputePipelineDescriptor pdesc;
    memset(&pdesc, 0, sizeof pdesc);
    pdesc.label = mdesc.label;
    pdesc.layout = layout->pipeline_layout;
    pdesc.compute.module = module;
    pdesc.compute.entryPoint = (WGPUStringView){entry, WGPU_STRLEN};
    WGPUComputePipeline pipeline =
        module ? w->lib.p.DeviceCreateComputePipeline(w->device, &pdesc) : NULL;
    char what[160];
    snprintf(what, sizeof what, "compiling shader \"%s\"", launch->shader);
    wt_status st = wg_pop_error_scope(ctx, WT_ERR_SHADER, what);
    wt_status internal = wg_pop_error_scope(ctx, WT_ERR_SHADER, what);
    if (st == WT_OK)
        st = internal;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    w->counters.compile_seconds +=
        (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (st == WT_OK && !pipeline)
        st = wt_fail(WT_ERR_SHADER, "webgpu: %s failed", what);
    if (module)
        w->lib.p.ShaderModuleRelease(module);
    free(source);
    if (st != WT_OK) {
        if (pipeline)
            w->lib.p.ComputePipelineRelease(pipeline);
        return st;
    }
    *out = pipeline;
    return WT_OK;
}

wt_status wg_pipeline_get(wt_context *ctx, const wg_launch *launch, const wg_pipeline **out)
{
    wg_pipeline_cache *c = &wg_ctx(ctx)->cache;
    uint64_t hash = key_hash(launch);
    for (int i = 0; i < c->npipelines; i++)
        if (c->pipelines[i].hash == hash && key_matches(c->pipelines[i].key, launch)) {
            wg_pipeline *hit = &c->pipelines[i];
            if (wg_ctx(ctx)->opts.disable_pipeline_cache) {
                /* Compiled anew; the old one lives on in recorded commands. */
                const wg_layout *layout = NULL;
                WGPUComputePipeline fresh = NULL;
                wt_status st = layout_get(ctx, (uint32_t)launch->nbindings, writable_mask(launch),
                                          &layout);
                if (st == WT_OK)
                    st = compile(ctx, launch, layout, &fresh);
                if (st != WT_OK)
                    return st;
                wg_ctx(ctx)->lib.p.ComputePipelineRelease(hit->pipeline);
                hit->pipeline = fresh;
                wg_ctx(ctx)->counters.pipelines++;
            }
            wg_ctx(ctx)->counters.pipeline_hits++;
            *out = hit;
            return WT_OK;
        }
    char *key = make_key(launch);
    if (!key)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu: out of host memory");
    const wg_layout *layout = NULL;
    wt_status st = layout_get(ctx, (uint32_t)launch->nbindings, writable_mask(launch), &layout);
    WGPUComputePipeline pipeline = NULL;
    if (st == WT_OK)
        st = compile(ctx, launch, layout, &pipeline);
    if (st == WT_OK && c->npipelines == c->cap_pipelines) {
        int cap = c->cap_pipelines ? c->cap_pipelines * 2 : 16;
        wg_pipeline *grown = realloc(c->pipelines, (size_t)cap * sizeof *grown);
        if (grown) {
            c->pipelines = grown;
            c->cap_pipelines = cap;
        } else {
            wg_ctx(ctx)->lib.p.ComputePipelineRelease(pipeline);
            st = wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu: out of host memory");
        }
    }
    if (st != WT_OK) {
        free(key);
        return st;
    }
    wg_pipeline *p = &c->pipelines[c->npipelines++];
    wg_ctx(ctx)->counters.pipelines++;
    p->hash = hash;
    p->key = key;
    p->pipeline = pipeline;
    p->layout = layout->layout;
    *out = p;
    return WT_OK;
}

/* -------------------------------------------------------- bind groups */

static uint64_t hash_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

wt_status wg_bind_group_get(wt_context *ctx, const wg_pipeline *pipe, const wg_launch *launch,
                            WGPUBindGroup *out)
{
    wg_context *w = wg_ctx(ctx);
    wg_pipeline_cache *c = &w->cache;
    if (!c->groups) {
        c->groups = calloc(WG_BIND_GROUP_CACHE, sizeof *c->groups);
        if (!c->groups)
            return wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu: out of host memory");
    }
    WGPUBuffer buffers[WG_MAX_BINDINGS];
    uint64_t offsets[WG_MAX_BINDINGS] = {0}, sizes[WG_MAX_BINDINGS] = {0};
    uint64_t h = hash_mix(0, (uint64_t)(uintptr_t)pipe->layout);
    for (int i = 0; i < launch->nbindings; i++) {
        const wg_buffer *b = launch->bindings[i].storage->device;
        buffers[i] = b->buffer;
        /* A window binds its range; a whole buffer binds all of it. */
        offsets[i] = b->parent ? b->offset : 0;
        sizes[i] = b->parent ? b->size : WGPU_WHOLE_SIZE;
        h = hash_mix(h, (uint64_t)(uintptr_t)b->buffer);
        h = hash_mix(h, offsets[i] ^ (sizes[i] << 1));
    }
    size_t nb = (size_t)launch->nbindings;
    wg_bind_group_slot *slot = &c->groups[h % WG_BIND_GROUP_CACHE];
    /* A replay's dispatches bind the graph's own buffers, too many and too
     * many distinct ones for the shared cache: each dispatch of the graph
     * has a slot of its own, by its ordinal in the replay. */
    if (ctx->replay_state && !ctx->capture && wg_ctx(ctx)->hooks.replay_slot) {
        wt_status st = wg_ctx(ctx)->hooks.replay_slot(ctx, ctx->replay_pos++, &slot);
        if (st != WT_OK)
            return st;
    }
    if (slot->group && slot->layout == pipe->layout && slot->nbuffers == launch->nbindings &&
        memcmp(slot->buffers, buffers, nb * sizeof buffers[0]) == 0 &&
        memcmp(slot->offsets, offsets, nb * sizeof offsets[0]) == 0 &&
        memcmp(slot->sizes, sizes, nb * sizeof sizes[0]) == 0) {
        w->counters.bind_group_hits++;
        *out = slot->group;
        return WT_OK;
    }

    WGPUBindGroupEntry entries[WG_MAX_BINDINGS + 1];
    memset(entries, 0, sizeof entries);
    entries[0].binding = 0;
    entries[0].buffer = w->rec.arena;
    entries[0].offset = 0;
    entries[0].size = WG_MAX_PARAMS;
    for (int i = 0; i < launch->nbindings; i++) {
        entries[i + 1].binding = (uint32_t)i + 1;
        entries[i + 1].buffer = buffers[i];
        entries[i + 1].offset = offsets[i];
        entries[i + 1].size = sizes[i];
    }
    WGPUBindGroupDescriptor desc;
    memset(&desc, 0, sizeof desc);
    desc.layout = pipe->layout;
    desc.entryCount = (size_t)launch->nbindings + 1;
    desc.entries = entries;
    /* Checked here, in an error scope: an invalid bind group recorded into
     * the pass would make the whole batch's submit fail, and every op in
     * it would silently not run. Cache misses are rare, so the scope's
     * round trip costs little. */
    w->lib.p.DevicePushErrorScope(w->device, WGPUErrorFilter_Validation);
    WGPUBindGroup group = w->lib.p.DeviceCreateBindGroup(w->device, &desc);
    wt_status st = wg_pop_error_scope(ctx, WT_ERR_BACKEND, "creating a bind group");
    if (st == WT_OK && !group)
        st = wt_fail(WT_ERR_BACKEND, "webgpu: creating a bind group for \"%s\" failed",
                     launch->shader);
    if (st != WT_OK) {
        if (group)
            w->lib.p.BindGroupRelease(group);
        return st;
    }
    /* Evicting is safe while recorded commands still use the old group:
     * the encoder holds its own reference. */
    if (slot->group)
        w->lib.p.BindGroupRelease(slot->group);
    w->counters.bind_groups_made++;
    slot->group = group;
    slot->layout = pipe->layout;
    slot->nbuffers = launch->nbindings;
    memcpy(slot->buffers, buffers, nb * sizeof buffers[0]);
    memcpy(slot->offsets, offsets, nb * sizeof offsets[0]);
    memcpy(slot->sizes, sizes, nb * sizeof sizes[0]);
    *out = group;
    return WT_OK;
}

void wg_bind_groups_forget(wt_context *ctx, WGPUBuffer buffer)
{
    wg_context *w = wg_ctx(ctx);
    wg_bind_group_slot *groups = w->cache.groups;
    for (int i = 0; groups && i < WG_BIND_GROUP_CACHE; i++) {
        wg_bind_group_slot *s = &groups[i];
        if (!s->group)
            continue;
        bool uses = buffer == NULL;
        for (int k = 0; !uses && k < s->nbuffers; k++)
            uses = s->buffers[k] == buffer;
        if (uses) {
            w->lib.p.BindGroupRelease(s->group);
            memset(s, 0, sizeof *s);
        }
    }
}

void wg_pipeline_cache_destroy(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    wg_pipeline_cache *c = &w->cache;
    wg_bind_groups_forget(ctx, NULL);
    free(c->groups);
    for (int i = 0; i < c->npipelines; i++) {
        w->lib.p.ComputePipelineRelease(c->pipelines[i].pipeline);
        free(c->pipelines[i].key);
    }
    free(c->pipelines);
    for (int i = 0; i < c->nlayouts; i++) {
        w->lib.p.PipelineLayoutRelease(c->layouts[i].pipeline_layout);
        w->lib.p.BindGroupLayoutRelease(c->layouts[i].layout);
    }
    free(c->layouts);
    memset(c, 0, sizeof *c);
}
