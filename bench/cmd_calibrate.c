/* xo calibrate [--force]: measure every device's profile with a progress display on stderr,
 * then print the resulting profiles as `xo info` does. */
#include "xo_tool.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct progress_state {
    const xo_context *ctx;
    int tty;
    int last_dev;
    char last_step[64];
    int last_quarter;
    int line_open; /* a \r line is on screen */
} progress_state;

static void progress(void *user, int dev, const char *step, double fraction)
{
    progress_state *p = user;
    char spec[64];
    xo_device_info in;
    if (!step) step = "";
    if (fraction < 0) fraction = 0;
    if (fraction > 1) fraction = 1;
    xo__tool_device_spec(p->ctx, dev, spec, sizeof spec);
    if (xo_device_get_info(p->ctx, dev, &in) != XO_OK) in.name[0] = '\0';
    int pct = (int)(fraction * 100.0 + 0.5);

    if (p->tty) {
        fprintf(stderr, "\r\033[K[%s %.40s] %-24.24s %3d%%", spec, in.name, step, pct);
        p->line_open = 1;
    } else {
        /* Lines: one when the device or step changes, then at each quarter. */
        int quarter = (int)(fraction * 4.0);
        int changed = dev != p->last_dev || strcmp(step, p->last_step) != 0;
        if (changed || quarter != p->last_quarter)
            fprintf(stderr, "[%s %s] %s %d%%\n", spec, in.name, step, pct);
        p->last_quarter = quarter;
    }
    p->last_dev = dev;
    snprintf(p->last_step, sizeof p->last_step, "%s", step);
    fflush(stderr);
}

int xo__tool_cmd_calibrate(int argc, char **argv)
{
    int force = 0;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--force") == 0)
            force = 1;
        else
            return xo__tool_usage_error("calibrate: unexpected argument '%s'", argv[a]);
    }
    time_t start = time(NULL);

    /* Create the context without measuring, so that every measurement below shows
     * progress; the user's XO_CALIBRATE is put back right after. */
    const char *user_mode = getenv("XO_CALIBRATE");
    char *saved = user_mode ? strdup(user_mode) : NULL; /* whole, however long */
    if (user_mode && !saved) return xo__tool_fail(XO_ERR_OUT_OF_MEMORY, "calibrate: out of memory");
    setenv("XO_CALIBRATE", "off", 1);
    xo_context *ctx = NULL;
    xo_status s = xo_context_create(&ctx);
    if (saved)
        setenv("XO_CALIBRATE", saved, 1);
    else
        unsetenv("XO_CALIBRATE");
    free(saved);
    if (s != XO_OK) return xo__tool_fail(s, "calibrate: cannot create a context");
    /* `xo calibrate` measures whatever XO_CALIBRATE says: that is what it is for. */
    ctx->calibrate = force ? XO_CALIBRATE_FORCE : XO_CALIBRATE_AUTO;

    progress_state p = {.ctx = ctx, .tty = isatty(STDERR_FILENO), .last_dev = -1, .last_quarter = -1};
    s = xo__calibrate_all(ctx, force, progress, &p);
    if (p.line_open) fputc('\n', stderr);
    if (s != XO_OK) {
        int rc = xo__tool_fail(s, "calibrate: calibration failed");
        xo_context_destroy(ctx);
        return rc;
    }
    fprintf(stderr, "calibration done\n");
    xo__tool_print_devices(stdout, ctx, start);
    xo_context_destroy(ctx);
    return fflush(stdout) == 0 ? XO_TOOL_OK : XO_TOOL_FAIL;
}
