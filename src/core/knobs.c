/* The knob table (core/knobs.def) and its reads. PROCESS knobs are read
 * once, at first use, under a lock: kernels ask on every launch, and
 * getenv walks the whole environment each time. */
#include "core/knobs.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const wt_knob_spec specs[WT_KNOB_COUNT] = {
#define WT_KNOB(id, kind, scope, def, range, meaning) \
    {"WT_" #id, WT_KNOB_KIND_##kind, WT_KNOB_SCOPE_##scope, def, range, meaning},
#include "core/knobs.def"
#undef WT_KNOB
};

/* Values of 64 characters or more are ignored (read as unset) for the
 * numeric kinds; text knobs (paths) keep a heap copy, held for the
 * process. */
static struct {
    bool loaded;
    const char *value; /* NULL: unset */
    char small[64];
} cache[WT_KNOB_COUNT];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

const wt_knob_spec *wt_knob_spec_of(wt_knob k)
{
    return (int)k >= 0 && k < WT_KNOB_COUNT ? &specs[k] : NULL;
}

const char *wt_knob_text(wt_knob k)
{
    const wt_knob_spec *s = wt_knob_spec_of(k);
    if (!s)
        return NULL;
    if (s->scope != WT_KNOB_SCOPE_PROCESS)
        return getenv(s->name);
    pthread_mutex_lock(&cache_lock);
    if (!cache[k].loaded) {
        const char *v = getenv(s->name);
        cache[k].value = NULL;
        if (v && strlen(v) < sizeof cache[k].small) {
            strcpy(cache[k].small, v);
            cache[k].value = cache[k].small;
        } else if (v && s->kind == WT_KNOB_KIND_TEXT) {
            char *copy = malloc(strlen(v) + 1); /* no memory: read as unset */
            if (copy)
                cache[k].value = strcpy(copy, v);
        }
        cache[k].loaded = true;
    }
    const char *value = cache[k].value;
    pthread_mutex_unlock(&cache_lock);
    return value;
}

/* Decimal digits only (no sign, spaces or suffix): whether s is one. */
static bool parse_digits(const char *s, uint64_t *v)
{
    if (!s || *s < '0' || *s > '9')
        return false;
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(s, &end, 10);
    if (errno || !end || *end != '\0')
        return false;
    *v = (uint64_t)n;
    return true;
}

uint64_t wt_knob_number(wt_knob k, uint64_t fallback)
{
    uint64_t v;
    return parse_digits(wt_knob_text(k), &v) && v > 0 ? v : fallback;
}

uint64_t wt_knob_count(wt_knob k, uint64_t fallback)
{
    uint64_t v;
    return parse_digits(wt_knob_text(k), &v) ? v : fallback;
}
