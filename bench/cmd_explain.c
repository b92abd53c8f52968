/* xo explain [--profile FILE]... [--resident DEVICE] OP DIMS...
 * The cost model's prediction for one op on every device (real ones and what-if profiles). */
#include "xo_tool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIMS 8

/* A positive or zero decimal size; 0 on success. */
static int parse_size(const char *s, size_t *out)
{
    if (!s[0] || s[0] == '-' || s[0] == '+') return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *out = (size_t)v;
    return 0;
}

static int all_digits(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}

/* Whether device `d` runs the op (XO_SUPPORT_*), and why not. A real device asks the
 * context (as dispatch does); a what-if profile runs everything its fp64 allows. */
static int support_of(xo_context *ctx, int nreal, int d, const xo__profile *p, const xo__op_cost *cost,
                      const char **why)
{
    *why = NULL;
    if (cost->dtype == XO_F64 && !p->info.fp64) {
        *why = "no fp64";
        return XO_SUPPORT_NO;
    }
    if (d == 0 || d >= nreal)
        return XO_SUPPORT_YES;
    xo_op_desc op = {.kind = cost->kind, .dtype = cost->dtype}; /* explain names an op without a sub-op */
    int s = xo__dev_support(ctx, d, &op);
    if (s == XO_SUPPORT_NO)
        *why = "op not supported";
    else if (s == XO_SUPPORT_FAILED)
        *why = "its kernels failed to build here";
    return s;
}

/* --correction FILE: lines "DEVICE OP FACTOR" (as XO_LOG=summary prints them), e.g.
 * "1 sgemv 2.5": the learned factor on compute in force for that op on that device.
 * Returns 0, or -1 with a message on stderr. */
static int read_corrections(const char *path, const char *op, int ntotal, double *factor)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "xo: explain: cannot read '%s': %s\n", path, strerror(errno));
        return -1;
    }
    char line[256];
    int lineno = 0, rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        int dev;
        char name[64];
        double v;
        char extra;
        int got = sscanf(line, "%d %63s %lf %c", &dev, name, &v, &extra);
        if (got <= 0) continue; /* blank */
        if (got != 3 || dev < 0 || dev >= ntotal || !(v > 0) || v > 1e6) {
            fprintf(stderr, "xo: explain: %s:%d: expected DEVICE OP FACTOR (device 0..%d, factor > 0)\n", path,
                    lineno, ntotal - 1);
            rc = -1;
            break;
        }
        if (strcmp(name, op) == 0) factor[dev] = v;
    }
    fclose(f);
    return rc;
}

