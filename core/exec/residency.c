/* Residency per span: which bytes of a buffer are current on which copy (the host's and
 * each device's), and moving them. The move stage of the op path: data crosses through
 * the device layer (device.c).
 *
 * One rule. A copy is current whole (bit d of b->valid), on a short sorted list of byte
 * spans (bit XO_PARTIAL + d, at most XO_SPANS of them), or not at all; every byte is
 * current on at least one copy. An op makes current where it runs only the bytes it
 * touches, [lo, hi) of xo__op, moving the pieces missing there through the host (each
 * from a device that holds it), and the model prices only those bytes (model.c): a small
 * op on a big buffer moves its span, and a minibatch taken by offset from a dataset
 * ships the minibatch, not the dataset (as StarPU charges a sub-handle's bytes only).
 * A write on a whole copy leaves it the only current copy; a write on a partial copy
 * adds its span there and removes it from the others. A copy keeps at most XO_SPANS
 * spans: one more, and the smallest gap between two of them is moved too, joining them
 * (never more than the whole copy moves); a write that would leave another copy with
 * more than XO_SPANS spans first makes the writer's copy whole (its write then leaves it
 * the only one).
 *
 * Threads (struct xo_buffer): readers only add copies and spans, under move_lock; only a
 * writer, which has the buffer to itself, removes them (also under move_lock, so that
 * xo__span_valid may read the lists from any thread). */
#include "xo_internal.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct span {
    size_t lo, hi;
} span;

/* A copy's spans are stored with room for one more than XO_SPANS: a write removes its span
 * from a list that xo__buffer_prepare found fits, so one split never overflows. */
struct xo__spans {
    int n[XO_MAX_DEVICES];
    span s[XO_MAX_DEVICES][XO_SPANS + 1];
};

/* ---- span lists: sorted, disjoint, never touching ------------------------------------ */

/* Room for any intermediate result below: a list of missing pieces grows by at most one
 * per span taken out of it, and those come from every copy's list. */
#define CAP ((XO_SPANS + 1) * XO_MAX_DEVICES + 2)
typedef struct span_list {
    int n;
    span s[CAP];
} span_list;

/* L = L u [lo, hi). */
static void list_add(span_list *L, size_t lo, size_t hi)
{
    if (lo >= hi)
        return;
    span out[CAP];
    int n = 0, placed = 0;
    for (int i = 0; i < L->n; i++) {
        span c = L->s[i];
        if (c.hi < lo) {
            out[n++] = c;
        } else if (c.lo > hi) {
            if (!placed)
                out[n++] = (span){lo, hi};
            placed = 1;
            out[n++] = c;
        } else { /* overlapping or touching: one span */
            lo = c.lo < lo ? c.lo : lo;
            hi = c.hi > hi ? c.hi : hi;
        }
    }
    if (!placed)
        out[n++] = (span){lo, hi};
    for (int i = 0; i < n; i++)
        L->s[i] = out[i];
    L->n = n;
}

/* L = L - [lo, hi). */
static void list_sub(span_list *L, size_t lo, size_t hi)
{
    if (lo >= hi)
        return;
    span out[CAP];
    int n = 0;
    for (int i = 0; i < L->n; i++) {
        span c = L->s[i];
        if (c.hi <= lo || c.lo >= hi) {
            out[n++] = c;
            continue;
        }
        if (c.lo < lo)
            out[n++] = (span){c.lo, lo};
        if (c.hi > hi)
            out[n++] = (span){hi, c.hi};
    }
    for (int i = 0; i < n; i++)
        L->s[i] = out[i];
    L->n = n;
}

static int list_covers(const span_list *L, size_t lo, size_t hi)
{
    if (lo >= hi)
        return 1;
    for (int i = 0; i < L->n; i++)
        if (L->s[i].lo <= lo && hi <= L->s[i].hi)
            return 1;
    return 0;
}

