/* Small gemms (some of m, n, k tiny, few multiply-adds in all) without OpenBLAS: its
 * general path packs both operands into panels and dispatches through layers sized for
 * large products, which costs more than the product itself at the shapes of small
 * networks (16x3x100: 560 ns for 4800 multiply-adds).
 *
 * Every gemm becomes row-major first (a column-major C = A B is C^T = B^T A^T), then one
 * of these loops (chosen by xo__cpu_small_resolve, run by xo__cpu_small_run: eager calls
 * take both steps, a plan's step only the second, the first done when it was placed),
 * written with 64-byte vectors (GCC/Clang vector extensions) so that each
 * instruction set's instantiation keeps them in its registers; a last partial vector is
 * read and written with masks (AVX-512; a loop elsewhere):
 *   - one row of C (m = 1: a batch-1 layer, or a gemv y = A^T x as the row x^T A), up to
 *     8 vectors wide (4 with AVX2, 2 at baseline), B upright, any k: in row_, every vector
 *     of the row an accumulator and k outer;
 *   - wide C (n >= XO_SMALL_ROWS_N), B upright (copied so when transposed): with k <= 4,
 *     up to 4 vectors of B's rows held in registers and C's rows one after the other
 *     (libxsmm's order), in shortk_ (its own function, called from the entry point:
 *     inlined into small_ it slowed 16x3x100 by a quarter), whose blocks have constant
 *     vector counts and a layer's epilogue inline (EPI_BIAS); longer k, tiles of 8 rows x 2
 *     vectors of C (AVX-512; 4 rows elsewhere) accumulate a(i, p) * row p of B over all of
 *     k, in tiled_ (its own function, called from the entry point);
 *   - narrow rows (one row of C, n < 8 floats or <= 4 doubles, B upright): the row is the
 *     sum of B's rows scaled by a(0, p), one 32-byte vector per row of B;
 *   - columns (narrow C, A transposed): one vector down 16 rows (8 in double) of each
 *     column of C, A's row p times b(p, j) broadcast; with C dense, its columns interleaved
 *     into whole vectors of it as the transposed blocks do (colsout_: 100x3x16 T N, kernel
 *     alone, 158 ns against 223 element by element);
 *   - transposed blocks (n <= 4, rows of A contiguous, k <= 16 floats or 8 doubles, at least
 *     16 (8) rows; AVX-512): 16 rows (8) of A transposed in registers, then the columns
 *     kernel's multiply-adds, and with C dense its columns interleaved by shuffles into whole
 *     vectors of it (longer k: dots, whose reduction is per column of C, not per element of A);
 *   - dots (narrow C, rows of A contiguous): 16 rows (8) x one column of C are dot
 *     products along k of rows of A and a column of B (copied to be contiguous when B is
 *     upright), reduced together into one vector down the column; the last rows by 4.
 * Each result vector gets its epilogue before it is stored, while it is in registers:
 * alpha, beta C, gemm_bias_act's bias and activation (the formulas of xo_formulas.h;
 * cpu_fused.c sends the bias with every small product, the activation only with one-line
 * ones, where that pays).
 * beta == 0 never reads C (NaN there stays out), as BLAS; alpha == 0 and k == 0 stay with
 * xo__cpu_scale_output / OpenBLAS (A and B are not read). Kernel alone against libxsmm
 * 1.17's JIT kernels: docs/bench.md, "Small products". With AVX-512, medium products whose
 * B stays in L2 (or whose C does, B then taken in blocks of k) run through the same tiles,
 * C split over the pool by its columns (A small) or rows, gemm_bias_act's epilogue in
 * registers, a transposed B copied upright first (xo__cpu_tiled_gemm, below; docs/bench.md,
 * "Issue 30, seventh pass" to "ninth pass"). */
#include "cpu_internal.h"
#include "../common/xo_formulas.h"

#include <pthread.h>
#include <stdlib.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

/* Narrower rows than this run as dot products. */
#define XO_SMALL_ROWS_N 8
/* Elements of scratch (copied operands), on the caller's stack: 16 KB in double. */
#define XO_SMALL_WORK 2048
/* Products with more multiply-adds than this go to xo__cpu_tiled_gemm (AVX-512, B in L2)
 * or OpenBLAS, whose blocked kernels win there. */
#define XO_SMALL_MAX_FMA ((size_t)1 << 15)
/* Elements of one 64-byte vector (an AVX-512 register; two AVX2 or four SSE registers):
 * the width of C's tiles and of the dot products' lanes. */
#define LANES(T) (64 / sizeof(T))
/* Elements of one 32-byte vector: C's rows up to this wide (and B upright) run as narrow
 * rows, one vector per row of B. */
#define NARROW(T) (32 / sizeof(T))

/* The helpers below take and return 64-byte vectors; always inlined, so no vector crosses
 * a call and the compilers' note on their ABI without AVX-512 (the baseline and AVX2
 * instantiations) does not apply. */
#define XO_INLINE __attribute__((always_inline))
#if defined(__GNUC__) /* Clang too */
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

/* The first nj < LANES elements at p into a vector (the rest 0), and back: one masked
 * instruction with AVX-512 (masked-off lanes are neither read nor written), a loop
 * elsewhere. MASKED_##SUF picks the one for an instantiation. */
#define MASKED_LOOP(T, SUF, ATTR)                                                                       \
    XO_INLINE ATTR static inline V_##SUF ldm_##SUF(const T *p, size_t nj)                                         \
    {                                                                                                   \
        V_##SUF v = {0};                                                                                \
        for (size_t l = 0; l < nj; l++)                                                                 \
            v[l] = p[l];                                                                                \
        return v;                                                                                       \
    }                                                                                                   \
    XO_INLINE ATTR static inline void stm_##SUF(T *p, V_##SUF v, size_t nj)                                       \
    {                                                                                                   \
        for (size_t l = 0; l < nj; l++)                                                                 \
            p[l] = v[l];                                                                                \
    }
