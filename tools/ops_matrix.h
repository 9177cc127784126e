/* `webtensor ops` (ops_matrix.c). */
#ifndef WT_TOOLS_OPS_MATRIX_H
#define WT_TOOLS_OPS_MATRIX_H

/* Prints the support matrix; returns the exit status. */
int ops_matrix_main(void);

#endif
