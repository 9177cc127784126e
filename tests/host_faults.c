/* The allocation hooks of host_faults.h: every allocation is counted and
 * the armed one fails; the live blocks are kept in a set so that a test
 * can tell that an error path freed what it made. */
#include "host_faults.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);
void __wrap_free(void *p);

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static long g_allocs;   /* allocations since the last arm */
static long g_fail_at;  /* 0: never fail */
static long g_injected; /* failures injected since the last arm */
static bool g_fail_all_aligned; /* every aligned_alloc fails (the CPU's tensor memory) */

/* Blocks handed out through the hooks and not yet freed: an open-addressed
 * set of pointers (deleted slots are tombstones). */
#define LIVE_SLOTS (1u << 16)
#define TOMBSTONE ((void *)1)
static void *g_live[LIVE_SLOTS];
static long g_nlive;

static size_t slot_of(const void *p) { return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> 48); }

static void live_add(void *p)
{
    if (!p) return;
    for (size_t i = slot_of(p), k = 0; k < LIVE_SLOTS; k++, i = (i + 1) & (LIVE_SLOTS - 1))
        if (!g_live[i] || g_live[i] == TOMBSTONE) {
            g_live[i] = p;
            g_nlive++;
            return;
        }
}

static void live_remove(void *p)
{
    if (!p) return;
    for (size_t i = slot_of(p), k = 0; k < LIVE_SLOTS && g_live[i]; k++, i = (i + 1) & (LIVE_SLOTS - 1))
        if (g_live[i] == p) {
            g_live[i] = TOMBSTONE;
            g_nlive--;
            return;
        }
}

/* True when this allocation is to fail. Called with g_lock held. */
static bool should_fail(void)
{
    g_allocs++;
    if (g_fail_at > 0 && g_allocs == g_fail_at) {
        g_injected++;
        return true;
    }
    return false;
}

void *__wrap_malloc(size_t n)
{
    pthread_mutex_lock(&g_lock);
    void *p = should_fail() ? NULL : __real_malloc(n);
    live_add(p);
    pthread_mutex_unlock(&g_lock);
    return p;
}

void *__wrap_calloc(size_t n, size_t size)
{
    pthread_mutex_lock(&g_lock);
    void *p = should_fail() ? NULL : __real_calloc(n, size);
    live_add(p);
    pthread_mutex_unlock(&g_lock);
    return p;
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
    pthread_mutex_lock(&g_lock);
    bool fail = should_fail() || g_fail_all_aligned;
    g_injected += g_fail_all_aligned;
    void *p = fail ? NULL : __real_aligned_alloc(align, n);
    live_add(p);
    pthread_mutex_unlock(&g_lock);
    return p;
}

void *__wrap_realloc(void *old, size_t n)
{
    pthread_mutex_lock(&g_lock);
    void *p = should_fail() ? NULL : __real_realloc(old, n);
    if (p) {
        live_remove(old);
        live_add(p);
    }
    pthread_mutex_unlock(&g_lock);
    return p;
}

void __wrap_free(void *p)
{
    pthread_mutex_lock(&g_lock);
    live_remove(p);
    __real_free(p);
    pthread_mutex_unlock(&g_lock);
}

void host_arm(long fail_at)
{
    pthread_mutex_lock(&g_lock);
    g_allocs = 0;
    g_injected = 0;
    g_fail_at = fail_at;
    pthread_mutex_unlock(&g_lock);
}

long host_live(void)
{
    pthread_mutex_lock(&g_lock);
    long n = g_nlive;
    pthread_mutex_unlock(&g_lock);
    return n;
}

long host_injected(void)
{
    pthread_mutex_lock(&g_lock);
    long n = g_injected;
    pthread_mutex_unlock(&g_lock);
    return n;
}

long host_fail_all_aligned(bool on)
{
    pthread_mutex_lock(&g_lock);
    g_fail_all_aligned = on;
    long n = g_injected;
    if (on) g_injected = 0;
    pthread_mutex_unlock(&g_lock);
    return n;
}
