/* Graph segments of a plan: a maximal run of two or more consecutive recorded ops placed
 * on one device whose plugin offers the "xo_graph" extra (plugin.h; CUDA graphs) is
 * recorded into a graph at its first run and from then on replayed as one launch.
 *
 * At each run of a segment: every operand it reads from outside the segment is made
 * current on the device and every operand gets its allocation there (the moves the ops
 * would have made one by one, before any of them), then the graph is launched, or
 * captured (the ops' run() calls between begin and end) and launched. Afterwards the
 * outputs are current on the device only and each op is counted once, with the model's
 * corrected time as its busy time (a graph has no per-op timings).
 *
 * Any failure (moves, capture, instantiation, launch) leaves the segment's ops to the
 * ordinary walk of plan_run.c, one by one with their usual fallbacks, and drops the graph;
 * after XO_GRAPH_TRIES failures in a row the segment stays op by op. A graph is recorded
 * on the device allocations of its operands: when one of those changes, it is recorded
 * again. A fused group (plan_fuse.c) is recorded as its one chain launch, a gemm with its
 * epilogue as its one gemm_bias_act. */
#include "xo_plan.h"
#include "xo_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XO_GRAPH_TRIES 2

typedef struct graph_seg {
    int head, count, dev;
    int fails;              /* failed runs in a row */
    void *graph;            /* NULL: capture at the next run */
    unsigned char *current; /* count * XO_MAX_ARGS: operand made current before the segment (else
                             * allocated only: an earlier op of the segment writes it, or it is an
                             * output whose old contents are not needed) */
    xo_plugin_mem **mem;    /* count * XO_MAX_ARGS: the allocations the graph was recorded on */
} graph_seg;

struct xo__plan_graphs {
    int nseg;
    graph_seg *seg;
    int *seg_at; /* per step: the segment starting there, or -1 */
};

static int eligible(xo_plan *p, const xo__step *s)
{
    return s->kind == XO_STEP_OP && s->dev != 0 && !s->op.cpu_only &&
           xo__dev_graph(p->ctx, s->dev) != NULL;
}

/* Which operands of the segment must be current before it runs: those it needs that no
 * earlier op of the segment writes (`writer`: per plan buffer, the segment that last
 * wrote it). */
static void plan_moves(xo_plan *p, graph_seg *g, int id, int *writer)
{
    for (int k = 0; k < g->count; k++) {
        const xo__step *s = &p->steps[g->head + k];
        for (int i = 0; i < s->op.desc.narg; i++) {
            const int bi = s->bi[i];
            g->current[k * XO_MAX_ARGS + i] = (s->op.need >> i & 1u) && !(bi >= 0 && writer[bi] == id);
        }
        for (int i = 0; i < s->op.desc.narg; i++)
            if ((s->op.writes >> i & 1u) && s->bi[i] >= 0)
                writer[s->bi[i]] = id;
    }
}

/* Ops that take in what a recorded write of this run put on the host (the first to need
 * some of its span) stay out of graphs when that pays: one by one, each moves only its
 * piece while the device runs the work queued before it, as eager does, where a graph
 * needs the whole span on the device before its launch, the device idle meanwhile. It
 * pays when the upload hidden that way (the whole span's but the first piece's) is more
 * than what the pieces cost over the whole (their latencies, by the device's profile);
 * else, as for a small minibatch, the ops stay in the graph. `from`: per step, 1 + the
 * write step it takes in (0: none); `pending`: per plan buffer, the span written and not
 * yet needed by an op ([lo, hi), lo == hi: none) and 1 + its write step. */
