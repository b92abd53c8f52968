/* Shared utilities of the core test suite (see xo_test.h). */
#include "xo_test.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- random data ------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uniform(uint64_t *state, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(splitmix64(state) >> 11) * (1.0 / 9007199254740992.0));
}

double xot_uniform(uint64_t *state, double lo, double hi) { return uniform(state, lo, hi); }

void xot_fill_f(float *p, size_t n, uint64_t seed, double lo, double hi)
{
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) p[i] = (float)uniform(&s, lo, hi);
}

void xot_fill_d(double *p, size_t n, uint64_t seed, double lo, double hi)
{
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) p[i] = uniform(&s, lo, hi);
}

/* ---- reference loops ---------------------------------------------------------- */

static size_t at(xo_layout layout, size_t r, size_t c, size_t ld)
{
    return layout == XO_ROW_MAJOR ? r * ld + c : r + c * ld;
}

size_t xot_span(size_t n, size_t inc)
{
    return n == 0 ? 0 : 1 + (n - 1) * inc;
}

size_t xot_mat_span(xo_layout layout, size_t r, size_t c, size_t ld)
{
    if (r == 0 || c == 0) return 0;
    return at(layout, r - 1, c - 1, ld) + 1;
}

#define XOT_PI 3.14159265358979323846
static double unary1(xo_unary_op op, double v)
{
    switch (op) {
    case XO_RELU: return v > 0 ? v : 0;
    case XO_TANH: return tanh(v);
    case XO_SIGMOID: return 1.0 / (1.0 + exp(-v));
    case XO_EXP: return exp(v);
    case XO_NEG: return -v;
    case XO_SQUARE: return v * v;
    case XO_RELU_GRAD: return v > 0 ? 1 : 0;
    case XO_TANH_GRAD: return 1 - v * v;
    case XO_SIGMOID_GRAD: return v * (1 - v);
    case XO_SQRT: return sqrt(v);
    case XO_RSQRT: return 1.0 / sqrt(v);
    case XO_LOG: return log(v);
    case XO_ABS: return fabs(v);
    case XO_RECIPROCAL: return 1.0 / v;
    case XO_IDENTITY: return v;
    case XO_GELU: return 0.5 * v * (1 + tanh(sqrt(2 / XOT_PI) * (v + 0.044715 * v * v * v)));
    case XO_GELU_GRAD: { /* d/dv of the line above, term by term */
        double u = sqrt(2 / XOT_PI) * (v + 0.044715 * v * v * v), du = sqrt(2 / XOT_PI) * (1 + 3 * 0.044715 * v * v);
        return 0.5 * (1 + tanh(u)) + 0.5 * v * (1 - tanh(u) * tanh(u)) * du;
    }
    case XO_SILU: return v / (1 + exp(-v));
    case XO_SILU_GRAD: return 1 / (1 + exp(-v)) + v * exp(-v) / ((1 + exp(-v)) * (1 + exp(-v)));
    case XO_UNARY_OP_COUNT: break; /* not an op */
    }
    return NAN;
}

/* ---- the unary ops' facts, from their rows in XO_UNARY_OP_MAP ------------------------ */

#define XOT_ROW_NAME_(NAME, ACT, TAKES, LO, HI) #NAME,
#define XOT_ROW_ACT_(NAME, ACT, TAKES, LO, HI) ACT,
#define XOT_ROW_TAKES_(NAME, ACT, TAKES, LO, HI) #TAKES[0],
#define XOT_ROW_LO_(NAME, ACT, TAKES, LO, HI) LO,
#define XOT_ROW_HI_(NAME, ACT, TAKES, LO, HI) HI,
static const char *const unary_names[] = {XO_UNARY_OP_MAP(XOT_ROW_NAME_)};
static const int unary_act[] = {XO_UNARY_OP_MAP(XOT_ROW_ACT_)};
static const char unary_takes[] = {XO_UNARY_OP_MAP(XOT_ROW_TAKES_)};
static const double unary_lo[] = {XO_UNARY_OP_MAP(XOT_ROW_LO_)}, unary_hi[] = {XO_UNARY_OP_MAP(XOT_ROW_HI_)};

