/* cl_device.c: OpenCL devices, held once per process.
 *
 * Discovery runs once for every plugin state alive together: each device of every
 * platform the ICD loader reports gets one cl_context, shared by every crossover context
 * that uses the device (each has its own in-order, profiling-enabled queue, its own
 * programs, timings and staging). The table is released with its last user, the way
 * CUDA's primary context is. Sharing the cl_context keeps CLBlast's program cache (one
 * entry per cl_context, holding a reference to it) at one entry per device however many
 * contexts come and go, and makes a context cheaper to create. Setup and teardown take
 * one process-wide lock: PoCL crashed when threads started it at once while another
 * released its last context.
 *
 * fork(): OpenCL runtimes do not survive it (PoCL's threads stay in the parent; an op in
 * the child hangs). In a child, every plugin state inherited from the parent is lost
 * (xo__cl_lost: each call fails with a message, nothing is released), and when the
 * parent had started the runtime, new contexts get no OpenCL devices. No platform, no
 * device, or a loader without any ICD is "no devices", not an error. */
#include "cl_internal.h"
#include "cl_testing.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XO_CL_PLATFORM_NOT_FOUND_KHR (-1001)

/* The process-wide table: the devices' identities and cl_contexts (per-state fields
 * zero). g_lock guards everything here. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_users;   /* plugin states holding the table */
static int g_ndev;
static xo__cl_device g_dev[XO_CL_MAX_DEVICES];
static _Atomic int g_warm[XO_CL_MAX_DEVICES][XO_CLB_COUNT * 2]; /* CLBlast routines compiled there */
static int g_started; /* this process has started an OpenCL runtime */
static int g_forked;  /* ... and this is a child forked after that */
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;
_Atomic unsigned xo__cl_fork_gen;

/* ---- fork ------------------------------------------------------------------------ */

/* In the child only the forking thread exists: a lock another thread of the parent held
 * would stay held, so the process-wide locks start afresh. (They are not taken around
 * fork(): PoCL forks to run its linker from inside calls made under them.) */
static void after_fork_child(void)
{
    pthread_mutex_init(&g_lock, NULL);
    pthread_mutex_init(&xo__clblast_lock, NULL);
    pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    xo__cl_serial_lock = fresh;
    if (g_started)
        g_forked = 1;
    /* The parent's cl_contexts are not the child's to release. */
    g_users = 0;
    g_ndev = 0;
    atomic_fetch_add_explicit(&xo__cl_fork_gen, 1, memory_order_relaxed);
}

static void register_atfork(void) { pthread_atfork(NULL, NULL, after_fork_child); }

xo_status xo__cl_lost_fail(const xo__cl_state *st)
{
    return st->host->set_error(XO_ERR_DEVICE,
                               "opencl: device lost: the process forked and OpenCL runtimes do not survive fork(); "
                               "data only current on this device is gone, the other devices go on");
}

/* ---- discovery -------------------------------------------------------------------- */

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

/* Fill d's identity for (platform, id) and create its cl_context; 0 on success. */
static int device_probe(const xo_plugin_host *h, xo__cl_device *d, cl_platform_id platform, cl_device_id id)
{
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
    /* Which runtimes take calls from several threads at once. The OpenCL API is thread-safe
     * on paper; PoCL is, under the whole suite with ThreadSanitizer. NVIDIA's (driver
     * 580.159, H200) crashed in a worker thread of its own when four threads called it at
     * once (test_threads, test_threads_shared), and passed with every call serialized. Any
     * runtime not known to be safe gets one call at a time. */
    char pname[128] = "";
    if (clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL) != CL_SUCCESS) pname[0] = '\0';
    d->one_call_at_a_time = strstr(pname, "Portable Computing Language") == NULL;
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
    h->log(XO_LOG_DEBUG, "opencl: device %d: %s (%s, driver %s)%s%s", g_ndev, d->info.name, d->info.vendor,
           d->info.driver, d->info.fp64 ? ", fp64" : "", d->info.host_unified ? ", host-unified" : "");
    return 0;
}

static void discover_platform(const xo_plugin_host *h, cl_platform_id platform)
{
    cl_uint n = 0;
    cl_int err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL, &n);
    if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && n == 0)) return;
    if (err != CL_SUCCESS) {
        h->log(XO_LOG_WARN, "opencl: clGetDeviceIDs: %s; platform skipped", xo__cl_error_name(err));
        return;
    }
    cl_device_id *ids = calloc(n, sizeof *ids);
    if (!ids) return;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, ids, NULL) == CL_SUCCESS) {
        for (cl_uint i = 0; i < n; i++) {
            if (g_ndev == XO_CL_MAX_DEVICES) {
                h->log(XO_LOG_WARN, "opencl: more than %d devices; the rest are ignored", XO_CL_MAX_DEVICES);
                break;
            }
            if (device_probe(h, &g_dev[g_ndev], platform, ids[i]) == 0) g_ndev++;
        }
    }
    free(ids);
}

