/* Internal interfaces of the OpenCL plugin (not installed). Internal names: xo__cl_.
 *
 *   cl_plugin.c   vtable, device info, supports, finish, drain_timings
 *   cl_device.c   discovery; each device's cl_context held once per process; fork()
 *   cl_mem.c      device buffers, uploads (staged, asynchronous), downloads
 *   cl_blas.c     gemm/gemv/axpy/scal/dot/nrm2/ger through CLBlast's C API
 *   cl_ops.c      the op table: one row per op kind (how it runs, its kernels' program)
 *   cl_kernels.c  our kernels_cl/NAME.cl programs: lazy build, the generic launch
 *   cl_launch.c   each op's kernel launch, gemm_bias_act (CLBlast + epilogue)
 *   cl_warm.c     a CLBlast routine's first use on a device, compiled outside its lock
 *   cl_chain.c    the "xo_chain" extra: a kernel generated per chain shape, cached
 *   cl_cache.c    compiled program binaries on disk
 *   cl_events.c   per-device event bookkeeping: op timings, staging buffers
 *   cl_status.c   every cl_int / CLBlastStatusCode -> name and xo_status
 */
#ifndef XO_CL_INTERNAL_H
#define XO_CL_INTERNAL_H

#include <crossover/plugin.h>

#include <CL/cl.h>
#include <clblast_c.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cl_testing.h"

/* Our programs, one per kernels_cl/NAME.cl file: X(ID, source name). */
#define XO_CL_PROGRAMS(X) X(ELEMENTWISE, "elementwise") X(REDUCE, "reduce")
/* Our kernels: X(ID, kernel name, program ID). */
#define XO_CL_KERNELS(X)                                                        \
    X(UNARY, "xo_unary", ELEMENTWISE)                                           \
    X(BINARY, "xo_binary", ELEMENTWISE)                                         \
    X(BINARY_SCALAR, "xo_binary_scalar", ELEMENTWISE)                           \
    X(COPY, "xo_copy", ELEMENTWISE)                                             \
    X(FILL, "xo_fill", ELEMENTWISE)                                             \
    X(AXPBY, "xo_axpby", ELEMENTWISE)                                           \
    X(SCALE_BY, "xo_scale_by", ELEMENTWISE)                                     \
    X(BIAS_ACT, "xo_bias_act", ELEMENTWISE)                                     \
    X(SCALE, "xo_scale", ELEMENTWISE)                                           \
    X(REDUCE_PARTIAL, "xo_reduce_partial", REDUCE)                              \
    X(REDUCE_FINAL, "xo_reduce_final", REDUCE)                                  \
    X(REDUCE_AXIS, "xo_reduce_axis", REDUCE)                                    \
    X(SOFTMAX, "xo_softmax", REDUCE)                                            \
    X(SOFTMAX_XENT, "xo_softmax_xent", REDUCE)                                  \
    X(ARGMAX, "xo_argmax", REDUCE)                                              \
    X(NRM2_PARTIAL, "xo_nrm2_partial", REDUCE)                                  \
    X(NRM2_FINAL, "xo_nrm2_final", REDUCE)

typedef enum xo__cl_prog_id {
#define XO_CL_PROG_ENUM_(ID, source) XO_CL_PROG_##ID,
    XO_CL_PROGRAMS(XO_CL_PROG_ENUM_)
#undef XO_CL_PROG_ENUM_
    XO_CL_PROG_COUNT,
    XO_CL_PROG_NONE = -1 /* an op CLBlast runs alone */
} xo__cl_prog_id;
typedef enum xo__cl_kernel_id {
#define XO_CL_KERNEL_ENUM_(ID, name, prog) XO_CL_K_##ID,
    XO_CL_KERNELS(XO_CL_KERNEL_ENUM_)
#undef XO_CL_KERNEL_ENUM_
    XO_CL_K_COUNT
} xo__cl_kernel_id;

