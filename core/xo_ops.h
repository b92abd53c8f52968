/* One op on its way through the core: validated, described, then dispatched. */
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
    int stat_slot;    /* this thread's xo__stat_slot, or -1 */
    int cpu_only;     /* degenerate case the contract defines (k = 0, n = 0): run on device 0 */
} xo__op;

void xo__op_begin(xo__op *op, const char *fn, xo_context *ctx, xo_op_kind kind, xo_dtype dtype);
xo_status xo__check_ctx(const xo__op *op);
xo_status xo__check_enum(const xo__op *op, const char *name, int value, int lo, int hi);
xo_status xo__check_layout(const xo__op *op, xo_layout layout);
xo_status xo__check_trans(const xo__op *op, const char *name, xo_transpose t);
/* Operand i: a vector of n elements, stride inc, starting at element off. */
xo_status xo__check_vector(xo__op *op, int i, const char *bname, const char *offname, const char *incname,
                           xo_buffer *b, size_t off, size_t n, size_t inc);
/* Operand i: a rows x cols matrix stored in `layout` with leading dimension ld. */
xo_status xo__check_matrix(xo__op *op, int i, const char *bname, const char *offname, const char *ldname,
                           const char *inner_name, xo_buffer *b, size_t off, xo_layout layout, size_t rows,
                           size_t cols, size_t ld);
/* Output `out` must not overlap input `in`, except the exact alias when allowed. */
xo_status xo__check_overlap(const xo__op *op, int out, int in, int alias_allowed);

/* Place, move, run, record (dispatch.c). */
xo_status xo__dispatch(xo__op *op);
#endif
