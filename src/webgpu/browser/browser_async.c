/* The host-WebGPU binding, part one: the object table, instance, adapter
 * and device, and everything that waits (futures, maps, error scopes,
 * device events). See browser.h for the design. */
#include "webgpu/browser/browser.h"
#include "webgpu/wg_runtime.h"

#include <emscripten.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ the JS side */

/* Makes Module.wtgpu once: the id table, futures and queued device
 * events. Returns whether the host has navigator.gpu. */
EM_JS(int, br_js_init, (void), {
    if (!Module.wtgpu) {
        var W = Module.wtgpu = {
            objs: new Map(), next: 1, fut: new Map(), events: [],
            add: function(o) { var id = W.next++; W.objs.set(id, o); return id; },
            get: function(id) { return W.objs.get(id); },
            str: function(p, n) { return p ? UTF8ToString(p, n < 0 ? undefined : n) : ""; },
            /* A future: done, status, handle (an id, or an error type),
             * msg. The promise f.p never rejects. */
            track: function(promise, ok, fail) {
                var id = W.next++;
                var f = { done: false, status: 0, handle: 0, msg: "" };
                f.p = Promise.resolve(promise).then(
                    function(v) { Object.assign(f, ok(v)); f.done = true; },
                    function(e) { Object.assign(f, fail(e)); f.done = true; });
                W.fut.set(id, f);
                return id;
            },
            /* Runs f(); an exception (the API throws only for malformed
             * arguments, reporting the rest as validation errors) becomes
             * an uncaptured validation error of every device, and 0. */
            guard: function(f) {
                try { return f(); } catch (e) {
                    W.events.push({ dev: 0, kind: 2, type: 2, msg: W.message(e) });
                    return 0;
                }
            },
            entries: [],
            settled: function(status, handle, msg) {
                var id = W.next++;
                var f = { done: true, status: status, handle: handle || 0, msg: msg || "" };
                f.p = Promise.resolve();
                W.fut.set(id, f);
                return id;
            },
            message: function(e) { return String(e && e.message !== undefined ? e.message : e); },
            errorType: function(e) {
                var n = e && e.constructor ? e.constructor.name : "";
                return n == "GPUValidationError" ? 2 : n == "GPUOutOfMemoryError" ? 3
                     : n == "GPUInternalError" ? 4 : 5;
            },
            /* One turn of the host's event loop (promises of the GPU
             * settle in tasks, not microtasks). */
            tick: function() {
                return new Promise(function(r) {
                    if (typeof setImmediate == "function") { setImmediate(r); return; }
                    var ch = new MessageChannel();
                    ch.port1.onmessage = function() { ch.port1.close(); r(); };
                    ch.port2.postMessage(0);
                });
            }
        };
    }
    return typeof navigator == "object" && navigator && navigator.gpu ? 1 : 0;
});

EM_JS(int, br_js_future_done, (uint32_t id), {
    var f = Module.wtgpu.fut.get(id);
    return f && f.done ? 1 : 0;
});

/* Fills status and handle; the message goes into msg (cap bytes). */
EM_JS(void, br_js_future_take, (uint32_t id, uint32_t *status, uint32_t *handle, char *msg,
                                int cap), {
    var W = Module.wtgpu, f = W.fut.get(id);
    W.fut.delete(id);
    HEAPU32[status >> 2] = f ? f.status : 0;
    HEAPU32[handle >> 2] = f ? f.handle : 0;
    stringToUTF8(f ? f.msg : "unknown future", msg, cap);
});

/* Suspends (ASYNCIFY) until one of n futures settles or timeout_ms pass:
 * 1 when one settled, 0 on time-out. */
EM_ASYNC_JS(int, br_js_future_wait, (const uint32_t *ids, int n, double timeout_ms), {
    var W = Module.wtgpu, ps = [];
    for (var i = 0; i < n; i++) {
        var f = W.fut.get(HEAPU32[(ids >> 2) + i]);
        if (f && f.done) return 1;
        if (f) ps.push(f.p.then(function() { return 1; }));
    }
    if (!ps.length) return 0;
    var timer;
    ps.push(new Promise(function(r) { timer = setTimeout(function() { r(0); }, timeout_ms); }));
    var r = await Promise.race(ps);
    clearTimeout(timer);
    return r;
});

EM_ASYNC_JS(void, br_js_yield, (void), { await Module.wtgpu.tick(); });

/* Next queued device event: 0 when none. kind 1: lost (type = reason),
 * 2: uncaptured error (type = WGPUErrorType). */
EM_JS(int, br_js_next_event, (uint32_t *dev, uint32_t *kind, uint32_t *type, char *msg, int cap), {
    var e = Module.wtgpu.events.shift();
    if (!e) return 0;
    HEAPU32[dev >> 2] = e.dev;
    HEAPU32[kind >> 2] = e.kind;
    HEAPU32[type >> 2] = e.type;
    stringToUTF8(e.msg, msg, cap);
    return 1;
});

EM_JS(void, br_js_release, (uint32_t id), { Module.wtgpu.objs.delete(id); });

