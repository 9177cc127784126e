/* The host-WebGPU binding, part two: the objects made without waiting
 * (buffers, shaders, layouts, pipelines, encoders, passes) and the queue's
 * submit and write. Descriptors are walked here in C and handed to
 * JavaScript one field at a time, so no struct layout is repeated in
 * JavaScript. A JavaScript exception (the API throws only for malformed
 * arguments, which WebGPU otherwise reports as validation errors) becomes
 * an uncaptured validation error of every live device. */
#include "webgpu/browser/browser.h"

#include <emscripten.h>
#include <stdlib.h>
#include <string.h>

EM_JS(uint32_t, br_js_create_buffer, (uint32_t dev, uint32_t usage, double size, int mapped,
                                      const char *label, int label_len), {
    var W = Module.wtgpu;
    return W.guard(function() {
        return W.add(W.get(dev).createBuffer({ label: W.str(label, label_len), usage: usage,
                                               size: size, mappedAtCreation: !!mapped }));
    });
});

EM_JS(uint32_t, br_js_create_shader, (uint32_t dev, const char *code, int code_len,
                                      const char *label, int label_len), {
    var W = Module.wtgpu;
    return W.guard(function() {
        return W.add(W.get(dev).createShaderModule({ label: W.str(label, label_len),
                                                     code: W.str(code, code_len) }));
    });
});

/* Layout and bind-group entries are collected one by one, then used. */
EM_JS(void, br_js_layout_entry, (uint32_t binding, uint32_t visibility, int type, int dynamic,
                                 double min_size), {
    var t = type == 3 ? "storage" : type == 4 ? "read-only-storage" : "uniform";
    Module.wtgpu.entries.push({ binding: binding, visibility: visibility,
                                buffer: { type: t, hasDynamicOffset: !!dynamic,
                                          minBindingSize: min_size } });
});

EM_JS(uint32_t, br_js_create_layout, (uint32_t dev, const char *label, int label_len), {
    var W = Module.wtgpu, entries = W.entries;
    W.entries = [];
    return W.guard(function() {
        return W.add(W.get(dev).createBindGroupLayout({ label: W.str(label, label_len),
                                                        entries: entries }));
    });
});

/* size < 0: the rest of the buffer. */
EM_JS(void, br_js_group_entry, (uint32_t binding, uint32_t buffer, double offset, double size), {
    var W = Module.wtgpu, r = { buffer: W.get(buffer), offset: offset };
    if (size >= 0) r.size = size;
    W.entries.push({ binding: binding, resource: r });
});

EM_JS(uint32_t, br_js_create_group, (uint32_t dev, uint32_t layout, const char *label,
                                     int label_len), {
    var W = Module.wtgpu, entries = W.entries;
    W.entries = [];
    return W.guard(function() {
        return W.add(W.get(dev).createBindGroup({ label: W.str(label, label_len),
                                                  layout: W.get(layout), entries: entries }));
    });
});

EM_JS(uint32_t, br_js_create_pipeline_layout, (uint32_t dev, const uint32_t *layouts, int n,
                                               const char *label, int label_len), {
    var W = Module.wtgpu, list = [];
    for (var i = 0; i < n; i++) list.push(W.get(HEAPU32[(layouts >> 2) + i]));
    return W.guard(function() {
        return W.add(W.get(dev).createPipelineLayout({ label: W.str(label, label_len),
                                                       bindGroupLayouts: list }));
    });
});

EM_JS(uint32_t, br_js_create_pipeline, (uint32_t dev, uint32_t layout, uint32_t module,
                                        const char *entry, int entry_len, const char *label,
                                        int label_len), {
    var W = Module.wtgpu;
    return W.guard(function() {
        var compute = { module: W.get(module) };
        if (entry) compute.entryPoint = W.str(entry, entry_len);
        return W.add(W.get(dev).createComputePipeline({
            label: W.str(label, label_len), layout: layout ? W.get(layout) : "auto",
            compute: compute }));
    });
});

