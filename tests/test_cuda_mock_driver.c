/* A stand-in libcuda.so.1 for testing the CUDA plugin's logic on a machine without a
 * GPU (tests/cuda.cmake builds it into its own directory and puts that directory on
 * LD_LIBRARY_PATH for `conformance_cuda_mock`). It is NOT a CUDA implementation:
 * "device" memory is host memory, every stream runs synchronously, and the kernels of
 * plugins/cuda/kernels/xo_cuda_kernels.cu are re-implemented in C, including their
 * grid-stride structure and which operands they leave unread (alpha/beta == 0), so the
 * plugin's launch parameters (argument order and types, grid sizes, the two-pass
 * reduction) are exercised for real.
 * It also checks what a real driver would reject: the module image must be the
 * embedded fatbin, launches need a block of 256, calls need a current context.
 *
 * Stream capture (CUDA graphs, unless built with XO_MOCK_NO_GRAPHS: then the driver has
 * no graph entries at all): a launch on a capturing stream is recorded with a copy of its
 * parameters (sizes from each kernel's signature below) instead of run; the stand-in
 * cuBLAS defers its calls the same way (xo_mock_cuda_defer); a copy, synchronize or event
 * record on a capturing stream invalidates the capture, as on a real driver.
 * cuGraphLaunch replays the recording. xo_mock_cuda_graph_counts tells tests how many
 * captures, instantiations and launches there were; XO_MOCK_CUDA_GRAPH_FAIL=instantiate
 * or =launch makes those calls fail. */
#include "cuda_api.h"
#include "cuda_kernels.h"

#include <crossover.h>
#include "xo_test_formulas.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define XO_DECL_(sym, fallback, params) CUresult sym params;
XO_CU_REQUIRED_SYMBOLS(XO_DECL_)
XO_CU_OPTIONAL_SYMBOLS(XO_DECL_)
#undef XO_DECL_

#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_INVALID_IMAGE 200
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_NOT_FOUND 500
#define CUDA_ERROR_ILLEGAL_STATE 401
#define CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED 900
#define CUDA_ERROR_STREAM_CAPTURE_INVALIDATED 901

struct CUctx_st { int dummy; };
struct CUgraph_st;
struct CUstream_st {
    int capturing, invalidated; /* stream capture */
    struct CUgraph_st *rec;
};
struct CUevent_st { double ms; };
struct CUfunc_st {
    const char *name;
    int generated; /* from a PTX module (NVRTC) */
};
struct CUmod_st {
    int ptx;                     /* a PTX module: its chain kernels, run as the interpreter */
    struct CUfunc_st chain[2];   /* xo_chain_f32, xo_chain_f64 where the PTX has them */
};

static struct CUctx_st g_ctx;
static _Thread_local int tl_depth; /* contexts pushed on this thread */
static struct CUmod_st g_module;
static struct CUfunc_st g_funcs[] = { /* every kernel of the plugin's list, both precisions */
#define MOCK_FUNC_(ID, name) {"xo_" #name "_f32", 0}, {"xo_" #name "_f64", 0},
    XO_CUDA_KERNEL_MAP(MOCK_FUNC_)
#undef MOCK_FUNC_
};

#define NEED_CTX() \
    do { if (tl_depth <= 0) return CUDA_ERROR_INVALID_CONTEXT; } while (0)

CUresult cuInit(unsigned int flags) { return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
CUresult cuDriverGetVersion(int *version) { *version = 13000; return CUDA_SUCCESS; }
CUresult cuDeviceGetCount(int *count) { *count = 1; return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    if (ordinal != 0) return CUDA_ERROR_INVALID_VALUE;
    *device = 0;
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    (void)dev;
    strncpy(name, "Mock CUDA Device", (size_t)len);
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attrib, CUdevice dev)
{
    (void)dev;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 4; break;
    default: *value = 0;
    }
    return CUDA_SUCCESS;
}
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) { (void)dev; *bytes = (size_t)1 << 30; return CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev) { (void)dev; *ctx = &g_ctx; return CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) { (void)dev; return CUDA_SUCCESS; }
CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    if (ctx != &g_ctx) return CUDA_ERROR_INVALID_CONTEXT;
    tl_depth++;
    return CUDA_SUCCESS;
}
CUresult cuCtxPopCurrent_v2(CUcontext *ctx)
{
    if (tl_depth <= 0) return CUDA_ERROR_INVALID_CONTEXT;
    tl_depth--;
    if (ctx) *ctx = &g_ctx;
    return CUDA_SUCCESS;
}
CUresult cuStreamCreate(CUstream *stream, unsigned int flags)
{
    (void)flags;
    NEED_CTX();
    *stream = calloc(1, sizeof **stream);
    return CUDA_SUCCESS;
}
static void graph_free_nodes(struct CUgraph_st *g);
CUresult cuStreamDestroy_v2(CUstream stream)
{
    if (stream && stream->rec) {
        graph_free_nodes(stream->rec);
        free(stream->rec);
    }
    free(stream);
    return CUDA_SUCCESS;
}
/* A call a capturing stream does not take: the capture is invalidated (1), as a real
 * driver does. */
