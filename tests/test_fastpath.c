/* Repeated calls: after its first few uses an op shape's placement comes from the
 * decision cache, and a tiny op on the CPU runs through the express path (its entry
 * point's own checks, no op description in memory). These tests repeat each op enough
 * times to take those paths and check every result against the reference loops, the
 * counters exactly, the last decision, a change of residency between hits, two
 * contexts on one thread, and an output still read by a queued zero-copy op. */
#include "xo_test.h"
#include "express_count.h" /* the express path's entries, swapped for counting ones */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 40 /* well past the learning calls (8) and two refreshes (1 in 16 at most) */

static xo_context *g_ctx;
static int g_ocl = -1;

static void on(xo_context *ctx, const char *spec) { xot_assert_ok(xo_set_device(ctx, spec)); }

static uint64_t cpu_ops(xo_context *ctx)
{
    xo_stats s;
    xot_assert_ok(xo_finish(ctx));
    xot_assert_ok(xo_stats_get(ctx, 0, &s));
    return s.ops;
}

/* gemm in every layout and transpose, padded leading dimensions, offsets, beta 0 and
 * not: each call with new data, against the reference. */
static void gemm_reps(const char *spec)
{
    enum { M = 5, N = 4, K = 3, PAD = 2, OFF = 3 };
    on(g_ctx, spec);
    for (int lay = 0; lay < 2; lay++)
        for (int t = 0; t < 4; t++)
            for (int bz = 0; bz < 2; bz++) {
                xo_layout layout = lay ? XO_COL_MAJOR : XO_ROW_MAJOR;
                xo_transpose ta = t & 1 ? XO_TRANS : XO_NO_TRANS, tb = t & 2 ? XO_TRANS : XO_NO_TRANS;
                size_t ar = ta == XO_NO_TRANS ? M : K, ac = ta == XO_NO_TRANS ? K : M;
                size_t br = tb == XO_NO_TRANS ? K : N, bc = tb == XO_NO_TRANS ? N : K;
                size_t lda = (lay ? ar : ac) + PAD, ldb = (lay ? br : bc) + PAD, ldc = (lay ? M : N) + PAD;
                size_t na = OFF + xot_mat_span(layout, ar, ac, lda), nb = OFF + xot_mat_span(layout, br, bc, ldb);
                size_t nc = OFF + xot_mat_span(layout, M, N, ldc);
                float a[64], b[64], c[64], want[64];
                xo_buffer *xa = xot_buffer(g_ctx, NULL, na * 4), *xb = xot_buffer(g_ctx, NULL, nb * 4);
                xo_buffer *xc = xot_buffer(g_ctx, NULL, nc * 4);
                float beta = bz ? 0.5f : 0.0f;
                for (int r = 0; r < REPS; r++) {
                    xot_fill_f(a, na, 100 + (uint64_t)r, -1, 1);
                    xot_fill_f(b, nb, 200 + (uint64_t)r, -1, 1);
                    xot_fill_f(c, nc, 300 + (uint64_t)r, -1, 1);
                    xot_assert_ok(xo_buffer_write(xa, 0, a, na * 4));
                    xot_assert_ok(xo_buffer_write(xb, 0, b, nb * 4));
                    xot_assert_ok(xo_buffer_write(xc, 0, c, nc * 4));
                    memcpy(want, c, nc * 4);
                    xot_ref_sgemm(layout, ta, tb, M, N, K, 1.5f, a + OFF, lda, b + OFF, ldb, beta, want + OFF, ldc);
                    xot_assert_ok(xo_sgemm(g_ctx, layout, ta, tb, M, N, K, 1.5f, xa, OFF, lda, xb, OFF, ldb, beta, xc,
                                           OFF, ldc));
                    xot_assert_ok(xo_buffer_read(xc, 0, c, nc * 4));
                    xot_assert_close_f(c, want, nc, "sgemm"); /* the padding and offset too */
                }
                xo_buffer_destroy(xa);
                xo_buffer_destroy(xb);
                xo_buffer_destroy(xc);
            }
}

static void test_gemm_cpu(void **state)
{
    (void)state;
    gemm_reps("cpu");
}

