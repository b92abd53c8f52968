/* CPU reductions and the ops built on them: reduce, reduce_axis, softmax, softmax_xent.
 * Vectorised loops, compiled per instruction set like cpu_elementwise.c's, split over
 * the pool by rows (or columns) when large. */
#include "cpu_internal.h"
#include "../common/xo_formulas.h"

#include <pthread.h>

/* Columns one pass of a column sum, or one block of a row's exponentials, covers. */
#define XO_CPU_COLS 256

#define REDUCE(T, SUF, ATTR)                                                                         \
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
    ATTR static double max_##SUF(const T *x, size_t n)                                               \
    {                                                                                                \
        T m = x[0];                                                                                  \
        for (size_t i = 1; i < n; i++) m = XO_F_MAX(x[i], m);                                         \
        return m;                                                                                    \
    }                                                                                                \
    /* sum of exp(x[j] - mx) over a row, through a scratch block (x is only read) */                 \
    ATTR static double sum_exp_##SUF(const T *x, T mx, size_t cols)                                  \
    {                                                                                                \
        T t[XO_CPU_COLS];                                                                            \
        double s = 0;                                                                                \
        for (size_t j0 = 0; j0 < cols; j0 += XO_CPU_COLS) {                                          \
            size_t w = cols - j0 < XO_CPU_COLS ? cols - j0 : XO_CPU_COLS;                            \
            for (size_t j = 0; j < w; j++) t[j] = XO_FN_EXP(x[j0 + j] - mx);                         \
            s += sum_##SUF(t, w);                                                                    \
        }                                                                                            \
        return s;                                                                                    \
    }                                                                                                \
    /* Rows [r0, r1): (log-)softmax along each row, max subtracted; y may be x. */                   \
    ATTR static void softmax_##SUF(int op, const T *x, size_t ldx, T *y, size_t ldy, size_t r0,      \
                                   size_t r1, size_t cols)                                           \
    {                                                                                                \
        for (size_t r = r0; r < r1; r++) {                                                           \
            const T *xr = x + r * ldx;                                                               \
            T *yr = y + r * ldy, mx = (T)max_##SUF(xr, cols);                                        \
            if (op == XO_SOFTMAX) {                                                                  \
                for (size_t j = 0; j < cols; j++) yr[j] = XO_FN_EXP(xr[j] - mx);                     \
                T inv = (T)(1.0 / sum_##SUF(yr, cols));                                              \
                for (size_t j = 0; j < cols; j++) yr[j] *= inv;                                      \
                continue;                                                                            \
            }                                                                                        \
            T lse = XO_FN_LOG((T)sum_exp_##SUF(xr, mx, cols));                                       \
            for (size_t j = 0; j < cols; j++) yr[j] = (xr[j] - mx) - lse;                            \
        }                                                                                            \
    }                                                                                                \
    /* Rows [r0, r1) of softmax cross-entropy: loss[r] = log(sum exp(x - mx)) - (x[c] - mx),     \
     * grad row = scale (softmax - onehot(c)); a label outside [0, cols) gives zeros. g may   \
     * be x (each element is read before it is written) or NULL. */                               \
    ATTR static void xent_##SUF(const T *x, size_t ldx, const int32_t *labels, T *loss, T *g,       \
                                size_t ldg, T scale, size_t r0, size_t r1, size_t cols)              \
    {                                                                                                \
        for (size_t r = r0; r < r1; r++) {                                                           \
            const T *xr = x + r * ldx;                                                               \
            T *gr = g ? g + r * ldg : NULL;                                                          \
            int32_t c = labels[r];                                                                   \
            if (c < 0 || (size_t)c >= cols) {                                                        \
                loss[r] = 0;                                                                         \
                if (gr)                                                                              \
                    for (size_t j = 0; j < cols; j++) gr[j] = 0;                                     \
                continue;                                                                            \
            }                                                                                        \
            T mx = (T)max_##SUF(xr, cols), xc = xr[c];                                               \
            double s;                                                                                \
            if (gr) {                                                                                \
                for (size_t j = 0; j < cols; j++) gr[j] = XO_FN_EXP(xr[j] - mx);                     \
                s = sum_##SUF(gr, cols);                                                             \
                T inv = (T)(scale / s);                                                              \
                for (size_t j = 0; j < cols; j++) gr[j] *= inv;                                      \
                gr[c] -= scale;                                                                      \
            } else {                                                                                 \
                s = sum_exp_##SUF(xr, mx, cols);                                                     \
            }                                                                                        \
            loss[r] = XO_FN_LOG((T)s) - (xc - mx);                                                   \
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
                for (size_t j = j0; j < j1; j++) out[j] = XO_F_MAX(xr[j], out[j]);                    \
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
    }                                                                                                \
    /* Rows [r0, r1): idx[r] = the column of row r's largest element, the first on ties; a  \
     * NaN is larger than any number, so the first NaN wins (XO_F_MAX's rule, as an index). */  \
    ATTR static void argmax_##SUF(const T *x, size_t ldx, int32_t *idx, size_t r0, size_t r1, size_t cols) \
    {                                                                                                \
        for (size_t r = r0; r < r1; r++) {                                                           \
            const T *xr = x + r * ldx;                                                               \
            size_t best = 0;                                                                         \
            for (size_t j = 1; j < cols && xr[best] == xr[best]; j++)                                \
                if (xr[j] > xr[best] || xr[j] != xr[j]) best = j;                                    \
            idx[r] = (int32_t)best;                                                                  \
        }                                                                                            \
    }

XO_CPU_INSTANTIATE(REDUCE)

typedef struct kernels {
    double (*sum_f)(const float *, size_t);
    double (*sum_d)(const double *, size_t);
    double (*max_f)(const float *, size_t);
    double (*max_d)(const double *, size_t);
    void (*softmax_f)(int, const float *, size_t, float *, size_t, size_t, size_t, size_t);
    void (*softmax_d)(int, const double *, size_t, double *, size_t, size_t, size_t, size_t);
    void (*xent_f)(const float *, size_t, const int32_t *, float *, float *, size_t, float, size_t, size_t, size_t);
    void (*xent_d)(const double *, size_t, const int32_t *, double *, double *, size_t, double, size_t, size_t,
                   size_t);
    void (*colreduce_f)(int, const float *, size_t, size_t, float *, size_t, size_t);
    void (*colreduce_d)(int, const double *, size_t, size_t, double *, size_t, size_t);
    void (*argmax_f)(const float *, size_t, int32_t *, size_t, size_t, size_t);
    void (*argmax_d)(const double *, size_t, int32_t *, size_t, size_t, size_t);
} kernels;
#define TABLE(F, D)                                                                                   \
    {sum_##F, sum_##D, max_##F, max_##D, softmax_##F, softmax_##D, xent_##F, xent_##D, colreduce_##F, \
     colreduce_##D, argmax_##F, argmax_##D}

XO_CPU_KERNELS_SELECTED(kernels, TABLE)

#define XO_CPU_MAX_CHUNKS 64
typedef struct job {
    const xo_op_desc *op;
    void *p[XO_MAX_ARGS];
    double partial[XO_CPU_MAX_CHUNKS]; /* written before it is read */
} job;

#define F32(j) ((j)->op->dtype == XO_F32)

static void job_init(job *j, const xo_op_desc *op)
{
    j->op = op;
    for (int i = 0; i < XO_MAX_ARGS; i++)
        j->p[i] = i < op->narg ? xo__cpu_ptr(op, i) : NULL;
}

double xo__cpu_reduce_loop(xo_dtype dt, int op, const void *x, size_t n)
{
    if (dt == XO_F32)
        return op == XO_SUM ? k()->sum_f(x, n) : k()->max_f(x, n);
    return op == XO_SUM ? k()->sum_d(x, n) : k()->max_d(x, n);
}

static void reduce_range(void *arg, size_t b, size_t e, int c)
{
    job *j = arg;
    size_t es = F32(j) ? sizeof(float) : sizeof(double);
    j->partial[c] = xo__cpu_reduce_loop(j->op->dtype, j->op->subop, (const char *)j->p[0] + b * es, e - b);
}

static void softmax_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    job *j = arg;
    const xo_op_desc *op = j->op;
    if (F32(j))
        k()->softmax_f(op->subop, j->p[0], op->ld[0], j->p[1], op->ld[1], b, e, op->n);
    else
        k()->softmax_d(op->subop, j->p[0], op->ld[0], j->p[1], op->ld[1], b, e, op->n);
}

static void xent_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    job *j = arg;
    const xo_op_desc *op = j->op;
    if (F32(j))
        k()->xent_f(j->p[0], op->ld[0], j->p[1], j->p[2], j->p[3], op->ld[1], (float)op->alpha, b, e, op->n);
    else
        k()->xent_d(j->p[0], op->ld[0], j->p[1], j->p[2], j->p[3], op->ld[1], op->alpha, b, e, op->n);
}

/* reduce_axis: axis 0 splits the columns, axis 1 the rows. */
static void reduce_axis_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    job *j = arg;
    const xo_op_desc *op = j->op;
    size_t es = F32(j) ? sizeof(float) : sizeof(double);
    if (op->axis == 1) {
        for (size_t r = b; r < e; r++) {
            double v = xo__cpu_reduce_loop(op->dtype, op->subop, (const char *)j->p[0] + r * op->ld[0] * es, op->n);
            if (F32(j))
                ((float *)j->p[1])[r] = (float)v;
            else
                ((double *)j->p[1])[r] = v;
        }
    } else if (F32(j)) {
        k()->colreduce_f(op->subop, j->p[0], op->ld[0], op->m, j->p[1], b, e);
    } else {
        k()->colreduce_d(op->subop, j->p[0], op->ld[0], op->m, j->p[1], b, e);
    }
}

