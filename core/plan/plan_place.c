/* Placing a plan as a whole, when its capture ends.
 *
 * The cost model of single ops (model.c: launch + compute x correction per device, and
 * the price of moving a buffer) priced along the whole sequence: a simulation carries
 * where each buffer's current copy lies from op to op (and through the recorded reads,
 * which need the host, and writes, which make the host current). One run is priced in
 * the steady state: the simulation runs the sequence twice and prices the second pass,
 * so a buffer left on one device and needed on another by the next run's first use pays
 * that move.
 *
 * Asynchrony: a device whose profile knows its issue cost (`issue_us`, the calling
 * thread's share of a launch) queues its ops. The simulation then keeps two clocks, the
 * host's and each such device's queue: an op there costs the host its issue and the
 * device the rest of its launch floor plus its compute, after what is queued before it;
 * the host waits for a device's queue only when it needs a copy from there (an op on
 * another device, a recorded read). A run costs the host's time or a queue's, whichever
 * is longer. Without `issue_us` every op is the host's whole launch + compute, as one
 * sum.
 *
 * Three assignments are priced: all on the CPU; op by op (each op on its cheapest device
 * given the simulated residency, the eager rule of place.c with its 10% stay-home
 * margin); and the plan's own: the best of those two and all-on-each-device, improved
 * by moving whole same-device segments to another device while that lowers the total
 * (as ggml's scheduler splits a graph; here priced by the model). The chosen one is
 * never predicted slower than the other two. In all three, a device on the host's cores
 * (PoCL) takes an op only when place.c's rule would let it (clearly faster than the CPU)
 * by a prediction measurements of that op there have corrected (may_take). Under a forced device every op it can run
 * goes there. A device an op of an earlier run failed on (p->avoid) gets no op: after
 * such a run the plan is placed again (plan_run.c). */
#include "xo_plan.h"
#include "xo_dispatch.h"

#include <stdlib.h>
#include <string.h>

/* A plan forced onto a device predicted this many times slower than all on the CPU gets
 * one warning: the force is then more likely a leftover than a wish. */
#define FORCED_SLOW_RATIO 25.0

/* Step simulations the improvement may spend (a few ms). */
#define IMPROVE_BUDGET 400000L

typedef struct placer {
    xo_plan *p;
    int ndev, nops;
    xo__profile prof[XO_MAX_DEVICES];
    double *base;    /* [nops][ndev] launch + corrected compute; < 0: cannot run there */
    double *compute; /* [nops][ndev] corrected compute */
    unsigned char *measured; /* [nops][ndev] the op's time there was measured (corrections) */
    uint32_t *init;  /* [nbufs] where each buffer is current now */
    uint32_t *valid; /* [nbufs] scratch */
    long budget;
} placer;

/* Launch + corrected compute of op on every device (< 0: cannot run there). */
static void op_costs(xo_context *ctx, const xo__profile *prof, uint32_t avoid, const xo__op *op, double *base,
                     double *compute, int *out_cls)
{
    xo__op_cost cost;
    xo__op_cost_init(&cost, op->desc.kind, op->desc.dtype, op->desc.m, op->desc.n, op->desc.k);
    cost.noperands = 0; /* transfers are the simulation's */
    int cls = xo__size_class(&cost);
    for (int d = 0; d < ctx->ndev; d++) {
        int support = d == 0                             ? XO_SUPPORT_YES
                      : op->cpu_only || (avoid >> d & 1u) ? XO_SUPPORT_NO
                                                         : xo__dev_support(ctx, d, &op->desc);
        if (support != XO_SUPPORT_YES) {
            base[d] = compute[d] = -1;
            continue;
        }
        xo_estimate e;
        xo__estimate(prof, ctx->ndev, d, &cost,
                     xo__correction_factor(ctx->correction, d, op->desc.kind, op->desc.dtype, cls), &e);
        base[d] = e.launch_us + e.compute_us;
        compute[d] = e.compute_us;
    }
    if (out_cls)
        *out_cls = cls;
}

