/* Op descriptions for the cost model: the work of an op (flops, bytes streamed, size)
 * from its kind and dimensions, and the whole description of a named op as
 * `xo explain` takes it ("sgemm 256 256 256"). */
#include "xo_internal.h"

#include <math.h>
#include <string.h>

/* Arithmetic per element of a unary op, averaged over the sub-ops (relu: 1, tanh/exp/
 * sigmoid: ~10-20 on a vector unit): the sub-op is not known here. */
#define UNARY_FLOPS 4.0

void xo__op_cost_init(xo__op_cost *c, xo_op_kind kind, xo_dtype dtype, size_t m, size_t n, size_t k)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->dtype = dtype;
    double es = dtype == XO_F64 ? 8.0 : 4.0;
    double M = (double)m, N = (double)n, K = (double)k;
    switch (kind) {
    case XO_OP_GEMM: /* C = alpha A B + beta C: read A, B, C, write C */
        c->flops = 2.0 * M * N * K;
        c->bytes = (M * K + K * N + 2.0 * M * N) * es;
        c->size = cbrt(M * N * K);
        break;
    case XO_OP_GEMV: /* y = alpha A x + beta y: read A, x, y, write y */
        c->flops = 2.0 * M * N;
        c->bytes = (M * N + N + 2.0 * M) * es;
        c->size = M * N;
        break;
    case XO_OP_AXPY: /* read x, y, write y */
        c->flops = 2.0 * N;
        c->bytes = 3.0 * N * es;
        c->size = N;
        break;
    case XO_OP_SCAL: /* read x, write x */
        c->flops = N;
        c->bytes = 2.0 * N * es;
        c->size = N;
        break;
    case XO_OP_DOT: /* read x, y, write out */
        c->flops = 2.0 * N;
        c->bytes = (2.0 * N + 1.0) * es;
        c->size = N;
        break;
    case XO_OP_NRM2: /* read x, write out */
        c->flops = 2.0 * N;
        c->bytes = (N + 1.0) * es;
        c->size = N;
        break;
    case XO_OP_UNARY: /* read x, write y */
        c->flops = UNARY_FLOPS * N;
        c->bytes = 2.0 * N * es;
        c->size = N;
        break;
    case XO_OP_BINARY: /* read a, b, write c */
        c->flops = N;
        c->bytes = 3.0 * N * es;
        c->size = N;
        break;
    case XO_OP_BIAS: /* read a, bias, write a */
        c->flops = M * N;
        c->bytes = (2.0 * M * N + N) * es;
        c->size = M * N;
        break;
    case XO_OP_REDUCE: /* read x, write out */
        c->flops = N;
        c->bytes = (N + 1.0) * es;
        c->size = N;
        break;
    default:
        break;
    }
}

static const struct {
    const char *name; /* without the s/d prefix */
    xo_op_kind kind;
    int ndims;
} op_table[] = {
    {"gemm", XO_OP_GEMM, 3},   {"gemv", XO_OP_GEMV, 2},     {"axpy", XO_OP_AXPY, 1},
    {"scal", XO_OP_SCAL, 1},   {"dot", XO_OP_DOT, 1},       {"nrm2", XO_OP_NRM2, 1},
    {"unary", XO_OP_UNARY, 1}, {"binary", XO_OP_BINARY, 1}, {"bias", XO_OP_BIAS, 2},
    {"reduce", XO_OP_REDUCE, 1},
};

static void add_operand(xo__op_cost *c, double elements, double es, uint32_t valid)
{
    c->operand[c->noperands].bytes = elements * es;
    c->operand[c->noperands].valid = valid;
    c->noperands++;
}

