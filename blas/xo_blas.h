/* Internals of libcrossover_blas.so, the BLAS drop-in (docs/blas.md).
 *
 * Each exported routine is either forwarded as is to the CPU BLAS loaded privately
 * (blas_forward.c: a one-instruction trampoline through xo__fwd_<name>) or defined here
 * (blas_level*.c): reference argument checks and quick returns, then a size test against
 * a threshold the cost model gave at start (blas_init.c); a call under it goes straight
 * to the CPU BLAS, a bigger one is placed by crossover over the caller's memory. */
#ifndef XO_BLAS_H
#define XO_BLAS_H

#include "xo_internal.h"
#include "blas_names.h"

#include <cblas.h>
#include <stddef.h>
#include <stdint.h>

#define XO_HIDDEN __attribute__((visibility("hidden")))

/* ---- the private CPU BLAS (blas_forward.c) ---------------------------------------- */

/* Entry `name` of the CPU BLAS, filled when the library loads (a stub that reports the
 * routine missing where XO_BLAS_LIB lacks it). */
#define XO_BLAS_DECLARE_POINTER(name, route) extern XO_HIDDEN void (*xo__fwd_##name)(void);
XO_BLAS_FORTRAN(XO_BLAS_DECLARE_POINTER)
XO_BLAS_CBLAS(XO_BLAS_DECLARE_POINTER)
XO_BLAS_POINTERS(XO_BLAS_DECLARE_POINTER)
#undef XO_BLAS_DECLARE_POINTER
/* Call the CPU BLAS's `name`, with the prototype of our own `name`. */
#define XO_OB(name) ((__typeof__(name) *)xo__fwd_##name)
/* 1 once XO_BLAS_LIB is loaded and is not this library. */
extern XO_HIDDEN int xo__blas_lib_ok;
/* Where the CPU BLAS libraries lie in memory: [i][0] start, [i][1] length (0: none). */
extern XO_HIDDEN uintptr_t xo__blas_cpu_span[2][2];
/* 1 when return address `ra` lies inside the CPU BLAS: a call it makes to a BLAS name of
 * its own (reference CBLAS's cblas_saxpy calls saxpy_) that the global scope gave to the
 * drop-in. Such a call goes straight back to the CPU BLAS, as if the library had been
 * loaded with RTLD_DEEPBIND: never placed, never waiting on the drop-in's start. */
static inline int xo__blas_inner(const void *ra)
{
    uintptr_t a = (uintptr_t)ra;
    return a - xo__blas_cpu_span[0][0] < xo__blas_cpu_span[0][1] ||
           a - xo__blas_cpu_span[1][0] < xo__blas_cpu_span[1][1];
}
/* The test of every routine defined here, in the exported function itself: 1 when the call
 * goes straight to the CPU BLAS (too small to leave the CPU, or made by the CPU BLAS). */
#define XO_BLAS_DIRECT(kind, dt, abi, work) \
    (xo__blas_small(kind, dt, abi, work) || xo__blas_inner(__builtin_return_address(0)))

/* ---- Fortran prototypes of the routines defined here (gfortran's ABI: every argument
 * by reference, CHARACTER lengths as trailing size_t) ------------------------------- */
void xerbla_(const char *srname, const int *info, size_t len);
#define XO_BLAS_F77_PROTOS(T, p)                                                                                   \
    void p##gemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const T *alpha, \
                  const T *a, const int *lda, const T *b, const int *ldb, const T *beta, T *c, const int *ldc,      \
                  size_t la, size_t lb);                                                                           \
    void p##gemv_(const char *trans, const int *m, const int *n, const T *alpha, const T *a, const int *lda,       \
                  const T *x, const int *incx, const T *beta, T *y, const int *incy, size_t lt);                   \
    void p##ger_(const int *m, const int *n, const T *alpha, const T *x, const int *incx, const T *y,              \
                 const int *incy, T *a, const int *lda);                                                           \
    void p##axpy_(const int *n, const T *alpha, const T *x, const int *incx, T *y, const int *incy);              \
    void p##axpby_(const int *n, const T *alpha, const T *x, const int *incx, const T *beta, T *y,                \
                   const int *incy);                                                                               \
    void p##scal_(const int *n, const T *alpha, T *x, const int *incx);                                           \
    void p##copy_(const int *n, const T *x, const int *incx, T *y, const int *incy);                              \
    T p##dot_(const int *n, const T *x, const int *incx, const T *y, const int *incy);                            \
    T p##nrm2_(const int *n, const T *x, const int *incx);
XO_BLAS_F77_PROTOS(float, s)
XO_BLAS_F77_PROTOS(double, d)
#undef XO_BLAS_F77_PROTOS

/* ---- placement state (blas_init.c) --------------------------------------------------- */

typedef enum xo__blas_kind {
    XO_BLAS_GEMM, XO_BLAS_GEMV, XO_BLAS_GER, XO_BLAS_AXPY, XO_BLAS_AXPBY, XO_BLAS_SCAL, XO_BLAS_COPY,
    XO_BLAS_DOT, XO_BLAS_NRM2, XO_BLAS_KINDS
} xo__blas_kind;
typedef enum xo__blas_abi { XO_BLAS_F77, XO_BLAS_C, XO_BLAS_ABIS } xo__blas_abi;

