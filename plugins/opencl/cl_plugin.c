/* cl_plugin.c: the OpenCL plugin's vtable. Devices and their lifetime: cl_device.c.
 * In a forked child every entry of a state inherited from the parent fails (xo__cl_lost)
 * before it touches the runtime. */
#include "cl_internal.h"
#include "cl_testing.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static _Atomic int all_one_at_a_time; /* cl_testing.h */
void xo__cl_set_one_call_at_a_time(int all) { atomic_store(&all_one_at_a_time, all != 0); }

/* One call at a time into a runtime that needs it (cl_device.c, one_call_at_a_time);
 * dev < 0: any device of the state. Returns whether the lock was taken. */
static int serial_enter(const xo__cl_state *st, int dev)
{
    int on = st && atomic_load_explicit(&all_one_at_a_time, memory_order_relaxed);
    for (int i = 0; st && i < st->ndev; i++)
        if (dev < 0 || i == dev) on |= st->dev[i].one_call_at_a_time;
    if (on) pthread_mutex_lock(&xo__cl_serial_lock);
    return on;
}

static void serial_leave(int on)
{
    if (on) pthread_mutex_unlock(&xo__cl_serial_lock);
}

static void vt_shutdown(void *state)
{
    xo__cl_state *st = state;
    if (!st) return;
    int on = xo__cl_lost(st) ? 0 : serial_enter(st, -1);
    xo__cl_process_close(st);
    serial_leave(on);
    free(st);
}

static xo_status vt_init(const xo_plugin_host *host, void **out_state, int *out_ndevices)
{
    *out_state = NULL;
    *out_ndevices = 0;
    xo__cl_state *st = calloc(1, sizeof *st);
    if (!st) return host->set_error(XO_ERR_OUT_OF_MEMORY, "opencl: init: out of host memory");
    st->host = host;
    xo_status s = xo__cl_process_open(st);
    if (s != XO_OK || st->ndev == 0) {
        free(st);
        return s;
    }
    *out_state = st;
    *out_ndevices = st->ndev;
    return XO_OK;
}

static xo_status vt_device_info(void *state, int dev, xo_device_info *out)
{
    xo__cl_state *st = state;
    if (!st || dev < 0 || dev >= st->ndev)
        return XO_ERR_INVALID_ARGUMENT;
    *out = st->dev[dev].info;
    return XO_OK;
}

static int vt_supports(void *state, int dev, const xo_op_desc *op)
{
    const xo_dtype dtype = op->dtype;
    xo__cl_state *st = state;
    if (!st || dev < 0 || dev >= st->ndev) return 0;
    if (xo__cl_lost(st)) return -1; /* nothing runs here: placement looks elsewhere */
    xo__cl_device *d = &st->dev[dev];
    if (dtype != XO_F32 && dtype != XO_F64) return 0;
    if (dtype == XO_F64 && !d->info.fp64) return 0;
    int on = serial_enter(st, dev);
    int r = xo__cl_op_supports(st, d, op);
    serial_leave(on);
    return r;
}

static xo_status vt_run(void *state, int dev, const xo_op_desc *op, uint64_t token)
{
    xo__cl_state *st = state;
    if (xo__cl_lost(st)) return xo__cl_lost_fail(st);
    int on = serial_enter(st, dev);
    xo_status s = xo__cl_op_run(st, &st->dev[dev], op, token);
    serial_leave(on);
    return s;
}

static xo_status vt_finish(void *state, int dev)
{
    xo__cl_state *st = state;
    if (xo__cl_lost(st)) return XO_OK; /* nothing will run there; reading data only current there says so */
    xo__cl_device *d = &st->dev[dev];
    int on = serial_enter(st, dev);
    cl_int err = clFinish(d->queue);
    pthread_mutex_lock(&d->lock);
    xo__cl_staging_harvest_locked(d, 0);
    pthread_mutex_unlock(&d->lock);
    serial_leave(on);
    if (err != CL_SUCCESS) return xo__cl_fail(st->host, "clFinish", err);
    return XO_OK;
}