EM_JS(uint32_t, br_js_create_query_set, (uint32_t dev, int type, uint32_t count), {
    var W = Module.wtgpu;
    return W.guard(function() {
        return W.add(W.get(dev).createQuerySet({ type: type == 2 ? "timestamp" : "occlusion",
                                                 count: count }));
    });
});

EM_JS(uint32_t, br_js_create_encoder, (uint32_t dev), {
    var W = Module.wtgpu;
    return W.guard(function() { return W.add(W.get(dev).createCommandEncoder()); });
});

/* query_set 0: no timestamps. */
EM_JS(uint32_t, br_js_begin_pass, (uint32_t enc, uint32_t query_set, uint32_t begin,
                                   uint32_t end), {
    var W = Module.wtgpu;
    return W.guard(function() {
        var d = {};
        if (query_set) {
            var t = { querySet: W.get(query_set) };
            if (begin != 0xFFFFFFFF) t.beginningOfPassWriteIndex = begin;
            if (end != 0xFFFFFFFF) t.endOfPassWriteIndex = end;
            d.timestampWrites = t;
        }
        return W.add(W.get(enc).beginComputePass(d));
    });
});

EM_JS(void, br_js_copy, (uint32_t enc, uint32_t src, double src_offset, uint32_t dst,
                         double dst_offset, double size), {
    var W = Module.wtgpu;
    W.guard(function() {
        W.get(enc).copyBufferToBuffer(W.get(src), src_offset, W.get(dst), dst_offset, size);
    });
});

EM_JS(void, br_js_resolve, (uint32_t enc, uint32_t qs, uint32_t first, uint32_t count,
                            uint32_t dst, double dst_offset), {
    var W = Module.wtgpu;
    W.guard(function() {
        W.get(enc).resolveQuerySet(W.get(qs), first, count, W.get(dst), dst_offset);
    });
});

EM_JS(uint32_t, br_js_finish, (uint32_t enc), {
    var W = Module.wtgpu;
    return W.guard(function() { return W.add(W.get(enc).finish()); });
});

EM_JS(void, br_js_set_pipeline, (uint32_t pass, uint32_t pipeline), {
    var W = Module.wtgpu;
    W.guard(function() { W.get(pass).setPipeline(W.get(pipeline)); });
});

EM_JS(void, br_js_set_group, (uint32_t pass, uint32_t index, uint32_t group,
                              const uint32_t *offsets, int n), {
    var W = Module.wtgpu;
    W.guard(function() {
        var o = [];
        for (var i = 0; i < n; i++) o.push(HEAPU32[(offsets >> 2) + i]);
        W.get(pass).setBindGroup(index, group ? W.get(group) : null, o);
    });
});

EM_JS(void, br_js_dispatch, (uint32_t pass, uint32_t x, uint32_t y, uint32_t z), {
    var W = Module.wtgpu;
    W.guard(function() { W.get(pass).dispatchWorkgroups(x, y, z); });
});

EM_JS(void, br_js_end_pass, (uint32_t pass), {
    var W = Module.wtgpu;
    W.guard(function() { W.get(pass).end(); });
});

EM_JS(void, br_js_submit, (uint32_t queue, const uint32_t *cmds, int n), {
    var W = Module.wtgpu, list = [];
    for (var i = 0; i < n; i++) list.push(W.get(HEAPU32[(cmds >> 2) + i]));
    W.guard(function() { W.get(queue).submit(list); });
});

EM_JS(void, br_js_write_buffer, (uint32_t queue, uint32_t buffer, double offset,
                                 const void *data, double size), {
    var W = Module.wtgpu;
    W.guard(function() { W.get(queue).writeBuffer(W.get(buffer), offset, HEAPU8, data, size); });
});

/* destroy() of a buffer or query set. */
EM_JS(void, br_js_destroy, (uint32_t id), {
    var W = Module.wtgpu, o = W.get(id);
    if (o) W.guard(function() { o.destroy(); });
});

