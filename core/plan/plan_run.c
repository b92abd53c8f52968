/* Running a plan: a flat walk over its recorded calls, nothing validated or placed again.
 * An op placed on the CPU whose operands are current on the host calls the CPU plugin
 * directly (as the eager fast path does) and records itself (xo_record.h); anything else
 * goes through run.c (moves, the device layer with its fault sites) and, if its device
 * fails, completes elsewhere with xo__fall_back. Recorded reads and writes are
 * xo_buffer_read / xo_buffer_write after their checks. Also xo_plan_describe and
 * xo_plan_destroy. */
#include "xo_plan.h"
#include "xo_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Op s's device failed: complete it elsewhere, choosing among the devices that can run
 * it by the model (for a failed CPU). */
static xo_status fall_back(xo_plan *p, xo__step *s, int failed)
{
    if (failed != 0)
        p->failed |= 1u << failed; /* the plan is placed again without it after this run */
    xo_decision dec = {.ndevices = p->ctx->ndev};
    double cost[XO_MAX_DEVICES];
    xo__plan_step_costs(p, s, cost);
    for (int d = 0; d < dec.ndevices; d++) {
        dec.est[d].eligible = cost[d] >= 0 && d != failed;
        dec.est[d].total_us = cost[d];
    }
    int ran;
    return xo__fall_back(&s->op, failed, &dec, &ran);
}

/* The wait before trying again what failed `strikes` times before: 16 runs, then 32, 64,
 * ... up to 2^20 runs. */
#define RETRY_RUNS 16u
static uint64_t retry_wait(int strikes) { return (uint64_t)RETRY_RUNS << (strikes < 16 ? strikes : 16); }

void xo__plan_prepare_run(xo_plan *p)
{
    xo__plan_fuse(p);
    if (p->fuse_short) { /* host or device memory ran short: fuse again after a wait */
        p->fuse_missed += p->fuse_short;
        p->fuse_retry_at = p->runs + retry_wait(p->fuse_strikes++);
    } else {
        p->fuse_strikes = 0;
    }
    for (int i = 0; i < p->nsteps; i++)
        p->steps[i].direct = xo__plan_direct(p->ctx, &p->steps[i]);
    xo__plan_segments(p);
    xo__plan_graph_prepare(p);
}

static xo_status run_op(xo_plan *p, xo__step *s, int fast)
{
    xo__op *op = &s->op;
    xo_context *ctx = p->ctx;
    if (fast && s->dev == 0) {
        int ok = 1;
        for (int i = 0; i < op->desc.narg; i++) {
            const xo_buffer *b = op->buf[i];
            if (b && (((op->need >> i & 1u) && !(xo__valid(b) & 1u)) || ((op->writes >> i & 1u) && xo__inflight(b))))
                ok = 0;
        }
        if (ok) {
            uint64_t t0 = s->known_ns ? 0 : xo__ticks();
            if (s->direct)
                xo__plan_run_direct(ctx, s);
            if (s->direct || __builtin_expect(xo__dev_run_cpu(ctx, &op->desc) == XO_OK, 1)) {
                xo__record_ran(ctx, op->stat_slot, 0, op->buf, op->desc.narg, op->writes, s->known_ns,
                               s->known_ns ? 0 : xo__ticks() - t0);
                return XO_OK;
            }
            return fall_back(p, s, 0);
        }
    }
    xo_status st = xo__run(op, s->dev, 0, s->cls, s->known_us);
    if (st != XO_OK)
        return fall_back(p, s, s->dev);
    if (s->dev != 0 && ctx->dev[s->dev].async)
        xo__queue_add(ctx, s->dev, s->pred_us);
    return XO_OK;
}

/* An op of this run failed on a device and completed elsewhere: place the plan again
 * without the devices that failed (CONTRACT.md: a plan may re-place itself between runs;
 * results never change), rather than failing over op by op in every later run. The
 * devices left out get another chance after 16 runs, then 32, 64, ... (each new failure
 * doubles the wait, up to 2^20 runs), so a device that failed once is not lost to the
 * plan, and one that keeps failing costs one failed-over run now and then. Under the run
 * lock; if placing fails (host memory), the old placement stays, which still falls back
 * op by op. */
static void place_again(xo_plan *p, uint32_t avoid)
{
    uint32_t was = p->avoid;
    p->avoid = avoid;
    xo__plan_unfuse(p); /* placement sees the ops as recorded */
    if (xo__plan_place(p) != XO_OK) {
        p->avoid = was;
        xo__plan_prepare_run(p); /* the old placement, fused again */
        return;
    }
    xo__plan_prepare_run(p);
    p->replaced++;
}

