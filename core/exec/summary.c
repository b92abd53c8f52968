/* XO_LOG=summary: what placement did in a running program, as one table on stderr at
 * xo_context_destroy. Per op (kind and dtype) and size class: calls per device, the
 * predicted time of those calls, the measured time of the calls that were timed, the
 * correction factors in force, and fallbacks. Only allocated when asked for; the
 * decision cache's fast path is untouched (dispatch.c counts its hits when an entry is
 * next evaluated, evicted, or its context destroyed). */
#include "xo_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCLASS XO_SIZE_CLASSES

typedef struct cell {
    uint64_t calls, timed, fallbacks;
    double predicted_us, measured_us;
} cell;

typedef struct plan_line {
    struct plan_line *next;
    char text[];
} plan_line;

struct xo__summary {
    pthread_mutex_t lock;
    int ndev;
    cell *cells; /* [XO_OP_KIND_COUNT][2][NCLASS][ndev] */
    plan_line *plans, **plans_tail; /* one line per destroyed plan, in order */
};

xo_status xo__summary_create(xo_context *ctx)
{
    xo__summary *s = calloc(1, sizeof *s);
    size_t n = (size_t)XO_OP_KIND_COUNT * 2 * NCLASS * (size_t)ctx->ndev;
    if (s)
        s->cells = calloc(n, sizeof *s->cells);
    if (!s || !s->cells) {
        free(s);
        return xo__error(XO_ERR_OUT_OF_MEMORY, "xo_context_create: no memory for XO_LOG=summary");
    }
    pthread_mutex_init(&s->lock, NULL);
    s->ndev = ctx->ndev;
    s->plans_tail = &s->plans;
    ctx->summary = s;
    return XO_OK;
}

static cell *cell_at(xo__summary *s, xo_op_kind kind, xo_dtype dtype, int cls, int dev)
{
    if ((unsigned)kind >= XO_OP_KIND_COUNT || dev < 0 || dev >= s->ndev)
        return NULL;
    cls = cls < 0 ? 0 : cls >= NCLASS ? NCLASS - 1 : cls;
    return &s->cells[(((size_t)kind * 2 + (dtype == XO_F64)) * NCLASS + (size_t)cls) * (size_t)s->ndev + (size_t)dev];
}

void xo__summary_record(xo_context *ctx, xo_op_kind kind, xo_dtype dtype, int cls, int dev, uint64_t calls,
                        double predicted_us, double measured_us, int fallback)
{
    xo__summary *s = ctx->summary;
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    cell *c = cell_at(s, kind, dtype, cls, dev);
    if (c) {
        c->calls += calls;
        c->predicted_us += predicted_us * (double)calls;
        if (measured_us >= 0) {
            c->timed++;
            c->measured_us += measured_us;
        }
        c->fallbacks += fallback != 0;
    }
    pthread_mutex_unlock(&s->lock);
}

void xo__summary_plan(xo_context *ctx, const char *line)
{
    xo__summary *s = ctx->summary;
    if (!s)
        return;
    size_t n = strlen(line) + 1;
    plan_line *p = malloc(sizeof *p + n);
    if (!p)
        return;
    p->next = NULL;
    memcpy(p->text, line, n);
    pthread_mutex_lock(&s->lock);
    *s->plans_tail = p;
    s->plans_tail = &p->next;
    pthread_mutex_unlock(&s->lock);
}

void xo__summary_print(xo_context *ctx, const char *extra)
{
    xo__summary *s = ctx->summary;
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    fprintf(stderr, "crossover summary (XO_LOG=summary): per op and size class (class c: flops + bytes ~ 2^c)\n");
    /* The two times cover different calls: compare measured_us with predicted_us * timed / calls. */
    fprintf(stderr, "predicted_us: total over all `calls`; measured_us: total over the `timed` calls only "
                    "(devices that report timings)\n");
    fprintf(stderr, "%-18s %5s %6s %-14s %12s %12s %10s %12s %9s\n", "op", "class", "device", "plugin", "calls",
            "predicted_us", "timed", "measured_us", "fallbacks");
    uint64_t rows = 0;
    for (int k = 0; k < XO_OP_KIND_COUNT; k++)
        for (int dt = 0; dt < 2; dt++)
            for (int cls = 0; cls < NCLASS; cls++)
                for (int d = 0; d < s->ndev; d++) {
                    cell *c = cell_at(s, (xo_op_kind)k, (xo_dtype)dt, cls, d);
                    if (!c->calls && !c->fallbacks)
                        continue;
                    rows++;
                    fprintf(stderr, "%c%-17s %5d %6d %-14s %12llu %12.1f %10llu %12.1f %9llu\n", dt ? 'd' : 's',
                            xo__ops[k].name, cls, d, ctx->dev[d].info.plugin, (unsigned long long)c->calls,
                            c->predicted_us, (unsigned long long)c->timed, c->measured_us,
                            (unsigned long long)c->fallbacks);
                }
    if (!rows)
        fprintf(stderr, "(no ops)\n");
    /* The factors in force, in the format `xo explain --correction FILE` reads. */
    fprintf(stderr, "corrections in force (DEVICE OP FACTOR, for xo explain --correction; # size class):\n");
    int any = 0;
    for (int k = 0; k < XO_OP_KIND_COUNT; k++)
        for (int dt = 0; dt < 2; dt++)
            for (int cls = 0; cls < NCLASS; cls++)
                for (int d = 0; d < s->ndev; d++) {
                    int used = 0;
                    for (int e = 0; e < s->ndev; e++)
                        used |= cell_at(s, (xo_op_kind)k, (xo_dtype)dt, cls, e)->calls != 0;
                    double f = used ? xo__correction_peek(ctx->correction, d, (xo_op_kind)k, (xo_dtype)dt, cls) : 1.0;
                    if (f == 1.0)
                        continue;
                    any = 1;
                    fprintf(stderr, "%d %c%s %.4g # class %d\n", d, dt ? 'd' : 's', xo__ops[k].name, f, cls);
                }
    if (!any)
        fprintf(stderr, "(none: every estimate is the profile's)\n");
    for (plan_line *p = s->plans; p; p = p->next)
        fprintf(stderr, "%s\n", p->text);
    if (extra && *extra)
        fprintf(stderr, "%s\n", extra);
    pthread_mutex_unlock(&s->lock);
}

void xo__summary_free(xo_context *ctx)
{
    if (!ctx->summary)
        return;
    pthread_mutex_destroy(&ctx->summary->lock);
    for (plan_line *p = ctx->summary->plans, *next; p; p = next) {
        next = p->next;
        free(p);
    }
    free(ctx->summary->cells);
    free(ctx->summary);
    ctx->summary = NULL;
}
