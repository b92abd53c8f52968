/* CPU ops that make one pass over their elements: unary, binary, binary_scalar, fill,
 * scale_by, axpby, and BLAS's axpy, scal and copy, bias. Vectorised loops (the formulas of
 * plugins/common/xo_formulas.h), split over the pool when large. */
#include "cpu_internal.h"
#include "../common/xo_formulas.h"

#include <pthread.h>

/* One case per row of the op maps (crossover.h): a new op needs no edit here. */
#define UNARY_CASE_(NAME, ...) \
    case XO_##NAME: for (size_t i = 0; i < n; i++) y[i] = XO_F_##NAME(x[i]); break;
#define BINARY_CASE_(NAME) \
    case XO_##NAME: for (size_t i = 0; i < n; i++) c[i] = XO_F_##NAME(a[i], b[i]); break;
#define BSCALAR_CASE_(NAME) \
    case XO_##NAME: for (size_t i = 0; i < n; i++) c[i] = XO_F_##NAME(a[i], s); break;

#define ELEMENTWISE(T, SUF, ATTR)                                                                    \
    ATTR static void unary_##SUF(int op, const T *x, T *y, size_t n) /* y may be x */                \
    {                                                                                                \
        typedef T xo_real __attribute__((unused)); /* the element type of xo_formulas.h */        \
        if (op == XO_TANH && XO_CPU_TANH_LOOP_##SUF(x, y, n))                                        \
            return;                                                                                  \
        switch (op) { XO_UNARY_OP_MAP(UNARY_CASE_) }                                                 \
    }                                                                                                \
    ATTR static void binary_##SUF(int op, const T *a, const T *b, T *c, size_t n)                    \
    {                                                                                                \
        switch (op) { XO_BINARY_OP_MAP(BINARY_CASE_) }                                               \
    }                                                                                                \
    ATTR static void bscalar_##SUF(int op, const T *a, T s, T *c, size_t n) /* c may be a */        \
    {                                                                                                \
        switch (op) { XO_BINARY_OP_MAP(BSCALAR_CASE_) }                                              \
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
    /* y = alpha x + beta y; beta == 0 never reads y, beta == 1 is BLAS's axpy (y += alpha x) */   \
    ATTR static void axpby_##SUF(T alpha, const T *x, size_t incx, T beta, T *y, size_t incy,        \
                                 size_t n)                                                           \
    {                                                                                                \
        if (incx == 1 && incy == 1 && beta == 0)                                                     \
            for (size_t i = 0; i < n; i++) y[i] = alpha * x[i];                                      \
        else if (incx == 1 && incy == 1 && beta == 1)                                                \
            for (size_t i = 0; i < n; i++) y[i] += alpha * x[i];                                     \
        else if (incx == 1 && incy == 1)                                                             \
            for (size_t i = 0; i < n; i++) y[i] = alpha * x[i] + beta * y[i];                        \
        else if (beta == 0)                                                                          \
            for (size_t i = 0; i < n; i++) y[i * incy] = alpha * x[i * incx];                        \
        else                                                                                         \
            for (size_t i = 0; i < n; i++) y[i * incy] = alpha * x[i * incx] + beta * y[i * incy];   \
    }                                                                                                \
    ATTR static void bias_rows_##SUF(T *a, size_t lda, const T *restrict bias, size_t r0, size_t r1, \
                                     size_t cols)                                                    \
    {                                                                                                \
        for (size_t r = r0; r < r1; r++) {                                                           \
            T *row = a + r * lda;                                                                    \
            for (size_t j = 0; j < cols; j++) row[j] += bias[j];                                     \
        }                                                                                            \
    }

XO_CPU_INSTANTIATE(ELEMENTWISE)

