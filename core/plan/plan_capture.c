/* Beginning and ending a capture (the recording itself: exec/capture.c). */
#include "xo_plan.h"
#include "xo_ops.h"

#include <stdlib.h>

/* ---- the public calls ------------------------------------------------------------- */

xo_status xo_capture_begin(xo_context *ctx)
{
    if (!ctx)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_capture_begin: ctx is NULL");
    if (xo__capture_of(ctx))
        return xo__error(XO_ERR_INVALID_ARGUMENT,
                         "xo_capture_begin: this thread is already capturing on this context (end it with "
                         "xo_capture_end first)");
    xo_plan *p = calloc(1, sizeof *p);
    if (!p)
        return xo__error(XO_ERR_OUT_OF_MEMORY, "xo_capture_begin: out of host memory");
    p->ctx = ctx;
    p->ctx_id = ctx->id;
    p->forced = -1;
    pthread_mutex_init(&p->run_lock, NULL);
    /* The fast paths (xo_dispatch.h) start from this thread's last decision slot: while
     * it is not ctx's, every op on ctx takes xo__dispatch_slow, which records it. */
    if (xo__tl.last && xo__tl.last->ctx_id == ctx->id)
        xo__tl.last = NULL;
    p->next_capture = xo__capturing;
    xo__capturing = p;
    return XO_OK;
}

xo_status xo_capture_end(xo_context *ctx, xo_plan **out)
{
    if (!out)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_capture_end: out is NULL");
    *out = NULL;
    if (!ctx)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_capture_end: ctx is NULL");
    xo_plan *p = xo__capture_of(ctx), **link = &xo__capturing;
    if (!p)
        return xo__error(XO_ERR_INVALID_ARGUMENT,
                         "xo_capture_end: no capture was begun on this thread and context (xo_capture_begin)");
    while (*link != p)
        link = &(*link)->next_capture;
    *link = p->next_capture;
    p->next_capture = NULL;
    if (atomic_load(&p->gone)) {
        char name[160];
        xo__plan_gone_name(p, name, sizeof name);
        xo__plan_free(p);
        return xo__error(XO_ERR_INVALID_ARGUMENT,
                         "xo_capture_end: a buffer the capture used was destroyed before the capture ended: %s; "
                         "no plan was made",
                         name);
    }
    xo_status st = xo__plan_place(p);
    if (st != XO_OK) {
        xo__plan_free(p);
        return st;
    }
    xo__plan_prepare_run(p);
    *out = p;
    return XO_OK;
}
