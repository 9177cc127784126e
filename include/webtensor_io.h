/*
 * webtensor model files: NumPy .npy, safetensors and GGUF, read into and
 * written from tensors of any context.
 *
 * This part of the library uses only the public API of webtensor.h, so it
 * could live in a library of its own; it ships inside libwebtensor so that
 * a program links one library. Same conventions as webtensor.h: every call
 * returns a wt_status, wt_last_error() explains a failure, out-pointers are
 * NULL on failure, nothing leaks.
 *
 * Readers never trust a file: every size, offset and shape is checked
 * against the file's length and against overflow before anything is read,
 * and a malformed, truncated or oversized file is WT_ERR_INVALID_ARGUMENT
 * (bad contents), never a crash or a read past the data. A file that
 * cannot be opened, read or written (missing, a folder, a read or write
 * that fails or comes up short) is WT_ERR_IO; a tensor name the file does
 * not have is WT_ERR_NOT_FOUND. A dtype webtensor cannot hold is
 * WT_ERR_UNSUPPORTED.
 */
#ifndef WEBTENSOR_IO_H
#define WEBTENSOR_IO_H

#include "webtensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ .npy
 * Format versions 1.0, 2.0 and 3.0, C order only (fortran_order True is
 * WT_ERR_UNSUPPORTED: transpose in NumPy first). dtypes, either byte order:
 *   float32 '<f4' -> WT_F32     float16 '<f2' -> WT_F16
 *   int32   '<i4' -> WT_I32     bool    '|b1' -> WT_BOOL
 *   float64 '<f8' -> WT_F32 (rounded)
 *   int64   '<i8' -> WT_I32 (a value outside int32 is an error)
 * Object arrays, structured dtypes and every other dtype are
 * WT_ERR_UNSUPPORTED with the dtype named. A 0-d array loads as a 0-d
 * tensor. */
WT_API wt_status wt_npy_load(wt_context *ctx, const char *path, wt_tensor **out);
/* The same from bytes in memory (a whole .npy file). */
WT_API wt_status wt_npy_load_memory(wt_context *ctx, const void *data, size_t size, wt_tensor **out);
/* Writes t (any layout; views are gathered) as a version 1.0 .npy file in
 * C order, little-endian, with t's dtype. Waits for the GPU. */
WT_API wt_status wt_npy_save(const char *path, const wt_tensor *t);

/* ----------------------------------------------------------- safetensors
 * The safetensors format: an 8-byte little-endian header length N, N bytes
 * of JSON ({"name": {"dtype": "F32", "shape": [..], "data_offsets": [b, e]},
 * ..., "__metadata__": {"key": "value", ...}}), then the data, offsets
 * relative to its start. Checked on open: N fits the file and is at most
 * 100 MB; the JSON is well formed (nesting at most 8 deep); names are
 * unique; each dtype is known; each shape's bytes equal e - b; every range
 * lies inside the data and no two ranges overlap.
 *
 * Loading converts by kind:
 *   F64, F32, F16, BF16          -> the float dtype asked for (WT_F32 or
 *                                  WT_F16; round to nearest even)
 *   I64, I32, I16, I8, U16, U8   -> WT_I32 (an I64 value outside int32 is
 *                                  an error naming the tensor)
 *   BOOL                         -> WT_BOOL
 * Other dtypes (U32, U64, F8_*) are WT_ERR_UNSUPPORTED when loaded.
 * A tensor is read straight from the file in chunks into its host staging
 * buffer; the library never holds a second copy of the file. */
typedef struct wt_safetensors wt_safetensors;

typedef struct wt_safetensors_entry {
    const char *name;   /* valid until wt_safetensors_close */
    const char *dtype;  /* as in the file: "F32", "BF16", ... */
    int ndim;
    int64_t shape[WT_MAX_DIMS];
    uint64_t data_begin, data_end; /* byte range inside the data section */
} wt_safetensors_entry;

