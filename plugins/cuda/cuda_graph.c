/* The "xo_graph" extra (plugin.h): a plan's run of ops on one device recorded once with
 * stream capture (cuStreamBeginCapture / cuStreamEndCapture + cuGraphInstantiate) and
 * replayed with cuGraphLaunch, one launch for the lot. The graph entries are optional
 * driver symbols (cuda_api.h): without them get_proc_address offers no "xo_graph".
 *
 * While a thread records on a device, the device's stream is in capture mode: the other
 * threads' calls on that device wait in xo__cuda_enter until the capture ends (their
 * work must not land in the recording), and no timing events are recorded (cuda_timing.c). */
#include "cuda_internal.h"

static xo_status cuda_graph_begin(void *state, int dev)
{
    xo__cuda_state *st = state;
    xo__cuda_device *d = xo__cuda_device_at(st, dev, "cuda graph begin");
    if (!d) return XO_ERR_INVALID_ARGUMENT;
    XO_CUDA_TRY(xo__cuda_enter(st, d));
    xo_status s = d->capturing ? st->host->set_error(XO_ERR_INVALID_ARGUMENT, "cuda graph begin: device %d is "
                                                     "already recording", dev)
                               : XO_CU(st, cuStreamBeginCapture_v2, (d->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    if (s == XO_OK) {
        d->capturing = 1;
        d->capture_owner = pthread_self();
    }
    xo__cuda_leave(d);
    return s;
}

static xo_status cuda_graph_end(void *state, int dev, void **graph)
{
    xo__cuda_state *st = state;
    *graph = NULL;
    xo__cuda_device *d = xo__cuda_device_at(st, dev, "cuda graph end");
    if (!d) return XO_ERR_INVALID_ARGUMENT;
    XO_CUDA_TRY(xo__cuda_enter(st, d));
    if (!d->capturing || !pthread_equal(d->capture_owner, pthread_self())) {
        xo__cuda_leave(d);
        return st->host->set_error(XO_ERR_INVALID_ARGUMENT, "cuda graph end: this thread is not recording on device %d",
                                   dev);
    }
    CUgraph g = NULL;
    xo_status s = XO_CU(st, cuStreamEndCapture, (d->stream, &g));
    d->capturing = 0;
    pthread_cond_broadcast(&d->capture_done);
    if (s == XO_OK && !g) s = st->host->set_error(XO_ERR_DEVICE, "cuStreamEndCapture: no graph");
    CUgraphExec exec = NULL;
    if (s == XO_OK) s = XO_CU(st, cuGraphInstantiateWithFlags, (&exec, g, 0));
    if (g) (void)xo__cu.cuGraphDestroy(g); /* the instance keeps what it needs */
    xo__cuda_leave(d);
    if (s == XO_OK) *graph = exec;
    return s;
}

static xo_status cuda_graph_launch(void *state, int dev, void *graph)
{
    xo__cuda_state *st = state;
    xo__cuda_device *d = xo__cuda_device_at(st, dev, "cuda graph launch");
    if (!d) return XO_ERR_INVALID_ARGUMENT;
    if (!graph) return st->host->set_error(XO_ERR_INVALID_ARGUMENT, "cuda graph launch: graph is NULL");
    XO_CUDA_TRY(xo__cuda_enter(st, d));
    xo_status s = XO_CU(st, cuGraphLaunch, ((CUgraphExec)graph, d->stream));
    xo__cuda_leave(d);
    return s;
}

static void cuda_graph_destroy(void *state, int dev, void *graph)
{
    xo__cuda_state *st = state;
    if (!graph || !st || xo__cuda_lost(st)) return; /* after fork(): the parent's, not ours */
    xo__cuda_device *d = xo__cuda_device_at(st, dev, "cuda graph destroy");
    if (!d || xo__cuda_enter(st, d) != XO_OK) return;
    (void)xo__cu.cuGraphExecDestroy((CUgraphExec)graph);
    xo__cuda_leave(d);
}

const xo_graph_runner xo__cuda_graph_runner = {
    .begin = cuda_graph_begin,
    .end = cuda_graph_end,
    .launch = cuda_graph_launch,
    .destroy = cuda_graph_destroy,
};
