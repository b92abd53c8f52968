/* Calibration: micro-benchmarks that measure a device's profile (launch floor,
 * transfer latency and bandwidth, streaming bandwidth, the gemm throughput curve), and
 * the profile cache that makes later contexts start in milliseconds.
 *
 * Every figure is a median of several runs after warm-up runs that are discarded. The
 * runs' dispersion ((q3 - q1) / median) is kept: a device whose runs disagree by more
 * than SPREAD_MAX (a busy machine) is measured once more, and if the runs still disagree
 * its profile is marked provisional, used for now and measured again by a later context.
 * The gemm curve stops at the first size whose run would take longer than CURVE_CUT_US
 * and stays flat beyond it, so calibrating a slow device stays a matter of seconds. */
#include "xo_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* XO_ERR_DEVICE when the calibration running in ctx is to stop (its background thread
 * set the flag), else XO_OK. */
xo_status xo__calibration_cancelled(const xo_context *ctx)
{
    if (ctx->calib_cancel && atomic_load_explicit(ctx->calib_cancel, memory_order_relaxed))
        return xo__error(XO_ERR_DEVICE, "calibration cancelled: the context is being destroyed");
    return XO_OK;
}

#define LAUNCH_WARMUP 3
#define LAUNCH_RUNS 30
#define ISSUE_BATCH 32 /* launches per timed batch of the issue cost */
#define ISSUE_RUNS 9
#define LATENCY_RUNS 15
#define BANDWIDTH_BYTES ((size_t)16 << 20)
#define BANDWIDTH_RUNS 3
#define STREAM_ELEMENTS ((size_t)4 << 20) /* 16 MiB per float vector: past the caches */
#define STREAM_RUNS 5
#define CURVE_POINT_US 20000.0  /* repeat a gemm size until this much time is spent... */
#define CURVE_MIN_REPS 3
#define CURVE_MAX_REPS 10       /* ...or this many runs */
#define CURVE_CUT_US 150000.0   /* no size whose single run is predicted longer than this */
#define MAX_SAMPLES 32
#define SPREAD_MAX 1.0          /* runs whose spread passes this disagree: measure again */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct calib {
    xo_context *ctx;
    int dev;
    double spread; /* worst dispersion seen */
    xo__progress_fn progress;
    void *user;
    double step0, nsteps; /* progress bookkeeping */
} calib;

/* Median of n samples, noting their dispersion in c->spread (n >= 4 only: fewer say
 * little about it; runs under SPREAD_MIN_US are at the clock's and the cache's mercy). */
#define SPREAD_MIN_US 5.0
static double median_noted(calib *c, double *v, int n)
{
    double m = median_of(v, n); /* sorts v */
    if (n >= 4 && m > SPREAD_MIN_US) {
        double s = (v[(3 * n) / 4] - v[n / 4]) / m;
        if (s > c->spread)
            c->spread = s;
    }
    return m;
}

static void report(const calib *c, const char *step, double fraction)
{
    if (c->progress)
        c->progress(c->user, c->dev, step, fraction < 0.0 ? 0.0 : (fraction > 1.0 ? 1.0 : fraction));
}

/* Run one op on the calibrated device and wait for it; *out_us = wall time. */
static xo_status run_timed(calib *c, xo_op_desc *desc, xo_buffer *const bufs[XO_MAX_ARGS], double *out_us)
{
    XO_RETURN_IF_ERROR(xo__calibration_cancelled(c->ctx));
    double t0 = xo__now_us();
    XO_RETURN_IF_ERROR(xo__run_on(c->ctx, c->dev, desc, bufs));
    XO_RETURN_IF_ERROR(xo_finish(c->ctx));
    *out_us = xo__now_us() - t0;
    return XO_OK;
}

static xo_op_desc axpy_desc(xo_dtype dtype, size_t n)
{
    xo_op_desc d;
    memset(&d, 0, sizeof d);
    d.kind = XO_OP_AXPY;
    d.dtype = dtype;
    d.n = n;
    d.inc[0] = d.inc[1] = 1;
    d.alpha = 1.0;
    d.narg = 2;
    return d;
}

