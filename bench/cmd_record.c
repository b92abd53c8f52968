/* xo record [--out FILE] [--profiles DIR] [--quick]: record this machine as a machine file
 * (docs/machines/README.md) that XO_SIMULATE replays: every device's profile, written
 * beside the file, and what the placement model does not contain, measured here:
 *   kernel rows  each op kind's time by size and dtype: the device's own timing (busy
 *                time from OpenCL profiling events / CUDA events through drain_timings)
 *                on asynchronous devices, wall time of the call on the CPU; the CPU's
 *                rows also with one thread (THREADS column) when it runs more;
 *   issue_us     the calling thread's cost of one asynchronous launch (a forced 1-element
 *                saxpy through the public call, placement and op path included);
 *   wait_us      xo_finish once the queue has drained / while it still holds work;
 *   transfer     pageable moves by size (the core's buffers; no plugin offers pinned ones);
 *   graph_us     a plan's launch per segment and per node, where a device has graphs.
 * Progress goes to stderr; the file is written only when every measurement succeeded. */
#include "xo_tool.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int openblas_get_num_threads(void); /* OpenBLAS: the CPU rows' thread count */

typedef struct recorder {
    xo_context *ctx;
    int quick;
    FILE *f;
    double point_us; /* time to spend on one kernel point */
    double cut_us;   /* no larger size once one run takes longer than this */
    const char *one_thread; /* the CPU's kernel rows with one thread, measured first */
} recorder;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- one op of each kind at a size -------------------------------------------------- */

/* The op kinds and how their SIZE (machine file: cbrt(m n k) for the cubic ones, the
 * elements otherwise) maps to dimensions: cubic m = n = k = size; matrix ops square
 * rows x cols; vector ops n = size. */
typedef enum { SHAPE_CUBE, SHAPE_MATRIX, SHAPE_VECTOR } shape;

static shape kind_shape(xo_op_kind k)
{
    switch (k) {
    case XO_OP_GEMM:
    case XO_OP_GEMM_BIAS_ACT: return SHAPE_CUBE;
    case XO_OP_GEMV:
    case XO_OP_GER:
    case XO_OP_BIAS:
    case XO_OP_SOFTMAX:
    case XO_OP_REDUCE_AXIS:
    case XO_OP_SOFTMAX_XENT: return SHAPE_MATRIX;
    default: return SHAPE_VECTOR;
    }
}

static xo_op_desc op_desc(xo_op_kind kind, xo_dtype dtype, size_t size)
{
    xo_op_desc d = {.kind = kind, .dtype = dtype, .layout = XO_ROW_MAJOR, .ta = XO_NO_TRANS, .tb = XO_NO_TRANS,
                    .alpha = 1.0, .narg = xo__ops[kind].nargs, .inc = {1, 1}};
    shape s = kind_shape(kind);
    if (s == SHAPE_CUBE) {
        d.m = d.n = d.k = size;
        d.ld[0] = d.ld[1] = d.ld[2] = size;
    } else if (s == SHAPE_MATRIX) {
        size_t side = (size_t)llround(sqrt((double)size));
        d.m = d.n = side < 1 ? 1 : side;
        d.ld[0] = d.ld[1] = d.ld[2] = d.n;
    } else {
        d.n = size;
    }
    switch (kind) {
    case XO_OP_UNARY: d.subop = XO_TANH; break;
    case XO_OP_GEMM_BIAS_ACT: d.subop = XO_TANH; break;
    case XO_OP_REDUCE_AXIS: d.axis = 1; break;
    case XO_OP_FILL: d.alpha = 0.0; break;
    case XO_OP_SCAL: d.alpha = -1.0; break; /* 1 may be skipped as a no-op; |alpha| < 1 decays */
    default: break;
    }
    return d;
}

/* The SIZE the simulator looks this op up by. */
static double op_size(const xo_op_desc *d)
{
    xo__op_cost c;
    xo__op_cost_init(&c, d->kind, d->dtype, d->m, d->n, d->k);
    return c.size;
}

static void free_bufs(xo_buffer *b[XO_MAX_ARGS])
{
    for (int i = 0; i < XO_MAX_ARGS; i++) {
        xo_buffer_destroy(b[i]);
        b[i] = NULL;
    }
}