static void test_gemm_auto(void **state)
{
    (void)state;
    gemm_reps("auto");
}

/* gemv with strided x and y (y's gaps must survive), axpy with strides, and ops that
 * have no express path (scal, dot, unary, bias) in double, repeated. */
static void test_vector_ops_repeated(void **state)
{
    (void)state;
    enum { M = 6, N = 3, INCX = 2, INCY = 3, LEN = 64 };
    on(g_ctx, "auto");
    for (int tr = 0; tr < 2; tr++) {
        xo_transpose ta = tr ? XO_TRANS : XO_NO_TRANS;
        size_t xn = tr ? M : N, yn = tr ? N : M;
        size_t nx = xot_span(xn, INCX), ny = 1 + xot_span(yn, INCY);
        double a[M * N], x[LEN], y[LEN], want[LEN];
        xo_buffer *xa = xot_buffer(g_ctx, NULL, sizeof a), *xx = xot_buffer(g_ctx, NULL, nx * 8);
        xo_buffer *xy = xot_buffer(g_ctx, NULL, ny * 8);
        for (int r = 0; r < REPS; r++) {
            xot_fill_d(a, M * N, 10 + (uint64_t)r, -1, 1);
            xot_fill_d(x, nx, 20 + (uint64_t)r, -1, 1);
            xot_fill_d(y, ny, 30 + (uint64_t)r, -1, 1);
            xot_assert_ok(xo_buffer_write(xa, 0, a, sizeof a));
            xot_assert_ok(xo_buffer_write(xx, 0, x, nx * 8));
            xot_assert_ok(xo_buffer_write(xy, 0, y, ny * 8));
            memcpy(want, y, ny * 8);
            xot_ref_dgemv(XO_ROW_MAJOR, ta, M, N, 0.5, a, N, x, INCX, r % 2 ? 0.0 : 2.0, want + 1, INCY);
            xot_assert_ok(xo_dgemv(g_ctx, XO_ROW_MAJOR, ta, M, N, 0.5, xa, 0, N, xx, 0, INCX, r % 2 ? 0.0 : 2.0, xy,
                                   1, INCY));
            xot_ref_daxpy(xn < yn ? xn : yn, -0.25, x, INCX, want + 1, INCY);
            xot_assert_ok(xo_daxpy(g_ctx, xn < yn ? xn : yn, -0.25, xx, 0, INCX, xy, 1, INCY));
            xot_ref_dscal(yn, 3.0, want + 1, INCY);
            xot_assert_ok(xo_dscal(g_ctx, yn, 3.0, xy, 1, INCY));
            xot_assert_ok(xo_buffer_read(xy, 0, y, ny * 8));
            xot_assert_close_d(y, want, ny, "gemv, axpy, scal");
        }
        xo_buffer_destroy(xa);
        xo_buffer_destroy(xx);
        xo_buffer_destroy(xy);
    }
    float u[LEN], v[LEN], w[LEN], out[2];
    xo_buffer *xu = xot_buffer(g_ctx, NULL, sizeof u), *xv = xot_buffer(g_ctx, NULL, sizeof v);
    xo_buffer *xo = xot_buffer(g_ctx, NULL, sizeof out);
    for (int r = 0; r < REPS; r++) {
        xot_fill_f(u, LEN, 40 + (uint64_t)r, -2, 2);
        xot_assert_ok(xo_buffer_write(xu, 0, u, sizeof u));
        xot_assert_ok(xo_sunary(g_ctx, XO_TANH, LEN, xu, 0, xv, 0));
        xot_assert_ok(xo_sdot(g_ctx, LEN, xu, 0, 1, xv, 0, 1, xo, 1));
        xot_ref_sunary(XO_TANH, LEN, u, w);
        float dot = xot_ref_sdot(LEN, u, 1, w, 1);
        xot_assert_ok(xo_buffer_read(xv, 0, v, sizeof v));
        xot_assert_ok(xo_buffer_read(xo, 0, out, sizeof out));
        xot_assert_close_f(v, w, LEN, "tanh");
        xot_assert_close_f(&out[1], &dot, 1, "dot");
    }
    xo_buffer_destroy(xu);
    xo_buffer_destroy(xv);
    xo_buffer_destroy(xo);
}