#define XOT_BINARY_NAME_(NAME) #NAME,
static const char *const binary_names[] = {XO_BINARY_OP_MAP(XOT_BINARY_NAME_)};
const char *xot_binary_name(int op) { return op >= 0 && op < XO_BINARY_OP_COUNT ? binary_names[op] : "?"; }

static int unary_valid(int op) { return op >= 0 && op < XO_UNARY_OP_COUNT; }
const char *xot_unary_name(int op) { return unary_valid(op) ? unary_names[op] : "?"; }
int xot_unary_is_activation(int op) { return unary_valid(op) && unary_act[op]; }
char xot_unary_takes(int op) { return unary_valid(op) ? unary_takes[op] : '?'; }

double xot_unary_input(int op, double u)
{
    if (!unary_valid(op)) return u;
    double lo = unary_lo[op], hi = unary_hi[op];
    /* the hole (-1/4, 1/4) within [lo, hi] is left out: u covers the rest */
    double h0 = lo > -0.25 ? lo : -0.25, h1 = hi < 0.25 ? hi : 0.25, hole = h1 > h0 ? h1 - h0 : 0;
    double v = lo + u * (hi - lo - hole);
    return hole > 0 && v >= h0 ? v + hole : v;
}

void xot_unary_fill_s(int op, float *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (float)xot_unary_input(op, uniform(&seed, 0, 1));
}

void xot_unary_fill_d(int op, double *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) p[i] = xot_unary_input(op, uniform(&seed, 0, 1));
}

static double binary1(xo_binary_op op, double a, double b)
{
    switch (op) {
    case XO_ADD: return a + b;
    case XO_SUB: return a - b;
    case XO_MUL: return a * b;
    case XO_DIV: return a / b;
    case XO_MAX: return isnan(a) || isnan(b) ? NAN : (a > b ? a : b);
    case XO_BINARY_OP_COUNT: break; /* not an op */
    }
    return NAN;
}