/* Operands for `d`, each large enough whatever its role, holding numbers in [0.5, 1.5):
 * zeros would take kernels' shortcuts (tanh and exp of 0, denormal-free paths) that a
 * program's data does not, and every kind here stays finite when repeated (scale_by's
 * factor is 1, softmax_xent's int32 labels are class 0). */
static xo_status make_bufs(xo_context *ctx, const xo_op_desc *d, xo_buffer *b[XO_MAX_ARGS])
{
    memset(b, 0, sizeof(xo_buffer *) * XO_MAX_ARGS);
    double side = d->m > d->n ? (double)d->m : (double)d->n;
    for (int i = 0; i < d->narg; i++) {
        double el = xo__op_operand_elements(d->kind, i, d->m, d->n, d->k);
        if (el < side) el = side;
        if (el < 1) el = 1;
        size_t n = (size_t)el, bytes = n * 8;
        xo_status s = xo_buffer_create(ctx, bytes, &b[i]);
        int labels = d->kind == XO_OP_SOFTMAX_XENT && i == 1;
        unsigned char *h = s == XO_OK && !labels ? malloc(bytes) : NULL;
        if (h) {
            uint32_t x = 2463534242u + (uint32_t)i;
            for (size_t j = 0; j < n; j++) {
                x ^= x << 13, x ^= x >> 17, x ^= x << 5;
                double v = d->kind == XO_OP_SCALE_BY && i == 0 ? 1.0 : 0.5 + (double)(x >> 8) / (double)(1u << 24);
                if (d->dtype == XO_F64)
                    ((double *)h)[j] = v;
                else
                    ((float *)h)[j] = (float)v;
            }
            s = xo_buffer_write(b[i], 0, h, d->dtype == XO_F64 ? bytes : bytes / 2);
            free(h);
        } else if (s == XO_OK && !labels) {
            s = xo__error(XO_ERR_OUT_OF_MEMORY, "record: out of host memory");
        }
        if (s != XO_OK) {
            free_bufs(b);
            return s;
        }
    }
    return XO_OK;
}

/* One op's time on device `dev`: the mean of a batch, the best of BATCHES batches (the
 * machine's own speed: other work on its cores only ever adds time). The CPU's
 * by wall time (the call on the calling thread), a device's by its own timing (busy time,
 * which the core sums from the plugin's events at xo_finish). *out_us < 0: the device
 * cannot run it. */
static xo_status time_op(recorder *r, int dev, xo_op_desc *d, xo_buffer *b[XO_MAX_ARGS], double *out_us)
{
    xo_context *ctx = r->ctx;
    int async = ctx->dev[dev].async;
    *out_us = -1;
    if (xo__dev_support(ctx, dev, d) != XO_SUPPORT_YES)
        return XO_OK;
    /* warm-up: moves the operands there, builds kernels */
    XO_RETURN_IF_ERROR(xo__run_on(ctx, dev, d, b));
    XO_RETURN_IF_ERROR(xo_finish(ctx));
    double t0 = xo__tool_now_us();
    XO_RETURN_IF_ERROR(xo__run_on(ctx, dev, d, b));
    XO_RETURN_IF_ERROR(xo_finish(ctx));
    double one = xo__tool_now_us() - t0;
    enum { BATCHES = 5 };
    int reps = (int)(r->point_us / BATCHES / (one > 0.5 ? one : 0.5));
    reps = reps < 1 ? 1 : reps > 200 ? 200 : reps;
    double best = -1;
    for (int k = 0; k < BATCHES; k++) {
        XO_RETURN_IF_ERROR(xo_stats_reset(ctx));
        t0 = xo__tool_now_us();
        for (int i = 0; i < reps; i++)
            XO_RETURN_IF_ERROR(xo__run_on(ctx, dev, d, b));
        double wall = xo__tool_now_us() - t0;
        XO_RETURN_IF_ERROR(xo_finish(ctx));
        xo_stats s;
        XO_RETURN_IF_ERROR(xo_stats_get(ctx, dev, &s));
        double us = (async ? s.busy_us : wall) / reps;
        if (best < 0 || us < best)
            best = us;
    }
    *out_us = best;
    return XO_OK;
}

