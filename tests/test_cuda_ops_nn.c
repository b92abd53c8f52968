/* The CUDA plugin's ops beyond cuBLAS's (copy ... softmax_xent, gemm_bias_act) through
 * its own vtable, below the core: every kind in both
 * precisions against plain reference loops, with strides, padded leading dimensions,
 * both layouts, in-place use, and the BLAS rules that the core cannot check from
 * outside (alpha == 0 leaves x/A/B unread, beta == 0 leaves y/C unread: NaN there must
 * not reach the result). Runs on the first CUDA device, which without a GPU is the
 * stand-in driver and cuBLAS (tests/cuda.cmake); exits 77 where there is none. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cuda_internal.h"
#include "xo_test.h"

const xo_plugin *xo_plugin_cuda(void);

static xo_plugin_host k_host; /* xot_quiet_host, set in main */

static const xo_plugin *g_p;
static void *g_st;
static xo_dtype g_dt; /* the precision of the case being run */

#define NMEM 8
static xo_plugin_mem *g_mem[NMEM]; /* freed after each case */
static int g_nmem;

static size_t esize(void)
{
    return g_dt == XO_F64 ? sizeof(double) : sizeof(float);
}

/* A device buffer holding v[0..n) in the current precision. */
static xo_plugin_mem *dev(const double *v, size_t n)
{
    void *h = malloc(n * esize());
    assert_non_null(h);
    for (size_t i = 0; i < n; i++) {
        if (g_dt == XO_F64) ((double *)h)[i] = v[i];
        else ((float *)h)[i] = (float)v[i];
    }
    xo_plugin_mem *m = NULL;
    assert_int_equal(g_p->mem_alloc(g_st, 0, n * esize(), &m), XO_OK);
    assert_int_equal(g_p->upload(g_st, 0, m, 0, h, n * esize()), XO_OK);
    free(h);
    assert_true(g_nmem < NMEM);
    g_mem[g_nmem++] = m;
    return m;
}

/* A device buffer holding the int32 labels v[0..n), whatever the precision. */
static xo_plugin_mem *dev_labels(const int32_t *v, size_t n)
{
    xo_plugin_mem *m = NULL;
    assert_int_equal(g_p->mem_alloc(g_st, 0, n * sizeof *v, &m), XO_OK);
    assert_int_equal(g_p->upload(g_st, 0, m, 0, v, n * sizeof *v), XO_OK);
    assert_true(g_nmem < NMEM);
    g_mem[g_nmem++] = m;
    return m;
}

static void read_back(xo_plugin_mem *m, double *out, size_t n)
{
    void *h = malloc(n * esize());
    assert_non_null(h);
    assert_int_equal(g_p->download(g_st, 0, m, 0, h, n * esize()), XO_OK);
    for (size_t i = 0; i < n; i++) out[i] = g_dt == XO_F64 ? ((double *)h)[i] : (double)((float *)h)[i];
    free(h);
}

static void run(xo_op_desc *op)
{
    op->dtype = g_dt;
    if (g_p->run(g_st, 0, op, XO_NO_TOKEN) != XO_OK) fail_msg("run kind %d: %s", (int)op->kind, xot_host_error);
}

/* Device result of `m` against want[0..n): relative 1e-5 (f32) / 1e-12 (f64); NaN only
 * where NaN is wanted; exact where `exact`. Frees the case's buffers. */
static void expect(xo_plugin_mem *m, const double *want, size_t n, int exact, const char *what)
{
    double got[64];
    assert_true(n <= 64);
    read_back(m, got, n);
    const double tol = g_dt == XO_F64 ? 1e-12 : 1e-5;
    for (size_t i = 0; i < n; i++) {
        const double w = g_dt == XO_F64 ? want[i] : (double)(float)want[i];
        const int ok = isnan(w) ? isnan(got[i]) : exact ? got[i] == w : fabs(got[i] - w) <= tol * (1 + fabs(w));
        if (!ok) fail_msg("%s (%s) [%zu]: got %.17g want %.17g", what, g_dt == XO_F64 ? "f64" : "f32", i, got[i], w);
    }
}

