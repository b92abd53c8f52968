/* Bad inputs for the neural-network ops: rows of test_errors.c's table, included by its template
 * section (T, XO, FN, E and the fixture buffers come from there); not compiled alone. */

static void TEST(copy)(void **state)
{
    (void)state;
    INVALID(FN(copy), "ctx", XO(copy)(NULL, 4, X, 0, 1, Y, 0, 1));
    INVALID(FN(copy), "x", XO(copy)(g_ctx, 4, NULL, 0, 1, Y, 0, 1));
    INVALID(FN(copy), "y", XO(copy)(g_ctx, 4, X, 0, 1, NULL, 0, 1));
    INVALID(FN(copy), "x", XO(copy)(g_ctx, 4, F, 0, 1, Y, 0, 1));
    INVALID(FN(copy), "incx", XO(copy)(g_ctx, 4, X, 0, 0, Y, 0, 1));
    INVALID(FN(copy), "incy", XO(copy)(g_ctx, 4, X, 0, 1, Y, 0, 0));
    INVALID(FN(copy), "x|x_off", XO(copy)(g_ctx, 4, X, E - 3, 1, Y, 0, 1));
    INVALID(FN(copy), "y|y_off", XO(copy)(g_ctx, 4, X, 0, 1, Y, E - 6, 2));
    INVALID(FN(copy), "x|n", XO(copy)(g_ctx, HUGE_SZ, X, 0, 1, Y, 0, 1));
    INVALID(FN(copy), "y|x", XO(copy)(g_ctx, 4, X, 0, 1, X, 2, 1));
    INVALID(FN(copy), "y|x", XO(copy)(g_ctx, 4, X, 0, 1, X, 0, 2)); /* same start, other stride */
}

static void TEST(fill)(void **state)
{
    (void)state;
    INVALID(FN(fill), "ctx", XO(fill)(NULL, 4, (T)1, X, 0, 1));
    INVALID(FN(fill), "x", XO(fill)(g_ctx, 4, (T)1, NULL, 0, 1));
    INVALID(FN(fill), "x", XO(fill)(g_ctx, 4, (T)1, F, 0, 1));
    INVALID(FN(fill), "incx", XO(fill)(g_ctx, 4, (T)1, X, 0, 0));
    INVALID(FN(fill), "x|x_off", XO(fill)(g_ctx, 4, (T)1, X, E - 1, 1));
    INVALID(FN(fill), "x|x_off", XO(fill)(g_ctx, 1, (T)1, X, HUGE_SZ, 1));
    INVALID(FN(fill), "x|n", XO(fill)(g_ctx, HALF_SZ, (T)1, X, 0, 3));
}

static void TEST(axpby)(void **state)
{
    (void)state;
    INVALID(FN(axpby), "ctx", XO(axpby)(NULL, 4, (T)1, X, 0, 1, (T)1, Y, 0, 1));
    INVALID(FN(axpby), "x", XO(axpby)(g_ctx, 4, (T)1, NULL, 0, 1, (T)1, Y, 0, 1));
    INVALID(FN(axpby), "y", XO(axpby)(g_ctx, 4, (T)1, X, 0, 1, (T)0, NULL, 0, 1));
    INVALID(FN(axpby), "y", XO(axpby)(g_ctx, 4, (T)1, X, 0, 1, (T)0, F, 0, 1));
    INVALID(FN(axpby), "incx", XO(axpby)(g_ctx, 4, (T)1, X, 0, 0, (T)1, Y, 0, 1));
    INVALID(FN(axpby), "incy", XO(axpby)(g_ctx, 4, (T)1, X, 0, 1, (T)1, Y, 0, 0));
    INVALID(FN(axpby), "x|x_off", XO(axpby)(g_ctx, 4, (T)1, X, E - 2, 1, (T)1, Y, 0, 1));
    INVALID(FN(axpby), "y|y_off", XO(axpby)(g_ctx, 4, (T)1, X, 0, 1, (T)1, Y, HUGE_SZ, 1));
    INVALID(FN(axpby), "x|n", XO(axpby)(g_ctx, HUGE_SZ, (T)1, X, 0, 1, (T)1, Y, 0, 1));
    INVALID(FN(axpby), "y|x", XO(axpby)(g_ctx, 4, (T)1, X, 0, 1, (T)1, X, 0, 1));
    INVALID(FN(axpby), "y|x", XO(axpby)(g_ctx, 4, (T)1, X, 0, 1, (T)0, X, 3, 1));
}

