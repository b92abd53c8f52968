/* Conformance of every max on the device under test (test_conformance.c forces it): a
 * NaN anywhere among the elements a max folds makes the result NaN, wherever the NaN
 * stands (first, middle, last), so a result never depends on where it ran. Eagerly and
 * in a plan (whose element-wise chains are fused). argmax follows the same rule as an
 * index: the first NaN wins, else the first of equal maxima. Single and double
 * precision: host data is double (values a float holds), converted to the op's. */
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


/* A plain max of n doubles under the rule: NaN if any is NaN. */
static double max_of(const double *x, size_t n, size_t stride)
{
    double m = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double v = x[i * stride];
        if (isnan(v)) return NAN;
        m = v > m ? v : m;
    }
    return m;
}

static xo_status reduce(int fp64, size_t n, xo_buffer *x, size_t xo, xo_buffer *o, size_t oo)
{
    return fp64 ? xo_dreduce(g_ctx, XO_MAX_ELEMENT, n, x, xo, o, oo) : xo_sreduce(g_ctx, XO_MAX_ELEMENT, n, x, xo, o, oo);
}

static xo_status reduce_axis(int fp64, size_t rows, size_t cols, xo_buffer *x, size_t ldx, int axis, xo_buffer *o)
{
    return fp64 ? xo_dreduce_axis(g_ctx, XO_MAX_ELEMENT, rows, cols, x, 0, ldx, axis, o, 0)
                : xo_sreduce_axis(g_ctx, XO_MAX_ELEMENT, rows, cols, x, 0, ldx, axis, o, 0);
}

static xo_status binary_max(int fp64, size_t n, xo_buffer *a, xo_buffer *b, xo_buffer *c)
{
    return fp64 ? xo_dbinary(g_ctx, XO_MAX, n, a, 0, b, 0, c, 0) : xo_sbinary(g_ctx, XO_MAX, n, a, 0, b, 0, c, 0);
}

static void fill(double *h, size_t n, uint64_t seed)
{
    xot_fill_d(h, n, seed, -1, 1);
}

/* ---- reduce ----------------------------------------------------------------------- */

static void test_reduce_max_nan(void **state)
{
    (void)state;
    static const size_t ns[] = {1, 2, 7, 130, 1000, 4099, 300001};
    for (int fp64 = 0; fp64 <= g_fp64; fp64++)
        for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++)
            for (int where = 0; where < 4; where++) { /* NaN first, middle, last; none */
                size_t n = ns[s], off = 2, len = off + n + 1;
                double *h = malloc(len * sizeof(double));
                assert_non_null(h);
                fill(h, len, 7000 + 10 * s + (uint64_t)where);
                h[off + n / 3] = 5; /* a max before or after the NaN */
                size_t pos = where == 0 ? 0 : where == 1 ? n / 2 : n - 1;
                if (where < 3) h[off + pos] = NAN;
                h[off - 1] = h[off + n] = NAN; /* beside the range: never read */
                if (where == 3) h[off - 1] = h[off + n] = 9;
                xo_buffer *x = conformance_make(h, len, fp64), *o = conformance_make(h, 1, fp64);
                char what[80];
                snprintf(what, sizeof what, "reduce MAX_ELEMENT n=%zu NaN at %s", n,
                         where == 0 ? "first" : where == 1 ? "middle" : where == 2 ? "last" : "none");
                xot_assert_ok(reduce(fp64, n, x, off, o, 0));
                check_decision(fp64 ? "d" : "s", "reduce");
                double want = where < 3 ? NAN : max_of(h + off, n, 1);
                conformance_expect(o, &want, 1, fp64, what);
                free(h);
                xo_buffer_destroy(x);
                xo_buffer_destroy(o);
            }
}

/* ---- reduce_axis: result r has its NaN first, middle or last (r % 4), or none --------- */

