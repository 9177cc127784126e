/* The shape classes of DESIGN.md ("Tests that can fail"): scalar-like,
 * odd sizes, empty, over 65,535 workgroups, broadcast, non-contiguous
 * views. Unary cases also serve wt_copy and wt_contiguous. */
#include "conformance.h"

#include <stddef.h>

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define U(c, x_) {.cls = c, .x = x_}
#define B(c, a_, b_) {.cls = c, .a = a_, .b = b_}
#define V(c, x_) {.cls = c, .x = x_}
/* R(class, input, keepdims, naxes, axes...) */
#define R(c, x_, kd, n, ...) {.cls = c, .x = x_, .keepdims = kd, .naxes = n, .axes = {__VA_ARGS__}}

const unary_case g_unary_cases[] = {
    U("0-d", "[]"),
    U("[1]", "[1]"),
    U("small", "[7]"),
    U("small 2-D", "[3,5]"),
    {.cls = "odd", .x = "[1029,917]", .heavy = true},
    U("8-D", "[2,1,3,1,2,1,2,3]"),
    U("empty", "[0]"),
    U("empty 3-D", "[3,0,5]"),
    U("transposed", "[37,53].T(0,1)"),
    U("sliced with step", "[40,30].S(1,1,29,3)"),
    U("permuted 3-D", "[6,7,8].P(2,0,1)"),
    U("expanded", "[1,33].E(17,33)"),
    U("sliced + transposed", "[20,30].S(0,2,19,2).T(1,0)"),
    {.cls = "odd transposed", .x = "[917,1029].T(0,1)", .heavy = true},
    U("odd, small", "[67,129]"),
    U("odd transposed, small", "[129,67].T(0,1)"),
    /* Extents, strides and offsets multiples of 4: the 16-byte tiled
     * transpose, with partial edge tiles and a batch axis. */
    U("aligned transposed", "[200,136].T(0,1)"),
    U("aligned permuted 3-D", "[3,68,100].P(0,2,1)"),
    {.cls = "big", .x = "[" BIG "]", .big = true},
    {.cls = "big transposed", .x = "[4250001,4].T(0,1)", .big = true, .only = "copy"},
};
const int g_n_unary_cases = COUNT(g_unary_cases);

const binary_case g_binary_cases[] = {
    B("0-d", "[]", "[]"),
    B("[1]", "[1]", "[1]"),
    B("same shape", "[3,5]", "[3,5]"),
    {.cls = "odd", .a = "[1029,917]", .b = "[1029,917]", .heavy = true},
    B("odd, small", "[67,129]", "[67,129]"),
    B("8-D", "[2,1,3,1,2,1,2,3]", "[2,1,3,1,2,1,2,3]"),
    B("empty", "[0]", "[0]"),
    B("empty 3-D", "[3,0,5]", "[3,0,5]"),
    B("empty broadcast", "[3,0,5]", "[1,5]"),
    B("empty from broadcast", "[0,1]", "[1,4]"),
    B("row broadcast", "[5,7]", "[1,7]"),
    B("row broadcast, lower rank", "[5,7]", "[7]"),
    B("column broadcast", "[5,7]", "[5,1]"),
    B("scalar right", "[5,7]", "[]"),
    B("scalar left", "[]", "[5,7]"),
    B("[1] left", "[1]", "[5,7]"),
    B("both sides", "[5,1]", "[1,7]"),
    B("both sides 3-D", "[4,1,6]", "[3,1]"),
    B("8-D broadcast", "[2,1,2,1,2,1,2,3]", "[3]"),
    {.cls = "odd row broadcast", .a = "[1029,917]", .b = "[917]", .heavy = true},
    {.cls = "odd column broadcast", .a = "[1029,1]", .b = "[1029,917]", .heavy = true},
    B("odd row broadcast, small", "[67,129]", "[129]"),
    B("transposed", "[37,53].T(0,1)", "[53,37]"),
    B("both transposed", "[37,53].T(0,1)", "[37,53].T(1,0)"),
    B("sliced with step", "[40,30].S(1,1,29,3)", "[40,30].S(1,0,28,3)"),
    B("permuted 3-D", "[6,7,8].P(2,0,1)", "[8,6,7]"),
    B("expanded", "[1,33].E(17,33)", "[17,33]"),
    B("view and broadcast", "[33,17].T(0,1)", "[1,33].E(17,33)"),
    B("strided rows, broadcast row", "[40,30].S(0,0,40,8)", "[30]"),
    {.cls = "big", .a = "[" BIG "]", .b = "[" BIG "]", .big = true},
};
const int g_n_binary_cases = COUNT(g_binary_cases);

