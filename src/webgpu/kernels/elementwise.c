/* Elementwise kernels: fill, copy, unary and binary ops. Each picks the
 * cheapest way to walk its elements, after merging axes with wt_coalesce:
 *  - linear, in vec4 units, when the tensors' offsets (and a broadcast
 *    row's length) are multiples of 4; each thread moves several vec4s;
 *  - linear, in f32 units, when the layout is linear but not 4-aligned;
 *  - a tiled transpose, for copies whose source runs across out's rows;
 *  - strided index decoding otherwise.
 * Binary ops also stay linear when an operand is one scalar, a repeated
 * row or a repeated column (the common broadcasts: bias, scale). */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"

#include <stdio.h>
#include <string.h>

#define ELEMENTWISE_WG 256u

enum walk_mode { WALK_STRIDED = 0, WALK_LINEAR = 1, WALK_VEC4 = 2 };

/* How a binary operand is read in a linear walk (see binary.wgsl). */
enum operand_walk {
    OPERAND_STRIDED = -1,
    OPERAND_CONTIGUOUS = 0,
    OPERAND_SCALAR = 1,
    OPERAND_ROW = 2,
    OPERAND_COLUMN = 3,
    OPERAND_IMMEDIATE = 4 /* b only: a scalar in the parameters */
};

typedef struct strided_layout {
    int ndim;
    int64_t shape[WT_MAX_DIMS];
    int64_t strides[3][WT_MAX_DIMS]; /* out's (row-major), then the inputs' */
} strided_layout;

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Merged layout of out (contiguous) and up to two inputs of its shape. */
static void merge_layout(const wt_tensor *out, const wt_tensor *a, const wt_tensor *b,
                         strided_layout *l)
{
    memset(l, 0, sizeof *l);
    l->ndim = out->ndim;
    memcpy(l->shape, out->shape, sizeof l->shape);
    wt_contiguous_strides(out->ndim, out->shape, l->strides[0]);
    int n = 1;
    if (a)
        memcpy(l->strides[n++], a->strides, sizeof l->strides[0]);
    if (b)
        memcpy(l->strides[n++], b->strides, sizeof l->strides[0]);
    wt_coalesce(&l->ndim, l->shape, n, l->strides);
}

static bool is_unit_stride(const strided_layout *l, int operand)
{
    return l->ndim == 1 && l->strides[operand][0] == 1;
}

/* Every index a kernel computes is a u32. Bindings are smaller than 4 GiB,
 * so this only fails for layouts that could not be bound anyway. */
static wt_status check_u32(const char *op, const wt_tensor *t)
{
    if (!wg_fits_u32(t))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: tensor too large for 32-bit indexing", op);
    return WT_OK;
}

/* The lanes these kernels compute in: f32, i32, bool (4-byte words). */
static wt_status check_lanes(const char *op, const wt_tensor *t)
{
    if (t->dtype != WT_F32 && t->dtype != WT_I32 && t->dtype != WT_BOOL)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: dtype %s (f32, i32 and bool lanes only)", op,
                       wt_dtype_name(t->dtype));
    return WT_OK;
}

static void pack_u32x8(uint32_t dst[8], const int64_t *src, int n)
{
    memset(dst, 0, 8 * sizeof dst[0]);
    for (int i = 0; i < n; i++)
        dst[i] = (uint32_t)src[i];
}

/* ------------------------------------------------------- linear walks */

/* The extent of a linear walk: n whole units of T, then a last vec4 of
 * which tail lanes are written (vec4 walks only). */
/* Fewest workgroups a linear walk keeps before it gives up units per
 * thread. */
#define LINEAR_MIN_WORKGROUPS 1024

typedef struct linear_extent {
    uint32_t n, tail, vpt;
    uint64_t workgroups;
} linear_extent;

