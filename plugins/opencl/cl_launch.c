/* cl_launch.c: the launch of each op that runs on our kernels (the op table in cl_ops.c
 * names them), and gemm_bias_act: CLBlast's gemm, then one pass over C for bias +
 * activation (the kernel that also runs bias).
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

/* gemm, gemv or scal with alpha == 0: C = beta*C, y = beta*y, or x = 0 (xo_scale). */
cl_int xo__cl_launch_scale(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *ev, const char **call)
{
    (void)first;
    const int dt = op->dtype;
    const xo_scale_view v = xo_op_scale_view(op);
    const cl_double fd = v.factor;
    const cl_float ff = (cl_float)v.factor;
    cl_mem a = xo__cl_mem(op->arg[v.arg].mem);
    cl_ulong rows = v.rows, cols = v.cols, ld = v.ld, off = op->arg[v.arg].off;
    const xo__cl_arg args[] = {XO_CL_ARG(rows), XO_CL_ARG(cols), XO_CL_ARG(a),
                               XO_CL_ARG(off),  XO_CL_ARG(ld),   dt == XO_F64 ? XO_CL_ARG(fd) : XO_CL_ARG(ff)};
    return xo__cl_launch_2d_locked(d, d->kernel[XO_CL_K_SCALE][dt], args, 6, rows, cols, ev, call);
}

/* unary and binary */
cl_int xo__cl_launch_elementwise(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *ev,
                                 const char **call)
{
    (void)first;
    const int dt = op->dtype;
    cl_ulong n = op->n;
    cl_int subop = op->subop;
    if (op->kind == XO_OP_UNARY) {
        cl_mem x = xo__cl_mem(op->arg[0].mem), y = xo__cl_mem(op->arg[1].mem);
        cl_ulong x_off = op->arg[0].off, y_off = op->arg[1].off;
        const xo__cl_arg args[] = {XO_CL_ARG(subop), XO_CL_ARG(n), XO_CL_ARG(x), XO_CL_ARG(x_off), XO_CL_ARG(y),
                                   XO_CL_ARG(y_off)};
        return xo__cl_launch_1d_locked(d, d->kernel[XO_CL_K_UNARY][dt], args, 6, op->n, ev, call);
    }
    cl_mem a = xo__cl_mem(op->arg[0].mem), b = xo__cl_mem(op->arg[1].mem), c = xo__cl_mem(op->arg[2].mem);
    cl_ulong a_off = op->arg[0].off, b_off = op->arg[1].off, c_off = op->arg[2].off;
    const xo__cl_arg args[] = {XO_CL_ARG(subop), XO_CL_ARG(n), XO_CL_ARG(a), XO_CL_ARG(a_off),
                               XO_CL_ARG(b),     XO_CL_ARG(b_off), XO_CL_ARG(c), XO_CL_ARG(c_off)};
    return xo__cl_launch_1d_locked(d, d->kernel[XO_CL_K_BINARY][dt], args, 8, op->n, ev, call);
}

/* Two passes: work-group trees into d->partials, then one work-group over the partials
 * (reduce: one value per group; nrm2: three). Both are enqueued under the lock, so
 * concurrent reductions never share partials. */
