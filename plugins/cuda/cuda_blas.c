/* The BLAS family: gemm, gemv, axpy, scal, dot, ger in cuBLAS; nrm2 and copy on our
 * kernels, and so are gemm, gemv and scal with alpha == 0.
 *
 * cuBLAS is column-major; a row-major op is the same op on the transposed matrices (a
 * row-major m x n matrix with leading dimension ld is a column-major n x m matrix with
 * the same ld):
 *   gemm  C = op(A) op(B)  <=>  C^T = op(B)^T op(A)^T: swap A/B and m/n, keep ta/tb.
 *   gemv  y = op(A) x: A is seen as A^T (n x m), so the transpose flag flips.
 *   ger   A += alpha x y^T  <=>  A^T += alpha y x^T.
 * alpha/beta are host scalars (pointer mode HOST); dot writes its result into device
 * memory (pointer mode DEVICE), so nothing waits for the device.
 *
 * BLAS semantics are kept here, not left to cuBLAS: with alpha == 0, gemm/gemv/scal only
 * scale C or y by beta or write zeros (xo_op_scales_only), which cuBLAS does not document
 * for alpha == 0, so they run on our xo_scale kernel; ger with alpha == 0 does nothing.
 * nrm2 is our scaled sum (whatever cuBLAS's version does). */
#include "cuda_internal.h"

#include <limits.h>

#define DEVPTR XO_CUDA_DEVPTR

static int fits_int(size_t v)
{
    return v <= (size_t)INT_MAX;
}

static cublasOperation_t blas_op(xo_transpose t)
{
    return t == XO_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N;
}

/* Every size of `op` fits cuBLAS's int, and the pointer mode is set. */
static xo_status blas_begin(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op,
                            cublasPointerMode_t mode)
{
    if (!fits_int(op->m) || !fits_int(op->n) || !fits_int(op->k) || !fits_int(op->ld[0]) ||
        !fits_int(op->ld[1]) || !fits_int(op->ld[2]) || !fits_int(op->inc[0]) || !fits_int(op->inc[1]))
        return st->host->set_error(XO_ERR_UNSUPPORTED, "cuda run: a dimension exceeds cuBLAS's int range");
    return XO_CUBLAS(st, cublasSetPointerMode_v2, (d->blas, mode));
}

/* gemm, gemv or scal with alpha == 0: C = beta*C, y = beta*y or x = 0 (xo_scale). */
static xo_status run_scale(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const int f64 = op->dtype == XO_F64;
    const xo_scale_view v = xo_op_scale_view(op);
    unsigned long long rows = v.rows, cols = v.cols, ld = v.ld;
    xo__cuda_scalar f;
    CUdeviceptr a = DEVPTR(op, v.arg, xo__cuda_esize(op));
    void *params[] = {&a, &rows, &cols, &ld, xo__cuda_scalar_of(&f, f64, v.factor)};
    return xo__cuda_launch(st, d, XO_CUDA_K_SCALE, f64, xo__cuda_grid_for(v.cols, XO_CUDA_MAX_GRID),
                           xo__cuda_grid_cap(v.rows), params);
}

xo_status xo__cuda_gemm(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    if (xo_op_scales_only(op)) return run_scale(st, d, op);
    XO_CUDA_TRY(blas_begin(st, d, op, CUBLAS_POINTER_MODE_HOST));
    const size_t es = xo__cuda_esize(op);
    const cublasHandle_t h = d->blas;
    const float af = (float)op->alpha, bf = (float)op->beta;
    const double ad = op->alpha, bd = op->beta;
    int m = (int)op->m, n = (int)op->n, k = (int)op->k, lda = (int)op->ld[0], ldb = (int)op->ld[1];
    const int ldc = (int)op->ld[2];
    CUdeviceptr a = DEVPTR(op, 0, es), b = DEVPTR(op, 1, es), c = DEVPTR(op, 2, es);
    cublasOperation_t ta = blas_op(op->ta), tb = blas_op(op->tb);
    if (op->layout == XO_ROW_MAJOR) { /* C^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m) */
        CUdeviceptr p = a;
        a = b;
        b = p;
        cublasOperation_t t = ta;
        ta = tb;
        tb = t;
        int i = m;
        m = n;
        n = i;
        i = lda;
        lda = ldb;
        ldb = i;
    }
    if (op->dtype == XO_F64)
        return XO_CUBLAS(st, cublasDgemm_v2, (h, ta, tb, m, n, k, &ad, (const double *)(uintptr_t)a, lda,
                                              (const double *)(uintptr_t)b, ldb, &bd, (double *)(uintptr_t)c, ldc));
    return XO_CUBLAS(st, cublasSgemm_v2, (h, ta, tb, m, n, k, &af, (const float *)(uintptr_t)a, lda,
                                          (const float *)(uintptr_t)b, ldb, &bf, (float *)(uintptr_t)c, ldc));
}

