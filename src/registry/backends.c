/* The backend registry: the one place that names the backends, and so
 * where a context's backend is chosen (wt_context_create, with AUTO's
 * fallback) and adapters are listed. It sits above the core and the
 * backends: the core names no backend, a backend names no other, and a
 * new backend is a table here. */
#include "core/internal.h"

#include <stdio.h>

extern const wt_backend_ops wt_cpu_backend;    /* src/cpu/backend.c */
extern const wt_backend_ops wt_webgpu_backend; /* src/webgpu/backend.c */

wt_status wt_context_create(const wt_context_options *opts_in, wt_context **out)
{
    if (!out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_context_create: out is NULL");
    *out = NULL;
    wt_context_options opts;
    wt_status st = wt_context_options_read(opts_in, &opts);
    if (st != WT_OK) return st;
    switch (opts.backend) {
    case WT_BACKEND_CPU:
        return wt_context_create_with(&wt_cpu_backend, WT_BACKEND_CPU, &opts, "WT_BACKEND_CPU, as asked", out);
    case WT_BACKEND_WEBGPU:
        return wt_context_create_with(&wt_webgpu_backend, WT_BACKEND_WEBGPU, &opts, NULL, out);
    case WT_BACKEND_AUTO: {
        /* Only "no device" falls back to the CPU: any other failure of a
         * device that exists is the caller's to see. A software renderer
         * counts as no device here (src/webgpu/backend.c). */
        st = wt_context_create_with(&wt_webgpu_backend, WT_BACKEND_WEBGPU, &opts, NULL, out);
        if (st != WT_ERR_NO_DEVICE) return st;
        char reason[512];
        snprintf(reason, sizeof reason, "AUTO: CPU backend, because %s", wt_last_error());
        return wt_context_create_with(&wt_cpu_backend, WT_BACKEND_CPU, &opts, reason, out);
    }
    }
    return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_context_create: unknown backend");
}

wt_status wt_list_adapters(const wt_context_options *opts_in, wt_adapter_info *infos, int capacity,
                           int *count)
{
    if (!count) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_list_adapters: count is NULL");
    *count = 0;
    if (capacity < 0 || (capacity > 0 && !infos))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_list_adapters: infos is NULL or capacity < 0");
    wt_context_options opts;
    wt_status st = wt_context_options_read(opts_in, &opts);
    if (st != WT_OK) return st;
    return wt_webgpu_backend.list_adapters(&opts, infos, capacity, count);
}