static void test_reduce_axis_max_nan(void **state)
{
    (void)state;
    static const size_t dims[][2] = {{1, 1}, {3, 5}, {130, 7}, {7, 130}, {64, 300}};
    for (int fp64 = 0; fp64 <= g_fp64; fp64++)
        for (size_t s = 0; s < sizeof dims / sizeof dims[0]; s++)
            for (int axis = 0; axis <= 1; axis++) {
                size_t rows = dims[s][0], cols = dims[s][1], ldx = cols + 1, len = rows * ldx;
                size_t results = axis == 0 ? cols : rows, over = axis == 0 ? rows : cols;
                size_t rs = axis == 0 ? 1 : ldx, es = axis == 0 ? ldx : 1; /* result r, element e */
                double *h = malloc(len * sizeof(double)), *want = malloc(results * sizeof(double));
                assert_non_null(h);
                assert_non_null(want);
                fill(h, len, 7100 + 2 * s + (uint64_t)axis);
                for (size_t i = 0; i < rows; i++) h[i * ldx + cols] = NAN; /* padding: never read */
                for (size_t r = 0; r < results; r++) {
                    size_t k = (r + s) % 4, e = k == 0 ? 0 : k == 1 ? over / 2 : over - 1;
                    if (k < 3) h[r * rs + e * es] = NAN;
                    want[r] = max_of(h + r * rs, over, es);
                }
                xo_buffer *x = conformance_make(h, len, fp64), *o = conformance_make(h, results, fp64);
                char what[80];
                snprintf(what, sizeof what, "reduce_axis MAX_ELEMENT %zux%zu axis=%d", rows, cols, axis);
                xot_assert_ok(reduce_axis(fp64, rows, cols, x, ldx, axis, o));
                check_decision(fp64 ? "d" : "s", "reduce_axis");
                conformance_expect(o, want, results, fp64, what);
                free(h);
                free(want);
                xo_buffer_destroy(x);
                xo_buffer_destroy(o);
            }
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

static void test_binary_max_nan(void **state)
{
    (void)state;
    static const size_t ns[] = {1, 3, 37, 5000};
    for (int fp64 = 0; fp64 <= g_fp64; fp64++)
        for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++) {
            size_t n = ns[s] < 3 ? 3 : ns[s];
            double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double)), *want = malloc(n * sizeof(double));
            assert_non_null(a);
            assert_non_null(b);
            assert_non_null(want);
            max_operands(n, a, b, want, 7200 + s);
            xo_buffer *ba = conformance_make(a, n, fp64), *bb = conformance_make(b, n, fp64);
            xo_buffer *bc = conformance_make(a, n, fp64);
            char what[80];
            snprintf(what, sizeof what, "binary MAX n=%zu", n);
            xot_assert_ok(binary_max(fp64, n, ba, bb, bc));
            check_decision(fp64 ? "d" : "s", "binary");
            conformance_expect(bc, want, n, fp64, what);
            free(a);
            free(b);
            free(want);
            xo_buffer_destroy(ba);
            xo_buffer_destroy(bb);
            xo_buffer_destroy(bc);
        }
}

/* A plan of max(a, b) -> c, -c -> c (a fused chain where the device has a chain runner),
 * then reduce MAX of c and of a: NaN in both results, c = -max(a, b) under the rule. */
static void test_plan_max_nan(void **state)
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

static void test_argmax(void **state)
{
    (void)state;
    static const size_t dims[][2] = {{1, 1}, {1, 2}, {6, 3}, {13, 37}, {40, 300}, {12, 5000}, {300, 7}};
    for (int fp64 = 0; fp64 <= g_fp64; fp64++)
        for (size_t s = 0; s < sizeof dims / sizeof dims[0]; s++)
            for (size_t pad = 0; pad <= 2; pad += 2) {
                size_t rows = dims[s][0], cols = dims[s][1], ldx = cols + pad, x_off = 3, i_off = 2;
                size_t len = x_off + rows * ldx + 1;
                double *h = argmax_matrix(rows, cols, ldx, x_off, len, 7400 + s);
                int32_t *want = malloc((rows + 3) * sizeof(int32_t)), *init = malloc((rows + 3) * sizeof(int32_t));
                assert_non_null(want);
                assert_non_null(init);
                for (size_t i = 0; i < rows + 3; i++) want[i] = init[i] = -5;
                xot_ref_dargmax(rows, cols, h + x_off, ldx, want + i_off);
                xo_buffer *x = conformance_make(h, len, fp64), *idx = xot_buffer(g_ctx, init, (rows + 3) * sizeof(int32_t));
                char what[80];
                snprintf(what, sizeof what, "%cargmax %zux%zu ldx=%zu", fp64 ? 'd' : 's', rows, cols, ldx);
                xot_assert_ok(argmax(fp64, rows, cols, x, x_off, ldx, idx, i_off));
                check_decision(fp64 ? "d" : "s", "argmax");
                int32_t *got = xot_read_all(idx);
                for (size_t i = 0; i < rows + 3; i++)
                    if (got[i] != want[i]) {
                        print_error("%s: idx[%zu] is %d, want %d\n", what, i, (int)got[i], (int)want[i]);
                        fail();
                    }
                /* the rule itself, not only the reference: row 0's NaN is at column 0 */
                if (rows > 0) assert_int_equal(got[i_off], 0);
                if (rows > 4 && cols > 2) assert_int_equal(got[i_off + 4], (int32_t)(cols / 3));
                free(got);
                free(want);
                free(init);
                free(h);
                xo_buffer_destroy(x);
                xo_buffer_destroy(idx);
            }
}

/* argmax recorded in a plan, after an op that writes its input on the same device. */
static void test_argmax_plan(void **state)
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

int conformance_max(const char *label)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reduce_max_nan),
        cmocka_unit_test(test_reduce_axis_max_nan),
        cmocka_unit_test(test_binary_max_nan),
        cmocka_unit_test(test_plan_max_nan),
        cmocka_unit_test(test_argmax),
        cmocka_unit_test(test_argmax_plan),
    };
    char name[300];
    snprintf(name, sizeof name, "%s, max and argmax", label);
    return _cmocka_run_group_tests(name, tests, sizeof tests / sizeof tests[0], NULL, NULL);
}