EM_JS(void, br_js_unmap, (uint32_t id), {
    var W = Module.wtgpu, o = W.get(id);
    if (o) W.guard(function() { o.wtRanges = null; o.unmap(); });
});

EM_JS(void, br_js_forget, (uint32_t id), { Module.wtgpu.objs.delete(id); });

/* ------------------------------------------------------------ C side */

static WGPUBuffer br_DeviceCreateBuffer(WGPUDevice device, const WGPUBufferDescriptor *d)
{
    return BR_HANDLE(WGPUBuffer, br_js_create_buffer(BR_ID(device), (uint32_t)d->usage,
                                                     (double)d->size, (int)d->mappedAtCreation,
                                                     d->label.data, br_len(d->label)));
}

static WGPUShaderModule br_DeviceCreateShaderModule(WGPUDevice device,
                                                    const WGPUShaderModuleDescriptor *d)
{
    const WGPUShaderSourceWGSL *wgsl = NULL;
    for (const WGPUChainedStruct *c = d->nextInChain; c; c = c->next)
        if (c->sType == WGPUSType_ShaderSourceWGSL)
            wgsl = (const WGPUShaderSourceWGSL *)c;
    if (!wgsl)
        return NULL; /* SPIR-V and the like: the host takes WGSL only */
    return BR_HANDLE(WGPUShaderModule,
                     br_js_create_shader(BR_ID(device), wgsl->code.data, br_len(wgsl->code),
                                         d->label.data, br_len(d->label)));
}

static WGPUBindGroupLayout br_DeviceCreateBindGroupLayout(WGPUDevice device,
                                                          const WGPUBindGroupLayoutDescriptor *d)
{
    for (size_t i = 0; i < d->entryCount; i++) {
        const WGPUBindGroupLayoutEntry *e = &d->entries[i];
        br_js_layout_entry(e->binding, (uint32_t)e->visibility, (int)e->buffer.type,
                           (int)e->buffer.hasDynamicOffset, (double)e->buffer.minBindingSize);
    }
    return BR_HANDLE(WGPUBindGroupLayout,
                     br_js_create_layout(BR_ID(device), d->label.data, br_len(d->label)));
}

static WGPUBindGroup br_DeviceCreateBindGroup(WGPUDevice device, const WGPUBindGroupDescriptor *d)
{
    for (size_t i = 0; i < d->entryCount; i++) {
        const WGPUBindGroupEntry *e = &d->entries[i];
        br_js_group_entry(e->binding, BR_ID(e->buffer), (double)e->offset,
                          e->size == WGPU_WHOLE_SIZE ? -1.0 : (double)e->size);
    }
    return BR_HANDLE(WGPUBindGroup, br_js_create_group(BR_ID(device), BR_ID(d->layout),
                                                       d->label.data, br_len(d->label)));
}

static WGPUPipelineLayout br_DeviceCreatePipelineLayout(WGPUDevice device,
                                                        const WGPUPipelineLayoutDescriptor *d)
{
    /* Handles are 32-bit ids on wasm32: the array is read as it is. */
    _Static_assert(sizeof(WGPUBindGroupLayout) == sizeof(uint32_t), "wasm32 handles");
    return BR_HANDLE(WGPUPipelineLayout,
                     br_js_create_pipeline_layout(BR_ID(device),
                                                  (const uint32_t *)d->bindGroupLayouts,
                                                  (int)d->bindGroupLayoutCount, d->label.data,
                                                  br_len(d->label)));
}

static WGPUComputePipeline br_DeviceCreateComputePipeline(WGPUDevice device,
                                                          const WGPUComputePipelineDescriptor *d)
{
    return BR_HANDLE(WGPUComputePipeline,
                     br_js_create_pipeline(BR_ID(device), BR_ID(d->layout),
                                           BR_ID(d->compute.module), d->compute.entryPoint.data,
                                           br_len(d->compute.entryPoint), d->label.data,
                                           br_len(d->label)));
}

