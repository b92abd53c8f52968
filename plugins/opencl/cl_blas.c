/* cl_blas.c: BLAS ops through CLBlast's C API (and gemm_bias_act's product).
 *
 * Layout and transpose values are the CBLAS ones on both sides; offsets and increments
 * count elements, as in CLBlast. Every call enqueues on the device's in-order queue and
 * returns an event that goes to the timing ring; nothing waits here. dot writes its
 * result into the output buffer on the device. nrm2, and gemm/gemv/scal with alpha == 0,
 * run on our kernels instead (xo__cl_blas_on_kernels). */
#include "cl_internal.h"

_Static_assert((int)CLBlastLayoutRowMajor == (int)XO_ROW_MAJOR && (int)CLBlastLayoutColMajor == (int)XO_COL_MAJOR,
               "layout values differ");
_Static_assert((int)CLBlastTransposeNo == (int)XO_NO_TRANS && (int)CLBlastTransposeYes == (int)XO_TRANS,
               "transpose values differ");

static CLBlastLayout layout_of(xo_layout l) { return l == XO_COL_MAJOR ? CLBlastLayoutColMajor : CLBlastLayoutRowMajor; }
static CLBlastTranspose trans_of(xo_transpose t) { return t == XO_TRANS ? CLBlastTransposeYes : CLBlastTransposeNo; }

/* gemv. BLAS never reads y when beta == 0 (it may hold NaN), but CLBlast's gemv computes
 * beta * y. With beta == 0 the product goes into a zero-filled temporary, which is then
 * copied into y: a failure at any step leaves y untouched, as run() promises. */
static CLBlastStatusCode gemv_call(int dbl, const xo_op_desc *op, cl_mem y, size_t y_off, size_t incy,
                                   double beta, cl_command_queue *q, cl_event *ev)
{
    const xo_operand *a = op->arg;
    cl_mem ma = xo__cl_mem(a[0].mem), mx = xo__cl_mem(a[1].mem);
    CLBlastLayout l = layout_of(op->layout);
    CLBlastTranspose ta = trans_of(op->ta);
    if (dbl)
        return CLBlastDgemv(l, ta, op->m, op->n, op->alpha, ma, a[0].off, op->ld[0], mx, a[1].off, op->inc[0],
                            beta, y, y_off, incy, q, ev);
    return CLBlastSgemv(l, ta, op->m, op->n, (float)op->alpha, ma, a[0].off, op->ld[0], mx, a[1].off,
                        op->inc[0], (float)beta, y, y_off, incy, q, ev);
}

static xo_status run_gemv(xo__cl_state *st, xo__cl_device *d, const xo_op_desc *op, uint64_t token)
{
    const int dbl = op->dtype == XO_F64;
    const char *name = dbl ? "CLBlastDgemv" : "CLBlastSgemv";
    cl_mem my = xo__cl_mem(op->arg[2].mem);
    cl_command_queue q = d->queue;
    cl_event first = NULL, mid = NULL, last = NULL;
    CLBlastStatusCode s;

    if (op->beta != 0.0) {
        if (clEnqueueMarkerWithWaitList(q, 0, NULL, &first) != CL_SUCCESS) /* times every kernel */
            first = NULL;
        s = gemv_call(dbl, op, my, op->arg[2].off, op->inc[1], op->beta, &q, &last);
        if (s != CLBlastSuccess) {
            if (first) clReleaseEvent(first);
            if (last) clReleaseEvent(last);
            return xo__clblast_fail(st->host, name, s);
        }
    } else {
        const size_t esize = dbl ? sizeof(double) : sizeof(float);
        const size_t leny = op->ta == XO_NO_TRANS ? op->m : op->n;
        const double zero_d = 0.0;
        const float zero_f = 0.0f;
        cl_int err = CL_SUCCESS;
        cl_mem tmp = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, leny * esize, NULL, &err);
        if (err != CL_SUCCESS) return xo__cl_fail(st->host, "clCreateBuffer", err);
        err = clEnqueueFillBuffer(q, tmp, dbl ? (const void *)&zero_d : (const void *)&zero_f, esize, 0,
                                  leny * esize, 0, NULL, &first);
        if (err != CL_SUCCESS) {
            clReleaseMemObject(tmp);
            return xo__cl_fail(st->host, "clEnqueueFillBuffer", err);
        }
        s = gemv_call(dbl, op, tmp, 0, 1, 0.0, &q, &mid);
        if (s == CLBlastSuccess) {
            name = dbl ? "CLBlastDcopy" : "CLBlastScopy";
            s = dbl ? CLBlastDcopy(leny, tmp, 0, 1, my, op->arg[2].off, op->inc[1], &q, &last)
                    : CLBlastScopy(leny, tmp, 0, 1, my, op->arg[2].off, op->inc[1], &q, &last);
        }
        clReleaseMemObject(tmp); /* freed once the queued commands are done with it */
        if (mid) clReleaseEvent(mid);
        if (s != CLBlastSuccess) {
            clReleaseEvent(first);
            if (last) clReleaseEvent(last);
            return xo__clblast_fail(st->host, name, s);
        }
    }
    pthread_mutex_lock(&d->lock);
    xo__cl_timing_push_locked(d, first, last, token);
    pthread_mutex_unlock(&d->lock);
    return XO_OK;
}

