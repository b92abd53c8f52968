/* Conformance, second half: the ops added in 0.3 (copy, fill, axpby, ger, binary_scalar,
 * scale_by, softmax, reduce_axis, gemm_bias_act) and softmax_xent in single and double
 * precision against the reference loops of xo_test.c, on the device test_conformance.c
 * is testing. Edge cases: n = 0, one row, padded leading dimensions, increments > 1, the
 * aliases the contract allows, NaN where the semantics say it cannot reach a result.
 *
 * The typed test bodies live in the template section at the end of this file, which
 * the file includes twice (T = float, then T = double). */
#ifndef XOT_T

#include "test_conformance.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bit-exact comparison (copy and fill). */
static void assert_bits(const void *got, const void *want, size_t bytes, const char *what)
{
    if (memcmp(got, want, bytes) != 0) {
        print_error("%s: not bit-exact\n", what);
        fail();
    }
}

#define XOT_T float
#define XOT_P s
#define XOT_PS "s"
#define XOT_FILL xot_fill_f
#define XOT_CLOSE xot_assert_close_f
#include "test_conformance_nn.c"
#undef XOT_T
#undef XOT_P
#undef XOT_PS
#undef XOT_FILL
#undef XOT_CLOSE

#define XOT_T double
#define XOT_P d
#define XOT_PS "d"
#define XOT_FILL xot_fill_d
#define XOT_CLOSE xot_assert_close_d
#include "test_conformance_nn.c"
#undef XOT_T
#undef XOT_P
#undef XOT_PS
#undef XOT_FILL
#undef XOT_CLOSE

/* Zero sizes and empty axes (precision-independent rules, checked in single precision). */
static void test_nn_zero_sizes(void **state)
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

#define BOTH(name) cmocka_unit_test(test_##name##_s), cmocka_unit_test(test_##name##_d)

int conformance_nn(const char *label)
{
    const struct CMUnitTest tests[] = {
        BOTH(copy),          BOTH(fill),     BOTH(axpby),   BOTH(ger),
        BOTH(binary_scalar), BOTH(scale_by), BOTH(softmax), BOTH(reduce_axis),
        BOTH(gemm_bias_act), BOTH(softmax_xent),
        cmocka_unit_test(test_nn_zero_sizes),
    };
    char name[300];
    snprintf(name, sizeof name, "%s, 0.3 ops", label);
    return _cmocka_run_group_tests(name, tests, sizeof tests / sizeof tests[0], NULL, NULL);
}

#else /* ---- template section: T = XOT_T, prefix XOT_P ------------------------------ */

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define T XOT_T
#define XO(name) CAT(CAT(xo_, XOT_P), name)             /* xo_scopy */
#define REF(name) CAT(CAT(xot_ref_, XOT_P), name)       /* xot_ref_scopy */
#define TEST(name) CAT(CAT(test_, name), CAT(_, XOT_P)) /* test_copy_s */
#define HOST(n) ((T *)calloc((n) ? (n) : 1, sizeof(T)))

/* A host array of len elements from `seed` in [lo, hi) and a buffer holding it. */
#define MAKE(h, buf, len, seed, lo, hi)                     \
    T *h = HOST(len);                                       \
    XOT_FILL(h, (len), (seed), (lo), (hi));                 \
    xo_buffer *buf = xot_buffer(g_ctx, h, (len) * sizeof(T))

