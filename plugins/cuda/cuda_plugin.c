/* The CUDA plugin's vtable: discovery, device identity, eligibility (the op table's
 * needs, cuda_run.c), finish, timings; memory and run come from the files below.
 *
 * The driver (libcuda.so.1) and cuBLAS are loaded at run time (cuda_loader.c). A
 * machine without them, a failing cuInit or zero devices is not an error: init returns
 * XO_OK with no devices and prints nothing (the reason goes to XO_LOG=info). */
#include "cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static xo_status cuda_init(const xo_plugin_host *host, void **out_state, int *out_ndevices)
{
    *out_state = NULL;
    *out_ndevices = 0;

    if (xo__cuda_forked_after_start()) {
        host->log(XO_LOG_INFO, "cuda: this process forked after CUDA started in its parent: no CUDA devices");
        return XO_OK;
    }
    const xo__cuda_libs *libs = xo__cuda_load();
    if (!libs->driver) {
        host->log(XO_LOG_INFO, "cuda: no driver: %s", libs->driver_note);
        host->set_error(XO_ERR_NO_DEVICE, "no driver: %s", libs->driver_note);
        return XO_OK;
    }
    host->log(XO_LOG_DEBUG, "cuda: driver: %s; cuBLAS: %s", libs->driver_note, libs->cublas_note);

    CUresult r = xo__cu.cuInit(0);
    if (r != CUDA_SUCCESS) {
        host->log(XO_LOG_INFO, "cuda: cuInit: %s (%d); no CUDA devices", xo__cuda_result_name(r), r);
        host->set_error(XO_ERR_NO_DEVICE, "cuInit: %s (%d)", xo__cuda_result_name(r), r);
        return XO_OK;
    }
    int count = 0;
    r = xo__cu.cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS || count <= 0) {
        host->log(XO_LOG_INFO, "cuda: cuDeviceGetCount: %s, %d devices", xo__cuda_result_name(r), count);
        return XO_OK;
    }
    if (count > XO_CUDA_MAX_DEVICES) {
        host->log(XO_LOG_WARN, "cuda: using the first %d of %d devices", XO_CUDA_MAX_DEVICES, count);
        count = XO_CUDA_MAX_DEVICES;
    }

    xo__cuda_state *st = calloc(1, sizeof *st);
    if (!st) return host->set_error(XO_ERR_OUT_OF_MEMORY, "cuda init: out of host memory");
    st->host = host;
    xo__cuda_fork_watch();
    st->fork_gen = atomic_load_explicit(&xo__cuda_fork_gen, memory_order_relaxed);
    if (xo__cu.cuDriverGetVersion(&st->driver_version) != CUDA_SUCCESS) st->driver_version = 0;

    for (int i = 0; i < count; i++) {
        xo__cuda_device *d = &st->dev[st->ndev];
        if (xo__cuda_device_open(st, d, i) == XO_OK) st->ndev++; /* failures are logged */
        else xo__cuda_device_close(st, d);
    }
    if (libs->cublas) {
        int major = 0, minor = 0, patch = 0;
        (void)xo__cublas.cublasGetProperty(XO_CUDA_MAJOR_VERSION, &major);
        (void)xo__cublas.cublasGetProperty(XO_CUDA_MINOR_VERSION, &minor);
        (void)xo__cublas.cublasGetProperty(XO_CUDA_PATCH_LEVEL, &patch);
        snprintf(st->cublas_version, sizeof st->cublas_version, "cuBLAS %d.%d.%d", major, minor, patch);
    } else {
        snprintf(st->cublas_version, sizeof st->cublas_version, "no cuBLAS");
    }
    if (st->ndev == 0) {
        free(st);
        return XO_OK;
    }
    *out_state = st;
    *out_ndevices = st->ndev;
    return XO_OK;
}

static void cuda_shutdown(void *state)
{
    xo__cuda_state *st = state;
    if (!st) return;
    for (int i = 0; i < st->ndev; i++) xo__cuda_device_close(st, &st->dev[i]);
    free(st);
}