CLBlastStatusCode xo__cl_gemm_enqueue(const xo_op_desc *op, cl_command_queue *q, cl_event *ev)
{
    const xo_operand *a = op->arg;
    CLBlastLayout l = layout_of(op->layout);
    CLBlastTranspose ta = trans_of(op->ta), tb = trans_of(op->tb);
    cl_mem ma = xo__cl_mem(a[0].mem), mb = xo__cl_mem(a[1].mem), mc = xo__cl_mem(a[2].mem);
    if (op->dtype == XO_F64)
        return CLBlastDgemm(l, ta, tb, op->m, op->n, op->k, op->alpha, ma, a[0].off, op->ld[0], mb, a[1].off,
                            op->ld[1], op->beta, mc, a[2].off, op->ld[2], q, ev);
    return CLBlastSgemm(l, ta, tb, op->m, op->n, op->k, (float)op->alpha, ma, a[0].off, op->ld[0], mb, a[1].off,
                        op->ld[1], (float)op->beta, mc, a[2].off, op->ld[2], q, ev);
}

static xo_status run_blas(xo__cl_state *st, xo__cl_device *d, const xo_op_desc *op, uint64_t token)
{
    const int dbl = op->dtype == XO_F64;
    const xo_operand *a = op->arg;
    cl_command_queue q = d->queue;
    cl_event ev = NULL;
    CLBlastStatusCode s;
    const char *call;

    if (dbl && !d->info.fp64)
        return st->host->set_error(XO_ERR_UNSUPPORTED, "opencl: %s has no double precision", d->info.name);
    if (op->kind == XO_OP_GEMV)
        return run_gemv(st, d, op, token);
    /* CLBlast may run several kernels (padding, transposes, the product) and returns
     * only the last one's event: a marker in front lets the timing span all of them. */
    cl_event start = NULL;
    if (clEnqueueMarkerWithWaitList(q, 0, NULL, &start) != CL_SUCCESS)
        start = NULL;

    switch (op->kind) {
    case XO_OP_GEMM: {
        CLBlastLayout l = layout_of(op->layout);
        CLBlastTranspose ta = trans_of(op->ta), tb = trans_of(op->tb);
        cl_mem ma = xo__cl_mem(a[0].mem), mb = xo__cl_mem(a[1].mem), mc = xo__cl_mem(a[2].mem);
        if (dbl) {
            call = "CLBlastDgemm";
            s = CLBlastDgemm(l, ta, tb, op->m, op->n, op->k, op->alpha, ma, a[0].off, op->ld[0], mb, a[1].off,
                             op->ld[1], op->beta, mc, a[2].off, op->ld[2], &q, &ev);
        } else {
            call = "CLBlastSgemm";
            s = CLBlastSgemm(l, ta, tb, op->m, op->n, op->k, (float)op->alpha, ma, a[0].off, op->ld[0], mb,
                             a[1].off, op->ld[1], (float)op->beta, mc, a[2].off, op->ld[2], &q, &ev);
        }
        break;
    }
    case XO_OP_AXPY: {
        cl_mem mx = xo__cl_mem(a[0].mem), my = xo__cl_mem(a[1].mem);
        if (dbl) {
            call = "CLBlastDaxpy";
            s = CLBlastDaxpy(op->n, op->alpha, mx, a[0].off, op->inc[0], my, a[1].off, op->inc[1], &q, &ev);
        } else {
            call = "CLBlastSaxpy";
            s = CLBlastSaxpy(op->n, (float)op->alpha, mx, a[0].off, op->inc[0], my, a[1].off, op->inc[1], &q, &ev);
        }
        break;
    }
    case XO_OP_SCAL: {
        cl_mem mx = xo__cl_mem(a[0].mem);
        if (dbl) {
            call = "CLBlastDscal";
            s = CLBlastDscal(op->n, op->alpha, mx, a[0].off, op->inc[0], &q, &ev);
        } else {
            call = "CLBlastSscal";
            s = CLBlastSscal(op->n, (float)op->alpha, mx, a[0].off, op->inc[0], &q, &ev);
        }
        break;
    }
    case XO_OP_DOT: {
        cl_mem mx = xo__cl_mem(a[0].mem), my = xo__cl_mem(a[1].mem), mo = xo__cl_mem(a[2].mem);
        if (dbl) {
            call = "CLBlastDdot";
            s = CLBlastDdot(op->n, mo, a[2].off, mx, a[0].off, op->inc[0], my, a[1].off, op->inc[1], &q, &ev);
        } else {
            call = "CLBlastSdot";
            s = CLBlastSdot(op->n, mo, a[2].off, mx, a[0].off, op->inc[0], my, a[1].off, op->inc[1], &q, &ev);
        }
        break;
    }
    case XO_OP_GER: { /* the core never passes alpha == 0 (A untouched, x and y unread) */
        cl_mem mx = xo__cl_mem(a[0].mem), my = xo__cl_mem(a[1].mem), ma = xo__cl_mem(a[2].mem);
        CLBlastLayout l = layout_of(op->layout);
        if (dbl) {
            call = "CLBlastDger";
            s = CLBlastDger(l, op->m, op->n, op->alpha, mx, a[0].off, op->inc[0], my, a[1].off, op->inc[1], ma,
                            a[2].off, op->ld[2], &q, &ev);
        } else {
            call = "CLBlastSger";
            s = CLBlastSger(l, op->m, op->n, (float)op->alpha, mx, a[0].off, op->inc[0], my, a[1].off, op->inc[1],
                            ma, a[2].off, op->ld[2], &q, &ev);
        }
        break;
    }
    default:
        return st->host->set_error(XO_ERR_UNSUPPORTED, "opencl: op kind %d is not a BLAS op", (int)op->kind);
    }
    if (s != CLBlastSuccess) {
        if (ev) clReleaseEvent(ev);
        if (start) clReleaseEvent(start);
        return xo__clblast_fail(st->host, call, s);
    }
    pthread_mutex_lock(&d->lock);
    xo__cl_timing_push_locked(d, start, ev, token);
    pthread_mutex_unlock(&d->lock);
    return XO_OK;
}