static void TEST(copy)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t ns[] = {1, 7, 130, 1000};
    static const size_t incs[][2] = {{1, 1}, {2, 3}, {3, 1}};
    uint64_t seed = 2000;
    for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++)
        for (size_t c = 0; c < sizeof incs / sizeof incs[0]; c++) {
            size_t n = ns[s], ix = incs[c][0], iy = incs[c][1], xoff = 2, yoff = 1;
            size_t xlen = xoff + xot_span(n, ix) + 2, ylen = yoff + xot_span(n, iy) + 3;
            MAKE(hx, x, xlen, seed++, -1, 1);
            MAKE(hy, y, ylen, seed++, -1, 1);
            /* special values travel unchanged: NaN, infinities, -0, a denormal */
            hx[xoff] = (T)NAN;
            if (n > 1) hx[xoff + ix] = (T)-INFINITY;
            if (n > 2) hx[xoff + 2 * ix] = (T)-0.0;
            if (n > 3) hx[xoff + 3 * ix] = (T)1e-40;
            xot_assert_ok(xo_buffer_write(x, 0, hx, xlen * sizeof(T)));
            char what[80];
            snprintf(what, sizeof what, "%scopy n=%zu incx=%zu incy=%zu", XOT_PS, n, ix, iy);
            xot_assert_ok(XO(copy)(g_ctx, n, x, xoff, ix, y, yoff, iy));
            check_decision(XOT_PS, "copy");
            REF(copy)(n, hx + xoff, ix, hy + yoff, iy);
            T *got = xot_read_all(y);
            assert_bits(got, hy, ylen * sizeof(T), what);
            check_unchanged(x, hx, what);
            free(got);
            free(hx);
            free(hy);
            xo_buffer_destroy(x);
            xo_buffer_destroy(y);
        }
}

static void TEST(fill)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t ns[] = {1, 7, 1000, 70000};
    static const T values[] = {(T)1.5, (T)-0.0, (T)INFINITY};
    uint64_t seed = 2100;
    for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++)
        for (size_t inc = 1; inc <= 3; inc += 2)
            for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
                size_t n = ns[s], xoff = 3, xlen = xoff + xot_span(n, inc) + 2;
                MAKE(hx, x, xlen, seed++, -1, 1);
                for (size_t i = 0; i < n; i++) hx[xoff + i * inc] = (T)NAN; /* never read */
                xot_assert_ok(xo_buffer_write(x, 0, hx, xlen * sizeof(T)));
                char what[80];
                snprintf(what, sizeof what, "%sfill n=%zu inc=%zu value %zu", XOT_PS, n, inc, v);
                xot_assert_ok(XO(fill)(g_ctx, n, values[v], x, xoff, inc));
                check_decision(XOT_PS, "fill");
                REF(fill)(n, values[v], hx + xoff, inc);
                T *got = xot_read_all(x);
                assert_bits(got, hx, xlen * sizeof(T), what);
                free(got);
                free(hx);
                xo_buffer_destroy(x);
            }
}

static void TEST(axpby)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t ns[] = {1, 7, 1000, 70000};
    /* alpha, beta; NaN in y where beta == 0, in x where alpha == 0: neither is read */
    static const T ab[][2] = {{(T)2, (T)0.5}, {(T)-0.5, (T)0}, {(T)0, (T)2}, {(T)0, (T)0}, {(T)1, (T)1}};
    uint64_t seed = 2200;
    for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++)
        for (size_t c = 0; c < sizeof ab / sizeof ab[0]; c++)
            for (size_t inc = 1; inc <= 2; inc++) {
                size_t n = ns[s], ix = inc, iy = inc == 1 ? 1 : 3, xoff = 1, yoff = 2;
                size_t xlen = xoff + xot_span(n, ix) + 1, ylen = yoff + xot_span(n, iy) + 2;
                T alpha = ab[c][0], beta = ab[c][1];
                MAKE(hx, x, xlen, seed++, -1, 1);
                MAKE(hy, y, ylen, seed++, -1, 1);
                for (size_t i = 0; i < n; i++) {
                    if (alpha == 0) hx[xoff + i * ix] = (T)NAN;
                    if (beta == 0) hy[yoff + i * iy] = (T)NAN;
                }
                xot_assert_ok(xo_buffer_write(x, 0, hx, xlen * sizeof(T)));
                xot_assert_ok(xo_buffer_write(y, 0, hy, ylen * sizeof(T)));
                char what[96];
                snprintf(what, sizeof what, "%saxpby n=%zu alpha=%g beta=%g inc=%zu", XOT_PS, n, (double)alpha,
                         (double)beta, inc);
                xot_assert_ok(XO(axpby)(g_ctx, n, alpha, x, xoff, ix, beta, y, yoff, iy));
                check_decision(XOT_PS, "axpby");
                REF(axpby)(n, alpha, hx + xoff, ix, beta, hy + yoff, iy);
                T *got = xot_read_all(y);
                XOT_CLOSE(got, hy, ylen, what);
                check_unchanged(x, hx, what);
                free(got);
                free(hx);
                free(hy);
                xo_buffer_destroy(x);
                xo_buffer_destroy(y);
            }
}

