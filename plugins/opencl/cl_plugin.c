/* cl_plugin.c: the OpenCL plugin's vtable, device discovery and per-device lifetime.
 *
 * Every device of every platform the ICD loader reports becomes a crossover device with
 * its own context and in-order, profiling-enabled queue. No platform, no device, or a
 * loader without any ICD is "no devices", not an error. */
#include "cl_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XO_CL_PLATFORM_NOT_FOUND_KHR (-1001)

/* Copy a device string, trimming the spaces some drivers pad names with. */
static void copy_trimmed(char *dst, size_t cap, const char *src)
{
    while (*src && isspace((unsigned char)*src)) src++;
    size_t n = strlen(src);
    while (n > 0 && isspace((unsigned char)src[n - 1])) n--;
    if (n >= cap) n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static void device_string(cl_device_id id, cl_device_info what, char *dst, size_t cap)
{
    char buf[512] = "";
    if (clGetDeviceInfo(id, what, sizeof buf - 1, buf, NULL) != CL_SUCCESS) buf[0] = '\0';
    buf[sizeof buf - 1] = '\0';
    copy_trimmed(dst, cap, buf);
}

static int device_has_fp64(cl_device_id id)
{
    cl_device_fp_config cfg = 0;
    if (clGetDeviceInfo(id, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof cfg, &cfg, NULL) == CL_SUCCESS && cfg != 0)
        return 1;
    size_t len = 0;
    if (clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, 0, NULL, &len) != CL_SUCCESS || len == 0) return 0;
    char *ext = malloc(len + 1);
    if (!ext) return 0;
    int yes = 0;
    if (clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, len, ext, NULL) == CL_SUCCESS) {
        ext[len] = '\0';
        yes = strstr(ext, "cl_khr_fp64") != NULL;
    }
    free(ext);
    return yes;
}

/* Fill d for (platform, id) and create its context and queue; 0 on success. */
static int device_open(xo__cl_state *st, xo__cl_device *d, cl_platform_id platform, cl_device_id id)
{
    const xo_plugin_host *h = st->host;
    cl_device_type type = 0;
    cl_bool unified = CL_FALSE, available = CL_TRUE, compiler = CL_TRUE;
    memset(d, 0, sizeof *d);
    d->platform = platform;
    d->id = id;
    clGetDeviceInfo(id, CL_DEVICE_AVAILABLE, sizeof available, &available, NULL);
    clGetDeviceInfo(id, CL_DEVICE_COMPILER_AVAILABLE, sizeof compiler, &compiler, NULL);
    device_string(id, CL_DEVICE_NAME, d->info.name, sizeof d->info.name);
    if (!available) {
        h->log(XO_LOG_INFO, "opencl: device '%s' is not available; skipped", d->info.name);
        return -1;
    }
    device_string(id, CL_DEVICE_VENDOR, d->info.vendor, sizeof d->info.vendor);
    device_string(id, CL_DRIVER_VERSION, d->info.driver, sizeof d->info.driver);
    snprintf(d->info.plugin, sizeof d->info.plugin, "opencl");
    if (clGetPlatformInfo(platform, CL_PLATFORM_VERSION, sizeof d->platform_version - 1, d->platform_version,
                          NULL) != CL_SUCCESS)
        d->platform_version[0] = '\0';
    clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    clGetDeviceInfo(id, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL);
    d->info.kind = (type & CL_DEVICE_TYPE_GPU)   ? XO_DEVICE_GPU
                   : (type & CL_DEVICE_TYPE_CPU) ? XO_DEVICE_CPU
                                                 : XO_DEVICE_ACCELERATOR;
    d->info.host_unified = unified || (type & CL_DEVICE_TYPE_CPU) ? 1 : 0;
    d->info.fp64 = device_has_fp64(id);
    if (clGetDeviceInfo(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof d->max_alloc, &d->max_alloc, NULL) != CL_SUCCESS)
        d->max_alloc = 0;
    if (clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof d->global_mem, &d->global_mem, NULL) != CL_SUCCESS)
        d->global_mem = 0;
    cl_uint align_bits = 0;
    if (clGetDeviceInfo(id, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL) != CL_SUCCESS)
        align_bits = 0;
    d->base_align = align_bits >= 8 ? align_bits / 8 : 4096; /* unknown: ask for a page */
    if (clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof d->max_wg, &d->max_wg, NULL) != CL_SUCCESS ||
        d->max_wg == 0)
        d->max_wg = 1;
    if (!compiler) {
        /* Our kernels will fail to build and CLBlast compiles its own: nothing runs here. */
        h->log(XO_LOG_INFO, "opencl: device '%s' has no compiler; skipped", d->info.name);
        return -1;
    }

    cl_int err = CL_SUCCESS;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
    d->ctx = clCreateContext(props, 1, &id, NULL, NULL, &err);
    if (err != CL_SUCCESS || !d->ctx) {
        h->log(XO_LOG_WARN, "opencl: device '%s' skipped: clCreateContext: %s", d->info.name, xo__cl_error_name(err));
        d->ctx = NULL;
        return -1;
    }
    d->queue = clCreateCommandQueue(d->ctx, id, CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS || !d->queue) {
        h->log(XO_LOG_WARN, "opencl: device '%s' skipped: clCreateCommandQueue: %s", d->info.name,
               xo__cl_error_name(err));
        clReleaseContext(d->ctx);
        d->ctx = NULL;
        d->queue = NULL;
        return -1;
    }
    pthread_mutex_init(&d->lock, NULL);
    pthread_mutex_init(&d->build_lock, NULL);
    h->log(XO_LOG_DEBUG, "opencl: device %d: %s (%s, driver %s)%s%s", st->ndev, d->info.name, d->info.vendor,
           d->info.driver, d->info.fp64 ? ", fp64" : "", d->info.host_unified ? ", host-unified" : "");
    return 0;
}

