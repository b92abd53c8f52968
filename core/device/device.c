/* The device layer: the loaded plugins and every call the core makes into them.
 *
 * Each vtable call has one wrapper here, and nothing above this file touches a plugin:
 * buffer.c moves data through xo__dev_alloc/upload/download/free, run.c runs ops through
 * xo__dev_run/finish/drain, dispatch.c asks xo__dev_support, calibration runs through
 * run.c. A wrapper is the one place for what every call of its kind needs: the XO_FAULTS
 * site checked before it, the transfer statistics counted after it, the `queued` flag
 * that tells xo_finish a device has work, and a message naming the device on failure.
 * (The fast paths in xo_dispatch.h call the CPU's run() inline, without fault sites:
 * a context with XO_FAULTS set never takes them.) */
#include "xo_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

const xo_plugin *(*xo__test_plugin)(void) = NULL;

/* ---- the registry's names -------------------------------------------------------- */

int xo__word_index(const char *const *words, const char *s, size_t len)
{
    for (int i = 0; words[i]; i++)
        if (strlen(words[i]) == len && strncasecmp(words[i], s, len) == 0)
            return i;
    return -1;
}

/* Names always accepted, compiled in or not: a well-formed spec naming one that is absent
 * here is XO_ERR_NO_DEVICE, not a malformed one. */
static const char *const known_plugins[] = {"cpu", "opencl", "cuda"};
#define NKNOWN ((int)(sizeof known_plugins / sizeof known_plugins[0]))

static void add_name(const char **out, int *n, const char *name)
{
    if (!name || *n >= XO_MAX_PLUGIN_NAMES || xo__word_index(out, name, strlen(name)) >= 0)
        return;
    out[(*n)++] = name;
    out[*n] = NULL;
}

int xo__plugin_names(const char *out[XO_MAX_PLUGIN_NAMES + 1])
{
    int n = 0;
    out[0] = NULL;
    for (int i = 0; i < NKNOWN; i++)
        add_name(out, &n, known_plugins[i]);
    for (int r = 0; xo__plugin_registry[r]; r++) {
        const xo_plugin *pl = xo__plugin_registry[r]();
        add_name(out, &n, pl ? pl->name : NULL);
    }
    const xo_plugin *extra = xo__test_plugin ? xo__test_plugin() : NULL;
    add_name(out, &n, extra ? extra->name : NULL);
    return n;
}

/* A device that computes on the host's own cores (a CPU OpenCL device such as PoCL). */
int xo__device_on_host_cores(const xo_device_info *info)
{
    return strcmp(info->plugin, "cpu") != 0 && info->kind == XO_DEVICE_CPU && info->host_unified;
}

/* ---- fault injection (XO_FAULTS) -------------------------------------------------- */

int xo__fault_hit(xo_context *ctx, const char *plugin, const char *site)
{
    int hit = 0;
    for (int i = 0; i < ctx->nfaults; i++) {
        xo__fault *f = &ctx->faults[i];
        if (strcmp(f->plugin, plugin) != 0 || strcmp(f->site, site) != 0)
            continue;
        long n = atomic_fetch_add(&f->count, 1) + 1;
        if (f->nth == 0 || n == f->nth)
            hit = 1;
    }
    if (hit)
        xo__log(XO_LOG_INFO, "XO_FAULTS: injected failure at %s.%s", plugin, site);
    return hit;
}

/* A plugin's own sites (kernel builds, its internal steps) reach XO_FAULTS through here. */
static int host_fault(const xo_plugin_host *self, const char *site)
{
    return xo__fault_hit((xo_context *)self->core, self->plugin_name, site);
}

/* 1 (and the error set) if XO_FAULTS fails this call of device d at `site` (the
 * transfer sites: alloc, upload, download). */
static int fault(xo_context *ctx, int d, const char *site, size_t bytes)
{
    if (!ctx->nfaults || !xo__fault_hit(ctx, ctx->dev[d].info.plugin, site))
        return 0;
    xo__error(XO_ERR_DEVICE, "%s of %zu bytes on device %d (%s) failed (XO_FAULTS)", site, bytes, d,
              ctx->dev[d].info.plugin);
    return 1;
}

/* ---- loading and unloading -------------------------------------------------------- */

