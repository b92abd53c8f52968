/* The CPU plugin: device 0, the host. Operands are host memory; ops run on the
 * calling thread (OpenBLAS, or our loops on a small pool). */
#include "cpu_internal.h"
#include "cpu_coretype.h"

#include <cblas.h>
#include "cpu_openblas.h" /* after cblas.h: how OpenBLAS is reached */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XO_CPU_MAX_THREADS 64

typedef struct cpu_state {
    const xo_plugin_host *host;
    xo__cpu_pool *pool;
    xo_device_info info;
} cpu_state;

/* "model name : Intel(R) Xeon(R) ..." from /proc/cpuinfo, where there is one. */
static void cpuinfo_field(const char *key, char *out, size_t cap)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, strlen(key)) != 0)
            continue;
        const char *v = strchr(line, ':');
        if (!v)
            continue;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        snprintf(out, cap, "%s", v);
        out[strcspn(out, "\n")] = '\0';
        break;
    }
    if (f)
        fclose(f);
}

/* "OpenBLAS 0.3.21 Cooperlake, 2 threads": the library, the kernels it runs (its core)
 * and the thread count, which together decide the CPU's speed, so the profile cache is
 * keyed on them (a profile never outlives the BLAS it measured). Warns, once per process,
 * when the core is far below what the CPU supports, with the fix (cpu_coretype.c). */
static void blas_identity(const xo_plugin_host *host, int threads, char *out, size_t cap)
{
    /* "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." -> "OpenBLAS 0.3.21" */
    const char *cfg = openblas_get_config();
    size_t words = 0, len = 0;
    for (; cfg && cfg[len] && len < 24; len++)
        if (cfg[len] == ' ' && ++words == 2)
            break;
    const char *core = openblas_get_corename();
    if (!core)
        core = "unknown";
    snprintf(out, cap, "%.*s %.20s, %d thread%s", (int)len, cfg ? cfg : "OpenBLAS", core, threads,
             threads == 1 ? "" : "s");
    static atomic_int warned;
    char advice[512];
    if (xo__openblas_core_advice(advice, sizeof advice) && !atomic_exchange(&warned, 1))
        host->log(XO_LOG_WARN, "%s", advice);
}

/* OpenBLAS's thread count belongs to the process: the application's own cblas_* calls
 * run with it too. So crossover takes the count the application set (OPENBLAS_NUM_THREADS,
 * OMP_NUM_THREADS, or openblas_set_num_threads before the first context; else OpenBLAS's
 * default, all cores) and changes it only when XO_THREADS asks for another. The count it
 * found goes back when the last CPU device closes, unless the application set one of its
 * own meanwhile. */
static pthread_mutex_t app_threads_lock = PTHREAD_MUTEX_INITIALIZER;
static int app_threads_users; /* CPU devices open in this process */
static int app_threads;       /* the count found when the first one opened */
static int our_threads;       /* the count the last one to open set (0: none set) */

/* The thread count this device runs with: `asked` (XO_THREADS; 0 when not set) or the
 * application's. */
static int threads_open(int asked)
{
    pthread_mutex_lock(&app_threads_lock);
    int now = openblas_get_num_threads();
    if (app_threads_users++ == 0) {
        app_threads = now;
        our_threads = 0;
    }
    int threads = asked > 0 ? asked : now;
    threads = threads < 1 ? 1 : threads > XO_CPU_MAX_THREADS ? XO_CPU_MAX_THREADS : threads;
    if (asked > 0 && threads != now) { /* the application's count is never touched unasked */
        openblas_set_num_threads(threads);
        our_threads = threads;
    }
    pthread_mutex_unlock(&app_threads_lock);
    return threads;
}

static void threads_close(void)
{
    pthread_mutex_lock(&app_threads_lock);
    if (--app_threads_users == 0 && our_threads != 0 && openblas_get_num_threads() == our_threads)
        openblas_set_num_threads(app_threads);
    pthread_mutex_unlock(&app_threads_lock);
}

