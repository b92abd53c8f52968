/* Auto you can trust: what feeds the model is checked before it is believed.
 * - a cached profile measured on a busy machine (runs that disagreed, a gemm curve that
 *   collapses) is not final: the next context measures it again, and after
 *   XO_UNTRUSTED_MAX untrustworthy measurements in a row the last is kept;
 * - a cached profile that the program's own timings contradict (settled correction
 *   factors beyond 4x) is marked provisional at xo_context_destroy and re-measured by
 *   the next context: healed within two runs, without deleting files;
 * - a device on the host's cores (PoCL, here the mock declared so) competes with the
 *   CPU: it gets an op only when clearly faster (place.c), and it is not measured beside
 *   the program (only when asked: xo info);
 * - XO_LOG=summary shows what an asynchronous device's ops cost and says when a run
 *   overlapped a background measurement.
 *
 * ctest runs it with XO_PLUGINS=cpu,mock; each test sets XO_CALIBRATE and a fresh
 * XO_CACHE_DIR. */
#include "xo_test.h"
#include "mock_plugin.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char base_dir[1024];

static void fresh_cache(const char *tag)
{
    static int serial;
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/%s-%ld-%d", base_dir, tag, (long)getpid(), serial++);
    setenv("XO_CACHE_DIR", dir, 1);
}

/* A context on the CPU alone under XO_CALIBRATE=auto. */
static xo_context *cpu_context(void)
{
    setenv("XO_PLUGINS", "cpu", 1);
    setenv("XO_CALIBRATE", "auto", 1);
    xo_context *ctx = NULL;
    xot_assert_ok(xo_context_create(&ctx));
    return ctx;
}

/* In a fresh cache named `tag`, the CPU's measured profile spoilt by `spoil` (what a busy
 * first run could have left) as its cached file, at `path`. With `distrust`, the file is
 * not trustworthy and the reason names it. */
static void plant_cpu_profile(const char *tag, void (*spoil)(xo__profile *), const char *distrust, char *path,
                              size_t cap)
{
    fresh_cache(tag);
    xo_context *ctx = cpu_context(); /* measures the CPU and writes its file */
    assert_true(xo__profile_path(ctx, 0, path, cap));
    xo__profile p;
    xot_assert_ok(xo__profile_read(path, &p));
    xo_context_destroy(ctx);
    spoil(&p);
    xot_assert_ok(xo__profile_write(path, &p));
    if (!distrust) return;
    char why[160];
    xot_assert_ok(xo__profile_read(path, &p)); /* as a context will read it */
    assert_false(xo__profile_trustworthy(&p, why, sizeof why));
    assert_true(xot_contains(why, distrust));
}

static void busy_figures(xo__profile *p)
{
    /* the issue's: mem_gbps = 2.0 against 82 quiet, spread 0.56, kept as final */
    p->info.mem_gbps = p->stream_gbps[0] = p->stream_gbps[1] = 2.0;
    p->spread = 0.56;
    p->provisional = 0;
    p->untrusted_runs = 0;
}

static void collapsed_curve(xo__profile *p)
{
    /* the issue's: sgemm 183.9 GFLOP/s at 64, then 0.131 for every size from 128 */
    for (int i = 0; i < XO_CURVE_POINTS; i++)
        p->gemm_gflops[XO_F32][i] = i <= 2 ? 183.9 : 0.131;
    p->spread = 0.0;
    p->provisional = 0;
    p->untrusted_runs = 0;
}

static void busy_but_capped(xo__profile *p)
{
    busy_figures(p);
    p->untrusted_runs = XO_UNTRUSTED_MAX;
}

static void busy_profile_is_measured_again(void **state)
{
    (void)state;
    char path[XO_PATH_MAX];
    plant_cpu_profile("busy", busy_figures, "spread", path, sizeof path);
    xo_context *ctx = cpu_context();
    /* measured again at creation: not the planted figures */
    assert_true(ctx->dev[0].profile.info.mem_gbps != 2.0);
    xo__profile now;
    xot_assert_ok(xo__profile_read(path, &now));
    assert_true(now.info.mem_gbps == ctx->dev[0].profile.info.mem_gbps);
    assert_true(now.untrusted_runs <= 1); /* 1 if this machine is busy too */
    xo_context_destroy(ctx);
}

