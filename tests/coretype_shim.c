/* LD_PRELOAD shim for test_blas_core: OpenBLAS "picks" Prescott whenever
 * OPENBLAS_CORETYPE is unset (as Debian's 0.3.21 did on a CPU it did not know) and
 * its real choice otherwise, so that xo's re-execution with the right core is seen. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

char *openblas_get_corename(void);
char *openblas_get_corename(void)
{
    const char *env = getenv("OPENBLAS_CORETYPE");
    if (!env || !env[0])
        return "Prescott";
    char *(*real)(void) = (char *(*)(void))dlsym(RTLD_NEXT, "openblas_get_corename");
    return real ? real() : "unknown";
}