typedef struct kernels {
    void (*unary_f)(int, const float *, float *, size_t);
    void (*unary_d)(int, const double *, double *, size_t);
    void (*binary_f)(int, const float *, const float *, float *, size_t);
    void (*binary_d)(int, const double *, const double *, double *, size_t);
    void (*bscalar_f)(int, const float *, float, float *, size_t);
    void (*bscalar_d)(int, const double *, double, double *, size_t);
    void (*fill_f)(float *, size_t, float, size_t);
    void (*fill_d)(double *, size_t, double, size_t);
    void (*scale_f)(float *, size_t, float, size_t);
    void (*scale_d)(double *, size_t, double, size_t);
    void (*axpby_f)(float, const float *, size_t, float, float *, size_t, size_t);
    void (*axpby_d)(double, const double *, size_t, double, double *, size_t, size_t);
    void (*bias_f)(float *, size_t, const float *, size_t, size_t, size_t);
    void (*bias_d)(double *, size_t, const double *, size_t, size_t, size_t);
} kernels;
#define TABLE(F, D)                                                                                   \
    {unary_##F, unary_##D, binary_##F, binary_##D, bscalar_##F, bscalar_##D, fill_##F, fill_##D,      \
     scale_##F, scale_##D, axpby_##F, axpby_##D, bias_rows_##F, bias_rows_##D}

XO_CPU_KERNELS_SELECTED(kernels, TABLE)

/* One op split over the pool: its operands, and the vector and scalar of fill/scale. */
typedef struct job {
    const xo_op_desc *op;
    void *p[XO_MAX_ARGS];
    double s, s2; /* the op's scalars: alpha (fill's value, scale's factor), beta */
    void *v;
    size_t inc;
} job;

#define F32(j) ((j)->op->dtype == XO_F32)

static void job_init(job *j, const xo_op_desc *op)
{
    j->op = op;
    j->s = op->alpha;
    j->s2 = op->beta;
    j->v = NULL;
    j->inc = 1;
    for (int i = 0; i < XO_MAX_ARGS; i++)
        j->p[i] = i < op->narg ? xo__cpu_ptr(op, i) : NULL;
}

static void unary_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    job *j = arg;
    if (F32(j))
        k()->unary_f(j->op->subop, (const float *)j->p[0] + b, (float *)j->p[1] + b, e - b);
    else
        k()->unary_d(j->op->subop, (const double *)j->p[0] + b, (double *)j->p[1] + b, e - b);
}

static void binary_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    job *j = arg;
    if (F32(j))
        k()->binary_f(j->op->subop, (const float *)j->p[0] + b, (const float *)j->p[1] + b, (float *)j->p[2] + b,
                      e - b);
    else
        k()->binary_d(j->op->subop, (const double *)j->p[0] + b, (const double *)j->p[1] + b,
                      (double *)j->p[2] + b, e - b);
}

static void bscalar_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    job *j = arg;
    if (F32(j))
        k()->bscalar_f(j->op->subop, (const float *)j->p[0] + b, (float)j->s, (float *)j->p[1] + b, e - b);
    else
        k()->bscalar_d(j->op->subop, (const double *)j->p[0] + b, j->s, (double *)j->p[1] + b, e - b);
}

/* fill and scale: j->v, strided by j->inc. */
static void fill_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    job *j = arg;
    if (F32(j))
        k()->fill_f((float *)j->v + b * j->inc, j->inc, (float)j->s, e - b);
    else
        k()->fill_d((double *)j->v + b * j->inc, j->inc, j->s, e - b);
}

static void scale_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    job *j = arg;
    if (F32(j))
        k()->scale_f((float *)j->v + b * j->inc, j->inc, (float)j->s, e - b);
    else
        k()->scale_d((double *)j->v + b * j->inc, j->inc, j->s, e - b);
}

/* y = alpha x + beta y over elements [b, e) (j->s: alpha, j->s2: beta) */
static void axpby_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    job *j = arg;
    size_t ix = j->op->inc[0], iy = j->op->inc[1];
    if (F32(j))
        k()->axpby_f((float)j->s, (const float *)j->p[0] + b * ix, ix, (float)j->s2, (float *)j->p[1] + b * iy, iy,
                     e - b);
    else
        k()->axpby_d(j->s, (const double *)j->p[0] + b * ix, ix, j->s2, (double *)j->p[1] + b * iy, iy, e - b);
}