static linear_extent linear_extent_of(int64_t numel, enum walk_mode mode, uint32_t vpt)
{
    linear_extent e;
    e.vpt = vpt ? vpt : 1;
    e.n = (uint32_t)(mode == WALK_VEC4 ? numel / 4 : numel);
    e.tail = (uint32_t)(mode == WALK_VEC4 ? numel % 4 : 0);
    /* Several units per thread pay only when the launch fills the GPU
     * anyway; a small op wants every thread it can get (on the H200 a
     * chain of 1024-float adds took 3.2 us per op with 1 vec4 per thread
     * against 5.7 us with 4). */
    while (e.vpt > 1 && ((uint64_t)e.n + 1) < (uint64_t)ELEMENTWISE_WG * e.vpt * LINEAR_MIN_WORKGROUPS)
        e.vpt /= 2;
    e.workgroups = ceil_div((uint64_t)e.n + (e.tail ? 1 : 0), (uint64_t)ELEMENTWISE_WG * e.vpt);
    return e;
}

static bool vec4_enabled(const wt_context *ctx) { return wg_get_caps(ctx)->vec4_per_thread > 0; }

/* The prelude shared by fill, unary and binary: U, B and LANES follow the
 * walk's unit; then, for an op (not fill), the lanes' aliases and apply()
 * of wg_ew_prelude (op < 0: a copy). Returns the length written, -1 when
 * it does not fit. */
static int unit_prelude_units(char *buf, size_t cap, enum walk_mode mode, bool vec4, uint32_t vpt, bool with_op,
                              int op, wt_dtype lanes, wt_dtype out)
{
    int n = snprintf(buf, cap,
                     "const MODE: u32 = %uu;\nconst WG: u32 = %uu;\nconst VPT: u32 = %uu;\n"
                     "alias U = %s;\nalias B = %s;\nconst LANES = U(%s);\n",
                     (unsigned)mode, ELEMENTWISE_WG, vpt, vec4 ? "vec4<u32>" : "u32",
                     vec4 ? "vec4<bool>" : "bool", vec4 ? "0u, 1u, 2u, 3u" : "0u");
    if (n < 0 || (size_t)n >= cap)
        return -1;
    if (!with_op)
        return n;
    int m = wg_ew_prelude(buf + n, cap - (size_t)n, op, lanes, out, vec4 ? 4 : 1);
    return m < 0 ? -1 : n + m;
}

static int unit_prelude(char *buf, size_t cap, enum walk_mode mode, uint32_t vpt, bool with_op, int op,
                        wt_dtype lanes, wt_dtype out)
{
    return unit_prelude_units(buf, cap, mode, mode == WALK_VEC4, vpt, with_op, op, lanes, out);
}

/* A strided copy whose innermost axis has unit stride in x, an extent that
 * is a multiple of 4 and whose other strides and offsets are multiples of
 * 4 too (a permutation of leading axes, such as attention's heads moved
 * across the sequence) walks whole vec4s: the layout in units of four
 * elements. A [64, 256, 6, 64] head transpose read element by element
 * took 47 us on the H200, about 1 TB/s. */
static bool strided_vec4_layout(const wt_context *ctx, const wt_tensor *x, const wt_tensor *out,
                                strided_layout *lay)
{
    const int last = lay->ndim - 1;
    if (!vec4_enabled(ctx) || last < 0 || x->dtype != out->dtype || wt_dtype_storage_size(x->dtype) != 4 ||
        x->offset % 4 != 0 || out->offset % 4 != 0 || lay->strides[1][last] != 1 || lay->shape[last] % 4 != 0)
        return false;
    for (int d = 0; d < last; d++)
        if (lay->strides[1][d] % 4 != 0) return false;
    lay->shape[last] /= 4;
    for (int d = 0; d < last; d++) lay->strides[1][d] /= 4;
    return true;
}

/* --------------------------------------------------------------- fill */

wt_status wg_op_fill(wt_context *ctx, wt_tensor *out, float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return wg_op_fill_bits(ctx, out, bits);
}