EM_JS(uint32_t, br_js_unavailable, (void), {
    return Module.wtgpu.settled(3, 0, "the host's WebGPU picks the native API itself");
});

/* Adapter request; power 1 low-power, 2 high-performance. */
EM_JS(uint32_t, br_js_request_adapter, (int power, int fallback), {
    var W = Module.wtgpu;
    if (typeof navigator != "object" || !navigator || !navigator.gpu)
        return W.settled(3, 0, "this host has no WebGPU (navigator.gpu is missing)");
    var opts = {};
    if (power == 1) opts.powerPreference = "low-power";
    if (power == 2) opts.powerPreference = "high-performance";
    if (fallback) opts.forceFallbackAdapter = true;
    return W.track(navigator.gpu.requestAdapter(opts),
        function(a) { if (a) a.wtOpts = opts; /* for a fresh adapter on recovery */
                      return a ? { status: 1, handle: W.add(a) }
                               : { status: 3, msg: "navigator.gpu.requestAdapter() returned null" }; },
        function(e) { return { status: 4, msg: W.message(e) }; });
});

/* Adapter strings. which: 0 vendor, 1 architecture, 2 device (the name:
 * browsers may leave device and description empty, then vendor and
 * architecture name it), 3 description. Returns the byte length; copies
 * when dst is not NULL. */
EM_JS(int, br_js_adapter_string, (uint32_t id, int which, char *dst, int cap), {
    var a = Module.wtgpu.get(id), i = (a && a.info) || {};
    var s = which == 0 ? i.vendor : which == 1 ? i.architecture : which == 3 ? i.description
          : (i.device || i.description ||
             [i.vendor, i.architecture].filter(function(x) { return !!x; }).join(" ") ||
             "WebGPU adapter");
    s = String(s || "");
    if (dst) stringToUTF8(s, dst, cap);
    return lengthBytesUTF8(s);
});

/* The adapter's subgroup-matrix configs (info.subgroupMatrixConfigs, where
 * the host has chromium-experimental-subgroup-matrix) as five u32 each
 * (component, result, M, N, K; component types numbered as Dawn's C API:
 * 1 f32, 2 f16, 3 u32, 4 i32, 5 u8, 6 i8) into out, at most cap configs;
 * returns how many there are. */
EM_JS(int, br_js_matrix_configs, (uint32_t id, uint32_t *out, int cap), {
    var a = Module.wtgpu.get(id), i = (a && a.info) || {}, list = i.subgroupMatrixConfigs || [];
    var kinds = { f32: 1, f16: 2, u32: 3, i32: 4, u8: 5, i8: 6 };
    for (var k = 0; k < list.length && k < cap; k++) {
        var c = list[k], o = (out >> 2) + 5 * k;
        HEAPU32[o] = kinds[c.componentType] || 0;
        HEAPU32[o + 1] = kinds[c.resultComponentType] || 0;
        HEAPU32[o + 2] = c.M >>> 0;
        HEAPU32[o + 3] = c.N >>> 0;
        HEAPU32[o + 4] = c.K >>> 0;
    }
    return list.length;
});

/* 1 when the adapter is a software renderer (a fallback adapter, or named
 * like SwiftShader and llvmpipe); info.subgroupMin/MaxSize into out[0..1]. */
EM_JS(int, br_js_adapter_software, (uint32_t id, uint32_t *subgroups), {
    var a = Module.wtgpu.get(id), i = (a && a.info) || {};
    HEAPU32[subgroups >> 2] = i.subgroupMinSize || 0;
    HEAPU32[(subgroups >> 2) + 1] = i.subgroupMaxSize || 0;
    var names = [i.vendor, i.architecture, i.device, i.description].join(" ");
    return a && (a.isFallbackAdapter || i.isFallbackAdapter ||
                 /swiftshader|llvmpipe|lavapipe|softpipe/i.test(names)) ? 1 : 0;
});

/* A limit of an adapter or device by its JavaScript name; -1 if absent. */
EM_JS(double, br_js_limit, (uint32_t id, const char *name), {
    var o = Module.wtgpu.get(id), l = o && o.limits, v = l ? l[UTF8ToString(name)] : undefined;
    return typeof v == "number" ? v : -1;
});

EM_JS(int, br_js_has_feature, (uint32_t id, const char *name), {
    var o = Module.wtgpu.get(id);
    return o && o.features && o.features.has(UTF8ToString(name)) ? 1 : 0;
});

/* WebGPU compatibility mode (only an adapter asked for it reports it). */
EM_JS(int, br_js_is_compat, (uint32_t id), {
    var o = Module.wtgpu.get(id);
    return o && o.featureLevel == "compatibility" ? 1 : 0;
});

/* The device with the named features (comma-separated) and every limit
 * the adapter reports raised to the adapter's value.
 *
 * The JavaScript API lets an adapter make one device: a second request
 * (wt_context_recover after a loss) would fail with "adapter consumed". So
 * the second time, a fresh adapter is requested with the original's
 * options, preferring one of the same vendor and architecture (the same
 * GPU, as far as the host tells), and takes the old one's place under
 * the same id, so the C handle stays valid. The features asked for stay
 * those the original offered: a fresh adapter without one refuses the
 * device, and recovery fails with the host's reason rather than running
 * on a device the backend misjudges. */