#define XO_CL_MAX_DEVICES 15   /* XO_MAX_DEVICES less the host CPU */
#define XO_CL_RING 256         /* pending op timings kept per device */
#define XO_CL_STAGING 64       /* pending staged uploads per device */
#define XO_CL_STAGING_BYTES ((size_t)256 << 20)
#define XO_CL_REDUCE_LOCAL 256 /* largest work-group of the reductions (power of two) */

/* The CLBlast routines the plugin calls (cl_warm.c). */
typedef enum xo__clblast_routine {
    XO_CLB_GEMM, XO_CLB_GEMV, XO_CLB_AXPY, XO_CLB_SCAL, XO_CLB_COPY, XO_CLB_DOT, XO_CLB_GER, XO_CLB_COUNT
} xo__clblast_routine;

typedef struct xo__cl_timing {
    cl_event first, last; /* first == NULL: the op was one command, `last` */
    uint64_t token;
} xo__cl_timing;

typedef struct xo__cl_staging {
    cl_event done; /* the write that reads `copy` */
    void *copy;
    size_t bytes;
} xo__cl_staging;

typedef struct xo__cl_device {
    cl_platform_id platform;
    cl_device_id id;
    cl_context ctx;
    cl_command_queue queue;
    xo_device_info info;
    char platform_version[128];
    cl_ulong max_alloc;
    cl_ulong global_mem;        /* CL_DEVICE_GLOBAL_MEM_SIZE (0: unknown) */
    _Atomic cl_ulong held;      /* bytes of the buffers mem_alloc gave out and not yet freed */
    size_t max_wg;
    cl_uint base_align;         /* CL_DEVICE_MEM_BASE_ADDR_ALIGN, in bytes */
    _Atomic int *warm;          /* [routine * 2 + fp64]: compiled on the shared cl_context (cl_device.c) */
    int one_call_at_a_time;     /* the runtime gets one call at a time (xo__cl_serial_lock; cl_device.c) */

    pthread_mutex_t build_lock; /* prog_state, prog, kernel handles (written once) */
    pthread_mutex_t lock;       /* kernel arguments + launches, partials, ring, staging */
    int prog_state[XO_CL_PROG_COUNT][2]; /* [prog][dtype]: 0 not tried, 1 built, -1 failed */
    cl_program prog[XO_CL_PROG_COUNT][2];
    cl_kernel kernel[XO_CL_K_COUNT][2];
    _Atomic(struct xo__cl_chains *) chains; /* cl_chain.c: generated kernels by chain shape (NULL: none yet) */
    cl_mem partials; /* reduce/nrm2 pass-1 results: 3 * XO_CL_REDUCE_LOCAL doubles */
    xo__cl_timing ring[XO_CL_RING];
    int ring_head, ring_count;
    double overflow_us;    /* time of ops that left a full ring before a drain */
    xo__cl_staging staging[XO_CL_STAGING];
    int staging_count;
    size_t staging_bytes;
} xo__cl_device;

typedef struct xo__cl_state {
    const xo_plugin_host *host;
    int ndev;
    unsigned fork_gen; /* xo__cl_fork_gen when the state was made */
    xo__cl_device dev[XO_CL_MAX_DEVICES];
} xo__cl_state;

/* ---- cl_device.c ---------------------------------------------------------------- */
/* Give st (host set, no devices) one device per OpenCL device of the process: the
 * shared cl_context, a queue of its own. No devices is no error. */
xo_status xo__cl_process_open(xo__cl_state *st);
/* Release st's queues and programs, and the shared cl_contexts with their last user. */
void xo__cl_process_close(xo__cl_state *st);
/* Counts the fork()s this process is a child of (bumped in the child). */
extern _Atomic unsigned xo__cl_fork_gen;
/* 1 in a child forked after st was made: its devices' runtime is not there. */
static inline int xo__cl_lost(const xo__cl_state *st)
{
    return st->fork_gen != atomic_load_explicit(&xo__cl_fork_gen, memory_order_relaxed);
}
/* Set the "device lost to fork()" message; XO_ERR_DEVICE. */
xo_status xo__cl_lost_fail(const xo__cl_state *st);

