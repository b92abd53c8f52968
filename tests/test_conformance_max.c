/* The NaN rule of every max where the conformance table cannot reach it: a NaN anywhere
 * among the elements a max folds makes the result NaN, wherever it stands, so a result
 * never depends on where it ran; argmax follows it as an index (the first NaN wins, else
 * the first of equal maxima). The table (test_conformance.c) holds every device's eager
 * reduce, reduce_axis, binary MAX and argmax to the references with NaN planted; here,
 * the references themselves against the rule, and both maxima and argmax in a plan
 * (whose element-wise chains are fused). Single and double precision: host data is
 * double (values a float holds), converted to the op's. */
#include "test_conformance.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- host data in either precision ---------------------------------------------- */

xo_buffer *conformance_make(const double *h, size_t n, int fp64)
{
    if (fp64) return xot_buffer(g_ctx, h, n * sizeof(double));
    float *f = malloc((n ? n : 1) * sizeof(float));
    assert_non_null(f);
    for (size_t i = 0; i < n; i++) f[i] = (float)h[i];
    xo_buffer *b = xot_buffer(g_ctx, f, n * sizeof(float));
    free(f);
    return b;
}

static double *read_back(xo_buffer *b, size_t n, int fp64)
{
    void *raw = xot_read_all(b);
    double *d = malloc((n ? n : 1) * sizeof(double));
    assert_non_null(d);
    for (size_t i = 0; i < n; i++) d[i] = fp64 ? ((double *)raw)[i] : (double)((float *)raw)[i];
    free(raw);
    return d;
}

void conformance_expect(xo_buffer *b, const double *want, size_t n, int fp64, const char *what)
{
    double *got = read_back(b, n, fp64);
    const double tol = fp64 ? XOT_TOL_D : XOT_TOL_F;
    for (size_t i = 0; i < n; i++) {
        double w = fp64 ? want[i] : (double)(float)want[i], scale = fabs(w) > 1 ? fabs(w) : 1;
        int ok = isnan(w) ? isnan(got[i]) : !isnan(got[i]) && fabs(got[i] - w) <= tol * scale;
        if (!ok) {
            print_error("%s (%s): element %zu is %.9g, want %.9g\n", what, fp64 ? "double" : "float", i, got[i], w);
            fail();
        }
    }
    free(got);
}


static xo_status reduce(int fp64, size_t n, xo_buffer *x, size_t xo, xo_buffer *o, size_t oo)
{
    return fp64 ? xo_dreduce(g_ctx, XO_MAX_ELEMENT, n, x, xo, o, oo) : xo_sreduce(g_ctx, XO_MAX_ELEMENT, n, x, xo, o, oo);
}

static xo_status binary_max(int fp64, size_t n, xo_buffer *a, xo_buffer *b, xo_buffer *c)
{
    return fp64 ? xo_dbinary(g_ctx, XO_MAX, n, a, 0, b, 0, c, 0) : xo_sbinary(g_ctx, XO_MAX, n, a, 0, b, 0, c, 0);
}

static void fill(double *h, size_t n, uint64_t seed)
{
    xot_fill_d(h, n, seed, -1, 1);
}

/* ---- element-wise max, and both in a plan ------------------------------------------- */

/* a and b of n elements with NaN in a at i % 5 == 1 and in b at i % 5 == 2; want
 * max(a, b) under the rule. */
static void max_operands(size_t n, double *a, double *b, double *want, uint64_t seed)
{
    fill(a, n, seed);
    fill(b, n, seed + 1);
    for (size_t i = 0; i < n; i++) {
        if (i % 5 == 1) a[i] = NAN;
        if (i % 5 == 2) b[i] = NAN;
        want[i] = isnan(a[i]) || isnan(b[i]) ? NAN : (a[i] > b[i] ? a[i] : b[i]);
    }
}

