/* What the GGUF reader and writer share: ggml's type table, the byte size
 * of a tensor of a type, the arena that holds parsed and copied values,
 * and the sizes and names of GGUF value types. */
#include "io/gguf_format.h"

#include <inttypes.h>
#include <stdlib.h>

/* ------------------------------------------------------ ggml type table
 * Block size (elements per block) and type size (bytes per block), as in
 * ggml's type traits. Ids ggml removed or never used have no name. */
static const ggml_type_row GGML_TYPES[] = {
    [0] = {"F32", 1, 4},        [1] = {"F16", 1, 2},         [2] = {"Q4_0", 32, 18},
    [3] = {"Q4_1", 32, 20},     [6] = {"Q5_0", 32, 22},      [7] = {"Q5_1", 32, 24},
    [8] = {"Q8_0", 32, 34},     [9] = {"Q8_1", 32, 36},      [10] = {"Q2_K", 256, 84},
    [11] = {"Q3_K", 256, 110},  [12] = {"Q4_K", 256, 144},   [13] = {"Q5_K", 256, 176},
    [14] = {"Q6_K", 256, 210},  [15] = {"Q8_K", 256, 292},   [16] = {"IQ2_XXS", 256, 66},
    [17] = {"IQ2_XS", 256, 74}, [18] = {"IQ3_XXS", 256, 98}, [19] = {"IQ1_S", 256, 50},
    [20] = {"IQ4_NL", 32, 18},  [21] = {"IQ3_S", 256, 110},  [22] = {"IQ2_S", 256, 82},
    [23] = {"IQ4_XS", 256, 136}, [24] = {"I8", 1, 1},        [25] = {"I16", 1, 2},
    [26] = {"I32", 1, 4},       [27] = {"I64", 1, 8},        [28] = {"F64", 1, 8},
    [29] = {"IQ1_M", 256, 56},  [30] = {"BF16", 1, 2},       [34] = {"TQ1_0", 256, 54},
    [35] = {"TQ2_0", 256, 66},  [39] = {"MXFP4", 32, 17},    [40] = {"NVFP4", 64, 36},
};
#define GGML_NTYPES (sizeof GGML_TYPES / sizeof GGML_TYPES[0])

const ggml_type_row *gguf_ggml_type(uint32_t t)
{
    return t < GGML_NTYPES && GGML_TYPES[t].name ? &GGML_TYPES[t] : NULL;
}

wt_status wt_gguf_type_info(uint32_t ggml_type, const char **name, int *block_size, int *type_size)
{
    const ggml_type_row *r = gguf_ggml_type(ggml_type);
    if (name) *name = r ? r->name : NULL;
    if (block_size) *block_size = r ? r->block : 0;
    if (type_size) *type_size = r ? r->size : 0;
    if (!r) return wt_fail(WT_ERR_UNSUPPORTED, "wt_gguf_type_info: unknown ggml type id %" PRIu32, ggml_type);
    return WT_OK;
}

/* Bytes of a tensor of this type and these dims (innermost first), or
 * false when a row is not a whole number of blocks or the size overflows
 * (why says which). */
bool gguf_tensor_bytes(const ggml_type_row *r, int n_dims, const uint64_t *dims, uint64_t *numel, uint64_t *bytes,
                       const char **why)
{
    uint64_t n = 1;
    for (int d = 0; d < n_dims; d++) {
        if (dims[d] > (uint64_t)INT64_MAX || (dims[d] != 0 && n > (uint64_t)INT64_MAX / dims[d])) {
            *why = "its element count overflows";
            return false;
        }
        n *= dims[d];
    }
    uint64_t row = n_dims > 0 ? dims[0] : 1;
    if (row % (uint64_t)r->block != 0) {
        *why = "its first dimension is not a whole number of blocks";
        return false;
    }
    uint64_t blocks = n / (uint64_t)r->block;
    if (blocks > UINT64_MAX / (uint64_t)r->size || blocks * (uint64_t)r->size > (uint64_t)SIZE_MAX) {
        *why = "its byte size overflows";
        return false;
    }
    *numel = n;
    *bytes = blocks * (uint64_t)r->size;
    return true;
}

/* ---------------------------------------------------------------- arena */

void *gguf_arena_alloc(gguf_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n == 0) n = 16;
    gguf_arena_block *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > ((size_t)64 << 10) ? n : ((size_t)64 << 10);
        if (cap > SIZE_MAX - sizeof *b) return NULL;
        b = malloc(sizeof *b + cap);
        if (!b) return NULL;
        b->used = 0;
        b->cap = cap;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

void gguf_arena_free(gguf_arena *a)
{
    while (a->head) {
        gguf_arena_block *n = a->head->next;
        free(a->head);
        a->head = n;
    }
}

wt_status gguf_oom(const char *fn)
{
    return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
}

size_t gguf_value_size(wt_gguf_type t)
{
    switch (t) {
    case WT_GGUF_U8: case WT_GGUF_I8: case WT_GGUF_BOOL: return 1;
    case WT_GGUF_U16: case WT_GGUF_I16: return 2;
    case WT_GGUF_U32: case WT_GGUF_I32: case WT_GGUF_F32: return 4;
    case WT_GGUF_U64: case WT_GGUF_I64: case WT_GGUF_F64: return 8;
    default: return 0; /* STRING, ARRAY: variable */
    }
}

bool gguf_type_known(uint32_t t) { return t <= WT_GGUF_F64; }

const char *gguf_type_name(wt_gguf_type t)
{
    static const char *const names[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool",
                                        "string", "array", "u64", "i64", "f64"};
    return gguf_type_known((uint32_t)t) ? names[t] : "unknown";
}