static void collapsing_curve_is_measured_again(void **state)
{
    (void)state;
    char path[XO_PATH_MAX];
    plant_cpu_profile("collapse", collapsed_curve, "falls", path, sizeof path);
    xo_context *ctx = cpu_context();
    assert_true(ctx->dev[0].profile.gemm_gflops[XO_F32][3] != 0.131);
    xo_context_destroy(ctx);
}

/* A machine that never lets the runs agree is not measured at every run: after
 * XO_UNTRUSTED_MAX measurements in a row the last one is kept. */
static void untrusted_profile_kept_after_the_cap(void **state)
{
    (void)state;
    char path[XO_PATH_MAX];
    plant_cpu_profile("cap", busy_but_capped, NULL, path, sizeof path);
    xo_context *ctx = cpu_context();
    assert_true(ctx->dev[0].profile.info.mem_gbps == 2.0);
    xo_context_destroy(ctx);
    /* and the count itself: a third untrustworthy measurement becomes final */
    xo__profile p = {0}, prev = {0};
    p.spread = 0.9;
    prev.untrusted_runs = XO_UNTRUSTED_MAX - 2;
    p.provisional = 1;
    xo__profile_settle(&p, &prev);
    assert_int_equal(p.untrusted_runs, XO_UNTRUSTED_MAX - 1);
    assert_int_equal(p.provisional, 1);
    prev.untrusted_runs = XO_UNTRUSTED_MAX - 1;
    xo__profile_settle(&p, &prev);
    assert_int_equal(p.untrusted_runs, XO_UNTRUSTED_MAX);
    assert_int_equal(p.provisional, 0);
}

/* A plausible profile (spread 0, a fine curve) whose streaming bandwidth is 20x too low
 * (measured while something else streamed): the program's saxpy timings contradict it,
 * so it is marked provisional at the end of the run and measured at the next one. */
static void slow_figures(xo__profile *p)
{
    p->info.mem_gbps = p->stream_gbps[0] = p->stream_gbps[1] = p->info.mem_gbps / 20;
    p->spread = 0.0;
    p->provisional = 0;
    p->untrusted_runs = 0;
}

static void timings_contradicting_the_profile_heal_next_run(void **state)
{
    (void)state;
    char path[XO_PATH_MAX];
    plant_cpu_profile("crosscheck", slow_figures, NULL, path, sizeof path);
    xo__profile planted;
    xot_assert_ok(xo__profile_read(path, &planted));
    assert_true(xo__profile_trustworthy(&planted, NULL, 0)); /* nothing in the file gives it away */

    /* run 1: reads it, runs streaming ops of 4 sizes (their first 8 calls are timed) */
    xo_context *ctx = cpu_context();
    assert_true(ctx->dev[0].profile.info.mem_gbps == planted.info.mem_gbps);
    enum { N = 1 << 19 };
    float *h = calloc(N, sizeof *h);
    assert_non_null(h);
    xo_buffer *x = xot_buffer(ctx, h, N * sizeof *h), *y = xot_buffer(ctx, h, N * sizeof *h);
    for (size_t n = N / 8; n <= N; n *= 2)
        for (int r = 0; r < 12; r++)
            xot_assert_ok(xo_saxpy(ctx, n, 1.0f, x, 0, 1, y, 0, 1));
    double m;
    int cells = xo__correction_settled(ctx->correction, 0, 16, &m);
    print_message("run 1: %d settled cells, median factor %.3f\n", cells, m);
    xo_buffer_destroy(x);
    xo_buffer_destroy(y);
    free(h);
    xo_context_destroy(ctx); /* cross-checks */
    xo__profile after;
    xot_assert_ok(xo__profile_read(path, &after));
    if (!(cells >= 3 && m < 0.25)) { /* a machine this slow at streaming says nothing here */
        assert_int_equal(after.provisional, 0);
        skip();
    }
    assert_int_equal(after.provisional, 1);
    assert_int_equal(after.untrusted_runs, 1);

    /* run 2: measures the CPU again */
    ctx = cpu_context();
    assert_true(ctx->dev[0].profile.info.mem_gbps != planted.info.mem_gbps);
    xo_context_destroy(ctx);
    xot_assert_ok(xo__profile_read(path, &after));
    assert_int_equal(after.provisional, after.untrusted_runs > 0);
}