/* A plan of max(a, b) -> c, -c -> c (a fused chain where the device has a chain runner),
 * then reduce MAX of c and of a: NaN in both results, c = -max(a, b) under the rule. */
void conformance_max_plan(void **state)
{
    (void)state;
    const size_t n = 4096;
    for (int fp64 = 0; fp64 <= g_fp64; fp64++) {
        double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double)), *want = malloc(n * sizeof(double));
        assert_non_null(a);
        assert_non_null(b);
        assert_non_null(want);
        max_operands(n, a, b, want, 7300);
        for (size_t i = 0; i < n; i++) want[i] = -want[i];
        double zero[2] = {0, 0};
        xo_buffer *ba = conformance_make(a, n, fp64), *bb = conformance_make(b, n, fp64);
        xo_buffer *bc = conformance_make(a, n, fp64), *bo = conformance_make(zero, 2, fp64);
        xo_plan *plan = NULL;
        xot_assert_ok(xo_capture_begin(g_ctx));
        xot_assert_ok(binary_max(fp64, n, ba, bb, bc));
        xot_assert_ok(fp64 ? xo_dunary(g_ctx, XO_NEG, n, bc, 0, bc, 0) : xo_sunary(g_ctx, XO_NEG, n, bc, 0, bc, 0));
        xot_assert_ok(reduce(fp64, n, bc, 0, bo, 0));
        xot_assert_ok(reduce(fp64, n, ba, 0, bo, 1));
        xot_assert_ok(xo_capture_end(g_ctx, &plan));
        for (int run = 0; run < 2; run++) {
            xot_assert_ok(xo_plan_run(plan));
            const double nans[2] = {NAN, NAN};
            conformance_expect(bc, want, n, fp64, "plan: -max(a, b)");
            conformance_expect(bo, nans, 2, fp64, "plan: reduce MAX_ELEMENT");
        }
        xo_plan_destroy(plan);
        free(a);
        free(b);
        free(want);
        xo_buffer_destroy(ba);
        xo_buffer_destroy(bb);
        xo_buffer_destroy(bc);
        xo_buffer_destroy(bo);
    }
}

/* ---- argmax ---------------------------------------------------------------------------- */

static xo_status argmax(int fp64, size_t rows, size_t cols, xo_buffer *x, size_t x_off, size_t ldx, xo_buffer *idx,
                        size_t idx_off)
{
    return fp64 ? xo_dargmax(g_ctx, rows, cols, x, x_off, ldx, idx, idx_off)
                : xo_sargmax(g_ctx, rows, cols, x, x_off, ldx, idx, idx_off);
}

/* Row r of a rows x cols matrix (ldx, at x_off) gets, by r % 6: a NaN first, middle or
 * last, two NaNs, its largest value twice (a tie), or nothing planted. Values a float
 * holds exactly, so both precisions have the same answer. */
static double *argmax_matrix(size_t rows, size_t cols, size_t ldx, size_t x_off, size_t len, uint64_t seed)
{
    double *h = malloc(len * sizeof(double));
    assert_non_null(h);
    fill(h, len, seed);
    for (size_t i = 0; i < len; i++) h[i] = (double)(float)h[i];
    for (size_t r = 0; r < rows; r++) {
        double *xr = h + x_off + r * ldx;
        if (ldx > cols) xr[cols] = NAN; /* padding: never read */
        size_t mid = cols / 2, last = cols - 1;
        switch (r % 6) {
        case 0: xr[0] = NAN; break;
        case 1: xr[mid] = NAN; break;
        case 2: xr[last] = NAN; break;
        case 3: xr[last] = xr[mid] = NAN; break;
        case 4: xr[last] = xr[cols / 3] = 2; break;
        default: break;
        }
    }
    return h;
}

/* The references the conformance table holds every device to follow the rule themselves:
 * NaN wherever it stands, else the plain maximum; argmax's first NaN, else its first of
 * equal maxima. */
