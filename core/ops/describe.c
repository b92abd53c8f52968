/* The whole description of a named op as `xo explain` takes it ("sgemm 256 256 256"),
 * from the op table (optable.c). The messages about the op and its dimensions reach the
 * tool's user as they are, so they name what the user typed, not this function. */
#include "xo_internal.h"

#include <stdio.h>
#include <string.h>

static void list_ops(char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int k = 0; k < XO_OP_KIND_COUNT && used < cap; k++)
        used += (size_t)snprintf(out + used, cap - used, "%ss%s d%s", k ? " " : "", xo__ops[k].name,
                                 xo__ops[k].name);
}

xo_status xo__describe_op(const char *op, int ndims, const size_t *dims, int resident, xo__op_cost *out)
{
    if (!op || !out || (ndims > 0 && !dims))
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo__describe_op: %s is NULL",
                         !op ? "op" : (!out ? "out" : "dims"));
    if (resident < 0 || resident >= XO_MAX_DEVICES)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo__describe_op: resident = %d is not a device index",
                         resident);
    int kind = (op[0] == 's' || op[0] == 'd') ? xo__op_find(op + 1) : -1;
    if (kind < 0) {
        char known[1024];
        list_ops(known, sizeof known);
        return xo__error(XO_ERR_INVALID_ARGUMENT, "unknown op \"%s\"; known: %s", op, known);
    }
    xo_dtype dtype = op[0] == 'd' ? XO_F64 : XO_F32;
    int want = xo__op_ndims((xo_op_kind)kind);
    if (ndims != want)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s takes %d dimension%s (%s), got %d", op, want,
                         want == 1 ? "" : "s", xo__op_dims_text((xo_op_kind)kind), ndims);
    for (int d = 0; d < ndims; d++)
        if (dims[d] == 0 || dims[d] > ((size_t)1 << 40))
            return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: dimension %d = %zu is out of range (1 to 2^40)",
                             op, d + 1, dims[d]);
    /* 3 dims: m n k; 2: m n; 1: n */
    size_t m = ndims >= 2 ? dims[0] : 1, n = ndims >= 2 ? dims[1] : dims[0], k = ndims == 3 ? dims[2] : 1;
    xo__op_cost c;
    xo__op_cost_init(&c, (xo_op_kind)kind, dtype, m, n, k);
    double es = dtype == XO_F64 ? 8.0 : 4.0;
    /* An output the op overwrites whole needs no copy where it runs (as in dispatch);
     * gemm and gemv are taken with beta != 0, so C and y are read. */
    for (int i = 0; i < xo__ops[kind].nargs; i++) {
        if (i == xo__ops[kind].out && !xo__op_reads_output((xo_op_kind)kind))
            continue;
        c.operand[c.noperands].bytes = xo__op_operand_elements((xo_op_kind)kind, i, m, n, k) * es;
        c.operand[c.noperands].valid = 1u << resident;
        c.noperands++;
    }
    *out = c;
    return XO_OK;
}

const xo__profile *xo__device_profile(const xo_context *ctx, int dev)
{
    if (!ctx || dev < 0 || dev >= ctx->ndev)
        return NULL;
    return &ctx->dev[dev].profile;
}