static const size_t vector_sizes[] = {1, 256, 4096, 65536, 1 << 20, 1 << 24};
static const size_t vector_sizes_quick[] = {1, 4096, 65536, 1 << 20};
static const size_t cube_sizes[] = {2, 8, 16, 32, 64, 128, 256, 384, 512, 768, 1024, 1536, 2048};
static const size_t cube_sizes_quick[] = {2, 16, 64, 128, 256, 512};

/* Every kind's rows on device `dev` (threads > 0: the CPU's rows with that many threads,
 * which the THREADS column names). `kernel * DTYPE` rows repeat axpy's: the kinds without
 * rows of their own take them (`kernel * *` single precision's, `kernel * f64` double's). */
static xo_status record_kernels(recorder *r, int dev, int threads)
{
    xo_context *ctx = r->ctx;
    char spec[64];
    xo__tool_device_spec(ctx, dev, spec, sizeof spec);
    char tcol[32] = "";
    if (threads > 0)
        snprintf(tcol, sizeof tcol, " %d", threads);
    int fp64 = ctx->dev[dev].info.fp64;
    for (int dt = 0; dt <= fp64; dt++) {
        for (int kind = -1; kind < XO_OP_KIND_COUNT; kind++) {
            xo_op_kind k = kind < 0 ? XO_OP_AXPY : (xo_op_kind)kind;
            const char *kname = kind < 0 ? "*" : xo__ops[k].name;
            int cube = kind_shape(k) == SHAPE_CUBE;
            const size_t *sizes = cube ? (r->quick ? cube_sizes_quick : cube_sizes)
                                       : (r->quick ? vector_sizes_quick : vector_sizes);
            size_t bytes = cube ? (r->quick ? sizeof cube_sizes_quick : sizeof cube_sizes)
                                : (r->quick ? sizeof vector_sizes_quick : sizeof vector_sizes);
            int nsizes = (int)(bytes / sizeof *sizes);
            fprintf(stderr, "[%s%s%s] kernels %s %s\n", spec, threads > 0 ? ", threads" : "", tcol, kname,
                    dt ? "f64" : "f32");
            for (int i = 0; i < nsizes; i++) {
                xo_op_desc d = op_desc(k, (xo_dtype)dt, sizes[i]);
                xo_buffer *b[XO_MAX_ARGS];
                XO_RETURN_IF_ERROR(make_bufs(ctx, &d, b));
                double us;
                xo_status s = time_op(r, dev, &d, b, &us);
                free_bufs(b);
                XO_RETURN_IF_ERROR(s);
                if (us < 0)
                    break; /* not runnable there: the (*, dtype) rows stand in */
                const char *dtype = dt ? "f64" : kind < 0 ? "*" : "f32";
                fprintf(r->f, "kernel %s %s %.6g %.4g%s\n", kname, dtype, op_size(&d), us, tcol);
                if (us > r->cut_us)
                    break; /* larger sizes: the simulator extrapolates with the work */
            }
        }
    }
    return XO_OK;
}

/* ---- an asynchronous device's host-side costs -------------------------------------- */

static xo_status force(xo_context *ctx, int dev)
{
    char spec[64];
    xo__tool_device_spec(ctx, dev, spec, sizeof spec);
    return xo_set_device(ctx, spec);
}

/* issue_us: the host time of one forced 1-element saxpy whose operands live there, no
 * wait; wait_us: xo_finish once the queue has drained (a sleep later) / at once after a
 * launch, less the launch's device time. */
