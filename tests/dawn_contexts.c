/* dawn_contexts [n]: what Dawn (and the Vulkan driver under it) keeps when
 * devices are made and dropped in a loop, without webtensor: n times an
 * instance, a Vulkan adapter, a device with a small buffer, then all of
 * it destroyed and released. Prints the resident memory after 10 rounds
 * and after n, to set beside `soak vulkan 0 n` (webtensor contexts). Only
 * the library loader's dlsym table of src/webgpu is used. */
#include "webgpu/wg_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double rss_mib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
}

static void on_adapter(WGPURequestAdapterStatus status, WGPUAdapter adapter, WGPUStringView message,
                       void *userdata1, void *userdata2)
{
    (void)message;
    (void)userdata2;
    *(WGPUAdapter *)userdata1 = status == WGPURequestAdapterStatus_Success ? adapter : NULL;
}

static void on_device(WGPURequestDeviceStatus status, WGPUDevice device, WGPUStringView message,
                      void *userdata1, void *userdata2)
{
    (void)message;
    (void)userdata2;
    *(WGPUDevice *)userdata1 = status == WGPURequestDeviceStatus_Success ? device : NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100;
    wg_library lib;
    if (wg_library_load(NULL, &lib) != WT_OK) {
        fprintf(stderr, "dawn_contexts: %s\n", wt_last_error());
        return 1;
    }
    const wgpu_procs *p = &lib.p;
    double after10 = 0;
    for (long i = 0; i < n; i++) {
        WGPUInstance instance = NULL;
        if (wg_instance_create(&lib, &instance) != WT_OK) return 1;
        WGPURequestAdapterOptions opts;
        memset(&opts, 0, sizeof opts);
        opts.backendType = WGPUBackendType_Vulkan;
        opts.featureLevel = WGPUFeatureLevel_Core;
        WGPUAdapter adapter = NULL;
        WGPURequestAdapterCallbackInfo acb;
        memset(&acb, 0, sizeof acb);
        acb.mode = WGPUCallbackMode_WaitAnyOnly;
        acb.callback = on_adapter;
        acb.userdata1 = &adapter;
        if (wg_wait(&lib, instance, p->InstanceRequestAdapter(instance, &opts, acb), "adapter") != WT_OK ||
            !adapter) {
            fprintf(stderr, "dawn_contexts: no Vulkan adapter\n");
            return 1;
        }
        WGPUDevice device = NULL;
        WGPURequestDeviceCallbackInfo dcb;
        memset(&dcb, 0, sizeof dcb);
        dcb.mode = WGPUCallbackMode_WaitAnyOnly;
        dcb.callback = on_device;
        dcb.userdata1 = &device;
        if (wg_wait(&lib, instance, p->AdapterRequestDevice(adapter, NULL, dcb), "device") != WT_OK ||
            !device) {
            fprintf(stderr, "dawn_contexts: no device\n");
            return 1;
        }
        WGPUBufferDescriptor bd;
        memset(&bd, 0, sizeof bd);
        bd.usage = WGPUBufferUsage_Storage;
        bd.size = 1024;
        WGPUBuffer buffer = p->DeviceCreateBuffer(device, &bd);
        if (buffer) {
            p->BufferDestroy(buffer);
            p->BufferRelease(buffer);
        }
        p->DeviceDestroy(device);
        p->DeviceRelease(device);
        p->AdapterRelease(adapter);
        p->InstanceRelease(instance);
        if (i == 9) after10 = rss_mib();
    }
    double end = rss_mib();
    printf("dawn_contexts: %ld instance+adapter+device rounds; RSS after 10: %.1f MiB, after %ld: %.1f MiB "
           "(%.1f KiB per round)\n",
           n, after10, n, end, n > 10 ? (end - after10) * 1024.0 / (double)(n - 10) : 0.0);
    return 0;
}
