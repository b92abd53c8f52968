/* Eager ops that repeat, placed as one run.
 *
 * Op by op, the model places each call alone: on a CPU beside a discrete GPU, a training
 * step then splits between the two (the small ops on the CPU, the large ones on the
 * GPU) and pays, every step, the moves between them and the waits for the GPU's queue
 * that no single op's price shows. A program's step is mostly the same calls every
 * iteration, between two reads of a result (the loss). So this file records the eager
 * calls of such an *episode* (the ops and writes since the last read or xo_finish, and
 * the read that ends it) as a plan's steps, and when the last episodes repeat the ones
 * before them call for call (same op, shape, buffers and offsets: one episode the one
 * before it, or a cycle of up to EPISODE_CYCLE episodes, as a step that reads its loss
 * mid-way and is followed by an xo_finish makes two), it places them as one run as the plan
 * placer places a captured plan (plan_place.c: all on the CPU, op by op, all on each
 * device, improved by moving whole segments; the same model and the same simulated
 * residency). The next episodes then run each call where that placement put it, for as
 * long as they issue the same calls; the first call that differs returns the rest of the
 * episode to op-by-op placement. The placement is priced again every EPISODE_REPLACE
 * repeats of its cycle, so that corrections learnt meanwhile take effect.
 *
 * Only a context with a device that queues its ops, off the host's cores, whose profile
 * knows its issue cost (`issue_us`) gets an episode placer: without that figure the
 * plan placer prices every op as the host's whole launch and cannot see the CPU and a
 * queue working side by side, which eager placement's expected finish does see. A
 * CPU-only or CPU + PoCL context places exactly as before. Only auto placement consults
 * it, and only the thread that issued the context's first op feeds it (ops of other
 * threads are placed op by op). dispatch.c and buffer.c lie below plans: they reach this file through
 * ctx->episode_op and ctx->episode_io, set here. */
#include "xo_plan.h"
#include "xo_dispatch.h"

#include <stdlib.h>
#include <string.h>

/* An episode longer than this is not recorded (its calls are placed op by op). */
#define EPISODE_MAX_OPS 16384
/* Placed again after this many repeats of the episode (of its cycle). */
#define EPISODE_REPLACE 64
/* The longest cycle of episodes placed as one: a step that reads two results at two
 * points (its loss mid-way, a norm at the end) is two episodes that alternate. */
#define EPISODE_CYCLE 4

typedef struct xo__episode {
    const void *owner;    /* the feeding thread (its xo__tl), NULL until the first op */
    xo_plan *rec;         /* this episode's calls, while recorded (NULL: not recorded) */
    int nops;             /* this episode's ops so far */
    int overflow;         /* more than EPISODE_MAX_OPS: neither recorded nor repeated */
    uint64_t hash;        /* of this episode's op signatures so far */
    /* the episodes before, newest first: their hashes (0: too long to repeat) and their
     * recordings (NULL: not recorded) */
    uint64_t hist[2 * EPISODE_CYCLE];
    xo_plan *recs[EPISODE_CYCLE];
    int nhist;
    /* the placement in force, of a cycle of `period` episodes: each op's signature and
     * device, each episode's hash (cyc) and first op (bound), the episode now running */
    int active, pos, n, since, period, phase;
    uint64_t cyc[EPISODE_CYCLE];
    int bound[EPISODE_CYCLE + 1];
    uint64_t *sig;
    signed char *dev;
} xo__episode;

/* What identifies a call from one iteration to the next: op, shape, sub-op, buffers and
 * the spans it touches. */
static uint64_t op_signature(const xo__op *op)
{
    const xo_op_desc *d = &op->desc;
    uint64_t h = (uint64_t)d->kind | (uint64_t)d->dtype << 8 | (uint64_t)(d->subop & 0xff) << 16 |
                 (uint64_t)(d->axis != 0) << 24;
    h = h * 0x9E3779B97F4A7C15ull ^ d->m;
    h = h * 0xC2B2AE3D27D4EB4Full ^ d->n;
    h = h * 0x165667B19E3779F9ull ^ d->k;
    for (int i = 0; i < d->narg; i++) {
        h = h * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)op->buf[i];
        h = h * 0x27D4EB2F165667C5ull ^ op->lo[i];
    }
    return h ^ h >> 29;
}