/* Add plugin pl's devices to ctx. */
static void add_devices(xo_context *ctx, const xo_plugin *pl, void *state, int n)
{
    for (int d = 0; d < n; d++) {
        if (ctx->ndev >= XO_MAX_DEVICES) {
            xo__log(XO_LOG_WARN, "plugin %s: device %d ignored (at most %d devices)", pl->name, d, XO_MAX_DEVICES);
            break;
        }
        xo__device *dev = &ctx->dev[ctx->ndev];
        memset(&dev->info, 0, sizeof dev->info);
        if (pl->device_info(state, d, &dev->info) != XO_OK) {
            xo__log(XO_LOG_WARN, "plugin %s: device %d skipped: %s", pl->name, d, xo_last_error());
            xo__clear_error();
            continue;
        }
        snprintf(dev->info.plugin, sizeof dev->info.plugin, "%s", pl->name);
        dev->plugin = pl;
        dev->pstate = state;
        dev->pdev = d;
        dev->async = pl->drain_timings != NULL;
        for (int k = 0; k < XO_OP_KIND_COUNT; k++)
            for (int t = 0; t < 2; t++)
                for (int u = 0; u < XO_MAX_SUBOPS; u++)
                    atomic_init(&dev->supports[k][t][u], -1);
        atomic_init(&dev->queued, 1); /* the first xo_finish waits whatever init left */
        xo__log(XO_LOG_INFO, "device %d: %s \"%s\" (%s)", ctx->ndev, pl->name, dev->info.name, dev->info.vendor);
        ctx->ndev++;
    }
}

/* Remember why plugin `name` gives no devices (for no_device's message in context.c). */
static void note_absent(xo_context *ctx, const char *name, const char *why)
{
    if (ctx->nabsent == XO_MAX_PLUGINS)
        return;
    ctx->absent[ctx->nabsent].plugin = name;
    snprintf(ctx->absent[ctx->nabsent].why, sizeof ctx->absent[0].why, "%s", why);
    ctx->nabsent++;
}

void xo__devices_open(xo_context *ctx, unsigned plugin_mask)
{
    const char *names[XO_MAX_PLUGIN_NAMES + 1];
    xo__plugin_names(names);
    const xo_plugin *(*const *registry)(void) = ctx->registry ? ctx->registry : xo__plugin_registry;
    int nreg = 0;
    while (registry[nreg])
        nreg++;
    /* The registry's plugins (a simulation's, or the compiled-in ones), then the test hook's. */
    for (int r = 0; r <= nreg && ctx->nplugins < XO_MAX_PLUGINS; r++) {
        const xo_plugin *pl = r < nreg ? registry[r]() : xo__test_plugin && !ctx->registry ? xo__test_plugin() : NULL;
        if (!pl || !pl->name)
            continue;
        int idx = xo__word_index(names, pl->name, strlen(pl->name));
        int is_cpu = strcmp(pl->name, "cpu") == 0;
        if (!is_cpu && (idx < 0 || !(plugin_mask & (1u << idx)))) {
            xo__log(XO_LOG_INFO, "plugin %s not loaded (XO_PLUGINS)", pl->name);
            note_absent(ctx, pl->name, "not loaded (XO_PLUGINS)");
            continue;
        }
        if (is_cpu != (ctx->nplugins == 0)) {
            xo__log(XO_LOG_WARN, "plugin %s skipped: the cpu plugin must be first", pl->name);
            continue;
        }
        if (pl->api_version != XO_PLUGIN_API_VERSION) {
            xo__log(XO_LOG_WARN, "plugin %s skipped: api_version %u, the core needs %u", pl->name,
                    (unsigned)pl->api_version, (unsigned)XO_PLUGIN_API_VERSION);
            continue;
        }
        int slot = ctx->nplugins;
        xo_plugin_host *host = &ctx->plugins[slot].host;
        *host = (xo_plugin_host){
            .log = xo__log,
            .set_error = xo__error,
            .fault = host_fault,
            .cache_dir = ctx->cache_dir,
            .threads = ctx->threads,
            .core = ctx,
            .plugin_name = pl->name,
        };
        void *state = NULL;
        int n = 0;
        xo__clear_error();
        if (pl->init(host, &state, &n) != XO_OK) {
            xo__log(XO_LOG_WARN, "plugin %s contributes no devices: %s", pl->name, xo_last_error());
            note_absent(ctx, pl->name, xo_last_error());
            xo__clear_error();
            continue;
        }
        if (n == 0)
            note_absent(ctx, pl->name, xo_last_error()[0] ? xo_last_error() : "found no devices");
        xo__clear_error();
        ctx->plugins[slot].plugin = pl;
        ctx->plugins[slot].state = state;
        ctx->nplugins++;
        add_devices(ctx, pl, state, n);
    }
}