static xo_op_desc gemm_desc(xo_dtype dtype, size_t n)
{
    xo_op_desc d;
    memset(&d, 0, sizeof d);
    d.kind = XO_OP_GEMM;
    d.dtype = dtype;
    d.layout = XO_ROW_MAJOR;
    d.ta = d.tb = XO_NO_TRANS;
    d.m = d.n = d.k = n;
    d.ld[0] = d.ld[1] = d.ld[2] = n;
    d.alpha = 1.0;
    d.beta = 0.0;
    d.narg = 3;
    return d;
}

/* Launch floor: a 1-element saxpy resident on the device, dispatch to completion. */
static xo_status measure_launch(calib *c, xo_buffer *x, xo_buffer *y, double *out_us)
{
    xo_buffer *bufs[XO_MAX_ARGS] = {x, y, NULL};
    xo_op_desc d = axpy_desc(XO_F32, 1);
    double t[LAUNCH_RUNS];
    for (int i = 0; i < LAUNCH_WARMUP + LAUNCH_RUNS; i++) {
        double us;
        XO_RETURN_IF_ERROR(run_timed(c, &d, bufs, &us));
        if (i >= LAUNCH_WARMUP)
            t[i - LAUNCH_WARMUP] = us;
    }
    *out_us = median_noted(c, t, LAUNCH_RUNS);
    return XO_OK;
}

xo_status xo__measure_issue(xo_context *ctx, int dev, double launch_us, double *out_us)
{
    *out_us = 0.0;
    if (dev <= 0 || dev >= ctx->ndev || xo__device_on_host_cores(&ctx->dev[dev].info))
        return XO_OK;
    xo_buffer *x = NULL, *y = NULL;
    xo_status st = xo_buffer_create(ctx, 4, &x);
    if (st == XO_OK)
        st = xo_buffer_create(ctx, 4, &y);
    xo_buffer *bufs[XO_MAX_ARGS] = {x, y, NULL};
    xo_op_desc d = axpy_desc(XO_F32, 1);
    double t[ISSUE_RUNS];
    /* the first batch is a warm-up: it also moves x and y to the device */
    for (int r = -1; st == XO_OK && r < ISSUE_RUNS; r++) {
        st = xo__calibration_cancelled(ctx);
        double t0 = xo__now_us();
        for (int i = 0; st == XO_OK && i < ISSUE_BATCH; i++)
            st = xo__run_on(ctx, dev, &d, bufs);
        double us = (xo__now_us() - t0) / ISSUE_BATCH;
        if (st == XO_OK)
            st = xo_finish(ctx);
        if (r >= 0)
            t[r] = us;
    }
    if (st == XO_OK) {
        double issue = median_of(t, ISSUE_RUNS);
        *out_us = issue < launch_us ? issue : 0.0;
    }
    xo_buffer_destroy(x);
    xo_buffer_destroy(y);
    return st;
}

/* One host->device move of `b` (its host copy current), timed to completion. */
static xo_status time_upload(calib *c, xo_buffer *b, double *out_us)
{
    XO_RETURN_IF_ERROR(xo__calibration_cancelled(c->ctx));
    xo__buffer_mark_written(b, 0);
    double t0 = xo__now_us();
    XO_RETURN_IF_ERROR(xo__buffer_make_current(b, c->dev));
    XO_RETURN_IF_ERROR(xo_finish(c->ctx));
    *out_us = xo__now_us() - t0;
    return XO_OK;
}

/* One device->host move of `b` (its device copy the only current one). */
static xo_status time_download(calib *c, xo_buffer *b, double *out_us)
{
    XO_RETURN_IF_ERROR(xo__buffer_make_current(b, c->dev));
    XO_RETURN_IF_ERROR(xo_finish(c->ctx));
    xo__buffer_mark_written(b, c->dev);
    double t0 = xo__now_us();
    XO_RETURN_IF_ERROR(xo__buffer_make_current(b, 0));
    *out_us = xo__now_us() - t0;
    return XO_OK;
}

