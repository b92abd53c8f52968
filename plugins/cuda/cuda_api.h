/* The slice of the CUDA driver API and cuBLAS that the CUDA plugin uses, declared here
 * so the plugin compiles without the toolkit headers, and reached at run time through
 * dlopen/dlsym (STYLE.md item 8): one binary runs with or without an NVIDIA driver.
 *
 * Types mirror cuda.h / cublas_api.h (CUDA 11 to 13, LP64): handles are pointers to
 * opaque structs, enums are passed as int, CUdeviceptr is a 64-bit integer. Each
 * function is listed once in an X-macro table, X(symbol, fallback, params), which
 * yields the function-pointer struct and the dlsym list together. `symbol` is the
 * versioned ABI name (cuMemAlloc_v2, ...) and also what error messages name;
 * `fallback` (or NULL) is an older name with the same signature tried when the driver
 * lacks `symbol`. */
#ifndef XO_CUDA_API_H
#define XO_CUDA_API_H

#include <stddef.h>

/* ---- CUDA driver API (libcuda.so.1) ------------------------------------------------ */

typedef int CUresult;
#define CUDA_SUCCESS 0
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_READY 600

typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef int CUstreamCaptureMode;
#define CU_STREAM_CAPTURE_MODE_THREAD_LOCAL 1

typedef int CUdevice_attribute;
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_DEVICE_ATTRIBUTE_INTEGRATED 18
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76

#define CU_STREAM_NON_BLOCKING 0x1u
#define CU_EVENT_DEFAULT 0x0u
#define CU_EVENT_DISABLE_TIMING 0x2u

/* Required: without any of these the driver counts as absent. */
#define XO_CU_REQUIRED_SYMBOLS(X)                                                          \
    X(cuInit, NULL, (unsigned int flags))                                                  \
    X(cuDriverGetVersion, NULL, (int *version))                                            \
    X(cuDeviceGetCount, NULL, (int *count))                                                \
    X(cuDeviceGet, NULL, (CUdevice * device, int ordinal))                                 \
    X(cuDeviceGetName, NULL, (char *name, int len, CUdevice dev))                          \
    X(cuDeviceGetAttribute, NULL, (int *value, CUdevice_attribute attrib, CUdevice dev))   \
    X(cuDeviceTotalMem_v2, NULL, (size_t * bytes, CUdevice dev))                           \
    X(cuDevicePrimaryCtxRetain, NULL, (CUcontext * ctx, CUdevice dev))                     \
    X(cuDevicePrimaryCtxRelease_v2, "cuDevicePrimaryCtxRelease", (CUdevice dev))           \
    X(cuCtxPushCurrent_v2, NULL, (CUcontext ctx))                                          \
    X(cuCtxPopCurrent_v2, NULL, (CUcontext * ctx))                                         \
    X(cuStreamCreate, NULL, (CUstream * stream, unsigned int flags))                       \
    X(cuStreamDestroy_v2, NULL, (CUstream stream))                                         \
    X(cuStreamSynchronize, NULL, (CUstream stream))                                        \
    X(cuEventCreate, NULL, (CUevent * event, unsigned int flags))                          \
    X(cuEventDestroy_v2, NULL, (CUevent event))                                            \
    X(cuEventRecord, NULL, (CUevent event, CUstream stream))                               \
    X(cuEventQuery, NULL, (CUevent event))                                                 \
    X(cuEventSynchronize, NULL, (CUevent event))                                           \
    X(cuEventElapsedTime_v2, "cuEventElapsedTime", (float *ms, CUevent start, CUevent end)) \
    X(cuMemAlloc_v2, NULL, (CUdeviceptr * dptr, size_t bytes))                             \
    X(cuMemFree_v2, NULL, (CUdeviceptr dptr))                                              \
    X(cuMemHostAlloc, NULL, (void **pp, size_t bytes, unsigned int flags))                 \
    X(cuMemFreeHost, NULL, (void *p))                                                      \
    X(cuMemcpyHtoDAsync_v2, NULL,                                                          \
      (CUdeviceptr dst, const void *src, size_t bytes, CUstream stream))                   \
    X(cuMemcpyDtoHAsync_v2, NULL,                                                          \
      (void *dst, CUdeviceptr src, size_t bytes, CUstream stream))                         \
    X(cuModuleLoadData, NULL, (CUmodule * module, const void *image))                      \
    X(cuModuleUnload, NULL, (CUmodule module))                                             \
    X(cuModuleGetFunction, NULL, (CUfunction * fn, CUmodule module, const char *name))     \
    X(cuLaunchKernel, NULL,                                                                \
      (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,   \
       unsigned int by, unsigned int bz, unsigned int shared_bytes, CUstream stream,       \
       void **params, void **extra))