#define XOT_REF_DEF(T, p)                                                                     \
    void xot_ref_##p##gemm(xo_layout layout, xo_transpose ta, xo_transpose tb, size_t m,     \
                           size_t n, size_t k, T alpha, const T *a, size_t lda, const T *b,   \
                           size_t ldb, T beta, T *c, size_t ldc)                              \
    {                                                                                         \
        for (size_t i = 0; i < m; i++)                                                        \
            for (size_t j = 0; j < n; j++) {                                                  \
                double s = 0; /* alpha == 0: A and B are not read */                          \
                for (size_t l = 0; alpha != 0 && l < k; l++) {                                \
                    double av = ta == XO_NO_TRANS ? a[at(layout, i, l, lda)]                  \
                                                  : a[at(layout, l, i, lda)];                 \
                    double bv = tb == XO_NO_TRANS ? b[at(layout, l, j, ldb)]                  \
                                                  : b[at(layout, j, l, ldb)];                 \
                    s += av * bv;                                                             \
                }                                                                             \
                T *cv = &c[at(layout, i, j, ldc)];                                            \
                *cv = (T)(beta == 0 ? alpha * s : alpha * s + (double)beta * *cv);            \
            }                                                                                 \
    }                                                                                         \
    void xot_ref_##p##gemv(xo_layout layout, xo_transpose ta, size_t m, size_t n, T alpha,    \
                           const T *a, size_t lda, const T *x, size_t incx, T beta, T *y,     \
                           size_t incy)                                                       \
    {                                                                                         \
        size_t leny = ta == XO_NO_TRANS ? m : n, lenx = ta == XO_NO_TRANS ? n : m;            \
        for (size_t i = 0; i < leny; i++) {                                                   \
            double s = 0; /* alpha == 0: A and x are not read */                              \
            for (size_t j = 0; alpha != 0 && j < lenx; j++) {                                 \
                double av = ta == XO_NO_TRANS ? a[at(layout, i, j, lda)]                      \
                                              : a[at(layout, j, i, lda)];                     \
                s += av * x[j * incx];                                                        \
            }                                                                                 \
            T *yv = &y[i * incy];                                                             \
            *yv = (T)(beta == 0 ? alpha * s : alpha * s + (double)beta * *yv);                \
        }                                                                                     \
    }                                                                                         \
    void xot_ref_##p##axpy(size_t n, T alpha, const T *x, size_t incx, T *y, size_t incy)     \
    {                                                                                         \
        for (size_t i = 0; alpha != 0 && i < n; i++) /* alpha == 0: x is not read */          \
            y[i * incy] = (T)((double)alpha * x[i * incx] + y[i * incy]);                     \
    }                                                                                         \
    void xot_ref_##p##scal(size_t n, T alpha, T *x, size_t incx)                              \
    {                                                                                         \
        for (size_t i = 0; i < n; i++) /* alpha == 0 writes zeros, even over NaN */           \
            x[i * incx] = alpha == 0 ? (T)0 : (T)((double)alpha * x[i * incx]);               \
    }                                                                                         \
    T xot_ref_##p##dot(size_t n, const T *x, size_t incx, const T *y, size_t incy)            \
    {                                                                                         \
        double s = 0;                                                                         \
        for (size_t i = 0; i < n; i++) s += (double)x[i * incx] * y[i * incy];                \
        return (T)s;                                                                          \
    }                                                                                         \
    T xot_ref_##p##nrm2(size_t n, const T *x, size_t incx)                                    \
    {                                                                                         \
        double big = 0, s = 0; /* scaled by the largest magnitude: no overflow or underflow */ \
        for (size_t i = 0; i < n; i++) {                                                      \
            double v = fabs((double)x[i * incx]);                                             \
            if (isnan(v)) return (T)NAN;                                                      \
            big = v > big ? v : big;                                                          \
        }                                                                                     \
        if (big == 0 || isinf(big)) return (T)big;                                            \
        for (size_t i = 0; i < n; i++) s += ((double)x[i * incx] / big) * (x[i * incx] / big); \
        return (T)(big * sqrt(s));                                                            \
    }                                                                                         \
    void xot_ref_##p##unary(xo_unary_op op, size_t n, const T *x, T *y)                       \
    {                                                                                         \
        for (size_t i = 0; i < n; i++) y[i] = (T)unary1(op, x[i]);                            \
    }                                                                                         \
    void xot_ref_##p##binary(xo_binary_op op, size_t n, const T *a, const T *b, T *c)         \
    {                                                                                         \
        for (size_t i = 0; i < n; i++) c[i] = (T)binary1(op, a[i], b[i]);                     \
    }                                                                                         \
    void xot_ref_##p##bias(size_t rows, size_t cols, T *a, size_t lda, const T *bias)         \
    {                                                                                         \
        for (size_t i = 0; i < rows; i++)                                                     \
            for (size_t j = 0; j < cols; j++) a[i * lda + j] = (T)((double)a[i * lda + j] + bias[j]); \
    }                                                                                         \
    T xot_ref_##p##reduce(xo_reduce_op op, size_t n, const T *x)                              \
    {                                                                                         \
        if (op == XO_SUM) {                                                                   \
            double s = 0;                                                                     \
            for (size_t i = 0; i < n; i++) s += x[i];                                         \
            return (T)s;                                                                      \
        }                                                                                     \
        T m = n ? x[0] : (T)0; /* a NaN anywhere gives NaN */                                 \
        for (size_t i = 1; i < n; i++)                                                        \
            if (x[i] > m || isnan(x[i])) m = isnan(m) ? m : x[i];                             \
        return m;                                                                             \
    }

XOT_REF_DEF(float, s)
XOT_REF_DEF(double, d)
#undef XOT_REF_DEF