static xo_status record_host_costs(recorder *r, int dev)
{
    xo_context *ctx = r->ctx;
    xo_buffer *x = NULL, *y = NULL;
    XO_RETURN_IF_ERROR(force(ctx, dev));
    xo_status s = xo_buffer_create(ctx, 4, &x);
    if (s == XO_OK) s = xo_buffer_create(ctx, 4, &y);
    enum { BATCH = 16, ROUNDS = 9 };
    double issue[ROUNDS], empty[ROUNDS], busy[ROUNDS];
    for (int i = -2; s == XO_OK && i < ROUNDS; i++) { /* two rounds of warm-up */
        double t0 = xo__tool_now_us();
        for (int k = 0; s == XO_OK && k < BATCH; k++)
            s = xo_saxpy(ctx, 1, 1.0f, x, 0, 1, y, 0, 1);
        double t1 = xo__tool_now_us();
        if (s == XO_OK) s = xo_finish(ctx);
        if (s == XO_OK) s = xo_stats_reset(ctx);
        if (s == XO_OK) s = xo_saxpy(ctx, 1, 1.0f, x, 0, 1, y, 0, 1);
        usleep(2000);
        double t2 = xo__tool_now_us();
        if (s == XO_OK) s = xo_finish(ctx);
        double t3 = xo__tool_now_us();
        if (s == XO_OK) s = xo_saxpy(ctx, 1, 1.0f, x, 0, 1, y, 0, 1);
        double t4 = xo__tool_now_us();
        if (s == XO_OK) s = xo_finish(ctx);
        double t5 = xo__tool_now_us();
        xo_stats st = {0};
        if (s == XO_OK) s = xo_stats_get(ctx, dev, &st);
        if (i >= 0) {
            issue[i] = (t1 - t0) / BATCH;
            empty[i] = t3 - t2;
            busy[i] = (t5 - t4) - st.busy_us / 2; /* the second launch's own device time */
        }
    }
    xo_buffer_destroy(x);
    xo_buffer_destroy(y);
    xo_status u = xo_set_device(ctx, "auto");
    XO_RETURN_IF_ERROR(s);
    XO_RETURN_IF_ERROR(u);
    qsort(issue, ROUNDS, sizeof *issue, cmp_double);
    qsort(empty, ROUNDS, sizeof *empty, cmp_double);
    qsort(busy, ROUNDS, sizeof *busy, cmp_double);
    double w0 = empty[ROUNDS / 2], w1 = busy[ROUNDS / 2] > w0 ? busy[ROUNDS / 2] : w0;
    fprintf(r->f, "issue_us %.4g\nwait_us %.4g %.4g\n", issue[ROUNDS / 2], w0, w1);
    return XO_OK;
}

/* Host microseconds of one xo_plan_run of a plan of `nodes` sgemm 2x2x2 forced on `dev`
 * (gemms: chains never fuse them), and wall microseconds of `reps` runs and the wait. */
static xo_status time_plan(xo_context *ctx, xo_buffer *const b[3], int nodes, int reps, double *host_us,
                           double *wall_us)
{
    xo_plan *plan = NULL;
    XO_RETURN_IF_ERROR(xo_capture_begin(ctx));
    xo_status s = XO_OK;
    for (int i = 0; s == XO_OK && i < nodes; i++)
        s = xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 2, 2, 2, 1.0f, b[0], 0, 2, b[1], 0, 2, 0.0f, b[2],
                     0, 2);
    xo_status e = xo_capture_end(ctx, &plan);
    XO_RETURN_IF_ERROR(s);
    XO_RETURN_IF_ERROR(e);
    for (int i = 0; s == XO_OK && i < 3; i++) /* warm-up: the graph is recorded at the first run */
        s = xo_plan_run(plan);
    if (s == XO_OK) s = xo_finish(ctx);
    double host = 0, t0 = xo__tool_now_us();
    for (int i = 0; s == XO_OK && i < reps; i++) {
        double h0 = xo__tool_now_us();
        s = xo_plan_run(plan);
        host += xo__tool_now_us() - h0;
    }
    if (s == XO_OK) s = xo_finish(ctx);
    *wall_us = xo__tool_now_us() - t0;
    *host_us = host / reps;
    xo_plan_destroy(plan);
    return s;
}

/* graph_us on a device with graphs (the "xo_graph" extra): the host's cost of a plan's
 * launch of one segment, and the device's per node beyond the node's kernel (the slope
 * of a run's time from 1 to NODES nodes, less the 2x2x2 gemm's own time). A failure
 * leaves the line out (the device then simulates without graphs) and says so. */
