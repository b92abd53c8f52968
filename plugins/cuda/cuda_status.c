/* The one place where CUDA driver and cuBLAS codes become xo_status (STYLE.md item 5),
 * with details such as "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY". */
#include "cuda_internal.h"

#include <stddef.h>

/* Used when the driver has no cuGetErrorName (it always has since CUDA 6; this also
 * names codes when no driver is loaded at all, e.g. in tests). */
#define XO_CUDA_RESULT_MAP(X)                      \
    X(CUDA_SUCCESS, 0)                             \
    X(CUDA_ERROR_INVALID_VALUE, 1)                 \
    X(CUDA_ERROR_OUT_OF_MEMORY, 2)                 \
    X(CUDA_ERROR_NOT_INITIALIZED, 3)               \
    X(CUDA_ERROR_DEINITIALIZED, 4)                 \
    X(CUDA_ERROR_STUB_LIBRARY, 34)                 \
    X(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, 36)   \
    X(CUDA_ERROR_DEVICE_UNAVAILABLE, 46)           \
    X(CUDA_ERROR_NO_DEVICE, 100)                   \
    X(CUDA_ERROR_INVALID_DEVICE, 101)              \
    X(CUDA_ERROR_DEVICE_NOT_LICENSED, 102)         \
    X(CUDA_ERROR_INVALID_IMAGE, 200)               \
    X(CUDA_ERROR_INVALID_CONTEXT, 201)             \
    X(CUDA_ERROR_NO_BINARY_FOR_GPU, 209)           \
    X(CUDA_ERROR_ECC_UNCORRECTABLE, 214)           \
    X(CUDA_ERROR_INVALID_PTX, 218)                 \
    X(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, 221)      \
    X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222)     \
    X(CUDA_ERROR_JIT_COMPILATION_DISABLED, 223)    \
    X(CUDA_ERROR_INVALID_SOURCE, 300)              \
    X(CUDA_ERROR_FILE_NOT_FOUND, 301)              \
    X(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, 303)   \
    X(CUDA_ERROR_OPERATING_SYSTEM, 304)            \
    X(CUDA_ERROR_INVALID_HANDLE, 400)              \
    X(CUDA_ERROR_ILLEGAL_STATE, 401)               \
    X(CUDA_ERROR_NOT_FOUND, 500)                   \
    X(CUDA_ERROR_NOT_READY, 600)                   \
    X(CUDA_ERROR_ILLEGAL_ADDRESS, 700)             \
    X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701)     \
    X(CUDA_ERROR_LAUNCH_TIMEOUT, 702)              \
    X(CUDA_ERROR_CONTEXT_IS_DESTROYED, 709)        \
    X(CUDA_ERROR_ASSERT, 710)                      \
    X(CUDA_ERROR_HARDWARE_STACK_ERROR, 714)        \
    X(CUDA_ERROR_ILLEGAL_INSTRUCTION, 715)         \
    X(CUDA_ERROR_MISALIGNED_ADDRESS, 716)          \
    X(CUDA_ERROR_INVALID_ADDRESS_SPACE, 717)       \
    X(CUDA_ERROR_INVALID_PC, 718)                  \
    X(CUDA_ERROR_LAUNCH_FAILED, 719)               \
    X(CUDA_ERROR_NOT_PERMITTED, 800)               \
    X(CUDA_ERROR_NOT_SUPPORTED, 801)               \
    X(CUDA_ERROR_SYSTEM_NOT_READY, 802)            \
    X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803)      \
    X(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804) \
    X(CUDA_ERROR_TIMEOUT, 909)                     \
    X(CUDA_ERROR_UNKNOWN, 999)

#define XO_CUBLAS_STATUS_MAP(X)             \
    X(CUBLAS_STATUS_SUCCESS, 0)             \
    X(CUBLAS_STATUS_NOT_INITIALIZED, 1)     \
    X(CUBLAS_STATUS_ALLOC_FAILED, 3)        \
    X(CUBLAS_STATUS_INVALID_VALUE, 7)       \
    X(CUBLAS_STATUS_ARCH_MISMATCH, 8)       \
    X(CUBLAS_STATUS_MAPPING_ERROR, 11)      \
    X(CUBLAS_STATUS_EXECUTION_FAILED, 13)   \
    X(CUBLAS_STATUS_INTERNAL_ERROR, 14)     \
    X(CUBLAS_STATUS_NOT_SUPPORTED, 15)      \
    X(CUBLAS_STATUS_LICENSE_ERROR, 16)

typedef struct code_name {
    int code;
    const char *name;
} code_name;

static const code_name k_results[] = {
#define XO_ROW_(name, code) {code, #name},
    XO_CUDA_RESULT_MAP(XO_ROW_)
#undef XO_ROW_
};

static const code_name k_cublas[] = {
#define XO_ROW_(name, code) {code, #name},
    XO_CUBLAS_STATUS_MAP(XO_ROW_)
#undef XO_ROW_
};

static const char *lookup(const code_name *t, size_t n, int code, const char *unknown)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].code == code) return t[i].name;
    return unknown;
}

const char *xo__cuda_result_name(CUresult r)
{
    if (xo__cu.cuGetErrorName) {
        const char *name = NULL;
        if (xo__cu.cuGetErrorName(r, &name) == CUDA_SUCCESS && name) return name;
    }
    return lookup(k_results, sizeof k_results / sizeof k_results[0], r, "CUDA_ERROR_UNRECOGNIZED");
}

const char *xo__cublas_status_name(cublasStatus_t s)
{
    return lookup(k_cublas, sizeof k_cublas / sizeof k_cublas[0], s, "CUBLAS_STATUS_UNRECOGNIZED");
}

static xo_status cuda_status_of(CUresult r)
{
    return r == CUDA_ERROR_OUT_OF_MEMORY ? XO_ERR_OUT_OF_MEMORY : XO_ERR_DEVICE;
}

xo_status xo__cuda_check(const xo_plugin_host *host, CUresult r, const char *call)
{
    if (r == CUDA_SUCCESS) return XO_OK;
    xo_status s = cuda_status_of(r);
    if (host && host->set_error) return host->set_error(s, "%s: %s (%d)", call, xo__cuda_result_name(r), r);
    return s;
}

xo_status xo__cublas_check(const xo_plugin_host *host, cublasStatus_t st, const char *call)
{
    if (st == CUBLAS_STATUS_SUCCESS) return XO_OK;
    xo_status s = st == 3 /* CUBLAS_STATUS_ALLOC_FAILED */ ? XO_ERR_OUT_OF_MEMORY : XO_ERR_DEVICE;
    if (host && host->set_error) return host->set_error(s, "%s: %s (%d)", call, xo__cublas_status_name(st), st);
    return s;
}