static int capture_breaks(CUstream stream)
{
    if (!stream || !stream->capturing) return 0;
    stream->invalidated = 1;
    return 1;
}
CUresult cuStreamSynchronize(CUstream stream)
{
    NEED_CTX();
    return capture_breaks(stream) ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}
CUresult cuEventCreate(CUevent *event, unsigned int flags)
{
    (void)flags;
    NEED_CTX();
    *event = calloc(1, sizeof **event);
    return CUDA_SUCCESS;
}
CUresult cuEventDestroy_v2(CUevent event) { free(event); return CUDA_SUCCESS; }
CUresult cuEventRecord(CUevent event, CUstream stream)
{
    if (capture_breaks(stream)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    event->ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
    return CUDA_SUCCESS;
}
CUresult cuEventQuery(CUevent event) { (void)event; return CUDA_SUCCESS; }
CUresult cuEventSynchronize(CUevent event) { (void)event; return CUDA_SUCCESS; }
CUresult cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end)
{
    *ms = (float)(end->ms - start->ms);
    return CUDA_SUCCESS;
}
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
    NEED_CTX();
    void *p = calloc(1, bytes);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    *dptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}
CUresult cuMemFree_v2(CUdeviceptr dptr) { NEED_CTX(); free((void *)(uintptr_t)dptr); return CUDA_SUCCESS; }
CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags)
{
    (void)flags;
    NEED_CTX();
    *pp = malloc(bytes);
    return *pp ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult cuMemFreeHost(void *p) { free(p); return CUDA_SUCCESS; }
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream)
{
    NEED_CTX();
    if (capture_breaks(stream)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    memcpy((void *)(uintptr_t)dst, src, bytes);
    return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
    NEED_CTX();
    if (capture_breaks(stream)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return CUDA_SUCCESS;
}
/* Launches of kernels from PTX modules (NVRTC's chain kernels), for tests. */
static _Atomic long g_generated_launches;
long xo_mock_cuda_generated_launches(void);
long xo_mock_cuda_generated_launches(void) { return g_generated_launches; }

/* The embedded fatbin, or PTX text (NVRTC's output) whose chain kernels are taken to
 * compute what the interpreter computes (same name, same parameter): the stand-in cannot
 * run generated code, but the plugin's compile, load, cache and launch are exercised. */
CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    NEED_CTX();
    const unsigned char *p = image;
    if (p && p[0] == '/' && p[1] == '/' && strstr(image, ".entry")) {
        struct CUmod_st *m = calloc(1, sizeof *m);
        if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
        m->ptx = 1;
        if (strstr(image, ".entry xo_chain_f32(")) m->chain[0] = (struct CUfunc_st){"xo_chain_f32", 1};
        if (strstr(image, ".entry xo_chain_f64(")) m->chain[1] = (struct CUfunc_st){"xo_chain_f64", 1};
        *module = m;
        return CUDA_SUCCESS;
    }
    if (!p || p[0] != 0x50 || p[1] != 0xED || p[2] != 0x55 || p[3] != 0xBA) return CUDA_ERROR_INVALID_IMAGE;
    *module = &g_module;
    return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule module)
{
    if (module && module->ptx) free(module);
    return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction *fn, CUmodule module, const char *name)
{
    if (module && module->ptx) {
        for (int i = 0; i < 2; i++)
            if (module->chain[i].name && strcmp(module->chain[i].name, name) == 0) {
                *fn = &module->chain[i];
                return CUDA_SUCCESS;
            }
        return CUDA_ERROR_NOT_FOUND;
    }
    if (module != &g_module) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof g_funcs / sizeof g_funcs[0]; i++)
        if (strcmp(g_funcs[i].name, name) == 0) {
            *fn = &g_funcs[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}
/* NVRTC opens libcuda.so.1 itself and asks it for its private export tables (a real
 * driver's business): the stand-in has none, which NVRTC takes as no driver. */
CUresult cuGetExportTable(const void **table, const void *id);
CUresult cuGetExportTable(const void **table, const void *id)
{
    (void)id;
    if (table) *table = NULL;
    return 801; /* CUDA_ERROR_NOT_SUPPORTED */
}

/* Knows no names beyond success, so the plugin's own table is used (a real driver
 * also answers CUDA_ERROR_INVALID_VALUE for codes it does not know). */
CUresult cuGetErrorName(CUresult error, const char **name)
{
    *name = error == 0 ? "CUDA_SUCCESS" : NULL;
    return error == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- the kernels, with their grid-stride loops as written in the .cu file --------------- */

#define BLOCK 256ull
typedef unsigned long long u64;

/* The element-wise formulas of every xo_unary_op / xo_binary_op, in T's precision
 * (xo_test_formulas.h). */
#define MOCK_UNARY_CASE_(NAME, ...) case XO_##NAME: return XO_F_##NAME(v);
#define MOCK_BINARY_CASE_(NAME) case XO_##NAME: return XO_F_##NAME(a, b);

/* nrm2's constants (Blue's algorithm, as in the .cu file): TSML, TBIG, SSML, SBIG. */
#define MOCK_KERNELS(T, S, TSML, TBIG, SSML, SBIG)                                            \
    static void nrm2_add_##S(T v, T *s)                                                       \
    {                                                                                         \
        T ax = (T)fabs(v);                                                                    \
        if (ax > TBIG) s[2] += (ax * SBIG) * (ax * SBIG);                                     \
        else if (ax < TSML) s[0] += (ax * SSML) * (ax * SSML);                                \
        else s[1] += ax * ax;                                                                 \
    }                                                                                         \
    static T nrm2_finish_##S(T sml, T med, T big)                                             \
    {                                                                                         \
        if (big > 0) {                                                                        \
            if (med > 0 || med != med) big += (med * SBIG) * SBIG;                            \
            return (T)sqrt(big) / SBIG;                                                       \
        }                                                                                     \
        if (sml > 0) {                                                                        \
            if (!(med > 0 || med != med)) return (T)sqrt(sml) / SSML;                         \
            T ym = (T)sqrt(med), ys = (T)sqrt(sml) / SSML;                                    \
            T ymin = ys > ym ? ym : ys, ymax = ys > ym ? ys : ym;                             \
            return ymax * (T)sqrt(1 + (ymin / ymax) * (ymin / ymax));                         \
        }                                                                                     \
        return (T)sqrt(med);                                                                  \
    }                                                                                         \
    static T unary_##S(int op, T v) /* xo_formulas.h, as the .cu file */                    \
    {                                                                                         \
        typedef T xo_real __attribute__((unused));                                            \
        switch (op) {                                                                         \
            XO_UNARY_OP_MAP(MOCK_UNARY_CASE_)                                                 \
        default: return v;                                                                    \
        }                                                                                     \
    }                                                                                         \
    static T binary_##S(int op, T a, T b)                                                     \
    {                                                                                         \
        switch (op) {                                                                         \
            XO_BINARY_OP_MAP(MOCK_BINARY_CASE_)                                               \
        default: return a;                                                                    \
        }                                                                                     \
    }                                                                                         \
    static int launch_##S(const char *kind, u64 gx, u64 gy, void **p) /* 0: unknown kernel */  \
    {                                                                                         \
        const u64 stride = gx * BLOCK;                                                        \
        if (strcmp(kind, "unary") == 0) {                                                     \
            const T *x = (const T *)(uintptr_t)*(CUdeviceptr *)p[0];                          \
            T *y = (T *)(uintptr_t)*(CUdeviceptr *)p[1];                                      \
            u64 n = *(u64 *)p[2];                                                             \
            int op = *(int *)p[3];                                                            \
            for (u64 t = 0; t < stride; t++)                                                  \
                for (u64 i = t; i < n; i += stride) y[i] = unary_##S(op, x[i]);               \
        } else if (strcmp(kind, "binary") == 0) {                                             \
            const T *a = (const T *)(uintptr_t)*(CUdeviceptr *)p[0];                          \
            const T *b = (const T *)(uintptr_t)*(CUdeviceptr *)p[1];                          \
            T *c = (T *)(uintptr_t)*(CUdeviceptr *)p[2];                                      \
            u64 n = *(u64 *)p[3];                                                             \
            int op = *(int *)p[4];                                                            \
            for (u64 t = 0; t < stride; t++)                                                  \
                for (u64 i = t; i < n; i += stride) c[i] = binary_##S(op, a[i], b[i]);        \
        } else if (strcmp(kind, "bias") == 0) {                                               \
            T *a = (T *)(uintptr_t)*(CUdeviceptr *)p[0];                                      \
            const T *bias = (const T *)(uintptr_t)*(CUdeviceptr *)p[1];                       \
            u64 rows = *(u64 *)p[2], cols = *(u64 *)p[3], lda = *(u64 *)p[4];                 \
            for (u64 by = 0; by < gy; by++)                                                   \
                for (u64 r = by; r < rows; r += gy)                                           \
                    for (u64 t = 0; t < stride; t++)                                          \
                        for (u64 c = t; c < cols; c += stride) a[r * lda + c] += bias[c];     \
        } else if (strcmp(kind, "scale") == 0) {                                              \
            T *a = (T *)(uintptr_t)*(CUdeviceptr *)p[0];                                      \
            u64 rows = *(u64 *)p[1], cols = *(u64 *)p[2], lda = *(u64 *)p[3];                 \
            T f = *(T *)p[4];                                                                 \
            for (u64 by = 0; by < gy; by++)                                                   \
                for (u64 r = by; r < rows; r += gy)                                           \
                    for (u64 t = 0; t < stride; t++)                                          \
                        for (u64 c = t; c < cols; c += stride)                                \
                            a[r * lda + c] = f == 0 ? 0 : f * a[r * lda + c];                 \
        } else if (strcmp(kind, "nrm2") == 0) { /* triples per block, or the norm */         \
            const T *x = (const T *)(uintptr_t)*(CUdeviceptr *)p[0];                          \
            u64 n = *(u64 *)p[1], inc = *(u64 *)p[2];                                         \
            T *out = (T *)(uintptr_t)*(CUdeviceptr *)p[3];                                    \
            int stage = *(int *)p[4];                                                         \
            for (u64 b = 0; b < gx; b++) {                                                    \
                T s[3] = {0, 0, 0};                                                           \
                for (u64 t = 0; t < BLOCK; t++)                                               \
                    for (u64 i = b * BLOCK + t; i < n; i += stride)                           \
                        for (int j = 0; j < 3 && stage; j++) s[j] += x[3 * i + j];            \
                for (u64 t = 0; t < BLOCK && !stage; t++)                                     \
                    for (u64 i = b * BLOCK + t; i < n; i += stride) nrm2_add_##S(x[i * inc], s); \
                if (gx == 1) out[0] = nrm2_finish_##S(s[0], s[1], s[2]);                      \
                else for (int j = 0; j < 3; j++) out[3 * b + j] = s[j];                       \
            }                                                                                 \
        } else if (strcmp(kind, "reduce") == 0) { /* out[block] = this block's share */       \
            const T *x = (const T *)(uintptr_t)*(CUdeviceptr *)p[0];                          \
            u64 n = *(u64 *)p[1];                                                             \
            int op = *(int *)p[2];                                                            \
            T *out = (T *)(uintptr_t)*(CUdeviceptr *)p[3];                                    \
            for (u64 b = 0; b < gx; b++) {                                                    \
                T acc = op == 0 ? 0 : x[0];                                                   \
                for (u64 t = 0; t < BLOCK; t++)                                               \
                    for (u64 i = b * BLOCK + t; i < n; i += stride)                           \
                        acc = op == 0 ? acc + x[i] : XO_F_MAX(x[i], acc);                     \
                out[b] = acc;                                                                 \
            }                                                                                 \
        } else {                                                                              \
            return 0;                                                                         \
        }                                                                                     \
        return 1;                                                                             \
    }

MOCK_KERNELS(float, f32, 0x1p-63f, 0x1p52f, 0x1p75f, 0x1p-76f)
MOCK_KERNELS(double, f64, 0x1p-511, 0x1p486, 0x1p537, 0x1p-538)

/* xo_chain: element i of every step, as the .cu file's interpreter (cuda_kernels.h). */
#define CHAIN_IN(T, s, j, r, i) ((s)->from[j] >= 0 ? (r)[(s)->from[j]] : ((const T *)(uintptr_t)(s)->in[j])[i])
#define MOCK_CHAIN(T, S)                                                                      \
    static void chain_elem_##S(const xo_cuda_chain_prog *pr, u64 i)                           \
    {                                                                                         \
        T r[XO_CUDA_CHAIN_STEPS];                                                             \
        for (int k = 0; k < pr->nsteps; k++) {                                                \
            const xo_cuda_chain_step *s = &pr->step[k];                                       \
            const T alpha = (T)s->alpha, beta = (T)s->beta;                                   \
            T v, ax;                                                                          \
            switch (s->code) {                                                                \
            case XO_CUDA_CC_UNARY: v = unary_##S(s->subop, CHAIN_IN(T, s, 0, r, i)); break;   \
            case XO_CUDA_CC_BINARY:                                                           \
                v = binary_##S(s->subop, CHAIN_IN(T, s, 0, r, i), CHAIN_IN(T, s, 1, r, i));   \
                break;                                                                        \
            case XO_CUDA_CC_BINARY_SCALAR: v = binary_##S(s->subop, CHAIN_IN(T, s, 0, r, i), alpha); break; \
            case XO_CUDA_CC_SCAL: v = alpha == 0 ? 0 : alpha * CHAIN_IN(T, s, 0, r, i); break; \
            case XO_CUDA_CC_FILL: v = alpha; break;                                           \
            case XO_CUDA_CC_AXPY: v = alpha * CHAIN_IN(T, s, 0, r, i) + CHAIN_IN(T, s, 1, r, i); break; \
            case XO_CUDA_CC_AXPBY:                                                            \
                ax = alpha == 0 ? 0 : alpha * CHAIN_IN(T, s, 0, r, i);                        \
                v = beta == 0 ? ax : ax + beta * CHAIN_IN(T, s, 1, r, i);                     \
                break;                                                                        \
            case XO_CUDA_CC_SCALE_BY: v = CHAIN_IN(T, s, 0, r, i) * ((const T *)(uintptr_t)s->in[1])[0]; break; \
            default: v = CHAIN_IN(T, s, 0, r, i); break; /* COPY */                           \
            }                                                                                 \
            r[k] = v;                                                                         \
            if (s->store) ((T *)(uintptr_t)s->out)[i] = v;                                    \
        }                                                                                     \
    }
MOCK_CHAIN(float, f32)
MOCK_CHAIN(double, f64)

/* The strided-vector and per-row kernels: launch_nn_* returns 0 for a kernel it does not know. Parameters
 * are read as the plugin passes them: device pointers, u64 sizes, int ops, T scalars. */
#define PTR(T, i) ((T *)(uintptr_t)*(CUdeviceptr *)p[i])
#define U64(i) (*(u64 *)p[i])
#define INT(i) (*(int *)p[i])
#define SCALAR(T, i) (*(T *)p[i])
#define GRID_STRIDE(i, n) for (u64 t = 0; t < gx * BLOCK; t++) for (u64 i = t; i < (n); i += gx * BLOCK)
#define FOLD(sum, acc, v) ((sum) ? (acc) + (v) : XO_F_MAX(v, acc))
#define COLS_TILE 32ull
#define COLS_LANES (BLOCK / COLS_TILE)

#define MOCK_KERNELS_NN(T, S)                                                                 \
    static T row_fold_##S(int sum, const T *xr, u64 cols, T init)                             \
    {                                                                                         \
        T acc = init;                                                                         \
        for (u64 j = 0; j < cols; j++) acc = FOLD(sum, acc, xr[j]);                           \
        return acc;                                                                           \
    }                                                                                         \
    static int launch_nn_##S(const char *kind, u64 gx, u64 gy, void **p)                      \
    {                                                                                         \
        if (strcmp(kind, "copy") == 0) {                                                      \
            const T *x = PTR(T, 0);                                                           \
            T *y = PTR(T, 2);                                                                 \
            GRID_STRIDE(i, U64(4)) y[i * U64(3)] = x[i * U64(1)];                             \
        } else if (strcmp(kind, "fill") == 0) {                                               \
            T *x = PTR(T, 0);                                                                 \
            GRID_STRIDE(i, U64(2)) x[i * U64(1)] = SCALAR(T, 3);                              \
        } else if (strcmp(kind, "axpby") == 0) {                                              \
            const T *x = PTR(T, 0), alpha = SCALAR(T, 5), beta = SCALAR(T, 6);                \
            T *y = PTR(T, 2);                                                                 \
            GRID_STRIDE(i, U64(4)) {                                                          \
                T *yi = &y[i * U64(3)];                                                       \
                T ax = alpha == 0 ? 0 : alpha * x[i * U64(1)];                                \
                *yi = beta == 0 ? ax : ax + beta * *yi;                                       \
            }                                                                                 \
        } else if (strcmp(kind, "binary_scalar") == 0) {                                      \
            const T *a = PTR(T, 0), s = SCALAR(T, 1);                                         \
            T *c = PTR(T, 2);                                                                 \
            GRID_STRIDE(i, U64(3)) c[i] = binary_##S(INT(4), a[i], s);                        \
        } else if (strcmp(kind, "scale_by") == 0) {                                           \
            const T f = *PTR(T, 0);                                                           \
            T *x = PTR(T, 1);                                                                 \
            GRID_STRIDE(i, U64(3)) x[i * U64(2)] *= f;                                        \
        } else if (strcmp(kind, "softmax") == 0) {                                            \
            const T *x = PTR(T, 0);                                                           \
            T *y = PTR(T, 2);                                                                 \
            u64 ldx = U64(1), ldy = U64(3), rows = U64(4), cols = U64(5);                     \
            for (u64 b = 0; b < gx; b++)                                                      \
                for (u64 r = b; r < rows; r += gx) {                                          \
                    const T *xr = x + r * ldx;                                                \
                    T *yr = y + r * ldy;                                                      \
                    T m = row_fold_##S(0, xr, cols, xr[0]), s = 0;                            \
                    for (u64 j = 0; j < cols; j++) s += (T)exp(xr[j] - m);                    \
                    for (u64 j = 0; j < cols; j++)                                            \
                        yr[j] = INT(6) == 1 ? (T)((xr[j] - m) - (T)log(s)) : (T)exp(xr[j] - m) / s; \
                }                                                                             \
        } else if (strcmp(kind, "softmax_xent") == 0) { /* g (p[4]) may be NULL or x */       \
            const T *x = PTR(T, 0);                                                           \
            const int32_t *labels = PTR(const int32_t, 2);                                    \
            T *loss = PTR(T, 3), *g = PTR(T, 4), scale = SCALAR(T, 8);                        \
            u64 ldx = U64(1), ldg = U64(5), rows = U64(6), cols = U64(7);                     \
            for (u64 b = 0; b < gx; b++)                                                      \
                for (u64 r = b; r < rows; r += gx) {                                          \
                    const T *xr = x + r * ldx;                                                \
                    T *gr = g ? g + r * ldg : NULL;                                           \
                    int32_t c = labels[r];                                                    \
                    if (c < 0 || (u64)c >= cols) {                                            \
                        loss[r] = 0;                                                          \
                        for (u64 j = 0; j < cols && gr; j++) gr[j] = 0;                       \
                        continue;                                                             \
                    }                                                                         \
                    T xc = xr[c], m = row_fold_##S(0, xr, cols, xr[0]), s = 0;                \
                    for (u64 j = 0; j < cols; j++) s += (T)exp(xr[j] - m);                    \
                    loss[r] = (T)log(s) - (xc - m);                                           \
                    for (u64 j = 0; j < cols && gr; j++)                                      \
                        gr[j] = (T)exp(xr[j] - m) * (scale / s) - ((u64)c == j ? scale : 0);  \
                }                                                                             \
        } else if (strcmp(kind, "reduce_rows") == 0) {                                        \
            const T *x = PTR(T, 0);                                                           \
            T *out = PTR(T, 5);                                                               \
            int sum = INT(4) == 0;                                                            \
            for (u64 b = 0; b < gx; b++)                                                      \
                for (u64 r = b; r < U64(2); r += gx) {                                        \
                    const T *xr = x + r * U64(1);                                             \
                    out[r] = row_fold_##S(sum, xr, U64(3), sum ? 0 : xr[0]);                  \
                }                                                                             \
        } else if (strcmp(kind, "reduce_cols") == 0) { /* 32 columns x 8 row lanes a block */ \
            const T *x = PTR(T, 0);                                                           \
            T *out = PTR(T, 5);                                                               \
            u64 ldx = U64(1), rows = U64(2), cols = U64(3);                                   \
            int sum = INT(4) == 0;                                                            \
            for (u64 b = 0; b < gx; b++)                                                      \
                for (u64 c0 = b * COLS_TILE; c0 < cols; c0 += gx * COLS_TILE)                 \
                    for (u64 c = c0; c < c0 + COLS_TILE && c < cols; c++) {                   \
                        T acc = 0;                                                            \
                        for (u64 lane = 0; lane < COLS_LANES; lane++) {                       \
                            T part = sum ? 0 : x[c];                                          \
                            for (u64 r = lane; r < rows; r += COLS_LANES)                     \
                                part = FOLD(sum, part, x[r * ldx + c]);                       \
                            acc = lane == 0 ? part : FOLD(sum, acc, part);                    \
                        }                                                                     \
                        out[c] = acc;                                                         \
                    }                                                                         \
        } else if (strcmp(kind, "argmax") == 0) { /* the first NaN, else the first largest */ \
            const T *x = PTR(T, 0);                                                           \
            int32_t *idx = PTR(int32_t, 2);                                                   \
            u64 ldx = U64(1), rows = U64(3), cols = U64(4);                                   \
            for (u64 b = 0; b < gx; b++)                                                      \
                for (u64 r = b; r < rows; r += gx) {                                          \
                    const T *xr = x + r * ldx;                                                \
                    u64 best = 0;                                                             \
                    for (u64 j = 1; j < cols && xr[best] == xr[best]; j++)                    \
                        if (xr[j] > xr[best] || xr[j] != xr[j]) best = j;                     \
                    idx[r] = (int32_t)best;                                                   \
                }                                                                             \
        } else if (strcmp(kind, "chain") == 0) {                                              \
            const xo_cuda_chain_prog *pr = p[0];                                              \
            if (pr->nsteps < 1 || pr->nsteps > XO_CUDA_CHAIN_STEPS) return 0;                 \
            GRID_STRIDE(i, pr->n) chain_elem_##S(pr, i);                                      \
        } else if (strcmp(kind, "epilogue") == 0) {                                           \
            T *c = PTR(T, 0);                                                                 \
            const T *bias = PTR(T, 4), beta = SCALAR(T, 6);                                   \
            u64 ld = U64(1), outer = U64(2), inner = U64(3);                                  \
            for (u64 by = 0; by < gy; by++)                                                   \
                for (u64 o = by; o < outer; o += gy)                                          \
                    GRID_STRIDE(i, inner) {                                                   \
                        T *ci = &c[o * ld + i];                                               \
                        T v = beta == 0 ? 0 : beta * *ci;                                     \
                        if (bias) v += bias[INT(5) ? i : o];                                  \
                        *ci = unary_##S(INT(7), v);                                           \
                    }                                                                         \
        } else {                                                                              \
            return 0;                                                                         \
        }                                                                                     \
        return 1;                                                                             \
    }

MOCK_KERNELS_NN(float, f32)
MOCK_KERNELS_NN(double, f64)

/* Run kernel f now; 0 for a kernel of cuda_kernels.h without its twin here. */
static int execute(CUfunction f, u64 gx, u64 gy, void **params)
{
    char kind[32]; /* "xo_KIND_f32" -> "KIND" */
    size_t len = strlen(f->name) - strlen("xo_") - strlen("_f32");
    memcpy(kind, f->name + 3, len);
    kind[len] = '\0';
    return strstr(f->name, "_f64") ? launch_nn_f64(kind, gx, gy, params) || launch_f64(kind, gx, gy, params)
                                   : launch_nn_f32(kind, gx, gy, params) || launch_f32(kind, gx, gy, params);
}

/* ---- stream capture and graphs ------------------------------------------------------------ */

/* Each kernel's parameters, as a real driver knows them from the module: P a device
 * pointer, U a u64, I an int, T a scalar of the kernel's precision, C xo_chain's program. */
static const struct { const char *kind, *sig; } k_signatures[] = {
    {"unary", "PPUI"}, {"binary", "PPPUI"}, {"bias", "PPUUU"}, {"reduce", "PUIP"}, {"scale", "PUUUT"},
    {"nrm2", "PUUPI"}, {"copy", "PUPUU"}, {"fill", "PUUT"}, {"axpby", "PUPUUTT"}, {"binary_scalar", "PTPUI"},
    {"scale_by", "PPUU"}, {"softmax", "PUPUUUI"}, {"softmax_xent", "PUPPPUUUT"}, {"reduce_rows", "PUUUIP"},
    {"reduce_cols", "PUUUIP"}, {"epilogue", "PUUUPITI"}, {"chain", "C"}, {"argmax", "PUPUU"},
};

#define MOCK_MAX_PARAMS 12
typedef struct mock_node {
    CUfunction f; /* a kernel launch, or NULL: a deferred host call */
    unsigned gx, gy;
    void *params[MOCK_MAX_PARAMS];
    void (*host_fn)(void *arg);
    unsigned char *blob; /* the parameters' (or host_fn's argument's) copy */
    size_t blob_size;
} mock_node;
struct CUgraph_st {
    mock_node *node;
    int n, cap;
};
struct CUgraphExec_st {
    struct CUgraph_st g;
};

static _Atomic long g_graph_counts[4]; /* captures, instantiations, launches, live executables */

/* For tests: the counters above (any of them may be read at any time). */
void xo_mock_cuda_graph_counts(long out[4]);
void xo_mock_cuda_graph_counts(long out[4])
{
    for (int i = 0; i < 4; i++) out[i] = g_graph_counts[i];
}

static void graph_free_nodes(struct CUgraph_st *g)
{
    for (int i = 0; g && i < g->n; i++) free(g->node[i].blob);
    if (g) free(g->node);
}

static mock_node *graph_add(struct CUgraph_st *g)
{
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 8;
        mock_node *nn = realloc(g->node, (size_t)cap * sizeof *nn);
        if (!nn) return NULL;
        g->node = nn;
        g->cap = cap;
    }
    mock_node *m = &g->node[g->n++];
    memset(m, 0, sizeof *m);
    return m;
}

/* Record a launch of f with a copy of its parameters. */
static CUresult record_launch(CUstream s, CUfunction f, unsigned gx, unsigned gy, void **params)
{
    const int f64 = strstr(f->name, "_f64") != NULL;
    const char *sig = NULL;
    for (size_t k = 0; k < sizeof k_signatures / sizeof k_signatures[0]; k++) {
        size_t len = strlen(k_signatures[k].kind);
        if (strncmp(f->name + 3, k_signatures[k].kind, len) == 0 && strcmp(f->name + 3 + len, f64 ? "_f64" : "_f32") == 0)
            sig = k_signatures[k].sig;
    }
    if (!sig || strlen(sig) > MOCK_MAX_PARAMS) return CUDA_ERROR_NOT_FOUND;
    size_t size[MOCK_MAX_PARAMS], total = 0;
    const size_t n = strlen(sig);
    for (size_t j = 0; j < n; j++) {
        size[j] = sig[j] == 'I' ? sizeof(int) : sig[j] == 'T' ? (f64 ? sizeof(double) : sizeof(float))
                : sig[j] == 'C' ? sizeof(xo_cuda_chain_prog) : 8;
        total += (size[j] + 7) & ~(size_t)7;
    }
    mock_node *m = graph_add(s->rec);
    if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
    m->blob = malloc(total);
    if (!m->blob) {
        s->rec->n--;
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    m->blob_size = total;
    m->f = f;
    m->gx = gx;
    m->gy = gy;
    for (size_t j = 0, off = 0; j < n; off += (size[j] + 7) & ~(size_t)7, j++) {
        memcpy(m->blob + off, params[j], size[j]);
        m->params[j] = m->blob + off;
    }
    return CUDA_SUCCESS;
}

/* The stand-in cuBLAS's calls on a capturing stream: recorded (1) with a copy of `arg`
 * for fn to run at each launch; 0: not capturing, run it now. */
int xo_mock_cuda_defer(CUstream s, void (*fn)(void *arg), const void *arg, size_t size);
int xo_mock_cuda_defer(CUstream s, void (*fn)(void *arg), const void *arg, size_t size)
{
    if (!s || !s->capturing) return 0;
    mock_node *m = graph_add(s->rec);
    unsigned char *copy = m ? malloc(size) : NULL;
    if (!copy) {
        if (m) s->rec->n--;
        s->invalidated = 1; /* the capture cannot be completed: it fails at its end */
        return 1;
    }
    memcpy(copy, arg, size);
    m->host_fn = fn;
    m->blob = copy;
    m->blob_size = size;
    return 1;
}

#ifndef XO_MOCK_NO_GRAPHS
static int graph_fails(const char *what)
{
    const char *e = getenv("XO_MOCK_CUDA_GRAPH_FAIL");
    return e && strcmp(e, what) == 0;
}

CUresult cuStreamBeginCapture_v2(CUstream stream, CUstreamCaptureMode mode)
{
    NEED_CTX();
    if (!stream || mode < 0 || mode > 2) return CUDA_ERROR_INVALID_VALUE;
    if (stream->capturing) return CUDA_ERROR_ILLEGAL_STATE;
    stream->rec = calloc(1, sizeof *stream->rec);
    if (!stream->rec) return CUDA_ERROR_OUT_OF_MEMORY;
    stream->capturing = 1;
    stream->invalidated = 0;
    return CUDA_SUCCESS;
}
CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph)
{
    NEED_CTX();
    if (!stream || !graph) return CUDA_ERROR_INVALID_VALUE;
    if (!stream->capturing) return CUDA_ERROR_ILLEGAL_STATE;
    stream->capturing = 0;
    *graph = NULL;
    if (stream->invalidated) {
        graph_free_nodes(stream->rec);
        free(stream->rec);
        stream->rec = NULL;
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    }
    *graph = stream->rec;
    stream->rec = NULL;
    g_graph_counts[0]++;
    return CUDA_SUCCESS;
}
CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph, unsigned long long flags)
{
    NEED_CTX();
    if (!exec || !graph || flags) return CUDA_ERROR_INVALID_VALUE;
    if (graph_fails("instantiate")) return CUDA_ERROR_OUT_OF_MEMORY;
    struct CUgraphExec_st *e = calloc(1, sizeof *e);
    if (!e) return CUDA_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < graph->n; i++) { /* a copy: the graph may be destroyed at once */
        mock_node *m = graph_add(&e->g);
        unsigned char *blob = m ? malloc(graph->node[i].blob_size) : NULL;
        if (!blob) {
            if (m) e->g.n--;
            graph_free_nodes(&e->g);
            free(e);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        *m = graph->node[i];
        memcpy(blob, graph->node[i].blob, m->blob_size);
        for (int j = 0; j < MOCK_MAX_PARAMS; j++)
            if (m->params[j]) m->params[j] = blob + ((unsigned char *)m->params[j] - graph->node[i].blob);
        m->blob = blob;
    }
    *exec = e;
    g_graph_counts[1]++;
    g_graph_counts[3]++;
    return CUDA_SUCCESS;
}
CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream)
{
    NEED_CTX();
    if (!exec || !stream || stream->capturing) return CUDA_ERROR_INVALID_VALUE;
    if (graph_fails("launch")) return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < exec->g.n; i++) {
        mock_node *m = &exec->g.node[i];
        if (m->f) {
            if (!execute(m->f, m->gx, m->gy, m->params)) return CUDA_ERROR_NOT_FOUND;
        } else {
            m->host_fn(m->blob);
        }
    }
    g_graph_counts[2]++;
    return CUDA_SUCCESS;
}
CUresult cuGraphExecDestroy(CUgraphExec exec)
{
    if (!exec) return CUDA_ERROR_INVALID_VALUE;
    graph_free_nodes(&exec->g);
    free(exec);
    g_graph_counts[3]--;
    return CUDA_SUCCESS;
}
CUresult cuGraphDestroy(CUgraph graph)
{
    if (!graph) return CUDA_ERROR_INVALID_VALUE;
    graph_free_nodes(graph);
    free(graph);
    return CUDA_SUCCESS;
}
#endif

CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                        unsigned int by, unsigned int bz, unsigned int shared_bytes, CUstream stream, void **params,
                        void **extra)
{
    NEED_CTX();
    if (!f || !stream || !params || extra || gx < 1 || gx > 2147483647u || gy < 1 || gy > 65535 || gz != 1 ||
        bx != BLOCK || by != 1 || bz != 1 || shared_bytes != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (stream->capturing) return record_launch(stream, f, gx, gy, params);
    if (f->generated) g_generated_launches++;
    /* A kernel of cuda_kernels.h without its twin here fails to launch. */
    return execute(f, gx, gy, params) ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