EM_JS(uint32_t, br_js_request_device, (uint32_t adapter, const char *features, const char *label,
                                       int label_len), {
    var W = Module.wtgpu, a = W.get(adapter);
    if (!a) return W.settled(3, 0, "no such adapter");
    var names = UTF8ToString(features).split(",").filter(function(x) { return !!x; });
    var text = W.str(label, label_len);
    function ask(ad) {
        var limits = {};
        for (var k in ad.limits) {
            var v = ad.limits[k];
            if (typeof v == "number") limits[k] = v;
        }
        ad.wtUsed = true;
        return ad.requestDevice({ label: text, requiredFeatures: names, requiredLimits: limits });
    }
    function fresh(old) {
        var opts = old.wtOpts || {}, want = old.info || {}, first = null;
        var tries = [opts, Object.assign({}, opts, { powerPreference: "high-performance" }),
                     Object.assign({}, opts, { powerPreference: "low-power" })];
        function same(b) {
            var i = b.info || {};
            return i.vendor == want.vendor && i.architecture == want.architecture;
        }
        function next(k) {
            if (k == tries.length) {
                if (first) return first;
                throw new Error("navigator.gpu.requestAdapter() returned null: no adapter for a new device");
            }
            return navigator.gpu.requestAdapter(tries[k]).then(function(b) {
                if (b && same(b)) return b;
                if (b && !first) first = b;
                return next(k + 1);
            });
        }
        return next(0);
    }
    var p;
    try {
        p = !a.wtUsed ? ask(a) : fresh(a).then(function(b) {
            W.objs.set(adapter, b);
            return ask(b);
        });
    } catch (e) { p = Promise.reject(e); }
    return W.track(p, function(d) {
        var id = W.add(d);
        d.lost.then(function(info) {
            if (d.wtDestroyReported) return;
            W.events.push({ dev: id, kind: 1, type: info.reason == "destroyed" ? 2 : 1,
                            msg: String(info.message || "") });
        });
        d.addEventListener("uncapturederror", function(ev) {
            W.events.push({ dev: id, kind: 2, type: W.errorType(ev.error),
                            msg: W.message(ev.error) });
        });
        return { status: 1, handle: id };
    }, function(e) { return { status: 3, msg: W.message(e) }; });
});

EM_JS(uint32_t, br_js_device_queue, (uint32_t dev), {
    var W = Module.wtgpu, d = W.get(dev);
    return d ? W.add(d.queue) : 0;
});

/* destroy(): the lost event (reason Destroyed) is queued at once, as
 * Dawn delivers it from the next ProcessEvents; the promise's later one
 * is dropped. */
EM_JS(void, br_js_device_destroy, (uint32_t dev), {
    var W = Module.wtgpu, d = W.get(dev);
    if (!d) return;
    if (!d.wtDestroyReported) {
        d.wtDestroyReported = true;
        W.events.push({ dev: dev, kind: 1, type: 2, msg: "the device was destroyed" });
    }
    d.destroy();
});

EM_JS(void, br_js_push_scope, (uint32_t dev, int filter), {
    var d = Module.wtgpu.get(dev);
    if (d) d.pushErrorScope(filter == 2 ? "out-of-memory" : filter == 3 ? "internal" : "validation");
});

/* The popped scope's error as (status Success, handle = WGPUErrorType). */
EM_JS(uint32_t, br_js_pop_scope, (uint32_t dev), {
    var W = Module.wtgpu, d = W.get(dev);
    if (!d) return W.settled(3, 0, "no such device");
    var p;
    try { p = d.popErrorScope(); } catch (e) { p = Promise.reject(e); }
    return W.track(p, function(e) {
        return e ? { status: 1, handle: W.errorType(e), msg: W.message(e) } : { status: 1, handle: 1 };
    }, function(e) { return { status: 3, msg: W.message(e) }; });
});

EM_JS(uint32_t, br_js_work_done, (uint32_t queue), {
    var W = Module.wtgpu, q = W.get(queue);
    if (!q) return W.settled(3, 0, "no such queue");
    return W.track(q.onSubmittedWorkDone(), function() { return { status: 1 }; },
                   function(e) { return { status: 3, msg: W.message(e) }; });
});

/* size < 0: the rest of the buffer. */
EM_JS(uint32_t, br_js_map_async, (uint32_t buffer, int mode, double offset, double size), {
    var W = Module.wtgpu, b = W.get(buffer);
    if (!b) return W.settled(3, 0, "no such buffer");
    var p;
    try { p = size < 0 ? b.mapAsync(mode, offset) : b.mapAsync(mode, offset, size); }
    catch (e) { p = Promise.reject(e); }
    return W.track(p, function() { return { status: 1 }; }, function(e) {
        return { status: e && e.name == "AbortError" ? 4 : 3, msg: W.message(e) };
    });
});

