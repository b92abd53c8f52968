/* One op on its way through the core: validated, described, then dispatched.
 * The checks are inline (they run on every call of every op); their error paths are
 * out-of-line cold functions in validate.c that write the message. */
#ifndef XO_OPS_H
#define XO_OPS_H
#include "xo_internal.h"
#include "xo_op.h"
#include "xo_dispatch.h" /* xo__dispatch: place, move, run, record */

#include <string.h>


#define XO_COLD __attribute__((cold, noinline))
/* The number of raw argument words of a call memo (xo_dispatch.h). */
#define XO_MEMO_N(args) ((int)(sizeof(args) / sizeof((args)[0])))
XO_COLD xo_status xo__fail_null(const char *fn, const char *name);
XO_COLD xo_status xo__fail_enum(const char *fn, const char *name, int value, int lo, int hi);
XO_COLD xo_status xo__fail_layout(const char *fn, int layout);
XO_COLD xo_status xo__fail_trans(const char *fn, const char *name, int t);
XO_COLD xo_status xo__fail_context(const char *fn, const char *bname);
XO_COLD xo_status xo__fail_inc(const char *fn, const char *incname);
XO_COLD xo_status xo__fail_ld(const char *fn, const char *ldname, size_t ld, const char *rows_name,
                              const char *cols_name, int trans, size_t need, const char *bname, size_t rows,
                              size_t cols, xo_layout layout);
XO_COLD xo_status xo__fail_span(const char *fn, const char *bname, const char *offname, size_t off,
                                size_t elements, size_t esize, size_t bytes);
XO_COLD xo_status xo__fail_extent(const char *fn, const char *bname);
XO_COLD xo_status xo__fail_overlap(const char *fn, const char *outname, size_t out_lo, size_t out_hi,
                                   const char *inname, size_t in_lo, size_t in_hi, int alias_allowed);

static inline xo_status xo__check_ctx(const xo__op *op)
{
    return op->ctx ? XO_OK : xo__fail_null(op->fn, "ctx");
}

static inline xo_status xo__check_enum(const xo__op *op, const char *name, int value, int lo, int hi)
{
    return (value >= lo && value <= hi) ? XO_OK : xo__fail_enum(op->fn, name, value, lo, hi);
}

static inline xo_status xo__check_layout(const xo__op *op, xo_layout layout)
{
    return (layout == XO_ROW_MAJOR || layout == XO_COL_MAJOR) ? XO_OK : xo__fail_layout(op->fn, (int)layout);
}

static inline xo_status xo__check_trans(const xo__op *op, const char *name, xo_transpose t)
{
    return (t == XO_NO_TRANS || t == XO_TRANS) ? XO_OK : xo__fail_trans(op->fn, name, (int)t);
}

/* Dimensions below 2^29 cannot overflow the span arithmetic (elements < 2^59, bytes
 * < 2^62), so the common case skips the overflow checks; larger ones take them. */
#define XO_SMALL_DIMS(x) (((x) >> 29) == 0)

/* The express path's axpy (and a plan's direct one) takes vectors shorter than this: a host
 * BLAS entry runs on the calling thread, and from here the CPU plugin's run() splits the
 * loop over its threads (its XO_CPU_GRAIN). Measured (xo_thread_sizes, 2-core AMD EPYC):
 * saxpy of 1M floats 81 us on the calling thread, 42 through run(). */
#define XO_EXPRESS_AXPY_N ((size_t)1 << 16)
/* Likewise the express path's gemm (and a plan's direct one) takes products of fewer
 * multiply-adds than this; from here the CPU plugin's run() splits its medium products over
 * its threads (cpu_small.c's tiles, about 2 us at this size on one AVX-512 core). Measured
 * (docs/bench.md, "Issue 30, eighth pass"): 100x256x256 sgemm 53 us on the calling thread,
 * 36 through run(). */
#define XO_EXPRESS_GEMM_FMA ((size_t)1 << 19)
#define XO_EXPRESS_GEMM(m, n, k) ((m) * (n) <= XO_EXPRESS_GEMM_FMA && (m) * (n) * (k) < XO_EXPRESS_GEMM_FMA)

