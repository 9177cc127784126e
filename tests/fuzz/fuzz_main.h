/* Shared by the parser fuzz targets: a failed property aborts (libFuzzer
 * then saves the input), and without libFuzzer a main() replays files. */
#ifndef WT_FUZZ_MAIN_H
#define WT_FUZZ_MAIN_H

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

#ifndef WT_FUZZ_LIBFUZZER
/* Replay: <target> FILE... (the plain build's regression run). */
int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE...\n", argv[0]);
        return 2;
    }
    LLVMFuzzerInitialize(&argc, &argv);
    int n = 0;
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            fprintf(stderr, "%s: cannot open\n", argv[i]);
            return 1;
        }
        uint8_t *buf = malloc(1 << 20);
        size_t len = buf ? fread(buf, 1, 1 << 20, f) : 0;
        fclose(f);
        if (!buf) return 1;
        LLVMFuzzerTestOneInput(buf, len);
        free(buf);
        n++;
    }
    printf("%s: %d inputs replayed\n", argv[0], n);
    return 0;
}
#endif

#endif