static void TEST(ger)(void **state)
{
    (void)state;
    INVALID(FN(ger), "ctx", XO(ger)(NULL, XO_ROW_MAJOR, 2, 4, (T)1, X, 0, 1, Y, 0, 1, A, 0, 4));
    INVALID(FN(ger), "layout", XO(ger)(g_ctx, (xo_layout)0, 2, 4, (T)1, X, 0, 1, Y, 0, 1, A, 0, 4));
    INVALID(FN(ger), "x", XO(ger)(g_ctx, XO_ROW_MAJOR, 2, 4, (T)1, NULL, 0, 1, Y, 0, 1, A, 0, 4));
    INVALID(FN(ger), "y", XO(ger)(g_ctx, XO_ROW_MAJOR, 2, 4, (T)1, X, 0, 1, NULL, 0, 1, A, 0, 4));
    INVALID(FN(ger), "a", XO(ger)(g_ctx, XO_ROW_MAJOR, 2, 4, (T)1, X, 0, 1, Y, 0, 1, NULL, 0, 4));
    INVALID(FN(ger), "a", XO(ger)(g_ctx, XO_ROW_MAJOR, 2, 4, (T)1, X, 0, 1, Y, 0, 1, F, 0, 4));
    INVALID(FN(ger), "incx", XO(ger)(g_ctx, XO_ROW_MAJOR, 2, 4, (T)1, X, 0, 0, Y, 0, 1, A, 0, 4));
    INVALID(FN(ger), "incy", XO(ger)(g_ctx, XO_ROW_MAJOR, 2, 4, (T)1, X, 0, 1, Y, 0, 0, A, 0, 4));
    INVALID(FN(ger), "lda", XO(ger)(g_ctx, XO_ROW_MAJOR, 2, 4, (T)1, X, 0, 1, Y, 0, 1, A, 0, 3));
    INVALID(FN(ger), "lda", XO(ger)(g_ctx, XO_COL_MAJOR, 2, 4, (T)1, X, 0, 1, Y, 0, 1, A, 0, 1));
    INVALID(FN(ger), "x|x_off", XO(ger)(g_ctx, XO_ROW_MAJOR, 2, 4, (T)1, X, E - 1, 1, Y, 0, 1, A, 0, 4));
    INVALID(FN(ger), "y|y_off", XO(ger)(g_ctx, XO_ROW_MAJOR, 2, 4, (T)1, X, 0, 1, Y, E - 3, 1, A, 0, 4));
    INVALID(FN(ger), "a|a_off", XO(ger)(g_ctx, XO_ROW_MAJOR, 2, 4, (T)1, X, 0, 1, Y, 0, 1, A, E - 7, 4));
    INVALID(FN(ger), "x|m", XO(ger)(g_ctx, XO_ROW_MAJOR, HUGE_SZ, 4, (T)1, X, 0, 1, Y, 0, 1, A, 0, 4));
    INVALID(FN(ger), "a|x", XO(ger)(g_ctx, XO_ROW_MAJOR, 2, 4, (T)1, A, 3, 1, Y, 0, 1, A, 0, 4));
    INVALID(FN(ger), "a|y", XO(ger)(g_ctx, XO_ROW_MAJOR, 2, 4, (T)1, X, 0, 1, A, 7, 1, A, 0, 4));
}