cl_int xo__cl_launch_reduce(xo__cl_device *d, const xo_op_desc *op, cl_event *ev1, cl_event *ev2,
                            const char **call)
{
    const int dt = op->dtype;
    const size_t esize = dt == XO_F64 ? sizeof(double) : sizeof(float);
    const int nrm2 = op->kind == XO_OP_NRM2;
    cl_kernel k1 = d->kernel[nrm2 ? XO_CL_K_NRM2_PARTIAL : XO_CL_K_REDUCE_PARTIAL][dt],
              k2 = d->kernel[nrm2 ? XO_CL_K_NRM2_FINAL : XO_CL_K_REDUCE_FINAL][dt];
    cl_int err = CL_SUCCESS;
    if (!d->partials) {
        d->partials = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, 3 * XO_CL_REDUCE_LOCAL * sizeof(double), NULL, &err);
        if (err != CL_SUCCESS) {
            d->partials = NULL;
            *call = "clCreateBuffer";
            return err;
        }
    }
    size_t w1 = xo__cl_kernel_wg(d, k1), w2 = xo__cl_kernel_wg(d, k2);
    size_t lsz = xo__cl_pow2_floor(w1 < w2 ? w1 : w2);
    if (lsz > XO_CL_REDUCE_LOCAL) lsz = XO_CL_REDUCE_LOCAL;
    size_t groups = (op->n + lsz - 1) / lsz;
    if (groups > lsz) groups = lsz; /* pass 2 folds at most lsz partials with one group */
    size_t global = groups * lsz;

    cl_int subop = op->subop;
    cl_ulong n = op->n, x_off = op->arg[0].off, out_off = op->arg[1].off, inc = op->inc[0];
    cl_uint count = (cl_uint)groups;
    cl_mem x = xo__cl_mem(op->arg[0].mem), out = xo__cl_mem(op->arg[1].mem), part = d->partials;
    const xo__cl_arg scratch = {lsz * esize, NULL};
    if (nrm2) {
        const xo__cl_arg a1[] = {XO_CL_ARG(n), XO_CL_ARG(x), XO_CL_ARG(x_off), XO_CL_ARG(inc), XO_CL_ARG(part), scratch};
        err = xo__cl_launch_locked(d, k1, a1, 6, 1, &global, &lsz, ev1, call);
    } else {
        const xo__cl_arg a1[] = {XO_CL_ARG(subop), XO_CL_ARG(n), XO_CL_ARG(x), XO_CL_ARG(x_off), XO_CL_ARG(part),
                                 scratch};
        err = xo__cl_launch_locked(d, k1, a1, 6, 1, &global, &lsz, ev1, call);
    }
    if (err != CL_SUCCESS) return err;
    /* Pass 2: the same arguments, less reduce's leading sub-op for nrm2. */
    const xo__cl_arg a2[] = {XO_CL_ARG(subop), XO_CL_ARG(count), XO_CL_ARG(part), XO_CL_ARG(out), XO_CL_ARG(out_off),
                             scratch};
    err = xo__cl_launch_locked(d, k2, a2 + nrm2, 6 - nrm2, 1, &lsz, &lsz, ev2, call);
    if (err != CL_SUCCESS) {
        /* pass 1 only wrote our scratch: out is untouched */
        clReleaseEvent(*ev1);
        *ev1 = NULL;
    }
    return err;
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

/* Kernel `id` in the op's precision, sized one work-group per row (grid-strided over at
 * most 65536 groups), as wide as the row up to 256 items (a power of two). */
static cl_kernel row_groups(xo__cl_device *d, const xo_op_desc *op, xo__cl_kernel_id id, size_t *lsz, size_t *global)
{
    cl_kernel k = d->kernel[id][op->dtype];
    *lsz = pow2_fit(op->n, xo__cl_pow2_floor(min_size(xo__cl_kernel_wg(d, k), 256)));
    *global = min_size(op->m, 65536) * *lsz;
    return k;
}

