/* The ops added in 0.3 (copy, fill, axpby, ger, binary_scalar, scale_by, softmax,
 * reduce_axis, gemm_bias_act) and 0.4 (softmax_xent): each validates every argument as the BLAS ops in ops.c
 * do, describes itself as XO_OP_MAP's table says (crossover/plugin.h), and dispatches.
 * The s and d entry points share one implementation per op, with dtype as data. */
#include "xo_ops.h"

#define RET(expr) XO_RETURN_IF_ERROR(expr)
/* As in ops.c: each public entry point gets its own copy with its constants. */
#define XO_INLINE inline __attribute__((always_inline))

/* y = x; y exactly x (same buffer, offset and increment) changes nothing. */
static XO_INLINE xo_status copy(const char *fn, xo_dtype dt, xo_context *ctx, size_t n, xo_buffer *x, size_t x_off,
                                size_t incx, xo_buffer *y, size_t y_off, size_t incy)
{
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_COPY, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_vector(&op, 0, "x", "x_off", "incx", x, x_off, n, incx));
    RET(xo__check_vector(&op, 1, "y", "y_off", "incy", y, y_off, n, incy));
    /* The only overlap allowed is the same span, which for n > 1 means the same increment. */
    RET(xo__check_overlap(&op, 1, "y", 0, "x", 1));
    if (n == 0 || (x == y && x_off == y_off))
        return XO_OK;
    op.desc.n = n;
    op.desc.inc[0] = xo__tidy_inc(n, incx);
    op.desc.inc[1] = xo__tidy_inc(n, incy);
    op.reads = 1u;
    op.writes = 1u << 1;
    op.desc.narg = 2;
    return xo__dispatch(&op);
}

/* x[i*incx] = value; x is never read (NaN or Inf in it cannot survive). */
static XO_INLINE xo_status fill(const char *fn, xo_dtype dt, xo_context *ctx, size_t n, double value, xo_buffer *x,
                                size_t x_off, size_t incx)
{
    return xo__vector_in_place(fn, dt, ctx, XO_OP_FILL, n, value, x, x_off, incx, 0);
}

/* y = alpha x + beta y; y is not read when beta == 0. */
static XO_INLINE xo_status axpby(const char *fn, xo_dtype dt, xo_context *ctx, size_t n, double alpha, xo_buffer *x,
                                 size_t x_off, size_t incx, double beta, xo_buffer *y, size_t y_off, size_t incy)
{
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_AXPBY, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_vector(&op, 0, "x", "x_off", "incx", x, x_off, n, incx));
    RET(xo__check_vector(&op, 1, "y", "y_off", "incy", y, y_off, n, incy));
    RET(xo__check_overlap(&op, 1, "y", 0, "x", 0));
    if (n == 0)
        return XO_OK;
    op.desc.n = n;
    op.desc.inc[0] = xo__tidy_inc(n, incx);
    op.desc.inc[1] = xo__tidy_inc(n, incy);
    op.desc.alpha = alpha;
    op.desc.beta = beta;
    op.reads = 1u | (unsigned)(beta != 0.0) << 1;
    op.writes = 1u << 1;
    op.desc.narg = 2;
    return xo__dispatch(&op);
}

/* A += alpha x y^T, A m x n in `layout`. As in BLAS, alpha == 0 leaves A untouched. */
static XO_INLINE xo_status ger(const char *fn, xo_dtype dt, xo_context *ctx, xo_layout layout, size_t m, size_t n,
                               double alpha, xo_buffer *x, size_t x_off, size_t incx, xo_buffer *y, size_t y_off,
                               size_t incy, xo_buffer *a, size_t a_off, size_t lda)
{
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_GER, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_layout(&op, layout));
    RET(xo__check_vector(&op, 0, "x", "x_off", "incx", x, x_off, m, incx));
    RET(xo__check_vector(&op, 1, "y", "y_off", "incy", y, y_off, n, incy));
    RET(xo__check_matrix(&op, 2, "a", "a_off", "lda", "m", "n", 0, a, a_off, layout, m, n, lda));
    RET(xo__check_overlap(&op, 2, "a", 0, "x", 0));
    RET(xo__check_overlap(&op, 2, "a", 1, "y", 0));
    if (m == 0 || n == 0 || alpha == 0.0)
        return XO_OK;
    op.desc.layout = layout;
    op.desc.m = m;
    op.desc.n = n;
    op.desc.inc[0] = xo__tidy_inc(m, incx);
    op.desc.inc[1] = xo__tidy_inc(n, incy);
    op.desc.ld[2] = xo__tidy_ld(layout, m, n, lda);
    op.desc.alpha = alpha;
    op.reads = 7u;
    op.writes = 1u << 2;
    op.desc.narg = 3;
    return xo__dispatch(&op);
}

