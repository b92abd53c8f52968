/* The bench's real programs (bench/bench_ode.c, bench/bench_rnn.c) compute what their
 * plain-CBLAS twins compute: the same losses, iteration after iteration, under auto
 * placement and with every op forced onto the OpenCL device. */
#include "xo_test.h"
#include "bench.h"

#include <math.h>
#include <stdio.h>

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

int main(void)
{
    if (xo_context_create(&g_ctx) != XO_OK) {
        fprintf(stderr, "xo_context_create: %s\n", xo_last_error());
        return 1;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_ode_auto), cmocka_unit_test(test_rnn_auto),
                                       cmocka_unit_test(test_ode_opencl), cmocka_unit_test(test_rnn_opencl)};
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    xo_context_destroy(g_ctx);
    return failed;
}
