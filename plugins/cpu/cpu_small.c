/* Small gemms (some of m, n, k tiny, few multiply-adds in all) without OpenBLAS: its
 * general path packs both operands into panels and dispatches through layers sized for
 * large products, which costs more than the product itself at the shapes of small
 * networks (16x3x100: 560 ns for 4800 multiply-adds).
 *
 * Every gemm becomes row-major first (a column-major C = A B is C^T = B^T A^T), then one
 * of three loops, written with 64-byte vectors (GCC/Clang vector extensions) so that each
 * instruction set's instantiation keeps them in its registers:
 *   - tiles (n >= XO_SMALL_ROWS_N): 4 rows x one vector of C accumulate a(i,p) * row p
 *     of B in registers over all of k; B is first copied upright and padded to whole
 *     vectors when it is transposed or n is not a multiple of the vector;
 *   - narrow rows (one row of C, n < 8 floats or <= 4 doubles, B upright): the row is the
 *     sum of B's rows scaled by a(0, p), one 32-byte vector per row of B;
 *   - dots (narrow C, long k): c(i,j) is a dot product along k of row i of A and column
 *     j of B (copied to be contiguous), summed lane by lane.
 * beta == 0 never reads C (NaN there stays out), as BLAS; alpha == 0 and k == 0 stay with
 * xo__cpu_scale_output / OpenBLAS (A and B are not read). */
#include "cpu_internal.h"

#include <pthread.h>

/* Narrower rows than this run as dot products. */
#define XO_SMALL_ROWS_N 8
/* Elements of scratch (copied operands), on the caller's stack: 16 KB in double. */
#define XO_SMALL_WORK 2048
/* Products with more multiply-adds than this go to OpenBLAS, whose blocked kernels win
 * there; see xo__cpu_small_gemm's figures. */
#define XO_SMALL_MAX_FMA ((size_t)1 << 15)
/* Elements of one 64-byte vector (an AVX-512 register; two AVX2 or four SSE registers):
 * the width of C's tiles and of the dot products' lanes. */
#define LANES(T) (64 / sizeof(T))
/* Elements of one 32-byte vector: C's rows up to this wide (and B upright) run as narrow
 * rows, one vector per row of B. */
#define NARROW(T) (32 / sizeof(T))

