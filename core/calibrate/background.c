/* Background calibration: a device without a trustworthy profile (none cached yet, or
 * runs that disagreed) is measured by a thread of its own, in a private context, while
 * the program goes on with the defaults and what its first ops measure. The result is
 * cached and published into the program's context; decisions pick it up at their next
 * re-evaluation. A private context keeps the measurement's buffers, ops and statistics
 * out of the program's. */
#include "xo_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct xo__background {
    pthread_t thread;
    _Atomic int cancel;
    _Atomic int running;  /* the device being measured + 1; 0: none */
    _Atomic uint64_t measured_us; /* time spent measuring so far (finished devices) */
    _Atomic int measured; /* devices measured */
    double start_us;
    xo_context *owner;
    int ndev;
    int dev[XO_MAX_DEVICES];
};

static int same_device(const xo_device_info *a, const xo_device_info *b)
{
    return strcmp(a->plugin, b->plugin) == 0 && strcmp(a->name, b->name) == 0 && strcmp(a->driver, b->driver) == 0;
}

static void *worker(void *arg)
{
    struct xo__background *bg = arg;
    xo_context *owner = bg->owner, *priv = NULL;
    if (owner->make_private(&priv) != XO_OK) {
        xo__log(XO_LOG_WARN, "background calibration: cannot create its context: %s", xo_last_error());
        return NULL;
    }
    priv->calib_cancel = &bg->cancel;
    for (int i = 0; i < bg->ndev && !atomic_load(&bg->cancel); i++) {
        int d = bg->dev[i];
        /* The same discovery gives the same devices in the same order; check anyway. */
        if (d >= priv->ndev || !same_device(&priv->dev[d].info, &owner->dev[d].info))
            continue;
        double t0 = xo__now_us();
        xo__profile p;
        atomic_store(&bg->running, d + 1);
        xo_status st = xo__calibrate_device(priv, d, &p, NULL, NULL);
        atomic_store(&bg->running, 0);
        atomic_fetch_add(&bg->measured_us, (uint64_t)(xo__now_us() - t0));
        if (st != XO_OK) {
            if (!atomic_load(&bg->cancel))
                xo__log(XO_LOG_WARN, "device %d (%s): background calibration failed: %s; keeping the defaults", d,
                        owner->dev[d].info.plugin, xo_last_error());
            continue;
        }
        pthread_mutex_lock(&owner->profile_lock);
        xo__profile prev = owner->dev[d].profile;
        pthread_mutex_unlock(&owner->profile_lock);
        xo__profile_settle(&p, owner->dev[d].cached ? &prev : NULL);
        xo__device_set_profile(owner, d, &p);
        atomic_fetch_add(&bg->measured, 1);
        /* Factors learned against the stand-in profile do not apply to the measured one. */
        xo__correction_reset_device(owner->correction, d);
        xo__log(XO_LOG_INFO, "device %d (%s %s): measured in the background in %.0f ms", d, owner->dev[d].info.plugin,
                owner->dev[d].info.name, (xo__now_us() - t0) * 1e-3);
        char path[XO_PATH_MAX];
        if (xo__profile_path(owner, d, path, sizeof path) && xo__profile_write(path, &p) != XO_OK)
            xo__log(XO_LOG_WARN, "device %d: profile not cached: %s", d, xo_last_error());
    }
    owner->destroy_private(priv);
    return NULL;
}

/* Measure the devices whose measure_later is at least `level` (1: those measured beside
 * the program; 2: also those on the host's cores, when the program asks). */
static void start(xo_context *ctx, int level)
{
    struct xo__background *bg = calloc(1, sizeof *bg);
    if (!bg)
        return; /* the provisional profiles stay; a later context measures them */
    bg->owner = ctx;
    bg->start_us = xo__now_us();
    for (int d = 0; d < ctx->ndev; d++)
        if (ctx->dev[d].measure_later && ctx->dev[d].measure_later <= level) {
            bg->dev[bg->ndev++] = d;
            ctx->dev[d].measure_later = 0;
        }
    if (bg->ndev == 0 || pthread_create(&bg->thread, NULL, worker, bg) != 0) {
        free(bg);
        return;
    }
    ctx->background = bg;
}

void xo__background_start(xo_context *ctx) { start(ctx, 1); }

void xo__background_measure_all(xo_context *ctx)
{
    xo__background_wait(ctx);
    start(ctx, 2);
    xo__background_wait(ctx);
}

int xo__background_overlap(const xo_context *ctx, char *out, size_t cap)
{
    const struct xo__background *bg = ctx ? ctx->background : NULL;
    if (!bg || cap == 0)
        return 0;
    int running = atomic_load(&bg->running), measured = atomic_load(&bg->measured);
    double us = (double)atomic_load(&bg->measured_us);
    if (running)
        snprintf(out, cap,
                 "this run overlapped a background measurement: %d device(s) measured in %.0f ms, device %d "
                 "still being measured (cancelled at exit)",
                 measured, us * 1e-3, running - 1);
    else
        snprintf(out, cap, "this run overlapped a background measurement: %d device(s) measured in %.0f ms",
                 measured, us * 1e-3);
    return 1;
}

void xo__background_wait(xo_context *ctx)
{
    if (!ctx || !ctx->background)
        return;
    pthread_join(ctx->background->thread, NULL);
    free(ctx->background);
    ctx->background = NULL;
}

void xo__background_stop(xo_context *ctx)
{
    if (ctx && ctx->background)
        atomic_store(&ctx->background->cancel, 1);
    xo__background_wait(ctx);
}
