/* cl_ops.c: the OpenCL plugin's op table, one row per op kind: how the op runs (CLBlast,
 * our kernels, or both), the launch of its kernels and the program they are in. supports
 * and run read nothing else, so adding an op here is one row plus its launch and
 * kernel. */
#include "cl_internal.h"

static xo_status run_blas(xo__cl_state *st, xo__cl_device *d, const xo_op_desc *op, uint64_t token,
                          xo__cl_launch_fn launch, xo__cl_prog_id prog);

#define KERNEL(launch_, prog_) {xo__cl_run_kernel, xo__cl_launch_##launch_, XO_CL_PROG_##prog_, 0}
/* CLBlast, with our xo_scale kernel for alpha == 0 (xo_op_scales_only). */
#define BLAS_OR_SCALE {run_blas, xo__cl_launch_scale, XO_CL_PROG_ELEMENTWISE, 1}
#define BLAS_ONLY {run_blas, NULL, XO_CL_PROG_NONE, 1}

const xo__cl_op_row xo__cl_ops[] = {
    [XO_OP_GEMM] = BLAS_OR_SCALE,
    [XO_OP_GEMV] = BLAS_OR_SCALE,
    [XO_OP_AXPY] = BLAS_ONLY,
    [XO_OP_SCAL] = BLAS_OR_SCALE,
    [XO_OP_DOT] = BLAS_ONLY,
    [XO_OP_NRM2] = KERNEL(reduce, REDUCE), /* CLBlast's squares overflow; ours are scaled */
    [XO_OP_UNARY] = KERNEL(elementwise, ELEMENTWISE),
    [XO_OP_BINARY] = KERNEL(elementwise, ELEMENTWISE),
    [XO_OP_BIAS] = KERNEL(bias, ELEMENTWISE),
    [XO_OP_REDUCE] = KERNEL(reduce, REDUCE),
    [XO_OP_COPY] = KERNEL(copy, ELEMENTWISE),
    [XO_OP_FILL] = KERNEL(fill, ELEMENTWISE),
    [XO_OP_AXPBY] = KERNEL(axpby, ELEMENTWISE),
    [XO_OP_GER] = BLAS_ONLY,
    [XO_OP_BINARY_SCALAR] = KERNEL(binary_scalar, ELEMENTWISE),
    [XO_OP_SCALE_BY] = KERNEL(scale_by, ELEMENTWISE),
    [XO_OP_SOFTMAX] = KERNEL(softmax, REDUCE),
    [XO_OP_REDUCE_AXIS] = KERNEL(reduce_axis, REDUCE),
    [XO_OP_GEMM_BIAS_ACT] = {xo__cl_run_gemm_bias_act, NULL, XO_CL_PROG_ELEMENTWISE, 0}, /* + its epilogue */
    [XO_OP_SOFTMAX_XENT] = KERNEL(softmax_xent, REDUCE),
    [XO_OP_ARGMAX] = KERNEL(argmax, REDUCE),
};
_Static_assert(sizeof xo__cl_ops / sizeof *xo__cl_ops == XO_OP_KIND_COUNT, "an OpenCL row for every op kind");

int xo__cl_op_supports(xo__cl_state *st, xo__cl_device *d, const xo_op_desc *op)
{
    if ((unsigned)op->kind >= XO_OP_KIND_COUNT || !xo__cl_ops[op->kind].run) return 0;
    const xo__cl_op_row *row = &xo__cl_ops[op->kind];
    if (row->blas) return 1; /* the alpha == 0 cases need our kernels: they fail over if not built */
    return xo__cl_program_ready(st, d, row->prog, op->dtype) ? 1 : -1; /* -1: the build failed */
}

xo_status xo__cl_op_run(xo__cl_state *st, xo__cl_device *d, const xo_op_desc *op, uint64_t token)
{
    const xo__cl_op_row *row = &xo__cl_ops[op->kind];
    /* gemm, gemv and scal with alpha == 0 only scale their output: our xo_scale kernel */
    if (xo_op_scales_only(op)) return xo__cl_run_kernel(st, d, op, token, xo__cl_launch_scale, XO_CL_PROG_ELEMENTWISE);
    return row->run(st, d, op, token, row->launch, row->prog);
}

/* CLBlast alone, or our kernels where xo__cl_blas_on_kernels says (nrm2 has its own row). */
static xo_status run_blas(xo__cl_state *st, xo__cl_device *d, const xo_op_desc *op, uint64_t token,
                          xo__cl_launch_fn launch, xo__cl_prog_id prog)
{
    (void)launch, (void)prog;
    return xo__cl_run_blas(st, d, op, token);
}
