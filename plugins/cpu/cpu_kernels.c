/* CPU ops: OpenBLAS for the BLAS ones, plain loops (vectorised by the compiler, split
 * over the pool when large) for unary, binary, bias and reduce. */
#include "cpu_internal.h"

#include <cblas.h>
#include "cpu_openblas.h" /* after cblas.h: how OpenBLAS is reached */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

/* Float tanh the compiler can vectorise (see xo__cpu_expf in cpu_internal.h). */
static inline float xo__cpu_tanhf(float x)
{
    float a = fabsf(x), z = x * x;
    float small = ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z + 1.33314422036e-1f) * z -
                   3.33332819422e-1f) * z * x + x;
    float big = copysignf(1.0f - 2.0f / (xo__cpu_expf(2.0f * a) + 1.0f), x);
    return a < 0.625f ? small : big;
}

/* The elementwise kernels exist in float and double; one template, two expansions
 * (and more per instruction set, below). */
#define XO_CPU_ELEMENTWISE(T, SUF, TANH, EXP, SQRT, LOG, FABS, ATTR)                                                  \
    ATTR static void unary_##SUF(int op, const T *x, T *y, size_t n) /* y may be x */                \
    {                                                                                                \
        switch (op) {                                                                                \
        case XO_RELU: for (size_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : (T)0; break;           \
        case XO_TANH: for (size_t i = 0; i < n; i++) y[i] = TANH(x[i]); break;                       \
        case XO_SIGMOID: for (size_t i = 0; i < n; i++) y[i] = (T)1 / ((T)1 + EXP(-x[i])); break;    \
        case XO_EXP: for (size_t i = 0; i < n; i++) y[i] = EXP(x[i]); break;                         \
        case XO_NEG: for (size_t i = 0; i < n; i++) y[i] = -x[i]; break;                             \
        case XO_SQUARE: for (size_t i = 0; i < n; i++) y[i] = x[i] * x[i]; break;                    \
        case XO_RELU_GRAD: for (size_t i = 0; i < n; i++) y[i] = x[i] > 0 ? (T)1 : (T)0; break;      \
        case XO_TANH_GRAD: for (size_t i = 0; i < n; i++) y[i] = (T)1 - x[i] * x[i]; break;          \
        case XO_SIGMOID_GRAD: for (size_t i = 0; i < n; i++) y[i] = x[i] * ((T)1 - x[i]); break;     \
        case XO_SQRT: for (size_t i = 0; i < n; i++) y[i] = SQRT(x[i]); break;                       \
        case XO_RSQRT: for (size_t i = 0; i < n; i++) y[i] = (T)1 / SQRT(x[i]); break;               \
        case XO_LOG: for (size_t i = 0; i < n; i++) y[i] = LOG(x[i]); break;                         \
        case XO_ABS: for (size_t i = 0; i < n; i++) y[i] = FABS(x[i]); break;                        \
        case XO_RECIPROCAL: for (size_t i = 0; i < n; i++) y[i] = (T)1 / x[i]; break;                \
        case XO_IDENTITY: if (y != x) memcpy(y, x, n * sizeof(T)); break;                            \
        }                                                                                            \
    }                                                                                                \
    ATTR static void binary_##SUF(int op, const T *a, const T *b, T *c, size_t n)                    \
    {                                                                                                \
        switch (op) {                                                                                \
        case XO_ADD: for (size_t i = 0; i < n; i++) c[i] = a[i] + b[i]; break;                       \
        case XO_SUB: for (size_t i = 0; i < n; i++) c[i] = a[i] - b[i]; break;                       \
        case XO_MUL: for (size_t i = 0; i < n; i++) c[i] = a[i] * b[i]; break;                       \
        case XO_DIV: for (size_t i = 0; i < n; i++) c[i] = a[i] / b[i]; break;                       \
        case XO_MAX: for (size_t i = 0; i < n; i++) c[i] = a[i] > b[i] ? a[i] : b[i]; break;         \
        }                                                                                            \
    }                                                                                                \
    ATTR static void bias_rows_##SUF(T *a, size_t lda, const T *restrict bias, size_t r0, size_t r1, \
                                              size_t cols)                                           \
    {                                                                                                \
        for (size_t r = r0; r < r1; r++) {                                                           \
            T *row = a + r * lda;                                                                    \
            for (size_t j = 0; j < cols; j++) row[j] += bias[j];                                     \
        }                                                                                            \
    }                                                                                                \
    ATTR static double sum_##SUF(const T *x, size_t n)                                               \
    {                                                                                                \
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                                       \
        size_t i = 0;                                                                                \
        for (; i + 4 <= n; i += 4) {                                                                 \
            s0 += x[i];                                                                              \
            s1 += x[i + 1];                                                                          \
            s2 += x[i + 2];                                                                          \
            s3 += x[i + 3];                                                                          \
        }                                                                                            \
        for (; i < n; i++) s0 += x[i];                                                               \
        return (s0 + s1) + (s2 + s3);                                                                \
    }                                                                                                \
    ATTR static T max_##SUF(const T *x, size_t n)                                                    \
    {                                                                                                \
        T m = x[0];                                                                                  \
        for (size_t i = 1; i < n; i++) m = x[i] > m ? x[i] : m;                                      \
        return m;                                                                                    \
    }

