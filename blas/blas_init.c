/* The drop-in's context, the size thresholds the cost model gives, the placed path's
 * wrapping of the caller's memory, and the call counts printed at exit. */
#include "xo_blas.h"
#include "xo_env.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

XO_HIDDEN xo__blas_state xo__blas; /* small[][] = 0: every call takes the slow path until set up */
static xo_context *g_ctx;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static const char *const kind_names[XO_BLAS_KINDS] = {"gemm", "gemv", "ger", "axpy", "axpby",
                                                      "scal", "copy", "dot", "nrm2"};

/* ---- thresholds from the cost model --------------------------------------------------- */

/* One op of size s as the model sees a BLAS call: every input current on the host only
 * (the caller may have changed it since the last call), the result coming back. C and y
 * are taken as not read (beta == 0): the cheapest case for a device, so the threshold is
 * a lower bound for every call of that work. */
static int describe(xo__blas_kind kind, xo_dtype dt, double s, xo__op_cost *c, double *work, double *out_bytes)
{
    size_t n = (size_t)s, el = dt == XO_F64 ? 8 : 4;
    double in[2] = {0, 0}, out = 0;
    switch (kind) {
    case XO_BLAS_GEMM:
        xo__op_cost_init(c, XO_OP_GEMM, dt, n, n, n);
        *work = (double)n * n * n;
        in[0] = in[1] = out = (double)(n * n * el);
        break;
    case XO_BLAS_GEMV:
        xo__op_cost_init(c, XO_OP_GEMV, dt, n, n, 0);
        *work = (double)n * n;
        in[0] = (double)(n * n * el);
        in[1] = out = (double)(n * el);
        break;
    case XO_BLAS_GER: /* A += alpha x y^T: A, x and y up, A back */
        xo__op_cost_init(c, XO_OP_GER, dt, n, n, 0);
        *work = (double)n * n;
        in[0] = out = (double)(n * n * el);
        in[1] = (double)(2 * n * el);
        break;
    case XO_BLAS_AXPY:
    case XO_BLAS_AXPBY:
    case XO_BLAS_SCAL:
    case XO_BLAS_COPY:
    case XO_BLAS_DOT:
    case XO_BLAS_NRM2: {
        static const xo_op_kind op[] = {[XO_BLAS_AXPY] = XO_OP_AXPY, [XO_BLAS_AXPBY] = XO_OP_AXPBY,
                                        [XO_BLAS_SCAL] = XO_OP_SCAL, [XO_BLAS_COPY] = XO_OP_COPY,
                                        [XO_BLAS_DOT] = XO_OP_DOT,   [XO_BLAS_NRM2] = XO_OP_NRM2};
        xo__op_cost_init(c, op[kind], dt, 0, n, 0);
        *work = (double)n;
        in[0] = (double)(n * el);
        in[1] = kind == XO_BLAS_AXPY || kind == XO_BLAS_DOT ? in[0] : 0; /* axpby's y: beta == 0 */
        out = kind == XO_BLAS_DOT || kind == XO_BLAS_NRM2 ? (double)el : in[0];
        break;
    }
    default:
        return 0;
    }
    c->noperands = 0;
    for (int i = 0; i < 2; i++)
        if (in[i] > 0) {
            c->operand[c->noperands].bytes = in[i];
            c->operand[c->noperands].valid = 1u;
            c->noperands++;
        }
    *out_bytes = out;
    return 1;
}

/* The largest work at which the CPU (prof[0]) still wins against every other device of
 * prof[0..ndev). */
static double small_work(const xo__profile *prof, int ndev, xo__blas_kind kind, xo_dtype dt)
{
    double below = 0, limit = kind == XO_BLAS_GEMM                          ? 1 << 15
                              : kind == XO_BLAS_GEMV || kind == XO_BLAS_GER ? 1 << 17
                                                                            : 1u << 31;
    for (double s = 1; s < limit; s = ceil(s * 1.125)) {
        xo__op_cost c;
        double work = 0, out = 0;
        if (!describe(kind, dt, s, &c, &work, &out))
            return INFINITY;
        xo_estimate cpu, dev;
        xo__estimate(prof, ndev, 0, &c, 1.0, &cpu);
        for (int d = 1; d < ndev; d++) {
            if (dt == XO_F64 && !prof[d].info.fp64)
                continue;
            xo__estimate(prof, ndev, d, &c, 1.0, &dev);
            /* dispatch leaves the host only for a device clearly cheaper (0.9) */
            if (dev.total_us + xo__d2h_us(&prof[d], out) <= 0.9 * cpu.total_us)
                return below;
        }
        below = work;
    }
    return INFINITY;
}

static int log_wants_counts(void)
{
    const char *v = getenv("XO_LOG");
    static const char *const counting[] = {"summary", "info", "decisions", "debug"};
    for (size_t i = 0; v && i < sizeof counting / sizeof counting[0]; i++)
        if (strcasecmp(v, counting[i]) == 0)
            return 1;
    return 0;
}

