/* The run stage of the op path: make an op's operands current where placement put it
 * (buffer.c moves them), run it through the device layer (device.c), hand it to the
 * record stage (record.c), and complete it elsewhere if that device failed. Also
 * xo_finish, and the calibration's direct runs (calibration is a client of this file). */
#include "xo_run.h"
#include "xo_record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- running ---------------------------------------------------------------------- */

/* `fresh` (bit i): operand i is the result of an earlier op of the same chain (a plan's
 * fused group), which that op's own preparation covered: it only needs its allocation. */
static xo_status prepare(xo__op *op, int d, unsigned fresh)
{
    /* Only the span each operand touches moves (residency.c). The outputs come last: the
     * span lists their writes leave are checked once the inputs' moves are done. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < op->desc.narg; i++) {
            xo_buffer *b = op->buf[i];
            int write = op->writes >> i & 1u;
            if (!b || write != pass)
                continue;
            int need = xo__needs_current(op, i) && !(fresh >> i & 1u);
            XO_RETURN_IF_ERROR(xo__buffer_prepare(b, d, op->lo[i], op->hi[i], need, write));
            if (d == 0) {
                if (write && xo__inflight(b)) /* zero-copy devices may still read it */
                    xo__buffer_host_write_barrier(b, -1);
                op->desc.arg[i].host = b->host;
            } else {
                op->desc.arg[i].mem = b->mem[d];
            }
        }
    return XO_OK;
}

/* After enqueueing on a zero-copy device: those buffers' host memory is in use there
 * (readers on several threads may mark one buffer at once). */
static void mark_inflight(xo__op *op, int d)
{
    for (int i = 0; i < op->desc.narg; i++) {
        xo_buffer *b = op->buf[i];
        if (b && (xo__shared(b) >> d) & 1u)
            atomic_fetch_or_explicit(&b->inflight, 1u << d, memory_order_relaxed);
    }
}

/* Run on device d. raw_compute_us > 0 feeds the online correction; known_us >= 0 is the
 * corrected predicted run time, used for busy time of untimed tiny ops. */
xo_status xo__run(xo__op *op, int d, double raw_compute_us, int cls, double known_us)
{
    xo_context *ctx = op->ctx;
    XO_RETURN_IF_ERROR(prepare(op, d, 0));
    uint64_t busy_ns = 0, busy_ticks = 0;
    if (ctx->dev[d].async) {
        uint64_t token = atomic_fetch_add_explicit(&ctx->next_token, 1, memory_order_relaxed);
        xo__record_enqueued(ctx, token, d, &op->desc, cls, raw_compute_us);
        XO_RETURN_IF_ERROR(xo__dev_run(ctx, d, op->fn, &op->desc, token));
        xo__record_drain(ctx, d);
    } else if (raw_compute_us > 0) {
        /* A learning call: time it with the clock and feed the correction. */
        double t0 = xo__now_us();
        XO_RETURN_IF_ERROR(xo__dev_run(ctx, d, op->fn, &op->desc, 0));
        double us = xo__now_us() - t0;
        busy_ns = (uint64_t)(us * 1e3);
        xo__record_timing(ctx, d, op->desc.kind, op->desc.dtype, cls, raw_compute_us, us);
    } else if (known_us >= 0 && known_us < XO_UNTIMED_US) {
        /* A tiny op on a decision-cache hit: timing it would cost more than a good
         * share of the op, so its busy time is the corrected prediction (which the
         * learning calls keep matched to measurements). */
        XO_RETURN_IF_ERROR(xo__dev_run(ctx, d, op->fn, &op->desc, 0));
        busy_ns = (uint64_t)(known_us * 1e3);
    } else {
        uint64_t t0 = xo__ticks();
        XO_RETURN_IF_ERROR(xo__dev_run(ctx, d, op->fn, &op->desc, 0));
        busy_ticks = xo__ticks() - t0;
    }
    if (d != 0)
        mark_inflight(op, d);
    for (int i = 0; i < op->desc.narg; i++)
        if (op->writes >> i & 1u)
            xo__buffer_wrote(op->buf[i], d, op->lo[i], op->hi[i]);
    xo__record_ran(ctx, op->stat_slot, d, op->buf, op->desc.narg, 0, busy_ns, busy_ticks);
    return XO_OK;
}

/* A plan's fused chain on device d (core/plan/plan_fuse.c), as xo__run runs one op: the
 * operands of every op made current there, the chain run in one call (its steps' operands
 * filled in from the ops), then every op recorded, its outputs current on d only, with
 * the chain's busy time on the first. Nothing is written when it fails. */