static void replace_after_run(xo_plan *p)
{
    xo_context *ctx = p->ctx;
    uint32_t fresh = p->failed & ~p->avoid;
    if (fresh) {
        p->retry_at = p->runs + retry_wait(p->strikes++);
        place_again(p, p->avoid | p->failed);
        for (int d = 1; d < ctx->ndev; d++)
            if (fresh >> d & 1u)
                xo__log(XO_LOG_WARN,
                        "xo_plan_run: a step failed on device %d (%s); the plan is placed again without it for %llu "
                        "runs",
                        d, ctx->dev[d].info.plugin, (unsigned long long)(p->retry_at - p->runs));
    } else if (p->avoid && !p->failed && p->runs >= p->retry_at) {
        xo__log(XO_LOG_INFO, "xo_plan_run: placing the plan again with every device after %llu runs",
                (unsigned long long)p->runs);
        place_again(p, 0);
    }
    p->failed = 0;
}

/* A recorded read whose download failed twice (device.c): as an eager read, it leaves
 * `dst` untouched and the device copy current, and the run goes on, so every buffer gets
 * what the recorded calls give (the run returns the read's XO_ERR_DEVICE at its end).
 * The devices holding the buffer are then avoided as a failed op's device is: placed
 * again without them, the next runs compute what they read on the host. */
static void read_failed(xo_plan *p, const xo_buffer *b)
{
    uint32_t v = xo__valid(b);
    uint32_t held = (v | v >> XO_PARTIAL) & ((1u << XO_PARTIAL) - 1u) & ~1u;
    p->failed |= held;
}

/* XO_PLAN=eager: the recorded op as an eager call (placed, and possibly run, afresh). */
static xo_status run_eager(xo__step *s)
{
    xo__op op = s->op;
    op.need = 0;
    return xo__dispatch(&op);
}

/* A fused group may run block by block: every operand it needs is current on the host and
 * no zero-copy device may still read what it writes. */
static int group_ready(const xo_plan *p, int head)
{
    for (int k = 0; k < p->steps[head].fused; k++) {
        const xo__op *op = &p->steps[head + k].op;
        for (int i = 0; i < op->desc.narg; i++) {
            const xo_buffer *b = op->buf[i];
            if (b && (((op->need >> i & 1u) && !(xo__valid(b) & 1u)) || ((op->writes >> i & 1u) && xo__inflight(b))))
                return 0;
        }
    }
    return 1;
}

/* A fused group: its chain on its device in one call (on the CPU, with its operands
 * current there, straight to the plugin, as run_op's fast path). If that fails, nothing
 * was written: each op completes elsewhere, as run_op's fall_back does (on the CPU, each
 * op is first tried there alone). */
static xo_status run_group(xo_plan *p, int head, int stat_slot, int fast)
{
    xo__step *s = &p->steps[head];
    xo__plan_chain *c = &p->chains[s->chain];
    xo_context *ctx = p->ctx;
    xo_status st;
    if (fast && c->dev == 0 && group_ready(p, head)) {
        const xo__device *dev = &ctx->dev[0];
        uint64_t t0 = xo__ticks();
        st = dev->chain->run(dev->pstate, dev->pdev, &c->chain, 0);
        if (st == XO_OK) {
            uint64_t ticks = xo__ticks() - t0; /* the group's time, on its first op */
            for (int k = 0; k < s->fused; k++)
                xo__record_ran(ctx, stat_slot, 0, c->ops[k]->buf, c->ops[k]->desc.narg, c->ops[k]->writes, 0,
                               k ? 0 : ticks + !ticks);
            return XO_OK;
        }
    } else {
        st = xo__run_chain(ctx, c->dev, c->ops, c->steps, &c->chain, stat_slot);
        if (st == XO_OK) {
            if (c->dev != 0 && ctx->dev[c->dev].async) {
                double us = 0;
                for (int k = 0; k < s->fused; k++)
                    us += s[k].pred_us;
                xo__queue_add(ctx, c->dev, us);
            }
            return XO_OK;
        }
    }
    for (int k = 0; k < s->fused; k++) {
        s[k].op.stat_slot = stat_slot;
        /* On the CPU the ops alone may still run there (a chain's temporaries did not fit). */
        XO_RETURN_IF_ERROR(c->dev == 0 ? run_op(p, &s[k], fast) : fall_back(p, &s[k], c->dev));
    }
    return XO_OK;
}

/* A gemm with its epilogue (plan_fuse.c): one gemm_bias_act, and each op it absorbed
 * counted on the device that ran it; XO_PLAN=eager issues the ops as recorded. */
