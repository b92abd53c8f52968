/* The public element-wise ops: unary, binary, binary_scalar, scale_by, bias. Each
 * validates every argument, describes itself and dispatches (see ops_blas.c). */
#include "xo_ops.h"

#define RET(expr) XO_RETURN_IF_ERROR(expr)
/* Each public entry point gets its own copy, specialised to its dtype and constants (the
 * operand count and read/write masks set just before dispatch are literals, so the inline
 * dispatch in xo_dispatch.h unrolls its operand loops). */
#define XO_INLINE inline __attribute__((always_inline))

static XO_INLINE xo_status unary(const char *fn, xo_dtype dt, xo_context *ctx, xo_unary_op uop, size_t n, xo_buffer *x,
                                 size_t x_off, xo_buffer *y, size_t y_off)
{
    static const char *const names[4] = {"x", "x_off", "y", "y_off"};
    return xo__elementwise(fn, dt, ctx, XO_OP_UNARY, (int)uop, 0, XO_UNARY_OP_COUNT - 1, n, names, x, x_off, y, y_off, 0);
}

/* The ops with a call memo (xo_dispatch.h) come in two parts: the entry tries the memo
 * and, if it holds no match, calls the checked path out of line, so that a memo hit does
 * not pay for that path's frame. */
#define XO_CHECKED static __attribute__((noinline)) xo_status

#define BINARY_NARG 3
#define BINARY_WRITES (1u << 2) /* c */
#define BINARY_ARGS {(uintptr_t)fn, (uintptr_t)ctx, (uint64_t)bop, n, (uintptr_t)a, a_off, (uintptr_t)b, b_off, \
                     (uintptr_t)c, c_off}
XO_CHECKED binary_checked(const char *fn, xo_dtype dt, xo_context *ctx, xo_binary_op bop, size_t n, xo_buffer *a,
                          size_t a_off, xo_buffer *b, size_t b_off, xo_buffer *c, size_t c_off, xo__memo_set *memo)
{
    const uint64_t args[] = BINARY_ARGS;
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_BINARY, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_enum(&op, "op", (int)bop, 0, XO_BINARY_OP_COUNT - 1));
    RET(xo__check_vector(&op, 0, "a", "a_off", NULL, a, a_off, n, 1));
    RET(xo__check_vector(&op, 1, "b", "b_off", NULL, b, b_off, n, 1));
    RET(xo__check_vector(&op, 2, "c", "c_off", NULL, c, c_off, n, 1));
    RET(xo__check_overlap(&op, 2, "c", 0, "a", 1));
    RET(xo__check_overlap(&op, 2, "c", 1, "b", 1));
    if (n == 0)
        return XO_OK;
    op.desc.subop = (int)bop;
    op.desc.n = n;
    op.reads = 3u;
    op.writes = BINARY_WRITES;
    op.desc.narg = BINARY_NARG;
    return xo__dispatch_memo(&op, memo, args, XO_MEMO_N(args));
}
static XO_INLINE xo_status binary(const char *fn, xo_dtype dt, xo_context *ctx, xo_binary_op bop, size_t n, xo_buffer *a,
                        size_t a_off, xo_buffer *b, size_t b_off, xo_buffer *c, size_t c_off)
{
    const uint64_t args[] = BINARY_ARGS;
    xo__memo_set *memo = xo__memo_of(args, XO_MEMO_N(args));
    xo_status st;
    if (xo__memo_run(ctx, memo, args, XO_MEMO_N(args), BINARY_NARG, BINARY_WRITES, &st))
        return st;
    return binary_checked(fn, dt, ctx, bop, n, a, a_off, b, b_off, c, c_off, memo);
}

#define BIAS_NARG 2
#define BIAS_WRITES 1u /* a */
#define BIAS_ARGS {(uintptr_t)fn, (uintptr_t)ctx, rows, cols, (uintptr_t)a, a_off, lda, (uintptr_t)bv, bias_off}
XO_CHECKED bias_checked(const char *fn, xo_dtype dt, xo_context *ctx, size_t rows, size_t cols, xo_buffer *a,
                        size_t a_off, size_t lda, xo_buffer *bv, size_t bias_off, xo__memo_set *memo)
{
    const uint64_t args[] = BIAS_ARGS;
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_BIAS, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_matrix(&op, 0, "a", "a_off", "lda", "rows", "cols", 0, a, a_off, XO_ROW_MAJOR, rows, cols, lda));
    RET(xo__check_vector(&op, 1, "bias", "bias_off", NULL, bv, bias_off, cols, 1));
    RET(xo__check_overlap(&op, 0, "a", 1, "bias", 0));
    if (rows == 0 || cols == 0)
        return XO_OK;
    op.desc.m = rows;
    op.desc.n = cols;
    op.desc.ld[0] = xo__tidy_ld(XO_ROW_MAJOR, rows, cols, lda);
    op.reads = 3u;
    op.writes = BIAS_WRITES;
    op.desc.narg = BIAS_NARG;
    return xo__dispatch_memo(&op, memo, args, XO_MEMO_N(args));
}
static XO_INLINE xo_status bias(const char *fn, xo_dtype dt, xo_context *ctx, size_t rows, size_t cols, xo_buffer *a,
                      size_t a_off, size_t lda, xo_buffer *bv, size_t bias_off)
{
    const uint64_t args[] = BIAS_ARGS;
    xo__memo_set *memo = xo__memo_of(args, XO_MEMO_N(args));
    xo_status st;
    if (xo__memo_run(ctx, memo, args, XO_MEMO_N(args), BIAS_NARG, BIAS_WRITES, &st))
        return st;
    return bias_checked(fn, dt, ctx, rows, cols, a, a_off, lda, bv, bias_off, memo);
}