const binary_case g_matmul_cases[] = {
    B("2-D", "[3,4]", "[4,5]"),
    B("1x1", "[1,1]", "[1,1]"),
    B("odd", "[129,257]", "[257,67]"),
    B("odd tiles", "[33,65]", "[65,17]"),
    B("odd 1029x917", "[1029,917]", "[917,3]"),
    B("odd wide", "[3,917]", "[917,1029]"),
    B("long K", "[2,4099]", "[4099,3]"),
    B("batched", "[4,5,6]", "[4,6,7]"),
    B("broadcast batch", "[2,1,5,6]", "[3,6,4]"),
    B("2-D with batched", "[5,6]", "[3,6,4]"),
    B("batched with 2-D", "[3,5,6]", "[6,4]"),
    B("1-D left", "[6]", "[6,4]"),
    B("1-D right", "[5,6]", "[6]"),
    B("1-D both", "[6]", "[6]"),
    B("1-D left, batched", "[6]", "[2,6,4]"),
    B("batched, 1-D right", "[3,5,6]", "[6]"),
    B("K=0", "[3,0]", "[0,4]"),
    B("batched K=0", "[2,3,0]", "[2,0,4]"),
    B("M=0", "[0,4]", "[4,3]"),
    B("N=0", "[3,4]", "[4,0]"),
    B("empty batch", "[0,3,4]", "[4,2]"),
    B("transposed left", "[6,5].T(0,1)", "[6,7]"),
    B("transposed right", "[5,6]", "[7,6].T(0,1)"),
    B("both transposed", "[6,5].T(0,1)", "[7,6].T(1,0)"),
    B("sliced with step", "[10,12].S(1,0,12,2)", "[6,4]"),
    B("permuted batch", "[5,4,6].P(1,0,2)", "[4,6,3]"),
    B("expanded batch", "[1,5,6].E(3,5,6)", "[3,6,2]"),
    B("expanded vector", "[1,6].E(4,6)", "[6,3].S(1,0,3,2)"),
    /* A batch times one matrix: folded into one product where the batches
     * are one run of rows (also with rows apart, or two batch axes), kept
     * batched where they are not. */
    B("batches as rows, rows apart", "[3,5,8].S(2,0,6,1)", "[6,4]"),
    B("two batch axes as rows", "[2,3,5,6]", "[6,4].T(0,1).T(0,1)"),
    B("batches apart, one matrix", "[4,5,6].S(0,0,4,2)", "[6,4]"),
    B("transposed batches, one matrix", "[3,6,5].P(0,2,1)", "[6,4]"),
    B("expanded batch, one matrix", "[1,5,6].E(3,5,6)", "[6,4]"),
    B("batches as rows, b transposed", "[4,33,7]", "[9,7].T(0,1)"),
    /* Small, but one or more workgroups per batch: over 65,535 of them. */
    B("many batches", "[70001,1,3]", "[70001,3,2]"),
    /* --- matrix products: tile edges --- */
    /* One past 128 and 64 (the GEMM tiles) in every extent; a linear
     * layer's layout with 16-byte-aligned rows and a partial edge tile. */
    B("edge tiles 129x131x65", "[129,65]", "[65,131]"),
    B("aligned, transposed right", "[2,68,132]", "[2,136,132].P(0,2,1)"),
};
const int g_n_matmul_cases = COUNT(g_matmul_cases);