void xo__plan_step_costs(xo_plan *p, const xo__step *s, double *out)
{
    xo_context *ctx = p->ctx;
    xo__profile prof[XO_MAX_DEVICES];
    double compute[XO_MAX_DEVICES];
    pthread_mutex_lock(&ctx->profile_lock);
    for (int d = 0; d < ctx->ndev; d++)
        prof[d] = ctx->dev[d].profile;
    pthread_mutex_unlock(&ctx->profile_lock);
    op_costs(ctx, prof, p->avoid, &s->op, out, compute, NULL);
}

/* ---- the simulation ----------------------------------------------------------------- */

/* Moving op s's stale operands to d, given `valid`. */
static double op_moves(const placer *pl, const xo__step *s, int d, const uint32_t *valid)
{
    double t = 0;
    const xo__op *op = &s->op;
    for (int i = 0; i < op->desc.narg; i++) {
        int j = s->bi[i];
        if (j < 0 || !(op->need >> i & 1u) || (valid[j] >> d & 1u))
            continue;
        int dup = 0; /* one buffer as two operands moves once */
        for (int k = 0; k < i; k++)
            dup |= s->bi[k] == j && (op->need >> k & 1u);
        if (!dup)
            t += xo__operand_us(pl->prof, pl->ndev, d, pl->p->bufs[j].bytes, valid[j], 0.0);
    }
    return t;
}

/* Residency after op s ran on d: what it needed is current there (a move between two
 * devices passes through the host), what it wrote is current only there. */
static void op_update(const xo__step *s, int d, uint32_t *valid)
{
    const xo__op *op = &s->op;
    for (int i = 0; i < op->desc.narg; i++)
        if (s->bi[i] >= 0 && (op->need >> i & 1u) && !(valid[s->bi[i]] >> d & 1u))
            valid[s->bi[i]] |= 1u | 1u << d;
    for (int i = 0; i < op->desc.narg; i++)
        if (s->bi[i] >= 0 && (op->writes >> i & 1u))
            valid[s->bi[i]] = 1u << d;
}

/* The host's clock and, for each device that queues its ops, when its queue is done. */
typedef struct timeline {
    double host, queue[XO_MAX_DEVICES];
} timeline;

/* Device d queues its ops: its issue cost is known (and under its launch floor). */
static int queues(const placer *pl, int d)
{
    return d > 0 && pl->prof[d].issue_us > 0 && pl->prof[d].issue_us < pl->prof[d].info.launch_us;
}

/* Before a copy is taken from a device that holds the only current one (valid: where the
 * buffer is current), the host waits for that device's queue. */
static void wait_source(const placer *pl, uint32_t valid, timeline *tl)
{
    if (!tl || (valid & 1u))
        return;
    for (int e = 1; e < pl->ndev; e++)
        if (valid >> e & 1u) {
            if (queues(pl, e) && tl->queue[e] > tl->host)
                tl->host = tl->queue[e];
            return;
        }
}

/* A recorded read (needs the host) or write (makes it current there only; a partial one
 * needs the rest current first). */
static double io_step(const placer *pl, const xo__step *s, uint32_t *valid, timeline *tl)
{
    int j = s->bi[0];
    uint32_t v = valid[j];
    double t = 0;
    if (!(v & 1u) && (s->kind == XO_STEP_READ || (double)s->bytes < pl->p->bufs[j].bytes)) {
        wait_source(pl, v, tl);
        t = xo__operand_us(pl->prof, pl->ndev, 0, pl->p->bufs[j].bytes, v, 0.0);
    }
    valid[j] = s->kind == XO_STEP_WRITE ? 1u : v | 1u;
    return t;
}

/* One pass of the sequence under `assign` (a device per op) from `valid` and `tl`, which
 * it leaves as the pass does: the host's time it took; per-step times into pred if given. */