void xo__devices_close(xo_context *ctx)
{
    for (int d = 0; d < ctx->ndev; d++)
        (void)xo__dev_finish(ctx, d);
    for (int p = ctx->nplugins - 1; p >= 0; p--)
        if (ctx->plugins[p].plugin->shutdown)
            ctx->plugins[p].plugin->shutdown(ctx->plugins[p].state);
    ctx->nplugins = 0;
}

/* ---- the calls -------------------------------------------------------------------- */

int xo__dev_support(xo_context *ctx, int d, const xo_op_desc *op)
{
    xo__device *dev = &ctx->dev[d];
    unsigned sub = (unsigned)op->subop < XO_MAX_SUBOPS ? (unsigned)op->subop : 0;
    _Atomic int *cell = &dev->supports[op->kind][op->dtype][sub];
    int s = atomic_load_explicit(cell, memory_order_relaxed);
    if (s < 0) {
        s = op->dtype == XO_F64 ? dev->info.fp64 != 0 : 1;
        if (s && dev->plugin->supports) {
            int r = dev->plugin->supports(dev->pstate, dev->pdev, op);
            s = r > 0 ? XO_SUPPORT_YES : r < 0 ? XO_SUPPORT_FAILED : XO_SUPPORT_NO;
        }
        atomic_store(cell, s);
    }
    return s;
}

xo_status xo__dev_alloc(xo_context *ctx, int d, void *host, size_t bytes, xo_plugin_mem **out, int *shared)
{
    xo__device *dev = &ctx->dev[d];
    *shared = 0;
    if (fault(ctx, d, "alloc", bytes))
        return XO_ERR_DEVICE;
    /* Zero-copy where the device shares host memory: its copy is the host copy. */
    if (host && ctx->zero_copy && dev->info.host_unified && dev->plugin->mem_wrap) {
        if (dev->plugin->mem_wrap(dev->pstate, dev->pdev, host, bytes, out) == XO_OK) {
            *shared = 1;
            return XO_OK;
        }
        xo__log(XO_LOG_DEBUG, "zero-copy on device %d declined (%s); allocating a copy", d, xo_last_error());
        xo__clear_error();
        *out = NULL;
    }
    return dev->plugin->mem_alloc(dev->pstate, dev->pdev, bytes, out);
}

void xo__dev_free(xo_context *ctx, int d, xo_plugin_mem *mem)
{
    if (mem)
        ctx->dev[d].plugin->mem_free(ctx->dev[d].pstate, ctx->dev[d].pdev, mem);
}

/* A transfer was queued on d (xo_finish waits for it); `moved`: bytes crossed (a
 * zero-copy sync moves none). */
static void count_transfer(xo__device *dev, _Atomic uint64_t *counter, size_t moved)
{
    atomic_store_explicit(&dev->queued, 1, memory_order_release);
    if (moved) {
        atomic_fetch_add_explicit(counter, moved, memory_order_relaxed);
        atomic_fetch_add_explicit(&dev->stats.transfers, 1, memory_order_relaxed);
    }
}

xo_status xo__dev_upload(xo_context *ctx, int d, xo_plugin_mem *dst, size_t off, const void *src, size_t bytes,
                         int shared)
{
    xo__device *dev = &ctx->dev[d];
    if (fault(ctx, d, "upload", bytes))
        return XO_ERR_DEVICE;
    XO_RETURN_IF_ERROR(dev->plugin->upload(dev->pstate, dev->pdev, dst, off, src, bytes));
    count_transfer(dev, &dev->stats.bytes_in, shared ? 0 : bytes);
    return XO_OK;
}

xo_status xo__dev_download(xo_context *ctx, int d, xo_plugin_mem *src, size_t off, void *dst, size_t bytes,
                           int shared)
{
    xo__device *dev = &ctx->dev[d];
    if (fault(ctx, d, "download", bytes))
        return XO_ERR_DEVICE;
    XO_RETURN_IF_ERROR(dev->plugin->download(dev->pstate, dev->pdev, src, off, dst, bytes));
    count_transfer(dev, &dev->stats.bytes_out, shared ? 0 : bytes);
    return XO_OK;
}

