/* Placing an op after validation (the full path behind the fast paths of xo_dispatch.h):
 * the thread's decision cache, the model's estimates on every device through xo__place
 * (place.c), forcing and the devices' queues; then run.c runs and records it. Also the
 * calling thread's last decision (xo_last_decision). */
#include "xo_dispatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int xo__thread_stat_slot(xo_context *ctx) { return slot_for(ctx, 1)->stat_slot; }

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

/* The span [lo, hi) of operand i's buffer that the op needs current: every needed
 * operand on that buffer together (one buffer as two operands moves once). 0 if operand i
 * is not needed or an earlier operand has its buffer. */
static int needed_span(const xo__op *op, int i, size_t *lo, size_t *hi)
{
    xo_buffer *b = op->buf[i];
    if (!b || !xo__needs_current(op, i))
        return 0;
    for (int j = 0; j < i; j++)
        if (op->buf[j] == b && xo__needs_current(op, j))
            return 0;
    *lo = op->lo[i];
    *hi = op->hi[i];
    for (int j = i + 1; j < op->desc.narg; j++)
        if (op->buf[j] == b && xo__needs_current(op, j)) {
            *lo = op->lo[j] < *lo ? op->lo[j] : *lo;
            *hi = op->hi[j] > *hi ? op->hi[j] : *hi;
        }
    return 1;
}

/* Each needed operand is priced with moving the span it touches (residency.c moves no
 * more), current where that span is. */
static void describe_cost(const xo__op *op, xo__op_cost *cost)
{
    xo__op_cost_init(cost, op->desc.kind, op->desc.dtype, op->desc.m, op->desc.n, op->desc.k);
    cost->noperands = 0;
    for (int i = 0; i < op->desc.narg; i++) {
        size_t lo, hi;
        if (!needed_span(op, i, &lo, &hi))
            continue;
        xo_buffer *b = op->buf[i];
        uint32_t valid = xo__span_valid(b, lo, hi);
        cost->operand[cost->noperands].bytes = (double)(hi - lo);
        cost->operand[cost->noperands].valid = valid;
        cost->operand[cost->noperands].credit_us =
            (valid & 1u) ? 0.0 : (double)atomic_load_explicit(&b->rent_ns, memory_order_relaxed) * 1e-3;
        cost->noperands++;
    }
}

/* The full path's key: operands with copies current on some spans only are keyed by where
 * their span is current, flagged by bit 28 + i of key[0] (xo_dispatch.h). */