const reduce_case g_reduce_cases[] = {
    R("0-d, all", "[]", false, 0, 0),
    R("0-d, all, keepdims", "[]", true, 0, 0),
    R("[1], axis 0", "[1]", false, 1, 0),
    R("all", "[17,23]", false, 0, 0),
    R("all, keepdims", "[17,23]", true, 0, 0),
    R("axis 0", "[17,23]", false, 1, 0),
    R("axis 1", "[17,23]", false, 1, 1),
    R("axis -1, keepdims", "[17,23]", true, 1, -1),
    R("3-D middle axis", "[5,6,7]", false, 1, 1),
    R("3-D middle axis, keepdims", "[5,6,7]", true, 1, 1),
    R("axes {0,2}", "[5,6,7]", false, 2, 0, 2),
    R("axes {-1,-3}, keepdims", "[5,6,7]", true, 2, -1, -3),
    R("axes {2,0} unordered", "[5,6,7]", false, 2, 2, 0),
    R("all axes listed", "[5,6,7]", false, 3, 0, 1, 2),
    R("odd, last axis", "[1029,917]", false, 1, -1),
    R("odd, first axis", "[1029,917]", false, 1, 0),
    R("odd, all", "[1029,917]", false, 0, 0),
    R("long rows", "[3,70001]", false, 1, 1),
    R("8-D, alternate axes", "[2,1,2,3,2,1,2,3]", false, 4, 1, 3, 5, 7),
    R("empty result", "[0,4]", false, 1, 1),
    R("empty reduction", "[3,0]", false, 1, 1),
    R("empty, all", "[0]", false, 0, 0),
    R("transposed, last axis", "[37,53].T(0,1)", false, 1, -1),
    R("transposed, first axis", "[37,53].T(0,1)", true, 1, 0),
    R("sliced with step", "[40,30].S(1,1,29,3)", false, 1, 1),
    R("permuted 3-D", "[6,7,8].P(2,0,1)", false, 2, 0, 2),
    R("expanded axis", "[1,33].E(17,33)", false, 1, 0),
    /* Sums over leading axes with a multiple of 4 kept elements (a bias
     * gradient): four columns a thread, chunks, and passes over partials. */
    R("columns, leading axes", "[8,64,96]", false, 2, 0, 1),
    R("columns, three passes", "[2048,64]", false, 1, 0),
    R("columns, ragged chunks", "[37,8]", true, 1, 0),
    R("columns, sliced rows", "[9,64].S(0,1,9,1)", false, 1, 0),
    R("columns, expanded", "[1,64].E(40,64)", false, 1, 0),
    /* Blocks of rows a workgroup: a band wider than the 10 quads, 33
     * blocks of a ragged length, then one block over their partials. */
    R("columns, blocks of rows", "[4099,40]", false, 1, 0),
    /* Positive terms, so that a dropped block of terms shows above the
     * rounding allowed for 17M terms. */
    {.cls = "big, all", .x = "[" BIG "]", .big = true, .lo = 0.5f, .hi = 1.5f},
    {.cls = "big, rows", .x = "[17,1000001]", .naxes = 1, .axes = {1}, .big = true,
     .lo = 0.5f, .hi = 1.5f},
    /* 65,535 * 256 + 1 outputs, just under 128 MiB (lavapipe's largest binding). */
    {.cls = "big, short rows", .x = "[16776961,2]", .naxes = 1, .axes = {1}, .big = true},
};
const int g_n_reduce_cases = COUNT(g_reduce_cases);

