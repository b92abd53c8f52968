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

/* ---- the host BLAS entries, as the express path calls them ------------------------------
 * gemm (alpha != 0: OpenBLAS may read A and B otherwise, where the plugin does not), gemv
 * (alpha != 0 likewise) and axpy on the CPU, every figure within BLAS's int: the CPU
 * plugin's run() computes the same through the same OpenBLAS calls. */

static int direct_ok(const xo_context *ctx, const xo__step *s)
{
    const xo_host_blas *hb = ctx->host_blas;
    const xo_op_desc *d = &s->op.desc;
    int f32 = d->dtype == XO_F32;
    if (!hb || s->dev != 0 || (d->m | d->n | d->k | d->ld[0] | d->ld[1] | d->ld[2] | d->inc[0] | d->inc[1]) > 0x7fffffff)
        return 0;
    switch (d->kind) {
    case XO_OP_GEMM: return d->alpha != 0 && d->k != 0 && (f32 ? hb->sgemm != NULL : hb->dgemm != NULL);
    case XO_OP_GEMV: return d->alpha != 0 && (f32 ? hb->sgemv != NULL : hb->dgemv != NULL);
    case XO_OP_AXPY: return f32 ? hb->saxpy != NULL : hb->daxpy != NULL;
    default: return 0;
    }
}

void xo__plan_prepare_run(xo_plan *p)
{
    xo__plan_fuse(p);
    for (int i = 0; i < p->nsteps; i++)
        p->steps[i].direct = p->steps[i].kind == XO_STEP_OP && direct_ok(p->ctx, &p->steps[i]);
    xo__plan_graph_prepare(p);
}

#define ARG(i, T) ((T *)d->arg[i].host + d->arg[i].off)
static void run_direct(const xo_host_blas *hb, const xo_op_desc *d)
{
    int f32 = d->dtype == XO_F32;
    switch (d->kind) {
    case XO_OP_GEMM:
        if (f32)
            hb->sgemm(d->layout, d->ta, d->tb, (int)d->m, (int)d->n, (int)d->k, (float)d->alpha, ARG(0, const float),
                      (int)d->ld[0], ARG(1, const float), (int)d->ld[1], (float)d->beta, ARG(2, float), (int)d->ld[2]);
        else
            hb->dgemm(d->layout, d->ta, d->tb, (int)d->m, (int)d->n, (int)d->k, d->alpha, ARG(0, const double),
                      (int)d->ld[0], ARG(1, const double), (int)d->ld[1], d->beta, ARG(2, double), (int)d->ld[2]);
        break;
    case XO_OP_GEMV:
        if (f32)
            hb->sgemv(d->layout, d->ta, (int)d->m, (int)d->n, (float)d->alpha, ARG(0, const float), (int)d->ld[0],
                      ARG(1, const float), (int)d->inc[0], (float)d->beta, ARG(2, float), (int)d->inc[1]);
        else
            hb->dgemv(d->layout, d->ta, (int)d->m, (int)d->n, d->alpha, ARG(0, const double), (int)d->ld[0],
                      ARG(1, const double), (int)d->inc[0], d->beta, ARG(2, double), (int)d->inc[1]);
        break;
    default: /* XO_OP_AXPY */
        if (f32)
            hb->saxpy((int)d->n, (float)d->alpha, ARG(0, const float), (int)d->inc[0], ARG(1, float), (int)d->inc[1]);
        else
            hb->daxpy((int)d->n, d->alpha, ARG(0, const double), (int)d->inc[0], ARG(1, double), (int)d->inc[1]);
        break;
    }
}
#undef ARG

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
                run_direct(ctx->host_blas, &op->desc);
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
    double t0 = xo__now_us();
    int stat_slot = p->nops ? xo__thread_stat_slot(ctx) : -1;
    int eager = ctx->plan_eager;
    int fast = ctx->fast_dispatch && atomic_load_explicit(&xo__log_level, memory_order_relaxed) < XO_LOG_DECISIONS;
    xo_status st = XO_OK;
    for (int i = 0; i < p->nsteps && st == XO_OK; i++) {
        xo__step *s = &p->steps[i];
        switch (s->kind) {
        case XO_STEP_OP:
            if (s->fused < 0)
                break; /* its group ran it */
            int in_graph = !eager && p->graphs ? xo__plan_graph_run(p, i, stat_slot) : 0; /* plan_graph.c */
            if (in_graph > 0) {
                i += in_graph - 1;
                break;
            }
            if (s->fused > 0 && !eager && fast && group_ready(p, i)) {
                st = xo__plan_run_fused(p, i, stat_slot);
                break;
            }
            for (int k = 0; k < (s->fused > 0 ? s->fused : 1) && st == XO_OK; k++) {
                s[k].op.stat_slot = stat_slot;
                st = eager ? run_eager(&s[k]) : run_op(p, &s[k], fast);
            }
            break;
        case XO_STEP_WRITE: st = xo__buffer_write_now(s->op.buf[0], s->offset, s->host, s->bytes); break;
        case XO_STEP_READ: st = xo__buffer_read_now(s->op.buf[0], s->offset, s->host, s->bytes); break;
        }
        if (st != XO_OK) {
            char why[XO_ERROR_MAX];
            snprintf(why, sizeof why, "%s", xo_last_error());
            st = xo__error(st, "xo_plan_run: recorded call %d failed: %s", i + 1, why);
        }
    }
    p->runs++;
    p->run_us += xo__now_us() - t0;
    if (ctx->summary && st == XO_OK && !eager) /* the per-op table counts the plan's ops too */
        for (int i = 0; i < p->nsteps; i++)
            if (p->steps[i].kind == XO_STEP_OP)
                xo__summary_record(ctx, p->steps[i].op.desc.kind, p->steps[i].op.desc.dtype, p->steps[i].cls,
                                   p->steps[i].dev, 1, p->steps[i].pred_us, -1, 0);
    pthread_mutex_unlock(&p->run_lock);
    return st;
}

