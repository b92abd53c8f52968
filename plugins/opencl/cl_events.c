/* cl_events.c: per-device event bookkeeping.
 *
 * Timings: every op enqueued on a device leaves its (first, last) command events and
 * the core's token in a bounded ring; drain_timings harvests the completed ones, oldest
 * first, from the queue's profiling counters. When the ring is full (more than
 * XO_CL_RING ops in flight) the push waits for the oldest op and carries its time to
 * the next drain under XO_NO_TOKEN, so busy time stays exact.
 *
 * Staging: an upload copies the caller's data and enqueues a non-blocking write of the
 * copy; the copy is freed once the write's event completes (harvested on later uploads,
 * on finish and at shutdown). The number and total size of pending copies are bounded. */
#include "cl_internal.h"

#include <stdlib.h>

static void timing_release(xo__cl_timing *t)
{
    if (t->first) clReleaseEvent(t->first);
    if (t->last) clReleaseEvent(t->last);
    t->first = t->last = NULL;
}

void xo__cl_timing_push_locked(xo__cl_device *d, cl_event first, cl_event last, uint64_t token)
{
    if (!last) {
        if (first) clReleaseEvent(first);
        return;
    }
    if (d->ring_count == XO_CL_RING) { /* wait for the oldest and keep its time */
        xo__cl_timing *o = &d->ring[d->ring_head];
        cl_ulong start = 0, end = 0;
        if (clWaitForEvents(1, &o->last) == CL_SUCCESS &&
            clGetEventProfilingInfo(o->first ? o->first : o->last, CL_PROFILING_COMMAND_START, sizeof start, &start,
                                    NULL) == CL_SUCCESS &&
            clGetEventProfilingInfo(o->last, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) == CL_SUCCESS &&
            end >= start)
            d->overflow_us += (double)(end - start) * 1e-3;
        timing_release(o);
        d->ring_head = (d->ring_head + 1) % XO_CL_RING;
        d->ring_count--;
    }
    xo__cl_timing *t = &d->ring[(d->ring_head + d->ring_count) % XO_CL_RING];
    t->first = first;
    t->last = last;
    t->token = token;
    d->ring_count++;
}

static int event_status(cl_event ev)
{
    cl_int st = CL_QUEUED;
    if (clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS)
        return -1;
    return st;
}

int xo__cl_timing_drain(xo__cl_device *d, xo_op_timing *out, int max)
{
    int n = 0;
    pthread_mutex_lock(&d->lock);
    if (d->overflow_us > 0 && max > 0) { /* ops whose timing left the full ring early */
        out[n].token = XO_NO_TOKEN;
        out[n].us = d->overflow_us;
        d->overflow_us = 0;
        n++;
    }
    while (d->ring_count > 0 && n < max) {
        xo__cl_timing *t = &d->ring[d->ring_head];
        int st = event_status(t->last);
        if (st > CL_COMPLETE) break; /* still queued or running: so is everything after */
        if (st == CL_COMPLETE) {
            cl_ulong start = 0, end = 0;
            cl_event first = t->first ? t->first : t->last;
            if (clGetEventProfilingInfo(first, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) == CL_SUCCESS &&
                clGetEventProfilingInfo(t->last, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) == CL_SUCCESS &&
                end >= start) {
                out[n].token = t->token;
                out[n].us = (double)(end - start) * 1e-3;
                n++;
            }
        }
        /* completed (reported or without profiling data) or failed: forget it */
        timing_release(t);
        d->ring_head = (d->ring_head + 1) % XO_CL_RING;
        d->ring_count--;
    }
    pthread_mutex_unlock(&d->lock);
    return n;
}

static void staging_drop(xo__cl_device *d, int i)
{
    clReleaseEvent(d->staging[i].done);
    free(d->staging[i].copy);
    d->staging_bytes -= d->staging[i].bytes;
    d->staging[i] = d->staging[--d->staging_count];
}

void xo__cl_staging_harvest_locked(xo__cl_device *d, int wait_all)
{
    for (int i = d->staging_count - 1; i >= 0; i--) {
        xo__cl_staging *s = &d->staging[i];
        if (wait_all) clWaitForEvents(1, &s->done);
        /* An errored write (status < 0) will never read the copy either. */
        if (event_status(s->done) <= CL_COMPLETE) staging_drop(d, i);
    }
}

void xo__cl_staging_push_locked(xo__cl_device *d, cl_event done, void *copy, size_t bytes)
{
    xo__cl_staging_harvest_locked(d, 0);
    /* Still too many in flight: wait for one write at a time (each wait retires at
     * least that entry: a completed or failed event is dropped by the harvest). */
    while (d->staging_count > 0 &&
           (d->staging_count == XO_CL_STAGING || d->staging_bytes + bytes > XO_CL_STAGING_BYTES)) {
        clWaitForEvents(1, &d->staging[0].done);
        xo__cl_staging_harvest_locked(d, 0);
    }
    d->staging[d->staging_count++] = (xo__cl_staging){.done = done, .copy = copy, .bytes = bytes};
    d->staging_bytes += bytes;
}

void xo__cl_events_release_locked(xo__cl_device *d)
{
    while (d->ring_count > 0) {
        timing_release(&d->ring[d->ring_head]);
        d->ring_head = (d->ring_head + 1) % XO_CL_RING;
        d->ring_count--;
    }
    d->ring_head = 0;
    xo__cl_staging_harvest_locked(d, 1);
}
