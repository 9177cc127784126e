/* The slot rows of the bad-input matrix (bad_input_args.c runs them).
 * Each row is a small function that makes one valid call, wrapping every
 * argument in a slot helper that names its kind:
 *
 *   T   a tensor input (f32)         TI  an i32 index tensor
 *   TO  an optional tensor (NULL ok)  TA  a tensor of any dtype
 *   TW  a tensor written in place (TWA: of any dtype)
 *   OUT / OUTO  an out-pointer (optional)
 *   AX  an axis   POS  a count > 0    CTX a context   PTR / PTRO a pointer
 *   EPS an eps >= 0   DT a dtype   BYTES a buffer size   PATH  NAME
 *   CONV / POOL / INTERP  an options struct with its bad fields
 *   FACTOR  a scale factor (finite, > 0)
 *   QTYPE   a quantised weight's type (WT_QUANT_Q8_0 / Q4_0 / Q4_K / Q6_K)
 *
 * The helpers are in bad_input_slots.c; the rows, by family, in
 * bad_input_rows_ops.c, _training.c, _runtime.c and _files.c, each with
 * its table of R() entries. A new public function: a ROWFN and its R()
 * entry in the file of its family. */
#ifndef WT_BAD_INPUT_SLOTS_H
#define WT_BAD_INPUT_SLOTS_H

#include "webtensor.h"
#include "webtensor_io.h"
#include "webtensor_tokenizer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


enum { CLASS_VALID, CLASS_NULL, CLASS_OTHER_CTX, CLASS_DTYPE, CLASS_AXIS, CLASS_SIZE, CLASS_BUFFER,
       CLASS_VALUE, CLASS_ALIAS };

typedef enum kind {
    K_T, K_TI, K_TO, K_TA, K_TW, K_TWA, K_OUT, K_OUTO, K_AX, K_POS, K_CTX, K_PTR, K_PTRO, K_EPS, K_DT,
    K_BYTES, K_PATH, K_NAME, K_CONV, K_POOL, K_INDEX, K_NONNEG, K_TFREE, K_NEG2, K_KDESC, K_VALUE,
    K_INTERP, K_FACTOR, K_QTYPE
} kind;

#define MAX_SLOTS 16
#define POISON_PTR ((void *)(uintptr_t)0x10)

/* An out-pointer's target: whatever the function makes. */
typedef enum out_type { OUT_TENSOR, OUT_EVENT, OUT_KERNEL, OUT_FILE, OUT_GGUF, OUT_GGUF_WRITER, OUT_TOKENIZER,
                        OUT_DETOKENIZER } out_type;
typedef struct out_slot {
    out_type type;
    union {
        wt_tensor *t;
        wt_event *ev;
        wt_kernel *k;
        wt_safetensors *f;
        wt_gguf *g;
        wt_gguf_writer *w;
        wt_tokenizer *tok;
        wt_detokenizer *detok;
    } u;
    bool passed; /* given to the call (not replaced by NULL) */
    const char *name;
} out_slot;

/* What the rows draw from. */
typedef struct env2 {
    wt_context *ctx, *other;
    const wt_context_options *opts;
    wt_tensor *x4, *w4, *b4, *dy4, *x3, *w3, *c3, *c3pos, *m35, *v5, *w45, *b4v, *idx35, *idx2,
        *lab3, *q, *pool_dy, *pool_idx, *p5, *g5, *s5a, *s5b, *s5c, *table, *dy25, *one;
    wt_tensor *cache35, *start1; /* copy_into_at: f32 [3, 5] written in place, i32 [1] */
    wt_tensor *kvc, *qkv4;       /* rope_kv_cache: f32 [1, 2, 4, 2] written in place, [1, 1, 3, 2] */
    wt_tensor *qx, *qw, *qb; /* quantised linear: x [2, 32], Q8_0 weight [3, 32] (i32 [3, 9]), bias [3] */
    uint8_t qblocks[3 * 34]; /* the weight's blocks */
    char npy_path[64], st_path[64], gguf_path[64], dir_path[64];
    char tok_json_path[64], tok_gguf_path[64]; /* a SentencePiece vocabulary (tests/fuzz/tokenizer_vocab.h) */
    char *tok_json;
    void *npy_bytes, *st_bytes, *gguf_bytes;
    size_t npy_size, st_size, gguf_size;
} env2;

typedef struct M {
    const env2 *e;
    int slot, target, variant;
    bool discover, hit;
    kind kinds[MAX_SLOTS];
    const char *names[MAX_SLOTS];
    int nslots, ntensor_slots;
    wt_status want, want2;
    int cls;
    char what[96];
    out_slot outs[6];
    int nouts;
    wt_tensor *arr[4]; /* split / chunk / load_many outputs */
    int narr;
    wt_tensor *made[4]; /* tensors made for the case (casts, other context) */
    int nmade;
    wt_conv_options conv;
    wt_pool_options pool;
    wt_pool2d_options pool2d;
    wt_interpolate_options interp;
    bool shape_too; /* bad options may also show as a dy of the wrong shape */
} M;