/* Fill the table; g_lock held, the table empty. */
static xo_status discover(const xo_plugin_host *h)
{
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &np);
    if (err == XO_CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && np == 0)) {
        h->log(XO_LOG_INFO, "opencl: no OpenCL platform");
        return XO_OK;
    }
    if (err != CL_SUCCESS) { /* a broken loader or ICD means no devices, not a failed context */
        h->log(XO_LOG_WARN, "opencl: clGetPlatformIDs: %s; no OpenCL devices", xo__cl_error_name(err));
        return XO_OK;
    }
    cl_platform_id *plats = calloc(np, sizeof *plats);
    if (!plats) return h->set_error(XO_ERR_OUT_OF_MEMORY, "opencl: init: out of host memory");
    g_started = 1;
    err = clGetPlatformIDs(np, plats, NULL);
    if (err == CL_SUCCESS)
        for (cl_uint p = 0; p < np; p++) discover_platform(h, plats[p]);
    else
        h->log(XO_LOG_WARN, "opencl: clGetPlatformIDs: %s; no OpenCL devices", xo__cl_error_name(err));
    free(plats);
    return XO_OK;
}

/* Recursive: an entry never re-enters another today, but a hang would be the price. */
pthread_mutex_t xo__cl_serial_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

int xo__cl_one_call_at_a_time(int i)
{
    pthread_mutex_lock(&g_lock);
    int r = i >= 0 && i < g_ndev && g_dev[i].one_call_at_a_time;
    pthread_mutex_unlock(&g_lock);
    return r;
}

/* ---- per-state devices ------------------------------------------------------------ */

/* d: the table's device i plus a queue of its own; 0 on success. g_lock held. */
static int device_attach(xo__cl_state *st, xo__cl_device *d, int i)
{
    memcpy(d, &g_dev[i], sizeof *d);
    d->warm = g_warm[i];
    cl_int err = CL_SUCCESS;
    d->queue = clCreateCommandQueue(d->ctx, d->id, CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS || !d->queue) {
        st->host->log(XO_LOG_WARN, "opencl: device '%s' skipped: clCreateCommandQueue: %s", d->info.name,
                      xo__cl_error_name(err));
        return -1;
    }
    pthread_mutex_init(&d->lock, NULL);
    pthread_mutex_init(&d->build_lock, NULL);
    return 0;
}

static void device_detach(xo__cl_device *d)
{
    pthread_mutex_lock(&d->lock);
    xo__cl_events_release_locked(d);
    xo__cl_kernels_release(d);
    xo__cl_chains_release(d);
    pthread_mutex_unlock(&d->lock);
    pthread_mutex_destroy(&d->lock);
    pthread_mutex_destroy(&d->build_lock);
    clReleaseCommandQueue(d->queue);
    d->queue = NULL;
    d->ctx = NULL; /* the table's */
}

/* The last user is gone: CLBlast's cache holds references to the cl_contexts, so it is
 * cleared before they are released. g_lock held. */
static void table_release(void)
{
    pthread_mutex_lock(&xo__clblast_lock);
    CLBlastClearCache();
    pthread_mutex_unlock(&xo__clblast_lock);
    for (int i = 0; i < g_ndev; i++) {
        clReleaseContext(g_dev[i].ctx);
        g_dev[i].ctx = NULL;
        for (int r = 0; r < XO_CLB_COUNT * 2; r++) atomic_store(&g_warm[i][r], 0); /* the programs went */
    }
    g_ndev = 0;
}

xo_status xo__cl_process_open(xo__cl_state *st)
{
    pthread_once(&g_atfork_once, register_atfork);
    const xo_plugin_host *h = st->host;
    pthread_mutex_lock(&g_lock);
    if (g_forked) {
        pthread_mutex_unlock(&g_lock);
        h->log(XO_LOG_INFO, "opencl: no OpenCL devices in a process forked after OpenCL started there (OpenCL "
                            "runtimes do not survive fork())");
        return XO_OK;
    }
    xo_status s = g_users == 0 ? discover(h) : XO_OK;
    for (int i = 0; s == XO_OK && i < g_ndev; i++)
        if (device_attach(st, &st->dev[st->ndev], i) == 0) st->ndev++;
    if (st->ndev > 0) {
        g_users++;
        st->fork_gen = atomic_load_explicit(&xo__cl_fork_gen, memory_order_relaxed);
    } else if (g_users == 0) {
        table_release();
    }
    pthread_mutex_unlock(&g_lock);
    return s;
}

void xo__cl_process_close(xo__cl_state *st)
{
    if (xo__cl_lost(st)) /* the parent's objects: nothing here may be touched */
        return;
    for (int i = 0; i < st->ndev; i++) clFinish(st->dev[i].queue); /* outside the lock: may take long */
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < st->ndev; i++) device_detach(&st->dev[i]);
    if (st->ndev > 0 && --g_users == 0) table_release();
    pthread_mutex_unlock(&g_lock);
}
