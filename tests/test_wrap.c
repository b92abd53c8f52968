/* xo_buffer_wrap over memory the caller owns: ops on every device (CPU, OpenCL forced)
 * give the reference results in the caller's memory after xo_buffer_sync; aligned
 * memory is used in place by a host-unified device, unaligned memory gets a copy;
 * xo_buffer_host_written makes device copies stale; bad input is refused. */
#include "xo_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define M 37
#define N 29
#define K 41

static const char *const g_specs[] = {"cpu", "opencl"};

static xo_context *open_ctx(void)
{
    xo_context *ctx = NULL;
    xot_assert_ok(xo_context_create(&ctx));
    return ctx;
}

/* Memory at `misalign` bytes past a 128-byte boundary, from a block we free ourselves. */
static void *carve(size_t bytes, size_t misalign, void **block)
{
    *block = aligned_alloc(128, (bytes + misalign + 127) / 128 * 128);
    assert_non_null(*block);
    return (char *)*block + misalign;
}

static xo_buffer *wrap(xo_context *ctx, void *host, size_t bytes)
{
    xo_buffer *b = NULL;
    xot_assert_ok(xo_buffer_wrap(ctx, host, bytes, &b));
    assert_non_null(b);
    assert_int_equal(xo_buffer_size(b), bytes);
    return b;
}

/* gemm, gemv, axpy, dot and nrm2 over wrapped memory on `spec`, results read from the
 * caller's memory after xo_buffer_sync. */
static void run_ops_on(const char *spec, size_t misalign)
{
    xo_context *ctx = open_ctx();
    int dev = -1;
    if (xo_device_find(ctx, spec, &dev) != XO_OK) {
        xo_context_destroy(ctx);
        return; /* no such device here: the CPU part still ran */
    }
    xot_assert_ok(xo_set_device(ctx, spec));
    void *blk[5];
    float *a = carve(M * K * sizeof(float), misalign, &blk[0]);
    float *b = carve(K * N * sizeof(float), misalign, &blk[1]);
    float *c = carve(M * N * sizeof(float), misalign, &blk[2]);
    double *x = carve(N * sizeof(double), misalign, &blk[3]);
    double *out = carve(2 * sizeof(double), misalign, &blk[4]);
    xot_fill_f(a, M * K, 1, -1, 1);
    xot_fill_f(b, K * N, 2, -1, 1);
    xot_fill_f(c, M * N, 3, -1, 1);
    xot_fill_d(x, N, 4, -1, 1);
    float want[M * N];
    memcpy(want, c, sizeof want);
    xot_ref_sgemm(XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, M, N, K, 0.5f, a, K, b, N, 2.0f, want, N);
    xo_buffer *ba = wrap(ctx, a, M * K * sizeof(float)), *bb = wrap(ctx, b, K * N * sizeof(float));
    xo_buffer *bc = wrap(ctx, c, M * N * sizeof(float));
    xot_assert_ok(xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, M, N, K, 0.5f, ba, 0, K, bb, 0, N, 2.0f, bc,
                           0, N));
    xot_assert_decision(ctx, "sgemm", dev, 1);
    xot_assert_ok(xo_buffer_sync(bc));
    xot_assert_close_f(c, want, M * N, "sgemm into wrapped memory");

    /* Element offsets in ops: y[1..] = 3 x[1..] + y[1..] over the tail of x. */
    double y[N];
    xot_fill_d(y, N, 5, -1, 1);
    double ywant[N];
    memcpy(ywant, y, sizeof y);
    xot_ref_daxpy(N - 1, 3.0, x + 1, 1, ywant + 1, 1);
    xo_buffer *bx = wrap(ctx, x, N * sizeof(double)), *by = wrap(ctx, y, N * sizeof(double));
    xot_assert_ok(xo_daxpy(ctx, N - 1, 3.0, bx, 1, 1, by, 1, 1));
    xo_buffer *bo = wrap(ctx, out, 2 * sizeof(double));
    xot_assert_ok(xo_ddot(ctx, N, bx, 0, 1, by, 0, 1, bo, 1));
    xot_assert_ok(xo_dnrm2(ctx, N, bx, 0, 1, bo, 0));
    xot_assert_ok(xo_buffer_sync(by));
    xot_assert_ok(xo_buffer_sync(bo));
    xot_assert_close_d(y, ywant, N, "daxpy into wrapped memory");
    double dots[2] = {xot_ref_dnrm2(N, x, 1), xot_ref_ddot(N, x, 1, ywant, 1)};
    xot_assert_close_d(out, dots, 2, "dnrm2 and ddot into wrapped memory");

    /* xo_buffer_read still works, with byte offsets. */
    float got[2];
    xot_assert_ok(xo_buffer_read(bc, 3 * sizeof(float), got, sizeof got));
    xot_assert_close_f(got, want + 3, 2, "xo_buffer_read of a wrapped buffer at a byte offset");

    xo_buffer *all[] = {ba, bb, bc, bx, by, bo};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        xo_buffer_destroy(all[i]);
    xo_context_destroy(ctx);
    /* Destroy left the memory ours: still readable, and freeing it is no double free. */
    xot_assert_close_f(c, want, M * N, "wrapped memory after xo_buffer_destroy");
    for (int i = 0; i < 5; i++)
        free(blk[i]);
}