/* 1 for an xo_unary_op that gemm_bias_act takes as its activation (a forward op). */
_Static_assert(XO_UNARY_OP_COUNT <= 32, "the activation mask holds one bit per unary op");
static inline int xo__unary_is_activation(xo_unary_op u)
{
#define XO_ACT_BIT_(NAME, ACT, ...) | ((uint32_t)(ACT) << XO_##NAME)
    static const uint32_t act = 0 XO_UNARY_OP_MAP(XO_ACT_BIT_);
#undef XO_ACT_BIT_
    return (unsigned)u < XO_UNARY_OP_COUNT && (act >> u & 1u);
}

/* ---- the operand rules, one copy, quiet ---------------------------------------------
 * Each rule returns XO_RULE_OK or the first rule the operand breaks, in the order the
 * messages report them, and writes nothing but its out-parameters: the full checks below
 * turn a broken rule into its message (validate.c), the express path in ops_blas.c just
 * leaves for the full path. */
typedef enum xo__rule {
    XO_RULE_OK = 0,
    XO_RULE_INC,     /* an increment of 0 */
    XO_RULE_LD,      /* a leading dimension below max(1, inner) */
    XO_RULE_NULL,    /* no buffer */
    XO_RULE_CONTEXT, /* a buffer of another context */
    XO_RULE_EXTENT,  /* the element count overflows size_t */
    XO_RULE_SPAN,    /* the elements reach past the buffer's end */
} xo__rule;

/* `plain` (a constant): the caller has checked that every figure is under 2^29 and no
 * dimension is 0, so the rules skip their overflow and empty cases (the express path). */

/* `elements` from element `off` of `es` bytes inside b: bytes [*lo, *hi). */
static inline __attribute__((always_inline)) xo__rule xo__span_rule(const xo_buffer *b, size_t off,
                                                                     size_t elements, size_t es, int plain,
                                                                     size_t *lo, size_t *hi)
{
    size_t end;
    if (plain || __builtin_expect(XO_SMALL_DIMS(off) && XO_SMALL_DIMS(elements >> 30), 1))
        *hi = (off + elements) * es;
    else if (__builtin_add_overflow(off, elements, &end) || __builtin_mul_overflow(end, es, hi))
        return XO_RULE_SPAN;
    *lo = off * es;
    return *hi > b->bytes ? XO_RULE_SPAN : XO_RULE_OK;
}

static inline __attribute__((always_inline)) xo__rule xo__buffer_rule(const xo_context *ctx, const xo_buffer *b)
{
    return !b ? XO_RULE_NULL : b->ctx != ctx ? XO_RULE_CONTEXT : XO_RULE_OK;
}

/* n elements at stride inc from element off of b (`inc_checked`: the op takes an
 * increment, which must not be 0). *dense: they fill [*lo, *hi) without gaps. */
static inline __attribute__((always_inline)) xo__rule
xo__vector_rule(const xo_context *ctx, const xo_buffer *b, size_t off, size_t n, size_t inc, int inc_checked,
                size_t es, int plain, size_t *lo, size_t *hi, int *dense)
{
    if (!plain && inc_checked && inc == 0)
        return XO_RULE_INC;
    xo__rule r = xo__buffer_rule(ctx, b);
    if (r != XO_RULE_OK)
        return r;
    size_t elements = 0;
    if (plain || __builtin_expect(XO_SMALL_DIMS(off | n | inc), 1))
        elements = plain || n ? (n - 1) * inc + 1 : 0;
    else if (n > 0 &&
             (__builtin_mul_overflow(n - 1, inc, &elements) || __builtin_add_overflow(elements, 1, &elements)))
        return XO_RULE_EXTENT;
    *dense = inc == 1 || n <= 1;
    return xo__span_rule(b, off, elements, es, plain, lo, hi);
}

/* A rows x cols matrix stored in `layout` with leading dimension ld from element off of
 * b. *dense: its elements fill [*lo, *hi) without gaps. */
