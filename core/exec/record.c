/* The record stage of the op path: what is learned and counted once an op has run.
 *
 * - xo__record_ran (xo_record.h, inline: the fast paths use it too): the outputs are
 *   current where the op ran, the op is counted with its busy time.
 * - Timings feed the online correction: a synchronous learning call's clock time at
 *   once, an asynchronous device's own measurement when it arrives (drained here, matched
 *   to the prediction remembered at enqueue).
 * - The decision's consequences: the device's queue grows by the op's predicted time,
 *   fallbacks are counted, XO_LOG=summary gets the call. */
#include "xo_record.h"

#include <stdlib.h>

#define XO_PENDING 512
typedef struct pending_op {
    uint64_t token;
    int dev, cls;
    xo_op_kind kind;
    xo_dtype dtype;
    double raw_compute_us; /* the model's prediction before correction */
} pending_op;

struct xo__pending {
    pthread_mutex_t lock;
    pending_op op[XO_PENDING];
};

xo_status xo__record_init(xo_context *ctx)
{
    ctx->pending = calloc(1, sizeof *ctx->pending);
    if (!ctx->pending)
        return xo__error(XO_ERR_OUT_OF_MEMORY, "xo_context_create: out of host memory");
    pthread_mutex_init(&ctx->pending->lock, NULL);
    return XO_OK;
}

void xo__record_free(xo_context *ctx)
{
    if (!ctx->pending)
        return;
    pthread_mutex_destroy(&ctx->pending->lock);
    free(ctx->pending);
    ctx->pending = NULL;
}

/* A timing teaches the correction only when the model's compute time is at least the
 * device's launch floor. Below it, what a clock or a device's events measure is mostly
 * the fixed cost of running anything (the profile's launch figure, measured by
 * calibration), and read against the tiny compute prediction it said "64x slower": on an
 * H200, event-timed element-wise kernels of 3-6 us against a predicted 0.05 us drove
 * every such factor to the cap and marked a good profile provisional after each run. */
void xo__record_timing(xo_context *ctx, int d, xo_op_kind kind, xo_dtype dtype, int cls, double raw_compute_us,
                       double us)
{
    if (!(raw_compute_us > 0) || us < 0)
        return;
    pthread_mutex_lock(&ctx->profile_lock);
    double floor_us = xo__launch_us(&ctx->dev[d].profile, kind);
    pthread_mutex_unlock(&ctx->profile_lock);
    if (raw_compute_us >= floor_us)
        xo__correction_record(ctx->correction, d, kind, dtype, cls, raw_compute_us, us);
}

void xo__record_enqueued(xo_context *ctx, uint64_t token, int d, const xo_op_desc *desc, int cls,
                         double raw_compute_us)
{
    if (!(raw_compute_us > 0) && !ctx->summary) /* XO_LOG=summary shows every op's device time */
        return;
    pthread_mutex_lock(&ctx->pending->lock);
    ctx->pending->op[token % XO_PENDING] = (pending_op){.token = token, .dev = d, .cls = cls, .kind = desc->kind,
                                                        .dtype = desc->dtype, .raw_compute_us = raw_compute_us};
    pthread_mutex_unlock(&ctx->pending->lock);
}

void xo__record_drain(xo_context *ctx, int d)
{
    if (!ctx->dev[d].async)
        return;
    xo_op_timing t[64];
    int n;
    while ((n = xo__dev_drain(ctx, d, t, 64)) > 0) {
        for (int i = 0; i < n; i++) {
            if (t[i].us < 0)
                continue;
            atomic_fetch_add_explicit(&ctx->dev[d].stats.busy_ns, (uint64_t)(t[i].us * 1e3), memory_order_relaxed);
            pthread_mutex_lock(&ctx->pending->lock);
            pending_op p = ctx->pending->op[t[i].token % XO_PENDING];
            pthread_mutex_unlock(&ctx->pending->lock);
            if (p.token != t[i].token || p.dev != d)
                continue;
            xo__record_timing(ctx, d, p.kind, p.dtype, p.cls, p.raw_compute_us, t[i].us);
            if (ctx->summary) /* the call itself was counted when it was enqueued */
                xo__summary_record(ctx, p.kind, p.dtype, p.cls, d, 0, 0, t[i].us, 0);
        }
        if (n < 64)
            break;
    }
}

