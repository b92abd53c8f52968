/* One call per op kind, and the helpers of the plan tests (test_plan_cases.h). */
#include "test_plan_cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static xo_status c_argmax(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4])
{
    return CALL(argmax, ctx, M, N, b[0], 0, N, b[2], (size_t)sub % 8); /* int32 indices into b[2] */
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
    [XO_OP_ARGMAX] = c_argmax,
};

/* ---- helpers ------------------------------------------------------------------------ */

const xo_mock_config xot_plan_fast_mock = {
    .launch_us = 20, .gflops = 5000, .gbps = 500, .transfer_latency_us = 2, .transfer_gbps = 50};

xo_context *xot_plan_context(const xo_mock_config *cfg, int *mock)
{
    xo_mock_install(cfg);
    xo_context *ctx = NULL;
    xot_assert_ok(xo_context_create(&ctx));
    *mock = xo_device_count(ctx) - 1;
    assert_string_equal(ctx->dev[*mock].info.plugin, "mock");
    xo__profile p;
    xo_mock_profile(&ctx->dev[*mock].info, &p);
    xo__device_set_profile(ctx, *mock, &p);
    return ctx;
}

void xot_plan_done(xo_context *ctx)
{
    xo_context_destroy(ctx);
    xo_mock_install(NULL);
}

/* ---- xot_twin buffer sets --------------------------------------------------------------- */


void xot_twin_make(xo_context *ctx, xot_twin *t, xo_dtype dt, uint64_t seed, int labels_in_1)
{
    size_t es = dt == XO_F64 ? 8 : 4;
    t->bytes = XOT_PLAN_ELEMS * es;
    void *data = malloc(t->bytes);
    for (int i = 0; i < XOT_TWIN_BUFS; i++) {
        if (i == 1 && labels_in_1) {
            int32_t *l = data;
            for (size_t j = 0; j < XOT_PLAN_ELEMS * es / 4; j++)
                l[j] = (int32_t)((j * 5 + seed) % XOT_PLAN_COLS);
        } else if (dt == XO_F64) {
            xot_fill_d(data, XOT_PLAN_ELEMS, seed * 31 + (uint64_t)i, 0.5, 1.5);
        } else {
            xot_fill_f(data, XOT_PLAN_ELEMS, seed * 31 + (uint64_t)i, 0.5, 1.5);
        }
        t->b[i] = xot_buffer(ctx, data, t->bytes);
    }
    free(data);
}

void xot_twin_free(xot_twin *t)
{
    for (int i = 0; i < XOT_TWIN_BUFS; i++)
        xo_buffer_destroy(t->b[i]);
}

/* Every buffer of a and b holds the same values (bit-exact when `exact`). */
void xot_twin_compare(const xot_twin *a, const xot_twin *b, xo_dtype dt, int exact, const char *what)
{
    for (int i = 0; i < XOT_TWIN_BUFS; i++) {
        void *x = xot_read_all(a->b[i]), *y = xot_read_all(b->b[i]);
        long bad;
        if (exact)
            bad = memcmp(x, y, a->bytes) ? 0 : -1;
        else if (dt == XO_F64)
            bad = xot_first_mismatch_d(x, y, XOT_PLAN_ELEMS, 1e-12);
        else
            bad = xot_first_mismatch_f(x, y, XOT_PLAN_ELEMS, 1e-6);
        if (bad >= 0)
            fail_msg("%s: buffer %d differs at %ld", what, i, bad);
        free(x);
        free(y);
    }
}

xo_stats xot_plan_stats(xo_context *ctx, int d)
{
    xo_stats s;
    xot_assert_ok(xo_finish(ctx));
    xot_assert_ok(xo_stats_get(ctx, d, &s));
    return s;
}

xo_plan *xot_plan_capture(xo_context *ctx, xot_plan_step step, xo_buffer *const b[4])
{
    xo_plan *plan = NULL;
    xot_assert_ok(xo_capture_begin(ctx));
    xot_assert_ok(step(ctx, b));
    xot_assert_ok(xo_capture_end(ctx, &plan));
    assert_non_null(plan);
    return plan;
}

void xot_plan_finish(xo_context *ctx, xo_plan *plan, xot_twin *e, xot_twin *p)
{
    if (plan) xo_plan_destroy(plan);
    xot_twin_free(e);
    xot_twin_free(p);
    xot_plan_done(ctx);
}
