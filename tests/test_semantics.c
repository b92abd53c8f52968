/* BLAS semantics, differentially, on one device or on all of them (CONTRACT.md 0.3):
 * every op gets adversarial inputs and is compared with the reference loops of
 * xo_test.c, which follow reference BLAS's rules.
 *
 *   - NaN and +-Inf wherever a value must not be read: A/B/x when alpha == 0, C/y when
 *     beta == 0, the padding of leading dimensions, the gaps of increments > 1, the
 *     elements before an offset and after the end;
 *   - a sentinel in every output element the op must not write;
 *   - alpha and beta in {0, 1, -1, 0.5, 2}, both layouts, both transposes;
 *   - scal by 0 writes zeros over NaN and Inf;
 *   - nrm2 of huge and tiny magnitudes, whose squares overflow or underflow.
 *
 *   test_semantics            every device of this machine, each forced in turn
 *   test_semantics SPEC       one device ("cpu", "opencl", "cuda", ...), exit 77 if absent
 *
 * Both precisions go through one code path: host data is double, rounded to float for
 * the s ops (so the reference sees exactly what the device got). */
#include "xo_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static xo_context *g_ctx;
static int g_dev, g_fp64;
static int g_failures; /* mismatches reported by the running test */

typedef enum tdtype { T_F32, T_F64 } tdtype;
typedef enum tkind { K_AXPY, K_SCAL, K_DOT, K_UNARY, K_BINARY, K_BIAS, K_REDUCE } tkind;

static const double k_scalars[] = {0, 1, -1, 0.5, 2};
#define NSCAL 5
#define SENTINEL (-7777.0) /* output elements the op must not write */
#define MAXE 4096          /* elements of any host array here */

/* A value that must not be read: NaN, +Inf, -Inf in turn. */
static double poison(size_t i)
{
    return i % 3 == 0 ? NAN : i % 3 == 1 ? INFINITY : -INFINITY;
}

static void set_all(double *p, size_t n, double v)
{
    for (size_t i = 0; i < n; i++) p[i] = v;
}

static size_t at(xo_layout l, size_t r, size_t c, size_t ld)
{
    return l == XO_ROW_MAJOR ? r * ld + c : r + c * ld;
}

/* The rows x cols matrix at p: poison, or values in [-1, 1] from `seed`. */
static void fill_matrix(double *p, xo_layout l, size_t rows, size_t cols, size_t ld, int poisoned, uint64_t seed)
{
    static double v[MAXE];
    xot_fill_d(v, rows * cols, seed, -1, 1);
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) p[at(l, r, c, ld)] = poisoned ? poison(r * cols + c) : v[r * cols + c];
}

static void fill_vector(double *p, size_t n, size_t inc, int poisoned, uint64_t seed)
{
    fill_matrix(p, XO_ROW_MAJOR, n, 1, inc, poisoned, seed);
}

/* ---- typed buffers: double on the host, float or double on the device -------------- */


/* A buffer holding h[0..n); for float, h is rounded in place to what the buffer holds. */
static xo_buffer *upload(tdtype dt, double *h, size_t n)
{
    static float f[MAXE];
    assert_true(n <= MAXE);
    if (dt == T_F64) return xot_buffer(g_ctx, h, n * sizeof(double));
    for (size_t i = 0; i < n; i++) h[i] = f[i] = (float)h[i];
    return xot_buffer(g_ctx, f, n * sizeof(float));
}

static void download(tdtype dt, xo_buffer *b, double *h, size_t n)
{
    static float f[MAXE];
    if (dt == T_F64) {
        xot_assert_ok(xo_buffer_read(b, 0, h, n * sizeof(double)));
        return;
    }
    xot_assert_ok(xo_buffer_read(b, 0, f, n * sizeof(float)));
    for (size_t i = 0; i < n; i++) h[i] = f[i];
}

/* The op ran where it was forced, and b holds `want` (rounded to the dtype). (axpy with
 * alpha == 0 returns before placement, so there the decision is the previous op's.) */