/* getMappedRange(offset, size): the range's length (-1 on error), kept
 * on the buffer until unmap (the host refuses a second overlapping
 * getMappedRange), then copied into wasm memory at dst (cap bytes) when
 * dst is not NULL. */
EM_JS(double, br_js_mapped_copy, (uint32_t buffer, double offset, double size, void *dst,
                                  double cap), {
    var b = Module.wtgpu.get(buffer);
    try {
        var key = offset + ":" + size;
        b.wtRanges = b.wtRanges || {};
        var r = b.wtRanges[key];
        if (!r) {
            r = new Uint8Array(size < 0 ? b.getMappedRange(offset) : b.getMappedRange(offset, size));
            b.wtRanges[key] = r;
        }
        if (dst && r.length <= cap) HEAPU8.set(r, dst);
        return r.length;
    } catch (e) { return -1; }
});

/* ------------------------------------------------------ the C side */

typedef void (*br_fn)(void);

enum br_kind { BR_ADAPTER, BR_DEVICE, BR_POP, BR_MAP, BR_WORK_DONE };

typedef struct br_future {
    uint32_t id;
    enum br_kind kind;
    WGPUCallbackMode mode;
    br_fn fn;
    void *u1, *u2;
} br_future;

/* Device callbacks, by device id. */
typedef struct br_device {
    uint32_t id;
    WGPUDeviceLostCallbackInfo lost;
    WGPUUncapturedErrorCallbackInfo error;
} br_device;

static br_future *g_futures;
static int g_nfutures, g_cap_futures;
static br_device *g_devices;
static int g_ndevices, g_cap_devices;

/* Room for one more of count items of size bytes in *items (capacity
 * *cap): false when out of memory (the list stays as it was). Used as
 * BR_RESERVE(list, cap, count). */
static bool br_reserve(void **items, int *cap, int count, size_t size)
{
    if (count < *cap)
        return true;
    int grown_cap = *cap ? 2 * *cap : 8;
    void *grown = realloc(*items, (size_t)grown_cap * size);
    if (!grown)
        return false;
    *items = grown;
    *cap = grown_cap;
    return true;
}
#define BR_RESERVE(list, cap, count) \
    br_reserve_into((void *)&(list), &(cap), (count), sizeof *(list))
/* Goes through a void * copy: the list is never accessed as a void *. */
static bool br_reserve_into(void *list_ptr, int *cap, int count, size_t size)
{
    void *items;
    memcpy(&items, list_ptr, sizeof items);
    if (!br_reserve(&items, cap, count, size))
        return false;
    memcpy(list_ptr, &items, sizeof items);
    return true;
}

/* A future whose callback could not be recorded (out of memory) is still
 * a future: it completes with no callback. */
static WGPUFuture br_future_add(uint32_t id, enum br_kind kind, WGPUCallbackMode mode, br_fn fn,
                                void *u1, void *u2)
{
    if (!BR_RESERVE(g_futures, g_cap_futures, g_nfutures))
        return (WGPUFuture){id};
    g_futures[g_nfutures++] = (br_future){id, kind, mode, fn, u1, u2};
    return (WGPUFuture){id};
}

/* A device request's callbacks are kept under the request's future id
 * (with the top bit set) until the device exists; then under its id, or
 * dropped when the request failed. */
static void br_adopt_device(uint32_t request, uint32_t device)
{
    for (int i = 0; i < g_ndevices; i++)
        if (g_devices[i].id == (request | 0x80000000u)) {
            if (device)
                g_devices[i].id = device;
            else
                g_devices[i] = g_devices[--g_ndevices];
            return;
        }
}

/* Runs the callback of a settled future and forgets it. */
static void br_complete(int index)
{
    br_future f = g_futures[index];
    g_futures[index] = g_futures[--g_nfutures]; /* before the callback: it may add futures */
    uint32_t status = 0, handle = 0;
    char msg[1024];
    br_js_future_take(f.id, &status, &handle, msg, (int)sizeof msg);
    WGPUStringView m = {msg, WGPU_STRLEN};
    if (!f.fn)
        return;
    switch (f.kind) {
    case BR_ADAPTER:
        ((WGPURequestAdapterCallback)f.fn)(status, BR_HANDLE(WGPUAdapter, handle), m, f.u1, f.u2);
        break;
    case BR_DEVICE:
        br_adopt_device(f.id, status == WGPURequestDeviceStatus_Success ? handle : 0);
        if (status != WGPURequestDeviceStatus_Success)
            handle = 0;
        ((WGPURequestDeviceCallback)f.fn)(status, BR_HANDLE(WGPUDevice, handle), m, f.u1, f.u2);
        break;
    case BR_POP:
        ((WGPUPopErrorScopeCallback)f.fn)(status, status == WGPUPopErrorScopeStatus_Success
                                                      ? handle : WGPUErrorType_Unknown,
                                          m, f.u1, f.u2);
        break;
    case BR_MAP:
        ((WGPUBufferMapCallback)f.fn)(status, m, f.u1, f.u2);
        break;
    case BR_WORK_DONE:
        ((WGPUQueueWorkDoneCallback)f.fn)(status, m, f.u1, f.u2);
        break;
    }
}

