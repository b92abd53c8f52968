/* `xo explain` and dispatch decide with the same code: a property test.
 *
 * Each trial gives the devices random profiles (written to the profile cache, so the
 * `xo` tool loads the very same ones), random correction factors in force (recorded into
 * the context's correction and written to a --correction file), puts an op's operands
 * on the host or on the OpenCL device, runs the op, and asks `xo explain` (the real
 * tool, as a user runs it) which device it would choose. They must agree. gemm and gemv
 * run with beta != 0, as explain assumes. */
#include "xo_test.h"
#include "xo_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef XO_TOOL_PATH
#error "XO_TOOL_PATH (the xo tool) must be defined by the build"
#endif

#define TRIALS 40

static uint64_t rng = 20261123;
static double urand(void) { return xot_uniform(&rng, 0.0, 1.0); }
/* log-uniform in [lo, hi] */
static double lurand(double lo, double hi) { return lo * pow(hi / lo, urand()); }

static void random_profile(xo__profile *p)
{
    p->info.launch_us = p->info.transfer_latency_us = 0;
    if (p->info.kind != XO_DEVICE_CPU || strcmp(p->info.plugin, "cpu") != 0) {
        p->info.launch_us = lurand(1, 2000);
        p->info.transfer_latency_us = lurand(1, 500);
        p->info.h2d_gbps = lurand(0.5, 50);
        p->info.d2h_gbps = lurand(0.5, 50);
    } else {
        p->info.launch_us = lurand(0.01, 1);
    }
    p->info.mem_gbps = lurand(1, 500);
    double peak = lurand(1, 5000);
    p->info.peak_gflops = peak;
    for (int dt = 0; dt < 2; dt++) {
        for (int i = 0; i < XO_CURVE_POINTS; i++)
            p->gemm_gflops[dt][i] = peak * (0.05 + 0.95 * (i + 1) / XO_CURVE_POINTS) / (dt + 1);
        p->stream_gbps[dt] = lurand(1, 500);
    }
    memset(p->op_launch_us, 0, sizeof p->op_launch_us);
}

typedef struct trial_op {
    const char *name;
    int ndims;
} trial_op;
static const trial_op ops[] = {{"sscal", 1}, {"saxpy", 1}, {"sgemv", 2}, {"sgemm", 3}, {"sunary", 1}};

/* Run op `o` with dims on buffers made current on `resident`; returns where it ran. */
static int run_op(xo_context *ctx, int o, const size_t *dims, int resident)
{
    size_t m = dims[0], n = ops[o].ndims >= 2 ? dims[1] : dims[0], k = ops[o].ndims == 3 ? dims[2] : 1;
    size_t sizes[3];
    int nb;
    switch (o) {
    case 0: nb = 1; sizes[0] = m; break;
    case 1: case 4: nb = 2; sizes[0] = sizes[1] = m; break;
    case 2: nb = 3; sizes[0] = m * n; sizes[1] = n; sizes[2] = m; break;
    default: nb = 3; sizes[0] = m * k; sizes[1] = k * n; sizes[2] = m * n; break;
    }
    xo_buffer *b[3] = {NULL, NULL, NULL};
    for (int i = 0; i < nb; i++) {
        xot_assert_ok(xo_buffer_create(ctx, sizes[i] * sizeof(float), &b[i]));
        if (resident) {
            xot_assert_ok(xo__buffer_make_current(b[i], resident));
            xo__buffer_mark_written(b[i], resident);
        }
    }
    switch (o) {
    case 0: xot_assert_ok(xo_sscal(ctx, m, 0.5f, b[0], 0, 1)); break;
    case 1: xot_assert_ok(xo_saxpy(ctx, m, 0.5f, b[0], 0, 1, b[1], 0, 1)); break;
    case 4: xot_assert_ok(xo_sunary(ctx, XO_TANH, m, b[0], 0, b[1], 0)); break;
    case 2:
        xot_assert_ok(xo_sgemv(ctx, XO_ROW_MAJOR, XO_NO_TRANS, m, n, 1.0f, b[0], 0, n, b[1], 0, 1, 1.0f, b[2], 0, 1));
        break;
    default:
        xot_assert_ok(xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, m, n, k, 1.0f, b[0], 0, k, b[1], 0, n,
                               1.0f, b[2], 0, n));
        break;
    }
    xo_decision d;
    xot_assert_ok(xo_last_decision(ctx, &d));
    xot_assert_ok(xo_finish(ctx));
    for (int i = 0; i < nb; i++)
        xo_buffer_destroy(b[i]);
    return d.device;
}

