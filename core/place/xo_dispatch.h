/* Placement's per-thread state and the fast path of dispatch.
 *
 * Every thread keeps its recent decisions in a small cache keyed by the op's shape and
 * where its operands are current (dispatch.c fills it from the cost model). An op whose
 * entry says "the CPU" and that needs nothing moved runs straight from here: inline in
 * each op's entry point, so that the compiler folds the operand loops to the op's
 * constants. Anything else (a miss, a learning call, another device, a stale host copy,
 * decision logging, fault injection) takes xo__dispatch_slow in dispatch.c, which is
 * also what the fast path's own decisions come from. Both compute the key the same way. */
#ifndef XO_DISPATCH_H
#define XO_DISPATCH_H

#include "xo_internal.h"
#include "xo_op.h"
#include "xo_record.h"
#include "xo_run.h"

#include <assert.h>

#define XO_CACHE_WAYS 4
#define XO_CACHE_SETS_LOG2 7 /* 128 sets of 4: 512 decisions per thread */
#define XO_CACHE_SLOTS (XO_CACHE_WAYS << XO_CACHE_SETS_LOG2)
#define XO_KEY_WORDS 6
#define XO_LEARN_CALLS 8     /* an entry's first uses re-evaluate and feed the correction */
#define XO_WARMUP_CALLS 1    /* ... except the very first, a warm-up */
#define XO_REFRESH 16        /* then 1 call in XO_REFRESH (powers of two: the check is a mask) */
#define XO_REFRESH_TINY 128  /* ... or 1 in XO_REFRESH_TINY for ops predicted under 10 us */
#define XO_REFRESH_NANO 1024 /* ... or 1 in XO_REFRESH_NANO under 1 us (a re-evaluation costs
                              * about 0.5-1 us: this keeps it near 1 ns a call) */
#define XO_DECISION_SLOTS 4  /* contexts per thread whose last decision is kept */

/* What the fast paths read of a cached decision: one cache line. The rest of the
 * decision (estimates, the choice) lives in the entry's cold part, which only the full
 * path and xo_last_decision touch. */
typedef struct __attribute__((aligned(64))) xo__cache_entry {
    uint64_t key[XO_KEY_WORDS];
    uint32_t uses;
    uint32_t fast_until;   /* uses below this may take a fast path (0 while learning; see
                            * xo__fast_ok), i.e. the next use that re-evaluates */
    uint32_t cpu_known_ns; /* corrected CPU compute time if under XO_UNTIMED_US, else 0 */
    uint8_t fast[2];       /* a fast path may run it on the CPU: [0] under auto placement (the
                            * model chose the CPU, no failed device was cheaper), [1] when the
                            * CPU is forced; both need every operand current on the host */
} xo__cache_entry;
_Static_assert(sizeof(xo__cache_entry) == 64, "a cached decision's hot part is one cache line");

typedef struct xo__cache_cold {
    uint64_t ctx_id;       /* the whole id (the key holds its low 32 bits) */
    uint64_t stamp;        /* when the full path last evaluated it (replacement picks the older) */
    uint32_t refresh_mask; /* re-evaluate when (uses & refresh_mask) == 0 */
    int best;              /* cost-based choice before forcing */
    int failed;            /* a device that would have been cheaper but failed here, or -1 */
    int cls;               /* size class of the correction */
    uint32_t counted;      /* uses counted by XO_LOG=summary */
    xo_estimate est[XO_MAX_DEVICES];
} xo__cache_cold;

/* The calling thread's last decision in one context. While `lazy` is set, the estimates
 * are those of that cache entry (the fast path does not copy them); dispatch.c copies
 * them into d.est before it changes the entry. */
typedef struct xo__decision_slot {
    uint64_t ctx_id;
    const char *fn;               /* the op's public name ("xo_sgemm"); d.op is filled on read */
    const xo__cache_entry *lazy;
    int stat_slot;                /* this thread's xo__stat_slot in ctx, or -1 */
    xo_decision d;
} xo__decision_slot;

/* ---- the call memo -------------------------------------------------------------------
 * An op's checks and its decision key depend only on its arguments, on which buffers they
 * name (a buffer's size and context never change) and on where those buffers are current.
 * A program's step makes the same calls again and again, so each thread keeps the calls
 * that last took the fast path below: their raw arguments, their buffers' ids, the op as
 * validated and described, and the decision cache entry that placed it with the key it
 * had. An entry holds that key until the full path gives the entry to another key, and
 * then forgets every memo of the entry (xo__memo_forget), so a memo's entry is always the
 * one its key names. A call whose arguments and buffers match a memo, whose buffers are
 * current where they were then and whose entry still lets a fast path take it, runs as
 * the fast path would run it, without being checked and keyed again (xo__memo_run).
 * Anything else is validated and dispatched as usual, and may fill the memo
 * (xo__dispatch_memo). */
