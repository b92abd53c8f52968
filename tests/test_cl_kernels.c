/* Every own OpenCL kernel (the .cl files of kernels_cl/) once, at small odd sizes, strides, offsets
 * and leading dimensions, forced onto one OpenCL device, each result against the
 * reference loops of xo_test.c; float, and double where the device has it. Only the
 * paths that run our kernels (the BLAS routines CLBlast runs are the conformance suite's):
 *   xo_unary, xo_binary, xo_binary_scalar      every sub-op
 *   xo_copy, xo_fill, xo_axpby, xo_scale_by    strided
 *   xo_scale                                   gemm and scal with alpha == 0
 *   xo_bias_act                                bias; gemm_bias_act with alpha == 0
 *   xo_reduce_partial/_final, xo_nrm2_*        reduce, nrm2 over several work groups
 *   xo_reduce_axis, xo_softmax                 both axes; softmax and log-softmax
 *   xo_softmax_xent                            loss and gradient, an ignored row
 *   xo_argmax                                  a NaN row, a tie
 * Small enough for Oclgrind (tests/oclgrind.sh, which also checks that every kernel of
 * kernels_cl/ ran); also run on the default OpenCL device. Usage: test_cl_kernels [SPEC]
 * (default "opencl"); exit 77 when there is no such device. */
#include "xo_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static xo_context *g_ctx;
static int g_dev;
static int g_fp64;
static int g_dbl; /* the precision the current check runs in */

/* xo_s<name> or xo_d<name>: the precision of g_dbl. */
#define XO_CALL(name, ...) (g_dbl ? xo_d##name(__VA_ARGS__) : xo_s##name(__VA_ARGS__))

/* Values in [lo, hi) that a float holds exactly, so one double reference serves both. */
static double *values(size_t n, uint64_t seed, double lo, double hi)
{
    double *v = malloc(n * sizeof *v);
    assert_non_null(v);
    xot_fill_d(v, n, seed, lo, hi);
    for (size_t i = 0; i < n; i++) v[i] = (double)(float)v[i];
    return v;
}

static xo_buffer *buffer_of(const double *v, size_t n)
{
    if (g_dbl) return xot_buffer(g_ctx, v, n * sizeof(double));
    float *f = malloc(n * sizeof *f);
    assert_non_null(f);
    for (size_t i = 0; i < n; i++) f[i] = (float)v[i];
    xo_buffer *b = xot_buffer(g_ctx, f, n * sizeof *f);
    free(f);
    return b;
}

/* The whole buffer against `want` (n elements), and the op ran forced on the device. */
static void check(xo_buffer *b, const double *want, size_t n, const char *op, const char *what)
{
    char name[40], label[96];
    snprintf(name, sizeof name, "%c%s", g_dbl ? 'd' : 's', op);
    snprintf(label, sizeof label, "%s %s", name, what);
    xot_assert_decision(g_ctx, name, g_dev, 1);
    void *got = xot_read_all(b);
    if (g_dbl) {
        xot_assert_close_d(got, want, n, label);
    } else {
        float *wf = malloc(n * sizeof *wf);
        assert_non_null(wf);
        for (size_t i = 0; i < n; i++) wf[i] = (float)want[i];
        xot_assert_close_f(got, wf, n, label);
        free(wf);
    }
    free(got);
}