xo_status xo__describe_op(const char *op, int ndims, const size_t *dims, int resident, xo__op_cost *out)
{
    if (!op || !out || (ndims > 0 && !dims))
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo__describe_op: %s is NULL",
                         !op ? "op" : (!out ? "out" : "dims"));
    if (resident < 0 || resident >= XO_MAX_DEVICES)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo__describe_op: resident = %d is not a device index",
                         resident);
    xo_dtype dtype;
    if (op[0] == 's')
        dtype = XO_F32;
    else if (op[0] == 'd')
        dtype = XO_F64;
    else
        goto unknown;
    size_t i;
    for (i = 0; i < sizeof op_table / sizeof op_table[0]; i++)
        if (strcmp(op + 1, op_table[i].name) == 0)
            break;
    if (i == sizeof op_table / sizeof op_table[0])
        goto unknown;
    if (ndims != op_table[i].ndims)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo__describe_op: %s takes %d dimension%s (%s), got %d", op,
                         op_table[i].ndims, op_table[i].ndims == 1 ? "" : "s",
                         op_table[i].kind == XO_OP_GEMM   ? "M N K"
                         : op_table[i].kind == XO_OP_GEMV ? "M N"
                         : op_table[i].kind == XO_OP_BIAS ? "ROWS COLS"
                                                          : "N",
                         ndims);
    for (int d = 0; d < ndims; d++)
        if (dims[d] == 0 || dims[d] > ((size_t)1 << 40))
            return xo__error(XO_ERR_INVALID_ARGUMENT, "xo__describe_op: %s dimension %d = %zu is out of range",
                             op, d + 1, dims[d]);
    xo_op_kind kind = op_table[i].kind;
    size_t m = 1, n = 1, k = 1;
    if (kind == XO_OP_GEMM) {
        m = dims[0];
        n = dims[1];
        k = dims[2];
    } else if (kind == XO_OP_GEMV || kind == XO_OP_BIAS) {
        m = dims[0];
        n = dims[1];
    } else {
        n = dims[0];
    }
    xo__op_cost c;
    xo__op_cost_init(&c, kind, dtype, m, n, k);
    double es = dtype == XO_F64 ? 8.0 : 4.0, M = (double)m, N = (double)n, K = (double)k;
    uint32_t valid = 1u << resident;
    switch (kind) {
    case XO_OP_GEMM:
        add_operand(&c, M * K, es, valid);
        add_operand(&c, K * N, es, valid);
        add_operand(&c, M * N, es, valid);
        break;
    case XO_OP_GEMV:
        add_operand(&c, M * N, es, valid);
        add_operand(&c, N, es, valid);
        add_operand(&c, M, es, valid);
        break;
    case XO_OP_AXPY:
    case XO_OP_UNARY:
        add_operand(&c, N, es, valid);
        add_operand(&c, N, es, valid);
        break;
    case XO_OP_SCAL:
        add_operand(&c, N, es, valid);
        break;
    case XO_OP_DOT:
        add_operand(&c, N, es, valid);
        add_operand(&c, N, es, valid);
        add_operand(&c, 1.0, es, valid);
        break;
    case XO_OP_NRM2:
    case XO_OP_REDUCE:
        add_operand(&c, N, es, valid);
        add_operand(&c, 1.0, es, valid);
        break;
    case XO_OP_BINARY:
        add_operand(&c, N, es, valid);
        add_operand(&c, N, es, valid);
        add_operand(&c, N, es, valid);
        break;
    case XO_OP_BIAS:
        add_operand(&c, M * N, es, valid);
        add_operand(&c, N, es, valid);
        break;
    default:
        break;
    }
    *out = c;
    return XO_OK;
unknown:
    return xo__error(XO_ERR_INVALID_ARGUMENT,
                     "xo__describe_op: unknown op \"%s\"; known: sgemm dgemm sgemv dgemv saxpy daxpy sscal "
                     "dscal sdot ddot snrm2 dnrm2 sunary dunary sbinary dbinary sbias dbias sreduce dreduce",
                     op);
}

const xo__profile *xo__device_profile(const xo_context *ctx, int dev)
{
    if (!ctx || dev < 0 || dev >= ctx->ndev)
        return NULL;
    return &ctx->dev[dev].profile;
}