/* One work-group per row (grid-strided), as wide as the row up to 256 items. */
cl_int xo__cl_launch_softmax(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *ev, const char **call)
{
    (void)first;
    const int dt = op->dtype;
    const size_t esize = dt == XO_F64 ? sizeof(double) : sizeof(float);
    size_t lsz, global;
    cl_kernel k = row_groups(d, op, XO_CL_K_SOFTMAX, &lsz, &global);
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
cl_int xo__cl_launch_reduce_axis(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *ev,
                                 const char **call)
{
    (void)first;
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

/* The operands of the one-kernel vector ops: n, the first two operands and increments. */
#define VEC_OPERANDS                                                                               \
    const xo_dtype dt = op->dtype;                                                                 \
    const xo_operand *a = op->arg;                                                                 \
    cl_ulong n = op->n, off0 = a[0].off, off1 = op->narg > 1 ? a[1].off : 0;                       \
    cl_ulong inc0 = op->inc[0], inc1 = op->inc[1];                                                 \
    cl_mem m0 = xo__cl_mem(a[0].mem), m1 = op->narg > 1 ? xo__cl_mem(a[1].mem) : NULL;             \
    (void)first, (void)off1, (void)inc0, (void)inc1, (void)m1

cl_int xo__cl_launch_copy(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last, const char **call)
{
    VEC_OPERANDS;
    const xo__cl_arg args[] = {XO_CL_ARG(n),  XO_CL_ARG(m0),   XO_CL_ARG(off0), XO_CL_ARG(inc0),
                               XO_CL_ARG(m1), XO_CL_ARG(off1), XO_CL_ARG(inc1)};
    return xo__cl_launch_1d_locked(d, d->kernel[XO_CL_K_COPY][dt], args, 7, op->n, last, call);
}

cl_int xo__cl_launch_fill(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last, const char **call)
{
    VEC_OPERANDS;
    scalar s0;
    const xo__cl_arg args[] = {XO_CL_ARG(n), real_arg(dt, op->alpha, &s0), XO_CL_ARG(m0), XO_CL_ARG(off0),
                               XO_CL_ARG(inc0)};
    return xo__cl_launch_1d_locked(d, d->kernel[XO_CL_K_FILL][dt], args, 5, op->n, last, call);
}

cl_int xo__cl_launch_axpby(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last, const char **call)
{
    VEC_OPERANDS;
    scalar s0, s1;
    const xo__cl_arg args[] = {XO_CL_ARG(n),    real_arg(dt, op->alpha, &s0), XO_CL_ARG(m0),
                               XO_CL_ARG(off0), XO_CL_ARG(inc0),             real_arg(dt, op->beta, &s1),
                               XO_CL_ARG(m1),   XO_CL_ARG(off1),             XO_CL_ARG(inc1)};
    return xo__cl_launch_1d_locked(d, d->kernel[XO_CL_K_AXPBY][dt], args, 9, op->n, last, call);
}

/* s, then x with inc[0] */
cl_int xo__cl_launch_scale_by(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last,
                              const char **call)
{
    VEC_OPERANDS;
    const xo__cl_arg args[] = {XO_CL_ARG(n),  XO_CL_ARG(m0),   XO_CL_ARG(off0),
                               XO_CL_ARG(m1), XO_CL_ARG(off1), XO_CL_ARG(inc0)};
    return xo__cl_launch_1d_locked(d, d->kernel[XO_CL_K_SCALE_BY][dt], args, 6, op->n, last, call);
}

cl_int xo__cl_launch_binary_scalar(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last,
                                   const char **call)
{
    VEC_OPERANDS;
    scalar s0;
    cl_int bop = op->subop;
    const xo__cl_arg args[] = {XO_CL_ARG(bop), XO_CL_ARG(n),  XO_CL_ARG(m0),  XO_CL_ARG(off0),
                               real_arg(dt, op->alpha, &s0), XO_CL_ARG(m1), XO_CL_ARG(off1)};
    return xo__cl_launch_1d_locked(d, d->kernel[XO_CL_K_BINARY_SCALAR][dt], args, 7, op->n, last, call);
}

cl_int xo__cl_launch_bias(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *last, const char **call)
{
    (void)first;
    return bias_act_locked(d, op->dtype, XO_IDENTITY, XO_ROW_MAJOR, op->m, op->n, &op->arg[0], op->ld[0], 1, 1.0,
                           &op->arg[1], last, call);
}

/* One work-group per row (grid-strided), as wide as the row up to 256 items; labels are
 * int32 (their offset counts int32s), grad absent when narg is 3. */
cl_int xo__cl_launch_softmax_xent(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *ev,
                                  const char **call)
{
    (void)first;
    const int dt = op->dtype;
    const size_t esize = dt == XO_F64 ? sizeof(double) : sizeof(float);
    size_t lsz, global;
    cl_kernel k = row_groups(d, op, XO_CL_K_SOFTMAX_XENT, &lsz, &global);
    const xo_operand *a = op->arg;
    const int grad = op->narg > 3;
    cl_ulong rows = op->m, cols = op->n, ldx = op->ld[0], ldg = grad ? op->ld[1] : 0;
    cl_ulong x_off = a[0].off, l_off = a[1].off, loss_off = a[2].off, g_off = grad ? a[3].off : 0;
    cl_int has_grad = grad;
    cl_mem x = xo__cl_mem(a[0].mem), labels = xo__cl_mem(a[1].mem), loss = xo__cl_mem(a[2].mem);
    cl_mem g = grad ? xo__cl_mem(a[3].mem) : NULL; /* NULL: a null pointer */
    scalar sc;
    const xo__cl_arg args[] = {XO_CL_ARG(rows),  XO_CL_ARG(cols),     XO_CL_ARG(x),       XO_CL_ARG(x_off),
                               XO_CL_ARG(ldx),   XO_CL_ARG(labels),   XO_CL_ARG(l_off),   real_arg(dt, op->alpha, &sc),
                               XO_CL_ARG(loss),  XO_CL_ARG(loss_off), XO_CL_ARG(has_grad), XO_CL_ARG(g),
                               XO_CL_ARG(g_off), XO_CL_ARG(ldg),      {lsz * esize, NULL}};
    return xo__cl_launch_locked(d, k, args, 15, 1, &global, &lsz, ev, call);
}

/* One work-group per row (grid-strided), as wide as the row up to 256 items; the
 * indices are int32 (their offset counts int32s), cols fits them (the core checks). */
cl_int xo__cl_launch_argmax(xo__cl_device *d, const xo_op_desc *op, cl_event *first, cl_event *ev, const char **call)
{
    (void)first;
    const int dt = op->dtype;
    const size_t esize = dt == XO_F64 ? sizeof(double) : sizeof(float);
    size_t lsz, global;
    cl_kernel k = row_groups(d, op, XO_CL_K_ARGMAX, &lsz, &global);
    cl_ulong rows = op->m, ldx = op->ld[0], x_off = op->arg[0].off, i_off = op->arg[1].off;
    cl_uint cols = (cl_uint)op->n;
    cl_mem x = xo__cl_mem(op->arg[0].mem), idx = xo__cl_mem(op->arg[1].mem);
    const xo__cl_arg args[] = {XO_CL_ARG(rows), XO_CL_ARG(cols),  XO_CL_ARG(x),
                               XO_CL_ARG(x_off), XO_CL_ARG(ldx),  XO_CL_ARG(idx),
                               XO_CL_ARG(i_off), {lsz * esize, NULL}, {lsz * sizeof(cl_uint), NULL}};
    return xo__cl_launch_locked(d, k, args, 9, 1, &global, &lsz, ev, call);
}

xo_status xo__cl_run_gemm_bias_act(xo__cl_state *st, xo__cl_device *d, const xo_op_desc *op, uint64_t token,
                                   xo__cl_launch_fn launch, xo__cl_prog_id prog)
{
    (void)launch;
    const xo_plugin_host *h = st->host;
    const int dbl = op->dtype == XO_F64;
    const int product = op->alpha != 0.0; /* alpha == 0: A and B are not read */
    const xo_operand *a = op->arg;
    if (dbl && !d->info.fp64)
        return h->set_error(XO_ERR_UNSUPPORTED, "opencl: %s has no double precision", d->info.name);
    if (!xo__cl_program_ready(st, d, prog, op->dtype))
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
