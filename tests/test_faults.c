/* XO_FAULTS on the OpenCL device (skipped without one): a failed alloc, upload, launch
 * or compile makes the op complete on another device with its data intact, counted in
 * `fallbacks`, even when OpenCL is forced; a failed download is retried, and when the
 * retry fails too the read returns XO_ERR_DEVICE and changes nothing. Each case makes
 * its own context (faults are counted per context). */
#include "xo_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 2048
#define NB (N * sizeof(float))

typedef struct fx {
    xo_context *ctx;
    int ocl;
    float x[N], y[N];
    xo_buffer *bx, *by;
} fx;

static fx g;

/* A context with XO_FAULTS=faults, OpenCL forced, x and y filled. */
static void open_ctx(const char *faults)
{
    setenv("XO_FAULTS", faults, 1);
    xo_status st = xo_context_create(&g.ctx);
    unsetenv("XO_FAULTS");
    xot_assert_status(st, XO_OK);
    xot_assert_ok(xo_device_find(g.ctx, "opencl", &g.ocl));
    xot_assert_ok(xo_set_device(g.ctx, "opencl"));
    xot_fill_f(g.x, N, 11, -1, 1);
    xot_fill_f(g.y, N, 12, -1, 1);
    g.bx = xot_buffer(g.ctx, g.x, NB);
    g.by = xot_buffer(g.ctx, g.y, NB);
}

static void close_ctx(void)
{
    xo_buffer_destroy(g.bx);
    xo_buffer_destroy(g.by);
    xo_context_destroy(g.ctx);
    memset(&g, 0, sizeof g);
}

static uint64_t total_fallbacks(void)
{
    uint64_t n = 0;
    xot_assert_ok(xo_finish(g.ctx));
    for (int d = 0; d < xo_device_count(g.ctx); d++) {
        xo_stats s;
        xot_assert_ok(xo_stats_get(g.ctx, d, &s));
        n += s.fallbacks;
    }
    return n;
}

static int last_device(void)
{
    xo_decision d;
    xot_assert_ok(xo_last_decision(g.ctx, &d));
    return d.device;
}

static void check_y(const char *what)
{
    float got[N];
    xot_assert_ok(xo_buffer_read(g.by, 0, got, NB));
    xot_assert_close_f(got, g.y, N, what);
}

/* The first alloc / upload / launch on OpenCL fails: the op completes on the CPU, one
 * fallback; the next op runs on OpenCL again with the data the CPU left. */
static void fallback_once(const char *faults)
{
    open_ctx(faults);
    xot_assert_ok(xo_saxpy(g.ctx, N, 0.5f, g.bx, 0, 1, g.by, 0, 1));
    xot_ref_saxpy(N, 0.5f, g.x, 1, g.y, 1);
    assert_int_equal(last_device(), 0);
    assert_int_equal(total_fallbacks(), 1);
    xo_stats s;
    xot_assert_ok(xo_stats_get(g.ctx, g.ocl, &s));
    assert_int_equal(s.fallbacks, 1);
    check_y(faults);
    xot_assert_ok(xo_saxpy(g.ctx, N, 2.0f, g.bx, 0, 1, g.by, 0, 1));
    xot_ref_saxpy(N, 2.0f, g.x, 1, g.y, 1);
    assert_int_equal(last_device(), g.ocl);
    assert_int_equal(total_fallbacks(), 1);
    check_y(faults);
    close_ctx();
}

static void test_launch_once(void **state)
{
    (void)state;
    fallback_once("opencl.launch@1");
}

static void test_alloc_once(void **state)
{
    (void)state;
    fallback_once("opencl.alloc@1");
}

static void test_upload_once(void **state)
{
    (void)state;
    fallback_once("opencl.upload@1");
}