static void print_summary(void);

static void publish(double small[XO_BLAS_KINDS][2], const char *basis)
{
    for (int k = 0; k < XO_BLAS_KINDS; k++) {
        xo__log(XO_LOG_INFO, "crossover_blas: %s leaves the CPU above work %g (float) / %g (double)%s", kind_names[k],
                small[k][0], small[k][1], basis);
        for (int dt = 0; dt < 2; dt++)
            atomic_store_explicit(&xo__blas.small[k][dt], small[k][dt], memory_order_release);
    }
}

/* ---- start, in two steps -------------------------------------------------------------
 * 1. At the first call, without a context: what XO_DEVICE and XO_BLAS_PLACE ask, else the
 *    thresholds the cost model gives on the built-in default profiles of every kind of
 *    device a plugin could bring (a CUDA or OpenCL GPU, an accelerator, an OpenCL CPU
 *    device). Under them no device could plausibly win, and calls go straight to the CPU
 *    BLAS: a program whose calls all stay small (numpy's import: one cblas_sdot) never
 *    builds a context, never starts a device runtime.
 * 2. At the first call over them: the context (device discovery, profiles, calibration)
 *    and the thresholds of the devices found. */

static pthread_once_t g_first = PTHREAD_ONCE_INIT;
static int g_place_all; /* XO_BLAS_PLACE=all: every call through crossover */

/* XO_DEVICE names the CPU: only the host runs anything, so every call goes straight to
 * the CPU BLAS (crossover's CPU device computes with it too). Other specs are resolved by
 * the context. */
static int forced_cpu(const char *spec) { return spec && strcasecmp(spec, "cpu") == 0; }

static void first_call(void)
{
    /* the environment as a context reads it (XO_LOG, XO_DEVICE), without making one */
    xo__env env;
    const char *place = getenv("XO_BLAS_PLACE"), *device = NULL;
    if (xo__env_read(&env) == XO_OK) {
        atomic_store(&xo__log_level, env.log_level);
        device = strcasecmp(env.device, "auto") == 0 ? NULL : env.device;
    }
    g_place_all = place && strcasecmp(place, "all") == 0;
    if (place && !g_place_all && strcasecmp(place, "auto") != 0)
        fprintf(stderr, "crossover_blas: XO_BLAS_PLACE=%s is neither auto nor all; auto\n", place);
    int counting = log_wants_counts();
    atomic_store(&xo__blas.counting, counting);
    if (counting)
        atexit(print_summary);
    double small[XO_BLAS_KINDS][2];
    static const struct { xo_device_kind kind; const char *plugin; } kinds[] = {
        {XO_DEVICE_GPU, "cuda"}, {XO_DEVICE_GPU, "opencl"}, {XO_DEVICE_GPU, NULL},
        {XO_DEVICE_ACCELERATOR, NULL}, {XO_DEVICE_CPU, "opencl"}};
    enum { NKINDS = sizeof kinds / sizeof kinds[0] };
    xo__profile prof[1 + NKINDS];
    xo__profile_defaults(XO_DEVICE_CPU, "cpu", &prof[0]);
    for (int i = 0; i < NKINDS; i++)
        xo__profile_defaults(kinds[i].kind, kinds[i].plugin, &prof[1 + i]);
    for (int k = 0; k < XO_BLAS_KINDS; k++)
        for (int dt = 0; dt < 2; dt++)
            small[k][dt] = g_place_all || (device && device[0] && !forced_cpu(device)) ? 0
                           : forced_cpu(device) || !xo__blas_lib_ok ? INFINITY
                           : small_work(prof, 1 + NKINDS, (xo__blas_kind)k, (xo_dtype)dt);
    publish(small, " (built-in profiles: no context yet)");
}

void xo__blas_first_call(void) { pthread_once(&g_first, first_call); }