static xo_status measure_transfers(calib *c, xo__profile *p)
{
    xo_buffer *small = NULL, *big = NULL;
    xo_status st = xo_buffer_create(c->ctx, 4, &small);
    if (st == XO_OK)
        st = xo_buffer_create(c->ctx, BANDWIDTH_BYTES, &big);
    double up[LATENCY_RUNS], down[LATENCY_RUNS], us;
    /* warm-up: allocates the device copies */
    if (st == XO_OK)
        st = time_upload(c, small, &us);
    if (st == XO_OK)
        st = time_download(c, small, &us);
    for (int i = 0; st == XO_OK && i < LATENCY_RUNS; i++) {
        st = time_upload(c, small, &up[i]);
        if (st == XO_OK)
            st = time_download(c, small, &down[i]);
    }
    if (st == XO_OK) {
        double lat_up = median_noted(c, up, LATENCY_RUNS), lat_down = median_noted(c, down, LATENCY_RUNS);
        p->info.transfer_latency_us = 0.5 * (lat_up + lat_down);
        report(c, "transfers", 0.3);
    }
    double bu[BANDWIDTH_RUNS], bd[BANDWIDTH_RUNS];
    if (st == XO_OK)
        st = time_upload(c, big, &us); /* warm-up */
    for (int i = 0; st == XO_OK && i < BANDWIDTH_RUNS; i++) {
        st = time_upload(c, big, &bu[i]);
        if (st == XO_OK)
            st = time_download(c, big, &bd[i]);
    }
    if (st == XO_OK) {
        double lat = p->info.transfer_latency_us;
        double tu = median_of(bu, BANDWIDTH_RUNS) - lat, td = median_of(bd, BANDWIDTH_RUNS) - lat;
        double floor_us = 1.0;
        p->info.h2d_gbps = (double)BANDWIDTH_BYTES / ((tu > floor_us ? tu : floor_us) * 1e3);
        p->info.d2h_gbps = (double)BANDWIDTH_BYTES / ((td > floor_us ? td : floor_us) * 1e3);
    }
    xo_buffer_destroy(small);
    xo_buffer_destroy(big);
    return st;
}

/* Streaming bandwidth: a large axpy resident on the device (reads x, y, writes y). */
static xo_status measure_stream(calib *c, xo_dtype dtype, xo_buffer *x, xo_buffer *y, double launch_us,
                                double *out_gbps)
{
    size_t es = dtype == XO_F64 ? 8 : 4;
    size_t n = xo_buffer_size(x) / es;
    xo_buffer *bufs[XO_MAX_ARGS] = {x, y, NULL};
    xo_op_desc d = axpy_desc(dtype, n);
    double t[STREAM_RUNS], us;
    XO_RETURN_IF_ERROR(run_timed(c, &d, bufs, &us)); /* warm-up: moves x, y there */
    for (int i = 0; i < STREAM_RUNS; i++)
        XO_RETURN_IF_ERROR(run_timed(c, &d, bufs, &t[i]));
    double tc = median_noted(c, t, STREAM_RUNS) - launch_us;
    double floor_us = 0.1 * median_of(t, STREAM_RUNS);
    if (tc < floor_us)
        tc = floor_us;
    *out_gbps = 3.0 * (double)n * (double)es / (tc * 1e3);
    return XO_OK;
}

/* The host's vector ops on several threads: the CPU plugin runs its element-wise loops,
 * saxpy's among them, on the calling thread below WAKE_FROM elements and splits them over
 * its pool from there (XO_CPU_GRAIN, plugins/cpu/cpu_internal.h; OpenBLAS's level-1 rule,
 * 10,000, until its axpy left OpenBLAS). What the bigger size costs beyond twice the
 * smaller one's work is waking the threads, which grows with their number (3-10x a
 * 25K-element op's work on 16 cores). */