XO_CPU_ELEMENTWISE(float, f, xo__cpu_tanhf, xo__cpu_expf, sqrtf, logf, fabsf, )
XO_CPU_ELEMENTWISE(double, d, tanh, exp, sqrt, log, fabs, )

/* The build targets baseline x86-64, whose SSE2 made float tanh cost ~2 ns an element; the
 * same loops are compiled again for AVX2 and AVX-512 and chosen once, at the first
 * elementwise op, from what the CPU reports. (Chosen by hand rather than by GCC's
 * target_clones: its ifunc resolvers run during relocation, which crashes under
 * ThreadSanitizer and does not exist on every libc.) */
typedef struct cpu_kernels {
    void (*unary_f)(int, const float *, float *, size_t);
    void (*unary_d)(int, const double *, double *, size_t);
    void (*binary_f)(int, const float *, const float *, float *, size_t);
    void (*binary_d)(int, const double *, const double *, double *, size_t);
    void (*bias_f)(float *, size_t, const float *, size_t, size_t, size_t);
    void (*bias_d)(double *, size_t, const double *, size_t, size_t, size_t);
    double (*sum_f)(const float *, size_t);
    double (*sum_d)(const double *, size_t);
    float (*max_f)(const float *, size_t);
    double (*max_d)(const double *, size_t);
} cpu_kernels;

#define XO_CPU_KERNELS(F, D) {unary_##F, unary_##D, binary_##F, binary_##D, bias_rows_##F, bias_rows_##D, \
                              sum_##F, sum_##D, max_##F, max_##D}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define XO_CPU_AVX2 __attribute__((target("avx2,fma")))
#define XO_CPU_AVX512 __attribute__((target("avx512f,avx2,fma")))
XO_CPU_ELEMENTWISE(float, f_avx2, xo__cpu_tanhf, xo__cpu_expf, sqrtf, logf, fabsf, XO_CPU_AVX2)
XO_CPU_ELEMENTWISE(double, d_avx2, tanh, exp, sqrt, log, fabs, XO_CPU_AVX2)
XO_CPU_ELEMENTWISE(float, f_avx512, xo__cpu_tanhf, xo__cpu_expf, sqrtf, logf, fabsf, XO_CPU_AVX512)
XO_CPU_ELEMENTWISE(double, d_avx512, tanh, exp, sqrt, log, fabs, XO_CPU_AVX512)
#endif

static cpu_kernels g_kernels = XO_CPU_KERNELS(f, d);
static pthread_once_t g_kernels_once = PTHREAD_ONCE_INIT;
static int g_isa; /* 0 baseline, 1 AVX2, 2 AVX-512 */

static void select_kernels(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        g_kernels = (cpu_kernels)XO_CPU_KERNELS(f_avx512, d_avx512);
        g_isa = 2;
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        g_kernels = (cpu_kernels)XO_CPU_KERNELS(f_avx2, d_avx2);
        g_isa = 1;
    }
#endif
}

#define XO_CPU_MAX_CHUNKS 64
typedef struct range_job {
    const xo_op_desc *op;
    void *p[3];
    double partial[XO_CPU_MAX_CHUNKS];
} range_job;

static void unary_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    range_job *j = arg;
    if (j->op->dtype == XO_F32)
        g_kernels.unary_f(j->op->subop, (const float *)j->p[0] + b, (float *)j->p[1] + b, e - b);
    else
        g_kernels.unary_d(j->op->subop, (const double *)j->p[0] + b, (double *)j->p[1] + b, e - b);
}

static void binary_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    range_job *j = arg;
    if (j->op->dtype == XO_F32)
        g_kernels.binary_f(j->op->subop, (const float *)j->p[0] + b, (const float *)j->p[1] + b, (float *)j->p[2] + b, e - b);
    else
        g_kernels.binary_d(j->op->subop, (const double *)j->p[0] + b, (const double *)j->p[1] + b, (double *)j->p[2] + b,
                 e - b);
}

