/* One op's way through the core after validation: estimate on every device, choose,
 * make operands current there, run, fall back on failure, record. */
#include "xo_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- device timings that arrive after the op (async plugins) ----------------------- */

#define XO_PENDING 512
typedef struct pending_op {
    uint64_t token;
    int dev, cls;
    xo_op_kind kind;
    xo_dtype dtype;
    double raw_compute_us; /* the model's prediction before correction */
} pending_op;

struct xo__dispatch {
    pthread_mutex_t lock;
    pending_op pending[XO_PENDING];
};

xo_status xo__dispatch_init(xo_context *ctx)
{
    ctx->dispatch = calloc(1, sizeof *ctx->dispatch);
    if (!ctx->dispatch)
        return xo__error(XO_ERR_OUT_OF_MEMORY, "xo_context_create: out of host memory");
    pthread_mutex_init(&ctx->dispatch->lock, NULL);
    return XO_OK;
}

void xo__dispatch_free(xo_context *ctx)
{
    if (!ctx->dispatch)
        return;
    pthread_mutex_destroy(&ctx->dispatch->lock);
    free(ctx->dispatch);
    ctx->dispatch = NULL;
}

static void remember_pending(xo_context *ctx, const pending_op *p)
{
    pthread_mutex_lock(&ctx->dispatch->lock);
    ctx->dispatch->pending[p->token % XO_PENDING] = *p;
    pthread_mutex_unlock(&ctx->dispatch->lock);
}

/* Collect device-measured times of completed ops: busy time and online correction. */
static void drain_timings(xo_context *ctx, int d)
{
    xo__device *dev = &ctx->dev[d];
    if (!dev->plugin->drain_timings)
        return;
    xo_op_timing t[64];
    int n;
    while ((n = dev->plugin->drain_timings(dev->pstate, dev->pdev, t, 64)) > 0) {
        for (int i = 0; i < n; i++) {
            if (t[i].us < 0)
                continue;
            atomic_fetch_add_explicit(&dev->stats.busy_ns, (uint64_t)(t[i].us * 1e3), memory_order_relaxed);
            pthread_mutex_lock(&ctx->dispatch->lock);
            pending_op p = ctx->dispatch->pending[t[i].token % XO_PENDING];
            pthread_mutex_unlock(&ctx->dispatch->lock);
            if (p.token == t[i].token && p.dev == d && p.raw_compute_us > 0)
                xo__correction_record(ctx->correction, d, p.kind, p.dtype, p.cls, p.raw_compute_us, t[i].us);
        }
        if (n < 64)
            break;
    }
}

/* ---- the calling thread's last decision, per context -------------------------------- */

#define XO_DECISION_SLOTS 4
typedef struct decision_slot {
    uint64_t ctx_id;
    xo_decision d;
} decision_slot;
static _Thread_local decision_slot tl_decisions[XO_DECISION_SLOTS];
static _Thread_local unsigned tl_next_slot;

static xo_decision *decision_for(const xo_context *ctx, int create)
{
    for (int i = 0; i < XO_DECISION_SLOTS; i++)
        if (tl_decisions[i].ctx_id == ctx->id)
            return &tl_decisions[i].d;
    if (!create)
        return NULL;
    decision_slot *s = &tl_decisions[tl_next_slot++ % XO_DECISION_SLOTS];
    s->ctx_id = ctx->id;
    return &s->d;
}

xo_status xo_last_decision(const xo_context *ctx, xo_decision *out)
{
    if (!ctx)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_last_decision: ctx is NULL");
    if (!out)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_last_decision: out is NULL");
    const xo_decision *d = decision_for(ctx, 0);
    if (d) {
        *out = *d;
    } else {
        memset(out, 0, sizeof *out);
        out->device = -1;
    }
    return XO_OK;
}

/* ---- placement ------------------------------------------------------------------- */