wt_status wg_op_fill_bits(wt_context *ctx, wt_tensor *out, uint32_t bits)
{
    wt_status st;
    if (wt_dtype_storage_size(out->dtype) != 4)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu fill: dtype %s (4-byte dtypes only)",
                       wt_dtype_name(out->dtype));
    if ((st = check_u32("fill", out)) != WT_OK)
        return st;
    if (out->numel == 0)
        return WT_OK;
    /* The API fills contiguous tensors; their elements are one run. */
    enum walk_mode mode = vec4_enabled(ctx) && out->offset % 4 == 0 ? WALK_VEC4 : WALK_LINEAR;
    linear_extent e = linear_extent_of(out->numel, mode, wg_get_caps(ctx)->vec4_per_thread);
    uint32_t div = mode == WALK_VEC4 ? 4 : 1;
    fill_params p = {e.n, e.tail, (uint32_t)(out->offset / div), bits};
    char prelude[256];
    int used = unit_prelude(prelude, sizeof prelude, mode, e.vpt, false, 0, WT_F32, WT_F32);
    if (used < 0 || snprintf(prelude + used, sizeof prelude - (size_t)used, "alias T = U;\n") < 0)
        return wt_fail(WT_ERR_BACKEND, "webgpu fill: prelude too long");
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "fill";
    l.prelude = prelude;
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){out->storage, true};
    l.nbindings = 1;
    l.workgroups = e.workgroups;
    return wg_dispatch(ctx, &l);
}

/* ---------------------------------------------------------- transpose */

/* A copy whose source is contiguous along some axis other than out's
 * innermost one, and strided along that innermost one: the tiled
 * transpose reads and writes whole cache lines. Returns false (nothing
 * recorded) when the layout is not of that kind or too small to gain. */
static bool transpose_applies(const wt_context *ctx, const strided_layout *l, int *rows_axis)
{
    uint32_t tile = wg_get_caps(ctx)->transpose_tile;
    int last = l->ndim - 1;
    if (tile == 0 || l->ndim < 2 || l->strides[1][last] <= 1)
        return false;
    for (int d = last - 1; d >= 0; d--)
        if (l->strides[1][d] == 1) {
            /* Tiles much larger than the matrix leave most threads idle;
             * the strided walk does as well there. */
            if (l->shape[d] < 16 || l->shape[last] < 16)
                return false;
            *rows_axis = d;
            return true;
        }
    return false;
}

/* The vec4 kernel needs 4 consecutive rows of x and 4 consecutive columns
 * of out to be one aligned vec4 each. */
static bool transpose_vec4_fits(const wt_context *ctx, const transpose_params *p)
{
    if (!wg_get_caps(ctx)->transpose_vec4 || p->x_row_stride != 1)
        return false;
    uint32_t any = p->rows | p->cols | p->x_col_stride | p->out_row_stride | p->x_offset |
                   p->out_offset;
    for (uint32_t d = 0; d < p->nbatch_dims; d++)
        any |= p->batch_x_strides[d] | p->batch_out_strides[d];
    return (any & 3u) == 0;
}