static xo_status run_epilogue(xo_plan *p, xo__step *s, int stat_slot, int fast, int eager)
{
    if (eager) {
        xo__op gemm = p->epis[s->epi];
        gemm.need = 0;
        XO_RETURN_IF_ERROR(xo__dispatch(&gemm));
        for (int k = 1; k <= s->epilogue; k++)
            XO_RETURN_IF_ERROR(run_eager(&s[k]));
        return XO_OK;
    }
    s->op.stat_slot = stat_slot;
    xo_context *ctx = p->ctx;
    XO_RETURN_IF_ERROR(run_op(p, s, fast));
    /* The device that ran it holds C now (the op's own device, or where it fell back). */
    int d = 0;
    uint32_t v = xo__valid(s->op.buf[2]);
    while (d < ctx->ndev && !(v >> d & 1u))
        d++;
    for (int k = 1; k <= s->epilogue; k++)
        xo__record_ran(ctx, stat_slot, d < ctx->ndev ? d : s->dev, s[k].op.buf, 0, 0, 0, 0);
    return XO_OK;
}

static int capturing(const xo_context *ctx)
{
    for (const xo_plan *c = xo__capturing; c; c = c->next_capture)
        if (c->ctx == ctx)
            return 1;
    return 0;
}

xo_status xo_plan_run(xo_plan *p)
{
    if (!p)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_plan_run: plan is NULL");
    xo_context *ctx = p->ctx;
    if (__builtin_expect(xo__capturing != NULL, 0) && capturing(ctx))
        return xo__error(XO_ERR_INVALID_ARGUMENT,
                         "xo_plan_run: this thread is capturing on the plan's context; end the capture first");
    pthread_mutex_lock(&p->run_lock);
    if (atomic_load(&p->gone)) {
        char name[160];
        xo__plan_gone_name(p, name, sizeof name);
        pthread_mutex_unlock(&p->run_lock);
        return xo__error(XO_ERR_INVALID_ARGUMENT,
                         "xo_plan_run: a buffer the plan uses was destroyed: %s; nothing was run", name);
    }
    double t0 = ctx->summary ? xo__clock_us(ctx) : 0; /* measured per run: the summary's only */
    int stat_slot = p->nops ? xo__thread_stat_slot(ctx) : -1;
    int eager = ctx->plan_eager;
    int fast = ctx->fast_dispatch && atomic_load_explicit(&xo__log_level, memory_order_relaxed) < XO_LOG_DECISIONS;
    xo_status st = XO_OK, read_st = XO_OK;
    char read_why[XO_ERROR_MAX];
    for (int i = 0; i < p->nsteps && st == XO_OK; i++) {
        xo__step *s = &p->steps[i];
        switch (s->kind) {
        case XO_STEP_OP:
            if (s->seg && !eager && fast) {
                const xo__seg *g = &p->segs[s->seg - 1];
                int done = xo__plan_run_segment(p, g, stat_slot);
                if (done == g->len) {
                    i += done - 1;
                    break;
                }
                if (done) { /* step i + done failed on the CPU: it and the rest, one by one */
                    i += done;
                    s = &p->steps[i];
                }
            }
            if (s->fused < 0 || s->epilogue < 0)
                break; /* its group, or its gemm, ran it */
            int in_graph = !eager && p->graphs ? xo__plan_graph_run(p, i, stat_slot) : 0; /* plan_graph.c */
            if (in_graph > 0) {
                i += in_graph - 1;
                break;
            }
            if (s->fused > 0 && !eager) {
                st = run_group(p, i, stat_slot, fast);
                break;
            }
            if (s->epilogue > 0) {
                st = run_epilogue(p, s, stat_slot, fast, eager);
                break;
            }
            for (int k = 0; k < (s->fused > 0 ? s->fused : 1) && st == XO_OK; k++) {
                s[k].op.stat_slot = stat_slot;
                st = eager ? run_eager(&s[k]) : run_op(p, &s[k], fast);
            }
            break;
        case XO_STEP_WRITE: st = xo__buffer_write_now(s->op.buf[0], s->offset, s->host, s->bytes); break;
        case XO_STEP_READ:
            st = xo__buffer_read_now(s->op.buf[0], s->offset, s->host, s->bytes);
            if (st == XO_ERR_DEVICE && read_st == XO_OK) {
                read_st = st;
                snprintf(read_why, sizeof read_why, "xo_plan_run: recorded call %d (a read) failed: %s", i + 1,
                         xo_last_error());
                read_failed(p, s->op.buf[0]);
                st = XO_OK;
            }
            break;
        }
        if (st != XO_OK) {
            char why[XO_ERROR_MAX];
            snprintf(why, sizeof why, "%s", xo_last_error());
            st = xo__error(st, "xo_plan_run: recorded call %d failed: %s", i + 1, why);
        }
    }
    p->runs++;
    if (ctx->summary)
        p->run_us += xo__clock_us(ctx) - t0;
    if (ctx->summary && st == XO_OK && !eager) /* the per-op table counts the plan's ops too */
        for (int i = 0; i < p->nsteps; i++)
            if (p->steps[i].kind == XO_STEP_OP)
                xo__summary_record(ctx, p->steps[i].op.desc.kind, p->steps[i].op.desc.dtype, p->steps[i].cls,
                                   p->steps[i].dev, 1, p->steps[i].pred_us, -1, 0);
    if (p->failed || p->avoid)
        replace_after_run(p);
    if (p->fuse_short && p->runs >= p->fuse_retry_at) {
        xo__log(XO_LOG_INFO, "xo_plan_run: fusing the plan again after %llu runs (%d fused groups were short of memory)",
                (unsigned long long)p->runs, p->fuse_short);
        xo__plan_prepare_run(p);
    }
    pthread_mutex_unlock(&p->run_lock);
    if (st == XO_OK && read_st != XO_OK)
        return xo__error(read_st, "%s", read_why);
    return st;
}

