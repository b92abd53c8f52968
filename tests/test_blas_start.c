/* The drop-in's start: a program whose calls all stay small (numpy's import makes one
 * cblas_sdot) builds no crossover context and starts no device runtime: no thread starts.
 * Then one call big enough for a device to plausibly win creates the context (XO_LOG=info
 * says which thresholds are in force; tests/blas.cmake checks both). */
#include <cblas.h>
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

static int threads(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static void test_small_calls_start_nothing(void **state)
{
    (void)state;
    float x[64], y[64], a[64], c[64];
    for (int i = 0; i < 64; i++)
        x[i] = y[i] = a[i] = c[i] = (float)(i % 5);
    int before = threads();
    assert_true(cblas_sdot(64, x, 1, y, 1) > 0);
    cblas_saxpy(64, 2, x, 1, y, 1);
    cblas_sscal(64, 0.5f, y, 1);
    cblas_scopy(64, x, 1, y, 1);
    assert_true(cblas_snrm2(64, x, 1) > 0);
    cblas_sgemv(CblasRowMajor, CblasNoTrans, 8, 8, 1, a, 8, x, 1, 0, y, 1);
    cblas_sger(CblasRowMajor, 8, 8, 1, x, 1, y, 1, a, 8);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 8, 8, 8, 1, a, 8, x, 8, 0, c, 8);
    cblas_daxpby(8, 1, (double[8]){0}, 1, 2, (double[8]){0}, 1);
    assert_int_equal(threads(), before);
}

/* A gemm no default profile lets the CPU keep (n = 1024): the context is made. */
static void test_big_call_makes_the_context(void **state)
{
    (void)state;
    enum { N = 1024 };
    float *a = calloc((size_t)N * N, sizeof *a), *c = calloc((size_t)N * N, sizeof *c);
    assert_non_null(a);
    assert_non_null(c);
    a[0] = 2;
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1, a, N, a, N, 0, c, N);
    assert_true(c[0] == 4 && c[1] == 0);
    free(a);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_small_calls_start_nothing),
                                       cmocka_unit_test(test_big_call_makes_the_context)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