/* y = x over elements [b, e), bit for bit */
static void copy_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    job *j = arg;
    const size_t es = F32(j) ? sizeof(float) : sizeof(double), ix = j->op->inc[0], iy = j->op->inc[1];
    const char *x = (const char *)j->p[0] + b * ix * es;
    char *y = (char *)j->p[1] + b * iy * es;
    if (ix == 1 && iy == 1)
        memmove(y, x, (e - b) * es);
    else
        for (size_t i = 0; i < e - b; i++)
            memcpy(y + i * iy * es, x + i * ix * es, es);
}

static void bias_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    job *j = arg;
    xo__cpu_bias_rows(j->op->dtype, j->p[0], j->op->ld[0], j->p[1], b, e, j->op->n);
}

/* Operand a of op (strided by inc) = s x, or = s everywhere (fill): fn scale_range or
 * fill_range over op's n elements. */
static xo_status vector_op(xo__cpu_pool *pool, const xo_op_desc *op, xo__cpu_range_fn fn, int a, size_t inc, double s)
{
    job j;
    job_init(&j, op);
    j.v = j.p[a];
    j.inc = inc;
    j.s = s;
    xo__cpu_parallel_for(pool, op->n, XO_CPU_GRAIN, fn, &j);
    return XO_OK;
}

/* fn over op's n contiguous elements, split over the pool when large. */
static xo_status over_elements(xo__cpu_pool *pool, const xo_op_desc *op, xo__cpu_range_fn fn)
{
    job j;
    job_init(&j, op);
    xo__cpu_parallel_for(pool, op->n, XO_CPU_GRAIN, fn, &j);
    return XO_OK;
}

/* ---- the ops --------------------------------------------------------------------- */

xo_status xo__cpu_unary(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    (void)host;
    if (op->n < XO_CPU_GRAIN) { /* one range on this thread (parallel_for's test): no job */
        xo__cpu_unary_loop(op->dtype, op->subop, xo__cpu_ptr(op, 0), xo__cpu_ptr(op, 1), op->n);
        return XO_OK;
    }
    return over_elements(pool, op, unary_range);
}

xo_status xo__cpu_binary(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    (void)host;
    return over_elements(pool, op, binary_range);
}

xo_status xo__cpu_binary_scalar(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    (void)host;
    return over_elements(pool, op, bscalar_range);
}

/* x[i*incx] = alpha; x is never read. */
xo_status xo__cpu_fill(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    (void)host;
    return vector_op(pool, op, fill_range, 0, op->inc[0], op->alpha);
}

/* x *= s[0]: s, then x with inc[0]. */
xo_status xo__cpu_scale_by(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    (void)host;
    const void *f = xo__cpu_ptr(op, 0);
    return vector_op(pool, op, scale_range, 1, op->inc[0],
                     op->dtype == XO_F32 ? (double)*(const float *)f : *(const double *)f);
}

/* y = alpha x + beta y: beta == 0 never reads y, alpha == 0 never reads x. */
xo_status xo__cpu_axpby(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    (void)host;
    if (op->beta == 0.0 && op->alpha == 0.0)
        return vector_op(pool, op, fill_range, 1, op->inc[1], 0.0);
    if (op->alpha == 0.0)
        return vector_op(pool, op, scale_range, 1, op->inc[1], op->beta);
    job j;
    job_init(&j, op);
    xo__cpu_parallel_for(pool, op->n, XO_CPU_GRAIN, axpby_range, &j);
    return XO_OK;
}

/* BLAS's axpy, y += alpha x (alpha == 0: y as it was, x not read). Our loop rather than
 * OpenBLAS's: OpenBLAS runs a long axpy (or scal) on its own threads, which then spin for
 * their next call for about 0.1 s (OPENBLAS_THREAD_TIMEOUT) on the cores our pool's
 * threads need. Measured (xo_chain_cpu 21 big: 8 element-wise ops over 4M floats, the last
 * an axpy, 2-core AMD EPYC, five runs of each build in turn): with OpenBLAS's axpy the
 * plan's fused pass took 2.0-2.1 ms in two runs of five and eager 4.7-4.8 ms (1.26-1.32
 * and 3.9-4.1 in the others), with this loop 1.24-1.35 and 3.9-4.2 in every run. */
