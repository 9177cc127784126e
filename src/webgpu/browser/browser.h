/* The WebGPU backend bound to the host's WebGPU (navigator.gpu in a
 * browser, or the same API in Node) for the WebAssembly build: the
 * webgpu.h entry points of src/webgpu/wgpu_abi.h implemented over the
 * JavaScript API with EM_JS / EM_ASYNC_JS, so the backend's native structs
 * compile unchanged for wasm32 and the loader fills its table from here
 * instead of from dlsym.
 *
 * Why our own binding and not Emscripten's: the toolchain here (Debian's
 * Emscripten 3.1.6) ships the webgpu.h of before 2024 under -sUSE_WEBGPU
 * (const char * labels, one-userdata callbacks, no WGPUStringView, no
 * futures or WaitAny), which the backend's structs and calls do not match;
 * its AdapterGetLimits and ProcessEvents abort as unimplemented, and it
 * calls pass.dispatch(), which current browsers removed. Newer Emscripten's
 * port of Dawn downloads itself at build time, which a build must not do.
 *
 * JavaScript objects live in a table (Module.wtgpu) under small integer
 * ids, which stand in for the C handles. Futures are ids as well; their
 * callbacks are kept on the C side and run from InstanceWaitAny or
 * InstanceProcessEvents, never from JavaScript, so no wasm code runs while
 * ASYNCIFY has the stack unwound. */
#ifndef WT_WEBGPU_BROWSER_H
#define WT_WEBGPU_BROWSER_H

#include "webgpu/wgpu_abi.h"

#include <stdint.h>

/* Every entry point of the table (browser_async.c fills the asynchronous
 * and instance/adapter/device ones, browser_objects.c the others). */
void wg_browser_procs(wgpu_procs *p);
void wg_browser_object_procs(wgpu_procs *p);

/* Handles are table ids. */
#define BR_ID(h) ((uint32_t)(uintptr_t)(h))
#define BR_HANDLE(type, id) ((type)(uintptr_t)(id))

/* A WGPUStringView as (pointer, byte count); -1: nul-terminated. */
static inline int br_len(WGPUStringView s)
{
    return !s.data ? 0 : s.length == WGPU_STRLEN ? -1 : (int)s.length;
}

/* JavaScript GPUFeatureName of a native feature value; NULL when the
 * host's API has no such feature. */
const char *wg_browser_feature_name(WGPUFeatureName f);

/* Frees the host copies of a buffer's mapped ranges (unmap, destroy). */
void wg_browser_drop_mirrors(WGPUBuffer buffer);

#endif
