/* CPU fusion of element-wise chains in a plan (phase 1: blocked execution).
 *
 * Consecutive recorded ops that the plan runs on the CPU, each element-wise over the same
 * n contiguous elements (unary, binary, binary_scalar, scal, fill, axpy, axpby, copy,
 * scale_by), whose element i depends only on element i of the ops before it in the chain,
 * run as one pass: block by block (XO_FUSE_BLOCK elements), every op of the chain on a
 * block while it is in cache, instead of one pass over memory per op. Every output is
 * still written (nothing is fused away), each element is computed by the very kernel the
 * op runs alone, so results are bit-identical to running the ops one after another.
 *
 * The chain's dependence rule: where two ops of a chain use one buffer and either writes
 * it, their byte spans there are disjoint or the two operands start at the same element
 * (then block b of one meets block b of the other only). scale_by's factor s[s_off] is
 * read whole by every block, so no op of the chain may write its buffer. */
#include "xo_plan.h"
#include "xo_ops.h"

#include <string.h>

#define XO_FUSE_BLOCK 4096 /* elements per block: a few operands of it fit in L1/L2 */
#define XO_FUSE_MAX 64     /* ops per group */
/* Fused blocks run on the calling thread (phase 1), while the CPU plugin splits each
 * large element-wise op over its threads (from 2 x 2^16 elements): past this size, with
 * more than one thread, the ops run one by one, threaded. Measured on 2 cores: 8 ops
 * over 4 M floats ran at 0.74-0.81x of eager fused on one thread. */
#define XO_FUSE_MAX_SERIAL ((size_t)1 << 17)

/* Operand i of op is element-wise over desc.n contiguous elements (as opposed to a
 * scalar operand such as scale_by's s), or the op is not element-wise at all (0 for every
 * operand, and *ok = 0). */
static int pointwise(const xo__op *op, int i, int *ok)
{
    const xo_op_desc *d = &op->desc;
    *ok = 1;
    switch (d->kind) {
    case XO_OP_UNARY:
    case XO_OP_BINARY:
    case XO_OP_BINARY_SCALAR: return 1;
    case XO_OP_SCAL:
    case XO_OP_FILL: *ok = d->inc[0] == 1; return 1;
    case XO_OP_AXPY:
    case XO_OP_AXPBY:
    case XO_OP_COPY: *ok = d->inc[0] == 1 && d->inc[1] == 1; return 1;
    case XO_OP_SCALE_BY: *ok = d->inc[0] == 1; return i == 1;
    default: *ok = 0; return 0;
    }
}

static int fusable(const xo__step *s)
{
    int ok;
    pointwise(&s->op, 0, &ok);
    if (!ok || s->kind != XO_STEP_OP || s->dev != 0 || s->op.desc.n <= XO_FUSE_BLOCK || s->op.cpu_only)
        return 0;
    return s->op.ctx->threads <= 1 || s->op.desc.n < XO_FUSE_MAX_SERIAL;
}

/* Op b may join a chain that holds op a (earlier): every shared buffer either op writes is
 * touched at disjoint spans or element-aligned, never as scale_by's factor. */
static int compatible(const xo__step *a, const xo__step *b)
{
    const xo__op *x = &a->op, *y = &b->op;
    for (int i = 0; i < x->desc.narg; i++)
        for (int j = 0; j < y->desc.narg; j++) {
            if (!x->buf[i] || x->buf[i] != y->buf[j])
                continue;
            int wi = x->writes >> i & 1u, wj = y->writes >> j & 1u, ok;
            if (!wi && !wj)
                continue;
            if (x->hi[i] <= y->lo[j] || y->hi[j] <= x->lo[i])
                continue; /* disjoint */
            if (!pointwise(x, i, &ok) || !pointwise(y, j, &ok))
                return 0; /* a factor read whole by every block */
            if (x->desc.arg[i].off != y->desc.arg[j].off)
                return 0;
        }
    return 1;
}

void xo__plan_fuse(xo_plan *p)
{
    p->nfused = 0;
    for (int i = 0; i < p->nsteps; i++)
        p->steps[i].fused = 0;
    for (int i = 0; i < p->nsteps;) {
        xo__step *h = &p->steps[i];
        int len = 1;
        if (fusable(h)) {
            while (i + len < p->nsteps && len < XO_FUSE_MAX) {
                const xo__step *c = &p->steps[i + len];
                if (!fusable(c) || c->op.desc.n != h->op.desc.n || c->op.desc.dtype != h->op.desc.dtype)
                    break;
                int ok = 1;
                for (int k = i; k < i + len && ok; k++)
                    ok = compatible(&p->steps[k], c);
                if (!ok)
                    break;
                len++;
            }
        }
        if (len >= 2) {
            h->fused = len;
            for (int k = 1; k < len; k++)
                p->steps[i + k].fused = -1;
            p->nfused += len;
        }
        i += len;
    }
}

xo_status xo__plan_run_fused(xo_plan *p, int head, int stat_slot)
{
    xo_context *ctx = p->ctx;
    uint64_t t0 = xo__ticks();
    xo__step *g = &p->steps[head];
    const int len = g->fused;
    const size_t n = g->op.desc.n;
    for (size_t i0 = 0; i0 < n; i0 += XO_FUSE_BLOCK) {
        size_t bn = n - i0 < XO_FUSE_BLOCK ? n - i0 : XO_FUSE_BLOCK;
        for (int k = 0; k < len; k++) {
            const xo__op *op = &g[k].op;
            xo_op_desc d = op->desc;
            d.n = bn;
            for (int a = 0; a < d.narg; a++) {
                int ok;
                if (pointwise(op, a, &ok))
                    d.arg[a].off += i0;
            }
            if (xo__dev_run_cpu(ctx, &d) != XO_OK) /* element-wise CPU kernels do not fail */
                return xo__error(XO_ERR_DEVICE, "%s: failed on the CPU inside a fused group: %s", op->fn,
                                 xo_last_error());
        }
    }
    uint64_t ticks = xo__ticks() - t0; /* the group's time, on its first op */
    for (int k = 0; k < len; k++) {
        const xo__op *op = &g[k].op;
        xo__record_ran(ctx, stat_slot, 0, (xo_buffer *const *)op->buf, op->desc.narg, op->writes, 0,
                       k ? 0 : (ticks ? ticks : 1));
    }
    return XO_OK;
}