/* xo_plugin_mem is a cl_mem in disguise. */
static inline cl_mem xo__cl_mem(const xo_plugin_mem *m) { return (cl_mem)(uintptr_t)m; }

/* ---- cl_status.c ------------------------------------------------------------ */
const char *xo__cl_error_name(cl_int err);                /* "CL_OUT_OF_RESOURCES" */
const char *xo__clblast_status_name(CLBlastStatusCode s); /* "CLBlastInvalidLeadDimA" */
xo_status xo__cl_status(cl_int err);                      /* OOM codes -> OUT_OF_MEMORY, else DEVICE */
xo_status xo__clblast_status(CLBlastStatusCode s);
/* Set the thread's error detail "CALL: NAME" and return the mapped status. */
xo_status xo__cl_fail(const xo_plugin_host *host, const char *call, cl_int err);
xo_status xo__clblast_fail(const xo_plugin_host *host, const char *call, CLBlastStatusCode s);

/* ---- cl_events.c (callers hold dev->lock for *_locked) -------------------------- */
/* Take ownership of `first` (may be NULL) and `last`: the op named `token`. */
void xo__cl_timing_push_locked(xo__cl_device *d, cl_event first, cl_event last, uint64_t token);
int xo__cl_timing_drain(xo__cl_device *d, xo_op_timing *out, int max);
/* Keep `copy` (malloc'd) alive until `done` completes; takes ownership of both. */
void xo__cl_staging_push_locked(xo__cl_device *d, cl_event done, void *copy, size_t bytes);
/* Free staged copies whose write has completed (all of them, waiting, if `wait_all`). */
void xo__cl_staging_harvest_locked(xo__cl_device *d, int wait_all);
void xo__cl_events_release_locked(xo__cl_device *d);

/* ---- cl_mem.c ---------------------------------------------------------------- */
xo_status xo__cl_mem_alloc(void *state, int dev, size_t bytes, xo_plugin_mem **out);
void xo__cl_mem_free(void *state, int dev, xo_plugin_mem *mem);
xo_status xo__cl_mem_wrap(void *state, int dev, void *host, size_t bytes, xo_plugin_mem **out);
xo_status xo__cl_upload(void *state, int dev, xo_plugin_mem *dst, size_t dst_off,
                        const void *src, size_t bytes);
xo_status xo__cl_download(void *state, int dev, xo_plugin_mem *src, size_t src_off,
                          void *dst, size_t bytes);

/* ---- cl_blas.c ------------------------------------------------------------------ */
xo_status xo__cl_run_blas(xo__cl_state *st, xo__cl_device *d, const xo_op_desc *op, uint64_t token);
/* Enqueue op's gemm (GEMM's fields) with CLBlast; xo__clblast_lock held. */
CLBlastStatusCode xo__cl_gemm_enqueue(const xo_op_desc *op, cl_command_queue *q, cl_event *ev);

/* ---- cl_warm.c ------------------------------------------------------------------ */
/* Compile routine r in dtype on d (one tiny call, outside xo__clblast_lock) unless it
 * is warm already; XO_OK, or the error set. Call before taking xo__clblast_lock. */
xo_status xo__clblast_warm(xo__cl_state *st, xo__cl_device *d, xo__clblast_routine r, xo_dtype dtype);

/* ---- cl_kernels.c --------------------------------------------------------------- */
/* BLAS ops that run on our kernels rather than CLBlast: gemm, gemv and scal with
 * alpha == 0 (CLBlast computes 0 * NaN; these only scale C or y by beta, or write zeros:
 * xo_op_scales_only) and nrm2 (CLBlast's squares overflow and underflow; ours are scaled). */
