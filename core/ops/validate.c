/* The error paths of argument validation (the checks themselves are inline in
 * xo_ops.h): each names the function and the offending argument. */
#include "xo_ops.h"

xo_status xo__fail_null(const char *fn, const char *name)
{
    return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, name);
}

xo_status xo__fail_enum(const char *fn, const char *name, int value, int lo, int hi)
{
    return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s = %d is not a valid value (%d..%d)", fn, name, value, lo,
                     hi);
}

xo_status xo__fail_layout(const char *fn, int layout)
{
    return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: layout = %d is not XO_ROW_MAJOR (101) or XO_COL_MAJOR (102)",
                     fn, layout);
}

xo_status xo__fail_trans(const char *fn, const char *name, int t)
{
    return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s = %d is not XO_NO_TRANS (111) or XO_TRANS (112)", fn,
                     name, t);
}

xo_status xo__fail_context(const char *fn, const char *bname)
{
    return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s belongs to another context", fn, bname);
}

xo_status xo__fail_inc(const char *fn, const char *incname)
{
    return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s = 0; increments must be >= 1", fn, incname);
}

xo_status xo__fail_ld(const char *fn, const char *ldname, size_t ld, const char *rows_name, const char *cols_name,
                      int trans, size_t need, const char *bname, size_t rows, size_t cols, xo_layout layout)
{
    /* the stored matrix's inner dimension: columns in row-major, rows in column-major */
    const char *inner_name = (layout == XO_ROW_MAJOR) != (trans != 0) ? cols_name : rows_name;
    return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s = %zu is less than max(1, %s) = %zu (%s is %zu x %zu, %s)",
                     fn, ldname, ld, inner_name, need, bname, rows, cols,
                     layout == XO_ROW_MAJOR ? "row-major" : "column-major");
}

xo_status xo__fail_span(const char *fn, const char *bname, const char *offname, size_t off, size_t elements,
                        size_t esize, size_t bytes)
{
    if (elements == 0)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s = %zu lies past the end of %s (%zu bytes)", fn, offname,
                         off, bname, bytes);
    return xo__error(XO_ERR_INVALID_ARGUMENT,
                     "%s: %s reaches past its buffer's end: %s = %zu plus %zu elements of %zu bytes > %zu bytes",
                     fn, bname, offname, off, elements, esize, bytes);
}

xo_status xo__fail_extent(const char *fn, const char *bname)
{
    return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s reaches past its buffer's end (its extent overflows size_t)",
                     fn, bname);
}

xo_status xo__fail_overlap(const char *fn, const char *outname, size_t out_lo, size_t out_hi, const char *inname,
                           size_t in_lo, size_t in_hi, int alias_allowed)
{
    return xo__error(XO_ERR_INVALID_ARGUMENT,
                     "%s: output %s (bytes %zu..%zu) overlaps input %s (bytes %zu..%zu) in the same buffer%s", fn,
                     outname, out_lo, out_hi, inname, in_lo, in_hi,
                     alias_allowed ? "; only the exact alias at the same offset is allowed" : "");
}

/* The message of the rule a vector operand broke (xo__vector_rule). */
xo_status xo__fail_vector(const xo__op *op, xo__rule r, const char *bname, const char *offname, const char *incname,
                          const xo_buffer *b, size_t off, size_t n, size_t inc)
{
    switch (r) {
    case XO_RULE_INC: return xo__fail_inc(op->fn, incname);
    case XO_RULE_NULL: return xo__fail_null(op->fn, bname);
    case XO_RULE_CONTEXT: return xo__fail_context(op->fn, bname);
    case XO_RULE_EXTENT: return xo__fail_extent(op->fn, bname);
    default: return xo__fail_span(op->fn, bname, offname, off, n ? (n - 1) * inc + 1 : 0, op->esize, b->bytes);
    }
}

/* The message of the rule a matrix operand broke (xo__matrix_rule). */
xo_status xo__fail_matrix(const xo__op *op, xo__rule r, const char *bname, const char *offname, const char *ldname,
                          const char *rows_name, const char *cols_name, int trans, const xo_buffer *b, size_t off,
                          xo_layout layout, size_t rows, size_t cols, size_t ld)
{
    size_t inner = layout == XO_ROW_MAJOR ? cols : rows, outer = layout == XO_ROW_MAJOR ? rows : cols;
    switch (r) {
    case XO_RULE_LD:
        return xo__fail_ld(op->fn, ldname, ld, rows_name, cols_name, trans, inner > 1 ? inner : 1, bname, rows, cols,
                           layout);
    case XO_RULE_NULL: return xo__fail_null(op->fn, bname);
    case XO_RULE_CONTEXT: return xo__fail_context(op->fn, bname);
    case XO_RULE_EXTENT: return xo__fail_extent(op->fn, bname);
    default:
        return xo__fail_span(op->fn, bname, offname, off, rows && cols ? (outer - 1) * ld + inner : 0, op->esize,
                             b->bytes);
    }
}