#define XO_MEMO_SETS_LOG2 4 /* 16 sets of 2 memos per thread */
#define XO_MEMO_ARGS 12     /* words of arguments: the entry point's name, ctx, then its own */
typedef struct xo__memo {
    uint64_t args[XO_MEMO_ARGS];
    uint64_t ids[XO_MAX_ARGS]; /* op.buf[i]'s id */
    uint64_t ctx_id;
    uint64_t key[XO_KEY_WORDS];
    xo__cache_entry *e;
    xo__op op; /* host pointers filled in */
} xo__memo;
typedef struct xo__memo_set {
    xo__memo way[2]; /* two, so that two calls a step alternates between never evict each other */
    int recent;      /* the way used last (a fill replaces the other) */
} xo__memo_set;

typedef struct xo__thread {
    xo__decision_slot *last; /* the slot used most recently */
    unsigned next_slot;
    uint64_t clock;          /* stamps cache entries */
    xo__cache_cold *cold;    /* [XO_CACHE_SLOTS], allocated on the thread's first miss */
    xo__decision_slot slots[XO_DECISION_SLOTS];
    xo__memo_set memo[1 << XO_MEMO_SETS_LOG2];
    xo__cache_entry cache[XO_CACHE_SLOTS];
} xo__thread;
extern _Thread_local xo__thread xo__tl;

/* The decision cache key, six words:
 *   [0] kind, dtype, degenerate flag, axis, sub-op, which operands must be current, and
 *       the context's id (low 32 bits)
 *   [1..3] the dimensions m, n, k
 *   [4] a hash of the buffers' sizes (which set the transfer costs)
 *   [5] each operand's residency (16 bits each: where it is current)
 * Operand i's part: its need bit, residency and size (each operand's size key rotated by
 * its position; no multiply on the way). The fast paths key whole copies only: they run
 * an op on the CPU only when its host copies are whole (entry->fast), and a whole write
 * leaves no partial copy. The full path (dispatch.c, cache_entry_for) keys an operand
 * with copies current on some spans only (residency.c) by where its span is current, and
 * sets bit 28 + i of [0]: no fast path computes such a key. */
#define XO_KEY_SIZES0 0x9E3779B97F4A7C15ull
static inline __attribute__((always_inline)) void xo__key_operand(uint64_t *k0, uint64_t *res, uint64_t *sizes,
                                                                   int i, const xo_buffer *b, unsigned need)
{
    _Static_assert(XO_MAX_DEVICES <= 16 && XO_MAX_ARGS <= 4, "residency: 16 bits per operand");
    if (b) {
        *k0 |= (uint64_t)(need & 1u) << (24 + i);
        *res |= (uint64_t)(uint16_t)xo__valid(b) << (16 * i); /* whole copies */
    }
    *sizes = (*sizes << 21 | *sizes >> 43) ^ (b ? b->size_key : 0);
}
static inline uint64_t xo__key_head(uint64_t ctx_id, xo_op_kind kind, xo_dtype dtype, int cpu_only, int subop,
                                    int axis)
{
    return (uint64_t)kind | (uint64_t)dtype << 8 | (uint64_t)(cpu_only != 0) << 9 | (uint64_t)(axis != 0) << 10 |
           (uint64_t)(subop & 0xff) << 12 | ctx_id << 32;
}

/* Needs op->need. */
static inline void xo__op_key(const xo__op *op, uint64_t key[XO_KEY_WORDS])
{
    const xo_op_desc *d = &op->desc;
    uint64_t k0 = xo__key_head(op->ctx->id, d->kind, d->dtype, op->cpu_only, d->subop, d->axis);
    uint64_t res = 0, sizes = XO_KEY_SIZES0;
    for (int i = 0; i < d->narg; i++)
        xo__key_operand(&k0, &res, &sizes, i, op->buf[i], op->need >> i & 1u);
    key[0] = k0;
    key[1] = d->m;
    key[2] = d->n;
    key[3] = d->k;
    key[4] = sizes;
    key[5] = res;
}

