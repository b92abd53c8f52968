/* libcrossover_blas.so against plain reference loops: every routine crossover runs
 * (gemm, gemv, ger, axpy, axpby, scal, copy, dot, nrm2 in s and d) through both ABIs, CBLAS in both
 * layouts, including alpha == 0 / beta == 0 (NaN that must not be read), increments the
 * drop-in hands to the CPU BLAS (negative, zero), quick returns, and every argument check
 * (xerbla_ / cblas_xerbla with the reference INFO numbers; this program's own handlers
 * replace the library's, as a user's do; cblas_xerbla renumbers a row-major INFO as the
 * CBLAS testers' handler does). Run with XO_DEVICE unset (small calls go straight to the
 * CPU BLAS), XO_DEVICE=cpu (every call straight to it), XO_DEVICE=cpu XO_BLAS_PLACE=all
 * and XO_DEVICE=opencl (every call placed by crossover: the CPU plugin reaching OpenBLAS
 * inside the drop-in must not call the drop-in again). */
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* ---- the Fortran ABI, as gfortran calls it ---------------------------------------------- */
#define F77_PROTOS(T, p)                                                                                         \
    void p##gemm_(const char *, const char *, const int *, const int *, const int *, const T *, const T *,       \
                  const int *, const T *, const int *, const T *, T *, const int *, size_t, size_t);             \
    void p##gemv_(const char *, const int *, const int *, const T *, const T *, const int *, const T *,          \
                  const int *, const T *, T *, const int *, size_t);                                             \
    void p##ger_(const int *, const int *, const T *, const T *, const int *, const T *, const int *, T *,         \
                 const int *);                                                                                   \
    void p##axpby_(const int *, const T *, const T *, const int *, const T *, T *, const int *);                 \
    void p##copy_(const int *, const T *, const int *, T *, const int *);                                        \
    void p##axpy_(const int *, const T *, const T *, const int *, T *, const int *);                             \
    void p##scal_(const int *, const T *, T *, const int *);                                                     \
    T p##dot_(const int *, const T *, const int *, const T *, const int *);                                      \
    T p##nrm2_(const int *, const T *, const int *);
F77_PROTOS(float, s)
F77_PROTOS(double, d)
void xerbla_(const char *srname, const int *info, size_t len);

/* ---- our error handlers record what the library reports ----------------------------------- */
static char g_name[32];
static int g_info, g_calls;
void xerbla_(const char *srname, const int *info, size_t len)
{
    snprintf(g_name, sizeof g_name, "%.*s", (int)len, srname);
    g_info = *info;
    g_calls++;
}
/* As the CBLAS testers' handler (Reference-LAPACK CBLAS/testing): a routine reports the
 * INFO of the column-major call it became; for a row-major call (the tester's RowMajorStrg,
 * g_row_major here) the handler renumbers it as the caller wrote the call. g_raw keeps
 * what the routine passed. */
static int g_row_major, g_raw;
static int tester_renumber(const char *rout, int info)
{
    static const struct { const char *name; int a, b, c, d; } swaps[] = {
        {"gemm", 4, 5, 9, 11}, {"gemv", 3, 4, 0, 0}, {"ger", 2, 3, 6, 8}};
    const char *op = rout + strlen("cblas_x");
    for (size_t i = 0; i < sizeof swaps / sizeof swaps[0]; i++)
        if (strcmp(op, swaps[i].name) == 0)
            return info == swaps[i].a ? swaps[i].b : info == swaps[i].b ? swaps[i].a
                 : info == swaps[i].c ? swaps[i].d : info == swaps[i].d ? swaps[i].c : info;
    return info;
}
void cblas_xerbla(blasint p, char *rout, char *form, ...)
{
    (void)form;
    snprintf(g_name, sizeof g_name, "%s", rout);
    g_raw = (int)p;
    g_info = g_row_major ? tester_renumber(rout, (int)p) : (int)p;
    g_calls++;
}
#define EXPECT_ERROR(call, name, info)                                     \
    do {                                                                   \
        g_calls = 0;                                                       \
        call;                                                              \
        assert_int_equal(g_calls, 1);                                      \
        assert_string_equal(g_name, name);                                 \
        assert_int_equal(g_info, info);                                    \
    } while (0)

/* ---- reference loops, column-major with strides, in double ---------------------------------- */
static double at(const double *m, int ld, int i, int j, int trans) { return trans ? m[j + i * ld] : m[i + j * ld]; }

static void ref_gemm(int ta, int tb, int m, int n, int k, double alpha, const double *a, int lda, const double *b,
                     int ldb, double beta, double *c, int ldc)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int l = 0; l < k && alpha != 0; l++)
                s += at(a, lda, i, l, ta) * at(b, ldb, l, j, tb);
            double *y = &c[i + j * ldc];
            *y = (alpha == 0 ? 0 : alpha * s) + (beta == 0 ? 0 : beta * *y);
        }
}
/* Vector index of element i of n with increment inc, as reference BLAS walks it. */
static long vi(int n, int inc, int i) { return inc >= 0 ? (long)i * inc : (long)(i - (n - 1)) * inc; }
static void ref_gemv(int ta, int m, int n, double alpha, const double *a, int lda, const double *x, int incx,
                     double beta, double *y, int incy)
{
    int lx = ta ? m : n, ly = ta ? n : m;
    for (int i = 0; i < ly; i++) {
        double s = 0;
        for (int j = 0; j < lx && alpha != 0; j++)
            s += at(a, lda, i, j, ta) * x[vi(lx, incx, j)];
        double *o = &y[vi(ly, incy, i)];
        *o = (alpha == 0 ? 0 : alpha * s) + (beta == 0 ? 0 : beta * *o);
    }
}

