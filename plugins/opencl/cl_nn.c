/* cl_nn.c: launches of the ops that run on our kernels besides unary, binary and reduce
 * (copy, fill, axpby, binary_scalar, scale_by, bias, softmax, reduce_axis), and
 * gemm_bias_act: CLBlast's gemm, then one pass over C for bias + activation (the
 * kernel that also runs bias).
 *
 * BLAS semantics are the kernels' (kernels_cl/elementwise.cl): axpby reads x only when
 * alpha != 0 and y only when beta != 0; copy and fill move bits; gemm_bias_act with
 * alpha == 0 runs no product and reads C only when beta != 0. */
#include "cl_internal.h"

/* A `real` kernel argument in the op's dtype. copy and fill take the same bytes as
 * `bits` (uint or ulong), so a value's bit pattern reaches memory unchanged. */
typedef union scalar {
    cl_float f;
    cl_double d;
} scalar;

static xo__cl_arg real_arg(xo_dtype dt, double v, scalar *s)
{
    if (dt == XO_F64) {
        s->d = v;
        return XO_CL_ARG(s->d);
    }
    s->f = (float)v;
    return XO_CL_ARG(s->f);
}

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* The smallest power of two >= v, at most cap (a power of two). */
static size_t pow2_fit(size_t v, size_t cap)
{
    size_t p = 1;
    while (p < v && p < cap) p *= 2;
    return p;
}

/* C (m x n in `layout`) = act(v + bias[j]) with v = scale * C, or 0 when !read_c (C not
 * read); bias may be NULL. Row-major: inner index = column; column-major: outer. */
static cl_int bias_act_locked(xo__cl_device *d, xo_dtype dt, int act, xo_layout layout, size_t m, size_t n,
                              const xo_operand *c, size_t ldc, int read_c, double scale, const xo_operand *bias,
                              cl_event *ev, const char **call)
{
    cl_kernel k = d->kernel[XO_CL_K_BIAS_ACT][dt];
    const int row_major = layout != XO_COL_MAJOR;
    cl_ulong outer = row_major ? m : n, inner = row_major ? n : m, ld = ldc, c_off = c->off;
    cl_ulong b_off = bias ? bias->off : 0;
    cl_int a = act, rc = read_c, has_bias = bias != NULL, bias_inner = row_major;
    cl_mem mc = xo__cl_mem(c->mem), mb = bias ? xo__cl_mem(bias->mem) : NULL; /* NULL: a null pointer */
    scalar sc;
    const xo__cl_arg args[] = {XO_CL_ARG(a),        XO_CL_ARG(outer),      XO_CL_ARG(inner),
                               XO_CL_ARG(mc),       XO_CL_ARG(c_off),      XO_CL_ARG(ld),
                               XO_CL_ARG(rc),       real_arg(dt, scale, &sc), XO_CL_ARG(has_bias),
                               XO_CL_ARG(bias_inner), XO_CL_ARG(mb),       XO_CL_ARG(b_off)};
    return xo__cl_launch_2d_locked(d, k, args, 12, outer, inner, ev, call);
}

/* One work-group per row (grid-strided), as wide as the row up to 256 items. */
static cl_int softmax_locked(xo__cl_device *d, const xo_op_desc *op, cl_event *ev, const char **call)
{
    const int dt = op->dtype;
    const size_t esize = dt == XO_F64 ? sizeof(double) : sizeof(float);
    cl_kernel k = d->kernel[XO_CL_K_SOFTMAX][dt];
    size_t lsz = pow2_fit(op->n, xo__cl_pow2_floor(min_size(xo__cl_kernel_wg(d, k), 256)));
    size_t global = min_size(op->m, 65536) * lsz;
    cl_int sop = op->subop;
    cl_ulong rows = op->m, cols = op->n, ldx = op->ld[0], ldy = op->ld[1];
    cl_ulong x_off = op->arg[0].off, y_off = op->arg[1].off;
    cl_mem x = xo__cl_mem(op->arg[0].mem), y = xo__cl_mem(op->arg[1].mem);
    const xo__cl_arg args[] = {XO_CL_ARG(sop), XO_CL_ARG(rows),  XO_CL_ARG(cols), XO_CL_ARG(x),
                               XO_CL_ARG(x_off), XO_CL_ARG(ldx), XO_CL_ARG(y),    XO_CL_ARG(y_off),
                               XO_CL_ARG(ldy), {lsz * esize, NULL}};
    return xo__cl_launch_locked(d, k, args, 10, 1, &global, &lsz, ev, call);
}

