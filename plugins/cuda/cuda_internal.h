/* Internal state of the CUDA plugin, shared by its files. Layers, each file calling only
 * the ones below it (no circles):
 *   cuda_plugin.c       the vtable: init, shutdown, device_info, supports, finish,
 *                       drain_timings
 *   cuda_run.c          run(): the op table, one row per op kind (entry + needs)
 *   cuda_chain.c        the "xo_chain" extra: a plan's element-wise chain, one launch of
 *                       the interpreter kernel
 *   cuda_nvrtc.c        a chain's shape compiled with NVRTC when present (cached per
 *                       device); the interpreter kernel otherwise
 *   cuda_graph.c        the "xo_graph" extra: stream capture into CUDA graphs, replay
 *   cuda_fused.c        gemm_bias_act (calls cuda_blas.c's gemm)
 *   cuda_blas.c         gemm, gemv, axpy, scal, dot, ger (cuBLAS); nrm2, copy (kernels)
 *   cuda_elementwise.c  unary, binary, binary_scalar, fill, scale_by, axpby, bias
 *   cuda_reduce.c       reduce, reduce_axis, softmax, softmax_xent, argmax
 *   cuda_memory.c       mem_alloc, mem_free, upload, download (pinned staging)
 *   cuda_device.c       one device: open/close (context, stream), lock + current context,
 *                       cuBLAS handle and kernel module on first need, kernel launch
 *   cuda_timing.c       the per-op timing event ring of a device
 *   cuda_status.c       CUresult / cublasStatus_t -> xo_status
 *   cuda_loader.c       dlopen of libcuda / libcublas (symbol tables in cuda_api.h)
 * Our kernels are listed once in cuda_kernels.h and written in kernels/xo_cuda_kernels.cu.
 * Every entry that touches a device takes that device's lock and makes its primary
 * context current (xo__cuda_enter / xo__cuda_leave) for the duration of the call. */
#ifndef XO_CUDA_INTERNAL_H
#define XO_CUDA_INTERNAL_H

#include <crossover/plugin.h>

#include "cuda_api.h"
#include "cuda_kernels.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define XO_CUDA_MAX_DEVICES 16
#define XO_CUDA_BLOCK 256               /* threads per block; matches the .cu file */
#define XO_CUDA_MAX_GRID 65535u         /* grid-stride kernels: any grid is correct */
#define XO_CUDA_REDUCE_BLOCKS 1024u     /* first-pass partials of a reduction */
#define XO_CUDA_COLS_TILE 32u           /* columns per block of xo_reduce_cols; matches the .cu file */
#define XO_CUDA_TIMING_SLOTS 256        /* bounded ring of per-op event pairs */
#define XO_CUDA_STAGING_SLOTS 4         /* pinned staging buffers per device */
#define XO_CUDA_STAGING_BYTES ((size_t)4 << 20)
#define XO_CUDA_GEN_SLOTS 64            /* chain shapes compiled with NVRTC per device */

/* Our kernels (cuda_kernels.h); each has an f32 and an f64 variant ("xo_unary_f32", ...). */
typedef enum xo__cuda_kernel {
#define XO_CUDA_K_ENUM_(ID, name) XO_CUDA_K_##ID,
    XO_CUDA_KERNEL_MAP(XO_CUDA_K_ENUM_)
#undef XO_CUDA_K_ENUM_
    XO_CUDA_K_COUNT
} xo__cuda_kernel;
extern const char *const xo__cuda_kernel_names[XO_CUDA_K_COUNT][2];

struct xo_plugin_mem {
    CUdeviceptr ptr;
    size_t bytes;
};

typedef struct xo__cuda_timing {
    CUevent start, end; /* created lazily, timing enabled */
    uint64_t token;
} xo__cuda_timing;

typedef struct xo__cuda_staging {
    void *host;  /* pinned, XO_CUDA_STAGING_BYTES; NULL until first use */
    CUevent done; /* recorded after the copy that uses `host` */
    int pending;  /* `done` recorded and not yet waited for */
} xo__cuda_staging;

/* A chain shape compiled with NVRTC (cuda_nvrtc.c); fn NULL: it failed (interpreter). */
typedef struct xo__cuda_gen {
    uint64_t hash;
    char *src; /* the generated source: the key */
    CUmodule module;
    CUfunction fn;
} xo__cuda_gen;

