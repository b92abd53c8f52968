/* Built against the installed package: every op in both precisions on the CPU,
 * checked against plain loops. */
#include <crossover.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

static xo_context *ctx;

static int setup(void **state)
{
    (void)state;
    return xo_context_create(&ctx) == XO_OK && xo_set_device(ctx, "cpu") == XO_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    xo_context_destroy(ctx);
    return 0;
}

#define N 5
#define DEFINE_CHECK(P, T, TOL)                                                                                   \
    static xo_buffer *P##buf(const T *v, size_t n)                                                                \
    {                                                                                                             \
        xo_buffer *b = NULL;                                                                                      \
        assert_int_equal(xo_buffer_create(ctx, n * sizeof(T), &b), XO_OK);                                        \
        assert_int_equal(xo_buffer_write(b, 0, v, n * sizeof(T)), XO_OK);                                         \
        return b;                                                                                                 \
    }                                                                                                             \
    static void P##expect(xo_buffer *b, const T *want, size_t n)                                                  \
    {                                                                                                             \
        T got[N * N];                                                                                             \
        assert_int_equal(xo_buffer_read(b, 0, got, n * sizeof(T)), XO_OK);                                       \
        for (size_t i = 0; i < n; i++)                                                                            \
            assert_true(fabs((double)got[i] - (double)want[i]) <= TOL * (1 + fabs((double)want[i])));             \
    }                                                                                                             \
    static void P##ops(void **state)                                                                              \
    {                                                                                                             \
        (void)state;                                                                                              \
        T a[N * N], x[N], y[N], want[N * N], c0[N * N] = {0};                                                     \
        for (int i = 0; i < N * N; i++) a[i] = (T)((i * 7 % 11) - 5) / 4;                                         \
        for (int i = 0; i < N; i++) { x[i] = (T)(i + 1) / 3; y[i] = (T)(2 - i) / 5; }                             \
        xo_buffer *A = P##buf(a, N * N), *X = P##buf(x, N), *Y = P##buf(y, N), *C = P##buf(c0, N * N);           \
        /* gemm: C = A * A */                                                                                     \
        assert_int_equal(xo_##P##gemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, N, N, N, 1, A, 0, N, A, 0, N, \
                                      0, C, 0, N), XO_OK);                                                        \
        for (int i = 0; i < N; i++)                                                                               \
            for (int j = 0; j < N; j++) {                                                                         \
                T s = 0;                                                                                          \
                for (int k = 0; k < N; k++) s += a[i * N + k] * a[k * N + j];                                     \
                want[i * N + j] = s;                                                                              \
            }                                                                                                     \
        P##expect(C, want, N * N);                                                                                \
        /* gemv: Y = A x + 0.5 y */                                                                               \
        assert_int_equal(xo_##P##gemv(ctx, XO_ROW_MAJOR, XO_NO_TRANS, N, N, 1, A, 0, N, X, 0, 1, 0.5, Y, 0, 1),   \
                         XO_OK);                                                                                  \
        for (int i = 0; i < N; i++) {                                                                             \
            T s = 0;                                                                                              \
            for (int k = 0; k < N; k++) s += a[i * N + k] * x[k];                                                 \
            y[i] = s + (T)0.5 * y[i];                                                                             \
        }                                                                                                         \
        P##expect(Y, y, N);                                                                                       \
        /* axpy, scal */                                                                                          \
        assert_int_equal(xo_##P##axpy(ctx, N, 2, X, 0, 1, Y, 0, 1), XO_OK);                                       \
        for (int i = 0; i < N; i++) y[i] += 2 * x[i];                                                             \
        P##expect(Y, y, N);                                                                                       \
        assert_int_equal(xo_##P##scal(ctx, N, -3, Y, 0, 1), XO_OK);                                               \
        for (int i = 0; i < N; i++) y[i] *= -3;                                                                   \
        P##expect(Y, y, N);                                                                                       \
        /* dot and nrm2 into C[0], C[1] */                                                                        \
        assert_int_equal(xo_##P##dot(ctx, N, X, 0, 1, Y, 0, 1, C, 0), XO_OK);                                     \
        assert_int_equal(xo_##P##nrm2(ctx, N, X, 0, 1, C, 1), XO_OK);                                             \
        T d = 0, q = 0;                                                                                           \
        for (int i = 0; i < N; i++) { d += x[i] * y[i]; q += x[i] * x[i]; }                                       \
        T r2[2] = {d, (T)sqrt((double)q)};                                                                        \
        P##expect(C, r2, 2);                                                                                      \
        /* unary tanh in place, binary mul, bias, reduce */                                                       \
        assert_int_equal(xo_##P##unary(ctx, XO_TANH, N, X, 0, X, 0), XO_OK);                                      \
        for (int i = 0; i < N; i++) x[i] = (T)tanh((double)x[i]);                                                 \
        P##expect(X, x, N);                                                                                       \
        assert_int_equal(xo_##P##binary(ctx, XO_MUL, N, X, 0, Y, 0, Y, 0), XO_OK);                                \
        for (int i = 0; i < N; i++) y[i] *= x[i];                                                                 \
        P##expect(Y, y, N);                                                                                       \
        assert_int_equal(xo_##P##bias(ctx, N, N, A, 0, N, X, 0), XO_OK);                                          \
        for (int i = 0; i < N * N; i++) a[i] += x[i % N];                                                         \
        P##expect(A, a, N * N);                                                                                   \
        assert_int_equal(xo_##P##reduce(ctx, XO_SUM, N * N, A, 0, C, 2), XO_OK);                                  \
        T s = 0, got = 0;                                                                                         \
        for (int i = 0; i < N * N; i++) s += a[i];                                                                \
        assert_int_equal(xo_buffer_read(C, 2 * sizeof(T), &got, sizeof got), XO_OK);                             \
        assert_true(fabs((double)(got - s)) <= TOL * (1 + fabs((double)s)));                                      \
        xo_buffer_destroy(A); xo_buffer_destroy(X); xo_buffer_destroy(Y); xo_buffer_destroy(C);                   \
    }
DEFINE_CHECK(s, float, 1e-4)
DEFINE_CHECK(d, double, 1e-10)

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(sops), cmocka_unit_test(dops)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