/* ---- typed copies and comparison ---------------------------------------------------------- */
static void fill(double *p, int n, unsigned seed)
{
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (double)((seed >> 8) % 2001) / 1000.0 - 1.0;
    }
}
#define TO(T, src, n) to_##T(src, n)
static float *to_float(const double *s, int n)
{
    float *d = malloc(sizeof(float) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++)
        d[i] = (float)s[i];
    return d;
}
static double *to_double(const double *s, int n)
{
    double *d = malloc(sizeof(double) * (size_t)(n ? n : 1));
    memcpy(d, s, sizeof(double) * (size_t)n);
    return d;
}
static void close_f(const float *got, const double *want, int n, double tol, const char *what)
{
    for (int i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= tol * fmax(1, fabs(want[i]))) && !(isnan(got[i]) && isnan(want[i]))) {
            print_error("%s: element %d got %.9g want %.9g\n", what, i, got[i], want[i]);
            fail();
        }
}
static void close_d(const double *got, const double *want, int n, double tol, const char *what)
{
    for (int i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= tol * fmax(1, fabs(want[i]))) && !(isnan(got[i]) && isnan(want[i]))) {
            print_error("%s: element %d got %.17g want %.17g\n", what, i, got[i], want[i]);
            fail();
        }
}
#define CLOSE(T, got, want, n, what) _Generic((got), float *: close_f, double *: close_d)(got, want, n, TOL_##T, what)
#define TOL_float 1e-4
#define TOL_double 1e-10

/* ---- gemm ------------------------------------------------------------------------------ */
enum { F77, COL, ROW };
static const double g_ab[][2] = {{0.7, 0.3}, {0.7, 0.0}, {0.0, 0.5}, {1.3, 1.0}, {-1.0, -2.0}};

#define GEMM_TEST(T, p)                                                                                        \
    static void p##gemm_case(int abi, int ta, int tb, int m, int n, int k, double alpha, double beta)          \
    {                                                                                                          \
        int mx = m > n ? (m > k ? m : k) : (n > k ? n : k), ld = mx + 2, sz = ld * (mx > 0 ? mx : 1);        \
        double *a = malloc(sizeof(double) * sz), *b = malloc(sizeof(double) * sz), *c = malloc(sizeof(double) * sz); \
        fill(a, sz, 1), fill(b, sz, 2), fill(c, sz, 3);                                                        \
        if (alpha == 0) /* A and B are not read */                                                             \
            a[0] = b[0] = NAN;                                                                                 \
        if (beta == 0) /* C is not read */                                                                     \
            c[0] = NAN;                                                                                        \
        T *ta_ = TO(T, a, sz), *tb_ = TO(T, b, sz), *tc = TO(T, c, sz);                                        \
        if (abi == ROW)                                                                                        \
            ref_gemm(tb, ta, n, m, k, alpha, b, ld, a, ld, beta, c, ld);                                       \
        else                                                                                                   \
            ref_gemm(ta, tb, m, n, k, alpha, a, ld, b, ld, beta, c, ld);                                       \
        T al = (T)alpha, be = (T)beta;                                                                         \
        if (abi == F77)                                                                                        \
            p##gemm_(ta ? "T" : "n", tb ? "c" : "N", &m, &n, &k, &al, ta_, &ld, tb_, &ld, &be, tc, &ld, 1, 1); \
        else                                                                                                   \
            cblas_##p##gemm(abi == ROW ? CblasRowMajor : CblasColMajor, ta ? CblasTrans : CblasNoTrans,        \
                            tb ? CblasConjTrans : CblasNoTrans, m, n, k, al, ta_, ld, tb_, ld, be, tc, ld);     \
        char what[96];                                                                                         \
        snprintf(what, sizeof what, #p "gemm abi %d ta %d tb %d %dx%dx%d alpha %g beta %g", abi, ta, tb, m, n, k, \
                 alpha, beta);                                                                                 \
        CLOSE(T, tc, c, sz, what);                                                                             \
        free(a), free(b), free(c), free(ta_), free(tb_), free(tc);                                             \
    }                                                                                                          \
    static void test_##p##gemm(void **state)                                                                   \
    {                                                                                                          \
        (void)state;                                                                                           \
        static const int dims[][3] = {{3, 4, 5}, {67, 45, 33}, {128, 96, 80}, {1, 1, 1}, {5, 6, 0}};           \
        for (int abi = F77; abi <= ROW; abi++)                                                                 \
            for (int t = 0; t < 4; t++)                                                                        \
                for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)                                      \
                    for (size_t s = 0; s < sizeof g_ab / sizeof g_ab[0]; s++)                                  \
                        p##gemm_case(abi, t & 1, t >> 1, dims[d][0], dims[d][1], dims[d][2], g_ab[s][0],       \
                                     g_ab[s][1]);                                                              \
    }
GEMM_TEST(float, s)
GEMM_TEST(double, d)

