/* A stand-in libcublas.so.13 for testing the CUDA plugin without a GPU (see
 * test_cuda_mock_driver.c): plain column-major reference loops over host memory, with
 * cuBLAS's own argument checks (leading dimensions against the column-major shapes),
 * so a wrong row-major mapping in the plugin fails the conformance suite. The pointer
 * mode is enforced as a real GPU needs it: scalars alpha/beta read on the host (HOST),
 * dot/nrm2 results written to device memory (DEVICE).
 *
 * On a stream the stand-in driver is capturing (CUDA graphs), a call is not run but
 * handed to the driver (xo_mock_cuda_defer) with a copy of its arguments, host scalars
 * by value as a real cuBLAS fixes them into its kernels, and replayed at each launch. */
#include "cuda_api.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define XO_DECL_(sym, fallback, params) cublasStatus_t sym params;
XO_CUBLAS_SYMBOLS(XO_DECL_)
#undef XO_DECL_

#define CUBLAS_STATUS_NOT_INITIALIZED 1
#define CUBLAS_STATUS_INVALID_VALUE 7

struct cublasContext {
    CUstream stream;
    int mode;
};

cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    *h = calloc(1, sizeof **h);
    return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t h) { free(h); return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasGetProperty(int type, int *value)
{
    *value = type == 0 ? 13 : 0;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, CUstream stream) { h->stream = stream; return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t mode)
{
    if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE) return CUBLAS_STATUS_INVALID_VALUE;
    h->mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

static int max1(int v) { return v > 1 ? v : 1; }

/* ---- stream capture: deferral to the stand-in driver ---------------------------------- */

typedef int (*defer_fn)(CUstream s, void (*fn)(void *arg), const void *arg, size_t size);
static defer_fn g_defer;
static pthread_once_t g_defer_once = PTHREAD_ONCE_INIT;
static _Thread_local int tl_replaying; /* a graph launch runs a recorded call: run it */

static void find_defer(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD); /* the driver the plugin loaded */
    void *sym = lib ? dlsym(lib, "xo_mock_cuda_defer") : NULL;
    memcpy(&g_defer, &sym, sizeof g_defer);
}

