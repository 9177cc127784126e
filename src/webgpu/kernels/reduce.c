/* WebGPU reductions (every row of core/reduce_ops.def) over the innermost
 * axes, and the row dot products that matrix-vector products are made of.
 * A row's map, combine and finish become the shaders' prelude, so a new
 * row needs no code here. f32, i32 and bool (0/1 words, as i32) elements;
 * f16 input is read as words of halves and widened to f32 in the first
 * pass (f32 partials and result: a fifth of the traffic of casting it to
 * f32 first).
 *
 * The work is seen as a [rows, row_len] matrix: element (o, r) at
 * offset + o * row_stride + r * elem_stride, after merging the kept axes
 * into one and the reduced axes into one. Layouts that do not merge are
 * first gathered into a contiguous copy.
 *
 * Two kernels:
 *  - reduce_rows: a workgroup per (row, chunk), for rows contiguous in
 *    memory (elem_stride 1), vec4 loads with several in flight per
 *    thread; the threads' values then meet through subgroup operations
 *    where the device has them, else as a tree in workgroup memory (one
 *    kernel body; the combine comes as a library from
 *    reduce_combine_subgroup or reduce_combine_shared). A row stays
 *    whole (one pass, no scratch) when it is short enough or when the
 *    rows alone give the device enough workgroups; otherwise it is cut
 *    into chunks so that about `groups` workgroups stream it (a full
 *    reduction: pass 1 with thousands of workgroups, pass 2 with one).
 *  - reduce_strided: a thread per (row, chunk), consecutive threads on
 *    consecutive rows: coalesced for reductions over outer axes
 *    (row_stride 1), and cheap for short rows.
 *  - reduce_columns: reduce_strided's case of adjacent rows (a sum over
 *    leading axes, like a bias gradient) where four rows make an aligned
 *    vec4: a thread per (four rows, chunk), four vec4 loads in flight,
 *    short chunks so that enough loads are in flight to stream memory.
 *  - reduce_column_blocks (the default for reduce_columns' cases): a
 *    workgroup per (band of columns, block of rows), its lanes of threads
 *    on rows of the block, each lane's loads coalesced across the band,
 *    the lanes combined in a fixed tree in workgroup memory; a block's
 *    partials are one row, so a bias gradient of 16384 rows takes two
 *    passes (hundreds of blocks, then one) where reduce_columns took three.
 * While a row has more than one chunk, another pass reduces the partials
 * (no atomics; sums come out in a pairwise-like order, which keeps f32
 * sums accurate).
 *
 * Tuning switches, read from the environment (once per process) so that
 * variants can be compared without a rebuild; an invalid value means the
 * default:
 *   WT_REDUCE_WG         threads per workgroup of reduce_rows: 32..1024,
 *                        power of two (256, fewer for short rows; 32 on a
 *                        CPU adapter)
 *   WT_REDUCE_UNROLL     vec4 loads in flight per thread: 1, 2, 4, 8 (4; 8 for f16
 *                        input, whose 4-element loads are 8 bytes: a 2^28 f16 sum on
 *                        the H200 ran at 3,247 GB/s with 4 and 4,183 with 8)
 *   WT_REDUCE_GROUPS     workgroups a split row pass aims for; 0: rows
 *                        are never split (4096)
 *   WT_REDUCE_ONEPASS    rows up to this many elements are never split;
 *                        0: any row may be (16384)
 *   WT_REDUCE_SUBGROUPS  0: workgroup-memory kernel even where subgroups
 *                        exist (1)
 *   WT_REDUCE_COLUMNS    reduce_columns: fewest elements a thread sums,
 *                        4..1024; 0: reduce_strided takes its cases (32)
 *   WT_REDUCE_COLUMN_BLOCKS  0: reduce_columns, not reduce_column_blocks
 */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows at most this long go to the strided kernel, one thread per row. */
#define REDUCE_SHORT_ROW 64
/* reduce_strided: serial elements per thread, bounds. */
#define REDUCE_STRIDED_MIN_CHUNK 256
#define REDUCE_STRIDED_MAX_CHUNK 1024
/* Threads worth having in flight; beyond it, longer chunks instead. */
#define REDUCE_TARGET_THREADS (1u << 18)
#define REDUCE_STRIDED_WG 256
/* A split row's chunks give each thread at least this many unrolled
 * steps (fewer would spend more on the partials than on the loads). */
