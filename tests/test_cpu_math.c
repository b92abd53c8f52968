/* The CPU plugin's own float tanh (a rational approximation, plugins/cpu/cpu_internal.h)
 * over the whole float range, through xo_sunary on the CPU: every 4099th bit pattern of
 * each sign, plus the edges (zeros, denormals, the clamp at 7.905, infinities, NaN),
 * against double-precision tanh. The conformance suite checks random inputs to 1e-4;
 * this checks the approximation itself to 1e-6 relative (it reaches 3.9e-7), that an
 * infinity gives +-1 and that NaN stays NaN. */
#include "xo_test.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void tanh_over_float_range(void **state)
{
    (void)state;
    static const float edges[] = {0.0f, -0.0f, 1e-45f, -1e-45f, 1.17549435e-38f, 3.9e-4f, 4.1e-4f, 0.625f,
                                  7.9053f, 7.9054f, -7.9054f, 20.0f, -20.0f, 1e30f, INFINITY, -INFINITY};
    const size_t nedge = sizeof edges / sizeof *edges, step = 4099;
    size_t n = nedge + 2 * (0x7f800000u / step) + 1;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    assert_non_null(x);
    assert_non_null(y);
    size_t i = 0;
    memcpy(x, edges, sizeof edges);
    i = nedge;
    for (uint32_t b = 0; b < 0x7f800000u - step; b += step) {
        float v;
        memcpy(&v, &b, sizeof v);
        x[i++] = v;
        x[i++] = -v;
    }
    x[i++] = NAN;
    n = i;
    xo_context *ctx;
    xo_buffer *bx, *by;
    assert_int_equal(xo_context_create(&ctx), XO_OK);
    assert_int_equal(xo_set_device(ctx, "cpu"), XO_OK);
    assert_int_equal(xo_buffer_create(ctx, n * sizeof *x, &bx), XO_OK);
    assert_int_equal(xo_buffer_create(ctx, n * sizeof *x, &by), XO_OK);
    assert_int_equal(xo_buffer_write(bx, 0, x, n * sizeof *x), XO_OK);
    assert_int_equal(xo_sunary(ctx, XO_TANH, n, bx, 0, by, 0), XO_OK);
    assert_int_equal(xo_buffer_read(by, 0, y, n * sizeof *y), XO_OK);
    double worst = 0;
    size_t at = 0;
    for (size_t k = 0; k + 1 < n; k++) {
        double r = tanh((double)x[k]);
        double e = r == 0 ? fabs((double)y[k]) : fabs(((double)y[k] - r) / r);
        if (e > worst) {
            worst = e;
            at = k;
        }
    }
    if (worst > 1e-6)
        print_error("tanh(%.9g) = %.9g, relative error %.3g\n", (double)x[at], (double)y[at], worst);
    assert_true(worst <= 1e-6);
    assert_true(y[nedge - 2] == 1.0f && y[nedge - 1] == -1.0f); /* +-inf */
    assert_true(isnan(y[n - 1]));
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
    xo_context_destroy(ctx);
    free(x);
    free(y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(tanh_over_float_range)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