/* Optional: used when present. The graph entries (CUDA 11.4+) come as a set: a driver
 * that lacks any of them offers no graphs (xo__cuda_graphs_loaded). */
#define XO_CU_OPTIONAL_SYMBOLS(X)                                                           \
    X(cuGetErrorName, NULL, (CUresult error, const char **name))                            \
    XO_CU_GRAPH_SYMBOLS(X)
#define XO_CU_GRAPH_SYMBOLS(X)                                                              \
    X(cuStreamBeginCapture_v2, NULL, (CUstream stream, CUstreamCaptureMode mode))           \
    X(cuStreamEndCapture, NULL, (CUstream stream, CUgraph * graph))                         \
    X(cuGraphInstantiateWithFlags, NULL, (CUgraphExec * exec, CUgraph graph, unsigned long long flags)) \
    X(cuGraphLaunch, NULL, (CUgraphExec exec, CUstream stream))                             \
    X(cuGraphExecDestroy, NULL, (CUgraphExec exec))                                         \
    X(cuGraphDestroy, NULL, (CUgraph graph))

typedef struct xo__cuda_driver_api {
#define XO_CU_FIELD_(sym, fallback, params) CUresult(*sym) params;
    XO_CU_REQUIRED_SYMBOLS(XO_CU_FIELD_)
    XO_CU_OPTIONAL_SYMBOLS(XO_CU_FIELD_)
#undef XO_CU_FIELD_
} xo__cuda_driver_api;

/* ---- cuBLAS (libcublas.so.13 / .12) ----------------------------------------------- */

typedef int cublasStatus_t;
#define CUBLAS_STATUS_SUCCESS 0
typedef struct cublasContext *cublasHandle_t;
typedef int cublasOperation_t;
#define CUBLAS_OP_N 0
#define CUBLAS_OP_T 1
typedef int cublasPointerMode_t;
#define CUBLAS_POINTER_MODE_HOST 0
#define CUBLAS_POINTER_MODE_DEVICE 1
/* libraryPropertyType, for cublasGetProperty */
#define XO_CUDA_MAJOR_VERSION 0
#define XO_CUDA_MINOR_VERSION 1
#define XO_CUDA_PATCH_LEVEL 2

#define XO_CUBLAS_GEMM_PARAMS(T)                                                        \
    (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, \
     const T *alpha, const T *a, int lda, const T *b, int ldb, const T *beta, T *c, int ldc)
#define XO_CUBLAS_GEMV_PARAMS(T)                                                   \
    (cublasHandle_t h, cublasOperation_t trans, int m, int n, const T *alpha,      \
     const T *a, int lda, const T *x, int incx, const T *beta, T *y, int incy)
#define XO_CUBLAS_AXPY_PARAMS(T) \
    (cublasHandle_t h, int n, const T *alpha, const T *x, int incx, T *y, int incy)
#define XO_CUBLAS_SCAL_PARAMS(T) (cublasHandle_t h, int n, const T *alpha, T *x, int incx)
#define XO_CUBLAS_DOT_PARAMS(T) \
    (cublasHandle_t h, int n, const T *x, int incx, const T *y, int incy, T *result)
#define XO_CUBLAS_NRM2_PARAMS(T) (cublasHandle_t h, int n, const T *x, int incx, T *result)
#define XO_CUBLAS_GER_PARAMS(T)                                                    \
    (cublasHandle_t h, int m, int n, const T *alpha, const T *x, int incx, const T *y, \
     int incy, T *a, int lda)