#define REDUCE_MIN_STEPS 4
/* reduce_columns: elements a thread's chunk has at least (the default of
 * WT_REDUCE_COLUMNS) and at most; threads (of four columns each) worth
 * having in flight, each with four vec4 loads outstanding: 4 MiB of
 * loads, about what a GPU of several TB/s needs to cover its memory
 * latency. */
#define REDUCE_COLUMNS_MIN_CHUNK 32
#define REDUCE_COLUMNS_MAX_CHUNK 1024
#define REDUCE_COLUMNS_TARGET_THREADS (1u << 16)
/* reduce_column_blocks: threads a workgroup; quads a band for long
 * reductions (each lane's load a contiguous 512 bytes) and for short ones
 * (more lanes, fewer steps each); steps a lane takes at most in a pass of
 * one block, and at least when blocks are cut; workgroups worth having
 * (a few per multiprocessor of a large GPU: four vec4 loads in flight per
 * thread cover the memory latency). */
#define COLUMN_BLOCKS_WG 256
#define COLUMN_BLOCKS_WIDE_BAND 32
#define COLUMN_BLOCKS_NARROW_BAND 8
#define COLUMN_BLOCKS_ONE_BLOCK_STEPS 32
#define COLUMN_BLOCKS_MIN_STEPS 8
#define COLUMN_BLOCKS_TARGET_WG 512

typedef struct reduce_tuning {
    uint32_t wg, unroll, groups, onepass;
    uint32_t columns_min_chunk; /* 0: no reduce_columns */
    bool column_blocks;         /* reduce_column_blocks for reduce_columns' cases */
    bool wg_set;                /* WT_REDUCE_WG gave the size */
    bool subgroups;
} reduce_tuning;


/* A requested reduce_rows workgroup size: a power of two in 32..1024,
 * lowered to the device's limits (invocations, and the partial array of
 * WG floats in workgroup memory); 0 when the request is not valid. */
static uint32_t usable_wg(const wg_caps *caps, uint64_t wg)
{
    if (!wg_is_pow2(wg) || wg < 32 || wg > 1024) return 0;
    while (wg > 32 && (wg > caps->max_invocations || wg * 4 > caps->max_workgroup_storage))
        wg >>= 1;
    return (uint32_t)wg;
}

static reduce_tuning read_tuning(const wt_context *ctx, bool half)
{
    const wg_caps *caps = wg_get_caps(ctx);
    reduce_tuning t;
    uint64_t fallback = caps->cpu_adapter ? 32 : 256;
    t.wg = usable_wg(caps, wt_knob_number(WT_KNOB_REDUCE_WG, fallback));
    t.wg_set = t.wg && wt_knob_number(WT_KNOB_REDUCE_WG, 0) != 0;
    if (!t.wg) t.wg = usable_wg(caps, fallback);
    uint32_t fallback_unroll = half ? 8 : 4;
    uint64_t u = wt_knob_number(WT_KNOB_REDUCE_UNROLL, fallback_unroll);
    t.unroll = (u == 1 || u == 2 || u == 4 || u == 8) ? (uint32_t)u : fallback_unroll;
    uint64_t g = wt_knob_count(WT_KNOB_REDUCE_GROUPS, 4096);
    t.groups = g > (1u << 20) ? (1u << 20) : (uint32_t)g;
    uint64_t one = wt_knob_count(WT_KNOB_REDUCE_ONEPASS, 16384);
    t.onepass = one > (1u << 30) ? (1u << 30) : (uint32_t)one;
    uint64_t cm = wt_knob_count(WT_KNOB_REDUCE_COLUMNS, REDUCE_COLUMNS_MIN_CHUNK);
    t.columns_min_chunk = cm == 0                          ? 0
                          : cm < 4                         ? 4
                          : cm > REDUCE_COLUMNS_MAX_CHUNK ? REDUCE_COLUMNS_MAX_CHUNK
                                                           : (uint32_t)cm;
    const char *cb = wt_knob_text(WT_KNOB_REDUCE_COLUMN_BLOCKS);
    t.column_blocks = !(cb && strcmp(cb, "0") == 0);
    const char *sg = wt_knob_text(WT_KNOB_REDUCE_SUBGROUPS);
    t.subgroups = caps->subgroups && !(sg && strcmp(sg, "0") == 0);
    return t;
}

