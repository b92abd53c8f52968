/* The CPU's BLAS identity: the driver string names OpenBLAS's core and the thread count
 * (so the profile cache is keyed on them), and a core far below the CPU (run here with
 * OPENBLAS_CORETYPE=Prescott set by ctest) is warned about with the fix. */
#include "xo_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_core_in_driver_and_warning(void **state)
{
    (void)state;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2"))
        skip(); /* nothing to warn about on this CPU */
    setenv("XO_LOG", "warn", 1);
    setenv("XO_THREADS", "1", 1);
    xot_capture err;
    assert_int_equal(xot_capture_begin(&err, 2), 0);
    xo_context *ctx;
    xo_status st = xo_context_create(&ctx);
    char *e = xot_capture_end(&err);
    xot_assert_ok(st);
    xo_device_info info;
    xot_assert_ok(xo_device_get_info(ctx, 0, &info));
    assert_true(xot_contains(info.driver, "OpenBLAS"));
    assert_true(xot_contains(info.driver, "Prescott"));
    assert_true(xot_contains(info.driver, "1 thread"));
    assert_true(xot_contains(e, "Prescott"));
    assert_true(xot_contains(e, "OPENBLAS_CORETYPE="));
    free(e);
    xo_context_destroy(ctx);

    /* Another thread count is another profile: the driver string differs. */
    setenv("XO_THREADS", "2", 1);
    xot_assert_ok(xo_context_create(&ctx));
    xo_device_info two;
    xot_assert_ok(xo_device_get_info(ctx, 0, &two));
    assert_true(strcmp(info.driver, two.driver) != 0);
    xo_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_core_in_driver_and_warning)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