static void free_case(void)
{
    while (g_nmem > 0) g_p->mem_free(g_st, 0, g_mem[--g_nmem]);
}

/* After each test, also one that failed midway. */
static int free_leftovers(void **state)
{
    (void)state;
    free_case();
    return 0;
}

static xo_operand arg(xo_plugin_mem *m, size_t off)
{
    return (xo_operand){.mem = m, .off = off};
}

static const double k_x[16] = {0.5, -1.25, 2, 3.5, -0.75, 1, -2.5, 0.25, 4, -3, 1.5, -0.5, 2.25, 0.75, -1.75, 3};

/* Each test body runs once per precision. */
#define FOR_EACH_DTYPE for (g_dt = XO_F32; g_dt <= XO_F64; g_dt = (xo_dtype)(g_dt + 1))

static void test_copy_fill(void **state)
{
    (void)state;
    FOR_EACH_DTYPE {
        /* copy 5 elements, x stride 2 at offset 1, y stride 3; the gaps keep their 7s. */
        double y0[15], want[15];
        for (int i = 0; i < 15; i++) y0[i] = want[i] = 7;
        for (int i = 0; i < 5; i++) want[i * 3] = k_x[1 + i * 2];
        xo_plugin_mem *x = dev(k_x, 16), *y = dev(y0, 15);
        xo_op_desc op = {.kind = XO_OP_COPY, .n = 5, .inc = {2, 3}, .narg = 2};
        op.arg[0] = arg(x, 1);
        op.arg[1] = arg(y, 0);
        run(&op);
        expect(y, want, 15, 1, "copy");
        op.arg[0] = op.arg[1] = arg(x, 0); /* y is x: nothing changes */
        op.inc[1] = 2;
        run(&op);
        expect(x, k_x, 16, 1, "copy onto itself");
        free_case();

        /* fill every other element of a NaN buffer; x is never read. */
        double nan8[8], fwant[8];
        for (int i = 0; i < 8; i++) {
            nan8[i] = NAN;
            fwant[i] = i % 2 ? NAN : 1.0 / 3.0;
        }
        xo_plugin_mem *f = dev(nan8, 8);
        op = (xo_op_desc){.kind = XO_OP_FILL, .n = 4, .inc = {2}, .alpha = 1.0 / 3.0, .narg = 1};
        op.arg[0] = arg(f, 0);
        run(&op);
        expect(f, fwant, 8, 1, "fill");
        free_case();
    }
}

static void test_axpby(void **state)
{
    (void)state;
    const double ab[][2] = {{2, -0.5}, {0, 1.5}, {-1, 0}, {0, 0}};
    FOR_EACH_DTYPE for (int c = 0; c < 4; c++) {
        const double alpha = ab[c][0], beta = ab[c][1];
        double x0[8], y0[8], want[8];
        for (int i = 0; i < 8; i++) {
            x0[i] = alpha == 0 ? NAN : k_x[i]; /* unread where alpha == 0 */
            y0[i] = beta == 0 && i % 2 == 0 ? NAN : k_x[15 - i];
            want[i] = y0[i];
        }
        for (int i = 0; i < 4; i++)
            want[i * 2] = (alpha == 0 ? 0 : alpha * x0[i]) + (beta == 0 ? 0 : beta * y0[i * 2]);
        xo_plugin_mem *x = dev(x0, 8), *y = dev(y0, 8);
        xo_op_desc op = {.kind = XO_OP_AXPBY, .n = 4, .inc = {1, 2}, .alpha = alpha, .beta = beta, .narg = 2};
        op.arg[0] = arg(x, 0);
        op.arg[1] = arg(y, 0);
        run(&op);
        expect(y, want, 8, 0, "axpby");
        free_case();
    }
}

/* Element (i, j) of a matrix with leading dimension ld in `layout`. */
static size_t at(xo_layout layout, size_t i, size_t j, size_t ld)
{
    return layout == XO_ROW_MAJOR ? i * ld + j : i + j * ld;
}