/* One pass's input: a [rows, row_len] matrix inside a storage, its rows
 * in batches (row o of batch o / rows_per_batch); with dot set, each
 * element is multiplied by the matching element of the vector v first. */
typedef struct reduce_matrix {
    wt_storage *storage;
    uint64_t offset, rows, row_len, row_stride, elem_stride;
    uint64_t rows_per_batch, batch_stride;
    wt_storage *dot;
    uint64_t v_offset, v_batch_stride;
} reduce_matrix;

static reduce_matrix plain_matrix(wt_storage *s, uint64_t offset, uint64_t rows,
                                  uint64_t row_len, uint64_t row_stride, uint64_t elem_stride)
{
    reduce_matrix m;
    memset(&m, 0, sizeof m);
    m.storage = s, m.offset = offset, m.rows = rows, m.row_len = row_len;
    m.row_stride = row_stride, m.elem_stride = elem_stride;
    m.rows_per_batch = rows;
    return m;
}

/* What every pass of one reduction shares: the table row, the element
 * type, the shifts (one per row), finish's n. */
typedef struct reduce_variant {
    const wt_reduce_info *info;
    bool integer;
    bool half; /* the first pass reads f16 */
    wt_storage *shift;
    uint64_t shift_offset;
    float n;
} reduce_variant;

static uint32_t shader_op(wt_combine c)
{
    switch (c) {
    case WT_COMBINE_ADD: return 0u;
    case WT_COMBINE_MAX: return 1u;
    case WT_COMBINE_MIN: return 2u;
    case WT_COMBINE_MUL: return 3u;
    }
    return 0u;
}

