/* Residency and transfer counters on the OpenCL device (skipped without one): data
 * moves only when a device's copy is stale, only the span an op touches (residency per
 * span, core/exec/residency.c), and every move is counted on the device side. */
#include "xo_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096
#define NB (N * sizeof(float))

static xo_context *g_ctx;
static int g_ocl;

static xo_stats stats(int dev)
{
    xo_stats s;
    xot_assert_ok(xo_finish(g_ctx));
    xot_assert_ok(xo_stats_get(g_ctx, dev, &s));
    return s;
}

static void assert_host_moves_nothing(void)
{
    xo_stats h = stats(0);
    assert_int_equal(h.bytes_in, 0);
    assert_int_equal(h.bytes_out, 0);
    assert_int_equal(h.transfers, 0);
}

static void on(const char *spec)
{
    xot_assert_ok(xo_set_device(g_ctx, spec));
}

static void test_repeat_moves_nothing(void **state)
{
    (void)state;
    float x[N], y[N], got[N];
    xot_fill_f(x, N, 1, -1, 1);
    xot_fill_f(y, N, 2, -1, 1);
    xo_buffer *bx = xot_buffer(g_ctx, x, NB), *by = xot_buffer(g_ctx, y, NB);
    on("opencl");
    xot_assert_ok(xo_stats_reset(g_ctx));
    xot_assert_ok(xo_saxpy(g_ctx, N, 0.5f, bx, 0, 1, by, 0, 1));
    xot_assert_decision(g_ctx, "saxpy", g_ocl, 1);
    xot_ref_saxpy(N, 0.5f, x, 1, y, 1);
    xo_stats first = stats(g_ocl);
    assert_int_equal(first.ops, 1);
    assert_int_equal(first.bytes_in, 2 * NB); /* both operands, whole buffers */
    assert_int_equal(first.transfers, 2);
    assert_int_equal(first.bytes_out, 0);
    for (int i = 0; i < 3; i++) {
        xot_assert_ok(xo_saxpy(g_ctx, N, 0.25f, bx, 0, 1, by, 0, 1));
        xot_ref_saxpy(N, 0.25f, x, 1, y, 1);
    }
    xot_assert_ok(xo_sscal(g_ctx, N, -2.0f, by, 0, 1));
    xot_ref_sscal(N, -2.0f, y, 1);
    xo_stats later = stats(g_ocl);
    assert_int_equal(later.ops, 5);
    assert_int_equal(later.bytes_in, first.bytes_in);
    assert_int_equal(later.transfers, first.transfers);
    assert_int_equal(later.bytes_out, 0);
    assert_host_moves_nothing();
    xot_assert_ok(xo_buffer_read(by, 0, got, NB));
    xot_assert_close_f(got, y, N, "saxpy/sscal on opencl");
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
}

static void test_host_write_moves_again(void **state)
{
    (void)state;
    float x[N], y[N], got[N], part[4] = {1, 2, 3, 4};
    xot_fill_f(x, N, 3, -1, 1);
    xot_fill_f(y, N, 4, -1, 1);
    xo_buffer *bx = xot_buffer(g_ctx, x, NB), *by = xot_buffer(g_ctx, y, NB);
    on("opencl");
    xot_assert_ok(xo_saxpy(g_ctx, N, 1.0f, bx, 0, 1, by, 0, 1));
    xot_ref_saxpy(N, 1.0f, x, 1, y, 1);
    xot_assert_ok(xo_stats_reset(g_ctx));
    /* a host write to part of x: the next op moves the whole of x, and only x */
    xot_assert_ok(xo_buffer_write(bx, 8 * sizeof(float), part, sizeof part));
    memcpy(x + 8, part, sizeof part);
    xot_assert_ok(xo_saxpy(g_ctx, N, 1.0f, bx, 0, 1, by, 0, 1));
    xot_ref_saxpy(N, 1.0f, x, 1, y, 1);
    xo_stats s = stats(g_ocl);
    assert_int_equal(s.bytes_in, NB);
    assert_int_equal(s.transfers, 1);
    assert_int_equal(s.bytes_out, 0);
    /* a host write to part of y, whose only current copy is on the device: the rest of y
     * must survive (y comes back, is patched, and goes out again) */
    xot_assert_ok(xo_buffer_write(by, 100 * sizeof(float), part, sizeof part));
    memcpy(y + 100, part, sizeof part);
    xot_assert_ok(xo_sscal(g_ctx, N, 3.0f, by, 0, 1));
    xot_ref_sscal(N, 3.0f, y, 1);
    xot_assert_ok(xo_buffer_read(by, 0, got, NB));
    xot_assert_close_f(got, y, N, "partial host writes between device ops");
    assert_host_moves_nothing();
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
}

