/* The counting host BLAS table of express_count.h. */
#include "express_count.h"

#include <string.h>

int xot_express_calls[XOT_EXPRESS_ENTRIES];
static const xo_host_blas *real;

static void count_sgemm(xo_layout l, xo_transpose ta, xo_transpose tb, int m, int n, int k, float al, const float *a,
                        int lda, const float *b, int ldb, float be, float *c, int ldc)
{
    xot_express_calls[XOT_SGEMM]++;
    real->sgemm(l, ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc);
}
static void count_dgemm(xo_layout l, xo_transpose ta, xo_transpose tb, int m, int n, int k, double al,
                        const double *a, int lda, const double *b, int ldb, double be, double *c, int ldc)
{
    xot_express_calls[XOT_DGEMM]++;
    real->dgemm(l, ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc);
}
static void count_sgemv(xo_layout l, xo_transpose ta, int m, int n, float al, const float *a, int lda, const float *x,
                        int incx, float be, float *y, int incy)
{
    xot_express_calls[XOT_SGEMV]++;
    real->sgemv(l, ta, m, n, al, a, lda, x, incx, be, y, incy);
}
static void count_dgemv(xo_layout l, xo_transpose ta, int m, int n, double al, const double *a, int lda,
                        const double *x, int incx, double be, double *y, int incy)
{
    xot_express_calls[XOT_DGEMV]++;
    real->dgemv(l, ta, m, n, al, a, lda, x, incx, be, y, incy);
}
static void count_saxpy(int n, float al, const float *x, int incx, float *y, int incy)
{
    xot_express_calls[XOT_SAXPY]++;
    real->saxpy(n, al, x, incx, y, incy);
}
static void count_daxpy(int n, double al, const double *x, int incx, double *y, int incy)
{
    xot_express_calls[XOT_DAXPY]++;
    real->daxpy(n, al, x, incx, y, incy);
}
static const xo_host_blas counting = {count_sgemm, count_dgemm, count_sgemv, count_dgemv, count_saxpy, count_daxpy};

void xot_express_count(xo_context *ctx)
{
    if (ctx->host_blas != &counting)
        real = ctx->host_blas;
    ctx->host_blas = &counting;
    memset(xot_express_calls, 0, sizeof xot_express_calls);
}

void xot_express_uncount(xo_context *ctx) { ctx->host_blas = real; }
