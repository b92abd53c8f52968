/* Conformance rules that do not depend on the precision, checked in single precision:
 * zero sizes (validated, then no-ops or the values the contract defines, the last
 * decision untouched) and disjoint operands in one buffer. Part of test_conformance. */
#include "test_conformance.h"

#include <string.h>

/* ---- zero sizes (precision-independent rules, checked in single precision) ---------- */

static void same_decision(const xo_decision *before)
{
    xo_decision now;
    xot_assert_ok(xo_last_decision(g_ctx, &now));
    assert_string_equal(now.op, before->op);
    assert_int_equal(now.device, before->device);
}

void conformance_zero_sizes(void **state)
{
    (void)state;
    float init[16];
    for (int i = 0; i < 16; i++) init[i] = (float)(i + 1);
    xo_buffer *a = xot_buffer(g_ctx, init, sizeof init);
    xo_buffer *b = xot_buffer(g_ctx, init, sizeof init);
    xo_buffer *c = xot_buffer(g_ctx, init, sizeof init);
    xo_buffer *o = xot_buffer(g_ctx, init, sizeof init);

    /* gemm, k = 0: C = beta * C (2x3 row-major at offset 1, ldc 4). */
    xot_assert_ok(xo_sgemm(g_ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 2, 3, 0, 2.0f, a, 0, 1,
                           b, 0, 3, 0.5f, c, 1, 4));
    check_decision("s", "gemm"); /* a forced device runs k == 0 as alpha == 0 */
    float want[16], got[16];
    memcpy(want, init, sizeof want);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) want[1 + i * 4 + j] *= 0.5f;
    xot_assert_ok(xo_buffer_read(c, 0, got, sizeof got));
    xot_assert_close_f(got, want, 16, "sgemm k=0");

    /* dot, nrm2, SUM over n = 0 write 0 at out_off; nothing else moves. */
    float zero_at3[16];
    memcpy(zero_at3, init, sizeof zero_at3);
    zero_at3[3] = 0;
    xot_assert_ok(xo_sdot(g_ctx, 0, a, 0, 1, b, 0, 1, o, 3));
    xot_assert_ok(xo_buffer_read(o, 0, got, sizeof got));
    xot_assert_close_f(got, zero_at3, 16, "sdot n=0");
    xot_assert_ok(xo_buffer_write(o, 0, init, sizeof init));
    xot_assert_ok(xo_snrm2(g_ctx, 0, a, 0, 1, o, 3));
    xot_assert_ok(xo_buffer_read(o, 0, got, sizeof got));
    xot_assert_close_f(got, zero_at3, 16, "snrm2 n=0");
    xot_assert_ok(xo_buffer_write(o, 0, init, sizeof init));
    xot_assert_ok(xo_sreduce(g_ctx, XO_SUM, 0, a, 0, o, 3));
    xot_assert_ok(xo_buffer_read(o, 0, got, sizeof got));
    xot_assert_close_f(got, zero_at3, 16, "sreduce SUM n=0");
    xot_assert_ok(xo_buffer_write(o, 0, init, sizeof init));
    double dinit[4] = {1, 2, 3, 4}, dgot[4];
    xo_buffer *dx = xot_buffer(g_ctx, dinit, sizeof dinit);
    xo_buffer *dout = xot_buffer(g_ctx, dinit, sizeof dinit);
    xot_assert_ok(xo_ddot(g_ctx, 0, dx, 0, 1, dx, 0, 1, dout, 2));
    xot_assert_ok(xo_buffer_read(dout, 0, dgot, sizeof dgot));
    assert_true(dgot[2] == 0.0 && dgot[0] == 1.0 && dgot[1] == 2.0 && dgot[3] == 4.0);

    /* MAX_ELEMENT over nothing has no answer. */
    xot_assert_status(xo_sreduce(g_ctx, XO_MAX_ELEMENT, 0, a, 0, o, 3), XO_ERR_INVALID_ARGUMENT);
    xot_assert_status(xo_dreduce(g_ctx, XO_MAX_ELEMENT, 0, dx, 0, dout, 0), XO_ERR_INVALID_ARGUMENT);

    /* Every other zero size is a no-op: XO_OK, no buffer changes, decision unchanged. */
    xot_assert_ok(xo_sscal(g_ctx, 1, 1.0f, o, 15, 1)); /* a known last decision */
    check_decision("s", "scal");
    xo_decision before;
    xot_assert_ok(xo_last_decision(g_ctx, &before));
    xo_buffer *all[] = {a, b, c, o};
    xot_snap snap;
    xot_snap_take(&snap, all, 4);
    xot_assert_ok(xo_sgemm(g_ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 0, 3, 2, 1.0f, a, 0, 2,
                           b, 0, 3, 0.5f, c, 0, 3));
    xot_assert_ok(xo_sgemm(g_ctx, XO_COL_MAJOR, XO_NO_TRANS, XO_TRANS, 3, 0, 2, 1.0f, a, 0, 3,
                           b, 0, 1, 0.5f, c, 0, 3));
    xot_assert_ok(xo_sgemm(g_ctx, XO_ROW_MAJOR, XO_TRANS, XO_NO_TRANS, 0, 0, 0, 1.0f, a, 0, 1,
                           b, 0, 1, 0.0f, c, 0, 1));
    xot_assert_ok(xo_sgemv(g_ctx, XO_ROW_MAJOR, XO_NO_TRANS, 0, 3, 1.0f, a, 0, 3, b, 0, 1, 0.5f,
                           c, 0, 1));
    xot_assert_ok(xo_sgemv(g_ctx, XO_COL_MAJOR, XO_TRANS, 3, 0, 1.0f, a, 0, 3, b, 0, 1, 0.5f,
                           c, 0, 1));
    xot_assert_ok(xo_saxpy(g_ctx, 0, 2.0f, a, 0, 1, c, 0, 1));
    xot_assert_ok(xo_sscal(g_ctx, 0, 2.0f, c, 0, 1));
    xot_assert_ok(xo_sunary(g_ctx, XO_EXP, 0, a, 0, c, 0));
    xot_assert_ok(xo_sbinary(g_ctx, XO_ADD, 0, a, 0, b, 0, c, 0));
    xot_assert_ok(xo_sbias(g_ctx, 0, 3, c, 0, 3, a, 0));
    xot_assert_ok(xo_sbias(g_ctx, 3, 0, c, 0, 1, a, 0));
    xot_assert_ok(xo_dscal(g_ctx, 0, 2.0, dx, 0, 1));
    xot_assert_ok(xo_daxpy(g_ctx, 0, 2.0, dx, 0, 1, dout, 0, 1));
    same_decision(&before);
    assert_int_equal(xot_snap_changed(&snap), -1);
    xot_snap_free(&snap);

    xo_buffer_destroy(a);
    xo_buffer_destroy(b);
    xo_buffer_destroy(c);
    xo_buffer_destroy(o);
    xo_buffer_destroy(dx);
    xo_buffer_destroy(dout);
}