#define SMALL_LOOPS(T, SUF, ATTR)                                                                       \
    typedef T V_##SUF __attribute__((vector_size(64))); /* LANES elements */                            \
    typedef T N_##SUF __attribute__((vector_size(32))); /* NARROW elements */                           \
    /* nj elements of C's row at ci = alpha v + beta ci (beta == 0: ci not read) */                \
    ATTR static inline void put_##SUF(T *ci, V_##SUF v, size_t nj, T alpha, T beta)                     \
    {                                                                                                   \
        v *= alpha;                                                                                     \
        if (nj == LANES(T)) {                                                                           \
            if (beta != 0) {                                                                            \
                V_##SUF old;                                                                            \
                memcpy(&old, ci, sizeof old);                                                           \
                v += beta * old;                                                                        \
            }                                                                                           \
            memcpy(ci, &v, sizeof v);                                                                   \
        } else                                                                                          \
            for (size_t l = 0; l < nj; l++)                                                             \
                ci[l] = beta == 0 ? v[l] : v[l] + beta * ci[l];                                         \
    }                                                                                                   \
    ATTR static void small_##SUF(size_t m, size_t n, size_t k, T alpha, const T *a, size_t lda, int ta, \
                                 const T *b, size_t ldb, int tb, T beta, T *c, size_t ldc, T *w)        \
    {                                                                                                   \
        if (n >= XO_SMALL_ROWS_N) {                                                                     \
            /* B transposed: copied upright, its rows padded with zeros to whole vectors. Else the     \
             * columns of a last partial tile (from jt on) are, into a LANES-wide copy. */              \
            const size_t np = (n + LANES(T) - 1) / LANES(T) * LANES(T);                                 \
            const size_t jt = !tb && np != n ? n / LANES(T) * LANES(T) : n;                             \
            const T *bu = b;                                                                            \
            size_t ldu = ldb;                                                                           \
            if (jt < n)                                                                                 \
                for (size_t p = 0; p < k; p++)                                                          \
                    for (size_t l = 0; l < LANES(T); l++)                                               \
                        w[p * LANES(T) + l] = jt + l < n ? b[p * ldb + jt + l] : 0;                     \
            if (tb) {                                                                                   \
                for (size_t p = 0; p < k; p++) {                                                        \
                    T *restrict t = w + p * np;                                                         \
                    for (size_t j = 0; j < n; j++)                                                      \
                        t[j] = tb ? b[j * ldb + p] : b[p * ldb + j];                                    \
                    for (size_t j = n; j < np; j++)                                                     \
                        t[j] = 0;                                                                       \
                }                                                                                       \
                bu = w;                                                                                 \
                ldu = np;                                                                               \
            }                                                                                           \
            const size_t sr = ta ? 1 : lda, sp = ta ? lda : 1; /* a(i, p) = a[i sr + p sp] */            \
            for (size_t i0 = 0; i0 < m; i0 += 4) {                                                      \
                /* 4 rows of A; past the last row, the last row again (computed, not stored) */         \
                const size_t r0 = i0, r1 = i0 + 1 < m ? i0 + 1 : m - 1, r2 = i0 + 2 < m ? i0 + 2 : m - 1, \
                             r3 = i0 + 3 < m ? i0 + 3 : m - 1;                                          \
                for (size_t j0 = 0; j0 < n; j0 += LANES(T)) { /* a 4 x LANES(T) tile of C in registers */ \
                    const T *bt = j0 == jt ? w : bu + j0;                                               \
                    const size_t ldt = j0 == jt ? LANES(T) : ldu;                                       \
                    V_##SUF c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};                                     \
                    for (size_t p = 0; p < k; p++) {                                                    \
                        V_##SUF row;                                                                    \
                        memcpy(&row, bt + p * ldt, sizeof row);                                         \
                        c0 += a[r0 * sr + p * sp] * row;                           \
                        c1 += a[r1 * sr + p * sp] * row;                           \
                        c2 += a[r2 * sr + p * sp] * row;                           \
                        c3 += a[r3 * sr + p * sp] * row;                           \
                    }                                                                                   \
                    const size_t nj = n - j0 < LANES(T) ? n - j0 : LANES(T);                            \
                    T *ci = c + i0 * ldc + j0;                                                          \
                    put_##SUF(ci, c0, nj, alpha, beta);                                                 \
                    if (i0 + 1 < m)                                                                     \
                        put_##SUF(ci + ldc, c1, nj, alpha, beta);                                       \
                    if (i0 + 2 < m)                                                                     \
                        put_##SUF(ci + 2 * ldc, c2, nj, alpha, beta);                                   \
                    if (i0 + 3 < m)                                                                     \
                        put_##SUF(ci + 3 * ldc, c3, nj, alpha, beta);                                   \
                }                                                                                       \
            }                                                                                           \
            return;                                                                                     \
        }                                                                                               \
        if (m == 1 && !tb && n <= NARROW(T)) {                                                          \
            /* Narrow rows: row i of C is the sum over p of a(i, p) times row p of B, each row of B  \
             * one NARROW-wide vector (reading on into the next row; the lanes past n are never      \
             * stored), in four accumulators. The last rows, where that read would pass B's last    \
             * element, come from a zero-padded copy. */                                            \
            const size_t end = (k - 1) * ldb + n; /* B's elements: [0, end) */                      \
            size_t ps = end >= NARROW(T) ? (end - NARROW(T)) / ldb + 1 : 0;                         \
            ps = ps < k ? ps : k;                                                                   \
            for (size_t p = ps; p < k; p++)                                                         \
                for (size_t l = 0; l < NARROW(T); l++)                                              \
                    w[(p - ps) * NARROW(T) + l] = l < n ? b[p * ldb + l] : 0;                       \
            const size_t sr = ta ? 1 : lda, sp = ta ? lda : 1;                                      \
            for (size_t i = 0; i < m; i++) {                                                        \
                const T *ai = a + i * sr;                                                           \
                N_##SUF c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0}, r0, r1, r2, r3;                     \
                size_t p = 0;                                                                       \
                for (; p + 4 <= ps; p += 4) {                                                       \
                    memcpy(&r0, b + p * ldb, sizeof r0);                                            \
                    memcpy(&r1, b + (p + 1) * ldb, sizeof r1);                                      \
                    memcpy(&r2, b + (p + 2) * ldb, sizeof r2);                                      \
                    memcpy(&r3, b + (p + 3) * ldb, sizeof r3);                                      \
                    c0 += ai[p * sp] * r0;                                                          \
                    c1 += ai[(p + 1) * sp] * r1;                                                    \
                    c2 += ai[(p + 2) * sp] * r2;                                                    \
                    c3 += ai[(p + 3) * sp] * r3;                                                    \
                }                                                                                   \
                for (; p < k; p++) {                                                                \
                    memcpy(&r0, p < ps ? b + p * ldb : w + (p - ps) * NARROW(T), sizeof r0);        \
                    c0 += ai[p * sp] * r0;                                                          \
                }                                                                                   \
                c0 = (c0 + c1) + (c2 + c3);                                                         \
                T *ci = c + i * ldc;                                                                \
                for (size_t j = 0; j < n; j++)                                                      \
                    ci[j] = beta == 0 ? alpha * c0[j] : alpha * c0[j] + beta * ci[j];               \
            }                                                                                       \
            return;                                                                                 \
        }                                                                                           \
        /* Dots: rows of A and columns of B contiguous along k (copied when not). */                    \
        T *bt = w;                                                                                      \
        const T *bc = b;                                                                                \
        size_t ldbc = ldb;                                                                              \
        if (!tb) {                                                                                      \
            for (size_t j = 0; j < n; j++)                                                              \
                for (size_t p = 0; p < k; p++)                                                          \
                    bt[j * k + p] = b[p * ldb + j];                                                     \
            bc = bt;                                                                                    \
            ldbc = k;                                                                                   \
        }                                                                                               \
        const T *ar = a; /* rows of A contiguous: A not transposed, or m == 1 */                        \
        const size_t ldar = lda;                                                                        \
        const size_t astep = ta && m == 1 ? lda : 1; /* one row of A^T: a column, strided */            \
        for (size_t i = 0; i < m; i++) {                                                                \
            const T *restrict ai = ar + i * ldar;                                                       \
            for (size_t j = 0; j < n; j++) {                                                            \
                const T *restrict bj = bc + j * ldbc;                                                   \
                T lane[LANES(T)] = {0}, s = 0;                                                          \
                size_t p = 0;                                                                           \
                if (astep == 1)                                                                         \
                    for (; p + LANES(T) <= k; p += LANES(T))                                            \
                        for (size_t l = 0; l < LANES(T); l++)                                           \
                            lane[l] += ai[p + l] * bj[p + l];                                           \
                for (; p < k; p++)                                                                      \
                    s += ai[p * astep] * bj[p];                                                         \
                for (size_t l = 0; l < LANES(T); l++)                                                   \
                    s += lane[l];                                                                       \
                T *cij = c + i * ldc + j;                                                               \
                *cij = beta == 0 ? alpha * s : alpha * s + beta * *cij;                                 \
            }                                                                                           \
        }                                                                                               \
    }

