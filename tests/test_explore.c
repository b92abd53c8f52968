/* A misplacement heals, end to end, against the mock device (mock_plugin.h) under auto
 * placement:
 * - a load spike that makes the right device measure 40x slow for a few runs moves the
 *   op away; the factor it left decays (correct.c) until the op returns, within a bound
 *   derived from the constants, and stays;
 * - a slow first run of a new decision (a library's first threaded call, a kernel's
 *   first launch) is a warm-up, not learned from: the op never leaves;
 * - a context with more than 4 devices keeps its decision cache (the express path).
 * Placements and counts are asserted, never wall-clock times (the CI machine is shared).
 *
 * ctest runs it with XO_PLUGINS=cpu,mock, XO_CALIBRATE=off and XO_THREADS=1. */
#include "xo_test.h"
#include "express_count.h"
#include "mock_plugin.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 192        /* sgemm N^3: a few hundred us on one core */
#define ADVANTAGE 6  /* the mock's modelled time: the CPU's over this (launch included) */
#define LAUNCH_US 5.0

/* The constants healing rests on (core/exec/correct.c, core/place/xo_dispatch.h). */
#define DECAY_EVERY 64   /* look-ups of an unmeasured factor per decay step (sqrt) */
#define REFRESH 16       /* a cached decision over 10 us is re-evaluated 1 call in 16 */
#define FACTOR_MAX 64.0

typedef struct fixture {
    xo_context *ctx;
    int mock;
    xo_buffer *a, *b, *c;
    float ha[N * N], hb[N * N];
    double cpu_us; /* the CPU's time for the op, measured here */
} fixture;

static xo_status gemm(fixture *f)
{
    return xo_sgemm(f->ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, N, N, N, 1.0f, f->a, 0, N, f->b, 0, N, 0.0f, f->c,
                    0, N);
}

/* One op under auto placement, waited for (so the mock's timing is learned now and no
 * queue is busy at the next decision): where it ran. */
static int step(fixture *f)
{
    xot_assert_ok(gemm(f));
    xot_assert_ok(xo_finish(f->ctx));
    xo_decision d;
    xot_assert_ok(xo_last_decision(f->ctx, &d));
    return d.device;
}

static double median5(double *v)
{
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++)
            if (v[j] < v[i]) {
                double t = v[i];
                v[i] = v[j];
                v[j] = t;
            }
    return v[2];
}

/* The CPU and the mock; the CPU's time for the op measured, the mock modelled ADVANTAGE
 * times faster, both profiles telling the core so, nothing learned yet. */
static void open_fixture(fixture *f)
{
    xo_mock_config cfg = {.launch_us = LAUNCH_US, .gflops = 1, .gbps = 1000, .transfer_latency_us = 1,
                          .transfer_gbps = 50};
    xo_mock_install(&cfg);
    xot_assert_ok(xo_context_create(&f->ctx));
    xot_assert_ok(xo_device_find(f->ctx, "mock", &f->mock));
    xot_fill_f(f->ha, N * N, 1, -1, 1);
    xot_fill_f(f->hb, N * N, 2, -1, 1);
    f->a = xot_buffer(f->ctx, f->ha, sizeof f->ha);
    f->b = xot_buffer(f->ctx, f->hb, sizeof f->hb);
    f->c = xot_buffer(f->ctx, NULL, sizeof f->ha);
    xot_assert_ok(xo_set_device(f->ctx, "cpu"));
    double t[5];
    for (int i = 0; i < 7; i++) {
        double t0 = xo__now_us();
        xot_assert_ok(gemm(f));
        if (i >= 2)
            t[i - 2] = xo__now_us() - t0;
    }
    f->cpu_us = median5(t);
    if (f->cpu_us < 12 * LAUNCH_US) /* a CPU so fast that the mock's model would not fit */
        skip();
    xot_assert_ok(xo_set_device(f->ctx, "auto"));
    double flops = 2.0 * N * N * N;
    xo__profile p = *xo__device_profile(f->ctx, 0);
    for (int i = 0; i < XO_CURVE_POINTS; i++)
        p.gemm_gflops[XO_F32][i] = flops / (f->cpu_us * 1e3);
    p.info.launch_us = 0;
    p.op_launch_us[XO_OP_GEMM] = 0;
    xo__device_set_profile(f->ctx, 0, &p);
    cfg.gflops = flops / ((f->cpu_us / ADVANTAGE - LAUNCH_US) * 1e3);
    xo_mock_install(&cfg); /* the model only: the device stays */
    xo_mock_profile(&f->ctx->dev[f->mock].info, &p);
    xo__device_set_profile(f->ctx, f->mock, &p);
    xo__correction_reset(f->ctx->correction);
}

static void close_fixture(fixture *f)
{
    float *c = xot_read_all(f->c), *want = malloc(sizeof f->ha);
    assert_non_null(want);
    xot_ref_sgemm(XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, N, N, N, 1.0f, f->ha, N, f->hb, N, 0.0f, want, N);
    xot_assert_close_f(c, want, N * N, "sgemm");
    free(c);
    free(want);
    xo_buffer_destroy(f->a);
    xo_buffer_destroy(f->b);
    xo_buffer_destroy(f->c);
    xo_context_destroy(f->ctx);
    xo_mock_install(NULL);
}