static void argmax_range(void *arg, size_t b, size_t e, int c)
{
    (void)c;
    job *j = arg;
    const xo_op_desc *op = j->op;
    if (F32(j))
        k()->argmax_f(j->p[0], op->ld[0], j->p[1], b, e, op->n);
    else
        k()->argmax_d(j->p[0], op->ld[0], j->p[1], b, e, op->n);
}

/* Rows per chunk so that a chunk covers about XO_CPU_GRAIN elements. */
static size_t rows_grain(size_t cols)
{
    size_t g = XO_CPU_GRAIN / (cols ? cols : 1);
    return g ? g : 1;
}

/* ---- the ops --------------------------------------------------------------------- */

xo_status xo__cpu_reduce(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    (void)host;
    if (op->n == 0) {
        xo__cpu_store(op, 1, 0.0);
        return XO_OK;
    }
    job j;
    job_init(&j, op);
    int chunks = xo__cpu_parallel_for(pool, op->n, XO_CPU_GRAIN, reduce_range, &j);
    double r = j.partial[0];
    for (int c = 1; c < chunks; c++)
        r = op->subop == XO_SUM ? r + j.partial[c] : XO_F_MAX(j.partial[c], r);
    xo__cpu_store(op, 1, r);
    return XO_OK;
}

xo_status xo__cpu_reduce_axis(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    (void)host;
    job j;
    job_init(&j, op);
    size_t results = op->axis == 0 ? op->n : op->m, over = op->axis == 0 ? op->m : op->n;
    if (over == 0) { /* XO_SUM over an empty axis (the core refuses XO_MAX_ELEMENT) */
        for (size_t i = 0; i < results; i++)
            if (F32(&j))
                ((float *)j.p[1])[i] = 0.0f;
            else
                ((double *)j.p[1])[i] = 0.0;
        return XO_OK;
    }
    xo__cpu_parallel_for(pool, results, rows_grain(over), reduce_axis_range, &j);
    return XO_OK;
}

xo_status xo__cpu_softmax(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    (void)host;
    job j;
    job_init(&j, op);
    xo__cpu_parallel_for(pool, op->m, rows_grain(op->n), softmax_range, &j);
    return XO_OK;
}

/* A row-wise op whose operand 1 is int32 whatever the dtype (softmax_xent's labels,
 * argmax's indices): its offset counts int32s. */
static xo_status rows_with_int32(xo__cpu_pool *pool, const xo_op_desc *op, void (*range)(void *, size_t, size_t, int))
{
    job j;
    job_init(&j, op);
    j.p[1] = (int32_t *)op->arg[1].host + op->arg[1].off;
    xo__cpu_parallel_for(pool, op->m, rows_grain(op->n), range, &j);
    return XO_OK;
}

xo_status xo__cpu_softmax_xent(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    (void)host;
    return rows_with_int32(pool, op, xent_range);
}

xo_status xo__cpu_argmax(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_op_desc *op)
{
    (void)host;
    return rows_with_int32(pool, op, argmax_range);
}