/* Every upload fails: everything runs on the CPU, correctly, one fallback per op. */
static void test_upload_always(void **state)
{
    (void)state;
    open_ctx("opencl.upload@*");
    float o[2], ow[2];
    xo_buffer *bo = xot_buffer(g.ctx, NULL, sizeof o);
    xot_assert_ok(xo_saxpy(g.ctx, N, -1.0f, g.bx, 0, 1, g.by, 0, 1));
    assert_int_equal(last_device(), 0);
    xot_assert_ok(xo_sunary(g.ctx, XO_SIGMOID, N, g.by, 0, g.by, 0));
    assert_int_equal(last_device(), 0);
    xot_assert_ok(xo_sdot(g.ctx, N, g.bx, 0, 1, g.by, 0, 1, bo, 1));
    assert_int_equal(last_device(), 0);
    xot_ref_saxpy(N, -1.0f, g.x, 1, g.y, 1);
    xot_ref_sunary(XO_SIGMOID, N, g.y, g.y);
    ow[0] = 0;
    ow[1] = xot_ref_sdot(N, g.x, 1, g.y, 1);
    check_y("upload@*");
    xot_assert_ok(xo_buffer_read(bo, 0, o, sizeof o));
    xot_assert_close_f(o, ow, 2, "sdot under upload@*");
    assert_int_equal(total_fallbacks(), 3);
    xo_buffer_destroy(bo);
    close_ctx();
}

/* Own kernels never compile: unary, binary, bias and reduce run on the CPU, correctly,
 * and OpenCL becomes ineligible for them. */
static void test_compile_always(void **state)
{
    (void)state;
    open_ctx("opencl.compile@*");
    float a[N], bias[64], o[1], ow[1];
    xot_fill_f(a, N, 13, -1, 1);
    xot_fill_f(bias, 64, 14, -1, 1);
    xo_buffer *ba = xot_buffer(g.ctx, a, NB), *bb = xot_buffer(g.ctx, bias, sizeof bias);
    xo_buffer *bo = xot_buffer(g.ctx, NULL, sizeof o);
    for (int round = 0; round < 2; round++) {
        const char *ops[4] = {"sunary", "sbinary", "sbias", "sreduce"};
        for (int k = 0; k < 4; k++) {
            switch (k) {
            case 0:
                xot_assert_ok(xo_sunary(g.ctx, XO_TANH, N, g.by, 0, g.by, 0));
                xot_ref_sunary(XO_TANH, N, g.y, g.y);
                break;
            case 1:
                xot_assert_ok(xo_sbinary(g.ctx, XO_SUB, N, g.bx, 0, g.by, 0, g.by, 0));
                xot_ref_sbinary(XO_SUB, N, g.x, g.y, g.y);
                break;
            case 2:
                xot_assert_ok(xo_sbias(g.ctx, N / 64, 64, ba, 0, 64, bb, 0));
                xot_ref_sbias(N / 64, 64, a, 64, bias);
                break;
            default:
                xot_assert_ok(xo_sreduce(g.ctx, XO_SUM, N, g.by, 0, bo, 0));
                ow[0] = xot_ref_sreduce(XO_SUM, N, g.y);
                break;
            }
            xo_decision d;
            xot_assert_ok(xo_last_decision(g.ctx, &d));
            /* placed off OpenCL (by cost: the CPU here, maybe another GPU elsewhere) */
            if (d.device == g.ocl || d.device < 0 || strcmp(d.op, ops[k]) != 0 ||
                (round == 1 && d.est[g.ocl].eligible)) {
                print_error("round %d %s: ran on %d (want not %d), opencl eligible=%d\n", round,
                            ops[k], d.device, g.ocl, d.est[g.ocl].eligible);
                fail();
            }
        }
    }
    check_y("unary/binary under compile@*");
    /* Forced onto OpenCL, each of the 8 ops failed there and completed on the CPU: each
     * is a fallback, counted on OpenCL (the contract: a failed compile is a fallback). */
    xo_stats os;
    xot_assert_ok(xo_stats_get(g.ctx, g.ocl, &os));
    assert_int_equal(os.fallbacks, 8);
    assert_int_equal(total_fallbacks(), 8);
    float got[N];
    xot_assert_ok(xo_buffer_read(ba, 0, got, NB));
    xot_assert_close_f(got, a, N, "sbias under compile@*");
    xot_assert_ok(xo_buffer_read(bo, 0, o, sizeof o));
    xot_assert_close_f(o, ow, 1, "sreduce under compile@*");
    xo_buffer_destroy(ba);
    xo_buffer_destroy(bb);
    xo_buffer_destroy(bo);
    close_ctx();
}