static void TEST(ger)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t dims[][2] = {{1, 1}, {1, 9}, {7, 33}, {33, 7}, {130, 70}};
    uint64_t seed = 2300;
    for (int lay = 0; lay < 2; lay++)
        for (size_t s = 0; s < sizeof dims / sizeof dims[0]; s++)
            for (size_t v = 0; v < 2; v++) { /* packed and unit strides, or padded and strided */
                xo_layout layout = lay ? XO_COL_MAJOR : XO_ROW_MAJOR;
                size_t m = dims[s][0], n = dims[s][1], ix = v ? 2 : 1, iy = v ? 3 : 1;
                size_t lda = (layout == XO_ROW_MAJOR ? n : m) + (v ? 3 : 0), xoff = 1, yoff = 2, aoff = 4;
                size_t xlen = xoff + xot_span(m, ix), ylen = yoff + xot_span(n, iy);
                size_t alen = aoff + xot_mat_span(layout, m, n, lda) + 2;
                MAKE(hx, x, xlen, seed++, -1, 1);
                MAKE(hy, y, ylen, seed++, -1, 1);
                MAKE(ha, a, alen, seed++, -1, 1);
                char what[96];
                snprintf(what, sizeof what, "%sger %s %zux%zu lda=%zu incx=%zu incy=%zu", XOT_PS,
                         lay ? "col" : "row", m, n, lda, ix, iy);
                xot_assert_ok(XO(ger)(g_ctx, layout, m, n, (T)0.75, x, xoff, ix, y, yoff, iy, a, aoff, lda));
                check_decision(XOT_PS, "ger");
                REF(ger)(layout, m, n, (T)0.75, hx + xoff, ix, hy + yoff, iy, ha + aoff, lda);
                T *got = xot_read_all(a);
                XOT_CLOSE(got, ha, alen, what);
                check_unchanged(x, hx, what);
                check_unchanged(y, hy, what);
                free(got);
                free(hx);
                free(hy);
                free(ha);
                xo_buffer_destroy(x);
                xo_buffer_destroy(y);
                xo_buffer_destroy(a);
            }
}

static void TEST(binary_scalar)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t ns[] = {1, 7, 1000, 70000};
    uint64_t seed = 2400;
    for (int op = XO_ADD; op < XO_BINARY_OP_COUNT; op++)
        for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++)
            for (int alias = 0; alias < 2; alias++) { /* c separate, c == a */
                size_t n = ns[s], aoff = 3, coff = alias ? aoff : 1, len = n + 5;
                T sc = (T)(op == XO_DIV ? 1.75 : 0.25);
                MAKE(ha, a, len, seed++, -2, 2);
                MAKE(hc, c, len, seed++, -1, 1);
                T *orig = HOST(len);
                memcpy(orig, ha, len * sizeof(T));
                xo_buffer *cb = alias ? a : c;
                T *hcb = alias ? ha : hc;
                char what[80];
                snprintf(what, sizeof what, "%sbinary_scalar %s n=%zu%s", XOT_PS, xot_binary_name(op), n,
                         alias ? " c==a" : "");
                xot_assert_ok(XO(binary_scalar)(g_ctx, (xo_binary_op)op, n, a, aoff, sc, cb, coff));
                check_decision(XOT_PS, "binary_scalar");
                REF(binary_scalar)((xo_binary_op)op, n, orig + aoff, sc, hcb + coff);
                T *got = xot_read_all(cb);
                XOT_CLOSE(got, hcb, len, what);
                if (!alias) check_unchanged(a, orig, what);
                free(got);
                free(orig);
                free(ha);
                free(hc);
                xo_buffer_destroy(a);
                xo_buffer_destroy(c);
            }
}

