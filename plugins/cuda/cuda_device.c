/* One CUDA device: its primary context, stream, lock, cuBLAS handle and kernel module,
 * the release of its staging buffers, and launching our kernels on its stream. Calls
 * only cuda_timing.c, cuda_status.c and cuda_loader.c. */
#include "cuda_internal.h"

#include <stdio.h>
#include <string.h>

/* Generated into the build tree by cmake/XoEmbedBinary.cmake. */
extern const unsigned char xo__cuda_fatbin_data[];
extern const size_t xo__cuda_fatbin_size;

const char *const xo__cuda_kernel_names[XO_CUDA_K_COUNT][2] = {
#define XO_CUDA_K_NAME_(ID, name) [XO_CUDA_K_##ID] = {"xo_" #name "_f32", "xo_" #name "_f64"},
    XO_CUDA_KERNEL_MAP(XO_CUDA_K_NAME_)
#undef XO_CUDA_K_NAME_
};

const unsigned char *xo__cuda_fatbin(size_t *out_size)
{
    if (out_size) *out_size = xo__cuda_fatbin_size;
    return xo__cuda_fatbin_data;
}

xo_status xo__cuda_enter(xo__cuda_state *st, xo__cuda_device *d)
{
    pthread_mutex_lock(&d->lock);
    while (d->capturing && !pthread_equal(d->capture_owner, pthread_self())) /* cuda_graph.c */
        pthread_cond_wait(&d->capture_done, &d->lock);
    xo_status s = XO_CU(st, cuCtxPushCurrent_v2, (d->ctx));
    if (s != XO_OK) pthread_mutex_unlock(&d->lock);
    return s;
}

void xo__cuda_leave(xo__cuda_device *d)
{
    CUcontext popped = NULL;
    (void)xo__cu.cuCtxPopCurrent_v2(&popped);
    pthread_mutex_unlock(&d->lock);
}

/* ---- fork ------------------------------------------------------------------------ */

_Atomic unsigned xo__cuda_fork_gen;
static _Atomic int g_started; /* this process has initialised the driver */
static _Atomic int g_forked;  /* ... and this is a child forked after that */
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;

static void after_fork_child(void)
{
    if (atomic_load(&g_started)) atomic_store(&g_forked, 1);
    atomic_fetch_add_explicit(&xo__cuda_fork_gen, 1, memory_order_relaxed);
}
static void register_atfork(void) { pthread_atfork(NULL, NULL, after_fork_child); }

void xo__cuda_fork_watch(void)
{
    pthread_once(&g_atfork_once, register_atfork);
    atomic_store(&g_started, 1);
}
int xo__cuda_forked_after_start(void) { return atomic_load(&g_forked); }

xo__cuda_device *xo__cuda_device_at(xo__cuda_state *st, int dev, const char *fn)
{
    if (!st || dev < 0 || dev >= st->ndev) {
        if (st && st->host) st->host->set_error(XO_ERR_INVALID_ARGUMENT, "%s: no CUDA device %d", fn, dev);
        return NULL;
    }
    if (xo__cuda_lost(st)) {
        st->host->set_error(XO_ERR_DEVICE,
                            "%s: device lost: the process forked and CUDA does not survive fork(); data only "
                            "current on this device is gone, the other devices go on", fn);
        return NULL;
    }
    return &st->dev[dev];
}

/* Load the embedded kernels and the scratch area the reduction needs; 1 on success. On
 * failure the device stays usable for cuBLAS ops; kernel ops become ineligible. */