/* Delivers queued device-lost and uncaptured-error events to the devices
 * still alive (a released device's events are dropped). */
static void br_deliver_device_events(void)
{
    uint32_t dev, kind, type;
    char msg[1024];
    while (br_js_next_event(&dev, &kind, &type, msg, (int)sizeof msg)) {
        WGPUStringView m = {msg, WGPU_STRLEN};
        for (int i = 0; i < g_ndevices; i++) {
            br_device *d = &g_devices[i];
            if ((dev && d->id != dev) || (d->id & 0x80000000u))
                continue;
            WGPUDevice h = BR_HANDLE(WGPUDevice, d->id);
            if (kind == 1 && d->lost.callback) {
                WGPUDeviceLostCallbackInfo cb = d->lost;
                d->lost.callback = NULL; /* once */
                cb.callback(&h, type, m, cb.userdata1, cb.userdata2);
            } else if (kind == 2 && d->error.callback) {
                WGPUUncapturedErrorCallbackInfo cb = d->error;
                cb.callback(&h, type, m, cb.userdata1, cb.userdata2);
            }
        }
    }
}

static int br_find_future(uint64_t id)
{
    for (int i = 0; i < g_nfutures; i++)
        if (g_futures[i].id == id)
            return i;
    return -1;
}

/* ------------------------------------------------- instance, waiting */

static WGPUInstance br_CreateInstance(const WGPUInstanceDescriptor *descriptor)
{
    (void)descriptor;
    br_js_init();
    return BR_HANDLE(WGPUInstance, 1); /* one host, one instance */
}

static void br_InstanceRelease(WGPUInstance instance) { (void)instance; }

static WGPUWaitStatus br_InstanceWaitAny(WGPUInstance instance, size_t count,
                                         WGPUFutureWaitInfo *futures, uint64_t timeout_ns)
{
    (void)instance;
    if (count == 0)
        return WGPUWaitStatus_Success;
    uint32_t ids[16];
    if (count > sizeof ids / sizeof ids[0])
        return WGPUWaitStatus_Error;
    for (size_t i = 0; i < count; i++) {
        futures[i].completed = 0;
        ids[i] = (uint32_t)futures[i].future.id;
        if (br_find_future(futures[i].future.id) < 0)
            return WGPUWaitStatus_Error;
    }
    bool any = false;
    for (;;) {
        for (size_t i = 0; i < count; i++) {
            int at = br_find_future(futures[i].future.id);
            if (at >= 0 && br_js_future_done(ids[i])) {
                br_complete(at);
                futures[i].completed = 1;
                any = true;
            }
        }
        if (any || timeout_ns == 0)
            break;
        if (!br_js_future_wait(ids, (int)count, (double)timeout_ns / 1e6))
            break;
    }
    br_deliver_device_events();
    return any ? WGPUWaitStatus_Success : WGPUWaitStatus_TimedOut;
}

/* One turn of the host's event loop (a GPU promise settles only there),
 * then every settled future not reserved for WaitAny, and device events. */
static void br_InstanceProcessEvents(WGPUInstance instance)
{
    (void)instance;
    br_js_yield();
    for (int i = 0; i < g_nfutures;) {
        if (g_futures[i].mode != WGPUCallbackMode_WaitAnyOnly && br_js_future_done(g_futures[i].id))
            br_complete(i); /* moved the last one here: look at i again */
        else
            i++;
    }
    br_deliver_device_events();
}

/* ---------------------------------------------------------- adapters */

static WGPUFuture br_InstanceRequestAdapter(WGPUInstance instance,
                                            const WGPURequestAdapterOptions *options,
                                            WGPURequestAdapterCallbackInfo cb)
{
    (void)instance;
    uint32_t id;
    /* The host chooses the native API; only requests for any API (or for
     * WebGPU itself) are answered, so the per-API requests of the
     * adapter listing find nothing and the listing shows one adapter. */
    if (options && options->backendType != WGPUBackendType_Undefined &&
        options->backendType != WGPUBackendType_WebGPU)
        id = 0;
    else
        id = br_js_request_adapter(options ? (int)options->powerPreference : 0,
                                   options ? (int)options->forceFallbackAdapter : 0);
    if (!id)
        id = br_js_unavailable();
    return br_future_add(id, BR_ADAPTER, cb.mode, (br_fn)cb.callback, cb.userdata1, cb.userdata2);
}

static char *br_adapter_string(uint32_t id, int which, size_t *len)
{
    int n = br_js_adapter_string(id, which, NULL, 0);
    char *s = malloc((size_t)n + 1);
    if (!s) {
        *len = 0;
        return NULL;
    }
    br_js_adapter_string(id, which, s, n + 1);
    *len = (size_t)n;
    return s;
}

