/* Recording into a capture (plan_capture.c begins and ends a capture): between
 * xo_capture_begin and xo_capture_end the ops this thread issues on a context are
 * validated as usual (their entry points) and then, at the one point every op passes
 * after validation (xo__dispatch_slow), recorded instead of run. xo_buffer_write /
 * xo_buffer_read on the context's buffers are recorded the same way. Those layers lie
 * below plans: they reach this file through the context (ctx->capture_op, capture_io,
 * plan_buffer_gone, set by context.c), as the background thread reaches context.c.
 *
 * Which plans use which buffer: each buffer a plan (or a capture) uses carries a link
 * to it, so that xo_buffer_destroy can mark the plan (its runs then fail naming the
 * buffer) without the plan ever touching freed memory. The links change under one lock:
 * only when a plan first uses a buffer, when a plan or a buffer with plans goes away. */
#include "xo_plan.h"
#include "xo_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct xo__plan_link {
    xo_plan *plan;
    int index; /* in plan->bufs */
    struct xo__plan_link *next;
} xo__plan_link;

static pthread_mutex_t links_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- buffers a plan uses ----------------------------------------------------------- */

static size_t hash_ptr(const void *p, int cap)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & (size_t)(cap - 1);
}

static int hash_grow(xo_plan *p)
{
    int cap = p->hash_cap ? p->hash_cap * 2 : 64;
    int *h = malloc((size_t)cap * sizeof *h);
    if (!h)
        return 0;
    for (int i = 0; i < cap; i++)
        h[i] = -1;
    for (int i = 0; i < p->nbufs; i++) {
        size_t j = hash_ptr(p->bufs[i].b, cap);
        while (h[j] >= 0)
            j = (j + 1) & (size_t)(cap - 1);
        h[j] = i;
    }
    free(p->hash);
    p->hash = h;
    p->hash_cap = cap;
    return 1;
}

/* The plan's index of buffer b, adding it (and a link on b) on its first use; -1: out of
 * memory. A destroyed buffer keeps its entry (b = NULL), so a new buffer at its address
 * gets one of its own. */
static int buf_index(xo_plan *p, xo_buffer *b, int step, int arg)
{
    if (p->hash_cap) {
        for (size_t j = hash_ptr(b, p->hash_cap); p->hash[j] >= 0; j = (j + 1) & (size_t)(p->hash_cap - 1))
            if (p->bufs[p->hash[j]].b == b)
                return p->hash[j];
    }
    if (2 * (p->nbufs + 1) > p->hash_cap && !hash_grow(p))
        return -1;
    xo__plan_link *l = malloc(sizeof *l);
    if (!l)
        return -1;
    pthread_mutex_lock(&links_lock); /* a destroy on another thread may mark p->bufs */
    if (p->nbufs == p->buf_cap) {
        int cap = p->buf_cap ? p->buf_cap * 2 : 16;
        xo__plan_buf *nb = realloc(p->bufs, (size_t)cap * sizeof *nb);
        if (!nb) {
            pthread_mutex_unlock(&links_lock);
            free(l);
            return -1;
        }
        p->bufs = nb;
        p->buf_cap = cap;
    }
    int i = p->nbufs++;
    p->bufs[i] = (xo__plan_buf){.b = b, .link = l, .bytes = (double)b->bytes, .first_step = step, .first_arg = arg};
    l->plan = p;
    l->index = i;
    l->next = atomic_load_explicit(&b->plans, memory_order_relaxed);
    atomic_store_explicit(&b->plans, l, memory_order_relaxed);
    pthread_mutex_unlock(&links_lock);
    size_t j = hash_ptr(b, p->hash_cap);
    while (p->hash[j] >= 0)
        j = (j + 1) & (size_t)(p->hash_cap - 1);
    p->hash[j] = i;
    return i;
}

void xo__plan_buffer_gone(xo_buffer *b)
{
    if (!atomic_load_explicit(&b->plans, memory_order_relaxed))
        return;
    pthread_mutex_lock(&links_lock);
    xo__plan_link *l = atomic_load_explicit(&b->plans, memory_order_relaxed);
    atomic_store_explicit(&b->plans, NULL, memory_order_relaxed);
    while (l) {
        xo__plan_link *next = l->next;
        l->plan->bufs[l->index].b = NULL;
        l->plan->bufs[l->index].link = NULL;
        atomic_fetch_add(&l->plan->gone, 1);
        free(l);
        l = next;
    }
    pthread_mutex_unlock(&links_lock);
}

void xo__plan_buf_name(const xo_plan *p, int i, char *out, size_t cap)
{
    const xo__plan_buf *pb = &p->bufs[i];
    const xo__step *s = &p->steps[pb->first_step];
    if (s->kind != XO_STEP_OP) {
        snprintf(out, cap, "the buffer of recorded call %d (%s)", pb->first_step + 1,
                 s->kind == XO_STEP_WRITE ? "xo_buffer_write" : "xo_buffer_read");
        return;
    }
    /* The operand's name: word first_arg of the op table's operand list. */
    const char *w = xo__ops[s->op.desc.kind].operands;
    for (int k = 0; k < pb->first_arg && w; k++) {
        w = strchr(w, ' ');
        if (w)
            w++;
    }
    int len = w ? (int)strcspn(w, " ") : 0;
    snprintf(out, cap, "%.*s%sof recorded call %d (%s)", len, w ? w : "", len ? " " : "operand ",
             pb->first_step + 1, s->op.fn);
}

