/* Internal interfaces of the crossover core. Not installed. Internal names: xo__. */
#ifndef XO_INTERNAL_H
#define XO_INTERNAL_H

#include <crossover.h>
#include <crossover/plugin.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>

/* ---- status, errors, logging (status.c) ----------------------------------- */

/* Lengths of user strings and what is made of them. Longer values are refused with
 * XO_ERR_INVALID_ARGUMENT naming their source, never cut. */
#define XO_PATH_MAX 4096      /* a file path (Linux PATH_MAX) */
#define XO_CACHE_DIR_MAX 2048 /* XO_CACHE_DIR: room left for the names of its entries */
#define XO_SPEC_MAX 1024      /* a device spec (XO_DEVICE, xo_set_device, xo_device_find) */
#define XO_ERROR_MAX 4096     /* xo_last_error text: the longest spec or path fits whole */

/* Set this thread's xo_last_error detail and return `s`. */
xo_status xo__error(xo_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void xo__clear_error(void);
#define XO_RETURN_IF_ERROR(expr)              \
    do {                                      \
        xo_status xo__st_ = (expr);           \
        if (xo__st_ != XO_OK) return xo__st_; \
    } while (0)

extern _Atomic int xo__log_level; /* xo_log_level, set from XO_LOG */
void xo__log(xo_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
double xo__now_us(void); /* monotonic clock */

/* A cheap cycle counter for timing every CPU op (the TSC on x86-64, else nanoseconds);
 * converted to time by the rate observed since the context was created. */
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t xo__ticks(void) { return __rdtsc(); }
#else
static inline uint64_t xo__ticks(void) { return (uint64_t)(xo__now_us() * 1e3); }
#endif

/* ---- device profiles (profile.c) --------------------------------------------- */

/* gemm throughput curve: square sizes 16, 32, ..., 2048 (16 << i). */
#define XO_CURVE_POINTS 8
#define XO_CURVE_MIN_N 16

typedef struct xo__profile {
    xo_device_info info;                        /* identity + the contract's figures */
    double gemm_gflops[2][XO_CURVE_POINTS];     /* [dtype][i]: GFLOP/s at n = 16 << i */
    double stream_gbps[2];                      /* [dtype] elementwise-kernel bandwidth */
    double op_launch_us[XO_OP_KIND_COUNT];      /* per-kind launch floor; 0 = info.launch_us */
    double thread_wake_us; /* what waking the device's threads adds to a vector op of at least
                              threaded_from elements (the host CPU; 0: not modelled) */
    double threaded_from;  /* elements from which the device runs vector ops on its threads */
    double issue_us;  /* an asynchronous device: the calling thread's share of a launch (the
                         rest of the launch floor is the device's); 0: unknown, priced as if
                         the host waited for every op (plan_place.c) */
    char library_version[32];                   /* XO_VERSION_STRING when written */
    int provisional;  /* not a trustworthy measurement: defaults standing in until one is made,
                         or runs that disagreed (a busy machine); measured again later */
    double spread;    /* worst dispersion of the repeated runs behind it: (q3 - q1) / median */
    int untrusted_runs; /* measurements in a row that were not trustworthy (a busy machine) */
} xo__profile;

/* The most measurements in a row that may be untrustworthy: the steadiest is then kept. */
#define XO_UNTRUSTED_MAX 3
/* 1 when p's figures can be kept as final: its runs agreed (spread <= 0.5) and its gemm
 * curves never fall by more than 10x between neighbouring sizes; else 0, with the
 * reason in `why` (docs/placement.md, "What counts as a measurement"). */
int xo__profile_trustworthy(const xo__profile *p, char *why, size_t cap);

/* Built-in defaults per device kind (XO_CALIBRATE=off), kept as a data table. */
void xo__profile_defaults(xo_device_kind kind, const char *plugin, xo__profile *out);
/* Read / write one profile file in the contract's format. Read fails (XO_ERR_IO) on a
 * missing, damaged, truncated file, and on anything but a regular file of at most 1 MiB
 * (never blocking on a FIFO); the caller checks staleness against the device. */
xo_status xo__profile_read(const char *path, xo__profile *out);
xo_status xo__profile_write(const char *path, const xo__profile *p);
/* Profile file name for a device: "<plugin>-<sanitised name>-<hash>.profile" where the
 * hash covers plugin, name, driver and the library version. */
void xo__profile_filename(const xo_device_info *info, char *out, size_t cap);
/* What a file of this st_mode that is not a regular one is: "a FIFO", "a directory"... */
const char *xo__file_kind(unsigned mode);
/* 1 if `p` was written for this device (plugin, name, driver) by this library version. */
int xo__profile_matches(const xo__profile *p, const xo_device_info *info);

/* ---- per-op facts (optable.c): one row per XO_OP_MAP row ---------------------- */

typedef struct xo__op_info {
    const char *name;     /* "gemm": public names are "xo_s" / "xo_d" + name */
    const char *operands; /* the operands' names in order, space-separated */
    int nargs;            /* operands in xo_op_desc.arg */
    int out;              /* the operand the op writes */
} xo__op_info;
extern const xo__op_info xo__ops[XO_OP_KIND_COUNT];
/* Kind by name without the s/d prefix ("gemm"), or -1. */
int xo__op_find(const char *name);
/* Dimensions `xo explain` takes for a kind (3: M N K, 2: M N or ROWS COLS, 1: N) and
 * their names ("M N K"). */
int xo__op_ndims(xo_op_kind kind);
const char *xo__op_dims_text(xo_op_kind kind);
/* Elements of operand i for `xo explain`'s sizing (whole operands, no padding). */
double xo__op_operand_elements(xo_op_kind kind, int i, size_t m, size_t n, size_t k);
/* 1 if the op reads its output's prior contents (axpy's y; gemm's C, taken with
 * beta != 0), 0 if it overwrites it (unary's y). */
int xo__op_reads_output(xo_op_kind kind);
/* "256x256x256", "100x3" or "n=1000" for logs. */
void xo__op_shape_text(const xo_op_desc *d, char *out, size_t cap);

/* ---- the cost model (model.c): pure functions -------------------------------- */

typedef struct xo__op_cost {
    xo_op_kind kind;
    xo_dtype dtype;
    double flops;        /* arithmetic of the op */
    double bytes;        /* bytes the op streams through device memory */
    double size;         /* characteristic size: cbrt(m*n*k) for gemm, elements otherwise */
    int noperands;       /* distinct buffers the op needs current on the device */
    struct {
        double bytes;    /* bytes moved if not current there: the span the op touches */
        uint32_t valid;  /* bit d: that span is current on device d (bit 0: host) */
        double credit_us; /* rent already paid toward moving it home (ski rental, place.c) */
    } operand[XO_MAX_ARGS];
} xo__op_cost;

/* Fill kind, dtype, flops, bytes and size of an op (no operands). Dims as in
 * xo_op_desc: gemm m n k; gemv m n; bias m = rows, n = cols; vector ops n. */
void xo__op_cost_init(xo__op_cost *c, xo_op_kind kind, xo_dtype dtype, size_t m, size_t n, size_t k);

/* Predict launch + transfer + compute of `op` on device `dev`, given every device's
 * profile (transfers from a device other than the host go through the host).
 * `correction` multiplies compute_us (1.0 = none). Sets eligible = 1. */
void xo__estimate(const xo__profile *profiles, int ndev, int dev, const xo__op_cost *op,
                  double correction, xo_estimate *out);
/* Cost of bringing one operand of `bytes`, current where `valid` says, current on `dev`
 * (through the host from another device). */
double xo__operand_us(const xo__profile *profiles, int ndev, int dev, double bytes, uint32_t valid, double credit);
/* Compute-only time (us) of `op` on a device with profile `p` (roofline). */
double xo__compute_us(const xo__profile *p, const xo__op_cost *op);
/* The launch floor the model adds to an op of this kind: the profile's per-kind figure,
 * else its launch_us (0 if that is not positive). Inline: placement and recording use it. */
static inline double xo__launch_us(const xo__profile *p, xo_op_kind kind)
{
    if (kind >= 0 && kind < XO_OP_KIND_COUNT && p->op_launch_us[kind] > 0.0)
        return p->op_launch_us[kind];
    return p->info.launch_us > 0.0 ? p->info.launch_us : 0.0;
}
/* Cost of moving `bytes` host->device / device->host on `p`. */
double xo__h2d_us(const xo__profile *p, double bytes);
double xo__d2h_us(const xo__profile *p, double bytes);
/* gemm GFLOP/s at characteristic size n, interpolated on the curve (log-log). */
double xo__gemm_gflops(const xo__profile *p, xo_dtype dtype, double n);

/* ---- placement (place.c): one pure function for dispatch, xo explain and tests ---- */

enum { XO_SUPPORT_NO = 0, XO_SUPPORT_YES = 1, XO_SUPPORT_FAILED = 2 }; /* FAILED: should, but failed here */
/* Sub-ops a device's support is remembered for: the most any kind has, from the op maps
 * (unary and gemm_bias_act: xo_unary_op; binary: xo_binary_op; reduce, softmax: 2). */
#define XO_MAX_SUBOPS ((int)XO_UNARY_OP_COUNT > (int)XO_BINARY_OP_COUNT ? (int)XO_UNARY_OP_COUNT : (int)XO_BINARY_OP_COUNT)
_Static_assert(XO_MAX_ELEMENT < XO_MAX_SUBOPS && XO_LOG_SOFTMAX < XO_MAX_SUBOPS, "XO_MAX_SUBOPS");

typedef struct xo__place_in {
    const xo__profile *profiles; /* [ndev] */
    int ndev;
    const xo__op_cost *cost;     /* the op, with each operand's residency */
    const double *correction;    /* [ndev] factors on compute in force, or NULL: none */
    const int *support;          /* [ndev] XO_SUPPORT_* (device 0, the CPU, runs everything) */
    int forced;                  /* XO_DEVICE / xo_set_device, or -1: by cost */
    const double *wait_us;       /* [ndev] until the work queued on each device is done, or NULL */
} xo__place_in;

typedef struct xo__placement {
    int best;          /* the cheapest eligible device, staying home on close calls */
    int failed;        /* a device cheaper than best whose kernels failed here, or -1 */
    int device;        /* where the op runs (forcing applied) */
    int forced;        /* 1: placed by forcing */
    int fallback_from; /* the device this op counts as a fallback of, or -1 */
    xo_estimate est[XO_MAX_DEVICES];
    double raw[XO_MAX_DEVICES]; /* compute before correction, per device */
} xo__placement;

void xo__place(const xo__place_in *in, xo__placement *out);
/* The forcing step alone, for a decision whose best and failed are cached: returns the
 * device, sets *out_forced and *out_fallback_from. */
int xo__place_force(int best, int failed, const xo_estimate *est, int forced, int forced_support, int *out_forced,
                    int *out_fallback_from);


/* ---- online correction (correct.c): a bounded table of robust ratios ----------- */

typedef struct xo__correction xo__correction;
xo_status xo__correction_create(int ndev, xo__correction **out);
void xo__correction_destroy(xo__correction *c);
/* Size class of an op (log2 bucket of its work). */
int xo__size_class(const xo__op_cost *op);
/* Factor that multiplies predicted compute for (dev, kind, dtype, class); 1.0 when
 * nothing is known. Thread-safe. */
double xo__correction_factor(xo__correction *c, int dev, xo_op_kind kind, xo_dtype dtype, int cls);
/* Record one measurement: predicted compute_us vs measured us. Thread-safe. */
void xo__correction_record(xo__correction *c, int dev, xo_op_kind kind, xo_dtype dtype, int cls,
                           double predicted_us, double measured_us);
void xo__correction_reset(xo__correction *c);
/* Forget what was learned for one device (its profile was replaced). */
void xo__correction_reset_device(xo__correction *c, int dev);
/* How many measurements of (dev, kind, dtype, class) the factor holds now (0: none). */
int xo__correction_count(xo__correction *c, int dev, xo_op_kind kind, xo_dtype dtype, int cls);
/* The factor in force without counting a look-up (no decay): for reports. */
double xo__correction_peek(xo__correction *c, int dev, xo_op_kind kind, xo_dtype dtype, int cls);
#define XO_SIZE_CLASSES 48

/* ---- XO_LOG=summary (summary.c) -------------------------------------------------- */

typedef struct xo__summary xo__summary;
xo_status xo__summary_create(xo_context *ctx);
/* `calls` calls of (kind, dtype, class) on dev, each predicted at predicted_us; measured_us
 * >= 0 is the measured time of one of them. */
void xo__summary_record(xo_context *ctx, xo_op_kind kind, xo_dtype dtype, int cls, int dev, uint64_t calls,
                        double predicted_us, double measured_us, int fallback);
/* The table on stderr, then `extra` (a line, or NULL). */
void xo__summary_print(xo_context *ctx, const char *extra);
/* One plan's line (printed after the table at xo_context_destroy). */
void xo__summary_plan(xo_context *ctx, const char *line);
void xo__summary_free(xo_context *ctx);

/* ---- context, devices, buffers (context.c, buffer.c) --------------------------- */

typedef struct xo__stats_atomic {
    _Atomic uint64_t ops, bytes_in, bytes_out, transfers, fallbacks, busy_ns;
    _Atomic uint64_t busy_ticks; /* synchronous ops timed with xo__ticks() */
} xo__stats_atomic;

/* Hot counters per thread: each slot is written only by the thread that owns it (a
 * plain store, no locked instruction) and summed by xo_stats_get. Threads beyond
 * XO_STAT_SLOTS share the device's atomic counters. */
#define XO_STAT_SLOTS 64
typedef struct xo__stat_slot {
    _Atomic uint64_t ops[XO_MAX_DEVICES];
    _Atomic uint64_t busy_ns[XO_MAX_DEVICES];
} xo__stat_slot;

typedef struct xo__device {
    const xo_plugin *plugin;
    const xo_chain_runner *chain; /* its plugin's "xo_chain" extra (plans' fused chains), or NULL */
    void *pstate;        /* the plugin's state */
    int pdev;            /* index among that plugin's devices */
    xo_device_info info; /* identity from the plugin + figures from the profile */
    xo__profile profile;
    xo__stats_atomic stats;
    _Atomic int supports[XO_OP_KIND_COUNT][2][XO_MAX_SUBOPS]; /* [kind][dtype][subop]: -1 unknown, else XO_SUPPORT_* */
    _Atomic int forced_warned;                  /* "op not runnable on forced device" logged */
    _Atomic int queued;  /* work may be queued since the last xo_finish (which skips idle devices) */
    int async;           /* ops are queued; their times arrive later (drain_timings) */
    int measure_later;   /* its profile is a stand-in or untrusted: 1 background calibration measures it;
                          * 2 measured when asked (a device on the host's cores: xo info, xo calibrate) */
    int cached;          /* its profile was read from the cache (the run's timings cross-check it) */
    _Atomic uint64_t busy_until_ns; /* predicted end of the work queued there (xo__clock_us ns); 0: idle */
} xo__device;

typedef struct xo__fault {
    char plugin[16];
    char site[16];
    long nth;            /* 0: every call ('*') */
    _Atomic long count;
} xo__fault;

#define XO_MAX_PLUGINS 8

/* The compiled-in plugins (generated by cmake/XoPlugin.cmake), NULL-terminated. */
extern const xo_plugin *(*const xo__plugin_registry[])(void);
/* Tests only: one more plugin, loaded after the registry's by every context created while
 * it is set (tests/mock_plugin.h). NULL: none. */
extern const xo_plugin *(*xo__test_plugin)(void);
#define XO_MAX_FAULTS 16

typedef enum xo__calibrate_mode { XO_CALIBRATE_AUTO, XO_CALIBRATE_FORCE, XO_CALIBRATE_OFF } xo__calibrate_mode;

struct xo__op; /* xo_op.h */
struct xo_context {
    uint64_t id; /* unique per process, keys thread-local decisions */
    int ndev;
    xo__device dev[XO_MAX_DEVICES];
    int nplugins;
    struct {
        const xo_plugin *plugin;
        void *state;
        xo_plugin_host host;
    } plugins[XO_MAX_PLUGINS];
    /* Why a plugin contributes no devices, quoted when a device spec names it. */
    struct {
        const char *plugin;
        char why[256];
    } absent[XO_MAX_PLUGINS];
    int nabsent;
    _Atomic int forced; /* device index, or -1 for auto */
    int threads;
    xo__calibrate_mode calibrate;
    int zero_copy;   /* XO_ZERO_COPY: share host memory with host-unified devices */
    char cache_dir[XO_CACHE_DIR_MAX + 1];
    int nfaults;
    xo__fault faults[XO_MAX_FAULTS];
    int fast_dispatch; /* dispatch may take its inline CPU path (xo_dispatch.h) */
    const xo_host_blas *host_blas; /* device 0's host BLAS entries for the express path, or NULL */
    const xo_resolver *resolver;   /* device 0's kernels resolved once for a plan's ops, or NULL */
    xo__correction *correction;
    xo__summary *summary;          /* XO_LOG=summary, else NULL */
    pthread_mutex_t profile_lock;  /* dev[].profile and the figures of dev[].info: background
                                      calibration replaces them while ops run */
    struct xo__background *background; /* calibration of provisional profiles (background.c) */
    _Atomic int *calib_cancel;     /* in a background calibration's private context: stop */
    /* How background.c makes and ends its private context (context.c's, handed down so
     * that the background thread does not call up into context.c). */
    xo_status (*make_private)(xo_context **out);
    void (*destroy_private)(xo_context *ctx);
    /* Plans' recorder (plan/plan_recorder.c), handed down the same way to dispatch.c and
     * buffer.c, which lie below plans. */
    int (*capture_op)(const struct xo__op *op, xo_status *st);
    int (*capture_io)(xo_buffer *b, int write, size_t offset, void *p, size_t bytes, xo_status *st);
    void (*plan_buffer_gone)(xo_buffer *b);
    /* The episode placer (plan/plan_episode.c), handed down the same way; NULL on a
     * context without a device off the host's cores. episode_op: the device the placed
     * episode runs this auto-placed op on, or -1 (op by op); episode_io: a read, a write,
     * or (b NULL) xo_finish. */
    struct xo__episode *episode;
    _Atomic int episode_mixed; /* auto ran an op off the CPU: from then on every auto-placed
                                  op takes dispatch's full path, where the placer sees it */
    int (*episode_op)(const struct xo__op *op);
    void (*episode_io)(xo_context *ctx, xo_buffer *b, int write, size_t offset, size_t bytes);
    struct xo__pending *pending;   /* record.c: predictions awaiting device timings */
    _Atomic uint64_t next_token;
    xo__stat_slot *stat_slots; /* [XO_STAT_SLOTS] */
    _Atomic int next_stat_slot;
    int plan_eager;  /* XO_PLAN=eager: plans run their recorded calls as eager calls */
    uint64_t tick0;  /* xo__ticks() and xo__now_us() at creation: the tick rate */
    double us0;
    /* XO_SIMULATE (core/sim/): the simulation, the plugins of its devices (in place of
     * xo__plugin_registry; NULL: the compiled-in ones) and its clock (NULL: the real one). */
    struct xo__sim *sim;
    const xo_plugin *(*const *registry)(void);
    double (*clock_us)(const xo_context *ctx);
};
/* The context's clock (xo_clock_us): the simulated machine's under XO_SIMULATE. Every
 * time that placement compares with another (queued work) is read from it. */
static inline double xo__clock_us(const xo_context *ctx) { return ctx->clock_us ? ctx->clock_us(ctx) : xo__now_us(); }
/* ---- the device layer (device.c): the plugins and every call into them ------------ */

/* The plugin names specs, XO_PLUGINS and XO_FAULTS accept, NULL-terminated: cpu, opencl,
 * cuda (valid whether compiled in or not), then any other name of the registry and of
 * xo__test_plugin. Returns how many. */
#define XO_MAX_PLUGIN_NAMES 16
int xo__plugin_names(const char *out[XO_MAX_PLUGIN_NAMES + 1]);
/* Index of the word equal (case-insensitively) to [s, s+len), or -1. */
int xo__word_index(const char *const *words, const char *s, size_t len);
/* Load the registry's plugins allowed by XO_PLUGINS (bit i: name i of xo__plugin_names;
 * the CPU always), then xo__test_plugin's, and add their devices to ctx. */
void xo__devices_open(xo_context *ctx, unsigned plugin_mask);
/* Wait for every device, then shut the plugins down (in reverse order). */
void xo__devices_close(xo_context *ctx);
/* Fault injection (XO_FAULTS): 1 if this call of `plugin` at `site` must fail. */
int xo__fault_hit(xo_context *ctx, const char *plugin, const char *site);
/* Whether device d runs (kind, dtype): XO_SUPPORT_*; asks the plugin once (which may
 * build kernels) and remembers. */
int xo__dev_support(xo_context *ctx, int d, const xo_op_desc *op);
/* A device copy of `bytes` on d: the host copy itself when `host` is given and d shares
 * host memory under XO_ZERO_COPY (*shared = 1), else an allocation. Site "alloc". */
xo_status xo__dev_alloc(xo_context *ctx, int d, void *host, size_t bytes, xo_plugin_mem **out, int *shared);
void xo__dev_free(xo_context *ctx, int d, xo_plugin_mem *mem);
/* Transfers of `bytes` at byte `off` of the device copy, from or to host memory at src
 * or dst (sites "upload", "download"), counted in d's stats unless `shared` (a
 * zero-copy sync moves nothing). */
xo_status xo__dev_upload(xo_context *ctx, int d, xo_plugin_mem *dst, size_t off, const void *src, size_t bytes,
                         int shared);
xo_status xo__dev_download(xo_context *ctx, int d, xo_plugin_mem *src, size_t off, void *dst, size_t bytes,
                           int shared);
/* Run (or on an async device enqueue) one op; `fn` names it in messages. Site "launch". */
xo_status xo__dev_run(xo_context *ctx, int d, const char *fn, const xo_op_desc *desc, uint64_t token);
/* The same for a plan's fused chain, through d's chain runner (which it must have). */
xo_status xo__dev_run_chain(xo_context *ctx, int d, const char *fn, const xo_chain *chain, uint64_t token);
xo_status xo__dev_finish(xo_context *ctx, int d);
/* Device-measured times of completed ops (async devices), at most max; 0: none. */
int xo__dev_drain(xo_context *ctx, int d, xo_op_timing *out, int max);
/* The "xo_graph" extra of device d (plugin.h), NULL when its plugin has none (the CPU
 * never). begin/end/destroy call it; launch is a "launch" site and marks d queued. */
const xo_graph_runner *xo__dev_graph(xo_context *ctx, int d);
xo_status xo__dev_graph_begin(xo_context *ctx, int d);
xo_status xo__dev_graph_end(xo_context *ctx, int d, void **graph);
xo_status xo__dev_graph_launch(xo_context *ctx, int d, void *graph, const char *fn);
void xo__dev_graph_destroy(xo_context *ctx, int d, void *graph);
/* The fast paths' run on the CPU (xo_dispatch.h), inline: no fault site, as a context
 * with XO_FAULTS never takes them. */
static inline __attribute__((always_inline)) xo_status xo__dev_run_cpu(xo_context *ctx, const xo_op_desc *desc)
{
    return ctx->dev[0].plugin->run(ctx->dev[0].pstate, 0, desc, 0);
}

/* Ticks to microseconds at the rate seen since ctx was created. */
double xo__ticks_to_us(const xo_context *ctx, uint64_t ticks);

/* Threads (CONTRACT.md): several threads' ops may read a buffer at once; an op that
 * writes it has it to itself. So readers only ever add copies: they set bits of `valid`
 * (after the copy is complete, with release order; readers test bits with acquire
 * loads, a plain load on x86) and of `inflight`, and allocate or fill device copies
 * under `move_lock`, which makes two readers that bring the buffer to one device move
 * it once. Only a writer clears bits or replaces `valid`. */
struct xo_buffer {
    xo_context *ctx;
    size_t bytes;
    void *host;                           /* host copy: XO_HOST_ALIGN-aligned, or the caller's (wrapped) */
    int wrapped;                          /* host is the caller's memory (xo_buffer_wrap): never freed */
    void *user;                           /* wrapped memory too misaligned for the ops' elements:
                                           * host is then an aligned copy of it (wrap.c) */
    _Atomic uint32_t valid;               /* bit d: copy on device d is current; bit 0 = host; bit
                                           * XO_PARTIAL + d: copy d is current on some spans only */
    struct xo__spans *spans;              /* those spans (residency.c; allocated at the first, under move_lock) */
    _Atomic uint32_t shared;              /* bit d: device d's copy is the host copy (zero-copy) */
    _Atomic uint32_t inflight;            /* bit d: shared device d may have queued ops on it */
    uint64_t size_key;                    /* bytes times an odd constant: its part of a decision key */
    uint64_t id;                          /* unique over the process's buffers (a call memo's key:
                                           * xo_dispatch.h) */
    _Atomic uint64_t rent_ns;             /* extra cost paid by keeping it off the host (ski rental) */
    xo_plugin_mem *mem[XO_MAX_DEVICES];   /* lazily allocated device copies (under move_lock) */
    pthread_mutex_t move_lock;            /* allocating device copies and moving data between them */
    _Atomic(struct xo__plan_link *) plans; /* plans and captures that use it (plan_capture.c) */
};
#define XO_HOST_ALIGN 128 /* what zero-copy OpenCL CPU devices ask of a host pointer */

/* Where `b` is current (bit d: device d; bit 0: the host), whole copies in the low
 * XO_PARTIAL bits, copies current on some spans only above them (residency.c): one word,
 * so that a whole write's single store (xo__buffer_mark_written) clears both. Acquire: a
 * set bit's copy is complete for the caller. */
#define XO_PARTIAL 16
_Static_assert(XO_MAX_DEVICES <= XO_PARTIAL, "valid: whole and partial copies in one word");
static inline uint32_t xo__valid(const xo_buffer *b) { return atomic_load_explicit(&b->valid, memory_order_acquire); }
/* Devices holding a whole copy of `b` (xo__valid's low bits). */
static inline uint32_t xo__whole(const xo_buffer *b) { return xo__valid(b) & ((1u << XO_PARTIAL) - 1u); }
/* Devices whose copy of `b` is its host copy (zero-copy). */
static inline uint32_t xo__shared(const xo_buffer *b) { return atomic_load_explicit(&b->shared, memory_order_relaxed); }
/* Shared devices that may still have queued ops on `b`'s host memory. */
static inline uint32_t xo__inflight(const xo_buffer *b)
{
    return atomic_load_explicit(&b->inflight, memory_order_relaxed);
}

/* Before anything writes the host copy: wait for queued ops on shared devices that may
 * still read it (zero-copy), except on device `except` (its own queue orders them). */
void xo__buffer_host_write_barrier(xo_buffer *b, int except);

/* This thread's open captures (plans being recorded; plan_recorder.c keeps the list),
 * NULL almost always: what buffer.c and dispatch.c test before they ask the context's
 * recorder. */
extern _Thread_local xo_plan *xo__capturing;

/* A buffer whose host copy is `host` (current there only); `wrapped`: the caller's memory,
 * never freed. `fn` names the public caller in messages. */
xo_status xo__buffer_new(xo_context *ctx, void *host, size_t bytes, int wrapped, const char *fn, xo_buffer **out);
/* XO_HOST_ALIGN-aligned host memory for `bytes`, zero-filled; `fn` names the caller. */
xo_status xo__host_alloc(size_t bytes, const char *fn, void **out);

/* Make all of `b` current on device `dev` (moving only what is stale there; counted in
 * stats). For dev 0 this brings the host copy current. */
xo_status xo__buffer_make_current(xo_buffer *b, int dev);
/* Give `b` an allocation on `dev` without moving data (for outputs the op overwrites). */
xo_status xo__buffer_ensure_alloc(xo_buffer *b, int dev);
/* After a write on `dev`: that copy is the only current one. The writer has the buffer
 * to itself; release orders its write before the bit for the threads it hands it to. */
static inline void xo__buffer_mark_written(xo_buffer *b, int dev)
{
    atomic_store_explicit(&b->valid, 1u << dev, memory_order_release); /* no partial copy either */
}

/* ---- residency per span (residency.c) ------------------------------------------------
 * A copy is current whole, on a few byte spans (xo__valid's bits), or not at all; an op
 * moves only the pieces of the span it touches that are missing where it runs. */
#define XO_SPANS 4 /* spans a partial copy keeps; one more, and the smallest gap moves too */
/* Copies (bit d) on which bytes [lo, hi) of `b` are all current. */
uint32_t xo__span_valid(xo_buffer *b, size_t lo, size_t hi);
/* Before an op on `dev` touches [lo, hi) of `b`: `need`: those bytes must be current
 * there (missing pieces move, through the host); `write`: the op writes them, so the
 * span lists its write leaves must fit (else `dev`'s copy is made whole first). A device
 * copy is allocated in any case. */
xo_status xo__buffer_prepare(xo_buffer *b, int dev, size_t lo, size_t hi, int need, int write);
/* After an op on `dev` wrote [lo, hi) of `b` (prepared with write = 1): a whole copy stays
 * the only current one (xo__buffer_mark_written); a partial one adds the span, which the
 * others lose. */
void xo__buffer_wrote(xo_buffer *b, int dev, size_t lo, size_t hi);
/* Free the span lists (xo_buffer_destroy). */
void xo__buffer_spans_free(xo_buffer *b);

/* Run one described op on device `dev` (operands given as buffers + element offsets),
 * bypassing placement: used by calibration. Residency is handled as for any op. */
xo_status xo__run_on(xo_context *ctx, int dev, xo_op_desc *desc, xo_buffer *const bufs[XO_MAX_ARGS]);

/* This thread's op-counter slot in ctx (xo__record_ran's stat_slot), or -1. */
int xo__thread_stat_slot(xo_context *ctx);

/* xo_buffer_write / xo_buffer_read after their checks (a plan's recorded calls). */
xo_status xo__buffer_write_now(xo_buffer *b, size_t offset, const void *src, size_t bytes);
xo_status xo__buffer_read_now(xo_buffer *b, size_t offset, void *dst, size_t bytes);

/* XO_LOG=summary: count this thread's decision-cache hits on ctx not yet counted. */
void xo__dispatch_flush_thread(xo_context *ctx);

/* Force placement to `dev` (-1: auto) without parsing a spec. */
void xo__force_device(xo_context *ctx, int dev);

/* ---- calibration (calibrate.c) ------------------------------------------------- */

typedef void (*xo__progress_fn)(void *user, int dev, const char *step, double fraction);
/* Measure device `dev`'s profile into `out` (its identity copied from ctx->dev[dev].info). */
xo_status xo__calibrate_device(xo_context *ctx, int dev, xo__profile *out,
                               xo__progress_fn progress, void *user);
/* At context creation: for each device load the cached profile, or measure and
 * write it (XO_CALIBRATE), or use defaults; fills ctx->dev[d].profile and the figures
 * of ctx->dev[d].info. `force` re-measures everything (xo calibrate --force). */
xo_status xo__profiles_init(xo_context *ctx, int force, xo__progress_fn progress, void *user);
/* Replace device dev's profile (and the figures of its info), safely while ops run. */
void xo__device_set_profile(xo_context *ctx, int dev, const xo__profile *p);
/* The cached profile's path for device dev; 0 (and "") when there is no cache. */
int xo__profile_path(const xo_context *ctx, int dev, char *out, size_t cap);
/* A context of the library's own: nothing measured at creation, nothing forced. */
xo_status xo__context_create_private(xo_context **out);
/* Profiles that are provisional at creation (no cached profile for a device other than
 * the CPU, or one whose runs disagreed) are measured by a background thread in a private
 * context, then published into ctx and cached. Wait for it (the xo tool does), or stop it
 * (xo_context_destroy: cancels between two measurement runs). */
void xo__background_start(xo_context *ctx);
void xo__background_wait(xo_context *ctx);
void xo__background_stop(xo_context *ctx);
/* Measure now, in the background thread, every device whose profile is a stand-in or
 * untrusted, those on the host's cores included (they are not measured beside the
 * program); waits for it. For the xo tool (xo info). */
void xo__background_measure_all(xo_context *ctx);
/* XO_LOG=summary: a line saying that this run overlapped a background measurement
 * (how many devices, how long); 0 when none ran. */
int xo__background_overlap(const xo_context *ctx, char *out, size_t cap);
/* The issue cost of device `dev` (xo__profile.issue_us): the calling thread's time per
 * launch of batches of 1-element saxpys resident there, not waited for. 0 for the CPU, a
 * device on the host's cores (its queue shares the host's cores: placement prices it as
 * before), or one whose issue is not under `launch_us` (the host waits for each op). */
xo_status xo__measure_issue(xo_context *ctx, int dev, double launch_us, double *out_us);
/* XO_ERR_DEVICE when the calibration running in ctx is to stop, else XO_OK. */
xo_status xo__calibration_cancelled(const xo_context *ctx);
/* At xo_context_destroy: a cached profile that the program's own timings contradict (its
 * settled correction factors are mostly beyond 4x) is marked provisional in its file,
 * so the next context measures it again. */
void xo__profiles_crosscheck(xo_context *ctx);
/* After a measurement: count it as untrustworthy (after `prev`, the profile it replaces,
 * or NULL) and keep it as final once XO_UNTRUSTED_MAX in a row were. */
void xo__profile_settle(xo__profile *p, const xo__profile *prev);
/* 1 for a device other than the CPU plugin whose compute units are the host's cores
 * (an OpenCL CPU device such as PoCL): it competes with the CPU for them. */
int xo__device_on_host_cores(const xo_device_info *info);
/* Placement sends an op to a device on the host's cores only when its expected finish
 * is at most this fraction of the CPU's (place.c). */
#define XO_HOST_CORES_MARGIN 0.5
/* The median of device dev's settled correction factors (cells with 4 or more ratios,
 * size class >= min_cls); returns how many cells settled (0: *median = 1). */
int xo__correction_settled(xo__correction *c, int dev, int min_cls, double *median);
/* Explicitly re-calibrate (for `xo calibrate`): like profiles_init with progress. */
xo_status xo__calibrate_all(xo_context *ctx, int force, xo__progress_fn progress, void *user);

/* ---- for the xo tool ----------------------------------------------------------- */

/* Describe an op by name and dims as `xo explain` takes them ("sgemm 256 256 256",
 * "sgemv 100 3", "saxpy 1000000", "sunary 4096", ...), residency: all operands current
 * on `resident` (0 = host). Returns XO_ERR_INVALID_ARGUMENT on an unknown op or bad dims. */
xo_status xo__describe_op(const char *op, int ndims, const size_t *dims, int resident,
                          xo__op_cost *out);
/* Profile of device `dev` of `ctx`. */
const xo__profile *xo__device_profile(const xo_context *ctx, int dev);

#endif /* XO_INTERNAL_H */