static void test_elementwise(void **state)
{
    (void)state;
    enum { N = 37, XO = 3, YO = 5, LEN = N + 8 };
    for (g_dbl = 0; g_dbl <= g_fp64; g_dbl++) {
        double *x = values(LEN, 11, 0.25, 2), *y = values(LEN, 12, 0.25, 2), *z = values(LEN, 13, 0.25, 2);
        double want[LEN];
        xo_buffer *bx = buffer_of(x, LEN), *by = buffer_of(y, LEN), *bz = buffer_of(z, LEN);
        char what[32];
        for (int op = 0; op < XO_UNARY_OP_COUNT; op++) { /* y[YO..] = op(x[XO..]), x from op's domain */
            double u[LEN];
            xot_unary_fill_d(op, u, LEN, 14 + (uint64_t)op);
            for (int i = 0; i < LEN; i++) u[i] = (double)(float)u[i];
            xo_buffer_destroy(bx);
            bx = buffer_of(u, LEN);
            memcpy(x, u, sizeof u);
            memcpy(want, y, sizeof want);
            xot_ref_dunary((xo_unary_op)op, N, x + XO, want + YO);
            xot_assert_ok(XO_CALL(unary, g_ctx, (xo_unary_op)op, N, bx, XO, by, YO));
            snprintf(what, sizeof what, "%s", xot_unary_name(op));
            check(by, want, LEN, "unary", what);
            xo_buffer_destroy(by);
            by = buffer_of(y, LEN);
        }
        for (int op = 0; op < XO_BINARY_OP_COUNT; op++) { /* y[YO..] = x[XO..] op z[1..] */
            memcpy(want, y, sizeof want);
            xot_ref_dbinary((xo_binary_op)op, N, x + XO, z + 1, want + YO);
            xot_assert_ok(XO_CALL(binary, g_ctx, (xo_binary_op)op, N, bx, XO, bz, 1, by, YO));
            snprintf(what, sizeof what, "%s", xot_binary_name(op));
            check(by, want, LEN, "binary", what);
            xo_buffer_destroy(by);
            by = buffer_of(y, LEN);
            memcpy(want, y, sizeof want); /* y[YO..] = x[XO..] op 1.25 */
            xot_ref_dbinary_scalar((xo_binary_op)op, N, x + XO, 1.25, want + YO);
            xot_assert_ok(XO_CALL(binary_scalar, g_ctx, (xo_binary_op)op, N, bx, XO, 1.25, by, YO));
            check(by, want, LEN, "binary_scalar", what);
            xo_buffer_destroy(by);
            by = buffer_of(y, LEN);
        }
        xo_buffer_destroy(bx);
        xo_buffer_destroy(by);
        xo_buffer_destroy(bz);
        free(x);
        free(y);
        free(z);
    }
}

static void test_strided(void **state)
{
    (void)state;
    enum { N = 29, LEN = 3 * N + 8 };
    for (g_dbl = 0; g_dbl <= g_fp64; g_dbl++) {
        double *x = values(LEN, 21, -2, 2), *y = values(LEN, 22, -2, 2), want[LEN];
        xo_buffer *bx = buffer_of(x, LEN), *by = buffer_of(y, LEN);

        memcpy(want, y, sizeof want); /* copy: x[1 + 2i] -> y[4 + 3i] */
        xot_ref_dcopy(N, x + 1, 2, want + 4, 3);
        xot_assert_ok(XO_CALL(copy, g_ctx, N, bx, 1, 2, by, 4, 3));
        check(by, want, LEN, "copy", "incx 2 incy 3");

        xot_ref_dfill(N, -0.75, want + 2, 3); /* fill: y[2 + 3i] = -0.75 */
        xot_assert_ok(XO_CALL(fill, g_ctx, N, -0.75, by, 2, 3));
        check(by, want, LEN, "fill", "inc 3");

        xot_ref_daxpby(N, 0.5, x + 3, 2, -1.25, want + 1, 3); /* axpby */
        xot_assert_ok(XO_CALL(axpby, g_ctx, N, 0.5, bx, 3, 2, -1.25, by, 1, 3));
        check(by, want, LEN, "axpby", "incx 2 incy 3");

        xot_ref_dscal(N, want[0], want + 2, 3); /* scale_by: y[2 + 3i] *= y[0] */
        xot_assert_ok(XO_CALL(scale_by, g_ctx, N, by, 0, by, 2, 3));
        check(by, want, LEN, "scale_by", "s_off 0 inc 3");

        xot_ref_dscal(N, 0.0, want + 1, 3); /* scal by 0 writes zeros: xo_scale */
        xot_assert_ok(XO_CALL(scal, g_ctx, N, 0.0, by, 1, 3));
        check(by, want, LEN, "scal", "alpha 0 inc 3");

        xo_buffer_destroy(bx);
        xo_buffer_destroy(by);
        free(x);
        free(y);
    }
}

/* M x N matrices with leading dimension LD (row- or column-major), at offset OFF. */
enum { M = 7, N = 13, K = 5, LD = 17, OFF = 3, MLEN = OFF + LD * (M > N ? M : N) };

