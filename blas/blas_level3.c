/* gemm through both ABIs: reference SGEMM/DGEMM argument checks (INFO numbers, and
 * cblas_xerbla's numbering for CBLAS), quick returns, then the CPU BLAS for calls too
 * small to leave the CPU and crossover's placement over the caller's memory otherwise. */
#include "xo_blas.h"

/* Reference INFO of xGEMM (column-major terms); 0 when every argument is legal. */
static int gemm_info(int ta, int tb, int m, int n, int k, int lda, int ldb, int ldc)
{
    int nrowa = ta == XO_NO_TRANS ? m : k, nrowb = tb == XO_NO_TRANS ? k : n;
    return !ta ? 1 : !tb ? 2 : m < 0 ? 3 : n < 0 ? 4 : k < 0 ? 5 : lda < xo__blas_max1(nrowa) ? 8
         : ldb < xo__blas_max1(nrowb) ? 10 : ldc < xo__blas_max1(m) ? 13 : 0;
}

/* The INFO reference CBLAS hands cblas_xerbla for cblas_?gemm: layout 1, TransA 2, TransB
 * 3, then xGEMM's INFO + 1 on the column-major call (row-major: A and B, M and N swapped);
 * cblas_xerbla renumbers a row-major one as the caller wrote the call. */
static int cblas_gemm_info(int layout, int ta, int tb, int m, int n, int k, int lda, int ldb, int ldc)
{
    if (layout != CblasColMajor && layout != CblasRowMajor)
        return 1;
    if (!ta || !tb)
        return !ta ? 2 : 3;
    int info = layout == CblasColMajor ? gemm_info(ta, tb, m, n, k, lda, ldb, ldc)
                                       : gemm_info(tb, ta, n, m, k, ldb, lda, ldc);
    return info ? info + 1 : 0;
}

static int gemm_quick(int m, int n, int k, double alpha, double beta)
{
    return m == 0 || n == 0 || ((alpha == 0 || k == 0) && beta == 1);
}

/* alpha == 0 or k == 0: C = beta C, with beta == 0 writing zeros, A and B never read (as
 * reference xGEMM does; OpenBLAS would multiply NaN in A by 0). */
#define XO_BLAS_SCALE_C(T, xo_gemm)                                                                          \
    static void scale_c_##xo_gemm(xo_layout layout, int m, int n, T beta, T *c, int ldc)                     \
    {                                                                                                        \
        int rows = layout == XO_COL_MAJOR ? m : n, cols = layout == XO_COL_MAJOR ? n : m;                    \
        for (int j = 0; j < cols; j++)                                                                       \
            for (int i = 0; i < rows; i++) {                                                                 \
                T *e = &c[i + (size_t)j * (size_t)ldc];                                                      \
                *e = beta == 0 ? 0 : beta * *e;                                                              \
            }                                                                                                \
    }
XO_BLAS_SCALE_C(float, xo_sgemm)
XO_BLAS_SCALE_C(double, xo_dgemm)

/* The placed call; 0 when the CPU BLAS is to run it (too small after all, no context,
 * or crossover failed without writing C). */
#define XO_BLAS_PLACE_GEMM(T, DT, xo_gemm)                                                                   \
    static int place_##xo_gemm(xo__blas_abi abi, xo_layout layout, int ta, int tb, int m, int n, int k,      \
                               T alpha, const T *a, int lda, const T *b, int ldb, T beta, T *c, int ldc)     \
    {                                                                                                        \
        if (alpha == 0 || k == 0) {                                                                          \
            scale_c_##xo_gemm(layout, m, n, beta, c, ldc);                                                   \
            return 1;                                                                                        \
        }                                                                                                    \
        xo__blas_call call = {.ctx = NULL};                                                                  \
        if (xo__blas_unplaced(&call, XO_BLAS_GEMM, DT, abi, (double)m * n * k))                              \
            return 0;                                                                                        \
        int ar = ta == XO_NO_TRANS ? m : k, ac = ta == XO_NO_TRANS ? k : m;                                  \
        int br = tb == XO_NO_TRANS ? k : n, bc = tb == XO_NO_TRANS ? n : k;                                  \
        int col = layout == XO_COL_MAJOR;                                                                    \
        size_t sa = col ? xo__blas_mspan(ar, ac, lda) : xo__blas_mspan(ac, ar, lda);                         \
        size_t sb = col ? xo__blas_mspan(br, bc, ldb) : xo__blas_mspan(bc, br, ldb);                         \
        size_t sc = col ? xo__blas_mspan(m, n, ldc) : xo__blas_mspan(n, m, ldc);                             \
        xo_status st = xo__blas_wrap(&call, 3, (void *)a, sa * sizeof(T), (void *)b, sb * sizeof(T), (void *)c, \
                                     sc * sizeof(T));                                                        \
        if (st == XO_OK)                                                                                     \
            st = xo_gemm(call.ctx, layout, (xo_transpose)ta, (xo_transpose)tb, (size_t)m, (size_t)n, (size_t)k, \
                         alpha, call.buf[0], 0, (size_t)lda, call.buf[1], 0, (size_t)ldb, beta, call.buf[2], 0,  \
                         (size_t)ldc);                                                                       \
        return xo__blas_finish(&call, st, 2, XO_BLAS_GEMM, DT, abi);                                         \
    }