int xo__plan_nsteps(const xo_plan *p)
{
    int steps = 0;
    for (int i = 0; i < p->nsteps; i++)
        steps += p->steps[i].kind == XO_STEP_OP && p->steps[i].fused >= 0 && p->steps[i].epilogue >= 0;
    return steps;
}

void xo_plan_destroy(xo_plan *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->run_lock); /* waits for a run */
    xo_context *ctx = p->ctx;
    if (ctx->summary) {
        char line[320];
        int n = snprintf(line, sizeof line,
                         "plan: %d ops in %d steps, %d fused ops, %llu runs, predicted %.2f us per run, measured %.2f "
                         "us per run",
                         p->nops, xo__plan_nsteps(p), p->nfused, (unsigned long long)p->runs, p->total_us,
                         p->runs ? p->run_us / (double)p->runs : 0.0);
        if (p->fuse_missed && n > 0 && (size_t)n < sizeof line)
            snprintf(line + n, sizeof line - (size_t)n,
                     ", groups left unfused by an allocation failure: %d (%d now, fused again after a wait)",
                     p->fuse_missed, p->fuse_short);
        xo__summary_plan(ctx, line);
    }
    pthread_mutex_unlock(&p->run_lock);
    xo__plan_graph_free(p);
    xo__plan_free(p);
}

/* Writes what fits of the description into text[size] (text may be NULL when size is 0)
 * and returns the bytes the whole of it takes, the NUL included, as snprintf counts. */
static size_t plan_describe(const xo_plan *p, char *text, size_t size)
{
    size_t used = 0;
    if (size)
        text[0] = '\0';
#define PUT(...)                                                                   \
    do {                                                                           \
        int w_ = snprintf(used < size ? text + used : NULL, used < size ? size - used : 0, __VA_ARGS__); \
        used += w_ < 0 ? 0 : (size_t)w_;                                           \
    } while (0)
    int step = 0;
    for (int i = 0; i < p->nsteps; i++) {
        const xo__step *s = &p->steps[i];
        if (s->kind != XO_STEP_OP || s->fused < 0 || s->epilogue < 0)
            continue;
        char shape[64];
        xo__op_shape_text(&s->op.desc, shape, sizeof shape);
        PUT("step %d: %s", ++step, s->op.fn + 3);
        double us = s->pred_us;
        for (int k = 1; k < s->fused || k <= s->epilogue; k++) {
            PUT("+%s", s[k].op.fn + 3);
            us += s[k].pred_us;
        }
        PUT(" %s on %d (%s), %.2f us", shape, s->dev, p->ctx->dev[s->dev].info.plugin, us);
        const xo__plan_chain *c = s->fused > 0 ? &p->chains[s->chain] : NULL;
        for (int k = 0, n = 0; c && k < s->fused; k++)
            if (!c->steps[k].store)
                PUT("%s%s (call %d)", n++ ? ", " : "; not stored: ", s[k].op.fn + 3, i + k + 1);
        PUT("\n");
    }
    char graphs[1024];
    xo__plan_graph_describe(p, graphs, sizeof graphs); /* plan_graph.c */
    PUT("%s", graphs);
    PUT("plan: %d ops in %d steps, predicted %.2f us per run (all on cpu: %.2f us, op by op: %.2f us)\n", p->nops,
        step, p->total_us, p->cpu_us, p->greedy_us);
#undef PUT
    return used + 1;
}

xo_status xo_plan_describe(const xo_plan *p, char *text, size_t size)
{
    if (!p)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_plan_describe: plan is NULL");
    if (!text && size)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_plan_describe: text is NULL");
    plan_describe(p, text, size);
    return XO_OK;
}

size_t xo_plan_describe_size(const xo_plan *p)
{
    return p ? plan_describe(p, NULL, 0) : 0;
}
