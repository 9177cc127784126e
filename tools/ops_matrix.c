/* `webtensor ops`: the op catalogue as a support matrix, op x backend
 * (cpu, vulkan, gles) x dtype (f32, f16, i32, bool), from the same answers
 * the library acts on (wt_op_support). Uses only the public API. */
#include "ops_matrix.h"

#include <stdio.h>
#include <string.h>

#include "webtensor.h"

enum { NBACKENDS = 3, NDTYPES = 4 };

static const char *const k_backend_names[NBACKENDS] = {"cpu", "vulkan", "gles"};
static const wt_dtype k_dtypes[NDTYPES] = {WT_F32, WT_F16, WT_I32, WT_BOOL};

static wt_context *open_backend(int b)
{
    wt_context_options o;
    wt_context_options_init(&o);
    o.backend = b == 0 ? WT_BACKEND_CPU : WT_BACKEND_WEBGPU;
    o.gpu_api = b == 1 ? WT_GPU_API_VULKAN : b == 2 ? WT_GPU_API_OPENGLES : WT_GPU_API_AUTO;
    wt_context *ctx = NULL;
    return wt_context_create(&o, &ctx) == WT_OK ? ctx : NULL;
}

static char mark(wt_support s)
{
    switch (s) {
    case WT_SUPPORT_NATIVE: return 'N';
    case WT_SUPPORT_VIA_F32: return 'F';
    case WT_SUPPORT_VIA_CAST: return 'C';
    case WT_SUPPORT_NONE: break;
    }
    return '-';
}

int ops_matrix_main(void)
{
    wt_context *ctx[NBACKENDS];
    for (int b = 0; b < NBACKENDS; b++) ctx[b] = open_backend(b);
    printf("webtensor %s: %d ops. N native, F computed in f32 (f16 results rounded back),\n"
           "C through a cast to another dtype, - refused (WT_ERR_UNSUPPORTED or INVALID_ARGUMENT).\n"
           "WebGPU f16 N: contiguous operands of one shape; other layouts go through f32.\n\n",
           wt_version(), wt_op_count());
    int w = 14; /* the name column: as wide as the longest name */
    for (int op = 0; op < wt_op_count(); op++)
        if ((int)strlen(wt_op_name(op)) > w) w = (int)strlen(wt_op_name(op));
    printf("%-*s", w, "");
    for (int b = 0; b < NBACKENDS; b++) printf("  %-17s", k_backend_names[b]);
    printf("\n%-*s", w, "op");
    for (int b = 0; b < NBACKENDS; b++) printf("  f32 f16 i32 bool ");
    printf("\n");
    int holes[NBACKENDS][NDTYPES] = {{0}};
    const char *family = NULL;
    /* Families in catalogue order, each printed once with all its ops. */
    for (int first = 0; first < wt_op_count(); first++) {
        const char *f = wt_op_family(first);
        bool seen = false;
        for (int k = 0; k < first; k++) seen |= strcmp(wt_op_family(k), f) == 0;
        if (seen) continue;
        family = f;
        printf("-- %s\n", family);
        for (int op = first; op < wt_op_count(); op++) {
            if (strcmp(wt_op_family(op), family) != 0) continue;
            printf("%-*s", w, wt_op_name(op));
            for (int b = 0; b < NBACKENDS; b++) {
                printf("  ");
                for (int d = 0; d < NDTYPES; d++) {
                    wt_support s = WT_SUPPORT_NONE;
                    if (!ctx[b]) {
                        printf(" ?  ");
                        continue;
                    }
                    wt_op_support(ctx[b], op, k_dtypes[d], &s);
                    holes[b][d] += s == WT_SUPPORT_NONE;
                    printf(" %c  ", mark(s));
                }
                printf(" ");
            }
            printf("\n");
        }
    }
    printf("\nrefused (ops x dtype):");
    for (int b = 0; b < NBACKENDS; b++) {
        if (!ctx[b]) {
            printf("  %s: no device", k_backend_names[b]);
            continue;
        }
        printf("  %s: f32 %d, f16 %d, i32 %d, bool %d", k_backend_names[b], holes[b][0], holes[b][1],
               holes[b][2], holes[b][3]);
    }
    printf("\n");
    for (int b = 0; b < NBACKENDS; b++) wt_context_destroy(ctx[b]);
    return 0;
}