static WGPUQuerySet br_DeviceCreateQuerySet(WGPUDevice device, const WGPUQuerySetDescriptor *d)
{
    return BR_HANDLE(WGPUQuerySet, br_js_create_query_set(BR_ID(device), (int)d->type, d->count));
}

static WGPUCommandEncoder br_DeviceCreateCommandEncoder(WGPUDevice device,
                                                        const WGPUCommandEncoderDescriptor *d)
{
    (void)d;
    return BR_HANDLE(WGPUCommandEncoder, br_js_create_encoder(BR_ID(device)));
}

static WGPUComputePassEncoder br_CommandEncoderBeginComputePass(WGPUCommandEncoder enc,
                                                                const WGPUComputePassDescriptor *d)
{
    const WGPUPassTimestampWrites *t = d ? d->timestampWrites : NULL;
    return BR_HANDLE(WGPUComputePassEncoder,
                     br_js_begin_pass(BR_ID(enc), t ? BR_ID(t->querySet) : 0,
                                      t ? t->beginningOfPassWriteIndex : 0,
                                      t ? t->endOfPassWriteIndex : 0));
}

static void br_CommandEncoderCopyBufferToBuffer(WGPUCommandEncoder enc, WGPUBuffer src,
                                                uint64_t src_offset, WGPUBuffer dst,
                                                uint64_t dst_offset, uint64_t size)
{
    br_js_copy(BR_ID(enc), BR_ID(src), (double)src_offset, BR_ID(dst), (double)dst_offset,
               (double)size);
}

static void br_CommandEncoderResolveQuerySet(WGPUCommandEncoder enc, WGPUQuerySet qs,
                                             uint32_t first, uint32_t count, WGPUBuffer dst,
                                             uint64_t dst_offset)
{
    br_js_resolve(BR_ID(enc), BR_ID(qs), first, count, BR_ID(dst), (double)dst_offset);
}

static WGPUCommandBuffer br_CommandEncoderFinish(WGPUCommandEncoder enc,
                                                 const WGPUCommandBufferDescriptor *d)
{
    (void)d;
    return BR_HANDLE(WGPUCommandBuffer, br_js_finish(BR_ID(enc)));
}

static void br_ComputePassEncoderSetPipeline(WGPUComputePassEncoder pass,
                                             WGPUComputePipeline pipeline)
{
    br_js_set_pipeline(BR_ID(pass), BR_ID(pipeline));
}

static void br_ComputePassEncoderSetBindGroup(WGPUComputePassEncoder pass, uint32_t index,
                                              WGPUBindGroup group, size_t count,
                                              const uint32_t *offsets)
{
    br_js_set_group(BR_ID(pass), index, BR_ID(group), offsets, (int)count);
}

static void br_ComputePassEncoderDispatchWorkgroups(WGPUComputePassEncoder pass, uint32_t x,
                                                    uint32_t y, uint32_t z)
{
    br_js_dispatch(BR_ID(pass), x, y, z);
}

static void br_ComputePassEncoderEnd(WGPUComputePassEncoder pass) { br_js_end_pass(BR_ID(pass)); }

static void br_QueueSubmit(WGPUQueue queue, size_t count, const WGPUCommandBuffer *cmds)
{
    _Static_assert(sizeof(WGPUCommandBuffer) == sizeof(uint32_t), "wasm32 handles");
    br_js_submit(BR_ID(queue), (const uint32_t *)cmds, (int)count);
}

static void br_QueueWriteBuffer(WGPUQueue queue, WGPUBuffer buffer, uint64_t offset,
                                const void *data, size_t size)
{
    br_js_write_buffer(BR_ID(queue), BR_ID(buffer), (double)offset, data, (double)size);
}

static void br_BufferUnmap(WGPUBuffer buffer)
{
    wg_browser_drop_mirrors(buffer);
    br_js_unmap(BR_ID(buffer));
}

