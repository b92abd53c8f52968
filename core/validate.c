/* The error paths of argument validation (the checks themselves are inline in
 * xo_ops.h): each names the function and the offending argument. */
#include "xo_ops.h"

xo_status xo__fail_null(const xo__op *op, const char *name)
{
    return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s is NULL", op->fn, name);
}

xo_status xo__fail_enum(const xo__op *op, const char *name, int value, int lo, int hi)
{
    return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s = %d is not a valid value (%d..%d)", op->fn, name, value, lo,
                     hi);
}

xo_status xo__fail_layout(const xo__op *op, int layout)
{
    return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: layout = %d is not XO_ROW_MAJOR (101) or XO_COL_MAJOR (102)",
                     op->fn, layout);
}

xo_status xo__fail_trans(const xo__op *op, const char *name, int t)
{
    return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s = %d is not XO_NO_TRANS (111) or XO_TRANS (112)", op->fn,
                     name, t);
}

xo_status xo__fail_context(const xo__op *op, const char *bname)
{
    return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s belongs to another context", op->fn, bname);
}

xo_status xo__fail_inc(const xo__op *op, const char *incname)
{
    return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s = 0; increments must be >= 1", op->fn, incname);
}

xo_status xo__fail_ld(const xo__op *op, const char *ldname, size_t ld, const char *inner_name, size_t need,
                      const char *bname, size_t rows, size_t cols, xo_layout layout)
{
    return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s = %zu is less than max(1, %s) = %zu (%s is %zu x %zu, %s)",
                     op->fn, ldname, ld, inner_name, need, bname, rows, cols,
                     layout == XO_ROW_MAJOR ? "row-major" : "column-major");
}

xo_status xo__fail_span(const xo__op *op, const char *bname, const char *offname, size_t off, size_t elements,
                        size_t bytes)
{
    if (elements == 0)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s = %zu lies past the end of %s (%zu bytes)", op->fn, offname,
                         off, bname, bytes);
    return xo__error(XO_ERR_INVALID_ARGUMENT,
                     "%s: %s reaches past its buffer's end: %s = %zu plus %zu elements of %zu bytes > %zu bytes",
                     op->fn, bname, offname, off, elements, op->esize, bytes);
}

xo_status xo__fail_extent(const xo__op *op, const char *bname)
{
    return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s reaches past its buffer's end (its extent overflows size_t)",
                     op->fn, bname);
}

xo_status xo__fail_overlap(const xo__op *op, int out, int in, int alias_allowed)
{
    return xo__error(XO_ERR_INVALID_ARGUMENT,
                     "%s: output %s (bytes %zu..%zu) overlaps input %s (bytes %zu..%zu) in the same buffer%s", op->fn,
                     op->argname[out], op->lo[out], op->hi[out], op->argname[in], op->lo[in], op->hi[in],
                     alias_allowed ? "; only the exact alias at the same offset is allowed" : "");
}
