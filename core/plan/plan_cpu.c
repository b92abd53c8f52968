/* Runs of CPU steps in a plan: the replay's fast path.
 *
 * Consecutive unfused ops that the plan runs on the CPU, a gemm run with its epilogue
 * (gemm_bias_act, plan_fuse.c) and the ops it absorbed among them, form a run (a segment),
 * so that a small model's forward pass is one segment. A plan run
 * checks once, for the segment's distinct buffers, what the eager fast path checks per op
 * (every operand read is current on the host, nothing written is still read by a zero-copy
 * device), then calls the ops' CPU kernels back to back, and records them once: each
 * written buffer marked current on the host only, the ops counted together, their busy
 * time taken once. Nothing else can change those buffers meanwhile (CONTRACT.md: an op
 * that writes a buffer has it to itself), so this is what recording them op by op gives.
 * Small gemms, and gemm_bias_act with one line of C, call the kernel the CPU plugin chose
 * for them when the plan was placed (the "xo_resolve" extra); other gemms, gemv and axpy
 * call the host BLAS entries (xo_host_blas) directly, as eager's express path does (the
 * same sizes: a larger one runs through the plugin's run(), on its threads). */
#include "xo_plan.h"
#include "xo_ops.h"
#include "xo_record.h"

#include <stdlib.h>

/* A kernel the CPU plugin resolved for the op (its "xo_resolve" extra: small gemms and
 * one-line gemm_bias_act), filling in s->res; else gemm (alpha != 0: OpenBLAS may read A
 * and B otherwise, where the plugin does not), gemv (alpha != 0 likewise) and axpy on the
 * CPU, every figure within BLAS's int: the CPU plugin's run() computes the same through
 * the same calls (its host BLAS entries). */
int xo__plan_direct(const xo_context *ctx, xo__step *s)
{
    const xo_host_blas *hb = ctx->host_blas;
    const xo_op_desc *d = &s->op.desc;
    int f32 = d->dtype == XO_F32;
    if (s->kind != XO_STEP_OP || s->dev != 0)
        return 0;
    if (ctx->resolver && ctx->resolver->resolve(ctx->dev[0].pstate, 0, d, &s->res))
        return XO_DIRECT_RESOLVED;
    if (!hb || (d->m | d->n | d->k | d->ld[0] | d->ld[1] | d->ld[2] | d->inc[0] | d->inc[1]) > 0x7fffffff)
        return 0;
    switch (d->kind) {
    case XO_OP_GEMM:
        return d->alpha != 0 && d->k != 0 && XO_EXPRESS_GEMM(d->m, d->n, d->k) &&
               (f32 ? hb->sgemm != NULL : hb->dgemm != NULL);
    case XO_OP_GEMV: return d->alpha != 0 && (f32 ? hb->sgemv != NULL : hb->dgemv != NULL);
    case XO_OP_AXPY: return d->n < XO_EXPRESS_AXPY_N && (f32 ? hb->saxpy != NULL : hb->daxpy != NULL);
    default: return 0;
    }
}

