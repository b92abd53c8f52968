/* One op's way through the core after validation: estimate on every device, choose,
 * make operands current there, run, fall back on failure, record. */
#include "xo_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- device timings that arrive after the op (async plugins) ----------------------- */

#define XO_PENDING 512
typedef struct pending_op {
    uint64_t token;
    int dev, cls;
    xo_op_kind kind;
    xo_dtype dtype;
    double raw_compute_us; /* the model's prediction before correction */
} pending_op;

struct xo__dispatch {
    pthread_mutex_t lock;
    pending_op pending[XO_PENDING];
};

xo_status xo__dispatch_init(xo_context *ctx)
{
    ctx->dispatch = calloc(1, sizeof *ctx->dispatch);
    if (!ctx->dispatch)
        return xo__error(XO_ERR_OUT_OF_MEMORY, "xo_context_create: out of host memory");
    pthread_mutex_init(&ctx->dispatch->lock, NULL);
    return XO_OK;
}

void xo__dispatch_free(xo_context *ctx)
{
    if (!ctx->dispatch)
        return;
    pthread_mutex_destroy(&ctx->dispatch->lock);
    free(ctx->dispatch);
    ctx->dispatch = NULL;
}

static void remember_pending(xo_context *ctx, const pending_op *p)
{
    pthread_mutex_lock(&ctx->dispatch->lock);
    ctx->dispatch->pending[p->token % XO_PENDING] = *p;
    pthread_mutex_unlock(&ctx->dispatch->lock);
}

/* Collect device-measured times of completed ops: busy time and online correction. */
static void drain_timings(xo_context *ctx, int d)
{
    xo__device *dev = &ctx->dev[d];
    if (!dev->plugin->drain_timings)
        return;
    xo_op_timing t[64];
    int n;
    while ((n = dev->plugin->drain_timings(dev->pstate, dev->pdev, t, 64)) > 0) {
        for (int i = 0; i < n; i++) {
            if (t[i].us < 0)
                continue;
            atomic_fetch_add_explicit(&dev->stats.busy_ns, (uint64_t)(t[i].us * 1e3), memory_order_relaxed);
            pthread_mutex_lock(&ctx->dispatch->lock);
            pending_op p = ctx->dispatch->pending[t[i].token % XO_PENDING];
            pthread_mutex_unlock(&ctx->dispatch->lock);
            if (p.token == t[i].token && p.dev == d && p.raw_compute_us > 0)
                xo__correction_record(ctx->correction, d, p.kind, p.dtype, p.cls, p.raw_compute_us, t[i].us);
        }
        if (n < 64)
            break;
    }
}

/* ---- the calling thread's last decision, per context -------------------------------- */

_Thread_local xo__thread xo__tl;

static xo__decision_slot *slot_for(const xo_context *ctx, int create)
{
    xo__thread *t = &xo__tl;
    for (int i = 0; i < XO_DECISION_SLOTS; i++)
        if (t->slots[i].ctx_id == ctx->id) {
            if (create)
                t->last = &t->slots[i];
            return &t->slots[i];
        }
    if (!create)
        return NULL;
    xo__decision_slot *s = &t->slots[t->next_slot++ % XO_DECISION_SLOTS];
    s->ctx_id = ctx->id;
    s->fn = NULL;
    s->lazy = NULL;
    s->d.device = -1;
    s->d.forced = 0;
    s->d.ndevices = 0;
    s->d.op[0] = '\0';
    int slot = atomic_fetch_add(&((xo_context *)ctx)->next_stat_slot, 1);
    s->stat_slot = slot < XO_STAT_SLOTS ? slot : -1;
    t->last = s;
    return s;
}

/* The cold part of a cache entry (the thread has one once it has any entry). */
static xo__cache_cold *cold_of(const xo__cache_entry *e)
{
    return &xo__tl.cold[e - xo__tl.cache];
}