xo_status xo__cpu_axpy(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    (void)host;
    if (op->alpha == 0.0)
        return XO_OK;
    job j;
    job_init(&j, op);
    j.s2 = 1.0;
    xo__cpu_parallel_for(pool, op->n, XO_CPU_GRAIN, axpby_range, &j);
    return XO_OK;
}

void xo__cpu_axpy_here(xo_dtype dt, size_t n, double alpha, const void *x, size_t incx, void *y, size_t incy)
{
    if (alpha == 0.0)
        return;
    if (dt == XO_F32)
        k()->axpby_f((float)alpha, x, incx, 1.0f, y, incy, n);
    else
        k()->axpby_d(alpha, x, incx, 1.0, y, incy, n);
}

/* BLAS's scal, x *= alpha (alpha == 0 writes zeros, whatever x held); our loop, as axpy. */
xo_status xo__cpu_scal(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    (void)host;
    if (op->alpha == 0.0) {
        xo__cpu_scale_output(op);
        return XO_OK;
    }
    return vector_op(pool, op, scale_range, 0, op->inc[0], op->alpha);
}

/* BLAS's copy, y = x; our loop, as axpy. */
xo_status xo__cpu_copy(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    (void)host;
    job j;
    job_init(&j, op);
    if (j.p[0] == j.p[1] && op->inc[0] == op->inc[1])
        return XO_OK; /* y is x */
    xo__cpu_parallel_for(pool, op->n, XO_CPU_GRAIN, copy_range, &j);
    return XO_OK;
}

/* Row-major a[i][j] += bias[j]. */
xo_status xo__cpu_bias(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    (void)host;
    /* Chunks of whole rows, XO_CPU_GRAIN elements or more. (m + 1) n <= XO_CPU_GRAIN is
     * m < XO_CPU_GRAIN / n, parallel_for's test for running inline, without the division
     * (which takes as long as a tiny bias's whole loop) or a job (bias_range's loop). */
    if ((op->m + 1) * op->n <= XO_CPU_GRAIN) {
        xo__cpu_bias_rows(op->dtype, xo__cpu_ptr(op, 0), op->ld[0], xo__cpu_ptr(op, 1), 0, op->m, op->n);
        return XO_OK;
    }
    job j;
    job_init(&j, op);
    size_t rows_grain = XO_CPU_GRAIN / (op->n ? op->n : 1);
    xo__cpu_parallel_for(pool, op->m, rows_grain ? rows_grain : 1, bias_range, &j);
    return XO_OK;
}

/* ---- the loops, for the other families ---------------------------------------------- */

void xo__cpu_unary_loop(xo_dtype dt, int op, const void *x, void *y, size_t n)
{
    if (dt == XO_F32)
        k()->unary_f(op, x, y, n);
    else
        k()->unary_d(op, x, y, n);
}

void xo__cpu_bias_rows(xo_dtype dt, void *a, size_t lda, const void *bias, size_t r0, size_t r1, size_t cols)
{
    if (dt == XO_F32)
        k()->bias_f(a, lda, bias, r0, r1, cols);
    else
        k()->bias_d(a, lda, bias, r0, r1, cols);
}

void xo__cpu_binary_loop(xo_dtype dt, int op, const void *a, const void *b, void *c, size_t n)
{
    if (dt == XO_F32)
        k()->binary_f(op, a, b, c, n);
    else
        k()->binary_d(op, a, b, c, n);
}

void xo__cpu_bscalar_loop(xo_dtype dt, int op, const void *a, double s, void *c, size_t n)
{
    if (dt == XO_F32)
        k()->bscalar_f(op, a, (float)s, c, n);
    else
        k()->bscalar_d(op, a, s, c, n);
}