#define XOT_REF_NN_DEF(T, p)                                                                  \
    void xot_ref_##p##copy(size_t n, const T *x, size_t incx, T *y, size_t incy)              \
    {                                                                                         \
        for (size_t i = 0; i < n; i++) y[i * incy] = x[i * incx];                             \
    }                                                                                         \
    void xot_ref_##p##fill(size_t n, T value, T *x, size_t incx)                              \
    {                                                                                         \
        for (size_t i = 0; i < n; i++) x[i * incx] = value;                                   \
    }                                                                                         \
    void xot_ref_##p##axpby(size_t n, T alpha, const T *x, size_t incx, T beta, T *y,         \
                            size_t incy)                                                      \
    {                                                                                         \
        for (size_t i = 0; i < n; i++) {                                                      \
            double ax = alpha == 0 ? 0.0 : (double)alpha * x[i * incx];                       \
            y[i * incy] = (T)(beta == 0 ? ax : ax + (double)beta * y[i * incy]);              \
        }                                                                                     \
    }                                                                                         \
    void xot_ref_##p##ger(xo_layout layout, size_t m, size_t n, T alpha, const T *x,          \
                          size_t incx, const T *y, size_t incy, T *a, size_t lda)             \
    {                                                                                         \
        for (size_t i = 0; i < m; i++)                                                        \
            for (size_t j = 0; j < n; j++) {                                                  \
                T *av = &a[at(layout, i, j, lda)];                                            \
                *av = (T)(*av + (double)alpha * x[i * incx] * y[j * incy]);                   \
            }                                                                                 \
    }                                                                                         \
    void xot_ref_##p##binary_scalar(xo_binary_op op, size_t n, const T *a, T s, T *c)         \
    {                                                                                         \
        for (size_t i = 0; i < n; i++) c[i] = (T)binary1(op, a[i], s);                        \
    }                                                                                         \
    void xot_ref_##p##softmax(xo_softmax_op op, size_t rows, size_t cols, const T *x,         \
                              size_t ldx, T *y, size_t ldy)                                   \
    {                                                                                         \
        for (size_t i = 0; i < rows; i++) {                                                   \
            const T *xr = x + i * ldx;                                                        \
            double mx = xr[0], s = 0;                                                         \
            for (size_t j = 1; j < cols; j++) mx = xr[j] > mx ? xr[j] : mx;                   \
            for (size_t j = 0; j < cols; j++) s += exp(xr[j] - mx);                           \
            for (size_t j = 0; j < cols; j++)                                                 \
                y[i * ldy + j] = (T)(op == XO_SOFTMAX ? exp(xr[j] - mx) / s                   \
                                                      : (xr[j] - mx) - log(s));               \
        }                                                                                     \
    }                                                                                         \
    void xot_ref_##p##softmax_xent(size_t rows, size_t cols, const T *x, size_t ldx,          \
                                   const int32_t *labels, T scale, T *loss, T *grad,          \
                                   size_t ldg)                                                \
    {                                                                                         \
        for (size_t i = 0; i < rows; i++) {                                                   \
            const T *xr = x + i * ldx;                                                        \
            int32_t c = labels[i];                                                            \
            int ignored = c < 0 || (size_t)c >= cols;                                         \
            double mx = cols ? xr[0] : 0, s = 0;                                              \
            for (size_t j = 1; j < cols; j++) mx = xr[j] > mx ? xr[j] : mx;                   \
            for (size_t j = 0; j < cols; j++) s += exp(xr[j] - mx);                           \
            loss[i] = ignored ? (T)0 : (T)(log(s) - (xr[c] - mx));                            \
            if (!grad) continue;                                                              \
            for (size_t j = 0; j < cols; j++)                                                 \
                grad[i * ldg + j] = ignored ? (T)0                                            \
                                            : (T)(scale * (exp(xr[j] - mx) / s -              \
                                                           ((size_t)c == j ? 1.0 : 0.0)));    \
        }                                                                                     \
    }                                                                                         \
    /* the first NaN of the row if it has one, else the first of its largest */               \
    void xot_ref_##p##argmax(size_t rows, size_t cols, const T *x, size_t ldx, int32_t *idx)  \
    {                                                                                         \
        for (size_t i = 0; i < rows; i++) {                                                   \
            const T *xr = x + i * ldx;                                                        \
            size_t best = 0, nan = cols;                                                      \
            for (size_t j = 0; j < cols && nan == cols; j++)                                  \
                if (isnan(xr[j])) nan = j;                                                    \
            for (size_t j = 1; j < cols; j++)                                                 \
                if (xr[j] > xr[best]) best = j;                                               \
            idx[i] = (int32_t)(nan < cols ? nan : best);                                      \
        }                                                                                     \
    }                                                                                         \
    void xot_ref_##p##reduce_axis(xo_reduce_op op, size_t rows, size_t cols, const T *x,      \
                                  size_t ldx, int axis, T *out)                               \
    {                                                                                         \
        size_t results = axis == 0 ? cols : rows, over = axis == 0 ? rows : cols;             \
        for (size_t r = 0; r < results; r++) {                                                \
            double acc = 0;                                                                   \
            for (size_t i = 0; i < over; i++) {                                               \
                double v = axis == 0 ? x[i * ldx + r] : x[r * ldx + i];                       \
                acc = op == XO_SUM ? acc + v : (i == 0 || v > acc || isnan(v) ? v : acc);      \
            }                                                                                 \
            out[r] = (T)acc;                                                                  \
        }                                                                                     \
    }                                                                                         \
    void xot_ref_##p##gemm_bias_act(xo_layout layout, xo_transpose ta, xo_transpose tb,       \
                                    size_t m, size_t n, size_t k, T alpha, const T *a,        \
                                    size_t lda, const T *b, size_t ldb, T beta, T *c,         \
                                    size_t ldc, const T *bias, xo_unary_op act)               \
    {                                                                                         \
        xot_ref_##p##gemm(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);      \
        for (size_t i = 0; i < m; i++)                                                        \
            for (size_t j = 0; j < n; j++) {                                                  \
                T *cv = &c[at(layout, i, j, ldc)];                                            \
                *cv = (T)unary1(act, (double)*cv + (bias ? (double)bias[j] : 0.0));           \
            }                                                                                 \
    }