static void test_ops_every_device(void **state)
{
    (void)state;
    for (size_t s = 0; s < sizeof g_specs / sizeof g_specs[0]; s++) {
        run_ops_on(g_specs[s], 0); /* aligned: in place on a host-unified device */
        run_ops_on(g_specs[s], 8); /* not 128-byte aligned: a device copy */
    }
}

/* The device keeps a copy of x after an op; the caller then writes x directly. With
 * host_written the next op sees the new x; sync makes a device result visible in place. */
static void run_host_written(size_t misalign)
{
    xo_context *ctx = open_ctx();
    if (xo_set_device(ctx, "opencl") != XO_OK) {
        xo_context_destroy(ctx);
        skip();
    }
    enum { n = 4096 };
    void *bx_blk, *by_blk;
    float *x = carve(n * sizeof(float), misalign, &bx_blk), *y = carve(n * sizeof(float), misalign, &by_blk);
    xot_fill_f(x, n, 7, -1, 1);
    memset(y, 0, n * sizeof(float));
    xo_buffer *bx = wrap(ctx, x, n * sizeof(float)), *by = wrap(ctx, y, n * sizeof(float));
    xot_assert_ok(xo_saxpy(ctx, n, 1.0f, bx, 0, 1, by, 0, 1)); /* y = x, x now current on the device */
    xot_assert_ok(xo_buffer_sync(by));
    xot_assert_close_f(y, x, n, "y = x after sync");
    for (int i = 0; i < n; i++)
        x[i] = (float)i; /* a direct write */
    xot_assert_ok(xo_buffer_host_written(bx));
    memset(y, 0, n * sizeof(float));
    xot_assert_ok(xo_buffer_host_written(by));
    xot_assert_ok(xo_saxpy(ctx, n, 2.0f, bx, 0, 1, by, 0, 1));
    xot_assert_ok(xo_buffer_sync(by));
    float want[n];
    for (int i = 0; i < n; i++)
        want[i] = 2.0f * (float)i;
    xot_assert_close_f(y, want, n, "saxpy after host_written sees the caller's new x");
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
    xo_context_destroy(ctx);
    free(bx_blk);
    free(by_blk);
}

static void test_sync_and_host_written(void **state)
{
    (void)state;
    run_host_written(0);
    run_host_written(8);
}

/* xo_buffer_write into a wrapped buffer lands in the caller's memory when it returns. */
static void test_write_lands_at_once(void **state)
{
    (void)state;
    xo_context *ctx = open_ctx();
    char mem[16] = "abcdefghijklmno";
    xo_buffer *b = wrap(ctx, mem, sizeof mem);
    xot_assert_ok(xo_buffer_write(b, 2, "XY", 2));
    assert_memory_equal(mem, "abXYefghijklmno", sizeof mem);
    xo_buffer_destroy(b);
    xo_context_destroy(ctx);
}

static void test_bad_input(void **state)
{
    (void)state;
    xo_context *ctx = open_ctx();
    float mem[4];
    xo_buffer *b = (xo_buffer *)&mem; /* must be reset to NULL on failure */
    xot_assert_status(xo_buffer_wrap(ctx, NULL, 16, &b), XO_ERR_INVALID_ARGUMENT);
    assert_null(b);
    assert_true(xot_contains(xo_last_error(), "host"));
    xot_assert_status(xo_buffer_wrap(ctx, mem, 0, &b), XO_ERR_INVALID_ARGUMENT);
    assert_true(xot_contains(xo_last_error(), "bytes"));
    xot_assert_status(xo_buffer_wrap(NULL, mem, 16, &b), XO_ERR_INVALID_ARGUMENT);
    xot_assert_status(xo_buffer_wrap(ctx, mem, 16, NULL), XO_ERR_INVALID_ARGUMENT);
    xot_assert_status(xo_buffer_sync(NULL), XO_ERR_INVALID_ARGUMENT);
    xot_assert_status(xo_buffer_host_written(NULL), XO_ERR_INVALID_ARGUMENT);
    /* Access past the wrapped length is refused like any buffer's. */
    xot_assert_ok(xo_buffer_wrap(ctx, mem, sizeof mem, &b));
    xot_assert_status(xo_sscal(ctx, 5, 2.0f, b, 0, 1), XO_ERR_INVALID_ARGUMENT);
    xot_assert_status(xo_buffer_write(b, 12, mem, 8), XO_ERR_INVALID_ARGUMENT);
    xo_buffer_destroy(b);
    xo_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ops_every_device),
        cmocka_unit_test(test_sync_and_host_written),
        cmocka_unit_test(test_write_lands_at_once),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
