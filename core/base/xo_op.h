/* One op on its way through the core: what validation (xo_ops.h) fills in and
 * dispatch (xo_dispatch.h, dispatch.c) places, moves, runs and records; and the pure
 * helpers every layer that handles an op uses (validation, dispatch, run.c, plans), so
 * they sit below them all. */
#ifndef XO_OP_H
#define XO_OP_H
#include "xo_internal.h"

typedef struct xo__op {
    const char *fn;   /* public name for messages: "xo_sgemm" */
    xo_context *ctx;
    size_t esize;     /* bytes per element */
    xo_op_desc desc;  /* operands' offsets in desc.arg[i].off */
    xo_buffer *buf[XO_MAX_ARGS];
    size_t lo[XO_MAX_ARGS], hi[XO_MAX_ARGS]; /* bytes touched: [lo, hi) */
    unsigned reads;   /* bit i: operand i is read (for outputs: prior contents needed) */
    unsigned writes;  /* bit i: operand i is written */
    unsigned dense;   /* bit i: operand i's elements fill [lo, hi) without gaps */
    unsigned need;    /* bit i: operand i must be current where the op runs */
    int cpu_only;     /* degenerate case the contract defines (k = 0, n = 0): run on device 0 */
    int stat_slot;    /* set by dispatch: the thread's xo__stat_slot, or -1 */
} xo__op;

/* An op description with every field set (the op fills in its own), field by field: a
 * whole-struct initialiser becomes `rep stos`, which costs more than the rest of a tiny
 * op's checks and hides the constants from dispatch. */
static inline void xo__desc_init(xo_op_desc *d, xo_op_kind kind, xo_dtype dtype)
{
    d->kind = kind;
    d->dtype = dtype;
    d->subop = 0;
    d->axis = 0;
    d->layout = XO_ROW_MAJOR;
    d->ta = d->tb = XO_NO_TRANS;
    d->m = d->n = d->k = 0;
    d->ld[0] = d->ld[1] = d->ld[2] = 0;
    d->inc[0] = d->inc[1] = 0;
    d->alpha = d->beta = 0;
    d->narg = 0;
    for (int i = 0; i < XO_MAX_ARGS; i++)
        d->arg[i] = (xo_operand){NULL, NULL, 0};
}

static inline void xo__op_begin(xo__op *op, const char *fn, xo_context *ctx, xo_op_kind kind, xo_dtype dtype)
{
    /* Only what every path reads: the checks write the rest as they go. */
    op->fn = fn;
    op->ctx = ctx;
    op->esize = dtype == XO_F64 ? sizeof(double) : sizeof(float);
    op->buf[0] = op->buf[1] = op->buf[2] = op->buf[3] = NULL;
    op->reads = op->writes = op->dense = op->need = 0;
    op->cpu_only = 0;
    op->stat_slot = -1;
    xo__desc_init(&op->desc, kind, dtype);
}

/* Which operands must be current where the op runs: every one it reads, and every
 * output it does not overwrite completely (a strided or padded output leaves gaps whose
 * contents must survive). An operand whose span is empty is neither read nor written. */
static inline __attribute__((always_inline)) unsigned xo__operand_need(int reads, int dense, size_t lo, size_t hi,
                                                                        const xo_buffer *b)
{
    return reads || !dense || lo != 0 || hi != b->bytes;
}
static inline unsigned xo__op_needs(const xo__op *op)
{
    unsigned need = 0;
    for (int i = 0; i < op->desc.narg; i++) {
        const xo_buffer *b = op->buf[i];
        if (!b || op->lo[i] == op->hi[i])
            continue;
        need |= xo__operand_need(op->reads >> i & 1u, op->dense >> i & 1u, op->lo[i], op->hi[i], b) << i;
    }
    return need;
}

/* Operand i must be current where the op runs (op->need from xo__op_needs). */
static inline int xo__needs_current(const xo__op *op, int i) { return (op->need >> i) & 1u; }
#endif