XOT_REF_NN_DEF(float, s)
XOT_REF_NN_DEF(double, d)
#undef XOT_REF_NN_DEF

/* ---- comparison ---------------------------------------------------------------- */

static int close1(double g, double w, double tol)
{
    if (isnan(w) || isnan(g)) return isnan(w) && isnan(g);
    if (isinf(w) || isinf(g)) return g == w;
    double scale = fabs(w) > 1.0 ? fabs(w) : 1.0;
    return fabs(g - w) <= tol * scale;
}

long xot_first_mismatch_f(const float *got, const float *want, size_t n, double tol)
{
    for (size_t i = 0; i < n; i++)
        if (!close1(got[i], want[i], tol)) return (long)i;
    return -1;
}

long xot_first_mismatch_d(const double *got, const double *want, size_t n, double tol)
{
    for (size_t i = 0; i < n; i++)
        if (!close1(got[i], want[i], tol)) return (long)i;
    return -1;
}

void xot_assert_close_f_(const float *got, const float *want, size_t n, const char *what,
                         const char *file, int line)
{
    long i = xot_first_mismatch_f(got, want, n, XOT_TOL_F);
    if (i >= 0) {
        print_error("%s:%d: %s: element %ld of %zu: got %.9g want %.9g\n", file, line, what, i,
                    n, (double)got[i], (double)want[i]);
        fail();
    }
}

void xot_assert_close_d_(const double *got, const double *want, size_t n, const char *what,
                         const char *file, int line)
{
    long i = xot_first_mismatch_d(got, want, n, XOT_TOL_D);
    if (i >= 0) {
        print_error("%s:%d: %s: element %ld of %zu: got %.17g want %.17g\n", file, line, what,
                    i, n, got[i], want[i]);
        fail();
    }
}

void xot_assert_status_(xo_status st, xo_status want, const char *expr, const char *file, int line)
{
    if (st != want) {
        print_error("%s:%d: %s returned %s, want %s (last error: \"%s\")\n", file, line, expr,
                    xo_status_string(st), xo_status_string(want), xo_last_error());
        fail();
    }
}