#define WAKE_FROM 65536
#define WAKE_RUNS 15
static xo_status measure_thread_wake(calib *c, xo_buffer *x, xo_buffer *y, double launch_us, double *out_us)
{
    xo_buffer *bufs[XO_MAX_ARGS] = {x, y, NULL};
    xo_op_desc one = axpy_desc(XO_F32, WAKE_FROM / 2), two = axpy_desc(XO_F32, WAKE_FROM); /* either side */
    double ta[WAKE_RUNS], tb[WAKE_RUNS], us;
    XO_RETURN_IF_ERROR(run_timed(c, &two, bufs, &us)); /* warm-up: wakes the threads once */
    for (int i = 0; i < WAKE_RUNS; i++) {             /* taking turns: a slow spell hits both */
        XO_RETURN_IF_ERROR(run_timed(c, &one, bufs, &ta[i]));
        XO_RETURN_IF_ERROR(run_timed(c, &two, bufs, &tb[i]));
    }
    double wake = median_of(tb, WAKE_RUNS) - 2.0 * (median_of(ta, WAKE_RUNS) - launch_us) - launch_us;
    *out_us = wake > 0.0 ? wake : 0.0;
    return XO_OK;
}

/* The gemm curve of one dtype; sizes past the cut repeat the last measured point. */
static xo_status measure_curve(calib *c, xo_dtype dtype, double launch_us, double out[XO_CURVE_POINTS],
                               double frac0, double frac1)
{
    size_t es = dtype == XO_F64 ? 8 : 4;
    double last_run_us = 0.0;
    int measured = 0;
    for (int i = 0; i < XO_CURVE_POINTS; i++) {
        size_t n = (size_t)XO_CURVE_MIN_N << i;
        if (i > 0 && last_run_us * 8.0 > CURVE_CUT_US)
            break; /* the next size would run too long: extrapolate flat */
        report(c, dtype == XO_F64 ? "dgemm curve" : "sgemm curve",
               frac0 + (frac1 - frac0) * (double)i / XO_CURVE_POINTS);
        xo_buffer *b[XO_MAX_ARGS] = {NULL, NULL, NULL};
        xo_status st = XO_OK;
        for (int j = 0; j < 3 && st == XO_OK; j++)
            st = xo_buffer_create(c->ctx, n * n * es, &b[j]);
        xo_op_desc d = gemm_desc(dtype, n);
        double t[CURVE_MAX_REPS], us = 0.0, spent = 0.0;
        int reps = 0;
        if (st == XO_OK)
            st = run_timed(c, &d, b, &us); /* warm-up: operands moved, kernels built */
        while (st == XO_OK && reps < CURVE_MAX_REPS && (reps < CURVE_MIN_REPS || spent < CURVE_POINT_US)) {
            st = run_timed(c, &d, b, &t[reps]);
            if (st == XO_OK)
                spent += t[reps++];
            if (st == XO_OK && reps == 1 && t[0] > 2.0 * CURVE_CUT_US)
                break; /* one run was already far too long */
        }
        for (int j = 0; j < 3; j++)
            xo_buffer_destroy(b[j]);
        if (st != XO_OK)
            return st;
        double tm = median_noted(c, t, reps);
        last_run_us = tm;
        double tc = tm - launch_us;
        if (tc < 0.25 * tm)
            tc = 0.25 * tm; /* launch noise must not inflate small sizes without bound */
        out[i] = 2.0 * (double)n * (double)n * (double)n / (tc * 1e3);
        measured = i + 1;
    }
    for (int i = measured; i < XO_CURVE_POINTS; i++)
        out[i] = measured > 0 ? out[measured - 1] : 0.0;
    return XO_OK;
}

/* Round a figure to the 6 significant digits a profile file keeps, so that a context
 * that measured and one that read the file decide alike. */
static double round6(double v)
{
    char s[40];
    snprintf(s, sizeof s, "%.6g", v);
    return strtod(s, NULL);
}

