/* One call per op kind (test_plan_cases.h). */
#include "test_plan_cases.h"

#define M XOT_PLAN_ROWS
#define N XOT_PLAN_COLS
#define K XOT_PLAN_K
#define V XOT_PLAN_N
#define CALL(name, ...) (dt == XO_F64 ? xo_d##name(__VA_ARGS__) : xo_s##name(__VA_ARGS__))
#define RM XO_ROW_MAJOR
#define NT XO_NO_TRANS

static xo_status c_gemm(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    xo_transpose tb = sub & 1 ? XO_TRANS : NT;
    return CALL(gemm, ctx, RM, NT, tb, M, N, K, 1.5, b[0], 0, K, b[1], 0, tb == NT ? N : K, 0.5, b[2], 0, N);
}
static xo_status c_gemv(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    return CALL(gemv, ctx, RM, sub & 1 ? XO_TRANS : NT, M, N, 1.5, b[0], 0, N, b[1], 0, 1, 0.5, b[2], 0, 1);
}
static xo_status c_axpy(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    return CALL(axpy, ctx, V, 1.5 + sub, b[0], 0, 1, b[1], 0, 1);
}
static xo_status c_scal(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    return CALL(scal, ctx, V, 0.75 + sub, b[0], 0, 2);
}
static xo_status c_dot(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    return CALL(dot, ctx, V, b[0], 0, 1, b[1], 0, 1, b[2], (size_t)sub % 8);
}
static xo_status c_nrm2(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    return CALL(nrm2, ctx, V, b[0], 0, 1, b[1], (size_t)sub % 8);
}
static xo_status c_unary(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    return CALL(unary, ctx, (xo_unary_op)(sub % XO_UNARY_OP_COUNT), V, b[0], 0, b[1], 0);
}
static xo_status c_binary(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    return CALL(binary, ctx, (xo_binary_op)(sub % XO_BINARY_OP_COUNT), V, b[0], 0, b[1], 0, b[2], 0);
}
static xo_status c_bias(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    (void)sub;
    return CALL(bias, ctx, M, N, b[0], 0, N, b[1], 0);
}
static xo_status c_reduce(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    return CALL(reduce, ctx, sub & 1 ? XO_MAX_ELEMENT : XO_SUM, V, b[0], 0, b[1], 1);
}
static xo_status c_copy(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    (void)sub;
    return CALL(copy, ctx, V, b[0], 0, 1, b[1], 0, 2);
}
static xo_status c_fill(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    return CALL(fill, ctx, V, 2.5 + sub, b[0], 1, 3);
}
static xo_status c_axpby(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    return CALL(axpby, ctx, V, 1.5, b[0], 0, 1, 0.5 + sub, b[1], 0, 1);
}
static xo_status c_ger(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    (void)sub;
    return CALL(ger, ctx, RM, M, N, 1.5, b[0], 0, 1, b[1], 0, 1, b[2], 0, N);
}
static xo_status c_binary_scalar(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    return CALL(binary_scalar, ctx, (xo_binary_op)(sub % XO_BINARY_OP_COUNT), V, b[0], 0, 2.5, b[1], 0);
}
static xo_status c_scale_by(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    return CALL(scale_by, ctx, V, b[0], (size_t)sub % 8, b[1], 0, 1);
}
static xo_status c_softmax(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    return CALL(softmax, ctx, sub & 1 ? XO_LOG_SOFTMAX : XO_SOFTMAX, M, N, b[0], 0, N, b[1], 0, N);
}
static xo_status c_reduce_axis(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    return CALL(reduce_axis, ctx, sub & 2 ? XO_MAX_ELEMENT : XO_SUM, M, N, b[0], 0, N, sub & 1, b[1], 0);
}
static xo_status c_gemm_bias_act(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    xo_unary_op act = (sub & 1) ? XO_TANH : XO_RELU;
    return CALL(gemm_bias_act, ctx, RM, NT, NT, M, N, K, 1.5, b[0], 0, K, b[1], 0, N, 0.5, b[2], 0, N, b[3], 0, act);
}
static xo_status c_softmax_xent(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    return CALL(softmax_xent, ctx, M, N, b[0], 0, N, b[1], 0, 0.5, b[2], 0, sub & 1 ? NULL : b[3], 0, N);
}

const xot_plan_case xot_plan_cases[XO_OP_KIND_COUNT] = {
    [XO_OP_GEMM] = c_gemm,
    [XO_OP_GEMV] = c_gemv,
    [XO_OP_AXPY] = c_axpy,
    [XO_OP_SCAL] = c_scal,
    [XO_OP_DOT] = c_dot,
    [XO_OP_NRM2] = c_nrm2,
    [XO_OP_UNARY] = c_unary,
    [XO_OP_BINARY] = c_binary,
    [XO_OP_BIAS] = c_bias,
    [XO_OP_REDUCE] = c_reduce,
    [XO_OP_COPY] = c_copy,
    [XO_OP_FILL] = c_fill,
    [XO_OP_AXPBY] = c_axpby,
    [XO_OP_GER] = c_ger,
    [XO_OP_BINARY_SCALAR] = c_binary_scalar,
    [XO_OP_SCALE_BY] = c_scale_by,
    [XO_OP_SOFTMAX] = c_softmax,
    [XO_OP_REDUCE_AXIS] = c_reduce_axis,
    [XO_OP_GEMM_BIAS_ACT] = c_gemm_bias_act,
    [XO_OP_SOFTMAX_XENT] = c_softmax_xent,
};
