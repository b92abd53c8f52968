/* The CPU plugin's host BLAS entries, for the core's express path. Internal to this
 * repository (not installed): the core and the built-in CPU plugin only. */
#ifndef XO_HOST_BLAS_H
#define XO_HOST_BLAS_H
#include <crossover/plugin.h>

/* For the device that computes in host memory (the CPU plugin): BLAS entry
 * points with CBLAS's arguments (layout and transpose take the XO_ values, which are
 * CBLAS's; pointers already include the offsets). The core calls them directly, with
 * no xo_op_desc, on its fast path: a cached decision for a plain gemm, gemv or axpy
 * (every size from 1 to 2^29, leading dimensions and increments valid, operands
 * current on the host). Each must compute exactly what run() computes for that op and
 * cannot fail. A table may leave entries NULL; the core then uses run(). */
typedef struct xo_host_blas {
    void (*sgemm)(xo_layout layout, xo_transpose ta, xo_transpose tb, int m, int n, int k, float alpha,
                  const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);
    void (*dgemm)(xo_layout layout, xo_transpose ta, xo_transpose tb, int m, int n, int k, double alpha,
                  const double *a, int lda, const double *b, int ldb, double beta, double *c, int ldc);
    void (*sgemv)(xo_layout layout, xo_transpose ta, int m, int n, float alpha, const float *a, int lda,
                  const float *x, int incx, float beta, float *y, int incy);
    void (*dgemv)(xo_layout layout, xo_transpose ta, int m, int n, double alpha, const double *a, int lda,
                  const double *x, int incx, double beta, double *y, int incy);
    void (*saxpy)(int n, float alpha, const float *x, int incx, float *y, int incy);
    void (*daxpy)(int n, double alpha, const double *x, int incx, double *y, int incy);
} xo_host_blas;

/* The built-in CPU plugin's table (plugins/cpu); it outlives every context. */
const xo_host_blas *xo__cpu_host_blas(void);
#endif