xo_status xo__dev_run(xo_context *ctx, int d, const char *fn, const xo_op_desc *desc, uint64_t token)
{
    xo__device *dev = &ctx->dev[d];
    if (ctx->nfaults && xo__fault_hit(ctx, dev->info.plugin, "launch"))
        return xo__error(XO_ERR_DEVICE, "%s: launch on device %d (%s) failed (XO_FAULTS)", fn, d, dev->info.plugin);
    if (d == 0)
        return dev->plugin->run(dev->pstate, dev->pdev, desc, token);
    atomic_store_explicit(&dev->queued, 1, memory_order_relaxed); /* a failing run may have queued part of it */
    XO_RETURN_IF_ERROR(dev->plugin->run(dev->pstate, dev->pdev, desc, token));
    atomic_store_explicit(&dev->queued, 1, memory_order_release); /* after the enqueue: xo_finish waits for it */
    return XO_OK;
}

xo_status xo__dev_run_chain(xo_context *ctx, int d, const char *fn, const xo_chain *chain, uint64_t token)
{
    xo__device *dev = &ctx->dev[d];
    if (ctx->nfaults && xo__fault_hit(ctx, dev->info.plugin, "launch"))
        return xo__error(XO_ERR_DEVICE, "%s: launch of a chain on device %d (%s) failed (XO_FAULTS)", fn, d,
                         dev->info.plugin);
    if (d == 0)
        return dev->chain->run(dev->pstate, dev->pdev, chain, token);
    atomic_store_explicit(&dev->queued, 1, memory_order_relaxed);
    XO_RETURN_IF_ERROR(dev->chain->run(dev->pstate, dev->pdev, chain, token));
    atomic_store_explicit(&dev->queued, 1, memory_order_release);
    return XO_OK;
}

xo_status xo__dev_finish(xo_context *ctx, int d)
{
    xo__device *dev = &ctx->dev[d];
    return dev->plugin->finish ? dev->plugin->finish(dev->pstate, dev->pdev) : XO_OK;
}

int xo__dev_drain(xo_context *ctx, int d, xo_op_timing *out, int max)
{
    xo__device *dev = &ctx->dev[d];
    return dev->plugin->drain_timings ? dev->plugin->drain_timings(dev->pstate, dev->pdev, out, max) : 0;
}

/* ---- the "xo_graph" extra (plans, core/plan/plan_graph.c) ------------------------------ */

const xo_graph_runner *xo__dev_graph(xo_context *ctx, int d)
{
    const xo_plugin *pl = ctx->dev[d].plugin;
    return d != 0 && pl->get_proc_address ? pl->get_proc_address("xo_graph") : NULL;
}

xo_status xo__dev_graph_begin(xo_context *ctx, int d)
{
    xo__device *dev = &ctx->dev[d];
    return xo__dev_graph(ctx, d)->begin(dev->pstate, dev->pdev);
}

xo_status xo__dev_graph_end(xo_context *ctx, int d, void **graph)
{
    xo__device *dev = &ctx->dev[d];
    return xo__dev_graph(ctx, d)->end(dev->pstate, dev->pdev, graph);
}

xo_status xo__dev_graph_launch(xo_context *ctx, int d, void *graph, const char *fn)
{
    xo__device *dev = &ctx->dev[d];
    if (ctx->nfaults && xo__fault_hit(ctx, dev->info.plugin, "launch"))
        return xo__error(XO_ERR_DEVICE, "%s: graph launch on device %d (%s) failed (XO_FAULTS)", fn, d,
                         dev->info.plugin);
    atomic_store_explicit(&dev->queued, 1, memory_order_relaxed);
    XO_RETURN_IF_ERROR(xo__dev_graph(ctx, d)->launch(dev->pstate, dev->pdev, graph));
    atomic_store_explicit(&dev->queued, 1, memory_order_release); /* after the enqueue: xo_finish waits for it */
    return XO_OK;
}

void xo__dev_graph_destroy(xo_context *ctx, int d, void *graph)
{
    xo__device *dev = &ctx->dev[d];
    if (graph)
        xo__dev_graph(ctx, d)->destroy(dev->pstate, dev->pdev, graph);
}