/* A slot of kind k: true when this call is the one to break (the driver
 * learns the slots on the first call). */
bool slot_take(M *m, kind k, const char *name);
/* Records what the broken slot must make the call return. */
void slot_expect(M *m, int cls, wt_status want, wt_status want2, const char *fmt, const char *name);

/* The slot helpers behind the macros below, and the out-pointers the
 * rows name directly. */
const wt_tensor *tensor_slot(M *m, kind k, const char *name, const wt_tensor *valid);
wt_tensor **out_tensor(M *m, kind k, const char *name);
wt_event **out_event(M *m, const char *name);
wt_kernel **out_kernel(M *m, const char *name);
wt_safetensors **out_file(M *m, const char *name);
wt_gguf **out_gguf(M *m, const char *name);
wt_gguf_writer **out_gguf_writer(M *m, const char *name);
wt_tokenizer **out_tokenizer(M *m, const char *name);
wt_detokenizer **out_detokenizer(M *m, const char *name);
wt_tensor **out_array(M *m, const char *name, int n);
int64_t scalar_slot(M *m, kind k, const char *name, int64_t valid);
float eps_slot(M *m, const char *name, float valid);
void *ptr_slot(M *m, kind k, const char *name, const void *valid);
wt_context *ctx_slot(M *m, const char *name, wt_context *valid);
const char *string_slot(M *m, kind k, const char *name, const char *valid);
const wt_conv_options *conv_slot(M *m, const char *name);
const wt_pool_options *pool_slot(M *m, const char *name);
const wt_pool2d_options *pool2d_slot(M *m, const char *name);
const wt_interpolate_options *interp_slot(M *m, const char *name);
double factor_slot(M *m, const char *name, double valid);

#define T(name, v) tensor_slot(m, K_T, name, v)
#define TI(name, v) tensor_slot(m, K_TI, name, v)
#define TO(name, v) tensor_slot(m, K_TO, name, v)
#define TA(name, v) tensor_slot(m, K_TA, name, v)
#define TFREE(name, v) tensor_slot(m, K_TFREE, name, v)
#define TW(name, v) ((wt_tensor *)tensor_slot(m, K_TW, name, v))
#define TWA(name, v) ((wt_tensor *)tensor_slot(m, K_TWA, name, v))
#define OUT(name) out_tensor(m, K_OUT, name)
#define OUTO(name) out_tensor(m, K_OUTO, name)
#define AX(name, v) ((int)scalar_slot(m, K_AX, name, v))
#define POS(name, v) scalar_slot(m, K_POS, name, v)
#define NONNEG(name, v) scalar_slot(m, K_NONNEG, name, v)
#define INDEX(name, v) ((int)scalar_slot(m, K_INDEX, name, v))
#define DT(name, v) ((wt_dtype)scalar_slot(m, K_DT, name, v))
#define BYTES(name, v) ((size_t)scalar_slot(m, K_BYTES, name, (int64_t)(v)))
#define QTYPE(name, v) ((wt_quant_type)scalar_slot(m, K_QTYPE, name, v))
#define EPS(name, v) eps_slot(m, name, v)
#define PTR(name, v) ptr_slot(m, K_PTR, name, v)
#define PTRO(name, v) ptr_slot(m, K_PTRO, name, v)
#define CTX(name, v) ctx_slot(m, name, v)
#define PATH(name, v) string_slot(m, K_PATH, name, v)
#define NAME(name, v) string_slot(m, K_NAME, name, v)
#define CONV(name) conv_slot(m, name)
#define POOL(name) pool_slot(m, name)
#define POOL2D(name) pool2d_slot(m, name)
#define INTERP(name) interp_slot(m, name)
#define FACTOR(name, v) factor_slot(m, name, v)

typedef wt_status (*row_fn)(M *m, const env2 *e);
typedef struct slot_row {
    const char *name;
    row_fn fn;
    wt_status valid_alt; /* a valid call may also return this (e.g. CPU: no kernels) */
} slot_row;

#define ROWFN(f) static wt_status row_##f(M *m, const env2 *e)
#define R(f) {"wt_" #f, row_##f, WT_OK}
#define R_ALT(f, alt) {"wt_" #f, row_##f, alt}

/* One file's rows. */
typedef struct slot_table {
    const slot_row *rows;
    size_t count;
} slot_table;

extern const slot_table bad_input_rows_ops, bad_input_rows_training, bad_input_rows_runtime,
    bad_input_rows_files;

#endif
