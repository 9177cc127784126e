/* Byte sources, element conversion and chunked tensor loading shared by
 * the .npy and safetensors code. */
#include "io/io.h"

#include "cpu/half.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes of a file converted per step when a tensor's elements need
 * converting: bounds the staging beside the tensor's own host buffer. */
#define IO_CHUNK ((size_t)4 << 20)

wt_status io_source_open_file(const char *fn, const char *path, io_source *src)
{
    memset(src, 0, sizeof *src);
    src->fd = -1;
    if (!path) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: path is NULL", fn);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return wt_fail(WT_ERR_IO, "%s: cannot open '%s': %s", fn, path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return wt_fail(WT_ERR_IO, "%s: '%s' is not a regular file", fn, path);
    }
    src->fd = fd;
    src->size = (uint64_t)sb.st_size;
    return WT_OK;
}

void io_source_memory(const void *data, size_t size, io_source *src)
{
    src->fd = -1;
    src->mem = data;
    src->size = data ? size : 0;
}

void io_source_close(io_source *src)
{
    if (src->fd >= 0) close(src->fd);
    src->fd = -1;
}

wt_status io_source_read(const char *fn, const io_source *src, uint64_t off, void *dst, size_t n)
{
    if (off > src->size || n > src->size - off)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "%s: the file is truncated (bytes %llu..%llu wanted, %llu present)", fn,
                       (unsigned long long)off, (unsigned long long)off + n,
                       (unsigned long long)src->size);
    if (n == 0) return WT_OK;
    if (src->fd < 0) {
        memcpy(dst, src->mem + off, n);
        return WT_OK;
    }
    uint8_t *p = dst;
    while (n > 0) {
        ssize_t got = pread(src->fd, p, n, (off_t)off);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return wt_fail(WT_ERR_IO, "%s: read failed: %s", fn, strerror(errno));
        if (got == 0) /* the file shrank after it was opened */
            return wt_fail(WT_ERR_IO, "%s: the file ended early (short read)", fn);
        p += got;
        off += (uint64_t)got;
        n -= (size_t)got;
    }
    return WT_OK;
}

size_t io_kind_size(io_kind k)
{
    switch (k) {
    case IO_F64: case IO_I64: return 8;
    case IO_F32: case IO_I32: return 4;
    case IO_F16: case IO_BF16: case IO_I16: case IO_U16: return 2;
    case IO_I8: case IO_U8: case IO_BOOL: return 1;
    case IO_UNSUPPORTED: return 0;
    }
    return 0;
}

wt_dtype io_kind_target(io_kind k, wt_dtype float_dtype)
{
    switch (k) {
    case IO_F64: case IO_F32: case IO_F16: case IO_BF16: return float_dtype;
    case IO_BOOL: return WT_BOOL;
    default: return WT_I32;
    }
}

static void swap_bytes(uint8_t *p, size_t n, size_t esize)
{
    for (size_t i = 0; i + esize <= n; i += esize)
        for (size_t a = 0, b = esize - 1; a < b; a++, b--) {
            uint8_t t = p[i + a];
            p[i + a] = p[i + b];
            p[i + b] = t;
        }
}

static uint32_t load_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint16_t load_u16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }

/* A file element as a double (floats) or an int64 (integers). */
static double elem_float(io_kind k, const uint8_t *p)
{
    switch (k) {
    case IO_F64: { double d; memcpy(&d, p, 8); return d; }
    case IO_F32: { float f; memcpy(&f, p, 4); return f; }
    case IO_F16: { uint32_t b = cpu_half_to_f32_bits(load_u16(p)); float f; memcpy(&f, &b, 4); return f; }
    case IO_BF16: { uint32_t b = (uint32_t)load_u16(p) << 16; float f; memcpy(&f, &b, 4); return f; }
    default: return 0.0;
    }
}

static int64_t elem_int(io_kind k, const uint8_t *p)
{
    switch (k) {
    case IO_I64: { int64_t v; memcpy(&v, p, 8); return v; }
    case IO_I32: return (int32_t)load_u32(p);
    case IO_I16: return (int16_t)load_u16(p);
    case IO_U16: return load_u16(p);
    case IO_I8: return (int8_t)p[0];
    case IO_U8: return p[0];
    default: return 0;
    }
}

/* Converts n elements at src into dst (target dtype, host format of
 * wt_tensor_from_data). first is the index of src's first element in the
 * tensor, for messages. */
