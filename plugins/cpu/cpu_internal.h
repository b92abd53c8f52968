/* CPU plugin internals. */
#ifndef XO_CPU_INTERNAL_H
#define XO_CPU_INTERNAL_H
#include <crossover/plugin.h>

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
 * is at least `grain`; otherwise inline on the caller. Returns the number of chunks used. */
int xo__cpu_parallel_for(xo__cpu_pool *p, size_t n, size_t grain, xo__cpu_range_fn fn, void *arg);

/* Run one op on host memory. */
xo_status xo__cpu_run(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);
/* The 0.3 ops (copy .. gemm_bias_act): cpu_nn.c. */
xo_status xo__cpu_run_nn(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op);

/* Shared by the kernel files (cpu_kernels.c). */
void *xo__cpu_ptr(const xo_op_desc *op, int i);               /* operand i's first element */
void xo__cpu_store(const xo_op_desc *op, int i, double v);    /* operand i's first element = v */
int xo__cpu_fits_int(const xo_op_desc *op);                   /* every dimension fits BLAS's int */
void xo__cpu_scale_output(const xo_op_desc *op);              /* C = beta C etc. without reading A, B, x */
int xo__cpu_isa(void);                                        /* 0 baseline, 1 AVX2+FMA, 2 AVX-512 */
/* The selected elementwise loops: y = op(x) (y may be x); rows [r0, r1) of a += bias;
 * XO_SUM or XO_MAX_ELEMENT of n >= 1 contiguous elements. */
void xo__cpu_unary(xo_dtype dt, int op, const void *x, void *y, size_t n);
void xo__cpu_bias_rows(xo_dtype dt, void *a, size_t lda, const void *bias, size_t r0, size_t r1, size_t cols);
double xo__cpu_reduce(xo_dtype dt, int op, const void *x, size_t n);

/* Float exp and tanh the compiler can vectorise (libm's expf/tanhf are scalar calls, which
 * made our tanh slower than PoCL's on the same cores and pulled large elementwise ops off
 * the CPU). Cephes-style range reduction and polynomials; max relative error ~1.4e-7
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
#endif