static void test_ger(void **state)
{
    (void)state;
    const size_t m = 3, n = 2, lda = 4;
    FOR_EACH_DTYPE for (int lay = 0; lay < 2; lay++) for (int zero = 0; zero < 2; zero++) {
        const xo_layout layout = lay ? XO_COL_MAJOR : XO_ROW_MAJOR;
        const double alpha = zero ? 0 : 0.5;
        double x0[6], y0[2], a0[12], want[12];
        for (int i = 0; i < 6; i++) x0[i] = zero ? NAN : k_x[i];
        for (int i = 0; i < 2; i++) y0[i] = zero ? NAN : k_x[8 + i];
        for (int i = 0; i < 12; i++) a0[i] = want[i] = k_x[i] + 1;
        for (size_t i = 0; i < m && !zero; i++)
            for (size_t j = 0; j < n; j++) want[at(layout, i, j, lda)] += alpha * x0[i * 2] * y0[j];
        xo_plugin_mem *x = dev(x0, 6), *y = dev(y0, 2), *a = dev(a0, 12);
        xo_op_desc op = {.kind = XO_OP_GER, .layout = layout, .m = m, .n = n, .inc = {2, 1},
                         .ld = {0, 0, lda}, .alpha = alpha, .narg = 3};
        op.arg[0] = arg(x, 0);
        op.arg[1] = arg(y, 0);
        op.arg[2] = arg(a, 0);
        run(&op);
        expect(a, want, 12, zero, layout == XO_ROW_MAJOR ? "ger row-major" : "ger col-major");
        free_case();
    }
}

static void test_binary_scalar_scale_by(void **state)
{
    (void)state;
    FOR_EACH_DTYPE {
        for (int bop = XO_ADD; bop < XO_BINARY_OP_COUNT; bop++) {
            double want[16];
            const double s15[16] = {1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5};
            memcpy(want, k_x, sizeof want);
            xot_ref_dbinary((xo_binary_op)bop, 14, k_x + 2, s15, want + 2);
            xo_plugin_mem *a = dev(k_x, 16);
            xo_op_desc op = {.kind = XO_OP_BINARY_SCALAR, .subop = bop, .n = 14, .alpha = 1.5, .narg = 2};
            op.arg[0] = op.arg[1] = arg(a, 2); /* in place */
            run(&op);
            expect(a, want, 16, 0, "binary_scalar");
            free_case();
        }
        /* x (stride 3) *= s[1], s read on the device. */
        const double s0[2] = {NAN, -2.5};
        double want[16];
        for (int i = 0; i < 16; i++) want[i] = i % 3 == 0 && i / 3 < 5 ? k_x[i] * -2.5 : k_x[i];
        xo_plugin_mem *s = dev(s0, 2), *x = dev(k_x, 16);
        xo_op_desc op = {.kind = XO_OP_SCALE_BY, .n = 5, .inc = {3}, .narg = 2};
        op.arg[0] = arg(s, 1);
        op.arg[1] = arg(x, 0);
        run(&op);
        expect(x, want, 16, 0, "scale_by");
        free_case();
    }
}