static void record_graphs(recorder *r, int dev)
{
    xo_context *ctx = r->ctx;
    if (!xo__dev_graph(ctx, dev))
        return;
    enum { NODES = 64, REPS = 50 };
    xo_op_desc d = op_desc(XO_OP_GEMM, XO_F32, 2);
    xo_buffer *b[XO_MAX_ARGS];
    double node_kernel_us = 0;
    xo_status s = make_bufs(ctx, &d, b);
    if (s == XO_OK) {
        s = time_op(r, dev, &d, b, &node_kernel_us);
        free_bufs(b);
    }
    if (s == XO_OK) s = force(ctx, dev);
    for (int i = 0; s == XO_OK && i < 3; i++)
        s = xo_buffer_create(ctx, 16, &b[i]);
    double h1 = 0, w1 = 0, hn = 0, wn = 0;
    if (s == XO_OK) s = time_plan(ctx, b, 1, REPS, &h1, &w1);
    if (s == XO_OK) s = time_plan(ctx, b, NODES, REPS, &hn, &wn);
    for (int i = 0; i < 3; i++)
        xo_buffer_destroy(b[i]);
    xo_set_device(ctx, "auto");
    if (s != XO_OK) {
        fprintf(stderr, "[device %d] graphs not recorded: %s\n", dev, xo_last_error());
        xo__clear_error();
        return;
    }
    double node = (wn - w1) / ((double)REPS * (NODES - 1)) - node_kernel_us;
    fprintf(r->f, "graph_us %.4g %.4g\n", h1, node > 0 ? node : 0);
}

/* One whole-buffer move each way, timed to completion (as calibration times them). */
static xo_status record_transfers(recorder *r, int dev)
{
    static const size_t sizes[] = {4, 4096, 65536, 1 << 20, 16 << 20};
    static const size_t sizes_quick[] = {4, 65536, 1 << 20, 4 << 20};
    const size_t *sz = r->quick ? sizes_quick : sizes;
    int n = r->quick ? 4 : 5;
    double up[8], down[8];
    for (int i = 0; i < n; i++) {
        xo_buffer *b = NULL;
        XO_RETURN_IF_ERROR(xo_buffer_create(r->ctx, sz[i], &b));
        double tu[5], td[5];
        xo_status s = XO_OK;
        for (int k = -1; s == XO_OK && k < 5; k++) { /* one warm-up: allocates the copy there */
            xo__buffer_mark_written(b, 0);
            double t0 = xo__tool_now_us();
            s = xo__buffer_make_current(b, dev);
            if (s == XO_OK) s = xo_finish(r->ctx);
            double t1 = xo__tool_now_us();
            if (s == XO_OK) xo__buffer_mark_written(b, dev);
            if (s == XO_OK) s = xo__buffer_make_current(b, 0);
            double t2 = xo__tool_now_us();
            if (k >= 0) {
                tu[k] = t1 - t0;
                td[k] = t2 - t1;
            }
        }
        xo_buffer_destroy(b);
        XO_RETURN_IF_ERROR(s);
        qsort(tu, 5, sizeof *tu, cmp_double);
        qsort(td, 5, sizeof *td, cmp_double);
        up[i] = tu[2];
        down[i] = td[2];
    }
    /* a table's times may not fall with size: a later median under an earlier one is noise */
    for (int i = 1; i < n; i++) {
        if (up[i] < up[i - 1]) up[i] = up[i - 1];
        if (down[i] < down[i - 1]) down[i] = down[i - 1];
    }
    for (int i = 0; i < n; i++)
        fprintf(r->f, "transfer h2d pageable %zu %.4g\n", sz[i], up[i]);
    for (int i = 0; i < n; i++)
        fprintf(r->f, "transfer d2h pageable %zu %.4g\n", sz[i], down[i]);
    return XO_OK;
}

/* ---- the file ------------------------------------------------------------------------ */

/* Profile file for device `dev`: DIR/STEM-SPEC.profile, named in the machine file
 * relative to it (`rel`: the profiles' folder as seen from the machine file). */
static xo_status write_profile(recorder *r, int dev, const char *dir, const char *rel, const char *stem)
{
    char spec[64], path[XO_PATH_MAX], name[XO_PATH_MAX];
    xo__tool_device_spec(r->ctx, dev, spec, sizeof spec);
    for (char *c = spec; *c; c++)
        if (*c == ':') *c = '-';
    if (snprintf(name, sizeof name, "%s-%s.profile", stem, spec) >= (int)sizeof name ||
        snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "record: the profile's path is too long");
    XO_RETURN_IF_ERROR(xo__profile_write(path, &r->ctx->dev[dev].profile));
    fprintf(r->f, "\ndevice %s %s%s%s\n", r->ctx->dev[dev].info.plugin, rel, *rel ? "/" : "", name);
    return XO_OK;
}

