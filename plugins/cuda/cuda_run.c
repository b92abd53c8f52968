/* run(): the op table, one row per op kind: the entry of its family file (cuda_blas.c,
 * cuda_elementwise.c, cuda_reduce.c, cuda_fused.c) and what it needs on the device
 * (cuBLAS, our kernel module, or both). supports() (cuda_plugin.c) reads the same rows.
 * Each op runs with the device's context current, bracketed by a pair of timing events
 * (cuda_timing.c). */
#include "cuda_internal.h"

enum { B = XO_CUDA_NEED_BLAS, K = XO_CUDA_NEED_KERNELS };

typedef struct cuda_op {
    xo__cuda_op_fn run;
    unsigned needs;
} cuda_op;

/* gemm, gemv and scal need our kernels as well as cuBLAS: with alpha == 0 they run on
 * the xo_scale kernel; gemm_bias_act is cuBLAS's gemm plus the epilogue kernel. */
static const cuda_op ops[] = {
    [XO_OP_GEMM] = {xo__cuda_gemm, B | K},
    [XO_OP_GEMV] = {xo__cuda_gemv, B | K},
    [XO_OP_AXPY] = {xo__cuda_axpy, B},
    [XO_OP_SCAL] = {xo__cuda_scal, B | K},
    [XO_OP_DOT] = {xo__cuda_dot, B},
    [XO_OP_NRM2] = {xo__cuda_nrm2, K},
    [XO_OP_UNARY] = {xo__cuda_unary, K},
    [XO_OP_BINARY] = {xo__cuda_binary, K},
    [XO_OP_BIAS] = {xo__cuda_bias, K},
    [XO_OP_REDUCE] = {xo__cuda_reduce, K},
    [XO_OP_COPY] = {xo__cuda_copy, K},
    [XO_OP_FILL] = {xo__cuda_fill, K},
    [XO_OP_AXPBY] = {xo__cuda_axpby, K},
    [XO_OP_GER] = {xo__cuda_ger, B},
    [XO_OP_BINARY_SCALAR] = {xo__cuda_binary_scalar, K},
    [XO_OP_SCALE_BY] = {xo__cuda_scale_by, K},
    [XO_OP_SOFTMAX] = {xo__cuda_softmax, K},
    [XO_OP_REDUCE_AXIS] = {xo__cuda_reduce_axis, K},
    [XO_OP_GEMM_BIAS_ACT] = {xo__cuda_gemm_bias_act, B | K},
    [XO_OP_SOFTMAX_XENT] = {xo__cuda_softmax_xent, K},
    [XO_OP_ARGMAX] = {xo__cuda_argmax, K},
};
/* A kind appended to XO_OP_MAP without its row here fails to compile; one left out in
 * the middle has no entry, which test_cuda_ops_nn's test_supports_every_kind finds. */
_Static_assert(sizeof ops / sizeof *ops == XO_OP_KIND_COUNT, "a CUDA row for every op kind");

unsigned xo__cuda_needs(xo_op_kind kind)
{
    return (unsigned)kind < XO_OP_KIND_COUNT && ops[kind].run ? ops[kind].needs : 0u;
}

static xo_status check_operands(xo__cuda_state *st, const xo_op_desc *op)
{
    if (op->narg < 1 || op->narg > XO_MAX_ARGS)
        return st->host->set_error(XO_ERR_INVALID_ARGUMENT, "cuda run: %d operands", op->narg);
    for (int i = 0; i < op->narg; i++)
        if (!op->arg[i].mem)
            return st->host->set_error(XO_ERR_INVALID_ARGUMENT, "cuda run: operand %d is not in device memory", i);
    return XO_OK;
}

xo_status xo__cuda_run(void *state, int dev, const xo_op_desc *op, uint64_t token)
{
    xo__cuda_state *st = state;
    xo__cuda_device *d = xo__cuda_device_at(st, dev, "cuda run");
    if (!d) return XO_ERR_INVALID_ARGUMENT;
    if (!op) return st->host->set_error(XO_ERR_INVALID_ARGUMENT, "cuda run: op is NULL");
    XO_CUDA_TRY(check_operands(st, op));
    const unsigned need = xo__cuda_needs(op->kind);
    if (!need)
        return st->host->set_error(XO_ERR_UNSUPPORTED, "cuda run: op kind %d does not run on CUDA", (int)op->kind);

    XO_CUDA_TRY(xo__cuda_enter(st, d));
    for (int blas = 1; blas >= 0; blas--)
        if ((need & (blas ? XO_CUDA_NEED_BLAS : XO_CUDA_NEED_KERNELS)) && !xo__cuda_ready_locked(st, d, blas)) {
            xo__cuda_leave(d);
            return st->host->set_error(XO_ERR_UNSUPPORTED, "cuda run: %s unavailable on device %d",
                                       blas ? "cuBLAS" : "the kernel module", dev);
        }
    xo__cuda_timing *t = xo__cuda_timing_begin(d, token);
    xo_status s = ops[op->kind].run(st, d, op);
    if (s == XO_OK) xo__cuda_timing_end(d, t);
    xo__cuda_leave(d);
    return s;
}