static void mark_fresh(const xo_plan *p, unsigned char *fresh, int *from, size_t *pending)
{
    for (int i = 0; i < p->nsteps; i++) {
        const xo__step *s = &p->steps[i];
        if (s->kind == XO_STEP_WRITE && s->bi[0] >= 0) {
            pending[3 * s->bi[0]] = s->offset;
            pending[3 * s->bi[0] + 1] = s->offset + s->bytes;
            pending[3 * s->bi[0] + 2] = (size_t)i + 1;
        }
        if (s->kind != XO_STEP_OP || s->dev == 0)
            continue;
        for (int a = 0; a < s->op.desc.narg; a++) {
            int bi = s->bi[a];
            if (bi < 0 || !(s->op.need >> a & 1u))
                continue;
            size_t *lo = &pending[3 * bi], *hi = &pending[3 * bi + 1];
            if (s->op.lo[a] >= *hi || s->op.hi[a] <= *lo)
                continue;
            from[i] = (int)pending[3 * bi + 2];
            if (s->op.lo[a] <= *lo)
                *lo = s->op.hi[a] < *hi ? s->op.hi[a] : *hi;
            else if (s->op.hi[a] >= *hi)
                *hi = s->op.lo[a];
            /* a piece from the middle: the rest stays pending as one span (its ends too) */
        }
    }
    xo_context *ctx = p->ctx;
    for (int w = 0; w < p->nsteps; w++) {
        const xo__step *ws = &p->steps[w];
        if (ws->kind != XO_STEP_WRITE)
            continue;
        int k = 0, dev = 0;
        for (int i = w + 1; i < p->nsteps; i++)
            if (from[i] == w + 1)
                k++, dev = p->steps[i].dev;
        if (k < 2)
            continue;
        pthread_mutex_lock(&ctx->profile_lock);
        const xo__profile *prof = &ctx->dev[dev].profile;
        double bytes = (double)ws->bytes, whole = xo__h2d_us(prof, bytes);
        double piece = xo__h2d_us(prof, bytes / k);
        pthread_mutex_unlock(&ctx->profile_lock);
        if (whole - piece > k * piece - whole)
            for (int i = w + 1; i < p->nsteps; i++)
                fresh[i] |= from[i] == w + 1;
    }
    /* a fused group, or a gemm with its epilogue, runs as one launch: in a graph or out whole */
    for (int i = 0; i < p->nsteps; i++) {
        const xo__step *s = &p->steps[i];
        int n = s->fused > 0 ? s->fused : s->epilogue > 0 ? 1 + s->epilogue : 1, any = 0;
        for (int k = 0; k < n && i + k < p->nsteps; k++)
            any |= fresh[i + k];
        for (int k = 0; k < n && i + k < p->nsteps; k++)
            fresh[i + k] = (unsigned char)any;
        i += n - 1;
    }
}

void xo__plan_graph_prepare(xo_plan *p)
{
    xo__plan_graph_free(p);
    struct xo__plan_graphs *gs = calloc(1, sizeof *gs);
    int *writer = calloc((size_t)p->nbufs + 1, sizeof *writer);
    if (gs)
        gs->seg_at = malloc((size_t)p->nsteps * sizeof *gs->seg_at + 1);
    if (!gs || !writer || !gs->seg_at) {
        free(writer);
        if (gs)
            free(gs->seg_at);
        free(gs);
        return; /* no graphs: every op runs one by one */
    }
    unsigned char *fresh = calloc((size_t)p->nsteps + 1, 1);
    int *from = calloc((size_t)p->nsteps + 1, sizeof *from);
    size_t *pending = calloc(3 * (size_t)p->nbufs + 3, sizeof *pending);
    if (fresh && from && pending)
        mark_fresh(p, fresh, from, pending);
    free(from);
    free(pending);
    int cap = 0;
    for (int i = 0; i < p->nsteps; i++)
        gs->seg_at[i] = -1;
    for (int b = 0; b < p->nbufs; b++)
        writer[b] = -1;
    for (int i = 0; i < p->nsteps; i++) {
        if (!eligible(p, &p->steps[i]) || (fresh && fresh[i]))
            continue;
        int j = i;
        while (j + 1 < p->nsteps && eligible(p, &p->steps[j + 1]) && !(fresh && fresh[j + 1]) &&
               p->steps[j + 1].dev == p->steps[i].dev)
            j++;
        if (j > i) {
            if (gs->nseg == cap) {
                cap = cap ? 2 * cap : 4;
                graph_seg *ns = realloc(gs->seg, (size_t)cap * sizeof *ns);
                if (!ns)
                    break;
                gs->seg = ns;
            }
            graph_seg *g = &gs->seg[gs->nseg];
            *g = (graph_seg){.head = i, .count = j - i + 1, .dev = p->steps[i].dev};
            g->current = calloc((size_t)g->count * XO_MAX_ARGS, 1);
            g->mem = calloc((size_t)g->count * XO_MAX_ARGS, sizeof *g->mem);
            if (!g->current || !g->mem) {
                free(g->current);
                free(g->mem);
                break;
            }
            plan_moves(p, g, gs->nseg, writer);
            gs->seg_at[i] = gs->nseg++;
        }
        i = j;
    }
    free(writer);
    free(fresh);
    p->graphs = gs;
}