/* The first download fails and is retried: the read succeeds. */
static void test_download_once(void **state)
{
    (void)state;
    open_ctx("opencl.download@1");
    xot_assert_ok(xo_saxpy(g.ctx, N, 3.0f, g.bx, 0, 1, g.by, 0, 1));
    assert_int_equal(last_device(), g.ocl);
    xot_ref_saxpy(N, 3.0f, g.x, 1, g.y, 1);
    check_y("read after one failed download");
    assert_int_equal(total_fallbacks(), 0);
    close_ctx();
}

/* Every download fails: the read fails with XO_ERR_DEVICE naming the download, the
 * destination is untouched, and the device copy stays usable. */
static void test_download_always(void **state)
{
    (void)state;
    open_ctx("opencl.download@*");
    xot_assert_ok(xo_saxpy(g.ctx, N, 3.0f, g.bx, 0, 1, g.by, 0, 1));
    assert_int_equal(last_device(), g.ocl);
    float got[N];
    memset(got, 0x7f, sizeof got);
    xo_status st = xo_buffer_read(g.by, 0, got, NB);
    xot_assert_status(st, XO_ERR_DEVICE);
    if (!xot_contains(xo_last_error(), "download")) {
        print_error("message \"%s\" should name the download\n", xo_last_error());
        fail();
    }
    for (size_t i = 0; i < NB; i++) assert_int_equal(((unsigned char *)got)[i], 0x7f);
    /* x's host copy is current: reading it needs no download */
    xot_assert_ok(xo_buffer_read(g.bx, 0, got, NB));
    xot_assert_close_f(got, g.x, N, "x under download@*");
    /* the device copy of y is still current: ops on OpenCL go on */
    xot_assert_ok(xo_sscal(g.ctx, N, 2.0f, g.by, 0, 1));
    assert_int_equal(last_device(), g.ocl);
    assert_int_equal(xo_buffer_read(g.by, 0, got, NB), XO_ERR_DEVICE);
    close_ctx();
}

/* A zero-size dot / nrm2 / sum reads nothing: with every download failing and x current
 * only on OpenCL it still succeeds, writes 0, and counts no fallback. */
static void test_zero_size_reads_nothing(void **state)
{
    (void)state;
    open_ctx("opencl.download@*");
    xot_assert_ok(xo_sscal(g.ctx, N, 2.0f, g.bx, 0, 1));
    assert_int_equal(last_device(), g.ocl);
    float one = 5.0f, got[3];
    xo_buffer *bo = xot_buffer(g.ctx, NULL, 3 * sizeof(float));
    for (int i = 0; i < 3; i++) xot_assert_ok(xo_buffer_write(bo, i * sizeof(float), &one, sizeof one));
    xot_assert_ok(xo_sdot(g.ctx, 0, g.bx, 0, 1, g.by, 0, 1, bo, 0));
    xot_assert_ok(xo_snrm2(g.ctx, 0, g.bx, 0, 1, bo, 1));
    xot_assert_ok(xo_sreduce(g.ctx, XO_SUM, 0, g.bx, 0, bo, 2));
    xot_assert_ok(xo_buffer_read(bo, 0, got, sizeof got));
    for (int i = 0; i < 3; i++) assert_true(got[i] == 0.0f);
    assert_int_equal(total_fallbacks(), 0);
    xo_buffer_destroy(bo);
    close_ctx();
}

/* An op that fails on OpenCL and then on the CPU too is not a fallback: nothing was
 * completed elsewhere. (Faulting the CPU leaves OpenCL as the only other device.) */
static void test_failed_fallback_not_counted(void **state)
{
    (void)state;
    open_ctx("opencl.launch@*,cpu.launch@*");
    xo_status st = xo_saxpy(g.ctx, N, 0.5f, g.bx, 0, 1, g.by, 0, 1);
    xot_assert_status(st, XO_ERR_DEVICE);
    assert_int_equal(total_fallbacks(), 0);
    check_y("y unchanged after an op that failed everywhere");
    close_ctx();
}

int main(void)
{
    int skip = xot_skip_without("opencl");
    if (skip) return skip;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_launch_once),
        cmocka_unit_test(test_alloc_once),
        cmocka_unit_test(test_upload_once),
        cmocka_unit_test(test_upload_always),
        cmocka_unit_test(test_compile_always),
        cmocka_unit_test(test_download_once),
        cmocka_unit_test(test_download_always),
        cmocka_unit_test(test_zero_size_reads_nothing),
        cmocka_unit_test(test_failed_fallback_not_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