/* A decision whose estimates still live in a cache entry gets its own copy. */
static void materialize(xo__decision_slot *s)
{
    if (!s->lazy)
        return;
    int n = s->d.ndevices < XO_MAX_DEVICES ? s->d.ndevices : XO_MAX_DEVICES;
    memcpy(s->d.est, cold_of(s->lazy)->est, (size_t)n * sizeof s->d.est[0]);
    s->lazy = NULL;
}

/* The thread's cold cache parts, freed when the thread exits. */
static pthread_key_t cold_key;
static pthread_once_t cold_once = PTHREAD_ONCE_INIT;
static void cold_key_init(void) { (void)pthread_key_create(&cold_key, free); }

static int cache_ready(xo__thread *t)
{
    if (t->cold)
        return 1;
    xo__cache_cold *cold = calloc(XO_CACHE_SLOTS, sizeof *cold);
    if (!cold)
        return 0; /* no cache: every op evaluates the model */
    pthread_once(&cold_once, cold_key_init);
    (void)pthread_setspecific(cold_key, cold);
    t->cold = cold;
    return 1;
}

/* XO_LOG=summary: the calls of entry e that took a fast path (the CPU) since it was
 * last counted. */
static void summary_flush(xo_context *ctx, xo__cache_entry *e)
{
    xo__cache_cold *c = cold_of(e);
    if (!ctx->summary || c->ctx_id != ctx->id || e->uses <= c->counted)
        return;
    xo__summary_record(ctx, (xo_op_kind)(e->key[0] & 0xff), (xo_dtype)(e->key[0] >> 8 & 1), c->cls, 0,
                       e->uses - c->counted, c->est[0].total_us, -1, 0);
    c->counted = e->uses;
}

void xo__dispatch_flush_thread(xo_context *ctx)
{
    if (!xo__tl.cold)
        return;
    for (int i = 0; i < XO_CACHE_SLOTS; i++)
        summary_flush(ctx, &xo__tl.cache[i]);
}

/* On a miss: the way of `set` to replace (the less recently evaluated). */
static xo__cache_entry *cache_victim(xo__cache_entry *set)
{
    xo__cache_entry *v = set;
    for (int w = 1; w < XO_CACHE_WAYS; w++)
        if (cold_of(&set[w])->stamp < cold_of(v)->stamp)
            v = &set[w];
    return v;
}

/* Before cache entry `e` changes: decisions that point at it take their copy. */
static void release_entry(const xo__cache_entry *e)
{
    xo__thread *t = &xo__tl;
    for (int i = 0; i < XO_DECISION_SLOTS; i++)
        if (t->slots[i].lazy == e)
            materialize(&t->slots[i]);
}

/* Count one completed op and its busy time: on this thread's own slot when it has one. */
static void count_op(xo_context *ctx, int stat_slot, int d, uint64_t busy_ns)
{
    if (stat_slot >= 0) {
        xo__stat_slot *s = &ctx->stat_slots[stat_slot];
        atomic_store_explicit(&s->ops[d], atomic_load_explicit(&s->ops[d], memory_order_relaxed) + 1,
                              memory_order_relaxed);
        if (busy_ns)
            atomic_store_explicit(&s->busy_ns[d],
                                  atomic_load_explicit(&s->busy_ns[d], memory_order_relaxed) + busy_ns,
                                  memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&ctx->dev[d].stats.ops, 1, memory_order_relaxed);
        if (busy_ns)
            atomic_fetch_add_explicit(&ctx->dev[d].stats.busy_ns, busy_ns, memory_order_relaxed);
    }
}

xo_status xo_last_decision(const xo_context *ctx, xo_decision *out)
{
    if (!ctx)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_last_decision: ctx is NULL");
    if (!out)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_last_decision: out is NULL");
    xo__decision_slot *s = slot_for(ctx, 0);
    if (!s) {
        memset(out, 0, sizeof *out);
        out->device = -1;
        return XO_OK;
    }
    materialize(s);
    *out = s->d;
    /* fn is a string literal "xo_<name>" */
    snprintf(out->op, sizeof out->op, "%s", s->fn ? s->fn + 3 : "");
    return XO_OK;
}