/* Four-way sets indexed by a hash of the whole key, so every distinct op, shape, set of
 * buffer sizes and residency has its own place whatever else the program runs. Returns
 * the entry that hit, or on a miss the one to replace (*hit = 0; the caller picks by the
 * cold part's stamps: xo__cache_victim). */
static inline __attribute__((always_inline)) xo__cache_entry *xo__cache_find(xo__thread *t,
                                                                             const uint64_t key[XO_KEY_WORDS],
                                                                             int *hit)
{
    uint64_t h = (key[0] ^ key[4]) * 0x9E3779B97F4A7C15ull + (key[1] ^ key[5]) * 0xC2B2AE3D27D4EB4Full +
                 key[2] * 0x165667B19E3779F9ull + key[3] * 0x27D4EB2F165667C5ull;
    xo__cache_entry *e = &t->cache[(h >> (64 - XO_CACHE_SETS_LOG2)) * XO_CACHE_WAYS];
    for (int w = 0; w < XO_CACHE_WAYS; w++)
        if (((e[w].key[0] ^ key[0]) | (e[w].key[1] ^ key[1]) | (e[w].key[2] ^ key[2]) | (e[w].key[3] ^ key[3]) |
             (e[w].key[4] ^ key[4]) | (e[w].key[5] ^ key[5])) == 0) {
            *hit = 1;
            return &e[w];
        }
    *hit = 0;
    return e;
}

/* Everything but the fast path: place by the model, move operands, run, fall back. */
xo_status xo__dispatch_slow(xo__op *op) __attribute__((noinline));
/* The fast path's CPU run failed: complete the op elsewhere (cold). */
xo_status xo__dispatch_cpu_failed(const xo__op *op, const xo_op_desc *desc, xo__decision_slot *s,
                                  xo__cache_entry *e, int forced) __attribute__((cold, noinline));

/* A cache hit the fast paths may take: past its learning calls and not due for a
 * refresh, placed on the CPU (by cost, or forced there) with every needed operand
 * current on the host. */
static inline __attribute__((always_inline)) int xo__fast_ok(const xo__cache_entry *e, int hit, int forced)
{
    unsigned mode = (unsigned)(forced + 1); /* 0: auto, 1: the CPU forced, else another device */
    return hit && e->uses < e->fast_until && mode < 2 && e->fast[mode];
}

/* When an op run for cache entry `e` starts. A tiny op is not timed (0): timing it would
 * cost a good share of it, so its busy time is the corrected prediction (which the
 * learning calls keep matched to measurements). */
static inline __attribute__((always_inline)) uint64_t xo__fast_t0(const xo__cache_entry *e)
{
    return e->cpu_known_ns ? 0 : xo__ticks();
}

/* Record an op that ran on the CPU for cache entry `e`, started at xo__fast_t0's t0: the
 * op (xo__record_ran) and this thread's last decision. */
static inline __attribute__((always_inline)) void xo__fast_record(xo_context *ctx, xo__decision_slot *s,
                                                                  xo__cache_entry *e, int forced, const char *fn,
                                                                  xo_buffer *out, uint64_t t0)
{
    uint64_t busy_ns = e->cpu_known_ns;
    xo__record_ran(ctx, s->stat_slot, 0, &out, 1, 1u, busy_ns, busy_ns ? 0 : xo__ticks() - t0);
    e->uses++;
    s->fn = fn;
    s->lazy = e;
    s->d.forced = forced == 0;
    s->d.ndevices = ctx->ndev;
    s->d.device = 0;
}

/* Run `desc` on the CPU for cache entry `e` and record it. 0 if the plugin failed
 * (nothing recorded, nothing written). */
static inline __attribute__((always_inline)) int xo__fast_cpu(xo_context *ctx, xo__decision_slot *s,
                                                              xo__cache_entry *e, int forced, const char *fn,
                                                              const xo_op_desc *desc, xo_buffer *out)
{
    uint64_t t0 = xo__fast_t0(e);
    if (__builtin_expect(xo__dev_run_cpu(ctx, desc) != XO_OK, 0))
        return 0;
    xo__fast_record(ctx, s, e, forced, fn, out, t0);
    return 1;
}

/* This thread's decision slot for ctx when a fast path may be tried (the context allows it
 * and decisions are not being logged), else NULL. */
static inline __attribute__((always_inline)) xo__decision_slot *xo__fast_slot(const xo_context *ctx)
{
    xo__decision_slot *s = xo__tl.last;
    if (__builtin_expect(!s || s->ctx_id != ctx->id || !ctx->fast_dispatch ||
                             atomic_load_explicit(&xo__log_level, memory_order_relaxed) >= XO_LOG_DECISIONS,
                         0))
        return NULL;
    return s;
}

