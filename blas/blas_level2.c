/* gemv and ger through both ABIs: reference argument checks and quick returns (ger:
 * m or n 0, alpha 0), then the CPU BLAS for small calls and for increments crossover
 * does not take (negative; zero is an error here), crossover's placement otherwise. */
#include "xo_blas.h"

/* Reference INFO of xGEMV (column-major terms); 0 when every argument is legal. */
static int gemv_info(int ta, int m, int n, int lda, int incx, int incy)
{
    return !ta ? 1 : m < 0 ? 2 : n < 0 ? 3 : lda < xo__blas_max1(m) ? 6 : incx == 0 ? 8 : incy == 0 ? 11 : 0;
}

/* The INFO reference CBLAS hands cblas_xerbla for cblas_?gemv: its own checks (layout
 * 1, TransA 2), then xGEMV's INFO + 1 on the column-major call the CBLAS call becomes (a
 * row-major one with M and N swapped). cblas_xerbla renumbers a row-major INFO as the
 * caller wrote the call (blas_xerbla.c), as the CBLAS testers' handler does. */
static int cblas_gemv_info(int layout, int ta, int m, int n, int lda, int incx, int incy)
{
    if (layout != CblasColMajor && layout != CblasRowMajor)
        return 1;
    if (!ta)
        return 2;
    int info = layout == CblasColMajor ? gemv_info(ta, m, n, lda, incx, incy) : gemv_info(ta, n, m, lda, incx, incy);
    return info ? info + 1 : 0;
}

#define XO_BLAS_PLACE_GEMV(T, DT, xo_gemv)                                                                    \
    static int place_##xo_gemv(xo__blas_abi abi, xo_layout layout, int ta, int m, int n, T alpha, const T *a, \
                               int lda, const T *x, int incx, T beta, T *y, int incy)                        \
    {                                                                                                        \
        xo__blas_call call = {.ctx = NULL};                                                                  \
        if (alpha == 0 || incx < 0 || incy < 0 ||                                                           \
            xo__blas_unplaced(&call, XO_BLAS_GEMV, DT, abi, (double)m * n))                                  \
            return 0;                                                                                        \
        int lenx = ta == XO_NO_TRANS ? n : m, leny = ta == XO_NO_TRANS ? m : n;                              \
        size_t sa = layout == XO_COL_MAJOR ? xo__blas_mspan(m, n, lda) : xo__blas_mspan(n, m, lda);          \
        xo_status st = xo__blas_wrap(&call, 3, (void *)a, sa * sizeof(T), (void *)x,                         \
                                     xo__blas_vspan(lenx, incx) * sizeof(T), (void *)y,                      \
                                     xo__blas_vspan(leny, incy) * sizeof(T));                                \
        if (st == XO_OK)                                                                                     \
            st = xo_gemv(call.ctx, layout, (xo_transpose)ta, (size_t)m, (size_t)n, alpha, call.buf[0], 0,    \
                         (size_t)lda, call.buf[1], 0, (size_t)incx, beta, call.buf[2], 0, (size_t)incy);     \
        return xo__blas_finish(&call, st, 2, XO_BLAS_GEMV, DT, abi);                                         \
    }
XO_BLAS_PLACE_GEMV(float, XO_F32, xo_sgemv)
XO_BLAS_PLACE_GEMV(double, XO_F64, xo_dgemv)

