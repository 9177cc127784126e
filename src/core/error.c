/* Status codes and the per-thread message behind wt_last_error(). */
#include "core/internal.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[1024];

wt_status wt_fail(wt_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return s;
}

void wt_error_prefix(const char *what)
{
    char tmp[sizeof last_error];
    memcpy(tmp, last_error, sizeof tmp);
    int n = snprintf(last_error, sizeof last_error, "%s: ", what);
    if (n > 0 && (size_t)n < sizeof last_error)
        snprintf(last_error + n, sizeof last_error - (size_t)n, "%.*s", (int)(sizeof last_error - (size_t)n - 1), tmp);
}

const char *wt_last_error(void) { return last_error; }

wt_status wt_set_last_error(wt_status status, const char *message)
{
    snprintf(last_error, sizeof last_error, "%s", message ? message : "");
    return status;
}

const char *wt_version(void) { return WT_VERSION_STRING; }

const char *wt_status_string(wt_status s)
{
    switch (s) {
    case WT_OK: return "WT_OK";
    case WT_ERR_INVALID_ARGUMENT: return "WT_ERR_INVALID_ARGUMENT";
    case WT_ERR_SHAPE: return "WT_ERR_SHAPE";
    case WT_ERR_OUT_OF_MEMORY: return "WT_ERR_OUT_OF_MEMORY";
    case WT_ERR_NO_DEVICE: return "WT_ERR_NO_DEVICE";
    case WT_ERR_DEVICE_LOST: return "WT_ERR_DEVICE_LOST";
    case WT_ERR_UNSUPPORTED: return "WT_ERR_UNSUPPORTED";
    case WT_ERR_SHADER: return "WT_ERR_SHADER";
    case WT_ERR_BACKEND: return "WT_ERR_BACKEND";
    case WT_ERR_IO: return "WT_ERR_IO";
    case WT_ERR_NOT_FOUND: return "WT_ERR_NOT_FOUND";
    }
    return "WT_ERR_UNKNOWN";
}

bool wt_mul_size(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a) return false;
    *out = a * b;
    return true;
}

/* --- 32-bit sizes (WebAssembly) --- */
bool wt_size_of_i64(int64_t v, size_t *out)
{
    if (v < 0) return false;
#if SIZE_MAX < UINT64_MAX
    if ((uint64_t)v > (uint64_t)SIZE_MAX) return false;
#endif
    *out = (size_t)v;
    return true;
}

bool wt_bytes_of(int64_t count, size_t esize, size_t *out)
{
    size_t n;
    return wt_size_of_i64(count, &n) && wt_mul_size(n, esize, out);
}

/* ------------------------------------------------------------------ log */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static wt_log_handler log_handler;
static void *log_user;

void wt_set_log_handler(wt_log_handler handler, void *user)
{
    pthread_mutex_lock(&log_lock);
    log_handler = handler;
    log_user = user;
    pthread_mutex_unlock(&log_lock);
}

void wt_log_message(wt_log_level level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* Held while the handler runs: a handler replaced meanwhile is not
     * called after wt_set_log_handler returned. */
    pthread_mutex_lock(&log_lock);
    if (log_handler) log_handler(level, msg, log_user);
    else fprintf(stderr, "webtensor: %s\n", msg);
    pthread_mutex_unlock(&log_lock);
}