XO_CPU_INSTANTIATE(SMALL_LOOPS)

typedef struct kernels {
    void (*f)(size_t, size_t, size_t, float, const float *, size_t, int, const float *, size_t, int, float,
              float *, size_t, float *);
    void (*d)(size_t, size_t, size_t, double, const double *, size_t, int, const double *, size_t, int, double,
              double *, size_t, double *);
} kernels;
#define TABLE(F, D) {small_##F, small_##D}

XO_CPU_KERNELS_SELECTED(kernels, TABLE)
static const kernels *kernels_(void) { return k(); } /* k is also a dimension below */

/* Scratch elements the loop above needs for a row-major m x n x k product. */
static size_t work_needed(size_t m, size_t n, size_t k, int ta, int tb, size_t lanes)
{
    if (n >= XO_SMALL_ROWS_N)
        return tb ? (n + lanes - 1) / lanes * lanes * k : n % lanes ? lanes * k : 0;
    (void)m, (void)ta;
    if (m == 1 && !tb && n <= lanes / 2) /* narrow rows: at most NARROW padded rows of NARROW */
        return lanes / 2 * (lanes / 2);
    return tb ? 0 : n * k;
}

int xo__cpu_small_gemm(xo_dtype dt, xo_layout layout, xo_transpose opa, xo_transpose opb, size_t m, size_t n,
                       size_t k, double alpha, const void *a, size_t lda, const void *b, size_t ldb, double beta,
                       void *c, size_t ldc)
{
    if (k == 0 || alpha == 0 || m * n * k > XO_SMALL_MAX_FMA || (m > 32 && n > 32 && k > 32))
        return 0; /* alpha == 0: A and B are not read (xo__cpu_scale_output) */
    int ta = opa == XO_TRANS, tb = opb == XO_TRANS;
    if (layout == XO_COL_MAJOR) { /* C^T = B^T A^T, row-major */
        size_t t = m;
        m = n;
        n = t;
        const void *p = a;
        a = b;
        b = p;
        t = lda;
        lda = ldb;
        ldb = t;
        int s = ta;
        ta = tb;
        tb = s;
    }
    /* Where the dots lose to OpenBLAS (xo_small_gemm, 2-core AMD EPYC, AVX-512): along
     * k < 32 (100x3x16: 1033 against 449 ns) or over rows of a transposed A (copying it
     * upright: 3378 against 442 ns). One row of C (a gemv) runs as narrow rows, which need
     * no copy of B: 1x3x100 59 ns against 126 as dots and 248 in OpenBLAS; from 16 rows
     * the dots win (16x3x100: 386 against 541 ns: each row's sum waits on its
     * multiply-adds). */
    const int narrow = m == 1 && !tb && n <= (dt == XO_F32 ? NARROW(float) : NARROW(double));
    if (n < XO_SMALL_ROWS_N && !narrow && (k < 32 || (ta && m > 1)))
        return 0;
    if (work_needed(m, n, k, ta, tb, dt == XO_F32 ? 16 : 8) > XO_SMALL_WORK)
        return 0;
    union {
        float f[XO_SMALL_WORK];
        double d[XO_SMALL_WORK];
    } w;
    if (dt == XO_F32)
        kernels_()->f(m, n, k, (float)alpha, a, lda, ta, b, ldb, tb, (float)beta, c, ldc, w.f);
    else
        kernels_()->d(m, n, k, alpha, a, lda, ta, b, ldb, tb, beta, c, ldc, w.d);
    return 1;
}

/* The plugin's gemm: these kernels where the product is small, else OpenBLAS's. */
xo_status xo__cpu_gemm_any(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    if (xo__cpu_small_gemm(op->dtype, op->layout, op->ta, op->tb, op->m, op->n, op->k, op->alpha, xo__cpu_ptr(op, 0),
                           op->ld[0], xo__cpu_ptr(op, 1), op->ld[1], op->beta, xo__cpu_ptr(op, 2), op->ld[2]))
        return XO_OK;
    return xo__cpu_gemm(host, pool, op);
}