static void key_spans(const xo__op *op, uint64_t key[XO_KEY_WORDS])
{
    for (int i = 0; i < op->desc.narg; i++)
        if (op->buf[i] && (xo__valid(op->buf[i]) >> XO_PARTIAL)) {
            uint64_t v = xo__span_valid(op->buf[i], op->lo[i], op->hi[i]);
            key[0] |= 1ull << (28 + i);
            key[5] = (key[5] & ~(0xffffull << (16 * i))) | v << (16 * i);
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

/* ---- ski rental: the residency trap --------------------------------------------------
 * A small op on a big buffer current only on a device is priced with moving its span
 * home (residency.c), which can still cost more than a launch there (a transfer's
 * latency), so it could stay there for ever although each call costs more there than on
 * the host. Every call that runs on a device while the host, with its operands home,
 * would have been cheaper pays that difference as rent into the buffers that keep it
 * away (split by the bytes of their spans); the model counts the rent paid toward the
 * move home (model.c), so the span comes home once the rent has paid for the move: at
 * most twice the cost of the best choice in hindsight (docs/placement.md). */
static void pay_rent(const xo__op *op, const xo_estimate *est, int ran)
{
    if (ran == 0 || !est[0].eligible || !est[ran].eligible)
        return;
    double extra = est[ran].total_us - (est[0].launch_us + est[0].compute_us);
    if (!(extra > 0))
        return;
    double away = 0, bytes[XO_MAX_ARGS] = {0};
    for (int i = 0; i < op->desc.narg; i++) {
        size_t lo, hi;
        if (needed_span(op, i, &lo, &hi) && !(xo__span_valid(op->buf[i], lo, hi) & 1u))
            away += bytes[i] = (double)(hi - lo);
    }
    if (!(away > 0))
        return;
    for (int i = 0; i < op->desc.narg; i++)
        if (bytes[i] > 0)
            atomic_fetch_add_explicit(&op->buf[i]->rent_ns, (uint64_t)(extra * 1e3 * bytes[i] / away),
                                      memory_order_relaxed);
}

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
            now = xo__clock_us(ctx);
        double w = (double)until * 1e-3 - now;
        if (w > 0) {
            wait[d] = w;
            busy = 1;
        }
    }
    return busy;
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
                                    : xo__dev_support(ctx, d, &op->desc);
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

/* The thread's cache entry for op's key (*hit: it held a decision of this context), or a
 * fresh one in its place; NULL while the thread has no cache. */
static xo__cache_entry *cache_entry_for(const xo__op *op, int *hit)
{
    *hit = 0;
    if (!cache_ready(&xo__tl))
        return NULL;
    xo_context *ctx = op->ctx;
    uint64_t key[XO_KEY_WORDS];
    xo__op_key(op, key);
    key_spans(op, key);
    xo__cache_entry *ce = xo__cache_find(&xo__tl, key, hit);
    if (*hit && cold_of(ce)->ctx_id != ctx->id) /* same low 32 bits of the id: not ours */
        *hit = 0;
    if (!*hit) {
        ce = cache_victim(ce);
        release_entry(ce);
        summary_flush(ctx, ce);
        xo__memo_forget(&xo__tl, ce);
        memcpy(ce->key, key, sizeof key);
        ce->uses = 0;
        cold_of(ce)->ctx_id = ctx->id;
        cold_of(ce)->counted = 0;
    } else {
        summary_flush(ctx, ce);
    }
    return ce;
}

/* Keep a fresh decision in its cache entry, with what the fast paths need to take it. */
static void remember(xo__cache_entry *ce, const xo__op *op, const xo_decision *dec, int best, int failed_dev,
                     int cls)
{
    xo__cache_cold *cc = cold_of(ce);
    release_entry(ce);
    cc->stamp = ++xo__tl.clock;
    cc->best = best;
    cc->failed = failed_dev;
    cc->cls = cls;
    /* Ops predicted under 10 us (1 us) re-learn less often: their model evaluation
     * and timing would otherwise be a visible share of the call. */
    double total = dec->est[best].total_us;
    cc->refresh_mask = total < 1.0 ? XO_REFRESH_NANO - 1 : total < 10.0 ? XO_REFRESH_TINY - 1 : XO_REFRESH - 1;
    int host_ok = 1; /* the fast paths need whole host copies: no span bookkeeping there */
    for (int i = 0; i < op->desc.narg; i++)
        if ((op->need >> i & 1u) &&
            (!(xo__valid(op->buf[i]) & 1u) || (xo__valid(op->buf[i]) >> XO_PARTIAL)))
            host_ok = 0;
    /* Once auto has placed work off the CPU, the episode placer (plan_episode.c) must see
     * every op of a step, the CPU's too; until then the CPU's fast paths stay. */
    ce->fast[0] = host_ok && best == 0 && failed_dev < 0 &&
                  !atomic_load_explicit(&op->ctx->episode_mixed, memory_order_relaxed);
    ce->fast[1] = (uint8_t)host_ok;
    double cpu_us = dec->est[0].compute_us;
    ce->cpu_known_ns = cpu_us >= 0 && cpu_us < XO_UNTIMED_US ? (uint32_t)(cpu_us * 1e3) + 1 : 0;
    memcpy(cc->est, dec->est, (size_t)dec->ndevices * sizeof dec->est[0]);
}

/* The device policy (XO_DEVICE / xo_set_device, `forced`, -1: auto) applied to the
 * model's choice: returns where the op runs; warns once when the forced device cannot. */
static int apply_forcing(const xo__op *op, int forced, int best, const xo_estimate *est, xo_decision *dec,
                         int *failed_dev)
{
    xo_context *ctx = op->ctx;
    int forced_support = forced < 0 || op->cpu_only ? XO_SUPPORT_NO : xo__dev_support(ctx, forced, &op->desc);
    best = xo__place_force(best, *failed_dev, est, forced, forced_support, &dec->forced, failed_dev);
    if (forced >= 0 && !dec->forced && !atomic_exchange(&ctx->dev[forced].forced_warned, 1))
        xo__log(XO_LOG_WARN, "%s cannot run on the forced device %d (%s); it runs on the CPU", op->fn + 3, forced,
                ctx->dev[forced].info.plugin);
    return best;
}

xo_status xo__dispatch_slow(xo__op *op)
{
    /* A capture on this thread records the validated op instead (plan_recorder.c). The
     * fast paths never see its context: xo_capture_begin took this thread's decision
     * slot for it out of xo__tl.last, and only this function puts it back. */
    if (__builtin_expect(xo__capturing != NULL, 0)) {
        xo_status st;
        if (op->ctx->capture_op(op, &st))
            return st;
    }
    xo_context *ctx = op->ctx;
    op->need = xo__op_needs(op);
    int forced = atomic_load_explicit(&ctx->forced, memory_order_relaxed);
    /* An episode that repeats is placed as one run (plan_episode.c): its device, or -1. */
    int episode = ctx->episode && forced < 0 ? ctx->episode_op(op) : -1;
    xo__decision_slot *slot = slot_for(ctx, 1);
    xo_decision *dec = &slot->d;
    op->stat_slot = slot->stat_slot;
    double raw[XO_MAX_DEVICES];
    int cls = 0, best, learn, failed_dev = -1;
    const int ndev = ctx->ndev;
    slot->fn = op->fn;
    dec->ndevices = ndev;

    int hit = 0;
    xo__cache_entry *ce = cache_entry_for(op, &hit);
    xo__cache_cold *cc = ce ? cold_of(ce) : NULL;
    learn = !hit || ce->uses < XO_LEARN_CALLS || (ce->uses & cc->refresh_mask) == 0;
    if (learn) {
        slot->lazy = NULL;
        best = evaluate(op, dec, raw, &cls, &failed_dev, NULL);
        if (ce)
            remember(ce, op, dec, best, failed_dev, cls);
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
    if (episode >= 0 && episode < ndev && (slot->lazy ? cc->est : dec->est)[episode].eligible) {
        best = episode; /* its queues were priced with the whole episode */
    } else if (best != 0 && queue_waits(ctx, wait)) {
        materialize(slot);
        slot->lazy = NULL;
        best = evaluate(op, dec, raw, &cls, &failed_dev, wait);
    }
    const xo_estimate *est = slot->lazy ? cc->est : dec->est;

    best = apply_forcing(op, forced, best, est, dec, &failed_dev);

    int ran = best;
    dec->device = -1; /* until it has run somewhere */
    double known = learn ? -1 : est[best].compute_us;
    /* The first run of a new decision is a warm-up (a library's first threaded call, a
     * first kernel launch): timed, but not learned from. */
    int warm_up = ce && ce->uses <= XO_WARMUP_CALLS;
    double t0 = ctx->summary ? xo__now_us() : 0;
    xo_status st = xo__run(op, best, learn && !warm_up ? raw[best] : 0, cls, known);
    if (st != XO_OK) {
        materialize(slot);
        st = xo__fall_back(op, best, dec, &ran);
    }
    if (st != XO_OK) {
        dec->device = ran;
        return st;
    }
    dec->device = ran;
    if (ran != best)
        dec->forced = 0;
    if (!dec->forced && forced < 0)
        pay_rent(op, est, ran);
    if (ran != 0 && forced < 0 && ctx->episode && !atomic_load_explicit(&ctx->episode_mixed, memory_order_relaxed))
        atomic_store_explicit(&ctx->episode_mixed, 1, memory_order_relaxed);
    xo__record_decision(ctx, &op->desc, cls, est, best, ran, failed_dev, t0);
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
    xo_status st = xo__fall_back(op, 0, &s->d, &ran);
    s->d.device = ran;
    if (st == XO_OK && ran != 0)
        s->d.forced = 0;
    return st;
}