static void TEST(scale_by)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t ns[] = {1, 7, 1000, 70000};
    uint64_t seed = 2500;
    for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++)
        for (size_t inc = 1; inc <= 2; inc++) {
            size_t n = ns[s], soff = 2, xoff = 1, xlen = xoff + xot_span(n, inc) + 2;
            MAKE(hs, sb, 4, seed++, -1, 1);
            hs[soff] = (T)-0.375;
            xot_assert_ok(xo_buffer_write(sb, 0, hs, 4 * sizeof(T)));
            MAKE(hx, x, xlen, seed++, -1, 1);
            char what[80];
            snprintf(what, sizeof what, "%sscale_by n=%zu inc=%zu", XOT_PS, n, inc);
            xot_assert_ok(XO(scale_by)(g_ctx, n, sb, soff, x, xoff, inc));
            check_decision(XOT_PS, "scale_by");
            REF(scal)(n, hs[soff], hx + xoff, inc);
            T *got = xot_read_all(x);
            XOT_CLOSE(got, hx, xlen, what);
            check_unchanged(sb, hs, what);
            free(got);
            free(hs);
            free(hx);
            xo_buffer_destroy(sb);
            xo_buffer_destroy(x);
        }
}

static void TEST(softmax)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t dims[][2] = {{1, 1}, {1, 7}, {7, 33}, {130, 7}, {3, 1000}};
    uint64_t seed = 2600;
    for (int op = XO_SOFTMAX; op <= XO_LOG_SOFTMAX; op++)
        for (size_t s = 0; s < sizeof dims / sizeof dims[0]; s++)
            for (int v = 0; v < 3; v++) { /* packed; padded; in place (y == x, ldy == ldx) */
                size_t rows = dims[s][0], cols = dims[s][1], ldx = cols + (v ? 3 : 0), ldy = cols + (v == 1 ? 1 : 0);
                size_t xoff = 2, yoff = v == 2 ? xoff : 1;
                if (v == 2) ldy = ldx;
                size_t xlen = xoff + xot_mat_span(XO_ROW_MAJOR, rows, cols, ldx) + 2;
                size_t ylen = yoff + xot_mat_span(XO_ROW_MAJOR, rows, cols, ldy) + 2;
                /* large values: without the max subtracted, exp overflows */
                MAKE(hx, x, xlen, seed++, 60, 100);
                MAKE(hy, y, ylen, seed++, -1, 1);
                xo_buffer *yb = v == 2 ? x : y;
                T *hyb = v == 2 ? hx : hy;
                T *orig = HOST(xlen);
                memcpy(orig, hx, xlen * sizeof(T));
                char what[96];
                snprintf(what, sizeof what, "%s%s %zux%zu ldx=%zu ldy=%zu%s", XOT_PS,
                         op == XO_SOFTMAX ? "softmax" : "log_softmax", rows, cols, ldx, ldy, v == 2 ? " in place" : "");
                xot_assert_ok(XO(softmax)(g_ctx, (xo_softmax_op)op, rows, cols, x, xoff, ldx, yb, yoff, ldy));
                check_decision(XOT_PS, "softmax");
                REF(softmax)((xo_softmax_op)op, rows, cols, orig + xoff, ldx, hyb + yoff, ldy);
                T *got = xot_read_all(yb);
                XOT_CLOSE(got, hyb, v == 2 ? xlen : ylen, what);
                for (size_t i = 0; i < (v == 2 ? xlen : ylen); i++)
                    if (!isfinite((double)got[i])) {
                        print_error("%s: element %zu is not finite\n", what, i);
                        fail();
                    }
                if (v != 2) check_unchanged(x, orig, what);
                free(got);
                free(orig);
                free(hx);
                free(hy);
                xo_buffer_destroy(x);
                xo_buffer_destroy(y);
            }
}

/* Per row: loss and gradient of softmax cross-entropy; labels in range, -1 and cols
 * (ignored rows), grad absent, padded, or in place over x. */