static xo_plan *rec_new(xo_context *ctx)
{
    xo_plan *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->ctx = ctx;
    p->ctx_id = ctx->id;
    p->forced = -1;
    pthread_mutex_init(&p->run_lock, NULL);
    return p;
}

/* The recordings of the last `period` episodes, oldest first, as one plan (NULL: one was
 * not recorded, a buffer of it is gone, or memory is short). */
static xo_plan *cycle_plan(xo_context *ctx, xo__episode *ep, int period)
{
    xo_plan *p = rec_new(ctx);
    for (int e = period - 1; p && e >= 0; e--) {
        const xo_plan *r = ep->recs[e];
        int ok = r && !atomic_load(&r->gone);
        for (int i = 0; ok && i < r->nsteps; i++) {
            const xo__step *st = &r->steps[i];
            ok = st->kind == XO_STEP_OP ? xo__plan_record_op(p, &st->op)
                                        : xo__plan_record_io(p, st->op.buf[0], st->kind == XO_STEP_WRITE,
                                                             st->offset, NULL, st->bytes);
        }
        if (!ok) {
            xo__plan_free(p);
            p = NULL;
        }
    }
    return p;
}

/* Place the last `period` episodes as one run and keep their devices; 0 when it could not
 * (a recording missing, memory short). */
static int place(xo_context *ctx, xo__episode *ep, int period)
{
    xo_plan *p = cycle_plan(ctx, ep, period);
    int ok = p && xo__plan_place(p) == XO_OK;
    if (ok && ep->n < p->nops) {
        uint64_t *sig = realloc(ep->sig, (size_t)p->nops * sizeof *sig);
        if (sig)
            ep->sig = sig;
        signed char *dev = realloc(ep->dev, (size_t)p->nops);
        if (dev)
            ep->dev = dev;
        ok = sig && dev;
    }
    if (ok) {
        for (int i = 0, j = 0; i < p->nsteps; i++)
            if (p->steps[i].kind == XO_STEP_OP) {
                ep->sig[j] = op_signature(&p->steps[i].op);
                ep->dev[j++] = (signed char)p->steps[i].dev;
            }
        ep->n = p->nops;
        ep->period = period;
        ep->phase = 0;
        ep->pos = 0;
        ep->since = 0;
        ep->bound[0] = 0;
        for (int k = 0; k < period; k++) {
            ep->cyc[k] = ep->hist[period - 1 - k];
            ep->bound[k + 1] = ep->bound[k] + ep->recs[period - 1 - k]->nops;
        }
    }
    if (p)
        xo__plan_free(p);
    return ok;
}

/* The shortest cycle the last episodes repeat: the last `period` of them the same as the
 * `period` before, each recorded; 0: none. */
static int repeating_cycle(const xo__episode *ep)
{
    for (int period = 1; period <= EPISODE_CYCLE; period++) {
        if (ep->nhist < 2 * period)
            break;
        int same = 1;
        for (int k = 0; same && k < period; k++)
            same = ep->hist[k] != 0 && ep->hist[k] == ep->hist[k + period] && ep->recs[k];
        if (same)
            return period;
    }
    return 0;
}

/* Whether the next episode is recorded: until a placement is in force, and for its
 * re-pricing (a whole cycle of episodes). */
static int wants_record(const xo__episode *ep)
{
    return !ep->active || ep->since + 1 >= EPISODE_REPLACE;
}