/* c[i] = a[i] op s; c may be a exactly. */
static XO_INLINE xo_status binary_scalar(const char *fn, xo_dtype dt, xo_context *ctx, xo_binary_op bop, size_t n,
                                         xo_buffer *a, size_t a_off, double s, xo_buffer *c, size_t c_off)
{
    static const char *const names[4] = {"a", "a_off", "c", "c_off"};
    return xo__elementwise(fn, dt, ctx, XO_OP_BINARY_SCALAR, (int)bop, 0, XO_BINARY_OP_COUNT - 1, n, names, a, a_off, c, c_off,
                           s);
}

/* x *= s[s_off], the factor read where the op runs (no host synchronisation). */
static XO_INLINE xo_status scale_by(const char *fn, xo_dtype dt, xo_context *ctx, size_t n, xo_buffer *s,
                                    size_t s_off, xo_buffer *x, size_t x_off, size_t incx)
{
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_SCALE_BY, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_vector(&op, 0, "s", "s_off", NULL, s, s_off, 1, 1));
    RET(xo__check_vector(&op, 1, "x", "x_off", "incx", x, x_off, n, incx));
    RET(xo__check_overlap(&op, 1, "x", 0, "s", 0));
    if (n == 0)
        return XO_OK;
    op.desc.n = n;
    op.desc.inc[0] = xo__tidy_inc(n, incx);
    op.reads = 3u;
    op.writes = 1u << 1;
    op.desc.narg = 2;
    return xo__dispatch(&op);
}

/* Row-major softmax or log-softmax along each row; y may be x with ldy == ldx. */
static XO_INLINE xo_status softmax(const char *fn, xo_dtype dt, xo_context *ctx, xo_softmax_op sop, size_t rows,
                                   size_t cols, xo_buffer *x, size_t x_off, size_t ldx, xo_buffer *y, size_t y_off,
                                   size_t ldy)
{
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_SOFTMAX, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_enum(&op, "op", (int)sop, XO_SOFTMAX, XO_LOG_SOFTMAX));
    RET(xo__check_matrix(&op, 0, "x", "x_off", "ldx", "rows", "cols", 0, x, x_off, XO_ROW_MAJOR, rows, cols, ldx));
    RET(xo__check_matrix(&op, 1, "y", "y_off", "ldy", "rows", "cols", 0, y, y_off, XO_ROW_MAJOR, rows, cols, ldy));
    /* Same span: same offset and, over more than one row, the same leading dimension. */
    RET(xo__check_overlap(&op, 1, "y", 0, "x", 1));
    if (rows == 0 || cols == 0)
        return XO_OK;
    op.desc.subop = (int)sop;
    op.desc.m = rows;
    op.desc.n = cols;
    op.desc.ld[0] = xo__tidy_ld(XO_ROW_MAJOR, rows, cols, ldx);
    op.desc.ld[1] = xo__tidy_ld(XO_ROW_MAJOR, rows, cols, ldy);
    op.reads = 1u;
    op.writes = 1u << 1;
    op.desc.narg = 2;
    return xo__dispatch(&op);
}

/* Row-major reduction along axis 0 (cols results) or 1 (rows results). */
static XO_INLINE xo_status reduce_axis(const char *fn, xo_dtype dt, xo_context *ctx, xo_reduce_op rop, size_t rows,
                                       size_t cols, xo_buffer *x, size_t x_off, size_t ldx, int axis, xo_buffer *out,
                                       size_t out_off)
{
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_REDUCE_AXIS, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_enum(&op, "op", (int)rop, XO_SUM, XO_MAX_ELEMENT));
    RET(xo__check_enum(&op, "axis", axis, 0, 1));
    size_t results = axis == 0 ? cols : rows, over = axis == 0 ? rows : cols;
    RET(xo__check_matrix(&op, 0, "x", "x_off", "ldx", "rows", "cols", 0, x, x_off, XO_ROW_MAJOR, rows, cols, ldx));
    RET(xo__check_vector(&op, 1, "out", "out_off", NULL, out, out_off, results, 1));
    RET(xo__check_overlap(&op, 1, "out", 0, "x", 0));
    if (results == 0)
        return XO_OK;
    if (over == 0 && rop == XO_MAX_ELEMENT)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s = 0: XO_MAX_ELEMENT over an empty axis is undefined", fn,
                         axis == 0 ? "rows" : "cols");
    op.desc.subop = (int)rop;
    op.desc.axis = axis;
    op.desc.m = rows;
    op.desc.n = cols;
    op.desc.ld[0] = xo__tidy_ld(XO_ROW_MAJOR, rows, cols, ldx);
    op.reads = 1u;
    op.writes = 1u << 1;
    op.desc.narg = 2;
    op.cpu_only = over == 0; /* XO_SUM over nothing: zeros */
    return xo__dispatch(&op);
}