static void drop_graph(xo_plan *p, graph_seg *g)
{
    xo__dev_graph_destroy(p->ctx, g->dev, g->graph);
    g->graph = NULL;
}

void xo__plan_graph_free(xo_plan *p)
{
    struct xo__plan_graphs *gs = p->graphs;
    if (!gs)
        return;
    for (int k = 0; k < gs->nseg; k++) {
        drop_graph(p, &gs->seg[k]);
        free(gs->seg[k].current);
        free(gs->seg[k].mem);
    }
    free(gs->seg);
    free(gs->seg_at);
    free(gs);
    p->graphs = NULL;
}

void xo__plan_graph_describe(const xo_plan *p, char *out, size_t cap)
{
    out[0] = '\0';
    const struct xo__plan_graphs *gs = p->graphs;
    size_t used = 0;
    for (int k = 0; gs && k < gs->nseg && used < cap; k++) {
        const graph_seg *g = &gs->seg[k];
        int w = snprintf(out + used, cap - used, "graph: recorded calls %d..%d (%d ops) on %d (%s), one launch%s\n",
                         g->head + 1, g->head + g->count, g->count, g->dev, p->ctx->dev[g->dev].info.plugin,
                         g->fails >= XO_GRAPH_TRIES ? " (failed: op by op)" : "");
        used = w < 0 ? cap : used + (size_t)w;
    }
}

/* Every operand current (or allocated) on the segment's device, as the ops' own moves
 * would make them; 1 if the allocations are still those the graph was recorded on. */
static xo_status make_current(xo_plan *p, graph_seg *g, int *same)
{
    *same = 1;
    for (int k = 0; k < g->count; k++) {
        xo__op *op = &p->steps[g->head + k].op;
        for (int i = 0; i < op->desc.narg; i++) {
            xo_buffer *b = op->buf[i];
            if (!b)
                continue;
            if (g->current[k * XO_MAX_ARGS + i])
                XO_RETURN_IF_ERROR(xo__buffer_make_current(b, g->dev));
            else
                XO_RETURN_IF_ERROR(xo__buffer_ensure_alloc(b, g->dev));
            op->desc.arg[i].mem = b->mem[g->dev];
            *same &= g->mem[k * XO_MAX_ARGS + i] == b->mem[g->dev];
        }
    }
    return XO_OK;
}