static wt_status run_transpose(wt_context *ctx, const wt_tensor *x, wt_tensor *out,
                               const strided_layout *l, int rows_axis)
{
    int last = l->ndim - 1;
    transpose_params p;
    memset(&p, 0, sizeof p);
    p.rows = (uint32_t)l->shape[rows_axis];
    p.cols = (uint32_t)l->shape[last];
    p.x_row_stride = (uint32_t)l->strides[1][rows_axis];
    p.x_col_stride = (uint32_t)l->strides[1][last];
    p.out_row_stride = (uint32_t)l->strides[0][rows_axis];
    p.x_offset = (uint32_t)x->offset;
    p.out_offset = (uint32_t)out->offset;
    uint64_t nbatch = 1;
    int nb = 0;
    for (int d = 0; d < last; d++) {
        if (d == rows_axis)
            continue;
        p.batch_shape[nb] = (uint32_t)l->shape[d];
        p.batch_x_strides[nb] = (uint32_t)l->strides[1][d];
        p.batch_out_strides[nb] = (uint32_t)l->strides[0][d];
        nbatch *= (uint64_t)l->shape[d];
        nb++;
    }
    p.nbatch_dims = (uint32_t)nb;
    p.nbatch = (uint32_t)nbatch;
    /* The 16-byte kernel moves 64x64 tiles (4 vec4 per thread): on the
     * H200, 32768x4096 took 319 us against 347 us with 32x32 tiles. The
     * scalar kernel keeps the configured tile (64 was slower there: 803
     * against 577 us). */
    bool vec4 = transpose_vec4_fits(ctx, &p);
    uint32_t tile = wg_get_caps(ctx)->transpose_tile;
    if (vec4 && wg_get_caps(ctx)->max_workgroup_storage >= 64 * 65 * sizeof(float))
        tile = 64;
    p.tiles_r = (uint32_t)ceil_div(p.rows, tile);
    p.tiles_c = (uint32_t)ceil_div(p.cols, tile);
    uint64_t workgroups = nbatch * p.tiles_r * p.tiles_c;
    if (workgroups > UINT32_MAX)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu copy: %llu tiles are beyond 32-bit indexing",
                       (unsigned long long)workgroups);
    char prelude[48];
    snprintf(prelude, sizeof prelude, "const TILE: u32 = %uu;\n", tile);
    wg_launch launch;
    memset(&launch, 0, sizeof launch);
    launch.shader = vec4 ? "transpose_vec4" : "transpose";
    launch.prelude = prelude;
    launch.libraries[0] = "transpose_tile";
    launch.params = &p;
    launch.params_size = sizeof p;
    launch.bindings[0] = (wg_binding){x->storage, false};
    launch.bindings[1] = (wg_binding){out->storage, true};
    launch.nbindings = 2;
    launch.workgroups = workgroups;
    return wg_dispatch(ctx, &launch);
}

/* -------------------------------------------------------------- unary */

/* out = op(x) (op < 0: a copy, which may take the tiled transpose). */
static wt_status run_unary(wt_context *ctx, const char *name, int op, const wt_tensor *x,
                           const uint32_t *params, wt_tensor *out)
{
    wt_status st;
    if ((st = check_lanes(name, x)) != WT_OK || (st = check_lanes(name, out)) != WT_OK ||
        (st = check_u32(name, x)) != WT_OK || (st = check_u32(name, out)) != WT_OK)
        return st;
    if (out->numel == 0)
        return WT_OK;
    strided_layout lay;
    merge_layout(out, x, NULL, &lay);
    enum walk_mode mode = WALK_STRIDED;
    if (is_unit_stride(&lay, 1))
        mode = vec4_enabled(ctx) && x->offset % 4 == 0 && out->offset % 4 == 0 ? WALK_VEC4
                                                                              : WALK_LINEAR;
    int rows_axis = -1;
    if (mode == WALK_STRIDED && op < 0 && transpose_applies(ctx, &lay, &rows_axis))
        return run_transpose(ctx, x, out, &lay, rows_axis);
    bool units4 = mode == WALK_VEC4 || (mode == WALK_STRIDED && op < 0 && strided_vec4_layout(ctx, x, out, &lay));

    linear_extent e = linear_extent_of(out->numel, units4 ? WALK_VEC4 : mode, wg_get_caps(ctx)->vec4_per_thread);
    uint32_t div = units4 ? 4 : 1;
    unary_params p;
    memset(&p, 0, sizeof p);
    p.n = e.n;
    p.tail = e.tail;
    p.ndim = (uint32_t)lay.ndim;
    p.x_offset = (uint32_t)(x->offset / div);
    p.out_offset = (uint32_t)(out->offset / div);
    if (params) {
        p.p0 = params[0];
        p.p1 = params[1];
    }
    pack_u32x8(p.shape, lay.shape, lay.ndim);
    pack_u32x8(p.x_strides, lay.strides[1], lay.ndim);

    char prelude[768];
    if (unit_prelude_units(prelude, sizeof prelude, mode, units4, e.vpt, true, op, x->dtype, out->dtype) < 0)
        return wt_fail(WT_ERR_BACKEND, "webgpu %s: prelude too long", name);
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "unary";
    l.libraries[0] = wg_ew_library(x->dtype);
    l.prelude = prelude;
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){x->storage, false};
    l.bindings[1] = (wg_binding){out->storage, true};
    l.nbindings = 2;
    l.workgroups = e.workgroups;
    return wg_dispatch(ctx, &l);
}