/* C = act(alpha op(A) op(B) + beta C + bias), bias (n elements) optional. */
static XO_INLINE xo_status gemm_bias_act(const char *fn, xo_dtype dt, xo_context *ctx, xo_layout layout,
                                         xo_transpose ta, xo_transpose tb, size_t m, size_t n, size_t k,
                                         double alpha, xo_buffer *a, size_t a_off, size_t lda, xo_buffer *b,
                                         size_t b_off, size_t ldb, double beta, xo_buffer *c, size_t c_off,
                                         size_t ldc, xo_buffer *bv, size_t bias_off, xo_unary_op act)
{
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_GEMM_BIAS_ACT, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_gemm(&op, layout, ta, tb, m, n, k, a, a_off, lda, b, b_off, ldb, c, c_off, ldc));
    RET(xo__check_enum(&op, "act", (int)act, 0, XO_UNARY_OP_COUNT - 1));
    if (!xo__unary_is_activation(act))
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: act = %d is a *_GRAD op; an activation is a forward op or "
                         "XO_IDENTITY", fn, (int)act);
    if (bv) {
        RET(xo__check_vector(&op, 3, "bias", "bias_off", NULL, bv, bias_off, n, 1));
        RET(xo__check_overlap(&op, 2, "c", 3, "bias", 0));
    }
    if (m == 0 || n == 0)
        return XO_OK;
    xo__gemm_desc(&op.desc, layout, ta, tb, m, n, k, alpha, lda, ldb, beta, ldc);
    op.desc.subop = (int)act;
    op.desc.narg = bv ? 4 : 3;
    op.reads = 3u | (unsigned)(beta != 0.0) << 2 | (bv ? 1u << 3 : 0u);
    op.writes = 1u << 2;
    return xo__dispatch(&op);
}

/* Per row: loss = -log_softmax(x)[label], grad = scale (softmax(x) - onehot(label));
 * labels are int32 (their offset counts int32 elements); grad may be NULL, or x with
 * ldg == ldx. */
static XO_INLINE xo_status softmax_xent(const char *fn, xo_dtype dt, xo_context *ctx, size_t rows, size_t cols,
                                        xo_buffer *x, size_t x_off, size_t ldx, xo_buffer *labels,
                                        size_t labels_off, double scale, xo_buffer *loss, size_t loss_off,
                                        xo_buffer *grad, size_t grad_off, size_t ldg)
{
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_SOFTMAX_XENT, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_matrix(&op, 0, "x", "x_off", "ldx", "rows", "cols", 0, x, x_off, XO_ROW_MAJOR, rows, cols, ldx));
    op.esize = sizeof(int32_t); /* the labels are int32 whatever the dtype */
    xo_status st = xo__check_vector(&op, 1, "labels", "labels_off", NULL, labels, labels_off, rows, 1);
    op.esize = dt == XO_F64 ? sizeof(double) : sizeof(float);
    RET(st);
    RET(xo__check_vector(&op, 2, "loss", "loss_off", NULL, loss, loss_off, rows, 1));
    RET(xo__check_overlap(&op, 2, "loss", 0, "x", 0));
    RET(xo__check_overlap(&op, 2, "loss", 1, "labels", 0));
    if (grad) {
        RET(xo__check_matrix(&op, 3, "grad", "grad_off", "ldg", "rows", "cols", 0, grad, grad_off, XO_ROW_MAJOR,
                             rows, cols, ldg));
        /* Same span as x: same offset and, over more than one row, the same ld. */
        RET(xo__check_overlap(&op, 3, "grad", 0, "x", 1));
        RET(xo__check_overlap(&op, 3, "grad", 1, "labels", 0));
        RET(xo__check_overlap(&op, 3, "grad", 2, "loss", 0));
    }
    if (rows == 0)
        return XO_OK;
    op.desc.m = rows;
    op.desc.n = cols;
    op.desc.ld[0] = xo__tidy_ld(XO_ROW_MAJOR, rows, cols, ldx);
    op.desc.ld[1] = grad ? xo__tidy_ld(XO_ROW_MAJOR, rows, cols, ldg) : 0;
    op.desc.alpha = scale;
    op.desc.narg = grad ? 4 : 3;
    op.reads = 3u;
    op.writes = 1u << 2 | (grad ? 1u << 3 : 0u);
    op.cpu_only = cols == 0; /* every label is out of range: zeros */
    return xo__dispatch(&op);
}

