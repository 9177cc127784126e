/* The layouts a reduction walks (kept and reduced axes), shared by the
 * planned reductions (reduce.c), the table's (reduce_table.c) and the
 * arg-reductions (argreduce_scan.c). */
#include "cpu/cpu.h"

#include <string.h>

void cpu_reduce_layouts(const wt_tensor *x, const wt_tensor *out, int nreduced, cpu_layout *kept,
                        cpu_layout *red) {
    /* Kept axes merge together with out's (contiguous) layout, reduced axes
     * among themselves; never across the boundary. */
    const int nkept = out->ndim;
    kept->ndim = nkept, red->ndim = nreduced;
    int64_t kstrides[2][WT_MAX_DIMS];
    for (int d = 0; d < nkept; d++) {
        kept->shape[d] = x->shape[d];
        kstrides[0][d] = out->strides[d];
        kstrides[1][d] = x->strides[d];
    }
    wt_coalesce(&kept->ndim, kept->shape, 2, kstrides);
    memcpy(kept->strides, kstrides[1], sizeof kept->strides);
    int64_t rstrides[1][WT_MAX_DIMS];
    for (int d = 0; d < nreduced; d++) {
        red->shape[d] = x->shape[nkept + d];
        rstrides[0][d] = x->strides[nkept + d];
    }
    wt_coalesce(&red->ndim, red->shape, 1, rstrides);
    memcpy(red->strides, rstrides[0], sizeof red->strides);
}

