/* axpy, scal, dot, nrm2, copy and axpby through both ABIs, with reference BLAS's quick
 * returns: n <= 0 does nothing (dot and nrm2 give 0), axpy with alpha == 0 leaves y
 * alone, scal with incx <= 0 or alpha == 1 returns; axpby as OpenBLAS defines it (alpha
 * == 0 reads no x, beta == 0 no y, as crossover's op). Increments crossover does not
 * take (zero or negative) go to the CPU BLAS, as do calls too small to leave the CPU;
 * the rest is placed by crossover over the caller's memory. */
#include "xo_blas.h"

#include <math.h>
#include <stdlib.h>

/* ---- axpy: y += alpha x ---------------------------------------------------------------- */

#define XO_BLAS_DEFINE_AXPY(T, DT, f77, cblas, xo_axpy)                                                      \
    static int place_##xo_axpy(xo__blas_abi abi, int n, T alpha, const T *x, int incx, T *y, int incy)       \
    {                                                                                                        \
        xo__blas_call call = {.ctx = NULL};                                                                  \
        if (incx <= 0 || incy <= 0 || xo__blas_unplaced(&call, XO_BLAS_AXPY, DT, abi, n))                    \
            return 0;                                                                                        \
        xo_status st = xo__blas_wrap(&call, 2, (void *)x, xo__blas_vspan(n, incx) * sizeof(T), (void *)y,    \
                                     xo__blas_vspan(n, incy) * sizeof(T));                                   \
        if (st == XO_OK)                                                                                     \
            st = xo_axpy(call.ctx, (size_t)n, alpha, call.buf[0], 0, (size_t)incx, call.buf[1], 0, (size_t)incy); \
        return xo__blas_finish(&call, st, 1, XO_BLAS_AXPY, DT, abi);                                         \
    }                                                                                                        \
    void f77(const int *n, const T *alpha, const T *x, const int *incx, T *y, const int *incy)               \
    {                                                                                                        \
        if (*n <= 0 || *alpha == 0)                                                                          \
            return;                                                                                          \
        if (XO_BLAS_DIRECT(XO_BLAS_AXPY, DT, XO_BLAS_F77, *n) ||                                             \
            !place_##xo_axpy(XO_BLAS_F77, *n, *alpha, x, *incx, y, *incy))                                   \
            XO_OB(f77)(n, alpha, x, incx, y, incy);                                                          \
    }                                                                                                        \
    void cblas(const blasint n, const T alpha, const T *x, const blasint incx, T *y, const blasint incy)     \
    {                                                                                                        \
        if (n <= 0 || alpha == 0)                                                                            \
            return;                                                                                          \
        if (XO_BLAS_DIRECT(XO_BLAS_AXPY, DT, XO_BLAS_C, n) || !place_##xo_axpy(XO_BLAS_C, n, alpha, x, incx, y, incy)) \
            XO_OB(cblas)(n, alpha, x, incx, y, incy);                                                        \
    }
XO_BLAS_DEFINE_AXPY(float, XO_F32, saxpy_, cblas_saxpy, xo_saxpy)
XO_BLAS_DEFINE_AXPY(double, XO_F64, daxpy_, cblas_daxpy, xo_daxpy)

/* ---- scal: x *= alpha -------------------------------------------------------------------
 * alpha == 0 multiplies as reference BLAS does (NaN and Inf stay NaN, -x gives -0), where
 * crossover's scal writes zeros: that case is done here, on the caller's memory. */

#define XO_BLAS_DEFINE_SCAL(T, DT, f77, cblas, xo_scal)                                                      \
    static int place_##xo_scal(xo__blas_abi abi, int n, T alpha, T *x, int incx)                             \
    {                                                                                                        \
        if (alpha == 0) {                                                                                    \
            for (size_t i = 0, step = (size_t)incx; i < (size_t)n; i++)                                      \
                x[i * step] *= alpha;                                                                        \
            return 1;                                                                                        \
        }                                                                                                    \
        xo__blas_call call = {.ctx = NULL};                                                                  \
        if (xo__blas_unplaced(&call, XO_BLAS_SCAL, DT, abi, n))                                              \
            return 0;                                                                                        \
        xo_status st = xo__blas_wrap(&call, 1, (void *)x, xo__blas_vspan(n, incx) * sizeof(T));              \
        if (st == XO_OK)                                                                                     \
            st = xo_scal(call.ctx, (size_t)n, alpha, call.buf[0], 0, (size_t)incx);                          \
        return xo__blas_finish(&call, st, 0, XO_BLAS_SCAL, DT, abi);                                         \
    }                                                                                                        \
    void f77(const int *n, const T *alpha, T *x, const int *incx)                                            \
    {                                                                                                        \
        if (*n <= 0 || *incx <= 0 || *alpha == 1)                                                            \
            return;                                                                                          \
        if ((*alpha != 0 && XO_BLAS_DIRECT(XO_BLAS_SCAL, DT, XO_BLAS_F77, *n)) ||                            \
            !place_##xo_scal(XO_BLAS_F77, *n, *alpha, x, *incx))                                             \
            XO_OB(f77)(n, alpha, x, incx);                                                                   \
    }                                                                                                        \
    void cblas(const blasint n, const T alpha, T *x, const blasint incx)                                     \
    {                                                                                                        \
        if (n <= 0 || incx <= 0 || alpha == 1)                                                               \
            return;                                                                                          \
        if ((alpha != 0 && XO_BLAS_DIRECT(XO_BLAS_SCAL, DT, XO_BLAS_C, n)) ||                                \
            !place_##xo_scal(XO_BLAS_C, n, alpha, x, incx))                                                  \
            XO_OB(cblas)(n, alpha, x, incx);                                                                 \
    }
XO_BLAS_DEFINE_SCAL(float, XO_F32, sscal_, cblas_sscal, xo_sscal)
XO_BLAS_DEFINE_SCAL(double, XO_F64, dscal_, cblas_dscal, xo_dscal)

/* ---- dot and nrm2: the result comes back through a one-element wrapped buffer ----------- */

#define XO_BLAS_DEFINE_DOT(T, DT, f77, cblas, xo_dot)                                                        \
    static int place_##xo_dot(xo__blas_abi abi, int n, const T *x, int incx, const T *y, int incy, T *out)   \
    {                                                                                                        \
        xo__blas_call call = {.ctx = NULL};                                                                  \
        if (incx <= 0 || incy <= 0 || xo__blas_unplaced(&call, XO_BLAS_DOT, DT, abi, n))                     \
            return 0;                                                                                        \
        xo_status st = xo__blas_wrap(&call, 3, (void *)x, xo__blas_vspan(n, incx) * sizeof(T), (void *)y,    \
                                     xo__blas_vspan(n, incy) * sizeof(T), (void *)out, sizeof(T));           \
        if (st == XO_OK)                                                                                     \
            st = xo_dot(call.ctx, (size_t)n, call.buf[0], 0, (size_t)incx, call.buf[1], 0, (size_t)incy,     \
                        call.buf[2], 0);                                                                     \
        return xo__blas_finish(&call, st, 2, XO_BLAS_DOT, DT, abi);                                          \
    }                                                                                                        \
    T f77(const int *n, const T *x, const int *incx, const T *y, const int *incy)                            \
    {                                                                                                        \
        T out = 0;                                                                                           \
        if (*n <= 0)                                                                                         \
            return 0;                                                                                        \
        if (XO_BLAS_DIRECT(XO_BLAS_DOT, DT, XO_BLAS_F77, *n) ||                                              \
            !place_##xo_dot(XO_BLAS_F77, *n, x, *incx, y, *incy, &out))                                      \
            return XO_OB(f77)(n, x, incx, y, incy);                                                          \
        return out;                                                                                          \
    }                                                                                                        \
    T cblas(const blasint n, const T *x, const blasint incx, const T *y, const blasint incy)                 \
    {                                                                                                        \
        T out = 0;                                                                                           \
        if (n <= 0)                                                                                          \
            return 0;                                                                                        \
        if (XO_BLAS_DIRECT(XO_BLAS_DOT, DT, XO_BLAS_C, n) || !place_##xo_dot(XO_BLAS_C, n, x, incx, y, incy, &out)) \
            return XO_OB(cblas)(n, x, incx, y, incy);                                                        \
        return out;                                                                                          \
    }
XO_BLAS_DEFINE_DOT(float, XO_F32, sdot_, cblas_sdot, xo_sdot)
XO_BLAS_DEFINE_DOT(double, XO_F64, ddot_, cblas_ddot, xo_ddot)

/* nrm2 of a negative increment is that of the same elements in the other order: |incx|;
 * of a zero one, n times x[0] (reference BLAS; OpenBLAS returns 0 there). */
#define XO_BLAS_DEFINE_NRM2(T, DT, f77, cblas, xo_nrm2)                                                      \
    /* n <= 0 and incx == 0 (every element is x[0]): 1 with *out set */                                      \
    static int special_##xo_nrm2(int n, const T *x, int incx, T *out)                                        \
    {                                                                                                        \
        if (n > 0 && incx != 0)                                                                              \
            return 0;                                                                                        \
        *out = n <= 0 ? 0 : (T)(fabs((double)x[0]) * sqrt((double)n));                                       \
        return 1;                                                                                            \
    }                                                                                                        \
    static int place_##xo_nrm2(xo__blas_abi abi, int n, const T *x, int incx, T *out)                        \
    {                                                                                                        \
        xo__blas_call call = {.ctx = NULL};                                                                  \
        if (xo__blas_unplaced(&call, XO_BLAS_NRM2, DT, abi, n))                                              \
            return 0;                                                                                        \
        xo_status st = xo__blas_wrap(&call, 2, (void *)x, xo__blas_vspan(n, incx) * sizeof(T), (void *)out,  \
                                     sizeof(T));                                                             \
        if (st == XO_OK)                                                                                     \
            st = xo_nrm2(call.ctx, (size_t)n, call.buf[0], 0, (size_t)incx, call.buf[1], 0);                 \
        return xo__blas_finish(&call, st, 1, XO_BLAS_NRM2, DT, abi);                                         \
    }                                                                                                        \
    T f77(const int *n, const T *x, const int *incx)                                                         \
    {                                                                                                        \
        T out = 0;                                                                                           \
        int inc = abs(*incx);                                                                                \
        if (special_##xo_nrm2(*n, x, inc, &out) ||                                                           \
            (!XO_BLAS_DIRECT(XO_BLAS_NRM2, DT, XO_BLAS_F77, *n) && place_##xo_nrm2(XO_BLAS_F77, *n, x, inc, &out))) \
            return out;                                                                                      \
        return XO_OB(f77)(n, x, &inc);                                                                       \
    }                                                                                                        \
    T cblas(const blasint n, const T *x, const blasint incx)                                                 \
    {                                                                                                        \
        T out = 0;                                                                                           \
        int inc = abs(incx);                                                                                 \
        if (special_##xo_nrm2(n, x, inc, &out) ||                                                            \
            (!XO_BLAS_DIRECT(XO_BLAS_NRM2, DT, XO_BLAS_C, n) && place_##xo_nrm2(XO_BLAS_C, n, x, inc, &out)))  \
            return out;                                                                                      \
        return XO_OB(cblas)(n, x, inc);                                                                      \
    }
XO_BLAS_DEFINE_NRM2(float, XO_F32, snrm2_, cblas_snrm2, xo_snrm2)
XO_BLAS_DEFINE_NRM2(double, XO_F64, dnrm2_, cblas_dnrm2, xo_dnrm2)

/* ---- copy: y = x --------------------------------------------------------------------- */
#define XO_BLAS_DEFINE_COPY(T, DT, f77, cblas, xo_copy)                                                      \
    static int place_##xo_copy(xo__blas_abi abi, int n, const T *x, int incx, T *y, int incy)                \
    {                                                                                                        \
        xo__blas_call call = {.ctx = NULL};                                                                  \
        if (incx <= 0 || incy <= 0 || xo__blas_unplaced(&call, XO_BLAS_COPY, DT, abi, n))                    \
            return 0;                                                                                        \
        xo_status st = xo__blas_wrap(&call, 2, (void *)x, xo__blas_vspan(n, incx) * sizeof(T), (void *)y,    \
                                     xo__blas_vspan(n, incy) * sizeof(T));                                   \
        if (st == XO_OK)                                                                                     \
            st = xo_copy(call.ctx, (size_t)n, call.buf[0], 0, (size_t)incx, call.buf[1], 0, (size_t)incy);   \
        return xo__blas_finish(&call, st, 1, XO_BLAS_COPY, DT, abi);                                         \
    }                                                                                                        \
    void f77(const int *n, const T *x, const int *incx, T *y, const int *incy)                               \
    {                                                                                                        \
        if (*n <= 0)                                                                                         \
            return;                                                                                          \
        if (XO_BLAS_DIRECT(XO_BLAS_COPY, DT, XO_BLAS_F77, *n) ||                                             \
            !place_##xo_copy(XO_BLAS_F77, *n, x, *incx, y, *incy))                                           \
            XO_OB(f77)(n, x, incx, y, incy);                                                                 \
    }                                                                                                        \
    void cblas(const blasint n, const T *x, const blasint incx, T *y, const blasint incy)                    \
    {                                                                                                        \
        if (n <= 0)                                                                                          \
            return;                                                                                          \
        if (XO_BLAS_DIRECT(XO_BLAS_COPY, DT, XO_BLAS_C, n) || !place_##xo_copy(XO_BLAS_C, n, x, incx, y, incy)) \
            XO_OB(cblas)(n, x, incx, y, incy);                                                               \
    }
XO_BLAS_DEFINE_COPY(float, XO_F32, scopy_, cblas_scopy, xo_scopy)
XO_BLAS_DEFINE_COPY(double, XO_F64, dcopy_, cblas_dcopy, xo_dcopy)

/* ---- axpby: y = alpha x + beta y (an extension: OpenBLAS's, MKL's) ----------------- */
#define XO_BLAS_DEFINE_AXPBY(T, DT, f77, cblas, xo_axpby)                                                    \
    static int place_##xo_axpby(xo__blas_abi abi, int n, T alpha, const T *x, int incx, T beta, T *y, int incy) \
    {                                                                                                        \
        xo__blas_call call = {.ctx = NULL};                                                                  \
        if (incx <= 0 || incy <= 0 || xo__blas_unplaced(&call, XO_BLAS_AXPBY, DT, abi, n))                   \
            return 0;                                                                                        \
        xo_status st = xo__blas_wrap(&call, 2, (void *)x, xo__blas_vspan(n, incx) * sizeof(T), (void *)y,    \
                                     xo__blas_vspan(n, incy) * sizeof(T));                                   \
        if (st == XO_OK)                                                                                     \
            st = xo_axpby(call.ctx, (size_t)n, alpha, call.buf[0], 0, (size_t)incx, beta, call.buf[1], 0,    \
                          (size_t)incy);                                                                     \
        return xo__blas_finish(&call, st, 1, XO_BLAS_AXPBY, DT, abi);                                        \
    }                                                                                                        \
    void f77(const int *n, const T *alpha, const T *x, const int *incx, const T *beta, T *y, const int *incy) \
    {                                                                                                        \
        if (*n <= 0)                                                                                         \
            return;                                                                                          \
        if (XO_BLAS_DIRECT(XO_BLAS_AXPBY, DT, XO_BLAS_F77, *n) ||                                            \
            !place_##xo_axpby(XO_BLAS_F77, *n, *alpha, x, *incx, *beta, y, *incy))                           \
            XO_OB(f77)(n, alpha, x, incx, beta, y, incy);                                                    \
    }                                                                                                        \
    void cblas(const blasint n, const T alpha, const T *x, const blasint incx, const T beta, T *y,           \
               const blasint incy)                                                                           \
    {                                                                                                        \
        if (n <= 0)                                                                                          \
            return;                                                                                          \
        if (XO_BLAS_DIRECT(XO_BLAS_AXPBY, DT, XO_BLAS_C, n) ||                                               \
            !place_##xo_axpby(XO_BLAS_C, n, alpha, x, incx, beta, y, incy))                                  \
            XO_OB(cblas)(n, alpha, x, incx, beta, y, incy);                                                  \
    }
XO_BLAS_DEFINE_AXPBY(float, XO_F32, saxpby_, cblas_saxpby, xo_saxpby)
XO_BLAS_DEFINE_AXPBY(double, XO_F64, daxpby_, cblas_daxpby, xo_daxpby)
