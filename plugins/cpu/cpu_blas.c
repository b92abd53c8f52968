/* CPU ops that are OpenBLAS routines: gemm, gemv, dot, nrm2, ger; and
 * what every family file shares (operand pointers, the 32-bit check, C = beta C). */
#include "cpu_internal.h"

#include <cblas.h>
#include "cpu_openblas.h" /* after cblas.h: how OpenBLAS is reached */
#include <limits.h>
#include <pthread.h>

void xo__cpu_store(const xo_op_desc *op, int i, double v)
{
    if (op->dtype == XO_F32)
        *(float *)xo__cpu_ptr(op, i) = (float)v;
    else
        *(double *)xo__cpu_ptr(op, i) = v;
}

int xo__cpu_fits_int(const xo_op_desc *op)
{
    /* OR of every dimension: one comparison instead of eight. */
    size_t all = op->m | op->n | op->k | op->ld[0] | op->ld[1] | op->ld[2] | op->inc[0] | op->inc[1];
    return all <= (size_t)INT_MAX;
}

xo_status xo__cpu_too_big(const xo_plugin_host *host)
{
    return host->set_error(XO_ERR_UNSUPPORTED, "cpu plugin: a dimension exceeds OpenBLAS's 32-bit integers");
}

/* C = beta*C (gemm and gemm_bias_act with alpha == 0, which k == 0 becomes), y = beta*y
 * (gemv with alpha == 0) or x = 0 (scal with alpha == 0), without reading A, B or x (see
 * xo_scale_view). OpenBLAS is not asked: its gemm reads A and B with alpha == 0 on some
 * paths, and newer versions keep NaN in scal by 0. A factor of 0 writes zeros without
 * reading. */
void xo__cpu_scale_output(const xo_op_desc *op)
{
    const xo_scale_view v = xo_op_scale_view(op);
    for (size_t r = 0; r < v.rows; r++) {
        if (op->dtype == XO_F32) {
            float *c = (float *)xo__cpu_ptr(op, v.arg) + r * v.ld;
            for (size_t j = 0; j < v.cols; j++) c[j] = v.factor == 0 ? 0.0f : (float)v.factor * c[j];
        } else {
            double *c = (double *)xo__cpu_ptr(op, v.arg) + r * v.ld;
            for (size_t j = 0; j < v.cols; j++) c[j] = v.factor == 0 ? 0.0 : v.factor * c[j];
        }
    }
}

#define P(i) xo__cpu_ptr(op, i)
#define S (op->dtype == XO_F32)
#define N ((int)op->n)
#define IX ((int)op->inc[0])
#define IY ((int)op->inc[1])
#define CHECK_INT()                                                                                  \
    do {                                                                                             \
        (void)pool;                                                                                  \
        if (!xo__cpu_fits_int(op))                                                                   \
            return xo__cpu_too_big(host);                                                            \
    } while (0)

xo_status xo__cpu_gemm(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    if (op->k == 0 || op->alpha == 0) {
        (void)host, (void)pool;
        xo__cpu_scale_output(op);
        return XO_OK;
    }
    CHECK_INT();
    const enum CBLAS_ORDER lay = (enum CBLAS_ORDER)op->layout;
    const enum CBLAS_TRANSPOSE ta = (enum CBLAS_TRANSPOSE)op->ta, tb = (enum CBLAS_TRANSPOSE)op->tb;
    const int m = (int)op->m, k = (int)op->k;
    if (S)
        cblas_sgemm(lay, ta, tb, m, N, k, (float)op->alpha, P(0), (int)op->ld[0], P(1), (int)op->ld[1],
                    (float)op->beta, P(2), (int)op->ld[2]);
    else
        cblas_dgemm(lay, ta, tb, m, N, k, op->alpha, P(0), (int)op->ld[0], P(1), (int)op->ld[1], op->beta, P(2),
                    (int)op->ld[2]);
    return XO_OK;
}

xo_status xo__cpu_gemv(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    CHECK_INT();
    const enum CBLAS_ORDER lay = (enum CBLAS_ORDER)op->layout;
    const enum CBLAS_TRANSPOSE ta = (enum CBLAS_TRANSPOSE)op->ta;
    if (S)
        cblas_sgemv(lay, ta, (int)op->m, N, (float)op->alpha, P(0), (int)op->ld[0], P(1), IX, (float)op->beta, P(2),
                    IY);
    else
        cblas_dgemv(lay, ta, (int)op->m, N, op->alpha, P(0), (int)op->ld[0], P(1), IX, op->beta, P(2), IY);
    return XO_OK;
}

xo_status xo__cpu_dot(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    CHECK_INT();
    xo__cpu_store(op, 2, N == 0 ? 0.0 : S ? (double)cblas_sdot(N, P(0), IX, P(1), IY) : cblas_ddot(N, P(0), IX, P(1), IY));
    return XO_OK;
}

xo_status xo__cpu_nrm2(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    CHECK_INT();
    xo__cpu_store(op, 1, N == 0 ? 0.0 : S ? (double)cblas_snrm2(N, P(0), IX) : cblas_dnrm2(N, P(0), IX));
    return XO_OK;
}

xo_status xo__cpu_ger(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    CHECK_INT();
    const enum CBLAS_ORDER lay = (enum CBLAS_ORDER)op->layout;
    if (S)
        cblas_sger(lay, (int)op->m, N, (float)op->alpha, P(0), IX, P(1), IY, P(2), (int)op->ld[2]);
    else
        cblas_dger(lay, (int)op->m, N, op->alpha, P(0), IX, P(1), IY, P(2), (int)op->ld[2]);
    return XO_OK;
}

/* The instruction set the family files' kernels are chosen for, read once: the CPU's,
 * at most xo__cpu_isa_limit (set before the first op, the conformance suite runs the
 * AVX2 and baseline kernels on an AVX-512 machine). */
int xo__cpu_isa_limit = 2;
static int g_isa = -1;
static pthread_once_t g_isa_once = PTHREAD_ONCE_INIT;
static void read_isa(void)
{
    g_isa = 0;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        g_isa = 2;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        g_isa = 1;
#endif
    if (g_isa > xo__cpu_isa_limit)
        g_isa = xo__cpu_isa_limit < 0 ? 0 : xo__cpu_isa_limit;
}
int xo__cpu_isa(void)
{
    pthread_once(&g_isa_once, read_isa);
    return g_isa;
}
