/* The bench's real programs (bench/bench_ode.c, bench/bench_rnn.c) compute what their
 * plain-CBLAS twins compute: the same losses, iteration after iteration, under auto
 * placement and with every op forced onto the OpenCL device; and so do their plan forms
 * (one iteration captured, then replayed: xo bench's plan column). */
#include "xo_test.h"
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static xo_context *g_ctx;

static void assert_close(float got, float want, const char *what, int it)
{
    double tol = 2e-3 * fabs(want) + 1e-5;
    if (!(fabs(got - want) <= tol))
        fail_msg("%s, iteration %d: crossover %.7g, CBLAS %.7g", what, it, got, want);
}

static void ode_matches(const char *spec)
{
    xot_assert_ok(xo_set_device(g_ctx, spec));
    void *o = xo__bench_ode_new(g_ctx, 0), *c = xo__bench_ode_new(g_ctx, 1);
    assert_non_null(o);
    assert_non_null(c);
    for (int it = 0; it < 3; it++) {
        xot_assert_ok(xo__bench_ode_iter(g_ctx, o));
        xot_assert_ok(xo__bench_ode_cblas_iter(g_ctx, c));
        assert_true(xo__bench_ode_loss(c, 1) > 0);
        assert_close(xo__bench_ode_loss(o, 0), xo__bench_ode_loss(c, 1), "neural ODE loss", it);
    }
    xo__bench_ode_free(o, 0);
    xo__bench_ode_free(c, 1);
}

static void rnn_matches(const char *spec, size_t batch)
{
    xot_assert_ok(xo_set_device(g_ctx, spec));
    void *r = xo__bench_rnn_new(g_ctx, batch, 0), *c = xo__bench_rnn_new(g_ctx, batch, 1);
    assert_non_null(r);
    assert_non_null(c);
    for (int it = 0; it < 3; it++) {
        xot_assert_ok(xo__bench_rnn_iter(g_ctx, r));
        xot_assert_ok(xo__bench_rnn_cblas_iter(g_ctx, c));
        assert_true(xo__bench_rnn_loss(c) > 0);
        assert_close(xo__bench_rnn_loss(r), xo__bench_rnn_loss(c), "RNN loss", it);
    }
    xo__bench_rnn_free(r);
    xo__bench_rnn_free(c);
}

/* The plan forms: captured under `spec`, run `iters` times (the RNN's minibatch changes
 * every run, one of four, through the plan's recorded write), each run's loss (a recorded
 * read) against the CBLAS twin's. */
static void ode_plan_matches(const char *spec)
{
    xot_assert_ok(xo_set_device(g_ctx, spec));
    void *o = xo__bench_ode_new(g_ctx, 0), *c = xo__bench_ode_new(g_ctx, 1);
    assert_non_null(o);
    assert_non_null(c);
    xo_plan *plan = NULL;
    xot_assert_ok(xo__bench_ode_capture(g_ctx, o, &plan));
    assert_non_null(plan);
    for (int it = 0; it < 3; it++) {
        xot_assert_ok(xo__bench_ode_plan_iter(g_ctx, o));
        xot_assert_ok(xo__bench_ode_cblas_iter(g_ctx, c));
        assert_close(xo__bench_ode_loss(o, 0), xo__bench_ode_loss(c, 1), "neural ODE loss as a plan", it);
    }
    xo__bench_ode_free(o, 0); /* destroys the plan too */
    xo__bench_ode_free(c, 1);
}

static void rnn_plan_matches(const char *spec, size_t batch)
{
    xot_assert_ok(xo_set_device(g_ctx, spec));
    void *r = xo__bench_rnn_new(g_ctx, batch, 0), *c = xo__bench_rnn_new(g_ctx, batch, 1);
    assert_non_null(r);
    assert_non_null(c);
    xo_plan *plan = NULL;
    xot_assert_ok(xo__bench_rnn_capture(g_ctx, r, &plan));
    assert_non_null(plan);
    for (int it = 0; it < 6; it++) { /* more than the 4 minibatches */
        xot_assert_ok(xo__bench_rnn_plan_iter(g_ctx, r));
        xot_assert_ok(xo__bench_rnn_cblas_iter(g_ctx, c));
        assert_close(xo__bench_rnn_loss(r), xo__bench_rnn_loss(c), "RNN loss as a plan", it);
    }
    xo__bench_rnn_free(r);
    xo__bench_rnn_free(c);
}