/* Every call is counted once, on the device it ran on, whichever path it took. */
static void test_counts_exact(void **state)
{
    (void)state;
    float x[16], y[16];
    xot_fill_f(x, 16, 1, -1, 1);
    xot_fill_f(y, 16, 2, -1, 1);
    xo_buffer *bx = xot_buffer(g_ctx, x, sizeof x), *by = xot_buffer(g_ctx, y, sizeof y);
    on(g_ctx, "cpu");
    xot_assert_ok(xo_stats_reset(g_ctx));
    for (int r = 0; r < 3 * REPS; r++) {
        xot_assert_ok(xo_saxpy(g_ctx, 16, 0.5f, bx, 0, 1, by, 0, 1));
        xot_ref_saxpy(16, 0.5f, x, 1, y, 1);
    }
    assert_int_equal(cpu_ops(g_ctx), 3 * REPS);
    xo_stats s;
    xot_assert_ok(xo_stats_get(g_ctx, 0, &s));
    assert_true(s.busy_us > 0);
    float got[16];
    xot_assert_ok(xo_buffer_read(by, 0, got, sizeof got));
    xot_assert_close_f(got, y, 16, "saxpy");
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
}

/* The last decision after cache hits: the op's name, where it ran, and estimates that
 * add up; another op in between replaces it. */
static void test_last_decision_after_hits(void **state)
{
    (void)state;
    float a[9] = {0}, b[9] = {0}, c[9] = {0}, x[4] = {0};
    xo_buffer *xa = xot_buffer(g_ctx, a, sizeof a), *xb = xot_buffer(g_ctx, b, sizeof b);
    xo_buffer *xc = xot_buffer(g_ctx, c, sizeof c), *xx = xot_buffer(g_ctx, x, sizeof x);
    on(g_ctx, "auto");
    for (int r = 0; r < REPS; r++) {
        xot_assert_ok(xo_sgemm(g_ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 3, 3, 3, 1.0f, xa, 0, 3, xb, 0, 3, 0.0f,
                               xc, 0, 3));
        xot_assert_decision(g_ctx, "sgemm", 0, 0);
        xo_decision d;
        xot_assert_ok(xo_last_decision(g_ctx, &d));
        assert_int_equal(d.ndevices, xo_device_count(g_ctx));
        for (int i = 0; i < d.ndevices; i++) {
            if (!d.est[i].eligible)
                continue;
            double sum = d.est[i].launch_us + d.est[i].transfer_us + d.est[i].compute_us;
            assert_true(d.est[i].total_us > 0);
            assert_true(d.est[i].total_us <= sum * 1.0001 && d.est[i].total_us >= d.est[i].compute_us);
        }
        assert_true(d.est[0].eligible);
        if (r == REPS / 2) {
            xot_assert_ok(xo_sscal(g_ctx, 4, 2.0f, xx, 0, 1));
            xot_assert_decision(g_ctx, "sscal", 0, 0);
        }
    }
    on(g_ctx, "cpu");
    for (int r = 0; r < REPS; r++) {
        xot_assert_ok(xo_sgemm(g_ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 3, 3, 3, 1.0f, xa, 0, 3, xb, 0, 3, 0.0f,
                               xc, 0, 3));
        xot_assert_decision(g_ctx, "sgemm", 0, 1); /* forced */
    }
    xo_buffer_destroy(xa);
    xo_buffer_destroy(xb);
    xo_buffer_destroy(xc);
    xo_buffer_destroy(xx);
}

/* Between cache hits the output moves to the OpenCL device (a forced call); the next
 * calls see it there and still compute from its current contents. */