/* c[i] = a[i] op s; c may be a exactly. */
static XO_INLINE xo_status binary_scalar(const char *fn, xo_dtype dt, xo_context *ctx, xo_binary_op bop, size_t n,
                                         xo_buffer *a, size_t a_off, double s, xo_buffer *c, size_t c_off)
{
    static const char *const names[4] = {"a", "a_off", "c", "c_off"};
    return xo__elementwise(fn, dt, ctx, XO_OP_BINARY_SCALAR, (int)bop, 0, XO_BINARY_OP_COUNT - 1, n, names, a, a_off, c, c_off,
                           s);
}

/* x *= s[s_off], the factor read where the op runs (no host synchronisation). */
static XO_INLINE xo_status scale_by(const char *fn, xo_dtype dt, xo_context *ctx, size_t n, xo_buffer *s,
                                    size_t s_off, xo_buffer *x, size_t x_off, size_t incx)
{
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_SCALE_BY, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_vector(&op, 0, "s", "s_off", NULL, s, s_off, 1, 1));
    RET(xo__check_vector(&op, 1, "x", "x_off", "incx", x, x_off, n, incx));
    RET(xo__check_overlap(&op, 1, "x", 0, "s", 0));
    if (n == 0)
        return XO_OK;
    op.desc.n = n;
    op.desc.inc[0] = xo__tidy_inc(n, incx);
    op.reads = 3u;
    op.writes = 1u << 1;
    op.desc.narg = 2;
    return xo__dispatch(&op);
}

/* ---- the public entry points ------------------------------------------------------ */

xo_status xo_sbias(xo_context *ctx, size_t rows, size_t cols, xo_buffer *a, size_t a_off, size_t lda,
                   xo_buffer *bias_, size_t bias_off)
{
    return bias("xo_sbias", XO_F32, ctx, rows, cols, a, a_off, lda, bias_, bias_off);
}
xo_status xo_dbias(xo_context *ctx, size_t rows, size_t cols, xo_buffer *a, size_t a_off, size_t lda,
                   xo_buffer *bias_, size_t bias_off)
{
    return bias("xo_dbias", XO_F64, ctx, rows, cols, a, a_off, lda, bias_, bias_off);
}
xo_status xo_sbinary(xo_context *ctx, xo_binary_op op, size_t n, xo_buffer *a, size_t a_off, xo_buffer *b,
                     size_t b_off, xo_buffer *c, size_t c_off)
{
    return binary("xo_sbinary", XO_F32, ctx, op, n, a, a_off, b, b_off, c, c_off);
}
xo_status xo_dbinary(xo_context *ctx, xo_binary_op op, size_t n, xo_buffer *a, size_t a_off, xo_buffer *b,
                     size_t b_off, xo_buffer *c, size_t c_off)
{
    return binary("xo_dbinary", XO_F64, ctx, op, n, a, a_off, b, b_off, c, c_off);
}
xo_status xo_sbinary_scalar(xo_context *ctx, xo_binary_op op, size_t n, xo_buffer *a, size_t a_off, float s,
                            xo_buffer *c, size_t c_off)
{
    return binary_scalar("xo_sbinary_scalar", XO_F32, ctx, op, n, a, a_off, s, c, c_off);
}
xo_status xo_dbinary_scalar(xo_context *ctx, xo_binary_op op, size_t n, xo_buffer *a, size_t a_off, double s,
                            xo_buffer *c, size_t c_off)
{
    return binary_scalar("xo_dbinary_scalar", XO_F64, ctx, op, n, a, a_off, s, c, c_off);
}
xo_status xo_sscale_by(xo_context *ctx, size_t n, xo_buffer *s, size_t s_off, xo_buffer *x, size_t x_off, size_t incx)
{
    return scale_by("xo_sscale_by", XO_F32, ctx, n, s, s_off, x, x_off, incx);
}
xo_status xo_dscale_by(xo_context *ctx, size_t n, xo_buffer *s, size_t s_off, xo_buffer *x, size_t x_off, size_t incx)
{
    return scale_by("xo_dscale_by", XO_F64, ctx, n, s, s_off, x, x_off, incx);
}
xo_status xo_sunary(xo_context *ctx, xo_unary_op op, size_t n, xo_buffer *x, size_t x_off, xo_buffer *y,
                    size_t y_off)
{
    return unary("xo_sunary", XO_F32, ctx, op, n, x, x_off, y, y_off);
}
xo_status xo_dunary(xo_context *ctx, xo_unary_op op, size_t n, xo_buffer *x, size_t x_off, xo_buffer *y,
                    size_t y_off)
{
    return unary("xo_dunary", XO_F64, ctx, op, n, x, x_off, y, y_off);
}