XO_BLAS_PLACE_GEMM(float, XO_F32, xo_sgemm)
XO_BLAS_PLACE_GEMM(double, XO_F64, xo_dgemm)

/* Both ABIs of one precision. The size test is inline: a tiny call costs the checks,
 * one comparison and the jump into the CPU BLAS. */
#define XO_BLAS_DEFINE_GEMM(T, DT, f77, cblas, NAME6, xo_gemm)                                               \
    void f77(const char *transa, const char *transb, const int *m, const int *n, const int *k, const T *alpha, \
             const T *a, const int *lda, const T *b, const int *ldb, const T *beta, T *c, const int *ldc,    \
             size_t la, size_t lb)                                                                           \
    {                                                                                                        \
        int ta = xo__blas_trans_f77(transa), tb = xo__blas_trans_f77(transb);                                \
        int info = gemm_info(ta, tb, *m, *n, *k, *lda, *ldb, *ldc);                                          \
        if (info) {                                                                                          \
            xo__blas_xerbla(NAME6, info);                                                                    \
            return;                                                                                          \
        }                                                                                                    \
        if (gemm_quick(*m, *n, *k, *alpha, *beta))                                                           \
            return;                                                                                          \
        if ((*alpha != 0 && XO_BLAS_DIRECT(XO_BLAS_GEMM, DT, XO_BLAS_F77, (double)*m * *n * *k)) ||          \
            !place_##xo_gemm(XO_BLAS_F77, XO_COL_MAJOR, ta, tb, *m, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, \
                             *ldc))                                                                          \
            XO_OB(f77)(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, la, lb);                \
    }                                                                                                        \
    void cblas(const enum CBLAS_ORDER layout, const enum CBLAS_TRANSPOSE transa,                             \
               const enum CBLAS_TRANSPOSE transb, const blasint m, const blasint n, const blasint k,         \
               const T alpha, const T *a, const blasint lda, const T *b, const blasint ldb, const T beta, T *c, \
               const blasint ldc)                                                                            \
    {                                                                                                        \
        int ta = xo__blas_trans_c(transa), tb = xo__blas_trans_c(transb);                                    \
        int info = cblas_gemm_info(layout, ta, tb, m, n, k, lda, ldb, ldc);                                  \
        if (info) {                                                                                          \
            xo__blas_cblas_xerbla(#cblas, info, layout == CblasRowMajor);                                    \
            return;                                                                                          \
        }                                                                                                    \
        if (gemm_quick(m, n, k, alpha, beta))                                                                \
            return;                                                                                          \
        if ((alpha != 0 && XO_BLAS_DIRECT(XO_BLAS_GEMM, DT, XO_BLAS_C, (double)m * n * k)) ||                \
            !place_##xo_gemm(XO_BLAS_C, (xo_layout)layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) \
            XO_OB(cblas)(layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);              \
    }
XO_BLAS_DEFINE_GEMM(float, XO_F32, sgemm_, cblas_sgemm, "SGEMM ", xo_sgemm)
XO_BLAS_DEFINE_GEMM(double, XO_F64, dgemm_, cblas_dgemm, "DGEMM ", xo_dgemm)