/* The mock, right by ADVANTAGE, measures 40x slow for a while (a load spike): once
 * enough of its re-evaluations have measured it (three in a row restart the ring) the op
 * leaves for the CPU; the spike ends; the mock's factor, no longer measured, decays
 * until the mock is cheaper again, and the op returns and stays. */
static void spike_heals(void **state)
{
    (void)state;
    fixture f;
    open_fixture(&f);
    for (int i = 0; i < 12; i++) /* settle: each residency's first run is a warm-up */
        assert_int_equal(step(&f), f.mock);
    xo_mock_slow(40, 10 * REFRESH);
    /* Decay steps until the largest factor's square roots fall under the crossover (the
     * ratio of the CPU's compute to the mock's; with a margin for a noisy CPU time). */
    double crossover = (f.cpu_us - LAUNCH_US) / (f.cpu_us / ADVANTAGE - LAUNCH_US), factor = FACTOR_MAX;
    int steps = 0;
    while (factor >= crossover / 2) {
        factor = sqrt(factor);
        steps++;
    }
    /* Each step takes DECAY_EVERY evaluations, one per REFRESH calls of the op's cached
     * decision; then up to a refresh interval for each of its two entries (C current
     * on the host, on the mock). */
    const int bound = steps * DECAY_EVERY * REFRESH + 2 * REFRESH;
    int left = -1, back = -1, misplaced = 0, calls;
    for (calls = 0; calls < 10 * REFRESH + bound + 1000; calls++) {
        int d = step(&f);
        if (d != f.mock) {
            misplaced++;
            if (left < 0) {
                left = calls;
                xo_mock_slow(1, 0); /* the spike is over */
            }
        } else if (left >= 0 && back < 0) {
            back = calls;
        }
        if (back >= 0 && calls >= back + 1000)
            break;
    }
    printf("spike: CPU %.0f us, mock modelled %.0f us; left at call %d, back at call %d (%d calls away, bound %d = "
           "%d decay steps); %d of %d calls misplaced\n",
           f.cpu_us, f.cpu_us / ADVANTAGE, left, back, back - left, bound, steps, misplaced, calls);
    assert_true(left >= 0 && left < 10 * REFRESH); /* the spike moved it */
    assert_true(back > left);
    assert_true(back - left <= bound);
    /* and it stays: after the return, at most one refresh interval of the other entry */
    assert_true(misplaced <= back - left + 2 * REFRESH);
    close_fixture(&f);
}

/* Only the first run of each new decision is slow: warm-ups, never learned from. */
static void slow_warm_up_not_learned(void **state)
{
    (void)state;
    fixture f;
    open_fixture(&f);
    for (int i = 0; i < 40; i++) {
        /* the decision is new on the first call and on the second (C's residency
         * changed): both are warm-ups */
        if (i < 2)
            xo_mock_slow(40, 1);
        assert_int_equal(step(&f), f.mock);
    }
    xo__op_cost cost;
    xo__op_cost_init(&cost, XO_OP_GEMM, XO_F32, N, N, N);
    double factor = xo__correction_peek(f.ctx->correction, f.mock, XO_OP_GEMM, XO_F32, xo__size_class(&cost));
    printf("after two slow warm-ups: the mock's factor %.2f\n", factor);
    assert_true(factor < 2.0);
    close_fixture(&f);
}

/* The CPU and 6 mock devices: a tiny op's decision is cached and taken by the express
 * path like anywhere else. */
static void many_devices_keep_cache(void **state)
{
    (void)state;
    enum { REPS = 200, LEN = 16 };
    xo_mock_config cfg = {.launch_us = 20, .gflops = 100, .gbps = 100, .transfer_latency_us = 5,
                          .transfer_gbps = 10, .devices = 6};
    xo_mock_install(&cfg);
    xo_context *ctx;
    xot_assert_ok(xo_context_create(&ctx));
    int ndev = xo_device_count(ctx); /* 7 under XO_PLUGINS=cpu,mock */
    assert_true(ndev >= 7);
    float x[LEN], y[LEN], want[LEN];
    xot_fill_f(x, LEN, 3, -1, 1);
    xot_fill_f(y, LEN, 4, -1, 1);
    memcpy(want, y, sizeof y);
    xo_buffer *bx = xot_buffer(ctx, x, sizeof x), *by = xot_buffer(ctx, y, sizeof y);
    xot_express_count(ctx);
    for (int r = 0; r < REPS; r++) {
        xot_assert_ok(xo_saxpy(ctx, LEN, 0.25f, bx, 0, 1, by, 0, 1));
        xot_ref_saxpy(LEN, 0.25f, x, 1, want, 1);
    }
    int express = xot_express_calls[XOT_SAXPY];
    xot_express_uncount(ctx);
    xo_decision d;
    xot_assert_ok(xo_last_decision(ctx, &d));
    assert_int_equal(d.ndevices, ndev);
    assert_int_equal(d.device, 0);
    printf("%d devices: %d of %d saxpy calls through the express path\n", ndev, express, REPS);
    assert_true(express >= REPS - 8 - REPS / REFRESH);
    float *got = xot_read_all(by);
    xot_assert_close_f(got, want, LEN, "saxpy");
    free(got);
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
    xo_context_destroy(ctx);
    xo_mock_install(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spike_heals),
        cmocka_unit_test(slow_warm_up_not_learned),
        cmocka_unit_test(many_devices_keep_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