/* Zero sizes and empty axes of copy, fill, axpby, ger, binary_scalar, scale_by, softmax,
 * reduce_axis and gemm_bias_act. */
void conformance_zero_sizes_nn(void **state)
{
    (void)state;
    float init[16], got[16], want[16];
    for (int i = 0; i < 16; i++) init[i] = (float)(i + 1);
    xo_buffer *x = xot_buffer(g_ctx, init, sizeof init);
    xo_buffer *o = xot_buffer(g_ctx, init, sizeof init);

    /* reduce_axis XO_SUM over an empty axis writes zeros: axis 0 with rows = 0 (3
     * results), axis 1 with cols = 0 (2 results), at out_off 4. */
    for (int axis = 0; axis <= 1; axis++) {
        xot_assert_ok(xo_buffer_write(o, 0, init, sizeof init));
        xot_assert_ok(xo_sreduce_axis(g_ctx, XO_SUM, axis == 0 ? 0 : 2, axis == 0 ? 3 : 0, x, 0, 3, axis, o, 4));
        memcpy(want, init, sizeof want);
        for (int i = 0; i < (axis == 0 ? 3 : 2); i++) want[4 + i] = 0;
        xot_assert_ok(xo_buffer_read(o, 0, got, sizeof got));
        xot_assert_close_f(got, want, 16, axis == 0 ? "reduce_axis SUM rows=0" : "reduce_axis SUM cols=0");
        xot_assert_status(xo_sreduce_axis(g_ctx, XO_MAX_ELEMENT, axis == 0 ? 0 : 2, axis == 0 ? 3 : 0, x, 0, 3,
                                          axis, o, 4), XO_ERR_INVALID_ARGUMENT);
    }
    /* gemm_bias_act with k = 0: C = act(beta C + bias) (2x3 row-major, ldc 4). */
    xot_assert_ok(xo_buffer_write(o, 0, init, sizeof init));
    xot_assert_ok(xo_sgemm_bias_act(g_ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 2, 3, 0, 1.0f, x, 0, 1, x, 0, 3,
                                    0.5f, o, 0, 4, x, 10, XO_NEG));
    memcpy(want, init, sizeof want);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) want[i * 4 + j] = -(0.5f * init[i * 4 + j] + init[10 + j]);
    xot_assert_ok(xo_buffer_read(o, 0, got, sizeof got));
    xot_assert_close_f(got, want, 16, "gemm_bias_act k=0");

    /* Everything else with nothing to do: XO_OK, no buffer changes, decision unchanged. */
    xot_assert_ok(xo_sscal(g_ctx, 1, 1.0f, o, 15, 1)); /* a known last decision */
    xo_decision before, now;
    xot_assert_ok(xo_last_decision(g_ctx, &before));
    xo_buffer *all[] = {x, o};
    xot_snap snap;
    xot_snap_take(&snap, all, 2);
    xot_assert_ok(xo_scopy(g_ctx, 0, x, 0, 1, o, 0, 1));
    xot_assert_ok(xo_scopy(g_ctx, 5, o, 2, 3, o, 2, 3)); /* y exactly x */
    xot_assert_ok(xo_sfill(g_ctx, 0, 1.0f, o, 0, 1));
    xot_assert_ok(xo_saxpby(g_ctx, 0, 1.0f, x, 0, 1, 0.0f, o, 0, 1));
    xot_assert_ok(xo_sger(g_ctx, XO_ROW_MAJOR, 0, 3, 1.0f, x, 0, 1, x, 0, 1, o, 0, 3));
    xot_assert_ok(xo_sger(g_ctx, XO_COL_MAJOR, 3, 4, 0.0f, x, 0, 1, x, 0, 1, o, 0, 3)); /* alpha 0 */
    xot_assert_ok(xo_sbinary_scalar(g_ctx, XO_ADD, 0, x, 0, 1.0f, o, 0));
    xot_assert_ok(xo_sscale_by(g_ctx, 0, x, 0, o, 0, 1));
    xot_assert_ok(xo_ssoftmax(g_ctx, XO_SOFTMAX, 0, 3, x, 0, 3, o, 0, 3));
    xot_assert_ok(xo_ssoftmax(g_ctx, XO_LOG_SOFTMAX, 3, 0, x, 0, 1, o, 0, 1));
    xot_assert_ok(xo_sreduce_axis(g_ctx, XO_MAX_ELEMENT, 3, 0, x, 0, 1, 0, o, 0)); /* no results */
    xot_assert_ok(xo_sreduce_axis(g_ctx, XO_SUM, 0, 3, x, 0, 3, 1, o, 0));
    xot_assert_ok(xo_sgemm_bias_act(g_ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 0, 3, 2, 1.0f, x, 0, 2, x, 0, 3,
                                    0.0f, o, 0, 3, NULL, 0, XO_TANH));
    xot_assert_ok(xo_sunary(g_ctx, XO_SQRT, 0, x, 0, o, 0));
    xot_assert_ok(xo_last_decision(g_ctx, &now));
    assert_string_equal(now.op, before.op);
    assert_int_equal(now.device, before.device);
    assert_int_equal(xot_snap_changed(&snap), -1);
    xot_snap_free(&snap);
    xo_buffer_destroy(x);
    xo_buffer_destroy(o);
}

/* Two operands in one buffer that do not overlap are fine (axpy, binary). */
void conformance_disjoint_same_buffer(void **state)
{
    (void)state;
    float h[64], want[64], got[64];
    xot_fill_f(h, 64, 77, -1, 1);
    xo_buffer *b = xot_buffer(g_ctx, h, sizeof h);
    /* x = h[0..10) step 1, y = h[10..30) step 2: spans [0,10) and [10,29). */
    xot_assert_ok(xo_saxpy(g_ctx, 10, 0.5f, b, 0, 1, b, 10, 2));
    check_decision("s", "axpy");
    memcpy(want, h, sizeof want);
    xot_ref_saxpy(10, 0.5f, h, 1, want + 10, 2);
    /* c = [40,50) = [0,10) * [20,30) */
    xot_assert_ok(xo_sbinary(g_ctx, XO_MUL, 10, b, 0, b, 20, b, 40));
    check_decision("s", "binary");
    xot_ref_sbinary(XO_MUL, 10, want, want + 20, want + 40);
    xot_assert_ok(xo_buffer_read(b, 0, got, sizeof got));
    xot_assert_close_f(got, want, 64, "disjoint operands in one buffer");
    xo_buffer_destroy(b);
}

