/* CPU kernels of the 0.3 ops: OpenBLAS where it has the routine (copy, axpby, ger, the
 * gemm of gemm_bias_act), our loops otherwise, split over the pool when large and
 * compiled for baseline, AVX2 and AVX-512 like cpu_kernels.c's. */
#include "cpu_internal.h"

#include <cblas.h>
#include "cpu_openblas.h" /* after cblas.h: how OpenBLAS is reached */
#include <math.h>
#include <pthread.h>

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
/* Columns one pass of a column sum accumulates at once (in double). */
#define XO_CPU_COLS 256

#define XO_CPU_NN(T, SUF, EXP, LOG, ATTR)                                                            \
    ATTR static void bscalar_##SUF(int op, const T *a, T s, T *c, size_t n) /* c may be a */        \
    {                                                                                                \
        switch (op) {                                                                                \
        case XO_ADD: for (size_t i = 0; i < n; i++) c[i] = a[i] + s; break;                          \
        case XO_SUB: for (size_t i = 0; i < n; i++) c[i] = a[i] - s; break;                          \
        case XO_MUL: for (size_t i = 0; i < n; i++) c[i] = a[i] * s; break;                          \
        case XO_DIV: for (size_t i = 0; i < n; i++) c[i] = a[i] / s; break;                          \
        case XO_MAX: for (size_t i = 0; i < n; i++) c[i] = a[i] > s ? a[i] : s; break;               \
        }                                                                                            \
    }                                                                                                \
    ATTR static void fill_##SUF(T *x, size_t inc, T v, size_t n)                                     \
    {                                                                                                \
        if (inc == 1)                                                                                \
            for (size_t i = 0; i < n; i++) x[i] = v;                                                 \
        else                                                                                         \
            for (size_t i = 0; i < n; i++) x[i * inc] = v;                                           \
    }                                                                                                \
    ATTR static void scale_##SUF(T *x, size_t inc, T s, size_t n)                                    \
    {                                                                                                \
        if (inc == 1)                                                                                \
            for (size_t i = 0; i < n; i++) x[i] *= s;                                                \
        else                                                                                         \
            for (size_t i = 0; i < n; i++) x[i * inc] *= s;                                          \
    }                                                                                                \
    ATTR static void axpy0_##SUF(T alpha, const T *x, size_t incx, T *y, size_t incy, size_t n)      \
    {                                                                                                \
        if (incx == 1 && incy == 1)                                                                  \
            for (size_t i = 0; i < n; i++) y[i] = alpha * x[i];                                      \
        else                                                                                         \
            for (size_t i = 0; i < n; i++) y[i * incy] = alpha * x[i * incx];                        \
    }                                                                                                \
    /* Rows [r0, r1): (log-)softmax along each row, max subtracted; y may be x. */                   \
    ATTR static void softmax_##SUF(int op, const T *x, size_t ldx, T *y, size_t ldy, size_t r0,      \
                                   size_t r1, size_t cols)                                           \
    {                                                                                                \
        for (size_t r = r0; r < r1; r++) {                                                           \
            const T *xr = x + r * ldx;                                                               \
            T *yr = y + r * ldy, mx = xr[0];                                                         \
            for (size_t j = 1; j < cols; j++) mx = xr[j] > mx ? xr[j] : mx;                          \
            if (op == XO_SOFTMAX) {                                                                  \
                for (size_t j = 0; j < cols; j++) yr[j] = EXP(xr[j] - mx);                           \
                T inv = (T)(1.0 / xo__cpu_reduce(sizeof(T) == 4 ? XO_F32 : XO_F64, XO_SUM, yr, cols)); \
                for (size_t j = 0; j < cols; j++) yr[j] *= inv;                                      \
                continue;                                                                            \
            }                                                                                        \
            /* log: the exponentials go through a scratch block, since y may be x */                \
            T t[XO_CPU_COLS];                                                                        \
            double s = 0;                                                                            \
            for (size_t j0 = 0; j0 < cols; j0 += XO_CPU_COLS) {                                      \
                size_t w = cols - j0 < XO_CPU_COLS ? cols - j0 : XO_CPU_COLS;                        \
                for (size_t j = 0; j < w; j++) t[j] = EXP(xr[j0 + j] - mx);                          \
                s += xo__cpu_reduce(sizeof(T) == 4 ? XO_F32 : XO_F64, XO_SUM, t, w);                 \
            }                                                                                        \
            T lse = LOG((T)s);                                                                       \
            for (size_t j = 0; j < cols; j++) yr[j] = (xr[j] - mx) - lse;                            \
        }                                                                                            \
    }                                                                                                \
    /* Columns [j0, j1) of a rows x cols row-major x (rows >= 1): sum or max over the rows. */       \
    ATTR static void colreduce_##SUF(int op, const T *x, size_t ldx, size_t rows, T *out, size_t j0, \
                                     size_t j1)                                                      \
    {                                                                                                \
        if (op == XO_MAX_ELEMENT) {                                                                  \
            for (size_t j = j0; j < j1; j++) out[j] = x[j];                                          \
            for (size_t i = 1; i < rows; i++) {                                                      \
                const T *xr = x + i * ldx;                                                           \
                for (size_t j = j0; j < j1; j++) out[j] = xr[j] > out[j] ? xr[j] : out[j];           \
            }                                                                                        \
            return;                                                                                  \
        }                                                                                            \
        double acc[XO_CPU_COLS];                                                                     \
        for (size_t b = j0; b < j1; b += XO_CPU_COLS) {                                              \
            size_t w = j1 - b < XO_CPU_COLS ? j1 - b : XO_CPU_COLS;                                  \
            for (size_t j = 0; j < w; j++) acc[j] = 0;                                               \
            for (size_t i = 0; i < rows; i++) {                                                      \
                const T *xr = x + i * ldx + b;                                                       \
                for (size_t j = 0; j < w; j++) acc[j] += xr[j];                                      \
            }                                                                                        \
            for (size_t j = 0; j < w; j++) out[b + j] = (T)acc[j];                                   \
        }                                                                                            \
    }