/* ---- placement ------------------------------------------------------------------- */

/* 1: the device runs this kind and dtype; 0: it cannot by design; 2: it should but
 * failed here (a kernel that did not build): ops that would run there are fallbacks. */
int xo__device_support(xo_context *ctx, int d, xo_op_kind kind, xo_dtype dtype)
{
    xo__device *dev = &ctx->dev[d];
    int s = atomic_load_explicit(&dev->supports[kind][dtype], memory_order_relaxed);
    if (s < 0) {
        s = dtype == XO_F64 ? dev->info.fp64 != 0 : 1;
        if (s && dev->plugin->supports) {
            int r = dev->plugin->supports(dev->pstate, dev->pdev, kind, dtype);
            s = r > 0 ? 1 : r < 0 ? 2 : 0;
        }
        atomic_store(&dev->supports[kind][dtype], s);
    }
    return s;
}

static void compute_needs(xo__op *op) { op->need = xo__op_needs(op); }

static inline int needs_current(const xo__op *op, int i) { return (op->need >> i) & 1u; }

static void describe_cost(const xo__op *op, xo__op_cost *cost)
{
    xo__op_cost_init(cost, op->desc.kind, op->desc.dtype, op->desc.m, op->desc.n, op->desc.k);
    cost->noperands = 0;
    for (int i = 0; i < op->desc.narg; i++) {
        xo_buffer *b = op->buf[i];
        if (!b || !needs_current(op, i))
            continue;
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= op->buf[j] == b && needs_current(op, j);
        if (seen)
            continue;
        cost->operand[cost->noperands].bytes = (double)b->bytes;
        cost->operand[cost->noperands].valid = xo__valid(b);
        cost->noperands++;
    }
}

static void log_decision(const xo_context *ctx, const char *fn, const xo_decision *dec, const xo_op_desc *desc)
{
    char shape[64], line[768];
    xo__op_shape_text(desc, shape, sizeof shape);
    int used = snprintf(line, sizeof line, "%s %s -> %d %s%s | predicted us:", fn + 3, shape, dec->device,
                        ctx->dev[dec->device].info.plugin, dec->forced ? " (forced)" : "");
    for (int d = 0; d < dec->ndevices && used > 0 && (size_t)used < sizeof line; d++) {
        if (dec->est[d].eligible)
            used += snprintf(line + used, sizeof line - (size_t)used, " %d %s %.2f", d, ctx->dev[d].info.plugin,
                             dec->est[d].total_us);
        else
            used += snprintf(line + used, sizeof line - (size_t)used, " %d %s ineligible", d,
                             ctx->dev[d].info.plugin);
    }
    xo__log(XO_LOG_DECISIONS, "%s", line);
}

/* ---- running ---------------------------------------------------------------------- */

