/* XO_LOG=summary: at xo_context_destroy one table on stderr with, per op and size
 * class, the calls per device (fast-path hits included, exactly), and the correction
 * factors in force in the format `xo explain --correction` reads; nothing on stdout. */
#include "xo_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The calls column of the row for `op` on device `dev` (0 if none). */
static unsigned long long calls_of(const char *text, const char *op, int dev)
{
    unsigned long long total = 0;
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        char name[64], plugin[32];
        int cls, d;
        unsigned long long calls;
        if (sscanf(line, "%63s %d %d %31s %llu", name, &cls, &d, plugin, &calls) == 5 && strcmp(name, op) == 0 &&
            d == dev)
            total += calls;
    }
    return total;
}

static void test_summary_counts_every_call(void **state)
{
    (void)state;
    setenv("XO_LOG", "summary", 1);
    xo_context *ctx;
    xot_assert_ok(xo_context_create(&ctx));
    enum { N = 64, SAXPY = 2500, GEMV = 700 };
    float x[N * N];
    xot_fill_f(x, N * N, 3, -1, 1);
    xo_buffer *a = xot_buffer(ctx, x, sizeof x), *v = xot_buffer(ctx, x, N * sizeof(float));
    xo_buffer *y[3];
    for (int i = 0; i < 3; i++)
        y[i] = xot_buffer(ctx, x, N * sizeof(float));
    xot_assert_ok(xo_set_device(ctx, "cpu"));
    for (int r = 0; r < SAXPY; r++) /* three buffer pairs: one entry each, hits on the fast path */
        xot_assert_ok(xo_saxpy(ctx, N, 1e-3f, v, 0, 1, y[r % 3], 0, 1));
    for (int r = 0; r < GEMV; r++)
        xot_assert_ok(xo_sgemv(ctx, XO_ROW_MAJOR, XO_NO_TRANS, N, N, 1.0f, a, 0, N, v, 0, 1, 0.0f, y[r % 3], 0, 1));
    xot_capture out, err;
    assert_int_equal(xot_capture_begin(&out, 1), 0);
    assert_int_equal(xot_capture_begin(&err, 2), 0);
    for (int i = 0; i < 3; i++)
        xo_buffer_destroy(y[i]);
    xo_buffer_destroy(a);
    xo_buffer_destroy(v);
    xo_context_destroy(ctx);
    char *e = xot_capture_end(&err), *o = xot_capture_end(&out);
    unsetenv("XO_LOG");
    assert_string_equal(o, "");
    assert_true(xot_contains(e, "crossover summary"));
    /* which calls each time covers */
    assert_true(xot_contains(e, "predicted_us: total over all `calls`; measured_us: total over the `timed` calls"));
    assert_int_equal(calls_of(e, "saxpy", 0), SAXPY);
    assert_int_equal(calls_of(e, "sgemv", 0), GEMV);
    assert_true(xot_contains(e, "corrections in force"));
    free(e);
    free(o);
}

static void test_no_summary_without_asking(void **state)
{
    (void)state;
    unsetenv("XO_LOG");
    xot_capture err;
    assert_int_equal(xot_capture_begin(&err, 2), 0);
    xo_context *ctx;
    xot_assert_ok(xo_context_create(&ctx));
    xo_context_destroy(ctx);
    char *e = xot_capture_end(&err);
    assert_false(xot_contains(e, "crossover summary"));
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_summary_counts_every_call),
                                       cmocka_unit_test(test_no_summary_without_asking)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
