/* Fusion of element-wise chains in a plan, on every device whose plugin offers the
 * "xo_chain" extra (crossover/plugin.h): built once at capture end, after placement.
 *
 * Groups. Consecutive recorded ops placed on one device, each element-wise over the same
 * n contiguous elements and of one dtype (unary, binary, binary_scalar, scal, fill, axpy,
 * axpby, copy, scale_by), at most XO_CHAIN_MAX, whose element i depends only on element i
 * of the ops before it: where two ops of a group use one buffer and either writes it,
 * their spans there are disjoint or start at the same element (the same span, as n and
 * the increments agree); scale_by's factor is read whole, so no op of the group may write
 * it. The device's runner has the last word (supports()); a group it refuses, and every
 * op on a device without a runner, runs op by op.
 *
 * from[]: operand a of op k is the result of the latest earlier op of the group whose
 * output is that span, so it is taken from that op (a register, a temporary block), never
 * from memory, and no producer is computed twice.
 *
 * store = 0 (fused away): op k's result never reaches memory when the plan proves nothing
 * can see it: a later op of the group overwrites the same span (its readers in between
 * take it from[]), or, for the group's last writer of the span, the next use of the span
 * in the plan, in the same run, is a write that covers it entirely and reads none of it
 * (an op's dense output that is not read, such as unary, copy, fill, binary, gemm with
 * beta 0, or a recorded xo_buffer_write), with nothing reading it in between (no op, no
 * recorded read). A span still unresolved when the plan ends is stored: the caller may
 * read it after the run.
 *
 * Gemm epilogues. A gemm (row-major C, alpha != 0) followed at once, on its device, by
 * xo_bias on exactly its C (rows m, cols n, lda = ldc) and/or a forward activation over
 * C's m*n elements in place (ldc = n) becomes one gemm_bias_act: its intermediates are
 * C itself, overwritten in place by the next op, so nothing else can see them. */
#include "xo_plan.h"
#include "xo_ops.h"

#include <stdlib.h>
#include <string.h>

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

static int fusable(const xo_plan *p, const xo__step *s)
{
    int ok;
    if (s->kind != XO_STEP_OP || s->epilogue)
        return 0;
    pointwise(&s->op, 0, &ok);
    return ok && !s->op.cpu_only && s->op.desc.n > 0 && p->ctx->dev[s->dev].chain != NULL;
}

/* Op b may join a group that holds op a (earlier): every shared buffer either op writes is
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
                return 0; /* a factor read whole */
            if (x->desc.arg[i].off != y->desc.arg[j].off)
                return 0;
        }
    return 1;
}

/* Operand i of x and operand j of y are the same span (the group's rule makes
 * overlapping element-wise spans identical). */
static int same_span(const xo__op *x, int i, const xo__op *y, int j)
{
    return x->buf[i] && x->buf[i] == y->buf[j] && x->lo[i] < y->hi[j] && y->lo[j] < x->hi[i];
}

/* Could anything see [lo, hi) of b, from recorded call `t` to the end of one run, before
 * a write covers it entirely? 0 only when the plan proves it cannot. */
static int seen_later(const xo_plan *p, int t, const xo_buffer *b, size_t lo, size_t hi)
{
    for (; t < p->nsteps; t++) {
        const xo__step *s = &p->steps[t];
        if (s->kind != XO_STEP_OP) { /* a recorded read or write */
            if (s->op.buf[0] != b || s->offset + s->bytes <= lo || hi <= s->offset)
                continue;
            return s->kind == XO_STEP_READ || s->offset > lo || s->offset + s->bytes < hi;
        }
        const xo__op *op = &s->op;
        int covered = 0;
        for (int i = 0; i < op->desc.narg; i++) {
            if (op->buf[i] != b || op->hi[i] <= lo || hi <= op->lo[i])
                continue;
            if (!(op->writes >> i & 1u) || (op->reads >> i & 1u) || !(op->dense >> i & 1u) || op->lo[i] > lo ||
                op->hi[i] < hi)
                return 1; /* read, or only partly overwritten */
            covered = 1;
        }
        if (covered)
            return 0;
    }
    return 1; /* the caller may read it after the run */
}