#define XO_CUBLAS_SYMBOLS(X)                                                            \
    X(cublasCreate_v2, NULL, (cublasHandle_t * h))                                      \
    X(cublasDestroy_v2, NULL, (cublasHandle_t h))                                       \
    X(cublasGetProperty, NULL, (int type, int *value))                                  \
    X(cublasSetStream_v2, NULL, (cublasHandle_t h, CUstream stream))                    \
    X(cublasSetPointerMode_v2, NULL, (cublasHandle_t h, cublasPointerMode_t mode))      \
    X(cublasSgemm_v2, NULL, XO_CUBLAS_GEMM_PARAMS(float))                               \
    X(cublasDgemm_v2, NULL, XO_CUBLAS_GEMM_PARAMS(double))                              \
    X(cublasSgemv_v2, NULL, XO_CUBLAS_GEMV_PARAMS(float))                               \
    X(cublasDgemv_v2, NULL, XO_CUBLAS_GEMV_PARAMS(double))                              \
    X(cublasSaxpy_v2, NULL, XO_CUBLAS_AXPY_PARAMS(float))                               \
    X(cublasDaxpy_v2, NULL, XO_CUBLAS_AXPY_PARAMS(double))                              \
    X(cublasSscal_v2, NULL, XO_CUBLAS_SCAL_PARAMS(float))                               \
    X(cublasDscal_v2, NULL, XO_CUBLAS_SCAL_PARAMS(double))                              \
    X(cublasSdot_v2, NULL, XO_CUBLAS_DOT_PARAMS(float))                                 \
    X(cublasDdot_v2, NULL, XO_CUBLAS_DOT_PARAMS(double))                                \
    X(cublasSnrm2_v2, NULL, XO_CUBLAS_NRM2_PARAMS(float))                               \
    X(cublasDnrm2_v2, NULL, XO_CUBLAS_NRM2_PARAMS(double))                              \
    X(cublasSger_v2, NULL, XO_CUBLAS_GER_PARAMS(float))                                 \
    X(cublasDger_v2, NULL, XO_CUBLAS_GER_PARAMS(double))

typedef struct xo__cublas_api {
#define XO_CUBLAS_FIELD_(sym, fallback, params) cublasStatus_t(*sym) params;
    XO_CUBLAS_SYMBOLS(XO_CUBLAS_FIELD_)
#undef XO_CUBLAS_FIELD_
} xo__cublas_api;

/* ---- NVRTC (libnvrtc.so.13 / .12; optional: chains then run on the interpreter) ------- */

typedef int nvrtcResult;
#define NVRTC_SUCCESS 0
typedef struct _nvrtcProgram *nvrtcProgram;

#define XO_NVRTC_SYMBOLS(X)                                                                 \
    X(nvrtcCreateProgram, NULL,                                                             \
      (nvrtcProgram * prog, const char *src, const char *name, int nheaders,                \
       const char *const *headers, const char *const *include_names))                       \
    X(nvrtcDestroyProgram, NULL, (nvrtcProgram * prog))                                     \
    X(nvrtcCompileProgram, NULL, (nvrtcProgram prog, int noptions, const char *const *options)) \
    X(nvrtcGetPTXSize, NULL, (nvrtcProgram prog, size_t * size))                            \
    X(nvrtcGetPTX, NULL, (nvrtcProgram prog, char *ptx))                                    \
    X(nvrtcGetProgramLogSize, NULL, (nvrtcProgram prog, size_t * size))                     \
    X(nvrtcGetProgramLog, NULL, (nvrtcProgram prog, char *log))

typedef struct xo__nvrtc_api {
#define XO_NVRTC_FIELD_(sym, fallback, params) nvrtcResult(*sym) params;
    XO_NVRTC_SYMBOLS(XO_NVRTC_FIELD_)
#undef XO_NVRTC_FIELD_
} xo__nvrtc_api;

/* ---- loading (cuda_loader.c) --------------------------------------------------------- */

/* Filled once per process by xo__cuda_load(); all NULL until then or when absent. */
extern xo__cuda_driver_api xo__cu;
extern xo__cublas_api xo__cublas;

typedef struct xo__cuda_libs {
    int driver;              /* libcuda loaded with every required symbol */
    int cublas;              /* libcublas loaded with every symbol */
    const char *driver_note; /* which library was loaded, or why none was */
    const char *cublas_note;
} xo__cuda_libs;

/* dlopen libcuda.so.1 and libcublas.so.{13,12,} once per process (thread-safe) and
 * fill xo__cu / xo__cublas. The libraries stay loaded for the life of the process. */
const xo__cuda_libs *xo__cuda_load(void);
/* 1 if the loaded driver has every XO_CU_GRAPH_SYMBOLS entry. */
int xo__cuda_graphs_loaded(void);
/* dlopen NVRTC once per process, on first need (thread-safe); NULL when it is absent or
 * lacks a symbol (*note says which). */
const xo__nvrtc_api *xo__cuda_nvrtc(const char **note);

/* ---- native codes (cuda_status.c) ----------------------------------------------------- */

/* "CUDA_ERROR_OUT_OF_MEMORY" (cuGetErrorName when loaded, else a built-in table, else
 * "CUDA_ERROR_UNRECOGNIZED"); never NULL. */
const char *xo__cuda_result_name(CUresult r);
/* "CUBLAS_STATUS_ALLOC_FAILED", ...; never NULL. */
const char *xo__cublas_status_name(cublasStatus_t s);

#endif /* XO_CUDA_API_H */
