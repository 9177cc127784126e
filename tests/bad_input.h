/* The two halves of the bad-input matrix (bad_input.c: the signature
 * table of the first functions; bad_input_args.c: argument slots for the
 * rest, the rows in bad_input_rows_*.c) and the check that every public function of the headers has a
 * row. */
#ifndef WT_BAD_INPUT_H
#define WT_BAD_INPUT_H

#include "webtensor.h"

#include <stddef.h>

/* Runs the slot rows on ctx (other: a second context); adds to *cases and
 * *functions, and the cases per class to per_class[] (the classes of
 * bad_input.c's enum bad). Failures are counted by CHECK. */
void bad_input_slot_rows(wt_context *ctx, wt_context *other, const wt_context_options *opts,
                         const char *mode, int *functions, int *cases, int *per_class);

/* Reads the WT_API declarations of include/webtensor.h (with its parts),
 * webtensor_io.h and webtensor_tokenizer.h and checks that each has a row: in names[0..n-1] (bad_input.c's table),
 * in the slot rows, or among the functions without a status checked on
 * NULL. Prints the count. */
void bad_input_check_header(const char *const *names, size_t n);

#endif