static void test_softmax(void **state)
{
    (void)state;
    const size_t rows = 3, cols = 4, ldx = 5, ldy = 6;
    FOR_EACH_DTYPE for (int v = 0; v < 4; v++) {
        const int sop = v / 2 ? XO_LOG_SOFTMAX : XO_SOFTMAX, inplace = v % 2;
        const size_t ld = inplace ? ldx : ldy;
        double x0[16], y0[18], want[18];
        for (int i = 0; i < 16; i++) x0[i] = k_x[i] * 40; /* exp overflows without the max */
        for (int i = 0; i < 18; i++) y0[i] = want[i] = inplace && i < 16 ? x0[i] : -9;
        for (size_t r = 0; r < rows; r++) {
            const double *xr = x0 + r * ldx;
            double mx = xr[0], s = 0;
            for (size_t j = 0; j < cols; j++) mx = xr[j] > mx ? xr[j] : mx;
            for (size_t j = 0; j < cols; j++) s += exp(xr[j] - mx);
            for (size_t j = 0; j < cols; j++)
                want[r * ld + j] = sop == XO_LOG_SOFTMAX ? (xr[j] - mx) - log(s) : exp(xr[j] - mx) / s;
        }
        xo_plugin_mem *x = dev(x0, 16), *y = inplace ? x : dev(y0, 18);
        xo_op_desc op = {.kind = XO_OP_SOFTMAX, .subop = sop, .m = rows, .n = cols, .ld = {ldx, ld}, .narg = 2};
        op.arg[0] = arg(x, 0);
        op.arg[1] = arg(y, 0);
        run(&op);
        expect(y, want, inplace ? 16 : 18, 0, sop == XO_SOFTMAX ? "softmax" : "log_softmax");
        free_case();
    }
}

/* softmax_xent over 4 rows x 5 columns with padded leading dimensions and offsets on
 * every operand; labels 2, -1, 5 (== cols), 0: the two outside [0, cols) give loss 0
 * and a zero grad row. Grad separate (its padding untouched), absent (narg 3), and x
 * itself. Reference: a plain loop in double. */
static void test_softmax_xent(void **state)
{
    (void)state;
    enum { ROWS = 4, COLS = 5, LDX = 6, LDG = 7, XOFF = 2, GOFF = 3, LOFF = 1 };
    const int32_t labels0[1 + ROWS] = {7, 2, -1, COLS, 0}; /* offset 1: the 7 is not a label */
    const double scale = 0.25;
    FOR_EACH_DTYPE for (int v = 0; v < 3; v++) { /* 0: grad separate, 1: no grad, 2: grad is x */
        const size_t nx = XOFF + ROWS * LDX, ng = GOFF + ROWS * LDG, ldg = v == 2 ? LDX : LDG;
        double x0[XOFF + ROWS * LDX], g0[GOFF + ROWS * LDG], loss0[LOFF + ROWS], gwant[GOFF + ROWS * LDG],
            lwant[LOFF + ROWS];
        for (size_t i = 0; i < nx; i++) x0[i] = k_x[i % 16] * 40 + (double)i / 8; /* exp overflows without the max */
        for (size_t i = 0; i < ng; i++) g0[i] = -9;
        for (size_t i = 0; i < LOFF + ROWS; i++) loss0[i] = lwant[i] = NAN;
        double *gw = gwant, *const gref = v == 2 ? gwant + XOFF : gwant + GOFF;
        if (v == 2) memcpy(gwant, x0, nx * sizeof *x0);
        else memcpy(gwant, g0, ng * sizeof *g0);
        for (size_t r = 0; r < ROWS; r++) {
            const double *xr = x0 + XOFF + r * LDX;
            double *gr = gref + r * ldg;
            const int32_t c = labels0[LOFF + r];
            if (c < 0 || c >= COLS) {
                lwant[LOFF + r] = 0;
                for (size_t j = 0; j < COLS; j++) gr[j] = 0;
                continue;
            }
            double mx = xr[0], s = 0;
            for (size_t j = 0; j < COLS; j++) mx = xr[j] > mx ? xr[j] : mx;
            for (size_t j = 0; j < COLS; j++) s += exp(xr[j] - mx);
            lwant[LOFF + r] = log(s) - (xr[c] - mx);
            double gj[COLS];
            for (size_t j = 0; j < COLS; j++) gj[j] = scale * (exp(xr[j] - mx) / s - (j == (size_t)c ? 1 : 0));
            memcpy(gr, gj, sizeof gj);
        }
        xo_plugin_mem *x = dev(x0, nx), *labels = dev_labels(labels0, 1 + ROWS), *loss = dev(loss0, LOFF + ROWS);
        xo_plugin_mem *g = v == 0 ? dev(g0, ng) : v == 2 ? x : NULL;
        xo_op_desc op = {.kind = XO_OP_SOFTMAX_XENT, .m = ROWS, .n = COLS, .ld = {LDX, ldg}, .alpha = scale,
                         .narg = v == 1 ? 3 : 4};
        op.arg[0] = arg(x, XOFF);
        op.arg[1] = arg(labels, LOFF);
        op.arg[2] = arg(loss, LOFF);
        if (g) op.arg[3] = arg(g, v == 2 ? XOFF : GOFF);
        run(&op);
        static const char *const what[] = {"softmax_xent grad", "softmax_xent no grad", "softmax_xent grad == x"};
        expect(loss, lwant, LOFF + ROWS, 0, what[v]);
        if (v == 0) expect(g, gw, ng, 0, what[v]);
        if (v == 1) expect(x, x0, nx, 1, "softmax_xent: x unchanged without grad");
        if (v == 2) expect(x, gw, nx, 0, what[v]);
        free_case();
    }
}

