/* The examples' --backend option: a context from a name (auto, cpu,
 * webgpu, vulkan, gles), with a line saying what it runs on. */
#ifndef WT_EXAMPLE_CONTEXT_H
#define WT_EXAMPLE_CONTEXT_H

#include <webtensor.h>

#include <stdio.h>
#include <string.h>

/* 1 on success; 0 with a message on stderr. */
static inline int make_context(const char *name, wt_context **ctx)
{
    wt_context_options o;
    wt_context_options_init(&o);
    if (strcmp(name, "cpu") == 0) o.backend = WT_BACKEND_CPU;
    else if (strcmp(name, "webgpu") == 0) o.backend = WT_BACKEND_WEBGPU;
    else if (strcmp(name, "vulkan") == 0) o.backend = WT_BACKEND_WEBGPU, o.gpu_api = WT_GPU_API_VULKAN;
    else if (strcmp(name, "gles") == 0) o.backend = WT_BACKEND_WEBGPU, o.gpu_api = WT_GPU_API_OPENGLES;
    else if (strcmp(name, "auto") != 0) {
        fprintf(stderr, "unknown backend '%s'\n", name);
        return 0;
    }
    if (wt_context_create(&o, ctx) != WT_OK) {
        fprintf(stderr, "error: no %s context: %s\n", name, wt_last_error());
        return 0;
    }
    wt_adapter_info info;
    if (wt_context_adapter_info(*ctx, &info) == WT_OK)
        printf("backend %s: WebGPU adapter \"%s\"\n", name, info.name);
    else
        printf("backend %s: CPU\n", name);
    return 1;
}

#endif /* WT_EXAMPLE_CONTEXT_H */