static int device_supports(xo_context *ctx, int d, xo_op_kind kind, xo_dtype dtype)
{
    xo__device *dev = &ctx->dev[d];
    int s = atomic_load_explicit(&dev->supports[kind][dtype], memory_order_relaxed);
    if (s < 0) {
        s = dtype == XO_F64 ? dev->info.fp64 != 0 : 1;
        if (s && dev->plugin->supports)
            s = dev->plugin->supports(dev->pstate, dev->pdev, kind, dtype) != 0;
        atomic_store(&dev->supports[kind][dtype], s);
    }
    return s;
}

/* An output the op overwrites completely needs no current copy where it runs. */
static int needs_current(const xo__op *op, int i)
{
    return op->reads[i] || op->lo[i] != 0 || op->hi[i] != op->buf[i]->bytes;
}

static void describe_cost(const xo__op *op, xo__op_cost *cost)
{
    xo__op_cost_init(cost, op->desc.kind, op->desc.dtype, op->desc.m, op->desc.n, op->desc.k);
    cost->noperands = 0;
    for (int i = 0; i < op->desc.narg; i++) {
        xo_buffer *b = op->buf[i];
        if (!b || !needs_current(op, i))
            continue;
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= op->buf[j] == b && needs_current(op, j);
        if (seen)
            continue;
        cost->operand[cost->noperands].bytes = (double)b->bytes;
        cost->operand[cost->noperands].valid = b->valid;
        cost->noperands++;
    }
}

/* The device holding the largest operand that must be current (0 when on the host). */
static int home_device(const xo_context *ctx, const xo__op_cost *cost)
{
    int home = 0;
    double best = -1;
    for (int i = 0; i < cost->noperands; i++) {
        if (cost->operand[i].bytes <= best)
            continue;
        best = cost->operand[i].bytes;
        uint32_t v = cost->operand[i].valid;
        home = 0;
        if (!(v & 1u))
            for (int d = 1; d < ctx->ndev; d++)
                if (v & (1u << d)) {
                    home = d;
                    break;
                }
    }
    return home;
}

static void shape_text(const xo_op_desc *d, char *out, size_t cap)
{
    switch (d->kind) {
    case XO_OP_GEMM: snprintf(out, cap, "%zux%zux%zu", d->m, d->n, d->k); break;
    case XO_OP_GEMV:
    case XO_OP_BIAS: snprintf(out, cap, "%zux%zu", d->m, d->n); break;
    default: snprintf(out, cap, "n=%zu", d->n); break;
    }
}

static void log_decision(const xo_context *ctx, const xo_decision *dec, const xo_op_desc *desc)
{
    char shape[64], line[768];
    shape_text(desc, shape, sizeof shape);
    int used = snprintf(line, sizeof line, "%s %s -> %d %s%s | predicted us:", dec->op, shape, dec->device,
                        ctx->dev[dec->device].info.plugin, dec->forced ? " (forced)" : "");
    for (int d = 0; d < dec->ndevices && used > 0 && (size_t)used < sizeof line; d++) {
        if (dec->est[d].eligible)
            used += snprintf(line + used, sizeof line - (size_t)used, " %d %s %.2f", d, ctx->dev[d].info.plugin,
                             dec->est[d].total_us);
        else
            used += snprintf(line + used, sizeof line - (size_t)used, " %d %s ineligible", d,
                             ctx->dev[d].info.plugin);
    }
    xo__log(XO_LOG_DECISIONS, "%s", line);
}

/* ---- running ---------------------------------------------------------------------- */

static xo_status prepare(xo__op *op, int d)
{
    for (int i = 0; i < op->desc.narg; i++) {
        xo_buffer *b = op->buf[i];
        if (!b)
            continue;
        if (needs_current(op, i))
            XO_RETURN_IF_ERROR(xo__buffer_make_current(b, d));
        else
            XO_RETURN_IF_ERROR(xo__buffer_ensure_alloc(b, d));
        op->desc.arg[i].mem = d ? b->mem[d] : NULL;
        op->desc.arg[i].host = d ? NULL : b->host;
    }
    return XO_OK;
}

