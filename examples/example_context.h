/* The examples' --backend option: a context from a name (auto, cpu,
 * webgpu, vulkan, gles), with a line saying what it runs on. */
#ifndef WT_EXAMPLE_CONTEXT_H
#define WT_EXAMPLE_CONTEXT_H

#include <webtensor.h>

#include <stdio.h>
#include <string.h>

/* With gpu >= 0 (a data-parallel run's local rank), a GPU context takes
 * adapter number gpu modulo the count of the host's adapters like the one
 * AUTO would take (same API, type and device id): one rank per GPU.
 * 1 on success; 0 with a message on stderr. */
static inline int make_context_on(const char *name, int gpu, wt_context **ctx)
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
    wt_adapter_info infos[32];
    int count = 0;
    if (gpu >= 0 && o.backend != WT_BACKEND_CPU && wt_list_adapters(&o, infos, 32, &count) == WT_OK) {
        const wt_adapter_info *pick = NULL;
        for (int i = 0; i < count && i < 32; i++)
            if (infos[i].auto_choice) pick = &infos[i];
        /* No choice marked (an explicit API AUTO would not take): its
         * first discrete GPU, else its first adapter. */
        for (int i = 0; !pick && i < count && i < 32; i++)
            if (infos[i].type == WT_ADAPTER_DISCRETE_GPU) pick = &infos[i];
        if (!pick && count > 0) pick = &infos[0];
        int same[32], nsame = 0;
        for (int i = 0; pick && i < count && i < 32; i++)
            if (infos[i].api == pick->api && infos[i].type == pick->type && infos[i].device_id == pick->device_id &&
                infos[i].vendor_id == pick->vendor_id)
                same[nsame++] = infos[i].index;
        /* AUTO may still choose the CPU backend (software renderers only). */
        if (nsame > 1 || (nsame == 1 && o.backend != WT_BACKEND_AUTO)) {
            o.adapter_index = same[gpu % nsame];
            o.backend = WT_BACKEND_WEBGPU;
            fprintf(stderr, "local rank %d: adapter %d (%d like it on this host)\n", gpu, o.adapter_index, nsame);
        }
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

static inline int make_context(const char *name, wt_context **ctx) { return make_context_on(name, -1, ctx); }

#endif /* WT_EXAMPLE_CONTEXT_H */