static int explain_choice(const char *corr_file, int resident, int o, const size_t *dims)
{
    char cmd[1024];
    int used = snprintf(cmd, sizeof cmd, "'%s' explain --correction '%s' --resident %d %s", XO_TOOL_PATH, corr_file,
                        resident, ops[o].name);
    for (int i = 0; i < ops[o].ndims; i++)
        used += snprintf(cmd + used, sizeof cmd - (size_t)used, " %zu", dims[i]);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[512];
    int chosen = -1;
    while (fgets(line, sizeof line, p))
        if (strncmp(line, "chosen: ", 8) == 0)
            chosen = atoi(line + 8);
    assert_int_equal(pclose(p), 0);
    return chosen;
}

static void test_explain_agrees_with_dispatch(void **state)
{
    (void)state;
    const char *dir = getenv("XO_CACHE_DIR");
    assert_non_null(dir);
    mkdir(dir, 0755);
    char corr_file[1100];
    snprintf(corr_file, sizeof corr_file, "%s/corrections.txt", dir);
    /* The devices' identities, without measuring anything. */
    setenv("XO_CALIBRATE", "off", 1);
    xo_context *probe;
    xot_assert_ok(xo_context_create(&probe));
    int ndev = xo_device_count(probe);
    xo__profile base[XO_MAX_DEVICES];
    for (int d = 0; d < ndev; d++)
        base[d] = *xo__device_profile(probe, d);
    xo_context_destroy(probe);
    if (ndev < 2)
        skip();
    setenv("XO_CALIBRATE", "auto", 1); /* from now on: the profiles in the cache */
    int agreed = 0, on_device = 0;
    for (int t = 0; t < TRIALS; t++) {
        /* The profiles first, in the cache the tool reads, then a context that loads them. */
        for (int d = 0; d < ndev; d++) {
            xo__profile p = base[d];
            random_profile(&p);
            char name[512], path[1700];
            xo__profile_filename(&p.info, name, sizeof name);
            snprintf(path, sizeof path, "%s/%s", dir, name);
            xot_assert_ok(xo__profile_write(path, &p));
        }
        xo_context *ctx;
        xot_assert_ok(xo_context_create(&ctx));

        int o = (int)(urand() * 5) % 5;
        size_t dims[3];
        for (int i = 0; i < 3; i++)
            dims[i] = (size_t)lurand(1, ops[o].ndims == 3 ? 300 : ops[o].ndims == 2 ? 1500 : 300000);
        int resident = urand() < 0.5 ? 0 : 1;

        /* Correction factors in force for this op's class on each device. */
        xo__op_cost cost;
        xot_assert_ok(xo__describe_op(ops[o].name, ops[o].ndims, dims, resident, &cost));
        int cls = xo__size_class(&cost);
        FILE *f = fopen(corr_file, "w");
        assert_non_null(f);
        for (int d = 0; d < ndev; d++) {
            double factor = urand() < 0.4 ? 1.0 : lurand(0.25, 8);
            for (int r = 0; r < 3; r++)
                xo__correction_record(ctx->correction, d, cost.kind, XO_F32, cls, 1.0, factor);
            fprintf(f, "%d %s %.17g\n", d, ops[o].name,
                    xo__correction_factor(ctx->correction, d, cost.kind, XO_F32, cls));
        }
        fclose(f);

        int ran = run_op(ctx, o, dims, resident);
        int chosen = explain_choice(corr_file, resident, o, dims);
        if (ran != chosen)
            fprintf(stderr, "trial %d: %s dims %zu %zu %zu resident %d: dispatch ran on %d, explain chose %d\n", t,
                    ops[o].name, dims[0], dims[1], dims[2], resident, ran, chosen);
        assert_int_equal(ran, chosen);
        agreed++;
        on_device += ran != 0;
        xo_context_destroy(ctx);
    }
    /* The random profiles put ops on both sides, or the test would prove little. */
    assert_int_equal(agreed, TRIALS);
    assert_true(on_device > 0 && on_device < TRIALS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_explain_agrees_with_dispatch)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