/* ---- the public entry points ------------------------------------------------------ */

xo_status xo_scopy(xo_context *ctx, size_t n, xo_buffer *x, size_t x_off, size_t incx, xo_buffer *y, size_t y_off,
                   size_t incy)
{
    return copy("xo_scopy", XO_F32, ctx, n, x, x_off, incx, y, y_off, incy);
}
xo_status xo_dcopy(xo_context *ctx, size_t n, xo_buffer *x, size_t x_off, size_t incx, xo_buffer *y, size_t y_off,
                   size_t incy)
{
    return copy("xo_dcopy", XO_F64, ctx, n, x, x_off, incx, y, y_off, incy);
}

xo_status xo_sfill(xo_context *ctx, size_t n, float value, xo_buffer *x, size_t x_off, size_t incx)
{
    return fill("xo_sfill", XO_F32, ctx, n, value, x, x_off, incx);
}
xo_status xo_dfill(xo_context *ctx, size_t n, double value, xo_buffer *x, size_t x_off, size_t incx)
{
    return fill("xo_dfill", XO_F64, ctx, n, value, x, x_off, incx);
}

xo_status xo_saxpby(xo_context *ctx, size_t n, float alpha, xo_buffer *x, size_t x_off, size_t incx, float beta,
                    xo_buffer *y, size_t y_off, size_t incy)
{
    return axpby("xo_saxpby", XO_F32, ctx, n, alpha, x, x_off, incx, beta, y, y_off, incy);
}
xo_status xo_daxpby(xo_context *ctx, size_t n, double alpha, xo_buffer *x, size_t x_off, size_t incx, double beta,
                    xo_buffer *y, size_t y_off, size_t incy)
{
    return axpby("xo_daxpby", XO_F64, ctx, n, alpha, x, x_off, incx, beta, y, y_off, incy);
}

xo_status xo_sger(xo_context *ctx, xo_layout layout, size_t m, size_t n, float alpha, xo_buffer *x, size_t x_off,
                  size_t incx, xo_buffer *y, size_t y_off, size_t incy, xo_buffer *a, size_t a_off, size_t lda)
{
    return ger("xo_sger", XO_F32, ctx, layout, m, n, alpha, x, x_off, incx, y, y_off, incy, a, a_off, lda);
}
xo_status xo_dger(xo_context *ctx, xo_layout layout, size_t m, size_t n, double alpha, xo_buffer *x, size_t x_off,
                  size_t incx, xo_buffer *y, size_t y_off, size_t incy, xo_buffer *a, size_t a_off, size_t lda)
{
    return ger("xo_dger", XO_F64, ctx, layout, m, n, alpha, x, x_off, incx, y, y_off, incy, a, a_off, lda);
}

xo_status xo_sbinary_scalar(xo_context *ctx, xo_binary_op op, size_t n, xo_buffer *a, size_t a_off, float s,
                            xo_buffer *c, size_t c_off)
{
    return binary_scalar("xo_sbinary_scalar", XO_F32, ctx, op, n, a, a_off, s, c, c_off);
}
xo_status xo_dbinary_scalar(xo_context *ctx, xo_binary_op op, size_t n, xo_buffer *a, size_t a_off, double s,
                            xo_buffer *c, size_t c_off)
{
    return binary_scalar("xo_dbinary_scalar", XO_F64, ctx, op, n, a, a_off, s, c, c_off);
}