/* The way of set m that holds the call with raw arguments args[0..nargs), or NULL. Way 0
 * first, where a call alone in its set is (xo__memo_fill); a fixed order, so that no
 * load stands between the set and the way's arguments. */
static inline __attribute__((always_inline)) xo__memo *xo__memo_way(xo__memo_set *m, const uint64_t *args,
                                                                    int nargs)
{
    for (int w = 0; w < 2; w++) {
        uint64_t diff = 0;
        for (int i = 0; i < nargs; i++)
            diff |= m->way[w].args[i] ^ args[i];
        if (!diff)
            return &m->way[w];
    }
    return NULL;
}

/* Keep, in set m (NULL: none), op, which the fast path ran for entry e under key: in the
 * way that holds the call already, else in a free way (way 0 first), else in place of
 * the way used less recently. */
static inline __attribute__((always_inline)) void xo__memo_fill(xo__memo_set *m, const uint64_t *args, int nargs,
                                                                const xo__op *op, xo__cache_entry *e,
                                                                const uint64_t key[XO_KEY_WORDS])
{
    if (!m)
        return;
    xo__memo *k = xo__memo_way(m, args, nargs);
    if (!k)
        k = &m->way[!m->way[0].e ? 0 : !m->way[1].e ? 1 : !m->recent];
    m->recent = (int)(k - m->way);
    for (int i = 0; i < nargs; i++)
        k->args[i] = args[i];
    for (int i = 0; i < op->desc.narg; i++)
        k->ids[i] = op->buf[i] ? op->buf[i]->id : 0;
    k->ctx_id = op->ctx->id;
    for (int i = 0; i < XO_KEY_WORDS; i++)
        k->key[i] = key[i];
    k->e = e;
    k->op = *op;
}

/* The cache entry e goes to another key: no memo may name it any more (their arguments
 * are cleared, and no call's first word, its entry point's name, is 0). */
static inline void xo__memo_forget(xo__thread *t, const xo__cache_entry *e)
{
    for (int i = 0; i < 1 << XO_MEMO_SETS_LOG2; i++)
        for (int w = 0; w < 2; w++)
            if (t->memo[i].way[w].e == e) {
                t->memo[i].way[w].e = NULL;
                t->memo[i].way[w].args[0] = 0;
            }
}

/* Place, move, run, record; a run on the fast path fills memo m (NULL: none) with the call
 * whose raw arguments are args[0..nargs). */
static inline __attribute__((always_inline)) xo_status xo__dispatch_memo(xo__op *op, xo__memo_set *m,
                                                                         const uint64_t *args, int nargs)
{
    xo_context *ctx = op->ctx;
    xo__thread *t = &xo__tl;
    xo__decision_slot *s = xo__fast_slot(ctx);
    if (!s)
        return xo__dispatch_slow(op);
    /* Locals: the plugin call below may read *op, so the compiler reloads what it must
     * not assume; narg and the masks are the op's constants. */
    const int narg = op->desc.narg;
    const unsigned writes = op->writes;
    xo_buffer *const *buf = op->buf;
    op->need = xo__op_needs(op);
    uint64_t key[XO_KEY_WORDS];
    xo__op_key(op, key);
    int hit;
    xo__cache_entry *e = xo__cache_find(t, key, &hit);
    int forced = atomic_load_explicit(&ctx->forced, memory_order_relaxed);
    if (!xo__fast_ok(e, hit, forced))
        return xo__dispatch_slow(op);
    for (int i = 0; i < narg; i++)
        if ((writes >> i & 1u) && xo__inflight(buf[i])) /* zero-copy devices may still read it */
            return xo__dispatch_slow(op);

    /* The CPU, with every operand it needs current on the host (in place: a copy of the
     * description costs more than the rest of this path). */
    xo_buffer *out = buf[__builtin_ctz(writes)];
    const char *fn = op->fn;
    for (int i = 0; i < narg; i++)
        op->desc.arg[i].host = buf[i]->host;
    if (__builtin_expect(!xo__fast_cpu(ctx, s, e, forced, fn, &op->desc, out), 0))
        return xo__dispatch_cpu_failed(op, &op->desc, s, e, forced);
    xo__memo_fill(m, args, nargs, op, e, key);
    return XO_OK;
}

