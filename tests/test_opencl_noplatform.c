/* No OpenCL platform (the ICD loader pointed at an empty vendor directory through
 * OCL_ICD_VENDORS, set by tests/opencl.cmake): the context still comes up, the OpenCL
 * plugin contributes no devices, and asking for one is XO_ERR_NO_DEVICE. */
#include "xo_test.h"

#include <stdio.h>
#include <string.h>

static void test_no_platform_no_devices(void **state)
{
    (void)state;
    xo_context *ctx = NULL;
    xot_assert_ok(xo_context_create(&ctx));
    assert_true(xo_device_count(ctx) >= 1);
    for (int d = 0; d < xo_device_count(ctx); d++) {
        xo_device_info info;
        xot_assert_ok(xo_device_get_info(ctx, d, &info));
        assert_string_not_equal(info.plugin, "opencl");
    }
    int dev = -1;
    xot_assert_status(xo_device_find(ctx, "opencl", &dev), XO_ERR_NO_DEVICE);
    xot_assert_status(xo_set_device(ctx, "opencl:0"), XO_ERR_NO_DEVICE);
    /* Ops still run (on the CPU). */
    float x[4] = {-1, 2, -3, 4}, y[4];
    xo_buffer *b = xot_buffer(ctx, x, sizeof x);
    xot_assert_ok(xo_sunary(ctx, XO_RELU, 4, b, 0, b, 0));
    xot_assert_ok(xo_buffer_read(b, 0, y, sizeof y));
    assert_true(y[0] == 0 && y[1] == 2 && y[2] == 0 && y[3] == 4);
    xo_buffer_destroy(b);
    xo_context_destroy(ctx);
}

int main(void)
{
    /* A loader that ignores OCL_ICD_VENDORS still finds the platforms: nothing to test. */
    xo_context *ctx = NULL;
    if (xo_context_create(&ctx) == XO_OK) {
        int dev = -1;
        xo_status st = xo_device_find(ctx, "opencl", &dev);
        xo_context_destroy(ctx);
        if (st == XO_OK) {
            printf("the OpenCL ICD loader ignores OCL_ICD_VENDORS: skipped\n");
            return 77;
        }
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_platform_no_devices),
    };
    return cmocka_run_group_tests_name("opencl without a platform", tests, NULL, NULL);
}