#define MASKED_f MASKED_LOOP
#define MASKED_d MASKED_LOOP
#define MASKED_f_avx2 MASKED_LOOP
#define MASKED_d_avx2 MASKED_LOOP
#define MASKED_AVX512(T, SUF, ATTR, MASK, PS)                                                           \
    XO_INLINE ATTR static inline V_##SUF ldm_##SUF(const T *p, size_t nj)                                         \
    {                                                                                                   \
        return (V_##SUF)_mm512_maskz_loadu_##PS((MASK)((1u << nj) - 1), p);                            \
    }                                                                                                   \
    XO_INLINE ATTR static inline void stm_##SUF(T *p, V_##SUF v, size_t nj)                                       \
    {                                                                                                   \
        _mm512_mask_storeu_##PS(p, (MASK)((1u << nj) - 1), v);                                          \
    }
#define MASKED_f_avx512(T, SUF, ATTR) MASKED_AVX512(T, SUF, ATTR, __mmask16, ps)
#define MASKED_d_avx512(T, SUF, ATTR) MASKED_AVX512(T, SUF, ATTR, __mmask8, pd)

/* Shuffles within one vector (16 floats or 8 doubles), in registers (4-lane vectors
 * widened back go through memory, and the load stalls on the store's forwarding): HI8
 * and HI4 move lanes 8-15 and 4-7 to the front; P01 (a, b) = {a0, b0, a1, b1}, P23 =
 * {a2, b2, a3, b3}, L01 = {a0, a1, b0, b1}, L23 = {a2, a3, b2, b3}; the lanes past the
 * fourth are don't-care (0). */
#define SH16(a, b, i0, i1, i2, i3, i4, i5, i6, i7)                                                      \
    __builtin_shufflevector(a, b, i0, i1, i2, i3, i4, i5, i6, i7, 0, 0, 0, 0, 0, 0, 0, 0)
#define SH8(a, b, i0, i1, i2, i3) __builtin_shufflevector(a, b, i0, i1, i2, i3, 0, 0, 0, 0)
#define HI8_16(v) SH16(v, v, 8, 9, 10, 11, 12, 13, 14, 15)
#define HI4_16(v) SH16(v, v, 4, 5, 6, 7, 0, 0, 0, 0)
#define P01_16(a, b) SH16(a, b, 0, 16, 1, 17, 0, 0, 0, 0)
#define P23_16(a, b) SH16(a, b, 2, 18, 3, 19, 0, 0, 0, 0)
#define L01_16(a, b) SH16(a, b, 0, 1, 16, 17, 0, 0, 0, 0)
#define L23_16(a, b) SH16(a, b, 2, 3, 18, 19, 0, 0, 0, 0)
#define HI8_8(v) (v) /* 8 lanes: only HI4 */
#define HI4_8(v) SH8(v, v, 4, 5, 6, 7)
#define P01_8(a, b) SH8(a, b, 0, 8, 1, 9)
#define P23_8(a, b) SH8(a, b, 2, 10, 3, 11)
#define L01_8(a, b) SH8(a, b, 0, 1, 8, 9)
#define L23_8(a, b) SH8(a, b, 2, 3, 10, 11)
/* v's lanes folded to the first 4 (their sums are v's sum) */
#define FOLD_16(v) ((v) += HI8_16(v), (v) += HI4_16(v))
#define FOLD_8(v) ((v) += HI4_8(v))
/* 16 (8) vectors v[r] to one whose lane r is the sum of v[r]'s lanes: pairs merged at
 * blocks of 1, 2, 4 (and 8) lanes, each merge two shuffles and an add (the transposing
 * reduction: 45 operations for 16 sums where one vector at a time takes 6-8 each). */
#define MERGE16(a, b, ...) (__builtin_shufflevector(a, b, __VA_ARGS__))
#define RED16(v)                                                                                        \
    do {                                                                                                \
        UNROLL for (int q = 0; q < 8; q++)                                                                   \
            v[q] = MERGE16(v[2 * q], v[2 * q + 1], 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30) + \
                   MERGE16(v[2 * q], v[2 * q + 1], 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31); \
        UNROLL for (int q = 0; q < 4; q++)                                                              \
            v[q] = MERGE16(v[2 * q], v[2 * q + 1], 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29) + \
                   MERGE16(v[2 * q], v[2 * q + 1], 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31); \
        UNROLL for (int q = 0; q < 2; q++)                                                              \
            v[q] = MERGE16(v[2 * q], v[2 * q + 1], 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27) + \
                   MERGE16(v[2 * q], v[2 * q + 1], 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31); \
        v[0] = MERGE16(v[0], v[1], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +            \
               MERGE16(v[0], v[1], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);       \
    } while (0)
#define RED8(v)                                                                                         \
    do {                                                                                                \
        UNROLL for (int q = 0; q < 4; q++)                                                              \
            v[q] = MERGE16(v[2 * q], v[2 * q + 1], 0, 8, 2, 10, 4, 12, 6, 14) +                         \
                   MERGE16(v[2 * q], v[2 * q + 1], 1, 9, 3, 11, 5, 13, 7, 15);                          \
        UNROLL for (int q = 0; q < 2; q++)                                                              \
            v[q] = MERGE16(v[2 * q], v[2 * q + 1], 0, 1, 8, 9, 4, 5, 12, 13) +                          \
                   MERGE16(v[2 * q], v[2 * q + 1], 2, 3, 10, 11, 6, 7, 14, 15);                         \
        v[0] = MERGE16(v[0], v[1], 0, 1, 2, 3, 8, 9, 10, 11) + MERGE16(v[0], v[1], 4, 5, 6, 7, 12, 13, 14, 15); \
    } while (0)
#define UNROLL _Pragma("GCC unroll 16")
#define UNROLL4 _Pragma("GCC unroll 4")
#define UNROLL8 _Pragma("GCC unroll 8")
#define RED_16 RED16
#define RED_8 RED8
#define LANES_f 16
#define LANES_f_avx2 16
#define LANES_f_avx512 16
#define LANES_d 8
#define LANES_d_avx2 8
#define LANES_d_avx512 8
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

/* Packed rows (one row of C, n < 8 floats or <= 4 doubles, B's rows contiguous: ldb == n,
 * A's row contiguous; AVX-512): B's elements are read as they lie, r = LANES / n whole
 * rows per vector, against a vector of a(0, p..p+r) each repeated n times (one shuffle),
 * so a 1x3x100 product is 20 multiply-adds of full vectors where narrow rows take 100 of
 * 3 useful lanes; lane q n + j of the sum then holds part of c(0, j). XI(l, n, L): the
 * lane of a's vector that lane l takes (L: the zero vector's first lane, for the lanes
 * past r n). Measured: docs/bench.md, "Small products". */
#define XI(l, n, L) ((l) < (L) / (n) * (n) ? (l) / (n) : (L))
#define XSH_16(v, z, n)                                                                                 \
    __builtin_shufflevector(v, z, XI(0, n, 16), XI(1, n, 16), XI(2, n, 16), XI(3, n, 16), XI(4, n, 16),   \
                            XI(5, n, 16), XI(6, n, 16), XI(7, n, 16), XI(8, n, 16), XI(9, n, 16),         \
                            XI(10, n, 16), XI(11, n, 16), XI(12, n, 16), XI(13, n, 16), XI(14, n, 16),    \
                            XI(15, n, 16))
#define XSH_8(v, z, n)                                                                                  \
    __builtin_shufflevector(v, z, XI(0, n, 8), XI(1, n, 8), XI(2, n, 8), XI(3, n, 8), XI(4, n, 8),        \
                            XI(5, n, 8), XI(6, n, 8), XI(7, n, 8))
#define PACKED_f 0
#define PACKED_d 0
#define PACKED_f_avx2 0
#define PACKED_d_avx2 0
#define PACKED_f_avx512 1 /* masked loads: the lanes past the rows read are not read */
#define PACKED_d_avx512 1
/* t_'s lanes from s on, then zeros (lane l = t_[l + s]; s a constant), added to out where
 * q < r_ (lane j of out then holds c(0, j) for j < NN; the lanes past NN are not stored) */
#define DOWN(l, s, L) ((l) + (s) < (L) ? (l) + (s) : (L))
#define DOWN_16(v, z, s)                                                                                \
    __builtin_shufflevector(v, z, DOWN(0, s, 16), DOWN(1, s, 16), DOWN(2, s, 16), DOWN(3, s, 16),       \
                            DOWN(4, s, 16), DOWN(5, s, 16), DOWN(6, s, 16), DOWN(7, s, 16), DOWN(8, s, 16), \
                            DOWN(9, s, 16), DOWN(10, s, 16), DOWN(11, s, 16), DOWN(12, s, 16),          \
                            DOWN(13, s, 16), DOWN(14, s, 16), DOWN(15, s, 16))
#define DOWN_8(v, z, s)                                                                                 \
    __builtin_shufflevector(v, z, DOWN(0, s, 8), DOWN(1, s, 8), DOWN(2, s, 8), DOWN(3, s, 8), DOWN(4, s, 8), \
                            DOWN(5, s, 8), DOWN(6, s, 8), DOWN(7, s, 8))
#define PACKED_DOWN(SUF, NN, q, out)                                                                       \
    if ((q) < r_)                                                                                       \
        out += CAT(DOWN_, LANES_##SUF)(t_, z_, (q) * (NN));
/* out = c(0, 0..NN) of the packed-rows product with n = NN (a constant), from a, b, k */
#define PACKED_ROWS(T, SUF, NN, out)                                                                    \
    do {                                                                                                \
        const size_t r_ = LANES(T) / (NN), used_ = r_ * (NN);                                           \
        const V_##SUF z_ = {0};                                                                         \
        V_##SUF s_[4] = {z_, z_, z_, z_}, x_, b_;                                                       \
        size_t p_ = 0;                                                                                  \
        for (; p_ + 4 * r_ <= k; p_ += 4 * r_)                                                          \
            UNROLL4 for (size_t u_ = 0; u_ < 4; u_++) {                                                 \
                const size_t q_ = p_ + u_ * r_;                                                         \
                if (k - q_ >= LANES(T))                                                                 \
                    memcpy(&x_, a + q_, sizeof x_);                                                     \
                else                                                                                    \
                    x_ = ldm_##SUF(a + q_, k - q_);                                                     \
                b_ = ldm_##SUF(b + q_ * (NN), used_);                                                   \
                s_[u_] += CAT(XSH_, LANES_##SUF)(x_, z_, NN) * b_;                                      \
            }                                                                                           \
        for (; p_ < k; p_ += r_) { /* the last rows: fewer than 4 r, into one sum (an index unknown \
                                      * to the compiler put the sums in memory) */                  \
            const size_t rows_ = k - p_ < r_ ? k - p_ : r_;                                             \
            x_ = ldm_##SUF(a + p_, rows_);                                                              \
            b_ = ldm_##SUF(b + p_ * (NN), rows_ * (NN));                                                \
            s_[0] += CAT(XSH_, LANES_##SUF)(x_, z_, NN) * b_;                                           \
        }                                                                                               \
        const V_##SUF t_ = (s_[0] + s_[1]) + (s_[2] + s_[3]);                                           \
        out = t_; /* + t_'s lanes from q NN on, for q = 1 .. r - 1, in registers */                     \
        PACKED_DOWN(SUF, NN, 1, out) PACKED_DOWN(SUF, NN, 2, out) PACKED_DOWN(SUF, NN, 3, out) PACKED_DOWN(SUF, NN, 4, out)  \
        PACKED_DOWN(SUF, NN, 5, out) PACKED_DOWN(SUF, NN, 6, out) PACKED_DOWN(SUF, NN, 7, out) PACKED_DOWN(SUF, NN, 8, out)  \
        PACKED_DOWN(SUF, NN, 9, out) PACKED_DOWN(SUF, NN, 10, out) PACKED_DOWN(SUF, NN, 11, out)                       \
        PACKED_DOWN(SUF, NN, 12, out) PACKED_DOWN(SUF, NN, 13, out) PACKED_DOWN(SUF, NN, 14, out)                      \
        PACKED_DOWN(SUF, NN, 15, out)                                                                        \
    } while (0)

/* Transposed blocks (narrow C, n <= 4, k <= LANES, rows of A contiguous; AVX-512): LANES rows
 * of A loaded and transposed in registers (log2 LANES stages of two-source shuffles, shared by
 * every column of C), then one vector down each column of C, A's column p times b(p, j)
 * broadcast, as the columns kernel does; with ldc == n the block of C is contiguous, and its
 * n column vectors are interleaved by shuffles into n whole vectors of it, stored as they lie.
 * The dots above reduce per column of C instead (RED16: 45 operations per column) and store C
 * element by element. SHF_L (a, b, M, x, y): the shuffle of a and b whose lane l is
 * M(l, x, y, L). TLO, THI: a transposing stage at distance d; ILV1-3: lane l of the q-th vector
 * of a contiguous block of C with n columns, from columns 0 and 1, then 2, then 3. */
#define TLO(l, d, y, L) (((l) & (d)) ? (L) + (l) - (d) : (l))
#define THI(l, d, y, L) (((l) & (d)) ? (L) + (l) : (l) + (d))
#define ILF(l, q, L) ((q) * (L) + (l)) /* the lane's index in the block */
#define ILV1(l, q, n, L)                                                                                \
    (ILF(l, q, L) % (n) == 0 ? ILF(l, q, L) / (n) : ILF(l, q, L) % (n) == 1 ? (L) + ILF(l, q, L) / (n) : 0)
#define ILV2(l, q, n, L) (ILF(l, q, L) % (n) == 2 ? (L) + ILF(l, q, L) / (n) : (l))
#define ILV3(l, q, n, L) (ILF(l, q, L) % (n) == 3 ? (L) + ILF(l, q, L) / (n) : (l))
#define SHF_16(a, b, M, x, y)                                                                           \
    __builtin_shufflevector(a, b, M(0, x, y, 16), M(1, x, y, 16), M(2, x, y, 16), M(3, x, y, 16),       \
                            M(4, x, y, 16), M(5, x, y, 16), M(6, x, y, 16), M(7, x, y, 16), M(8, x, y, 16), \
                            M(9, x, y, 16), M(10, x, y, 16), M(11, x, y, 16), M(12, x, y, 16),          \
                            M(13, x, y, 16), M(14, x, y, 16), M(15, x, y, 16))
#define SHF_8(a, b, M, x, y)                                                                            \
    __builtin_shufflevector(a, b, M(0, x, y, 8), M(1, x, y, 8), M(2, x, y, 8), M(3, x, y, 8), M(4, x, y, 8), \
                            M(5, x, y, 8), M(6, x, y, 8), M(7, x, y, 8))
/* The q-th vector of a contiguous block of C with 2, 3 or 4 columns, from the column
 * vectors s[0..n) (in scope; q a constant) */
#define ILV_2(SUF, q) CAT(SHF_, LANES_##SUF)(s[0], s[1], ILV1, q, 2)
#define ILV_3(SUF, q) CAT(SHF_, LANES_##SUF)(CAT(SHF_, LANES_##SUF)(s[0], s[1], ILV1, q, 3), s[2], ILV2, q, 3)
#define ILV_4(SUF, q)                                                                                   \
    CAT(SHF_, LANES_##SUF)(CAT(SHF_, LANES_##SUF)(CAT(SHF_, LANES_##SUF)(s[0], s[1], ILV1, q, 4), s[2], ILV2, q, 4), \
                           s[3], ILV3, q, 4)
/* One transposing stage at distance D on x[0..LANES) (lo, hi in scope) */
#define TSTAGE(SUF, D)                                                                                  \
    UNROLL for (size_t r = 0; r < LANES_##SUF; r++) if (!(r & (D))) {                                   \
        lo = CAT(SHF_, LANES_##SUF)(x[r], x[(r + (D)) % LANES_##SUF], TLO, D, 0);                       \
        hi = CAT(SHF_, LANES_##SUF)(x[r], x[(r + (D)) % LANES_##SUF], THI, D, 0);                       \
        x[r] = lo;                                                                                      \
        x[(r + (D)) % LANES_##SUF] = hi;                                                                \
    }
#define TRANSP_f 0
#define TRANSP_d 0
#define TRANSP_f_avx2 0 /* 16 rows of 2 registers each: more than AVX2's 16 */
#define TRANSP_d_avx2 0
#define TRANSP_f_avx512 1
#define TRANSP_d_avx512 1
/* One row of C up to ROWV vectors wide as row_'s accumulators: 8 AVX-512 registers, 4
 * vectors in 8 of AVX2's 16 registers, 2 in 8 of SSE's 16. */
#define ROWV_f 2
#define ROWV_d 2
#define ROWV_f_avx2 4
#define ROWV_d_avx2 4
#define ROWV_f_avx512 8
#define ROWV_d_avx512 8
/* C's rows per tile (tiles_: TMR x 2 vectors of accumulators): 8 in AVX-512's 32 registers,
 * 4 elsewhere (4 x 2 vectors fill AVX2's 16 registers). */
#define TMR_f 4
#define TMR_d 4
#define TMR_f_avx2 4
#define TMR_d_avx2 4
#define TMR_f_avx512 8
#define TMR_d_avx512 8

/* A float vector's tanh: AVX-512's own (xo__cpu_tanhf16, cpu_internal.h), else vtanhf_ below. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VTANH_f_avx512(v) ((V_f_avx512)xo__cpu_tanhf16((__m512)(v)))
#define VTANH_d_avx512(v) vtanhf_d_avx512(v)
#define VTANH_f_avx2(v) vtanhf_f_avx2(v)
#define VTANH_d_avx2(v) vtanhf_d_avx2(v)
#endif
#define VTANH_f(v) vtanhf_f(v)
#define VTANH_d(v) vtanhf_d(v)

/* The epilogue a loop applies to C's vectors (EPI, a constant where inlined): */
#define EPI_ANY 0  /* alpha, beta, bias by row or column, activation (put_) */
#define EPI_NONE 1 /* alpha 1, beta 0, no bias, no activation: stored as they are */
#define EPI_BIAS 2 /* alpha 1, beta 0, bias by column or none, an INLINE_ACT: a network's layer */
#define EPI_BIASV 3 /* EPI_BIAS in the tiles: a float tanh as vtanhf_ (not in the row kernel: the \
                       batch-1 evaluation's plan 4-5 ns slower with it, xo bench --eval1) */
#define INLINE_ACT(act) ((act) == XO_IDENTITY || (act) == XO_TANH || (act) == XO_RELU)
/* The epilogue a product's operands ask for. */
static inline int epi_of(double alpha, double beta, const void *bias, int by_row, int act)
{
    if (alpha != 1 || beta != 0 || (bias && by_row) || !INLINE_ACT(act))
        return EPI_ANY;
    return bias || act != XO_IDENTITY ? EPI_BIAS : EPI_NONE;
}
/* A dense matrix of `rows` rows of W elements transposed (dst: W rows of `rows`), W a constant,
 * so that the compiler loads whole vectors of src and shuffles its columns out of them; the
 * copies of a narrow dense B (xo_small_gemm, 2-core Zen 4, resolved: the dots' columns of an
 * upright B, 16x3x100 269-271 -> 211 ns, OpenBLAS 233; a transposed B with k <= 4 copied
 * upright for wide C, 16x100x3 N T 215 -> 122, OpenBLAS 367). NARROW_T: width 1-4 as W
 * (done = 1), else nothing (done = 0). */
#define TRANSPOSE_W(W, rows, src, dst)                                                                  \
    do {                                                                                                \
        _Pragma("GCC ivdep") for (size_t r_ = 0; r_ < (rows); r_++)                                     \
            for (size_t q_ = 0; q_ < (W); q_++)                                                         \
                (dst)[q_ * (rows) + r_] = (src)[r_ * (W) + q_];                                         \
    } while (0)
#define NARROW_T(width, rows, src, dst, done)                                                             \
    switch (width) {                                                                                    \
    case 1: TRANSPOSE_W(1, rows, src, dst); done = 1; break;                                            \
    case 2: TRANSPOSE_W(2, rows, src, dst); done = 1; break;                                            \
    case 3: TRANSPOSE_W(3, rows, src, dst); done = 1; break;                                            \
    case 4: TRANSPOSE_W(4, rows, src, dst); done = 1; break;                                            \
    default: done = 0;                                                                                  \
    }
/* row_'s function for the epilogue E (EPI_x) and NV vectors (up to the instantiation's ROWV),
 * picked when the call is resolved: the epilogue and the vector count constants, no dispatch
 * at run time (xo_small_gemm's resolved 1x100x3 on a 2-core Zen 4, against a switch over both in
 * one function: 10.3-11.2 -> 9.0-9.6 ns; libxsmm 1.17's JIT kernel 9.2-9.5) */
#define ROW_NV(T, SUF, ATTR, NAME, E, NV)                                                               \
    __attribute__((noinline)) ATTR static void row_##NAME##NV##_##SUF(const xo__cpu_small_call *s, const void *a, \
                                                                      const void *b, void *c, const void *bias) \
    {                                                                                                   \
        rowe_##SUF(E, NV < ROWV_##SUF ? NV : ROWV_##SUF, (s->n - 1) % LANES(T) + 1, s->k, (T)s->alpha, a, s->sp, b, \
                   s->ldb, (T)s->beta, c, bias, s->by_row, s->act);                                     \
    }
#define ROW_EPI(T, SUF, ATTR, NAME, E)                                                                  \
    ROW_NV(T, SUF, ATTR, NAME, E, 1) ROW_NV(T, SUF, ATTR, NAME, E, 2) ROW_NV(T, SUF, ATTR, NAME, E, 3)    \
    ROW_NV(T, SUF, ATTR, NAME, E, 4) ROW_NV(T, SUF, ATTR, NAME, E, 5) ROW_NV(T, SUF, ATTR, NAME, E, 6)    \
    ROW_NV(T, SUF, ATTR, NAME, E, 7) ROW_NV(T, SUF, ATTR, NAME, E, 8)
/* those functions for one epilogue, in the table's order */
#define ROW_LIST(NAME, SUF)                                                                             \
    {row_##NAME##1_##SUF, row_##NAME##2_##SUF, row_##NAME##3_##SUF, row_##NAME##4_##SUF,                 \
     row_##NAME##5_##SUF, row_##NAME##6_##SUF, row_##NAME##7_##SUF, row_##NAME##8_##SUF}
/* small_'s case for bstat_##SUF with K = kk, EPI = e (the operands in scope) */
#define BSTAT_CASE(SUF, kk, e)                                                                          \
    case kk * 3 + e:                                                                                    \
        bstat_##SUF(kk, e, m, n, alpha, a, sr, sp, bu, ldu, beta, c, ldc, bias, by_row, act);           \
        break;

/* One case per row of the op map (crossover.h), over the lanes of t. */
#define ACT_CASE_(NAME, ...)                                                                            \
    case XO_##NAME:                                                                                     \
        for (size_t l = 0; l < 64 / sizeof *t; l++)                                                     \
            t[l] = XO_F_##NAME(t[l]);                                                                   \
        break;

#define SMALL_LOOPS(T, SUF, ATTR)                                                                       \
    typedef T V_##SUF __attribute__((vector_size(64))); /* LANES elements */                            \
    typedef T N_##SUF __attribute__((vector_size(32))); /* NARROW elements */                           \
    MASKED_##SUF(T, SUF, ATTR)                                                                          \
    /* the activation op on each of t's LANES elements */                                             \
    ATTR static void act_##SUF(T *t, int op)                                                            \
    {                                                                                                   \
        typedef T xo_real __attribute__((unused)); /* the element type of xo_formulas.h */           \
        switch (op) { XO_UNARY_OP_MAP(ACT_CASE_) }                                                      \
    }                                                                                                   \
    /* act(v) through act_: a vector in and out of the lanes act_ takes */                              \
    XO_INLINE ATTR static inline V_##SUF actv_##SUF(V_##SUF v, int act)                                 \
    {                                                                                                   \
        T t[LANES(T)];                                                                                  \
        memcpy(t, &v, sizeof t);                                                                        \
        act_##SUF(t, act);                                                                              \
        memcpy(&v, t, sizeof t);                                                                        \
        return v;                                                                                       \
    }                                                                                                   \
    /* act(v), lane by lane, for the activations INLINE_ACT takes (tanh, relu: networks' hidden     \
     * layers; identity for the others), inline (EPI_BIAS), so that the vectors of a row overlap and \
     * no call makes the loops around spill their registers. Measured with the kernel alone:        \
     * 1x100x3 with bias and tanh 78 ns through act_, 50 ns so. */                                    \
    /* xo__cpu_tanhf (cpu_internal.h) on a whole vector, the same formula (XO_TANHF_*): GCC         \
     * left that function's selects lane by lane where a tile's epilogue inlines it (bias and tanh \
     * over a 10000x256 C: 1.5 ms on top of the product, 0.6 ns per element, against 0.2 for the   \
     * op's own loop), and put_ called act_ for each vector. Float only (T = double never calls \
     * it). */                                                                                      \
    XO_INLINE ATTR static inline V_##SUF vtanhf_##SUF(V_##SUF x)                                        \
    {                                                                                                   \
        typedef __typeof__(x < x) M; /* lanes of all ones where a comparison holds */                  \
        const V_##SUF k = (V_##SUF){0} + (T)XO_TANHF_CLAMP, zero = {0};                                 \
        M m = x < k;                                                                                    \
        V_##SUF c = (V_##SUF)((m & (M)x) | (~m & (M)k));                                                \
        m = c > -k;                                                                                     \
        c = (V_##SUF)((m & (M)c) | (~m & (M)(zero - k)));                                               \
        const V_##SUF z = c * c;                                                                        \
        V_##SUF r = XO_TANHF_P(z) * c / XO_TANHF_Q(z);                                                  \
        m = (x < (T)XO_TANHF_SMALL) & (x > (T)-XO_TANHF_SMALL); /* |x| small: x itself */              \
        r = (V_##SUF)((m & (M)x) | (~m & (M)r));                                                        \
        m = x != x; /* NaN stays NaN */                                                                 \
        return (V_##SUF)((m & (M)x) | (~m & (M)r));                                                     \
    }                                                                                                   \
    XO_INLINE ATTR static inline V_##SUF actin_##SUF(V_##SUF v, int act)                                \
    {                                                                                                   \
        typedef T xo_real __attribute__((unused)); /* the element type of xo_formulas.h */           \
        T t[LANES(T)];                                                                                  \
        memcpy(t, &v, sizeof v);                                                                        \
        if (act == XO_TANH)                                                                             \
            for (size_t l = 0; l < LANES(T); l++)                                                       \
                t[l] = XO_F_TANH(t[l]);                                                                 \
        else if (act == XO_RELU)                                                                        \
            for (size_t l = 0; l < LANES(T); l++)                                                       \
                t[l] = XO_F_RELU(t[l]);                                                                 \
        memcpy(&v, t, sizeof v);                                                                        \
        return v;                                                                                       \
    }                                                                                                   \
    /* nj elements of C's row at ci = act(alpha v + beta ci + bias) (beta == 0: ci not read; bias:  \
     * only with has_bias; act: XO_IDENTITY for none) */                                                \
    XO_INLINE ATTR static inline void put_##SUF(T *ci, V_##SUF v, size_t nj, T alpha, T beta, int has_bias,      \
                                      V_##SUF bias, int act)                                            \
    {                                                                                                   \
        v *= alpha;                                                                                     \
        if (beta != 0) {                                                                                \
            V_##SUF old;                                                                                \
            if (nj == LANES(T))                                                                         \
                memcpy(&old, ci, sizeof old);                                                           \
            else                                                                                        \
                old = ldm_##SUF(ci, nj);                                                                \
            v += beta * old;                                                                            \
        }                                                                                               \
        if (has_bias)                                                                                   \
            v += bias;                                                                                  \
        if (act == XO_TANH && sizeof(T) == sizeof(float))                                               \
            v = VTANH_##SUF(v);                                                                        \
        else if (act != XO_IDENTITY)                                                                    \
            v = actv_##SUF(v, act);                                                                     \
        if (nj == LANES(T))                                                                             \
            memcpy(ci, &v, sizeof v);                                                                   \
        else                                                                                            \
            stm_##SUF(ci, v, nj);                                                                       \
    }                                                                                                   \
    /* bias for row i's columns [j0, j0 + nj): bias[j0..] (by column) or bias[i] in every lane */      \
    XO_INLINE ATTR static inline V_##SUF bias_##SUF(const T *bias, int by_row, size_t i, size_t j0, size_t nj)    \
    {                                                                                                   \
        V_##SUF v = {0};                                                                                \
        if (bias && by_row)                                                                             \
            v += bias[i];                                                                               \
        else if (bias)                                                                                  \
            v = ldm_##SUF(bias + j0, nj);                                                               \
        return v;                                                                                       \
    }                                                                                                   \
    /* {sum of v0's lanes, v1's, v2's, v3's} as the first 4 lanes of a vector */                      \
    XO_INLINE ATTR static inline V_##SUF sum4_##SUF(V_##SUF v0, V_##SUF v1, V_##SUF v2, V_##SUF v3)     \
    {                                                                                                   \
        CAT(FOLD_, LANES_##SUF)(v0);                                                                    \
        CAT(FOLD_, LANES_##SUF)(v1);                                                                    \
        CAT(FOLD_, LANES_##SUF)(v2);                                                                    \
        CAT(FOLD_, LANES_##SUF)(v3);                                                                    \
        V_##SUF x = CAT(P01_, LANES_##SUF)(v0, v1) + CAT(P23_, LANES_##SUF)(v0, v1);                    \
        V_##SUF y = CAT(P01_, LANES_##SUF)(v2, v3) + CAT(P23_, LANES_##SUF)(v2, v3);                    \
        return CAT(L01_, LANES_##SUF)(x, y) + CAT(L23_, LANES_##SUF)(x, y);                             \
    }                                                                                                   \
    /* Dots: rows i0.. of C (row r at cr[r], from A's row ar[r]; a repeated row is computed, then    \
     * stored once) x columns [j0, j0 + nj), nj <= NJ <= 4, NJ a constant where inlined;           \
     * b(., j) = bt[j ldbt + .] */                                                                     \
    XO_INLINE ATTR static inline void dots_##SUF(const size_t NJ, size_t k, T alpha, const T *const *ar,  \
                                                 const T *bt, size_t ldbt, T beta, T *const *cr, size_t nj, \
                                                 const T *bias, int by_row, size_t i0, size_t j0, int act) \
    {                                                                                                   \
        V_##SUF s[4][4] = {{{0}}};                                                                      \
        const T *bj[4];                                                                                 \
        for (size_t j = 0; j < NJ; j++)                                                                 \
            bj[j] = bt + (j < nj ? j : nj - 1) * ldbt;                                                  \
        size_t p = 0;                                                                                   \
        for (; p + LANES(T) <= k; p += LANES(T)) {                                                      \
            V_##SUF x[4], y;                                                                            \
            for (int r = 0; r < 4; r++)                                                                 \
                memcpy(&x[r], ar[r] + p, sizeof x[r]);                                                  \
            for (size_t j = 0; j < NJ; j++) {                                                           \
                memcpy(&y, bj[j] + p, sizeof y);                                                        \
                for (int r = 0; r < 4; r++)                                                             \
                    s[r][j] += x[r] * y;                                                                \
            }                                                                                           \
        }                                                                                               \
        if (p < k) {                                                                                    \
            V_##SUF x[4];                                                                               \
            for (int r = 0; r < 4; r++)                                                                 \
                x[r] = ldm_##SUF(ar[r] + p, k - p);                                                     \
            for (size_t j = 0; j < NJ; j++) {                                                           \
                const V_##SUF y = ldm_##SUF(bj[j] + p, k - p);                                          \
                for (int r = 0; r < 4; r++)                                                             \
                    s[r][j] += x[r] * y;                                                                \
            }                                                                                           \
        }                                                                                               \
        for (int r = 0; r < 4; r++)                                                                     \
            if (r == 0 || cr[r] != cr[r - 1])                                                           \
                put_##SUF(cr[r], sum4_##SUF(s[r][0], s[r][1], s[r][2], s[r][3]), nj, alpha, beta,       \
                          bias != NULL, bias_##SUF(bias, by_row, i0 + (size_t)r, j0, nj), act);         \
    }                                                                                                   \
    /* Dots by LANES rows: rows [0, LANES) of C x all n < XO_SMALL_ROWS_N columns, one column at a    \
     * time: LANES dot products of A's rows (a(r, .) = a[r lda + .]) with column j of B            \
     * (bt[j ldbt + .]), reduced together into one vector down column j, which gets the epilogue;  \
     * then C's rows element by element. */                                                         \
    XO_INLINE ATTR static inline void dotsv_##SUF(size_t n, size_t k, T alpha, const T *a,       \
                                                  size_t lda, const T *bt, size_t ldbt, T beta, T *c,   \
                                                  size_t ldc, const T *bias, int by_row, int act)       \
    {                                                                                                   \
        T t[XO_SMALL_ROWS_N][LANES(T)];                                                                 \
        for (size_t j = 0; j < n; j++) {                                                                \
            V_##SUF s[LANES(T)] = {{0}}, y;                                                             \
            const T *bj = bt + j * ldbt;                                                                \
            size_t p = 0;                                                                               \
            for (; p + LANES(T) <= k; p += LANES(T)) {                                                  \
                memcpy(&y, bj + p, sizeof y);                                                           \
                UNROLL for (size_t r = 0; r < LANES(T); r++) {                                                 \
                    V_##SUF x;                                                                          \
                    memcpy(&x, a + r * lda + p, sizeof x);                                                    \
                    s[r] += x * y;                                                                      \
                }                                                                                       \
            }                                                                                           \
            if (p < k) {                                                                                \
                y = ldm_##SUF(bj + p, k - p);                                                           \
                UNROLL for (size_t r = 0; r < LANES(T); r++)                                            \
                    s[r] += ldm_##SUF(a + r * lda + p, k - p) * y;                                            \
            }                                                                                           \
            CAT(RED_, LANES_##SUF)(s);                                                                  \
            V_##SUF v = alpha * s[0];                                                                   \
            if (beta != 0) {                                                                            \
                V_##SUF old = {0};                                                                      \
                for (size_t l = 0; l < LANES(T); l++)                                                         \
                    old[l] = c[l * ldc + j];                                                            \
                v += beta * old;                                                                        \
            }                                                                                           \
            if (bias && by_row)                                                                         \
                v += ldm_##SUF(bias, LANES(T));                                                               \
            else if (bias)                                                                              \
                v += bias[j];                                                                           \
            memcpy(t[j], &v, sizeof v);                                                                 \
            if (act != XO_IDENTITY)                                                                     \
                act_##SUF(t[j], act);                                                                   \
        }                                                                                               \
        for (size_t l = 0; l < LANES(T); l++)                                                                 \
            for (size_t j = 0; j < n; j++)                                                              \
                c[l * ldc + j] = t[j][l];                                                               \
    }                                                                                                   \
    /* Tiles: rows [i0, i0 + MR) of C (MR <= 8 a constant where inlined; a(r, p) = a[r sr + p sp],    \
     * row r of C at c + r ldc) x all of its columns, two vectors of columns at a time (the second   \
     * maybe partial), then one: MR x 2 LANES in registers over all of k, each a(r, p) broadcast    \
     * once for both, with the epilogue EPI (a constant: EPI_ANY, _NONE or _BIAS; the loops that  \
     * store them unrolled, or GCC keeps EPI_ANY's accumulators in memory: 32x32x32 with beta 1,   \
     * kernel alone, 732-741 -> 487-501 ns; 8x8x8 and 16x16x16 stay at 72-90). out_: the          \
     * vector v of row i at ci, columns [j0, j0 + nj), with the epilogue EPI (EPI_BIAS: 1x100x3 with \
     * its bias, kernel alone, 41 ns through put_, 27 ns so). */                                     \
    XO_INLINE ATTR static inline void out_##SUF(const int EPI, T *ci, V_##SUF v, size_t nj, T alpha,    \
                                                T beta, const T *bias, int by_row, size_t i, size_t j0, \
                                                int act)                                                \
    {                                                                                                   \
        if (EPI == EPI_ANY) {                                                                           \
            put_##SUF(ci, v, nj, alpha, beta, bias != NULL, bias_##SUF(bias, by_row, i, j0, nj), act);  \
            return;                                                                                     \
        }                                                                                               \
        if ((EPI == EPI_BIAS || EPI == EPI_BIASV) && bias) {                                            \
            V_##SUF bj;                                                                                 \
            if (nj == LANES(T))                                                                         \
                memcpy(&bj, bias + j0, sizeof bj);                                                      \
            else                                                                                        \
                bj = ldm_##SUF(bias + j0, nj);                                                          \
            v += bj;                                                                                    \
        }                                                                                               \
        if (EPI == EPI_BIASV && act == XO_TANH && sizeof(T) == sizeof(float))                           \
            v = VTANH_##SUF(v);                                                                        \
        else if (EPI == EPI_BIAS || EPI == EPI_BIASV)                                                   \
            v = actin_##SUF(v, act);                                                                    \
        if (nj == LANES(T))                                                                             \
            memcpy(ci, &v, sizeof v);                                                                   \
        else                                                                                            \
            stm_##SUF(ci, v, nj);                                                                       \
    }                                                                                                   \
    XO_INLINE ATTR static inline void tiles_##SUF(const int MR, const int EPI, size_t n, size_t k, T alpha, \
                                                  const T *a, size_t sr, size_t sp, const T *b, size_t ldb, \
                                                  T beta, T *c, size_t ldc, const T *bias, int by_row,  \
                                                  size_t i0, int act)                                   \
    {                                                                                                   \
        const int EPIV = EPI == EPI_BIAS ? EPI_BIASV : EPI;                                            \
        size_t j0 = 0;                                                                                  \
        for (; j0 + LANES(T) < n; j0 += 2 * LANES(T)) {                                                 \
            const size_t nj = n - j0 - LANES(T) < LANES(T) ? n - j0 - LANES(T) : LANES(T);              \
            const T *bt = b + j0;                                                                       \
            V_##SUF s[8] = {{0}}, u[8] = {{0}}, r0, r1;                                                 \
            UNROLL4 for (size_t p = 0; p < k; p++) {                                                            \
                memcpy(&r0, bt + p * ldb, sizeof r0);                                                   \
                if (nj == LANES(T))                                                                     \
                    memcpy(&r1, bt + p * ldb + LANES(T), sizeof r1);                                    \
                else                                                                                    \
                    r1 = ldm_##SUF(bt + p * ldb + LANES(T), nj);                                        \
                for (int r = 0; r < MR; r++) {                                                          \
                    const T x = a[r * sr + p * sp];                                                     \
                    s[r] += x * r0;                                                                     \
                    u[r] += x * r1;                                                                     \
                }                                                                                       \
            }                                                                                           \
            UNROLL8 for (int r = 0; r < MR; r++) {                                                      \
                T *ci = c + r * ldc + j0;                                                               \
                out_##SUF(EPIV, ci, s[r], LANES(T), alpha, beta, bias, by_row, i0 + (size_t)r, j0, act); \
                out_##SUF(EPIV, ci + LANES(T), u[r], nj, alpha, beta, bias, by_row, i0 + (size_t)r,   \
                          j0 + LANES(T), act);                                                          \
            }                                                                                           \
        }                                                                                               \
        if (j0 < n) {                                                                                   \
            const size_t nj = n - j0;                                                                   \
            const T *bt = b + j0;                                                                       \
            V_##SUF s[8] = {{0}}, row;                                                                  \
            UNROLL4 for (size_t p = 0; p < k; p++) {                                                            \
                if (nj == LANES(T))                                                                     \
                    memcpy(&row, bt + p * ldb, sizeof row);                                             \
                else                                                                                    \
                    row = ldm_##SUF(bt + p * ldb, nj);                                                  \
                for (int r = 0; r < MR; r++)                                                            \
                    s[r] += a[r * sr + p * sp] * row;                                                   \
            }                                                                                           \
            UNROLL8 for (int r = 0; r < MR; r++)                                                        \
                out_##SUF(EPIV, c + r * ldc + j0, s[r], nj, alpha, beta, bias, by_row, i0 + (size_t)r, j0, \
                          act);                                                                         \
        }                                                                                               \
    }                                                                                                   \
    /* Vector q of NJ <= 4 column vectors s[] (a constant where inlined) interleaved by shuffles: the   \
     * block's elements q LANES.. as they lie in C with ldc == NJ */                                    \
    XO_INLINE ATTR static inline V_##SUF ilv_##SUF(const size_t NJ, size_t q, const V_##SUF *s)         \
    {                                                                                                   \
        switch (NJ * 4 + q) { /* the shuffles' lanes constants */                                       \
        case 2 * 4 + 0: return ILV_2(SUF, 0);                                                           \
        case 2 * 4 + 1: return ILV_2(SUF, 1);                                                           \
        case 3 * 4 + 0: return ILV_3(SUF, 0);                                                           \
        case 3 * 4 + 1: return ILV_3(SUF, 1);                                                           \
        case 3 * 4 + 2: return ILV_3(SUF, 2);                                                           \
        case 4 * 4 + 0: return ILV_4(SUF, 0);                                                           \
        case 4 * 4 + 1: return ILV_4(SUF, 1);                                                           \
        case 4 * 4 + 2: return ILV_4(SUF, 2);                                                           \
        case 4 * 4 + 3: return ILV_4(SUF, 3);                                                           \
        }                                                                                               \
        return s[0];                                                                                    \
    }                                                                                                   \
    /* Column vectors s[0..NJ) of rows [0, ni) of C (NJ <= 4 a constant where inlined) into C, with     \
     * the epilogue act(alpha s + beta C + bias). With ldc == NJ the block is contiguous: the columns,  \
     * and the bias's, are interleaved (ilv_) into whole vectors of it, which get the epilogue as they  \
     * lie, C's old values read as vectors (the ODE's dW2 += h^T a, 100x3x16 T N with beta 1, kernel    \
     * resolved, 2-core Zen 4: 337 -> 245 ns, OpenBLAS 383); else the epilogue down each column         \
     * and the stores element by element. */                                                            \
    XO_INLINE ATTR static inline void colsout_##SUF(const size_t NJ, size_t ni, V_##SUF *s, T alpha,    \
                                                    T beta, T *c, size_t ldc, const T *bias, int by_row, \
                                                    int act)                                            \
    {                                                                                                   \
        V_##SUF bb[4] = {{0}}; /* the bias down each column */                                          \
        for (size_t j = 0; j < NJ && bias; j++)                                                         \
            bb[j] = by_row ? ldm_##SUF(bias, ni) : bb[j] + bias[j];                                     \
        if (ldc != NJ) { /* C's rows apart: element by element */                                       \
            for (size_t j = 0; j < NJ; j++) {                                                           \
                V_##SUF old = {0};                                                                      \
                for (size_t l = 0; l < ni && beta != 0; l++)                                            \
                    old[l] = c[l * ldc + j];                                                            \
                s[j] = alpha * s[j] + beta * old + bb[j];                                               \
                if (act != XO_IDENTITY)                                                                 \
                    s[j] = actv_##SUF(s[j], act);                                                       \
            }                                                                                           \
            for (size_t l = 0; l < ni; l++)                                                             \
                for (size_t j = 0; j < NJ; j++)                                                         \
                    c[l * ldc + j] = s[j][l];                                                           \
            return;                                                                                     \
        }                                                                                               \
        UNROLL4 for (size_t q = 0; q < NJ; q++) { /* the block's q-th vector, from the columns */       \
            if (ni * NJ <= q * LANES(T))                                                                \
                break;                                                                                  \
            const size_t left = ni * NJ - q * LANES(T); /* elements of the block from this vector on */ \
            const size_t nq = left < LANES(T) ? left : LANES(T);                                        \
            put_##SUF(c + q * LANES(T), ilv_##SUF(NJ, q, s), nq, alpha, beta, bias != NULL,             \
                      ilv_##SUF(NJ, q, bb), act);                                                       \
        }                                                                                               \
    }                                                                                                   \
    /* Columns: rows [i0, i0 + ni) (ni <= LANES) x columns [j0, j0 + NJ) of C, NJ <= 4 a constant \
     * where inlined, one vector down each column of C: A transposed, a(i, p) = a[p lda + i], so   \
     * LANES rows of C take one vector of A's row p, times b(p, j) broadcast. The results go to C \
     * through colsout_ (whole vectors where C is dense). */                                          \
    XO_INLINE ATTR static inline void cols_##SUF(const size_t NJ, size_t ni, size_t k, T alpha, const T *a,   \
                                                 size_t lda, const T *b, size_t bsp, size_t bsj, T beta, \
                                                 T *c, size_t ldc, const T *bias, int by_row, int act)  \
    {                                                                                                   \
        V_##SUF s[4] = {{0}}, u[4] = {{0}}, x, y; /* p even and odd: two chains of multiply-adds */     \
        size_t p = 0;                                                                                   \
        for (; p + 2 <= k; p += 2) {                                                                    \
            if (ni == LANES(T)) {                                                                       \
                memcpy(&x, a + p * lda, sizeof x);                                                      \
                memcpy(&y, a + (p + 1) * lda, sizeof y);                                                \
            } else {                                                                                    \
                x = ldm_##SUF(a + p * lda, ni);                                                         \
                y = ldm_##SUF(a + (p + 1) * lda, ni);                                                   \
            }                                                                                           \
            for (size_t j = 0; j < NJ; j++) {                                                           \
                s[j] += x * b[p * bsp + j * bsj];                                                       \
                u[j] += y * b[(p + 1) * bsp + j * bsj];                                                 \
            }                                                                                           \
        }                                                                                               \
        if (p < k) {                                                                                    \
            x = ldm_##SUF(a + p * lda, ni);                                                             \
            for (size_t j = 0; j < NJ; j++)                                                             \
                s[j] += x * b[p * bsp + j * bsj];                                                       \
        }                                                                                               \
        for (size_t j = 0; j < NJ; j++)                                                                 \
            s[j] += u[j];                                                                               \
        colsout_##SUF(NJ, ni, s, alpha, beta, c, ldc, bias, by_row, act);                               \
    }                                                                                                   \
    /* Short k (K <= 4, a constant where inlined): NV <= 4 vectors of C's columns from j0 (NV a         \
     * constant where inlined; the last one nl <= LANES columns, masked when fewer) with the K x NV     \
     * vectors of B they need held in registers, then each row of C in turn: K broadcasts of            \
     * a(i, p), NV K multiply-adds, the stores (libxsmm's order for these shapes). Every count a        \
     * constant, so the vectors of a row are independent straight-line code (with a loop over a         \
     * runtime count of vectors, 1x100x3 with tanh took 50 ns, 36 after). */                            \
    XO_INLINE ATTR static inline void bblock_##SUF(const size_t K, const int EPI, const size_t NV, size_t nl, \
                                                  size_t m, T alpha, const T *a, size_t sr, size_t sp,  \
                                                  const T *b, size_t ldb, T beta, T *c, size_t ldc,     \
                                                  const T *bias, int by_row, size_t j0, int act)        \
    {                                                                                                   \
        V_##SUF bv[4][4];                                                                               \
        UNROLL4 for (size_t p = 0; p < K; p++)                                                          \
            UNROLL4 for (size_t v = 0; v < NV; v++)                                                     \
                if (v + 1 < NV || nl == LANES(T))                                                       \
                    memcpy(&bv[p][v], b + p * ldb + j0 + v * LANES(T), sizeof bv[p][v]);                \
                else                                                                                    \
                    bv[p][v] = ldm_##SUF(b + p * ldb + j0 + v * LANES(T), nl);                          \
        for (size_t i = 0; i < m; i++) {                                                                \
            V_##SUF s[4] = {{0}};                                                                       \
            UNROLL4 for (size_t p = 0; p < K; p++) {                                                    \
                const T x = a[i * sr + p * sp];                                                         \
                UNROLL4 for (size_t v = 0; v < NV; v++)                                                 \
                    s[v] += x * bv[p][v];                                                               \
            }                                                                                           \
            UNROLL4 for (size_t v = 0; v < NV; v++)                                                     \
                out_##SUF(EPI, c + i * ldc + j0 + v * LANES(T), s[v], v + 1 < NV ? LANES(T) : nl, alpha, beta, \
                          bias, by_row, i, j0 + v * LANES(T), act);                                     \
        }                                                                                               \
    }                                                                                                   \
    /* Short k: C's columns by blocks of 4 vectors, then the last 1-4 (the last maybe partial) */       \
    XO_INLINE ATTR static inline void bstat_##SUF(const size_t K, const int EPI, size_t m, size_t n, T alpha, \
                                                  const T *a, size_t sr, size_t sp, const T *b, size_t ldb, \
                                                  T beta, T *c, size_t ldc, const T *bias, int by_row, int act) \
    {                                                                                                   \
        size_t j0 = 0;                                                                                  \
        for (; j0 + 4 * LANES(T) <= n; j0 += 4 * LANES(T))                                              \
            bblock_##SUF(K, EPI, 4, LANES(T), m, alpha, a, sr, sp, b, ldb, beta, c, ldc, bias, by_row, j0, act); \
        if (j0 == n)                                                                                    \
            return;                                                                                     \
        const size_t nl = (n - j0 - 1) % LANES(T) + 1; /* the last vector's columns */                  \
        switch ((n - j0 + LANES(T) - 1) / LANES(T)) { /* the number of vectors a constant in each */    \
        case 1:                                                                                         \
            bblock_##SUF(K, EPI, 1, nl, m, alpha, a, sr, sp, b, ldb, beta, c, ldc, bias, by_row, j0, act); \
            break;                                                                                      \
        case 2:                                                                                         \
            bblock_##SUF(K, EPI, 2, nl, m, alpha, a, sr, sp, b, ldb, beta, c, ldc, bias, by_row, j0, act); \
            break;                                                                                      \
        case 3:                                                                                         \
            bblock_##SUF(K, EPI, 3, nl, m, alpha, a, sr, sp, b, ldb, beta, c, ldc, bias, by_row, j0, act); \
            break;                                                                                      \
        default:                                                                                        \
            bblock_##SUF(K, EPI, 4, nl, m, alpha, a, sr, sp, b, ldb, beta, c, ldc, bias, by_row, j0, act); \
        }                                                                                               \
    }                                                                                                   \
    /* Wide C (n >= XO_SMALL_ROWS_N), B upright, k <= 4: every k and epilogue its own instantiation;  \
     * a function apart, called by small_ and straight from xo__cpu_small_gemm_bias_act (skipping    \
     * small_'s prologue and dispatch: 1x100x3 18-20 -> 14 ns), and so that small_ stays small enough \
     * for the compiler to keep its other loops in registers (inlined, 16x3x100 took 253 ns, 3x100x16 \
     * (T N) 250 against 193 and 74 before). a(i, p) = a[i sr + p sp]. */                            \
    __attribute__((noinline)) ATTR static void shortk_##SUF(size_t m, size_t n, size_t k, T alpha,      \
                                                            const T *a, size_t sr, size_t sp, const T *bu, \
                                                            size_t ldu, T beta, T *c, size_t ldc,         \
                                                            const T *bias, int by_row, int act)           \
    {                                                                                                   \
        const int epi = epi_of(alpha, beta, bias, by_row, act);                                         \
        switch (k * 3 + (size_t)epi) { /* k and the epilogue constants in each case */                  \
        BSTAT_CASE(SUF, 1, 0) BSTAT_CASE(SUF, 1, 1) BSTAT_CASE(SUF, 1, 2) BSTAT_CASE(SUF, 2, 0)          \
        BSTAT_CASE(SUF, 2, 1) BSTAT_CASE(SUF, 2, 2) BSTAT_CASE(SUF, 3, 0) BSTAT_CASE(SUF, 3, 1)          \
        BSTAT_CASE(SUF, 3, 2) BSTAT_CASE(SUF, 4, 0) BSTAT_CASE(SUF, 4, 1) BSTAT_CASE(SUF, 4, 2)          \
        }                                                                                               \
    }                                                                                                   \
    /* One row of C (m = 1), n <= ROWV vectors, B upright, any k: every vector of C's row an      \
     * accumulator from the start and k outer, a(0, p) broadcast times B's row p; up to 4 vectors, \
     * even and odd p in two sets of accumulators, so that a narrow row is not one chain of       \
     * dependent multiply-adds. Kernel alone (xo_small_gemm, 2-core AMD EPYC, AVX-512), against    \
     * the loops before (short-k blocks, then 4-row tiles) and libxsmm 1.17: 1x100x100 282-288 ->  \
     * 170-172 ns (libxsmm 176-179), 1x128x128 543-552 -> 366-370 (461-493), 1x100x16 45-47 -> 35 \
     * (39), 1x100x3 level (12-13; libxsmm 7.5), 1x16x256 216 -> 113 (211). a(0, p) = a[p sp];    \
     * bias by row: bias[0] in every lane. */                                                       \
    /* s[v] += x times vector v of B's row at bp, NV vectors (the last nl columns) */                \
    XO_INLINE ATTR static inline void rowacc_##SUF(const size_t NV, size_t nl, T x, const T *bp, V_##SUF *s) \
    {                                                                                                   \
        UNROLL8 for (size_t v = 0; v < NV; v++) {                                                       \
            V_##SUF bv;                                                                                 \
            if (v + 1 < NV || nl == LANES(T))                                                           \
                memcpy(&bv, bp + v * LANES(T), sizeof bv);                                              \
            else                                                                                        \
                bv = ldm_##SUF(bp + v * LANES(T), nl);                                                  \
            s[v] += x * bv;                                                                             \
        }                                                                                               \
    }                                                                                                   \
    XO_INLINE ATTR static inline void rowe_##SUF(const int EPI, const size_t NV, size_t nl, size_t k,     \
                                                 T alpha, const T *a, size_t sp, const T *b, size_t ldb, \
                                                 T beta, T *c, const T *bias, int by_row, int act)      \
    {                                                                                                   \
        V_##SUF s[8] = {{0}}, u[4] = {{0}}; /* u: odd p, where NV <= 4 */                               \
        size_t p = 0;                                                                                   \
        if (NV <= 4)                                                                                    \
            for (; p + 2 <= k; p += 2) {                                                                \
                rowacc_##SUF(NV, nl, a[p * sp], b + p * ldb, s);                                        \
                rowacc_##SUF(NV, nl, a[(p + 1) * sp], b + (p + 1) * ldb, u);                            \
            }                                                                                           \
        for (; p < k; p++)                                                                              \
            rowacc_##SUF(NV, nl, a[p * sp], b + p * ldb, s);                                            \
        if (NV <= 4)                                                                                    \
            UNROLL4 for (size_t v = 0; v < NV; v++)                                                     \
                s[v] += u[v];                                                                           \
        UNROLL8 for (size_t v = 0; v < NV; v++)                                                         \
            out_##SUF(EPI, c + v * LANES(T), s[v], v + 1 < NV ? LANES(T) : nl, alpha, beta, bias, by_row, 0, \
                      v * LANES(T), act);                                                               \
    }                                                                                                   \
    /* one function per epilogue and vector count, picked when the call is resolved */                 \
    ROW_EPI(T, SUF, ATTR, any, EPI_ANY) ROW_EPI(T, SUF, ATTR, none, EPI_NONE) ROW_EPI(T, SUF, ATTR, bias, EPI_BIAS) \
    /* Tiles over all of C's rows: TMR at a time, then 4, then the last 1-3 (with 8-row tiles,   \
     * kernel alone against 4: 32x32x32 286-291 -> 262-266 ns, 128x16x16 423-429 -> 353-354) */   \
    XO_INLINE ATTR static inline void tilese_##SUF(const int EPI, size_t m, size_t n, size_t k, T alpha,  \
                                                   const T *a, size_t sr, size_t sp, const T *b,         \
                                                   size_t ldb, T beta, T *c, size_t ldc, const T *bias,  \
                                                   int by_row, int act)                                  \
    {                                                                                                   \
        size_t i0 = 0;                                                                                  \
        for (; i0 + TMR_##SUF <= m; i0 += TMR_##SUF)                                                    \
            tiles_##SUF(TMR_##SUF, EPI, n, k, alpha, a + i0 * sr, sr, sp, b, ldb, beta, c + i0 * ldc, ldc, bias, \
                        by_row, i0, act);                                                               \
        if (TMR_##SUF > 4 && m - i0 >= 4) {                                                             \
            tiles_##SUF(4, EPI, n, k, alpha, a + i0 * sr, sr, sp, b, ldb, beta, c + i0 * ldc, ldc, bias, by_row, \
                        i0, act);                                                                       \
            i0 += 4;                                                                                    \
        }                                                                                               \
        switch (m - i0) { /* the last rows, a constant number in each case */                           \
        case 3:                                                                                         \
            tiles_##SUF(3, EPI, n, k, alpha, a + i0 * sr, sr, sp, b, ldb, beta, c + i0 * ldc, ldc, bias, by_row, \
                        i0, act);                                                                       \
            break;                                                                                      \
        case 2:                                                                                         \
            tiles_##SUF(2, EPI, n, k, alpha, a + i0 * sr, sr, sp, b, ldb, beta, c + i0 * ldc, ldc, bias, by_row, \
                        i0, act);                                                                       \
            break;                                                                                      \
        case 1:                                                                                         \
            tiles_##SUF(1, EPI, n, k, alpha, a + i0 * sr, sr, sp, b, ldb, beta, c + i0 * ldc, ldc, bias, by_row, \
                        i0, act);                                                                       \
        }                                                                                               \
    }                                                                                                   \
    /* Wide C (n >= XO_SMALL_ROWS_N), B upright, k > 4: tiles, the epilogue a constant in each      \
     * instantiation; a function apart, called by small_ (B transposed, copied) and straight from   \
     * xo__cpu_small_gemm_bias_act, skipping small_'s prologue (kernel alone, 8x8x8 27.9 -> 25.8 ns \
     * with 8-row tiles either way). a(i, p) = a[i sr + p sp]. */                                     \
    __attribute__((noinline)) ATTR static void tiled_##SUF(size_t m, size_t n, size_t k, T alpha,       \
                                                           const T *a, size_t sr, size_t sp, const T *b, \
                                                           size_t ldb, T beta, T *c, size_t ldc,          \
                                                           const T *bias, int by_row, int act)            \
    {                                                                                                   \
        switch (epi_of(alpha, beta, bias, by_row, act)) { /* the epilogue a constant in each case */ \
        case EPI_ANY: tilese_##SUF(EPI_ANY, m, n, k, alpha, a, sr, sp, b, ldb, beta, c, ldc, bias, by_row, act); break; \
        case EPI_BIAS: tilese_##SUF(EPI_BIAS, m, n, k, alpha, a, sr, sp, b, ldb, beta, c, ldc, bias, by_row, act); break; \
        default: tilese_##SUF(EPI_NONE, m, n, k, alpha, a, sr, sp, b, ldb, beta, c, ldc, bias, by_row, act); \
        }                                                                                               \
    }                                                                                                   \
    /* Transposed blocks: rows [0, ni) of C (ni <= LANES) x its NJ = n <= 4 columns (a constant  \
     * where inlined), k <= LANES; a(r, p) = a[r lda + p], b(p, j) = b[p bsp + j bsj]. */             \
    XO_INLINE ATTR static inline void dotst_##SUF(const size_t NJ, size_t ni, size_t k, T alpha,        \
                                                  const T *a, size_t lda, const T *b, size_t bsp,       \
                                                  size_t bsj, T beta, T *c, size_t ldc, const T *bias,  \
                                                  int by_row, int act)                                  \
    {                                                                                                   \
        V_##SUF x[LANES(T)], s[4] = {{0}}, lo, hi;                                                      \
        UNROLL for (size_t r = 0; r < LANES(T); r++) { /* past row ni: 0 */                           \
            if (r >= ni)                                                                                \
                x[r] = (V_##SUF){0};                                                                    \
            else if (k == LANES(T))                                                                     \
                memcpy(&x[r], a + r * lda, sizeof x[r]);                                                \
            else                                                                                        \
                x[r] = ldm_##SUF(a + r * lda, k);                                                       \
        }                                                                                               \
        /* x[p] lane r = a(r, p) after these */                                                        \
        TSTAGE(SUF, 1) TSTAGE(SUF, 2) TSTAGE(SUF, 4)                                                    \
        if (LANES(T) > 8) {                                                                             \
            TSTAGE(SUF, 8)                                                                              \
        }                                                                                               \
        UNROLL for (size_t p = 0; p < LANES(T); p++) /* x[p] = 0 past k: b(p, j) not read, 0 */       \
            for (size_t j = 0; j < NJ; j++)                                                             \
                s[j] += x[p] * (k == LANES(T) || p < k ? b[p * bsp + j * bsj] : 0);                     \
        colsout_##SUF(NJ, ni, s, alpha, beta, c, ldc, bias, by_row, act);                               \
    }                                                                                                   \
    /* B^T upright for the medium path: b is n x k (rows ldb apart), w gets k x n (rows ldw apart); \
     * blocks of LANES x LANES transposed in registers where the instruction set has them (TRANSP), \
     * the edges element by element. */                                                              \
    ATTR static void packt_##SUF(size_t n, size_t k, const T *b, size_t ldb, T *w, size_t ldw)          \
    {                                                                                                   \
        size_t j0 = 0;                                                                                  \
        if (TRANSP_##SUF)                                                                               \
            for (; j0 + LANES(T) <= n; j0 += LANES(T)) {                                                \
                size_t p0 = 0;                                                                          \
                for (; p0 + LANES(T) <= k; p0 += LANES(T)) {                                            \
                    V_##SUF x[LANES(T)], lo, hi;                                                        \
                    UNROLL for (size_t r = 0; r < LANES(T); r++)                                        \
                        memcpy(&x[r], b + (j0 + r) * ldb + p0, sizeof x[r]);                             \
                    /* x[p] lane r = b(j0 + r, p0 + p) after these */                                  \
                    TSTAGE(SUF, 1) TSTAGE(SUF, 2) TSTAGE(SUF, 4)                                        \
                    if (LANES(T) > 8) {                                                                 \
                        TSTAGE(SUF, 8)                                                                  \
                    }                                                                                   \
                    UNROLL for (size_t p = 0; p < LANES(T); p++)                                        \
                        memcpy(w + (p0 + p) * ldw + j0, &x[p], sizeof x[p]);                               \
                }                                                                                       \
                for (; p0 < k; p0++)                                                                    \
                    for (size_t r = 0; r < LANES(T); r++)                                               \
                        w[p0 * ldw + j0 + r] = b[(j0 + r) * ldb + p0];                                    \
            }                                                                                           \
        for (; j0 < n; j0++)                                                                            \
            for (size_t p = 0; p < k; p++)                                                              \
                w[p * ldw + j0] = b[j0 * ldb + p];                                                        \
    }                                                                                                   \
    /* Transposed blocks over all of C's rows, by LANES; a function apart, called straight from     \
     * xo__cpu_small_gemm_bias_act (no scratch, no dispatch), so that small_'s code and the         \
     * registers of its other loops stay as they were. */                                               \
    __attribute__((noinline)) ATTR static void transp_##SUF(size_t m, size_t n, size_t k, T alpha,     \
                                                            const T *a, size_t lda, const T *b,          \
                                                            size_t ldb, int tb, T beta, T *c,            \
                                                            size_t ldc, const T *bias, int by_row,       \
                                                            int act)                                     \
    {                                                                                                   \
        const size_t bsp = tb ? 1 : ldb, bsj = tb ? ldb : 1;                                        \
        for (size_t i0 = 0; i0 < m; i0 += LANES(T)) {                                               \
            const size_t ni = m - i0 < LANES(T) ? m - i0 : LANES(T);                                \
            const T *ai = a + i0 * lda, *bi = bias ? bias + (by_row ? i0 : 0) : NULL;               \
            T *ci = c + i0 * ldc;                                                                   \
            switch (n) { /* the number of columns a constant in each */                            \
            case 1: dotst_##SUF(1, ni, k, alpha, ai, lda, b, bsp, bsj, beta, ci, ldc, bi, by_row, act); break; \
            case 2: dotst_##SUF(2, ni, k, alpha, ai, lda, b, bsp, bsj, beta, ci, ldc, bi, by_row, act); break; \
            case 3: dotst_##SUF(3, ni, k, alpha, ai, lda, b, bsp, bsj, beta, ci, ldc, bi, by_row, act); break; \
            default: dotst_##SUF(4, ni, k, alpha, ai, lda, b, bsp, bsj, beta, ci, ldc, bi, by_row, act); \
            }                                                                                       \
        }                                                                                           \
    }                                                                                                   \
    ATTR static void small_##SUF(size_t m, size_t n, size_t k, T alpha, const T *a, size_t lda, int ta, \
                                 const T *b, size_t ldb, int tb, T beta, T *c, size_t ldc, T *w,        \
                                 const T *bias, int by_row, int act)                                    \
    {                                                                                                   \
        const int has_bias = bias != NULL;                                                              \
        if (n >= XO_SMALL_ROWS_N) {                                                                     \
            /* B transposed: copied upright */                                                          \
            const T *bu = b;                                                                            \
            size_t ldu = ldb;                                                                           \
            if (tb) {                                                                                   \
                int done;                                                                               \
                NARROW_T(ldb == k ? k : 0, n, b, w, done) /* dense with short k: vectors */             \
                for (size_t j = 0; j < n && !done; j++)                                                 \
                    for (size_t p = 0; p < k; p++)                                                      \
                        w[p * n + j] = b[j * ldb + p];                                                  \
                bu = w;                                                                                 \
                ldu = n;                                                                                \
            }                                                                                           \
            const size_t sr = ta ? 1 : lda, sp = ta ? lda : 1; /* a(i, p) = a[i sr + p sp] */            \
            if (k <= 4) {                                                                               \
                shortk_##SUF(m, n, k, alpha, a, sr, sp, bu, ldu, beta, c, ldc, bias, by_row, act);       \
                return;                                                                                 \
            }                                                                                           \
            tiled_##SUF(m, n, k, alpha, a, sr, sp, bu, ldu, beta, c, ldc, bias, by_row, act);          \
            return;                                                                                     \
        }                                                                                               \
        if (PACKED_##SUF && m == 1 && !tb && ldb == n && (!ta || lda == 1) && n <= NARROW(T)) {         \
            V_##SUF v;                                                                                  \
            switch (n) { /* the row's width a constant in each */                                       \
            case 1: PACKED_ROWS(T, SUF, 1, v); break;                                                   \
            case 2: PACKED_ROWS(T, SUF, 2, v); break;                                                   \
            case 3: PACKED_ROWS(T, SUF, 3, v); break;                                                   \
            case 4: PACKED_ROWS(T, SUF, 4, v); break;                                                   \
            case 5: PACKED_ROWS(T, SUF, 5, v); break;                                                   \
            case 6: PACKED_ROWS(T, SUF, 6, v); break;                                                   \
            default: PACKED_ROWS(T, SUF, 7, v);                                                         \
            }                                                                                           \
            put_##SUF(c, v, n, alpha, beta, has_bias, bias_##SUF(bias, by_row, 0, 0, n), act);         \
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
            const size_t sp = ta ? lda : 1;                                                         \
            N_##SUF c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0}, r0, r1, r2, r3;                         \
            size_t p = 0;                                                                           \
            for (; p + 4 <= ps; p += 4) {                                                           \
                memcpy(&r0, b + p * ldb, sizeof r0);                                                \
                memcpy(&r1, b + (p + 1) * ldb, sizeof r1);                                          \
                memcpy(&r2, b + (p + 2) * ldb, sizeof r2);                                          \
                memcpy(&r3, b + (p + 3) * ldb, sizeof r3);                                          \
                c0 += a[p * sp] * r0;                                                               \
                c1 += a[(p + 1) * sp] * r1;                                                         \
                c2 += a[(p + 2) * sp] * r2;                                                         \
                c3 += a[(p + 3) * sp] * r3;                                                         \
            }                                                                                       \
            for (; p < k; p++) {                                                                    \
                memcpy(&r0, p < ps ? b + p * ldb : w + (p - ps) * NARROW(T), sizeof r0);            \
                c0 += a[p * sp] * r0;                                                               \
            }                                                                                       \
            c0 = (c0 + c1) + (c2 + c3);                                                             \
            V_##SUF v = {0};                                                                        \
            memcpy(&v, &c0, sizeof c0);                                                             \
            put_##SUF(c, v, n, alpha, beta, has_bias, bias_##SUF(bias, by_row, 0, 0, n), act);      \
            return;                                                                                 \
        }                                                                                           \
        if (ta && m > 1) { /* columns, LANES rows at a time */                                      \
            const size_t bsp = tb ? 1 : ldb, bsj = tb ? ldb : 1; /* b(p, j) = b[p bsp + j bsj] */   \
            for (size_t i0 = 0; i0 < m; i0 += LANES(T)) {                                           \
                const size_t ni = m - i0 < LANES(T) ? m - i0 : LANES(T);                            \
                for (size_t j0 = 0; j0 < n; j0 += 4) {                                              \
                    const T *bj = b + j0 * bsj, *bi = bias ? bias + (by_row ? i0 : j0) : NULL;      \
                    T *cij = c + i0 * ldc + j0;                                                     \
                    switch (n - j0 < 4 ? n - j0 : 4) { /* the number of columns a constant in each */ \
                    case 1:                                                                         \
                        cols_##SUF(1, ni, k, alpha, a + i0, lda, bj, bsp, bsj, beta, cij, ldc, bi, by_row, act); \
                        break;                                                                      \
                    case 2:                                                                         \
                        cols_##SUF(2, ni, k, alpha, a + i0, lda, bj, bsp, bsj, beta, cij, ldc, bi, by_row, act); \
                        break;                                                                      \
                    case 3:                                                                         \
                        cols_##SUF(3, ni, k, alpha, a + i0, lda, bj, bsp, bsj, beta, cij, ldc, bi, by_row, act); \
                        break;                                                                      \
                    default:                                                                        \
                        cols_##SUF(4, ni, k, alpha, a + i0, lda, bj, bsp, bsj, beta, cij, ldc, bi, by_row, act); \
                    }                                                                               \
                }                                                                                   \
            }                                                                                       \
            return;                                                                                 \
        }                                                                                           \
        /* Dots: rows of A contiguous (A upright, or its one row copied), columns of B too        \
         * (copied when B is upright) */                                                            \
        const T *bt = b;                                                                            \
        size_t ldbt = ldb;                                                                          \
        if (!tb) { /* along B's rows (n < 8 elements each), into its columns */                    \
            int done;                                                                               \
            NARROW_T(ldb == n ? n : 0, k, b, w, done) /* dense: vector loads and shuffles */        \
            for (size_t p = 0; p < k && !done; p++) {                                               \
                const T *bp = b + p * ldb;                                                          \
                UNROLL8 for (size_t j = 0; j < XO_SMALL_ROWS_N - 1; j++)                            \
                    if (j < n)                                                                      \
                        w[j * k + p] = bp[j];                                                       \
            }                                                                                       \
            bt = w;                                                                                 \
            ldbt = k;                                                                               \
        }                                                                                           \
        if (ta) {                                                                                   \
            T *row = w + (tb ? 0 : n * k);                                                          \
            for (size_t p = 0; p < k; p++)                                                          \
                row[p] = a[p * lda];                                                                \
            a = row;                                                                                \
        }                                                                                           \
        size_t i0 = 0;                                                                              \
        for (; i0 + LANES(T) <= m; i0 += LANES(T)) /* LANES rows at a time, then 4 */              \
            dotsv_##SUF(n, k, alpha, a + i0 * lda, lda, bt, ldbt, beta, c + i0 * ldc, ldc, \
                        bias ? bias + (by_row ? i0 : 0) : NULL, by_row, act);                       \
        for (; i0 < m; i0 += 4) {                                                                   \
            const T *ar[4];                                                                         \
            T *cr[4];                                                                               \
            for (size_t r = 0; r < 4; r++) { /* past the last row, the last row again */            \
                const size_t i = i0 + r < m ? i0 + r : m - 1;                                       \
                ar[r] = a + i * lda;                                                                \
                cr[r] = c + i * ldc;                                                                \
            }                                                                                       \
            for (size_t j0 = 0; j0 < n; j0 += 4) {                                                  \
                const size_t nj = n - j0 < 4 ? n - j0 : 4;                                          \
                const T *bj = bt + j0 * ldbt;                                                       \
                T *cj[4] = {cr[0] + j0, cr[1] + j0, cr[2] + j0, cr[3] + j0};                        \
                switch (nj) { /* the number of columns a constant in each */                        \
                case 1:                                                                             \
                    dots_##SUF(1, k, alpha, ar, bj, ldbt, beta, cj, nj, bias, by_row, i0, j0, act); \
                    break;                                                                          \
                case 2:                                                                             \
                    dots_##SUF(2, k, alpha, ar, bj, ldbt, beta, cj, nj, bias, by_row, i0, j0, act); \
                    break;                                                                          \
                case 3:                                                                             \
                    dots_##SUF(3, k, alpha, ar, bj, ldbt, beta, cj, nj, bias, by_row, i0, j0, act); \
                    break;                                                                          \
                default:                                                                            \
                    dots_##SUF(4, k, alpha, ar, bj, ldbt, beta, cj, nj, bias, by_row, i0, j0, act); \
                }                                                                                   \
            }                                                                                       \
        }                                                                                           \
    }

