/* A check of the kernels OpenBLAS picked for this CPU.
 *
 * OpenBLAS built for several CPUs (DYNAMIC_ARCH, as distributions ship it)
 * picks its kernels at load time from the CPU's model number. A model newer
 * than the release (for example the Xeons of family 6 model 207 with
 * 0.3.21) falls back to its SSE3 "Prescott" kernels even where AVX2 and
 * AVX-512 are there: single-precision GEMM then ran 5-8x slower (16 against
 * 85 GFLOP/s a core for 2048x384x1536 with SkylakeX kernels), and matrix
 * products are most of a training step. The choice is made before this
 * library runs and cannot be changed afterwards, so the library says so
 * once, with the environment variable that fixes it. */
#include "cpu/cpu.h"
#include "cpu/blas.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <strings.h>

#if defined(WT_HAVE_CBLAS) && defined(OPENBLAS_VERSION) && (defined(__x86_64__) || defined(__i386__)) && \
    (defined(__GNUC__) || defined(__clang__))
#define WT_CHECK_OPENBLAS_CORE 1
#endif

#ifdef WT_CHECK_OPENBLAS_CORE
/* OpenBLAS cores whose SGEMM kernels use neither AVX2 nor FMA. */
static bool core_lacks_avx2(const char *core)
{
    static const char *const old[] = {"Prescott",  "Core2",    "Penryn",  "Dunnington", "Nehalem",  "Atom",
                                      "Sandybridge", "Katmai", "Coppermine", "Northwood", "Banias", "Athlon",
                                      "Opteron",   "Opteron_SSE3", "Barcelona", "Bobcat", "Bulldozer", "Piledriver",
                                      "Steamroller", "Nano"};
    for (size_t i = 0; i < sizeof old / sizeof old[0]; i++)
        if (strcasecmp(core, old[i]) == 0) return true;
    return false;
}
#endif

void cpu_blas_check(void)
{
#ifdef WT_CHECK_OPENBLAS_CORE
    static atomic_flag said = ATOMIC_FLAG_INIT;
    if (getenv("OPENBLAS_CORETYPE")) return; /* the user chose */
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return;
    const char *core = openblas_get_corename();
    if (!core || !core_lacks_avx2(core) || atomic_flag_test_and_set(&said)) return;
    const char *suggest = __builtin_cpu_supports("avx512f") ? "SkylakeX" : "Haswell";
    wt_log_message(WT_LOG_WARNING,
                   "cpu: OpenBLAS picked its %s kernels on a CPU with AVX2 (it does not know this CPU model); "
                   "matrix products run several times slower than they could: start the program with "
                   "OPENBLAS_CORETYPE=%s in the environment",
                   core, suggest);
#endif
}