static wt_status convert(const char *fn, const char *what, io_kind k, const uint8_t *src, size_t n,
                         wt_dtype target, uint8_t *dst, size_t first)
{
    size_t es = io_kind_size(k);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = src + i * es;
        switch (target) {
        case WT_F32: {
            float f = (float)elem_float(k, p);
            memcpy(dst + 4 * i, &f, 4);
            break;
        }
        case WT_F16: {
            uint16_t h;
            if (k == IO_F16) {
                h = load_u16(p);
            } else {
                float f = (float)elem_float(k, p);
                uint32_t b;
                memcpy(&b, &f, 4);
                h = cpu_f32_bits_to_half(b);
            }
            memcpy(dst + 2 * i, &h, 2);
            break;
        }
        case WT_I32: {
            int64_t v = elem_int(k, p);
            if (v < INT32_MIN || v > INT32_MAX)
                return wt_fail(WT_ERR_INVALID_ARGUMENT,
                               "%s: %s: element %zu (%lld) does not fit in int32", fn, what,
                               first + i, (long long)v);
            int32_t w = (int32_t)v;
            memcpy(dst + 4 * i, &w, 4);
            break;
        }
        case WT_BOOL:
            dst[i] = p[0] != 0;
            break;
        default:
            return wt_fail(WT_ERR_UNSUPPORTED, "%s: %s: no conversion to dtype %d", fn, what, (int)target);
        }
    }
    return WT_OK;
}

/* True when the file's bytes are already the host format of target. */
static bool same_format(io_kind k, bool swap, wt_dtype target)
{
    if (swap && io_kind_size(k) > 1) return false;
    return (k == IO_F32 && target == WT_F32) || (k == IO_F16 && target == WT_F16) ||
           (k == IO_I32 && target == WT_I32);
}

wt_status io_load_tensor(const char *fn, const char *what, const io_source *src, uint64_t off,
                         io_kind k, bool swap, wt_dtype target, int ndim, const int64_t *shape,
                         wt_context *ctx, wt_tensor **out)
{
    *out = NULL;
    size_t numel = 1, in_bytes, out_bytes;
    for (int i = 0; i < ndim; i++) {
        size_t dim;
        if (!wt_size_of_i64(shape[i], &dim) || !wt_mul_size(numel, dim, &numel))
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s: shape overflows", fn, what);
    }
    size_t es = io_kind_size(k), ts = wt_dtype_size(target);
    if (es == 0 || ts == 0) return wt_fail(WT_ERR_UNSUPPORTED, "%s: %s: unsupported dtype", fn, what);
    if (!wt_mul_size(numel, es, &in_bytes) || !wt_mul_size(numel, ts, &out_bytes))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s: size overflows", fn, what);
    if (off > src->size || in_bytes > src->size - off)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s: data runs past the end of the file", fn, what);

    uint8_t *host = malloc(out_bytes ? out_bytes : 1);
    if (!host) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: %s: out of host memory (%zu bytes)", fn, what, out_bytes);
    wt_status st = WT_OK;
    if (same_format(k, swap, target)) {
        st = io_source_read(fn, src, off, host, in_bytes);
    } else {
        size_t per = IO_CHUNK / es, done = 0;
        uint8_t *chunk = malloc(per * es);
        if (!chunk) st = wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
        while (st == WT_OK && done < numel) {
            size_t n = numel - done < per ? numel - done : per;
            st = io_source_read(fn, src, off + (uint64_t)done * es, chunk, n * es);
            if (st == WT_OK && swap) swap_bytes(chunk, n * es, es);
            if (st == WT_OK) st = convert(fn, what, k, chunk, n, target, host + done * ts, done);
            done += n;
        }
        free(chunk);
    }
    if (st == WT_OK) st = wt_tensor_from_data(ctx, target, ndim, shape, host, out);
    free(host);
    return st;
}

wt_status io_read_tensor(const char *fn, const wt_tensor *t, void **data, size_t *bytes)
{
    *data = NULL;
    *bytes = 0;
    if (!t) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: tensor is NULL", fn);
    size_t es = wt_dtype_size(wt_tensor_dtype(t)), n;
    if (!wt_bytes_of(wt_tensor_numel(t), es, &n))
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: tensor too large", fn);
    void *buf = malloc(n ? n : 1);
    if (!buf) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory (%zu bytes)", fn, n);
    wt_status st = wt_tensor_read(t, buf, n);
    if (st != WT_OK) {
        free(buf);
        return st;
    }
    *data = buf;
    *bytes = n;
    return WT_OK;
}

bool io_write_all(void *f, const void *buf, size_t n)
{
    return n == 0 || fwrite(buf, 1, n, (FILE *)f) == n;
}