/* ---- gemv ------------------------------------------------------------------------------ */
#define GEMV_TEST(T, p)                                                                                        \
    static void p##gemv_case(int abi, int ta, int m, int n, int incx, int incy, double alpha, double beta)     \
    {                                                                                                          \
        int ld = (m > n ? m : n) + 1, sa = ld * ld, lx = ta ? m : n, ly = ta ? n : m; /* in either layout */   \
        int sx = 1 + (lx - 1) * abs(incx), sy = 1 + (ly - 1) * abs(incy);                                      \
        double *a = malloc(sizeof(double) * sa), *x = malloc(sizeof(double) * sx), *y = malloc(sizeof(double) * sy); \
        fill(a, sa, 4), fill(x, sx, 5), fill(y, sy, 6);                                                        \
        if (alpha == 0)                                                                                        \
            a[0] = x[0] = NAN;                                                                                 \
        if (beta == 0)                                                                                         \
            y[0] = NAN;                                                                                        \
        T *ta_ = TO(T, a, sa), *tx = TO(T, x, sx), *ty = TO(T, y, sy);                                         \
        if (abi == ROW)                                                                                        \
            ref_gemv(!ta, n, m, alpha, a, ld, x, incx, beta, y, incy);                                         \
        else                                                                                                   \
            ref_gemv(ta, m, n, alpha, a, ld, x, incx, beta, y, incy);                                          \
        T al = (T)alpha, be = (T)beta;                                                                         \
        if (abi == F77)                                                                                        \
            p##gemv_(ta ? "t" : "N", &m, &n, &al, ta_, &ld, tx, &incx, &be, ty, &incy, 1);                     \
        else                                                                                                   \
            cblas_##p##gemv(abi == ROW ? CblasRowMajor : CblasColMajor, ta ? CblasTrans : CblasNoTrans, m, n, al, \
                            ta_, ld, tx, incx, be, ty, incy);                                                  \
        char what[96];                                                                                         \
        snprintf(what, sizeof what, #p "gemv abi %d ta %d %dx%d inc %d %d alpha %g beta %g", abi, ta, m, n, incx, \
                 incy, alpha, beta);                                                                           \
        CLOSE(T, ty, y, sy, what);                                                                             \
        free(a), free(x), free(y), free(ta_), free(tx), free(ty);                                              \
    }                                                                                                          \
    static void test_##p##gemv(void **state)                                                                   \
    {                                                                                                          \
        (void)state;                                                                                           \
        static const int dims[][4] = {{3, 4, 1, 1}, {70, 50, 1, 1}, {70, 50, 2, 3}, {33, 20, -1, 2},           \
                                      {20, 33, 1, -2}, {300, 200, 1, 1}};                                      \
        for (int abi = F77; abi <= ROW; abi++)                                                                 \
            for (int t = 0; t < 2; t++)                                                                        \
                for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)                                      \
                    for (size_t s = 0; s < sizeof g_ab / sizeof g_ab[0]; s++)                                  \
                        p##gemv_case(abi, t, dims[d][0], dims[d][1], dims[d][2], dims[d][3], g_ab[s][0],       \
                                     g_ab[s][1]);                                                              \
    }
GEMV_TEST(float, s)
GEMV_TEST(double, d)

/* ---- ger: A += alpha x y^T --------------------------------------------------------------- */
static void ref_ger(int m, int n, double alpha, const double *x, int incx, const double *y, int incy, double *a,
                    int lda)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            a[i + j * lda] += alpha * x[vi(m, incx, i)] * y[vi(n, incy, j)];
}

#define GER_TEST(T, p)                                                                                         \
    static void p##ger_case(int abi, int m, int n, int incx, int incy, double alpha)                           \
    {                                                                                                          \
        int ld = (m > n ? m : n) + 1, sa = ld * ld; /* in either layout */                                     \
        int sx = m ? 1 + (m - 1) * abs(incx) : 1, sy = n ? 1 + (n - 1) * abs(incy) : 1;                        \
        double *a = malloc(sizeof(double) * sa), *x = malloc(sizeof(double) * sx), *y = malloc(sizeof(double) * sy); \
        fill(a, sa, 10), fill(x, sx, 11), fill(y, sy, 12);                                                     \
        if (alpha == 0) /* x and y are not read */                                                             \
            x[0] = y[0] = NAN;                                                                                 \
        T *ta_ = TO(T, a, sa), *tx = TO(T, x, sx), *ty = TO(T, y, sy);                                         \
        if (alpha != 0) /* row-major A is column-major A^T: y x^T */                                           \
            abi == ROW ? ref_ger(n, m, alpha, y, incy, x, incx, a, ld) : ref_ger(m, n, alpha, x, incx, y, incy, a, ld); \
        T al = (T)alpha;                                                                                       \
        if (abi == F77)                                                                                        \
            p##ger_(&m, &n, &al, tx, &incx, ty, &incy, ta_, &ld);                                              \
        else                                                                                                   \
            cblas_##p##ger(abi == ROW ? CblasRowMajor : CblasColMajor, m, n, al, tx, incx, ty, incy, ta_, ld);  \
        char what[96];                                                                                         \
        snprintf(what, sizeof what, #p "ger abi %d %dx%d inc %d %d alpha %g", abi, m, n, incx, incy, alpha);   \
        CLOSE(T, ta_, a, sa, what);                                                                            \
        free(a), free(x), free(y), free(ta_), free(tx), free(ty);                                              \
    }                                                                                                          \
    static void test_##p##ger(void **state)                                                                    \
    {                                                                                                          \
        (void)state;                                                                                           \
        static const int dims[][4] = {{3, 4, 1, 1},    {70, 50, 1, 1},  {70, 50, 2, 3}, {33, 20, -1, 2},        \
                                      {20, 33, 1, -2}, {300, 200, 1, 1}, {1, 1, 1, 1},  {0, 5, 1, 1}};          \
        static const double alphas[] = {0.7, 0.0, -1.5};                                                       \
        for (int abi = F77; abi <= ROW; abi++)                                                                 \
            for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)                                          \
                for (size_t s = 0; s < sizeof alphas / sizeof alphas[0]; s++)                                  \
                    p##ger_case(abi, dims[d][0], dims[d][1], dims[d][2], dims[d][3], alphas[s]);              \
    }
