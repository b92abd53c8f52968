/* Two call-level robustness cases:
 *  - an op that fails on its device and then on the fallback device too reports both
 *    reasons, each whole, and nothing of an older message (the reason was once formatted
 *    into the very buffer it was read from);
 *  - gemm with k = 0 ignores A's leading dimension (A is empty), however large, on every
 *    device: C = beta C, never XO_ERR_DEVICE from a device's 32-bit check.
 *
 * ctest runs it with XO_PLUGINS=cpu,mock (plus OpenCL where compiled in). */
#include "xo_test.h"
#include "mock_plugin.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000

static const xo_mock_config mock_cfg = {
    .launch_us = 5, .gflops = 100, .gbps = 100, .transfer_latency_us = 1, .transfer_gbps = 50};

/* Launches fail on the mock (forced) and on the CPU: the message names both failures. */
static void both_failures_named(void **state)
{
    (void)state;
    xo_mock_install(&mock_cfg);
    setenv("XO_FAULTS", "mock.launch@*,cpu.launch@*", 1);
    xo_context *ctx;
    xot_assert_ok(xo_context_create(&ctx));
    unsetenv("XO_FAULTS");
    int mock;
    xot_assert_ok(xo_device_find(ctx, "mock", &mock));
    xot_assert_ok(xo_set_device(ctx, "mock"));
    float hx[N], hy[N];
    xot_fill_f(hx, N, 1, -1, 1);
    xot_fill_f(hy, N, 2, -1, 1);
    xo_buffer *x = xot_buffer(ctx, hx, sizeof hx), *y = xot_buffer(ctx, hy, sizeof hy);
    /* An older message on this thread whose fragments must not show. */
    xot_assert_status(xo_saxpy(ctx, N, 1.0f, x, 0, 0, y, 0, 1), XO_ERR_INVALID_ARGUMENT);
    char old[1024];
    snprintf(old, sizeof old, "%s", xo_last_error());
    assert_true(strlen(old) > 20);

    xot_assert_status(xo_saxpy(ctx, N, 2.0f, x, 0, 1, y, 0, 1), XO_ERR_DEVICE);
    const char *msg = xo_last_error();
    print_message("message: %s\n", msg);
    assert_true(xot_contains(msg, "xo_saxpy"));
    char first[128];
    snprintf(first, sizeof first, "launch on device %d (mock) failed (XO_FAULTS)", mock);
    assert_true(xot_contains(msg, first)); /* the first reason */
    assert_true(xot_contains(msg, "launch on device 0 (cpu) failed (XO_FAULTS)"));  /* the second */
    assert_false(xot_contains(msg, "incx")); /* the older message (incx = 0) left nothing */
    float *got = xot_read_all(y);
    xot_assert_close_f(got, hy, N, "y unchanged after an op that failed everywhere");
    free(got);
    xo_buffer_destroy(x);
    xo_buffer_destroy(y);
    xo_context_destroy(ctx);
    xo_mock_install(NULL);
}

/* C (m x n) = A (m x 0) B (0 x n) + beta C with lda far past INT_MAX, in both layouts
 * where lda is A's row (or column) stride, on device `dev`. */
static void gemm_k0_on(xo_context *ctx, int dev, int f64)
{
    char label[160];
    xo_device_info info;
    if (xot_force_device(ctx, dev, "gemm k=0", &info, label, sizeof label))
        return;
    enum { M = 5, NC = 3 };
    const size_t huge = (size_t)INT_MAX + 7;
    const double beta = 0.5;
    for (int lay = 0; lay < 2; lay++) {
        xo_layout layout = lay ? XO_COL_MAJOR : XO_ROW_MAJOR;
        /* Row-major A (m x k) no-trans strides rows by lda; column-major A^T (k x m) too. */
        xo_transpose ta = lay ? XO_TRANS : XO_NO_TRANS;
        size_t es = f64 ? sizeof(double) : sizeof(float);
        double hc[M * NC], want[M * NC];
        float hcf[M * NC], wantf[M * NC];
        for (int i = 0; i < M * NC; i++) {
            hc[i] = 1.0 + i;
            want[i] = beta * hc[i];
            hcf[i] = (float)hc[i];
            wantf[i] = (float)want[i];
        }
        xo_buffer *a = xot_buffer(ctx, NULL, 4 * es), *b = xot_buffer(ctx, NULL, 4 * es);
        xo_buffer *c = xot_buffer(ctx, f64 ? (const void *)hc : (const void *)hcf, M * NC * es);
        size_t ldc = layout == XO_ROW_MAJOR ? NC : M;
        size_t ldb = layout == XO_ROW_MAJOR ? NC : 1;
        xo_status st = f64 ? xo_dgemm(ctx, layout, ta, XO_NO_TRANS, M, NC, 0, 1.0, a, 0, huge, b, 0, ldb, beta, c, 0, ldc)
                           : xo_sgemm(ctx, layout, ta, XO_NO_TRANS, M, NC, 0, 1.0f, a, 0, huge, b, 0, ldb, (float)beta,
                                      c, 0, ldc);
        if (st != XO_OK)
            fail_msg("%s %s %s: %s: %s", label, f64 ? "dgemm" : "sgemm", lay ? "col-major" : "row-major",
                     xo_status_string(st), xo_last_error());
        void *got = xot_read_all(c);
        if (f64)
            xot_assert_close_d(got, want, M * NC, label);
        else
            xot_assert_close_f(got, wantf, M * NC, label);
        free(got);
        xo_buffer_destroy(a);
        xo_buffer_destroy(b);
        xo_buffer_destroy(c);
    }
}

static void gemm_k0_huge_lda(void **state)
{
    (void)state;
    xo_mock_install(&mock_cfg); /* XO_PLUGINS names it */
    xo_context *ctx;
    xot_assert_ok(xo_context_create(&ctx));
    for (int d = 0; d < xo_device_count(ctx); d++) {
        gemm_k0_on(ctx, d, 0);
        gemm_k0_on(ctx, d, 1);
    }
    xo_context_destroy(ctx);
    xo_mock_install(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(both_failures_named),
        cmocka_unit_test(gemm_k0_huge_lda),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
