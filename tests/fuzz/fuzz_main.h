/* Shared by the fuzz targets: a failed property aborts (libFuzzer then
 * saves the input), a CPU context for the parsers, and without libFuzzer
 * a replay of files (the plain build's regression run): main() unless the
 * target defines FUZZ_OWN_MAIN and calls fuzz_replay_files itself. */
#ifndef WT_FUZZ_MAIN_H
#define WT_FUZZ_MAIN_H

#include "webtensor.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline void fuzz_require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz: %s\n", what);
        abort();
    }
}

/* A one-thread CPU context, or the end of the run. */
static inline wt_context *fuzz_cpu_context(void)
{
    wt_context_options o;
    wt_context_options_init(&o);
    o.backend = WT_BACKEND_CPU;
    o.num_threads = 1;
    wt_context *ctx = NULL;
    if (wt_context_create(&o, &ctx) != WT_OK) abort();
    return ctx;
}

#ifndef WT_FUZZ_LIBFUZZER
/* Initialises, then runs every file of argv[1..] (up to 1 MiB each) through
 * LLVMFuzzerTestOneInput; returns how many, or -1 after printing why. */
static inline int fuzz_replay_files(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE...\n", argv[0]);
        return -1;
    }
    LLVMFuzzerInitialize(&argc, &argv);
    static uint8_t buf[1 << 20];
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            fprintf(stderr, "%s: cannot open %s\n", argv[0], argv[i]);
            return -1;
        }
        size_t len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, len);
    }
    return argc - 1;
}

#ifndef FUZZ_OWN_MAIN
int main(int argc, char **argv)
{
    int n = fuzz_replay_files(argc, argv);
    if (n < 0) return 2;
    printf("%s: %d inputs replayed\n", argv[0], n);
    return 0;
}
#endif
#endif

#endif