XO_CPU_INSTANTIATE(SMALL_LOOPS)

typedef struct kernels {
    void (*f)(size_t, size_t, size_t, float, const float *, size_t, int, const float *, size_t, int, float,
              float *, size_t, float *, const float *, int, int);
    void (*d)(size_t, size_t, size_t, double, const double *, size_t, int, const double *, size_t, int, double,
              double *, size_t, double *, const double *, int, int);
    void (*shortk_f)(size_t, size_t, size_t, float, const float *, size_t, size_t, const float *, size_t, float,
                     float *, size_t, const float *, int, int);
    void (*shortk_d)(size_t, size_t, size_t, double, const double *, size_t, size_t, const double *, size_t,
                     double, double *, size_t, const double *, int, int);
    /* transposed blocks: NULL where the instruction set has too few registers for them */
    void (*transp_f)(size_t, size_t, size_t, float, const float *, size_t, const float *, size_t, int, float,
                     float *, size_t, const float *, int, int);
    void (*transp_d)(size_t, size_t, size_t, double, const double *, size_t, const double *, size_t, int, double,
                     double *, size_t, const double *, int, int);
    xo__cpu_small_fn *row_f[3][8]; /* row_, by epilogue (EPI_ANY, EPI_NONE, EPI_BIAS) and vectors - 1 */
    xo__cpu_small_fn *row_d[3][8];
    void (*tiled_f)(size_t, size_t, size_t, float, const float *, size_t, size_t, const float *, size_t, float,
                    float *, size_t, const float *, int, int);
    void (*tiled_d)(size_t, size_t, size_t, double, const double *, size_t, size_t, const double *, size_t,
                    double, double *, size_t, const double *, int, int);
    void (*packt_f)(size_t, size_t, const float *, size_t, float *, size_t);
    void (*packt_d)(size_t, size_t, const double *, size_t, double *, size_t);
    size_t rowv; /* row_'s widest row, in vectors */
    size_t tmr;  /* C's rows per tile */
} kernels;
#define TABLE(F, D)                                                                                      \
    {small_##F, small_##D, shortk_##F, shortk_##D, TRANSP_##F ? transp_##F : NULL, TRANSP_##D ? transp_##D : NULL, \
     {ROW_LIST(any, F), ROW_LIST(none, F), ROW_LIST(bias, F)}, {ROW_LIST(any, D), ROW_LIST(none, D), ROW_LIST(bias, D)}, \
     tiled_##F, tiled_##D, packt_##F, packt_##D, ROWV_##F, TMR_##F}

XO_CPU_KERNELS_SELECTED(kernels, TABLE)
static const kernels *kernels_(void) { return k(); } /* k is also a dimension below */

/* Scratch elements the loops above need for a row-major m x n x k product. */
static size_t work_needed(size_t m, size_t n, size_t k, int ta, int tb, size_t lanes)
{
    if (n >= XO_SMALL_ROWS_N)
        return tb ? n * k : 0;
    if (m == 1 && !tb && n <= lanes / 2) /* narrow rows: at most NARROW padded rows of NARROW */
        return lanes / 2 * (lanes / 2);
    if (ta && m > 1) /* columns */
        return 0;
    return (tb ? 0 : n * k) + (ta ? k : 0); /* dots: B's columns, A's one row */
}

/* A column-major product as the row-major one the loops take (C^T = B^T A^T: m and n, A and
 * B, their leading dimensions and transposes trade places); 1 where it did. */
static int to_row_major(xo_layout layout, size_t *m, size_t *n, const void **a, size_t *lda, const void **b,
                        size_t *ldb, int *ta, int *tb)
{
    if (layout != XO_COL_MAJOR)
        return 0;
    size_t t = *m;
    *m = *n;
    *n = t;
    const void *p = *a;
    *a = *b;
    *b = p;
    t = *lda;
    *lda = *ldb;
    *ldb = t;
    int s = *ta;
    *ta = *tb;
    *tb = s;
    return 1;
}

/* The loops other than row_ as a resolved call's fn: the instruction set's kernel for the dtype.
 * Wide C (n >= XO_SMALL_ROWS_N), B upright: small_'s first case (k <= 4, without its dispatch)
 * or its tiles (without its prologue). */
static void run_wide(const xo__cpu_small_call *s, const void *a, const void *b, void *c, const void *bias)
{
    const kernels *kt = kernels_();
    if (s->f32)
        (s->k <= 4 ? kt->shortk_f : kt->tiled_f)(s->m, s->n, s->k, (float)s->alpha, a, s->sr, s->sp, b, s->ldb,
                                                 (float)s->beta, c, s->ldc, bias, s->by_row, s->act);
    else
        (s->k <= 4 ? kt->shortk_d : kt->tiled_d)(s->m, s->n, s->k, s->alpha, a, s->sr, s->sp, b, s->ldb, s->beta, c,
                                                 s->ldc, bias, s->by_row, s->act);
}
static void run_transp(const xo__cpu_small_call *s, const void *a, const void *b, void *c, const void *bias)
{
    if (s->f32)
        kernels_()->transp_f(s->m, s->n, s->k, (float)s->alpha, a, s->lda, b, s->ldb, s->tb, (float)s->beta, c, s->ldc,
                             bias, s->by_row, s->act);
    else
        kernels_()->transp_d(s->m, s->n, s->k, s->alpha, a, s->lda, b, s->ldb, s->tb, s->beta, c, s->ldc, bias,
                             s->by_row, s->act);
}
/* The general loops (small_), with their scratch. */
static void run_any(const xo__cpu_small_call *s, const void *a, const void *b, void *c, const void *bias)
{
    union {
        float f[XO_SMALL_WORK];
        double d[XO_SMALL_WORK];
    } w;
    if (s->f32)
        kernels_()->f(s->m, s->n, s->k, (float)s->alpha, a, s->lda, s->ta, b, s->ldb, s->tb, (float)s->beta, c, s->ldc,
                      w.f, bias, s->by_row, s->act);
    else
        kernels_()->d(s->m, s->n, s->k, s->alpha, a, s->lda, s->ta, b, s->ldb, s->tb, s->beta, c, s->ldc, w.d, bias,
                      s->by_row, s->act);
}

/* xo__cpu_small_resolve's work, inlined into the eager entry below as well. */
XO_INLINE static inline int resolve_(xo_dtype dt, xo_layout layout, xo_transpose opa, xo_transpose opb, size_t m,
                                     size_t n, size_t k, double alpha, size_t lda, size_t ldb, double beta, size_t ldc,
                                     int bias, int act, xo__cpu_small_call *out)
{
    if (k == 0 || alpha == 0 || m * n * k > XO_SMALL_MAX_FMA || (m > 32 && n > 32 && k > 32))
        return 0; /* alpha == 0: A and B are not read (xo__cpu_scale_output) */
    int ta = opa == XO_TRANS, tb = opb == XO_TRANS;
    const void *a = NULL, *b = NULL; /* swapped at each run: by_row */
    const int by_row = to_row_major(layout, &m, &n, &a, &lda, &b, &ldb, &ta, &tb); /* the bias by C^T's rows */
    const size_t lanes = dt == XO_F32 ? 16 : 8;
    const kernels *kt = kernels_();
    xo__cpu_small_fn *fn;
    if (m == 1 && n >= XO_SMALL_ROWS_N && n <= kt->rowv * lanes && !tb) { /* the row's loop for its epilogue */
        const int epi = epi_of(alpha, beta, bias ? &bias : NULL, by_row, act); /* only whether there is one */
        const size_t nv = (n + lanes - 1) / lanes;
        fn = dt == XO_F32 ? kt->row_f[epi][nv - 1] : kt->row_d[epi][nv - 1];
    } else if (n >= XO_SMALL_ROWS_N && !tb) {
        fn = run_wide;
    /* Narrow C (n <= 4) from rows of A, k <= one vector, at least a block of rows: transposed
     * blocks, which need no scratch (kernel alone, 100x3x16: 150-155 ns against 244-251 as dots and
     * 209-213 for libxsmm 1.17; xo_small_gemm, 2-core AMD EPYC, AVX-512). */
    } else if (!ta && n <= 4 && k <= lanes && m >= lanes && kt->transp_f) {
        fn = run_transp;
    /* One row of C (a gemv) runs as narrow rows, which need no copy of B: 1x3x100 59 ns
     * against 126 as dots and 248 in OpenBLAS (xo_small_gemm, 2-core AMD EPYC, AVX-512). */
    } else if (work_needed(m, n, k, ta, tb, lanes) <= XO_SMALL_WORK) {
        fn = run_any;
    } else {
        return 0;
    }
    *out = (xo__cpu_small_call){.fn = fn, .f32 = dt == XO_F32, .ta = ta, .tb = tb, .by_row = by_row, .act = act,
                                .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc, .sr = ta ? 1 : lda,
                                .sp = ta ? lda : 1, .alpha = alpha, .beta = beta};
    return 1;
}

int xo__cpu_small_resolve(xo_dtype dt, xo_layout layout, xo_transpose opa, xo_transpose opb, size_t m, size_t n,
                          size_t k, double alpha, size_t lda, size_t ldb, double beta, size_t ldc, int bias, int act,
                          xo__cpu_small_call *out)
{
    return resolve_(dt, layout, opa, opb, m, n, k, alpha, lda, ldb, beta, ldc, bias, act, out);
}

int xo__cpu_small_gemm_bias_act(xo_dtype dt, xo_layout layout, xo_transpose opa, xo_transpose opb, size_t m,
                                size_t n, size_t k, double alpha, const void *a, size_t lda, const void *b,
                                size_t ldb, double beta, void *c, size_t ldc, const void *bias, int act)
{
    xo__cpu_small_call s;
    if (!resolve_(dt, layout, opa, opb, m, n, k, alpha, lda, ldb, beta, ldc, bias != NULL, act, &s))
        return 0;
    xo__cpu_small_run(&s, a, b, c, bias);
    return 1;
}

int xo__cpu_small_gemm(xo_dtype dt, xo_layout layout, xo_transpose ta, xo_transpose tb, size_t m, size_t n,
                       size_t k, double alpha, const void *a, size_t lda, const void *b, size_t ldb, double beta,
                       void *c, size_t ldc)
{
    return xo__cpu_small_gemm_bias_act(dt, layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, NULL,
                                       XO_IDENTITY);
}

/* Medium products: multiply-adds per chunk of the pool's split, at least (about 1 us). */
#define XO_TILED_GRAIN_FMA ((size_t)1 << 18)
/* C past this stays with OpenBLAS when B does not fit XO_CPU_TILED_B_BYTES: each block of k
 * rereads the chunk of C, which must then stay in L2 too. */
#define XO_TILED_C_BYTES ((size_t)1 << 20)
/* A transposed, its rows longer than a cache line: a tile reads one line of A per step of k,
 * 8 of its elements, and again for each pair of C's vectors; blocks of k this long keep those
 * lines in L1 beside B's (256x256x10000 T N, two threads: 7.2-7.9 -> 6.7-6.9 ms). Not with
 * short rows of A (8x256x10000 T N, lda 8: 0.25-0.39 -> 0.61-0.70 ms, the blocks' epilogues). */
#define XO_TILED_KB_TA 128
/* A no larger than this is read whole by each thread of the pool, which then splits C by its
 * columns (panels of two vectors, the tiles' width) instead of its rows, unless that gives
 * one thread more of C: A stays in each core's L2, and each thread copies the panels of a
 * transposed B it reads itself. By rows (blocks of 8), C = 100x256 split 56/44 between two threads, and
 * each thread's tiles read all of a B^T copied once by the caller, half of it from the
 * other core's cache. A loop of xo_sgemm calls, 2-core AMD EPYC: 100x256x256 N T 45-46 us
 * by rows (74-75 in some processes), 32-34 by columns; N N 29 -> 26.5-27.5; the RNN at
 * batch 100 as a plan (xo_programs rnn 100 --plan) 1039-1052 -> 1158-1209 it/s. A of 256
 * KB beside B of up to XO_CPU_TILED_B_BYTES stays within one core's L2 (1 MB here). */
#define XO_TILED_COLS_A_BYTES ((size_t)256 << 10)
/* One chunk of a medium product: C's rows [8 b, 8 e), or its panels [b, e) of two vectors
 * (row-major, B upright or, with bt, B^T copied panel by panel into w), k in blocks of kb
 * rows of B. */
typedef struct tiled_job {
    xo_dtype dt;
    size_t m, n, k, kb, sr, sp, ldb, ldc, es, panel, ldbt;
    double alpha, beta;
    const char *a, *b, *bias, *bt;
    int by_row, act;
    char *c, *w;
} tiled_job;
/* C's rows [i0, i1) and columns [j0, j1) */
static void tiled_block(const tiled_job *j, size_t i0, size_t i1, size_t j0, size_t j1)
{
    const size_t es = j->es;
    char *c = j->c + (i0 * j->ldc + j0) * es;
    for (size_t p0 = 0; p0 < j->k; p0 += j->kb) { /* beta on the first block, the epilogue on the last */
        const size_t kb = j->k - p0 < j->kb ? j->k - p0 : j->kb;
        const int last = p0 + kb == j->k;
        const double beta = p0 == 0 ? j->beta : 1;
        const char *a = j->a + (i0 * j->sr + p0 * j->sp) * es, *bp = j->b + (p0 * j->ldb + j0) * es;
        const void *bias = last && j->bias ? j->bias + (j->by_row ? i0 : j0) * es : NULL;
        const int act = last ? j->act : XO_IDENTITY;
        if (j->dt == XO_F32)
            kernels_()->tiled_f(i1 - i0, j1 - j0, kb, (float)j->alpha, (const float *)a, j->sr, j->sp,
                                (const float *)bp, j->ldb, (float)beta, (float *)c, j->ldc, bias, j->by_row, act);
        else
            kernels_()->tiled_d(i1 - i0, j1 - j0, kb, j->alpha, (const double *)a, j->sr, j->sp, (const double *)bp,
                                j->ldb, beta, (double *)c, j->ldc, bias, j->by_row, act);
    }
}
/* B^T's rows [j0, j1) into w's columns [j0, j1) (k x n, rows n apart: b and ldb) */
static void pack_cols(const tiled_job *j, size_t j0, size_t j1)
{
    const char *src = j->bt + j0 * j->ldbt * j->es;
    char *dst = j->w + j0 * j->es;
    if (j->dt == XO_F32)
        kernels_()->packt_f(j1 - j0, j->k, (const float *)src, j->ldbt, (float *)dst, j->ldb);
    else
        kernels_()->packt_d(j1 - j0, j->k, (const double *)src, j->ldbt, (double *)dst, j->ldb);
}
static void tiled_rows(void *arg, size_t b, size_t e, int chunk)
{
    const tiled_job *j = arg;
    (void)chunk;
    tiled_block(j, b * 8, e * 8 < j->m ? e * 8 : j->m, 0, j->n);
}
static void tiled_cols(void *arg, size_t b, size_t e, int chunk)
{
    const tiled_job *j = arg;
    (void)chunk;
    const size_t j0 = b * j->panel, j1 = e * j->panel < j->n ? e * j->panel : j->n;
    if (j->bt)
        pack_cols(j, j0, j1);
    tiled_block(j, 0, j->m, j0, j1);
}

/* Beside OpenBLAS's Haswell kernels (the AVX2 ones, which OpenBLAS's CPU detection picks
 * on several AVX-512 cores), one core of the 2-core AMD EPYC runs these tiles at 230-240
 * GFLOP/s where OpenBLAS takes 120-130 on one thread and 190-245 on two: 100x256x256 55 us
 * against 68, 2000x64x64 66 against 108 (two threads each side's best; a harness calling
 * both on the same operands). B past 512 KB leaves L2 between tiles: 100x1024x256 at 122
 * GFLOP/s; so a larger B is taken in blocks of its rows when C is small (a product
 * accumulated over a long k, as a weight's gradient over a batch), else left to OpenBLAS.
 * B transposed is copied upright first (at most XO_CPU_TILED_B_BYTES of it). */
int xo__cpu_tiled_gemm(xo__cpu_pool *pool, xo_dtype dt, xo_layout layout, xo_transpose opa, xo_transpose opb, size_t m,
                       size_t n, size_t k, double alpha, const void *a, size_t lda, const void *b, size_t ldb,
                       double beta, void *c, size_t ldc, const void *bias, int act)
{
    const size_t es = dt == XO_F32 ? sizeof(float) : sizeof(double);
    int ta = opa == XO_TRANS, tb = opb == XO_TRANS;
    const int by_row = to_row_major(layout, &m, &n, &a, &lda, &b, &ldb, &ta, &tb); /* the bias by C^T's rows */
    const size_t b_bytes = k * n * es, kb_min = 64;
    if (kernels_()->tmr < 8 || k <= 4 || alpha == 0 || n < XO_SMALL_ROWS_N || m == 0 ||
        (b_bytes > XO_CPU_TILED_B_BYTES &&
         (tb || m * n * es > XO_TILED_C_BYTES || kb_min * n * es > XO_CPU_TILED_B_BYTES)))
        return 0;
    size_t kb = b_bytes > XO_CPU_TILED_B_BYTES ? XO_CPU_TILED_B_BYTES / (n * es) : k;
    if (ta && lda * es > 64 && kb > XO_TILED_KB_TA && m * n * es <= XO_TILED_C_BYTES)
        kb = XO_TILED_KB_TA;
    tiled_job j = {dt, m, n, k, kb, ta ? 1 : lda, ta ? lda : 1, ldb, ldc, es, 128 / es, 0, alpha, beta, a, b,
                   bias, NULL, by_row, act, c, NULL};
    if (tb) { /* B^T upright: n x k (rows ldb apart) into k x n, whole lines (the tiles' loads) */
        if (!(j.w = aligned_alloc(64, (b_bytes + 63) / 64 * 64)))
            return 0; /* OpenBLAS then */
        j.bt = b, j.ldbt = ldb, j.b = j.w, j.ldb = n;
    }
    /* by columns where each thread's share is at most as large as by rows: 200x200 is 128 of
     * 200 columns against 104 of 200 rows on the larger of two threads (xo bench's
     * sgemm200-resident, by columns: 28.0-28.2k -> 24.1-24.3k calls/s) */
    const size_t panels = (n + j.panel - 1) / j.panel, blocks = (m + 7) / 8;
    const size_t t = pool ? (size_t)xo__cpu_pool_threads(pool) : 1;
    const size_t cols = (panels + t - 1) / t * j.panel, rows = (blocks + t - 1) / t * 8;
    if (m * k * es <= XO_TILED_COLS_A_BYTES && panels > 1 && (cols < n ? cols : n) * m <= (rows < m ? rows : m) * n) {
        const size_t per_panel = m * j.panel * k, grain = (XO_TILED_GRAIN_FMA + per_panel - 1) / per_panel;
        if (pool)
            xo__cpu_parallel_for(pool, panels, grain, tiled_cols, &j);
        else
            tiled_cols(&j, 0, panels, 0);
    } else { /* by rows */
        if (j.bt)
            pack_cols(&j, 0, n);
        const size_t per_block = 8 * n * k, grain = (XO_TILED_GRAIN_FMA + per_block - 1) / per_block;
        if (pool)
            xo__cpu_parallel_for(pool, blocks, grain, tiled_rows, &j);
        else
            tiled_rows(&j, 0, blocks, 0);
    }
    free(j.w);
    return 1;
}

/* The plugin's gemm: these kernels where the product is small or medium, else OpenBLAS's. */
xo_status xo__cpu_gemm_any(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    if (xo__cpu_small_gemm(op->dtype, op->layout, op->ta, op->tb, op->m, op->n, op->k, op->alpha, xo__cpu_ptr(op, 0),
                           op->ld[0], xo__cpu_ptr(op, 1), op->ld[1], op->beta, xo__cpu_ptr(op, 2), op->ld[2]) ||
        xo__cpu_tiled_gemm(pool, op->dtype, op->layout, op->ta, op->tb, op->m, op->n, op->k, op->alpha,
                           xo__cpu_ptr(op, 0), op->ld[0], xo__cpu_ptr(op, 1), op->ld[1], op->beta, xo__cpu_ptr(op, 2),
                           op->ld[2], NULL, XO_IDENTITY))
        return XO_OK;
    return xo__cpu_gemm(host, pool, op);
}

/* A gemv as a gemm with one column: y is C (m x 1, its rows incy apart), x is B (its rows
 * incx apart); a column-major A is the row-major A^T, so its transpose flips; y = A^T x
 * over dense vectors is the row y^T = x^T A (wide C: 100x100 in 299 ns against 605 as a
 * column). Taken only where OpenBLAS's gemv starts its threads (9216 elements of A and up,
 * OpenBLAS 0.3's interface/gemv.c): their wake-up costs more than such a product, 2.7-3.5
 * us for 100x100 or 130x130 against 0.3-0.7 for these kernels or OpenBLAS on one thread
 * (xo_small_gemm's gemv lines, 2-core AMD EPYC); below it OpenBLAS's one thread is as fast
 * or faster (100x3: 77 ns against 115-150). */
int xo__cpu_small_gemv(xo_dtype dt, xo_layout layout, xo_transpose ta, size_t m, size_t n, double alpha,
                       const void *a, size_t lda, const void *x, size_t incx, double beta, void *y, size_t incy)
{
    if (m * n < 9216)
        return 0;
    if (layout == XO_COL_MAJOR) { /* A (m x n) by columns is A^T (n x m) by rows */
        size_t t = m;
        m = n;
        n = t;
        ta = ta == XO_TRANS ? XO_NO_TRANS : XO_TRANS;
    }
    if (ta != XO_TRANS)
        return xo__cpu_small_gemm(dt, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, m, 1, n, alpha, a, lda, x, incx, beta, y,
                                  incy);
    if (incx == 1 && incy == 1) /* y^T (1 x n) = x^T (1 x m) A */
        return xo__cpu_small_gemm(dt, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 1, n, m, alpha, x, m, a, lda, beta, y, n);
    return xo__cpu_small_gemm(dt, XO_ROW_MAJOR, XO_TRANS, XO_NO_TRANS, n, 1, m, alpha, a, lda, x, incx, beta, y, incy);
}

/* The plugin's gemv: these kernels where the product is small, else OpenBLAS's. */
xo_status xo__cpu_gemv_any(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    if (xo__cpu_small_gemv(op->dtype, op->layout, op->ta, op->m, op->n, op->alpha, xo__cpu_ptr(op, 0), op->ld[0],
                           xo__cpu_ptr(op, 1), op->inc[0], op->beta, xo__cpu_ptr(op, 2), op->inc[1]))
        return XO_OK;
    return xo__cpu_gemv(host, pool, op);
}
