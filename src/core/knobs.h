/* The library's knobs: environment variables WT_*, all listed in
 * core/knobs.def (name, kind, scope, default, range, meaning). Code asks
 * for a knob by its id, never by getenv, so the table stays complete. */
#ifndef WT_CORE_KNOBS_H
#define WT_CORE_KNOBS_H

#include <stdbool.h>
#include <stdint.h>

typedef enum wt_knob {
#define WT_KNOB(id, kind, scope, def, range, meaning) WT_KNOB_##id,
#include "core/knobs.def"
#undef WT_KNOB
    WT_KNOB_COUNT
} wt_knob;

typedef enum wt_knob_kind { WT_KNOB_KIND_TEXT, WT_KNOB_KIND_NUMBER, WT_KNOB_KIND_COUNT } wt_knob_kind;
typedef enum wt_knob_scope { WT_KNOB_SCOPE_PROCESS, WT_KNOB_SCOPE_CONTEXT, WT_KNOB_SCOPE_CALL } wt_knob_scope;

typedef struct wt_knob_spec {
    const char *name; /* "WT_GEMM_SPLITK" */
    wt_knob_kind kind;
    wt_knob_scope scope;
    const char *default_text, *range, *meaning;
} wt_knob_spec;

/* The row of a knob; NULL past the table. */
const wt_knob_spec *wt_knob_spec_of(wt_knob k);

/* The knob's text, or NULL when unset. A PROCESS knob is the value read at
 * its first use (a copy: a later setenv changes nothing); CONTEXT and CALL
 * knobs are read now. */
const char *wt_knob_text(wt_knob k);

/* NUMBER: decimal digits only and > 0, else fallback (unset, empty, a
 * sign, trailing text, overflow, 0). */
uint64_t wt_knob_number(wt_knob k, uint64_t fallback);

/* COUNT: decimal digits only, 0 included, else fallback; a caller that
 * must tell unset from every value passes one no value can be (UINT64_MAX). */
uint64_t wt_knob_count(wt_knob k, uint64_t fallback);

#endif
