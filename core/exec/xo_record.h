/* The record stage of the op path (record.c): what is learned and counted once an op
 * has run. Its hot part is inline here, shared by run.c and the fast paths. */
#ifndef XO_RECORD_H
#define XO_RECORD_H

#include "xo_internal.h"

/* The table of predictions awaiting an asynchronous device's timings. */
xo_status xo__record_init(xo_context *ctx);
void xo__record_free(xo_context *ctx);

/* An op that ran on d in `us` was predicted at raw_compute_us (before correction): feeds
 * the online correction (nothing when raw_compute_us <= 0: not a learning call). */
void xo__record_timing(xo_context *ctx, int d, xo_op_kind kind, xo_dtype dtype, int cls, double raw_compute_us,
                       double us);
/* An op enqueued on asynchronous device d with `token`: its timing, when drained, is
 * matched to this prediction. */
void xo__record_enqueued(xo_context *ctx, uint64_t token, int d, const xo_op_desc *desc, int cls,
                         double raw_compute_us);
/* Collect d's device-measured times of completed ops: busy time and correction. */
void xo__record_drain(xo_context *ctx, int d);
/* One op that was to run on `failed` completed elsewhere. */
void xo__record_fallback(xo_context *ctx, int failed);
/* An op of `us` was queued on asynchronous device d: its queue ends that much later. */
void xo__queue_add(xo_context *ctx, int d, double us);
/* A placed op ran on `ran` (best: the choice, failed: a cheaper device whose kernels
 * failed, or -1; t0_us: xo__now_us() before it ran, read only under XO_LOG=summary):
 * the queue, fallbacks, the summary. */
void xo__record_decision(xo_context *ctx, const xo_op_desc *desc, int cls, const xo_estimate *est, int best,
                         int ran, int failed, double t0_us);

/* `ops` ops ran on device d: counted, with their busy time (busy_ns, or busy_ticks of
 * xo__ticks()), on this thread's stat slot when it has one (plain stores, no locked
 * instruction), else on the device's atomics. */
static inline __attribute__((always_inline)) void xo__record_count(xo_context *ctx, int stat_slot, int d,
                                                                   uint64_t ops, uint64_t busy_ns,
                                                                   uint64_t busy_ticks)
{
    if (busy_ticks)
        atomic_fetch_add_explicit(&ctx->dev[d].stats.busy_ticks, busy_ticks, memory_order_relaxed);
    if (stat_slot >= 0) {
        xo__stat_slot *s = &ctx->stat_slots[stat_slot];
        atomic_store_explicit(&s->ops[d], atomic_load_explicit(&s->ops[d], memory_order_relaxed) + ops,
                              memory_order_relaxed);
        if (busy_ns)
            atomic_store_explicit(&s->busy_ns[d],
                                  atomic_load_explicit(&s->busy_ns[d], memory_order_relaxed) + busy_ns,
                                  memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&ctx->dev[d].stats.ops, ops, memory_order_relaxed);
        if (busy_ns)
            atomic_fetch_add_explicit(&ctx->dev[d].stats.busy_ns, busy_ns, memory_order_relaxed);
    }
}

/* An op ran on device d: its outputs (operands `writes` of bufs) are current there only,
 * and it is counted (xo__record_count). The one place every path records a completed op
 * (a plan's run of CPU steps marks its outputs once and counts them together). */
static inline __attribute__((always_inline)) void xo__record_ran(xo_context *ctx, int stat_slot, int d,
                                                                 xo_buffer *const *bufs, int narg, unsigned writes,
                                                                 uint64_t busy_ns, uint64_t busy_ticks)
{
    for (int i = 0; i < narg; i++)
        if (writes >> i & 1u)
            xo__buffer_mark_written(bufs[i], d);
    xo__record_count(ctx, stat_slot, d, 1, busy_ns, busy_ticks);
}

#endif