int xo__tool_cmd_explain(int argc, char **argv)
{
    const char *profiles_named[XO_MAX_DEVICES];
    int nwhatif = 0;
    const char *resident_arg = NULL, *correction_arg = NULL;
    int a = 1;
    for (; a < argc; a++) {
        if (strcmp(argv[a], "--profile") == 0) {
            if (a + 1 >= argc) return xo__tool_usage_error("explain: --profile needs a FILE");
            if (nwhatif == XO_MAX_DEVICES) return xo__tool_usage_error("explain: too many --profile files");
            profiles_named[nwhatif++] = argv[++a];
        } else if (strcmp(argv[a], "--resident") == 0) {
            if (a + 1 >= argc) return xo__tool_usage_error("explain: --resident needs a DEVICE");
            resident_arg = argv[++a];
        } else if (strcmp(argv[a], "--correction") == 0) {
            if (a + 1 >= argc) return xo__tool_usage_error("explain: --correction needs a FILE");
            correction_arg = argv[++a];
        } else if (strcmp(argv[a], "--") == 0) {
            a++;
            break;
        } else if (argv[a][0] == '-' && argv[a][1] != '\0') {
            return xo__tool_usage_error("explain: unknown option '%s'", argv[a]);
        } else {
            break;
        }
    }
    if (a >= argc) return xo__tool_usage_error("explain: missing OP");
    const char *op = argv[a++];
    int ndims = argc - a;
    if (ndims < 1) return xo__tool_usage_error("explain: %s needs its dimensions", op);
    if (ndims > MAX_DIMS) return xo__tool_usage_error("explain: too many dimensions");
    size_t dims[MAX_DIMS];
    for (int i = 0; i < ndims; i++)
        if (parse_size(argv[a + i], &dims[i]) != 0)
            return xo__tool_usage_error("explain: bad dimension '%s'", argv[a + i]);

    /* Check the op and dims before the (possibly slow) context creation. */
    xo__op_cost cost;
    xo_status s = xo__describe_op(op, ndims, dims, 0, &cost);
    if (s != XO_OK) return xo__tool_usage_error("explain: %s", xo_last_error()[0] ? xo_last_error() : "unknown op or bad dimensions");

    xo_context *ctx = NULL;
    s = xo_context_create(&ctx);
    if (s != XO_OK) return xo__tool_fail(s, "explain: cannot create a context");
    xo__background_wait(ctx); /* explain the profiles dispatch will use from now on */
    int rc = XO_TOOL_OK;
    int nreal = xo_device_count(ctx);
    int ntotal = nreal + nwhatif;
    xo__profile prof[XO_MAX_DEVICES];
    char where[XO_MAX_DEVICES][64];
    if (ntotal > XO_MAX_DEVICES) {
        rc = xo__tool_usage_error("explain: at most %d devices in all (%d real + %d what-if)",
                                  XO_MAX_DEVICES, nreal, nwhatif);
        goto out;
    }
    for (int d = 0; d < nreal; d++) {
        prof[d] = *xo__device_profile(ctx, d);
        xo__tool_device_spec(ctx, d, where[d], sizeof where[d]);
    }
    for (int w = 0; w < nwhatif; w++) {
        s = xo__profile_read(profiles_named[w], &prof[nreal + w]);
        if (s != XO_OK) {
            rc = xo__tool_fail(s, "explain: cannot read profile '%s'", profiles_named[w]);
            goto out;
        }
        snprintf(where[nreal + w], sizeof where[0], "what-if %d", w);
    }

    int resident = 0;
    if (resident_arg) {
        if (all_digits(resident_arg)) {
            size_t r;
            if (parse_size(resident_arg, &r) != 0 || r >= (size_t)ntotal) {
                rc = xo__tool_usage_error("explain: --resident %s: no such device (0..%d)", resident_arg,
                                          ntotal - 1);
                goto out;
            }
            resident = (int)r;
        } else {
            s = xo_device_find(ctx, resident_arg, &resident);
            if (s == XO_ERR_INVALID_ARGUMENT) {
                rc = xo__tool_usage_error("explain: --resident '%s': %s", resident_arg, xo_last_error());
                goto out;
            }
            if (s != XO_OK) {
                rc = xo__tool_fail(s, "explain: --resident '%s'", resident_arg);
                goto out;
            }
        }
    }
    s = xo__describe_op(op, ndims, dims, resident, &cost);
    if (s != XO_OK) {
        rc = xo__tool_usage_error("explain: %s", xo_last_error());
        goto out;
    }

    double factor[XO_MAX_DEVICES];
    int support[XO_MAX_DEVICES];
    const char *why[XO_MAX_DEVICES];
    for (int d = 0; d < ntotal; d++) {
        factor[d] = 1.0;
        support[d] = support_of(ctx, nreal, d, &prof[d], &cost, &why[d]);
    }
    if (correction_arg && read_corrections(correction_arg, op, ntotal, factor) != 0) {
        rc = XO_TOOL_FAIL;
        goto out;
    }
    /* The same decision dispatch takes for these profiles, factors and residency. */
    xo__placement pl;
    xo__place(&(xo__place_in){.profiles = prof, .ndev = ntotal, .cost = &cost, .correction = factor,
                              .support = support, .forced = ctx->forced},
              &pl);

    printf("op: %s", op);
    for (int i = 0; i < ndims; i++) printf(" %zu", dims[i]);
    printf("  (%.4g flop, %.4g bytes streamed; operands current on device %d %s)\n", cost.flops, cost.bytes,
           resident, where[resident]);
    printf("%4s  %-10s  %-36s %11s %12s %11s %11s %10s\n", "dev", "plugin", "name", "launch_us", "transfer_us",
           "compute_us", "total_us", "correction");
    for (int d = 0; d < ntotal; d++) {
        const xo_estimate *est = &pl.est[d];
        char name[160];
        snprintf(name, sizeof name, "%.127s%s", prof[d].info.name, d >= nreal ? " (what-if)" : "");
        if (!est->eligible) {
            printf("%4d  %-10s  %-36.36s   ineligible%s%s\n", d, prof[d].info.plugin, name, why[d] ? ": " : "",
                   why[d] ? why[d] : "");
            continue;
        }
        printf("%4d  %-10s  %-36.36s %11.2f %12.2f %11.2f %11.2f %10.3g\n", d, prof[d].info.plugin, name,
               est->launch_us, est->transfer_us, est->compute_us, est->total_us, factor[d]);
    }
    int cheapest = -1;
    for (int d = 0; d < ntotal; d++)
        if (pl.est[d].eligible && (cheapest < 0 || pl.est[d].total_us < pl.est[cheapest].total_us)) cheapest = d;
    if (pl.forced)
        printf("note: forced by XO_DEVICE to device %d\n", pl.device);
    else if (cheapest != pl.best)
        printf("note: device %d holds the largest operand and the cheapest (%d) is less than 10%% cheaper: the op "
               "stays where its data is\n",
               pl.best, cheapest);
    printf("chosen: %d %s %s\n", pl.device, prof[pl.device].info.plugin, prof[pl.device].info.name);
    if (fflush(stdout) != 0) rc = XO_TOOL_FAIL;
out:
    xo_context_destroy(ctx);
    return rc;
}