static inline __attribute__((always_inline)) xo_status xo__dispatch(xo__op *op)
{
    return xo__dispatch_memo(op, NULL, NULL, 0);
}

/* The memo set for a call with raw arguments args[0..nargs) (a compile-time count). */
static inline __attribute__((always_inline)) xo__memo_set *xo__memo_of(const uint64_t *args, int nargs)
{
    uint64_t h[2] = {0, 0};
    for (int i = 0; i < nargs; i++) /* independent products, two sums: short chains */
        h[i & 1] += args[i] * (0x9E3779B97F4A7C15ull + 2u * (uint64_t)i);
    return &xo__tl.memo[(h[0] + h[1]) >> (64 - XO_MEMO_SETS_LOG2)];
}

/* 1 if the call with raw arguments args[0..nargs) (args[1]: its context) is a memo of
 * set m and ran as the fast path runs it (*st: how that went); 0 if it must be validated
 * and dispatched. narg and writes: the op's operand count and written operands, as its
 * description sets them (literals, so that the operand loops unroll). */
static inline __attribute__((always_inline)) int xo__memo_run(xo_context *ctx, xo__memo_set *m,
                                                              const uint64_t *args, int nargs, int narg,
                                                              unsigned writes, xo_status *st)
{
    const xo__memo *k = xo__memo_way(m, args, nargs);
    if (!k) /* also when ctx is NULL: a memo holds a validated call */
        return 0;
    xo__decision_slot *s = xo__fast_slot(ctx);
    if (!s || k->ctx_id != ctx->id)
        return 0;
    const xo__op *op = &k->op;
    xo__cache_entry *e = k->e;
    assert(op->desc.narg == narg && op->writes == writes);
    /* The same buffers (the arguments name them, so they are alive: a memo'd op names a
     * buffer in every operand), current where they were when the entry took this call. */
    uint64_t diff = 0, res = 0;
    for (int i = 0; i < narg; i++) {
        const xo_buffer *b = op->buf[i];
        diff |= b->id ^ k->ids[i];
        res |= (uint64_t)(uint16_t)xo__valid(b) << (16 * i);
    }
    int forced = atomic_load_explicit(&ctx->forced, memory_order_relaxed);
    if ((diff | (res ^ k->key[5])) || !xo__fast_ok(e, 1, forced))
        return 0;
    for (int i = 0; i < narg; i++)
        if ((writes >> i & 1u) && xo__inflight(op->buf[i]))
            return 0;
    m->recent = (int)(k - m->way);
    if (__builtin_expect(!xo__fast_cpu(ctx, s, e, forced, op->fn, &op->desc, op->buf[__builtin_ctz(writes)]), 0))
        *st = xo__dispatch_cpu_failed(op, &op->desc, s, e, forced);
    else
        *st = XO_OK;
    return 1;
}

/* ---- the express path -------------------------------------------------------------
 * gemm, gemv and axpy check their arguments in registers, conservatively (plain cases
 * only: every buffer distinct, sizes from 1 to 2^29, nothing empty), build the key and
 * ask xo__express_find whether a cached decision runs the op on the CPU now: a hit
 * placing it there, every needed operand current on the host, nothing queued on the
 * output elsewhere. If so they call the CPU plugin's host BLAS entry (xo_host_blas, no
 * op description) and xo__fast_record; if not (0, nothing changed) they take the
 * full path (full checks with their messages, xo__dispatch). `out` is the op's one
 * output; m, n, k are the dimensions as the op's description holds them. */
typedef struct xo__express_hit {
    xo__decision_slot *s;
    xo__cache_entry *e;
    int forced;
} xo__express_hit;

static inline __attribute__((always_inline)) int xo__express_find(xo_context *ctx, uint64_t k0, uint64_t res,
                                                                  uint64_t sizes, size_t m, size_t n, size_t k,
                                                                  const xo_buffer *out, xo__express_hit *h)
{
    xo__thread *t = &xo__tl;
    xo__decision_slot *s = xo__fast_slot(ctx);
    if (!s || xo__inflight(out)) /* zero-copy devices may still read the output */
        return 0;
    const uint64_t key[XO_KEY_WORDS] = {k0, m, n, k, sizes, res};
    int hit;
    xo__cache_entry *e = xo__cache_find(t, key, &hit);
    int forced = atomic_load_explicit(&ctx->forced, memory_order_relaxed);
    if (!xo__fast_ok(e, hit, forced))
        return 0;
    h->s = s;
    h->e = e;
    h->forced = forced;
    return 1;
}

#endif