static void test_chain_between_devices(void **state)
{
    (void)state;
    float x[N], y[N], z[N], got[N];
    xot_fill_f(x, N, 5, -1, 1);
    xot_fill_f(y, N, 6, -1, 1);
    xo_buffer *bx = xot_buffer(g_ctx, x, NB), *by = xot_buffer(g_ctx, y, NB);
    xo_buffer *bz = xot_buffer(g_ctx, NULL, NB);
    for (int round = 0; round < 2; round++) {
        on("cpu");
        xot_assert_ok(xo_saxpy(g_ctx, N, 2.0f, bx, 0, 1, by, 0, 1));
        xot_assert_decision(g_ctx, "saxpy", 0, 1);
        xot_ref_saxpy(N, 2.0f, x, 1, y, 1);
        on("opencl");
        xot_assert_ok(xo_sscal(g_ctx, N, 0.5f, by, 0, 1));
        xot_assert_decision(g_ctx, "sscal", g_ocl, 1);
        xot_ref_sscal(N, 0.5f, y, 1);
        on("cpu");
        xot_assert_ok(xo_sbinary(g_ctx, XO_ADD, N, by, 0, bx, 0, bz, 0));
        xot_assert_decision(g_ctx, "sbinary", 0, 1);
        xot_ref_sbinary(XO_ADD, N, y, x, z);
        on("opencl");
        xot_assert_ok(xo_sunary(g_ctx, XO_TANH, N, bz, 0, bz, 0));
        xot_assert_decision(g_ctx, "sunary", g_ocl, 1);
        xot_ref_sunary(XO_TANH, N, z, z);
        xot_assert_ok(xo_sbinary(g_ctx, XO_MUL, N, bz, 0, by, 0, by, 0));
        xot_ref_sbinary(XO_MUL, N, z, y, y);
    }
    xot_assert_ok(xo_buffer_read(bz, 0, got, NB));
    xot_assert_close_f(got, z, N, "z after cpu/opencl chain");
    xot_assert_ok(xo_buffer_read(by, 0, got, NB));
    xot_assert_close_f(got, y, N, "y after cpu/opencl chain");
    xot_assert_ok(xo_buffer_read(bx, 0, got, NB));
    xot_assert_close_f(got, x, N, "x after cpu/opencl chain");
    assert_host_moves_nothing();
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
    xo_buffer_destroy(bz);
}