static WGPUStatus br_AdapterGetInfo(WGPUAdapter adapter, WGPUAdapterInfo *info)
{
    uint32_t id = BR_ID(adapter);
    WGPUChainedStruct *chain = info->nextInChain;
    memset(info, 0, sizeof *info);
    info->nextInChain = chain;
    /* Of the chained properties, the subgroup-matrix configs are filled
     * (malloc'd: the caller frees configs, as Dawn's FreeMembers would). */
    for (WGPUChainedStruct *c = chain; c; c = (WGPUChainedStruct *)c->next) {
        if (c->sType != WGPUSType_AdapterPropertiesSubgroupMatrixConfigs) continue;
        WGPUAdapterPropertiesSubgroupMatrixConfigs *m = (WGPUAdapterPropertiesSubgroupMatrixConfigs *)c;
        uint32_t raw[16 * 5];
        int n = br_js_matrix_configs(id, raw, 16);
        if (n > 16) n = 16;
        WGPUSubgroupMatrixConfig *list = n > 0 ? malloc((size_t)n * sizeof *list) : NULL;
        m->configCount = list ? (size_t)n : 0;
        m->configs = list;
        for (int k = 0; list && k < n; k++)
            list[k] = (WGPUSubgroupMatrixConfig){raw[5 * k], raw[5 * k + 1], raw[5 * k + 2], raw[5 * k + 3],
                                                 raw[5 * k + 4]};
    }
    WGPUStringView *fields[4] = {&info->vendor, &info->architecture, &info->device,
                                 &info->description};
    for (int i = 0; i < 4; i++) {
        size_t n;
        char *s = br_adapter_string(id, i, &n);
        if (!s) {
            for (int j = 0; j < i; j++)
                free((void *)fields[j]->data);
            memset(info, 0, sizeof *info);
            return WGPUStatus_Error;
        }
        *fields[i] = (WGPUStringView){s, n};
    }
    uint32_t subgroups[2] = {0, 0};
    info->adapterType =
        br_js_adapter_software(id, subgroups) ? WGPUAdapterType_CPU : WGPUAdapterType_Unknown;
    info->backendType = WGPUBackendType_WebGPU;
    info->subgroupMinSize = subgroups[0];
    info->subgroupMaxSize = subgroups[1];
    return WGPUStatus_Success;
}

static void br_AdapterInfoFreeMembers(WGPUAdapterInfo info)
{
    free((void *)info.vendor.data);
    free((void *)info.architecture.data);
    free((void *)info.device.data);
    free((void *)info.description.data);
}