static xo_status cuda_device_info(void *state, int dev, xo_device_info *out)
{
    xo__cuda_state *st = state;
    xo__cuda_device *d = xo__cuda_device_at(st, dev, "cuda device_info");
    if (!d) return XO_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", d->name);
    snprintf(out->vendor, sizeof out->vendor, "NVIDIA");
    snprintf(out->driver, sizeof out->driver, "CUDA %d.%d sm_%d%d %s", st->driver_version / 1000,
             (st->driver_version % 1000) / 10, d->cc_major, d->cc_minor, st->cublas_version);
    snprintf(out->plugin, sizeof out->plugin, "cuda");
    out->kind = XO_DEVICE_GPU;
    out->host_unified = d->integrated ? 1 : 0;
    out->fp64 = 1;
    return XO_OK;
}

static int cuda_supports(void *state, int dev, const xo_op_desc *op)
{
    xo__cuda_state *st = state;
    if (!st || !op || dev < 0 || dev >= st->ndev) return 0;
    if (xo__cuda_lost(st)) return -1; /* nothing runs here: placement looks elsewhere */
    if (op->dtype != XO_F32 && op->dtype != XO_F64) return 0;
    xo__cuda_device *d = &st->dev[dev];
    const unsigned need = xo__cuda_needs(op->kind); /* every op kind in both precisions */
    if (!need) return 0;
    /* -1: cuBLAS could not be set up, or the module did not load ("compile" fault). */
    if ((need & XO_CUDA_NEED_BLAS) && !xo__cuda_ready(st, d, 1)) return -1;
    if ((need & XO_CUDA_NEED_KERNELS) && !xo__cuda_ready(st, d, 0)) return -1;
    return 1;
}

static xo_status cuda_finish(void *state, int dev)
{
    xo__cuda_state *st = state;
    if (st && xo__cuda_lost(st)) return XO_OK; /* nothing runs there; data only there reads as lost */
    xo__cuda_device *d = xo__cuda_device_at(st, dev, "cuda finish");
    if (!d) return XO_ERR_INVALID_ARGUMENT;
    XO_CUDA_TRY(xo__cuda_enter(st, d));
    xo_status s = XO_CU(st, cuStreamSynchronize, (d->stream));
    xo__cuda_leave(d);
    return s;
}

static int cuda_drain_timings(void *state, int dev, xo_op_timing *out, int max)
{
    xo__cuda_state *st = state;
    if (st && xo__cuda_lost(st)) return 0;
    xo__cuda_device *d = xo__cuda_device_at(st, dev, "cuda drain_timings");
    if (!d || max <= 0 || xo__cuda_enter(st, d) != XO_OK) return 0;
    const int n = d->capturing ? 0 : xo__cuda_timing_collect(d, out, max); /* no event queries while recording */
    xo__cuda_leave(d);
    return n;
}

/* "xo_chain" always (the interpreter kernel is in the fatbin); "xo_graph" when the
 * driver has the graph entries. */
static const void *cuda_get_proc_address(const char *name)
{
    if (!name) return NULL;
    if (strcmp(name, "xo_chain") == 0) return &xo__cuda_chain_runner;
    if (strcmp(name, "xo_graph") == 0) return xo__cuda_graphs_loaded() ? &xo__cuda_graph_runner : NULL;
    return NULL;
}

static const xo_plugin k_cuda_plugin = {
    .api_version = XO_PLUGIN_API_VERSION,
    .name = "cuda",
    .init = cuda_init,
    .shutdown = cuda_shutdown,
    .device_info = cuda_device_info,
    .supports = cuda_supports,
    .mem_alloc = xo__cuda_mem_alloc,
    .mem_free = xo__cuda_mem_free,
    .upload = xo__cuda_upload,
    .download = xo__cuda_download,
    .run = xo__cuda_run,
    .finish = cuda_finish,
    .drain_timings = cuda_drain_timings,
    .get_proc_address = cuda_get_proc_address,
};

const xo_plugin *xo_plugin_cuda(void);
const xo_plugin *xo_plugin_cuda(void)
{
    return &k_cuda_plugin;
}