typedef struct xo__cuda_device {
    pthread_mutex_t lock;
    int lock_init;
    int ordinal;
    CUdevice dev;
    CUcontext ctx;        /* primary context, retained */
    int ctx_retained;
    CUstream stream;      /* every op, copy and event of this device goes here */
    /* Created on first need (supports() or run()): 0 not tried, 1 ready, -1 failed
     * (the ops that need it are then ineligible on this device). */
    int blas_state, kernels_state;
    cublasHandle_t blas;  /* when blas_state == 1 */
    CUmodule module;      /* when kernels_state == 1 */
    CUfunction fn[XO_CUDA_K_COUNT][2];
    CUdeviceptr scratch;  /* 3 * XO_CUDA_REDUCE_BLOCKS doubles of reduction partials */

    xo__cuda_staging staging[XO_CUDA_STAGING_SLOTS];
    int staging_next;     /* slot for the next chunk */
    int staging_broken;   /* pinned allocation failed: copy directly, synchronously */

    /* Stream capture ("xo_graph", cuda_graph.c): while `capturing`, only capture_owner
     * enters the device; the others wait on capture_done. */
    int capturing;
    pthread_t capture_owner;
    pthread_cond_t capture_done;
    int cond_init;

    xo__cuda_gen gen[XO_CUDA_GEN_SLOTS];
    int ngen;

    xo__cuda_timing timing[XO_CUDA_TIMING_SLOTS];
    int timing_head, timing_count;
    double overflow_us; /* time of ops that left a full ring before a drain */
    int timing_broken;    /* event creation failed: no device timings */

    char name[128];
    int cc_major, cc_minor, sm_count, integrated;
    size_t total_mem;
} xo__cuda_device;

typedef struct xo__cuda_state {
    const xo_plugin_host *host;
    unsigned fork_gen;    /* xo__cuda_fork_gen when made: another value, this is a child */
    int driver_version;   /* cuDriverGetVersion: 13000 = 13.0 */
    char cublas_version[24]; /* "cuBLAS 13.0.2" or "no cuBLAS", for device_info */
    int ndev;
    xo__cuda_device dev[XO_CUDA_MAX_DEVICES];
} xo__cuda_state;

/* fork(): CUDA does not survive it. Counts the fork()s this process is a child of; in a
 * child every entry of a state made before the fork fails (or does nothing) without
 * touching the driver, and a child of a process that started CUDA offers no device. */
extern _Atomic unsigned xo__cuda_fork_gen;
void xo__cuda_fork_watch(void);
int xo__cuda_forked_after_start(void);
static inline int xo__cuda_lost(const xo__cuda_state *st)
{
    return st->fork_gen != atomic_load_explicit(&xo__cuda_fork_gen, memory_order_relaxed);
}

/* cuda_status.c: XO_OK on success, else set the thread's error detail to
 * "CALL: NAME (code)" through host->set_error and return the mapped status. */
xo_status xo__cuda_check(const xo_plugin_host *host, CUresult r, const char *call);
xo_status xo__cublas_check(const xo_plugin_host *host, cublasStatus_t s, const char *call);

/* Call a driver / cuBLAS entry through the symbol table and check it, naming it:
 *   XO_CU(st, cuMemAlloc_v2, (&ptr, bytes))  ->  xo_status */
#define XO_CU(st, fn, args) xo__cuda_check((st)->host, xo__cu.fn args, #fn)
#define XO_CUBLAS(st, fn, args) xo__cublas_check((st)->host, xo__cublas.fn args, #fn)
#define XO_CUDA_TRY(expr)                       \
    do {                                        \
        xo_status xo__cuda_st_ = (expr);        \
        if (xo__cuda_st_ != XO_OK) return xo__cuda_st_; \
    } while (0)

/* Bytes per element of the op's precision. */
static inline size_t xo__cuda_esize(const xo_op_desc *op)
{
    return op->dtype == XO_F64 ? sizeof(double) : sizeof(float);
}

/* A scalar kernel argument of the op's precision: params[i] = xo__cuda_scalar_of(&s, f64, v). */
typedef union xo__cuda_scalar {
    float f;
    double d;
} xo__cuda_scalar;
static inline void *xo__cuda_scalar_of(xo__cuda_scalar *s, int f64, double v)
{
    if (f64) s->d = v;
    else s->f = (float)v;
    return s;
}

/* The device address of operand i of `op` (esize: bytes per element). */
#define XO_CUDA_DEVPTR(op, i, esize) ((op)->arg[i].mem->ptr + (CUdeviceptr)((op)->arg[i].off * (esize)))

/* cuda_device.c */
xo_status xo__cuda_device_open(xo__cuda_state *st, xo__cuda_device *d, int ordinal);
void xo__cuda_device_close(xo__cuda_state *st, xo__cuda_device *d);
/* Lock `d` and make its context current on this thread; on failure nothing is held. */
xo_status xo__cuda_enter(xo__cuda_state *st, xo__cuda_device *d);
void xo__cuda_leave(xo__cuda_device *d);
/* Make cuBLAS (blas = 1) or our kernels (blas = 0) ready on `d` on first need; 1 if
 * usable. _locked: inside xo__cuda_enter/leave. */
