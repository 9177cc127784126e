/* Host memory for CPU storages, with small pools of large and of small
 * blocks. */
#include "cpu/cpu.h"

#include <stdio.h>
#include <stdlib.h>

/* 64 bytes: a cache line and a full AVX-512 vector. */
#define CPU_ALIGNMENT 64
/* The large blocks' pool starts here; up to POOL_SMALL_MAX_BYTES blocks
 * go to the small blocks' slots, and between the two to malloc's own free
 * lists. */
#define POOL_MIN_BYTES ((size_t)1 << 20)
#define POOL_SMALL_MAX_BYTES ((size_t)1 << 16)
/* Large blocks are sized in 64 KiB steps, so that near sizes share. */
#define POOL_GRANULE ((size_t)1 << 16)
/* The pool never holds more than this; beyond, the oldest block goes. */
#define POOL_MAX_BYTES ((size_t)1 << 30)

/* The capacity actually allocated for a storage of `bytes`; 0 on
 * overflow. Never 0 otherwise: an empty storage still gets a pointer. */
static size_t block_capacity(size_t bytes) {
    const size_t step = bytes >= POOL_MIN_BYTES ? POOL_GRANULE : CPU_ALIGNMENT;
    if (bytes > SIZE_MAX - step)
        return 0;
    size_t cap = (bytes + step - 1) / step * step;
    return cap ? cap : CPU_ALIGNMENT;
}

static cpu_pool *pool_of(wt_context *ctx) {
    return &((cpu_state *)ctx->impl)->pool;
}

/* Removes slot i of one pool's arrays (blocks, capacities, count, bytes),
 * keeping the order. */
static void slot_remove(void **block, size_t *capacity, int *count, size_t *bytes, int i) {
    *bytes -= capacity[i];
    for (int j = i; j + 1 < *count; j++) {
        block[j] = block[j + 1];
        capacity[j] = capacity[j + 1];
    }
    (*count)--;
}

static void pool_remove(wt_context *ctx, int i) {
    cpu_pool *p = pool_of(ctx);
    slot_remove(p->block, p->capacity, &p->count, &p->bytes, i);
    ctx->stats.pooled_bytes = p->bytes + p->small_bytes;
}

static void small_remove(wt_context *ctx, int i) {
    cpu_pool *p = pool_of(ctx);
    slot_remove(p->small_block, p->small_capacity, &p->small_count, &p->small_bytes, i);
    ctx->stats.pooled_bytes = p->bytes + p->small_bytes;
}

/* The host's available memory in bytes (MemAvailable), 0 when unknown. */
static unsigned long long host_available(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    unsigned long long kib = 0;
    char line[128];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib * 1024;
}

static wt_status out_of_memory(size_t bytes) {
    unsigned long long avail = host_available();
    if (avail)
        return wt_fail(WT_ERR_OUT_OF_MEMORY,
                       "cpu: out of host memory: requested %zu bytes, available %llu", bytes, avail);
    return wt_fail(WT_ERR_OUT_OF_MEMORY,
                   "cpu: out of host memory: requested %zu bytes, available: unknown", bytes);
}

wt_status cpu_pool_alloc(wt_context *ctx, wt_storage *s) {
    const size_t cap = block_capacity(s->bytes);
    if (cap == 0)
        return out_of_memory(s->bytes);
    cpu_pool *p = pool_of(ctx);
    for (int i = p->small_count - 1; i >= 0; i--)
        if (p->small_capacity[i] == cap) {
            s->host = p->small_block[i];
            small_remove(ctx, i);
            return WT_OK;
        }
    /* Newest first: the block freed last is the likeliest still cached. */
    for (int i = p->count - 1; i >= 0; i--)
        if (p->capacity[i] == cap) {
            s->host = p->block[i];
            pool_remove(ctx, i);
            return WT_OK;
        }
    void *mem = aligned_alloc(CPU_ALIGNMENT, cap);
    if (!mem && (p->count > 0 || p->small_count > 0)) {
        /* Memory is short: give the pool back and try once more. */
        cpu_pool_trim(ctx);
        mem = aligned_alloc(CPU_ALIGNMENT, cap);
    }
    if (!mem)
        return out_of_memory(s->bytes);
    s->host = mem;
    return WT_OK;
}

void cpu_pool_free(wt_context *ctx, wt_storage *s) {
    void *mem = s->host;
    s->host = NULL;
    if (!mem)
        return;
    const size_t cap = block_capacity(s->bytes);
    cpu_pool *p = pool_of(ctx);
    if (cap <= POOL_SMALL_MAX_BYTES) {
        if (p->small_count == CPU_POOL_SMALL_SLOTS) {
            free(p->small_block[0]);
            small_remove(ctx, 0);
        }
        p->small_block[p->small_count] = mem;
        p->small_capacity[p->small_count] = cap;
        p->small_count++;
        p->small_bytes += cap;
        ctx->stats.pooled_bytes = p->bytes + p->small_bytes;
        return;
    }
    if (cap < POOL_MIN_BYTES || cap > POOL_MAX_BYTES) {
        free(mem);
        return;
    }
    while (p->count > 0 && (p->count == CPU_POOL_SLOTS || p->bytes + cap > POOL_MAX_BYTES)) {
        free(p->block[0]);
        pool_remove(ctx, 0);
    }
    p->block[p->count] = mem;
    p->capacity[p->count] = cap;
    p->count++;
    p->bytes += cap;
    ctx->stats.pooled_bytes = p->bytes + p->small_bytes;
}

void cpu_pool_trim(wt_context *ctx) {
    cpu_pool *p = pool_of(ctx);
    while (p->count > 0) {
        free(p->block[p->count - 1]);
        pool_remove(ctx, p->count - 1);
    }
    while (p->small_count > 0) {
        free(p->small_block[p->small_count - 1]);
        small_remove(ctx, p->small_count - 1);
    }
}