#define XO_BLAS_DEFINE_GEMV(T, DT, f77, cblas, NAME6, xo_gemv)                                               \
    void f77(const char *trans, const int *m, const int *n, const T *alpha, const T *a, const int *lda,      \
             const T *x, const int *incx, const T *beta, T *y, const int *incy, size_t lt)                   \
    {                                                                                                        \
        int ta = xo__blas_trans_f77(trans);                                                                  \
        int info = gemv_info(ta, *m, *n, *lda, *incx, *incy);                                                \
        if (info) {                                                                                          \
            xo__blas_xerbla(NAME6, info);                                                                    \
            return;                                                                                          \
        }                                                                                                    \
        if (*m == 0 || *n == 0 || (*alpha == 0 && *beta == 1))                                               \
            return;                                                                                          \
        if (XO_BLAS_DIRECT(XO_BLAS_GEMV, DT, XO_BLAS_F77, (double)*m * *n) ||                                \
            !place_##xo_gemv(XO_BLAS_F77, XO_COL_MAJOR, ta, *m, *n, *alpha, a, *lda, x, *incx, *beta, y, *incy)) \
            XO_OB(f77)(trans, m, n, alpha, a, lda, x, incx, beta, y, incy, lt);                              \
    }                                                                                                        \
    void cblas(const enum CBLAS_ORDER layout, const enum CBLAS_TRANSPOSE trans, const blasint m,             \
               const blasint n, const T alpha, const T *a, const blasint lda, const T *x, const blasint incx, \
               const T beta, T *y, const blasint incy)                                                       \
    {                                                                                                        \
        int ta = xo__blas_trans_c(trans);                                                                    \
        int info = cblas_gemv_info(layout, ta, m, n, lda, incx, incy);                                       \
        if (info) {                                                                                          \
            xo__blas_cblas_xerbla(#cblas, info, layout == CblasRowMajor);                                    \
            return;                                                                                          \
        }                                                                                                    \
        if (m == 0 || n == 0 || (alpha == 0 && beta == 1))                                                   \
            return;                                                                                          \
        if (XO_BLAS_DIRECT(XO_BLAS_GEMV, DT, XO_BLAS_C, (double)m * n) ||                                    \
            !place_##xo_gemv(XO_BLAS_C, (xo_layout)layout, ta, m, n, alpha, a, lda, x, incx, beta, y, incy)) \
            XO_OB(cblas)(layout, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);                        \
    }
XO_BLAS_DEFINE_GEMV(float, XO_F32, sgemv_, cblas_sgemv, "SGEMV ", xo_sgemv)
XO_BLAS_DEFINE_GEMV(double, XO_F64, dgemv_, cblas_dgemv, "DGEMV ", xo_dgemv)

/* Reference INFO of xGER (column-major terms). */
static int ger_info(int m, int n, int incx, int incy, int lda)
{
    return m < 0 ? 1 : n < 0 ? 2 : incx == 0 ? 5 : incy == 0 ? 7 : lda < xo__blas_max1(m) ? 9 : 0;
}

/* The INFO reference CBLAS hands cblas_xerbla for cblas_?ger: layout 1, then xGER's INFO
 * + 1 on the column-major call (row-major: M, N and x, y swapped). */
static int cblas_ger_info(int layout, int m, int n, int incx, int incy, int lda)
{
    if (layout != CblasColMajor && layout != CblasRowMajor)
        return 1;
    int info = layout == CblasColMajor ? ger_info(m, n, incx, incy, lda) : ger_info(n, m, incy, incx, lda);
    return info ? info + 1 : 0;
}

#define XO_BLAS_PLACE_GER(T, DT, xo_ger)                                                                     \
    static int place_##xo_ger(xo__blas_abi abi, xo_layout layout, int m, int n, T alpha, const T *x, int incx, \
                              const T *y, int incy, T *a, int lda)                                           \
    {                                                                                                        \
        xo__blas_call call = {.ctx = NULL};                                                                  \
        if (incx < 0 || incy < 0 || xo__blas_unplaced(&call, XO_BLAS_GER, DT, abi, (double)m * n))           \
            return 0;                                                                                        \
        size_t sa = layout == XO_COL_MAJOR ? xo__blas_mspan(m, n, lda) : xo__blas_mspan(n, m, lda);          \
        xo_status st = xo__blas_wrap(&call, 3, (void *)x, xo__blas_vspan(m, incx) * sizeof(T), (void *)y,    \
                                     xo__blas_vspan(n, incy) * sizeof(T), (void *)a, sa * sizeof(T));        \
        if (st == XO_OK)                                                                                     \
            st = xo_ger(call.ctx, layout, (size_t)m, (size_t)n, alpha, call.buf[0], 0, (size_t)incx, call.buf[1], \
                        0, (size_t)incy, call.buf[2], 0, (size_t)lda);                                       \
        return xo__blas_finish(&call, st, 2, XO_BLAS_GER, DT, abi);                                          \
    }
XO_BLAS_PLACE_GER(float, XO_F32, xo_sger)
XO_BLAS_PLACE_GER(double, XO_F64, xo_dger)

#define XO_BLAS_DEFINE_GER(T, DT, f77, cblas, NAME6, xo_ger)                                                 \
    void f77(const int *m, const int *n, const T *alpha, const T *x, const int *incx, const T *y,            \
             const int *incy, T *a, const int *lda)                                                          \
    {                                                                                                        \
        int info = ger_info(*m, *n, *incx, *incy, *lda);                                                     \
        if (info) {                                                                                          \
            xo__blas_xerbla(NAME6, info);                                                                    \
            return;                                                                                          \
        }                                                                                                    \
        if (*m == 0 || *n == 0 || *alpha == 0)                                                               \
            return;                                                                                          \
        if (XO_BLAS_DIRECT(XO_BLAS_GER, DT, XO_BLAS_F77, (double)*m * *n) ||                                 \
            !place_##xo_ger(XO_BLAS_F77, XO_COL_MAJOR, *m, *n, *alpha, x, *incx, y, *incy, a, *lda))         \
            XO_OB(f77)(m, n, alpha, x, incx, y, incy, a, lda);                                               \
    }                                                                                                        \
    void cblas(const enum CBLAS_ORDER layout, const blasint m, const blasint n, const T alpha, const T *x,   \
               const blasint incx, const T *y, const blasint incy, T *a, const blasint lda)                  \
    {                                                                                                        \
        int info = cblas_ger_info(layout, m, n, incx, incy, lda);                                            \
        if (info) {                                                                                          \
            xo__blas_cblas_xerbla(#cblas, info, layout == CblasRowMajor);                                    \
            return;                                                                                          \
        }                                                                                                    \
        if (m == 0 || n == 0 || alpha == 0)                                                                  \
            return;                                                                                          \
        if (XO_BLAS_DIRECT(XO_BLAS_GER, DT, XO_BLAS_C, (double)m * n) ||                                     \
            !place_##xo_ger(XO_BLAS_C, (xo_layout)layout, m, n, alpha, x, incx, y, incy, a, lda))            \
            XO_OB(cblas)(layout, m, n, alpha, x, incx, y, incy, a, lda);                                     \
    }
XO_BLAS_DEFINE_GER(float, XO_F32, sger_, cblas_sger, "SGER  ", xo_sger)
XO_BLAS_DEFINE_GER(double, XO_F64, dger_, cblas_dger, "DGER  ", xo_dger)