wt_status wg_op_copy(wt_context *ctx, const wt_tensor *x, wt_tensor *out)
{
    return run_unary(ctx, "copy", -1, x, NULL, out);
}

/* ------------------------------------------------------------- binary */

/* How operand k of a coalesced layout can be read in a linear walk. */
static enum operand_walk classify_operand(const strided_layout *l, int k)
{
    const int64_t *s = l->strides[k];
    if (l->ndim == 1)
        return s[0] == 1 ? OPERAND_CONTIGUOUS : s[0] == 0 ? OPERAND_SCALAR : OPERAND_STRIDED;
    if (l->ndim != 2)
        return OPERAND_STRIDED;
    if (s[1] == 1 && s[0] == l->shape[1])
        return OPERAND_CONTIGUOUS;
    if (s[1] == 1 && s[0] == 0)
        return OPERAND_ROW;
    if (s[1] == 0)
        return s[0] == 0 ? OPERAND_SCALAR : OPERAND_COLUMN;
    return OPERAND_STRIDED;
}

/* Whether an operand read as whole vec4s is aligned for it. */
static bool operand_vec4_ok(enum operand_walk w, const wt_tensor *t)
{
    return (w != OPERAND_CONTIGUOUS && w != OPERAND_ROW) || t->offset % 4 == 0;
}

/* Offset parameter of an operand: in units of T where it is read as T,
 * in elements where it is read as f32. */
static uint32_t operand_offset(enum operand_walk w, const wt_tensor *t, uint32_t div)
{
    return (uint32_t)(w == OPERAND_CONTIGUOUS || w == OPERAND_ROW ? t->offset / div : t->offset);
}