xo_status xo_sscale_by(xo_context *ctx, size_t n, xo_buffer *s, size_t s_off, xo_buffer *x, size_t x_off, size_t incx)
{
    return scale_by("xo_sscale_by", XO_F32, ctx, n, s, s_off, x, x_off, incx);
}
xo_status xo_dscale_by(xo_context *ctx, size_t n, xo_buffer *s, size_t s_off, xo_buffer *x, size_t x_off, size_t incx)
{
    return scale_by("xo_dscale_by", XO_F64, ctx, n, s, s_off, x, x_off, incx);
}

xo_status xo_ssoftmax(xo_context *ctx, xo_softmax_op op, size_t rows, size_t cols, xo_buffer *x, size_t x_off,
                      size_t ldx, xo_buffer *y, size_t y_off, size_t ldy)
{
    return softmax("xo_ssoftmax", XO_F32, ctx, op, rows, cols, x, x_off, ldx, y, y_off, ldy);
}
xo_status xo_dsoftmax(xo_context *ctx, xo_softmax_op op, size_t rows, size_t cols, xo_buffer *x, size_t x_off,
                      size_t ldx, xo_buffer *y, size_t y_off, size_t ldy)
{
    return softmax("xo_dsoftmax", XO_F64, ctx, op, rows, cols, x, x_off, ldx, y, y_off, ldy);
}

xo_status xo_sreduce_axis(xo_context *ctx, xo_reduce_op op, size_t rows, size_t cols, xo_buffer *x, size_t x_off,
                          size_t ldx, int axis, xo_buffer *out, size_t out_off)
{
    return reduce_axis("xo_sreduce_axis", XO_F32, ctx, op, rows, cols, x, x_off, ldx, axis, out, out_off);
}
xo_status xo_dreduce_axis(xo_context *ctx, xo_reduce_op op, size_t rows, size_t cols, xo_buffer *x, size_t x_off,
                          size_t ldx, int axis, xo_buffer *out, size_t out_off)
{
    return reduce_axis("xo_dreduce_axis", XO_F64, ctx, op, rows, cols, x, x_off, ldx, axis, out, out_off);
}

xo_status xo_sgemm_bias_act(xo_context *ctx, xo_layout layout, xo_transpose ta, xo_transpose tb, size_t m, size_t n,
                            size_t k, float alpha, xo_buffer *a, size_t a_off, size_t lda, xo_buffer *b,
                            size_t b_off, size_t ldb, float beta, xo_buffer *c, size_t c_off, size_t ldc,
                            xo_buffer *bias, size_t bias_off, xo_unary_op act)
{
    return gemm_bias_act("xo_sgemm_bias_act", XO_F32, ctx, layout, ta, tb, m, n, k, alpha, a, a_off, lda, b, b_off,
                         ldb, beta, c, c_off, ldc, bias, bias_off, act);
}
xo_status xo_dgemm_bias_act(xo_context *ctx, xo_layout layout, xo_transpose ta, xo_transpose tb, size_t m, size_t n,
                            size_t k, double alpha, xo_buffer *a, size_t a_off, size_t lda, xo_buffer *b,
                            size_t b_off, size_t ldb, double beta, xo_buffer *c, size_t c_off, size_t ldc,
                            xo_buffer *bias, size_t bias_off, xo_unary_op act)
{
    return gemm_bias_act("xo_dgemm_bias_act", XO_F64, ctx, layout, ta, tb, m, n, k, alpha, a, a_off, lda, b, b_off,
                         ldb, beta, c, c_off, ldc, bias, bias_off, act);
}

xo_status xo_ssoftmax_xent(xo_context *ctx, size_t rows, size_t cols, xo_buffer *x, size_t x_off, size_t ldx,
                           xo_buffer *labels, size_t labels_off, float scale, xo_buffer *loss, size_t loss_off,
                           xo_buffer *grad, size_t grad_off, size_t ldg)
{
    return softmax_xent("xo_ssoftmax_xent", XO_F32, ctx, rows, cols, x, x_off, ldx, labels, labels_off, scale, loss,
                        loss_off, grad, grad_off, ldg);
}
xo_status xo_dsoftmax_xent(xo_context *ctx, size_t rows, size_t cols, xo_buffer *x, size_t x_off, size_t ldx,
                           xo_buffer *labels, size_t labels_off, double scale, xo_buffer *loss, size_t loss_off,
                           xo_buffer *grad, size_t grad_off, size_t ldg)
{
    return softmax_xent("xo_dsoftmax_xent", XO_F64, ctx, rows, cols, x, x_off, ldx, labels, labels_off, scale, loss,
                        loss_off, grad, grad_off, ldg);
}