typedef struct xo__blas_state {
    /* Work (gemm m*n*k, gemv and ger m*n, vectors n) under which no device but the CPU
     * can win, transfers included: such calls go straight to the CPU BLAS. 0 until the
     * first call sets it up; infinite where no device can ever win. */
    _Atomic double small[XO_BLAS_KINDS][2]; /* read relaxed: a plain load */
    _Atomic int counting; /* XO_LOG=summary (or info and more): count calls per routine and device */
    /* [kind][dtype][abi][0]: straight to the CPU BLAS; [1 + d]: placed on device d */
    _Atomic uint64_t calls[XO_BLAS_KINDS][2][XO_BLAS_ABIS][XO_MAX_DEVICES + 1];
} xo__blas_state;
extern XO_HIDDEN xo__blas_state xo__blas;

/* 1 when the call goes straight to the CPU BLAS (counted there). */
static inline int xo__blas_small(xo__blas_kind kind, xo_dtype dt, xo__blas_abi abi, double work)
{
    if (!(work < atomic_load_explicit(&xo__blas.small[kind][dt], memory_order_relaxed)))
        return 0;
    if (atomic_load_explicit(&xo__blas.counting, memory_order_relaxed))
        atomic_fetch_add_explicit(&xo__blas.calls[kind][dt][abi][0], 1, memory_order_relaxed);
    return 1;
}

/* The thresholds of a start without a context (built-in profiles, XO_DEVICE,
 * XO_BLAS_PLACE), set once at the first call (blas_init.c). */
XO_HIDDEN void xo__blas_first_call(void);
/* The drop-in's context, created on the first call over those thresholds (and the
 * thresholds of the devices found); NULL when it could not be created (every call then
 * goes to the CPU BLAS). */
XO_HIDDEN xo_context *xo__blas_context(void);

/* Up to three operands over the caller's memory for one placed call. */
typedef struct xo__blas_call {
    xo_context *ctx;
    int n;
    xo_buffer *buf[3];
} xo__blas_call;
/* For a call the first test did not send to the CPU BLAS: 1 when it goes there after
 * all (the thresholds of the first call, then of the devices found, say so, or there is no
 * context); else 0 with call->ctx set. */
static inline int xo__blas_unplaced(xo__blas_call *call, xo__blas_kind kind, xo_dtype dt, xo__blas_abi abi,
                                    double work)
{
    xo__blas_first_call();
    if (xo__blas_small(kind, dt, abi, work))
        return 1;
    call->ctx = xo__blas_context();
    return !call->ctx || xo__blas_small(kind, dt, abi, work);
}

/* Wrap `n` spans (pointer, bytes, ...); XO_OK or the wrap's failure. */
XO_HIDDEN xo_status xo__blas_wrap(xo__blas_call *call, int n, ...);
/* After the op returned `st`: make operand `out` current in the caller's memory, free the
 * wrappers, count the call. 1 when the call is complete; 0 when it failed (nothing was
 * written) and the caller hands it to the CPU BLAS. */
XO_HIDDEN int xo__blas_finish(xo__blas_call *call, xo_status st, int out, xo__blas_kind kind, xo_dtype dt,
                              xo__blas_abi abi);

/* Elements a strided vector of n > 0 spans, and a matrix of r x c (both > 0) stored
 * column by column with leading dimension ld. */
static inline size_t xo__blas_vspan(int n, int inc) { return (size_t)(n - 1) * (size_t)inc + 1; }
static inline size_t xo__blas_mspan(int r, int c, int ld) { return (size_t)(c - 1) * (size_t)ld + (size_t)r; }

/* LSAME on a transpose argument: XO_NO_TRANS, XO_TRANS ('T' and 'C' alike for real
 * data), or 0 when it is none of N, T, C in either case. */
static inline int xo__blas_trans_f77(const char *t)
{
    switch (*t) {
    case 'N': case 'n': return XO_NO_TRANS;
    case 'T': case 't': case 'C': case 'c': return XO_TRANS;
    default: return 0;
    }
}
/* The same for a CBLAS transpose (CblasConjTrans is CblasTrans for real data). */
static inline int xo__blas_trans_c(int t)
{
    return t == CblasNoTrans ? XO_NO_TRANS : (t == CblasTrans || t == CblasConjTrans) ? XO_TRANS : 0;
}
static inline int xo__blas_max1(int v) { return v > 1 ? v : 1; }

/* Report an illegal argument as reference BLAS does: xerbla_ with the 6-character
 * routine name (e.g. "SGEMM ") and INFO (blas_xerbla.c). */
XO_HIDDEN void xo__blas_xerbla(const char *name6, int info);
/* The same for CBLAS: cblas_xerbla with the routine's name and the INFO of the
 * column-major call it became (reference CBLAS's numbering, which the handler renumbers
 * for a row-major call, `row_major`, as the caller wrote it). */
XO_HIDDEN void xo__blas_cblas_xerbla(const char *rout, int info, int row_major);
/* The CPU BLAS's RowMajorStrg where it exports one (reference CBLAS), else NULL. */
extern XO_HIDDEN int *xo__blas_cpu_row_major;

#endif /* XO_BLAS_H */