/* A context of the CPU and the mock (model `cfg`) under XO_CALIBRATE=`calibrate`;
 * *mock: the mock's device index. */
static xo_context *mock_context(const xo_mock_config *cfg, const char *calibrate, int *mock)
{
    xo_mock_install(cfg);
    setenv("XO_PLUGINS", "cpu,mock", 1);
    setenv("XO_CALIBRATE", calibrate, 1);
    xo_context *ctx = NULL;
    xot_assert_ok(xo_context_create(&ctx));
    xot_assert_ok(xo_device_find(ctx, "mock", mock));
    return ctx;
}

/* ---- timings the launch floor dominates ------------------------------------------ */

/* A GPU-like device times its ops itself, launch overhead included (an H200's events read
 * 3-6 us for element-wise kernels the model gives 0.05 us of compute). Such timings must
 * not teach the correction (it read them as "64x slower" and marked a good profile
 * provisional every run); timings of ops whose compute is at least the launch floor do. */
static void launch_dominated_timings_teach_nothing(void **state)
{
    (void)state;
    fresh_cache("floor");
    xo_mock_config cfg = {.launch_us = 12, .gflops = 5000, .gbps = 500, .transfer_latency_us = 6,
                          .transfer_gbps = 12};
    int mock;
    xo_context *ctx = mock_context(&cfg, "off", &mock);
    xo__profile p;
    xo_mock_profile(&ctx->dev[mock].info, &p);
    xo__device_set_profile(ctx, mock, &p);
    xot_assert_ok(xo_set_device(ctx, "mock"));

    enum { SMALL = 1000, BIG = 512 };
    static float h[BIG * BIG];
    xo_buffer *x = xot_buffer(ctx, h, sizeof h), *y = xot_buffer(ctx, h, sizeof h), *z = xot_buffer(ctx, h, sizeof h);
    for (int r = 0; r < 40; r++) xot_assert_ok(xo_saxpy(ctx, SMALL, 1.0f, x, 0, 1, y, 0, 1));
    xot_assert_ok(xo_finish(ctx));
    double m;
    int cells = xo__correction_settled(ctx->correction, mock, 0, &m);
    print_message("saxpy %d on a 12 us launch: %d settled cells (factor %.3g)\n", SMALL, cells, m);
    assert_int_equal(cells, 0);

    /* 512^3 sgemm: 54 us of compute at 5 TFLOP/s, over the floor; running 2x slow */
    xo_mock_slow(2.0, 1000);
    for (int r = 0; r < 12; r++)
        xot_assert_ok(xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, BIG, BIG, BIG, 1.0f, x, 0, BIG, y, 0,
                               BIG, 0.0f, z, 0, BIG));
    xot_assert_ok(xo_finish(ctx));
    xo_mock_slow(1.0, 0);
    cells = xo__correction_settled(ctx->correction, mock, 0, &m);
    print_message("sgemm %d^3 at 2x: %d settled cells (factor %.3g)\n", BIG, cells, m);
    assert_int_equal(cells, 1);
    assert_true(m > 1.8 && m < 3.2); /* 2 x (12 + 54) / 54 = 2.4 */
    xo_buffer_destroy(x);
    xo_buffer_destroy(y);
    xo_buffer_destroy(z);
    xo_context_destroy(ctx);
    xo_mock_install(NULL);
    unsetenv("XO_CALIBRATE");
}