xo_status xo__run_chain(xo_context *ctx, int d, xo__op *const *ops, xo_chain_step *steps, const xo_chain *chain,
                        int stat_slot)
{
    for (int k = 0; k < chain->nsteps; k++) {
        xo__op *op = ops[k];
        unsigned fresh = 0;
        for (int i = 0; i < op->desc.narg; i++)
            fresh |= (unsigned)(steps[k].from[i] >= 0) << i;
        XO_RETURN_IF_ERROR(prepare(op, d, fresh));
        for (int i = 0; i < op->desc.narg; i++) {
            steps[k].op.arg[i] = op->desc.arg[i];
            if (d == 0) /* exactly one of host and mem */
                steps[k].op.arg[i].mem = NULL;
            else
                steps[k].op.arg[i].host = NULL;
        }
    }
    uint64_t busy_ticks = 0;
    if (ctx->dev[d].async) {
        uint64_t token = atomic_fetch_add_explicit(&ctx->next_token, 1, memory_order_relaxed);
        xo__record_enqueued(ctx, token, d, &steps[0].op, 0, 0);
        XO_RETURN_IF_ERROR(xo__dev_run_chain(ctx, d, ops[0]->fn, chain, token));
        xo__record_drain(ctx, d);
    } else {
        uint64_t t0 = xo__ticks();
        XO_RETURN_IF_ERROR(xo__dev_run_chain(ctx, d, ops[0]->fn, chain, 0));
        busy_ticks = xo__ticks() - t0;
        busy_ticks += !busy_ticks;
    }
    for (int k = 0; k < chain->nsteps; k++) {
        if (d != 0)
            mark_inflight(ops[k], d);
        for (int i = 0; i < ops[k]->desc.narg; i++) /* by span, as a single op's (residency.c) */
            if (ops[k]->writes >> i & 1u)
                xo__buffer_wrote(ops[k]->buf[i], d, ops[k]->lo[i], ops[k]->hi[i]);
        xo__record_ran(ctx, stat_slot, d, ops[k]->buf, ops[k]->desc.narg, 0, 0, k ? 0 : busy_ticks);
    }
    return XO_OK;
}

/* The op failed on `failed`: complete it elsewhere (the CPU, or for a failed CPU the
 * cheapest other eligible device), with every operand's current copy intact. */
xo_status xo__fall_back(xo__op *op, int failed, const xo_decision *dec, int *out_dev)
{
    xo_context *ctx = op->ctx;
    char why[512];
    snprintf(why, sizeof why, "%s", xo_last_error());
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
    xo_status st = xo__run(op, alt, 0, 0, -1);
    if (st != XO_OK) {
        /* xo__error formats into the buffer xo_last_error() returns: copy the reason first. */
        char why_alt[512];
        snprintf(why_alt, sizeof why_alt, "%s", xo_last_error());
        return xo__error(XO_ERR_DEVICE, "%s: failed on device %d (%s) and on device %d (%s)", op->fn, failed, why, alt,
                         why_alt);
    }
    /* Counted once the op has been completed elsewhere, as the contract defines it. */
    xo__record_fallback(ctx, failed);
    *out_dev = alt;
    return XO_OK;
}

/* ---- calibration and xo_finish ----------------------------------------------------- */

xo_status xo__run_on(xo_context *ctx, int dev, xo_op_desc *desc, xo_buffer *const bufs[XO_MAX_ARGS])
{
    if (!ctx || dev < 0 || dev >= ctx->ndev || !desc)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo__run_on: bad arguments");
    xo__op op;
    xo__op_begin(&op, "xo__run_on", ctx, desc->kind, desc->dtype);
    op.desc = *desc;
    op.reads = (1u << XO_MAX_ARGS) - 1; /* calibration keeps every operand current: simple and safe */
    for (int i = 0; i < desc->narg; i++) {
        op.buf[i] = bufs[i];
        op.lo[i] = 0;
        op.hi[i] = bufs[i] ? bufs[i]->bytes : 0;
    }
    op.writes = 1u << xo__ops[desc->kind].out;
    op.need = xo__op_needs(&op);
    return xo__run(&op, dev, 0, 0, -1);
}

xo_status xo_finish(xo_context *ctx)
{
    if (!ctx)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_finish: ctx is NULL");
    if (ctx->episode)
        ctx->episode_io(ctx, NULL, 0, 0, 0);
    xo_status first = XO_OK;
    for (int d = 0; d < ctx->ndev; d++) {
        /* A device nothing was sent to since the last finish has nothing to wait for
         * (an idle clFinish on PoCL costs ~55 ns, a visible share of a tiny CPU op). */
        if (d != 0 && !atomic_exchange_explicit(&ctx->dev[d].queued, 0, memory_order_acq_rel))
            continue;
        xo_status st = xo__dev_finish(ctx, d);
        if (st != XO_OK && first == XO_OK) {
            char why[512]; /* copied: xo__error writes the buffer xo_last_error() returns */
            snprintf(why, sizeof why, "%s", xo_last_error());
            first = xo__error(st, "xo_finish: device %d (%s): %s", d, ctx->dev[d].info.plugin, why);
        }
        xo__record_drain(ctx, d);
        atomic_store_explicit(&ctx->dev[d].busy_until_ns, 0, memory_order_relaxed); /* its queue is empty */
    }
    return first;
}