static int load_kernels(xo__cuda_state *st, xo__cuda_device *d)
{
    const xo_plugin_host *h = st->host;
    if (h->fault && h->fault(h, "compile")) {
        h->log(XO_LOG_WARN, "cuda: device %d: kernel module load failed (injected fault); kernel ops run elsewhere",
               d->ordinal);
        return 0;
    }
    CUresult r = xo__cu.cuModuleLoadData(&d->module, xo__cuda_fatbin_data);
    if (r != CUDA_SUCCESS) {
        h->log(XO_LOG_WARN, "cuda: device %d (sm_%d%d): cuModuleLoadData: %s; kernel ops disabled",
               d->ordinal, d->cc_major, d->cc_minor, xo__cuda_result_name(r));
        d->module = NULL;
        return 0;
    }
    for (int k = 0; k < XO_CUDA_K_COUNT && r == CUDA_SUCCESS; k++)
        for (int t = 0; t < 2 && r == CUDA_SUCCESS; t++) {
            r = xo__cu.cuModuleGetFunction(&d->fn[k][t], d->module, xo__cuda_kernel_names[k][t]);
            if (r != CUDA_SUCCESS)
                h->log(XO_LOG_WARN, "cuda: cuModuleGetFunction(%s): %s", xo__cuda_kernel_names[k][t],
                       xo__cuda_result_name(r));
        }
    if (r == CUDA_SUCCESS) {
        r = xo__cu.cuMemAlloc_v2(&d->scratch, 3 * XO_CUDA_REDUCE_BLOCKS * sizeof(double)); /* nrm2: triples */
        if (r != CUDA_SUCCESS) {
            h->log(XO_LOG_WARN, "cuda: cuMemAlloc_v2 (reduction scratch): %s", xo__cuda_result_name(r));
            d->scratch = 0;
        }
    }
    if (r != CUDA_SUCCESS) {
        (void)xo__cu.cuModuleUnload(d->module);
        d->module = NULL;
        memset(d->fn, 0, sizeof d->fn);
        return 0;
    }
    h->log(XO_LOG_DEBUG, "cuda: device %d: kernels loaded (%zu-byte fatbin)", d->ordinal, xo__cuda_fatbin_size);
    return 1;
}

/* cuBLAS handle bound to the device's stream; 1 on success. On failure BLAS ops
 * become ineligible. */
static int create_blas(xo__cuda_state *st, xo__cuda_device *d)
{
    const xo__cuda_libs *libs = xo__cuda_load();
    if (!libs->cublas) {
        st->host->log(XO_LOG_INFO, "cuda: cuBLAS: %s; BLAS ops run elsewhere", libs->cublas_note);
        return 0;
    }
    xo_status s = XO_CUBLAS(st, cublasCreate_v2, (&d->blas));
    if (s != XO_OK) {
        d->blas = NULL;
    } else {
        s = XO_CUBLAS(st, cublasSetStream_v2, (d->blas, d->stream));
        if (s != XO_OK) {
            (void)xo__cublas.cublasDestroy_v2(d->blas);
            d->blas = NULL;
        }
    }
    if (s != XO_OK) {
        st->host->log(XO_LOG_WARN, "cuda: device %d: cuBLAS unusable; BLAS ops run elsewhere", d->ordinal);
        return 0;
    }
    return 1;
}

int xo__cuda_ready_locked(xo__cuda_state *st, xo__cuda_device *d, int blas)
{
    int *state = blas ? &d->blas_state : &d->kernels_state;
    if (*state == 0) *state = (blas ? create_blas(st, d) : load_kernels(st, d)) ? 1 : -1;
    return *state > 0;
}

int xo__cuda_ready(xo__cuda_state *st, xo__cuda_device *d, int blas)
{
    if (xo__cuda_enter(st, d) != XO_OK) return 0;
    int r = xo__cuda_ready_locked(st, d, blas);
    xo__cuda_leave(d);
    return r;
}

/* Like XO_CU, and also logs the failure: a device that cannot be opened is skipped. */
static xo_status open_check(xo__cuda_state *st, int ordinal, CUresult r, const char *call)
{
    if (r == CUDA_SUCCESS) return XO_OK;
    st->host->log(XO_LOG_WARN, "cuda: device %d skipped: %s: %s (%d)", ordinal, call, xo__cuda_result_name(r), r);
    return xo__cuda_check(st->host, r, call);
}
#define XO_CU_OPEN(fn, args) open_check(st, ordinal, xo__cu.fn args, #fn)