static inline double xo__cpu_exp(double x) { return exp(x); }
XO_CPU_NN(float, f, xo__cpu_expf, logf, )
XO_CPU_NN(double, d, xo__cpu_exp, log, )

typedef struct nn_kernels {
    void (*bscalar_f)(int, const float *, float, float *, size_t);
    void (*bscalar_d)(int, const double *, double, double *, size_t);
    void (*fill_f)(float *, size_t, float, size_t);
    void (*fill_d)(double *, size_t, double, size_t);
    void (*scale_f)(float *, size_t, float, size_t);
    void (*scale_d)(double *, size_t, double, size_t);
    void (*axpy0_f)(float, const float *, size_t, float *, size_t, size_t);
    void (*axpy0_d)(double, const double *, size_t, double *, size_t, size_t);
    void (*softmax_f)(int, const float *, size_t, float *, size_t, size_t, size_t, size_t);
    void (*softmax_d)(int, const double *, size_t, double *, size_t, size_t, size_t, size_t);
    void (*colreduce_f)(int, const float *, size_t, size_t, float *, size_t, size_t);
    void (*colreduce_d)(int, const double *, size_t, size_t, double *, size_t, size_t);
} nn_kernels;
#define XO_NN_KERNELS(F, D) {bscalar_##F, bscalar_##D, fill_##F, fill_##D, scale_##F, scale_##D, axpy0_##F, \
                             axpy0_##D, softmax_##F, softmax_##D, colreduce_##F, colreduce_##D}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define XO_CPU_AVX2 __attribute__((target("avx2,fma")))
#define XO_CPU_AVX512 __attribute__((target("avx512f,avx2,fma")))
XO_CPU_NN(float, f_avx2, xo__cpu_expf, logf, XO_CPU_AVX2)
XO_CPU_NN(double, d_avx2, xo__cpu_exp, log, XO_CPU_AVX2)
XO_CPU_NN(float, f_avx512, xo__cpu_expf, logf, XO_CPU_AVX512)
XO_CPU_NN(double, d_avx512, xo__cpu_exp, log, XO_CPU_AVX512)
#endif

static nn_kernels g_nn = XO_NN_KERNELS(f, d);
static pthread_once_t g_nn_once = PTHREAD_ONCE_INIT;

