/* Shared parts of the model-file readers and writers: a bounds-checked
 * byte source (a file read with pread, or memory), element conversion from
 * the dtypes files hold to the ones tensors hold, and loading a tensor from
 * a byte range without a second copy of the file. Uses the public API
 * only, plus the f16 bit conversions. */
#ifndef WT_IO_H
#define WT_IO_H

#include "core/internal.h" /* wt_fail, wt_mul_size */
#include "webtensor_io.h"

typedef struct io_source {
    int fd;              /* -1 for memory */
    const uint8_t *mem;  /* memory source */
    uint64_t size;       /* bytes */
} io_source;

wt_status io_source_open_file(const char *fn, const char *path, io_source *src);
void io_source_memory(const void *data, size_t size, io_source *src);
void io_source_close(io_source *src);
/* Reads n bytes at off; fails (never reads past the end) if the range
 * leaves the source. */
wt_status io_source_read(const char *fn, const io_source *src, uint64_t off, void *dst, size_t n);

/* What a file's elements are. */
typedef enum io_kind {
    IO_F64, IO_F32, IO_F16, IO_BF16,
    IO_I64, IO_I32, IO_I16, IO_I8, IO_U16, IO_U8,
    IO_BOOL,
    IO_UNSUPPORTED /* a dtype the format has but webtensor cannot hold */
} io_kind;

size_t io_kind_size(io_kind k);
/* The tensor dtype a kind loads as (float kinds: float_dtype). */
wt_dtype io_kind_target(io_kind k, wt_dtype float_dtype);

/* Loads numel elements of kind k stored at [off, off + bytes) of src
 * (byte-swapped first when swap) into a new tensor of ctx with the given
 * shape. what names the tensor in messages. */
wt_status io_load_tensor(const char *fn, const char *what, const io_source *src, uint64_t off,
                         io_kind k, bool swap, wt_dtype target, int ndim, const int64_t *shape,
                         wt_context *ctx, wt_tensor **out);

/* Host bytes of a tensor's elements in row-major order (views gathered),
 * in the host format of wt_tensor_read. The caller frees *data. */
wt_status io_read_tensor(const char *fn, const wt_tensor *t, void **data, size_t *bytes);

/* Writes all of buf to f; false on a short write. */
bool io_write_all(void *f, const void *buf, size_t n);

#endif /* WT_IO_H */