static void test_residency_changes_between_hits(void **state)
{
    (void)state;
    if (g_ocl < 0)
        skip();
    float x[32], y[32], got[32];
    xot_fill_f(x, 32, 5, -1, 1);
    xot_fill_f(y, 32, 6, -1, 1);
    xo_buffer *bx = xot_buffer(g_ctx, x, sizeof x), *by = xot_buffer(g_ctx, y, sizeof y);
    char spec[32];
    xot_device_spec(g_ctx, g_ocl, spec, sizeof spec);
    for (int round = 0; round < 3; round++) {
        on(g_ctx, "auto");
        for (int r = 0; r < REPS; r++) {
            xot_assert_ok(xo_saxpy(g_ctx, 32, 0.5f, bx, 0, 1, by, 0, 1));
            xot_ref_saxpy(32, 0.5f, x, 1, y, 1);
        }
        on(g_ctx, spec);
        xot_assert_ok(xo_sscal(g_ctx, 32, -1.5f, by, 0, 1)); /* y now current only there (or shared) */
        xot_ref_sscal(32, -1.5f, y, 1);
        xot_assert_decision(g_ctx, "sscal", g_ocl, 1);
        on(g_ctx, "auto");
        for (int r = 0; r < REPS; r++) {
            xot_assert_ok(xo_saxpy(g_ctx, 32, 0.5f, bx, 0, 1, by, 0, 1));
            xot_ref_saxpy(32, 0.5f, x, 1, y, 1);
        }
        xot_assert_ok(xo_buffer_read(by, 0, got, sizeof got));
        xot_assert_close_f(got, y, 32, "saxpy after a move");
    }
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
}

/* A buffer current on the host and on a device (read there, real copies) and then
 * written on the CPU by a cached op: the device copy is stale from then on, so the next
 * device read moves it again. Alternated until the CPU write is a cache hit. */
static void test_cpu_write_after_device_read(void **state)
{
    (void)state;
    if (g_ocl < 0)
        skip();
    setenv("XO_ZERO_COPY", "off", 1);
    xo_context *ctx;
    xo_status st = xo_context_create(&ctx);
    unsetenv("XO_ZERO_COPY");
    xot_assert_ok(st);
    int ocl;
    xot_assert_ok(xo_device_find(ctx, "opencl", &ocl));
    char spec[32];
    xot_device_spec(ctx, ocl, spec, sizeof spec);
    float x[64], y[64], got;
    xot_fill_f(x, 64, 21, -1, 1);
    xot_fill_f(y, 64, 22, -1, 1);
    xo_buffer *bx = xot_buffer(ctx, x, sizeof x), *by = xot_buffer(ctx, y, sizeof y);
    xo_buffer *bo = xot_buffer(ctx, NULL, sizeof got);
    for (int r = 0; r < 3 * REPS; r++) {
        on(ctx, spec);
        xot_assert_ok(xo_sdot(ctx, 64, bx, 0, 1, by, 0, 1, bo, 0)); /* y: current here and there */
        float want = xot_ref_sdot(64, x, 1, y, 1);
        xot_assert_ok(xo_buffer_read(bo, 0, &got, sizeof got));
        xot_assert_close_f(&got, &want, 1, "sdot on the device after a CPU write");
        on(ctx, "cpu");
        xot_assert_ok(xo_saxpy(ctx, 64, 0.125f, bx, 0, 1, by, 0, 1));
        xot_ref_saxpy(64, 0.125f, x, 1, y, 1);
    }
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
    xo_buffer_destroy(bo);
    xo_context_destroy(ctx);
}

/* Two contexts used in turn on one thread: each keeps its own decisions and counters. */
static void test_two_contexts(void **state)
{
    (void)state;
    xo_context *other;
    xot_assert_ok(xo_context_create(&other));
    xo_context *ctx[2] = {g_ctx, other};
    float x[8], y[2][8], got[8];
    xot_fill_f(x, 8, 7, -1, 1);
    xo_buffer *bx[2], *by[2];
    for (int i = 0; i < 2; i++) {
        xot_fill_f(y[i], 8, 8 + (uint64_t)i, -1, 1);
        bx[i] = xot_buffer(ctx[i], x, sizeof x);
        by[i] = xot_buffer(ctx[i], y[i], sizeof y[i]);
        on(ctx[i], "cpu");
        xot_assert_ok(xo_stats_reset(ctx[i]));
    }
    for (int r = 0; r < REPS; r++)
        for (int i = 0; i < 2; i++) {
            float alpha = i ? 2.0f : -1.0f;
            xot_assert_ok(xo_saxpy(ctx[i], 8, alpha, bx[i], 0, 1, by[i], 0, 1));
            xot_ref_saxpy(8, alpha, x, 1, y[i], 1);
            xot_assert_decision(ctx[i], "saxpy", 0, 1);
        }
    for (int i = 0; i < 2; i++) {
        assert_int_equal(cpu_ops(ctx[i]), REPS);
        xot_assert_ok(xo_buffer_read(by[i], 0, got, sizeof got));
        xot_assert_close_f(got, y[i], 8, "saxpy");
        xo_buffer_destroy(bx[i]);
        xo_buffer_destroy(by[i]);
    }
    xo_context_destroy(other);
    on(g_ctx, "auto");
}