static inline __attribute__((always_inline)) xo__rule
xo__matrix_rule(const xo_context *ctx, const xo_buffer *b, size_t off, xo_layout layout, size_t rows, size_t cols,
                size_t ld, size_t es, int plain, size_t *lo, size_t *hi, int *dense)
{
    size_t inner = layout == XO_ROW_MAJOR ? cols : rows;
    size_t outer = layout == XO_ROW_MAJOR ? rows : cols;
    if (ld < (plain || inner > 1 ? inner : 1))
        return XO_RULE_LD;
    xo__rule r = xo__buffer_rule(ctx, b);
    if (r != XO_RULE_OK)
        return r;
    size_t elements = 0;
    if (plain || __builtin_expect(XO_SMALL_DIMS(off | rows | cols | ld), 1))
        elements = plain || (rows && cols) ? (outer - 1) * ld + inner : 0;
    else if (rows > 0 && cols > 0 &&
             (__builtin_mul_overflow(outer - 1, ld, &elements) || __builtin_add_overflow(elements, inner, &elements)))
        return XO_RULE_EXTENT;
    *dense = ld == inner || outer <= 1;
    return xo__span_rule(b, off, elements, es, plain, lo, hi);
}

/* The messages of a broken rule (cold, validate.c). */
XO_COLD xo_status xo__fail_vector(const xo__op *op, xo__rule r, const char *bname, const char *offname,
                                  const char *incname, const xo_buffer *b, size_t off, size_t n, size_t inc);
XO_COLD xo_status xo__fail_matrix(const xo__op *op, xo__rule r, const char *bname, const char *offname,
                                  const char *ldname, const char *rows_name, const char *cols_name, int trans,
                                  const xo_buffer *b, size_t off, xo_layout layout, size_t rows, size_t cols,
                                  size_t ld);

/* ---- the full checks: the rules, with messages ------------------------------------ */

/* Operand i is b, from element off, touching bytes [lo, hi). */
static inline void xo__set_operand(xo__op *op, int i, xo_buffer *b, size_t off, size_t lo, size_t hi, int dense)
{
    op->buf[i] = b;
    op->lo[i] = lo;
    op->hi[i] = hi;
    op->dense |= (unsigned)(dense != 0) << i;
    op->desc.arg[i].off = off;
}

static inline xo_status xo__check_buffer(const xo__op *op, const char *bname, const xo_buffer *b)
{
    xo__rule r = xo__buffer_rule(op->ctx, b);
    return r == XO_RULE_OK ? XO_OK : r == XO_RULE_NULL ? xo__fail_null(op->fn, bname) : xo__fail_context(op->fn, bname);
}

/* Operand i: a vector of n elements, stride inc, starting at element off (incname NULL:
 * the op takes no increment). */
static inline xo_status xo__check_vector(xo__op *op, int i, const char *bname, const char *offname,
                                         const char *incname, xo_buffer *b, size_t off, size_t n, size_t inc)
{
    size_t lo = 0, hi = 0;
    int dense = 0;
    xo__rule r = xo__vector_rule(op->ctx, b, off, n, inc, incname != NULL, op->esize, 0, &lo, &hi, &dense);
    if (__builtin_expect(r != XO_RULE_OK, 0))
        return xo__fail_vector(op, r, bname, offname, incname, b, off, n, inc);
    xo__set_operand(op, i, b, off, lo, hi, dense);
    return XO_OK;
}

/* Operand i: a rows x cols matrix stored in `layout` with leading dimension ld. Its
 * dimensions are called rows_name x cols_name, swapped when `trans` (for messages). */
static inline xo_status xo__check_matrix(xo__op *op, int i, const char *bname, const char *offname,
                                         const char *ldname, const char *rows_name, const char *cols_name,
                                         int trans, xo_buffer *b, size_t off, xo_layout layout, size_t rows,
                                         size_t cols, size_t ld)
{
    size_t lo = 0, hi = 0;
    int dense = 0;
    xo__rule r = xo__matrix_rule(op->ctx, b, off, layout, rows, cols, ld, op->esize, 0, &lo, &hi, &dense);
    if (__builtin_expect(r != XO_RULE_OK, 0))
        return xo__fail_matrix(op, r, bname, offname, ldname, rows_name, cols_name, trans, b, off, layout, rows,
                               cols, ld);
    xo__set_operand(op, i, b, off, lo, hi, dense);
    return XO_OK;
}

