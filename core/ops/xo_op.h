/* One op on its way through the core: what validation (xo_ops.h) fills in and
 * dispatch (xo_dispatch.h, dispatch.c) places, moves, runs and records. */
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
#endif