xo_status xo__cuda_device_open(xo__cuda_state *st, xo__cuda_device *d, int ordinal)
{
    memset(d, 0, sizeof *d);
    d->ordinal = ordinal;
    if (pthread_mutex_init(&d->lock, NULL) != 0)
        return st->host->set_error(XO_ERR_DEVICE, "cuda: pthread_mutex_init failed");
    d->lock_init = 1;
    if (pthread_cond_init(&d->capture_done, NULL) != 0)
        return st->host->set_error(XO_ERR_DEVICE, "cuda: pthread_cond_init failed");
    d->cond_init = 1;

    XO_CUDA_TRY(XO_CU_OPEN(cuDeviceGet, (&d->dev, ordinal)));
    XO_CUDA_TRY(XO_CU_OPEN(cuDeviceGetName, (d->name, (int)sizeof d->name - 1, d->dev)));
    d->name[sizeof d->name - 1] = '\0';
    (void)xo__cu.cuDeviceGetAttribute(&d->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev);
    (void)xo__cu.cuDeviceGetAttribute(&d->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->dev);
    (void)xo__cu.cuDeviceGetAttribute(&d->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->dev);
    (void)xo__cu.cuDeviceGetAttribute(&d->integrated, CU_DEVICE_ATTRIBUTE_INTEGRATED, d->dev);
    (void)xo__cu.cuDeviceTotalMem_v2(&d->total_mem, d->dev);

    XO_CUDA_TRY(XO_CU_OPEN(cuDevicePrimaryCtxRetain, (&d->ctx, d->dev)));
    d->ctx_retained = 1;

    XO_CUDA_TRY(XO_CU_OPEN(cuCtxPushCurrent_v2, (d->ctx)));
    xo_status s = XO_CU_OPEN(cuStreamCreate, (&d->stream, CU_STREAM_NON_BLOCKING));
    if (s != XO_OK) d->stream = NULL;
    CUcontext popped = NULL;
    (void)xo__cu.cuCtxPopCurrent_v2(&popped);
    if (s == XO_OK)
        st->host->log(XO_LOG_INFO, "cuda: device %d: %s, sm_%d%d, %d SMs, %zu MiB", ordinal, d->name, d->cc_major,
                      d->cc_minor, d->sm_count, d->total_mem >> 20);
    return s;
}

void xo__cuda_device_close(xo__cuda_state *st, xo__cuda_device *d)
{
    if (st && xo__cuda_lost(st)) { /* the parent's objects: not the child's to release */
        memset(d, 0, sizeof *d);
        return;
    }
    if (d->ctx_retained) {
        if (xo__cu.cuCtxPushCurrent_v2(d->ctx) == CUDA_SUCCESS) {
            if (d->stream) (void)xo__cu.cuStreamSynchronize(d->stream);
            xo__cuda_timing_release(d);
            xo__cuda_staging_release(d);
            if (d->scratch) (void)xo__cu.cuMemFree_v2(d->scratch);
            if (d->blas) (void)xo__cublas.cublasDestroy_v2(d->blas);
            if (d->module) (void)xo__cu.cuModuleUnload(d->module);
            xo__cuda_gen_release(d);
            if (d->stream) (void)xo__cu.cuStreamDestroy_v2(d->stream);
            CUcontext popped = NULL;
            (void)xo__cu.cuCtxPopCurrent_v2(&popped);
        }
        (void)xo__cu.cuDevicePrimaryCtxRelease_v2(d->dev);
    }
    if (d->lock_init) pthread_mutex_destroy(&d->lock);
    if (d->cond_init) pthread_cond_destroy(&d->capture_done);
    memset(d, 0, sizeof *d);
}

/* Staging buffers of `d` (cuda_memory.c fills them): context current, stream idle. */
void xo__cuda_staging_release(xo__cuda_device *d)
{
    for (int i = 0; i < XO_CUDA_STAGING_SLOTS; i++) {
        xo__cuda_staging *s = &d->staging[i];
        if (s->pending) (void)xo__cu.cuEventSynchronize(s->done);
        if (s->done) (void)xo__cu.cuEventDestroy_v2(s->done);
        if (s->host) (void)xo__cu.cuMemFreeHost(s->host);
        memset(s, 0, sizeof *s);
    }
    d->staging_next = 0;
}

/* ---- launching our kernels ---------------------------------------------------------- */

unsigned xo__cuda_grid_for(size_t work, unsigned cap)
{
    size_t blocks = (work + XO_CUDA_BLOCK - 1) / XO_CUDA_BLOCK;
    if (blocks < 1) blocks = 1;
    return blocks > cap ? cap : (unsigned)blocks;
}

xo_status xo__cuda_launch_fn(xo__cuda_state *st, xo__cuda_device *d, CUfunction fn, const char *name, unsigned gx,
                             unsigned gy, void **params)
{
    CUresult r = xo__cu.cuLaunchKernel(fn, gx, gy, 1, XO_CUDA_BLOCK, 1, 1, 0, d->stream, params, NULL);
    if (r == CUDA_SUCCESS) return XO_OK;
    return st->host->set_error(r == CUDA_ERROR_OUT_OF_MEMORY ? XO_ERR_OUT_OF_MEMORY : XO_ERR_DEVICE,
                               "cuLaunchKernel(%s): %s (%d)", name, xo__cuda_result_name(r), r);
}

xo_status xo__cuda_launch(xo__cuda_state *st, xo__cuda_device *d, xo__cuda_kernel k, int f64, unsigned gx,
                          unsigned gy, void **params)
{
    return xo__cuda_launch_fn(st, d, d->fn[k][f64], xo__cuda_kernel_names[k][f64], gx, gy, params);
}
