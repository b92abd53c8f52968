/* Context: creation (devices from device.c, profiles from calibrate.c), device specs, stats. */
#include "xo_env.h"
#include "xo_ops.h"
#include "xo_plan.h"
#include "xo_sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Atomic uint64_t next_context_id = 1;

static void context_free(xo_context *ctx)
{
    xo__background_stop(ctx); /* before the devices it may still publish into go away */
    xo__episode_free(ctx);
    xo__devices_close(ctx);
    xo__sim_destroy(ctx); /* after its devices: they compute through its CPU plugin */
    xo__correction_destroy(ctx->correction);
    xo__summary_free(ctx);
    xo__record_free(ctx);
    free(ctx->stat_slots);
    pthread_mutex_destroy(&ctx->profile_lock);
    free(ctx);
}

/* `private_`: a context of the library's own (background calibration): it measures
 * nothing at creation, forces nothing, injects no faults and prints no summary. */
static xo_status create(xo_context **out, int private_)
{
    if (!out)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_context_create: out is NULL");
    *out = NULL;
    xo__env env;
    XO_RETURN_IF_ERROR(xo__env_read(&env));
    if (private_) {
        env.calibrate = XO_CALIBRATE_OFF;
        env.summary = 0;
        env.nfaults = 0;
        snprintf(env.device, sizeof env.device, "auto");
    } else {
        atomic_store(&xo__log_level, env.log_level);
    }

    xo_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return xo__error(XO_ERR_OUT_OF_MEMORY, "xo_context_create: out of host memory");
    pthread_mutex_init(&ctx->profile_lock, NULL);
    ctx->id = atomic_fetch_add(&next_context_id, 1);
    ctx->threads = env.threads;
    ctx->calibrate = env.calibrate;
    ctx->zero_copy = env.zero_copy;
    ctx->plan_eager = env.plan_eager;
    ctx->nfaults = env.nfaults;
    memcpy(ctx->faults, env.faults, sizeof env.faults);
    memcpy(ctx->cache_dir, env.cache_dir, sizeof ctx->cache_dir);
    atomic_init(&ctx->forced, -1);
    ctx->tick0 = xo__ticks();
    ctx->us0 = xo__now_us();
    ctx->make_private = xo__context_create_private;
    ctx->destroy_private = xo_context_destroy;
    ctx->capture_op = xo__capture_op;
    ctx->capture_io = xo__capture_io;
    ctx->plan_buffer_gone = xo__plan_buffer_gone;

    xo_status st = XO_OK;
    /* A private context of a simulation's would measure the real machine: none is made
     * (calibration under simulation takes the file's profiles). */
    if (env.simulate[0] && !private_)
        st = xo__sim_create(ctx, env.simulate);
    if (st == XO_OK)
        xo__devices_open(ctx, env.plugin_mask);
    if (st == XO_OK && (ctx->ndev == 0 || strcmp(ctx->dev[0].info.plugin, "cpu") != 0))
        st = xo__error(XO_ERR_DEVICE, "xo_context_create: the cpu plugin found no host CPU device");
    int forced = -1;
    if (st == XO_OK)
        st = xo__spec_resolve(ctx, "xo_context_create", "XO_DEVICE", env.device, 1, &forced);
    if (st == XO_OK)
        st = xo__correction_create(ctx->ndev, &ctx->correction);
    if (st == XO_OK)
        st = xo__record_init(ctx);
    if (st == XO_OK && env.summary)
        st = xo__summary_create(ctx);
    if (st == XO_OK && !(ctx->stat_slots = calloc(XO_STAT_SLOTS, sizeof *ctx->stat_slots)))
        st = xo__error(XO_ERR_OUT_OF_MEMORY, "xo_context_create: out of host memory");
    if (st == XO_OK && ctx->sim)
        xo__sim_profiles(ctx);
    else if (st == XO_OK)
        st = xo__profiles_init(ctx, ctx->calibrate == XO_CALIBRATE_FORCE, NULL, NULL);
    if (st == XO_OK && !private_)
        xo__episode_init(ctx);
    if (st == XO_OK && ctx->calibrate == XO_CALIBRATE_AUTO && !ctx->sim) /* provisional profiles: measured meanwhile */
        xo__background_start(ctx);
    if (st != XO_OK) {
        char saved[XO_ERROR_MAX];
        snprintf(saved, sizeof saved, "%s", xo_last_error());
        context_free(ctx);
        xo__error(st, "%s", saved);
        return st;
    }
    atomic_store(&ctx->forced, forced);
    /* Fault injection goes through the checks of the full path. */
    ctx->fast_dispatch = ctx->nfaults == 0 && !ctx->sim; /* a simulation's CPU ops keep its clock */
    /* The host device's CBLAS-style entries for the fast paths, if its plugin has them. */
    const xo_plugin *host_pl = ctx->dev[0].plugin;
    if (ctx->dev[0].info.kind == XO_DEVICE_CPU && host_pl->get_proc_address) {
        ctx->host_blas = host_pl->get_proc_address("xo_host_blas");
        ctx->resolver = host_pl->get_proc_address("xo_resolve");
    }
    /* Each device's chain runner (plans run fused element-wise chains through it). */
    for (int d = 0; d < ctx->ndev; d++)
        if (ctx->dev[d].plugin->get_proc_address)
            ctx->dev[d].chain = ctx->dev[d].plugin->get_proc_address("xo_chain");
    xo__clear_error();
    *out = ctx;
    return XO_OK;
}

