/* What the GGUF reader (gguf.c) and writer (gguf_writer.c) share
 * (gguf_format.c). */
#ifndef WT_IO_GGUF_FORMAT_H
#define WT_IO_GGUF_FORMAT_H

#include "io/io.h"

#define GGUF_DEFAULT_ALIGNMENT 32u

/* A ggml type: its name, elements per block and bytes per block. */
typedef struct ggml_type_row {
    const char *name;
    int block, size;
} ggml_type_row;

/* The ggml type ids a tensor dtype maps to. */
enum { GGML_F32 = 0, GGML_F16 = 1, GGML_I8 = 24, GGML_I16 = 25, GGML_I32 = 26, GGML_I64 = 27, GGML_F64 = 28,
       GGML_BF16 = 30 };

/* The row of ggml type t, or NULL for an id ggml removed or never used. */
const ggml_type_row *gguf_ggml_type(uint32_t t);
/* Bytes of a tensor of this type and these dims (innermost first), or
 * false when a row is not a whole number of blocks or the size overflows
 * (why says which). */
bool gguf_tensor_bytes(const ggml_type_row *r, int n_dims, const uint64_t *dims, uint64_t *numel, uint64_t *bytes,
                       const char **why);

/* Memory freed all at once: a chain of blocks, 16-byte aligned pieces. */
typedef struct gguf_arena_block {
    struct gguf_arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} gguf_arena_block;

typedef struct gguf_arena {
    gguf_arena_block *head;
} gguf_arena;

/* NULL when out of memory. */
void *gguf_arena_alloc(gguf_arena *a, size_t n);
void gguf_arena_free(gguf_arena *a);

/* WT_ERR_OUT_OF_MEMORY with fn's name. */
wt_status gguf_oom(const char *fn);

/* Bytes of a scalar value type; 0 for STRING and ARRAY (variable). */
size_t gguf_value_size(wt_gguf_type t);
bool gguf_type_known(uint32_t t);
/* "u8", "f32", "string" ...; "unknown" for an id past F64. */
const char *gguf_type_name(wt_gguf_type t);

#endif /* WT_IO_GGUF_FORMAT_H */
