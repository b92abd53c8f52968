/* The application's OpenBLAS thread count is the process's: its own cblas_* calls run
 * with it. A context keeps the count the application set (OPENBLAS_NUM_THREADS, or
 * openblas_set_num_threads before the first context) unless XO_THREADS asks for another,
 * and the count goes back when the last context is destroyed.
 *
 * ctest runs it twice: plain (the count set by openblas_set_num_threads) and with
 * OPENBLAS_NUM_THREADS=1 and argument "env" (the count set by the environment). */
#include "xo_test.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_from_env; /* 1: OPENBLAS_NUM_THREADS=1 set the application's count */

/* The application's count: 1, set the way this run tests. */
static void app_sets_one(void)
{
    if (!g_from_env)
        openblas_set_num_threads(1);
    assert_int_equal(openblas_get_num_threads(), 1);
}

static xo_context *create(const char *xo_threads)
{
    if (xo_threads)
        setenv("XO_THREADS", xo_threads, 1);
    else
        unsetenv("XO_THREADS");
    xo_context *ctx = NULL;
    xot_assert_ok(xo_context_create(&ctx));
    unsetenv("XO_THREADS");
    return ctx;
}

/* No XO_THREADS: the application's count holds while the context lives and after. */
static void test_keeps_application_count(void **state)
{
    (void)state;
    app_sets_one();
    xo_context *ctx = create(NULL);
    assert_int_equal(openblas_get_num_threads(), 1);
    xot_check_cpu_sgemm(ctx, 64, "sgemm beside the application's thread count");
    assert_int_equal(openblas_get_num_threads(), 1);
    xo_context_destroy(ctx);
    assert_int_equal(openblas_get_num_threads(), 1);
}

/* XO_THREADS=3 wins while contexts live; the application's count comes back when the
 * last of two goes, not before. */
static void test_xo_threads_then_restored(void **state)
{
    (void)state;
    app_sets_one();
    xo_context *first = create("3");
    assert_int_equal(openblas_get_num_threads(), 3);
    xo_context *second = create(NULL);
    assert_int_equal(openblas_get_num_threads(), 3);
    xot_check_cpu_sgemm(second, 64, "sgemm beside the application's thread count");
    xo_context_destroy(first);
    assert_int_equal(openblas_get_num_threads(), 3);
    xo_context_destroy(second);
    assert_int_equal(openblas_get_num_threads(), 1);
}

/* A count the application sets while a context lives is its own: destroying the
 * context leaves it alone. */
static void test_application_changes_meanwhile(void **state)
{
    (void)state;
    app_sets_one();
    xo_context *ctx = create("3");
    openblas_set_num_threads(2);
    xo_context_destroy(ctx);
    assert_int_equal(openblas_get_num_threads(), 2);
    openblas_set_num_threads(1);
}

int main(int argc, char **argv)
{
    g_from_env = argc > 1 && strcmp(argv[1], "env") == 0;
    if (g_from_env && openblas_get_num_threads() != 1) {
        fprintf(stderr, "test_app_threads env: run with OPENBLAS_NUM_THREADS=1\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keeps_application_count),
        cmocka_unit_test(test_xo_threads_then_restored),
        cmocka_unit_test(test_application_changes_meanwhile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