int xot_contains(const char *hay, const char *needle)
{
    if (!hay || !needle) return 0;
    size_t n = strlen(needle);
    for (const char *h = hay; *h; h++) {
        size_t i = 0;
        while (i < n && h[i] && tolower((unsigned char)h[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n) return 1;
    }
    return n == 0;
}

int xot_contains_any(const char *hay, const char *alts)
{
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", alts);
    char *save = NULL;
    for (char *t = strtok_r(tmp, "|", &save); t; t = strtok_r(NULL, "|", &save))
        if (xot_contains(hay, t)) return 1;
    return 0;
}

static int word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static int has_one_word(const char *hay, const char *w)
{
    size_t n = strlen(w);
    if (n == 0) return 0;
    for (const char *h = hay; *h; h++) {
        if (h > hay && word_char(h[-1])) continue;
        if (strncasecmp(h, w, n) == 0 && !word_char(h[n])) return 1;
    }
    return 0;
}

int xot_has_word(const char *hay, const char *alts)
{
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", alts);
    char *save = NULL;
    if (!hay) return 0;
    for (char *t = strtok_r(tmp, "|", &save); t; t = strtok_r(NULL, "|", &save))
        if (has_one_word(hay, t)) return 1;
    return 0;
}

/* ---- buffers --------------------------------------------------------------------- */

xo_buffer *xot_buffer(xo_context *ctx, const void *data, size_t bytes)
{
    xo_buffer *b = NULL;
    xot_assert_ok(xo_buffer_create(ctx, bytes, &b));
    assert_non_null(b);
    if (data) xot_assert_ok(xo_buffer_write(b, 0, data, bytes));
    return b;
}

void xot_check_cpu_sgemm(xo_context *ctx, int n, const char *what)
{
    enum { MAX = 96 };
    static float a[MAX * MAX], b[MAX * MAX], c[MAX * MAX], want[MAX * MAX];
    assert_true(n > 0 && n <= MAX);
    size_t nn = (size_t)n * (size_t)n, bytes = nn * sizeof(float);
    xot_fill_f(a, nn, 3, -1, 1);
    xot_fill_f(b, nn, 4, -1, 1);
    memset(want, 0, bytes);
    xot_ref_sgemm(XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, n, n, n, 1, a, n, b, n, 0, want, n);
    xot_assert_ok(xo_set_device(ctx, "cpu"));
    xo_buffer *ba = xot_buffer(ctx, a, bytes), *bb = xot_buffer(ctx, b, bytes), *bc = xot_buffer(ctx, NULL, bytes);
    xot_assert_ok(xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, n, n, n, 1, ba, 0, n, bb, 0, n, 0, bc, 0, n));
    xot_assert_ok(xo_buffer_read(bc, 0, c, bytes));
    xot_assert_close_f(c, want, nn, what);
    xo_buffer_destroy(ba);
    xo_buffer_destroy(bb);
    xo_buffer_destroy(bc);
}

void *xot_read_all(xo_buffer *b)
{
    size_t n = xo_buffer_size(b);
    void *p = malloc(n ? n : 1);
    assert_non_null(p);
    xot_assert_ok(xo_buffer_read(b, 0, p, n));
    return p;
}

void xot_snap_take(xot_snap *s, xo_buffer *const *bufs, int n)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < n && i < XOT_SNAP_MAX; i++) {
        s->buf[i] = bufs[i];
        s->bytes[i] = xo_buffer_size(bufs[i]);
        s->data[i] = xot_read_all(bufs[i]);
        s->n = i + 1;
    }
}

int xot_snap_changed(const xot_snap *s)
{
    for (int i = 0; i < s->n; i++) {
        unsigned char *now = malloc(s->bytes[i]);
        if (!now) return i;
        xo_status st = xo_buffer_read(s->buf[i], 0, now, s->bytes[i]);
        int diff = st != XO_OK || memcmp(now, s->data[i], s->bytes[i]) != 0;
        free(now);
        if (diff) return i;
    }
    return -1;
}

void xot_snap_free(xot_snap *s)
{
    for (int i = 0; i < s->n; i++) free(s->data[i]);
    s->n = 0;
}

/* ---- devices -------------------------------------------------------------------- */

void xot_device_spec(const xo_context *ctx, int dev, char *out, size_t cap)
{
    xo_device_info info, other;
    xot_assert_ok(xo_device_get_info(ctx, dev, &info));
    int idx = 0;
    for (int d = 0; d < dev; d++) {
        xot_assert_ok(xo_device_get_info(ctx, d, &other));
        if (strcmp(other.plugin, info.plugin) == 0) idx++;
    }
    snprintf(out, cap, "%s:%d", info.plugin, idx);
}

int xot_force_device(xo_context *ctx, int dev, const char *suite, xo_device_info *info, char *label, size_t cap)
{
    char spec[64];
    xot_device_spec(ctx, dev, spec, sizeof spec);
    if (xo_device_get_info(ctx, dev, info) != XO_OK || xo_set_device(ctx, spec) != XO_OK) {
        fprintf(stderr, "cannot force %s: %s\n", spec, xo_last_error());
        return 1;
    }
    snprintf(label, cap, "%s %s (%s)", suite, spec, info->name);
    return 0;
}