static void select_nn(void) /* the instruction set cpu_kernels.c chose */
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    int isa = xo__cpu_isa();
    if (isa == 2)
        g_nn = (nn_kernels)XO_NN_KERNELS(f_avx512, d_avx512);
    else if (isa == 1)
        g_nn = (nn_kernels)XO_NN_KERNELS(f_avx2, d_avx2);
#endif
}

/* One op split over the pool: its operands and, for gemm_bias_act, the block of lines. */
typedef struct nn_job {
    const xo_op_desc *op;
    void *p[XO_MAX_ARGS];
    double s;      /* the scalar: binary_scalar's, fill's value, scale_by's factor, axpby's alpha */
    void *v;       /* fill and scale: the vector and its increment */
    size_t inc;
    size_t first;  /* gemm_bias_act: the block's first line */
} nn_job;

#define F32(j) ((j)->op->dtype == XO_F32)

static void bscalar_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    nn_job *j = arg;
    if (F32(j))
        g_nn.bscalar_f(j->op->subop, (const float *)j->p[0] + b, (float)j->s, (float *)j->p[1] + b, e - b);
    else
        g_nn.bscalar_d(j->op->subop, (const double *)j->p[0] + b, j->s, (double *)j->p[1] + b, e - b);
}

/* fill and scale: j->v, strided by j->inc. */
static void fill_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    nn_job *j = arg;
    if (F32(j))
        g_nn.fill_f((float *)j->v + b * j->inc, j->inc, (float)j->s, e - b);
    else
        g_nn.fill_d((double *)j->v + b * j->inc, j->inc, j->s, e - b);
}

static void scale_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    nn_job *j = arg;
    if (F32(j))
        g_nn.scale_f((float *)j->v + b * j->inc, j->inc, (float)j->s, e - b);
    else
        g_nn.scale_d((double *)j->v + b * j->inc, j->inc, j->s, e - b);
}

/* x (j->v) = j->s x, or = j->s everywhere (fill). */
static void vector_op(xo__cpu_pool *pool, nn_job *j, xo__cpu_range_fn fn, void *v, size_t inc, double s)
{
    j->v = v;
    j->inc = inc;
    j->s = s;
    xo__cpu_parallel_for(pool, j->op->n, XO_CPU_GRAIN, fn, j);
}

static void axpy0_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    nn_job *j = arg;
    size_t ix = j->op->inc[0], iy = j->op->inc[1];
    if (F32(j))
        g_nn.axpy0_f((float)j->s, (const float *)j->p[0] + b * ix, ix, (float *)j->p[1] + b * iy, iy, e - b);
    else
        g_nn.axpy0_d(j->s, (const double *)j->p[0] + b * ix, ix, (double *)j->p[1] + b * iy, iy, e - b);
}

static void softmax_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    nn_job *j = arg;
    const xo_op_desc *op = j->op;
    if (F32(j))
        g_nn.softmax_f(op->subop, j->p[0], op->ld[0], j->p[1], op->ld[1], b, e, op->n);
    else
        g_nn.softmax_d(op->subop, j->p[0], op->ld[0], j->p[1], op->ld[1], b, e, op->n);
}

/* reduce_axis: axis 0 splits the columns, axis 1 the rows. */
static void reduce_axis_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    nn_job *j = arg;
    const xo_op_desc *op = j->op;
    size_t es = F32(j) ? sizeof(float) : sizeof(double);
    if (op->axis == 1) {
        for (size_t r = b; r < e; r++) {
            double v = xo__cpu_reduce(op->dtype, op->subop, (const char *)j->p[0] + r * op->ld[0] * es, op->n);
            if (F32(j))
                ((float *)j->p[1])[r] = (float)v;
            else
                ((double *)j->p[1])[r] = v;
        }
    } else if (F32(j)) {
        g_nn.colreduce_f(op->subop, j->p[0], op->ld[0], op->m, j->p[1], b, e);
    } else {
        g_nn.colreduce_d(op->subop, j->p[0], op->ld[0], op->m, j->p[1], b, e);
    }
}

/* gemm_bias_act's epilogue on lines [first + b, first + e) of C (rows in row-major,
 * columns in column-major): bias, then the activation, one line at a time. */
