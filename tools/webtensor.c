/*
 * The `webtensor` command-line program: which WebGPU adapters this machine
 * has and which one the library takes (`info`), and how fast the library
 * runs here (`bench`, engine in bench/). Uses only the public API.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bench_engine.h"
#include "core/knobs.h"
#include "ops_matrix.h"
#include "webtensor.h"

#define MAX_ADAPTERS 32

static void usage(FILE *f)
{
    fprintf(f,
            "usage: webtensor <command> [options]\n"
            "commands:\n"
            "  info       list the WebGPU adapters and the backend a default context takes,\n"
            "             with why and the features turned on (--experimental: also the\n"
            "             features behind WT_EXPERIMENTAL_SUBGROUP_MATRIX)\n"
            "  ops        print the support matrix: op x backend x dtype\n"
            "  bench      time the library's ops on the CPU and WebGPU backends\n"
            "             (webtensor bench --help for its options)\n"
            "  version    print the library's version\n"
            "  help       print this text\n"
            "environment: WT_WEBGPU_LIB names the WebGPU library to load.\n");
}

static const char *api_name(wt_gpu_api api)
{
    switch (api) {
    case WT_GPU_API_VULKAN: return "Vulkan";
    case WT_GPU_API_OPENGLES: return "OpenGL ES";
    case WT_GPU_API_METAL: return "Metal";
    case WT_GPU_API_D3D12: return "D3D12";
    case WT_GPU_API_BROWSER: return "browser";
    default: return "unknown";
    }
}

static const char *adapter_type_name(wt_adapter_type t)
{
    switch (t) {
    case WT_ADAPTER_DISCRETE_GPU: return "discrete GPU";
    case WT_ADAPTER_INTEGRATED_GPU: return "integrated GPU";
    case WT_ADAPTER_CPU: return "CPU (software)";
    default: return "unknown";
    }
}

static const char *backend_name(wt_backend b)
{
    switch (b) {
    case WT_BACKEND_CPU: return "cpu";
    case WT_BACKEND_WEBGPU: return "webgpu";
    default: return "none";
    }
}

/* Sizes in the largest whole binary unit, as limits are usually powers of two. */
static void format_bytes(uint64_t v, char *buf, size_t len)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    double x = (double)v;
    while (x >= 1024.0 && u < 4) x /= 1024.0, u++;
    snprintf(buf, len, "%.4g %s (%llu)", x, units[u], (unsigned long long)v);
}

static void print_adapter(const wt_adapter_info *a)
{
    char buf[64];
    printf("adapter %d%s: %s\n", a->index, a->auto_choice ? " (AUTO's choice)" : "", a->name);
    printf("  vendor:         %s (0x%04x), device 0x%04x\n", a->vendor[0] ? a->vendor : "-",
           a->vendor_id, a->device_id);
    printf("  architecture:   %s\n", a->architecture[0] ? a->architecture : "-");
    printf("  driver:         %s\n", a->driver[0] ? a->driver : "-");
    printf("  GPU API:        %s\n", api_name(a->api));
    printf("  type:           %s\n", adapter_type_name(a->type));
    printf("  feature level:  %s\n", a->compatibility_mode ? "compatibility" : "core");
    if (a->memory_bytes) {
        format_bytes(a->memory_bytes, buf, sizeof buf);
        printf("  memory:         %s (device-local heaps)\n", buf);
    } else {
        printf("  memory:         not reported\n");
    }
    printf("  limits:\n");
    format_bytes(a->max_buffer_size, buf, sizeof buf);
    printf("    max buffer size:                  %s\n", buf);
    format_bytes(a->max_storage_buffer_binding_size, buf, sizeof buf);
    printf("    max storage buffer binding:       %s\n", buf);
    format_bytes(a->max_compute_workgroup_storage_size, buf, sizeof buf);
    printf("    workgroup storage:                %s\n", buf);
    printf("    invocations per workgroup:        %u\n", a->max_compute_invocations_per_workgroup);
    printf("    workgroups per dimension:         %u\n", a->max_compute_workgroups_per_dimension);
    printf("    storage buffers per shader stage: %u\n", a->max_storage_buffers_per_shader_stage);
    printf("  features:\n");
    printf("    shader-f16:       %s\n", a->shader_f16 ? "yes" : "no");
    if (a->subgroups && a->subgroup_min_size)
        printf("    subgroups:        yes (sizes %u..%u)\n", a->subgroup_min_size, a->subgroup_max_size);
    else
        printf("    subgroups:        %s\n", a->subgroups ? "yes (sizes unknown)" : "no");
    printf("    timestamp-query:  %s\n", a->timestamp_query ? "yes" : "no");
    printf("    subgroup-matrix:  %s\n", a->subgroup_matrix ? "yes" : "no");
}