static uint32_t identity_bits(const reduce_variant *v)
{
    const double id = v->info->identity;
    if (v->integer) {
        int32_t i = id == -INFINITY ? INT32_MIN : id == INFINITY ? INT32_MAX : (int32_t)id;
        return (uint32_t)i;
    }
    float f = (float)id;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

/* The loads of one pass (x1, and x4 for reduce_rows): the elements
 * themselves, or f16 input's words widened to f32 (f16_bits / f16_hw). */
static const char *k_load_plain = "alias X1 = T;\nalias X4 = T4;\nfn load1(j: u32) -> T { return x1[j]; }\n";
static const char *k_load4_plain = "fn load4(i: u32) -> T4 { return x4[i]; }\n";
static const char *k_load_half = "alias X1 = u32;\nalias X4 = vec2<u32>;\n"
                                 "fn load1(j: u32) -> T { return unpack_halves(x1[j / 2u])[j % 2u]; }\n";
static const char *k_load4_half =
    "fn load4(i: u32) -> T4 { let w = x4[i]; return T4(unpack_halves(w.x), unpack_halves(w.y)); }\n";

/* The prelude of one pass: types, the combine, the loads, and the row's
 * map (first pass only) and finish (last pass only). */
static void variant_prelude(char *buf, size_t size, const reduce_variant *v, bool first, bool last,
                            bool rows_kernel)
{
    const char *t = v->integer ? "i32" : "f32";
    const char *map = first ? v->info->map_wgsl : "v", *fin = last ? v->info->finish_wgsl : "a";
    const bool half = first && v->half;
    snprintf(buf, size,
             "alias T = %s;\nalias T4 = vec4<%s>;\nconst FLOAT: bool = %s;\nconst OP: u32 = %uu;\n"
             "const SHIFT: bool = %s;\n"
             "fn map(v: T, s: T) -> T { return %s; }\n"
             "fn map4(v: T4, s: T) -> T4 { return %s; }\n"
             "fn finish(a: T, s: T) -> T { return %s; }\n%s%s",
             t, t, v->integer ? "false" : "true", shader_op(v->info->combine),
             v->shift ? "true" : "false", map, map, fin, half ? k_load_half : k_load_plain,
             !rows_kernel ? "" : half ? k_load4_half : k_load4_plain);
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

typedef enum reduce_kernel { KERNEL_ROWS, KERNEL_STRIDED, KERNEL_COLUMNS, KERNEL_COLUMN_BLOCKS } reduce_kernel;

/* Chunks per row for reduce_rows: one while the row is short or the rows
 * alone fill the device; else enough for about t->groups workgroups, each
 * thread still doing REDUCE_MIN_STEPS unrolled steps. */
static uint64_t rows_chunks(const reduce_matrix *m, const reduce_tuning *t, uint32_t wg)
{
    if (m->row_len <= t->onepass || m->rows >= t->groups) return 1;
    uint64_t c = ceil_div(t->groups, m->rows);
    uint64_t min_chunk = (uint64_t)wg * 4u * t->unroll * REDUCE_MIN_STEPS;
    uint64_t most = ceil_div(m->row_len, min_chunk);
    return c < most ? c : most;
}

/* Chunks per row for reduce_strided: serial runs of at most
 * REDUCE_STRIDED_MAX_CHUNK, more chunks while the GPU would be short of
 * threads, partials within one storage binding. */
static uint64_t strided_chunks(const reduce_matrix *m, uint64_t max_binding)
{
    uint64_t R = m->row_len;
    if (R <= REDUCE_SHORT_ROW) return 1;
    uint64_t c = ceil_div(R, REDUCE_STRIDED_MAX_CHUNK);
    uint64_t par = ceil_div(REDUCE_TARGET_THREADS, m->rows);
    if (par > c) c = par;
    uint64_t most = ceil_div(R, REDUCE_STRIDED_MIN_CHUNK);
    if (c > most) c = most;
    uint64_t fit = max_binding / (4 * m->rows);
    if (c > fit) c = fit ? fit : 1;
    return c;
}

/* Whether reduce_columns can take m: rows adjacent (row_stride 1), four
 * rows one aligned vec4 at every step, no shift (one per row) and no f16
 * input (its words are read otherwise). */
static bool columns_fit(const reduce_matrix *m, const reduce_variant *v, bool first,
                        const reduce_tuning *t)
{
    return t->columns_min_chunk && !m->dot && !v->shift && !(first && v->half) && m->rows > 1 &&
           m->row_stride == 1 && m->rows % 4 == 0 && m->elem_stride % 4 == 0 &&
           m->offset % 4 == 0 && m->row_len > 1;
}

/* Chunks per row for reduce_columns: enough for about
 * REDUCE_COLUMNS_TARGET_THREADS threads, chunks of
 * min_chunk..REDUCE_COLUMNS_MAX_CHUNK elements, partials within one
 * storage binding. */
static uint64_t columns_chunks(const reduce_matrix *m, uint32_t min_chunk, uint64_t max_binding)
{
    uint64_t R = m->row_len;
    uint64_t c = ceil_div(REDUCE_COLUMNS_TARGET_THREADS, m->rows / 4);
    uint64_t least = ceil_div(R, REDUCE_COLUMNS_MAX_CHUNK);
    if (c < least) c = least;
    uint64_t most = ceil_div(R, min_chunk);
    if (c > most) c = most;
    uint64_t fit = max_binding / (4 * m->rows);
    if (c > fit) c = fit ? fit : 1;
    return c;
}

/* reduce_column_blocks: quads a band, a power of two no wider than the
 * quads there are (narrow for short reductions: more lanes, so that one
 * block covers them in a few steps a lane). */
static uint32_t column_band_quads(const reduce_matrix *m)
{
    uint64_t want = m->row_len > (uint64_t)COLUMN_BLOCKS_WG / COLUMN_BLOCKS_NARROW_BAND *
                                     COLUMN_BLOCKS_ONE_BLOCK_STEPS
                        ? COLUMN_BLOCKS_WIDE_BAND
                        : COLUMN_BLOCKS_NARROW_BAND;
    uint32_t bq = 1;
    while (bq < want && bq < m->rows / 4) bq <<= 1;
    return bq;
}

/* Blocks per band for reduce_column_blocks: one while its lanes cover the
 * reduction in COLUMN_BLOCKS_ONE_BLOCK_STEPS steps each; else enough for
 * about COLUMN_BLOCKS_TARGET_WG workgroups with at least
 * COLUMN_BLOCKS_MIN_STEPS steps a lane, partials within one binding. */
static uint64_t column_blocks(const reduce_matrix *m, uint32_t band_quads, uint64_t max_binding)
{
    uint64_t R = m->row_len, lanes = COLUMN_BLOCKS_WG / band_quads;
    if (R <= lanes * COLUMN_BLOCKS_ONE_BLOCK_STEPS) return 1;
    uint64_t bands = ceil_div(m->rows / 4, band_quads);
    uint64_t c = ceil_div(COLUMN_BLOCKS_TARGET_WG, bands);
    uint64_t most = ceil_div(R, lanes * COLUMN_BLOCKS_MIN_STEPS);
    if (c > most) c = most;
    if (c < 2) c = 2; /* more than one block's steps a lane: cut anyway */
    uint64_t fit = max_binding / (4 * m->rows);
    if (c > fit) c = fit ? fit : 1;
    return c;
}

/* reduce_rows' workgroup size for a plain reduction's first pass: the
 * tuning's, or, for rows that stay whole and are short, the fewest threads
 * (a power of two, at least 32) that read a row in one step of UNROLL
 * vec4 loads each. Many short rows (a layer norm's means over 384
 * elements) then run as many small workgroups, more rows' loads in flight
 * on each multiprocessor than with mostly idle threads of large ones.
 * A size set through WT_REDUCE_WG is kept. */
static uint32_t first_pass_wg(const reduce_matrix *m, const reduce_tuning *t)
{
    if (t->wg_set || m->dot || m->elem_stride != 1 || rows_chunks(m, t, t->wg) != 1) return t->wg;
    uint64_t need = ceil_div(m->row_len, 4u * t->unroll);
    uint32_t wg = 32;
    while (wg < need && wg < t->wg) wg <<= 1;
    return wg < t->wg ? wg : t->wg;
}

/* Records one pass over m with output to (dst, dst_offset); fills *next
 * with the layout of the partials it writes (rows * chunks of them). */
static wt_status reduce_pass(wt_context *ctx, const reduce_variant *v, bool first, bool last,
                             const reduce_matrix *m, const reduce_tuning *t, uint32_t wg,
                             wt_storage *dst, uint64_t dst_offset, reduce_kernel kernel,
                             uint64_t chunks, uint64_t chunk_len, reduce_matrix *next)
{
    reduce_params p;
    memset(&p, 0, sizeof p);
    p.work = (uint32_t)(m->rows * chunks);
    p.chunk_len = (uint32_t)chunk_len;
    p.row_len = (uint32_t)m->row_len;
    p.row_stride = (uint32_t)m->row_stride;
    p.elem_stride = (uint32_t)m->elem_stride;
    p.x_offset = (uint32_t)m->offset;
    p.out_offset = (uint32_t)dst_offset;
    p.divisor = v->n;
    p.identity = identity_bits(v);
    p.shift_offset = (uint32_t)v->shift_offset;
    p.rows_per_batch = (uint32_t)m->rows_per_batch;
    p.batch_stride = (uint32_t)m->batch_stride;
    p.v_offset = (uint32_t)m->v_offset;
    p.v_batch_stride = (uint32_t)m->v_batch_stride;

    char prelude[1536], head[1024];
    const bool use_rows_kernel = kernel == KERNEL_ROWS;
    variant_prelude(head, sizeof head, v, first, last, kernel != KERNEL_STRIDED);
    const char *half_lib = first && v->half ? wg_f16_library(ctx) : NULL;
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.params = &p;
    l.params_size = sizeof p;
    l.prelude = prelude;
    if (use_rows_kernel) {
        p.chunks_or_rows = (uint32_t)chunks;
        /* No subgroupMul: products combine in workgroup memory. */
        bool subgroups = t->subgroups && v->info->combine != WT_COMBINE_MUL;
        snprintf(prelude, sizeof prelude,
                 "%s%sconst WG: u32 = %uu;\nconst UNROLL: u32 = %uu;\nconst DOT: bool = %s;\n",
                 subgroups ? "enable subgroups;\n" : "", head, wg, t->unroll,
                 m->dot ? "true" : "false");
        l.shader = "reduce_rows";
        l.libraries[0] = "reduce_terms";
        l.libraries[1] = subgroups ? "reduce_combine_subgroup" : "reduce_combine_shared";
        l.libraries[2] = half_lib;
        l.bindings[0] = (wg_binding){m->storage, false}; /* as vec4s */
        l.bindings[1] = (wg_binding){m->storage, false}; /* as scalars */
        l.bindings[2] = (wg_binding){dst, true};
        /* The shader declares v either way; a plain reduction never reads it. */
        l.bindings[3] = (wg_binding){m->dot ? m->dot : m->storage, false};
        l.bindings[4] = (wg_binding){v->shift ? v->shift : m->storage, false};
        l.nbindings = 5;
        l.workgroups = p.work;
        /* Partials of row o are consecutive. */
        *next = plain_matrix(dst, dst_offset, m->rows, chunks, chunks, 1);
    } else if (kernel == KERNEL_COLUMN_BLOCKS) {
        uint32_t band_quads = column_band_quads(m);
        p.work = (uint32_t)(ceil_div(m->rows / 4, band_quads) * chunks);
        p.chunks_or_rows = (uint32_t)m->rows;
        snprintf(prelude, sizeof prelude, "%sconst WG: u32 = %uu;\nconst BANDQ: u32 = %uu;\n", head,
                 (unsigned)COLUMN_BLOCKS_WG, band_quads);
        l.shader = "reduce_column_blocks";
        l.libraries[0] = "reduce_terms";
        l.bindings[0] = (wg_binding){m->storage, false}; /* as vec4s */
        l.bindings[1] = (wg_binding){m->storage, false}; /* as scalars (never read) */
        l.bindings[2] = (wg_binding){dst, true};
        l.nbindings = 3;
        l.workgroups = p.work;
        /* Partials form a [blocks, rows] matrix: row o is column o. */
        *next = plain_matrix(dst, dst_offset, m->rows, chunks, 1, m->rows);
    } else if (kernel == KERNEL_COLUMNS) {
        p.work = (uint32_t)(m->rows / 4 * chunks);
        p.chunks_or_rows = (uint32_t)m->rows;
        snprintf(prelude, sizeof prelude, "%sconst WG: u32 = %uu;\n", head,
                 (unsigned)REDUCE_STRIDED_WG);
        l.shader = "reduce_columns";
        l.libraries[0] = "reduce_terms";
        l.bindings[0] = (wg_binding){m->storage, false}; /* as vec4s */
        l.bindings[1] = (wg_binding){m->storage, false}; /* as scalars (never read) */
        l.bindings[2] = (wg_binding){dst, true};
        l.nbindings = 3;
        l.workgroups = ceil_div(p.work, REDUCE_STRIDED_WG);
        /* Partials form a [chunks, rows] matrix: row o is column o. */
        *next = plain_matrix(dst, dst_offset, m->rows, chunks, 1, m->rows);
    } else {
        p.chunks_or_rows = (uint32_t)m->rows;
        snprintf(prelude, sizeof prelude, "%sconst WG: u32 = %uu;\n", head,
                 (unsigned)REDUCE_STRIDED_WG);
        l.shader = "reduce_strided";
        l.libraries[0] = "reduce_terms";
        l.libraries[1] = half_lib;
        l.bindings[0] = (wg_binding){m->storage, false};
        l.bindings[1] = (wg_binding){dst, true};
        l.bindings[2] = (wg_binding){v->shift ? v->shift : m->storage, false};
        l.nbindings = 3;
        l.workgroups = ceil_div(p.work, REDUCE_STRIDED_WG);
        /* Partials form a [chunks, rows] matrix: row o is column o. */
        *next = plain_matrix(dst, dst_offset, m->rows, chunks, 1, m->rows);
    }
    return wg_dispatch(ctx, &l);
}

/* Reduces m into out (contiguous, m->rows elements) through as many
 * passes as it takes. wg: reduce_rows' workgroup size for the first pass
 * (later passes, over partials, use the tuning's). */
static wt_status reduce_matrix_run(wt_context *ctx, const reduce_variant *v, reduce_matrix m,
                                   wt_tensor *out, uint32_t wg)
{
    const wg_caps *caps = wg_get_caps(ctx);
    reduce_tuning t = read_tuning(ctx, v->half);
    if (!wg) wg = first_pass_wg(&m, &t);
    bool first = true;
    wt_storage *held = NULL; /* scratch that m lives in, if any */
    wt_status st = WT_OK;
    for (;;) {
        if (m.row_len == 1) m.elem_stride = 1; /* any stride walks one element */
        if (m.rows == 1) m.row_stride = 0;
        bool rows_kernel = m.dot || (m.elem_stride == 1 && m.row_len > REDUCE_SHORT_ROW);
        reduce_kernel kernel = rows_kernel                     ? KERNEL_ROWS
                               : !columns_fit(&m, v, first, &t) ? KERNEL_STRIDED
                               : t.column_blocks                ? KERNEL_COLUMN_BLOCKS
                                                                : KERNEL_COLUMNS;
        uint64_t chunks, chunk_len;
        if (rows_kernel) {
            chunks = rows_chunks(&m, &t, wg);
            /* Multiples of 4 keep every chunk's vec4s aligned as the row's. */
            chunk_len = ceil_div(ceil_div(m.row_len, chunks), 4) * 4;
        } else if (kernel == KERNEL_COLUMN_BLOCKS) {
            chunks = column_blocks(&m, column_band_quads(&m), caps->max_storage_binding);
            chunk_len = ceil_div(m.row_len, chunks);
        } else if (kernel == KERNEL_COLUMNS) {
            chunks = columns_chunks(&m, t.columns_min_chunk, caps->max_storage_binding);
            chunk_len = ceil_div(m.row_len, chunks);
        } else {
            chunks = strided_chunks(&m, caps->max_storage_binding);
            chunk_len = ceil_div(m.row_len, chunks);
        }
        chunks = ceil_div(m.row_len, chunk_len);
        bool last = chunks == 1;

        wt_storage *dst = out->storage;
        uint64_t dst_offset = (uint64_t)out->offset;
        if (!last) {
            if ((uint64_t)m.rows * chunks > UINT32_MAX / 2) {
                st = wt_fail(WT_ERR_UNSUPPORTED, "reduce: %llu partial results are too many",
                             (unsigned long long)(m.rows * chunks));
                break;
            }
            if ((st = wg_scratch(ctx, (size_t)(m.rows * chunks * sizeof(float)), &dst)) != WT_OK)
                break;
            dst_offset = 0;
        }
        reduce_matrix next;
        st = reduce_pass(ctx, v, first, last, &m, &t, wg, dst, dst_offset, kernel, chunks,
                         chunk_len, &next);
        first = false;
        if (held) wg_scratch_release(ctx, held);
        held = last ? NULL : dst;
        if (st != WT_OK || last) break;
        m = next;
        wg = t.wg;
    }
    if (held) wg_scratch_release(ctx, held);
    return st;
}

bool wg_merge_axes(const wt_tensor *t, int first, int n, uint64_t *extent, uint64_t *stride)
{
    int nd = n;
    int64_t shape[WT_MAX_DIMS], strides[1][WT_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        shape[i] = t->shape[first + i];
        strides[0][i] = t->strides[first + i];
    }
    if (nd == 0) {
        *extent = 1, *stride = 0;
        return true;
    }
    wt_coalesce(&nd, shape, 1, strides);
    if (nd != 1 || strides[0][0] < 0) return false;
    *extent = (uint64_t)shape[0];
    *stride = (uint64_t)strides[0][0];
    return true;
}

/* Elements of the storage (of element_size bytes each), the bound for
 * every index the shaders form. */
static bool fits_u32_indexing(const wt_storage *s, size_t element_size)
{
    return s->bytes / element_size < (1ull << 31);
}

wt_status wg_op_reduce(wt_context *ctx, const wt_reduce_args *r, const wt_tensor *x, int nreduced,
                       wt_tensor *out)
{
    const wt_reduce_info *info = wt_reduce_info_of(r->op);
    const bool half = x->dtype == WT_F16 && out->dtype == WT_F32;
    if (!info || (!half && (x->dtype != out->dtype || wt_dtype_storage_size(x->dtype) != 4)))
        return wt_fail(WT_ERR_UNSUPPORTED, "reduce: op %d of dtype %d into %d on webgpu", (int)r->op,
                       (int)x->dtype, (int)out->dtype);
    reduce_variant v = {info, !half && x->dtype != WT_F32, half, r->shift ? r->shift->storage : NULL,
                        r->shift ? (uint64_t)r->shift->offset : 0, (float)r->n};
    if (nreduced < 0 || x->ndim != out->ndim + nreduced)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "reduce: x has %d axes, out %d, reducing %d",
                       x->ndim, out->ndim, nreduced);
    uint64_t rows = (uint64_t)out->numel, row_len = 1;
    for (int i = out->ndim; i < x->ndim; i++) row_len *= (uint64_t)x->shape[i];
    if (rows == 0) return WT_OK;
    if (row_len == 0) {
        return WT_OK; /* the API fills empty reductions */
    }
    if (rows >= (1ull << 31) || row_len >= (1ull << 31) ||
        !fits_u32_indexing(x->storage, wt_dtype_storage_size(x->dtype)) || !fits_u32_indexing(out->storage, 4))
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "reduce: %llu rows of %llu elements exceed 32-bit indexing on webgpu",
                       (unsigned long long)rows, (unsigned long long)row_len);

    reduce_matrix m = plain_matrix(x->storage, (uint64_t)x->offset, rows, row_len, 0, 0);
    uint64_t kept_extent, red_extent;
    bool merged = wg_merge_axes(x, 0, out->ndim, &kept_extent, &m.row_stride) &&
                  wg_merge_axes(x, out->ndim, nreduced, &red_extent, &m.elem_stride);
    /* Neither unit stride: neither kernel reads coalesced; a gather pays. */
    if (merged && row_len > REDUCE_SHORT_ROW && rows > 1 && m.row_stride != 1 &&
        m.elem_stride != 1)
        merged = false;
    if (merged) return reduce_matrix_run(ctx, &v, m, out, 0);
    if (half) /* the copy below moves 4-byte elements */
        return wt_fail(WT_ERR_UNSUPPORTED, "reduce: f16 input of a layout that does not merge");

    /* i32 and bool words go through the cast kernel's same-dtype copy
     * (bit-exact; an f32 copy could flush their denormal-looking bits). */
    wt_tensor *packed = NULL;
    wt_status st = wt_tensor_alloc(ctx, x->dtype, x->ndim, x->shape, &packed);
    if (st != WT_OK) return st;
    st = v.integer ? wg_op_cast(ctx, x, packed) : wg_op_copy(ctx, x, packed);
    if (st == WT_OK) {
        m = plain_matrix(packed->storage, (uint64_t)packed->offset, rows, row_len, row_len, 1);
        st = reduce_matrix_run(ctx, &v, m, out, 0);
    }
    wt_tensor_release(packed);
    if (st != WT_OK) wt_error_prefix("reduce");
    return st;
}