static double simulate(placer *pl, const signed char *assign, uint32_t *valid, timeline *tl, double *pred)
{
    const xo_plan *p = pl->p;
    double total = 0;
    for (int i = 0, j = 0; i < p->nsteps; i++) {
        const xo__step *s = &p->steps[i];
        double t, h0 = tl->host;
        if (s->kind == XO_STEP_OP) {
            int d = assign[j];
            const xo__op *op = &s->op;
            for (int k = 0; k < op->desc.narg; k++)
                if (s->bi[k] >= 0 && (op->need >> k & 1u) && !(valid[s->bi[k]] >> d & 1u))
                    wait_source(pl, valid[s->bi[k]], tl);
            double base = pl->base[(size_t)j * (size_t)pl->ndev + (size_t)d], moves = op_moves(pl, s, d, valid);
            if (queues(pl, d)) {
                double issue = pl->prof[d].issue_us;
                tl->host += moves + issue;
                double start = tl->queue[d] > tl->host ? tl->queue[d] : tl->host;
                tl->queue[d] = start + (base > issue ? base - issue : 0.0);
                t = tl->host - h0;
            } else {
                t = (tl->host - h0) + base + moves;
                tl->host = h0 + t;
            }
            op_update(s, d, valid);
            j++;
        } else {
            double io = io_step(pl, s, valid, tl);
            t = (tl->host - h0) + io;
            tl->host = h0 + t;
        }
        if (pred)
            pred[i] = t;
        total += t;
    }
    pl->budget -= p->nsteps;
    return total;
}

/* One run in the steady state: the second of two passes, the host's time or a queue's,
 * whichever is longer. */
static double steady(placer *pl, const signed char *assign, double *pred)
{
    memcpy(pl->valid, pl->init, (size_t)pl->p->nbufs * sizeof *pl->valid);
    timeline tl = {0};
    simulate(pl, assign, pl->valid, &tl, NULL);
    timeline first = tl;
    double total = simulate(pl, assign, pl->valid, &tl, pred);
    for (int d = 1; d < pl->ndev; d++)
        if (tl.queue[d] - first.queue[d] > total)
            total = tl.queue[d] - first.queue[d];
    return total;
}

/* place.c's rule for a device on the host's cores (PoCL): it shares the cores the CPU's
 * BLAS uses, so it may take op j only when clearly faster than the CPU there; and, since
 * a plan is placed once where eager calls correct the model as they go, only by a
 * prediction that a measurement of that op there has corrected. Without the first part a
 * plan put an RNN's 10000x256 column sums on PoCL for a predicted 0.8%; without the
 * second, for a predicted 118 us against the CPU's 303 where PoCL takes about 10 ms
 * (xo bench --quick, rnn-train-b10000 on CPU + PoCL: plan 0.64-0.75x eager). */
static int may_take(const placer *pl, int j, int d)
{
    const size_t at = (size_t)j * (size_t)pl->ndev;
    const double *base = &pl->base[at];
    return d == 0 || !xo__device_on_host_cores(&pl->prof[d].info) || base[0] < 0 ||
           (pl->measured[at + (size_t)d] && base[d] <= XO_HOST_CORES_MARGIN * base[0]);
}