/* ---- a device on the host's cores --------------------------------------------- */

static void host_profiles(xo__profile *p, double other_us)
{
    /* the CPU does a 256^3 sgemm in 1000 us; the other device in other_us; operands on the host */
    memset(p, 0, 2 * sizeof *p);
    double flops = 2.0 * 256 * 256 * 256;
    for (int d = 0; d < 2; d++) {
        xo__profile *q = &p[d];
        snprintf(q->info.plugin, sizeof q->info.plugin, "%s", d ? "opencl" : "cpu");
        q->info.kind = XO_DEVICE_CPU;
        q->info.host_unified = 1;
        q->info.mem_gbps = 1e6;
        q->info.transfer_latency_us = 0;
        q->info.h2d_gbps = q->info.d2h_gbps = d ? 1e6 : 0;
        double us = d ? other_us : 1000.0;
        for (int i = 0; i < XO_CURVE_POINTS; i++)
            q->gemm_gflops[0][i] = q->gemm_gflops[1][i] = flops / (us * 1e3);
    }
}

static int placed(const xo__profile *p)
{
    xo__op_cost cost;
    size_t dims[3] = {256, 256, 256};
    xot_assert_ok(xo__describe_op("sgemm", 3, dims, 0, &cost));
    int support[2] = {XO_SUPPORT_YES, XO_SUPPORT_YES};
    xo__placement pl;
    xo__place(&(xo__place_in){.profiles = p, .ndev = 2, .cost = &cost, .support = support, .forced = -1}, &pl);
    return pl.device;
}

static void host_core_device_gets_only_clear_wins(void **state)
{
    (void)state;
    xo__profile p[2];
    host_profiles(p, 700.0); /* 0.7x the CPU's time: a near tie on shared cores */
    assert_int_equal(placed(p), 0);
    host_profiles(p, 400.0); /* clearly faster: it may have it */
    assert_int_equal(placed(p), 1);
    /* the same figures on a device of its own (a GPU) win at 0.7x */
    host_profiles(p, 700.0);
    p[1].info.kind = XO_DEVICE_GPU;
    p[1].info.host_unified = 0;
    assert_int_equal(placed(p), 1);
    /* the rule reads the identity */
    xo_device_info pocl = {.kind = XO_DEVICE_CPU, .host_unified = 1}, cpu = pocl, gpu = {.kind = XO_DEVICE_GPU};
    snprintf(pocl.plugin, sizeof pocl.plugin, "opencl");
    snprintf(cpu.plugin, sizeof cpu.plugin, "cpu");
    snprintf(gpu.plugin, sizeof gpu.plugin, "opencl");
    assert_true(xo__device_on_host_cores(&pocl));
    assert_false(xo__device_on_host_cores(&cpu));
    assert_false(xo__device_on_host_cores(&gpu));
}

/* Without a cached profile, a device on the host's cores is not measured beside the
 * program (it would take the program's cores); xo info measures it when asked. A GPU
 * is measured in the background, and XO_LOG=summary says the run overlapped it. */
static void host_core_device_measured_only_when_asked(void **state)
{
    (void)state;
    fresh_cache("asked");
    xo_mock_config cfg = {.launch_us = 5, .gflops = 50, .gbps = 50, .transfer_latency_us = 1,
                          .transfer_gbps = 50, .host_cores = 1};
    int mock;
    xo_context *ctx = mock_context(&cfg, "auto", &mock);
    assert_null(ctx->background);
    assert_int_equal(ctx->dev[mock].measure_later, 2);
    assert_true(ctx->dev[mock].profile.provisional);
    char path[XO_PATH_MAX];
    assert_true(xo__profile_path(ctx, mock, path, sizeof path));
    assert_int_equal(access(path, F_OK), -1);
    xo__background_measure_all(ctx); /* what xo info does */
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(ctx->dev[mock].measure_later, 0);
    xo_context_destroy(ctx);
    xo_mock_install(NULL);

    fresh_cache("beside");
    cfg.host_cores = 0;
    xo_mock_install(&cfg);
    setenv("XO_LOG", "summary", 1);
    xot_assert_ok(xo_context_create(&ctx));
    assert_non_null(ctx->background);
    xot_capture err;
    assert_int_equal(xot_capture_begin(&err, 2), 0);
    xo_context_destroy(ctx);
    char *e = xot_capture_end(&err);
    unsetenv("XO_LOG");
    assert_true(xot_contains(e, "overlapped a background measurement"));
    free(e);
    xo_mock_install(NULL);
}