static void test_reads(void **state)
{
    (void)state;
    float x[N], y[N], got[N];
    xot_fill_f(x, N, 7, -1, 1);
    xot_fill_f(y, N, 8, -1, 1);
    xo_buffer *bx = xot_buffer(g_ctx, x, NB), *by = xot_buffer(g_ctx, y, NB);
    on("opencl");
    xot_assert_ok(xo_saxpy(g_ctx, N, -1.0f, bx, 0, 1, by, 0, 1));
    xot_ref_saxpy(N, -1.0f, x, 1, y, 1);
    xot_assert_ok(xo_stats_reset(g_ctx));
    /* x was never written on the device: its host copy is current, reading moves nothing */
    xot_assert_ok(xo_buffer_read(bx, 0, got, NB));
    xo_stats s = stats(g_ocl);
    assert_int_equal(s.bytes_out, 0);
    assert_int_equal(s.transfers, 0);
    /* y lives only on the device: a read of part of it downloads that span only; a read
     * of the whole then downloads the two pieces still missing, and a third moves nothing */
    xot_assert_ok(xo_buffer_read(by, 4 * sizeof(float), got, 16 * sizeof(float)));
    xot_assert_close_f(got, y + 4, 16, "partial read of a device result");
    s = stats(g_ocl);
    assert_int_equal(s.bytes_out, 16 * sizeof(float));
    assert_int_equal(s.transfers, 1);
    xot_assert_ok(xo_buffer_read(by, 0, got, NB));
    xot_assert_close_f(got, y, N, "read of a device result");
    xot_assert_ok(xo_buffer_read(by, 0, got, NB));
    xo_stats again = stats(g_ocl);
    assert_int_equal(again.bytes_out, NB);
    assert_int_equal(again.transfers, 3);
    assert_int_equal(again.bytes_in, 0);
    /* the device copy stays current after the download: another op moves nothing in */
    xot_assert_ok(xo_saxpy(g_ctx, N, 1.0f, bx, 0, 1, by, 0, 1));
    again = stats(g_ocl);
    assert_int_equal(again.bytes_in, 0);
    assert_host_moves_nothing();
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
}

static void test_op_counters(void **state)
{
    (void)state;
    float x[N];
    xot_fill_f(x, N, 9, -1, 1);
    xo_buffer *bx = xot_buffer(g_ctx, x, NB), *bo = xot_buffer(g_ctx, NULL, 16);
    xot_assert_ok(xo_stats_reset(g_ctx));
    xo_stats s = stats(g_ocl);
    assert_int_equal(s.ops, 0);
    assert_int_equal(s.bytes_in, 0);
    on("opencl");
    xot_assert_ok(xo_sscal(g_ctx, N, 1.0f, bx, 0, 1));
    xot_assert_ok(xo_snrm2(g_ctx, N, bx, 0, 1, bo, 0));
    xot_assert_ok(xo_sreduce(g_ctx, XO_SUM, N, bx, 0, bo, 1));
    on("cpu");
    xot_assert_ok(xo_sscal(g_ctx, N, 1.0f, bx, 0, 1));
    xot_assert_ok(xo_sreduce(g_ctx, XO_MAX_ELEMENT, N, bx, 0, bo, 2));
    assert_int_equal(stats(g_ocl).ops, 3);
    assert_int_equal(stats(0).ops, 2);
    assert_int_equal(stats(g_ocl).fallbacks, 0);
    assert_true(stats(g_ocl).busy_us > 0);
    /* the CPU needed the device's result bx (all of it): counted as a download on the
     * device; of bo it wrote element 2, which the device never wrote, so nothing of bo
     * came back, and only elements 0 and 1 went out (residency per span) */
    assert_int_equal(stats(g_ocl).bytes_out, NB);
    assert_int_equal(stats(g_ocl).bytes_in, NB + 2 * sizeof(float));
    assert_host_moves_nothing();
    float o[4], want[4];
    xot_assert_ok(xo_buffer_read(bo, 0, o, sizeof o));
    double sum = 0, sq = 0;
    float mx = x[0];
    for (int i = 0; i < N; i++) {
        sum += x[i];
        sq += (double)x[i] * x[i];
        mx = x[i] > mx ? x[i] : mx;
    }
    want[0] = (float)sqrt(sq);
    want[1] = (float)sum;
    want[2] = mx;
    want[3] = 0;
    xot_assert_close_f(o, want, 4, "results on both devices, one buffer");
    xo_buffer_destroy(bx);
    xo_buffer_destroy(bo);
}

/* Outputs with gaps (padded ldc, incy > 1) keep the gaps' contents whichever device
 * writes them, even with beta = 0: such an output is not overwritten completely. */