static void round_profile(xo__profile *p)
{
    double *f[] = {&p->info.launch_us, &p->info.transfer_latency_us, &p->info.h2d_gbps, &p->info.d2h_gbps,
                   &p->info.mem_gbps, &p->info.peak_gflops};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        *f[i] = round6(*f[i]);
    for (int d = 0; d < 2; d++) {
        for (int i = 0; i < XO_CURVE_POINTS; i++)
            p->gemm_gflops[d][i] = round6(p->gemm_gflops[d][i]);
        p->stream_gbps[d] = round6(p->stream_gbps[d]);
    }
    p->thread_wake_us = round6(p->thread_wake_us);
    p->issue_us = round6(p->issue_us);
    for (int k = 0; k < XO_OP_KIND_COUNT; k++)
        p->op_launch_us[k] = round6(p->op_launch_us[k]);
}

/* Defaults for the device's kind, with its identity from the plugin. */
static void identity_defaults(const xo_device_info *info, xo__profile *out)
{
    xo__profile_defaults(info->kind, info->plugin, out);
    xo_device_info figures = out->info;
    out->info = *info;
    out->info.launch_us = figures.launch_us;
    out->info.transfer_latency_us = figures.transfer_latency_us;
    out->info.h2d_gbps = figures.h2d_gbps;
    out->info.d2h_gbps = figures.d2h_gbps;
    out->info.mem_gbps = figures.mem_gbps;
    out->info.peak_gflops = figures.peak_gflops;
    snprintf(out->library_version, sizeof out->library_version, "%s", XO_VERSION_STRING);
}

static xo_status calibrate_once(xo_context *ctx, int dev, xo__profile *out, xo__progress_fn progress, void *user)
{
    calib c = {.ctx = ctx, .dev = dev, .progress = progress, .user = user};
    xo__profile p;
    identity_defaults(&ctx->dev[dev].info, &p);
    int fp64 = p.info.fp64;
    xo_buffer *x = NULL, *y = NULL;
    xo_status st = xo_buffer_create(ctx, STREAM_ELEMENTS * 4, &x);
    if (st == XO_OK)
        st = xo_buffer_create(ctx, STREAM_ELEMENTS * 4, &y);

    report(&c, "launch", 0.0);
    double launch = 0.0;
    if (st == XO_OK)
        st = measure_launch(&c, x, y, &launch);
    if (st == XO_OK)
        st = xo__measure_issue(ctx, dev, launch, &p.issue_us);
    if (st == XO_OK) {
        p.info.launch_us = launch;
        report(&c, "transfers", 0.1);
        if (dev == 0) { /* the host itself: nothing to move */
            p.info.transfer_latency_us = 0.0;
            p.info.h2d_gbps = p.info.d2h_gbps = 0.0;
        } else {
            st = measure_transfers(&c, &p);
        }
    }
    if (st == XO_OK) {
        report(&c, "memory bandwidth", 0.4);
        st = measure_stream(&c, XO_F32, x, y, launch, &p.stream_gbps[XO_F32]);
        p.info.mem_gbps = p.stream_gbps[XO_F32];
    }
    if (st == XO_OK && dev == 0) { /* on one thread it measures about 0 */
        st = measure_thread_wake(&c, x, y, launch, &p.thread_wake_us);
        p.threaded_from = WAKE_FROM;
    }
    /* double precision is optional: a device that fails it keeps its single figures
     * (the model then takes half the sgemm curve) */
    p.stream_gbps[XO_F64] = p.stream_gbps[XO_F32];
    if (st == XO_OK && fp64 && measure_stream(&c, XO_F64, x, y, launch, &p.stream_gbps[XO_F64]) != XO_OK) {
        xo__log(XO_LOG_WARN, "device %d: daxpy failed during calibration: %s", dev, xo_last_error());
        p.stream_gbps[XO_F64] = p.stream_gbps[XO_F32];
        fp64 = 0;
    }
    xo_buffer_destroy(x);
    xo_buffer_destroy(y);
    if (st == XO_OK)
        st = measure_curve(&c, XO_F32, launch, p.gemm_gflops[XO_F32], 0.5, fp64 ? 0.75 : 1.0);
    if (st == XO_OK && fp64 && measure_curve(&c, XO_F64, launch, p.gemm_gflops[XO_F64], 0.75, 1.0) != XO_OK) {
        xo__log(XO_LOG_WARN, "device %d: dgemm failed during calibration: %s", dev, xo_last_error());
        fp64 = 0;
    }
    if (!fp64)
        memset(p.gemm_gflops[XO_F64], 0, sizeof p.gemm_gflops[XO_F64]);
    if (st != XO_OK)
        return st;
    p.info.peak_gflops = 0.0;
    for (int i = 0; i < XO_CURVE_POINTS; i++)
        if (p.gemm_gflops[XO_F32][i] > p.info.peak_gflops)
            p.info.peak_gflops = p.gemm_gflops[XO_F32][i];
    p.spread = c.spread;
    round_profile(&p);
    report(&c, "done", 1.0);
    *out = p;
    return XO_OK;
}

