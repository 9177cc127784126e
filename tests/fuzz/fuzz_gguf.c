/* Fuzz target: the GGUF reader on any bytes. wt_gguf_open_memory validates
 * the file; every key it accepts must be found again with the same value
 * type, every value walked (nested arrays to the bottom, strings read to
 * their length), and every tensor info must lie inside the input, be found
 * by its name, and either load into a tensor of its reversed dims or fail
 * with a known code, a message and a NULL output; its raw bytes must read.
 * Run by `make test-fuzz`; the plain build replays tests/fuzz/corpus_gguf. */
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

/* Touches every byte a value points at (ASan reports a read outside). */
static unsigned walk(const wt_gguf_value *v, int depth)
{
    fuzz_require(depth <= WT_GGUF_MAX_NESTING, "gguf: a value nested past the limit");
    unsigned h = 0;
    if (v->type == WT_GGUF_STRING) {
        fuzz_require(v->str != NULL && v->str[v->str_len] == 0, "gguf: a string without its NUL");
        for (uint64_t i = 0; i < v->str_len; i++) h += (unsigned char)v->str[i];
    } else if (v->type == WT_GGUF_ARRAY) {
        static const int size[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
        fuzz_require(v->elem_type >= 0 && v->elem_type <= WT_GGUF_F64, "gguf: an unknown element type");
        if (size[v->elem_type]) {
            const uint8_t *p = v->elems;
            for (uint64_t i = 0; i < v->count * (uint64_t)size[v->elem_type]; i++) h += p[i];
        } else {
            for (uint64_t i = 0; i < v->count; i++) {
                fuzz_require(v->items[i].type == v->elem_type, "gguf: an item of another type");
                h += walk(&v->items[i], depth + 1);
            }
        }
    }
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wt_gguf *f = (wt_gguf *)(uintptr_t)1;
    wt_status st = wt_gguf_open_memory(data, size, &f);
    if (st != WT_OK) {
        fuzz_require(f == NULL, "gguf: a failed open left its out-pointer set");
        check_failure(st, "gguf: open failed without a message or with an unexpected code");
        return 0;
    }
    const uint32_t align = wt_gguf_alignment(f);
    fuzz_require(align != 0 && (align & (align - 1)) == 0, "gguf: the alignment is not a power of two");
    volatile unsigned sink = 0;
    for (int i = 0; i < wt_gguf_kv_count(f); i++) {
        const char *key = NULL;
        wt_gguf_value v, again;
        fuzz_require(wt_gguf_kv_at(f, i, &key, &v) == WT_OK && key, "gguf: kv_at of a valid index");
        fuzz_require(wt_gguf_find_kv(f, key, &again) == WT_OK && again.type == v.type, "gguf: a key not found again");
        sink += walk(&v, 0);
        int64_t iv;
        double dv;
        (void)wt_gguf_get_int(f, key, &iv);
        (void)wt_gguf_get_float(f, key, &dv);
    }
    for (int i = 0; i < wt_gguf_tensor_count(f); i++) {
        wt_gguf_tensor_info in;
        fuzz_require(wt_gguf_tensor_at(f, i, &in) == WT_OK && in.name && in.type_name, "gguf: tensor_at");
        fuzz_require(in.n_dims >= 0 && in.n_dims <= WT_GGUF_MAX_DIMS, "gguf: n_dims out of range");
        fuzz_require(in.file_offset <= size && in.bytes <= size - in.file_offset, "gguf: tensor data outside the file");
        fuzz_require(in.file_offset % align == 0, "gguf: unaligned data");
        int idx = -1;
        fuzz_require(wt_gguf_find_tensor(f, in.name, &idx) == WT_OK && idx == i, "gguf: a tensor not found by name");
        void *raw = malloc(in.bytes ? (size_t)in.bytes : 1);
        fuzz_require(raw && wt_gguf_read_raw(f, in.name, raw, (size_t)in.bytes) == WT_OK, "gguf: read_raw failed");
        free(raw);
        wt_tensor *t = (wt_tensor *)(uintptr_t)1;
        st = wt_gguf_load(f, g_ctx, in.name, &t);
        if (st != WT_OK) {
            fuzz_require(t == NULL, "gguf: a failed load left its out-pointer set");
            check_failure(st, "gguf: load failed without a message or with an unexpected code");
            continue;
        }
        fuzz_require(wt_tensor_ndim(t) == in.n_dims, "gguf: loaded rank differs from n_dims");
        for (int d = 0; d < in.n_dims; d++)
            fuzz_require((uint64_t)wt_tensor_shape(t)[d] == in.dims[in.n_dims - 1 - d], "gguf: shape not the dims reversed");
        wt_tensor_release(t);
    }
    wt_gguf_close(f);
    return 0;
}