static inline int xo__cl_blas_on_kernels(const xo_op_desc *op)
{
    return op->kind == XO_OP_NRM2 || xo_op_scales_only(op);
}
/* 1 if program `prog` is built in `dtype` (building it now if never tried). */
int xo__cl_program_ready(xo__cl_state *st, xo__cl_device *d, xo__cl_prog_id prog, xo_dtype dtype);
/* Enqueue one op's kernels, the first and last events in *first and *last (*first may
 * stay NULL: one command); d->lock held, the program built. */
typedef cl_int (*xo__cl_launch_fn)(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last,
                                   const char **call);
/* Run an op on our kernels: `launch` under the device lock, its program `prog` built
 * first (the op table says which, cl_ops.c). */
xo_status xo__cl_run_kernel(xo__cl_state *st, xo__cl_device *d, const xo_op_desc *op, uint64_t token,
                            xo__cl_launch_fn launch, xo__cl_prog_id prog);
void xo__cl_kernels_release(xo__cl_device *d);
/* Build a program from `ntext` source pieces with `opts` on d: first the core's fault hook
 * ("compile"), then the on-disk cache under `key` (the full text naming device, driver,
 * options and source), then the source (stored in the cache). `what` names the program
 * in logs ("program 'elementwise' (float)"). NULL on failure: logged and counted. */
cl_program xo__cl_program_build(xo__cl_state *st, xo__cl_device *d, const char *what, const char *key,
                                int ntext, const char *const *text, const size_t *len, const char *opts);
/* Count a build that failed after xo__cl_program_build (its kernel could not be made). */
void xo__cl_count_build_failure(void);
/* The embedded plugins/common/xo_formulas.h: its text (NULL if missing), length and hash. */
const char *xo__cl_formulas_text(size_t *len, uint64_t *hash);

/* ---- cl_chain.c ----------------------------------------------------------------- */
/* The "xo_chain" extra's supports and run (crossover/plugin.h) on device d, which the
 * plugin (cl_plugin.c) has checked. */
int xo__cl_chain_supports(xo__cl_state *st, xo__cl_device *d, const xo_chain *chain);
xo_status xo__cl_chain_run(xo__cl_state *st, xo__cl_device *d, const xo_chain *chain, uint64_t token);
/* Release d's generated chain kernels (d->build_lock not needed: no other user left). */
void xo__cl_chains_release(xo__cl_device *d);

/* One kernel argument: clSetKernelArg's size and value (NULL value: local memory). */
typedef struct xo__cl_arg {
    size_t size;
    const void *value;
} xo__cl_arg;
#define XO_CL_ARG(v) ((xo__cl_arg){sizeof(v), &(v)})
#define XO_CL_MAX_ITEMS ((size_t)1 << 20) /* grid-stride loops cover the rest */

static inline size_t xo__cl_pow2_floor(size_t v)
{
    size_t p = 1;
    while (p * 2 <= v) p *= 2;
    return p;
}
static inline size_t xo__cl_round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }
/* The largest work-group `k` takes on `d` (at least 1). */
size_t xo__cl_kernel_wg(xo__cl_device *d, cl_kernel k);
/* Set the args and enqueue; d->lock held. On failure *call names the failing call. */
cl_int xo__cl_launch_locked(xo__cl_device *d, cl_kernel k, const xo__cl_arg *args, int nargs, cl_uint dims,
                            const size_t *global, const size_t *local, cl_event *ev, const char **call);
/* A 1-D grid-stride launch over n items (work-groups of up to 256); d->lock held. */
cl_int xo__cl_launch_1d_locked(xo__cl_device *d, cl_kernel k, const xo__cl_arg *args, int nargs, size_t n,
                               cl_event *ev, const char **call);
/* A 2-D grid-stride launch over outer x inner items (work-groups of up to 64, dimension
 * 0 over inner, the contiguous index); d->lock held. */
cl_int xo__cl_launch_2d_locked(xo__cl_device *d, cl_kernel k, const xo__cl_arg *args, int nargs, size_t outer,
                               size_t inner, cl_event *ev, const char **call);