/* Run on device d. raw_compute_us > 0 feeds the online correction. */
static xo_status run_on(xo__op *op, int d, double raw_compute_us, int cls)
{
    xo_context *ctx = op->ctx;
    xo__device *dev = &ctx->dev[d];
    XO_RETURN_IF_ERROR(prepare(op, d));
    if (xo__fault_hit(ctx, dev->info.plugin, "launch"))
        return xo__error(XO_ERR_DEVICE, "%s: launch on device %d (%s) failed (XO_FAULTS)", op->fn, d,
                         dev->info.plugin);
    uint64_t token = atomic_fetch_add_explicit(&ctx->next_token, 1, memory_order_relaxed);
    int async = dev->plugin->drain_timings != NULL;
    if (async && raw_compute_us > 0)
        remember_pending(ctx, &(pending_op){.token = token, .dev = d, .cls = cls, .kind = op->desc.kind,
                                            .dtype = op->desc.dtype, .raw_compute_us = raw_compute_us});
    double t0 = async ? 0 : xo__now_us();
    XO_RETURN_IF_ERROR(dev->plugin->run(dev->pstate, dev->pdev, &op->desc, token));
    if (async) {
        drain_timings(ctx, d);
    } else {
        double us = xo__now_us() - t0;
        atomic_fetch_add_explicit(&dev->stats.busy_ns, (uint64_t)(us * 1e3), memory_order_relaxed);
        if (raw_compute_us > 0)
            xo__correction_record(ctx->correction, d, op->desc.kind, op->desc.dtype, cls, raw_compute_us, us);
    }
    for (int i = 0; i < op->desc.narg; i++)
        if (op->writes[i])
            xo__buffer_mark_written(op->buf[i], d);
    atomic_fetch_add_explicit(&dev->stats.ops, 1, memory_order_relaxed);
    return XO_OK;
}

/* The op failed on `failed`: complete it elsewhere (the CPU, or for a failed CPU the
 * cheapest other eligible device), with every operand's current copy intact. */
static xo_status fall_back(xo__op *op, int failed, const xo_decision *dec, int *out_dev)
{
    xo_context *ctx = op->ctx;
    char why[512];
    snprintf(why, sizeof why, "%s", xo_last_error());
    atomic_fetch_add_explicit(&ctx->dev[failed].stats.fallbacks, 1, memory_order_relaxed);
    int alt = 0;
    if (failed == 0) {
        alt = -1;
        for (int d = 1; d < dec->ndevices; d++)
            if (dec->est[d].eligible && (alt < 0 || dec->est[d].total_us < dec->est[alt].total_us))
                alt = d;
        if (alt < 0)
            return xo__error(XO_ERR_DEVICE, "%s: failed on the CPU and no other device can run it: %s", op->fn, why);
    }
    xo__log(XO_LOG_WARN, "%s failed on device %d (%s): %s; completing it on device %d", op->fn, failed,
            ctx->dev[failed].info.plugin, why, alt);
    xo_status st = run_on(op, alt, 0, 0);
    if (st != XO_OK)
        return xo__error(XO_ERR_DEVICE, "%s: failed on device %d (%s) and on device %d (%s)", op->fn, failed, why, alt,
                         xo_last_error());
    *out_dev = alt;
    return XO_OK;
}