static int vt_drain_timings(void *state, int dev, xo_op_timing *out, int max)
{
    xo__cl_state *st = state;
    if (!st || dev < 0 || dev >= st->ndev || max <= 0 || xo__cl_lost(st)) return 0;
    int on = serial_enter(st, dev);
    int n = xo__cl_timing_drain(&st->dev[dev], out, max);
    serial_leave(on);
    return n;
}

/* Memory entries: refused in a forked child before they reach the runtime. */
static xo_status vt_mem_alloc(void *state, int dev, size_t bytes, xo_plugin_mem **out)
{
    if (xo__cl_lost(state)) return xo__cl_lost_fail(state);
    int on = serial_enter(state, dev);
    xo_status s = xo__cl_mem_alloc(state, dev, bytes, out);
    serial_leave(on);
    return s;
}

static xo_status vt_mem_wrap(void *state, int dev, void *host, size_t bytes, xo_plugin_mem **out)
{
    if (xo__cl_lost(state)) return xo__cl_lost_fail(state);
    int on = serial_enter(state, dev);
    xo_status s = xo__cl_mem_wrap(state, dev, host, bytes, out);
    serial_leave(on);
    return s;
}

static void vt_mem_free(void *state, int dev, xo_plugin_mem *mem)
{
    if (xo__cl_lost(state)) return; /* the parent's: left alone */
    int on = serial_enter(state, dev);
    xo__cl_mem_free(state, dev, mem);
    serial_leave(on);
}

static xo_status vt_upload(void *state, int dev, xo_plugin_mem *dst, size_t dst_off, const void *src, size_t bytes)
{
    if (xo__cl_lost(state)) return xo__cl_lost_fail(state);
    int on = serial_enter(state, dev);
    xo_status s = xo__cl_upload(state, dev, dst, dst_off, src, bytes);
    serial_leave(on);
    return s;
}

static xo_status vt_download(void *state, int dev, xo_plugin_mem *src, size_t src_off, void *dst, size_t bytes)
{
    if (xo__cl_lost(state)) return xo__cl_lost_fail(state);
    int on = serial_enter(state, dev);
    xo_status s = xo__cl_download(state, dev, src, src_off, dst, bytes);
    serial_leave(on);
    return s;
}

/* The "xo_chain" extra: element-wise chains as one generated kernel (cl_chain.c). */
static int vt_chain_supports(void *state, int dev, const xo_chain *chain)
{
    xo__cl_state *st = state;
    if (!st || dev < 0 || dev >= st->ndev || !chain) return 0;
    if (xo__cl_lost(st)) return -1;
    int on = serial_enter(st, dev);
    int r = xo__cl_chain_supports(st, &st->dev[dev], chain);
    serial_leave(on);
    return r;
}

static xo_status vt_chain_run(void *state, int dev, const xo_chain *chain, uint64_t token)
{
    xo__cl_state *st = state;
    if (!st || dev < 0 || dev >= st->ndev || !chain) return XO_ERR_INVALID_ARGUMENT;
    if (xo__cl_lost(st)) return xo__cl_lost_fail(st);
    int on = serial_enter(st, dev);
    xo_status s = xo__cl_chain_run(st, &st->dev[dev], chain, token);
    serial_leave(on);
    return s;
}

static const xo_chain_runner cl_chain_runner = {.supports = vt_chain_supports, .run = vt_chain_run};

static const void *vt_get_proc_address(const char *name)
{
    if (name && strcmp(name, "xo_chain") == 0) return &cl_chain_runner;
    return NULL;
}

static const xo_plugin cl_plugin = {
    .api_version = XO_PLUGIN_API_VERSION,
    .name = "opencl",
    .init = vt_init,
    .shutdown = vt_shutdown,
    .device_info = vt_device_info,
    .supports = vt_supports,
    .mem_wrap = vt_mem_wrap,
    .mem_alloc = vt_mem_alloc,
    .mem_free = vt_mem_free,
    .upload = vt_upload,
    .download = vt_download,
    .run = vt_run,
    .finish = vt_finish,
    .drain_timings = vt_drain_timings,
    .get_proc_address = vt_get_proc_address,
};

const xo_plugin *xo_plugin_opencl(void);
const xo_plugin *xo_plugin_opencl(void) { return &cl_plugin; }