/* A zero-copy device still reading a buffer when a cached tiny op on the CPU writes it:
 * the write waits, so the device's sgemm uses the old contents. Alternated until the CPU
 * write is a cache hit (with the buffer shared and the sgemm queued each time). */
static void test_output_in_use_on_device(void **state)
{
    (void)state;
    if (g_ocl < 0)
        skip();
    enum { S = 160, ROUNDS = 14 };
    float *a = malloc(S * S * 4), *b = malloc(S * S * 4), *c = malloc(S * S * 4), *want = malloc(S * S * 4);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    assert_non_null(want);
    xot_fill_f(a, S * S, 11, -1, 1);
    xot_fill_f(b, S * S, 12, -1, 1);
    float ones[16];
    for (int i = 0; i < 16; i++)
        ones[i] = 1.0f;
    xo_buffer *xa = xot_buffer(g_ctx, a, S * S * 4), *xb = xot_buffer(g_ctx, b, S * S * 4);
    xo_buffer *xc = xot_buffer(g_ctx, NULL, S * S * 4), *xs = xot_buffer(g_ctx, ones, sizeof ones);
    char spec[32];
    xot_device_spec(g_ctx, g_ocl, spec, sizeof spec);
    for (int r = 0; r < ROUNDS; r++) {
        memset(want, 0, S * S * 4);
        xot_ref_sgemm(XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, S, S, S, 1.0f, a, S, b, S, 0.0f, want, S);
        on(g_ctx, spec);
        xot_assert_ok(xo_sgemm(g_ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, S, S, S, 1.0f, xa, 0, S, xb, 0, S, 0.0f,
                               xc, 0, S));
        on(g_ctx, "cpu");
        xot_assert_ok(xo_saxpy(g_ctx, 16, 100.0f, xs, 0, 1, xa, 0, 1)); /* while the sgemm may still read a */
        for (int i = 0; i < 16; i++)
            a[i] += 100.0f;
        xot_assert_ok(xo_buffer_read(xc, 0, c, S * S * 4));
        xot_assert_close_f(c, want, S * S, "sgemm reading a buffer the CPU then wrote");
    }
    xot_assert_ok(xo_buffer_read(xa, 0, c, S * S * 4));
    xot_assert_close_f(c, a, S * S, "the CPU's writes");
    xo_buffer_destroy(xa);
    xo_buffer_destroy(xb);
    xo_buffer_destroy(xc);
    xo_buffer_destroy(xs);
    free(a);
    free(b);
    free(c);
    free(want);
    on(g_ctx, "auto");
}

/* ---- the express path's host BLAS entries ---------------------------------------------
 * A table that counts its calls and forwards them to the CPU plugin's own, installed in
 * place of the context's: after the learning calls, the plain cases of all six entry
 * points must run through it (and compute the reference's results); with no table they
 * must still be right, through the plugin's run(). */

/* Each of the six ops REPS times on fresh data (column-major gemm with a transpose and
 * padding, strided gemv and axpy), checked against the reference every time. */
