/* Loads the WebGPU implementation (Dawn, or any library exporting the
 * standard webgpu.h entry points) at run time, so the library links and
 * runs without one and falls back to the CPU. */
#include "webgpu/wg_runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef WT_DEFAULT_WEBGPU_LIB
#define WT_DEFAULT_WEBGPU_LIB ""
#endif

#ifndef WT_BROWSER_WEBGPU /* the WebAssembly build binds the host's WebGPU (browser/) */
static wt_status resolve_procs(void *handle, const char *path, wgpu_procs *p)
{
#define WG_RESOLVE(name, ret, params)                                                          \
    {                                                                                          \
        void *sym = dlsym(handle, "wgpu" #name);                                               \
        if (!sym)                                                                              \
            return wt_fail(WT_ERR_NO_DEVICE, "webgpu: %s lacks the entry point wgpu" #name,    \
                           path);                                                              \
        /* dlsym returns data pointers; POSIX guarantees the conversion. */                    \
        memcpy(&p->name, &sym, sizeof sym);                                                    \
    }
    WGPU_PROC_LIST(WG_RESOLVE)
#undef WG_RESOLVE
    return WT_OK;
}

/* Process-wide set-up, once, before any environment read of this
 * library: setenv is not safe beside a getenv of another thread, so it
 * happens here, under pthread_once, which every context creation and
 * adapter listing passes first. Mesa's EGL needs a platform when there is
 * no display (Dawn's OpenGL ES backend goes through it); a value the user
 * set wins. */
static pthread_once_t process_once = PTHREAD_ONCE_INIT;
static void process_setup(void) { setenv("EGL_PLATFORM", "surfaceless", 0); }

wt_status wg_library_load(const char *requested_path, wg_library *out)
{
    pthread_once(&process_once, process_setup);
    memset(out, 0, sizeof *out);
    /* A library the caller names is the only one tried: silently running
     * on another implementation would hide the mistake. */
    const char *env = wt_knob_text(WT_KNOB_WEBGPU_LIB);
    const char *chain[] = {
        env, WT_DEFAULT_WEBGPU_LIB, "libwebgpu_dawn.so", "libwgpu_native.so",
    };
    const char *requested[] = {requested_path};
    const char **candidates = requested_path ? requested : chain;
    size_t ncandidates = requested_path ? 1 : sizeof chain / sizeof chain[0];
    char tried[1536] = "";
    size_t used = 0;
    for (size_t i = 0; i < ncandidates; i++) {
        const char *path = candidates[i];
        if (!path || !*path)
            continue;
        void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char *why = dlerror();
            int n = snprintf(tried + used, sizeof tried - used, "%s%s (%s)", used ? "; " : "",
                             path, why ? why : "not loadable");
            if (n > 0)
                used = used + (size_t)n < sizeof tried ? used + (size_t)n : sizeof tried - 1;
            continue;
        }
        wt_status st = resolve_procs(handle, path, &out->p);
        if (st != WT_OK) {
            dlclose(handle);
            memset(out, 0, sizeof *out);
            return st;
        }
        out->handle = handle;
        return WT_OK;
    }
    return wt_fail(WT_ERR_NO_DEVICE, "webgpu: no WebGPU library could be loaded; tried: %s",
                   used ? tried : "(no paths)");
}

void wg_library_unload(wg_library *lib)
{
    /* No dlclose: Dawn and the drivers it loads keep process-wide state
     * (threads, atexit handlers) that does not survive being unloaded.
     * dlopen counts references, so loading again is cheap. */
    memset(lib, 0, sizeof *lib);
}

void *wg_library_symbol(const wg_library *lib, const char *name)
{
    return lib->handle ? dlsym(lib->handle, name) : NULL;
}

void *wg_process_symbol(const char *name) { return dlsym(RTLD_DEFAULT, name); }
#else
void *wg_library_symbol(const wg_library *lib, const char *name)
{
    (void)lib;
    (void)name;
    return NULL; /* no library, no extras beyond the standard entry points */
}

void *wg_process_symbol(const char *name)
{
    (void)name;
    return NULL;
}
#endif

wt_status wg_wait(const wg_library *lib, WGPUInstance instance, WGPUFuture future,
                  const char *what)
{
    WGPUFutureWaitInfo info = {future, 0};
    /* Generous: software adapters compile big shaders slowly; a hung GPU
     * still comes back as an error instead of blocking forever. */
    const uint64_t timeout_ns = 120ull * 1000 * 1000 * 1000;
    WGPUWaitStatus st = lib->p.InstanceWaitAny(instance, 1, &info, timeout_ns);
    if (st == WGPUWaitStatus_Success && info.completed)
        return WT_OK;
    if (st == WGPUWaitStatus_TimedOut)
        return wt_fail(WT_ERR_BACKEND, "webgpu: %s did not complete within 120 s", what);
    return wt_fail(WT_ERR_BACKEND, "webgpu: waiting for %s failed (wait status %u)", what,
                   (unsigned)st);
}

void wg_copy_string(char *dst, size_t cap, WGPUStringView s)
{
    if (!cap)
        return;
    size_t n = 0;
    if (s.data)
        n = s.length == WGPU_STRLEN ? strlen(s.data) : s.length;
    if (n >= cap)
        n = cap - 1;
    if (n)
        memcpy(dst, s.data, n);
    dst[n] = '\0';
}
