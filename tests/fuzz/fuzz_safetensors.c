/* Fuzz target: the safetensors reader on any bytes. wt_safetensors_open_memory
 * validates the file; every entry it accepts must lie inside the input,
 * be found again by its name, and load (as f32 and as f16, one by one and
 * all together) into a tensor of its shape, or fail with a known code, a
 * message and NULL outputs. Run by `make test-fuzz`; the plain build
 * replays tests/fuzz/safetensors. */
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

static void check_failure(wt_status st, const char *what)
{
    fuzz_require(wt_last_error()[0] != 0, what);
    fuzz_require(st == WT_ERR_INVALID_ARGUMENT || st == WT_ERR_UNSUPPORTED || st == WT_ERR_OUT_OF_MEMORY, what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wt_safetensors *f = (wt_safetensors *)(uintptr_t)1;
    wt_status st = wt_safetensors_open_memory(data, size, &f);
    if (st != WT_OK) {
        fuzz_require(f == NULL, "safetensors: a failed open left its out-pointer set");
        check_failure(st, "safetensors: open failed without a message or with an unexpected code");
        return 0;
    }
    const int n = wt_safetensors_count(f);
    fuzz_require(n >= 0, "safetensors: negative count");
    (void)wt_safetensors_metadata(f, "format");
    for (int i = 0; i < n; i++) {
        wt_safetensors_entry e;
        fuzz_require(wt_safetensors_entry_at(f, i, &e) == WT_OK, "safetensors: entry_at of a valid index");
        fuzz_require(e.name && e.dtype && e.ndim >= 0 && e.ndim <= WT_MAX_DIMS, "safetensors: entry fields");
        fuzz_require(e.data_begin <= e.data_end && e.data_end <= size, "safetensors: a range outside the file");
        int idx = -1;
        fuzz_require(wt_safetensors_find(f, e.name, &idx) == WT_OK && idx == i,
                     "safetensors: an entry is not found by its name");
        for (int k = 0; k < 2; k++) {
            wt_tensor *t = (wt_tensor *)(uintptr_t)1;
            st = wt_safetensors_load(f, g_ctx, e.name, k ? WT_F16 : WT_F32, &t);
            if (st != WT_OK) {
                fuzz_require(t == NULL, "safetensors: a failed load left its out-pointer set");
                check_failure(st, "safetensors: load failed without a message or with an unexpected code");
                continue;
            }
            fuzz_require(wt_tensor_ndim(t) == e.ndim, "safetensors: loaded rank differs from the entry's");
            for (int d = 0; d < e.ndim; d++)
                fuzz_require(wt_tensor_shape(t)[d] == e.shape[d], "safetensors: loaded shape differs");
            wt_tensor_release(t);
        }
    }
    if (n > 0 && n <= 64) {
        wt_tensor *all[64];
        for (int i = 0; i < n; i++) all[i] = (wt_tensor *)(uintptr_t)1;
        st = wt_safetensors_load_many(f, g_ctx, n, NULL, WT_F32, all);
        for (int i = 0; i < n; i++) {
            if (st != WT_OK) fuzz_require(all[i] == NULL, "safetensors: load_many failed and kept a tensor");
            else wt_tensor_release(all[i]);
        }
    }
    wt_safetensors_close(f);
    return 0;
}