static void test_ode_plan_auto(void **state) { (void)state; ode_plan_matches("auto"); }
static void test_rnn_plan_auto(void **state) { (void)state; rnn_plan_matches("auto", 100); }
static void test_plans_opencl(void **state)
{
    (void)state;
    int d;
    if (xo_device_find(g_ctx, "opencl", &d) != XO_OK)
        skip();
    ode_plan_matches("opencl");
    rnn_plan_matches("opencl", 100);
}

static void test_ode_auto(void **state) { (void)state; ode_matches("auto"); }
static void test_rnn_auto(void **state) { (void)state; rnn_matches("auto", 100); }
static void test_ode_opencl(void **state)
{
    (void)state;
    int d;
    if (xo_device_find(g_ctx, "opencl", &d) != XO_OK)
        skip();
    ode_matches("opencl");
}
static void test_rnn_opencl(void **state)
{
    (void)state;
    int d;
    if (xo_device_find(g_ctx, "opencl", &d) != XO_OK)
        skip();
    rnn_matches("opencl", 100);
}

/* Gradient clipping written as a user would (the norm, clip / max(norm, clip), scale_by)
 * runs on the device without a single host synchronisation: nothing comes back to the
 * host (bytes_out does not move) until the result is read. */
static void test_clip_without_host_sync(void **state)
{
    (void)state;
    int dev;
    if (xo_device_find(g_ctx, "opencl", &dev) != XO_OK)
        skip();
    xot_assert_ok(xo_set_device(g_ctx, "opencl"));
    enum { N = 4096 };
    static float g[N], want[N];
    xot_fill_f(g, N, 5, -1, 1);
    xo_buffer *grad = xot_buffer(g_ctx, g, sizeof g), *norm, *scale;
    xot_assert_ok(xo_buffer_create(g_ctx, sizeof(float), &norm));
    xot_assert_ok(xo_buffer_create(g_ctx, sizeof(float), &scale));
    xot_assert_ok(xo_scopy(g_ctx, N, grad, 0, 1, grad, 0, 1)); /* grad current on the device */
    xot_assert_ok(xo_finish(g_ctx));
    xo_stats before, after;
    xot_assert_ok(xo_stats_get(g_ctx, dev, &before));
    const float clip = 1.0f;
    xot_assert_ok(xo_snrm2(g_ctx, N, grad, 0, 1, norm, 0));
    xot_assert_ok(xo_sbinary_scalar(g_ctx, XO_MAX, 1, norm, 0, clip, scale, 0));
    xot_assert_ok(xo_sunary(g_ctx, XO_RECIPROCAL, 1, scale, 0, scale, 0));
    xot_assert_ok(xo_sbinary_scalar(g_ctx, XO_MUL, 1, scale, 0, clip, scale, 0));
    xot_assert_ok(xo_sscale_by(g_ctx, N, scale, 0, grad, 0, 1));
    xot_assert_ok(xo_finish(g_ctx));
    xot_assert_ok(xo_stats_get(g_ctx, dev, &after));
    assert_int_equal(after.bytes_out, before.bytes_out); /* no download: no host sync */
    assert_int_equal(after.ops - before.ops, 5);          /* all five ran there */
    double sq = 0;
    for (int i = 0; i < N; i++) sq += (double)g[i] * g[i];
    double f = clip / (sqrt(sq) > clip ? sqrt(sq) : clip);
    for (int i = 0; i < N; i++) want[i] = (float)(g[i] * f);
    float *got = xot_read_all(grad);
    xot_assert_close_f(got, want, N, "clipped gradient");
    free(got);
    xo_buffer_destroy(grad);
    xo_buffer_destroy(norm);
    xo_buffer_destroy(scale);
}

int main(void)
{
    if (xot_main_context(&g_ctx, NULL, NULL)) return 1;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_ode_auto), cmocka_unit_test(test_rnn_auto),
                                       cmocka_unit_test(test_ode_opencl), cmocka_unit_test(test_rnn_opencl),
                                       cmocka_unit_test(test_ode_plan_auto), cmocka_unit_test(test_rnn_plan_auto),
                                       cmocka_unit_test(test_plans_opencl),
                                       cmocka_unit_test(test_clip_without_host_sync)};
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    xo_context_destroy(g_ctx);
    return failed;
}