static xo_status cpu_init(const xo_plugin_host *host, void **out_state, int *out_ndevices)
{
    cpu_state *s = calloc(1, sizeof *s);
    if (!s)
        return host->set_error(XO_ERR_OUT_OF_MEMORY, "cpu plugin: out of host memory");
    s->host = host;
    /* OpenBLAS and our pool never run at once within one op, and both use this count. */
    int threads = threads_open(host->threads);
    if (xo__cpu_pool_create(threads, &s->pool) != XO_OK) {
        threads_close();
        free(s);
        return host->set_error(XO_ERR_OUT_OF_MEMORY, "cpu plugin: cannot create its thread pool");
    }
    snprintf(s->info.name, sizeof s->info.name, "host CPU");
    cpuinfo_field("model name", s->info.name, sizeof s->info.name);
    snprintf(s->info.vendor, sizeof s->info.vendor, "unknown");
    cpuinfo_field("vendor_id", s->info.vendor, sizeof s->info.vendor);
    blas_identity(host, threads, s->info.driver, sizeof s->info.driver);
    snprintf(s->info.plugin, sizeof s->info.plugin, "cpu");
    s->info.kind = XO_DEVICE_CPU;
    s->info.host_unified = 1;
    s->info.fp64 = 1;
    *out_state = s;
    *out_ndevices = 1;
    return XO_OK;
}

static void cpu_shutdown(void *state)
{
    cpu_state *s = state;
    if (!s)
        return;
    xo__cpu_pool_destroy(s->pool);
    threads_close();
    free(s);
}

static xo_status cpu_device_info(void *state, int dev, xo_device_info *out)
{
    cpu_state *s = state;
    if (dev != 0)
        return s->host->set_error(XO_ERR_INVALID_ARGUMENT, "cpu plugin: no device %d", dev);
    *out = s->info;
    return XO_OK;
}

/* Every op kind, one entry each, by family: cpu_blas.c, cpu_elementwise.c,
 * cpu_reduce.c, cpu_fused.c. The CPU runs every op (the core's fallback device). */
static const xo__cpu_op_fn cpu_ops[] = {
    [XO_OP_GEMM] = xo__cpu_gemm_any,
    [XO_OP_GEMV] = xo__cpu_gemv_any,
    [XO_OP_AXPY] = xo__cpu_axpy,
    [XO_OP_SCAL] = xo__cpu_scal,
    [XO_OP_DOT] = xo__cpu_dot,
    [XO_OP_NRM2] = xo__cpu_nrm2,
    [XO_OP_UNARY] = xo__cpu_unary,
    [XO_OP_BINARY] = xo__cpu_binary,
    [XO_OP_BIAS] = xo__cpu_bias,
    [XO_OP_REDUCE] = xo__cpu_reduce,
    [XO_OP_COPY] = xo__cpu_copy,
    [XO_OP_FILL] = xo__cpu_fill,
    [XO_OP_AXPBY] = xo__cpu_axpby,
    [XO_OP_GER] = xo__cpu_ger,
    [XO_OP_BINARY_SCALAR] = xo__cpu_binary_scalar,
    [XO_OP_SCALE_BY] = xo__cpu_scale_by,
    [XO_OP_SOFTMAX] = xo__cpu_softmax,
    [XO_OP_REDUCE_AXIS] = xo__cpu_reduce_axis,
    [XO_OP_GEMM_BIAS_ACT] = xo__cpu_gemm_bias_act,
    [XO_OP_SOFTMAX_XENT] = xo__cpu_softmax_xent,
    [XO_OP_ARGMAX] = xo__cpu_argmax,
};
/* A kind appended to XO_OP_MAP without its row here fails to compile; one left out in
 * the middle is a NULL entry, which test_optable finds (every kind runs on the CPU). */
_Static_assert(sizeof cpu_ops / sizeof *cpu_ops == XO_OP_KIND_COUNT, "a CPU entry for every op kind");

static xo_status cpu_run(void *state, int dev, const xo_op_desc *op, uint64_t token)
{
    (void)dev;
    (void)token;
    cpu_state *s = state;
    if ((unsigned)op->kind >= XO_OP_KIND_COUNT || !cpu_ops[op->kind])
        return s->host->set_error(XO_ERR_UNSUPPORTED, "cpu plugin: op kind %d has no entry", (int)op->kind);
    return cpu_ops[op->kind](s->host, s->pool, op);
}

static int cpu_supports(void *state, int dev, const xo_op_desc *op)
{
    (void)state;
    (void)dev;
    return (unsigned)op->kind < XO_OP_KIND_COUNT && cpu_ops[op->kind] != NULL;
}

static xo_status cpu_finish(void *state, int dev)
{
    (void)state;
    (void)dev;
    return XO_OK; /* ops complete before run() returns */
}

