/* CPU plugin internals. */
#ifndef XO_CPU_INTERNAL_H
#define XO_CPU_INTERNAL_H
#include <crossover/plugin.h>

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* Elements per chunk below which threading does not pay for its wake-up. */
#define XO_CPU_GRAIN ((size_t)1 << 16)

/* A small persistent pool for the elementwise loops. One op uses it at a time; a
 * caller that finds it busy runs its loop alone (never more threads than XO_THREADS). */
typedef struct xo__cpu_pool xo__cpu_pool;
typedef void (*xo__cpu_range_fn)(void *arg, size_t begin, size_t end, int chunk);
xo_status xo__cpu_pool_create(int threads, xo__cpu_pool **out);
void xo__cpu_pool_destroy(xo__cpu_pool *p);
int xo__cpu_pool_threads(const xo__cpu_pool *p);
/* Run fn over [0, n) split into at most `threads` chunks (chunk index passed), when n
 * is at least `grain`; otherwise inline on the caller. Returns the number of chunks used.
 * The test for a small n is inline, so that a tiny op calls its range function directly
 * (the compiler sees which it is); xo__cpu_pool_for splits the rest. */
int xo__cpu_pool_for(xo__cpu_pool *p, size_t n, size_t grain, xo__cpu_range_fn fn, void *arg);
static inline int xo__cpu_parallel_for(xo__cpu_pool *p, size_t n, size_t grain, xo__cpu_range_fn fn, void *arg)
{
    if (n < grain) {
        fn(arg, 0, n, 0);
        return 1;
    }
    return xo__cpu_pool_for(p, n, grain, fn, arg);
}

/* One entry per op kind (cpu_plugin.c's table): run `op` on host memory. */
typedef xo_status (*xo__cpu_op_fn)(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);

