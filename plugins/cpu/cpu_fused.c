/* CPU gemm_bias_act: small products in cpu_small.c's kernels, the epilogue applied to
 * each vector of C in registers for one line of C, right after for several; medium ones
 * (AVX-512) in its tiles, the epilogue in registers; else OpenBLAS's gemm on blocks of C's
 * rows (columns in column-major), each followed at once by the epilogue (bias, activation)
 * while the block is in cache. */
#include "cpu_internal.h"

#include <cblas.h>
#include "cpu_openblas.h" /* after cblas.h: how OpenBLAS is reached */

/* gemm_bias_act runs its gemm on blocks of C's rows (columns in column-major) of about
 * XO_CPU_EPILOGUE_BYTES, each followed at once by the epilogue (bias, activation) while
 * the block is still in the last-level cache, and each doing at least
 * XO_CPU_BLOCK_FLOPS so that OpenBLAS's per-call costs (packing B again, waking its
 * threads) stay small. Measured here (docs/bench.md, xo_fused): blocks of L2 size cost
 * more than the epilogue saves (OpenBLAS's calls), so a C of a few MiB is one block,
 * one gemm and then one combined bias+activation pass; a C past the last-level cache
 * is split (there the blocked epilogue wins: 4096x4096x64). */
#define XO_CPU_EPILOGUE_BYTES ((size_t)8 << 20)
#define XO_CPU_BLOCK_FLOPS 64e6
/* One op split over the pool: its operands and the block's first line. */
typedef struct job {
    const xo_op_desc *op;
    void *p[XO_MAX_ARGS];
    size_t first;
    int bias; /* 1 while the epilogue still has the bias to add */
} job;

#define F32(j) ((j)->op->dtype == XO_F32)

/* gemm_bias_act's epilogue on lines [first + b, first + e) of C (rows in row-major,
 * columns in column-major): bias, then the activation, one line at a time. */
static void epilogue_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    job *j = arg;
    const xo_op_desc *op = j->op;
    int row = op->layout == XO_ROW_MAJOR, act = op->subop != XO_IDENTITY;
    size_t inner = row ? op->n : op->m, es = F32(j) ? sizeof(float) : sizeof(double);
    for (size_t l = j->first + b; l < j->first + e; l++) {
        char *line = (char *)j->p[2] + l * op->ld[2] * es;
        if (j->bias && row) {
            xo__cpu_bias_rows(op->dtype, line, 0, j->p[3], 0, 1, inner);
        } else if (j->bias) { /* column l gets bias[l] */
            double bl = F32(j) ? (double)((const float *)j->p[3])[l] : ((const double *)j->p[3])[l];
            xo__cpu_bscalar_loop(op->dtype, XO_ADD, line, bl, line, inner);
        }
        if (act)
            xo__cpu_unary_loop(op->dtype, op->subop, line, line, inner);
    }
}

static void epilogue(xo__cpu_pool *pool, job *j, size_t first, size_t count, size_t inner)
{
    const xo_op_desc *op = j->op;
    if (!j->bias && op->subop == XO_IDENTITY)
        return;
    j->first = first;
    if (count * inner < XO_CPU_GRAIN && op->ld[2] == inner && op->layout == XO_ROW_MAJOR) {
        /* small and dense: the whole block in two calls rather than two per row */
        char *c = (char *)j->p[2] + first * inner * (op->dtype == XO_F32 ? sizeof(float) : sizeof(double));
        if (j->bias)
            xo__cpu_bias_rows(op->dtype, c, inner, j->p[3], 0, count, inner);
        if (op->subop != XO_IDENTITY)
            xo__cpu_unary_loop(op->dtype, op->subop, c, c, count * inner);
        return;
    }
    size_t grain = XO_CPU_GRAIN / (inner ? inner : 1);
    xo__cpu_parallel_for(pool, count, grain ? grain : 1, epilogue_range, j);
}

/* C = act(alpha op(A) op(B) + beta C + bias), fused: the gemm runs on blocks of C's
 * lines and each block gets its epilogue right after its gemm, while it is in cache. */
