/* A CPU BLAS for the drop-in's test of an OpenBLAS that does not know the CPU: OpenBLAS
 * itself (a dependency of this module) whose openblas_get_corename says Prescott while
 * OPENBLAS_CORETYPE is unset, as Debian's 0.3.21 did on a new Xeon, and the variable's
 * value once it is set. Each load appends the variable it saw to the file that
 * XO_TEST_CORE_LOG names, so the test sees the drop-in load it again with the right core. */
#include <stdio.h>
#include <stdlib.h>

char *openblas_get_corename(void);
char *openblas_get_corename(void)
{
    char *env = getenv("OPENBLAS_CORETYPE");
    return env && env[0] ? env : "Prescott";
}

__attribute__((constructor)) static void note_load(void)
{
    const char *path = getenv("XO_TEST_CORE_LOG"), *env = getenv("OPENBLAS_CORETYPE");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (f) {
        fprintf(f, "load OPENBLAS_CORETYPE=%s\n", env ? env : "(unset)");
        fclose(f);
    }
}