#define ARG(i, T) ((T *)d->arg[i].host + d->arg[i].off)
void xo__plan_run_direct(const xo_context *ctx, const xo__step *s)
{
    const xo_op_desc *d = &s->op.desc;
    if (s->direct == XO_DIRECT_RESOLVED) {
        s->res.run(&s->res, d);
        return;
    }
    const xo_host_blas *hb = ctx->host_blas;
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

/* How many steps from step i run on the CPU as one unit of a segment: an unfused op, or a
 * gemm with the epilogue ops it runs (absorbed: they run no kernel of their own); 0 if
 * step i cannot start one. */
static int unit_len(const xo_plan *p, int i)
{
    const xo__step *s = &p->steps[i];
    if (s->kind != XO_STEP_OP || s->dev != 0 || s->fused != 0 || s->epilogue < 0)
        return 0;
    return 1 + s->epilogue;
}

/* Adds segment g's distinct buffers to p->seg_bufs (capacity checked by the caller). */
static void collect(xo_plan *p, xo__seg *g)
{
    g->buf0 = g->nbuf = 0;
    int base = 0;
    for (int i = 0; i < g - p->segs; i++)
        base += p->segs[i].nbuf;
    g->buf0 = base;
    xo__seg_buf *e = p->seg_bufs + base;
    for (int i = g->first; i < g->first + g->len; i++) {
        const xo__op *op = &p->steps[i].op;
        for (int a = 0; a < op->desc.narg; a++) {
            xo_buffer *b = op->buf[a];
            if (!b)
                continue;
            int k = 0;
            while (k < g->nbuf && e[k].b != b)
                k++;
            if (k == g->nbuf)
                e[g->nbuf++] = (xo__seg_buf){b, 0, 0};
            /* read before any op of the segment wrote it: must be current on the host */
            if ((op->need >> a & 1u) && !e[k].write)
                e[k].need = 1;
            if (op->writes >> a & 1u)
                e[k].write = 1;
        }
    }
}

void xo__plan_segments(xo_plan *p)
{
    free(p->segs);
    free(p->seg_bufs);
    p->segs = NULL;
    p->seg_bufs = NULL;
    p->nsegs = 0;
    int nseg = 0, nargs = 0;
    for (int i = 0; i < p->nsteps; i++)
        p->steps[i].seg = 0;
    for (int i = 0; i < p->nsteps;) { /* at most one segment per unit */
        int u = unit_len(p, i);
        for (int k = i; k < i + u; k++)
            nargs += p->steps[k].op.desc.narg;
        nseg += u > 0;
        i += u ? u : 1;
    }
    if (!nseg)
        return;
    p->segs = malloc((size_t)nseg * sizeof *p->segs);
    p->seg_bufs = malloc((size_t)nargs * sizeof *p->seg_bufs);
    if (!p->segs || !p->seg_bufs) { /* best effort: the ops run one by one */
        free(p->segs);
        free(p->seg_bufs);
        p->segs = NULL;
        p->seg_bufs = NULL;
        return;
    }
    for (int i = 0; i < p->nsteps;) {
        int len = 0, u;
        while (i + len < p->nsteps && (u = unit_len(p, i + len)) > 0)
            len += u;
        if (len >= 2) {
            xo__seg *g = &p->segs[p->nsegs++];
            g->first = i;
            g->len = len;
            collect(p, g);
            uint64_t sum = 1; /* known_ns is ns + 1, 0: unknown; absorbed ops take no time */
            for (int k = i; k < i + len && sum; k++)
                if (p->steps[k].epilogue >= 0)
                    sum = p->steps[k].known_ns ? sum + p->steps[k].known_ns - 1 : 0;
            g->known_ns = sum;
            p->steps[i].seg = p->nsegs;
        }
        i += len ? len : 1;
    }
}

int xo__plan_run_segment(xo_plan *p, const xo__seg *g, int stat_slot)
{
    xo_context *ctx = p->ctx;
    const xo__seg_buf *e = p->seg_bufs + g->buf0;
    for (int k = 0; k < g->nbuf; k++)
        if ((e[k].need && !(xo__valid(e[k].b) & 1u)) || (e[k].write && xo__inflight(e[k].b)))
            return 0;
    uint64_t t0 = g->known_ns ? 0 : xo__ticks(); /* tiny ops are not timed (as eager's) */
    xo__step *s = &p->steps[g->first];
    int done = 0;
    for (; done < g->len; done++) {
        if (s[done].epilogue < 0) /* its gemm ran it */
            continue;
        if (s[done].direct)
            xo__plan_run_direct(ctx, &s[done]);
        else if (__builtin_expect(xo__dev_run_cpu(ctx, &s[done].op.desc) != XO_OK, 0))
            break;
    }
    /* The ops that ran: their outputs current on the host only, counted together. After a
     * failure, only what the ops before it wrote (a later op's output may be current
     * elsewhere only). */
    if (done == g->len) {
        for (int k = 0; k < g->nbuf; k++)
            if (e[k].write)
                xo__buffer_mark_written(e[k].b, 0);
    } else {
        for (int i = 0; i < done; i++)
            for (int a = 0; a < s[i].op.desc.narg; a++)
                if (s[i].op.writes >> a & 1u)
                    xo__buffer_mark_written(s[i].op.buf[a], 0);
    }
    if (g->known_ns && done == g->len) {
        xo__record_count(ctx, stat_slot, 0, (uint64_t)done, g->known_ns, 0);
    } else {
        uint64_t ticks = g->known_ns ? 1 : xo__ticks() - t0;
        xo__record_count(ctx, stat_slot, 0, (uint64_t)done, 0, ticks ? ticks : 1);
    }
    return done;
}