static void expect(tdtype dt, xo_status st, xo_buffer *b, double *want, size_t n, const char *what)
{
    static double got[MAXE];
    xo_decision dec;
    dec.device = -1;
    if (st != XO_OK || xo_last_decision(g_ctx, &dec) != XO_OK || dec.device != g_dev) {
        print_error("%s: status %s, ran on device %d, want %d (%s)\n", what, xo_status_string(st), dec.device,
                    g_dev, xo_last_error());
        g_failures++;
        return;
    }
    download(dt, b, got, n);
    if (dt == T_F32)
        for (size_t i = 0; i < n; i++) want[i] = (float)want[i];
    long i = xot_first_mismatch_d(got, want, n, dt == T_F32 ? XOT_TOL_F : XOT_TOL_D);
    if (i >= 0 && g_failures++ < 40)
        print_error("%s: element %ld: got %.9g want %.9g\n", what, i, got[i], want[i]);
}

static const char *dt_name(tdtype dt) { return dt == T_F32 ? "s" : "d"; }
static char tchar(xo_transpose t) { return t == XO_TRANS ? 'T' : 'N'; }

static int ndtypes(void) { return g_fp64 ? 2 : 1; }
static tdtype dtype_at(int i) { return i == 0 ? T_F32 : T_F64; }

static void finish(void)
{
    if (g_failures) {
        print_error("%d mismatches\n", g_failures);
        g_failures = 0;
        fail();
    }
}

/* ---- gemm ------------------------------------------------------------------------------ */

static void gemm_case(tdtype dt, xo_layout l, xo_transpose ta, xo_transpose tb, size_t m, size_t n, size_t k,
                      double alpha, double beta)
{
    const int an = ta == XO_NO_TRANS, bn = tb == XO_NO_TRANS, row = l == XO_ROW_MAJOR;
    const size_t ar = an ? m : k, ac = an ? k : m, br = bn ? k : n, bc = bn ? n : k;
    const size_t lda = (row ? ac : ar) + 2, ldb = (row ? bc : br) + 1, ldc = (row ? n : m) + 3;
    const size_t aoff = 1, boff = 2, coff = 3;
    const size_t na = aoff + xot_mat_span(l, ar, ac, lda) + 2, nb = boff + xot_mat_span(l, br, bc, ldb) + 2,
                 nc = coff + xot_mat_span(l, m, n, ldc) + 2;
    static double a[MAXE], b[MAXE], c[MAXE], want[MAXE];
    set_all(a, na, NAN);
    set_all(b, nb, NAN);
    set_all(c, nc, SENTINEL);
    fill_matrix(a + aoff, l, ar, ac, lda, alpha == 0, 11);
    fill_matrix(b + boff, l, br, bc, ldb, alpha == 0, 12);
    fill_matrix(c + coff, l, m, n, ldc, beta == 0, 13);
    xo_buffer *ba = upload(dt, a, na), *bb = upload(dt, b, nb), *bc_ = upload(dt, c, nc);
    memcpy(want, c, nc * sizeof *want);
    xot_ref_dgemm(l, ta, tb, m, n, k, alpha, a + aoff, lda, b + boff, ldb, beta, want + coff, ldc);
    xo_status st = dt == T_F32 ? xo_sgemm(g_ctx, l, ta, tb, m, n, k, (float)alpha, ba, aoff, lda, bb, boff, ldb,
                                           (float)beta, bc_, coff, ldc)
                                : xo_dgemm(g_ctx, l, ta, tb, m, n, k, alpha, ba, aoff, lda, bb, boff, ldb, beta,
                                           bc_, coff, ldc);
    char what[128];
    snprintf(what, sizeof what, "%sgemm %s %c%c %zux%zux%zu alpha %g beta %g", dt_name(dt), row ? "row" : "col",
             tchar(ta), tchar(tb), m, n, k, alpha, beta);
    expect(dt, st, bc_, want, nc, what);
    xo_buffer_destroy(ba);
    xo_buffer_destroy(bb);
    xo_buffer_destroy(bc_);
}

static void test_gemm(void **state)
{
    (void)state;
    /* The last is big enough for CLBlast's indirect kernels (padded copies of C). */
    static const size_t shapes[][3] = {{3, 2, 4}, {1, 1, 1}, {4, 3, 1}, {40, 33, 35}};
    for (int d = 0; d < ndtypes(); d++)
        for (int s = 0; s < 4; s++)
            for (int l = 0; l < 2; l++)
                for (int t = 0; t < 4; t++)
                    for (int i = 0; i < NSCAL; i++)
                        for (int j = 0; j < NSCAL; j++)
                            gemm_case(dtype_at(d), l ? XO_COL_MAJOR : XO_ROW_MAJOR, t & 1 ? XO_TRANS : XO_NO_TRANS,
                                      t & 2 ? XO_TRANS : XO_NO_TRANS, shapes[s][0], shapes[s][1], shapes[s][2],
                                      k_scalars[i], k_scalars[j]);
    finish();
}

