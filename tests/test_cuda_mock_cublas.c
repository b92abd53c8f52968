/* A stand-in libcublas.so.13 for testing the CUDA plugin without a GPU (see
 * test_cuda_mock_driver.c): plain column-major reference loops over host memory, with
 * cuBLAS's own argument checks (leading dimensions against the column-major shapes),
 * so a wrong row-major mapping in the plugin fails the conformance suite. The pointer
 * mode is enforced as a real GPU needs it: scalars alpha/beta read on the host (HOST),
 * dot/nrm2 results written to device memory (DEVICE). */
#include "cuda_api.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

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

#define MOCK_BLAS(T, P)                                                                           \
    cublasStatus_t cublas##P##gemm_v2 XO_CUBLAS_GEMM_PARAMS(T)                                    \
    {                                                                                             \
        int rows_a = ta == CUBLAS_OP_N ? m : k, rows_b = tb == CUBLAS_OP_N ? k : n;               \
        if (!h->stream || h->mode != CUBLAS_POINTER_MODE_HOST || m < 0 || n < 0 || k < 0 ||       \
            lda < max1(rows_a) || ldb < max1(rows_b) || ldc < max1(m))                            \
            return CUBLAS_STATUS_INVALID_VALUE;                                                   \
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
        for (int i = 0; i < n; i++) y[(size_t)i * incy] += *alpha * x[(size_t)i * incx];          \
        return CUBLAS_STATUS_SUCCESS;                                                             \
    }                                                                                             \
    cublasStatus_t cublas##P##scal_v2 XO_CUBLAS_SCAL_PARAMS(T)                                    \
    {                                                                                             \
        if (!h->stream || h->mode != CUBLAS_POINTER_MODE_HOST || incx < 1)                        \
            return CUBLAS_STATUS_INVALID_VALUE;                                                   \
        for (int i = 0; i < n; i++) x[(size_t)i * incx] *= *alpha;                                \
        return CUBLAS_STATUS_SUCCESS;                                                             \
    }                                                                                             \
    cublasStatus_t cublas##P##dot_v2 XO_CUBLAS_DOT_PARAMS(T)                                      \
    {                                                                                             \
        if (!h->stream || h->mode != CUBLAS_POINTER_MODE_DEVICE || incx < 1 || incy < 1)          \
            return CUBLAS_STATUS_INVALID_VALUE;                                                   \
        double s = 0;                                                                             \
        for (int i = 0; i < n; i++) s += (double)x[(size_t)i * incx] * y[(size_t)i * incy];       \
        *result = (T)s;                                                                           \
        return CUBLAS_STATUS_SUCCESS;                                                             \
    }                                                                                             \
    cublasStatus_t cublas##P##nrm2_v2 XO_CUBLAS_NRM2_PARAMS(T)                                    \
    {                                                                                             \
        if (!h->stream || h->mode != CUBLAS_POINTER_MODE_DEVICE || incx < 1)                      \
            return CUBLAS_STATUS_INVALID_VALUE;                                                   \
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
        if (*alpha == 0) return CUBLAS_STATUS_SUCCESS; /* x and y not read, as in BLAS */         \
        for (int j = 0; j < n; j++)                                                               \
            for (int i = 0; i < m; i++)                                                           \
                a[i + (size_t)j * lda] += *alpha * x[(size_t)i * incx] * y[(size_t)j * incy];     \
        return CUBLAS_STATUS_SUCCESS;                                                             \
    }

MOCK_BLAS(float, S)
MOCK_BLAS(double, D)