static void set_up(void)
{
    double small[XO_BLAS_KINDS][2];
    for (int k = 0; k < XO_BLAS_KINDS; k++)
        small[k][0] = small[k][1] = INFINITY;
    xo_context *ctx = NULL;
    xo_status st = xo__blas_lib_ok ? xo_context_create(&ctx) : XO_ERR_NO_DEVICE;
    if (st != XO_OK && xo__blas_lib_ok)
        fprintf(stderr, "crossover_blas: no crossover context (%s: %s); every call goes to the CPU BLAS\n",
                xo_status_string(st), xo_last_error());
    if (st == XO_OK) {
        static const xo_op_kind op[XO_BLAS_KINDS] = {
            [XO_BLAS_GEMM] = XO_OP_GEMM, [XO_BLAS_GEMV] = XO_OP_GEMV,   [XO_BLAS_GER] = XO_OP_GER,
            [XO_BLAS_AXPY] = XO_OP_AXPY, [XO_BLAS_AXPBY] = XO_OP_AXPBY, [XO_BLAS_SCAL] = XO_OP_SCAL,
            [XO_BLAS_COPY] = XO_OP_COPY, [XO_BLAS_DOT] = XO_OP_DOT,     [XO_BLAS_NRM2] = XO_OP_NRM2};
        int forced = atomic_load(&ctx->forced);
        xo__profile prof[XO_MAX_DEVICES];
        for (int d = 0; d < ctx->ndev; d++)
            prof[d] = ctx->dev[d].profile;
        for (int k = 0; k < XO_BLAS_KINDS; k++)
            for (int dt = 0; dt < 2; dt++)
                small[k][dt] = g_place_all ? 0
                               /* XO_DEVICE: what the forced device runs goes there, the rest
                                * (the CPU forced, or an op it lacks) straight to the CPU BLAS */
                               : forced >= 0 ? (forced > 0 &&
                                                        xo__dev_support(ctx, forced,
                                                                        &(xo_op_desc){.kind = op[k],
                                                                                      .dtype = (xo_dtype)dt}) ==
                                                            XO_SUPPORT_YES
                                                    ? 0
                                                    : INFINITY)
                               : ctx->ndev == 1 ? INFINITY
                                                : small_work(prof, ctx->ndev, (xo__blas_kind)k, (xo_dtype)dt);
    }
    g_ctx = ctx;
    publish(small, st == XO_OK ? " (the devices found)" : " (no context)");
}

xo_context *xo__blas_context(void)
{
    pthread_once(&g_once, set_up);
    return g_ctx;
}

/* ---- the placed path ----------------------------------------------------------------- */

xo_status xo__blas_wrap(xo__blas_call *call, int n, ...)
{
    call->n = 0;
    va_list ap;
    va_start(ap, n);
    xo_status st = XO_OK;
    for (int i = 0; i < n && st == XO_OK; i++) {
        void *p = va_arg(ap, void *);
        size_t bytes = va_arg(ap, size_t);
        st = xo_buffer_wrap(call->ctx, p, bytes, &call->buf[i]);
        call->n += st == XO_OK;
    }
    va_end(ap);
    return st;
}

int xo__blas_finish(xo__blas_call *call, xo_status st, int out, xo__blas_kind kind, xo_dtype dt, xo__blas_abi abi)
{
    if (st == XO_OK)
        st = xo_buffer_sync(call->buf[out]);
    int dev = -1;
    int counting = atomic_load_explicit(&xo__blas.counting, memory_order_relaxed);
    if (st == XO_OK && counting) {
        xo_decision d;
        if (xo_last_decision(call->ctx, &d) == XO_OK)
            dev = d.device;
    }
    for (int i = 0; i < call->n; i++)
        xo_buffer_destroy(call->buf[i]);
    if (st != XO_OK) {
        xo__log(XO_LOG_WARN, "crossover_blas: %s not placed (%s: %s); the CPU BLAS runs it", kind_names[kind],
                xo_status_string(st), xo_last_error());
        dev = -1;
    }
    if (counting)
        atomic_fetch_add_explicit(&xo__blas.calls[kind][dt][abi][dev + 1], 1, memory_order_relaxed);
    return st == XO_OK;
}

/* ---- XO_LOG=summary ------------------------------------------------------------------- */

/* At exit: calls per routine and ABI, straight to the CPU BLAS and per device. The
 * context is not destroyed here: other threads may still be in a BLAS call. */
static void print_summary(void)
{
    xo_context *ctx = g_ctx;
    int ndev = ctx ? ctx->ndev : 0;
    fprintf(stderr, "crossover_blas summary: calls per routine (direct: too small for any device but the CPU, "
                    "straight to the CPU BLAS)\n  %-8s %-6s %10s", "routine", "abi", "direct");
    for (int d = 0; d < ndev; d++) {
        char name[32];
        snprintf(name, sizeof name, "%d:%s", d, ctx->dev[d].info.plugin);
        fprintf(stderr, " %10s", name);
    }
    fputc('\n', stderr);
    static const char *const abi_names[XO_BLAS_ABIS] = {"f77", "cblas"};
    for (int k = 0; k < XO_BLAS_KINDS; k++)
        for (int dt = 0; dt < 2; dt++)
            for (int abi = 0; abi < XO_BLAS_ABIS; abi++) {
                _Atomic uint64_t *c = xo__blas.calls[k][dt][abi];
                uint64_t total = 0;
                for (int d = 0; d <= ndev; d++)
                    total += atomic_load(&c[d]);
                if (!total)
                    continue;
                fprintf(stderr, "  %c%-7s %-6s %10llu", dt ? 'd' : 's', kind_names[k], abi_names[abi],
                        (unsigned long long)atomic_load(&c[0]));
                for (int d = 0; d < ndev; d++)
                    fprintf(stderr, " %10llu", (unsigned long long)atomic_load(&c[d + 1]));
                fputc('\n', stderr);
            }
}