/* A read or xo_finish: the episode ends. */
static void episode_end(xo_context *ctx, xo__episode *ep)
{
    if (ep->nops == 0 && !ep->overflow)
        return; /* a read right after another, or an xo_finish after one: the same episode */
    uint64_t h = ep->overflow ? 0 : ep->hash ^ (uint64_t)ep->nops;
    memmove(ep->hist + 1, ep->hist, sizeof ep->hist - sizeof ep->hist[0]);
    ep->hist[0] = h;
    if (ep->nhist < 2 * EPISODE_CYCLE)
        ep->nhist++;
    if (ep->recs[EPISODE_CYCLE - 1])
        xo__plan_free(ep->recs[EPISODE_CYCLE - 1]);
    memmove(ep->recs + 1, ep->recs, sizeof ep->recs - sizeof ep->recs[0]);
    ep->recs[0] = ep->rec; /* NULL when not recorded (or too long: episode_op let it go) */
    ep->rec = NULL;
    if (ep->active) { /* the episode the placement expected, call for call? */
        if (h == ep->cyc[ep->phase] && ep->pos == ep->bound[ep->phase + 1]) {
            if (++ep->phase == ep->period) {
                ep->phase = 0;
                ep->pos = 0;
                if (++ep->since >= EPISODE_REPLACE && !place(ctx, ep, ep->period))
                    ep->active = 0; /* priced again from the cycle just recorded */
            }
        } else {
            ep->active = 0;
        }
    }
    if (!ep->active) {
        int period = repeating_cycle(ep);
        ep->active = period && place(ctx, ep, period);
    }
    ep->hash = 0;
    ep->nops = 0;
    ep->overflow = 0;
    if (wants_record(ep))
        ep->rec = rec_new(ctx);
}

static int episode_op(const xo__op *op)
{
    xo__episode *ep = op->ctx->episode;
    if (ep->owner != &xo__tl) {
        if (ep->owner)
            return -1;
        ep->owner = &xo__tl;
    }
    if (ep->overflow)
        return -1;
    if (++ep->nops > EPISODE_MAX_OPS) {
        ep->overflow = 1;
        ep->active = 0;
        if (ep->rec)
            xo__plan_free(ep->rec);
        ep->rec = NULL;
        return -1;
    }
    uint64_t sig = op_signature(op);
    ep->hash = (ep->hash ^ sig) * 0x100000001B3ull + 0x9E3779B97F4A7C15ull;
    if (ep->rec && !xo__plan_record_op(ep->rec, op)) {
        xo__plan_free(ep->rec); /* out of memory: this episode is not placed */
        ep->rec = NULL;
    }
    if (!ep->active)
        return -1;
    if (ep->pos < ep->n && ep->sig[ep->pos] == sig)
        return ep->dev[ep->pos++];
    ep->active = 0; /* another call than last time: op by op for the rest */
    return -1;
}

/* b NULL: xo_finish. */
static void episode_io(xo_context *ctx, xo_buffer *b, int write, size_t offset, size_t bytes)
{
    xo__episode *ep = ctx->episode;
    if (ep->owner != &xo__tl)
        return;
    if (b && ep->rec && !ep->overflow && !xo__plan_record_io(ep->rec, b, write, offset, NULL, bytes)) {
        xo__plan_free(ep->rec);
        ep->rec = NULL;
    }
    if (!b || !write)
        episode_end(ctx, ep);
}

void xo__episode_init(xo_context *ctx)
{
    int queued = 0;
    for (int d = 1; d < ctx->ndev; d++) {
        const xo__profile *p = &ctx->dev[d].profile;
        queued |= !xo__device_on_host_cores(&p->info) && p->issue_us > 0 && p->issue_us < p->info.launch_us;
    }
    if (!queued)
        return;
    xo__episode *ep = calloc(1, sizeof *ep);
    if (!ep)
        return; /* placed op by op */
    ep->rec = rec_new(ctx);
    ctx->episode = ep;
    ctx->episode_op = episode_op;
    ctx->episode_io = episode_io;
}

void xo__episode_free(xo_context *ctx)
{
    xo__episode *ep = ctx->episode;
    if (!ep)
        return;
    if (ep->rec)
        xo__plan_free(ep->rec);
    for (int e = 0; e < EPISODE_CYCLE; e++)
        if (ep->recs[e])
            xo__plan_free(ep->recs[e]);
    free(ep->sig);
    free(ep->dev);
    free(ep);
    ctx->episode = NULL;
}