void xo__record_fallback(xo_context *ctx, int failed)
{
    atomic_fetch_add_explicit(&ctx->dev[failed].stats.fallbacks, 1, memory_order_relaxed);
}

void xo__queue_add(xo_context *ctx, int d, double us)
{
    if (!(us > 0))
        return;
    _Atomic uint64_t *until = &ctx->dev[d].busy_until_ns;
    uint64_t now = (uint64_t)(xo__clock_us(ctx) * 1e3), old = atomic_load_explicit(until, memory_order_relaxed), next;
    do
        next = (old > now ? old : now) + (uint64_t)(us * 1e3);
    while (!atomic_compare_exchange_weak_explicit(until, &old, next, memory_order_relaxed, memory_order_relaxed));
}

void xo__record_decision(xo_context *ctx, const xo_op_desc *desc, int cls, const xo_estimate *est, int best,
                         int ran, int failed, double t0_us)
{
    if (ran == best && ran != 0 && ctx->dev[ran].async)
        xo__queue_add(ctx, ran, est[ran].launch_us + est[ran].compute_us);
    if (failed >= 0 && failed != ran)
        xo__record_fallback(ctx, failed);
    if (ctx->summary) /* synchronous devices only: an enqueue's time says nothing */
        xo__summary_record(ctx, desc->kind, desc->dtype, cls, ran, 1, est[ran].total_us,
                           ctx->dev[ran].async ? -1 : xo__now_us() - t0_us, ran != best);
}

double xo__ticks_to_us(const xo_context *ctx, uint64_t ticks)
{
    if (ctx->clock_us) /* simulated: every busy time is the machine file's (drained), none this machine's */
        return 0.0;
    double us = xo__now_us() - ctx->us0;
    uint64_t t = xo__ticks() - ctx->tick0;
    return (us > 0 && t > 0) ? (double)ticks * us / (double)t : 0.0;
}

/* ---- stats ------------------------------------------------------------------- */

xo_status xo_stats_get(const xo_context *ctx, int device, xo_stats *out)
{
    if (!ctx)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_stats_get: ctx is NULL");
    if (!out)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_stats_get: out is NULL");
    if (device < 0 || device >= ctx->ndev)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_stats_get: device = %d is not in [0, %d)", device, ctx->ndev);
    xo__stats_atomic *s = (xo__stats_atomic *)&ctx->dev[device].stats;
    uint64_t ops = atomic_load(&s->ops), busy_ns = atomic_load(&s->busy_ns);
    for (int i = 0; i < XO_STAT_SLOTS; i++) {
        ops += atomic_load_explicit(&ctx->stat_slots[i].ops[device], memory_order_relaxed);
        busy_ns += atomic_load_explicit(&ctx->stat_slots[i].busy_ns[device], memory_order_relaxed);
    }
    out->ops = ops;
    out->bytes_in = atomic_load(&s->bytes_in);
    out->bytes_out = atomic_load(&s->bytes_out);
    out->transfers = atomic_load(&s->transfers);
    out->fallbacks = atomic_load(&s->fallbacks);
    out->busy_us = (double)busy_ns * 1e-3 + xo__ticks_to_us(ctx, atomic_load(&s->busy_ticks));
    return XO_OK;
}

xo_status xo_stats_reset(xo_context *ctx)
{
    if (!ctx)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_stats_reset: ctx is NULL");
    for (int d = 0; d < ctx->ndev; d++) {
        xo__stats_atomic *s = &ctx->dev[d].stats;
        atomic_store(&s->ops, 0);
        atomic_store(&s->bytes_in, 0);
        atomic_store(&s->bytes_out, 0);
        atomic_store(&s->transfers, 0);
        atomic_store(&s->fallbacks, 0);
        atomic_store(&s->busy_ns, 0);
        atomic_store(&s->busy_ticks, 0);
    }
    for (int i = 0; i < XO_STAT_SLOTS; i++)
        for (int d = 0; d < XO_MAX_DEVICES; d++) {
            atomic_store_explicit(&ctx->stat_slots[i].ops[d], 0, memory_order_relaxed);
            atomic_store_explicit(&ctx->stat_slots[i].busy_ns[d], 0, memory_order_relaxed);
        }
    return XO_OK;
}
