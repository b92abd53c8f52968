/* The public BLAS ops: gemm, gemv, axpy (each with its express path), scal, dot, nrm2,
 * copy, fill, axpby, ger. Each validates every argument (xo_ops.h's rules), describes
 * itself as XO_OP_MAP's row says (crossover/plugin.h) and dispatches; the s and d entry
 * points share one implementation per op, with dtype as data. */
#include "xo_ops.h"

#define RET(expr) XO_RETURN_IF_ERROR(expr)
/* Each public entry point gets its own copy, specialised to its dtype and constants (the
 * operand count and read/write masks set just before dispatch are literals, so the inline
 * dispatch in xo_dispatch.h unrolls its operand loops). */
#define XO_INLINE inline __attribute__((always_inline))

static XO_INLINE void gemv_desc(xo_op_desc *d, xo_layout layout, xo_transpose ta, size_t m, size_t n, double alpha,
                                size_t lda, size_t incx, double beta, size_t incy)
{
    int nt = ta == XO_NO_TRANS;
    d->layout = layout;
    d->ta = ta;
    d->m = m;
    d->n = n;
    d->ld[0] = xo__tidy_ld(layout, m, n, lda);
    d->inc[0] = xo__tidy_inc(nt ? n : m, incx);
    d->inc[1] = xo__tidy_inc(nt ? m : n, incy);
    d->alpha = alpha;
    d->beta = beta;
    d->narg = 3;
}

static XO_INLINE void axpy_desc(xo_op_desc *d, size_t n, double alpha, size_t incx, size_t incy)
{
    d->n = n;
    d->inc[0] = xo__tidy_inc(n, incx);
    d->inc[1] = xo__tidy_inc(n, incy);
    d->alpha = alpha;
    d->narg = 2;
}

/* ---- the express path (see xo__express_find) -------------------------------------
 * For the plain case (distinct buffers, every figure under 2^29, nothing empty) gemm,
 * gemv and axpy apply the operand rules of xo_ops.h quietly: any broken rule, or a cache
 * miss, leaves for the full path, which applies the same rules with their messages. */

/* gemm past its express path: every check with its message, description, dispatch. Out
 * of line, so that the express path does not pay for this path's frame. */
static __attribute__((noinline)) xo_status gemm_checked(const char *fn, xo_dtype dt, xo_context *ctx, xo_layout layout,
                                                        xo_transpose ta, xo_transpose tb, size_t m, size_t n,
                                                        size_t k, double alpha, xo_buffer *a, size_t a_off,
                                                        size_t lda, xo_buffer *b, size_t b_off, size_t ldb,
                                                        double beta, xo_buffer *c, size_t c_off, size_t ldc)
{
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_GEMM, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_gemm(&op, layout, ta, tb, m, n, k, a, a_off, lda, b, b_off, ldb, c, c_off, ldc));
    if (m == 0 || n == 0)
        return XO_OK;
    xo__gemm_desc(&op.desc, layout, ta, tb, m, n, k, alpha, lda, ldb, beta, ldc);
    op.reads = 3u | (beta != 0.0) << 2;
    op.writes = 1u << 2;
    return xo__dispatch(&op);
}