static void test_reduce_axis(void **state)
{
    (void)state;
    const size_t rows = 3, cols = 4, ldx = 5;
    FOR_EACH_DTYPE for (int axis = 0; axis < 2; axis++) for (int rop = XO_SUM; rop <= XO_MAX_ELEMENT; rop++) {
        const size_t nout = axis == 0 ? cols : rows;
        double out0[5] = {NAN, NAN, NAN, NAN, 42}, want[5] = {0, 0, 0, 0, 42};
        for (size_t o = 0; o < nout; o++) {
            const size_t len = axis == 0 ? rows : cols;
            for (size_t t = 0; t < len; t++) {
                const double v = axis == 0 ? k_x[t * ldx + o] : k_x[o * ldx + t];
                want[o] = t == 0 ? v : rop == XO_SUM ? want[o] + v : v > want[o] ? v : want[o];
            }
        }
        xo_plugin_mem *x = dev(k_x, 16), *out = dev(out0, 5);
        xo_op_desc op = {.kind = XO_OP_REDUCE_AXIS, .subop = rop, .axis = axis, .m = rows, .n = cols,
                         .ld = {ldx}, .narg = 2};
        op.arg[0] = arg(x, 0);
        op.arg[1] = arg(out, 0);
        run(&op);
        expect(out, want, nout, 0, axis == 0 ? "reduce_axis 0" : "reduce_axis 1");
        free_case();
    }
}

/* C = act(alpha op(A) op(B) + beta C + bias) for m=3, n=4, k=2, A transposed, padded
 * leading dimensions, both layouts; alpha == 0 with NaN in A and B, beta == 0 with NaN
 * in C, and no bias. */
static void test_gemm_bias_act(void **state)
{
    (void)state;
    const size_t m = 3, n = 4, k = 2, lda = 4, ldb = 5, ldc = 6;
    const struct { double alpha, beta; int act, bias; } cases[] = {
        {1.5, 0.5, XO_RELU, 1}, {0.5, 0, XO_TANH, 1}, {0, 0.5, XO_SIGMOID, 1}, {0, 0, XO_IDENTITY, 1},
        {2, 1, XO_IDENTITY, 0}, {-1, 0.25, XO_RELU, 0},
    };
    FOR_EACH_DTYPE for (int lay = 0; lay < 2; lay++) for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const xo_layout L = lay ? XO_COL_MAJOR : XO_ROW_MAJOR;
        const double alpha = cases[c].alpha, beta = cases[c].beta;
        double a0[24], b0[24], c0[24], want[24], bias0[5] = {9, 0.5, -1, 2, -0.25};
        for (int i = 0; i < 24; i++) {
            a0[i] = alpha == 0 ? NAN : k_x[i % 16];
            b0[i] = alpha == 0 ? INFINITY : k_x[(i + 5) % 16];
            c0[i] = want[i] = beta == 0 ? NAN : k_x[(i + 3) % 16];
        }
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++) {
                double s = 0;
                for (size_t l = 0; l < k && alpha != 0; l++) s += a0[at(L, l, i, lda)] * b0[at(L, l, j, ldb)];
                double v = (alpha == 0 ? 0 : alpha * s) + (beta == 0 ? 0 : beta * c0[at(L, i, j, ldc)]);
                v += cases[c].bias ? bias0[1 + j] : 0;
                xot_ref_dunary((xo_unary_op)cases[c].act, 1, &v, &want[at(L, i, j, ldc)]);
            }
        xo_plugin_mem *a = dev(a0, 24), *b = dev(b0, 24), *cm = dev(c0, 24), *bias = dev(bias0, 5);
        xo_op_desc op = {.kind = XO_OP_GEMM_BIAS_ACT, .subop = cases[c].act, .layout = L, .ta = XO_TRANS,
                         .tb = XO_NO_TRANS, .m = m, .n = n, .k = k, .ld = {lda, ldb, ldc}, .alpha = alpha,
                         .beta = beta, .narg = cases[c].bias ? 4 : 3};
        op.arg[0] = arg(a, 0);
        op.arg[1] = arg(b, 0);
        op.arg[2] = arg(cm, 0);
        op.arg[3] = arg(bias, 1);
        run(&op);
        char what[64];
        snprintf(what, sizeof what, "gemm_bias_act %s case %zu", lay ? "col" : "row", c);
        expect(cm, want, 24, 0, what);
        free_case();
    }
}