/* ---- gemv ------------------------------------------------------------------------------ */

static void gemv_case(tdtype dt, xo_layout l, xo_transpose ta, size_t m, size_t n, size_t incx, size_t incy,
                      double alpha, double beta)
{
    const size_t lenx = ta == XO_NO_TRANS ? n : m, leny = ta == XO_NO_TRANS ? m : n;
    const size_t lda = (l == XO_ROW_MAJOR ? n : m) + 2, aoff = 2, xoff = 1, yoff = 3;
    const size_t na = aoff + xot_mat_span(l, m, n, lda) + 2, nx = xoff + xot_span(lenx, incx) + 2,
                 ny = yoff + xot_span(leny, incy) + 2;
    static double a[MAXE], x[MAXE], y[MAXE], want[MAXE];
    set_all(a, na, NAN);
    set_all(x, nx, NAN);
    set_all(y, ny, SENTINEL);
    fill_matrix(a + aoff, l, m, n, lda, alpha == 0, 21);
    fill_vector(x + xoff, lenx, incx, alpha == 0, 22);
    fill_vector(y + yoff, leny, incy, beta == 0, 23);
    xo_buffer *ba = upload(dt, a, na), *bx = upload(dt, x, nx), *by = upload(dt, y, ny);
    memcpy(want, y, ny * sizeof *want);
    xot_ref_dgemv(l, ta, m, n, alpha, a + aoff, lda, x + xoff, incx, beta, want + yoff, incy);
    xo_status st = dt == T_F32 ? xo_sgemv(g_ctx, l, ta, m, n, (float)alpha, ba, aoff, lda, bx, xoff, incx,
                                           (float)beta, by, yoff, incy)
                                : xo_dgemv(g_ctx, l, ta, m, n, alpha, ba, aoff, lda, bx, xoff, incx, beta, by, yoff,
                                           incy);
    char what[128];
    snprintf(what, sizeof what, "%sgemv %s %c %zux%zu incx %zu incy %zu alpha %g beta %g", dt_name(dt),
             l == XO_ROW_MAJOR ? "row" : "col", tchar(ta), m, n, incx, incy, alpha, beta);
    expect(dt, st, by, want, ny, what);
    xo_buffer_destroy(ba);
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
}

static void test_gemv(void **state)
{
    (void)state;
    static const size_t shapes[][4] = {{3, 4, 1, 1}, {4, 3, 2, 3}, {1, 1, 1, 1}};
    for (int d = 0; d < ndtypes(); d++)
        for (int s = 0; s < 3; s++)
            for (int l = 0; l < 2; l++)
                for (int t = 0; t < 2; t++)
                    for (int i = 0; i < NSCAL; i++)
                        for (int j = 0; j < NSCAL; j++)
                            gemv_case(dtype_at(d), l ? XO_COL_MAJOR : XO_ROW_MAJOR, t ? XO_TRANS : XO_NO_TRANS,
                                      shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], k_scalars[i],
                                      k_scalars[j]);
    finish();
}

/* ---- axpy, scal, dot ------------------------------------------------------------------- */