static XO_INLINE xo_status gemm(const char *fn, xo_dtype dt, xo_context *ctx, xo_layout layout, xo_transpose ta,
                      xo_transpose tb, size_t m, size_t n, size_t k, double alpha, xo_buffer *a, size_t a_off,
                      size_t lda, xo_buffer *b, size_t b_off, size_t ldb, double beta, xo_buffer *c, size_t c_off,
                      size_t ldc)
{
    const size_t es = dt == XO_F64 ? sizeof(double) : sizeof(float);
    /* alpha == 0 takes the slow path: OpenBLAS's gemm reads A and B on some paths even
     * then, while every plugin computes C = beta*C without reading them. */
    if (ctx && (layout == XO_ROW_MAJOR || layout == XO_COL_MAJOR) && (ta == XO_NO_TRANS || ta == XO_TRANS) &&
        (tb == XO_NO_TRANS || tb == XO_TRANS) && m && n && k && alpha != 0.0 && c != a && c != b &&
        XO_SMALL_DIMS(m | n | k | lda | ldb | ldc | a_off | b_off | c_off) && XO_EXPRESS_GEMM(m, n, k)) {
        int an = ta == XO_NO_TRANS, bn = tb == XO_NO_TRANS, ad, bd, cd;
        size_t alo, ahi, blo, bhi, clo, chi;
        if (!xo__matrix_rule(ctx, a, a_off, layout, an ? m : k, an ? k : m, lda, es, 1, &alo, &ahi, &ad) &&
            !xo__matrix_rule(ctx, b, b_off, layout, bn ? k : n, bn ? n : k, ldb, es, 1, &blo, &bhi, &bd) &&
            !xo__matrix_rule(ctx, c, c_off, layout, m, n, ldc, es, 1, &clo, &chi, &cd)) {
            uint64_t k0 = xo__key_head(ctx->id, XO_OP_GEMM, dt, 0, 0, 0), res = 0, sizes = XO_KEY_SIZES0;
            xo__key_operand(&k0, &res, &sizes, 0, a, 1);
            xo__key_operand(&k0, &res, &sizes, 1, b, 1);
            xo__key_operand(&k0, &res, &sizes, 2, c, xo__operand_need(beta != 0.0, cd, clo, chi, c));
            const xo_host_blas *hb = ctx->host_blas;
            xo__express_hit h;
            if (hb && (dt == XO_F32 ? hb->sgemm != NULL : hb->dgemm != NULL) &&
                xo__express_find(ctx, k0, res, sizes, m, n, k, c, &h)) {
                uint64_t t0 = xo__fast_t0(h.e);
                if (dt == XO_F32)
                    hb->sgemm(layout, ta, tb, (int)m, (int)n, (int)k, (float)alpha, (const float *)a->host + a_off,
                              (int)lda, (const float *)b->host + b_off, (int)ldb, (float)beta,
                              (float *)c->host + c_off, (int)ldc);
                else
                    hb->dgemm(layout, ta, tb, (int)m, (int)n, (int)k, alpha, (const double *)a->host + a_off,
                              (int)lda, (const double *)b->host + b_off, (int)ldb, beta,
                              (double *)c->host + c_off, (int)ldc);
                xo__fast_record(ctx, h.s, h.e, h.forced, fn, c, t0);
                return XO_OK;
            }
        }
    }
    return gemm_checked(fn, dt, ctx, layout, ta, tb, m, n, k, alpha, a, a_off, lda, b, b_off, ldb, beta, c, c_off,
                        ldc);
}

static XO_INLINE xo_status gemv(const char *fn, xo_dtype dt, xo_context *ctx, xo_layout layout, xo_transpose ta, size_t m,
                      size_t n, double alpha, xo_buffer *a, size_t a_off, size_t lda, xo_buffer *x, size_t x_off,
                      size_t incx, double beta, xo_buffer *y, size_t y_off, size_t incy)
{
    const size_t es = dt == XO_F64 ? sizeof(double) : sizeof(float);
    if (ctx && (layout == XO_ROW_MAJOR || layout == XO_COL_MAJOR) && (ta == XO_NO_TRANS || ta == XO_TRANS) && m &&
        n && incx && incy && y != a && y != x && XO_SMALL_DIMS(m | n | lda | incx | incy | a_off | x_off | y_off)) {
        int nt = ta == XO_NO_TRANS, ad, xd, yd;
        size_t alo, ahi, xlo, xhi, ylo, yhi, xn = nt ? n : m, yn = nt ? m : n;
        if (!xo__matrix_rule(ctx, a, a_off, layout, m, n, lda, es, 1, &alo, &ahi, &ad) &&
            !xo__vector_rule(ctx, x, x_off, xn, incx, 1, es, 1, &xlo, &xhi, &xd) &&
            !xo__vector_rule(ctx, y, y_off, yn, incy, 1, es, 1, &ylo, &yhi, &yd)) {
            uint64_t k0 = xo__key_head(ctx->id, XO_OP_GEMV, dt, 0, 0, 0), res = 0, sizes = XO_KEY_SIZES0;
            xo__key_operand(&k0, &res, &sizes, 0, a, 1);
            xo__key_operand(&k0, &res, &sizes, 1, x, 1);
            xo__key_operand(&k0, &res, &sizes, 2, y, xo__operand_need(beta != 0.0, yd, ylo, yhi, y));
            const xo_host_blas *hb = ctx->host_blas;
            xo__express_hit h;
            if (hb && (dt == XO_F32 ? hb->sgemv != NULL : hb->dgemv != NULL) &&
                xo__express_find(ctx, k0, res, sizes, m, n, 0, y, &h)) {
                uint64_t t0 = xo__fast_t0(h.e);
                if (dt == XO_F32)
                    hb->sgemv(layout, ta, (int)m, (int)n, (float)alpha, (const float *)a->host + a_off, (int)lda,
                              (const float *)x->host + x_off, (int)incx, (float)beta, (float *)y->host + y_off,
                              (int)incy);
                else
                    hb->dgemv(layout, ta, (int)m, (int)n, alpha, (const double *)a->host + a_off, (int)lda,
                              (const double *)x->host + x_off, (int)incx, beta, (double *)y->host + y_off,
                              (int)incy);
                xo__fast_record(ctx, h.s, h.e, h.forced, fn, y, t0);
                return XO_OK;
            }
        }
    }
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_GEMV, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_layout(&op, layout));
    RET(xo__check_trans(&op, "ta", ta));
    int nt = ta == XO_NO_TRANS;
    RET(xo__check_matrix(&op, 0, "a", "a_off", "lda", "m", "n", 0, a, a_off, layout, m, n, lda));
    RET(xo__check_vector(&op, 1, "x", "x_off", "incx", x, x_off, nt ? n : m, incx));
    RET(xo__check_vector(&op, 2, "y", "y_off", "incy", y, y_off, nt ? m : n, incy));
    RET(xo__check_overlap(&op, 2, "y", 0, "a", 0));
    RET(xo__check_overlap(&op, 2, "y", 1, "x", 0));
    if (m == 0 || n == 0)
        return XO_OK; /* as in BLAS: y is left untouched when either dimension is 0 */
    gemv_desc(&op.desc, layout, ta, m, n, alpha, lda, incx, beta, incy);
    op.reads = 3u | (beta != 0.0) << 2;
    op.writes = 1u << 2;
    return xo__dispatch(&op);
}

