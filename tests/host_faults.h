/* Host allocations that fail on demand, for the fault-injection tests: a
 * program linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,
 * --wrap=aligned_alloc,--wrap=free (tests/CMakeLists.txt) reroutes the
 * allocations of the code linked statically into it - the library's - to
 * host_faults.c; nothing of this is in the library. */
#ifndef WT_TEST_HOST_FAULTS_H
#define WT_TEST_HOST_FAULTS_H

#include <stdbool.h>

/* From now on, the fail_at-th allocation fails (0: none does); counts
 * restart. */
void host_arm(long fail_at);
/* Blocks handed out and not freed. */
long host_live(void);
/* Failures injected since the last host_arm. */
long host_injected(void);
/* on: every aligned_alloc fails (the CPU backend's tensor memory) and the
 * count of injected failures restarts; off: returns that count. */
long host_fail_all_aligned(bool on);

#endif /* WT_TEST_HOST_FAULTS_H */
