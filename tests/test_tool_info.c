/* `xo info` (bench/cmd_info.c, xo__tool_print_devices) on a host-unified device: a
 * transfer figure that is a byte count over the clock's 1 us floor (16777 GB/s for a
 * 16 MiB move that copied nothing) reads "shared memory"; a real measurement, or any
 * figure of a device with its own memory, is printed as measured.
 * The device is the mock (as a CPU OpenCL device like PoCL, then as a GPU), its profile
 * set by the test.
 *
 * ctest runs it with XO_PLUGINS=cpu,mock and XO_CALIBRATE=off. */
#include "xo_test.h"
#include "mock_plugin.h"
#include "xo_tool.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmd_info.c's subcommand reports through xo_main.c's helpers: tool_stubs.c. */

/* xo info's lines for the mock with h2d/d2h set to `gbps`, the mock a device on the host's
 * cores (host_cores = 1) or not. */
static char *info_with(int host_cores, double gbps)
{
    xo_mock_config cfg = {.launch_us = 20, .gflops = 50, .gbps = 20, .transfer_latency_us = 30,
                          .transfer_gbps = 10, .host_cores = host_cores};
    xo_mock_install(&cfg);
    xo_context *ctx;
    xot_assert_ok(xo_context_create(&ctx));
    int mock;
    xot_assert_ok(xo_device_find(ctx, "mock", &mock));
    xo__profile p;
    xo_mock_profile(&ctx->dev[mock].info, &p);
    p.info.h2d_gbps = p.info.d2h_gbps = gbps;
    xo__device_set_profile(ctx, mock, &p);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    xo__tool_print_devices(f, ctx, 0);
    fclose(f);
    xo_context_destroy(ctx);
    xo_mock_install(NULL);
    return text;
}

/* The value printed after `key` in the mock's part (the last device). */
static const char *value_of(const char *text, const char *key)
{
    const char *dev = strstr(text, "(mock");
    assert_non_null(dev);
    const char *line = strstr(dev, key);
    assert_non_null(line);
    line += strlen(key);
    while (*line == ' ')
        line++;
    return line;
}

static void a_copy_that_did_not_happen_reads_shared_memory(void **state)
{
    (void)state;
    char *text = info_with(1, 16777.2);
    printf("%s", text);
    assert_true(strncmp(value_of(text, "h2d_gbps"), "shared memory", 13) == 0);
    assert_true(strncmp(value_of(text, "d2h_gbps"), "shared memory", 13) == 0);
    assert_null(strstr(text, "16777"));
    free(text);
}

static void a_measured_figure_is_printed(void **state)
{
    (void)state;
    char *text = info_with(1, 7.25); /* host-unified, but a real copy was timed */
    assert_true(strncmp(value_of(text, "h2d_gbps"), "7.250\n", 6) == 0);
    free(text);
    text = info_with(0, 16777.2); /* a device with its own memory: what was measured */
    assert_true(strncmp(value_of(text, "h2d_gbps"), "16777.200\n", 10) == 0);
    free(text);
}

static void the_host_says_so(void **state)
{
    (void)state;
    char text[128];
    xo_device_info in = {.host_unified = 1};
    assert_string_equal(xo__tool_bandwidth_text(&in, 0, 0.0, 1, text, sizeof text), "none: the host itself");
    assert_string_equal(xo__tool_bandwidth_text(&in, 1, 16777.2, 0, text, sizeof text), "shared memory");
    assert_string_equal(xo__tool_bandwidth_text(&in, 1, 12.0, 0, text, sizeof text), "12.00");
}

/* A profile kept after XO_UNTRUSTED_MAX untrustworthy measurements stays kept: xo info
 * (and every context) reads it without measuring again, so its figures hold from call to
 * call, until xo calibrate --force. The mock is a device on the host's cores, which xo
 * info measures when its profile is not trusted. */
static void a_kept_profile_is_not_measured_again(void **state)
{
    (void)state;
    xo_mock_config cfg = {.launch_us = 20, .gflops = 50, .gbps = 20, .transfer_latency_us = 30,
                          .transfer_gbps = 10, .host_cores = 1};
    xo_mock_install(&cfg);
    xo_context *ctx;
    xot_assert_ok(xo_context_create(&ctx));
    int mock;
    xot_assert_ok(xo_device_find(ctx, "mock", &mock));
    xo__profile kept;
    xo_mock_profile(&ctx->dev[mock].info, &kept);
    kept.spread = 3.25; /* the runs disagreed... */
    kept.untrusted_runs = XO_UNTRUSTED_MAX; /* ...this often in a row: kept */
    kept.provisional = 0;
    kept.info.launch_us = 123.5;
    char path[XO_PATH_MAX];
    assert_true(xo__profile_path(ctx, mock, path, sizeof path));
    xot_assert_ok(xo__profile_write(path, &kept));
    xo_context_destroy(ctx);
    setenv("XO_CALIBRATE", "auto", 1);
    for (int call = 0; call < 2; call++) {
        xot_assert_ok(xo_context_create(&ctx));
        assert_null(ctx->background);
        for (int d = 0; d < ctx->ndev; d++)
            assert_int_equal(ctx->dev[d].measure_later, 0);
        assert_true(ctx->dev[mock].profile.info.launch_us == 123.5);
        assert_int_equal(ctx->dev[mock].profile.untrusted_runs, XO_UNTRUSTED_MAX);
        xo_context_destroy(ctx);
        xo__profile again;
        xot_assert_ok(xo__profile_read(path, &again));
        assert_true(again.info.launch_us == 123.5 && again.untrusted_runs == XO_UNTRUSTED_MAX);
    }
    setenv("XO_CALIBRATE", "off", 1);
    xo_mock_install(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_copy_that_did_not_happen_reads_shared_memory),
        cmocka_unit_test(a_measured_figure_is_printed),
        cmocka_unit_test(the_host_says_so),
        cmocka_unit_test(a_kept_profile_is_not_measured_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