/* The host BLAS entries (xo_host_blas): OpenBLAS itself, for the core's express path, and
 * computing what run_blas computes for the same op (small gemms by cpu_small.c). */
_Static_assert(sizeof(blasint) == sizeof(int), "the host BLAS entries pass int dimensions to OpenBLAS");
#define ORDER(x) ((enum CBLAS_ORDER)(x))
#define TRANS(x) ((enum CBLAS_TRANSPOSE)(x))
static void host_sgemm(xo_layout layout, xo_transpose ta, xo_transpose tb, int m, int n, int k, float alpha,
                       const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc)
{
    if (!xo__cpu_small_gemm(XO_F32, layout, ta, tb, (size_t)m, (size_t)n, (size_t)k, alpha, a, (size_t)lda, b,
                            (size_t)ldb, beta, c, (size_t)ldc) &&
        !xo__cpu_tiled_gemm(NULL, XO_F32, layout, ta, tb, (size_t)m, (size_t)n, (size_t)k, alpha, a, (size_t)lda, b,
                            (size_t)ldb, beta, c, (size_t)ldc, NULL, XO_IDENTITY))
        cblas_sgemm(ORDER(layout), TRANS(ta), TRANS(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
static void host_dgemm(xo_layout layout, xo_transpose ta, xo_transpose tb, int m, int n, int k, double alpha,
                       const double *a, int lda, const double *b, int ldb, double beta, double *c, int ldc)
{
    if (!xo__cpu_small_gemm(XO_F64, layout, ta, tb, (size_t)m, (size_t)n, (size_t)k, alpha, a, (size_t)lda, b,
                            (size_t)ldb, beta, c, (size_t)ldc) &&
        !xo__cpu_tiled_gemm(NULL, XO_F64, layout, ta, tb, (size_t)m, (size_t)n, (size_t)k, alpha, a, (size_t)lda, b,
                            (size_t)ldb, beta, c, (size_t)ldc, NULL, XO_IDENTITY))
        cblas_dgemm(ORDER(layout), TRANS(ta), TRANS(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
static void host_sgemv(xo_layout layout, xo_transpose ta, int m, int n, float alpha, const float *a, int lda,
                       const float *x, int incx, float beta, float *y, int incy)
{
    if (m < 1 || n < 1 || incx < 1 || incy < 1 || /* BLAS's backward increments stay with OpenBLAS */
        !xo__cpu_small_gemv(XO_F32, layout, ta, (size_t)m, (size_t)n, alpha, a, (size_t)lda, x, (size_t)incx, beta, y,
                            (size_t)incy))
        cblas_sgemv(ORDER(layout), TRANS(ta), m, n, alpha, a, lda, x, incx, beta, y, incy);
}
static void host_dgemv(xo_layout layout, xo_transpose ta, int m, int n, double alpha, const double *a, int lda,
                       const double *x, int incx, double beta, double *y, int incy)
{
    if (m < 1 || n < 1 || incx < 1 || incy < 1 || /* BLAS's backward increments stay with OpenBLAS */
        !xo__cpu_small_gemv(XO_F64, layout, ta, (size_t)m, (size_t)n, alpha, a, (size_t)lda, x, (size_t)incx, beta, y,
                            (size_t)incy))
        cblas_dgemv(ORDER(layout), TRANS(ta), m, n, alpha, a, lda, x, incx, beta, y, incy);
}
/* axpy: the plugin's loop on this thread (run()'s, without its pool), not OpenBLAS's, whose
 * threads spin after a long axpy on the cores the pool needs (cpu_elementwise.c). */
static void host_saxpy(int n, float alpha, const float *x, int incx, float *y, int incy)
{
    if (n < 1 || incx < 1 || incy < 1) /* BLAS's backward increments stay with OpenBLAS */
        cblas_saxpy(n, alpha, x, incx, y, incy);
    else
        xo__cpu_axpy_here(XO_F32, (size_t)n, alpha, x, (size_t)incx, y, (size_t)incy);
}
static void host_daxpy(int n, double alpha, const double *x, int incx, double *y, int incy)
{
    if (n < 1 || incx < 1 || incy < 1)
        cblas_daxpy(n, alpha, x, incx, y, incy);
    else
        xo__cpu_axpy_here(XO_F64, (size_t)n, alpha, x, (size_t)incx, y, (size_t)incy);
}
static const xo_host_blas cpu_host_blas = {
    .sgemm = host_sgemm,
    .dgemm = host_dgemm,
    .sgemv = host_sgemv,
    .dgemv = host_dgemv,
    .saxpy = host_saxpy,
    .daxpy = host_daxpy,
};

/* The "xo_chain" extra: a plan's element-wise chains as one blocked pass (cpu_chain.c).
 * Asked for its one device, it refuses chains too short for fusion to pay here; asked
 * with dev < 0 (plugin.h: a simulated device computing through this runner), only
 * whether it can compute the shape. */
static int cpu_chain_supports(void *state, int dev, const xo_chain *chain)
{
    (void)state;
    return xo__cpu_chain_supports(chain, dev < 0 ? 0 : xo__cpu_chain_min_n);
}

static xo_status cpu_chain_run(void *state, int dev, const xo_chain *chain, uint64_t token)
{
    (void)dev;
    (void)token;
    cpu_state *s = state;
    return xo__cpu_chain_run(s->host, s->pool, chain);
}

static const xo_chain_runner cpu_chain = {
    .supports = cpu_chain_supports,
    .run = cpu_chain_run,
};

/* The "xo_resolve" extra: a plan's small gemm, or gemm_bias_act with one line of C (which
 * xo__cpu_gemm_bias_act runs wholly in these kernels), resolved once to the loop that runs
 * it (cpu_small.c); replays then call the loop with the operands' addresses alone, without
 * run()'s dispatch and the kernel's choice (xo_small_gemm on a 2-core Zen 4, 1x100x3: the
 * call resolved at 9.0-9.6 ns against 15.7-16.0 through xo__cpu_small_gemm, libxsmm's JIT
 * kernel 9.5; docs/bench.md, "Issue 30, tenth pass"). */
_Static_assert(sizeof(xo__cpu_small_call) <= sizeof(((xo_resolved *)0)->state.bytes), "a small call fits a resolved op");
static void cpu_resolved_run(const xo_resolved *r, const xo_op_desc *op)
{
    xo__cpu_small_call call;
    memcpy(&call, r->state.bytes, sizeof call);
    xo__cpu_small_run(&call, xo__cpu_ptr(op, 0), xo__cpu_ptr(op, 1), xo__cpu_ptr(op, 2),
                      op->narg == 4 ? xo__cpu_ptr(op, 3) : NULL);
}

static int cpu_resolve(void *state, int dev, const xo_op_desc *op, xo_resolved *out)
{
    (void)state;
    (void)dev;
    int act = XO_IDENTITY;
    if (op->kind == XO_OP_GEMM_BIAS_ACT) {
        if ((op->layout == XO_ROW_MAJOR ? op->m : op->n) != 1) /* more lines: the product, then the epilogue's loops */
            return 0;
        act = op->subop;
    } else if (op->kind != XO_OP_GEMM) {
        return 0;
    }
    xo__cpu_small_call call;
    if (!xo__cpu_small_resolve(op->dtype, op->layout, op->ta, op->tb, op->m, op->n, op->k, op->alpha, op->ld[0],
                               op->ld[1], op->beta, op->ld[2], op->narg == 4, act, &call))
        return 0;
    out->run = cpu_resolved_run;
    memcpy(out->state.bytes, &call, sizeof call);
    return 1;
}

static const xo_resolver cpu_resolver = {.resolve = cpu_resolve};

/* The extras of this plugin: its host BLAS entries, for the core's fast path, its chain
 * runner and its resolver, for plans. */
static const void *cpu_get_proc_address(const char *name)
{
    if (strcmp(name, "xo_host_blas") == 0)
        return &cpu_host_blas;
    if (strcmp(name, "xo_resolve") == 0)
        return &cpu_resolver;
    return strcmp(name, "xo_chain") == 0 ? &cpu_chain : NULL;
}

static const xo_plugin cpu_plugin = {
    .api_version = XO_PLUGIN_API_VERSION,
    .name = "cpu",
    .init = cpu_init,
    .shutdown = cpu_shutdown,
    .device_info = cpu_device_info,
    .supports = cpu_supports,
    .mem_alloc = NULL,
    .mem_free = NULL,
    .upload = NULL,
    .download = NULL,
    .run = cpu_run,
    .finish = cpu_finish,
    .drain_timings = NULL,
    .get_proc_address = cpu_get_proc_address,
};


const xo_plugin *xo_plugin_cpu(void);
const xo_plugin *xo_plugin_cpu(void) { return &cpu_plugin; }
