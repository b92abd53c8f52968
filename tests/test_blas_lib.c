/* The drop-in's CPU BLAS (XO_BLAS_LIB), run by tests/blas.cmake in two ways:
 *  - XO_BLAS_LIB names a library that lacks routines (blas_partial.c: sdot only, its
 *    answer plus 1000): what it has runs there, what it lacks runs on the default CPU
 *    BLAS (right answers, exit 0, a warning on stderr that the test checks);
 *  - XO_BLAS_LIB names another complete CPU BLAS (Debian's reference BLAS, BLIS), whose
 *    CBLAS calls its own Fortran routines by name: every call gives the right answer and
 *    none waits for ever (the test has a timeout), on the CPU BLAS and placed on the CPU
 *    (XO_DEVICE=cpu).
 * XO_TEST_PARTIAL=1 says which. */
#include <cblas.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

double ddot_(const int *n, const double *x, const int *incx, const double *y, const int *incy);
float sdot_(const int *n, const float *x, const int *incx, const float *y, const int *incy);
void saxpy_(const int *n, const float *alpha, const float *x, const int *incx, float *y, const int *incy);
void sgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k, const float *alpha,
            const float *a, const int *lda, const float *b, const int *ldb, const float *beta, float *c,
            const int *ldc, size_t la, size_t lb);

static int partial(void) { return getenv("XO_TEST_PARTIAL") != NULL; }

/* Routines the library lacks run on the default CPU BLAS: right answers. */
static void test_lacking_routines(void **state)
{
    (void)state;
    double x[5] = {1, 2, 3, 4, 5}, y[5] = {2, 2, 2, 2, 2};
    int n = 5, one = 1;
    assert_true(ddot_(&n, x, &one, y, &one) == 30);
    assert_true(cblas_ddot(5, x, 1, y, 1) == 30);
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4] = {0}, fy[4] = {1, 1, 1, 1}, alpha = 2, zero = 0;
    int two = 2, four = 4;
    sgemm_("N", "N", &two, &two, &two, &alpha, a, &two, b, &two, &zero, c, &two, 1, 1);
    for (int i = 0; i < 4; i++)
        assert_true(c[i] == 2 * a[i]);
    saxpy_(&four, &alpha, a, &one, fy, &one);
    for (int i = 0; i < 4; i++)
        assert_true(fy[i] == 1 + 2 * a[i]);
    cblas_saxpy(4, 1, a, 1, fy, 1);
    for (int i = 0; i < 4; i++)
        assert_true(fy[i] == 1 + 3 * a[i]);
}

/* What the library has runs there: blas_partial's sdot stands out by 1000. */
static void test_present_routines(void **state)
{
    (void)state;
    float x[3] = {1, 2, 3}, y[3] = {1, 1, 1};
    int n = 3, one = 1;
    float expect = partial() ? 1006 : 6;
    assert_true(sdot_(&n, x, &one, y, &one) == expect);
    assert_true(cblas_sdot(3, x, 1, y, 1) == expect);
}

/* Calls big enough to be placed (or, under XO_DEVICE=cpu, every call): gemm, gemv and the
 * level-1 routines through CBLAS, which in reference CBLAS call the Fortran routines. */
static void test_cblas_through_fortran(void **state)
{
    (void)state;
    enum { N = 96 };
    static float a[N * N], b[N * N], c[N * N];
    for (int i = 0; i < N * N; i++) {
        a[i] = (float)(i % 7) - 3;
        b[i] = (float)(i % 5) - 2;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1, a, N, b, N, 0, c, N);
    for (int i = 0; i < N; i += 17)
        for (int j = 0; j < N; j += 13) {
            double s = 0;
            for (int l = 0; l < N; l++)
                s += (double)a[i * N + l] * b[l * N + j];
            assert_true(fabs(c[i * N + j] - s) < 1e-3);
        }
    static float x[N * N], y[N * N];
    for (int i = 0; i < N * N; i++)
        x[i] = y[i] = (float)(i % 3);
    cblas_saxpy(N * N, 2, x, 1, y, 1);
    for (int i = 0; i < N * N; i++)
        assert_true(y[i] == 3 * x[i]);
    assert_true(fabs(cblas_snrm2(3, (float[]){3, 4, 0}, 1) - 5) < 1e-6);
    cblas_sscal(N * N, 0.5f, y, 1);
    assert_true(y[4] == 1.5f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lacking_routines),
        cmocka_unit_test(test_present_routines),
        cmocka_unit_test(test_cblas_through_fortran),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