/* mkdir -p `dir` (a failure shows when the file is opened). */
static void make_dirs(const char *dir)
{
    char p[XO_PATH_MAX];
    snprintf(p, sizeof p, "%s", dir);
    for (char *c = p + 1; *c; c++)
        if (*c == '/') {
            *c = '\0';
            mkdir(p, 0777);
            *c = '/';
        }
    mkdir(p, 0777);
}

static int cpu_threads(void)
{
    int t = openblas_get_num_threads();
    return t < 1 ? 1 : t;
}

/* A context created with XO_THREADS=n and only the CPU (n > 0), or as the user's
 * environment says (n == 0), measuring nothing; the user's values are put back. */
static xo_status context_with_threads(int n, xo_context **out)
{
    const char *keep[3] = {"XO_THREADS", "XO_CALIBRATE", "XO_PLUGINS"};
    char *saved[3];
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(keep[i]);
        saved[i] = v ? strdup(v) : NULL;
    }
    char num[16];
    snprintf(num, sizeof num, "%d", n);
    if (n > 0) {
        setenv("XO_THREADS", num, 1);
        setenv("XO_PLUGINS", "cpu", 1);
    }
    setenv("XO_CALIBRATE", "off", 1);
    xo_status s = xo_context_create(out);
    for (int i = 0; i < 3; i++) {
        if (saved[i]) setenv(keep[i], saved[i], 1);
        else unsetenv(keep[i]);
        free(saved[i]);
    }
    return s;
}

static void calib_progress(void *user, int dev, const char *step, double fraction)
{
    const xo_context *ctx = user;
    char spec[64];
    xo__tool_device_spec(ctx, dev, spec, sizeof spec);
    if (fraction == 0.0 || fraction >= 1.0)
        fprintf(stderr, "[%s] calibrate: %s\n", spec, step ? step : "");
}

static xo_status record(recorder *r, const char *dir, const char *rel, const char *stem)
{
    xo_context *ctx = r->ctx;
    char host[128] = "this machine";
    gethostname(host, sizeof host - 1);
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    int threads = cpu_threads();
    fprintf(r->f, "# crossover machine v1\n"
                  "# Recorded by `xo record%s` (crossover %s) on %s, %s. Kernel rows: the device's own\n"
                  "# timing (busy time from its events) on asynchronous devices, wall time of the call on\n"
                  "# the CPU; transfers pageable (the core's buffers); wait_us: xo_finish with the queue\n"
                  "# drained / still busy (less the launch's device time). Nothing here is edited by hand.\n",
            r->quick ? " --quick" : "", XO_VERSION_STRING, host, date);
    fprintf(r->f, "machine %s: %d devices (", host, ctx->ndev);
    for (int d = 0; d < ctx->ndev; d++)
        fprintf(r->f, "%s%s", d ? " + " : "", ctx->dev[d].info.name);
    fprintf(r->f, "), recorded %s\n", date);
    for (int d = 0; d < ctx->ndev; d++) {
        XO_RETURN_IF_ERROR(write_profile(r, d, dir, rel, stem));
        if (d == 0)
            fprintf(r->f, "threads %d\n", threads);
        else {
            fprintf(stderr, "[device %d] issue and wait\n", d);
            XO_RETURN_IF_ERROR(record_host_costs(r, d));
            fprintf(stderr, "[device %d] transfers\n", d);
            XO_RETURN_IF_ERROR(record_transfers(r, d));
            record_graphs(r, d);
        }
        XO_RETURN_IF_ERROR(record_kernels(r, d, 0));
        if (d == 0 && threads > 1 && r->one_thread && *r->one_thread)
            fprintf(r->f, "# the CPU with 1 thread (kept, not simulated: `threads` is %d)\n%s", threads, r->one_thread);
    }
    return XO_OK;
}