static void TEST(binary_scalar)(void **state)
{
    (void)state;
    INVALID(FN(binary_scalar), "ctx", XO(binary_scalar)(NULL, XO_ADD, 4, A, 0, (T)1, C, 0));
    INVALID(FN(binary_scalar), "op", XO(binary_scalar)(g_ctx, (xo_binary_op)5, 4, A, 0, (T)1, C, 0));
    INVALID(FN(binary_scalar), "op", XO(binary_scalar)(g_ctx, (xo_binary_op)-1, 0, A, 0, (T)1, C, 0));
    INVALID(FN(binary_scalar), "a", XO(binary_scalar)(g_ctx, XO_ADD, 4, NULL, 0, (T)1, C, 0));
    INVALID(FN(binary_scalar), "c", XO(binary_scalar)(g_ctx, XO_ADD, 4, A, 0, (T)1, NULL, 0));
    INVALID(FN(binary_scalar), "c", XO(binary_scalar)(g_ctx, XO_ADD, 4, A, 0, (T)1, F, 0));
    INVALID(FN(binary_scalar), "a|a_off", XO(binary_scalar)(g_ctx, XO_ADD, 4, A, E - 1, (T)1, C, 0));
    INVALID(FN(binary_scalar), "c|c_off", XO(binary_scalar)(g_ctx, XO_ADD, 4, A, 0, (T)1, C, HUGE_SZ - 1));
    INVALID(FN(binary_scalar), "a|n", XO(binary_scalar)(g_ctx, XO_MUL, HUGE_SZ, A, 0, (T)1, C, 0));
    INVALID(FN(binary_scalar), "c|a", XO(binary_scalar)(g_ctx, XO_ADD, 4, A, 0, (T)1, A, 1));
}

static void TEST(scale_by)(void **state)
{
    (void)state;
    INVALID(FN(scale_by), "ctx", XO(scale_by)(NULL, 4, O, 0, X, 0, 1));
    INVALID(FN(scale_by), "s", XO(scale_by)(g_ctx, 4, NULL, 0, X, 0, 1));
    INVALID(FN(scale_by), "s", XO(scale_by)(g_ctx, 4, F, 0, X, 0, 1));
    INVALID(FN(scale_by), "x", XO(scale_by)(g_ctx, 4, O, 0, NULL, 0, 1));
    INVALID(FN(scale_by), "incx", XO(scale_by)(g_ctx, 4, O, 0, X, 0, 0));
    INVALID(FN(scale_by), "s|s_off", XO(scale_by)(g_ctx, 4, O, E, X, 0, 1));
    INVALID(FN(scale_by), "x|x_off", XO(scale_by)(g_ctx, 4, O, 0, X, E - 3, 1));
    INVALID(FN(scale_by), "x|n", XO(scale_by)(g_ctx, HUGE_SZ, O, 0, X, 0, 2));
    INVALID(FN(scale_by), "x|s", XO(scale_by)(g_ctx, 4, X, 2, X, 0, 1));
}

static void TEST(softmax)(void **state)
{
    (void)state;
    INVALID(FN(softmax), "ctx", XO(softmax)(NULL, XO_SOFTMAX, 2, 4, X, 0, 4, Y, 0, 4));
    INVALID(FN(softmax), "op", XO(softmax)(g_ctx, (xo_softmax_op)2, 2, 4, X, 0, 4, Y, 0, 4));
    INVALID(FN(softmax), "op", XO(softmax)(g_ctx, (xo_softmax_op)-1, 0, 0, X, 0, 1, Y, 0, 1));
    INVALID(FN(softmax), "x", XO(softmax)(g_ctx, XO_SOFTMAX, 2, 4, NULL, 0, 4, Y, 0, 4));
    INVALID(FN(softmax), "y", XO(softmax)(g_ctx, XO_SOFTMAX, 2, 4, X, 0, 4, NULL, 0, 4));
    INVALID(FN(softmax), "y", XO(softmax)(g_ctx, XO_LOG_SOFTMAX, 2, 4, X, 0, 4, F, 0, 4));
    INVALID(FN(softmax), "ldx", XO(softmax)(g_ctx, XO_SOFTMAX, 2, 4, X, 0, 3, Y, 0, 4));
    INVALID(FN(softmax), "ldy", XO(softmax)(g_ctx, XO_SOFTMAX, 2, 4, X, 0, 4, Y, 0, 2));
    INVALID(FN(softmax), "x|x_off", XO(softmax)(g_ctx, XO_SOFTMAX, 2, 4, X, E - 7, 4, Y, 0, 4));
    INVALID(FN(softmax), "y|y_off", XO(softmax)(g_ctx, XO_SOFTMAX, 2, 4, X, 0, 4, Y, HUGE_SZ, 4));
    INVALID(FN(softmax), "x|rows|ldx", XO(softmax)(g_ctx, XO_SOFTMAX, HALF_SZ, 4, X, 0, 4, Y, 0, 4));
    INVALID(FN(softmax), "y|x", XO(softmax)(g_ctx, XO_SOFTMAX, 2, 4, X, 0, 4, X, 1, 4));
    INVALID(FN(softmax), "y|x", XO(softmax)(g_ctx, XO_SOFTMAX, 2, 4, X, 0, 4, X, 0, 5)); /* ldy != ldx */
}