/* Results along dimension 0 of the work-group, the reduced elements along dimension 1:
 * axis 1 gives each row a whole group; axis 0 gives adjacent columns adjacent items. */
static cl_int reduce_axis_locked(xo__cl_device *d, const xo_op_desc *op, cl_event *ev, const char **call)
{
    const int dt = op->dtype;
    const size_t esize = dt == XO_F64 ? sizeof(double) : sizeof(float);
    cl_kernel k = d->kernel[XO_CL_K_REDUCE_AXIS][dt];
    const int rows_out = op->axis == 1;
    cl_int rop = op->subop;
    cl_ulong results = rows_out ? op->m : op->n, count = rows_out ? op->n : op->m;
    cl_ulong rs = rows_out ? op->ld[0] : 1, es = rows_out ? 1 : op->ld[0];
    cl_ulong x_off = op->arg[0].off, out_off = op->arg[1].off;
    cl_mem x = xo__cl_mem(op->arg[0].mem), out = xo__cl_mem(op->arg[1].mem);
    size_t total = xo__cl_pow2_floor(min_size(xo__cl_kernel_wg(d, k), 256));
    size_t lx = rows_out ? 1 : pow2_fit(results, min_size(total, 32));
    size_t ly = pow2_fit(count, total / lx);
    size_t groups = min_size((results + lx - 1) / lx, 65536);
    size_t local[2] = {lx, ly}, global[2] = {groups * lx, ly};
    const xo__cl_arg args[] = {XO_CL_ARG(rop), XO_CL_ARG(results), XO_CL_ARG(count),   XO_CL_ARG(x),
                               XO_CL_ARG(x_off), XO_CL_ARG(rs),    XO_CL_ARG(es),      XO_CL_ARG(out),
                               XO_CL_ARG(out_off), {lx * ly * esize, NULL}};
    return xo__cl_launch_locked(d, k, args, 10, 2, global, local, ev, call);
}

cl_int xo__cl_run_nn_locked(xo__cl_device *d, const xo_op_desc *op, cl_event *last, const char **call)
{
    const xo_dtype dt = op->dtype;
    const xo_operand *a = op->arg;
    cl_ulong n = op->n, off0 = a[0].off, off1 = op->narg > 1 ? a[1].off : 0;
    cl_ulong inc0 = op->inc[0], inc1 = op->inc[1];
    cl_mem m0 = xo__cl_mem(a[0].mem), m1 = op->narg > 1 ? xo__cl_mem(a[1].mem) : NULL;
    scalar s0, s1;
    switch (op->kind) {
    case XO_OP_COPY: {
        const xo__cl_arg args[] = {XO_CL_ARG(n),  XO_CL_ARG(m0),   XO_CL_ARG(off0), XO_CL_ARG(inc0),
                                   XO_CL_ARG(m1), XO_CL_ARG(off1), XO_CL_ARG(inc1)};
        return xo__cl_launch_1d_locked(d, d->kernel[XO_CL_K_COPY][dt], args, 7, op->n, last, call);
    }
    case XO_OP_FILL: {
        const xo__cl_arg args[] = {XO_CL_ARG(n), real_arg(dt, op->alpha, &s0), XO_CL_ARG(m0), XO_CL_ARG(off0),
                                   XO_CL_ARG(inc0)};
        return xo__cl_launch_1d_locked(d, d->kernel[XO_CL_K_FILL][dt], args, 5, op->n, last, call);
    }
    case XO_OP_AXPBY: {
        const xo__cl_arg args[] = {XO_CL_ARG(n),    real_arg(dt, op->alpha, &s0), XO_CL_ARG(m0),
                                   XO_CL_ARG(off0), XO_CL_ARG(inc0),             real_arg(dt, op->beta, &s1),
                                   XO_CL_ARG(m1),   XO_CL_ARG(off1),             XO_CL_ARG(inc1)};
        return xo__cl_launch_1d_locked(d, d->kernel[XO_CL_K_AXPBY][dt], args, 9, op->n, last, call);
    }
    case XO_OP_SCALE_BY: { /* s, then x with inc[0] */
        const xo__cl_arg args[] = {XO_CL_ARG(n),  XO_CL_ARG(m0),   XO_CL_ARG(off0),
                                   XO_CL_ARG(m1), XO_CL_ARG(off1), XO_CL_ARG(inc0)};
        return xo__cl_launch_1d_locked(d, d->kernel[XO_CL_K_SCALE_BY][dt], args, 6, op->n, last, call);
    }
    case XO_OP_BINARY_SCALAR: {
        cl_int bop = op->subop;
        const xo__cl_arg args[] = {XO_CL_ARG(bop), XO_CL_ARG(n),  XO_CL_ARG(m0),  XO_CL_ARG(off0),
                                   real_arg(dt, op->alpha, &s0), XO_CL_ARG(m1), XO_CL_ARG(off1)};
        return xo__cl_launch_1d_locked(d, d->kernel[XO_CL_K_BINARY_SCALAR][dt], args, 7, op->n, last, call);
    }
    case XO_OP_BIAS:
        return bias_act_locked(d, dt, XO_IDENTITY, XO_ROW_MAJOR, op->m, op->n, &a[0], op->ld[0], 1, 1.0, &a[1],
                               last, call);
    case XO_OP_SOFTMAX:
        return softmax_locked(d, op, last, call);
    case XO_OP_REDUCE_AXIS:
        return reduce_axis_locked(d, op, last, call);
    default:
        *call = "xo__cl_run_nn_locked";
        return CL_INVALID_OPERATION;
    }
}