/* Copy d's current bytes as a list. */
static void list_of(const xo_buffer *b, int d, span_list *L)
{
    L->n = 0;
    if (xo__valid(b) >> d & 1u) {
        L->n = 1;
        L->s[0] = (span){0, b->bytes};
    } else if ((xo__valid(b) >> (XO_PARTIAL + d) & 1u) && b->spans) {
        L->n = b->spans->n[d];
        for (int i = 0; i < L->n; i++)
            L->s[i] = b->spans->s[d][i];
    }
}

static int list_whole(const xo_buffer *b, const span_list *L)
{
    return L->n == 1 && L->s[0].lo == 0 && L->s[0].hi >= b->bytes;
}

/* The span table, allocated at the first partial copy; 0 when out of memory (then copies
 * stay whole). move_lock held. */
static int spans_ready(xo_buffer *b)
{
    if (!b->spans)
        b->spans = calloc(1, sizeof *b->spans);
    return b->spans != NULL;
}

/* One transition of b->valid: `set` bits on, `clear` bits off. */
static void update(xo_buffer *b, uint32_t set, uint32_t clear)
{
    uint32_t v = atomic_load_explicit(&b->valid, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&b->valid, &v, (v | set) & ~clear, memory_order_release,
                                                  memory_order_relaxed))
        ;
}

/* Copy d is now current on L (L->n <= XO_SPANS + 1, the table ready unless L is whole or
 * empty). move_lock held. */
static void set_list(xo_buffer *b, int d, const span_list *L)
{
    uint32_t whole = 1u << d, part = 1u << (XO_PARTIAL + d);
    if (list_whole(b, L)) {
        update(b, whole, part);
    } else if (L->n == 0) {
        update(b, 0, whole | part);
    } else {
        int n = L->n <= XO_SPANS + 1 ? L->n : XO_SPANS + 1; /* xo__buffer_prepare keeps it so */
        for (int i = 0; i < n; i++)
            b->spans->s[d][i] = L->s[i];
        b->spans->n[d] = n;
        update(b, part, whole);
    }
}

/* ---- moves ------------------------------------------------------------------------- */

/* Download [lo, hi) of device e's copy into the host copy: retried once, as XO_FAULTS
 * says. move_lock held. */
static xo_status download_locked(xo_buffer *b, int e, size_t lo, size_t hi)
{
    xo_context *ctx = b->ctx;
    int shared = (xo__shared(b) >> e) & 1u;
    xo_status st = XO_ERR_DEVICE;
    if (!shared) /* a real copy lands in host memory that zero-copy devices may be reading */
        xo__buffer_host_write_barrier(b, -1);
    for (int attempt = 0; attempt < 2; attempt++) {
        st = xo__dev_download(ctx, e, b->mem[e], lo, (char *)b->host + lo, hi - lo, shared);
        if (st == XO_OK) {
            atomic_store_explicit(&b->rent_ns, 0, memory_order_relaxed); /* home: the rent is spent */
            return XO_OK;
        }
        xo__log(XO_LOG_WARN, "download of %zu bytes from device %d failed (attempt %d): %s", hi - lo, e,
                attempt + 1, xo_last_error());
    }
    char why[512]; /* the device's reason (e.g. lost to fork()), copied before formatting */
    snprintf(why, sizeof why, "%s", xo_last_error());
    return xo__error(XO_ERR_DEVICE, "download of %zu bytes from device %d (%s) failed twice; its copy stays current: %s",
                     hi - lo, e, ctx->dev[e].info.plugin, why);
}

/* Give `b` an allocation on `dev`; move_lock held. */
static xo_status alloc_locked(xo_buffer *b, int dev)
{
    if (dev == 0 || b->mem[dev])
        return XO_OK;
    int shared;
    XO_RETURN_IF_ERROR(xo__dev_alloc(b->ctx, dev, b->host, b->bytes, &b->mem[dev], &shared));
    if (shared)
        atomic_fetch_or_explicit(&b->shared, 1u << dev, memory_order_relaxed);
    return XO_OK;
}

/* What copy `cur` is to hold once [lo, hi) is current there: cur u [lo, hi), with the
 * smallest gaps between its spans filled while it has more than XO_SPANS (those bytes
 * move too: never more than the whole copy), or the whole copy when no span table can be
 * had. Returns the pieces to move, want - cur, in *miss. */
