/* Argument validation: CBLAS rules, spans past a buffer's end (overflow-safe), overlap. */
#include "xo_ops.h"

#include <string.h>

void xo__op_begin(xo__op *op, const char *fn, xo_context *ctx, xo_op_kind kind, xo_dtype dtype)
{
    /* Field by field rather than memset: this runs on every call of every op, and the
     * struct is mostly written again by the checks (spans, offsets, operands). */
    op->fn = fn;
    op->ctx = ctx;
    op->stat_slot = -1;
    op->cpu_only = 0;
    op->esize = dtype == XO_F64 ? sizeof(double) : sizeof(float);
    for (int i = 0; i < XO_MAX_OPERANDS; i++) {
        op->buf[i] = NULL;
        op->argname[i] = NULL;
        op->reads[i] = op->writes[i] = 0;
        op->lo[i] = op->hi[i] = 0;
        op->desc.arg[i] = (xo_operand){0};
    }
    op->desc.kind = kind;
    op->desc.dtype = dtype;
    op->desc.subop = 0;
    op->desc.layout = XO_ROW_MAJOR;
    op->desc.ta = op->desc.tb = XO_NO_TRANS;
    op->desc.m = op->desc.n = op->desc.k = 0;
    op->desc.ld[0] = op->desc.ld[1] = op->desc.ld[2] = 0;
    op->desc.inc[0] = op->desc.inc[1] = 0;
    op->desc.alpha = op->desc.beta = 0;
    op->desc.narg = 0;
}

xo_status xo__check_ctx(const xo__op *op)
{
    if (!op->ctx)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", op->fn);
    return XO_OK;
}

xo_status xo__check_enum(const xo__op *op, const char *name, int value, int lo, int hi)
{
    if (value < lo || value > hi)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s = %d is not a valid value (%d..%d)", op->fn, name, value,
                         lo, hi);
    return XO_OK;
}

xo_status xo__check_layout(const xo__op *op, xo_layout layout)
{
    if (layout != XO_ROW_MAJOR && layout != XO_COL_MAJOR)
        return xo__error(XO_ERR_INVALID_ARGUMENT,
                         "%s: layout = %d is not XO_ROW_MAJOR (101) or XO_COL_MAJOR (102)", op->fn, (int)layout);
    return XO_OK;
}

xo_status xo__check_trans(const xo__op *op, const char *name, xo_transpose t)
{
    if (t != XO_NO_TRANS && t != XO_TRANS)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s = %d is not XO_NO_TRANS (111) or XO_TRANS (112)",
                         op->fn, name, (int)t);
    return XO_OK;
}

static xo_status check_buffer(const xo__op *op, const char *bname, const xo_buffer *b)
{
    if (!b)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s is NULL", op->fn, bname);
    if (b->ctx != op->ctx)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s belongs to another context", op->fn, bname);
    return XO_OK;
}

/* Record operand i's span of `elements` from element `off`, checking it stays inside b. */
static xo_status set_span(xo__op *op, int i, const char *bname, const char *offname, xo_buffer *b, size_t off,
                          size_t elements)
{
    size_t end, lo, hi;
    if (__builtin_add_overflow(off, elements, &end) || __builtin_mul_overflow(end, op->esize, &hi) ||
        hi > b->bytes) {
        if (elements == 0)
            return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s = %zu lies past the end of %s (%zu bytes)", op->fn,
                             offname, off, bname, b->bytes);
        return xo__error(XO_ERR_INVALID_ARGUMENT,
                         "%s: %s reaches past its buffer's end: %s = %zu plus %zu elements of %zu bytes > %zu bytes",
                         op->fn, bname, offname, off, elements, op->esize, b->bytes);
    }
    lo = off * op->esize;
    op->buf[i] = b;
    op->argname[i] = bname;
    op->lo[i] = lo;
    op->hi[i] = hi;
    op->desc.arg[i].off = off;
    if (op->desc.narg < i + 1)
        op->desc.narg = i + 1;
    return XO_OK;
}

xo_status xo__check_vector(xo__op *op, int i, const char *bname, const char *offname, const char *incname,
                           xo_buffer *b, size_t off, size_t n, size_t inc)
{
    if (incname && inc == 0)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s = 0; increments must be >= 1", op->fn, incname);
    XO_RETURN_IF_ERROR(check_buffer(op, bname, b));
    size_t elements = 0;
    if (n > 0 && (__builtin_mul_overflow(n - 1, inc, &elements) || __builtin_add_overflow(elements, 1, &elements)))
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s reaches past its buffer's end: n = %zu with %s = %zu",
                         op->fn, bname, n, incname ? incname : "stride", inc);
    return set_span(op, i, bname, offname, b, off, elements);
}

xo_status xo__check_matrix(xo__op *op, int i, const char *bname, const char *offname, const char *ldname,
                           const char *inner_name, xo_buffer *b, size_t off, xo_layout layout, size_t rows,
                           size_t cols, size_t ld)
{
    size_t inner = layout == XO_ROW_MAJOR ? cols : rows;
    size_t outer = layout == XO_ROW_MAJOR ? rows : cols;
    size_t need = inner > 1 ? inner : 1;
    if (ld < need)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s = %zu is less than max(1, %s) = %zu (%s is %zu x %zu, %s)",
                         op->fn, ldname, ld, inner_name, need, bname, rows, cols,
                         layout == XO_ROW_MAJOR ? "row-major" : "column-major");
    XO_RETURN_IF_ERROR(check_buffer(op, bname, b));
    size_t elements = 0;
    if (rows > 0 && cols > 0 &&
        (__builtin_mul_overflow(outer - 1, ld, &elements) || __builtin_add_overflow(elements, inner, &elements)))
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s reaches past its buffer's end (%zu x %zu, %s = %zu)",
                         op->fn, bname, rows, cols, ldname, ld);
    return set_span(op, i, bname, offname, b, off, elements);
}

xo_status xo__check_overlap(const xo__op *op, int out, int in, int alias_allowed)
{
    if (op->buf[out] != op->buf[in] || op->lo[out] == op->hi[out] || op->lo[in] == op->hi[in])
        return XO_OK;
    if (op->hi[out] <= op->lo[in] || op->hi[in] <= op->lo[out])
        return XO_OK;
    if (alias_allowed && op->lo[out] == op->lo[in] && op->hi[out] == op->hi[in])
        return XO_OK;
    return xo__error(XO_ERR_INVALID_ARGUMENT,
                     "%s: output %s (bytes %zu..%zu) overlaps input %s (bytes %zu..%zu) in the same buffer%s", op->fn,
                     op->argname[out], op->lo[out], op->hi[out], op->argname[in], op->lo[in], op->hi[in],
                     alias_allowed ? "; only the exact alias at the same offset is allowed" : "");
}
