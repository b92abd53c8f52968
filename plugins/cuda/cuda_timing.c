/* The per-op timing ring of a device: each op is bracketed by a pair of events, and
 * drain_timings (cuda_plugin.c) collects the completed ones. Calls only the driver. */
#include "cuda_internal.h"

/* Record the start event of a new ring entry; NULL when timings are unavailable. The
 * entry only joins the ring (timing_end) once its end event is recorded too. When the
 * ring is full (that many ops in flight) the oldest op is waited for and its time is
 * carried to the next drain under XO_NO_TOKEN, so busy time stays exact. */
xo__cuda_timing *xo__cuda_timing_begin(xo__cuda_device *d, uint64_t token)
{
    if (d->timing_broken || d->capturing) return NULL; /* recorded into a graph: not timed */
    if (d->timing_count == XO_CUDA_TIMING_SLOTS) {
        xo__cuda_timing *o = &d->timing[d->timing_head];
        float ms = 0.0f;
        if (xo__cu.cuEventSynchronize(o->end) == CUDA_SUCCESS &&
            xo__cu.cuEventElapsedTime_v2(&ms, o->start, o->end) == CUDA_SUCCESS)
            d->overflow_us += (double)ms * 1000.0;
        d->timing_head = (d->timing_head + 1) % XO_CUDA_TIMING_SLOTS;
        d->timing_count--;
    }
    xo__cuda_timing *t = &d->timing[(d->timing_head + d->timing_count) % XO_CUDA_TIMING_SLOTS];
    if (!t->start) {
        if (xo__cu.cuEventCreate(&t->start, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
            t->start = NULL;
            d->timing_broken = 1;
            return NULL;
        }
        if (xo__cu.cuEventCreate(&t->end, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
            (void)xo__cu.cuEventDestroy_v2(t->start);
            t->start = t->end = NULL;
            d->timing_broken = 1;
            return NULL;
        }
    }
    if (xo__cu.cuEventRecord(t->start, d->stream) != CUDA_SUCCESS) return NULL;
    t->token = token;
    return t;
}

void xo__cuda_timing_end(xo__cuda_device *d, xo__cuda_timing *t)
{
    if (t && xo__cu.cuEventRecord(t->end, d->stream) == CUDA_SUCCESS) d->timing_count++;
}

void xo__cuda_timing_release(xo__cuda_device *d)
{
    for (int i = 0; i < XO_CUDA_TIMING_SLOTS; i++) {
        if (d->timing[i].start) (void)xo__cu.cuEventDestroy_v2(d->timing[i].start);
        if (d->timing[i].end) (void)xo__cu.cuEventDestroy_v2(d->timing[i].end);
        d->timing[i].start = d->timing[i].end = NULL;
    }
    d->timing_head = d->timing_count = 0;
}

int xo__cuda_timing_collect(xo__cuda_device *d, xo_op_timing *out, int max)
{
    int n = 0;
    if (max <= 0) return 0;
    if (d->overflow_us > 0) { /* ops whose timing left the full ring early */
        out[n].token = XO_NO_TOKEN;
        out[n].us = d->overflow_us;
        d->overflow_us = 0;
        n++;
    }
    while (d->timing_count > 0 && n < max) {
        xo__cuda_timing *t = &d->timing[d->timing_head];
        CUresult r = xo__cu.cuEventQuery(t->end);
        if (r == CUDA_ERROR_NOT_READY) break; /* in stream order: later ones are not done */
        float ms = 0.0f;
        if (r == CUDA_SUCCESS && xo__cu.cuEventElapsedTime_v2(&ms, t->start, t->end) == CUDA_SUCCESS) {
            out[n].token = t->token;
            out[n].us = (double)ms * 1000.0;
            n++;
        }
        d->timing_head = (d->timing_head + 1) % XO_CUDA_TIMING_SLOTS;
        d->timing_count--;
    }
    return n;
}