static void bias_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    range_job *j = arg;
    if (j->op->dtype == XO_F32)
        g_kernels.bias_f(j->p[0], j->op->ld[0], j->p[1], b, e, j->op->n);
    else
        g_kernels.bias_d(j->p[0], j->op->ld[0], j->p[1], b, e, j->op->n);
}

static void reduce_range(void *arg, size_t b, size_t e, int c)
{
    range_job *j = arg;
    int sum = j->op->subop == XO_SUM;
    if (j->op->dtype == XO_F32)
        j->partial[c] = sum ? g_kernels.sum_f((const float *)j->p[0] + b, e - b)
                            : g_kernels.max_f((const float *)j->p[0] + b, e - b);
    else
        j->partial[c] = sum ? g_kernels.sum_d((const double *)j->p[0] + b, e - b)
                            : g_kernels.max_d((const double *)j->p[0] + b, e - b);
}

void *xo__cpu_ptr(const xo_op_desc *op, int i)
{
    size_t es = op->dtype == XO_F64 ? sizeof(double) : sizeof(float);
    return (char *)op->arg[i].host + op->arg[i].off * es;
}
#define ptr xo__cpu_ptr

void xo__cpu_store(const xo_op_desc *op, int i, double v)
{
    if (op->dtype == XO_F32)
        *(float *)ptr(op, i) = (float)v;
    else
        *(double *)ptr(op, i) = v;
}
#define store xo__cpu_store

/* The selected loops, for the other kernel files. */
static const cpu_kernels *kernels(void)
{
    pthread_once(&g_kernels_once, select_kernels);
    return &g_kernels;
}
int xo__cpu_isa(void)
{
    pthread_once(&g_kernels_once, select_kernels);
    return g_isa;
}
void xo__cpu_unary(xo_dtype dt, int op, const void *x, void *y, size_t n)
{
    if (dt == XO_F32)
        kernels()->unary_f(op, x, y, n);
    else
        kernels()->unary_d(op, x, y, n);
}
void xo__cpu_bias_rows(xo_dtype dt, void *a, size_t lda, const void *bias, size_t r0, size_t r1, size_t cols)
{
    if (dt == XO_F32)
        kernels()->bias_f(a, lda, bias, r0, r1, cols);
    else
        kernels()->bias_d(a, lda, bias, r0, r1, cols);
}
double xo__cpu_reduce(xo_dtype dt, int op, const void *x, size_t n)
{
    if (dt == XO_F32)
        return op == XO_SUM ? kernels()->sum_f(x, n) : kernels()->max_f(x, n);
    return op == XO_SUM ? kernels()->sum_d(x, n) : kernels()->max_d(x, n);
}

/* C = beta*C (gemm and gemm_bias_act with k == 0 or alpha == 0), y = beta*y (gemv with
 * alpha == 0) or x = 0 (scal with alpha == 0), without reading A, B or x (see
 * xo_scale_view). OpenBLAS is not asked: its gemm reads A and B with alpha == 0 on some
 * paths, and newer versions keep NaN in scal by 0. A factor of 0 writes zeros without
 * reading. */
void xo__cpu_scale_output(const xo_op_desc *op)
{
    const xo_scale_view v = xo_op_scale_view(op);
    for (size_t r = 0; r < v.rows; r++) {
        if (op->dtype == XO_F32) {
            float *c = (float *)ptr(op, v.arg) + r * v.ld;
            for (size_t j = 0; j < v.cols; j++) c[j] = v.factor == 0 ? 0.0f : (float)v.factor * c[j];
        } else {
            double *c = (double *)ptr(op, v.arg) + r * v.ld;
            for (size_t j = 0; j < v.cols; j++) c[j] = v.factor == 0 ? 0.0 : v.factor * c[j];
        }
    }
}

int xo__cpu_fits_int(const xo_op_desc *op)
{
    /* OR of every dimension: one comparison instead of eight. */
    size_t all = op->m | op->n | op->k | op->ld[0] | op->ld[1] | op->ld[2] | op->inc[0] | op->inc[1];
    return all <= (size_t)INT_MAX;
}