/* CLBlast 1.5.3 (Debian 12) keeps process-wide caches that are not safe to use from
 * several threads at once (CLBlast issue 486): every call goes through one lock. A
 * routine's first call on a device, which compiles, is made beforehand outside it
 * (cl_warm.c), so the calls under the lock only enqueue work: microseconds. */
pthread_mutex_t xo__clblast_lock = PTHREAD_MUTEX_INITIALIZER;

static xo_status warm_for(xo__cl_state *st, xo__cl_device *d, const xo_op_desc *op)
{
    static const xo__clblast_routine of_kind[XO_OP_KIND_COUNT] = {
        [XO_OP_GEMM] = XO_CLB_GEMM, [XO_OP_GEMV] = XO_CLB_GEMV, [XO_OP_AXPY] = XO_CLB_AXPY,
        [XO_OP_SCAL] = XO_CLB_SCAL, [XO_OP_DOT] = XO_CLB_DOT,   [XO_OP_GER] = XO_CLB_GER,
    };
    if (op->dtype == XO_F64 && !d->info.fp64) return XO_OK; /* run_blas refuses it */
    xo_status s = xo__clblast_warm(st, d, of_kind[op->kind], op->dtype);
    if (s != XO_OK) return s;
    if (op->kind == XO_OP_GEMV && op->beta == 0.0) /* gemv into a temporary, then copy */
        return xo__clblast_warm(st, d, XO_CLB_COPY, op->dtype);
    return XO_OK;
}

xo_status xo__cl_run_blas(xo__cl_state *st, xo__cl_device *d, const xo_op_desc *op, uint64_t token)
{
    if (op->kind != XO_OP_GEMM && op->kind != XO_OP_GEMV && op->kind != XO_OP_AXPY && op->kind != XO_OP_SCAL &&
        op->kind != XO_OP_DOT && op->kind != XO_OP_GER)
        return st->host->set_error(XO_ERR_UNSUPPORTED, "opencl: op kind %d is not a BLAS op", (int)op->kind);
    xo_status w = warm_for(st, d, op);
    if (w != XO_OK) return w;
    pthread_mutex_lock(&xo__clblast_lock);
    xo_status r = run_blas(st, d, op, token);
    pthread_mutex_unlock(&xo__clblast_lock);
    return r;
}
