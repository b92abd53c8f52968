/* xo info: every device with every xo_device_info field, and where its profile came from. */
#include "xo_tool.h"
#include "cpu_coretype.h"
#include "xo_sim.h"

#include <string.h>
#include <sys/stat.h>

void xo__tool_device_spec(const xo_context *ctx, int dev, char *out, size_t cap)
{
    xo_device_info info, other;
    if (xo_device_get_info(ctx, dev, &info) != XO_OK) {
        snprintf(out, cap, "%d", dev);
        return;
    }
    if (dev == 0) {
        snprintf(out, cap, "cpu");
        return;
    }
    int local = 0;
    for (int d = 0; d < dev; d++)
        if (xo_device_get_info(ctx, d, &other) == XO_OK && strcmp(other.plugin, info.plugin) == 0)
            local++;
    snprintf(out, cap, "%s:%d", info.plugin, local);
}

const char *xo__tool_kind_name(xo_device_kind kind)
{
    switch (kind) {
    case XO_DEVICE_CPU: return "cpu";
    case XO_DEVICE_GPU: return "gpu";
    case XO_DEVICE_ACCELERATOR: return "accelerator";
    }
    return "unknown";
}

static void print_bandwidth(FILE *f, const char *key, const xo_device_info *in, double gbps, int dev)
{
    char text[128];
    fprintf(f, "  %-20s %s\n", key, xo__tool_bandwidth_text(in, dev, gbps, 1, text, sizeof text));
}

const char *xo__tool_profile_source(const xo_context *ctx, int dev, time_t since,
                                    char *path, size_t cap)
{
    path[0] = '\0';
    if (ctx->sim) {
        snprintf(path, cap, "%s", xo__sim_path(ctx));
        return "the machine file (simulated)";
    }
    if (ctx->calibrate == XO_CALIBRATE_OFF) return "built-in defaults (XO_CALIBRATE=off)";
    if (!ctx->cache_dir[0]) return "built-in defaults (no usable cache directory)";

    char file[512];
    xo__profile_filename(&ctx->dev[dev].info, file, sizeof file);
    if (snprintf(path, cap, "%s/%s", ctx->cache_dir, file) >= (int)cap) {
        path[0] = '\0';
        return "unknown (cache path too long)";
    }

    struct stat st;
    xo__profile cached;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || xo__profile_read(path, &cached) != XO_OK ||
        !xo__profile_matches(&cached, &ctx->dev[dev].info)) {
        /* not cached: either measured here without a writable cache, or the defaults */
        xo__profile def;
        const xo_device_info *in = &ctx->dev[dev].profile.info;
        xo__profile_defaults(ctx->dev[dev].info.kind, ctx->dev[dev].info.plugin, &def);
        int special = lstat(path, &st) == 0 && !S_ISREG(st.st_mode);
        if (!special) path[0] = '\0'; /* else the path is named after the reason */
        if (in->launch_us == def.info.launch_us && in->peak_gflops == def.info.peak_gflops &&
            in->mem_gbps == def.info.mem_gbps)
            return "built-in defaults (no valid cached profile)";
        if (special) {
            static char why[96];
            snprintf(why, sizeof why, "measured by this process (not cached: the profile path is %s)",
                     xo__file_kind(st.st_mode));
            return why;
        }
        return "measured by this process (not cached: the cache directory is not writable)";
    }
    if (st.st_mtime >= since) return "measured now, cached";
    return "cached";
}