static void test_new_unary(void **state)
{
    (void)state;
    FOR_EACH_DTYPE for (int u = 0; u < XO_UNARY_OP_COUNT; u++) { /* every row of the op map */
        double x0[8], want[8];
        xot_unary_fill_d(u, x0, 8, 40 + (uint64_t)u); /* from the op's domain, negatives included */
        for (int i = 0; i < 8; i++) x0[i] = (double)(float)x0[i];
        xot_ref_dunary((xo_unary_op)u, 8, x0, want);
        xo_plugin_mem *x = dev(x0, 8), *y = dev(x0, 8);
        xo_op_desc op = {.kind = XO_OP_UNARY, .subop = u, .n = 8, .narg = 2};
        op.arg[0] = arg(x, 0);
        op.arg[1] = arg(y, 0);
        run(&op);
        expect(y, want, 8, u == XO_IDENTITY || u == XO_ABS, "unary");
        free_case();
    }
}

/* Every op kind in both precisions runs on a CUDA device. */
static void test_supports_every_kind(void **state)
{
    (void)state;
    for (int k = 0; k < XO_OP_KIND_COUNT; k++)
        for (int t = XO_F32; t <= XO_F64; t++)
            if (g_p->supports(g_st, 0, &(xo_op_desc){.kind = (xo_op_kind)k, .dtype = (xo_dtype)t}) != 1)
                fail_msg("kind %d dtype %d not supported", k, t);
}

static int setup(void **state)
{
    (void)state;
    g_p = xo_plugin_cuda();
    return xot_plugin_open(g_p, &k_host, &g_st);
}

static int teardown(void **state)
{
    (void)state;
    g_p->shutdown(g_st);
    return 0;
}

int main(void)
{
    k_host = xot_quiet_host("cuda");
    int skip = xot_plugin_skip_without(xo_plugin_cuda(), &k_host, "CUDA device (real or stand-in)");
    if (skip) return skip;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_supports_every_kind, free_leftovers),
        cmocka_unit_test_teardown(test_copy_fill, free_leftovers),
        cmocka_unit_test_teardown(test_axpby, free_leftovers),
        cmocka_unit_test_teardown(test_ger, free_leftovers),
        cmocka_unit_test_teardown(test_binary_scalar_scale_by, free_leftovers),
        cmocka_unit_test_teardown(test_softmax, free_leftovers),
        cmocka_unit_test_teardown(test_softmax_xent, free_leftovers),
        cmocka_unit_test_teardown(test_reduce_axis, free_leftovers),
        cmocka_unit_test_teardown(test_gemm_bias_act, free_leftovers),
        cmocka_unit_test_teardown(test_new_unary, free_leftovers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