xo_status xo__calibrate_device(xo_context *ctx, int dev, xo__profile *out, xo__progress_fn progress, void *user)
{
    if (!ctx || !out || dev < 0 || dev >= ctx->ndev)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo__calibrate_device: %s", !ctx ? "ctx is NULL"
                                                                            : !out ? "out is NULL"
                                                                                   : "dev is out of range");
    XO_RETURN_IF_ERROR(calibrate_once(ctx, dev, out, progress, user));
    char why[160];
    if (xo__profile_trustworthy(out, why, sizeof why))
        return XO_OK;
    /* The runs disagreed (load from elsewhere) or gave no real curve: once more, keeping
     * the trustworthy one, else the steadier. */
    xo__log(XO_LOG_INFO, "device %d: calibration not trustworthy (%s); measuring again", dev, why);
    xo__profile again;
    if (calibrate_once(ctx, dev, &again, progress, user) == XO_OK &&
        (xo__profile_trustworthy(&again, NULL, 0) || again.spread < out->spread))
        *out = again;
    xo__clear_error();
    if (!xo__profile_trustworthy(out, why, sizeof why)) {
        out->provisional = 1;
        xo__log(XO_LOG_WARN, "device %d: calibration not trustworthy (%s); the profile is provisional and will be "
                "measured again",
                dev, why);
    }
    return XO_OK;
}

void xo__profile_settle(xo__profile *p, const xo__profile *prev)
{
    if (xo__profile_trustworthy(p, NULL, 0)) {
        p->untrusted_runs = 0;
        return;
    }
    p->untrusted_runs = (prev ? prev->untrusted_runs : 0) + 1;
    if (p->untrusted_runs >= XO_UNTRUSTED_MAX) {
        /* Measured this often on a machine that never lets the runs agree: keep it. */
        p->provisional = 0;
        xo__log(XO_LOG_WARN, "device profile of %s %s: %d measurements in a row were not trustworthy; keeping the "
                "last as final (xo calibrate --force measures it again)",
                p->info.plugin, p->info.name, p->untrusted_runs);
    }
}

/* Copy a profile's figures into the device's public info (identity stays the plugin's). */
static void publish(xo__device *d)
{
    d->info.launch_us = d->profile.info.launch_us;
    d->info.transfer_latency_us = d->profile.info.transfer_latency_us;
    d->info.h2d_gbps = d->profile.info.h2d_gbps;
    d->info.d2h_gbps = d->profile.info.d2h_gbps;
    d->info.mem_gbps = d->profile.info.mem_gbps;
    d->info.peak_gflops = d->profile.info.peak_gflops;
}

