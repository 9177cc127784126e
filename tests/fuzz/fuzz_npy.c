/* Fuzz target: the .npy reader (wt_npy_load_memory) on any bytes. A file it
 * accepts must give a tensor whose element count matches its shape and
 * which reads back in full; one it refuses must give a known code, a
 * message and a NULL tensor. Run by `make test-fuzz`; the plain build
 * replays tests/fuzz/npy (see fuzz_main.h). */
#include "webtensor_io.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_main.h"

static wt_context *g_ctx;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    g_ctx = fuzz_cpu_context();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wt_tensor *t = (wt_tensor *)(uintptr_t)1;
    wt_status st = wt_npy_load_memory(g_ctx, data, size, &t);
    if (st != WT_OK) {
        fuzz_require(t == NULL, "npy: a failed load left its out-pointer set");
        fuzz_require(wt_last_error()[0] != 0, "npy: failed without a message");
        fuzz_require(st == WT_ERR_INVALID_ARGUMENT || st == WT_ERR_UNSUPPORTED || st == WT_ERR_OUT_OF_MEMORY,
                     "npy: unexpected code");
        return 0;
    }
    int64_t n = 1;
    for (int i = 0; i < wt_tensor_ndim(t); i++) n *= wt_tensor_shape(t)[i];
    fuzz_require(n == wt_tensor_numel(t), "npy: numel differs from the shape's product");
    /* A file that loads holds every byte of its data: at least a byte an
     * element (the tensor itself may be wider: u1 / i1 files load as
     * 4-byte i32). */
    const size_t bytes = (size_t)n * wt_dtype_size(wt_tensor_dtype(t));
    fuzz_require((size_t)n <= size, "npy: more elements than the file could hold");
    void *buf = malloc(bytes ? bytes : 1);
    if (buf) fuzz_require(wt_tensor_read(t, buf, bytes) == WT_OK, "npy: a loaded tensor does not read back");
    free(buf);
    wt_tensor_release(t);
    return 0;
}