void xo__plan_gone_name(xo_plan *p, char *out, size_t cap)
{
    out[0] = '\0';
    pthread_mutex_lock(&links_lock);
    for (int i = 0; i < p->nbufs; i++)
        if (!p->bufs[i].b) {
            xo__plan_buf_name(p, i, out, cap);
            break;
        }
    pthread_mutex_unlock(&links_lock);
}

void xo__plan_free(xo_plan *p)
{
    pthread_mutex_lock(&links_lock);
    for (int i = 0; i < p->nbufs; i++) {
        xo__plan_link *l = p->bufs[i].link;
        xo_buffer *b = p->bufs[i].b;
        if (!l || !b)
            continue;
        xo__plan_link *cur = atomic_load_explicit(&b->plans, memory_order_relaxed), *prev = NULL;
        while (cur && cur != l) {
            prev = cur;
            cur = cur->next;
        }
        if (cur) {
            if (prev)
                prev->next = cur->next;
            else
                atomic_store_explicit(&b->plans, cur->next, memory_order_relaxed);
        }
        free(l);
    }
    pthread_mutex_unlock(&links_lock);
    pthread_mutex_destroy(&p->run_lock);
    for (int i = 0; i < p->nchains; i++) {
        free(p->chains[i].steps);
        free(p->chains[i].ops);
    }
    free(p->chains);
    free(p->epis);
    free(p->hash);
    free(p->bufs);
    free(p->steps);
    free(p->segs);
    free(p->seg_bufs);
    free(p);
}

/* ---- recording -------------------------------------------------------------------- */

xo_plan *xo__capture_of(const xo_context *ctx)
{
    for (xo_plan *p = xo__capturing; p; p = p->next_capture)
        if (p->ctx == ctx && p->ctx_id == ctx->id)
            return p;
    return NULL;
}

static xo__step *new_step(xo_plan *p)
{
    if (p->nsteps == p->step_cap) {
        int cap = p->step_cap ? p->step_cap * 2 : 64;
        xo__step *ns = realloc(p->steps, (size_t)cap * sizeof *ns);
        if (!ns)
            return NULL;
        p->steps = ns;
        p->step_cap = cap;
    }
    xo__step *s = &p->steps[p->nsteps];
    memset(s, 0, sizeof *s);
    for (int i = 0; i < XO_MAX_ARGS; i++)
        s->bi[i] = -1;
    return s;
}

int xo__plan_record_op(xo_plan *p, const xo__op *op)
{
    xo__step *s = new_step(p);
    if (!s)
        return 0;
    s->kind = XO_STEP_OP;
    s->op = *op;
    s->op.need = xo__op_needs(op);
    s->op.stat_slot = -1;
    for (int i = 0; i < op->desc.narg; i++) {
        xo_buffer *b = op->buf[i];
        if (!b)
            continue;
        s->op.desc.arg[i].host = b->host; /* fixed for the buffer's life */
        s->op.desc.arg[i].mem = NULL;
        if ((s->bi[i] = buf_index(p, b, p->nsteps, i)) < 0)
            return 0; /* not recorded (the buffers it added stay, unused) */
    }
    p->nsteps++;
    p->nops++;
    return 1;
}

int xo__capture_op(const xo__op *op, xo_status *st)
{
    xo_plan *p = xo__capture_of(op->ctx);
    if (!p)
        return 0;
    *st = XO_OK;
    if (!xo__plan_record_op(p, op))
        *st = xo__error(XO_ERR_OUT_OF_MEMORY, "%s: out of host memory recording it into a plan", op->fn);
    return 1;
}

int xo__plan_record_io(xo_plan *p, xo_buffer *b, int write, size_t offset, void *ptr, size_t bytes)
{
    xo__step *s = new_step(p);
    if (!s || (s->bi[0] = buf_index(p, b, p->nsteps, -1)) < 0)
        return 0;
    s->kind = write ? XO_STEP_WRITE : XO_STEP_READ;
    s->op.buf[0] = b;
    s->host = ptr;
    s->offset = offset;
    s->bytes = bytes;
    p->nsteps++;
    return 1;
}

int xo__capture_io(xo_buffer *b, int write, size_t offset, void *ptr, size_t bytes, xo_status *st)
{
    xo_plan *p = xo__capture_of(b->ctx);
    if (!p)
        return 0;
    *st = XO_OK;
    if (!xo__plan_record_io(p, b, write, offset, ptr, bytes))
        *st = xo__error(XO_ERR_OUT_OF_MEMORY, "%s: out of host memory recording it into a plan",
                        write ? "xo_buffer_write" : "xo_buffer_read");
    return 1;
}