/* The limits of an adapter or device (same JavaScript names). */
static void br_read_limits(uint32_t id, WGPULimits *l)
{
    WGPUChainedStruct *chain = l->nextInChain;
    memset(l, 0, sizeof *l);
    l->nextInChain = chain;
#define BR_LIMIT(field, type)                                 \
    {                                                         \
        double v = br_js_limit(id, #field);                   \
        l->field = v < 0 ? 0 : (type)v;                       \
    }
    BR_LIMIT(maxTextureDimension1D, uint32_t)
    BR_LIMIT(maxTextureDimension2D, uint32_t)
    BR_LIMIT(maxTextureDimension3D, uint32_t)
    BR_LIMIT(maxTextureArrayLayers, uint32_t)
    BR_LIMIT(maxBindGroups, uint32_t)
    BR_LIMIT(maxBindGroupsPlusVertexBuffers, uint32_t)
    BR_LIMIT(maxBindingsPerBindGroup, uint32_t)
    BR_LIMIT(maxDynamicUniformBuffersPerPipelineLayout, uint32_t)
    BR_LIMIT(maxDynamicStorageBuffersPerPipelineLayout, uint32_t)
    BR_LIMIT(maxSampledTexturesPerShaderStage, uint32_t)
    BR_LIMIT(maxSamplersPerShaderStage, uint32_t)
    BR_LIMIT(maxStorageBuffersPerShaderStage, uint32_t)
    BR_LIMIT(maxStorageTexturesPerShaderStage, uint32_t)
    BR_LIMIT(maxUniformBuffersPerShaderStage, uint32_t)
    BR_LIMIT(maxUniformBufferBindingSize, uint64_t)
    BR_LIMIT(maxStorageBufferBindingSize, uint64_t)
    BR_LIMIT(minUniformBufferOffsetAlignment, uint32_t)
    BR_LIMIT(minStorageBufferOffsetAlignment, uint32_t)
    BR_LIMIT(maxVertexBuffers, uint32_t)
    BR_LIMIT(maxBufferSize, uint64_t)
    BR_LIMIT(maxVertexAttributes, uint32_t)
    BR_LIMIT(maxVertexBufferArrayStride, uint32_t)
    BR_LIMIT(maxInterStageShaderVariables, uint32_t)
    BR_LIMIT(maxColorAttachments, uint32_t)
    BR_LIMIT(maxColorAttachmentBytesPerSample, uint32_t)
    BR_LIMIT(maxComputeWorkgroupStorageSize, uint32_t)
    BR_LIMIT(maxComputeInvocationsPerWorkgroup, uint32_t)
    BR_LIMIT(maxComputeWorkgroupSizeX, uint32_t)
    BR_LIMIT(maxComputeWorkgroupSizeY, uint32_t)
    BR_LIMIT(maxComputeWorkgroupSizeZ, uint32_t)
    BR_LIMIT(maxComputeWorkgroupsPerDimension, uint32_t)
    BR_LIMIT(maxImmediateSize, uint32_t)
#undef BR_LIMIT
}

static WGPUStatus br_AdapterGetLimits(WGPUAdapter adapter, WGPULimits *limits)
{
    br_read_limits(BR_ID(adapter), limits);
    return WGPUStatus_Success;
}

static WGPUStatus br_DeviceGetLimits(WGPUDevice device, WGPULimits *limits)
{
    br_read_limits(BR_ID(device), limits);
    return WGPUStatus_Success;
}

/* The native feature values (the pinned ABI's numbering) by their
 * JavaScript names. */
static const struct {
    WGPUFeatureName value;
    const char *name;
} br_features[] = {
    {WGPUFeatureName_TimestampQuery, "timestamp-query"},
    {WGPUFeatureName_ShaderF16, "shader-f16"},
    {WGPUFeatureName_Subgroups, "subgroups"},
    {WGPUFeatureName_CoreFeaturesAndLimits, "core-features-and-limits"},
    {WGPUFeatureName_ChromiumExperimentalSubgroupMatrix, "chromium-experimental-subgroup-matrix"},
};

const char *wg_browser_feature_name(WGPUFeatureName f)
{
    for (size_t i = 0; i < sizeof br_features / sizeof br_features[0]; i++)
        if (br_features[i].value == f)
            return br_features[i].name;
    return NULL;
}

static WGPUBool br_has_feature(uint32_t id, WGPUFeatureName f)
{
    /* A browser's adapter is a core one unless compatibility mode was
     * asked for; older browsers do not list core-features-and-limits. */
    if (f == WGPUFeatureName_CoreFeaturesAndLimits)
        return !br_js_is_compat(id);
    const char *name = wg_browser_feature_name(f);
    return name && br_js_has_feature(id, name);
}

static WGPUBool br_AdapterHasFeature(WGPUAdapter adapter, WGPUFeatureName feature)
{
    return br_has_feature(BR_ID(adapter), feature);
}

static WGPUBool br_DeviceHasFeature(WGPUDevice device, WGPUFeatureName feature)
{
    return br_has_feature(BR_ID(device), feature);
}

static void br_AdapterGetFeatures(WGPUAdapter adapter, WGPUSupportedFeatures *features)
{
    const size_t n = sizeof br_features / sizeof br_features[0];
    WGPUFeatureName *list = malloc(n * sizeof *list);
    size_t count = 0;
    for (size_t i = 0; list && i < n; i++)
        if (br_has_feature(BR_ID(adapter), br_features[i].value))
            list[count++] = br_features[i].value;
    features->featureCount = count;
    features->features = list;
}

static void br_SupportedFeaturesFreeMembers(WGPUSupportedFeatures features)
{
    free((void *)features.features);
}

static void br_AdapterRelease(WGPUAdapter adapter) { br_js_release(BR_ID(adapter)); }

/* ----------------------------------------------------------- devices */

static WGPUFuture br_AdapterRequestDevice(WGPUAdapter adapter,
                                          const WGPUDeviceDescriptor *desc,
                                          WGPURequestDeviceCallbackInfo cb)
{
    char names[256] = "";
    size_t used = 0;
    for (size_t i = 0; desc && i < desc->requiredFeatureCount; i++) {
        const char *name = wg_browser_feature_name(desc->requiredFeatures[i]);
        size_t n = name ? strlen(name) : 0;
        if (!n || used + n + 2 > sizeof names)
            continue; /* not a host feature: the device will not have it */
        if (used)
            names[used++] = ',';
        memcpy(names + used, name, n + 1);
        used += n;
    }
    uint32_t id = br_js_request_device(BR_ID(adapter), names, desc ? desc->label.data : NULL,
                                       desc ? br_len(desc->label) : 0);
    WGPUFuture f =
        br_future_add(id, BR_DEVICE, cb.mode, (br_fn)cb.callback, cb.userdata1, cb.userdata2);
    if (desc && (desc->deviceLostCallbackInfo.callback || desc->uncapturedErrorCallbackInfo.callback)) {
        if (!BR_RESERVE(g_devices, g_cap_devices, g_ndevices))
            return f;
        g_devices[g_ndevices++] =
            (br_device){id | 0x80000000u, desc->deviceLostCallbackInfo,
                        desc->uncapturedErrorCallbackInfo};
    }
    return f;
}

static WGPUQueue br_DeviceGetQueue(WGPUDevice device)
{
    return BR_HANDLE(WGPUQueue, br_js_device_queue(BR_ID(device)));
}

static void br_DeviceDestroy(WGPUDevice device) { br_js_device_destroy(BR_ID(device)); }

static void br_DeviceRelease(WGPUDevice device)
{
    uint32_t id = BR_ID(device);
    for (int i = 0; i < g_ndevices; i++)
        if (g_devices[i].id == id) {
            g_devices[i] = g_devices[--g_ndevices];
            break;
        }
    br_js_release(id);
}

static void br_DevicePushErrorScope(WGPUDevice device, WGPUErrorFilter filter)
{
    br_js_push_scope(BR_ID(device), (int)filter);
}

static WGPUFuture br_DevicePopErrorScope(WGPUDevice device, WGPUPopErrorScopeCallbackInfo cb)
{
    return br_future_add(br_js_pop_scope(BR_ID(device)), BR_POP, cb.mode, (br_fn)cb.callback,
                         cb.userdata1, cb.userdata2);
}

static WGPUFuture br_QueueOnSubmittedWorkDone(WGPUQueue queue, WGPUQueueWorkDoneCallbackInfo cb)
{
    return br_future_add(br_js_work_done(BR_ID(queue)), BR_WORK_DONE, cb.mode, (br_fn)cb.callback,
                         cb.userdata1, cb.userdata2);
}

/* ------------------------------------------------------------- maps */

/* Host copies handed out by GetConstMappedRange, freed at unmap. */
typedef struct br_mirror {
    uint32_t buffer;
    void *data;
} br_mirror;
static br_mirror *g_mirrors;
static int g_nmirrors, g_cap_mirrors;

static WGPUFuture br_BufferMapAsync(WGPUBuffer buffer, WGPUMapMode mode, size_t offset,
                                    size_t size, WGPUBufferMapCallbackInfo cb)
{
    uint32_t id = br_js_map_async(BR_ID(buffer), (int)mode, (double)offset,
                                  size == SIZE_MAX ? -1.0 : (double)size);
    return br_future_add(id, BR_MAP, cb.mode, (br_fn)cb.callback, cb.userdata1, cb.userdata2);
}

static const void *br_BufferGetConstMappedRange(WGPUBuffer buffer, size_t offset, size_t size)
{
    const double want = size == SIZE_MAX ? -1.0 : (double)size;
    double len = br_js_mapped_copy(BR_ID(buffer), (double)offset, want, NULL, 0);
    if (len < 0 || len > (double)(SIZE_MAX - 1))
        return NULL;
    if (!BR_RESERVE(g_mirrors, g_cap_mirrors, g_nmirrors))
        return NULL;
    void *data = malloc(len > 0 ? (size_t)len : 1);
    if (!data)
        return NULL;
    if (br_js_mapped_copy(BR_ID(buffer), (double)offset, want, data, len) != len) {
        free(data);
        return NULL;
    }
    g_mirrors[g_nmirrors++] = (br_mirror){BR_ID(buffer), data};
    return data;
}

void wg_browser_drop_mirrors(WGPUBuffer buffer)
{
    for (int i = 0; i < g_nmirrors;) {
        if (g_mirrors[i].buffer == BR_ID(buffer)) {
            free(g_mirrors[i].data);
            g_mirrors[i] = g_mirrors[--g_nmirrors];
        } else {
            i++;
        }
    }
}

/* ------------------------------------------------------------ table */

void wg_browser_procs(wgpu_procs *p)
{
    memset(p, 0, sizeof *p);
    wg_browser_object_procs(p);
    p->CreateInstance = br_CreateInstance;
    p->InstanceRelease = br_InstanceRelease;
    p->InstanceRequestAdapter = br_InstanceRequestAdapter;
    p->InstanceWaitAny = br_InstanceWaitAny;
    p->InstanceProcessEvents = br_InstanceProcessEvents;
    p->AdapterGetInfo = br_AdapterGetInfo;
    p->AdapterInfoFreeMembers = br_AdapterInfoFreeMembers;
    p->AdapterGetLimits = br_AdapterGetLimits;
    p->AdapterHasFeature = br_AdapterHasFeature;
    p->AdapterGetFeatures = br_AdapterGetFeatures;
    p->SupportedFeaturesFreeMembers = br_SupportedFeaturesFreeMembers;
    p->AdapterRequestDevice = br_AdapterRequestDevice;
    p->AdapterRelease = br_AdapterRelease;
    p->DeviceGetLimits = br_DeviceGetLimits;
    p->DeviceHasFeature = br_DeviceHasFeature;
    p->DeviceGetQueue = br_DeviceGetQueue;
    p->DevicePushErrorScope = br_DevicePushErrorScope;
    p->DevicePopErrorScope = br_DevicePopErrorScope;
    p->DeviceDestroy = br_DeviceDestroy;
    p->DeviceRelease = br_DeviceRelease;
    p->QueueOnSubmittedWorkDone = br_QueueOnSubmittedWorkDone;
    p->BufferMapAsync = br_BufferMapAsync;
    p->BufferGetConstMappedRange = br_BufferGetConstMappedRange;
}

/* The loader's entry (loader.c has the native one): the table comes from
 * this binding; no library is loaded. */
wt_status wg_library_load(const char *requested_path, wg_library *out)
{
    memset(out, 0, sizeof *out);
    if (requested_path && *requested_path)
        return wt_fail(WT_ERR_NO_DEVICE,
                       "webgpu: the WebAssembly build runs on the host's WebGPU (navigator.gpu) "
                       "and loads no library (asked for %s)",
                       requested_path);
    wg_browser_procs(&out->p);
    return WT_OK;
}

void wg_library_unload(wg_library *lib) { memset(lib, 0, sizeof *lib); }
