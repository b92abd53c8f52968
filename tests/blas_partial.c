/* A stand-in CPU BLAS for the drop-in's XO_BLAS_LIB tests: it has sdot only (both ABIs),
 * and its answer stands out (the dot product plus 1000), so a test sees which library
 * ran a call. Everything else it lacks. */
#include <stddef.h>

float sdot_(const int *n, const float *x, const int *incx, const float *y, const int *incy);
float cblas_sdot(const int n, const float *x, const int incx, const float *y, const int incy);

float cblas_sdot(const int n, const float *x, const int incx, const float *y, const int incy)
{
    float s = 1000;
    for (int i = 0; i < n; i++)
        s += x[(size_t)i * (size_t)incx] * y[(size_t)i * (size_t)incy];
    return s;
}
float sdot_(const int *n, const float *x, const int *incx, const float *y, const int *incy)
{
    return cblas_sdot(*n, x, *incx, y, *incy);
}