xo_status xo_context_create(xo_context **out) { return create(out, 0); }

xo_status xo__context_create_private(xo_context **out) { return create(out, 1); }

void xo_context_destroy(xo_context *ctx)
{
    if (!ctx)
        return;
    if (ctx->summary) {
        xo_finish(ctx);
        xo__dispatch_flush_thread(ctx);
        char overlap[256] = "";
        xo__background_overlap(ctx, overlap, sizeof overlap);
        xo__summary_print(ctx, overlap);
    }
    xo__profiles_crosscheck(ctx); /* the run's timings against the cached profiles */
    context_free(ctx);
}

double xo_clock_us(xo_context *ctx) { return ctx ? xo__clock_us(ctx) : xo__now_us(); }

int xo_device_count(const xo_context *ctx) { return ctx ? ctx->ndev : 0; }

xo_status xo_device_get_info(const xo_context *ctx, int device, xo_device_info *out)
{
    if (!ctx)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_device_get_info: ctx is NULL");
    if (!out)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_device_get_info: out is NULL");
    if (device < 0 || device >= ctx->ndev)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_device_get_info: device = %d is not in [0, %d)", device,
                         ctx->ndev);
    pthread_mutex_lock((pthread_mutex_t *)&ctx->profile_lock); /* background calibration publishes */
    *out = ctx->dev[device].info;
    pthread_mutex_unlock((pthread_mutex_t *)&ctx->profile_lock);
    return XO_OK;
}

/* ---- device specs ---------------------------------------------------------- */

/* "0 = cpu:0 \"name\", 1 = opencl:0 \"...\"" */
static void device_list(const xo_context *ctx, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int d = 0; d < ctx->ndev && used < cap; d++) {
        int ordinal = 0;
        for (int e = 0; e < d; e++)
            ordinal += strcmp(ctx->dev[e].info.plugin, ctx->dev[d].info.plugin) == 0;
        int w = snprintf(out + used, cap - used, "%s%d = %s:%d \"%s\"", d ? ", " : "", d, ctx->dev[d].info.plugin,
                         ordinal, ctx->dev[d].info.name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* A spec naming a plugin that gives no devices says why ("cuda: no driver: ..."), which
 * otherwise shows only in XO_LOG=info. */
static xo_status no_device(const xo_context *ctx, const char *fn, const char *what, const char *spec)
{
    char list[1024];
    device_list(ctx, list, sizeof list);
    const char *why = NULL, *plugin = "";
    size_t len = strcspn(spec, ":");
    for (int p = 0; p < ctx->nabsent && !why; p++)
        if (strlen(ctx->absent[p].plugin) == len && strncmp(spec, ctx->absent[p].plugin, len) == 0) {
            why = ctx->absent[p].why;
            plugin = ctx->absent[p].plugin;
        }
    if (why)
        return xo__error(XO_ERR_NO_DEVICE,
                         "%s: %s \"%s\" names no device present here: plugin %s gives none (%s); devices: %s", fn,
                         what, spec, plugin, why, list);
    return xo__error(XO_ERR_NO_DEVICE, "%s: %s \"%s\" names no device present here; devices: %s", fn, what, spec,
                     list);
}

static int text_ok(const char *t)
{
    size_t n = strlen(t);
    if (n == 0 || t[0] == ' ' || t[n - 1] == ' ')
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c < 0x20 || c == 0x7f || c == ':' || c == ',')
            return 0;
    }
    return 1;
}