xo_status xo__dispatch(xo__op *op)
{
    xo_context *ctx = op->ctx;
    xo__op_cost cost;
    describe_cost(op, &cost);
    int cls = xo__size_class(&cost);

    xo_decision dec;
    snprintf(dec.op, sizeof dec.op, "%s", op->fn + 3);
    dec.ndevices = ctx->ndev;
    dec.forced = 0;
    double raw[XO_MAX_DEVICES];
    int best = -1;
    const xo__profile *profiles = &ctx->dev[0].profile;
    (void)profiles;
    xo__profile prof[XO_MAX_DEVICES];
    for (int d = 0; d < ctx->ndev; d++)
        prof[d] = ctx->dev[d].profile;
    for (int d = 0; d < ctx->ndev; d++) {
        xo_estimate *e = &dec.est[d];
        int eligible = d == 0 || (!op->cpu_only && device_supports(ctx, d, op->desc.kind, op->desc.dtype));
        if (!eligible) {
            *e = (xo_estimate){0};
            raw[d] = 0;
            continue;
        }
        double f = xo__correction_factor(ctx->correction, d, op->desc.kind, op->desc.dtype, cls);
        xo__estimate(prof, ctx->ndev, d, &cost, f, e);
        e->eligible = 1;
        raw[d] = f > 0 ? e->compute_us / f : e->compute_us;
        if (best < 0 || e->total_us < dec.est[best].total_us)
            best = d;
    }
    /* Stay where the data lives unless another device is clearly cheaper: close calls
     * must not ping-pong buffers between devices. */
    int home = home_device(ctx, &cost);
    if (best != home && dec.est[home].eligible && dec.est[best].total_us > 0.9 * dec.est[home].total_us)
        best = home;

    int forced = atomic_load_explicit(&ctx->forced, memory_order_relaxed);
    if (forced >= 0) {
        if (dec.est[forced].eligible) {
            best = forced;
            dec.forced = 1;
        } else {
            best = 0;
            if (!atomic_exchange(&ctx->dev[forced].forced_warned, 1))
                xo__log(XO_LOG_WARN, "%s cannot run on the forced device %d (%s); it runs on the CPU", dec.op, forced,
                        ctx->dev[forced].info.plugin);
        }
    }

    int ran = best;
    xo_status st = run_on(op, best, raw[best], cls);
    if (st != XO_OK)
        st = fall_back(op, best, &dec, &ran);
    if (st != XO_OK)
        return st;
    dec.device = ran;
    if (ran != best)
        dec.forced = 0;
    *decision_for(ctx, 1) = dec;
    if (atomic_load_explicit(&xo__log_level, memory_order_relaxed) >= XO_LOG_DECISIONS)
        log_decision(ctx, &dec, &op->desc);
    return XO_OK;
}

/* ---- calibration and xo_finish ----------------------------------------------------- */

xo_status xo__run_on(xo_context *ctx, int dev, xo_op_desc *desc, xo_buffer *const bufs[XO_MAX_OPERANDS])
{
    if (!ctx || dev < 0 || dev >= ctx->ndev || !desc)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo__run_on: bad arguments");
    xo__op op;
    xo__op_begin(&op, "xo__run_on", ctx, desc->kind, desc->dtype);
    op.desc = *desc;
    for (int i = 0; i < desc->narg; i++) {
        op.buf[i] = bufs[i];
        op.argname[i] = "operand";
        op.reads[i] = 1; /* calibration keeps every operand current: simple and safe */
        op.lo[i] = 0;
        op.hi[i] = bufs[i] ? bufs[i]->bytes : 0;
    }
    static const uint8_t out_arg[XO_OP_KIND_COUNT] = {
        [XO_OP_GEMM] = 2, [XO_OP_GEMV] = 2, [XO_OP_AXPY] = 1, [XO_OP_SCAL] = 0, [XO_OP_DOT] = 2,
        [XO_OP_NRM2] = 1, [XO_OP_UNARY] = 1, [XO_OP_BINARY] = 2, [XO_OP_BIAS] = 0, [XO_OP_REDUCE] = 1};
    op.writes[out_arg[desc->kind]] = 1;
    return run_on(&op, dev, 0, 0);
}

xo_status xo_finish(xo_context *ctx)
{
    if (!ctx)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_finish: ctx is NULL");
    xo_status first = XO_OK;
    for (int d = 0; d < ctx->ndev; d++) {
        xo__device *dev = &ctx->dev[d];
        if (dev->plugin->finish) {
            xo_status st = dev->plugin->finish(dev->pstate, dev->pdev);
            if (st != XO_OK && first == XO_OK)
                first = xo__error(st, "xo_finish: device %d (%s): %s", d, dev->info.plugin, xo_last_error());
        }
        drain_timings(ctx, d);
    }
    return first;
}