void xot_assert_decision_(const xo_context *ctx, const char *op, int dev, int forced,
                          const char *file, int line)
{
    xo_decision d;
    memset(&d, 0x5a, sizeof d);
    xo_status st = xo_last_decision(ctx, &d);
    if (st != XO_OK) {
        print_error("%s:%d: xo_last_decision: %s\n", file, line, xo_status_string(st));
        fail();
    }
    if (strncmp(d.op, op, sizeof d.op) != 0 || (dev >= 0 && d.device != dev) ||
        (dev < 0 && (d.device < 0 || d.device >= xo_device_count(ctx))) || d.forced != forced) {
        print_error("%s:%d: last decision op=\"%.32s\" device=%d forced=%d, want op=\"%s\" "
                    "device=%d forced=%d\n",
                    file, line, d.op, d.device, d.forced, op, dev, forced);
        fail();
    }
}

/* ---- output capture (fd level) ---------------------------------------------------- */

int xot_capture_begin(xot_capture *c, int fd)
{
    fflush(NULL);
    c->fd = fd;
    FILE *f = tmpfile(); /* anonymous, removed when closed */
    if (!f) return -1;
    c->tmp = dup(fileno(f));
    fclose(f);
    if (c->tmp < 0) return -1;
    c->saved = dup(fd);
    if (c->saved < 0 || dup2(c->tmp, fd) < 0) return -1;
    return 0;
}

char *xot_capture_end(xot_capture *c)
{
    fflush(NULL);
    dup2(c->saved, c->fd);
    close(c->saved);
    off_t len = lseek(c->tmp, 0, SEEK_END);
    if (len < 0) len = 0;
    char *text = malloc((size_t)len + 1);
    if (!text) {
        close(c->tmp);
        return NULL;
    }
    lseek(c->tmp, 0, SEEK_SET);
    size_t got = 0;
    while (got < (size_t)len) {
        ssize_t r = read(c->tmp, text + got, (size_t)len - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    text[got] = '\0';
    close(c->tmp);
    return text;
}

/* ---- a quiet plugin host ---------------------------------------------------------------- */

char xot_host_error[512];
int xot_host_warnings;
int xot_host_fault_asks;
const char *xot_host_fail_site;

static void quiet_log(xo_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void quiet_log(xo_log_level level, const char *fmt, ...)
{
    if (level > XO_LOG_WARN) return;
    xot_host_warnings++;
    if (!getenv("XO_TEST_VERBOSE")) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static xo_status keep_error(xo_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static xo_status keep_error(xo_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(xot_host_error, sizeof xot_host_error, fmt, ap);
    va_end(ap);
    return s;
}

static int no_fault(const xo_plugin_host *self, const char *site)
{
    (void)self;
    xot_host_fault_asks++;
    return xot_host_fail_site && strcmp(site, xot_host_fail_site) == 0;
}

xo_plugin_host xot_quiet_host(const char *plugin_name)
{
    return (xo_plugin_host){.log = quiet_log, .set_error = keep_error, .fault = no_fault, .cache_dir = "",
                            .threads = 1, .plugin_name = plugin_name};
}

int xot_main_context(xo_context **ctx, const char *spec, int *dev)
{
    *ctx = NULL;
    if (xo_context_create(ctx) != XO_OK) {
        fprintf(stderr, "xo_context_create: %s\n", xo_last_error());
        return 1;
    }
    int found = -1;
    if (spec && xo_device_find(*ctx, spec, &found) != XO_OK) {
        printf("no device \"%s\" here: skipped\n", spec);
        xo_context_destroy(*ctx);
        *ctx = NULL;
        return XOT_EXIT_SKIP;
    }
    if (dev && spec) *dev = found;
    return 0;
}

int xot_skip_without(const char *spec)
{
    xo_context *ctx;
    int rc = xot_main_context(&ctx, spec, NULL);
    if (rc == 0) xo_context_destroy(ctx);
    return rc;
}

int xot_plugin_open(const xo_plugin *p, const xo_plugin_host *host, void **st)
{
    int ndev = 0;
    *st = NULL;
    return p->init(host, st, &ndev) == XO_OK && ndev > 0 ? 0 : -1;
}

int xot_plugin_skip_without(const xo_plugin *p, const xo_plugin_host *host, const char *what)
{
    void *st = NULL;
    if (xot_plugin_open(p, host, &st) != 0) {
        printf("no %s here: skipped\n", what);
        return XOT_EXIT_SKIP;
    }
    p->shutdown(st);
    return 0;
}