static void vector_case(tdtype dt, tkind kind, size_t n, size_t incx, size_t incy, double alpha)
{
    const size_t xoff = 1, yoff = 2, nx = xoff + xot_span(n, incx) + 2, ny = yoff + xot_span(n, incy) + 2;
    static double x[MAXE], y[MAXE], want[MAXE];
    xo_buffer *bx, *by = NULL, *out;
    xo_status st;
    char what[128];
    if (kind == K_SCAL) { /* x is the output: NaN and Inf in it, which alpha = 0 overwrites */
        set_all(x, nx, SENTINEL);
        fill_vector(x + xoff, n, incx, 0, 31);
        for (size_t i = 0; i < n; i += 2) x[xoff + i * incx] = poison(i / 2);
        bx = upload(dt, x, nx);
        memcpy(want, x, nx * sizeof *want);
        xot_ref_dscal(n, alpha, want + xoff, incx);
        st = dt == T_F32 ? xo_sscal(g_ctx, n, (float)alpha, bx, xoff, incx)
                          : xo_dscal(g_ctx, n, alpha, bx, xoff, incx);
        out = bx;
    } else {
        set_all(x, nx, NAN);
        fill_vector(x + xoff, n, incx, kind == K_AXPY && alpha == 0, 32);
        set_all(y, ny, kind == K_AXPY ? SENTINEL : NAN);
        fill_vector(y + yoff, n, incy, 0, 33);
        bx = upload(dt, x, nx);
        by = upload(dt, y, ny);
        if (kind == K_AXPY) {
            memcpy(want, y, ny * sizeof *want);
            xot_ref_daxpy(n, alpha, x + xoff, incx, want + yoff, incy);
            st = dt == T_F32 ? xo_saxpy(g_ctx, n, (float)alpha, bx, xoff, incx, by, yoff, incy)
                              : xo_daxpy(g_ctx, n, alpha, bx, xoff, incx, by, yoff, incy);
            out = by;
        } else { /* dot into out[1] of 3 */
            double o[3] = {SENTINEL, NAN, SENTINEL}; /* out is not read */
            out = upload(dt, o, 3);
            memcpy(want, o, sizeof o);
            want[1] = xot_ref_ddot(n, x + xoff, incx, y + yoff, incy);
            st = dt == T_F32 ? xo_sdot(g_ctx, n, bx, xoff, incx, by, yoff, incy, out, 1)
                              : xo_ddot(g_ctx, n, bx, xoff, incx, by, yoff, incy, out, 1);
        }
    }
    snprintf(what, sizeof what, "%s%s n %zu incx %zu incy %zu alpha %g", dt_name(dt),
             kind == K_SCAL ? "scal" : kind == K_AXPY ? "axpy" : "dot", n, incx, incy, alpha);
    expect(dt, st, out, want, kind == K_DOT ? 3 : kind == K_SCAL ? nx : ny, what);
    if (out != bx && out != by) xo_buffer_destroy(out);
    xo_buffer_destroy(bx);
    if (by) xo_buffer_destroy(by);
}

static void test_axpy_scal_dot(void **state)
{
    (void)state;
    static const size_t incs[][3] = {{7, 1, 1}, {5, 2, 3}, {1, 4, 2}, {300, 1, 2}};
    for (int d = 0; d < ndtypes(); d++)
        for (int s = 0; s < 4; s++) {
            for (int i = 0; i < NSCAL; i++) {
                vector_case(dtype_at(d), K_AXPY, incs[s][0], incs[s][1], incs[s][2], k_scalars[i]);
                vector_case(dtype_at(d), K_SCAL, incs[s][0], incs[s][1], incs[s][2], k_scalars[i]);
            }
            vector_case(dtype_at(d), K_DOT, incs[s][0], incs[s][1], incs[s][2], 1);
        }
    finish();
}

/* ---- nrm2: squares that overflow or underflow ---------------------------------------- */

/* nrm2 of x (n elements at stride inc, NaN in the gaps) into out[1] of 3, compared
 * relatively: the norms here are far from 1 in both directions. */
static void nrm2_case(tdtype dt, const double *v, size_t n, size_t inc, const char *name)
{
    static double x[MAXE];
    double o[3] = {SENTINEL, NAN, SENTINEL}, got[3];
    const size_t nx = 1 + xot_span(n, inc) + 1;
    set_all(x, nx, NAN);
    for (size_t i = 0; i < n; i++) x[1 + i * inc] = v[i];
    xo_buffer *bx = upload(dt, x, nx), *bo = upload(dt, o, 3);
    double want = xot_ref_dnrm2(n, x + 1, inc);
    if (dt == T_F32) want = (float)want;
    xo_status st = dt == T_F32 ? xo_snrm2(g_ctx, n, bx, 1, inc, bo, 1) : xo_dnrm2(g_ctx, n, bx, 1, inc, bo, 1);
    xo_decision dec;
    dec.device = -1;
    if (st != XO_OK || xo_last_decision(g_ctx, &dec) != XO_OK || dec.device != g_dev) {
        print_error("%snrm2 %s: status %s on device %d (%s)\n", dt_name(dt), name, xo_status_string(st),
                    dec.device, xo_last_error());
        g_failures++;
    } else {
        download(dt, bo, got, 3);
        double tol = dt == T_F32 ? XOT_TOL_F : XOT_TOL_D;
        int ok = got[0] == SENTINEL && got[2] == SENTINEL &&
                 (isnan(want) ? isnan(got[1]) : isinf(want) ? got[1] == want : fabs(got[1] - want) <= tol * want);
        if (!ok && g_failures++ < 40)
            print_error("%snrm2 %s (n %zu, inc %zu): got %.9g want %.9g\n", dt_name(dt), name, n, inc, got[1], want);
    }
    xo_buffer_destroy(bx);
    xo_buffer_destroy(bo);
}