GER_TEST(float, s)
GER_TEST(double, d)

/* ---- level 1 ----------------------------------------------------------------------------- */
static const int g_n[] = {0, 1, 7, 1000, 100000};
static const int g_inc[][2] = {{1, 1}, {3, 2}, {-2, 1}, {1, -3}, {0, 1}};
static const double g_axpby[][2] = {{0.5, -2.0}, {0.0, 1.5}, {0.25, 0.0}, {0.0, 0.0}, {1.0, 1.0}};

#define LEVEL1_TEST(T, p)                                                                                      \
    static void test_##p##level1(void **state)                                                                 \
    {                                                                                                          \
        (void)state;                                                                                           \
        for (size_t in = 0; in < sizeof g_n / sizeof g_n[0]; in++)                                             \
            for (size_t ii = 0; ii < sizeof g_inc / sizeof g_inc[0]; ii++)                                     \
                for (int abi = F77; abi <= COL; abi++) {                                                       \
                    int n = g_n[in], incx = g_inc[ii][0], incy = g_inc[ii][1];                                 \
                    int sx = n ? 1 + (n - 1) * abs(incx) : 1, sy = n ? 1 + (n - 1) * abs(incy) : 1;            \
                    double *x = malloc(sizeof(double) * sx), *y = malloc(sizeof(double) * sy);                 \
                    fill(x, sx, 7), fill(y, sy, 8);                                                            \
                    T *tx = TO(T, x, sx), *ty = TO(T, y, sy);                                                  \
                    char what[64];                                                                             \
                    snprintf(what, sizeof what, #p " n %d inc %d %d abi %d", n, incx, incy, abi);              \
                    /* dot */                                                                                  \
                    double want = 0;                                                                           \
                    for (int i = 0; i < n; i++)                                                                \
                        want += (double)tx[vi(n, incx, i)] * ty[vi(n, incy, i)];                               \
                    double got = abi == F77 ? p##dot_(&n, tx, &incx, ty, &incy) : cblas_##p##dot(n, tx, incx, ty, incy); \
                    close_d(&got, &want, 1, TOL_##T * (1 + sqrt(n)), what);                                   \
                    /* nrm2 (reference: every element once, whatever the sign of incx) */                      \
                    want = 0;                                                                                  \
                    for (int i = 0; i < n; i++)                                                                \
                        want += (double)tx[vi(n, incx, i)] * tx[vi(n, incx, i)];                               \
                    want = sqrt(want);                                                                         \
                    got = abi == F77 ? p##nrm2_(&n, tx, &incx) : cblas_##p##nrm2(n, tx, incx);                 \
                    close_d(&got, &want, 1, TOL_##T, what);                                                    \
                    /* axpy: y += 0.5 x; alpha == 0 leaves y alone even with NaN in x */                       \
                    for (int i = 0; i < n; i++)                                                                \
                        y[vi(n, incy, i)] += 0.5 * tx[vi(n, incx, i)];                                         \
                    T half = (T)0.5, zero = 0;                                                                 \
                    if (abi == F77)                                                                            \
                        p##axpy_(&n, &half, tx, &incx, ty, &incy);                                             \
                    else                                                                                       \
                        cblas_##p##axpy(n, half, tx, incx, ty, incy);                                          \
                    CLOSE(T, ty, y, sy, what);                                                                 \
                    tx[0] = NAN;                                                                               \
                    if (abi == F77)                                                                            \
                        p##axpy_(&n, &zero, tx, &incx, ty, &incy);                                             \
                    else                                                                                       \
                        cblas_##p##axpy(n, zero, tx, incx, ty, incy);                                          \
                    CLOSE(T, ty, y, sy, what);                                                                 \
                    /* scal: 3 y; incy <= 0 is a no-op; alpha == 0 multiplies (NaN stays NaN) */               \
                    for (int i = 0; i < n && incy > 0; i++)                                                    \
                        y[i * incy] *= 3;                                                                      \
                    T three = 3;                                                                               \
                    if (abi == F77)                                                                            \
                        p##scal_(&n, &three, ty, &incy);                                                       \
                    else                                                                                       \
                        cblas_##p##scal(n, three, ty, incy);                                                   \
                    CLOSE(T, ty, y, sy, what);                                                                 \
                    if (n > 1 && incy > 0) {                                                                   \
                        ty[0] = NAN, ty[incy] = (T)-2;                                                         \
                        if (abi == F77)                                                                        \
                            p##scal_(&n, &zero, ty, &incy);                                                    \
                        else                                                                                   \
                            cblas_##p##scal(n, zero, ty, incy);                                                \
                        assert_true(isnan(ty[0]));                                                             \
                        assert_true(ty[incy] == 0 && signbit(ty[incy]));                                       \
                    }                                                                                          \
                    /* copy: y = x */                                                                          \
                    tx[0] = (T)x[0];                                                                           \
                    for (int i = 0; i < n; i++)                                                                \
                        y[vi(n, incy, i)] = tx[vi(n, incx, i)];                                                \
                    if (abi == F77)                                                                            \
                        p##copy_(&n, tx, &incx, ty, &incy);                                                    \
                    else                                                                                       \
                        cblas_##p##copy(n, tx, incx, ty, incy);                                                \
                    CLOSE(T, ty, y, sy, what);                                                                 \
                    /* axpby: y = alpha x + beta y; alpha == 0 reads no x, beta == 0 no y (NaN there) */      \
                    for (size_t k = 0; k < sizeof g_axpby / sizeof g_axpby[0]; k++) {                          \
                        double al = g_axpby[k][0], be = g_axpby[k][1];                                         \
                        T tal = (T)al, tbe = (T)be;                                                            \
                        tx[0] = al == 0 ? (T)NAN : (T)x[0];                                                    \
                        if (be == 0)                                                                           \
                            ty[0] = (T)NAN, y[0] = NAN;                                                        \
                        for (int i = 0; i < n; i++) {                                                          \
                            double *o = &y[vi(n, incy, i)];                                                    \
                            *o = (al == 0 ? 0 : al * tx[vi(n, incx, i)]) + (be == 0 ? 0 : be * *o);            \
                        }                                                                                      \
                        if (abi == F77)                                                                        \
                            p##axpby_(&n, &tal, tx, &incx, &tbe, ty, &incy);                                   \
                        else                                                                                   \
                            cblas_##p##axpby(n, tal, tx, incx, tbe, ty, incy);                                 \
                        CLOSE(T, ty, y, sy, what);                                                             \
                    }                                                                                          \
                    free(x), free(y), free(tx), free(ty);                                                      \
                }                                                                                              \
    }
LEVEL1_TEST(float, s)
LEVEL1_TEST(double, d)

/* ---- argument checks: reference INFO numbers, nothing written ------------------------------ */
static void test_errors(void **state)
{
    (void)state;
    float a[64] = {0}, c[64], keep[64];
    for (int i = 0; i < 64; i++)
        c[i] = keep[i] = (float)i;
    int two = 2, one = 1, neg = -1, zero = 0;
    float al = 1, be = 0;
    /* SGEMM: TRANSA 1, TRANSB 2, M 3, N 4, K 5, LDA 8, LDB 10, LDC 13 */
    EXPECT_ERROR(sgemm_("X", "N", &two, &two, &two, &al, a, &two, a, &two, &be, c, &two, 1, 1), "SGEMM ", 1);
    EXPECT_ERROR(sgemm_("N", "?", &two, &two, &two, &al, a, &two, a, &two, &be, c, &two, 1, 1), "SGEMM ", 2);
    EXPECT_ERROR(sgemm_("N", "N", &neg, &two, &two, &al, a, &two, a, &two, &be, c, &two, 1, 1), "SGEMM ", 3);
    EXPECT_ERROR(sgemm_("N", "N", &two, &neg, &two, &al, a, &two, a, &two, &be, c, &two, 1, 1), "SGEMM ", 4);
    EXPECT_ERROR(sgemm_("N", "N", &two, &two, &neg, &al, a, &two, a, &two, &be, c, &two, 1, 1), "SGEMM ", 5);
    EXPECT_ERROR(sgemm_("N", "N", &two, &two, &two, &al, a, &one, a, &two, &be, c, &two, 1, 1), "SGEMM ", 8);
    EXPECT_ERROR(sgemm_("T", "N", &two, &two, &two, &al, a, &two, a, &one, &be, c, &two, 1, 1), "SGEMM ", 10);
    EXPECT_ERROR(sgemm_("N", "T", &two, &two, &two, &al, a, &two, a, &two, &be, c, &one, 1, 1), "SGEMM ", 13);
    EXPECT_ERROR(dgemm_("N", "N", &neg, &two, &two, (double[]){1}, (double *)a, &two, (double *)a, &two,
                        (double[]){0}, (double *)c, &two, 1, 1),
                 "DGEMM ", 3);
    /* cblas_sgemm: layout 1, TransA 2, TransB 3, M 4, N 5, K 6, lda 9, ldb 11, ldc 14 in both layouts */
    g_row_major = 0;
    EXPECT_ERROR(cblas_sgemm(99, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1, a, 2, a, 2, 0, c, 2), "cblas_sgemm", 1);
    for (int row = 0; row < 2; row++) {
        enum CBLAS_ORDER o = row ? CblasRowMajor : CblasColMajor;
        g_row_major = row;
        EXPECT_ERROR(cblas_sgemm(o, 7, CblasNoTrans, 2, 2, 2, 1, a, 2, a, 2, 0, c, 2), "cblas_sgemm", 2);
        EXPECT_ERROR(cblas_sgemm(o, CblasNoTrans, 7, 2, 2, 2, 1, a, 2, a, 2, 0, c, 2), "cblas_sgemm", 3);
        EXPECT_ERROR(cblas_sgemm(o, CblasNoTrans, CblasNoTrans, -1, 2, 2, 1, a, 2, a, 2, 0, c, 2), "cblas_sgemm", 4);
        EXPECT_ERROR(cblas_sgemm(o, CblasNoTrans, CblasNoTrans, 2, -1, 2, 1, a, 2, a, 2, 0, c, 2), "cblas_sgemm", 5);
        EXPECT_ERROR(cblas_sgemm(o, CblasNoTrans, CblasNoTrans, 2, 2, -1, 1, a, 2, a, 2, 0, c, 2), "cblas_sgemm", 6);
        EXPECT_ERROR(cblas_sgemm(o, CblasNoTrans, CblasNoTrans, 3, 3, 3, 1, a, 2, a, 3, 0, c, 3), "cblas_sgemm", 9);
        EXPECT_ERROR(cblas_sgemm(o, CblasNoTrans, CblasNoTrans, 3, 3, 3, 1, a, 3, a, 2, 0, c, 3), "cblas_sgemm", 11);
        EXPECT_ERROR(cblas_sgemm(o, CblasNoTrans, CblasNoTrans, 3, 3, 3, 1, a, 3, a, 3, 0, c, 2), "cblas_sgemm", 14);
    }
    /* SGEMV: TRANS 1, M 2, N 3, LDA 6, INCX 8, INCY 11 */
    EXPECT_ERROR(sgemv_("q", &two, &two, &al, a, &two, a, &one, &be, c, &one, 1), "SGEMV ", 1);
    EXPECT_ERROR(sgemv_("N", &neg, &two, &al, a, &two, a, &one, &be, c, &one, 1), "SGEMV ", 2);
    EXPECT_ERROR(sgemv_("N", &two, &neg, &al, a, &two, a, &one, &be, c, &one, 1), "SGEMV ", 3);
    EXPECT_ERROR(sgemv_("N", &two, &two, &al, a, &one, a, &one, &be, c, &one, 1), "SGEMV ", 6);
    EXPECT_ERROR(sgemv_("N", &two, &two, &al, a, &two, a, &zero, &be, c, &one, 1), "SGEMV ", 8);
    EXPECT_ERROR(sgemv_("N", &two, &two, &al, a, &two, a, &one, &be, c, &zero, 1), "SGEMV ", 11);
    EXPECT_ERROR(dgemv_("N", &two, &two, (double[]){1}, (double *)a, &one, (double *)a, &one, (double[]){0},
                        (double *)c, &one, 1),
                 "DGEMV ", 6);
    /* cblas_sgemv: layout 1, TransA 2, M 3, N 4, lda 7, incX 9, incY 12 in both layouts */
    g_row_major = 0;
    EXPECT_ERROR(cblas_sgemv(0, CblasNoTrans, 2, 2, 1, a, 2, a, 1, 0, c, 1), "cblas_sgemv", 1);
    for (int row = 0; row < 2; row++) {
        enum CBLAS_ORDER o = row ? CblasRowMajor : CblasColMajor;
        g_row_major = row;
        EXPECT_ERROR(cblas_sgemv(o, 0, 2, 2, 1, a, 2, a, 1, 0, c, 1), "cblas_sgemv", 2);
        EXPECT_ERROR(cblas_sgemv(o, CblasNoTrans, -1, 2, 1, a, 2, a, 1, 0, c, 1), "cblas_sgemv", 3);
        EXPECT_ERROR(cblas_sgemv(o, CblasNoTrans, 2, -1, 1, a, 2, a, 1, 0, c, 1), "cblas_sgemv", 4);
        EXPECT_ERROR(cblas_sgemv(o, CblasNoTrans, 3, 3, 1, a, 2, a, 1, 0, c, 1), "cblas_sgemv", 7);
        EXPECT_ERROR(cblas_sgemv(o, CblasNoTrans, 2, 2, 1, a, 2, a, 0, 0, c, 1), "cblas_sgemv", 9);
        EXPECT_ERROR(cblas_sgemv(o, CblasNoTrans, 2, 2, 1, a, 2, a, 1, 0, c, 0), "cblas_sgemv", 12);
    }
    /* SGER: M 1, N 2, INCX 5, INCY 7, LDA 9 */
    EXPECT_ERROR(sger_(&neg, &two, &al, a, &one, a, &one, c, &two), "SGER  ", 1);
    EXPECT_ERROR(sger_(&two, &neg, &al, a, &one, a, &one, c, &two), "SGER  ", 2);
    EXPECT_ERROR(sger_(&two, &two, &al, a, &zero, a, &one, c, &two), "SGER  ", 5);
    EXPECT_ERROR(sger_(&two, &two, &al, a, &one, a, &zero, c, &two), "SGER  ", 7);
    EXPECT_ERROR(sger_(&two, &two, &al, a, &one, a, &one, c, &one), "SGER  ", 9);
    EXPECT_ERROR(dger_(&two, &two, (double[]){1}, (double *)a, &one, (double *)a, &zero, (double *)c, &two), "DGER  ", 7);
    /* cblas_sger: layout 1, M 2, N 3, incX 6, incY 8, lda 10 in both layouts */
    g_row_major = 0;
    EXPECT_ERROR(cblas_sger(5, 2, 2, 1, a, 1, a, 1, c, 2), "cblas_sger", 1);
    for (int row = 0; row < 2; row++) {
        enum CBLAS_ORDER o = row ? CblasRowMajor : CblasColMajor;
        g_row_major = row;
        EXPECT_ERROR(cblas_sger(o, -1, 2, 1, a, 1, a, 1, c, 2), "cblas_sger", 2);
        EXPECT_ERROR(cblas_sger(o, 2, -1, 1, a, 1, a, 1, c, 2), "cblas_sger", 3);
        EXPECT_ERROR(cblas_sger(o, 2, 2, 1, a, 0, a, 1, c, 2), "cblas_sger", 6);
        EXPECT_ERROR(cblas_sger(o, 2, 2, 1, a, 1, a, 0, c, 2), "cblas_sger", 8);
        EXPECT_ERROR(cblas_sger(o, 3, 3, 1, a, 1, a, 1, c, 2), "cblas_sger", 10);
    }
    g_row_major = 1;
    EXPECT_ERROR(cblas_dger(CblasRowMajor, 2, 2, 1, (double *)a, 1, (double *)a, 0, (double *)c, 2), "cblas_dger", 8);
    /* lda is checked against the leading dimension of A in its layout: M, or N row-major */
    EXPECT_ERROR(cblas_sger(CblasRowMajor, 2, 3, 1, a, 1, a, 1, c, 2), "cblas_sger", 10);
    /* Row-major checks the column-major call it becomes: lda >= max(1, N) there. */
    EXPECT_ERROR(cblas_sgemv(CblasRowMajor, CblasNoTrans, 5, 3, 1, a, 2, a, 1, 0, c, 1), "cblas_sgemv", 7);
    /* What the routine itself passes for a row-major call is the column-major call's INFO + 1,
     * as reference CBLAS: M of cblas_sgemv is N of SGEMV (3, +1), M of cblas_sger N of SGER,
     * M of cblas_dgemm N of DGEMM; incX of cblas_dger is INCY of DGER (7, +1). */
    EXPECT_ERROR(cblas_sgemv(CblasRowMajor, CblasNoTrans, -1, 2, 1, a, 2, a, 1, 0, c, 1), "cblas_sgemv", 3);
    assert_int_equal(g_raw, 4);
    EXPECT_ERROR(cblas_sger(CblasRowMajor, -1, 2, 1, a, 1, a, 1, c, 2), "cblas_sger", 2);
    assert_int_equal(g_raw, 3);
    EXPECT_ERROR(cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, 2, 2, 1, (double *)a, 2, (double *)a, 2, 0,
                             (double *)c, 2),
                 "cblas_dgemm", 4);
    assert_int_equal(g_raw, 5);
    EXPECT_ERROR(cblas_dger(CblasRowMajor, 2, 2, 1, (double *)a, 0, (double *)a, 1, (double *)c, 2), "cblas_dger", 6);
    assert_int_equal(g_raw, 8);
    g_row_major = 0;
    EXPECT_ERROR(cblas_sger(CblasColMajor, 3, 2, 1, a, 1, a, 1, c, 2), "cblas_sger", 10);
    /* The double routines, every argument in both layouts. */
    double *da = (double *)a, *dc = (double *)c;
    g_row_major = 0;
    EXPECT_ERROR(cblas_dgemm(0, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1, da, 2, da, 2, 0, dc, 2), "cblas_dgemm", 1);
    EXPECT_ERROR(cblas_dgemv(0, CblasNoTrans, 2, 2, 1, da, 2, da, 1, 0, dc, 1), "cblas_dgemv", 1);
    EXPECT_ERROR(cblas_dger(0, 2, 2, 1, da, 1, da, 1, dc, 2), "cblas_dger", 1);
    for (int row = 0; row < 2; row++) {
        enum CBLAS_ORDER o = row ? CblasRowMajor : CblasColMajor;
        g_row_major = row;
        EXPECT_ERROR(cblas_dgemm(o, 7, CblasNoTrans, 2, 2, 2, 1, da, 2, da, 2, 0, dc, 2), "cblas_dgemm", 2);
        EXPECT_ERROR(cblas_dgemm(o, CblasNoTrans, 7, 2, 2, 2, 1, da, 2, da, 2, 0, dc, 2), "cblas_dgemm", 3);
        EXPECT_ERROR(cblas_dgemm(o, CblasNoTrans, CblasNoTrans, -1, 2, 2, 1, da, 2, da, 2, 0, dc, 2), "cblas_dgemm", 4);
        EXPECT_ERROR(cblas_dgemm(o, CblasNoTrans, CblasNoTrans, 2, -1, 2, 1, da, 2, da, 2, 0, dc, 2), "cblas_dgemm", 5);
        EXPECT_ERROR(cblas_dgemm(o, CblasNoTrans, CblasNoTrans, 2, 2, -1, 1, da, 2, da, 2, 0, dc, 2), "cblas_dgemm", 6);
        EXPECT_ERROR(cblas_dgemm(o, CblasTrans, CblasNoTrans, 3, 3, 3, 1, da, 2, da, 3, 0, dc, 3), "cblas_dgemm", 9);
        EXPECT_ERROR(cblas_dgemm(o, CblasNoTrans, CblasTrans, 3, 3, 3, 1, da, 3, da, 2, 0, dc, 3), "cblas_dgemm", 11);
        EXPECT_ERROR(cblas_dgemm(o, CblasNoTrans, CblasNoTrans, 3, 3, 3, 1, da, 3, da, 3, 0, dc, 2), "cblas_dgemm", 14);
        EXPECT_ERROR(cblas_dgemv(o, 0, 2, 2, 1, da, 2, da, 1, 0, dc, 1), "cblas_dgemv", 2);
        EXPECT_ERROR(cblas_dgemv(o, CblasTrans, -1, 2, 1, da, 2, da, 1, 0, dc, 1), "cblas_dgemv", 3);
        EXPECT_ERROR(cblas_dgemv(o, CblasTrans, 2, -1, 1, da, 2, da, 1, 0, dc, 1), "cblas_dgemv", 4);
        EXPECT_ERROR(cblas_dgemv(o, CblasTrans, 3, 3, 1, da, 2, da, 1, 0, dc, 1), "cblas_dgemv", 7);
        EXPECT_ERROR(cblas_dgemv(o, CblasTrans, 2, 2, 1, da, 2, da, 0, 0, dc, 1), "cblas_dgemv", 9);
        EXPECT_ERROR(cblas_dgemv(o, CblasTrans, 2, 2, 1, da, 2, da, 1, 0, dc, 0), "cblas_dgemv", 12);
        EXPECT_ERROR(cblas_dger(o, -1, 2, 1, da, 1, da, 1, dc, 2), "cblas_dger", 2);
        EXPECT_ERROR(cblas_dger(o, 2, -1, 1, da, 1, da, 1, dc, 2), "cblas_dger", 3);
        EXPECT_ERROR(cblas_dger(o, 2, 2, 1, da, 0, da, 1, dc, 2), "cblas_dger", 6);
        EXPECT_ERROR(cblas_dger(o, 2, 2, 1, da, 1, da, 0, dc, 2), "cblas_dger", 8);
        EXPECT_ERROR(cblas_dger(o, 3, 3, 1, da, 1, da, 1, dc, 2), "cblas_dger", 10);
    }
    g_row_major = 0;
    g_calls = 0;
    cblas_sgemv(CblasRowMajor, CblasNoTrans, 1, 3, 1, a, 3, a, 1, 0, c, 1); /* lda 3 >= N: legal */
    assert_int_equal(g_calls, 0);
    for (int i = 1; i < 64; i++) /* nothing but that legal call's y[0] was written */
        assert_true(c[i] == keep[i]);
}

/* Quick returns: nothing is read or written. */
static void test_quick_returns(void **state)
{
    (void)state;
    double c[4] = {1, 2, 3, 4};
    int zero = 0, two = 2;
    double one = 1, z = 0;
    dgemm_("N", "N", &zero, &two, &two, &one, NULL, &two, NULL, &two, &one, c, &two, 1, 1);
    dgemm_("N", "N", &two, &two, &two, &z, NULL, &two, NULL, &two, &one, c, &two, 1, 1); /* alpha 0, beta 1 */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 0, 1, NULL, 1, NULL, 2, 1, c, 2); /* k 0, beta 1 */
    dgemv_("T", &two, &two, &z, NULL, &two, NULL, &two, &one, c, &two, 1);
    cblas_daxpy(0, 1, NULL, 1, c, 1);
    cblas_dscal(4, 1, c, 1);
    dger_(&zero, &two, &one, NULL, &two, NULL, &two, c, &two);
    cblas_dger(CblasRowMajor, 2, 2, 0, NULL, 1, NULL, 1, c, 2); /* alpha 0 */
    cblas_dcopy(0, NULL, 1, c, 1);
    daxpby_(&zero, &one, NULL, &two, &z, c, &two);
    assert_true(cblas_ddot(0, NULL, 1, NULL, 1) == 0 && cblas_dnrm2(-1, NULL, 1) == 0);
    assert_true(c[0] == 1 && c[1] == 2 && c[2] == 3 && c[3] == 4);
}

/* Several threads at once, from the very first call (the drop-in sets up once). */
static void *gemm_thread(void *arg)
{
    enum { N = 48 };
    double a[N * N], b[N * N], c[N * N], want[N * N];
    fill(a, N * N, (unsigned)(size_t)arg), fill(b, N * N, 9);
    for (int rep = 0; rep < 20; rep++) {
        memset(c, 0, sizeof c), memset(want, 0, sizeof want);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, N, N, N, 1.0, a, N, b, N, 0.0, c, N);
        ref_gemm(0, 1, N, N, N, 1.0, a, N, b, N, 0.0, want, N);
        for (int i = 0; i < N * N; i++)
            if (fabs(c[i] - want[i]) > 1e-10 * fmax(1, fabs(want[i])))
                return (void *)1;
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    pthread_t t[4];
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, gemm_thread, (void *)(i + 1)), 0);
    for (int i = 0; i < 4; i++) {
        void *r = (void *)1;
        pthread_join(t[i], &r);
        assert_null(r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads), cmocka_unit_test(test_sgemm), cmocka_unit_test(test_dgemm),   cmocka_unit_test(test_sgemv),
        cmocka_unit_test(test_dgemv),  cmocka_unit_test(test_sger),    cmocka_unit_test(test_dger),  cmocka_unit_test(test_slevel1), cmocka_unit_test(test_dlevel1),
        cmocka_unit_test(test_errors), cmocka_unit_test(test_quick_returns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
