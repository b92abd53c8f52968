/* xo bench [--quick] [--workloads] [--eval1] [--out DIR]: the cross-vendor benchmark. Sweeps (bench_sweep.c),
 * workloads (bench_workloads.c), analysis and outputs (bench_report.c, bench_svg.c). */
#include "bench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir -p */
static int make_dirs(const char *dir)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(path, 0777) != 0 && errno != EEXIST) return -1;
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

static int join(char *out, size_t cap, const char *dir, const char *file)
{
    if (snprintf(out, cap, "%s/%s", dir, file) >= (int)cap) {
        fprintf(stderr, "xo: bench: path too long: %s/%s\n", dir, file);
        return -1;
    }
    return 0;
}

/* Fail early, before minutes of measuring, when DIR cannot take the results. */
static int check_writable(const char *dir)
{
    char path[4200];
    if (make_dirs(dir) != 0) {
        fprintf(stderr, "xo: bench: cannot create output directory '%s': %s\n", dir, strerror(errno));
        return -1;
    }
    if (join(path, sizeof path, dir, "results.csv") != 0) return -1;
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "xo: bench: cannot write to '%s': %s\n", path, strerror(errno));
        return -1;
    }
    fclose(f);
    return 0;
}

static int write_outputs(xo__bench *b)
{
    char path[4200];
    int rc = XO_TOOL_OK;
#define OUT(file, call)                                             \
    do {                                                            \
        if (join(path, sizeof path, b->out_dir, file) != 0) return XO_TOOL_FAIL; \
        if ((call) != XO_TOOL_OK) rc = XO_TOOL_FAIL;                \
    } while (0)
    OUT("results.csv", xo__bench_write_csv(b, path));
    OUT("summary.json", xo__bench_write_json(b, path));
    OUT("workloads.csv", xo__bench_write_workloads_csv(b, path));
    OUT("report.md", xo__bench_write_markdown(b, path));
    for (int op = 0; op < XO_BENCH_NOPS; op++) {
        char file[64];
        snprintf(file, sizeof file, "plot_%s.svg", xo__bench_op_names[op]);
        OUT(file, xo__bench_write_plot(b, (xo__bench_op)op, path));
    }
    OUT("plot_regret.svg", xo__bench_write_regret_plot(b, path));
#undef OUT
    return rc;
}

int xo__tool_cmd_bench(int argc, char **argv)
{
    xo__bench *b = calloc(1, sizeof *b);
    if (!b) {
        fprintf(stderr, "xo: bench: out of memory\n");
        return XO_TOOL_FAIL;
    }
    b->out_dir = "xo-bench";
    int workloads_only = 0; /* skip the op sweep */
    int eval1_only = 0;     /* only the batch-1 evaluation, its table on stderr, no files */
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--quick") == 0) {
            b->quick = 1;
        } else if (strcmp(argv[a], "--workloads") == 0) {
            workloads_only = 1;
        } else if (strcmp(argv[a], "--eval1") == 0) {
            eval1_only = 1;
        } else if (strcmp(argv[a], "--out") == 0) {
            if (a + 1 >= argc || !argv[a + 1][0]) {
                free(b);
                return xo__tool_usage_error("bench: --out needs a DIR");
            }
            b->out_dir = argv[++a];
        } else {
            free(b);
            return xo__tool_usage_error("bench: unexpected argument '%s'", argv[a]);
        }
    }
    if (!eval1_only && check_writable(b->out_dir) != 0) {
        free(b);
        return XO_TOOL_FAIL;
    }
    b->started_us = xo__tool_now_us();
    time_t now = time(NULL);
    struct tm tmv;
    localtime_r(&now, &tmv);
    strftime(b->date, sizeof b->date, "%Y-%m-%d", &tmv);

    int rc = XO_TOOL_OK;
    fprintf(stderr, "xo bench%s: creating a context (may calibrate devices first)\n", b->quick ? " --quick" : "");
    xo_status s = xo_context_create(&b->ctx);
    int later = s == XO_OK && b->ctx->background != NULL;
    for (int d = 0; s == XO_OK && d < b->ctx->ndev; d++)
        later |= b->ctx->dev[d].measure_later != 0;
    if (later) { /* the bench measures placement with the real profiles, as xo info does */
        fprintf(stderr, "xo bench: measuring devices without a trustworthy cached profile...\n");
        xo__background_measure_all(b->ctx); /* devices on the host's cores included */
    }
    if (s != XO_OK) {
        rc = xo__tool_fail(s, "bench: cannot create a context");
        free(b);
        return rc;
    }
    int ndev = xo_device_count(b->ctx);
    for (int d = 0; d < ndev && b->nconfigs < XO_BENCH_MAX_CONFIGS - 1; d++) {
        xo__bench_config *c = &b->cfg[b->nconfigs];
        if (xo_device_get_info(b->ctx, d, &c->info) != XO_OK) continue;
        c->device = d;
        xo__tool_device_spec(b->ctx, d, c->spec, sizeof c->spec);
        b->nconfigs++;
        fprintf(stderr, "  device %d: %s (%s, %s)\n", d, c->spec, c->info.name, c->info.vendor);
    }
    xo__bench_config *au = &b->cfg[b->nconfigs++];
    snprintf(au->spec, sizeof au->spec, "auto");
    au->device = -1;

    if (eval1_only) {
        rc = xo__bench_run_eval1(b) != 0 ? XO_TOOL_FAIL : XO_TOOL_OK;
        xo__bench_print_eval1(b, stderr);
        goto out;
    }
    if (!workloads_only) {
        s = xo__bench_plan(b);
        if (s != XO_OK) {
            rc = xo__tool_fail(s, "bench: cannot plan the sweep");
            goto out;
        }
        fprintf(stderr, "sweep: %d points x %d placements x 2 states = %d measurements\n", b->npoints, b->nconfigs,
                b->total);
        if (xo__bench_sweep(b) != 0) rc = XO_TOOL_FAIL;
        fprintf(stderr, "sweep done in %.0f s; workloads\n", (xo__tool_now_us() - b->started_us) * 1e-6);
    }
    if (xo__bench_workloads(b) != 0) rc = XO_TOOL_FAIL;
    if (xo__bench_run_eval1(b) != 0) rc = XO_TOOL_FAIL;
    xo__bench_analyse(b);
    if (write_outputs(b) != XO_TOOL_OK) rc = XO_TOOL_FAIL;
    fprintf(stderr, "done in %.0f s: %s/report.md\n", (xo__tool_now_us() - b->started_us) * 1e-6, b->out_dir);
out:
    xo_context_destroy(b->ctx);
    free(b->points);
    free(b->results);
    free(b);
    return rc;
}