static void six_ops_reps(xo_context *ctx)
{
    enum { M = 4, N = 3, K = 5, LD = 7, INC = 2, LEN = 40 };
    float fa[LEN], fb[LEN], fc[LEN], fw[LEN];
    double da[LEN], db[LEN], dc[LEN], dw[LEN];
    xo_buffer *xa = xot_buffer(ctx, NULL, sizeof da), *xb = xot_buffer(ctx, NULL, sizeof db);
    xo_buffer *xc = xot_buffer(ctx, NULL, sizeof dc);
    for (int r = 0; r < REPS; r++) {
        for (int dbl = 0; dbl < 2; dbl++)
            for (int op = 0; op < 3; op++) {
                uint64_t seed = 1000 + 10 * (uint64_t)r + 3 * (uint64_t)dbl + (uint64_t)op;
                size_t bytes = dbl ? sizeof da : sizeof fa;
                xot_fill_f(fa, LEN, seed, -1, 1);
                xot_fill_f(fb, LEN, seed + 1, -1, 1);
                xot_fill_f(fc, LEN, seed + 2, -1, 1);
                xot_fill_d(da, LEN, seed, -1, 1);
                xot_fill_d(db, LEN, seed + 1, -1, 1);
                xot_fill_d(dc, LEN, seed + 2, -1, 1);
                xot_assert_ok(xo_buffer_write(xa, 0, dbl ? (void *)da : (void *)fa, bytes));
                xot_assert_ok(xo_buffer_write(xb, 0, dbl ? (void *)db : (void *)fb, bytes));
                xot_assert_ok(xo_buffer_write(xc, 0, dbl ? (void *)dc : (void *)fc, bytes));
                memcpy(fw, fc, sizeof fc);
                memcpy(dw, dc, sizeof dc);
                if (op == 0 && !dbl) {
                    xot_ref_sgemm(XO_COL_MAJOR, XO_TRANS, XO_NO_TRANS, M, N, K, 0.5f, fa + 1, LD, fb, LD, 2.0f, fw, LD);
                    xot_assert_ok(xo_sgemm(ctx, XO_COL_MAJOR, XO_TRANS, XO_NO_TRANS, M, N, K, 0.5f, xa, 1, LD, xb, 0,
                                           LD, 2.0f, xc, 0, LD));
                } else if (op == 0) {
                    xot_ref_dgemm(XO_COL_MAJOR, XO_TRANS, XO_NO_TRANS, M, N, K, 0.5, da + 1, LD, db, LD, 2.0, dw, LD);
                    xot_assert_ok(xo_dgemm(ctx, XO_COL_MAJOR, XO_TRANS, XO_NO_TRANS, M, N, K, 0.5, xa, 1, LD, xb, 0, LD,
                                           2.0, xc, 0, LD));
                } else if (op == 1 && !dbl) {
                    xot_ref_sgemv(XO_ROW_MAJOR, XO_NO_TRANS, M, N, -1.0f, fa, LD, fb, INC, 0.0f, fw + 1, INC);
                    xot_assert_ok(xo_sgemv(ctx, XO_ROW_MAJOR, XO_NO_TRANS, M, N, -1.0f, xa, 0, LD, xb, 0, INC, 0.0f,
                                           xc, 1, INC));
                } else if (op == 1) {
                    xot_ref_dgemv(XO_ROW_MAJOR, XO_NO_TRANS, M, N, -1.0, da, LD, db, INC, 0.0, dw + 1, INC);
                    xot_assert_ok(xo_dgemv(ctx, XO_ROW_MAJOR, XO_NO_TRANS, M, N, -1.0, xa, 0, LD, xb, 0, INC, 0.0, xc,
                                           1, INC));
                } else if (!dbl) {
                    xot_ref_saxpy(LEN / INC, 3.0f, fa, INC, fw, 1);
                    xot_assert_ok(xo_saxpy(ctx, LEN / INC, 3.0f, xa, 0, INC, xc, 0, 1));
                } else {
                    xot_ref_daxpy(LEN / INC, 3.0, da, INC, dw, 1);
                    xot_assert_ok(xo_daxpy(ctx, LEN / INC, 3.0, xa, 0, INC, xc, 0, 1));
                }
                xot_assert_ok(xo_buffer_read(xc, 0, dbl ? (void *)dc : (void *)fc, bytes));
                if (dbl)
                    xot_assert_close_d(dc, dw, LEN, "express op (double)");
                else
                    xot_assert_close_f(fc, fw, LEN, "express op (float)");
            }
    }
    xo_buffer_destroy(xa);
    xo_buffer_destroy(xb);
    xo_buffer_destroy(xc);
}

