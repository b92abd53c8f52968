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

/* Why device `d` cannot run the op, or NULL if it can. */
static const char *ineligible_reason(const xo_context *ctx, int nreal, int d, const xo__profile *p,
                                     const xo__op_cost *cost)
{
    if (cost->dtype == XO_F64 && !p->info.fp64) return "no fp64";
    if (d < nreal && cost->kind < XO_OP_KIND_COUNT &&
        atomic_load(&ctx->dev[d].supports[cost->kind][cost->dtype]) == 0)
        return "op not supported";
    return NULL;
}

int xo__tool_cmd_explain(int argc, char **argv)
{
    const char *profiles_named[XO_MAX_DEVICES];
    int nwhatif = 0;
    const char *resident_arg = NULL;
    int a = 1;
    for (; a < argc; a++) {
        if (strcmp(argv[a], "--profile") == 0) {
            if (a + 1 >= argc) return xo__tool_usage_error("explain: --profile needs a FILE");
            if (nwhatif == XO_MAX_DEVICES) return xo__tool_usage_error("explain: too many --profile files");
            profiles_named[nwhatif++] = argv[++a];
        } else if (strcmp(argv[a], "--resident") == 0) {
            if (a + 1 >= argc) return xo__tool_usage_error("explain: --resident needs a DEVICE");
            resident_arg = argv[++a];
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

    printf("op: %s", op);
    for (int i = 0; i < ndims; i++) printf(" %zu", dims[i]);
    printf("  (%.4g flop, %.4g bytes streamed; operands current on device %d %s)\n", cost.flops, cost.bytes,
           resident, where[resident]);
    printf("%4s  %-10s  %-36s %11s %12s %11s %11s\n", "dev", "plugin", "name", "launch_us", "transfer_us",
           "compute_us", "total_us");
    int chosen = -1;
    double best = 0;
    for (int d = 0; d < ntotal; d++) {
        xo_estimate est;
        const char *why = ineligible_reason(ctx, nreal, d, &prof[d], &cost);
        char name[160];
        snprintf(name, sizeof name, "%.127s%s", prof[d].info.name, d >= nreal ? " (what-if)" : "");
        if (why) {
            printf("%4d  %-10s  %-36.36s   ineligible: %s\n", d, prof[d].info.plugin, name, why);
            continue;
        }
        xo__estimate(prof, ntotal, d, &cost, 1.0, &est);
        if (!est.eligible) {
            printf("%4d  %-10s  %-36.36s   ineligible\n", d, prof[d].info.plugin, name);
            continue;
        }
        printf("%4d  %-10s  %-36.36s %11.2f %12.2f %11.2f %11.2f\n", d, prof[d].info.plugin, name, est.launch_us,
               est.transfer_us, est.compute_us, est.total_us);
        if (chosen < 0 || est.total_us < best) {
            chosen = d;
            best = est.total_us;
        }
    }
    if (chosen < 0) {
        fprintf(stderr, "xo: explain: no device can run %s\n", op);
        rc = XO_TOOL_FAIL;
        goto out;
    }
    printf("chosen: %d %s %s\n", chosen, prof[chosen].info.plugin, prof[chosen].info.name);
    if (fflush(stdout) != 0) rc = XO_TOOL_FAIL;
out:
    xo_context_destroy(ctx);
    return rc;
}