static xo_status run_blas(const xo_plugin_host *host, const xo_op_desc *op)
{
    if (!xo__cpu_fits_int(op))
        return host->set_error(XO_ERR_UNSUPPORTED, "cpu plugin: a dimension exceeds OpenBLAS's 32-bit integers");
    const int s = op->dtype == XO_F32;
    const int m = (int)op->m, n = (int)op->n, k = (int)op->k;
    const int ix = (int)op->inc[0], iy = (int)op->inc[1];
    const enum CBLAS_ORDER lay = (enum CBLAS_ORDER)op->layout;
    const enum CBLAS_TRANSPOSE ta = (enum CBLAS_TRANSPOSE)op->ta, tb = (enum CBLAS_TRANSPOSE)op->tb;
    switch (op->kind) {
    case XO_OP_GEMM:
        if (k == 0 || op->alpha == 0)
            xo__cpu_scale_output(op);
        else if (s)
            cblas_sgemm(lay, ta, tb, m, n, k, (float)op->alpha, ptr(op, 0), (int)op->ld[0], ptr(op, 1),
                        (int)op->ld[1], (float)op->beta, ptr(op, 2), (int)op->ld[2]);
        else
            cblas_dgemm(lay, ta, tb, m, n, k, op->alpha, ptr(op, 0), (int)op->ld[0], ptr(op, 1), (int)op->ld[1],
                        op->beta, ptr(op, 2), (int)op->ld[2]);
        break;
    case XO_OP_GEMV:
        if (s)
            cblas_sgemv(lay, ta, m, n, (float)op->alpha, ptr(op, 0), (int)op->ld[0], ptr(op, 1), ix, (float)op->beta,
                        ptr(op, 2), iy);
        else
            cblas_dgemv(lay, ta, m, n, op->alpha, ptr(op, 0), (int)op->ld[0], ptr(op, 1), ix, op->beta, ptr(op, 2),
                        iy);
        break;
    case XO_OP_AXPY:
        if (s)
            cblas_saxpy(n, (float)op->alpha, ptr(op, 0), ix, ptr(op, 1), iy);
        else
            cblas_daxpy(n, op->alpha, ptr(op, 0), ix, ptr(op, 1), iy);
        break;
    case XO_OP_SCAL:
        if (op->alpha == 0)
            xo__cpu_scale_output(op);
        else if (s)
            cblas_sscal(n, (float)op->alpha, ptr(op, 0), ix);
        else
            cblas_dscal(n, op->alpha, ptr(op, 0), ix);
        break;
    case XO_OP_DOT:
        store(op, 2, n == 0 ? 0.0 : s ? (double)cblas_sdot(n, ptr(op, 0), ix, ptr(op, 1), iy)
                                      : cblas_ddot(n, ptr(op, 0), ix, ptr(op, 1), iy));
        break;
    case XO_OP_NRM2:
        store(op, 1, n == 0 ? 0.0 : s ? (double)cblas_snrm2(n, ptr(op, 0), ix) : cblas_dnrm2(n, ptr(op, 0), ix));
        break;
    default:
        return host->set_error(XO_ERR_UNSUPPORTED, "cpu plugin: op kind %d is not a BLAS op", (int)op->kind);
    }
    return XO_OK;
}

xo_status xo__cpu_run(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    if (op->kind < XO_OP_UNARY) /* gemm .. nrm2: straight to OpenBLAS */
        return run_blas(host, op);
    if (op->kind >= XO_OP_COPY) /* the 0.3 ops: cpu_nn.c */
        return xo__cpu_run_nn(host, pool, op);
    pthread_once(&g_kernels_once, select_kernels);
    range_job j; /* partial[] is written before it is read: no need to clear it */
    j.op = op;
    for (int i = 0; i < op->narg; i++)
        j.p[i] = ptr(op, i);
    switch (op->kind) {
    case XO_OP_UNARY: xo__cpu_parallel_for(pool, op->n, XO_CPU_GRAIN, unary_range, &j); return XO_OK;
    case XO_OP_BINARY: xo__cpu_parallel_for(pool, op->n, XO_CPU_GRAIN, binary_range, &j); return XO_OK;
    case XO_OP_BIAS: {
        size_t rows_grain = XO_CPU_GRAIN / (op->n ? op->n : 1);
        xo__cpu_parallel_for(pool, op->m, rows_grain ? rows_grain : 1, bias_range, &j);
        return XO_OK;
    }
    case XO_OP_REDUCE: {
        if (op->n == 0) {
            store(op, 1, 0.0);
            return XO_OK;
        }
        int chunks = xo__cpu_parallel_for(pool, op->n, XO_CPU_GRAIN, reduce_range, &j);
        double r = j.partial[0];
        for (int c = 1; c < chunks; c++)
            r = op->subop == XO_SUM ? r + j.partial[c] : (j.partial[c] > r ? j.partial[c] : r);
        store(op, 1, r);
        return XO_OK;
    }
    default: return run_blas(host, op);
    }
}