static void test_strided_outputs_keep_gaps(void **state)
{
    (void)state;
    float a[9], x[3], y[5], c[7], b[6], got[7];
    for (int i = 0; i < 9; i++) a[i] = 1.0f + (float)i;
    for (int i = 0; i < 3; i++) x[i] = 0.5f * (float)(i + 1);
    for (int i = 0; i < 5; i++) y[i] = -7.0f;
    for (int i = 0; i < 6; i++) b[i] = (float)(i % 4) - 1.5f;
    for (int i = 0; i < 7; i++) c[i] = 42.0f + (float)i;
    xo_buffer *ba = xot_buffer(g_ctx, a, sizeof a), *bx = xot_buffer(g_ctx, x, sizeof x);
    xo_buffer *by = xot_buffer(g_ctx, y, sizeof y), *bb = xot_buffer(g_ctx, b, sizeof b);
    xo_buffer *bc = xot_buffer(g_ctx, c, sizeof c);

    /* gemv on OpenCL into y with incy = 2, beta = 0: y[1], y[3] keep -7 */
    on("opencl");
    xot_assert_ok(xo_sgemv(g_ctx, XO_ROW_MAJOR, XO_NO_TRANS, 3, 3, 1.0f, ba, 0, 3, bx, 0, 1, 0.0f, by, 0, 2));
    xot_assert_decision(g_ctx, "sgemv", g_ocl, 1);
    xot_ref_sgemv(XO_ROW_MAJOR, XO_NO_TRANS, 3, 3, 1.0f, a, 3, x, 1, 0.0f, y, 2);
    xot_assert_ok(xo_buffer_read(by, 0, got, sizeof y));
    xot_assert_close_f(got, y, 5, "gemv incy=2 beta=0 on opencl");

    /* gemm on OpenCL into a 2x3 C with ldc = 4, beta = 0: C[3] keeps its value */
    xot_assert_ok(xo_sgemm(g_ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 2, 3, 3, 1.0f, ba, 0, 3, ba, 0, 3, 0.0f,
                           bc, 0, 4));
    xot_ref_sgemm(XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 2, 3, 3, 1.0f, a, 3, a, 3, 0.0f, c, 4);
    xot_assert_ok(xo_buffer_read(bc, 0, got, sizeof c));
    xot_assert_close_f(got, c, 7, "gemm ldc=4 beta=0 on opencl");

    /* C current only on OpenCL (scaled there), then the same gemm forced to the CPU:
     * the CPU must see OpenCL's C[3], not its stale host copy */
    xot_assert_ok(xo_sscal(g_ctx, 7, 2.0f, bc, 0, 1));
    xot_ref_sscal(7, 2.0f, c, 1);
    on("cpu");
    xot_assert_ok(xo_sgemm(g_ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 2, 3, 2, 1.0f, bb, 0, 2, bb, 0, 3, 0.0f,
                           bc, 0, 4));
    xot_ref_sgemm(XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 2, 3, 2, 1.0f, b, 2, b, 3, 0.0f, c, 4);
    xot_assert_ok(xo_buffer_read(bc, 0, got, sizeof c));
    xot_assert_close_f(got, c, 7, "gemm ldc=4 beta=0 on cpu after opencl");

    xo_buffer_destroy(ba);
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
    xo_buffer_destroy(bb);
    xo_buffer_destroy(bc);
}

int main(void)
{
    int skip = xot_main_context(&g_ctx, "opencl", &g_ocl);
    if (skip) return skip;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repeat_moves_nothing),
        cmocka_unit_test(test_host_write_moves_again),
        cmocka_unit_test(test_chain_between_devices),
        cmocka_unit_test(test_reads),
        cmocka_unit_test(test_op_counters),
        cmocka_unit_test(test_strided_outputs_keep_gaps),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    xo_context_destroy(g_ctx);
    return failed;
}