/* Opens and validates a file; the file stays open until close. */
WT_API wt_status wt_safetensors_open(const char *path, wt_safetensors **out);
/* The same over bytes in memory, which must outlive the handle. */
WT_API wt_status wt_safetensors_open_memory(const void *data, size_t size, wt_safetensors **out);
WT_API void wt_safetensors_close(wt_safetensors *f); /* NULL is ignored */
/* Number of tensors (the __metadata__ entry is not one). */
WT_API int wt_safetensors_count(const wt_safetensors *f);
/* Entry i, in the file's order of data offsets. */
WT_API wt_status wt_safetensors_entry_at(const wt_safetensors *f, int i, wt_safetensors_entry *out);
/* Index of a tensor by name; WT_ERR_NOT_FOUND (and *index -1) if there is none. */
WT_API wt_status wt_safetensors_find(const wt_safetensors *f, const char *name, int *index);
/* Value of a __metadata__ key, or NULL. */
WT_API const char *wt_safetensors_metadata(const wt_safetensors *f, const char *key);
/* Loads one tensor into ctx; float_dtype (WT_F32 or WT_F16) is the dtype
 * float tensors become. */
WT_API wt_status wt_safetensors_load(const wt_safetensors *f, wt_context *ctx, const char *name,
                                     wt_dtype float_dtype, wt_tensor **out);
/* Loads the tensors named in names (n of them; names NULL: every tensor,
 * n == count, in entry order) into out[0..n-1]. On failure none is kept. */
WT_API wt_status wt_safetensors_load_many(const wt_safetensors *f, wt_context *ctx, int n,
                                          const char *const *names, wt_dtype float_dtype,
                                          wt_tensor **out);

/* Writes n tensors under the given (unique, non-empty) names, each with its
 * own dtype (F32, F16, I32, BOOL), data aligned to 8 bytes, and optional
 * metadata: nmeta key/value string pairs (NULL when nmeta is 0). Waits for
 * the GPU. The file is written to path + ".tmp" and renamed, so a failure
 * never leaves a half-written file under path. */
WT_API wt_status wt_safetensors_save(const char *path, int n, const char *const *names,
                                     wt_tensor *const *tensors, int nmeta,
                                     const char *const *meta_keys, const char *const *meta_values);


/* ------------------------------------------------------------------ GGUF
 * The GGUF container of llama.cpp / ggml, versions 2 and 3 read (version 1
 * and big-endian files are WT_ERR_UNSUPPORTED), version 3 written. Layout:
 * "GGUF", u32 version, u64 tensor count, u64 key-value count, the
 * key-value pairs (typed metadata), the tensor infos, padding to the
 * alignment, then the tensor data. Every count, length, offset and shape
 * is checked against the file before it is used; a malformed file is
 * WT_ERR_INVALID_ARGUMENT with the byte offset of the fault in the message.
 * Checked on open: key and tensor names unique; arrays nested at most
 * WT_GGUF_MAX_NESTING deep; general.alignment, when present, a u32 power
 * of two; n_dims at most 4; each ggml type known and each row a whole
 * number of blocks; every tensor's data inside the file, aligned, and no
 * two overlapping.
 *
 * Shapes: GGUF lists dims innermost first (ne[0] varies fastest), so a
 * webtensor shape is the dims reversed: GGUF dims {4096, 32000} (a 32000 x
 * 4096 embedding, rows of 4096) load as shape [32000, 4096], as NumPy and
 * PyTorch would hold it. The writer reverses the other way.
 *
 * Loading converts F32 -> WT_F32, F16 -> WT_F16, BF16 and F64 -> WT_F32,
 * I8, I16, I32, I64 -> WT_I32 (an I64 value outside int32 is an error).
 * Block-quantised types (Q4_0, Q8_0, Q4_K, Q6_K, IQ*, ...) are not
 * converted: wt_gguf_load refuses them with WT_ERR_UNSUPPORTED and
 * wt_gguf_read_raw copies their bytes, sized by wt_gguf_type_info, for a
 * later dequantisation. The file is read per tensor with pread; the
 * library never holds a second copy of it. */