static void device_close(xo__cl_device *d)
{
    clFinish(d->queue);
    pthread_mutex_lock(&d->lock);
    xo__cl_events_release_locked(d);
    xo__cl_kernels_release(d);
    pthread_mutex_unlock(&d->lock);
    pthread_mutex_destroy(&d->lock);
    pthread_mutex_destroy(&d->build_lock);
    clReleaseCommandQueue(d->queue);
    clReleaseContext(d->ctx);
    d->queue = NULL;
    d->ctx = NULL;
}

/* Live plugin states in this process. CLBlast keeps compiled programs per cl_context in
 * a process-wide cache that holds a reference to the context; when the last state goes,
 * that cache is cleared so that contexts do not outlive us. */
static pthread_mutex_t g_live_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_live;

static void vt_shutdown(void *state)
{
    xo__cl_state *st = state;
    if (!st) return;
    for (int i = 0; i < st->ndev; i++) device_close(&st->dev[i]);
    free(st);
    pthread_mutex_lock(&g_live_lock);
    if (--g_live == 0) {
        pthread_mutex_lock(&xo__clblast_lock);
        CLBlastClearCache();
        pthread_mutex_unlock(&xo__clblast_lock);
    }
    pthread_mutex_unlock(&g_live_lock);
}

static void discover_platform(xo__cl_state *st, cl_platform_id platform)
{
    cl_uint n = 0;
    cl_int err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL, &n);
    if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && n == 0)) return;
    if (err != CL_SUCCESS) {
        st->host->log(XO_LOG_WARN, "opencl: clGetDeviceIDs: %s; platform skipped", xo__cl_error_name(err));
        return;
    }
    cl_device_id *ids = calloc(n, sizeof *ids);
    if (!ids) return;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, ids, NULL) == CL_SUCCESS) {
        for (cl_uint i = 0; i < n; i++) {
            if (st->ndev == XO_CL_MAX_DEVICES) {
                st->host->log(XO_LOG_WARN, "opencl: more than %d devices; the rest are ignored", XO_CL_MAX_DEVICES);
                break;
            }
            if (device_open(st, &st->dev[st->ndev], platform, ids[i]) == 0) st->ndev++;
        }
    }
    free(ids);
}

static xo_status vt_init(const xo_plugin_host *host, void **out_state, int *out_ndevices)
{
    *out_state = NULL;
    *out_ndevices = 0;
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &np);
    if (err == XO_CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && np == 0)) {
        host->log(XO_LOG_INFO, "opencl: no OpenCL platform");
        return XO_OK;
    }
    if (err != CL_SUCCESS) { /* a broken loader or ICD means no devices, not a failed context */
        host->log(XO_LOG_WARN, "opencl: clGetPlatformIDs: %s; no OpenCL devices", xo__cl_error_name(err));
        return XO_OK;
    }
    cl_platform_id *plats = calloc(np, sizeof *plats);
    xo__cl_state *st = calloc(1, sizeof *st);
    if (!plats || !st) {
        free(plats);
        free(st);
        return host->set_error(XO_ERR_OUT_OF_MEMORY, "opencl: init: out of host memory");
    }
    st->host = host;
    err = clGetPlatformIDs(np, plats, NULL);
    if (err == CL_SUCCESS)
        for (cl_uint p = 0; p < np; p++) discover_platform(st, plats[p]);
    else
        host->log(XO_LOG_WARN, "opencl: clGetPlatformIDs: %s; no OpenCL devices", xo__cl_error_name(err));
    free(plats);
    if (st->ndev == 0) {
        free(st);
        return XO_OK;
    }
    pthread_mutex_lock(&g_live_lock);
    g_live++;
    pthread_mutex_unlock(&g_live_lock);
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
    xo__cl_device *d = &st->dev[dev];
    if (dtype != XO_F32 && dtype != XO_F64) return 0;
    if (dtype == XO_F64 && !d->info.fp64) return 0;
    return xo__cl_op_supports(st, d, op);
}

static xo_status vt_run(void *state, int dev, const xo_op_desc *op, uint64_t token)
{
    xo__cl_state *st = state;
    return xo__cl_op_run(st, &st->dev[dev], op, token);
}

static xo_status vt_finish(void *state, int dev)
{
    xo__cl_state *st = state;
    xo__cl_device *d = &st->dev[dev];
    cl_int err = clFinish(d->queue);
    pthread_mutex_lock(&d->lock);
    xo__cl_staging_harvest_locked(d, 0);
    pthread_mutex_unlock(&d->lock);
    if (err != CL_SUCCESS) return xo__cl_fail(st->host, "clFinish", err);
    return XO_OK;
}

static int vt_drain_timings(void *state, int dev, xo_op_timing *out, int max)
{
    xo__cl_state *st = state;
    if (!st || dev < 0 || dev >= st->ndev || max <= 0) return 0;
    return xo__cl_timing_drain(&st->dev[dev], out, max);
}

static const xo_plugin cl_plugin = {
    .api_version = XO_PLUGIN_API_VERSION,
    .name = "opencl",
    .init = vt_init,
    .shutdown = vt_shutdown,
    .device_info = vt_device_info,
    .supports = vt_supports,
    .mem_wrap = xo__cl_mem_wrap,
    .mem_alloc = xo__cl_mem_alloc,
    .mem_free = xo__cl_mem_free,
    .upload = xo__cl_upload,
    .download = xo__cl_download,
    .run = vt_run,
    .finish = vt_finish,
    .drain_timings = vt_drain_timings,
};

const xo_plugin *xo_plugin_opencl(void);
const xo_plugin *xo_plugin_opencl(void) { return &cl_plugin; }