/* Group [head, head + len) as chain c: its steps, from[] and store. */
static int build(xo_plan *p, int head, int len, xo__plan_chain *c)
{
    c->steps = calloc((size_t)len, sizeof *c->steps);
    c->ops = calloc((size_t)len, sizeof *c->ops);
    if (!c->steps || !c->ops) {
        p->fuse_short++;
        return 0;
    }
    c->head = head;
    c->dev = p->steps[head].dev;
    c->nfused_away = 0;
    for (int k = 0; k < len; k++) {
        xo__op *op = &p->steps[head + k].op;
        xo_chain_step *st = &c->steps[k];
        c->ops[k] = op;
        st->op = op->desc;
        for (int a = 0; a < XO_MAX_ARGS; a++) {
            st->from[a] = -1;
            for (int j = k - 1; j >= 0 && a < op->desc.narg && st->from[a] < 0; j--)
                if (same_span(c->ops[j], xo__ops[c->ops[j]->desc.kind].out, op, a))
                    st->from[a] = (signed char)j;
        }
    }
    for (int k = 0; k < len; k++) {
        const xo__op *op = c->ops[k];
        int o = xo__ops[op->desc.kind].out, later = 0;
        for (int m = k + 1; m < len && !later; m++)
            later = same_span(op, o, c->ops[m], xo__ops[c->ops[m]->desc.kind].out);
        c->steps[k].store = !later && seen_later(p, head + len, op->buf[o], op->lo[o], op->hi[o]);
        c->nfused_away += !c->steps[k].store;
    }
    c->chain = (xo_chain){.dtype = c->ops[0]->desc.dtype, .n = c->ops[0]->desc.n, .nsteps = len, .steps = c->steps};
    return 1;
}

/* The device's runner takes chain c, its operands where they are on that device (device
 * copies allocated now, as the plan will use them). */
static int supported(xo_plan *p, xo__plan_chain *c)
{
    xo_context *ctx = p->ctx;
    const xo__device *dev = &ctx->dev[c->dev];
    for (int k = 0; k < c->chain.nsteps; k++)
        for (int i = 0; i < c->steps[k].op.narg; i++) {
            xo_buffer *b = c->ops[k]->buf[i];
            xo_operand *o = &c->steps[k].op.arg[i];
            if (c->dev == 0) {
                o->mem = NULL;
                continue;
            }
            o->host = NULL;
            if (b && xo__buffer_ensure_alloc(b, c->dev) != XO_OK) {
                xo__clear_error();
                p->fuse_short++; /* plan_run.c tries again later */
                return 0;
            }
            o->mem = b ? b->mem[c->dev] : NULL;
        }
    return dev->chain->supports(dev->pstate, dev->pdev, &c->chain) == 1;
}

/* ---- gemm epilogues ------------------------------------------------------------------ */

/* Step t is an op on device `dev` of kind `kind` and dtype `dt`, or NULL. */
static const xo_op_desc *op_at(const xo_plan *p, int t, int dev, xo_op_kind kind, xo_dtype dt)
{
    if (t >= p->nsteps || p->steps[t].kind != XO_STEP_OP || p->steps[t].dev != dev)
        return NULL;
    const xo_op_desc *d = &p->steps[t].op.desc;
    return d->kind == kind && d->dtype == dt ? d : NULL;
}

/* How many ops after gemm step i finish it in place (0, 1 or 2); *bias: the bias step or
 * -1; *act: the activation (XO_IDENTITY: none). */
static int epilogue_of(const xo_plan *p, int i, int *bias, int *act)
{
    const xo__step *g = &p->steps[i];
    const xo_op_desc *d = &g->op.desc;
    *bias = -1;
    *act = XO_IDENTITY;
    if (g->kind != XO_STEP_OP || d->kind != XO_OP_GEMM || g->op.cpu_only || d->alpha == 0 ||
        d->layout != XO_ROW_MAJOR)
        return 0;
    const xo_buffer *c = g->op.buf[2];
    const size_t off = d->arg[2].off;
    int t = i + 1;
    const xo_op_desc *b = op_at(p, t, g->dev, XO_OP_BIAS, d->dtype);
    if (b && p->steps[t].op.buf[0] == c && b->arg[0].off == off && b->m == d->m && b->n == d->n &&
        b->ld[0] == d->ld[2])
        *bias = t++;
    const xo_op_desc *u = op_at(p, t, g->dev, XO_OP_UNARY, d->dtype);
    if (u && xo__unary_is_activation((xo_unary_op)u->subop) && d->ld[2] == d->n && u->n == d->m * d->n &&
        p->steps[t].op.buf[0] == c && p->steps[t].op.buf[1] == c && u->arg[0].off == off && u->arg[1].off == off) {
        *act = u->subop;
        t++;
    }
    return t - i - 1;
}