void xo__device_set_profile(xo_context *ctx, int dev, const xo__profile *p)
{
    xo__device *d = &ctx->dev[dev];
    xo_device_info identity = d->info;
    pthread_mutex_lock(&ctx->profile_lock);
    d->profile = *p;
    d->profile.info.fp64 = identity.fp64;
    d->profile.info.host_unified = identity.host_unified;
    publish(d);
    pthread_mutex_unlock(&ctx->profile_lock);
}

int xo__profile_path(const xo_context *ctx, int dev, char *out, size_t cap)
{
    out[0] = '\0';
    if (!ctx->cache_dir[0])
        return 0;
    char file[256];
    xo__profile_filename(&ctx->dev[dev].info, file, sizeof file);
    if (snprintf(out, cap, "%s/%s", ctx->cache_dir, file) >= (int)cap) {
        out[0] = '\0';
        return 0;
    }
    return 1;
}

/* `strict` (xo calibrate): measure even under XO_CALIBRATE=off, and a failed
 * measurement or write is an error, not a warning. */
static xo_status init_profiles(xo_context *ctx, int force, int strict, xo__progress_fn progress, void *user)
{
    if (!ctx)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo__profiles_init: ctx is NULL");
    int measured_any = 0;
    xo_status result = XO_OK;
    /* XO_FAULTS counts the user's calls: calibration neither triggers nor uses them up */
    int nfaults = ctx->nfaults;
    ctx->nfaults = 0;
    for (int dv = 0; dv < ctx->ndev; dv++) {
        xo__device *d = &ctx->dev[dv];
        xo__profile prev;
        int have_prev = 0;
        d->cached = 0;
        if (!force && !strict && ctx->calibrate == XO_CALIBRATE_OFF) {
            identity_defaults(&d->info, &d->profile);
            publish(d);
            continue;
        }
        char path[XO_PATH_MAX];
        xo__profile_path(ctx, dv, path, sizeof path);
        if (!force && ctx->calibrate != XO_CALIBRATE_FORCE && path[0]) {
            xo__profile cached;
            xo_status rs = xo__profile_read(path, &cached);
            if (rs == XO_OK && xo__profile_matches(&cached, &d->info)) {
                char why[160];
                int trusted = xo__profile_trustworthy(&cached, why, sizeof why) ||
                              cached.untrusted_runs >= XO_UNTRUSTED_MAX;
                if (trusted || (dv != 0 && !strict)) {
                    xo__device_set_profile(ctx, dv, &cached);
                    d->cached = 1;
                    /* an earlier run could not trust it: measured again (docs/placement.md) */
                    d->measure_later = trusted ? 0 : xo__device_on_host_cores(&d->info) ? 2 : 1;
                    xo__log(XO_LOG_INFO, "device %d (%s %s): profile read from %s%s%s", dv, d->info.plugin,
                            d->info.name, path, trusted ? "" : "; not trustworthy: ", trusted ? "" : why);
                    continue;
                }
                /* The CPU (measured here in well under a second), or xo calibrate. */
                xo__log(XO_LOG_INFO, "device %d (%s %s): cached profile not trustworthy (%s): measuring again", dv,
                        d->info.plugin, d->info.name, why);
                prev = cached;
                have_prev = 1;
            } else {
                /* None yet, or stale: the normal first run. Anything else there is damaged. */
                struct stat sb;
                if (rs != XO_OK && lstat(path, &sb) == 0)
                    xo__log(XO_LOG_WARN, "device %d (%s %s): cached profile unusable, measuring again: %s", dv,
                            d->info.plugin, d->info.name, xo_last_error());
                else
                    xo__log(XO_LOG_INFO, "device %d (%s %s): no usable profile at %s", dv, d->info.plugin,
                            d->info.name, path);
                xo__clear_error();
            }
        }
        if (!force && !strict && dv != 0 && ctx->calibrate == XO_CALIBRATE_AUTO) {
            /* No profile yet: the defaults stand in (and the online correction learns from
             * the device's first ops) while a background thread measures it, so the
             * context is usable at once. The CPU is measured here: it takes well under
             * a second. */
            identity_defaults(&d->info, &d->profile);
            d->profile.provisional = 1;
            /* A device on the host's cores (PoCL) would take them from the program: it is
             * measured when asked (xo info, xo calibrate), not beside the program. */
            d->measure_later = xo__device_on_host_cores(&d->info) ? 2 : 1;
            publish(d);
            continue;
        }
        xo__profile p;
        double t0 = xo__now_us();
        xo_status st = xo__calibrate_device(ctx, dv, &p, progress, user);
        if (st == XO_OK)
            xo__profile_settle(&p, have_prev ? &prev : NULL);
        measured_any = 1;
        if (st != XO_OK) {
            xo__log(XO_LOG_WARN, "device %d (%s %s): calibration failed (%s); using the defaults for its kind",
                    dv, d->info.plugin, d->info.name, xo_last_error());
            if (strict && result == XO_OK)
                result = st;
            identity_defaults(&d->info, &d->profile);
            publish(d);
            continue;
        }
        xo__log(XO_LOG_INFO, "device %d (%s %s): calibrated in %.0f ms", dv, d->info.plugin, d->info.name,
                (xo__now_us() - t0) * 1e-3);
        d->profile = p;
        d->measure_later = 0;
        publish(d);
        if (path[0]) {
            st = xo__profile_write(path, &p);
            if (st != XO_OK) {
                xo__log(XO_LOG_WARN, "device %d: profile not cached: %s", dv, xo_last_error());
                if (strict && result == XO_OK)
                    result = st;
            }
        }
    }
    ctx->nfaults = nfaults;
    if (measured_any) { /* calibration runs are nobody's ops */
        xo_stats_reset(ctx);
        xo__correction_reset(ctx->correction);
    }
    if (result == XO_OK)
        xo__clear_error();
    return result;
}

