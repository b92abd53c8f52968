/* One op on its way through the core: validated, described, then dispatched.
 * The checks are inline (they run on every call of every op); their error paths are
 * out-of-line cold functions in validate.c that write the message. */
#ifndef XO_OPS_H
#define XO_OPS_H
#include "xo_internal.h"

typedef struct xo__op {
    const char *fn;   /* public name for messages: "xo_sgemm" */
    xo_context *ctx;
    size_t esize;     /* bytes per element */
    xo_op_desc desc;  /* operands' offsets in desc.arg[i].off */
    xo_buffer *buf[XO_MAX_OPERANDS];
    const char *argname[XO_MAX_OPERANDS];
    uint8_t reads[XO_MAX_OPERANDS];  /* operand i is read (for outputs: prior contents needed) */
    uint8_t writes[XO_MAX_OPERANDS];
    size_t lo[XO_MAX_OPERANDS], hi[XO_MAX_OPERANDS]; /* bytes touched: [lo, hi) */
    uint8_t dense[XO_MAX_OPERANDS];  /* operand i's elements fill [lo, hi) without gaps */
    unsigned need;    /* bit i: operand i must be current where the op runs (dispatch.c) */
    int stat_slot;    /* this thread's xo__stat_slot, or -1 */
    int cpu_only;     /* degenerate case the contract defines (k = 0, n = 0): run on device 0 */
} xo__op;

#define XO_COLD __attribute__((cold, noinline))
XO_COLD xo_status xo__fail_null(const xo__op *op, const char *name);
XO_COLD xo_status xo__fail_enum(const xo__op *op, const char *name, int value, int lo, int hi);
XO_COLD xo_status xo__fail_layout(const xo__op *op, int layout);
XO_COLD xo_status xo__fail_trans(const xo__op *op, const char *name, int t);
XO_COLD xo_status xo__fail_context(const xo__op *op, const char *bname);
XO_COLD xo_status xo__fail_inc(const xo__op *op, const char *incname);
XO_COLD xo_status xo__fail_ld(const xo__op *op, const char *ldname, size_t ld, const char *inner_name, size_t need,
                              const char *bname, size_t rows, size_t cols, xo_layout layout);
XO_COLD xo_status xo__fail_span(const xo__op *op, const char *bname, const char *offname, size_t off,
                                size_t elements, size_t bytes);
XO_COLD xo_status xo__fail_extent(const xo__op *op, const char *bname);
XO_COLD xo_status xo__fail_overlap(const xo__op *op, int out, int in, int alias_allowed);

static inline void xo__op_begin(xo__op *op, const char *fn, xo_context *ctx, xo_op_kind kind, xo_dtype dtype)
{
    /* Field by field rather than memset: the struct is mostly written again by the checks. */
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
        op->dense[i] = 0;
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

static inline xo_status xo__check_ctx(const xo__op *op)
{
    return op->ctx ? XO_OK : xo__fail_null(op, "ctx");
}

static inline xo_status xo__check_enum(const xo__op *op, const char *name, int value, int lo, int hi)
{
    return (value >= lo && value <= hi) ? XO_OK : xo__fail_enum(op, name, value, lo, hi);
}

static inline xo_status xo__check_layout(const xo__op *op, xo_layout layout)
{
    return (layout == XO_ROW_MAJOR || layout == XO_COL_MAJOR) ? XO_OK : xo__fail_layout(op, (int)layout);
}

static inline xo_status xo__check_trans(const xo__op *op, const char *name, xo_transpose t)
{
    return (t == XO_NO_TRANS || t == XO_TRANS) ? XO_OK : xo__fail_trans(op, name, (int)t);
}

/* Record operand i's span of `elements` from element `off`, checking it stays inside b. */
static inline xo_status xo__set_span(xo__op *op, int i, const char *bname, const char *offname, xo_buffer *b,
                                     size_t off, size_t elements, int dense)
{
    size_t end, hi;
    if (__builtin_add_overflow(off, elements, &end) || __builtin_mul_overflow(end, op->esize, &hi) ||
        hi > b->bytes)
        return xo__fail_span(op, bname, offname, off, elements, b->bytes);
    op->buf[i] = b;
    op->argname[i] = bname;
    op->lo[i] = off * op->esize;
    op->hi[i] = hi;
    op->dense[i] = (uint8_t)dense;
    op->desc.arg[i].off = off;
    if (op->desc.narg < i + 1)
        op->desc.narg = i + 1;
    return XO_OK;
}

static inline xo_status xo__check_buffer(const xo__op *op, const char *bname, const xo_buffer *b)
{
    if (!b)
        return xo__fail_null(op, bname);
    if (b->ctx != op->ctx)
        return xo__fail_context(op, bname);
    return XO_OK;
}

/* Operand i: a vector of n elements, stride inc, starting at element off. */
static inline xo_status xo__check_vector(xo__op *op, int i, const char *bname, const char *offname,
                                         const char *incname, xo_buffer *b, size_t off, size_t n, size_t inc)
{
    if (incname && inc == 0)
        return xo__fail_inc(op, incname);
    XO_RETURN_IF_ERROR(xo__check_buffer(op, bname, b));
    size_t elements = 0;
    if (n > 0 && (__builtin_mul_overflow(n - 1, inc, &elements) || __builtin_add_overflow(elements, 1, &elements)))
        return xo__fail_extent(op, bname);
    return xo__set_span(op, i, bname, offname, b, off, elements, inc == 1 || n <= 1);
}

/* Operand i: a rows x cols matrix stored in `layout` with leading dimension ld. */
static inline xo_status xo__check_matrix(xo__op *op, int i, const char *bname, const char *offname,
                                         const char *ldname, const char *inner_name, xo_buffer *b, size_t off,
                                         xo_layout layout, size_t rows, size_t cols, size_t ld)
{
    size_t inner = layout == XO_ROW_MAJOR ? cols : rows;
    size_t outer = layout == XO_ROW_MAJOR ? rows : cols;
    size_t need = inner > 1 ? inner : 1;
    if (ld < need)
        return xo__fail_ld(op, ldname, ld, inner_name, need, bname, rows, cols, layout);
    XO_RETURN_IF_ERROR(xo__check_buffer(op, bname, b));
    size_t elements = 0;
    if (rows > 0 && cols > 0 &&
        (__builtin_mul_overflow(outer - 1, ld, &elements) || __builtin_add_overflow(elements, inner, &elements)))
        return xo__fail_extent(op, bname);
    return xo__set_span(op, i, bname, offname, b, off, elements, ld == inner || outer <= 1);
}

/* Output `out` must not overlap input `in`, except the exact alias when allowed. */
static inline xo_status xo__check_overlap(const xo__op *op, int out, int in, int alias_allowed)
{
    if (op->buf[out] != op->buf[in] || op->lo[out] == op->hi[out] || op->lo[in] == op->hi[in])
        return XO_OK;
    if (op->hi[out] <= op->lo[in] || op->hi[in] <= op->lo[out])
        return XO_OK;
    if (alias_allowed && op->lo[out] == op->lo[in] && op->hi[out] == op->hi[in])
        return XO_OK;
    return xo__fail_overlap(op, out, in, alias_allowed);
}

/* Place, move, run, record (dispatch.c). */
xo_status xo__dispatch(xo__op *op);
#endif
