/*
 * webtensor model files: NumPy .npy and safetensors, read into and written
 * from tensors of any context.
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
                                     const wt_tensor *const *tensors, int nmeta,
                                     const char *const *meta_keys, const char *const *meta_values);

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_IO_H */