static void test_host_blas_entries(void **state)
{
    (void)state;
    const xo_host_blas *real = g_ctx->host_blas;
    assert_non_null(real); /* the CPU plugin provides all six */
    on(g_ctx, "cpu");
    xot_express_count(g_ctx);
    six_ops_reps(g_ctx);
    for (int i = 0; i < XOT_EXPRESS_ENTRIES; i++) {
        /* all but the learning calls and the refreshes, which take the full path */
        assert_true(xot_express_calls[i] <= REPS);
        assert_true(xot_express_calls[i] >= REPS - 8 - REPS / 16);
    }
    g_ctx->host_blas = NULL;
    memset(xot_express_calls, 0, sizeof xot_express_calls);
    six_ops_reps(g_ctx);
    for (int i = 0; i < XOT_EXPRESS_ENTRIES; i++)
        assert_int_equal(xot_express_calls[i], 0);
    g_ctx->host_blas = real;
    on(g_ctx, "auto");
}

/* A cached op is re-evaluated on its first 8 uses and then once per refresh interval,
 * which is 1024 uses for an op predicted under 1 us: every other call of a 4x4 sgemm
 * runs through the host BLAS entry, exactly (where the build is fast enough for the
 * prediction to be well under 1 us; otherwise within the bounds of the three intervals). */
static void test_refresh_interval(void **state)
{
    (void)state;
    enum { CALLS = 2100, INTERVAL = 1024 };
    float a[16], b[16], c[16], want[16];
    xot_fill_f(a, 16, 7, -1, 1);
    xot_fill_f(b, 16, 8, -1, 1);
    xo_buffer *xa = xot_buffer(g_ctx, a, sizeof a), *xb = xot_buffer(g_ctx, b, sizeof b);
    xo_buffer *xc = xot_buffer(g_ctx, NULL, sizeof c);
    on(g_ctx, "auto");
    xot_express_count(g_ctx);
    /* a shape no other test uses, so the entry starts fresh */
    for (int r = 0; r < CALLS; r++)
        xot_assert_ok(xo_sgemm(g_ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_TRANS, 4, 4, 4, 1.0f, xa, 0, 4, xb, 0, 4, 0.0f, xc,
                               0, 4));
    xot_express_uncount(g_ctx);
    xo_decision d;
    xot_assert_ok(xo_last_decision(g_ctx, &d));
    assert_int_equal(d.device, 0);
    int slow_nano = 8, slow_max = 8;
    for (int u = 8; u < CALLS; u++) {
        slow_nano += u % INTERVAL == 0;
        slow_max += u % 16 == 0;
    }
    if (d.est[0].total_us < 0.5) /* far under 1 us: the interval cannot have changed */
        assert_int_equal(xot_express_calls[XOT_SGEMM], CALLS - slow_nano);
    else /* a slow build (sanitizers) learned a slower CPU: some interval of the three */
        assert_true(xot_express_calls[XOT_SGEMM] >= CALLS - slow_max && xot_express_calls[XOT_SGEMM] <= CALLS - slow_nano);
    xot_ref_sgemm(XO_ROW_MAJOR, XO_NO_TRANS, XO_TRANS, 4, 4, 4, 1.0f, a, 4, b, 4, 0.0f, want, 4);
    xot_assert_ok(xo_buffer_read(xc, 0, c, sizeof c));
    xot_assert_close_f(c, want, 16, "sgemm");
    xo_buffer_destroy(xa);
    xo_buffer_destroy(xb);
    xo_buffer_destroy(xc);
}

int main(void)
{
    if (xot_main_context(&g_ctx, NULL, NULL)) return 1;
    if (xo_device_find(g_ctx, "opencl", &g_ocl) != XO_OK)
        g_ocl = -1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_cpu),
        cmocka_unit_test(test_gemm_auto),
        cmocka_unit_test(test_vector_ops_repeated),
        cmocka_unit_test(test_counts_exact),
        cmocka_unit_test(test_last_decision_after_hits),
        cmocka_unit_test(test_residency_changes_between_hits),
        cmocka_unit_test(test_cpu_write_after_device_read),
        cmocka_unit_test(test_two_contexts),
        cmocka_unit_test(test_output_in_use_on_device),
        cmocka_unit_test(test_host_blas_entries),
        cmocka_unit_test(test_refresh_interval),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    xo_context_destroy(g_ctx);
    return failed;
}
