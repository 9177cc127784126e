/* Section 1 of webtensor.h: errors and version, after the macros every part uses. */
#ifndef WEBTENSOR_ERRORS_H
#define WEBTENSOR_ERRORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WT_VERSION_MAJOR 0
#define WT_VERSION_MINOR 1
#define WT_VERSION_PATCH 0
#define WT_VERSION_STRING "0.1.0"

/* Largest number of dimensions a tensor may have. */
#define WT_MAX_DIMS 8

#if defined(_WIN32) && defined(WT_BUILD_SHARED)
#define WT_API __declspec(dllexport)
#elif defined(__GNUC__)
#define WT_API __attribute__((visibility("default")))
#else
#define WT_API
#endif

/* ======== 1. Errors and version ========================================== */

typedef enum wt_status {
    WT_OK = 0,
    WT_ERR_INVALID_ARGUMENT = -1, /* NULL where a value is needed, bad axis, bad dtype ... */
    WT_ERR_SHAPE = -2,            /* shapes that do not fit together */
    WT_ERR_OUT_OF_MEMORY = -3,    /* message says the requested bytes (and the limit, where known) */
    WT_ERR_NO_DEVICE = -4,        /* no WebGPU library or no real adapter */
    WT_ERR_DEVICE_LOST = -5,      /* the GPU device was lost; the context is unusable */
    WT_ERR_UNSUPPORTED = -6,      /* op or dtype not available on this backend */
    WT_ERR_SHADER = -7,           /* a shader failed to compile (message has the compiler's) */
    WT_ERR_BACKEND = -8,          /* the GPU implementation failed (an error it reported,
                                     a wait that failed). One it reports on its own (work
                                     was dropped) stays, like WT_ERR_DEVICE_LOST: the
                                     context is unusable until wt_context_recover. Files
                                     and names have codes of their own (below) */
    WT_ERR_IO = -9,               /* a file could not be opened, read or written (the
                                     message has the path and the system's reason) */
    WT_ERR_NOT_FOUND = -10        /* a name or key that is not there (a tensor name of
                                     a safetensors file) */
} wt_status;

/* Name of a status code ("WT_ERR_SHAPE"); never NULL. */
WT_API const char *wt_status_string(wt_status s);
/* Detail of the last failure on this thread; "" if none. Valid until the
 * next failing call on this thread. */
WT_API const char *wt_last_error(void);
/* Records message (NULL: "") as wt_last_error() of the calling thread and
 * returns status: for layers built on the library's public API (the
 * distributed layer of webtensor_dist.h, a program's own ops) to report a
 * failure the way the library's own calls do. */
WT_API wt_status wt_set_last_error(wt_status status, const char *message);
/* "MAJOR.MINOR.PATCH" of the library actually loaded. */
WT_API const char *wt_version(void);

/* Messages the library gives outside a call's status - today the leak
 * report of wt_context_destroy (a context destroyed while tensors are
 * still alive: how many and how many bytes) - go to the log handler: by
 * default one line each on stderr, prefixed "webtensor: ". The handler
 * is process-wide and may be called from any thread that destroys a
 * context; a handler that does nothing silences the library. */
typedef enum wt_log_level { WT_LOG_WARNING = 1 } wt_log_level;
typedef void (*wt_log_handler)(wt_log_level level, const char *message, void *user);
/* handler NULL: back to the default (stderr). */
WT_API void wt_set_log_handler(wt_log_handler handler, void *user);

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_ERRORS_H */
