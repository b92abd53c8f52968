/* The OpenCL plugin's own paths for the neural-network ops that the conformance suite does not
 * reach:
 *   - gemm_bias_act with alpha == 0 runs no product: NaN and Inf in A and B never reach
 *     C, and with beta == 0 neither does NaN in C (C = act(bias));
 *   - copy and fill move bits: a NaN's payload survives a copy, -0.0 a fill.
 * Runs on device "opencl" (skipped, exit 77, when there is none); double only where the
 * device has fp64. */
#include "xo_test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static xo_context *g_ctx;
static int g_dev;
static int g_fp64;

/* A buffer holding `n` doubles as doubles (dbl) or floats. */
static xo_buffer *buffer_of(int dbl, const double *v, size_t n)
{
    if (dbl) return xot_buffer(g_ctx, v, n * sizeof(double));
    float *f = malloc(n * sizeof *f);
    for (size_t i = 0; i < n; i++) f[i] = (float)v[i];
    xo_buffer *b = xot_buffer(g_ctx, f, n * sizeof *f);
    free(f);
    return b;
}

/* C (M x N) = tanh(0 A B + beta C + bias): A all NaN, B all Inf, C NaN where beta == 0. */
static void gba_alpha0(int dbl, xo_layout lay, double beta)
{
    enum { M = 5, N = 7, K = 3 };
    const int row = lay == XO_ROW_MAJOR;
    const size_t ldc = (row ? N : M) + 2, clen = ldc * (row ? M : N), lda = row ? K : M, ldb = row ? N : K;
    double ha[M * K], hb[K * N], hbias[N], hc[(N + 2) * (M + 2)], want[(N + 2) * (M + 2)];
    for (size_t i = 0; i < M * K; i++) ha[i] = NAN;
    for (size_t i = 0; i < K * N; i++) hb[i] = INFINITY;
    for (size_t j = 0; j < N; j++) hbias[j] = 0.25 * (double)j - 1;
    for (size_t i = 0; i < clen; i++) hc[i] = beta == 0 ? NAN : 0.5 + 0.125 * (double)(i % 9);
    memcpy(want, hc, clen * sizeof(double));
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            size_t at = row ? i * ldc + j : j * ldc + i;
            want[at] = tanh((beta != 0 ? beta * hc[at] : 0) + hbias[j]);
        }
    xo_buffer *a = buffer_of(dbl, ha, M * K), *b = buffer_of(dbl, hb, K * N);
    xo_buffer *c = buffer_of(dbl, hc, clen), *bias = buffer_of(dbl, hbias, N);
    char what[64];
    snprintf(what, sizeof what, "%cgemm_bias_act alpha=0 beta=%g %s", dbl ? 'd' : 's', beta,
             row ? "row" : "col");
    if (dbl) {
        xot_assert_ok(xo_dgemm_bias_act(g_ctx, lay, XO_NO_TRANS, XO_NO_TRANS, M, N, K, 0, a, 0, lda, b, 0, ldb,
                                        beta, c, 0, ldc, bias, 0, XO_TANH));
        xot_assert_decision(g_ctx, "dgemm_bias_act", g_dev, 1);
        double *got = xot_read_all(c);
        xot_assert_close_d(got, want, clen, what);
        free(got);
    } else {
        xot_assert_ok(xo_sgemm_bias_act(g_ctx, lay, XO_NO_TRANS, XO_NO_TRANS, M, N, K, 0, a, 0, lda, b, 0, ldb,
                                        (float)beta, c, 0, ldc, bias, 0, XO_TANH));
        xot_assert_decision(g_ctx, "sgemm_bias_act", g_dev, 1);
        float *got = xot_read_all(c), wantf[(N + 2) * (M + 2)];
        for (size_t i = 0; i < clen; i++) wantf[i] = (float)want[i];
        xot_assert_close_f(got, wantf, clen, what);
        free(got);
    }
    xo_buffer_destroy(a);
    xo_buffer_destroy(b);
    xo_buffer_destroy(c);
    xo_buffer_destroy(bias);
}

static void test_gemm_bias_act_alpha0(void **state)
{
    (void)state;
    for (int dbl = 0; dbl <= g_fp64; dbl++)
        for (int lay = 0; lay < 2; lay++) {
            gba_alpha0(dbl, lay ? XO_COL_MAJOR : XO_ROW_MAJOR, 0.0);
            gba_alpha0(dbl, lay ? XO_COL_MAJOR : XO_ROW_MAJOR, 1.5);
        }
}

/* Strided copy of a NaN with a payload, then a fill with -0.0 over it: bit for bit. */
static void test_copy_fill_bits(void **state)
{
    (void)state;
    enum { N = 300, INC = 3 };
    uint32_t hx[N], hy[N * INC], want[N * INC];
    for (size_t i = 0; i < N; i++) hx[i] = i % 2 ? 0x7fa12345u + (uint32_t)i : 0xffc00001u; /* NaNs */
    for (size_t i = 0; i < N * INC; i++) hy[i] = want[i] = 0x3f800000u; /* 1.0f */
    for (size_t i = 0; i < N; i++) want[i * INC] = hx[i];
    xo_buffer *x = xot_buffer(g_ctx, hx, sizeof hx), *y = xot_buffer(g_ctx, hy, sizeof hy);
    xot_assert_ok(xo_scopy(g_ctx, N, x, 0, 1, y, 0, INC));
    xot_assert_decision(g_ctx, "scopy", g_dev, 1);
    uint32_t *got = xot_read_all(y);
    assert_memory_equal(got, want, sizeof want);
    free(got);
    xot_assert_ok(xo_sfill(g_ctx, N, -0.0f, y, 0, INC));
    xot_assert_decision(g_ctx, "sfill", g_dev, 1);
    for (size_t i = 0; i < N; i++) want[i * INC] = 0x80000000u;
    got = xot_read_all(y);
    assert_memory_equal(got, want, sizeof want);
    free(got);
    xo_buffer_destroy(x);
    xo_buffer_destroy(y);
}

int main(void)
{
    if (xot_main_context(&g_ctx, NULL, NULL)) return 1;
    xo_device_info info;
    if (xo_device_find(g_ctx, "opencl", &g_dev) != XO_OK || xo_set_device(g_ctx, "opencl") != XO_OK ||
        xo_device_get_info(g_ctx, g_dev, &info) != XO_OK) {
        fprintf(stderr, "no OpenCL device: skipped\n");
        xo_context_destroy(g_ctx);
        return XOT_EXIT_SKIP;
    }
    g_fp64 = info.fp64;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_bias_act_alpha0),
        cmocka_unit_test(test_copy_fill_bits),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    xo_context_destroy(g_ctx);
    return rc;
}