/* W(class, x, weight, bias) for all three; softmax uses the last axis. */
#define W(c, x_, w_, b_) {.cls = c, .x = x_, .w = w_, .b = b_, .axis = -1}
const rowwise_case g_rowwise_cases[] = {
    W("0-d", "[]", NULL, NULL),
    W("[1]", "[1]", "[1]", "[1]"),
    W("one row", "[7]", "[7]", "[7]"),
    W("rows", "[5,7]", "[7]", "[7]"),
    W("no weight, no bias", "[5,7]", NULL, NULL),
    W("weight only", "[5,7]", "[7]", NULL),
    W("odd", "[1029,917]", "[917]", "[917]"),
    W("3-D", "[3,4,5]", "[5]", "[5]"),
    W("long rows", "[4,5000]", "[5000]", "[5000]"),
    W("C=1", "[6,1]", "[1]", "[1]"),
    W("empty rows", "[0,7]", "[7]", "[7]"),
    W("empty C", "[3,0]", "[0]", "[0]"),
    W("transposed", "[37,53].T(0,1)", "[37]", "[37]"),
    W("expanded", "[1,33].E(17,33)", "[33]", NULL),
    W("permuted 3-D", "[6,7,8].P(2,0,1)", "[7]", "[7]"),
    W("strided weight", "[5,7]", "[14].S(0,0,14,2)", "[7].T(0,0)"),
    W("weight of the wrong size", "[5,7]", "[6]", NULL),
    /* Rows far from 0: a one-pass E[x^2] - E[x]^2 variance cancels. */
    {.cls = "offset rows", .x = "[64,300]", .w = "[300]", .b = "[300]", .axis = -1, .lo = 100,
     .hi = 102},
    /* exp(100) overflows f32: softmax must subtract the row's max. */
    {.cls = "wide range", .x = "[8,100]", .axis = -1, .lo = -100, .hi = 100},
    {.cls = "axis 0", .x = "[5,7]", .axis = 0, .only = "softmax"},
    {.cls = "middle axis", .x = "[3,4,5]", .axis = 1, .only = "softmax"},
    {.cls = "odd, axis 0", .x = "[1029,917]", .axis = 0, .only = "softmax"},
    {.cls = "transposed, axis -2", .x = "[37,53].T(0,1)", .axis = -2, .only = "softmax"},
    {.cls = "axis out of range", .x = "[5,7]", .axis = 2, .only = "softmax"},
};
const int g_n_rowwise_cases = COUNT(g_rowwise_cases);

const view_case g_view_cases[] = {
    V("2-D", "[37,53].T(0,1)"),
    V("3-D outer", "[6,7,8].T(0,2)"),
    V("negative axes", "[6,7,8].T(-1,-2)"),
    V("same axis", "[5].T(0,0)"),
    V("empty", "[3,0,5].T(0,2)"),
    V("of a strided view", "[40,30].S(1,1,29,3).T(0,1)"),

    V("3-D", "[6,7,8].P(2,0,1)"),
    V("4-D", "[2,3,4,5].P(3,1,0,2)"),
    V("negative axes", "[6,7,8].P(-1,0,1)"),
    V("0-d", "[].P()"),
    V("of a strided view", "[4,5].S(0,0,4,2).P(1,0)"),

    V("inferred axis", "[6,4].R(3,-1)"),
    V("split", "[24].R(2,3,4)"),
    V("non-contiguous (copies)", "[6,7,8].P(2,0,1).R(-1)"),
    V("transposed (copies)", "[37,53].T(0,1).R(53,37)"),
    V("of a strided view", "[40,30].S(0,0,40,2).R(10,2,30)"),
    V("unit axes", "[5].R(1,5,1)"),
    V("to 0-d", "[1].R()"),
    V("from 0-d", "[].R(1,1)"),
    V("empty", "[3,0,5].R(5,0)"),

    V("with step", "[40,30].S(1,1,29,3)"),
    V("clamped", "[40,30].S(0,-5,100,2)"),
    V("negative", "[40,30].S(-1,-100,-2,1)"),
    V("empty range", "[10].S(0,7,3,1)"),
    V("step past end", "[10].S(0,0,10,20)"),
    V("of a permuted view", "[6,7,8].P(2,0,1).S(1,1,5,2)"),
    V("of empty", "[3,0,5].S(2,1,4,1)"),

    V("row", "[1,33].E(17,33)"),
    V("new axes", "[33].E(4,5,33)"),
    V("0-d", "[].E(3,4)"),
    V("column", "[5,1].E(5,9)"),
    {"of a strided view", "[6,1,8].S(2,0,8,3).E(2,6,4,3)"},
    {"to empty", "[1,3].E(0,3)"},
};
const int g_n_view_cases = COUNT(g_view_cases);