static void epilogue_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    nn_job *j = arg;
    const xo_op_desc *op = j->op;
    int row = op->layout == XO_ROW_MAJOR, act = op->subop != XO_IDENTITY;
    size_t inner = row ? op->n : op->m, es = F32(j) ? sizeof(float) : sizeof(double);
    for (size_t l = j->first + b; l < j->first + e; l++) {
        char *line = (char *)j->p[2] + l * op->ld[2] * es;
        if (op->narg == 4 && row) {
            xo__cpu_bias_rows(op->dtype, line, 0, j->p[3], 0, 1, inner);
        } else if (op->narg == 4) { /* column l gets bias[l] */
            if (F32(j))
                g_nn.bscalar_f(XO_ADD, (float *)line, ((const float *)j->p[3])[l], (float *)line, inner);
            else
                g_nn.bscalar_d(XO_ADD, (double *)line, ((const double *)j->p[3])[l], (double *)line, inner);
        }
        if (act)
            xo__cpu_unary(op->dtype, op->subop, line, line, inner);
    }
}

static void epilogue(xo__cpu_pool *pool, nn_job *j, size_t first, size_t count, size_t inner)
{
    const xo_op_desc *op = j->op;
    if (op->narg < 4 && op->subop == XO_IDENTITY)
        return;
    j->first = first;
    if (count * inner < XO_CPU_GRAIN && op->ld[2] == inner && op->layout == XO_ROW_MAJOR) {
        /* small and dense: the whole block in two calls rather than two per row */
        char *c = (char *)j->p[2] + first * inner * (op->dtype == XO_F32 ? sizeof(float) : sizeof(double));
        if (op->narg == 4)
            xo__cpu_bias_rows(op->dtype, c, inner, j->p[3], 0, count, inner);
        if (op->subop != XO_IDENTITY)
            xo__cpu_unary(op->dtype, op->subop, c, c, count * inner);
        return;
    }
    size_t grain = XO_CPU_GRAIN / (inner ? inner : 1);
    xo__cpu_parallel_for(pool, count, grain ? grain : 1, epilogue_range, j);
}

/* C = act(alpha op(A) op(B) + beta C + bias), fused: the gemm runs on blocks of C's
 * lines and each block gets its epilogue right after its gemm, while it is in cache. */
static xo_status gemm_bias_act(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op, nn_job *j)
{
    int row = op->layout == XO_ROW_MAJOR;
    size_t outer = row ? op->m : op->n, inner = row ? op->n : op->m;
    size_t es = op->dtype == XO_F32 ? sizeof(float) : sizeof(double);
    if (op->k == 0 || op->alpha == 0) { /* C = act(beta C + bias), A and B not read */
        xo__cpu_scale_output(op);
        epilogue(pool, j, 0, outer, inner);
        return XO_OK;
    }
    if (!xo__cpu_fits_int(op))
        return host->set_error(XO_ERR_UNSUPPORTED, "cpu plugin: a dimension exceeds OpenBLAS's 32-bit integers");
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
        if (op->dtype == XO_F32)
            cblas_sgemm(lay, ta, tb, m, n, k, (float)op->alpha, (const float *)j->p[0] + a_at, lda,
                        (const float *)j->p[1] + b_at, ldb, (float)op->beta, (float *)j->p[2] + o0 * op->ld[2], ldc);
        else
            cblas_dgemm(lay, ta, tb, m, n, k, op->alpha, (const double *)j->p[0] + a_at, lda,
                        (const double *)j->p[1] + b_at, ldb, op->beta, (double *)j->p[2] + o0 * op->ld[2], ldc);
        epilogue(pool, j, o0, cnt, inner);
    }
    return XO_OK;
}