static void TEST(softmax_xent)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t dims[][2] = {{1, 1}, {1, 7}, {7, 33}, {130, 10}, {3, 1000}};
    uint64_t seed = 2650;
    for (size_t s = 0; s < sizeof dims / sizeof dims[0]; s++)
        for (int v = 0; v < 4; v++) { /* grad packed; padded; NULL; in place (grad == x) */
            size_t rows = dims[s][0], cols = dims[s][1], ldx = cols + (v ? 2 : 0), ldg = cols + (v == 1 ? 3 : 0);
            size_t xoff = 1, goff = v == 3 ? xoff : 2, loff = 3, lboff = 1;
            if (v == 3) ldg = ldx;
            size_t xlen = xoff + xot_mat_span(XO_ROW_MAJOR, rows, cols, ldx) + 2;
            size_t glen = goff + xot_mat_span(XO_ROW_MAJOR, rows, cols, ldg) + 2;
            MAKE(hx, x, xlen, seed++, 60, 100); /* large: without the max subtracted, exp overflows */
            MAKE(hg, g, glen, seed++, -1, 1);
            MAKE(hl, loss, loff + rows + 1, seed++, -1, 1);
            int32_t *lab = calloc(lboff + rows, sizeof *lab);
            for (size_t i = 0; i < rows; i++)
                lab[lboff + i] = i % 5 == 3 ? -1 : i % 7 == 5 ? (int32_t)cols : (int32_t)((i * 7 + s) % cols);
            xo_buffer *lb = xot_buffer(g_ctx, lab, (lboff + rows) * sizeof *lab);
            xo_buffer *gb = v == 2 ? NULL : v == 3 ? x : g;
            T *hgb = v == 3 ? hx : hg;
            T *orig = HOST(xlen);
            memcpy(orig, hx, xlen * sizeof(T));
            T scale = (T)(1.0 / (double)rows);
            char what[96];
            snprintf(what, sizeof what, "%ssoftmax_xent %zux%zu ldx=%zu ldg=%zu%s", XOT_PS, rows, cols, ldx, ldg,
                     v == 2 ? " no grad" : v == 3 ? " in place" : "");
            xot_assert_ok(XO(softmax_xent)(g_ctx, rows, cols, x, xoff, ldx, lb, lboff, scale, loss, loff, gb, goff,
                                           ldg));
            check_decision(XOT_PS, "softmax_xent");
            REF(softmax_xent)(rows, cols, orig + xoff, ldx, lab + lboff, scale, hl + loff,
                              v == 2 ? NULL : hgb + goff, ldg);
            T *got = xot_read_all(loss);
            XOT_CLOSE(got, hl, loff + rows + 1, what);
            free(got);
            if (v != 2) {
                got = xot_read_all(gb);
                XOT_CLOSE(got, hgb, v == 3 ? xlen : glen, what);
                free(got);
            }
            if (v != 3) check_unchanged(x, orig, what);
            free(orig);
            free(hx);
            free(hg);
            free(hl);
            free(lab);
            xo_buffer_destroy(lb);
            xo_buffer_destroy(x);
            xo_buffer_destroy(g);
            xo_buffer_destroy(loss);
        }
}