typedef struct wt_gguf wt_gguf;

/* Metadata value types; the numbers are the format's. */
typedef enum wt_gguf_type {
    WT_GGUF_U8 = 0, WT_GGUF_I8 = 1, WT_GGUF_U16 = 2, WT_GGUF_I16 = 3,
    WT_GGUF_U32 = 4, WT_GGUF_I32 = 5, WT_GGUF_F32 = 6, WT_GGUF_BOOL = 7,
    WT_GGUF_STRING = 8, WT_GGUF_ARRAY = 9, WT_GGUF_U64 = 10, WT_GGUF_I64 = 11,
    WT_GGUF_F64 = 12
} wt_gguf_type;

#define WT_GGUF_MAX_DIMS 4     /* ggml's GGML_MAX_DIMS */
#define WT_GGUF_MAX_NESTING 8  /* arrays of arrays, this deep at most */

/* One metadata value. The reader fills the field its type names; the
 * writer reads the same fields. Pointers from the reader stay valid until
 * wt_gguf_close. */
typedef struct wt_gguf_value {
    wt_gguf_type type;
    uint64_t u;       /* U8, U16, U32, U64; BOOL as 0 or 1 */
    int64_t i;        /* I8, I16, I32, I64 */
    double f;         /* F32, F64 */
    const char *str;  /* STRING: str_len bytes (NUL-terminated when read;
                         a string may hold NUL bytes: use str_len) */
    uint64_t str_len;
    wt_gguf_type elem_type; /* ARRAY: the type of every element */
    uint64_t count;         /* ARRAY: number of elements */
    const void *elems;      /* ARRAY of a numeric or BOOL type: count packed
                               little-endian elements (BOOL: one byte each) */
    const struct wt_gguf_value *items; /* ARRAY of STRING or ARRAY: count values */
} wt_gguf_value;

typedef struct wt_gguf_tensor_info {
    const char *name;    /* valid until wt_gguf_close */
    int n_dims;
    uint64_t dims[WT_GGUF_MAX_DIMS]; /* as in the file: innermost first */
    int64_t shape[WT_GGUF_MAX_DIMS]; /* webtensor order: dims reversed */
    uint32_t ggml_type;  /* ggml's type id (0 F32, 1 F16, 8 Q8_0, 12 Q4_K ...) */
    const char *type_name; /* "F32", "Q4_K", ... */
    uint64_t numel;
    uint64_t offset;     /* as in the file: relative to the data section */
    uint64_t file_offset; /* where the data starts in the file */
    uint64_t bytes;      /* bytes of data */
} wt_gguf_tensor_info;

/* A ggml type's name, block size (elements per block; 1 for plain types)
 * and type size (bytes per block), from ggml's table. Any out-pointer may
 * be NULL. An id ggml never had or has removed (4, 5, 31..33, 36..38) or
 * one past the table is WT_ERR_UNSUPPORTED naming the id. */
WT_API wt_status wt_gguf_type_info(uint32_t ggml_type, const char **name, int *block_size, int *type_size);

/* Opens and validates a file; the file stays open until close. */
WT_API wt_status wt_gguf_open(const char *path, wt_gguf **out);
/* The same over bytes in memory, which must outlive the handle. */
WT_API wt_status wt_gguf_open_memory(const void *data, size_t size, wt_gguf **out);
WT_API void wt_gguf_close(wt_gguf *f); /* NULL is ignored */
/* The file's format version (2 or 3), its data alignment, 0 for NULL. */
WT_API uint32_t wt_gguf_version(const wt_gguf *f);
WT_API uint32_t wt_gguf_alignment(const wt_gguf *f);