xo_status xo__cuda_gemv(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    if (xo_op_scales_only(op)) return run_scale(st, d, op);
    XO_CUDA_TRY(blas_begin(st, d, op, CUBLAS_POINTER_MODE_HOST));
    const size_t es = xo__cuda_esize(op);
    const cublasHandle_t h = d->blas;
    const float af = (float)op->alpha, bf = (float)op->beta;
    const double ad = op->alpha, bd = op->beta;
    const CUdeviceptr a = DEVPTR(op, 0, es), x = DEVPTR(op, 1, es), y = DEVPTR(op, 2, es);
    const int lda = (int)op->ld[0], incx = (int)op->inc[0], incy = (int)op->inc[1];
    cublasOperation_t t = blas_op(op->ta);
    int rows = (int)op->m, cols = (int)op->n;
    if (op->layout == XO_ROW_MAJOR) { /* row-major m x n A is column-major n x m A^T */
        t = t == CUBLAS_OP_N ? CUBLAS_OP_T : CUBLAS_OP_N;
        rows = (int)op->n;
        cols = (int)op->m;
    }
    if (op->dtype == XO_F64)
        return XO_CUBLAS(st, cublasDgemv_v2, (h, t, rows, cols, &ad, (const double *)(uintptr_t)a, lda,
                                              (const double *)(uintptr_t)x, incx, &bd, (double *)(uintptr_t)y, incy));
    return XO_CUBLAS(st, cublasSgemv_v2, (h, t, rows, cols, &af, (const float *)(uintptr_t)a, lda,
                                          (const float *)(uintptr_t)x, incx, &bf, (float *)(uintptr_t)y, incy));
}

xo_status xo__cuda_axpy(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    XO_CUDA_TRY(blas_begin(st, d, op, CUBLAS_POINTER_MODE_HOST));
    const size_t es = xo__cuda_esize(op);
    const CUdeviceptr x = DEVPTR(op, 0, es), y = DEVPTR(op, 1, es);
    const int n = (int)op->n, incx = (int)op->inc[0], incy = (int)op->inc[1];
    if (op->dtype == XO_F64) {
        const double a = op->alpha;
        return XO_CUBLAS(st, cublasDaxpy_v2,
                         (d->blas, n, &a, (const double *)(uintptr_t)x, incx, (double *)(uintptr_t)y, incy));
    }
    const float a = (float)op->alpha;
    return XO_CUBLAS(st, cublasSaxpy_v2,
                     (d->blas, n, &a, (const float *)(uintptr_t)x, incx, (float *)(uintptr_t)y, incy));
}

xo_status xo__cuda_scal(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    if (xo_op_scales_only(op)) return run_scale(st, d, op);
    XO_CUDA_TRY(blas_begin(st, d, op, CUBLAS_POINTER_MODE_HOST));
    const CUdeviceptr x = DEVPTR(op, 0, xo__cuda_esize(op));
    const int n = (int)op->n, incx = (int)op->inc[0];
    if (op->dtype == XO_F64) {
        const double a = op->alpha;
        return XO_CUBLAS(st, cublasDscal_v2, (d->blas, n, &a, (double *)(uintptr_t)x, incx));
    }
    const float a = (float)op->alpha;
    return XO_CUBLAS(st, cublasSscal_v2, (d->blas, n, &a, (float *)(uintptr_t)x, incx));
}