static void test_nrm2(void **state)
{
    (void)state;
    static double v[MAXE];
    for (int d = 0; d < ndtypes(); d++) {
        const tdtype dt = dtype_at(d);
        /* Squares of `huge` overflow, squares of `tiny` underflow, in this precision. */
        const double huge = dt == T_F32 ? 1e20 : 1e160, tiny = dt == T_F32 ? 1e-25 : 1e-170;
        const struct { const char *name; double a, b, c; size_t n; } small[] = {
            {"{huge}", huge, 0, 0, 1},          {"{3 huge/10, 4 huge/10}", 0.3 * huge, 0.4 * huge, 0, 2},
            {"{tiny}", tiny, 0, 0, 1},          {"{-3 tiny, 4 tiny}", -3 * tiny, 4 * tiny, 0, 2},
            {"{huge, 1, tiny}", huge, 1, tiny, 3}, {"{tiny, 1, tiny}", tiny, 1, tiny, 3},
            {"{0, 0}", 0, 0, 0, 2},              {"{1, -Inf}", 1, -INFINITY, 0, 2},
            {"{1, NaN}", 1, NAN, 0, 2},          {"{3, 4}", 3, 4, 0, 2},
        };
        for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
            const double e[3] = {small[i].a, small[i].b, small[i].c};
            nrm2_case(dt, e, small[i].n, 1, small[i].name);
            nrm2_case(dt, e, small[i].n, 3, small[i].name);
        }
        /* Long vectors: several work-groups / blocks, each with big or tiny partial sums. */
        const struct { const char *name; double scale; size_t n, inc; } longer[] = {
            {"700 x huge", huge, 700, 1}, {"700 x tiny", tiny, 700, 1}, {"300 x huge, inc 3", huge, 300, 3},
            {"300 x tiny, inc 3", tiny, 300, 3}, {"1000 x 1", 1, 1000, 1},
        };
        for (size_t i = 0; i < sizeof longer / sizeof longer[0]; i++) {
            xot_fill_d(v, longer[i].n, 40 + i, -longer[i].scale, longer[i].scale);
            nrm2_case(dt, v, longer[i].n, longer[i].inc, longer[i].name);
        }
        /* Mixed: one huge value among mid-range ones, one mid-range among tiny ones. */
        xot_fill_d(v, 600, 50, -1, 1);
        v[417] = huge;
        nrm2_case(dt, v, 600, 1, "600 mid-range and one huge");
        xot_fill_d(v, 600, 51, -tiny, tiny);
        v[5] = 1;
        nrm2_case(dt, v, 600, 1, "600 tiny and one 1");
    }
    finish();
}

/* ---- unary, binary, bias, reduce: nothing outside the operands is read or written ---- */

