/* gemm_bias_act: C = act(alpha op(A) op(B) + beta C + bias), one op (see ops_blas.c). */
#include "xo_ops.h"

#define RET(expr) XO_RETURN_IF_ERROR(expr)
/* Each public entry point gets its own copy, specialised to its dtype and constants (the
 * operand count and read/write masks set just before dispatch are literals, so the inline
 * dispatch in xo_dispatch.h unrolls its operand loops). */
#define XO_INLINE inline __attribute__((always_inline))

/* C = act(alpha op(A) op(B) + beta C + bias), bias (n elements) optional. */
static XO_INLINE xo_status gemm_bias_act(const char *fn, xo_dtype dt, xo_context *ctx, xo_layout layout,
                                         xo_transpose ta, xo_transpose tb, size_t m, size_t n, size_t k,
                                         double alpha, xo_buffer *a, size_t a_off, size_t lda, xo_buffer *b,
                                         size_t b_off, size_t ldb, double beta, xo_buffer *c, size_t c_off,
                                         size_t ldc, xo_buffer *bv, size_t bias_off, xo_unary_op act)
{
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_GEMM_BIAS_ACT, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_gemm(&op, layout, ta, tb, m, n, k, a, a_off, lda, b, b_off, ldb, c, c_off, ldc));
    RET(xo__check_enum(&op, "act", (int)act, 0, XO_UNARY_OP_COUNT - 1));
    if (!xo__unary_is_activation(act))
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: act = %d is a *_GRAD op; an activation is a forward op or "
                         "XO_IDENTITY", fn, (int)act);
    if (bv) {
        RET(xo__check_vector(&op, 3, "bias", "bias_off", NULL, bv, bias_off, n, 1));
        RET(xo__check_overlap(&op, 2, "c", 3, "bias", 0));
    }
    if (m == 0 || n == 0)
        return XO_OK;
    xo__gemm_desc(&op.desc, layout, ta, tb, m, n, k, alpha, lda, ldb, beta, ldc);
    op.desc.subop = (int)act;
    op.desc.narg = bv ? 4 : 3;
    op.reads = 3u | (unsigned)(beta != 0.0) << 2 | (bv ? 1u << 3 : 0u);
    op.writes = 1u << 2;
    return xo__dispatch(&op);
}

/* ---- the public entry points ------------------------------------------------------ */

xo_status xo_sgemm_bias_act(xo_context *ctx, xo_layout layout, xo_transpose ta, xo_transpose tb, size_t m, size_t n,
                            size_t k, float alpha, xo_buffer *a, size_t a_off, size_t lda, xo_buffer *b,
                            size_t b_off, size_t ldb, float beta, xo_buffer *c, size_t c_off, size_t ldc,
                            xo_buffer *bias, size_t bias_off, xo_unary_op act)
{
    return gemm_bias_act("xo_sgemm_bias_act", XO_F32, ctx, layout, ta, tb, m, n, k, alpha, a, a_off, lda, b, b_off,
                         ldb, beta, c, c_off, ldc, bias, bias_off, act);
}
xo_status xo_dgemm_bias_act(xo_context *ctx, xo_layout layout, xo_transpose ta, xo_transpose tb, size_t m, size_t n,
                            size_t k, double alpha, xo_buffer *a, size_t a_off, size_t lda, xo_buffer *b,
                            size_t b_off, size_t ldb, double beta, xo_buffer *c, size_t c_off, size_t ldc,
                            xo_buffer *bias, size_t bias_off, xo_unary_op act)
{
    return gemm_bias_act("xo_dgemm_bias_act", XO_F64, ctx, layout, ta, tb, m, n, k, alpha, a, a_off, lda, b, b_off,
                         ldb, beta, c, c_off, ldc, bias, bias_off, act);
}