void xo__tool_print_devices(FILE *f, const xo_context *ctx, time_t since)
{
    int n = xo_device_count(ctx);
    fprintf(f, "crossover %s: %d device%s\n", XO_VERSION_STRING, n, n == 1 ? "" : "s");
    fprintf(f, "profile cache: %s\n", ctx->cache_dir[0] ? ctx->cache_dir : "(none)");
    if (ctx->sim)
        fprintf(f, "simulated: every device below is simulated from the machine file %s (XO_SIMULATE)\n",
                xo__sim_path(ctx));
    for (int d = 0; d < n; d++) {
        xo_device_info in;
        char spec[64], path[XO_PATH_MAX];
        xo_status s = xo_device_get_info(ctx, d, &in);
        xo__tool_device_spec(ctx, d, spec, sizeof spec);
        fprintf(f, "\ndevice %d (%s)\n", d, spec);
        if (s != XO_OK) {
            fprintf(f, "  (no information: %s: %s)\n", xo_status_string(s), xo_last_error());
            continue;
        }
        const char *src = xo__tool_profile_source(ctx, d, since, path, sizeof path);
        fprintf(f, "  name                 %s\n", in.name);
        fprintf(f, "  vendor               %s\n", in.vendor);
        fprintf(f, "  driver               %s\n", in.driver);
        fprintf(f, "  plugin               %s\n", in.plugin);
        char advice[512];
        if (strcmp(in.plugin, "cpu") == 0 && xo__openblas_core_advice(advice, sizeof advice))
            fprintf(f, "  openblas kernels     %s\n", advice);
        fprintf(f, "  kind                 %s\n", xo__tool_kind_name(in.kind));
        fprintf(f, "  host_unified         %d\n", in.host_unified);
        fprintf(f, "  fp64                 %d\n", in.fp64);
        fprintf(f, "  launch_us            %.3f\n", in.launch_us);
        fprintf(f, "  transfer_latency_us  %.3f\n", in.transfer_latency_us);
        print_bandwidth(f, "h2d_gbps", &in, in.h2d_gbps, d);
        print_bandwidth(f, "d2h_gbps", &in, in.d2h_gbps, d);
        fprintf(f, "  mem_gbps             %.3f\n", in.mem_gbps);
        fprintf(f, "  peak_gflops          %.3f\n", in.peak_gflops);
        fprintf(f, "  profile              %s%s%s\n", src, path[0] && strncmp(src, "built-in", 8) != 0 ? ": " : "",
                path[0] && strncmp(src, "built-in", 8) != 0 ? path : "");
        const xo__profile *p = xo__device_profile(ctx, d);
        if (p->thread_wake_us > 0.0)
            fprintf(f, "  thread_wake_us       %.3f (added to vector ops of %.0f elements or more)\n", p->thread_wake_us,
                    p->threaded_from);
        if (p->issue_us > 0.0)
            fprintf(f, "  issue_us             %.3f (the host's share of a launch: ops queue; repeating steps "
                       "are placed as one)\n", p->issue_us);
        fprintf(f, "  spread               %.2f (worst (q3 - q1) / median of the repeated runs)\n", p->spread);
        char why[160];
        if (!xo__profile_trustworthy(p, why, sizeof why) && p->untrusted_runs < XO_UNTRUSTED_MAX)
            fprintf(f, "  trusted              no: %s; measured again by a later context\n", why);
        else if (p->untrusted_runs >= XO_UNTRUSTED_MAX)
            fprintf(f, "  trusted              kept after %d measurements in a row that were not trustworthy\n",
                    p->untrusted_runs);
    }
}

int xo__tool_cmd_info(int argc, char **argv)
{
    if (argc > 1) return xo__tool_usage_error("info: unexpected argument '%s'", argv[1]);
    time_t start = time(NULL);
    xo_context *ctx = NULL;
    setenv("XO_LOG", "warn", 0); /* xo info shows the warnings (an OpenBLAS core below the CPU) */
    xo_status s = xo_context_create(&ctx);
    if (s != XO_OK) return xo__tool_fail(s, "info: cannot create a context");
    int later = ctx->background != NULL;
    for (int d = 0; d < ctx->ndev; d++) later |= ctx->dev[d].measure_later != 0;
    if (later) {
        fprintf(stderr, "xo info: measuring devices without a trustworthy cached profile...\n");
        xo__background_measure_all(ctx); /* devices on the host's cores included */
    }
    xo__tool_print_devices(stdout, ctx, start);
    xo_context_destroy(ctx);
    return fflush(stdout) == 0 ? XO_TOOL_OK : XO_TOOL_FAIL;
}