void conformance_max_references(void **state)
{
    (void)state;
    double x[7] = {0.5, -1, 3, 0.25, 3, -2, 1}, y[7];
    assert_true(xot_ref_dreduce(XO_MAX_ELEMENT, 7, x) == 3);
    for (size_t at = 0; at < 7; at += 3) { /* first, middle, last */
        memcpy(y, x, sizeof y);
        y[at] = NAN;
        assert_true(isnan(xot_ref_dreduce(XO_MAX_ELEMENT, 7, y)));
        assert_true(isnan(xot_ref_sreduce(XO_MAX_ELEMENT, 1, (float[]){NAN})));
        double out[2];
        xot_ref_dreduce_axis(XO_MAX_ELEMENT, 1, 7, y, 7, 1, out);
        assert_true(isnan(out[0]));
        xot_ref_dreduce_axis(XO_MAX_ELEMENT, 7, 1, y, 1, 0, out);
        assert_true(isnan(out[0]));
        double c[7];
        xot_ref_dbinary(XO_MAX, 7, x, y, c);
        assert_true(isnan(c[at]) && c[(at + 1) % 7] == x[(at + 1) % 7]);
        xot_ref_dbinary(XO_MAX, 7, y, x, c);
        assert_true(isnan(c[at]));
    }
    size_t rows = 12, cols = 9;
    double *h = argmax_matrix(rows, cols, cols + 1, 0, rows * (cols + 1), 7400);
    int32_t idx[12];
    xot_ref_dargmax(rows, cols, h, cols + 1, idx);
    for (size_t r = 0; r < rows; r += 6) { /* r % 6: NaN first, middle, last, middle and last, a tie */
        assert_int_equal(idx[r], 0);
        assert_int_equal(idx[r + 1], (int32_t)(cols / 2));
        assert_int_equal(idx[r + 2], (int32_t)(cols - 1));
        assert_int_equal(idx[r + 3], (int32_t)(cols / 2));
        assert_int_equal(idx[r + 4], (int32_t)(cols / 3));
    }
    free(h);
}

/* argmax recorded in a plan, after an op that writes its input on the same device. */
void conformance_argmax_plan(void **state)
{
    (void)state;
    const size_t rows = 64, cols = 10;
    for (int fp64 = 0; fp64 <= g_fp64; fp64++) {
        double *h = argmax_matrix(rows, cols, cols, 0, rows * cols, 7500);
        int32_t want[64], got[64];
        for (size_t i = 0; i < rows * cols; i++) h[i] = -h[i]; /* the plan negates it back */
        xo_buffer *x = conformance_make(h, rows * cols, fp64), *y = conformance_make(h, rows * cols, fp64);
        for (size_t i = 0; i < rows * cols; i++) h[i] = -h[i];
        xot_ref_dargmax(rows, cols, h, cols, want);
        xo_buffer *idx = xot_buffer(g_ctx, NULL, sizeof got);
        xo_plan *plan = NULL;
        xot_assert_ok(xo_capture_begin(g_ctx));
        xot_assert_ok(fp64 ? xo_dunary(g_ctx, XO_NEG, rows * cols, x, 0, y, 0)
                           : xo_sunary(g_ctx, XO_NEG, rows * cols, x, 0, y, 0));
        xot_assert_ok(argmax(fp64, rows, cols, y, 0, cols, idx, 0));
        xot_assert_ok(xo_capture_end(g_ctx, &plan));
        for (int run = 0; run < 2; run++) {
            xot_assert_ok(xo_buffer_write(idx, 0, (int32_t[64]){0}, sizeof got));
            xot_assert_ok(xo_plan_run(plan));
            xot_assert_ok(xo_buffer_read(idx, 0, got, sizeof got));
            assert_memory_equal(got, want, sizeof got);
        }
        xo_plan_destroy(plan);
        free(h);
        xo_buffer_destroy(x);
        xo_buffer_destroy(y);
        xo_buffer_destroy(idx);
    }
}