static XO_INLINE xo_status axpy(const char *fn, xo_dtype dt, xo_context *ctx, size_t n, double alpha, xo_buffer *x,
                      size_t x_off, size_t incx, xo_buffer *y, size_t y_off, size_t incy)
{
    const size_t es = dt == XO_F64 ? sizeof(double) : sizeof(float);
    size_t xlo, xhi, ylo, yhi;
    int xd, yd;
    if (ctx && n && n < XO_EXPRESS_AXPY_N && incx && incy && x != y && XO_SMALL_DIMS(n | incx | incy | x_off | y_off) &&
        !xo__vector_rule(ctx, x, x_off, n, incx, 1, es, 1, &xlo, &xhi, &xd) &&
        !xo__vector_rule(ctx, y, y_off, n, incy, 1, es, 1, &ylo, &yhi, &yd)) {
        uint64_t k0 = xo__key_head(ctx->id, XO_OP_AXPY, dt, 0, 0, 0), res = 0, sizes = XO_KEY_SIZES0;
        xo__key_operand(&k0, &res, &sizes, 0, x, 1);
        xo__key_operand(&k0, &res, &sizes, 1, y, 1);
        const xo_host_blas *hb = ctx->host_blas;
        xo__express_hit h;
        if (hb && (dt == XO_F32 ? hb->saxpy != NULL : hb->daxpy != NULL) &&
            xo__express_find(ctx, k0, res, sizes, 0, n, 0, y, &h)) {
            uint64_t t0 = xo__fast_t0(h.e);
            if (dt == XO_F32)
                hb->saxpy((int)n, (float)alpha, (const float *)x->host + x_off, (int)incx, (float *)y->host + y_off,
                          (int)incy);
            else
                hb->daxpy((int)n, alpha, (const double *)x->host + x_off, (int)incx, (double *)y->host + y_off,
                          (int)incy);
            xo__fast_record(ctx, h.s, h.e, h.forced, fn, y, t0);
            return XO_OK;
        }
    }
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_AXPY, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_vector(&op, 0, "x", "x_off", "incx", x, x_off, n, incx));
    RET(xo__check_vector(&op, 1, "y", "y_off", "incy", y, y_off, n, incy));
    RET(xo__check_overlap(&op, 1, "y", 0, "x", 0));
    if (n == 0 || alpha == 0.0)
        return XO_OK; /* as in BLAS: alpha == 0 leaves y as it is, and x is not read */
    axpy_desc(&op.desc, n, alpha, incx, incy);
    op.reads = 3u;
    op.writes = 1u << 1;
    return xo__dispatch(&op);
}

static XO_INLINE xo_status scal(const char *fn, xo_dtype dt, xo_context *ctx, size_t n, double alpha, xo_buffer *x,
                                size_t x_off, size_t incx)
{
    return xo__vector_in_place(fn, dt, ctx, XO_OP_SCAL, n, alpha, x, x_off, incx, 1);
}