/* Metadata, in the file's order: count, then key and value of entry i. */
WT_API int wt_gguf_kv_count(const wt_gguf *f); /* 0 for NULL */
WT_API wt_status wt_gguf_kv_at(const wt_gguf *f, int i, const char **key, wt_gguf_value *value);
/* The value of a key, any type; WT_ERR_NOT_FOUND if there is none. */
WT_API wt_status wt_gguf_find_kv(const wt_gguf *f, const char *key, wt_gguf_value *value);
/* Typed getters: a missing key is WT_ERR_NOT_FOUND; another type is
 * WT_ERR_INVALID_ARGUMENT naming the key and both types. get_int takes any integer type (a U64
 * above INT64_MAX is an error); get_float F32 or F64; get_string gives the
 * bytes (NUL-terminated) and, when len is not NULL, their count. */
WT_API wt_status wt_gguf_get_int(const wt_gguf *f, const char *key, int64_t *out);
WT_API wt_status wt_gguf_get_float(const wt_gguf *f, const char *key, double *out);
WT_API wt_status wt_gguf_get_bool(const wt_gguf *f, const char *key, bool *out);
WT_API wt_status wt_gguf_get_string(const wt_gguf *f, const char *key, const char **out, size_t *len);
/* An array whose elements have type elem_type. */
WT_API wt_status wt_gguf_get_array(const wt_gguf *f, const char *key, wt_gguf_type elem_type,
                                   wt_gguf_value *out);

/* Tensor infos, in the file's order. */
WT_API int wt_gguf_tensor_count(const wt_gguf *f); /* 0 for NULL */
WT_API wt_status wt_gguf_tensor_at(const wt_gguf *f, int i, wt_gguf_tensor_info *out);
/* Index of a tensor by name; WT_ERR_NOT_FOUND if there is none. */
WT_API wt_status wt_gguf_find_tensor(const wt_gguf *f, const char *name, int *index);
/* Loads one tensor into ctx (conversions above; the shape reversed). */
WT_API wt_status wt_gguf_load(const wt_gguf *f, wt_context *ctx, const char *name, wt_tensor **out);
/* Copies a tensor's bytes, as stored, into dst; size must be the info's
 * bytes. Any type, quantised ones included. */
WT_API wt_status wt_gguf_read_raw(const wt_gguf *f, const char *name, void *dst, size_t size);

/* Writer: collects metadata and tensors, then writes a version 3 file:
 * key-values in the order set (setting a key again replaces its value in
 * place), tensor infos in the order added, data aligned to
 * general.alignment (32 unless set: a u32 power of two). */
typedef struct wt_gguf_writer wt_gguf_writer;
WT_API wt_status wt_gguf_writer_create(wt_gguf_writer **out);
WT_API void wt_gguf_writer_destroy(wt_gguf_writer *w); /* NULL is ignored */
/* Any value, arrays (of arrays) included; the value is copied. */
WT_API wt_status wt_gguf_writer_set(wt_gguf_writer *w, const char *key, const wt_gguf_value *value);
WT_API wt_status wt_gguf_writer_set_u32(wt_gguf_writer *w, const char *key, uint32_t v);
WT_API wt_status wt_gguf_writer_set_string(wt_gguf_writer *w, const char *key, const char *s);
/* A tensor (WT_F32, WT_F16 or WT_I32 -> GGUF F32, F16, I32; any layout,
 * views gathered; its shape reversed into dims; at most 4 dims, 0-d
 * written as 1-d of 1). The tensor is retained and read at save time. */
WT_API wt_status wt_gguf_writer_add_tensor(wt_gguf_writer *w, const char *name, const wt_tensor *t);
/* Raw bytes of any known ggml type: dims innermost first (n_dims 1..4),
 * bytes exactly what the type and dims need; the bytes are copied. */
WT_API wt_status wt_gguf_writer_add_raw(wt_gguf_writer *w, const char *name, uint32_t ggml_type, int n_dims,
                                        const uint64_t *dims, const void *data, size_t bytes);
/* Writes the file to path + ".tmp" and renames it to path. Waits for the
 * GPU. The writer stays usable. */
WT_API wt_status wt_gguf_writer_save(const wt_gguf_writer *w, const char *path);

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_IO_H */