static void TEST(reduce_axis)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t dims[][2] = {{1, 1}, {1, 9}, {9, 1}, {7, 33}, {130, 7}, {3, 1000}, {600, 300}};
    uint64_t seed = 2700;
    for (int op = XO_SUM; op <= XO_MAX_ELEMENT; op++)
        for (int axis = 0; axis <= 1; axis++)
            for (size_t s = 0; s < sizeof dims / sizeof dims[0]; s++)
                for (size_t pad = 0; pad <= 2; pad += 2) {
                    size_t rows = dims[s][0], cols = dims[s][1], ldx = cols + pad, xoff = 1, ooff = 3;
                    size_t results = axis == 0 ? cols : rows;
                    size_t xlen = xoff + xot_mat_span(XO_ROW_MAJOR, rows, cols, ldx) + 1, olen = ooff + results + 2;
                    MAKE(hx, x, xlen, seed++, -1, 1);
                    MAKE(ho, o, olen, seed++, -1, 1);
                    char what[96];
                    snprintf(what, sizeof what, "%sreduce_axis %s axis=%d %zux%zu ldx=%zu", XOT_PS,
                             op == XO_SUM ? "SUM" : "MAX", axis, rows, cols, ldx);
                    xot_assert_ok(XO(reduce_axis)(g_ctx, (xo_reduce_op)op, rows, cols, x, xoff, ldx, axis, o, ooff));
                    check_decision(XOT_PS, "reduce_axis");
                    REF(reduce_axis)((xo_reduce_op)op, rows, cols, hx + xoff, ldx, axis, ho + ooff);
                    T *got = xot_read_all(o);
                    XOT_CLOSE(got, ho, olen, what);
                    check_unchanged(x, hx, what);
                    free(got);
                    free(hx);
                    free(ho);
                    xo_buffer_destroy(x);
                    xo_buffer_destroy(o);
                }
}

/* One gemm_bias_act against the reference: C at an offset (padded for even k, dense for
 * odd k), NaN in it when beta is 0; the bias (or none) at an offset. */
static void CAT(gba_case_, XOT_P)(xo_layout lay, xo_transpose ta, xo_transpose tb, size_t m, size_t n, size_t k,
                                  T beta, int with_bias, xo_unary_op act, uint64_t seed)
{
    size_t ar = ta == XO_NO_TRANS ? m : k, ac = ta == XO_NO_TRANS ? k : m;
    size_t br = tb == XO_NO_TRANS ? k : n, bc = tb == XO_NO_TRANS ? n : k;
    size_t lda = (lay == XO_ROW_MAJOR ? ac : ar) + 1, ldb = (lay == XO_ROW_MAJOR ? bc : br) + 2;
    size_t ldc = (lay == XO_ROW_MAJOR ? n : m) + (k & 1 ? 0 : 3), aoff = 2, boff = 1, coff = 3, biasoff = 2;
    size_t alen = aoff + xot_mat_span(lay, ar, ac, lda) + 1, blen = boff + xot_mat_span(lay, br, bc, ldb) + 1;
    size_t clen = coff + xot_mat_span(lay, m, n, ldc) + 2, biaslen = biasoff + n + 1;
    /* A and B in [-1, 1] scaled so |A B| < 1, and C's beta term at most 0.5: a bias from
     * the activation's domain pushed 1.75 further from 0 keeps C in its domain (negatives
     * included where it has them) and |C| >= 1/2, away from where 1/x and log are steep. */
    MAKE(ha, a, alen, seed, -1, 1);
    MAKE(hb, b, blen, seed + 1, -1.0 / (double)(k ? k : 1), 1.0 / (double)(k ? k : 1));
    MAKE(hc, c, clen, seed + 2, -1, 1);
    MAKE(hbias, bias, biaslen, seed + 3, 0, 1);
    CAT(xot_unary_fill_, XOT_P)(act, hbias, biaslen, seed + 3);
    for (size_t i = 0; i < biaslen; i++) hbias[i] += (T)(hbias[i] < 0 ? -1.75 : 1.75);
    xot_assert_ok(xo_buffer_write(bias, 0, hbias, biaslen * sizeof(T)));
    if (beta == 0)
        for (size_t i = 0; i < clen; i++) hc[i] = (T)NAN;
    xot_assert_ok(xo_buffer_write(c, 0, hc, clen * sizeof(T)));
    char what[128];
    snprintf(what, sizeof what, "%sgemm_bias_act %s ta=%d tb=%d %zux%zux%zu beta=%g bias=%d act=%s", XOT_PS,
             lay == XO_ROW_MAJOR ? "row" : "col", ta, tb, m, n, k, (double)beta, with_bias, xot_unary_name(act));
    xot_assert_ok(XO(gemm_bias_act)(g_ctx, lay, ta, tb, m, n, k, (T)1, a, aoff, lda, b, boff, ldb, beta, c, coff,
                                    ldc, with_bias ? bias : NULL, biasoff, act));
    check_decision(XOT_PS, "gemm_bias_act"); /* k == 0 too: a forced device runs it (issue 20 B3) */
    /* beta == 0 never reads C: the reference starts from zeros where C holds NaN */
    for (size_t i = 0; beta == 0 && i < m; i++)
        for (size_t j = 0; j < n; j++) hc[coff + (lay == XO_ROW_MAJOR ? i * ldc + j : i + j * ldc)] = 0;
    REF(gemm_bias_act)(lay, ta, tb, m, n, k, (T)1, ha + aoff, lda, hb + boff, ldb, beta, hc + coff, ldc,
                       with_bias ? hbias + biasoff : NULL, act);
    T *got = xot_read_all(c);
    XOT_CLOSE(got, hc, clen, what);
    check_unchanged(a, ha, what);
    check_unchanged(b, hb, what);
    check_unchanged(bias, hbias, what);
    free(got);
    free(ha);
    free(hb);
    free(hc);
    free(hbias);
    xo_buffer_destroy(a);
    xo_buffer_destroy(b);
    xo_buffer_destroy(c);
    xo_buffer_destroy(bias);
}