static void test_matrix(void **state)
{
    (void)state;
    for (g_dbl = 0; g_dbl <= g_fp64; g_dbl++)
        for (int row = 0; row <= 1; row++) {
            const xo_layout lay = row ? XO_ROW_MAJOR : XO_COL_MAJOR;
            const char *what = row ? "row-major" : "col-major";
            double *c = values(MLEN, 31, -2, 2), *bias = values(N + 2, 32, -1, 1), want[MLEN];
            double *a = values(M * K, 33, -1, 1), *b = values(K * N, 34, -1, 1);
            xo_buffer *bc = buffer_of(c, MLEN), *bb = buffer_of(bias, N + 2);
            xo_buffer *ba = buffer_of(a, M * K), *bbm = buffer_of(b, K * N);
            const size_t lda = row ? K : M, ldb = row ? N : K;

            memcpy(want, c, sizeof want); /* gemm with alpha == 0: C = 0.5 C (xo_scale) */
            xot_ref_dgemm(lay, XO_NO_TRANS, XO_NO_TRANS, M, N, K, 0.0, a, lda, b, ldb, 0.5, want + OFF, LD);
            xot_assert_ok(XO_CALL(gemm, g_ctx, lay, XO_NO_TRANS, XO_NO_TRANS, M, N, K, 0.0, ba, 0, lda, bbm, 0,
                                  ldb, 0.5, bc, OFF, LD));
            check(bc, want, MLEN, "gemm", what);

            /* gemm_bias_act with alpha == 0: C = relu(-1.25 C + bias) (xo_bias_act) */
            xot_ref_dgemm_bias_act(lay, XO_NO_TRANS, XO_NO_TRANS, M, N, K, 0.0, a, lda, b, ldb, -1.25,
                                   want + OFF, LD, bias + 1, XO_RELU);
            xot_assert_ok(XO_CALL(gemm_bias_act, g_ctx, lay, XO_NO_TRANS, XO_NO_TRANS, M, N, K, 0.0, ba, 0, lda,
                                  bbm, 0, ldb, -1.25, bc, OFF, LD, bb, 1, XO_RELU));
            check(bc, want, MLEN, "gemm_bias_act", what);

            if (row) { /* bias is row-major only: a[i][j] += bias[j] (xo_bias_act) */
                xot_ref_dbias(M, N, want + OFF, LD, bias + 2);
                xot_assert_ok(XO_CALL(bias, g_ctx, M, N, bc, OFF, LD, bb, 2));
                check(bc, want, MLEN, "bias", what);
            }
            xo_buffer_destroy(bc);
            xo_buffer_destroy(bb);
            xo_buffer_destroy(ba);
            xo_buffer_destroy(bbm);
            free(c);
            free(bias);
            free(a);
            free(b);
        }
}