/* dot (two inputs) and nrm2 (one): the result goes to out[out_off]; n = 0 writes 0. */
static XO_INLINE xo_status dot_nrm2(const char *fn, xo_dtype dt, xo_op_kind kind, xo_context *ctx, size_t n, xo_buffer *x,
                          size_t x_off, size_t incx, xo_buffer *y, size_t y_off, size_t incy, xo_buffer *out,
                          size_t out_off)
{
    xo__op op;
    xo__op_begin(&op, fn, ctx, kind, dt);
    int o = kind == XO_OP_DOT ? 2 : 1;
    RET(xo__check_ctx(&op));
    RET(xo__check_vector(&op, 0, "x", "x_off", "incx", x, x_off, n, incx));
    if (kind == XO_OP_DOT)
        RET(xo__check_vector(&op, 1, "y", "y_off", "incy", y, y_off, n, incy));
    RET(xo__check_vector(&op, o, "out", "out_off", NULL, out, out_off, 1, 1));
    RET(xo__check_overlap(&op, o, "out", 0, "x", 0));
    if (kind == XO_OP_DOT)
        RET(xo__check_overlap(&op, o, "out", 1, "y", 0));
    op.desc.n = n;
    op.desc.inc[0] = xo__tidy_inc(n, incx);
    op.desc.inc[1] = kind == XO_OP_DOT ? xo__tidy_inc(n, incy) : 1;
    op.reads = kind == XO_OP_DOT ? 3u : 1u;
    op.writes = 1u << o;
    op.desc.narg = o + 1;
    op.cpu_only = n == 0;
    return xo__dispatch(&op);
}

/* y = x; y exactly x (same buffer, offset and increment) changes nothing. */
static XO_INLINE xo_status copy(const char *fn, xo_dtype dt, xo_context *ctx, size_t n, xo_buffer *x, size_t x_off,
                                size_t incx, xo_buffer *y, size_t y_off, size_t incy)
{
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_COPY, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_vector(&op, 0, "x", "x_off", "incx", x, x_off, n, incx));
    RET(xo__check_vector(&op, 1, "y", "y_off", "incy", y, y_off, n, incy));
    /* The only overlap allowed is the same span, which for n > 1 means the same increment. */
    RET(xo__check_overlap(&op, 1, "y", 0, "x", 1));
    if (n == 0 || (x == y && x_off == y_off))
        return XO_OK;
    op.desc.n = n;
    op.desc.inc[0] = xo__tidy_inc(n, incx);
    op.desc.inc[1] = xo__tidy_inc(n, incy);
    op.reads = 1u;
    op.writes = 1u << 1;
    op.desc.narg = 2;
    return xo__dispatch(&op);
}

/* x[i*incx] = value; x is never read (NaN or Inf in it cannot survive). */
static XO_INLINE xo_status fill(const char *fn, xo_dtype dt, xo_context *ctx, size_t n, double value, xo_buffer *x,
                                size_t x_off, size_t incx)
{
    return xo__vector_in_place(fn, dt, ctx, XO_OP_FILL, n, value, x, x_off, incx, 0);
}

/* y = alpha x + beta y; y is not read when beta == 0. */
static XO_INLINE xo_status axpby(const char *fn, xo_dtype dt, xo_context *ctx, size_t n, double alpha, xo_buffer *x,
                                 size_t x_off, size_t incx, double beta, xo_buffer *y, size_t y_off, size_t incy)
{
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_AXPBY, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_vector(&op, 0, "x", "x_off", "incx", x, x_off, n, incx));
    RET(xo__check_vector(&op, 1, "y", "y_off", "incy", y, y_off, n, incy));
    RET(xo__check_overlap(&op, 1, "y", 0, "x", 0));
    if (n == 0)
        return XO_OK;
    op.desc.n = n;
    op.desc.inc[0] = xo__tidy_inc(n, incx);
    op.desc.inc[1] = xo__tidy_inc(n, incy);
    op.desc.alpha = alpha;
    op.desc.beta = beta;
    op.reads = 1u | (unsigned)(beta != 0.0) << 1;
    op.writes = 1u << 1;
    op.desc.narg = 2;
    return xo__dispatch(&op);
}