/* Op by op, as eager placement would choose in the steady state (second pass). */
static void greedy(placer *pl, signed char *assign)
{
    const xo_plan *p = pl->p;
    const int ndev = pl->ndev;
    memcpy(pl->valid, pl->init, (size_t)p->nbufs * sizeof *pl->valid);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0, j = 0; i < p->nsteps; i++) {
            const xo__step *s = &p->steps[i];
            if (s->kind != XO_STEP_OP) {
                io_step(pl, s, pl->valid, NULL);
                continue;
            }
            const double *base = &pl->base[(size_t)j * (size_t)ndev];
            double est[XO_MAX_DEVICES];
            int best = 0;
            for (int d = 0; d < ndev; d++) {
                est[d] = base[d] < 0 ? -1 : base[d] + op_moves(pl, s, d, pl->valid);
                if (est[d] >= 0 && est[d] < est[best])
                    best = d;
            }
            /* place.c's rule: the device holding the largest operand keeps the op unless
             * another is more than 10% cheaper. */
            int home = 0;
            double largest = -1;
            for (int k = 0; k < s->op.desc.narg; k++) {
                int b = s->bi[k];
                if (b < 0 || !(s->op.need >> k & 1u) || p->bufs[b].bytes <= largest)
                    continue;
                largest = p->bufs[b].bytes;
                uint32_t v = pl->valid[b];
                home = 0;
                if (!(v & 1u))
                    for (int d = 1; d < ndev; d++)
                        if (v >> d & 1u) {
                            home = d;
                            break;
                        }
            }
            if (best != home && est[home] >= 0 && est[best] > 0.9 * est[home])
                best = home;
            if (!may_take(pl, j, best))
                best = 0;
            assign[j++] = (signed char)best;
            op_update(s, best, pl->valid);
        }
}

/* Moving whole same-device segments of `best` to another device while that lowers the
 * total, within the budget. */
static double improve(placer *pl, signed char *best, double total, signed char *cand)
{
    const int n = pl->nops, ndev = pl->ndev;
    int improved = 1;
    while (improved && pl->budget > 0) {
        improved = 0;
        for (int a = 0; a < n && pl->budget > 0;) {
            int b = a + 1;
            while (b < n && best[b] == best[a])
                b++;
            for (int d = 0; d < ndev && pl->budget > 0; d++) {
                if (d == best[a])
                    continue;
                memcpy(cand, best, (size_t)n);
                int changed = 0;
                for (int k = a; k < b; k++)
                    if (pl->base[(size_t)k * (size_t)ndev + (size_t)d] >= 0 && may_take(pl, k, d)) {
                        cand[k] = (signed char)d;
                        changed = 1;
                    }
                if (!changed)
                    continue;
                double c = steady(pl, cand, NULL);
                if (c < total * (1 - 1e-9)) {
                    memcpy(best, cand, (size_t)n);
                    total = c;
                    improved = 1;
                    break;
                }
            }
            a = b;
        }
    }
    return total;
}