static void TEST(reduce_axis)(void **state)
{
    (void)state;
    INVALID(FN(reduce_axis), "ctx", XO(reduce_axis)(NULL, XO_SUM, 2, 4, X, 0, 4, 0, O, 0));
    INVALID(FN(reduce_axis), "op", XO(reduce_axis)(g_ctx, (xo_reduce_op)2, 2, 4, X, 0, 4, 0, O, 0));
    INVALID(FN(reduce_axis), "axis", XO(reduce_axis)(g_ctx, XO_SUM, 2, 4, X, 0, 4, 2, O, 0));
    INVALID(FN(reduce_axis), "axis", XO(reduce_axis)(g_ctx, XO_SUM, 2, 4, X, 0, 4, -1, O, 0));
    INVALID(FN(reduce_axis), "x", XO(reduce_axis)(g_ctx, XO_SUM, 2, 4, NULL, 0, 4, 0, O, 0));
    INVALID(FN(reduce_axis), "out", XO(reduce_axis)(g_ctx, XO_SUM, 2, 4, X, 0, 4, 1, NULL, 0));
    INVALID(FN(reduce_axis), "out", XO(reduce_axis)(g_ctx, XO_SUM, 2, 4, X, 0, 4, 1, F, 0));
    INVALID(FN(reduce_axis), "ldx", XO(reduce_axis)(g_ctx, XO_SUM, 2, 4, X, 0, 3, 0, O, 0));
    INVALID(FN(reduce_axis), "x|x_off", XO(reduce_axis)(g_ctx, XO_SUM, 2, 4, X, E - 4, 4, 0, O, 0));
    INVALID(FN(reduce_axis), "out|out_off", XO(reduce_axis)(g_ctx, XO_SUM, 2, 4, X, 0, 4, 0, O, E - 3));
    INVALID(FN(reduce_axis), "out|x", XO(reduce_axis)(g_ctx, XO_SUM, 2, 4, X, 0, 4, 1, X, 7));
    INVALID(FN(reduce_axis), "rows", XO(reduce_axis)(g_ctx, XO_MAX_ELEMENT, 0, 4, X, 0, 4, 0, O, 0));
    INVALID(FN(reduce_axis), "cols", XO(reduce_axis)(g_ctx, XO_MAX_ELEMENT, 2, 0, X, 0, 1, 1, O, 0));
}

#define GBA(ctx_, lay, ta, tb, a_, aoff, lda, c_, coff, ldc, bias_, boff, act)                                       \
    XO(gemm_bias_act)(ctx_, lay, ta, tb, 2, 4, 3, (T)1, a_, aoff, lda, B, 0, 4, (T)0, c_, coff, ldc, bias_, boff, act)