xo_status xo__profiles_init(xo_context *ctx, int force, xo__progress_fn progress, void *user)
{
    return init_profiles(ctx, force, 0, progress, user);
}

xo_status xo__calibrate_all(xo_context *ctx, int force, xo__progress_fn progress, void *user)
{
    if (ctx->sim) /* a simulated machine's profiles are its file's: nothing to measure */
        return XO_OK;
    return init_profiles(ctx, force, 1, progress, user);
}

/* ---- the program's timings cross-check a cached profile -------------------------- */

#define CROSSCHECK_CELLS 3   /* settled correction cells needed to judge */
#define CROSSCHECK_FACTOR 4.0
#define CROSSCHECK_MIN_CLASS 16 /* ops of 64 KiB flops + bytes or more: the launch is not the story */

void xo__profiles_crosscheck(xo_context *ctx)
{
    if (!ctx || ctx->calibrate != XO_CALIBRATE_AUTO)
        return;
    for (int d = 0; d < ctx->ndev; d++) {
        if (!ctx->dev[d].cached)
            continue;
        double m;
        int n = xo__correction_settled(ctx->correction, d, CROSSCHECK_MIN_CLASS, &m);
        if (n < CROSSCHECK_CELLS || (m > 1.0 / CROSSCHECK_FACTOR && m < CROSSCHECK_FACTOR))
            continue;
        pthread_mutex_lock(&ctx->profile_lock);
        xo__profile p = ctx->dev[d].profile;
        pthread_mutex_unlock(&ctx->profile_lock);
        if (p.untrusted_runs >= XO_UNTRUSTED_MAX)
            continue; /* measured often enough: the model, not the profile, is off */
        p.provisional = 1;
        p.untrusted_runs++;
        char path[XO_PATH_MAX];
        if (!xo__profile_path(ctx, d, path, sizeof path) || xo__profile_write(path, &p) != XO_OK) {
            xo__clear_error();
            continue;
        }
        xo__log(XO_LOG_WARN, "device %d (%s): this run's ops took %.2gx the time its cached profile predicts (%d "
                "kinds and sizes): it is marked provisional and measured again by the next context", d,
                ctx->dev[d].info.plugin, m, n);
    }
}