int xo__cuda_ready_locked(xo__cuda_state *st, xo__cuda_device *d, int blas);
int xo__cuda_ready(xo__cuda_state *st, xo__cuda_device *d, int blas);
/* The device `dev` of the state, or NULL (error set) when out of range. */
xo__cuda_device *xo__cuda_device_at(xo__cuda_state *st, int dev, const char *fn);
/* The embedded fatbin (generated from kernels/xo_cuda_kernels.cu). */
const unsigned char *xo__cuda_fatbin(size_t *out_size);
/* Release the staging buffers of `d` (context current, stream idle). */
void xo__cuda_staging_release(xo__cuda_device *d);
/* Blocks for `work` grid-stride items of one thread each, at most `cap`. */
unsigned xo__cuda_grid_for(size_t work, unsigned cap);
/* A grid dimension of `blocks` (at least 1, at most XO_CUDA_MAX_GRID; the kernels stride). */
static inline unsigned xo__cuda_grid_cap(size_t blocks)
{
    if (blocks < 1) return 1;
    return blocks > XO_CUDA_MAX_GRID ? XO_CUDA_MAX_GRID : (unsigned)blocks;
}
/* Launch kernel `k` (f64: double variant) with XO_CUDA_BLOCK threads on d's stream. */
xo_status xo__cuda_launch(xo__cuda_state *st, xo__cuda_device *d, xo__cuda_kernel k, int f64, unsigned gx,
                          unsigned gy, void **params);
/* The same for a function of another module (`name` for messages). */
xo_status xo__cuda_launch_fn(xo__cuda_state *st, xo__cuda_device *d, CUfunction fn, const char *name, unsigned gx,
                             unsigned gy, void **params);

/* cuda_nvrtc.c (device entered): the kernel compiled for the shape of `p`, or NULL (no
 * NVRTC, it failed, or recording a graph): then the interpreter runs it. release: unload
 * the compiled modules (context current). enabled: 0 makes every chain use the
 * interpreter (tests). */
CUfunction xo__cuda_chain_fn(xo__cuda_state *st, xo__cuda_device *d, const xo_cuda_chain_prog *p, int f64);
void xo__cuda_gen_release(xo__cuda_device *d);
extern int xo__cuda_nvrtc_enabled;

/* cuda_timing.c (context current). begin: record the start of a new ring entry, NULL
 * when timings are unavailable; end: record its end, which makes it count; collect: up
 * to `max` completed timings, oldest first; release: destroy the events. */
xo__cuda_timing *xo__cuda_timing_begin(xo__cuda_device *d, uint64_t token);
void xo__cuda_timing_end(xo__cuda_device *d, xo__cuda_timing *t);
int xo__cuda_timing_collect(xo__cuda_device *d, xo_op_timing *out, int max);
void xo__cuda_timing_release(xo__cuda_device *d);

/* cuda_memory.c */
xo_status xo__cuda_mem_alloc(void *state, int dev, size_t bytes, xo_plugin_mem **out);
void xo__cuda_mem_free(void *state, int dev, xo_plugin_mem *mem);
xo_status xo__cuda_upload(void *state, int dev, xo_plugin_mem *dst, size_t dst_off,
                          const void *src, size_t bytes);
xo_status xo__cuda_download(void *state, int dev, xo_plugin_mem *src, size_t src_off,
                            void *dst, size_t bytes);

/* The op families: one entry per op kind, run with d's context current and what the
 * kind needs (cuda_run.c's table) ready. */
typedef xo_status (*xo__cuda_op_fn)(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
/* cuda_blas.c */
xo_status xo__cuda_gemm(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
xo_status xo__cuda_gemv(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
xo_status xo__cuda_axpy(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
xo_status xo__cuda_scal(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
xo_status xo__cuda_dot(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
xo_status xo__cuda_nrm2(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
xo_status xo__cuda_copy(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
xo_status xo__cuda_ger(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
/* cuda_elementwise.c */
xo_status xo__cuda_unary(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
xo_status xo__cuda_binary(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
xo_status xo__cuda_binary_scalar(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
xo_status xo__cuda_fill(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
xo_status xo__cuda_scale_by(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
xo_status xo__cuda_axpby(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
xo_status xo__cuda_bias(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
/* cuda_reduce.c */
xo_status xo__cuda_reduce(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
xo_status xo__cuda_reduce_axis(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
xo_status xo__cuda_softmax(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
xo_status xo__cuda_softmax_xent(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
xo_status xo__cuda_argmax(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);
/* cuda_fused.c */
xo_status xo__cuda_gemm_bias_act(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op);

/* The extras get_proc_address offers (cuda_chain.c, cuda_graph.c). */
extern const xo_chain_runner xo__cuda_chain_runner;
extern const xo_graph_runner xo__cuda_graph_runner;

/* cuda_run.c: what running an op kind needs (XO_CUDA_NEED_*); 0: it does not run on CUDA. */
#define XO_CUDA_NEED_BLAS 1u
#define XO_CUDA_NEED_KERNELS 2u
unsigned xo__cuda_needs(xo_op_kind kind);
xo_status xo__cuda_run(void *state, int dev, const xo_op_desc *op, uint64_t token);

#endif /* XO_CUDA_INTERNAL_H */