/* Gemm step i with `len` ops after it as one gemm_bias_act on its device, if that device
 * runs it; the gemm as recorded is kept (XO_PLAN=eager). */
static void absorb(xo_plan *p, int i, int len, int bias, int act, int *cap)
{
    xo__step *g = &p->steps[i];
    xo__op f = g->op;
    f.desc.kind = XO_OP_GEMM_BIAS_ACT;
    f.desc.subop = act;
    f.desc.narg = 3;
    if (bias >= 0) {
        const xo__op *b = &p->steps[bias].op;
        f.desc.narg = 4;
        f.desc.arg[3] = b->desc.arg[1];
        f.buf[3] = b->buf[1];
        f.lo[3] = b->lo[1];
        f.hi[3] = b->hi[1];
        f.reads |= 1u << 3;
        f.dense |= (b->dense >> 1 & 1u) << 3;
    }
    f.need = xo__op_needs(&f);
    if (xo__dev_support(p->ctx, g->dev, &f.desc) != XO_SUPPORT_YES)
        return;
    if (p->nepis == *cap) {
        xo__op *grown = realloc(p->epis, (size_t)(*cap ? 2 * *cap : 4) * sizeof *grown);
        if (!grown) {
            p->fuse_short++;
            return;
        }
        p->epis = grown;
        *cap = *cap ? 2 * *cap : 4;
    }
    g->epi = p->nepis;
    p->epis[p->nepis++] = g->op;
    g->op = f;
    g->epilogue = len;
    for (int k = 1; k <= len; k++)
        p->steps[i + k].epilogue = -1;
    p->nfused += len + 1;
}

void xo__plan_unfuse(xo_plan *p)
{
    for (int i = 0; i < p->nsteps; i++) {
        xo__step *s = &p->steps[i];
        if (s->epilogue > 0 && s->epi >= 0 && s->epi < p->nepis)
            s->op = p->epis[s->epi]; /* the gemm as recorded */
        s->fused = 0;
        s->chain = -1;
        s->epilogue = 0;
        s->epi = -1;
    }
    for (int i = 0; i < p->nchains; i++) {
        free(p->chains[i].steps);
        free(p->chains[i].ops);
    }
    free(p->chains);
    free(p->epis);
    p->chains = NULL;
    p->nchains = 0;
    p->epis = NULL;
    p->nepis = 0;
    p->nfused = 0;
}

void xo__plan_fuse(xo_plan *p)
{
    xo__plan_unfuse(p);
    p->fuse_short = 0;
    int cap = 0;
    for (int i = 0; i < p->nsteps; i++) {
        int bias, act, len = epilogue_of(p, i, &bias, &act);
        if (len > 0)
            absorb(p, i, len, bias, act, &cap);
        i += p->steps[i].epilogue;
    }
    p->chains = NULL;
    p->nchains = 0;
    cap = 0;
    for (int i = 0; i < p->nsteps;) {
        xo__step *h = &p->steps[i];
        int len = 1;
        if (fusable(p, h)) {
            while (i + len < p->nsteps && len < XO_CHAIN_MAX) {
                const xo__step *c = &p->steps[i + len];
                if (!fusable(p, c) || c->dev != h->dev || c->op.desc.n != h->op.desc.n ||
                    c->op.desc.dtype != h->op.desc.dtype)
                    break;
                int ok = 1;
                for (int k = i; k < i + len && ok; k++)
                    ok = compatible(&p->steps[k], c);
                if (!ok)
                    break;
                len++;
            }
        }
        if (len >= 2 && p->nchains == cap) {
            xo__plan_chain *grown = realloc(p->chains, (size_t)(cap ? 2 * cap : 8) * sizeof *grown);
            if (grown) {
                p->chains = grown;
                cap = cap ? 2 * cap : 8;
            } else {
                p->fuse_short++;
            }
        }
        if (len >= 2 && p->nchains < cap) {
            xo__plan_chain *c = &p->chains[p->nchains];
            memset(c, 0, sizeof *c);
            if (build(p, i, len, c) && supported(p, c)) {
                h->fused = len;
                h->chain = p->nchains++;
                for (int k = 1; k < len; k++)
                    p->steps[i + k].fused = -1;
                p->nfused += len;
            } else {
                free(c->steps);
                free(c->ops);
            }
        }
        i += len;
    }
}