xo_status xo__cl_run_gemm_bias_act(xo__cl_state *st, xo__cl_device *d, const xo_op_desc *op, uint64_t token)
{
    const xo_plugin_host *h = st->host;
    const int dbl = op->dtype == XO_F64;
    const int product = op->alpha != 0.0; /* alpha == 0: A and B are not read */
    const xo_operand *a = op->arg;
    if (dbl && !d->info.fp64)
        return h->set_error(XO_ERR_UNSUPPORTED, "opencl: %s has no double precision", d->info.name);
    if (!xo__cl_kernels_ready(st, d, op->kind, op->dtype))
        return h->set_error(XO_ERR_UNSUPPORTED, "opencl: %s: program 'elementwise' (%s) is not available",
                            d->info.name, dbl ? "double" : "float");
    if (product) { /* the first sgemm/dgemm here compiles: outside the CLBlast lock */
        xo_status w = xo__clblast_warm(st, d, XO_CLB_GEMM, op->dtype);
        if (w != XO_OK) return w;
    }
    cl_command_queue q = d->queue;
    cl_event first = NULL, prod = NULL, last = NULL;
    CLBlastStatusCode s = CLBlastSuccess;
    pthread_mutex_lock(&xo__clblast_lock); /* before d->lock, as everywhere */
    if (product) {
        if (clEnqueueMarkerWithWaitList(q, 0, NULL, &first) != CL_SUCCESS) /* times every kernel */
            first = NULL;
        s = xo__cl_gemm_enqueue(op, &q, &prod);
    }
    if (s != CLBlastSuccess) {
        pthread_mutex_unlock(&xo__clblast_lock);
        if (first) clReleaseEvent(first);
        if (prod) clReleaseEvent(prod);
        return xo__clblast_fail(h, dbl ? "CLBlastDgemm" : "CLBlastSgemm", s);
    }
    /* The product is queued; only an enqueue failure of the epilogue (out of resources)
     * could now leave C holding it without bias and activation. */
    const char *call = "clEnqueueNDRangeKernel";
    cl_int err = CL_SUCCESS;
    pthread_mutex_lock(&d->lock);
    if (product && op->subop == XO_IDENTITY && op->narg < 4) { /* a plain gemm: no second pass */
        last = prod;
        prod = NULL;
    } else {
        err = bias_act_locked(d, op->dtype, op->subop, op->layout, op->m, op->n, &a[2], op->ld[2],
                              product || op->beta != 0.0, product ? 1.0 : op->beta, op->narg > 3 ? &a[3] : NULL,
                              &last, &call);
    }
    if (err == CL_SUCCESS) {
        if (!first) { /* the marker failed or no product: time from the product, if any */
            first = prod;
            prod = NULL;
        }
        xo__cl_timing_push_locked(d, first, last, token);
        first = NULL;
    }
    pthread_mutex_unlock(&d->lock);
    pthread_mutex_unlock(&xo__clblast_lock);
    if (first) clReleaseEvent(first);
    if (prod) clReleaseEvent(prod);
    if (err != CL_SUCCESS) return xo__cl_fail(h, call, err);
    return XO_OK;
}