/* ---- XO_LOG=summary: an asynchronous device's costs ------------------------------ */

/* The timed and measured_us columns of `op`'s row on device `dev`. */
static int row_of(const char *text, const char *op, int dev, unsigned long long *timed, double *measured)
{
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        char name[64], plugin[32];
        int cls, d;
        unsigned long long calls;
        double predicted;
        if (sscanf(line, "%63s %d %d %31s %llu %lf %llu %lf", name, &cls, &d, plugin, &calls, &predicted, timed,
                   measured) == 8 &&
            strcmp(name, op) == 0 && d == dev)
            return 1;
    }
    return 0;
}

static void summary_shows_device_timings(void **state)
{
    (void)state;
    fresh_cache("summary");
    xo_mock_config cfg = {.launch_us = 20, .gflops = 100, .gbps = 100, .transfer_latency_us = 1, .transfer_gbps = 50};
    xo_mock_install(&cfg);
    setenv("XO_PLUGINS", "cpu,mock", 1);
    setenv("XO_CALIBRATE", "off", 1);
    setenv("XO_LOG", "summary", 1);
    xo_context *ctx = NULL;
    xot_assert_ok(xo_context_create(&ctx));
    int mock;
    xot_assert_ok(xo_device_find(ctx, "mock", &mock));
    enum { N = 64, CALLS = 40 };
    float h[N * N];
    xot_fill_f(h, N * N, 1, -1, 1);
    xo_buffer *a = xot_buffer(ctx, h, sizeof h), *c = xot_buffer(ctx, NULL, sizeof h);
    xot_assert_ok(xo_set_device(ctx, "mock"));
    for (int i = 0; i < CALLS; i++) /* past its learning calls too: every call is shown */
        xot_assert_ok(xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, N, N, N, 1.0f, a, 0, N, a, 0, N, 0.0f,
                               c, 0, N));
    xo_buffer_destroy(a);
    xo_buffer_destroy(c);
    xot_capture err;
    assert_int_equal(xot_capture_begin(&err, 2), 0);
    xo_context_destroy(ctx);
    char *e = xot_capture_end(&err);
    unsetenv("XO_LOG");
    unsigned long long timed = 0;
    double measured = 0;
    assert_true(row_of(e, "sgemm", mock, &timed, &measured));
    /* every call's device time arrives (the mock reports each): its modelled time */
    assert_int_equal(timed, CALLS);
    double want = CALLS * xo_mock_op_us(&(xo_op_desc){.kind = XO_OP_GEMM, .dtype = XO_F32, .m = N, .n = N, .k = N});
    assert_true(fabs(measured - want) < 0.05 * want);
    free(e);
    xo_mock_install(NULL);
}

int main(void)
{
    const char *dir = getenv("XO_CACHE_DIR");
    snprintf(base_dir, sizeof base_dir, "%s", dir ? dir : "trust-cache");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(busy_profile_is_measured_again),
        cmocka_unit_test(collapsing_curve_is_measured_again),
        cmocka_unit_test(untrusted_profile_kept_after_the_cap),
        cmocka_unit_test(timings_contradicting_the_profile_heal_next_run),
        cmocka_unit_test(launch_dominated_timings_teach_nothing),
        cmocka_unit_test(host_core_device_gets_only_clear_wins),
        cmocka_unit_test(host_core_device_measured_only_when_asked),
        cmocka_unit_test(summary_shows_device_timings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