/* What a context runs on and why (wt_context_get_info). */
static void print_context(const wt_context *ctx, const char *label)
{
    wt_context_info ci;
    if (wt_context_get_info(ctx, &ci) != WT_OK) {
        printf("%s: no info: %s\n", label, wt_last_error());
        return;
    }
    if (ci.has_adapter)
        printf("%s: backend %s on adapter %d: %s (%s)\n", label, backend_name(ci.backend),
               ci.adapter.index, ci.adapter.name, api_name(ci.adapter.api));
    else
        printf("%s: backend %s (%d threads)\n", label, backend_name(ci.backend), ci.num_threads);
    printf("  why:       %s\n", ci.reason);
    if (!ci.has_adapter) return;
    char buf[64], buf2[64];
    printf("  features:  %s\n", ci.features);
    printf("  toggles:   %s\n", ci.toggles[0] ? ci.toggles : "(Dawn's defaults)");
    format_bytes(ci.max_buffer_size, buf, sizeof buf);
    format_bytes(ci.max_binding_size, buf2, sizeof buf2);
    printf("  buffers:   largest %s; one binding %s\n", buf, buf2);
    printf("  batching:  %u dispatches per submit%s; pipeline cache %s\n", ci.dispatches_per_submit,
           ci.validation ? ", validation mode (submit and wait per op)" : "",
           ci.pipeline_cache ? "on" : "off");
}

/* Exit status: 0 when the library works (even with no GPU: the CPU backend
 * is a working answer), 1 when listing fails for another reason than a
 * missing WebGPU library, or a default context cannot be made. */
/* Every WT_* environment variable the library reads (src/core/knobs.def):
 * its value here, default, range and meaning. */
static void print_knobs(void)
{
    static const char *const scopes[] = {"process", "context", "call"};
    printf("\nKnobs (environment variables; scope: when the library reads them):\n");
    for (int k = 0; k < WT_KNOB_COUNT; k++) {
        const wt_knob_spec *s = wt_knob_spec_of((wt_knob)k);
        const char *v = wt_knob_text((wt_knob)k);
        printf("  %-30s %s%s%s\n", s->name, v ? "= \"" : "(unset)", v ? v : "", v ? "\"" : "");
        printf("  %-30s   default %s; range %s; read per %s\n", "", s->default_text, s->range, scopes[s->scope]);
        printf("  %-30s   %s\n", "", s->meaning);
    }
}

static int cmd_info(bool experimental)
{
    int rc = 0;
    printf("webtensor %s\n\n", wt_version());

    wt_context_options opts;
    wt_context_options_init(&opts);
    if (experimental) opts.experimental = WT_EXPERIMENTAL_SUBGROUP_MATRIX;
    wt_adapter_info adapters[MAX_ADAPTERS];
    int count = 0;
    wt_status s = wt_list_adapters(&opts, adapters, MAX_ADAPTERS, &count);
    if (s == WT_ERR_NO_DEVICE) {
        printf("WebGPU: not available: %s\n", wt_last_error());
        printf("AUTO falls back to the CPU backend.\n");
    } else if (s != WT_OK) {
        printf("WebGPU: listing adapters failed: %s: %s\n", wt_status_string(s), wt_last_error());
        rc = 1;
    } else {
        printf("WebGPU adapters: %d\n", count);
        const wt_adapter_info *auto_choice = NULL;
        for (int i = 0; i < count && i < MAX_ADAPTERS; i++) {
            printf("\n");
            print_adapter(&adapters[i]);
            if (adapters[i].auto_choice) auto_choice = &adapters[i];
        }
        printf("\n");
        if (auto_choice)
            printf("AUTO takes adapter %d: %s (%s).\n", auto_choice->index, auto_choice->name,
                   api_name(auto_choice->api));
        else
            printf("AUTO takes no adapter (%s) and falls back to the CPU backend.\n",
                   count ? "only software renderers, slower than the CPU backend" : "none");
    }

    wt_context *ctx = NULL;
    s = wt_context_create(&opts, &ctx);
    if (s != WT_OK) {
        printf("default context: FAILED: %s: %s\n", wt_status_string(s), wt_last_error());
        print_knobs();
        return 1;
    }
    print_context(ctx, "default context");
    /* --- runtime: where AUTO took the CPU over adapters that exist, what
     * a WebGPU context asked for would run with (features, toggles). */
    bool cpu_default = wt_context_backend(ctx) == WT_BACKEND_CPU;
    wt_context_destroy(ctx);
    if (cpu_default && count > 0) {
        wt_context_options wopts = opts;
        wopts.backend = WT_BACKEND_WEBGPU;
        printf("\n");
        if ((s = wt_context_create(&wopts, &ctx)) == WT_OK) {
            print_context(ctx, "WebGPU context (WT_BACKEND_WEBGPU)");
            wt_context_destroy(ctx);
        } else {
            printf("WebGPU context (WT_BACKEND_WEBGPU): FAILED: %s: %s\n", wt_status_string(s),
                   wt_last_error());
        }
    }
    print_knobs();
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "info") == 0 && argc == 2) return cmd_info(false);
    if (strcmp(cmd, "info") == 0 && argc == 3 && strcmp(argv[2], "--experimental") == 0)
        return cmd_info(true);
    if (strcmp(cmd, "ops") == 0 && argc == 2) return ops_matrix_main();
    if (strcmp(cmd, "version") == 0 && argc == 2) {
        printf("webtensor %s (built against %s)\n", wt_version(), WT_VERSION_STRING);
        return 0;
    }
    if ((strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) &&
        argc == 2) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "bench") == 0) {
        for (int i = 2; i < argc; i++)
            if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
                bench_usage(stdout);
                return 0;
            }
        return bench_main(argc - 2, argv + 2);
    }
    bool known = strcmp(cmd, "info") == 0 || strcmp(cmd, "version") == 0 || strcmp(cmd, "help") == 0 ||
                 strcmp(cmd, "ops") == 0;
    fprintf(stderr, "webtensor: unknown %s: %s\n", known ? "argument" : "command",
            known ? argv[2] : cmd);
    usage(stderr);
    return 2;
}