static void TEST(gemm_bias_act)(void **state)
{
    (void)state;
    const xo_layout R = XO_ROW_MAJOR;
    const xo_transpose N = XO_NO_TRANS;
    INVALID(FN(gemm_bias_act), "ctx", GBA(NULL, R, N, N, A, 0, 3, C, 0, 4, O, 0, XO_TANH));
    INVALID(FN(gemm_bias_act), "layout", GBA(g_ctx, (xo_layout)7, N, N, A, 0, 3, C, 0, 4, O, 0, XO_TANH));
    INVALID(FN(gemm_bias_act), "ta", GBA(g_ctx, R, (xo_transpose)0, N, A, 0, 3, C, 0, 4, O, 0, XO_TANH));
    INVALID(FN(gemm_bias_act), "tb", GBA(g_ctx, R, N, (xo_transpose)113, A, 0, 3, C, 0, 4, O, 0, XO_TANH));
    INVALID(FN(gemm_bias_act), "a", GBA(g_ctx, R, N, N, NULL, 0, 3, C, 0, 4, O, 0, XO_TANH));
    INVALID(FN(gemm_bias_act), "c", GBA(g_ctx, R, N, N, A, 0, 3, NULL, 0, 4, O, 0, XO_TANH));
    INVALID(FN(gemm_bias_act), "bias", GBA(g_ctx, R, N, N, A, 0, 3, C, 0, 4, F, 0, XO_TANH));
    INVALID(FN(gemm_bias_act), "lda", GBA(g_ctx, R, N, N, A, 0, 2, C, 0, 4, O, 0, XO_TANH));
    INVALID(FN(gemm_bias_act), "ldc", GBA(g_ctx, R, N, N, A, 0, 3, C, 0, 3, O, 0, XO_TANH));
    INVALID(FN(gemm_bias_act), "a|a_off", GBA(g_ctx, R, N, N, A, E - 5, 3, C, 0, 4, O, 0, XO_TANH));
    INVALID(FN(gemm_bias_act), "c|c_off", GBA(g_ctx, R, N, N, A, 0, 3, C, HUGE_SZ, 4, O, 0, XO_TANH));
    INVALID(FN(gemm_bias_act), "bias|bias_off", GBA(g_ctx, R, N, N, A, 0, 3, C, 0, 4, O, E - 3, XO_TANH));
    INVALID(FN(gemm_bias_act), "c|a", GBA(g_ctx, R, N, N, A, 0, 3, A, 2, 4, O, 0, XO_TANH));
    INVALID(FN(gemm_bias_act), "c|bias", GBA(g_ctx, R, N, N, A, 0, 3, C, 0, 4, C, 5, XO_TANH));
    static const int outside[] = {-1, XO_UNARY_OP_COUNT, 99};
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++)
        INVALID(FN(gemm_bias_act), "act", GBA(g_ctx, R, N, N, A, 0, 3, C, 0, 4, O, 0, (xo_unary_op)outside[i]));
    for (int u = 0; u < XO_UNARY_OP_COUNT; u++) /* every row of the op map that is not an activation */
        if (!xot_unary_is_activation(u))
            INVALID(FN(gemm_bias_act), "act", GBA(g_ctx, R, N, N, A, 0, 3, C, 0, 4, O, 0, (xo_unary_op)u));
    INVALID(FN(gemm_bias_act), "act", GBA(g_ctx, R, N, N, A, 0, 3, C, 0, 4, NULL, 0, XO_RELU_GRAD));
}
#undef GBA