/* The op families, one file each. */
/* cpu_blas.c: OpenBLAS's routines */
xo_status xo__cpu_gemm(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
xo_status xo__cpu_gemv(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
xo_status xo__cpu_dot(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
xo_status xo__cpu_nrm2(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
xo_status xo__cpu_ger(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
/* cpu_elementwise.c: our loops, one pass over the elements */
xo_status xo__cpu_unary(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
xo_status xo__cpu_binary(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
xo_status xo__cpu_binary_scalar(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
xo_status xo__cpu_fill(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
xo_status xo__cpu_scale_by(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
xo_status xo__cpu_axpby(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
xo_status xo__cpu_axpy(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
xo_status xo__cpu_scal(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
xo_status xo__cpu_copy(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
/* y += alpha x on the calling thread, as xo__cpu_axpy computes it (element by element, the
 * same loop): the host BLAS entries' axpy, which has no pool (cpu_plugin.c). */
void xo__cpu_axpy_here(xo_dtype dt, size_t n, double alpha, const void *x, size_t incx, void *y, size_t incy);
xo_status xo__cpu_bias(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
/* cpu_reduce.c: reductions and the ops built on them */
xo_status xo__cpu_reduce(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
xo_status xo__cpu_reduce_axis(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
xo_status xo__cpu_softmax(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
xo_status xo__cpu_softmax_xent(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
xo_status xo__cpu_argmax(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
/* cpu_fused.c: gemm with its epilogue */
xo_status xo__cpu_gemm_bias_act(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
/* cpu_small.c: C = alpha op(A) op(B) + beta C when it is too small for OpenBLAS's general
 * path (pointers at the first elements); 0, and nothing done, when it is not. */
int xo__cpu_small_gemm(xo_dtype dt, xo_layout layout, xo_transpose ta, xo_transpose tb, size_t m, size_t n,
                       size_t k, double alpha, const void *a, size_t lda, const void *b, size_t ldb, double beta,
                       void *c, size_t ldc);
/* The same with gemm_bias_act's epilogue: C = act(alpha op(A) op(B) + beta C + bias), bias[j]
 * for C's column j (NULL: none), act an xo_unary_op (XO_IDENTITY: none). */
int xo__cpu_small_gemm_bias_act(xo_dtype dt, xo_layout layout, xo_transpose ta, xo_transpose tb, size_t m,
                                size_t n, size_t k, double alpha, const void *a, size_t lda, const void *b,
                                size_t ldb, double beta, void *c, size_t ldc, const void *bias, int act);
/* The same in two steps, as libxsmm's dispatch and call: the loop and its arguments chosen
 * once for a shape and its scalars (0: not small; what xo__cpu_small_gemm_bias_act then
 * declines), then run on operands at any addresses (a plan's resolved steps, the "xo_resolve"
 * extra of cpu_plugin.c). Eager calls go through both. */
struct xo__cpu_small_call;
typedef void xo__cpu_small_fn(const struct xo__cpu_small_call *call, const void *a, const void *b, void *c,
                              const void *bias);
typedef struct xo__cpu_small_call {
    xo__cpu_small_fn *fn;         /* the loop (A and B traded places where by_row) */
    int f32, ta, tb, by_row, act; /* row-major after the layout swap; by_row: it swapped */
    size_t m, n, k, lda, ldb, ldc, sr, sp;
    double alpha, beta;
} xo__cpu_small_call;
int xo__cpu_small_resolve(xo_dtype dt, xo_layout layout, xo_transpose ta, xo_transpose tb, size_t m, size_t n,
                          size_t k, double alpha, size_t lda, size_t ldb, double beta, size_t ldc, int bias, int act,
                          xo__cpu_small_call *out);
static inline void xo__cpu_small_run(const xo__cpu_small_call *call, const void *a, const void *b, void *c,
                                     const void *bias) /* bias: given iff the call was resolved with one */
{
    if (call->by_row) /* column-major: C^T = B^T A^T */
        call->fn(call, b, a, c, bias);
    else
        call->fn(call, a, b, c, bias);
}
/* Medium products with AVX-512: the tiles of cpu_small.c over blocks of C's rows, split over
 * the pool (NULL: the caller alone), with gemm_bias_act's epilogue (bias, act as in
 * xo__cpu_small_gemm_bias_act) applied in registers. B (after the layout swap) up to
 * XO_CPU_TILED_B_BYTES stays in L2 while every tile of C's rows reads it; a larger upright B
 * is taken in blocks of its rows when C is at most 1 MB; a transposed B (up to the same
 * size) is copied upright first. 0, and nothing done, where it does not apply (OpenBLAS
 * then). */
#define XO_CPU_TILED_B_BYTES ((size_t)512 << 10)
int xo__cpu_tiled_gemm(xo__cpu_pool *pool, xo_dtype dt, xo_layout layout, xo_transpose ta, xo_transpose tb, size_t m,
                       size_t n, size_t k, double alpha, const void *a, size_t lda, const void *b, size_t ldb,
                       double beta, void *c, size_t ldc, const void *bias, int act);
xo_status xo__cpu_gemm_any(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op); /* or OpenBLAS */
/* y = alpha op(A) x + beta y through the same kernels (a gemm with one column); 0, and
 * nothing done, when it is not small. */
int xo__cpu_small_gemv(xo_dtype dt, xo_layout layout, xo_transpose ta, size_t m, size_t n, double alpha,
                       const void *a, size_t lda, const void *x, size_t incx, double beta, void *y, size_t incy);
xo_status xo__cpu_gemv_any(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op); /* or OpenBLAS */
/* cpu_chain.c: the "xo_chain" extra (a plan's element-wise chain as one blocked pass) */
int xo__cpu_chain_supports(const xo_chain *chain, size_t min_n); /* 1: runs it, n >= min_n */
extern size_t xo__cpu_chain_min_n; /* shorter chains run op by op */
extern size_t xo__cpu_chain_block; /* elements per block */
xo_status xo__cpu_chain_run(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_chain *chain);

/* Shared by the family files (cpu_blas.c). */
static inline void *xo__cpu_ptr(const xo_op_desc *op, int i) /* operand i's first element */
{
    size_t es = op->dtype == XO_F64 ? sizeof(double) : sizeof(float);
    return (char *)op->arg[i].host + op->arg[i].off * es;
}
void xo__cpu_store(const xo_op_desc *op, int i, double v);   /* operand i's first element = v */
int xo__cpu_fits_int(const xo_op_desc *op);                  /* every dimension fits BLAS's int */
void xo__cpu_scale_output(const xo_op_desc *op);             /* C = beta C etc. without reading A, B, x */
int xo__cpu_isa(void);                                       /* 0 baseline, 1 AVX2+FMA, 2 AVX-512 */
extern int xo__cpu_isa_limit; /* white-box: the kernels of at most this set (tests of the others) */
xo_status xo__cpu_too_big(const xo_plugin_host *host);       /* the error when !xo__cpu_fits_int */
/* The selected loops (cpu_elementwise.c, cpu_reduce.c): y = op(x) (y may be x); rows
 * [r0, r1) of a += bias; c = a op b (c may be a or b); c = a op s (c may be a); XO_SUM or
 * XO_MAX_ELEMENT of n >= 1 contiguous elements. */
void xo__cpu_unary_loop(xo_dtype dt, int op, const void *x, void *y, size_t n);
void xo__cpu_binary_loop(xo_dtype dt, int op, const void *a, const void *b, void *c, size_t n);
void xo__cpu_bias_rows(xo_dtype dt, void *a, size_t lda, const void *bias, size_t r0, size_t r1, size_t cols);
void xo__cpu_bscalar_loop(xo_dtype dt, int op, const void *a, double s, void *c, size_t n);
double xo__cpu_reduce_loop(xo_dtype dt, int op, const void *x, size_t n);

/* Kernels are compiled for baseline x86-64, AVX2 and AVX-512 and chosen once, from what
 * the CPU reports (xo__cpu_isa). A family file writes its loops as one template
 * TEMPLATE(T, SUF, ATTR) and instantiates it with XO_CPU_INSTANTIATE: suffixes f and d,
 * f_avx2 and d_avx2, f_avx512 and d_avx512. (Chosen by hand rather than by GCC's
 * target_clones: its ifunc resolvers run during relocation, which crashes under
 * ThreadSanitizer and does not exist on every libc.) */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define XO_CPU_AVX2 __attribute__((target("avx2,fma")))
#define XO_CPU_AVX512 __attribute__((target("avx512f,avx2,fma")))
#define XO_CPU_INSTANTIATE(TEMPLATE)                                                                     \
    TEMPLATE(float, f, ) TEMPLATE(double, d, ) TEMPLATE(float, f_avx2, XO_CPU_AVX2)                      \
    TEMPLATE(double, d_avx2, XO_CPU_AVX2) TEMPLATE(float, f_avx512, XO_CPU_AVX512)                       \
    TEMPLATE(double, d_avx512, XO_CPU_AVX512)
/* var = TABLE(f, d) at baseline, or the AVX2 or AVX-512 instantiation. */
#define XO_CPU_SELECT(var, TYPE, TABLE)                                                                  \
    do {                                                                                                 \
        int isa_ = xo__cpu_isa();                                                                        \
        if (isa_ == 2)                                                                                   \
            var = (TYPE)TABLE(f_avx512, d_avx512);                                                       \
        else if (isa_ == 1)                                                                              \
            var = (TYPE)TABLE(f_avx2, d_avx2);                                                           \
    } while (0)
#else
#define XO_CPU_INSTANTIATE(TEMPLATE) TEMPLATE(float, f, ) TEMPLATE(double, d, )
#define XO_CPU_SELECT(var, TYPE, TABLE) ((void)0)
#endif

/* A family file's kernels: the table TYPE g_k, TABLE(f, d) until the first use, then the
 * instantiation for the CPU's instruction set; k() returns it. Once chosen, g_chosen says
 * so (release; k() reads it with acquire), and k() no longer calls pthread_once: a tiny
 * op reaches its loop through k() once or twice per call. */
#define XO_CPU_KERNELS_SELECTED(TYPE, TABLE)                                                             \
    static TYPE g_k = TABLE(f, d);                                                                       \
    static pthread_once_t g_once = PTHREAD_ONCE_INIT;                                                    \
    static _Atomic int g_chosen;                                                                         \
    static void select_kernels(void)                                                                     \
    {                                                                                                    \
        XO_CPU_SELECT(g_k, TYPE, TABLE);                                                                 \
        atomic_store_explicit(&g_chosen, 1, memory_order_release);                                       \
    }                                                                                                    \
    static const TYPE *k(void)                                                                           \
    {                                                                                                    \
        if (__builtin_expect(!atomic_load_explicit(&g_chosen, memory_order_acquire), 0))                \
            pthread_once(&g_once, select_kernels);                                                       \
        return &g_k;                                                                                     \
    }

/* The math of plugins/common/xo_formulas.h for float and double (the float ones are
 * vectorisable, below). */
#define XO_FN_EXP(x) _Generic((x), float: xo__cpu_expf, default: exp)(x)
#define XO_FN_TANH(x) _Generic((x), float: xo__cpu_tanhf, default: tanh)(x)
#define XO_FN_SQRT(x) _Generic((x), float: sqrtf, default: sqrt)(x)
#define XO_FN_RSQRT(x) (1 / XO_FN_SQRT(x))
#define XO_FN_LOG(x) _Generic((x), float: logf, default: log)(x)
#define XO_FN_FABS(x) _Generic((x), float: fabsf, default: fabs)(x)

/* Float exp and tanh the compiler can vectorise (libm's expf/tanhf are scalar calls, which
 * made our tanh slower than PoCL's on the same cores and pulled large elementwise ops off
 * the CPU). expf: Cephes-style range reduction and polynomial, max relative error ~1.4e-7
 * (measured over the whole float range against double-precision libm); the conformance
 * suite checks every unary op against its reference loops on every device. */
static inline float xo__cpu_expf(float x)
{
    const float in = x;
    /* Written so that NaN fails both tests and lands on a finite value (the result is
     * replaced by NaN at the end): the conversion to int below must see finite values. */
    x = x > -104.0f ? x : -104.0f; /* underflows to 0 */
    x = x < 89.0f ? x : 89.0f;     /* overflows to inf, as expf does */
    const float shifter = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float fn = (x * 1.44269504088896341f + shifter) - shifter;
    float g = x - fn * 0.693359375f - fn * -2.12194440e-4f;
    float p = (((((1.9875691500e-4f * g + 1.3981999507e-3f) * g + 8.3334519073e-3f) * g + 4.1665795894e-2f) * g +
                1.6666665459e-1f) * g + 5.0000001201e-1f) * (g * g) + g + 1.0f;
    /* 2^n in two halves so that n = 128 and the denormal range stay exact; n is in
     * [-150, 128], so both biased exponents are positive. */
    int32_t n = (int32_t)fn, h = n / 2;
    uint32_t b1 = (uint32_t)(h + 127) << 23, b2 = (uint32_t)(n - h + 127) << 23;
    float s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    float r = p * s1 * s2;
    return in != in ? in : r; /* NaN in, NaN out */
}

/* Float tanh the compiler can vectorise, without expf: Eigen's 13/6 rational
 * approximation (generic_fast_tanh_float) of tanh on [-7.905, 7.905], where it reaches
 * +-1 in float, and x itself below 4e-4 (where the polynomial would underflow on
 * denormals). One division and 11 multiply-adds: about half the time of 1 - 2/(e^2x + 1)
 * with our expf (0.23 against 0.40 ns per element, one AVX-512 core), which made a fused
 * chain with a tanh compute-bound. Max relative error 3.9e-7 over the float range
 * (against double tanh); NaN stays NaN (the last line), +-inf gives +-1. The clamps are
 * written x < K ? x : K: in the form x > K ? K : x (which kept NaN by itself) GCC split
 * the vector loop into masked paths with two divisions per vector (0.22-0.25 against
 * 0.195 ns per element now, one AVX-512 core). */
#define XO_TANHF_CLAMP 7.90531110763549805f
#define XO_TANHF_SMALL 0.0004f /* below this, x itself */
/* The rational approximation's numerator (times c) and denominator in z = c^2, for a float
 * or a float vector (cpu_small.c's vtanhf_ takes the same on whole vectors). */
#define XO_TANHF_P(z)                                                                                    \
    ((((((-2.76076847742355e-16f * (z) + 2.00018790482477e-13f) * (z) - 8.60467152213735e-11f) * (z) +  \
        5.12229709037114e-08f) * (z) + 1.48572235717979e-05f) * (z) + 6.37261928875436e-04f) * (z) +     \
     4.89352455891786e-03f)
#define XO_TANHF_Q(z)                                                                                    \
    (((1.19825839466702e-06f * (z) + 1.18534705686654e-04f) * (z) + 2.26843463243900e-03f) * (z) +       \
     4.89352518554385e-03f)
static inline float xo__cpu_tanhf(float x)
{
    float c = x < XO_TANHF_CLAMP ? x : XO_TANHF_CLAMP;
    c = c > -XO_TANHF_CLAMP ? c : -XO_TANHF_CLAMP;
    float z = c * c;
    float r = XO_TANHF_P(z) * c / XO_TANHF_Q(z);
    return !(fabsf(x) >= XO_TANHF_SMALL) ? x : r; /* |x| small, or NaN: x itself */
}

/* The same on 16 floats with AVX-512, written with its instructions: past the clamp (and
 * for infinities) +-1 by one select, small inputs and NaN x itself by another, the formula
 * left unclamped in the lanes they replace. GCC vectorises xo__cpu_tanhf with masked
 * multiply-adds, mask arithmetic and three selects: over 1600 floats in L1 (the neural
 * ODE's hidden layer), one core of a Zen 4, 0.33 ns per element so (0.31 with the one
 * select above), 0.27 here; glibc's vector tanhf, which -O3 -march=native -ffast-math
 * calls, 0.39. Past the clamp this gives +-1 where the scalar form gives the formula at
 * the clamp (1 - 2.4e-7 with fused multiply-adds; tanh there is 1 - 2.7e-7). Used by the
 * unary loop (XO_CPU_TANH_LOOP), the fused chains and cpu_small.c's epilogues. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline __m512 xo__cpu_tanhf16(__m512 x)
{
    typedef float v16 __attribute__((vector_size(64)));
    const __m512 ax = _mm512_abs_ps(x);
    const v16 c = (v16)x, z = c * c;
    __m512 r = _mm512_div_ps((__m512)(XO_TANHF_P(z) * c), (__m512)XO_TANHF_Q(z));
    const __m512i one = _mm512_ternarylogic_epi32(_mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000u),
                                                  _mm512_castps_si512(_mm512_set1_ps(1.0f)), 0xEA); /* x&sign | 1 */
    r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(ax, _mm512_set1_ps(XO_TANHF_CLAMP), _CMP_GE_OQ),
                           _mm512_castsi512_ps(one));
    return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(ax, _mm512_set1_ps(XO_TANHF_SMALL), _CMP_NGE_UQ), x);
}
/* y = tanh(x) over n floats (y may be x), the last partial vector masked */
__attribute__((target("avx512f,avx2,fma"))) static inline void xo__cpu_tanhf_avx512(const float *x, float *y,
                                                                                     size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, xo__cpu_tanhf16(_mm512_loadu_ps(x + i)));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, m, xo__cpu_tanhf16(_mm512_maskz_loadu_ps(m, x + i)));
    }
}
/* XO_CPU_TANH_LOOP_##SUF(x, y, n): 1 after the float tanh loop above where the instantiation
 * SUF has it (f_avx512), else 0 without evaluating anything. */
#define XO_CPU_TANH_LOOP_f_avx512(x, y, n) (xo__cpu_tanhf_avx512((x), (y), (n)), 1)
#endif
#define XO_CPU_TANH_LOOP_f(x, y, n) 0
#define XO_CPU_TANH_LOOP_d(x, y, n) 0
#define XO_CPU_TANH_LOOP_f_avx2(x, y, n) 0
#define XO_CPU_TANH_LOOP_d_avx2(x, y, n) 0
#define XO_CPU_TANH_LOOP_d_avx512(x, y, n) 0
#endif
