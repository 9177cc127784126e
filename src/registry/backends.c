/* The backend registry: the one place that names the backends. The core
 * asks it for a backend's table by kind (wt_backend_ops_of, core/internal.h)
 * and so names none itself; a new backend is a row here. */
#include "core/internal.h"

extern const wt_backend_ops wt_cpu_backend;    /* src/cpu/backend.c */
extern const wt_backend_ops wt_webgpu_backend; /* src/webgpu/backend.c */

const wt_backend_ops *wt_backend_ops_of(wt_backend kind)
{
    switch (kind) {
    case WT_BACKEND_CPU: return &wt_cpu_backend;
    case WT_BACKEND_WEBGPU: return &wt_webgpu_backend;
    default: return NULL;
    }
}