static void br_BufferDestroy(WGPUBuffer buffer)
{
    wg_browser_drop_mirrors(buffer);
    br_js_destroy(BR_ID(buffer));
}

static void br_BufferRelease(WGPUBuffer buffer)
{
    wg_browser_drop_mirrors(buffer);
    br_js_forget(BR_ID(buffer));
}

static void br_QuerySetDestroy(WGPUQuerySet qs) { br_js_destroy(BR_ID(qs)); }

/* Releases drop the table's reference; the host's collector does the rest. */
#define BR_RELEASE(Name, Type) \
    static void br_##Name(Type h) { br_js_forget(BR_ID(h)); }
BR_RELEASE(QueueRelease, WGPUQueue)
BR_RELEASE(QuerySetRelease, WGPUQuerySet)
BR_RELEASE(ShaderModuleRelease, WGPUShaderModule)
BR_RELEASE(BindGroupLayoutRelease, WGPUBindGroupLayout)
BR_RELEASE(BindGroupRelease, WGPUBindGroup)
BR_RELEASE(PipelineLayoutRelease, WGPUPipelineLayout)
BR_RELEASE(ComputePipelineRelease, WGPUComputePipeline)
BR_RELEASE(CommandEncoderRelease, WGPUCommandEncoder)
BR_RELEASE(CommandBufferRelease, WGPUCommandBuffer)
BR_RELEASE(ComputePassEncoderRelease, WGPUComputePassEncoder)
#undef BR_RELEASE

void wg_browser_object_procs(wgpu_procs *p)
{
    p->DeviceCreateBuffer = br_DeviceCreateBuffer;
    p->DeviceCreateShaderModule = br_DeviceCreateShaderModule;
    p->DeviceCreateBindGroupLayout = br_DeviceCreateBindGroupLayout;
    p->DeviceCreateBindGroup = br_DeviceCreateBindGroup;
    p->DeviceCreatePipelineLayout = br_DeviceCreatePipelineLayout;
    p->DeviceCreateComputePipeline = br_DeviceCreateComputePipeline;
    p->DeviceCreateQuerySet = br_DeviceCreateQuerySet;
    p->DeviceCreateCommandEncoder = br_DeviceCreateCommandEncoder;
    p->QueueSubmit = br_QueueSubmit;
    p->QueueWriteBuffer = br_QueueWriteBuffer;
    p->QueueRelease = br_QueueRelease;
    p->BufferUnmap = br_BufferUnmap;
    p->BufferDestroy = br_BufferDestroy;
    p->BufferRelease = br_BufferRelease;
    p->QuerySetDestroy = br_QuerySetDestroy;
    p->QuerySetRelease = br_QuerySetRelease;
    p->ShaderModuleRelease = br_ShaderModuleRelease;
    p->BindGroupLayoutRelease = br_BindGroupLayoutRelease;
    p->BindGroupRelease = br_BindGroupRelease;
    p->PipelineLayoutRelease = br_PipelineLayoutRelease;
    p->ComputePipelineRelease = br_ComputePipelineRelease;
    p->CommandEncoderBeginComputePass = br_CommandEncoderBeginComputePass;
    p->CommandEncoderCopyBufferToBuffer = br_CommandEncoderCopyBufferToBuffer;
    p->CommandEncoderResolveQuerySet = br_CommandEncoderResolveQuerySet;
    p->CommandEncoderFinish = br_CommandEncoderFinish;
    p->CommandEncoderRelease = br_CommandEncoderRelease;
    p->CommandBufferRelease = br_CommandBufferRelease;
    p->ComputePassEncoderSetPipeline = br_ComputePassEncoderSetPipeline;
    p->ComputePassEncoderSetBindGroup = br_ComputePassEncoderSetBindGroup;
    p->ComputePassEncoderDispatchWorkgroups = br_ComputePassEncoderDispatchWorkgroups;
    p->ComputePassEncoderEnd = br_ComputePassEncoderEnd;
    p->ComputePassEncoderRelease = br_ComputePassEncoderRelease;
}
