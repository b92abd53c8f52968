/* The residency trap (issues 21 and 23) as a plan, against the mock device priced like a
 * discrete GPU (launch 12 us, transfers 12 GB/s): a small saxpy on a 32 MB buffer last
 * written on the device, recorded 16 times in one plan (a step of the placement sweep). Whole-plan placement prices the steady state (the second of two
 * simulated runs), where the buffer, once home, costs nothing to keep there: the plan
 * runs the op on the CPU from its first run, the span it touches moves home once, and the whole
 * run costs at most 1.1x the best forced device (the goal for plans).
 *
 * Costs are accounted as in test_trap.c: the move home is the mock's modelled time (paid
 * once by the plan and once by forced CPU; the host's share of it, a 32 MB copy, is the
 * same for both and too noisy on a shared machine to compare), the plan's later runs and
 * the forced-CPU calls by their measured medians; the best forced device is the better of
 * forced CPU and the device's modelled op per run.
 *
 * ctest runs it with XO_PLUGINS=cpu,mock, XO_CALIBRATE=off and XO_THREADS=1. */
#include "xo_test.h"
#include "mock_plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG (8u << 20) /* floats: a 32 MB buffer */
#define SMALL 1000
#define RUNS 600
#define OPS 16 /* the sweep's saxpy, recorded OPS times in the plan's step */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void plan_escapes_the_trap(void **state)
{
    (void)state;
    xo_mock_config cfg = {.launch_us = 12, .gflops = 2000, .gbps = 300, .transfer_latency_us = 10,
                          .transfer_gbps = 12};
    xo_mock_install(&cfg);
    xo_context *ctx;
    int mock;
    xot_assert_ok(xo_context_create(&ctx));
    xot_assert_ok(xo_device_find(ctx, "mock", &mock));
    xo__profile p;
    xo_mock_profile(&ctx->dev[mock].info, &p);
    xo__device_set_profile(ctx, mock, &p);
    double move_us = 2 * xo__d2h_us(&p, (double)SMALL * sizeof(float)); /* x and big's span */
    double mock_us = xo_mock_op_us(&(xo_op_desc){.kind = XO_OP_AXPY, .dtype = XO_F32, .n = SMALL});

    float *h = malloc((size_t)BIG * sizeof(float));
    assert_non_null(h);
    for (size_t i = 0; i < BIG; i++)
        h[i] = (float)(i % 7);
    xo_buffer *big = xot_buffer(ctx, h, (size_t)BIG * sizeof(float));
    float hx[SMALL];
    for (int i = 0; i < SMALL; i++)
        hx[i] = 1.0f;
    xo_buffer *x = xot_buffer(ctx, hx, sizeof hx);
    /* Written on the device, as a forced round of the sweep leaves them. */
    xot_assert_ok(xo_set_device(ctx, "mock"));
    xot_assert_ok(xo_sscal(ctx, BIG, 2.0f, big, 0, 1));
    xot_assert_ok(xo_sscal(ctx, SMALL, 1.0f, x, 0, 1));
    xot_assert_ok(xo_finish(ctx));
    xot_assert_ok(xo_set_device(ctx, "auto"));

    xot_assert_ok(xo_capture_begin(ctx));
    for (int k = 0; k < OPS; k++)
        xot_assert_ok(xo_saxpy(ctx, SMALL, 1.0f, x, 0, 1, big, 0, 1));
    xo_plan *plan;
    xot_assert_ok(xo_capture_end(ctx, &plan));
    char text[1024];
    xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
    print_message("%s", text);
    assert_true(xot_contains(text, "(cpu)")); /* not trapped on the device */

    xot_assert_ok(xo_stats_reset(ctx));
    double t0 = xo__now_us();
    xot_assert_ok(xo_plan_run(plan)); /* the first run brings the buffers home */
    double first = xo__now_us() - t0;
    static double wall[RUNS];
    for (int i = 0; i < RUNS; i++) {
        t0 = xo__now_us();
        xot_assert_ok(xo_plan_run(plan));
        wall[i] = xo__now_us() - t0;
    }
    xo_stats m, c;
    xot_assert_ok(xo_stats_get(ctx, mock, &m));
    xot_assert_ok(xo_stats_get(ctx, 0, &c));
    assert_int_equal(m.ops, 0);
    assert_int_equal(c.ops, (RUNS + 1) * OPS);
    /* x and the span of the big buffer the op touches moved home once (residency per span) */
    assert_int_equal(m.bytes_out, (uint64_t)(SMALL + SMALL) * sizeof(float));

    qsort(wall, RUNS, sizeof *wall, cmp_double);
    double cpu_us = wall[RUNS / 2];
    int slow = cpu_us * 4 > OPS * mock_us; /* a machine (or a sanitizer) so slow that the CPU does not win */
    if (slow)
        goto done;

    /* Forced on the CPU, eagerly, from the same start (the buffers back on the device). */
    xot_assert_ok(xo_set_device(ctx, "mock"));
    xot_assert_ok(xo_sscal(ctx, BIG, 1.0f, big, 0, 1));
    xot_assert_ok(xo_sscal(ctx, SMALL, 1.0f, x, 0, 1));
    xot_assert_ok(xo_finish(ctx));
    xot_assert_ok(xo_set_device(ctx, "cpu"));
    t0 = xo__now_us();
    for (int k = 0; k < OPS; k++)
        xot_assert_ok(xo_saxpy(ctx, SMALL, 1.0f, x, 0, 1, big, 0, 1));
    double eager_first = xo__now_us() - t0;
    for (int i = 0; i < RUNS; i++) {
        t0 = xo__now_us();
        for (int k = 0; k < OPS; k++)
            xot_assert_ok(xo_saxpy(ctx, SMALL, 1.0f, x, 0, 1, big, 0, 1));
        wall[i] = xo__now_us() - t0;
    }
    qsort(wall, RUNS, sizeof *wall, cmp_double);
    /* Both move the buffers home once, at the mock's modelled cost (the host's share of it,
     * a 32 MB copy, is the same for both and too noisy on a shared machine to compare). */
    double forced_cpu = move_us + (RUNS + 1) * wall[RUNS / 2], forced_mock = (RUNS + 1) * OPS * mock_us;
    double cost = move_us + (RUNS + 1) * cpu_us;
    double best = forced_cpu < forced_mock ? forced_cpu : forced_mock;
    printf("# plan of %d saxpy: first run %.0f us (move %.0f us modelled), then %.3f us per run; forced cpu: first "
           "%d calls %.0f us, then %.3f us; whole run %.3fx the best forced device (the device: %.1f us per run)\n",
           OPS, first, move_us, cpu_us, OPS, eager_first, wall[RUNS / 2], cost / best, OPS * mock_us);
    assert_true(cost / best <= 1.1);

done:
    xo_plan_destroy(plan);
    xo_buffer_destroy(big);
    xo_buffer_destroy(x);
    xo_context_destroy(ctx);
    xo_mock_install(NULL);
    free(h);
    if (slow)
        skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plan_escapes_the_trap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