/* A += alpha x y^T, A m x n in `layout`. As in BLAS, alpha == 0 leaves A untouched. */
static XO_INLINE xo_status ger(const char *fn, xo_dtype dt, xo_context *ctx, xo_layout layout, size_t m, size_t n,
                               double alpha, xo_buffer *x, size_t x_off, size_t incx, xo_buffer *y, size_t y_off,
                               size_t incy, xo_buffer *a, size_t a_off, size_t lda)
{
    xo__op op;
    xo__op_begin(&op, fn, ctx, XO_OP_GER, dt);
    RET(xo__check_ctx(&op));
    RET(xo__check_layout(&op, layout));
    RET(xo__check_vector(&op, 0, "x", "x_off", "incx", x, x_off, m, incx));
    RET(xo__check_vector(&op, 1, "y", "y_off", "incy", y, y_off, n, incy));
    RET(xo__check_matrix(&op, 2, "a", "a_off", "lda", "m", "n", 0, a, a_off, layout, m, n, lda));
    RET(xo__check_overlap(&op, 2, "a", 0, "x", 0));
    RET(xo__check_overlap(&op, 2, "a", 1, "y", 0));
    if (m == 0 || n == 0 || alpha == 0.0)
        return XO_OK;
    op.desc.layout = layout;
    op.desc.m = m;
    op.desc.n = n;
    op.desc.inc[0] = xo__tidy_inc(m, incx);
    op.desc.inc[1] = xo__tidy_inc(n, incy);
    op.desc.ld[2] = xo__tidy_ld(layout, m, n, lda);
    op.desc.alpha = alpha;
    op.reads = 7u;
    op.writes = 1u << 2;
    op.desc.narg = 3;
    return xo__dispatch(&op);
}

/* ---- the public entry points ------------------------------------------------------ */