xo_status xo__cpu_gemm_bias_act(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    job jb = {op, {NULL, NULL, NULL, NULL}, 0, op->narg == 4}, *j = &jb;
    for (int i = 0; i < op->narg; i++)
        jb.p[i] = xo__cpu_ptr(op, i);
    int row = op->layout == XO_ROW_MAJOR;
    size_t outer = row ? op->m : op->n, inner = row ? op->n : op->m;
    size_t es = op->dtype == XO_F32 ? sizeof(float) : sizeof(double);
    if (op->k == 0 || op->alpha == 0) { /* C = act(beta C + bias), A and B not read */
        xo__cpu_scale_output(op);
        epilogue(pool, j, 0, outer, inner);
        return XO_OK;
    }
    /* Small products: the bias added to each vector of C in registers; one line of C gets its
     * activation there too, several lines get it from the unary loop right after, C still in
     * L1. Measured (xo_fused, gemm_bias_act with tanh against gemm + bias + tanh, 2-core AMD
     * EPYC): in registers 1x100x3 1.03-1.11x, 1x3x100 1.13-1.24x, but 16x100x3 0.63x and
     * 100x100x3 0.59x with the activation's formula over one vector's lanes (0.92-0.97x with
     * AVX-512's own tanh on each vector, Zen 4); the bias alone in registers, then the loop:
     * 16x100x3 1.09-1.10x, 100x100x3 1.08-1.11x. */
    if (xo__cpu_small_gemm_bias_act(op->dtype, op->layout, op->ta, op->tb, op->m, op->n, op->k, op->alpha, j->p[0],
                                    op->ld[0], j->p[1], op->ld[1], op->beta, j->p[2], op->ld[2],
                                    op->narg == 4 ? j->p[3] : NULL, outer == 1 ? op->subop : XO_IDENTITY)) {
        jb.bias = 0;
        if (outer > 1)
            epilogue(pool, j, 0, outer, inner);
        return XO_OK;
    }
    /* Medium products (AVX-512): the tiles, the epilogue on each vector of C in registers. */
    if (xo__cpu_tiled_gemm(pool, op->dtype, op->layout, op->ta, op->tb, op->m, op->n, op->k, op->alpha, j->p[0],
                           op->ld[0], j->p[1], op->ld[1], op->beta, j->p[2], op->ld[2],
                           op->narg == 4 ? j->p[3] : NULL, op->subop))
        return XO_OK;
    if (!xo__cpu_fits_int(op))
        return xo__cpu_too_big(host);
    size_t block = XO_CPU_EPILOGUE_BYTES / (inner * es);
    double line_flops = 2.0 * (double)inner * (double)op->k;
    if ((double)block * line_flops < XO_CPU_BLOCK_FLOPS)
        block = (size_t)(XO_CPU_BLOCK_FLOPS / line_flops) + 1;
    block = block < 16 ? 16 : block;
    const enum CBLAS_ORDER lay = (enum CBLAS_ORDER)op->layout;
    const enum CBLAS_TRANSPOSE ta = (enum CBLAS_TRANSPOSE)op->ta, tb = (enum CBLAS_TRANSPOSE)op->tb;
    const int k = (int)op->k, lda = (int)op->ld[0], ldb = (int)op->ld[1], ldc = (int)op->ld[2];
    for (size_t o0 = 0; o0 < outer; o0 += block) {
        size_t cnt = outer - o0 < block ? outer - o0 : block;
        /* Row-major: rows o0.. of op(A) and C. Column-major: columns o0.. of op(B) and C. */
        size_t a_at = row ? (op->ta == XO_NO_TRANS ? o0 * op->ld[0] : o0) : 0;
        size_t b_at = row ? 0 : (op->tb == XO_NO_TRANS ? o0 * op->ld[1] : o0);
        int m = row ? (int)cnt : (int)op->m, n = row ? (int)op->n : (int)cnt;
        const char *a0 = (const char *)j->p[0] + a_at * es, *b0 = (const char *)j->p[1] + b_at * es;
        char *c0 = (char *)j->p[2] + o0 * op->ld[2] * es;
        if (op->dtype == XO_F32)
            cblas_sgemm(lay, ta, tb, m, n, k, (float)op->alpha, (const float *)a0, lda, (const float *)b0, ldb,
                        (float)op->beta, (float *)c0, ldc);
        else
            cblas_dgemm(lay, ta, tb, m, n, k, op->alpha, (const double *)a0, lda, (const double *)b0, ldb, op->beta,
                        (double *)c0, ldc);
        epilogue(pool, j, o0, cnt, inner);
    }
    return XO_OK;
}
