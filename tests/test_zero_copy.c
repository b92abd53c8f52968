/* Zero-copy on a host-unified OpenCL device (PoCL here; skipped without one): the
 * device works on the host copy itself, so nothing is moved or counted, results stay
 * right across devices, and host-side writes wait for queued device ops that still
 * read the memory. XO_ZERO_COPY=off brings real copies back. */
#include "xo_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (1 << 20) /* large enough that a queued PoCL op is still running when we return */
#define NB (N * sizeof(float))

static int g_ocl = -1;

static xo_context *open_ctx(const char *zero_copy)
{
    xo_context *ctx = NULL;
    if (zero_copy)
        setenv("XO_ZERO_COPY", zero_copy, 1);
    xo_status st = xo_context_create(&ctx);
    unsetenv("XO_ZERO_COPY");
    xot_assert_status(st, XO_OK);
    xot_assert_ok(xo_device_find(ctx, "opencl", &g_ocl));
    return ctx;
}

static xo_stats stats(xo_context *ctx, int dev)
{
    xo_stats s;
    xot_assert_ok(xo_finish(ctx));
    xot_assert_ok(xo_stats_get(ctx, dev, &s));
    return s;
}

static void check(xo_buffer *b, const float *want, const char *what)
{
    float *got = xot_read_all(b);
    xot_assert_close_f(got, want, N, what);
    free(got);
}

/* Ops alternate between the CPU and OpenCL, with host writes in between: the results
 * are right and OpenCL counts no bytes or transfers, because none happen. */
static void test_nothing_moves(void **state)
{
    (void)state;
    xo_context *ctx = open_ctx(NULL);
    float *x = malloc(NB), *y = malloc(NB);
    xot_fill_f(x, N, 1, -1, 1);
    xot_fill_f(y, N, 2, -1, 1);
    xo_buffer *bx = xot_buffer(ctx, x, NB), *by = xot_buffer(ctx, y, NB);
    xot_assert_ok(xo_stats_reset(ctx));
    for (int round = 0; round < 3; round++) {
        xot_assert_ok(xo_set_device(ctx, "opencl"));
        xot_assert_ok(xo_saxpy(ctx, N, 0.5f, bx, 0, 1, by, 0, 1));
        xot_assert_decision(ctx, "saxpy", g_ocl, 1);
        xot_ref_saxpy(N, 0.5f, x, 1, y, 1);
        xot_assert_ok(xo_set_device(ctx, "cpu"));
        xot_assert_ok(xo_sunary(ctx, XO_TANH, N, by, 0, by, 0));
        xot_ref_sunary(XO_TANH, N, y, y);
        xot_fill_f(x, N, 10 + (uint64_t)round, -1, 1);
        xot_assert_ok(xo_buffer_write(bx, 0, x, NB));
    }
    check(by, y, "y after cpu/opencl rounds with zero-copy");
    xo_stats o = stats(ctx, g_ocl);
    assert_int_equal(o.ops, 3);
    assert_int_equal(o.bytes_in, 0);
    assert_int_equal(o.bytes_out, 0);
    assert_int_equal(o.transfers, 0);
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
    free(x);
    free(y);
    xo_context_destroy(ctx);
}

/* A host write, a CPU op writing the input, or destroying it, right after an OpenCL op
 * that reads it was queued: the OpenCL op must still see the old contents. The op is a
 * 384^3 sgemm, tens of milliseconds on PoCL, so it is still running when the host acts. */
#define M 384
static void test_host_writes_wait_for_device(void **state)
{
    (void)state;
    xo_context *ctx = open_ctx(NULL);
    const size_t mb = (size_t)M * M * sizeof(float);
    float *a = malloc(mb), *c = malloc(mb), *zero = calloc((size_t)M * M, sizeof(float));
    for (int variant = 0; variant < 3; variant++) {
        xot_fill_f(a, (size_t)M * M, 20 + (uint64_t)variant, -1, 1);
        xo_buffer *ba = xot_buffer(ctx, a, mb), *bc = xot_buffer(ctx, NULL, mb);
        xot_assert_ok(xo_set_device(ctx, "opencl"));
        /* queued: C = A A reads A's memory */
        xot_assert_ok(xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, M, M, M, 1.0f, ba, 0, M, ba, 0, M, 0.0f,
                               bc, 0, M));
        if (variant == 0) { /* overwrite from the host */
            xot_assert_ok(xo_buffer_write(ba, 0, zero, mb));
        } else if (variant == 1) { /* overwrite with a CPU op */
            xot_assert_ok(xo_set_device(ctx, "cpu"));
            xot_assert_ok(xo_sscal(ctx, (size_t)M * M, 0.0f, ba, 0, 1));
        }
        xo_buffer_destroy(ba); /* variant 2: destroy right away */
        /* the reference only now: computing it first would give the device time to finish */
        xot_ref_sgemm(XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, M, M, M, 1.0f, a, M, a, M, 0.0f, c, M);
        float *got = xot_read_all(bc);
        xot_assert_close_f(got, c, (size_t)M * M,
                           variant == 0   ? "A*A (old A) after a host write to A"
                           : variant == 1 ? "A*A (old A) after a CPU op on A"
                                          : "A*A (old A) after destroying A");
        free(got);
        xo_buffer_destroy(bc);
    }
    free(a);
    free(c);
    free(zero);
    xo_context_destroy(ctx);
}

/* XO_ZERO_COPY=off: real copies, counted. */
static void test_off_copies(void **state)
{
    (void)state;
    xo_context *ctx = open_ctx("off");
    float *x = malloc(NB), *y = malloc(NB);
    xot_fill_f(x, N, 3, -1, 1);
    xot_fill_f(y, N, 4, -1, 1);
    xo_buffer *bx = xot_buffer(ctx, x, NB), *by = xot_buffer(ctx, y, NB);
    xot_assert_ok(xo_stats_reset(ctx));
    xot_assert_ok(xo_set_device(ctx, "opencl"));
    xot_assert_ok(xo_saxpy(ctx, N, 2.0f, bx, 0, 1, by, 0, 1));
    xot_ref_saxpy(N, 2.0f, x, 1, y, 1);
    check(by, y, "saxpy with XO_ZERO_COPY=off");
    xo_stats o = stats(ctx, g_ocl);
    assert_int_equal(o.bytes_in, 2 * NB);
    assert_int_equal(o.bytes_out, NB);
    assert_int_equal(o.transfers, 3);
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
    free(x);
    free(y);
    xo_context_destroy(ctx);
}

static void test_bad_value(void **state)
{
    (void)state;
    xo_context *ctx = NULL;
    setenv("XO_ZERO_COPY", "sometimes", 1);
    xo_status st = xo_context_create(&ctx);
    unsetenv("XO_ZERO_COPY");
    xot_assert_status(st, XO_ERR_INVALID_ARGUMENT);
    assert_null(ctx);
    assert_non_null(strstr(xo_last_error(), "XO_ZERO_COPY"));
}

int main(void)
{
    xo_context *ctx;
    if (xot_main_context(&ctx, NULL, NULL)) return 1;
    int ocl = -1;
    xo_device_info info;
    int ok = xo_device_find(ctx, "opencl", &ocl) == XO_OK && xo_device_get_info(ctx, ocl, &info) == XO_OK &&
             info.host_unified;
    xo_context_destroy(ctx);
    if (!ok) {
        printf("no host-unified OpenCL device: skipped\n");
        return XOT_EXIT_SKIP;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_moves),
        cmocka_unit_test(test_host_writes_wait_for_device),
        cmocka_unit_test(test_off_copies),
        cmocka_unit_test(test_bad_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
