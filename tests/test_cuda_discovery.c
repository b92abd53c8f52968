/* The CUDA plugin is compiled in; this test runs everywhere.
 *
 * Without an NVIDIA driver (libcuda.so.1) or GPU: xo_context_create succeeds, prints
 * nothing, no device belongs to the "cuda" plugin, and asking for one (xo_device_find,
 * XO_DEVICE) is XO_ERR_NO_DEVICE with a message that lists the devices that exist.
 * With a driver and GPU: every CUDA device is reported as an NVIDIA GPU running fp64,
 * and "cuda" finds the first of them. */
#include "xo_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int count_cuda(const xo_context *ctx, int *first)
{
    int n = 0;
    *first = -1;
    for (int d = 0; d < xo_device_count(ctx); d++) {
        xo_device_info info;
        xot_assert_ok(xo_device_get_info(ctx, d, &info));
        if (strcmp(info.plugin, "cuda") == 0) {
            if (n == 0) *first = d;
            n++;
        }
    }
    return n;
}

static void test_context_and_find(void **state)
{
    (void)state;
    xo_context *ctx = NULL;
    xot_assert_ok(xo_context_create(&ctx));
    assert_non_null(ctx);
    assert_true(xo_device_count(ctx) >= 1);
    xo_device_info cpu;
    xot_assert_ok(xo_device_get_info(ctx, 0, &cpu));
    assert_string_equal(cpu.plugin, "cpu");

    int first = -1;
    int n = count_cuda(ctx, &first);
    int dev = -1;
    xo_status st = xo_device_find(ctx, "cuda", &dev);
    if (n == 0) {
        assert_int_equal(st, XO_ERR_NO_DEVICE);
        /* The core's message lists the devices that exist: at least the CPU. */
        assert_true(xot_contains(xo_last_error(), "cpu"));
        assert_int_equal(xo_device_find(ctx, "cuda:0", &dev), XO_ERR_NO_DEVICE);
        assert_int_equal(xo_device_find(ctx, "CUDA", &dev), XO_ERR_NO_DEVICE);
    } else {
        xot_assert_ok(st);
        assert_int_equal(dev, first);
        for (int d = first; d < first + n; d++) {
            xo_device_info info;
            xot_assert_ok(xo_device_get_info(ctx, d, &info));
            assert_string_equal(info.plugin, "cuda");
            assert_string_equal(info.vendor, "NVIDIA");
            assert_int_equal(info.kind, XO_DEVICE_GPU);
            assert_int_equal(info.fp64, 1);
            assert_true(info.name[0] != '\0');
        }
        char spec[32];
        snprintf(spec, sizeof spec, "cuda:%d", n);
        assert_int_equal(xo_device_find(ctx, spec, &dev), XO_ERR_NO_DEVICE);
    }
    assert_int_equal(xo_device_find(ctx, "cuda:99", &dev), XO_ERR_NO_DEVICE);
    xo_context_destroy(ctx);
}

static void test_xo_device_env(void **state)
{
    (void)state;
    /* How many CUDA devices are there? */
    xo_context *probe = NULL;
    xot_assert_ok(xo_context_create(&probe));
    int first;
    int n = count_cuda(probe, &first);
    xo_context_destroy(probe);

    setenv("XO_DEVICE", "cuda", 1);
    xo_context *ctx = NULL;
    xo_status st = xo_context_create(&ctx);
    unsetenv("XO_DEVICE");
    if (n == 0) {
        assert_int_equal(st, XO_ERR_NO_DEVICE);
        assert_true(xot_contains(xo_last_error(), "cpu"));
    } else {
        xot_assert_ok(st);
    }
    xo_context_destroy(ctx);
}

/* XO_LOG off (default): discovery prints nothing, whether or not there is a GPU. */
static void test_silent_by_default(void **state)
{
    (void)state;
    unsetenv("XO_LOG");
    xot_capture out, err;
    assert_int_equal(xot_capture_begin(&out, 1), 0);
    assert_int_equal(xot_capture_begin(&err, 2), 0);
    xo_context *ctx = NULL;
    xo_status st = xo_context_create(&ctx);
    xo_context_destroy(ctx);
    char *e = xot_capture_end(&err);
    char *o = xot_capture_end(&out);
    xot_assert_ok(st);
    assert_string_equal(o, "");
    assert_string_equal(e, "");
    free(o);
    free(e);
}

/* XO_LOG=info: the plugin says what it found (or why it found nothing). */
static void test_info_log_names_cuda(void **state)
{
    (void)state;
    setenv("XO_LOG", "info", 1);
    xot_capture err;
    assert_int_equal(xot_capture_begin(&err, 2), 0);
    xo_context *ctx = NULL;
    xo_status st = xo_context_create(&ctx);
    xo_context_destroy(ctx);
    char *e = xot_capture_end(&err);
    unsetenv("XO_LOG");
    xot_assert_ok(st);
    if (!xot_contains(e, "cuda")) fprintf(stderr, "XO_LOG=info output:\n%s\n", e);
    assert_true(xot_contains(e, "cuda"));
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_context_and_find),
        cmocka_unit_test(test_xo_device_env),
        cmocka_unit_test(test_silent_by_default),
        cmocka_unit_test(test_info_log_names_cuda),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