xo_status xo__plan_place(xo_plan *p)
{
    double t0 = xo__now_us();
    xo_context *ctx = p->ctx;
    placer pl = {.p = p, .ndev = ctx->ndev, .nops = p->nops, .budget = IMPROVE_BUDGET};
    const int ndev = pl.ndev;
    size_t nops = (size_t)(p->nops ? p->nops : 1), nb = (size_t)(p->nbufs ? p->nbufs : 1);
    pl.base = malloc(nops * (size_t)ndev * sizeof *pl.base);
    pl.compute = malloc(nops * (size_t)ndev * sizeof *pl.compute);
    pl.measured = calloc(nops * (size_t)ndev, 1);
    pl.init = malloc(nb * sizeof *pl.init);
    pl.valid = malloc(nb * sizeof *pl.valid);
    signed char *chosen = malloc(nops), *other = malloc(nops), *cand = malloc(nops);
    double *pred = malloc((size_t)(p->nsteps ? p->nsteps : 1) * sizeof *pred);
    xo_status st = XO_OK;
    if (!pl.base || !pl.compute || !pl.measured || !pl.init || !pl.valid || !chosen || !other || !cand || !pred) {
        st = xo__error(XO_ERR_OUT_OF_MEMORY, "xo_capture_end: out of host memory placing the plan");
        goto done;
    }
    pthread_mutex_lock(&ctx->profile_lock); /* background calibration may publish */
    for (int d = 0; d < ndev; d++)
        pl.prof[d] = ctx->dev[d].profile;
    pthread_mutex_unlock(&ctx->profile_lock);
    for (int i = 0, j = 0; i < p->nsteps; i++)
        if (p->steps[i].kind == XO_STEP_OP) {
            const xo_op_desc *d = &p->steps[i].op.desc;
            op_costs(ctx, pl.prof, p->avoid, &p->steps[i].op, &pl.base[(size_t)j * (size_t)ndev],
                     &pl.compute[(size_t)j * (size_t)ndev], &p->steps[i].cls);
            for (int e = 1; e < ndev; e++)
                pl.measured[(size_t)j * (size_t)ndev + (size_t)e] =
                    xo__correction_count(ctx->correction, e, d->kind, d->dtype, p->steps[i].cls) > 0;
            j++;
        }
    for (int b = 0; b < p->nbufs; b++) { /* whole copies; else those holding some spans (residency.c) */
        xo_buffer *buf = p->bufs[b].b;
        uint32_t v = buf ? xo__whole(buf) : 1u;
        pl.init[b] = v ? v : xo__valid(buf) >> XO_PARTIAL;
    }

    /* All on the CPU; op by op. */
    memset(chosen, 0, nops);
    p->cpu_us = steady(&pl, chosen, NULL);
    greedy(&pl, other);
    p->greedy_us = steady(&pl, other, NULL);
    double total;
    if (p->runs == 0) /* placed again after runs (plan_run.c): the policy of the capture */
        p->forced = atomic_load_explicit(&ctx->forced, memory_order_relaxed);
    if (p->forced >= 0) {
        for (size_t j = 0; j < (size_t)p->nops; j++)
            chosen[j] = (signed char)(pl.base[j * (size_t)ndev + (size_t)p->forced] >= 0 ? p->forced : 0);
        total = steady(&pl, chosen, NULL);
        if (p->runs == 0 && p->forced > 0 && total >= FORCED_SLOW_RATIO * p->cpu_us && p->cpu_us > 0)
            xo__log(XO_LOG_WARN,
                    "plan of %d ops forced onto device %d (%s) by XO_DEVICE or xo_set_device: predicted %.0f us per "
                    "run, %.0fx the %.0f us all on the CPU",
                    p->nops, p->forced, ctx->dev[p->forced].info.plugin, total, total / p->cpu_us, p->cpu_us);
    } else {
        total = p->cpu_us;
        if (p->greedy_us < total) {
            memcpy(chosen, other, nops);
            total = p->greedy_us;
        }
        for (int d = 1; d < ndev; d++) { /* all on device d (the CPU where d cannot) */
            for (size_t j = 0; j < (size_t)p->nops; j++)
                cand[j] = (signed char)(pl.base[j * (size_t)ndev + (size_t)d] >= 0 && may_take(&pl, (int)j, d) ? d : 0);
            double c = steady(&pl, cand, NULL);
            if (c < total) {
                memcpy(chosen, cand, nops);
                total = c;
            }
        }
        if (ndev > 1 && p->nops > 0)
            total = improve(&pl, chosen, total, cand);
    }
    p->total_us = steady(&pl, chosen, pred);
    for (int i = 0, j = 0; i < p->nsteps; i++) {
        xo__step *s = &p->steps[i];
        s->pred_us = pred[i];
        if (s->kind != XO_STEP_OP)
            continue;
        int d = chosen[j];
        s->dev = d;
        s->known_us = pl.compute[(size_t)j * (size_t)ndev + (size_t)d];
        s->known_ns = d == 0 && s->known_us >= 0 && s->known_us < XO_UNTIMED_US ? (uint32_t)(s->known_us * 1e3) + 1 : 0;
        j++;
    }
done:
    free(pl.base);
    free(pl.compute);
    free(pl.measured);
    free(pl.init);
    free(pl.valid);
    free(chosen);
    free(other);
    free(cand);
    free(pred);
    p->place_ms = (xo__now_us() - t0) * 1e-3;
    return st;
}