/* 1 if the driver recorded the call (the stream is capturing). */
static int deferred(cublasHandle_t h, void (*fn)(void *arg), const void *arg, size_t size)
{
    if (tl_replaying) return 0;
    pthread_once(&g_defer_once, find_defer);
    return g_defer && g_defer(h->stream, fn, arg, size);
}
#define DEFER(P, NAME, ...)                                                                 \
    do {                                                                                    \
        NAME##_args_##P args_ = {__VA_ARGS__};                                              \
        if (deferred(h, replay_##NAME##_##P, &args_, sizeof args_)) return CUBLAS_STATUS_SUCCESS; \
    } while (0)
#define REPLAY(P, NAME, CALL)                                                               \
    static void replay_##NAME##_##P(void *v)                                                \
    {                                                                                       \
        NAME##_args_##P *g = v;                                                             \
        tl_replaying = 1;                                                                   \
        (void)CALL;                                                                         \
        tl_replaying = 0;                                                                   \
    }

/* Each call's arguments, scalars by value. */
#define MOCK_ARGS(T, P)                                                                           \
    typedef struct { cublasHandle_t h; int ta, tb, m, n, k; T alpha; const T *a; int lda; const T *b; \
                     int ldb; T beta; T *c; int ldc; } gemm_args_##P;                             \
    REPLAY(P, gemm, cublas##P##gemm_v2(g->h, g->ta, g->tb, g->m, g->n, g->k, &g->alpha, g->a, g->lda, \
                                       g->b, g->ldb, &g->beta, g->c, g->ldc))                    \
    typedef struct { cublasHandle_t h; int trans, m, n; T alpha; const T *a; int lda; const T *x;  \
                     int incx; T beta; T *y; int incy; } gemv_args_##P;                           \
    REPLAY(P, gemv, cublas##P##gemv_v2(g->h, g->trans, g->m, g->n, &g->alpha, g->a, g->lda, g->x,  \
                                       g->incx, &g->beta, g->y, g->incy))                        \
    typedef struct { cublasHandle_t h; int n; T alpha; const T *x; int incx; T *y; int incy; } axpy_args_##P; \
    REPLAY(P, axpy, cublas##P##axpy_v2(g->h, g->n, &g->alpha, g->x, g->incx, g->y, g->incy))      \
    typedef struct { cublasHandle_t h; int n; T alpha; T *x; int incx; } scal_args_##P;           \
    REPLAY(P, scal, cublas##P##scal_v2(g->h, g->n, &g->alpha, g->x, g->incx))                     \
    typedef struct { cublasHandle_t h; int n; const T *x; int incx; const T *y; int incy; T *result; } dot_args_##P; \
    REPLAY(P, dot, cublas##P##dot_v2(g->h, g->n, g->x, g->incx, g->y, g->incy, g->result))        \
    typedef struct { cublasHandle_t h; int n; const T *x; int incx; T *result; } nrm2_args_##P;    \
    REPLAY(P, nrm2, cublas##P##nrm2_v2(g->h, g->n, g->x, g->incx, g->result))                     \
    typedef struct { cublasHandle_t h; int m, n; T alpha; const T *x; int incx; const T *y; int incy; \
                     T *a; int lda; } ger_args_##P;                                               \
    REPLAY(P, ger, cublas##P##ger_v2(g->h, g->m, g->n, &g->alpha, g->x, g->incx, g->y, g->incy, g->a, g->lda))
MOCK_ARGS(float, S)
MOCK_ARGS(double, D)

#define MOCK_BLAS(T, P)                                                                           \
    cublasStatus_t cublas##P##gemm_v2 XO_CUBLAS_GEMM_PARAMS(T)                                    \
    {                                                                                             \
        int rows_a = ta == CUBLAS_OP_N ? m : k, rows_b = tb == CUBLAS_OP_N ? k : n;               \
        if (!h->stream || h->mode != CUBLAS_POINTER_MODE_HOST || m < 0 || n < 0 || k < 0 ||       \
            lda < max1(rows_a) || ldb < max1(rows_b) || ldc < max1(m))                            \
            return CUBLAS_STATUS_INVALID_VALUE;                                                   \
        DEFER(P, gemm, h, ta, tb, m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc);               \
        for (int j = 0; j < n; j++)                                                               \
            for (int i = 0; i < m; i++) {                                                         \
                double s = 0;                                                                     \
                for (int l = 0; l < k; l++) {                                                     \
                    T av = ta == CUBLAS_OP_N ? a[i + (size_t)l * lda] : a[l + (size_t)i * lda];   \
                    T bv = tb == CUBLAS_OP_N ? b[l + (size_t)j * ldb] : b[j + (size_t)l * ldb];   \
                    s += (double)av * bv;                                                         \
                }                                                                                 \
                T *cij = &c[i + (size_t)j * ldc];                                                 \
                *cij = (T)(*alpha * s + (*beta == 0 ? 0 : *beta * (double)*cij));                 \
            }                                                                                     \
        return CUBLAS_STATUS_SUCCESS;                                                             \
    }                                                                                             \
    cublasStatus_t cublas##P##gemv_v2 XO_CUBLAS_GEMV_PARAMS(T)                                    \
    {                                                                                             \
        if (!h->stream || h->mode != CUBLAS_POINTER_MODE_HOST || m < 0 || n < 0 ||                \
            lda < max1(m) || incx < 1 || incy < 1)                                                \
            return CUBLAS_STATUS_INVALID_VALUE;                                                   \
        DEFER(P, gemv, h, trans, m, n, *alpha, a, lda, x, incx, *beta, y, incy);                 \
        int ylen = trans == CUBLAS_OP_N ? m : n, xlen = trans == CUBLAS_OP_N ? n : m;             \
        for (int i = 0; i < ylen; i++) {                                                          \
            double s = 0;                                                                         \
            for (int j = 0; j < xlen; j++) {                                                      \
                T av = trans == CUBLAS_OP_N ? a[i + (size_t)j * lda] : a[j + (size_t)i * lda];    \
                s += (double)av * x[(size_t)j * incx];                                            \
            }                                                                                     \
            T *yi = &y[(size_t)i * incy];                                                         \
            *yi = (T)(*alpha * s + (*beta == 0 ? 0 : *beta * (double)*yi));                       \
        }                                                                                         \
        return CUBLAS_STATUS_SUCCESS;                                                             \
    }                                                                                             \
    cublasStatus_t cublas##P##axpy_v2 XO_CUBLAS_AXPY_PARAMS(T)                                    \
    {                                                                                             \
        if (!h->stream || h->mode != CUBLAS_POINTER_MODE_HOST || incx < 1 || incy < 1)            \
            return CUBLAS_STATUS_INVALID_VALUE;                                                   \
        DEFER(P, axpy, h, n, *alpha, x, incx, y, incy);                                           \
        for (int i = 0; i < n; i++) y[(size_t)i * incy] += *alpha * x[(size_t)i * incx];          \
        return CUBLAS_STATUS_SUCCESS;                                                             \
    }                                                                                             \
    cublasStatus_t cublas##P##scal_v2 XO_CUBLAS_SCAL_PARAMS(T)                                    \
    {                                                                                             \
        if (!h->stream || h->mode != CUBLAS_POINTER_MODE_HOST || incx < 1)                        \
            return CUBLAS_STATUS_INVALID_VALUE;                                                   \
        DEFER(P, scal, h, n, *alpha, x, incx);                                                    \
        for (int i = 0; i < n; i++) x[(size_t)i * incx] *= *alpha;                                \
        return CUBLAS_STATUS_SUCCESS;                                                             \
    }                                                                                             \
    cublasStatus_t cublas##P##dot_v2 XO_CUBLAS_DOT_PARAMS(T)                                      \
    {                                                                                             \
        if (!h->stream || h->mode != CUBLAS_POINTER_MODE_DEVICE || incx < 1 || incy < 1)          \
            return CUBLAS_STATUS_INVALID_VALUE;                                                   \
        DEFER(P, dot, h, n, x, incx, y, incy, result);                                            \
        double s = 0;                                                                             \
        for (int i = 0; i < n; i++) s += (double)x[(size_t)i * incx] * y[(size_t)i * incy];       \
        *result = (T)s;                                                                           \
        return CUBLAS_STATUS_SUCCESS;                                                             \
    }                                                                                             \
    cublasStatus_t cublas##P##nrm2_v2 XO_CUBLAS_NRM2_PARAMS(T)                                    \
    {                                                                                             \
        if (!h->stream || h->mode != CUBLAS_POINTER_MODE_DEVICE || incx < 1)                      \
            return CUBLAS_STATUS_INVALID_VALUE;                                                   \
        DEFER(P, nrm2, h, n, x, incx, result);                                                    \
        double s = 0;                                                                             \
        for (int i = 0; i < n; i++) s += (double)x[(size_t)i * incx] * x[(size_t)i * incx];       \
        *result = (T)sqrt(s);                                                                     \
        return CUBLAS_STATUS_SUCCESS;                                                             \
    }                                                                                             \
    cublasStatus_t cublas##P##ger_v2 XO_CUBLAS_GER_PARAMS(T)                                      \
    {                                                                                             \
        if (!h->stream || h->mode != CUBLAS_POINTER_MODE_HOST || m < 0 || n < 0 || incx < 1 ||    \
            incy < 1 || lda < max1(m))                                                            \
            return CUBLAS_STATUS_INVALID_VALUE;                                                   \
        DEFER(P, ger, h, m, n, *alpha, x, incx, y, incy, a, lda);                                 \
        if (*alpha == 0) return CUBLAS_STATUS_SUCCESS; /* x and y not read, as in BLAS */         \
        for (int j = 0; j < n; j++)                                                               \
            for (int i = 0; i < m; i++)                                                           \
                a[i + (size_t)j * lda] += *alpha * x[(size_t)i * incx] * y[(size_t)j * incy];     \
        return CUBLAS_STATUS_SUCCESS;                                                             \
    }

MOCK_BLAS(float, S)
MOCK_BLAS(double, D)