static xo_status prepare(xo__op *op, int d)
{
    for (int i = 0; i < op->desc.narg; i++) {
        xo_buffer *b = op->buf[i];
        if (!b)
            continue;
        if (d == 0) {
            /* The host copy is the CPU's: only a stale one needs moving. */
            if (!(xo__valid(b) & 1u) && needs_current(op, i))
                XO_RETURN_IF_ERROR(xo__buffer_make_current(b, 0));
            if ((op->writes >> i & 1u) && xo__inflight(b)) /* zero-copy devices may still read it */
                xo__buffer_host_write_barrier(b, -1);
            op->desc.arg[i].host = b->host;
            continue;
        }
        if (needs_current(op, i))
            XO_RETURN_IF_ERROR(xo__buffer_make_current(b, d));
        else
            XO_RETURN_IF_ERROR(xo__buffer_ensure_alloc(b, d));
        op->desc.arg[i].mem = b->mem[d];
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
static xo_status run_on(xo__op *op, int d, double raw_compute_us, int cls, double known_us)
{
    xo_context *ctx = op->ctx;
    xo__device *dev = &ctx->dev[d];
    XO_RETURN_IF_ERROR(prepare(op, d));
    if (ctx->nfaults && xo__fault_hit(ctx, dev->info.plugin, "launch"))
        return xo__error(XO_ERR_DEVICE, "%s: launch on device %d (%s) failed (XO_FAULTS)", op->fn, d,
                         dev->info.plugin);
    if (d != 0) /* here too: a failing run may have queued part of its work */
        atomic_store_explicit(&dev->queued, 1, memory_order_relaxed);
    int async = dev->plugin->drain_timings != NULL;
    uint64_t busy_ns = 0;
    if (async) {
        uint64_t token = atomic_fetch_add_explicit(&ctx->next_token, 1, memory_order_relaxed);
        if (raw_compute_us > 0)
            remember_pending(ctx, &(pending_op){.token = token, .dev = d, .cls = cls, .kind = op->desc.kind,
                                                .dtype = op->desc.dtype, .raw_compute_us = raw_compute_us});
        XO_RETURN_IF_ERROR(dev->plugin->run(dev->pstate, dev->pdev, &op->desc, token));
        drain_timings(ctx, d);
    } else if (raw_compute_us > 0) {
        /* A learning call: time it with the clock and feed the correction. */
        double t0 = xo__now_us();
        XO_RETURN_IF_ERROR(dev->plugin->run(dev->pstate, dev->pdev, &op->desc, 0));
        double us = xo__now_us() - t0;
        busy_ns = (uint64_t)(us * 1e3);
        xo__correction_record(ctx->correction, d, op->desc.kind, op->desc.dtype, cls, raw_compute_us, us);
    } else if (known_us >= 0 && known_us < XO_UNTIMED_US) {
        /* A tiny op on a decision-cache hit: timing it would cost more than a good
         * share of the op, so its busy time is the corrected prediction (which the
         * learning calls keep matched to measurements). */
        XO_RETURN_IF_ERROR(dev->plugin->run(dev->pstate, dev->pdev, &op->desc, 0));
        busy_ns = (uint64_t)(known_us * 1e3);
    } else {
        uint64_t t0 = xo__ticks();
        XO_RETURN_IF_ERROR(dev->plugin->run(dev->pstate, dev->pdev, &op->desc, 0));
        atomic_fetch_add_explicit(&dev->stats.busy_ticks, xo__ticks() - t0, memory_order_relaxed);
    }
    if (d != 0) {
        mark_inflight(op, d);
        /* After the enqueue: an xo_finish from now on waits for it. */
        atomic_store_explicit(&dev->queued, 1, memory_order_release);
    }
    for (int i = 0; i < op->desc.narg; i++)
        if (op->writes >> i & 1u)
            xo__buffer_mark_written(op->buf[i], d);
    count_op(ctx, op->stat_slot, d, busy_ns);
    return XO_OK;
}

/* The op failed on `failed`: complete it elsewhere (the CPU, or for a failed CPU the
 * cheapest other eligible device), with every operand's current copy intact. */
static xo_status fall_back(xo__op *op, int failed, const xo_decision *dec, int *out_dev)
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
    xo_status st = run_on(op, alt, 0, 0, -1);
    if (st != XO_OK)
        return xo__error(XO_ERR_DEVICE, "%s: failed on device %d (%s) and on device %d (%s)", op->fn, failed, why, alt,
                         xo_last_error());
    /* Counted once the op has been completed elsewhere, as the contract defines it. */
    atomic_fetch_add_explicit(&ctx->dev[failed].stats.fallbacks, 1, memory_order_relaxed);
    *out_dev = alt;
    return XO_OK;
}

/* ---- the decision cache --------------------------------------------------------------
 * The same op shape with the same residency gets the same decision until the online
 * correction moves, so each thread keeps recent decisions: a hit skips the model. An
 * entry is re-evaluated (and its timing fed to the correction) on its first
 * XO_LEARN_CALLS uses and then on every XO_REFRESH-th, so corrections still take effect. */

/* ---- queues: what each asynchronous device has still to do (predicted) ---------------- */

/* Each device's wait until its queued work is done, in us; 1 if any is busy. */
static int queue_waits(const xo_context *ctx, double *wait)
{
    int busy = 0;
    double now = -1;
    for (int d = 0; d < ctx->ndev; d++) {
        uint64_t until = atomic_load_explicit(&ctx->dev[d].busy_until_ns, memory_order_relaxed);
        wait[d] = 0;
        if (!until)
            continue;
        if (now < 0)
            now = xo__now_us();
        double w = (double)until * 1e-3 - now;
        if (w > 0) {
            wait[d] = w;
            busy = 1;
        }
    }
    return busy;
}

/* An op of `us` was queued on d: its queue ends that much later. */
static void queue_add(xo_context *ctx, int d, double us)
{
    if (!(us > 0))
        return;
    _Atomic uint64_t *until = &ctx->dev[d].busy_until_ns;
    uint64_t now = (uint64_t)(xo__now_us() * 1e3), old = atomic_load_explicit(until, memory_order_relaxed), next;
    do
        next = (old > now ? old : now) + (uint64_t)(us * 1e3);
    while (!atomic_compare_exchange_weak_explicit(until, &old, next, memory_order_relaxed, memory_order_relaxed));
}

/* Evaluate the model on every device through xo__place: fills dec->est, raw
 * (uncorrected compute) and returns the cost-based choice. */
static int evaluate(xo__op *op, xo_decision *dec, double *raw, int *out_cls, int *out_failed, const double *wait)
{
    xo_context *ctx = op->ctx;
    xo__op_cost cost;
    describe_cost(op, &cost);
    int cls = xo__size_class(&cost);
    xo__profile prof[XO_MAX_DEVICES];
    int support[XO_MAX_DEVICES];
    double factor[XO_MAX_DEVICES];
    pthread_mutex_lock(&ctx->profile_lock); /* background calibration may publish */
    for (int d = 0; d < ctx->ndev; d++)
        prof[d] = ctx->dev[d].profile;
    pthread_mutex_unlock(&ctx->profile_lock);
    for (int d = 0; d < ctx->ndev; d++) {
        support[d] = d == 0 ? XO_SUPPORT_YES
                     : op->cpu_only ? XO_SUPPORT_NO
                                    : xo__device_support(ctx, d, op->desc.kind, op->desc.dtype);
        factor[d] = support[d] == XO_SUPPORT_YES
                        ? xo__correction_factor(ctx->correction, d, op->desc.kind, op->desc.dtype, cls)
                        : 1.0;
    }
    xo__placement pl;
    xo__place(&(xo__place_in){.profiles = prof, .ndev = ctx->ndev, .cost = &cost, .correction = factor,
                              .support = support, .forced = -1, .wait_us = wait},
              &pl);
    memcpy(dec->est, pl.est, (size_t)ctx->ndev * sizeof pl.est[0]);
    memcpy(raw, pl.raw, (size_t)ctx->ndev * sizeof pl.raw[0]);
    *out_failed = pl.failed;
    *out_cls = cls;
    return pl.best;
}

xo_status xo__dispatch_slow(xo__op *op)
{
    xo_context *ctx = op->ctx;
    compute_needs(op);
    xo__decision_slot *slot = slot_for(ctx, 1);
    xo_decision *dec = &slot->d;
    op->stat_slot = slot->stat_slot;
    double raw[XO_MAX_DEVICES];
    int cls = 0, best, learn, failed_dev = -1;
    const int ndev = ctx->ndev;
    slot->fn = op->fn;
    dec->ndevices = ndev;

    xo__cache_entry *ce = NULL;
    xo__cache_cold *cc = NULL;
    int hit = 0;
    if (cache_ready(&xo__tl)) {
        uint64_t key[XO_KEY_WORDS];
        xo__op_key(op, key);
        ce = xo__cache_find(&xo__tl, key, &hit);
        if (hit && cold_of(ce)->ctx_id != ctx->id) /* same low 32 bits of the id: not ours */
            hit = 0;
        if (!hit) {
            ce = cache_victim(ce);
            release_entry(ce);
            summary_flush(ctx, ce);
            memcpy(ce->key, key, sizeof key);
            ce->uses = 0;
            cold_of(ce)->ctx_id = ctx->id;
            cold_of(ce)->counted = 0;
        }
        cc = cold_of(ce);
        if (hit)
            summary_flush(ctx, ce);
    }
    learn = !hit || ce->uses < XO_LEARN_CALLS || (ce->uses & cc->refresh_mask) == 0;
    if (learn) {
        slot->lazy = NULL;
        best = evaluate(op, dec, raw, &cls, &failed_dev, NULL);
        if (ce) {
            release_entry(ce);
            cc->stamp = ++xo__tl.clock;
            cc->best = best;
            cc->failed = failed_dev;
            cc->cls = cls;
            /* Ops predicted under 10 us (1 us) re-learn less often: their model evaluation
             * and timing would otherwise be a visible share of the call. */
            double total = dec->est[best].total_us;
            cc->refresh_mask = total < 1.0 ? XO_REFRESH_NANO - 1 : total < 10.0 ? XO_REFRESH_TINY - 1 : XO_REFRESH - 1;
            int host_ok = 1;
            for (int i = 0; i < op->desc.narg; i++)
                if ((op->need >> i & 1u) && !(xo__valid(op->buf[i]) & 1u))
                    host_ok = 0;
            ce->fast[0] = host_ok && best == 0 && failed_dev < 0;
            ce->fast[1] = (uint8_t)host_ok;
            double cpu_us = dec->est[0].compute_us;
            ce->cpu_known_ns = cpu_us >= 0 && cpu_us < XO_UNTIMED_US ? (uint32_t)(cpu_us * 1e3) + 1 : 0;
            memcpy(cc->est, dec->est, (size_t)ndev * sizeof dec->est[0]);
        }
    } else {
        best = cc->best;
        failed_dev = cc->failed;
        cls = cc->cls;
        slot->lazy = ce; /* the estimates are the entry's until it changes */
    }
    if (ce) {
        /* The fast paths may take the uses up to the next re-evaluation: past the learning
         * calls, the next multiple of the refresh interval. */
        uint32_t u = ++ce->uses;
        ce->fast_until = u < XO_LEARN_CALLS ? 0 : (u + cc->refresh_mask) & ~cc->refresh_mask;
        cc->counted = u; /* this call is counted below */
    }
    /* The cache holds decisions for idle devices. A choice of a device other than the CPU
     * is checked against the work queued now (a busy device only gets dearer, so a CPU
     * choice stands and keeps its fast path); that check is not cached. */
    double wait[XO_MAX_DEVICES];
    if (best != 0 && queue_waits(ctx, wait)) {
        materialize(slot);
        slot->lazy = NULL;
        best = evaluate(op, dec, raw, &cls, &failed_dev, wait);
    }
    const xo_estimate *est = slot->lazy ? cc->est : dec->est;

    int forced = atomic_load_explicit(&ctx->forced, memory_order_relaxed);
    int forced_support = forced < 0 || op->cpu_only ? XO_SUPPORT_NO
                                                   : xo__device_support(ctx, forced, op->desc.kind, op->desc.dtype);
    best = xo__place_force(best, failed_dev, est, forced, forced_support, &dec->forced, &failed_dev);
    if (forced >= 0 && !dec->forced && !atomic_exchange(&ctx->dev[forced].forced_warned, 1))
        xo__log(XO_LOG_WARN, "%s cannot run on the forced device %d (%s); it runs on the CPU", op->fn + 3, forced,
                ctx->dev[forced].info.plugin);

    int ran = best;
    dec->device = -1; /* until it has run somewhere */
    double known = learn ? -1 : est[best].compute_us;
    /* The first run of a new decision is a warm-up (a library's first threaded call, a
     * first kernel launch): timed, but not learned from. */
    int warm_up = ce && ce->uses <= XO_WARMUP_CALLS;
    double t0 = ctx->summary ? xo__now_us() : 0;
    xo_status st = run_on(op, best, learn && !warm_up ? raw[best] : 0, cls, known);
    if (st != XO_OK) {
        materialize(slot);
        st = fall_back(op, best, dec, &ran);
    }
    if (st != XO_OK) {
        dec->device = ran;
        return st;
    }
    dec->device = ran;
    if (ran != best)
        dec->forced = 0;
    if (ran == best && ran != 0 && ctx->dev[ran].plugin->drain_timings)
        queue_add(ctx, ran, est[ran].launch_us + est[ran].compute_us);
    if (failed_dev >= 0 && failed_dev != ran)
        atomic_fetch_add_explicit(&ctx->dev[failed_dev].stats.fallbacks, 1, memory_order_relaxed);
    if (ctx->summary) /* synchronous devices only: an enqueue's time says nothing */
        xo__summary_record(ctx, op->desc.kind, op->desc.dtype, cls, ran, 1, est[ran].total_us,
                           ctx->dev[ran].plugin->drain_timings ? -1 : xo__now_us() - t0, ran != best);
    if (atomic_load_explicit(&xo__log_level, memory_order_relaxed) >= XO_LOG_DECISIONS) {
        materialize(slot);
        log_decision(ctx, op->fn, dec, &op->desc);
    }
    return XO_OK;
}

xo_status xo__dispatch_cpu_failed(const xo__op *fast, const xo_op_desc *desc, xo__decision_slot *s,
                                  xo__cache_entry *e, int forced)
{
    xo__op copy = *fast, *op = &copy;
    op->desc = *desc;
    s->fn = op->fn;
    s->lazy = e;
    s->d.forced = forced == 0;
    s->d.ndevices = op->ctx->ndev;
    materialize(s);
    op->stat_slot = s->stat_slot;
    int ran = 0;
    xo_status st = fall_back(op, 0, &s->d, &ran);
    s->d.device = ran;
    if (st == XO_OK && ran != 0)
        s->d.forced = 0;
    return st;
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
    compute_needs(&op);
    return run_on(&op, dev, 0, 0, -1);
}

xo_status xo_finish(xo_context *ctx)
{
    if (!ctx)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_finish: ctx is NULL");
    xo_status first = XO_OK;
    for (int d = 0; d < ctx->ndev; d++) {
        xo__device *dev = &ctx->dev[d];
        /* A device nothing was sent to since the last finish has nothing to wait for
         * (an idle clFinish on PoCL costs ~55 ns, a visible share of a tiny CPU op). */
        if (d != 0 && !atomic_exchange_explicit(&dev->queued, 0, memory_order_acq_rel))
            continue;
        if (dev->plugin->finish) {
            xo_status st = dev->plugin->finish(dev->pstate, dev->pdev);
            if (st != XO_OK && first == XO_OK)
                first = xo__error(st, "xo_finish: device %d (%s): %s", d, dev->info.plugin, xo_last_error());
        }
        drain_timings(ctx, d);
        atomic_store_explicit(&dev->busy_until_ns, 0, memory_order_relaxed); /* its queue is empty */
    }
    return first;
}