/* Record the segment's ops into a graph (nothing runs). */
static xo_status capture(xo_plan *p, graph_seg *g)
{
    xo_context *ctx = p->ctx;
    XO_RETURN_IF_ERROR(xo__dev_graph_begin(ctx, g->dev));
    xo_status st = XO_OK;
    for (int k = 0; k < g->count && st == XO_OK; k++) {
        const xo__step *s = &p->steps[g->head + k];
        if (s->fused < 0 || s->epilogue < 0)
            continue; /* its chain, or its gemm (now gemm_bias_act), runs it */
        if (s->fused > 0) { /* the chain's steps on the allocations make_current gave */
            xo__plan_chain *c = &p->chains[s->chain];
            for (int j = 0; j < c->chain.nsteps; j++)
                for (int i = 0; i < c->ops[j]->desc.narg; i++) {
                    c->steps[j].op.arg[i] = c->ops[j]->desc.arg[i];
                    c->steps[j].op.arg[i].host = NULL;
                }
            st = xo__dev_run_chain(ctx, g->dev, s->op.fn, &c->chain, XO_NO_TOKEN);
        } else {
            st = xo__dev_run(ctx, g->dev, s->op.fn, &s->op.desc, XO_NO_TOKEN);
        }
    }
    char why[XO_ERROR_MAX] = "";
    if (st != XO_OK) /* end may overwrite the reason */
        snprintf(why, sizeof why, "%s", xo_last_error());
    void *graph = NULL;
    xo_status end = xo__dev_graph_end(ctx, g->dev, &graph);
    if (st != XO_OK) {
        xo__dev_graph_destroy(ctx, g->dev, graph);
        return xo__error(st, "%s", why);
    }
    XO_RETURN_IF_ERROR(end);
    g->graph = graph;
    for (int k = 0; k < g->count; k++) {
        const xo__op *op = &p->steps[g->head + k].op;
        for (int i = 0; i < op->desc.narg; i++)
            g->mem[k * XO_MAX_ARGS + i] = op->buf[i] ? op->desc.arg[i].mem : NULL;
    }
    return XO_OK;
}

/* The ops ran on the device: outputs current there only, one count per op with the
 * model's time, zero-copy buffers in use there, the device's queue longer. */
static void record(xo_plan *p, graph_seg *g, int stat_slot)
{
    xo_context *ctx = p->ctx;
    double queued_us = 0;
    for (int k = 0; k < g->count; k++) {
        const xo__step *s = &p->steps[g->head + k];
        const xo__op *op = &s->op;
        for (int i = 0; i < op->desc.narg; i++) {
            xo_buffer *b = op->buf[i];
            if (b && (xo__shared(b) >> g->dev) & 1u)
                atomic_fetch_or_explicit(&b->inflight, 1u << g->dev, memory_order_relaxed);
        }
        const uint64_t busy_ns = s->known_us > 0 ? (uint64_t)(s->known_us * 1e3) : 0;
        for (int i = 0; i < op->desc.narg; i++) /* by span, as a single op's (residency.c) */
            if (op->writes >> i & 1u)
                xo__buffer_wrote(op->buf[i], g->dev, op->lo[i], op->hi[i]);
        xo__record_ran(ctx, stat_slot, g->dev, op->buf, op->desc.narg, 0, busy_ns, 0);
        queued_us += s->pred_us;
    }
    if (ctx->dev[g->dev].async)
        xo__queue_add(ctx, g->dev, queued_us);
}

int xo__plan_graph_run(xo_plan *p, int i, int stat_slot)
{
    struct xo__plan_graphs *gs = p->graphs;
    if (!gs || gs->seg_at[i] < 0)
        return 0;
    graph_seg *g = &gs->seg[gs->seg_at[i]];
    if (g->fails >= XO_GRAPH_TRIES)
        return 0;
    xo_context *ctx = p->ctx;
    const char *fn = p->steps[g->head].op.fn;
    int same = 0;
    if (make_current(p, g, &same) != XO_OK)
        return 0; /* the ops make their own moves, with their fallbacks */
    if (g->graph && !same)
        drop_graph(p, g); /* recorded on other allocations */
    xo_status st = g->graph ? XO_OK : capture(p, g);
    if (st == XO_OK)
        st = xo__dev_graph_launch(ctx, g->dev, g->graph, fn);
    if (st != XO_OK) {
        xo__log(XO_LOG_INFO, "plan: graph of recorded calls %d..%d on device %d (%s) failed: %s; running them one by one",
                g->head + 1, g->head + g->count, g->dev, ctx->dev[g->dev].info.plugin, xo_last_error());
        drop_graph(p, g);
        g->fails++;
        return 0;
    }
    g->fails = 0;
    record(p, g, stat_slot);
    return g->count;
}