/* out = op(a, b); b NULL: the scalar whose bits are b_bits. */
static wt_status run_binary(wt_context *ctx, const char *name, wt_op op, const wt_tensor *a,
                            const wt_tensor *b, uint32_t b_bits, wt_tensor *out)
{
    wt_status st;
    const wt_tensor *all[3] = {a, b, out};
    for (int i = 0; i < 3; i++)
        if (all[i] && ((st = check_lanes(name, all[i])) != WT_OK || (st = check_u32(name, all[i])) != WT_OK))
            return st;
    if (out->numel == 0)
        return WT_OK;
    strided_layout lay;
    merge_layout(out, a, b, &lay);
    enum operand_walk wa = classify_operand(&lay, 1), wb = b ? classify_operand(&lay, 2) : OPERAND_SCALAR;
    enum walk_mode mode = WALK_STRIDED;
    int64_t inner = lay.ndim == 2 ? lay.shape[1] : 1;
    if (wa != OPERAND_STRIDED && wb != OPERAND_STRIDED) {
        /* A vec4 must not straddle two rows of a 2-D walk. */
        bool aligned = vec4_enabled(ctx) && out->offset % 4 == 0 &&
                       (lay.ndim == 1 || inner % 4 == 0) &&
                       operand_vec4_ok(wa, a) && operand_vec4_ok(wb, b);
        mode = aligned ? WALK_VEC4 : WALK_LINEAR;
    } else {
        wa = wb = OPERAND_CONTIGUOUS; /* unused by the strided walk */
    }
    if (!b)
        wb = OPERAND_IMMEDIATE;
    linear_extent e = linear_extent_of(out->numel, mode, wg_get_caps(ctx)->binary_vec4_per_thread);
    uint32_t div = mode == WALK_VEC4 ? 4 : 1;
    binary_params p;
    memset(&p, 0, sizeof p);
    p.n = e.n;
    p.tail = e.tail;
    p.ndim = (uint32_t)lay.ndim;
    p.inner = (uint32_t)(mode == WALK_STRIDED ? 1 : inner / div);
    if (p.inner == 0)
        p.inner = 1;
    if (mode == WALK_STRIDED) {
        p.a_offset = (uint32_t)a->offset;
        p.b_offset = b ? (uint32_t)b->offset : 0;
    } else {
        p.a_offset = operand_offset(wa, a, div);
        p.b_offset = b ? operand_offset(wb, b, div) : 0;
        p.a_col_stride = wa == OPERAND_COLUMN ? (uint32_t)lay.strides[1][0] : 0;
        p.b_col_stride = wb == OPERAND_COLUMN ? (uint32_t)lay.strides[2][0] : 0;
    }
    p.out_offset = (uint32_t)(out->offset / div);
    p.b_bits = b_bits;
    pack_u32x8(p.shape, lay.shape, lay.ndim);
    pack_u32x8(p.a_strides, lay.strides[1], lay.ndim);
    pack_u32x8(p.b_strides, lay.strides[2], lay.ndim);

    /* Scalar and column operands are read element by element (S) and
     * splatted; contiguous and row operands in the walk's unit (T). */
    bool a_unit = wa == OPERAND_CONTIGUOUS || wa == OPERAND_ROW;
    bool b_unit = wb == OPERAND_CONTIGUOUS || wb == OPERAND_ROW;
    char prelude[768];
    int used = unit_prelude(prelude, sizeof prelude, mode, e.vpt, true, (int)op, a->dtype, out->dtype);
    if (used < 0 ||
        snprintf(prelude + used, sizeof prelude - (size_t)used,
                 "const A_MODE: u32 = %uu;\nconst B_MODE: u32 = %uu;\nalias TA = %s;\nalias TB = %s;\n",
                 (unsigned)wa, (unsigned)wb, a_unit ? "T" : "S", b_unit ? "T" : "S") < 0)
        return wt_fail(WT_ERR_BACKEND, "webgpu %s: prelude too long", name);
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "binary";
    l.libraries[0] = wg_ew_library(a->dtype);
    l.libraries[1] = "ew_strided_index";
    l.prelude = prelude;
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){a->storage, false};
    /* A scalar b still needs a binding: a's storage stands in. */
    l.bindings[1] = (wg_binding){b ? b->storage : a->storage, false};
    l.bindings[2] = (wg_binding){out->storage, true};
    l.nbindings = 3;
    l.workgroups = e.workgroups;
    return wg_dispatch(ctx, &l);
}

/* ------------------------------------------------------- the dispatch */

wt_status wg_op_elementwise(wt_context *ctx, const wt_ew_args *args)
{
    if ((unsigned)args->op >= WT_OP_COUNT || wt_op_table[args->op].arity != args->nin)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "webgpu: op %d is not an elementwise op of %d inputs",
                       (int)args->op, args->nin);
    const char *name = wt_op_table[args->op].name;
    const wt_tensor *x = args->in[0];
    if (args->nin == 2 && args->in[1] && args->in[1]->dtype != x->dtype)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: inputs of dtypes %s and %s", name,
                       wt_dtype_name(x->dtype), wt_dtype_name(args->in[1]->dtype));
    if (x->dtype == WT_F16)
        return wg_ew_f16(ctx, args);
    if (args->nin == 1)
        return run_unary(ctx, name, (int)args->op, x, args->params, args->out);
    return run_binary(ctx, name, args->op, x, args->in[1], args->params[1], args->out);
}