static void TEST(gemm_bias_act)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t dims[][3] = {{1, 1, 1}, {1, 9, 4}, {7, 5, 3}, {33, 17, 9}};
    uint64_t seed = 2800;
    /* every activation of the op map, with the bias, on small shapes in both layouts */
    for (int a = 0; a < XO_UNARY_OP_COUNT; a++)
        for (size_t s = 0; xot_unary_is_activation(a) && s < sizeof dims / sizeof dims[0]; s++)
            for (int lay = 0; lay < 2; lay++)
                CAT(gba_case_, XOT_P)(lay ? XO_COL_MAJOR : XO_ROW_MAJOR, s & 1 ? XO_TRANS : XO_NO_TRANS,
                                      s & 2 ? XO_TRANS : XO_NO_TRANS, dims[s][0], dims[s][1], dims[s][2],
                                      (T)(a & 1 ? 0 : 0.5), 1, (xo_unary_op)a, seed += 4);
    /* no bias (activations defined everywhere), beta 0 with NaN in C and beta 0.5 */
    for (int t = 0; t < 4; t++)
        for (int lay = 0; lay < 2; lay++)
            CAT(gba_case_, XOT_P)(lay ? XO_COL_MAJOR : XO_ROW_MAJOR, t & 1 ? XO_TRANS : XO_NO_TRANS,
                                  t & 2 ? XO_TRANS : XO_NO_TRANS, 13, 11, 6, (T)(t & 1 ? 0 : 0.5), 0,
                                  t < 2 ? XO_TANH : XO_RELU, seed += 4);
    /* several blocks of lines (the CPU works on blocks of at least 8 MiB of C and
     * 64 Mflop: here 1024 lines of 2048 in float, 521 in double) */
    for (int t = 0; t < 2; t++)
        CAT(gba_case_, XOT_P)(t ? XO_COL_MAJOR : XO_ROW_MAJOR, t ? XO_TRANS : XO_NO_TRANS, t ? XO_NO_TRANS : XO_TRANS,
                              t ? 2048 : 1100, t ? 1100 : 2048, 30, (T)(t ? 0 : 0.5), !t, XO_SIGMOID, seed += 4);
    /* k == 0: C = act(beta C + bias) */
    CAT(gba_case_, XOT_P)(XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 5, 4, 0, (T)0.5, 1, XO_TANH, seed += 4);
    CAT(gba_case_, XOT_P)(XO_COL_MAJOR, XO_NO_TRANS, XO_TRANS, 5, 4, 0, (T)0, 1, XO_SQRT, seed += 4);
    CAT(gba_case_, XOT_P)(XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 4, 4, 0, (T)-0.5, 1, XO_TANH, seed += 4);
}

#undef CAT_
#undef CAT
#undef T
#undef XO
#undef REF
#undef TEST
#undef HOST
#undef MAKE

#endif /* XOT_T */