bool wg_dot_rows_fits(const wg_dot_rows *d)
{
    uint64_t all = d->u_offset | d->u_batch_stride | d->u_row_stride | d->v_offset |
                   d->v_batch_stride | d->len;
    if (all % 4 != 0 || d->rows == 0 || d->rows_per_batch == 0 || d->len == 0) return false;
    /* Every index the shader forms stays below 2^31 elements. */
    return fits_u32_indexing(d->u, 4) && fits_u32_indexing(d->v, 4) && d->rows < (1ull << 31) &&
           d->len < (1ull << 31);
}

wt_status wg_reduce_dot_rows(wt_context *ctx, const wg_dot_rows *d, wt_tensor *out)
{
    if (!wg_dot_rows_fits(d) || out->numel != (int64_t)d->rows)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "dot rows: operands are not whole aligned vec4s, or out is not %llu long",
                       (unsigned long long)d->rows);
    reduce_matrix m = plain_matrix(d->u, d->u_offset, d->rows, d->len, d->u_row_stride, 1);
    m.rows_per_batch = d->rows_per_batch;
    m.batch_stride = d->u_batch_stride;
    m.dot = d->v;
    m.v_offset = d->v_offset;
    m.v_batch_stride = d->v_batch_stride;
    /* 0 (no or an invalid request): the tuning's size. */
    uint32_t wg = usable_wg(wg_get_caps(ctx), d->workgroup_size);
    reduce_variant v = {wt_reduce_info_of(WT_REDUCE_SUM), false, false, NULL, 0, 1.0f};
    return reduce_matrix_run(ctx, &v, m, out, wg);
}