/* ---- cl_ops.c: the op table --------------------------------------------------- */
typedef xo_status (*xo__cl_run_fn)(xo__cl_state *st, xo__cl_device *d, const xo_op_desc *op, uint64_t token,
                                   xo__cl_launch_fn launch, xo__cl_prog_id prog);
/* One row per op kind: how it runs (given the row's launch and program), the launch of
 * its kernels and the program they are in. `blas`: CLBlast runs it, our kernels
 * only in the cases xo__cl_blas_on_kernels names, so it is supported before they are
 * built. A kind without a row (run NULL) does not run here. */
typedef struct xo__cl_op_row {
    xo__cl_run_fn run;
    xo__cl_launch_fn launch;
    xo__cl_prog_id prog;
    int blas;
} xo__cl_op_row;
extern const xo__cl_op_row xo__cl_ops[XO_OP_KIND_COUNT];
/* supports and run of the plugin, from the table. */
int xo__cl_op_supports(xo__cl_state *st, xo__cl_device *d, const xo_op_desc *op);
xo_status xo__cl_op_run(xo__cl_state *st, xo__cl_device *d, const xo_op_desc *op, uint64_t token);

/* The launches (cl_launch.c). */
cl_int xo__cl_launch_scale(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last, const char **call);
cl_int xo__cl_launch_elementwise(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last,
                                 const char **call);
cl_int xo__cl_launch_reduce(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last,
                            const char **call);
cl_int xo__cl_launch_copy(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last, const char **call);
cl_int xo__cl_launch_fill(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last, const char **call);
cl_int xo__cl_launch_axpby(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last, const char **call);
cl_int xo__cl_launch_scale_by(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last,
                              const char **call);
cl_int xo__cl_launch_binary_scalar(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last,
                                   const char **call);
cl_int xo__cl_launch_bias(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last, const char **call);
cl_int xo__cl_launch_softmax(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last,
                             const char **call);
cl_int xo__cl_launch_softmax_xent(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last,
                                  const char **call);
cl_int xo__cl_launch_reduce_axis(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last,
                                 const char **call);
cl_int xo__cl_launch_argmax(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last,
                            const char **call);
/* C = act(alpha op(A) op(B) + beta C + bias): CLBlast's gemm, then one pass over C (our
 * kernel in program `prog`, `launch` unused). */
xo_status xo__cl_run_gemm_bias_act(xo__cl_state *st, xo__cl_device *d, const xo_op_desc *op, uint64_t token,
                                   xo__cl_launch_fn launch, xo__cl_prog_id prog);

/* ---- cl_cache.c ------------------------------------------------------------------- */
uint64_t xo__cl_fnv1a(const void *data, size_t n, uint64_t h);
#define XO_CL_FNV_BASIS UINT64_C(0xcbf29ce484222325)
/* Path of the cache entry for `key` ("" and 0 when there is no cache directory). */
int xo__cl_cache_path(const xo_plugin_host *host, const char *key, char *out, size_t cap);
/* 1: *out_bin (malloc'd) holds a binary whose header, key and checksum are intact;
 * 0: no entry; -1: a damaged entry (truncated, bad checksum, other key, not a regular
 * file), the reason in `why`. Never blocks (a FIFO there is damaged). */
int xo__cl_cache_load(const char *path, const char *key, unsigned char **out_bin, size_t *out_size, char *why,
                      size_t whycap);
/* Write atomically (temp file + rename); failures are logged, never fatal. */
void xo__cl_cache_store(const xo_plugin_host *host, const char *path, const char *key,
                        const unsigned char *bin, size_t size);

/* Serialises every CLBlast call in the process (cl_blas.c). */
extern pthread_mutex_t xo__clblast_lock;
/* Every entry of the plugin that calls into a runtime whose devices have
 * one_call_at_a_time holds this (recursive) lock throughout: taken before every other. */
extern pthread_mutex_t xo__cl_serial_lock;
#endif /* XO_CL_INTERNAL_H */