xo_status xo__cuda_dot(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    XO_CUDA_TRY(blas_begin(st, d, op, CUBLAS_POINTER_MODE_DEVICE)); /* the result stays on the device */
    const size_t es = xo__cuda_esize(op);
    const CUdeviceptr x = DEVPTR(op, 0, es), y = DEVPTR(op, 1, es), r = DEVPTR(op, 2, es);
    const int n = (int)op->n, incx = (int)op->inc[0], incy = (int)op->inc[1];
    if (op->dtype == XO_F64)
        return XO_CUBLAS(st, cublasDdot_v2, (d->blas, n, (const double *)(uintptr_t)x, incx,
                                             (const double *)(uintptr_t)y, incy, (double *)(uintptr_t)r));
    return XO_CUBLAS(st, cublasSdot_v2, (d->blas, n, (const float *)(uintptr_t)x, incx, (const float *)(uintptr_t)y,
                                         incy, (float *)(uintptr_t)r));
}

xo_status xo__cuda_ger(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    if (op->alpha == 0) return XO_OK; /* A unchanged; x and y not read */
    XO_CUDA_TRY(blas_begin(st, d, op, CUBLAS_POINTER_MODE_HOST));
    const size_t es = xo__cuda_esize(op);
    const int row_major = op->layout == XO_ROW_MAJOR;
    /* Column-major: A (m x n) += alpha x y^T. Row-major: A^T (n x m) += alpha y x^T. */
    const int rows = (int)(row_major ? op->n : op->m), cols = (int)(row_major ? op->m : op->n);
    const int u = row_major ? 1 : 0, v = row_major ? 0 : 1; /* operand of the column / row vector */
    const CUdeviceptr pu = DEVPTR(op, u, es), pv = DEVPTR(op, v, es), a = DEVPTR(op, 2, es);
    const int incu = (int)op->inc[u], incv = (int)op->inc[v], lda = (int)op->ld[2];
    if (op->dtype == XO_F64) {
        const double alpha = op->alpha;
        return XO_CUBLAS(st, cublasDger_v2, (d->blas, rows, cols, &alpha, (const double *)(uintptr_t)pu, incu,
                                             (const double *)(uintptr_t)pv, incv, (double *)(uintptr_t)a, lda));
    }
    const float alpha = (float)op->alpha;
    return XO_CUBLAS(st, cublasSger_v2, (d->blas, rows, cols, &alpha, (const float *)(uintptr_t)pu, incu,
                                         (const float *)(uintptr_t)pv, incv, (float *)(uintptr_t)a, lda));
}

xo_status xo__cuda_nrm2(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const int f64 = op->dtype == XO_F64;
    const size_t es = xo__cuda_esize(op);
    CUdeviceptr x = DEVPTR(op, 0, es), out = DEVPTR(op, 1, es);
    unsigned long long n = op->n, inc = op->inc[0];
    int stage = 0;
    const unsigned blocks = xo__cuda_grid_for(op->n, XO_CUDA_REDUCE_BLOCKS);
    if (blocks == 1) {
        void *params[] = {&x, &n, &inc, &out, &stage};
        return xo__cuda_launch(st, d, XO_CUDA_K_NRM2, f64, 1, 1, params);
    }
    /* Pass 1: three partial sums per block into scratch; pass 2: one block folds them. */
    CUdeviceptr scratch = d->scratch;
    void *p1[] = {&x, &n, &inc, &scratch, &stage};
    XO_CUDA_TRY(xo__cuda_launch(st, d, XO_CUDA_K_NRM2, f64, blocks, 1, p1));
    unsigned long long nparts = blocks;
    stage = 1;
    void *p2[] = {&scratch, &nparts, &inc, &out, &stage};
    return xo__cuda_launch(st, d, XO_CUDA_K_NRM2, f64, 1, 1, p2);
}

xo_status xo__cuda_copy(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const size_t es = xo__cuda_esize(op);
    CUdeviceptr x = DEVPTR(op, 0, es), y = DEVPTR(op, 1, es);
    unsigned long long n = op->n, incx = op->inc[0], incy = op->inc[1];
    if (x == y && incx == incy) return XO_OK; /* y is x: nothing changes */
    void *params[] = {&x, &incx, &y, &incy, &n};
    return xo__cuda_launch(st, d, XO_CUDA_K_COPY, op->dtype == XO_F64, xo__cuda_grid_for(op->n, XO_CUDA_MAX_GRID), 1,
                           params);
}