int xo__tool_cmd_record(int argc, char **argv)
{
    const char *out = NULL, *profiles = NULL;
    int quick = 0;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[a], "--out") == 0 && a + 1 < argc)
            out = argv[++a];
        else if (strcmp(argv[a], "--profiles") == 0 && a + 1 < argc)
            profiles = argv[++a];
        else
            return xo__tool_usage_error("record: unexpected argument '%s'", argv[a]);
    }
    char host[128] = "machine", defname[192];
    gethostname(host, sizeof host - 1);
    snprintf(defname, sizeof defname, "%s.xom", host);
    if (!out) out = defname;

    /* The file's folder, its stem, and the profiles' folder as seen from the file. */
    char dir[XO_PATH_MAX], stem[XO_PATH_MAX], pdir[XO_PATH_MAX];
    const char *slash = strrchr(out, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - out) : 1, slash ? out : ".");
    snprintf(stem, sizeof stem, "%s", slash ? slash + 1 : out);
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem) *dot = '\0';
    const char *rel = profiles ? profiles : "";
    if (rel[0] == '/')
        return xo__tool_usage_error("record: --profiles is a folder relative to the machine file, not '%s'", rel);
    if (snprintf(pdir, sizeof pdir, "%s%s%s", dir, *rel ? "/" : "", rel) >= (int)sizeof pdir)
        return xo__tool_usage_error("record: the profiles' folder's path is too long");

    if (getenv("XO_SIMULATE"))
        return xo__tool_usage_error("record: XO_SIMULATE is set; a recording measures the real machine");

    /* Written as FILE.part and renamed once complete: a failed recording leaves nothing. */
    char tmp[XO_PATH_MAX + 8];
    snprintf(tmp, sizeof tmp, "%s.part", out);
    make_dirs(dir);
    recorder r = {.quick = quick, .point_us = quick ? 3000.0 : 30000.0, .cut_us = quick ? 20000.0 : 200000.0};
    FILE *f = fopen(tmp, "w");
    if (!f)
        return xo__tool_fail(xo__error(XO_ERR_INVALID_ARGUMENT, "%s", strerror(errno)), "record: cannot write %s", tmp);
    double t0 = xo__tool_now_us();
    char *one = NULL;
    size_t one_len = 0;
    xo_context *ctx = NULL;
    const char *what = "the CPU with one thread";
    xo_status s = XO_OK;
    /* The CPU with one thread first: OpenBLAS's count is the process's, and it goes back
     * to the application's when that context closes. */
    const char *asked = getenv("XO_THREADS"); /* the count the recording's CPU will run with */
    if ((asked && atoi(asked) > 0 ? atoi(asked) : cpu_threads()) > 1) {
        s = context_with_threads(1, &ctx);
        FILE *mem = s == XO_OK ? open_memstream(&one, &one_len) : NULL;
        if (mem) {
            r.ctx = ctx;
            r.f = mem;
            s = record_kernels(&r, 0, 1);
            fclose(mem);
        } else if (s == XO_OK) {
            s = xo__error(XO_ERR_OUT_OF_MEMORY, "out of memory");
        }
        xo_context_destroy(ctx);
        ctx = NULL;
    }
    r.one_thread = one;
    if (s == XO_OK) {
        what = "cannot create a context";
        s = context_with_threads(0, &ctx);
    }
    if (s == XO_OK) {
        what = "calibration failed";
        ctx->calibrate = XO_CALIBRATE_AUTO;
        s = xo__calibrate_all(ctx, 0, calib_progress, ctx);
    }
    if (s == XO_OK) {
        what = "measuring";
        r.ctx = ctx;
        r.f = f;
        s = record(&r, pdir, rel, stem);
    }
    xo_context_destroy(ctx);
    free(one);
    if (fclose(f) != 0 && s == XO_OK)
        s = xo__error(XO_ERR_INVALID_ARGUMENT, "writing %s: %s", tmp, strerror(errno));
    if (s == XO_OK && rename(tmp, out) != 0)
        s = xo__error(XO_ERR_INVALID_ARGUMENT, "renaming %s: %s", tmp, strerror(errno));
    if (s != XO_OK) {
        remove(tmp);
        return xo__tool_fail(s, "record: %s; %s not written", what, out);
    }
    fprintf(stderr, "recorded %s in %.1f s\n", out, (xo__tool_now_us() - t0) * 1e-6);
    printf("%s\n", out);
    return fflush(stdout) == 0 ? XO_TOOL_OK : XO_TOOL_FAIL;
}
