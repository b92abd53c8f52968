/* The device layer (core/device/device.c) against the mock plugin, whose calls it counts: a
 * site that XO_FAULTS fails never reaches the plugin and the op completes on the CPU
 * with its data intact; every transfer that reaches the plugin is counted once in the
 * device's stats, and nothing else is.
 *
 * ctest runs it with XO_PLUGINS=cpu,mock and XO_CALIBRATE=off. */
#include "xo_test.h"
#include "mock_plugin.h"

#include <stdlib.h>
#include <string.h>

#define N 1000

static const xo_mock_config mock_cfg = {
    .launch_us = 5, .gflops = 100, .gbps = 100, .transfer_latency_us = 1, .transfer_gbps = 50};

/* A context of the CPU and the mock with `faults` as XO_FAULTS (NULL: none), placement
 * forced to the mock, and x, y filled (y_ref: what y = 2 x + y gives). */
typedef struct fixture {
    xo_context *ctx;
    int mock;
    xo_buffer *x, *y;
    float hx[N], hy[N];
} fixture;

static void open_fixture(fixture *f, const char *faults)
{
    xo_mock_install(&mock_cfg);
    if (faults)
        setenv("XO_FAULTS", faults, 1);
    xot_assert_ok(xo_context_create(&f->ctx));
    unsetenv("XO_FAULTS");
    xot_assert_ok(xo_device_find(f->ctx, "mock", &f->mock));
    xot_assert_ok(xo_set_device(f->ctx, "mock"));
    xot_fill_f(f->hx, N, 1, -1, 1);
    xot_fill_f(f->hy, N, 2, -1, 1);
    f->x = xot_buffer(f->ctx, f->hx, sizeof f->hx);
    f->y = xot_buffer(f->ctx, f->hy, sizeof f->hy);
}

static void close_fixture(fixture *f)
{
    xo_buffer_destroy(f->x);
    xo_buffer_destroy(f->y);
    xo_context_destroy(f->ctx);
    xo_mock_install(NULL);
}

/* y = 2 x + y through crossover and on the host reference; y read back and compared. */
static void saxpy_checked(fixture *f, const char *what)
{
    xot_assert_ok(xo_saxpy(f->ctx, N, 2.0f, f->x, 0, 1, f->y, 0, 1));
    xot_ref_saxpy(N, 2.0f, f->hx, 1, f->hy, 1);
    float *got = xot_read_all(f->y);
    xot_assert_close_f(got, f->hy, N, what);
    free(got);
}

static xo_stats mock_stats(fixture *f)
{
    xo_stats s;
    xot_assert_ok(xo_finish(f->ctx));
    xot_assert_ok(xo_stats_get(f->ctx, f->mock, &s));
    return s;
}

/* The first call at `site` fails: the plugin never sees it, the op completes on the CPU
 * (counted as the mock's fallback), and the next op runs on the mock. */
static void fault_once(const char *faults, xo_mock_site site)
{
    fixture f;
    open_fixture(&f, faults);
    saxpy_checked(&f, faults);
    xo_stats s = mock_stats(&f);
    assert_int_equal(s.fallbacks, 1);
    assert_int_equal(s.ops, 0);
    assert_int_equal(xo_mock_calls(XO_MOCK_RUN), 0);
    if (site != XO_MOCK_RUN)
        assert_int_equal(xo_mock_calls(site), 0);
    saxpy_checked(&f, "after the fault");
    s = mock_stats(&f);
    assert_int_equal(s.fallbacks, 1);
    assert_int_equal(s.ops, 1);
    assert_int_equal(xo_mock_calls(XO_MOCK_RUN), 1);
    close_fixture(&f);
}

static void alloc_fault(void **state)
{
    (void)state;
    fault_once("mock.alloc@1", XO_MOCK_ALLOC);
}

static void upload_fault(void **state)
{
    (void)state;
    fault_once("mock.upload@1", XO_MOCK_UPLOAD);
}

static void launch_fault(void **state)
{
    (void)state;
    fault_once("mock.launch@1", XO_MOCK_RUN);
}

/* transfers, bytes_in and bytes_out are what reached the plugin, exactly. */
static void assert_stats_match_calls(fixture *f)
{
    xo_stats s = mock_stats(f);
    long up = xo_mock_calls(XO_MOCK_UPLOAD), down = xo_mock_calls(XO_MOCK_DOWNLOAD);
    assert_int_equal(s.transfers, (uint64_t)(up + down));
    assert_int_equal(s.bytes_in, (uint64_t)up * sizeof f->hx);
    assert_int_equal(s.bytes_out, (uint64_t)down * sizeof f->hy);
    assert_int_equal(s.ops, (uint64_t)xo_mock_calls(XO_MOCK_RUN));
}

static void transfers_counted_once(void **state)
{
    (void)state;
    fixture f;
    open_fixture(&f, NULL);
    saxpy_checked(&f, "first"); /* x and y up, y down */
    assert_int_equal(xo_mock_calls(XO_MOCK_UPLOAD), 2);
    assert_int_equal(xo_mock_calls(XO_MOCK_DOWNLOAD), 1);
    assert_stats_match_calls(&f);
    saxpy_checked(&f, "resident"); /* both current on the mock: y down only */
    assert_int_equal(xo_mock_calls(XO_MOCK_UPLOAD), 2);
    assert_int_equal(xo_mock_calls(XO_MOCK_DOWNLOAD), 2);
    for (int i = 0; i < N; i++)
        f.hx[i] = 0.5f * f.hx[i];
    xot_assert_ok(xo_buffer_write(f.x, 0, f.hx, sizeof f.hx));
    saxpy_checked(&f, "x written on the host"); /* x up again */
    assert_int_equal(xo_mock_calls(XO_MOCK_UPLOAD), 3);
    assert_stats_match_calls(&f);
    close_fixture(&f);
}

/* A failed download is retried: the read succeeds, the failed attempt never reached the
 * plugin and moved nothing. */
static void download_fault_retried(void **state)
{
    (void)state;
    fixture f;
    open_fixture(&f, "mock.download@1");
    saxpy_checked(&f, "download retried");
    assert_int_equal(xo_mock_calls(XO_MOCK_DOWNLOAD), 1);
    assert_stats_match_calls(&f);
    xo_stats s = mock_stats(&f);
    assert_int_equal(s.fallbacks, 0);
    close_fixture(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(alloc_fault),
        cmocka_unit_test(upload_fault),
        cmocka_unit_test(launch_fault),
        cmocka_unit_test(transfers_counted_once),
        cmocka_unit_test(download_fault_retried),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