/* softmax_xent: rows 2, cols 4; labels int32 (their offset counts int32s). */
static void TEST(softmax_xent)(void **state)
{
    (void)state;
#define SX(ctx, x, xo, ldx, lab, lo, loss, lso, g, go, ldg) \
    XO(softmax_xent)(ctx, 2, 4, x, xo, ldx, lab, lo, (T)0.5, loss, lso, g, go, ldg)
    const size_t LABELS = NBYTES / sizeof(int32_t);
    INVALID(FN(softmax_xent), "ctx", SX(NULL, X, 0, 4, Y, 0, O, 0, C, 0, 4));
    INVALID(FN(softmax_xent), "x", SX(g_ctx, NULL, 0, 4, Y, 0, O, 0, C, 0, 4));
    INVALID(FN(softmax_xent), "labels", SX(g_ctx, X, 0, 4, NULL, 0, O, 0, C, 0, 4));
    INVALID(FN(softmax_xent), "labels", SX(g_ctx, X, 0, 4, F, 0, O, 0, C, 0, 4));
    INVALID(FN(softmax_xent), "loss", SX(g_ctx, X, 0, 4, Y, 0, NULL, 0, C, 0, 4));
    INVALID(FN(softmax_xent), "grad", SX(g_ctx, X, 0, 4, Y, 0, O, 0, F, 0, 4));
    INVALID(FN(softmax_xent), "ldx", SX(g_ctx, X, 0, 3, Y, 0, O, 0, C, 0, 4));
    INVALID(FN(softmax_xent), "ldg", SX(g_ctx, X, 0, 4, Y, 0, O, 0, C, 0, 3));
    INVALID(FN(softmax_xent), "x|x_off", SX(g_ctx, X, E - 7, 4, Y, 0, O, 0, C, 0, 4));
    INVALID(FN(softmax_xent), "labels|labels_off", SX(g_ctx, X, 0, 4, Y, LABELS - 1, O, 0, C, 0, 4));
    INVALID(FN(softmax_xent), "loss|loss_off", SX(g_ctx, X, 0, 4, Y, 0, O, E - 1, C, 0, 4));
    INVALID(FN(softmax_xent), "grad|grad_off", SX(g_ctx, X, 0, 4, Y, 0, O, 0, C, HUGE_SZ, 4));
    INVALID(FN(softmax_xent), "loss|x", SX(g_ctx, X, 0, 4, Y, 0, X, 3, C, 0, 4));
    INVALID(FN(softmax_xent), "loss|labels", SX(g_ctx, X, 0, 4, Y, 1, Y, 0, C, 0, 4));
    INVALID(FN(softmax_xent), "grad|x", SX(g_ctx, X, 0, 4, Y, 0, O, 0, X, 1, 4));
    INVALID(FN(softmax_xent), "grad|x", SX(g_ctx, X, 0, 4, Y, 0, O, 0, X, 0, 5)); /* same start, other ld */
    INVALID(FN(softmax_xent), "grad|labels", SX(g_ctx, X, 0, 4, Y, 0, O, 0, Y, 0, 4));
    INVALID(FN(softmax_xent), "grad|loss", SX(g_ctx, X, 0, 4, Y, 0, O, 0, O, 1, 4));
    /* what the contract allows: grad exactly x, and no grad at all */
    xot_assert_ok(SX(g_ctx, X, 0, 4, Y, 0, O, 0, X, 0, 4));
    xot_assert_ok(SX(g_ctx, X, 0, 4, Y, 0, O, 0, NULL, 0, 0));
#undef SX
}

/* argmax: rows 2, cols 4 (ldx 4); idx int32 (its offset counts int32s). */
static void TEST(argmax)(void **state)
{
    (void)state;
    const size_t IDX = NBYTES / sizeof(int32_t);
    INVALID(FN(argmax), "ctx", XO(argmax)(NULL, 2, 4, X, 0, 4, Y, 0));
    INVALID(FN(argmax), "x", XO(argmax)(g_ctx, 2, 4, NULL, 0, 4, Y, 0));
    INVALID(FN(argmax), "x", XO(argmax)(g_ctx, 2, 4, F, 0, 4, Y, 0));
    INVALID(FN(argmax), "idx", XO(argmax)(g_ctx, 2, 4, X, 0, 4, NULL, 0));
    INVALID(FN(argmax), "idx", XO(argmax)(g_ctx, 2, 4, X, 0, 4, F, 0));
    INVALID(FN(argmax), "ldx", XO(argmax)(g_ctx, 2, 4, X, 0, 3, Y, 0));
    INVALID(FN(argmax), "x|x_off", XO(argmax)(g_ctx, 2, 4, X, E - 7, 4, Y, 0));
    INVALID(FN(argmax), "x|rows", XO(argmax)(g_ctx, HUGE_SZ, 4, X, 0, 4, Y, 0));
    INVALID(FN(argmax), "idx|idx_off", XO(argmax)(g_ctx, 2, 4, X, 0, 4, Y, IDX - 1));
    INVALID(FN(argmax), "idx|idx_off", XO(argmax)(g_ctx, 2, 4, X, 0, 4, Y, HUGE_SZ));
    INVALID(FN(argmax), "idx|x", XO(argmax)(g_ctx, 2, 4, X, 0, 4, X, 3));
    INVALID(FN(argmax), "cols", XO(argmax)(g_ctx, 2, 0, X, 0, 1, Y, 0));
    INVALID(FN(argmax), "cols", XO(argmax)(g_ctx, 0, 0, X, 0, 1, Y, 0));
    const size_t WIDE = (size_t)INT32_MAX + 1; /* no int32 index for its last column (no rows: x fits) */
    INVALID(FN(argmax), "cols", XO(argmax)(g_ctx, 0, WIDE, X, 0, WIDE, Y, 0));
    xot_assert_ok(XO(argmax)(g_ctx, 0, 4, X, 0, 4, Y, 0)); /* no rows: nothing to do */
}