xo_status xo_saxpby(xo_context *ctx, size_t n, float alpha, xo_buffer *x, size_t x_off, size_t incx, float beta,
                    xo_buffer *y, size_t y_off, size_t incy)
{
    return axpby("xo_saxpby", XO_F32, ctx, n, alpha, x, x_off, incx, beta, y, y_off, incy);
}
xo_status xo_daxpby(xo_context *ctx, size_t n, double alpha, xo_buffer *x, size_t x_off, size_t incx, double beta,
                    xo_buffer *y, size_t y_off, size_t incy)
{
    return axpby("xo_daxpby", XO_F64, ctx, n, alpha, x, x_off, incx, beta, y, y_off, incy);
}
xo_status xo_saxpy(xo_context *ctx, size_t n, float alpha, xo_buffer *x, size_t x_off, size_t incx, xo_buffer *y,
                   size_t y_off, size_t incy)
{
    return axpy("xo_saxpy", XO_F32, ctx, n, alpha, x, x_off, incx, y, y_off, incy);
}
xo_status xo_daxpy(xo_context *ctx, size_t n, double alpha, xo_buffer *x, size_t x_off, size_t incx, xo_buffer *y,
                   size_t y_off, size_t incy)
{
    return axpy("xo_daxpy", XO_F64, ctx, n, alpha, x, x_off, incx, y, y_off, incy);
}
xo_status xo_scopy(xo_context *ctx, size_t n, xo_buffer *x, size_t x_off, size_t incx, xo_buffer *y, size_t y_off,
                   size_t incy)
{
    return copy("xo_scopy", XO_F32, ctx, n, x, x_off, incx, y, y_off, incy);
}
xo_status xo_dcopy(xo_context *ctx, size_t n, xo_buffer *x, size_t x_off, size_t incx, xo_buffer *y, size_t y_off,
                   size_t incy)
{
    return copy("xo_dcopy", XO_F64, ctx, n, x, x_off, incx, y, y_off, incy);
}
xo_status xo_sdot(xo_context *ctx, size_t n, xo_buffer *x, size_t x_off, size_t incx, xo_buffer *y, size_t y_off,
                  size_t incy, xo_buffer *out, size_t out_off)
{
    return dot_nrm2("xo_sdot", XO_F32, XO_OP_DOT, ctx, n, x, x_off, incx, y, y_off, incy, out, out_off);
}
xo_status xo_ddot(xo_context *ctx, size_t n, xo_buffer *x, size_t x_off, size_t incx, xo_buffer *y, size_t y_off,
                  size_t incy, xo_buffer *out, size_t out_off)
{
    return dot_nrm2("xo_ddot", XO_F64, XO_OP_DOT, ctx, n, x, x_off, incx, y, y_off, incy, out, out_off);
}
xo_status xo_sfill(xo_context *ctx, size_t n, float value, xo_buffer *x, size_t x_off, size_t incx)
{
    return fill("xo_sfill", XO_F32, ctx, n, value, x, x_off, incx);
}
xo_status xo_dfill(xo_context *ctx, size_t n, double value, xo_buffer *x, size_t x_off, size_t incx)
{
    return fill("xo_dfill", XO_F64, ctx, n, value, x, x_off, incx);
}
xo_status xo_sgemm(xo_context *ctx, xo_layout layout, xo_transpose ta, xo_transpose tb, size_t m, size_t n,
                   size_t k, float alpha, xo_buffer *a, size_t a_off, size_t lda, xo_buffer *b, size_t b_off,
                   size_t ldb, float beta, xo_buffer *c, size_t c_off, size_t ldc)
{
    return gemm("xo_sgemm", XO_F32, ctx, layout, ta, tb, m, n, k, alpha, a, a_off, lda, b, b_off, ldb, beta, c, c_off,
                ldc);
}
xo_status xo_dgemm(xo_context *ctx, xo_layout layout, xo_transpose ta, xo_transpose tb, size_t m, size_t n,
                   size_t k, double alpha, xo_buffer *a, size_t a_off, size_t lda, xo_buffer *b, size_t b_off,
                   size_t ldb, double beta, xo_buffer *c, size_t c_off, size_t ldc)
{
    return gemm("xo_dgemm", XO_F64, ctx, layout, ta, tb, m, n, k, alpha, a, a_off, lda, b, b_off, ldb, beta, c, c_off,
                ldc);
}
xo_status xo_sgemv(xo_context *ctx, xo_layout layout, xo_transpose ta, size_t m, size_t n, float alpha, xo_buffer *a,
                   size_t a_off, size_t lda, xo_buffer *x, size_t x_off, size_t incx, float beta, xo_buffer *y,
                   size_t y_off, size_t incy)
{
    return gemv("xo_sgemv", XO_F32, ctx, layout, ta, m, n, alpha, a, a_off, lda, x, x_off, incx, beta, y, y_off, incy);
}
xo_status xo_dgemv(xo_context *ctx, xo_layout layout, xo_transpose ta, size_t m, size_t n, double alpha, xo_buffer *a,
                   size_t a_off, size_t lda, xo_buffer *x, size_t x_off, size_t incx, double beta, xo_buffer *y,
                   size_t y_off, size_t incy)
{
    return gemv("xo_dgemv", XO_F64, ctx, layout, ta, m, n, alpha, a, a_off, lda, x, x_off, incx, beta, y, y_off, incy);
}
xo_status xo_sger(xo_context *ctx, xo_layout layout, size_t m, size_t n, float alpha, xo_buffer *x, size_t x_off,
                  size_t incx, xo_buffer *y, size_t y_off, size_t incy, xo_buffer *a, size_t a_off, size_t lda)
{
    return ger("xo_sger", XO_F32, ctx, layout, m, n, alpha, x, x_off, incx, y, y_off, incy, a, a_off, lda);
}
xo_status xo_dger(xo_context *ctx, xo_layout layout, size_t m, size_t n, double alpha, xo_buffer *x, size_t x_off,
                  size_t incx, xo_buffer *y, size_t y_off, size_t incy, xo_buffer *a, size_t a_off, size_t lda)
{
    return ger("xo_dger", XO_F64, ctx, layout, m, n, alpha, x, x_off, incx, y, y_off, incy, a, a_off, lda);
}
xo_status xo_snrm2(xo_context *ctx, size_t n, xo_buffer *x, size_t x_off, size_t incx, xo_buffer *out,
                   size_t out_off)
{
    return dot_nrm2("xo_snrm2", XO_F32, XO_OP_NRM2, ctx, n, x, x_off, incx, NULL, 0, 1, out, out_off);
}
xo_status xo_dnrm2(xo_context *ctx, size_t n, xo_buffer *x, size_t x_off, size_t incx, xo_buffer *out,
                   size_t out_off)
{
    return dot_nrm2("xo_dnrm2", XO_F64, XO_OP_NRM2, ctx, n, x, x_off, incx, NULL, 0, 1, out, out_off);
}
xo_status xo_sscal(xo_context *ctx, size_t n, float alpha, xo_buffer *x, size_t x_off, size_t incx)
{
    return scal("xo_sscal", XO_F32, ctx, n, alpha, x, x_off, incx);
}
xo_status xo_dscal(xo_context *ctx, size_t n, double alpha, xo_buffer *x, size_t x_off, size_t incx)
{
    return scal("xo_dscal", XO_F64, ctx, n, alpha, x, x_off, incx);
}