xo_status xo__spec_resolve(const xo_context *ctx, const char *fn, const char *what, const char *spec,
                           int allow_auto, int *out_dev)
{
    if (!spec)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
    if (strnlen(spec, XO_SPEC_MAX + 1) > XO_SPEC_MAX)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s \"%.40s...\" is longer than %d characters, which no "
                         "device spec is", fn, what, spec, XO_SPEC_MAX);
    if (strcasecmp(spec, "auto") == 0) {
        if (!allow_auto)
            return xo__error(XO_ERR_INVALID_ARGUMENT,
                             "%s: %s \"auto\" is a policy, not a device; name a device (cpu, opencl:N, ...)", fn,
                             what);
        *out_dev = -1;
        return XO_OK;
    }
    const char *colon = strchr(spec, ':');
    size_t plen = colon ? (size_t)(colon - spec) : strlen(spec);
    const char *names[XO_MAX_PLUGIN_NAMES + 1];
    xo__plugin_names(names);
    int pi = xo__word_index(names, spec, plen);
    const char *rest = colon ? colon + 1 : NULL;
    if (pi < 0 || (rest && !text_ok(rest)))
        return xo__error(XO_ERR_INVALID_ARGUMENT,
                         "%s: %s \"%s\" is malformed; allowed: auto, cpu, cpu:0, opencl, opencl:N, opencl:TEXT, "
                         "cuda, cuda:N, cuda:TEXT",
                         fn, what, spec);
    int all_digits = rest != NULL;
    for (const char *c = rest; c && *c; c++)
        all_digits &= *c >= '0' && *c <= '9';
    /* The CPU is named by index only (cpu, cpu:0); TEXT forms are for opencl and cuda. */
    if (rest && !all_digits && strcmp(names[pi], "cpu") == 0)
        return xo__error(XO_ERR_INVALID_ARGUMENT,
                         "%s: %s \"%s\" is malformed; the CPU is named cpu or cpu:0", fn, what, spec);
    long want = all_digits ? (strlen(rest) > 6 ? 999999 : strtol(rest, NULL, 10)) : 0;
    int ordinal = 0;
    for (int d = 0; d < ctx->ndev; d++) {
        const xo_device_info *in = &ctx->dev[d].info;
        if (strcasecmp(in->plugin, names[pi]) != 0)
            continue;
        int match = !rest || (all_digits ? ordinal == want
                                         : (strcasestr(in->name, rest) || strcasestr(in->vendor, rest)));
        if (match) {
            *out_dev = d;
            return XO_OK;
        }
        ordinal++;
    }
    return no_device(ctx, fn, what, spec);
}

xo_status xo_device_find(const xo_context *ctx, const char *spec, int *out_device)
{
    if (!ctx)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_device_find: ctx is NULL");
    if (!out_device)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_device_find: out_device is NULL");
    return xo__spec_resolve(ctx, "xo_device_find", "spec", spec, 0, out_device);
}

xo_status xo_set_device(xo_context *ctx, const char *spec)
{
    if (!ctx)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_set_device: ctx is NULL");
    int dev;
    XO_RETURN_IF_ERROR(xo__spec_resolve(ctx, "xo_set_device", "spec", spec, 1, &dev));
    atomic_store(&ctx->forced, dev);
    return XO_OK;
}


void xo__force_device(xo_context *ctx, int dev) { atomic_store(&ctx->forced, dev); }