static void elementwise_case(tdtype dt, tkind kind, int subop, size_t rows, size_t n)
{
    const size_t off = 2, ld = n + 3, na = off + (rows - 1) * ld + n + 2, nv = off + n + 2;
    static double a[MAXE], b[MAXE], c[MAXE], want[MAXE];
    set_all(a, na, NAN);
    set_all(b, nv, NAN);
    xot_fill_d(a + off, n, 60, -2, 2);
    xot_fill_d(b + off, n, 61, -2, 2);
    if (kind == K_UNARY) xot_unary_fill_d(subop, a + off, n, 60); /* the op's domain */
    if (kind == K_REDUCE) a[off + n / 2] = subop == XO_SUM ? -INFINITY : INFINITY;
    xo_buffer *ba, *bb = upload(dt, b, nv), *bc = NULL, *out;
    xo_status st;
    size_t nout;
    if (kind == K_BIAS) { /* a: rows x n at ld, in place; its padding is a sentinel */
        set_all(a, na, SENTINEL);
        xot_fill_d(c, rows * n, 62, -2, 2);
        for (size_t r = 0; r < rows; r++) memcpy(a + off + r * ld, c + r * n, n * sizeof *a);
        ba = out = upload(dt, a, na);
        memcpy(want, a, na * sizeof *want);
        xot_ref_dbias(rows, n, want + off, ld, b + off);
        st = dt == T_F32 ? xo_sbias(g_ctx, rows, n, ba, off, ld, bb, off) : xo_dbias(g_ctx, rows, n, ba, off, ld, bb, off);
        nout = na;
    } else {
        ba = upload(dt, a, na);
        nout = kind == K_REDUCE ? 3 : nv;
        set_all(c, nout, SENTINEL);
        if (kind == K_REDUCE) c[1] = NAN;
        else set_all(c + off, n, NAN); /* the output is not read */
        bc = out = upload(dt, c, nout);
        memcpy(want, c, nout * sizeof *want);
        if (kind == K_UNARY) {
            xot_ref_dunary((xo_unary_op)subop, n, a + off, want + off);
            st = dt == T_F32 ? xo_sunary(g_ctx, (xo_unary_op)subop, n, ba, off, bc, off)
                              : xo_dunary(g_ctx, (xo_unary_op)subop, n, ba, off, bc, off);
        } else if (kind == K_BINARY) {
            xot_ref_dbinary((xo_binary_op)subop, n, a + off, b + off, want + off);
            st = dt == T_F32 ? xo_sbinary(g_ctx, (xo_binary_op)subop, n, ba, off, bb, off, bc, off)
                              : xo_dbinary(g_ctx, (xo_binary_op)subop, n, ba, off, bb, off, bc, off);
        } else {
            want[1] = xot_ref_dreduce((xo_reduce_op)subop, n, a + off);
            st = dt == T_F32 ? xo_sreduce(g_ctx, (xo_reduce_op)subop, n, ba, off, bc, 1)
                              : xo_dreduce(g_ctx, (xo_reduce_op)subop, n, ba, off, bc, 1);
        }
    }
    char what[96];
    snprintf(what, sizeof what, "%s op kind %d subop %d, %zu x %zu", dt_name(dt), (int)kind, subop, rows, n);
    expect(dt, st, out, want, nout, what);
    xo_buffer_destroy(ba);
    xo_buffer_destroy(bb);
    if (bc) xo_buffer_destroy(bc);
}

static void test_elementwise(void **state)
{
    (void)state;
    for (int d = 0; d < ndtypes(); d++)
        for (size_t n = 1; n <= 601; n += 600) {
            for (int op = 0; op < XO_UNARY_OP_COUNT; op++) elementwise_case(dtype_at(d), K_UNARY, op, 1, n);
            for (int op = XO_ADD; op < XO_BINARY_OP_COUNT; op++) elementwise_case(dtype_at(d), K_BINARY, op, 1, n);
            elementwise_case(dtype_at(d), K_REDUCE, XO_SUM, 1, n);
            elementwise_case(dtype_at(d), K_REDUCE, XO_MAX_ELEMENT, 1, n);
            elementwise_case(dtype_at(d), K_BIAS, 0, n == 1 ? 1 : 3, n == 1 ? 1 : 200);
        }
    finish();
}

/* ---- one device, forced ------------------------------------------------------------------- */

static int run_on(int dev)
{
    char label[256];
    xo_device_info info;
    if (xot_force_device(g_ctx, dev, "semantics", &info, label, sizeof label)) return 1;
    g_dev = dev;
    g_fp64 = info.fp64;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm),         cmocka_unit_test(test_gemv), cmocka_unit_test(test_axpy_scal_dot),
        cmocka_unit_test(test_nrm2),         cmocka_unit_test(test_elementwise),
    };
    return _cmocka_run_group_tests(label, tests, sizeof tests / sizeof tests[0], NULL, NULL);
}

int main(int argc, char **argv)
{
    if (xot_main_context(&g_ctx, NULL, NULL)) return 1;
    int failed = 0, dev = -1;
    if (argc < 2) {
        for (int d = 0; d < xo_device_count(g_ctx); d++) failed += run_on(d);
    } else {
        xo_status st = xo_device_find(g_ctx, argv[1], &dev);
        if (st == XO_ERR_NO_DEVICE) {
            printf("no device \"%s\" here: skipped\n", argv[1]);
            xo_context_destroy(g_ctx);
            return XOT_EXIT_SKIP;
        }
        failed = st == XO_OK ? run_on(dev) : (fprintf(stderr, "%s: %s\n", argv[1], xo_last_error()), 1);
    }
    xo_context_destroy(g_ctx);
    return failed ? 1 : 0;
}