/* y = alpha x + beta y: beta == 0 never reads y, alpha == 0 never reads x. */
static xo_status axpby(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op, nn_job *j)
{
    if (op->beta == 0.0 && op->alpha == 0.0) {
        vector_op(pool, j, fill_range, j->p[1], op->inc[1], 0.0);
        return XO_OK;
    }
    if (op->beta == 0.0) {
        j->s = op->alpha;
        xo__cpu_parallel_for(pool, op->n, XO_CPU_GRAIN, axpy0_range, j);
        return XO_OK;
    }
    if (op->alpha == 0.0) {
        vector_op(pool, j, scale_range, j->p[1], op->inc[1], op->beta);
        return XO_OK;
    }
    if (!xo__cpu_fits_int(op))
        return host->set_error(XO_ERR_UNSUPPORTED, "cpu plugin: a dimension exceeds OpenBLAS's 32-bit integers");
    if (op->dtype == XO_F32)
        cblas_saxpby((int)op->n, (float)op->alpha, j->p[0], (int)op->inc[0], (float)op->beta, j->p[1],
                     (int)op->inc[1]);
    else
        cblas_daxpby((int)op->n, op->alpha, j->p[0], (int)op->inc[0], op->beta, j->p[1], (int)op->inc[1]);
    return XO_OK;
}

static xo_status blas_only(const xo_plugin_host *host, const xo_op_desc *op, const nn_job *j)
{
    if (!xo__cpu_fits_int(op))
        return host->set_error(XO_ERR_UNSUPPORTED, "cpu plugin: a dimension exceeds OpenBLAS's 32-bit integers");
    const int s = op->dtype == XO_F32, n = (int)op->n, ix = (int)op->inc[0], iy = (int)op->inc[1];
    if (op->kind == XO_OP_COPY) {
        if (s)
            cblas_scopy(n, j->p[0], ix, j->p[1], iy);
        else
            cblas_dcopy(n, j->p[0], ix, j->p[1], iy);
    } else { /* GER */
        const enum CBLAS_ORDER lay = (enum CBLAS_ORDER)op->layout;
        if (s)
            cblas_sger(lay, (int)op->m, n, (float)op->alpha, j->p[0], ix, j->p[1], iy, j->p[2], (int)op->ld[2]);
        else
            cblas_dger(lay, (int)op->m, n, op->alpha, j->p[0], ix, j->p[1], iy, j->p[2], (int)op->ld[2]);
    }
    return XO_OK;
}

xo_status xo__cpu_run_nn(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    pthread_once(&g_nn_once, select_nn);
    nn_job j;
    j.op = op;
    j.s = op->alpha;
    j.v = NULL;
    j.inc = 1;
    j.first = 0;
    for (int i = 0; i < XO_MAX_ARGS; i++)
        j.p[i] = i < op->narg ? xo__cpu_ptr(op, i) : NULL;
    switch (op->kind) {
    case XO_OP_COPY:
    case XO_OP_GER: return blas_only(host, op, &j);
    case XO_OP_FILL: vector_op(pool, &j, fill_range, j.p[0], op->inc[0], op->alpha); return XO_OK;
    case XO_OP_AXPBY: return axpby(host, pool, op, &j);
    case XO_OP_BINARY_SCALAR: xo__cpu_parallel_for(pool, op->n, XO_CPU_GRAIN, bscalar_range, &j); return XO_OK;
    case XO_OP_SCALE_BY:
        vector_op(pool, &j, scale_range, j.p[1], op->inc[0],
                  F32(&j) ? (double)*(const float *)j.p[0] : *(const double *)j.p[0]);
        return XO_OK;
    case XO_OP_SOFTMAX: {
        size_t grain = XO_CPU_GRAIN / op->n;
        xo__cpu_parallel_for(pool, op->m, grain ? grain : 1, softmax_range, &j);
        return XO_OK;
    }
    case XO_OP_REDUCE_AXIS: {
        size_t results = op->axis == 0 ? op->n : op->m, over = op->axis == 0 ? op->m : op->n;
        if (over == 0) { /* XO_SUM over an empty axis (the core refuses XO_MAX_ELEMENT) */
            for (size_t i = 0; i < results; i++)
                if (F32(&j))
                    ((float *)j.p[1])[i] = 0.0f;
                else
                    ((double *)j.p[1])[i] = 0.0;
            return XO_OK;
        }
        size_t grain = XO_CPU_GRAIN / over;
        xo__cpu_parallel_for(pool, results, grain ? grain : 1, reduce_axis_range, &j);
        return XO_OK;
    }
    case XO_OP_GEMM_BIAS_ACT: return gemm_bias_act(host, pool, op, &j);
    default: return host->set_error(XO_ERR_UNSUPPORTED, "cpu plugin: unknown op kind %d", (int)op->kind);
    }
}