static void test_reductions(void **state)
{
    (void)state;
    enum { NR = 1001, INC = 3, XLEN = 2 + INC * NR };
    for (g_dbl = 0; g_dbl <= g_fp64; g_dbl++) {
        double *x = values(XLEN, 41, -2, 2), *m = values(MLEN, 42, -3, 3), *o = values(MLEN, 43, -1, 1);
        double want[MLEN];
        xo_buffer *bx = buffer_of(x, XLEN), *bm = buffer_of(m, MLEN), *bo = buffer_of(o, MLEN);
        char what[48];

        for (int op = 0; op <= XO_MAX_ELEMENT; op++) { /* over several work groups */
            memcpy(want, o, sizeof want);
            want[5] = xot_ref_dreduce((xo_reduce_op)op, NR, x + 2);
            xot_assert_ok(XO_CALL(reduce, g_ctx, (xo_reduce_op)op, NR, bx, 2, bo, 5));
            snprintf(what, sizeof what, "op %d n %d", op, (int)NR);
            check(bo, want, MLEN, "reduce", what);
            xo_buffer_destroy(bo);
            bo = buffer_of(o, MLEN);
        }
        memcpy(want, o, sizeof want);
        want[7] = xot_ref_dnrm2(NR, x + 1, INC);
        xot_assert_ok(XO_CALL(nrm2, g_ctx, NR, bx, 1, INC, bo, 7));
        check(bo, want, MLEN, "nrm2", "incx 3");

        for (int op = 0; op <= XO_MAX_ELEMENT; op++)
            for (int axis = 0; axis <= 1; axis++) { /* row-major M x N, ldx LD */
                xo_buffer_destroy(bo);
                bo = buffer_of(o, MLEN);
                memcpy(want, o, sizeof want);
                xot_ref_dreduce_axis((xo_reduce_op)op, M, N, m + OFF, LD, axis, want + 2);
                xot_assert_ok(XO_CALL(reduce_axis, g_ctx, (xo_reduce_op)op, M, N, bm, OFF, LD, axis, bo, 2));
                snprintf(what, sizeof what, "op %d axis %d", op, axis);
                check(bo, want, MLEN, "reduce_axis", what);
            }
        for (int op = 0; op <= XO_LOG_SOFTMAX; op++) { /* rows of M x N, ldx LD, ldy N + 2 */
            xo_buffer_destroy(bo);
            bo = buffer_of(o, MLEN);
            memcpy(want, o, sizeof want);
            xot_ref_dsoftmax((xo_softmax_op)op, M, N, m + OFF, LD, want + 1, N + 2);
            xot_assert_ok(XO_CALL(softmax, g_ctx, (xo_softmax_op)op, M, N, bm, OFF, LD, bo, 1, N + 2));
            snprintf(what, sizeof what, "op %d", op);
            check(bo, want, MLEN, "softmax", what);
        }
        { /* softmax_xent: loss at 1.., grad rows of M x N at 1 with ldg N + 2; row 1 ignored */
            int32_t lab[M + 1];
            for (int i = 0; i <= M; i++) lab[i] = i == 2 ? -1 : (int32_t)((i * 3) % N);
            xo_buffer *bl;
            xot_assert_ok(xo_buffer_create(g_ctx, sizeof lab, &bl));
            xot_assert_ok(xo_buffer_write(bl, 0, lab, sizeof lab));
            xo_buffer_destroy(bo);
            bo = buffer_of(o, MLEN);
            xo_buffer *bloss = buffer_of(o, M + 2);
            double want_loss[M + 2];
            memcpy(want, o, sizeof want);
            memcpy(want_loss, o, sizeof want_loss);
            xot_ref_dsoftmax_xent(M, N, m + OFF, LD, lab + 1, 0.5, want_loss + 1, want + 1, N + 2);
            xot_assert_ok(XO_CALL(softmax_xent, g_ctx, M, N, bm, OFF, LD, bl, 1, 0.5, bloss, 1, bo, 1, N + 2));
            check(bo, want, MLEN, "softmax_xent", "grad");
            check(bloss, want_loss, M + 2, "softmax_xent", "loss");
            xo_buffer_destroy(bl);
            xo_buffer_destroy(bloss);
        }
        { /* argmax of M x N rows (ldx LD) into idx at 1: a NaN in row 1, a tie in row 2 */
            double a[MLEN];
            memcpy(a, m, sizeof a);
            a[OFF + LD + N - 2] = NAN;
            a[OFF + LD + N - 1] = NAN;
            a[OFF + 2 * LD + 1] = a[OFF + 2 * LD + 7] = 9;
            xo_buffer *ba = buffer_of(a, MLEN), *bi;
            int32_t idx[M + 2], want_idx[M + 2];
            for (int i = 0; i < M + 2; i++) idx[i] = want_idx[i] = -7;
            xot_assert_ok(xo_buffer_create(g_ctx, sizeof idx, &bi));
            xot_assert_ok(xo_buffer_write(bi, 0, idx, sizeof idx));
            xot_ref_dargmax(M, N, a + OFF, LD, want_idx + 1);
            xot_assert_ok(XO_CALL(argmax, g_ctx, M, N, ba, OFF, LD, bi, 1));
            xot_assert_decision(g_ctx, g_dbl ? "dargmax" : "sargmax", g_dev, 1);
            xot_assert_ok(xo_buffer_read(bi, 0, idx, sizeof idx));
            assert_memory_equal(idx, want_idx, sizeof idx);
            assert_int_equal(want_idx[2], N - 2);
            assert_int_equal(want_idx[3], 1);
            xo_buffer_destroy(ba);
            xo_buffer_destroy(bi);
        }
        xo_buffer_destroy(bx);
        xo_buffer_destroy(bm);
        xo_buffer_destroy(bo);
        free(x);
        free(m);
        free(o);
    }
}

/* Nothing above fell back to the CPU. */
static void test_no_fallbacks(void **state)
{
    (void)state;
    xo_stats s;
    xot_assert_ok(xo_stats_get(g_ctx, g_dev, &s));
    assert_true(s.ops > 0);
    assert_int_equal(s.fallbacks, 0);
}

int main(int argc, char **argv)
{
    const char *spec = argc > 1 ? argv[1] : "opencl";
    if (xot_main_context(&g_ctx, NULL, NULL)) return 1;
    xo_status st = xo_device_find(g_ctx, spec, &g_dev);
    if (st == XO_ERR_NO_DEVICE) {
        printf("no device \"%s\" here: skipped\n", spec);
        xo_context_destroy(g_ctx);
        return XOT_EXIT_SKIP;
    }
    xo_device_info info;
    char label[256];
    if (st != XO_OK || xot_force_device(g_ctx, g_dev, "cl_kernels", &info, label, sizeof label)) {
        fprintf(stderr, "%s: %s\n", spec, xo_last_error());
        xo_context_destroy(g_ctx);
        return 1;
    }
    g_fp64 = info.fp64;
    printf("%s, %s\n", label, g_fp64 ? "float and double" : "float only");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elementwise),
        cmocka_unit_test(test_strided),
        cmocka_unit_test(test_matrix),
        cmocka_unit_test(test_reductions),
        cmocka_unit_test(test_no_fallbacks),
    };
    int failed = cmocka_run_group_tests_name(label, tests, NULL, NULL);
    xo_context_destroy(g_ctx);
    return failed ? 1 : 0;
}