int xo__plan_nsteps(const xo_plan *p)
{
    int steps = 0;
    for (int i = 0; i < p->nsteps; i++)
        steps += p->steps[i].kind == XO_STEP_OP && p->steps[i].fused >= 0;
    return steps;
}

void xo_plan_destroy(xo_plan *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->run_lock); /* waits for a run */
    xo_context *ctx = p->ctx;
    if (ctx->summary) {
        char line[256];
        snprintf(line, sizeof line,
                 "plan: %d ops in %d steps, %d fused ops, %llu runs, predicted %.2f us per run, measured %.2f us "
                 "per run",
                 p->nops, xo__plan_nsteps(p), p->nfused, (unsigned long long)p->runs, p->total_us,
                 p->runs ? p->run_us / (double)p->runs : 0.0);
        xo__summary_plan(ctx, line);
    }
    pthread_mutex_unlock(&p->run_lock);
    xo__plan_graph_free(p);
    xo__plan_free(p);
}

xo_status xo_plan_describe(const xo_plan *p, char *text, size_t size)
{
    if (!p)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_plan_describe: plan is NULL");
    if (!text && size)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_plan_describe: text is NULL");
    if (!size)
        return XO_OK;
    size_t used = 0;
    text[0] = '\0';
#define PUT(...)                                                                   \
    do {                                                                           \
        if (used < size) {                                                         \
            int w_ = snprintf(text + used, size - used, __VA_ARGS__);              \
            used = w_ < 0 ? size : used + (size_t)w_;                              \
        }                                                                          \
    } while (0)
    int step = 0;
    for (int i = 0; i < p->nsteps; i++) {
        const xo__step *s = &p->steps[i];
        if (s->kind != XO_STEP_OP || s->fused < 0)
            continue;
        char shape[64];
        xo__op_shape_text(&s->op.desc, shape, sizeof shape);
        PUT("step %d: %s", ++step, s->op.fn + 3);
        double us = s->pred_us;
        for (int k = 1; k < s->fused; k++) {
            PUT("+%s", s[k].op.fn + 3);
            us += s[k].pred_us;
        }
        PUT(" %s on %d (%s), %.2f us\n", shape, s->dev, p->ctx->dev[s->dev].info.plugin, us);
    }
    char graphs[1024];
    xo__plan_graph_describe(p, graphs, sizeof graphs); /* plan_graph.c */
    PUT("%s", graphs);
    PUT("plan: %d ops in %d steps, predicted %.2f us per run (all on cpu: %.2f us, op by op: %.2f us)\n", p->nops,
        step, p->total_us, p->cpu_us, p->greedy_us);
#undef PUT
    return XO_OK;
}