static void target(xo_buffer *b, const span_list *cur, size_t lo, size_t hi, span_list *want, span_list *miss)
{
    *want = *cur;
    list_add(want, lo, hi);
    while (want->n > XO_SPANS) {
        int g = 1;
        for (int i = 2; i < want->n; i++)
            if (want->s[i].lo - want->s[i - 1].hi < want->s[g].lo - want->s[g - 1].hi)
                g = i;
        list_add(want, want->s[g - 1].hi, want->s[g].lo);
    }
    if (!list_whole(b, want) && !spans_ready(b)) {
        want->n = 1;
        want->s[0] = (span){0, b->bytes};
    }
    *miss = *want;
    for (int i = 0; i < cur->n; i++)
        list_sub(miss, cur->s[i].lo, cur->s[i].hi);
}

/* Bring [lo, hi) current on the host, each missing piece from a device holding it.
 * move_lock held. Another reader may have moved some meanwhile: the lists are read here. */
static xo_status host_locked(xo_buffer *b, size_t lo, size_t hi)
{
    span_list cur, want, miss;
    list_of(b, 0, &cur);
    if (list_covers(&cur, lo, hi))
        return XO_OK;
    target(b, &cur, lo, hi, &want, &miss);
    xo_context *ctx = b->ctx;
    for (int e = 1; e < ctx->ndev && miss.n > 0; e++) {
        span_list have;
        list_of(b, e, &have);
        for (int m = 0; m < miss.n; m++)
            for (int h = 0; h < have.n; h++) {
                size_t a = miss.s[m].lo > have.s[h].lo ? miss.s[m].lo : have.s[h].lo;
                size_t z = miss.s[m].hi < have.s[h].hi ? miss.s[m].hi : have.s[h].hi;
                if (a < z)
                    XO_RETURN_IF_ERROR(download_locked(b, e, a, z));
            }
        for (int h = 0; h < have.n; h++)
            list_sub(&miss, have.s[h].lo, have.s[h].hi);
    }
    if (miss.n > 0) /* a broken invariant: say so rather than return stale bytes */
        return xo__error(XO_ERR_DEVICE, "bytes %zu to %zu of a buffer are current on no device", miss.s[0].lo,
                         miss.s[0].hi);
    set_list(b, 0, &want);
    return XO_OK;
}

/* Bring [lo, hi) current on `dev`. move_lock held. */
static xo_status make_locked(xo_buffer *b, int dev, size_t lo, size_t hi)
{
    if (dev == 0)
        return host_locked(b, lo, hi);
    XO_RETURN_IF_ERROR(alloc_locked(b, dev));
    span_list cur, want, miss;
    list_of(b, dev, &cur);
    if (list_covers(&cur, lo, hi))
        return XO_OK;
    target(b, &cur, lo, hi, &want, &miss);
    if (xo__valid(b) & 1u) /* leaves the host afresh: no rent paid toward this stay (dispatch.c) */
        atomic_store_explicit(&b->rent_ns, 0, memory_order_relaxed);
    xo_context *ctx = b->ctx;
    int shared = (xo__shared(b) >> dev) & 1u;
    for (int m = 0; m < miss.n; m++) {
        size_t a = miss.s[m].lo, z = miss.s[m].hi;
        XO_RETURN_IF_ERROR(host_locked(b, a, z));
        XO_RETURN_IF_ERROR(xo__dev_upload(ctx, dev, b->mem[dev], a, (const char *)b->host + a, z - a, shared));
    }
    set_list(b, dev, &want);
    return XO_OK;
}

/* ---- the entry points --------------------------------------------------------------- */

