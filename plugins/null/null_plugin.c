/* The null plugin: a skeleton to copy when writing a device plugin (the spirit of IREE's
 * null driver). Every entry of crossover/plugin.h is here, each with what it must do
 * written above it; none does anything. init finds no device, so a context that loads
 * this plugin gets none from it and no error; every other entry, should anything call
 * it, fails with XO_ERR_UNSUPPORTED and a message naming the entry.
 *
 * To start a plugin: copy this folder to plugins/<name>, replace "null" by <name>
 * everywhere (file names, symbols, the CMake target), fill in the entries, and add
 * `xo_add_plugin(<name> crossover_<name>)` to its CMakeLists.txt. docs/design.md
 * ("Writing a plugin") says what the core does for you: residency, placement, faults,
 * statistics, fallbacks. */
#include <crossover/plugin.h>

#include <stddef.h>

typedef struct null_state {
    const xo_plugin_host *host; /* log, set_error, fault, cache_dir, threads */
} null_state;

static null_state g_state;

#define NULL_UNSUPPORTED(st, entry)                                                                    \
    ((st) && ((null_state *)(st))->host                                                               \
         ? ((null_state *)(st))->host->set_error(XO_ERR_UNSUPPORTED,                                  \
                                                 "null plugin: " entry ": this skeleton has no device")  \
         : XO_ERR_UNSUPPORTED)

/* Discover devices: here, none. A plugin that finds no runtime or hardware returns XO_OK
 * with *out_ndevices = 0. */
static xo_status null_init(const xo_plugin_host *host, void **out_state, int *out_ndevices)
{
    g_state.host = host;
    *out_state = &g_state;
    *out_ndevices = 0;
    return XO_OK;
}

/* Wait for queued work and free everything init made. */
static void null_shutdown(void *state) { (void)state; }

/* Name, vendor, driver, kind, host_unified, fp64 of device `dev`. */
static xo_status null_device_info(void *state, int dev, xo_device_info *out)
{
    (void)dev;
    (void)out;
    return NULL_UNSUPPORTED(state, "device_info");
}

/* 1: runs ops of this kind, dtype and subop; 0: cannot by design; -1: should, but its
 * kernels failed to build here. Answer from those three fields only. */
static int null_supports(void *state, int dev, const xo_op_desc *op)
{
    (void)state;
    (void)dev;
    (void)op;
    return 0;
}

/* Device memory: allocate, free, upload (asynchronous, but must not read src after
 * returning), download (blocking, after every earlier op that writes src). */
static xo_status null_mem_alloc(void *state, int dev, size_t bytes, xo_plugin_mem **out)
{
    (void)dev;
    (void)bytes;
    *out = NULL;
    return NULL_UNSUPPORTED(state, "mem_alloc");
}
static void null_mem_free(void *state, int dev, xo_plugin_mem *mem)
{
    (void)state;
    (void)dev;
    (void)mem;
}
static xo_status null_upload(void *state, int dev, xo_plugin_mem *dst, size_t dst_off, const void *src,
                             size_t bytes)
{
    (void)dev, (void)dst, (void)dst_off, (void)src, (void)bytes;
    return NULL_UNSUPPORTED(state, "upload");
}
static xo_status null_download(void *state, int dev, xo_plugin_mem *src, size_t src_off, void *dst, size_t bytes)
{
    (void)dev, (void)src, (void)src_off, (void)dst, (void)bytes;
    return NULL_UNSUPPORTED(state, "download");
}

/* Run or enqueue one op whose operands are current on `dev` (one entry per op kind in
 * a table indexed by op->kind is how the built-in plugins do it: plugins/cpu/cpu_plugin.c). */
static xo_status null_run(void *state, int dev, const xo_op_desc *op, uint64_t token)
{
    (void)dev, (void)op, (void)token;
    return NULL_UNSUPPORTED(state, "run");
}

/* Wait until everything queued on `dev` has completed. */
static xo_status null_finish(void *state, int dev)
{
    (void)dev;
    return NULL_UNSUPPORTED(state, "finish");
}

/* Optional: zero-copy allocations over host memory (host-unified devices). */
static xo_status null_mem_wrap(void *state, int dev, void *host, size_t bytes, xo_plugin_mem **out)
{
    (void)dev, (void)host, (void)bytes;
    *out = NULL;
    return NULL_UNSUPPORTED(state, "mem_wrap");
}

/* Optional: device-measured times of completed ops (asynchronous plugins). */
static int null_drain_timings(void *state, int dev, xo_op_timing *out, int max)
{
    (void)state, (void)dev, (void)out, (void)max;
    return 0;
}

/* Optional: extras that are not part of the interface, by name (NULL: none). */
static const void *null_get_proc_address(const char *name)
{
    (void)name;
    return NULL;
}

static const xo_plugin null_plugin = {
    .api_version = XO_PLUGIN_API_VERSION,
    .name = "null",
    .init = null_init,
    .shutdown = null_shutdown,
    .device_info = null_device_info,
    .supports = null_supports,
    .mem_alloc = null_mem_alloc,
    .mem_free = null_mem_free,
    .upload = null_upload,
    .download = null_download,
    .run = null_run,
    .finish = null_finish,
    .mem_wrap = null_mem_wrap,
    .drain_timings = null_drain_timings,
    .get_proc_address = null_get_proc_address,
};

const xo_plugin *xo_plugin_null(void);
const xo_plugin *xo_plugin_null(void) { return &null_plugin; }
