/* Background calibration: a device without a trustworthy profile (none cached yet, or
 * runs that disagreed) is measured by a thread of its own, in a private context, while
 * the program goes on with the defaults and what its first ops measure. The result is
 * cached and published into the program's context; decisions pick it up at their next
 * re-evaluation. A private context keeps the measurement's buffers, ops and statistics
 * out of the program's. */
#include "xo_internal.h"

#include <stdlib.h>
#include <string.h>

struct xo__background {
    pthread_t thread;
    _Atomic int cancel;
    xo_context *owner;
    int ndev;
    int dev[XO_MAX_DEVICES];
};

xo_status xo__calibration_cancelled(const xo_context *ctx)
{
    if (ctx->calib_cancel && atomic_load_explicit(ctx->calib_cancel, memory_order_relaxed))
        return xo__error(XO_ERR_DEVICE, "calibration cancelled: the context is being destroyed");
    return XO_OK;
}

static int same_device(const xo_device_info *a, const xo_device_info *b)
{
    return strcmp(a->plugin, b->plugin) == 0 && strcmp(a->name, b->name) == 0 && strcmp(a->driver, b->driver) == 0;
}

static void *worker(void *arg)
{
    struct xo__background *bg = arg;
    xo_context *owner = bg->owner, *priv = NULL;
    if (xo__context_create_private(&priv) != XO_OK) {
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
        if (xo__calibrate_device(priv, d, &p, NULL, NULL) != XO_OK) {
            if (!atomic_load(&bg->cancel))
                xo__log(XO_LOG_WARN, "device %d (%s): background calibration failed: %s; keeping the defaults", d,
                        owner->dev[d].info.plugin, xo_last_error());
            continue;
        }
        xo__device_set_profile(owner, d, &p);
        /* Factors learned against the stand-in profile do not apply to the measured one. */
        xo__correction_reset_device(owner->correction, d);
        xo__log(XO_LOG_INFO, "device %d (%s %s): measured in the background in %.0f ms", d, owner->dev[d].info.plugin,
                owner->dev[d].info.name, (xo__now_us() - t0) * 1e-3);
        char path[XO_PATH_MAX];
        if (xo__profile_path(owner, d, path, sizeof path) && xo__profile_write(path, &p) != XO_OK)
            xo__log(XO_LOG_WARN, "device %d: profile not cached: %s", d, xo_last_error());
    }
    xo_context_destroy(priv);
    return NULL;
}

void xo__background_start(xo_context *ctx)
{
    struct xo__background *bg = calloc(1, sizeof *bg);
    if (!bg)
        return; /* the provisional profiles stay; a later context measures them */
    bg->owner = ctx;
    for (int d = 0; d < ctx->ndev; d++)
        if (ctx->dev[d].measure_later)
            bg->dev[bg->ndev++] = d;
    if (bg->ndev == 0 || pthread_create(&bg->thread, NULL, worker, bg) != 0) {
        free(bg);
        return;
    }
    ctx->background = bg;
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