/* Output `out` must not overlap input `in`, except the exact alias when allowed. */
static inline xo_status xo__check_overlap(const xo__op *op, int out, const char *outname, int in,
                                          const char *inname, int alias_allowed)
{
    if (op->buf[out] != op->buf[in] || op->lo[out] == op->hi[out] || op->lo[in] == op->hi[in])
        return XO_OK;
    if (op->hi[out] <= op->lo[in] || op->hi[in] <= op->lo[out])
        return XO_OK;
    if (alias_allowed && op->lo[out] == op->lo[in] && op->hi[out] == op->hi[in])
        return XO_OK;
    return xo__fail_overlap(op->fn, outname, op->lo[out], op->hi[out], inname, op->lo[in], op->hi[in], alias_allowed);
}

/* A leading dimension or increment that cannot matter (one row or column, one element,
 * or an empty matrix such as gemm's A when k = 0) may legally be any size, even past what
 * BLAS's 32-bit ints hold; the op is the same with the smallest legal value, so that is
 * what devices get. */
static inline size_t xo__tidy_ld(xo_layout layout, size_t rows, size_t cols, size_t ld)
{
    size_t inner = layout == XO_ROW_MAJOR ? cols : rows, outer = layout == XO_ROW_MAJOR ? rows : cols;
    return outer <= 1 || inner == 0 ? (inner > 1 ? inner : 1) : ld;
}
static inline size_t xo__tidy_inc(size_t n, size_t inc) { return n <= 1 ? 1 : inc; }

/* gemm's operands a, b, c (operands 0..2) as gemm and gemm_bias_act take them. */
static inline xo_status xo__check_gemm(xo__op *op, xo_layout layout, xo_transpose ta, xo_transpose tb, size_t m,
                                       size_t n, size_t k, xo_buffer *a, size_t a_off, size_t lda, xo_buffer *b,
                                       size_t b_off, size_t ldb, xo_buffer *c, size_t c_off, size_t ldc)
{
    XO_RETURN_IF_ERROR(xo__check_layout(op, layout));
    XO_RETURN_IF_ERROR(xo__check_trans(op, "ta", ta));
    XO_RETURN_IF_ERROR(xo__check_trans(op, "tb", tb));
    int an = ta == XO_NO_TRANS, bn = tb == XO_NO_TRANS;
    XO_RETURN_IF_ERROR(xo__check_matrix(op, 0, "a", "a_off", "lda", "m", "k", !an, a, a_off, layout, an ? m : k,
                                        an ? k : m, lda));
    XO_RETURN_IF_ERROR(xo__check_matrix(op, 1, "b", "b_off", "ldb", "k", "n", !bn, b, b_off, layout, bn ? k : n,
                                        bn ? n : k, ldb));
    XO_RETURN_IF_ERROR(xo__check_matrix(op, 2, "c", "c_off", "ldc", "m", "n", 0, c, c_off, layout, m, n, ldc));
    XO_RETURN_IF_ERROR(xo__check_overlap(op, 2, "c", 0, "a", 0));
    return xo__check_overlap(op, 2, "c", 1, "b", 0);
}

/* gemm's description (gemm and gemm_bias_act). */
static inline __attribute__((always_inline)) void xo__gemm_desc(xo_op_desc *d, xo_layout layout, xo_transpose ta,
                                                                xo_transpose tb, size_t m, size_t n, size_t k,
                                                                double alpha, size_t lda, size_t ldb, double beta,
                                                                size_t ldc)
{
    int an = ta == XO_NO_TRANS, bn = tb == XO_NO_TRANS;
    d->layout = layout;
    d->ta = ta;
    d->tb = tb;
    d->m = m;
    d->n = n;
    d->k = k;
    d->ld[0] = xo__tidy_ld(layout, an ? m : k, an ? k : m, lda);
    d->ld[1] = xo__tidy_ld(layout, bn ? k : n, bn ? n : k, ldb);
    d->ld[2] = xo__tidy_ld(layout, m, n, ldc);
    d->alpha = k ? alpha : 0.0; /* k == 0: C = beta C, which every device runs as alpha == 0 */
    d->beta = beta;
    d->narg = 3;
}

/* An element-wise call's operand count and written operand (y), and its raw arguments as
 * its memo keeps them. */
#define XO_ELEMENTWISE_NARG 2
#define XO_ELEMENTWISE_WRITES (1u << 1)
#define XO_ELEMENTWISE_ARGS(alpha_bits)                                                                   \
    {(uintptr_t)fn, (uintptr_t)ctx, (uint64_t)(int64_t)subop, n, (uintptr_t)x, x_off, (uintptr_t)y, y_off, \
     alpha_bits}

