/* The public reductions and the ops built on them: reduce, reduce_axis, softmax,
 * softmax_xent, argmax. Each validates every argument, describes itself and dispatches. */
#include "xo_ops.h"

#define RET(expr) XO_RETURN_IF_ERROR(expr)
/* Each public entry point gets its own copy, specialised to its dtype and constants (the
 * operand count and read/write masks set just before dispatch are literals, so the inline
 * dispatch in xo_dispatch.h unrolls its operand loops). */
#define XO_INLINE inline __attribute__((always_inline))

static XO_INLINE xo_status reduce(const char *fn, xo_dtype dt, xo_context *ctx, xo_reduce_op rop, size_t n, xo_buffer *x,
                        size_t x_off, xo_buffer *out, size_t out_off)
{
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_REDUCE, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_enum(&op, "op", (int)rop, XO_SUM, XO_MAX_ELEMENT));
    RET(xo__check_vector(&op, 0, "x", "x_off", NULL, x, x_off, n, 1));
    RET(xo__check_vector(&op, 1, "out", "out_off", NULL, out, out_off, 1, 1));
    RET(xo__check_overlap(&op, 1, "out", 0, "x", 0));
    if (n == 0 && rop == XO_MAX_ELEMENT)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: n = 0: XO_MAX_ELEMENT of no elements is undefined", fn);
    op.desc.subop = (int)rop;
    op.desc.n = n;
    op.reads = 1u;
    op.writes = 1u << 1;
    op.desc.narg = 2;
    op.cpu_only = n == 0;
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

/* Operand i: n contiguous int32 elements whatever the op's dtype (their offset counts
 * int32s), as softmax_xent's labels and argmax's indices. */
static XO_INLINE xo_status check_int32_vector(xo__op *op, int i, const char *name, const char *offname, xo_buffer *b,
                                              size_t off, size_t n)
{
    size_t esize = op->esize;
    op->esize = sizeof(int32_t);
    xo_status st = xo__check_vector(op, i, name, offname, NULL, b, off, n, 1);
    op->esize = esize;
    return st;
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
    RET(check_int32_vector(&op, 1, "labels", "labels_off", labels, labels_off, rows));
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

/* Per row, the column of its largest element (the first on ties, the first NaN before
 * any number) into rows int32 indices (their offset counts int32 elements). */
static XO_INLINE xo_status argmax(const char *fn, xo_dtype dt, xo_context *ctx, size_t rows, size_t cols,
                                  xo_buffer *x, size_t x_off, size_t ldx, xo_buffer *idx, size_t idx_off)
{
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_ARGMAX, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_matrix(&op, 0, "x", "x_off", "ldx", "rows", "cols", 0, x, x_off, XO_ROW_MAJOR, rows, cols, ldx));
    RET(check_int32_vector(&op, 1, "idx", "idx_off", idx, idx_off, rows));
    RET(xo__check_overlap(&op, 1, "idx", 0, "x", 0));
    if (cols == 0)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: cols = 0: the argmax of an empty row is undefined", fn);
    if (cols > (size_t)INT32_MAX)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: cols = %zu: a column index must fit the int32 idx", fn, cols);
    if (rows == 0)
        return XO_OK;
    op.desc.m = rows;
    op.desc.n = cols;
    op.desc.ld[0] = xo__tidy_ld(XO_ROW_MAJOR, rows, cols, ldx);
    op.desc.narg = 2;
    op.reads = 1u;
    op.writes = 1u << 1;
    return xo__dispatch(&op);
}

/* ---- the public entry points ------------------------------------------------------ */

xo_status xo_sreduce(xo_context *ctx, xo_reduce_op op, size_t n, xo_buffer *x, size_t x_off, xo_buffer *out,
                     size_t out_off)
{
    return reduce("xo_sreduce", XO_F32, ctx, op, n, x, x_off, out, out_off);
}
xo_status xo_dreduce(xo_context *ctx, xo_reduce_op op, size_t n, xo_buffer *x, size_t x_off, xo_buffer *out,
                     size_t out_off)
{
    return reduce("xo_dreduce", XO_F64, ctx, op, n, x, x_off, out, out_off);
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
xo_status xo_sargmax(xo_context *ctx, size_t rows, size_t cols, xo_buffer *x, size_t x_off, size_t ldx, xo_buffer *idx,
                     size_t idx_off)
{
    return argmax("xo_sargmax", XO_F32, ctx, rows, cols, x, x_off, ldx, idx, idx_off);
}
xo_status xo_dargmax(xo_context *ctx, size_t rows, size_t cols, xo_buffer *x, size_t x_off, size_t ldx, xo_buffer *idx,
                     size_t idx_off)
{
    return argmax("xo_dargmax", XO_F64, ctx, rows, cols, x, x_off, ldx, idx, idx_off);
}