uint32_t xo__span_valid(xo_buffer *b, size_t lo, size_t hi)
{
    uint32_t v = xo__valid(b);
    if (!(v >> XO_PARTIAL))
        return v;
    pthread_mutex_lock(&b->move_lock);
    v = xo__valid(b);
    uint32_t part = v >> XO_PARTIAL;
    v &= (1u << XO_PARTIAL) - 1u;
    for (int d = 0; d < XO_MAX_DEVICES && part; d++)
        if (part >> d & 1u) {
            span_list L;
            list_of(b, d, &L);
            if (list_covers(&L, lo, hi))
                v |= 1u << d;
        }
    pthread_mutex_unlock(&b->move_lock);
    return v;
}

xo_status xo__buffer_prepare(xo_buffer *b, int dev, size_t lo, size_t hi, int need, int write)
{
    if (xo__valid(b) >> dev & 1u) /* whole here (and allocated): a write leaves it the only copy */
        return XO_OK;
    if (!need && (!write || (lo == 0 && hi >= b->bytes)))
        return xo__buffer_ensure_alloc(b, dev);
    pthread_mutex_lock(&b->move_lock);
    xo_status st = need ? make_locked(b, dev, lo, hi) : alloc_locked(b, dev);
    if (st == XO_OK && write && !(xo__valid(b) >> dev & 1u)) {
        /* The lists the write will leave must fit; else the writer's copy goes whole. */
        span_list L;
        list_of(b, dev, &L);
        list_add(&L, lo, hi);
        int fits = L.n <= XO_SPANS && spans_ready(b);
        uint32_t holders = xo__valid(b) | xo__valid(b) >> XO_PARTIAL;
        for (int e = 0; e < b->ctx->ndev && fits; e++)
            if (e != dev && (holders >> e & 1u)) {
                list_of(b, e, &L);
                list_sub(&L, lo, hi);
                fits = L.n <= XO_SPANS;
            }
        if (!fits)
            st = make_locked(b, dev, 0, b->bytes);
    }
    pthread_mutex_unlock(&b->move_lock);
    return st;
}

void xo__buffer_wrote(xo_buffer *b, int dev, size_t lo, size_t hi)
{
    if ((xo__valid(b) >> dev & 1u) || (lo == 0 && hi >= b->bytes)) {
        xo__buffer_mark_written(b, dev);
        return;
    }
    if (lo >= hi)
        return;
    pthread_mutex_lock(&b->move_lock);
    uint32_t holders = xo__valid(b) | xo__valid(b) >> XO_PARTIAL;
    span_list L;
    for (int e = 0; e < b->ctx->ndev; e++)
        if (e != dev && (holders >> e & 1u)) {
            list_of(b, e, &L);
            list_sub(&L, lo, hi);
            set_list(b, e, &L);
        }
    list_of(b, dev, &L);
    list_add(&L, lo, hi);
    set_list(b, dev, &L);
    pthread_mutex_unlock(&b->move_lock);
}

xo_status xo__buffer_make_current(xo_buffer *b, int dev)
{
    if (xo__valid(b) & (1u << dev))
        return XO_OK;
    pthread_mutex_lock(&b->move_lock);
    xo_status st = make_locked(b, dev, 0, b->bytes);
    pthread_mutex_unlock(&b->move_lock);
    return st;
}

xo_status xo__buffer_ensure_alloc(xo_buffer *b, int dev)
{
    if (dev == 0)
        return XO_OK;
    pthread_mutex_lock(&b->move_lock);
    xo_status st = alloc_locked(b, dev);
    pthread_mutex_unlock(&b->move_lock);
    return st;
}

void xo__buffer_spans_free(xo_buffer *b)
{
    free(b->spans);
    b->spans = NULL;
}

void xo__buffer_host_write_barrier(xo_buffer *b, int except)
{
    uint32_t pending = xo__inflight(b) & ~(except >= 0 ? 1u << except : 0u);
    if (!pending)
        return;
    xo_context *ctx = b->ctx;
    for (int d = 1; d < ctx->ndev; d++)
        if (pending & (1u << d)) {
            if (xo__dev_finish(ctx, d) != XO_OK)
                xo__log(XO_LOG_WARN, "waiting for device %d before a host write failed: %s", d, xo_last_error());
        }
    atomic_fetch_and_explicit(&b->inflight, ~pending, memory_order_relaxed);
}