/* xo__elementwise past its memo: checks, description, dispatch (which may fill memo).
 * Out of line, so that a memo hit does not pay for this path's frame. */
static __attribute__((noinline, unused)) xo_status
xo__elementwise_checked(const char *fn, xo_dtype dt, xo_context *ctx, xo_op_kind kind, int subop, int sub_lo,
                        int sub_hi, size_t n, const char *const names[4], xo_buffer *x, size_t x_off,
                        xo_buffer *y, size_t y_off, double alpha, xo__memo_set *memo)
{
    uint64_t alpha_bits;
    memcpy(&alpha_bits, &alpha, sizeof alpha_bits);
    const uint64_t args[] = XO_ELEMENTWISE_ARGS(alpha_bits);
    xo__op op;
    xo__op_begin(&op, fn, ctx, kind, dt);
    XO_RETURN_IF_ERROR(xo__check_ctx(&op));
    XO_RETURN_IF_ERROR(xo__check_enum(&op, "op", subop, sub_lo, sub_hi));
    XO_RETURN_IF_ERROR(xo__check_vector(&op, 0, names[0], names[1], NULL, x, x_off, n, 1));
    XO_RETURN_IF_ERROR(xo__check_vector(&op, 1, names[2], names[3], NULL, y, y_off, n, 1));
    XO_RETURN_IF_ERROR(xo__check_overlap(&op, 1, names[2], 0, names[0], 1));
    if (n == 0)
        return XO_OK;
    op.desc.subop = subop;
    op.desc.n = n;
    op.desc.alpha = alpha;
    op.reads = 1u;
    op.writes = XO_ELEMENTWISE_WRITES;
    op.desc.narg = XO_ELEMENTWISE_NARG;
    return xo__dispatch_memo(&op, memo, args, XO_MEMO_N(args));
}

/* y[i] = f(x[i]) over n contiguous elements, y may be x exactly (unary: f = subop;
 * binary_scalar: f = x subop alpha): a memo's run, else checks, description, dispatch.
 * The operands are named as the public entry names them (x/y, a/c) in messages. */
static inline __attribute__((always_inline)) xo_status
xo__elementwise(const char *fn, xo_dtype dt, xo_context *ctx, xo_op_kind kind, int subop, int sub_lo, int sub_hi,
                size_t n, const char *const names[4], xo_buffer *x, size_t x_off, xo_buffer *y, size_t y_off,
                double alpha)
{
    uint64_t alpha_bits;
    memcpy(&alpha_bits, &alpha, sizeof alpha_bits);
    const uint64_t args[] = XO_ELEMENTWISE_ARGS(alpha_bits);
    xo__memo_set *memo = xo__memo_of(args, XO_MEMO_N(args));
    xo_status st;
    if (xo__memo_run(ctx, memo, args, XO_MEMO_N(args), XO_ELEMENTWISE_NARG, XO_ELEMENTWISE_WRITES, &st))
        return st;
    return xo__elementwise_checked(fn, dt, ctx, kind, subop, sub_lo, sub_hi, n, names, x, x_off, y, y_off, alpha,
                                   memo);
}

/* One strided vector x that the op writes in place with a scalar (scal: x *= alpha,
 * reads x; fill: x = alpha, never reads x): checks, description, dispatch. */
static inline __attribute__((always_inline)) xo_status xo__vector_in_place(const char *fn, xo_dtype dt,
                                                                           xo_context *ctx, xo_op_kind kind,
                                                                           size_t n, double alpha, xo_buffer *x,
                                                                           size_t x_off, size_t incx, int reads)
{
    xo__op op;
    xo__op_begin(&op, fn, ctx, kind, dt);
    XO_RETURN_IF_ERROR(xo__check_ctx(&op));
    XO_RETURN_IF_ERROR(xo__check_vector(&op, 0, "x", "x_off", "incx", x, x_off, n, incx));
    if (n == 0)
        return XO_OK;
    op.desc.n = n;
    op.desc.inc[0] = xo__tidy_inc(n, incx);
    op.desc.alpha = alpha;
    op.reads = reads ? 1u : 0u;
    op.writes = 1u;
    op.desc.narg = 1;
    return xo__dispatch(&op);
}
#endif
