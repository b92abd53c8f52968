/* run(): one op on operands that are current on the device, enqueued on its stream.
 *
 * BLAS kinds go to cuBLAS. cuBLAS is column-major; a row-major op is the same op on the
 * transposed matrices (a row-major m x n matrix with leading dimension ld is a
 * column-major n x m matrix with the same ld):
 *   gemm  C = op(A) op(B)  <=>  C^T = op(B)^T op(A)^T: swap A/B and m/n, keep ta/tb.
 *   gemv  y = op(A) x: A is seen as A^T (n x m), so the transpose flag flips.
 * alpha/beta are host scalars (pointer mode HOST); dot writes its result into device
 * memory (pointer mode DEVICE), so nothing waits for the device.
 *
 * Other kinds launch our kernels (kernels/xo_cuda_kernels.cu), and so do nrm2 and
 * gemm/gemv/scal with alpha == 0 (xo__cuda_blas_on_kernels). Each op is bracketed by a
 * pair of events in a bounded ring; drain_timings harvests the completed ones. */
#include "cuda_internal.h"

#include <limits.h>

#define DEVPTR XO_CUDA_DEVPTR

/* ---- per-op timing ring --------------------------------------------------------- */

/* Record the start event of a new ring entry; NULL when timings are unavailable. The
 * entry only joins the ring (timing_end) once its end event is recorded too. When the
 * ring is full (that many ops in flight) the oldest op is waited for and its time is
 * carried to the next drain under XO_NO_TOKEN, so busy time stays exact. */
static xo__cuda_timing *timing_begin(xo__cuda_device *d, uint64_t token)
{
    if (d->timing_broken) return NULL;
    if (d->timing_count == XO_CUDA_TIMING_SLOTS) {
        xo__cuda_timing *o = &d->timing[d->timing_head];
        float ms = 0.0f;
        if (xo__cu.cuEventSynchronize(o->end) == CUDA_SUCCESS &&
            xo__cu.cuEventElapsedTime_v2(&ms, o->start, o->end) == CUDA_SUCCESS)
            d->overflow_us += (double)ms * 1000.0;
        d->timing_head = (d->timing_head + 1) % XO_CUDA_TIMING_SLOTS;
        d->timing_count--;
    }
    xo__cuda_timing *t = &d->timing[(d->timing_head + d->timing_count) % XO_CUDA_TIMING_SLOTS];
    if (!t->start) {
        if (xo__cu.cuEventCreate(&t->start, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
            t->start = NULL;
            d->timing_broken = 1;
            return NULL;
        }
        if (xo__cu.cuEventCreate(&t->end, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
            (void)xo__cu.cuEventDestroy_v2(t->start);
            t->start = t->end = NULL;
            d->timing_broken = 1;
            return NULL;
        }
    }
    if (xo__cu.cuEventRecord(t->start, d->stream) != CUDA_SUCCESS) return NULL;
    t->token = token;
    return t;
}

static void timing_end(xo__cuda_device *d, xo__cuda_timing *t)
{
    if (t && xo__cu.cuEventRecord(t->end, d->stream) == CUDA_SUCCESS) d->timing_count++;
}

void xo__cuda_timing_release(xo__cuda_device *d)
{
    for (int i = 0; i < XO_CUDA_TIMING_SLOTS; i++) {
        if (d->timing[i].start) (void)xo__cu.cuEventDestroy_v2(d->timing[i].start);
        if (d->timing[i].end) (void)xo__cu.cuEventDestroy_v2(d->timing[i].end);
        d->timing[i].start = d->timing[i].end = NULL;
    }
    d->timing_head = d->timing_count = 0;
}

int xo__cuda_drain_timings(void *state, int dev, xo_op_timing *out, int max)
{
    xo__cuda_state *st = state;
    xo__cuda_device *d = xo__cuda_device_at(st, dev, "cuda drain_timings");
    if (!d || max <= 0 || xo__cuda_enter(st, d) != XO_OK) return 0;
    int n = 0;
    if (d->overflow_us > 0) { /* ops whose timing left the full ring early */
        out[n].token = XO_NO_TOKEN;
        out[n].us = d->overflow_us;
        d->overflow_us = 0;
        n++;
    }
    while (d->timing_count > 0 && n < max) {
        xo__cuda_timing *t = &d->timing[d->timing_head];
        CUresult r = xo__cu.cuEventQuery(t->end);
        if (r == CUDA_ERROR_NOT_READY) break; /* in stream order: later ones are not done */
        float ms = 0.0f;
        if (r == CUDA_SUCCESS && xo__cu.cuEventElapsedTime_v2(&ms, t->start, t->end) == CUDA_SUCCESS) {
            out[n].token = t->token;
            out[n].us = (double)ms * 1000.0;
            n++;
        }
        d->timing_head = (d->timing_head + 1) % XO_CUDA_TIMING_SLOTS;
        d->timing_count--;
    }
    xo__cuda_leave(d);
    return n;
}

/* ---- cuBLAS ----------------------------------------------------------------------- */

static int fits_int(size_t v)
{
    return v <= (size_t)INT_MAX;
}

static cublasOperation_t blas_op(xo_transpose t)
{
    return t == XO_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N;
}

xo_status xo__cuda_run_blas(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const int f64 = op->dtype == XO_F64;
    const size_t es = f64 ? sizeof(double) : sizeof(float);
    const float af = (float)op->alpha, bf = (float)op->beta;
    const double ad = op->alpha, bd = op->beta;
    const cublasHandle_t h = d->blas;

    if (!fits_int(op->m) || !fits_int(op->n) || !fits_int(op->k) || !fits_int(op->ld[0]) ||
        !fits_int(op->ld[1]) || !fits_int(op->ld[2]) || !fits_int(op->inc[0]) || !fits_int(op->inc[1]))
        return st->host->set_error(XO_ERR_UNSUPPORTED, "cuda run: a dimension exceeds cuBLAS's int range");
    const int m = (int)op->m, n = (int)op->n, k = (int)op->k;
    const int ld0 = (int)op->ld[0], ld1 = (int)op->ld[1], ld2 = (int)op->ld[2];
    const int inc0 = (int)op->inc[0], inc1 = (int)op->inc[1];

    XO_CUDA_TRY(XO_CUBLAS(st, cublasSetPointerMode_v2,
                          (h, op->kind == XO_OP_DOT ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST)));

    switch (op->kind) {
    case XO_OP_GEMM: {
        const CUdeviceptr a = DEVPTR(op, 0, es), b = DEVPTR(op, 1, es), c = DEVPTR(op, 2, es);
        const cublasOperation_t ta = blas_op(op->ta), tb = blas_op(op->tb);
        if (op->layout == XO_ROW_MAJOR) {
            /* C^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m), all column-major. */
            if (f64)
                return XO_CUBLAS(st, cublasDgemm_v2, (h, tb, ta, n, m, k, &ad, (const double *)(uintptr_t)b, ld1,
                                                      (const double *)(uintptr_t)a, ld0, &bd, (double *)(uintptr_t)c, ld2));
            return XO_CUBLAS(st, cublasSgemm_v2, (h, tb, ta, n, m, k, &af, (const float *)(uintptr_t)b, ld1,
                                                  (const float *)(uintptr_t)a, ld0, &bf, (float *)(uintptr_t)c, ld2));
        }
        if (f64)
            return XO_CUBLAS(st, cublasDgemm_v2, (h, ta, tb, m, n, k, &ad, (const double *)(uintptr_t)a, ld0,
                                                  (const double *)(uintptr_t)b, ld1, &bd, (double *)(uintptr_t)c, ld2));
        return XO_CUBLAS(st, cublasSgemm_v2, (h, ta, tb, m, n, k, &af, (const float *)(uintptr_t)a, ld0,
                                              (const float *)(uintptr_t)b, ld1, &bf, (float *)(uintptr_t)c, ld2));
    }
    case XO_OP_GEMV: {
        CUdeviceptr a = DEVPTR(op, 0, es), x = DEVPTR(op, 1, es), y = DEVPTR(op, 2, es);
        cublasOperation_t t = blas_op(op->ta);
        int rows = m, cols = n;
        if (op->layout == XO_ROW_MAJOR) {
            /* Row-major m x n A is column-major n x m A^T: flip the transpose. */
            t = t == CUBLAS_OP_N ? CUBLAS_OP_T : CUBLAS_OP_N;
            rows = n;
            cols = m;
        }
        if (f64)
            return XO_CUBLAS(st, cublasDgemv_v2, (h, t, rows, cols, &ad, (const double *)(uintptr_t)a, ld0,
                                                  (const double *)(uintptr_t)x, inc0, &bd, (double *)(uintptr_t)y, inc1));
        return XO_CUBLAS(st, cublasSgemv_v2, (h, t, rows, cols, &af, (const float *)(uintptr_t)a, ld0,
                                              (const float *)(uintptr_t)x, inc0, &bf, (float *)(uintptr_t)y, inc1));
    }
    case XO_OP_AXPY: {
        CUdeviceptr x = DEVPTR(op, 0, es), y = DEVPTR(op, 1, es);
        if (f64)
            return XO_CUBLAS(st, cublasDaxpy_v2, (h, n, &ad, (const double *)(uintptr_t)x, inc0, (double *)(uintptr_t)y, inc1));
        return XO_CUBLAS(st, cublasSaxpy_v2, (h, n, &af, (const float *)(uintptr_t)x, inc0, (float *)(uintptr_t)y, inc1));
    }
    case XO_OP_SCAL: {
        CUdeviceptr x = DEVPTR(op, 0, es);
        if (f64) return XO_CUBLAS(st, cublasDscal_v2, (h, n, &ad, (double *)(uintptr_t)x, inc0));
        return XO_CUBLAS(st, cublasSscal_v2, (h, n, &af, (float *)(uintptr_t)x, inc0));
    }
    case XO_OP_DOT: {
        CUdeviceptr x = DEVPTR(op, 0, es), y = DEVPTR(op, 1, es), r = DEVPTR(op, 2, es);
        if (f64)
            return XO_CUBLAS(st, cublasDdot_v2, (h, n, (const double *)(uintptr_t)x, inc0, (const double *)(uintptr_t)y,
                                                 inc1, (double *)(uintptr_t)r));
        return XO_CUBLAS(st, cublasSdot_v2, (h, n, (const float *)(uintptr_t)x, inc0, (const float *)(uintptr_t)y, inc1,
                                             (float *)(uintptr_t)r));
    }
    default:
        return st->host->set_error(XO_ERR_UNSUPPORTED, "cuda run: op kind %d is not a BLAS op", (int)op->kind);
    }
}

/* ---- our kernels ------------------------------------------------------------------ */

unsigned xo__cuda_grid_for(size_t work, unsigned cap)
{
    size_t blocks = (work + XO_CUDA_BLOCK - 1) / XO_CUDA_BLOCK;
    if (blocks < 1) blocks = 1;
    return blocks > cap ? cap : (unsigned)blocks;
}

xo_status xo__cuda_launch(xo__cuda_state *st, xo__cuda_device *d, xo__cuda_kernel k, int f64, unsigned gx,
                          unsigned gy, void **params)
{
    CUresult r = xo__cu.cuLaunchKernel(d->fn[k][f64], gx, gy, 1, XO_CUDA_BLOCK, 1, 1, 0, d->stream, params, NULL);
    if (r == CUDA_SUCCESS) return XO_OK;
    return st->host->set_error(r == CUDA_ERROR_OUT_OF_MEMORY ? XO_ERR_OUT_OF_MEMORY : XO_ERR_DEVICE,
                               "cuLaunchKernel(%s): %s (%d)", xo__cuda_kernel_names[k][f64],
                               xo__cuda_result_name(r), r);
}

/* gemm, gemv or scal with alpha == 0: C = beta*C, y = beta*y or x = 0 (xo_scale). */
static xo_status run_scale(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const int f64 = op->dtype == XO_F64;
    const xo_scale_view v = xo_op_scale_view(op);
    unsigned long long rows = v.rows, cols = v.cols, ld = v.ld;
    double fd = v.factor;
    float ff = (float)v.factor;
    CUdeviceptr a = DEVPTR(op, v.arg, f64 ? sizeof(double) : sizeof(float));
    void *params[] = {&a, &rows, &cols, &ld, f64 ? (void *)&fd : (void *)&ff};
    unsigned gy = v.rows > XO_CUDA_MAX_GRID ? XO_CUDA_MAX_GRID : (unsigned)v.rows;
    return xo__cuda_launch(st, d, XO_CUDA_K_SCALE, f64, xo__cuda_grid_for(v.cols, XO_CUDA_MAX_GRID), gy, params);
}

static xo_status run_kernel(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const int f64 = op->dtype == XO_F64;
    const size_t es = f64 ? sizeof(double) : sizeof(float);
    unsigned long long n = op->n;
    int subop = op->subop;

    switch (op->kind) {
    case XO_OP_UNARY: {
        CUdeviceptr x = DEVPTR(op, 0, es), y = DEVPTR(op, 1, es);
        void *params[] = {&x, &y, &n, &subop};
        return xo__cuda_launch(st, d, XO_CUDA_K_UNARY, f64, xo__cuda_grid_for(op->n, XO_CUDA_MAX_GRID), 1, params);
    }
    case XO_OP_BINARY: {
        CUdeviceptr a = DEVPTR(op, 0, es), b = DEVPTR(op, 1, es), c = DEVPTR(op, 2, es);
        void *params[] = {&a, &b, &c, &n, &subop};
        return xo__cuda_launch(st, d, XO_CUDA_K_BINARY, f64, xo__cuda_grid_for(op->n, XO_CUDA_MAX_GRID), 1, params);
    }
    case XO_OP_BIAS: {
        CUdeviceptr a = DEVPTR(op, 0, es), bias = DEVPTR(op, 1, es);
        unsigned long long rows = op->m, cols = op->n, lda = op->ld[0];
        void *params[] = {&a, &bias, &rows, &cols, &lda};
        unsigned gy = op->m > XO_CUDA_MAX_GRID ? XO_CUDA_MAX_GRID : (unsigned)op->m;
        return xo__cuda_launch(st, d, XO_CUDA_K_BIAS, f64, xo__cuda_grid_for(op->n, XO_CUDA_MAX_GRID), gy ? gy : 1,
                               params);
    }
    case XO_OP_GEMM: /* alpha == 0: C = beta*C */
    case XO_OP_GEMV: /* alpha == 0: y = beta*y */
    case XO_OP_SCAL: /* alpha == 0: x = 0 */
        return run_scale(st, d, op);
    case XO_OP_NRM2: {
        CUdeviceptr x = DEVPTR(op, 0, es), out = DEVPTR(op, 1, es);
        unsigned long long inc = op->inc[0];
        int stage = 0;
        unsigned blocks = xo__cuda_grid_for(op->n, XO_CUDA_REDUCE_BLOCKS);
        if (blocks == 1) {
            void *params[] = {&x, &n, &inc, &out, &stage};
            return xo__cuda_launch(st, d, XO_CUDA_K_NRM2, f64, 1, 1, params);
        }
        /* Pass 1: three partial sums per block into scratch; pass 2: one block folds them. */
        CUdeviceptr scratch = d->scratch;
        void *p1[] = {&x, &n, &inc, &scratch, &stage};
        XO_CUDA_TRY(xo__cuda_launch(st, d, XO_CUDA_K_NRM2, f64, blocks, 1, p1));
        unsigned long long nparts = blocks;
        stage = 1;
        void *p2[] = {&scratch, &nparts, &inc, &out, &stage};
        return xo__cuda_launch(st, d, XO_CUDA_K_NRM2, f64, 1, 1, p2);
    }
    case XO_OP_REDUCE: {
        CUdeviceptr x = DEVPTR(op, 0, es), out = DEVPTR(op, 1, es);
        unsigned blocks = xo__cuda_grid_for(op->n, XO_CUDA_REDUCE_BLOCKS);
        if (blocks == 1) {
            void *params[] = {&x, &n, &subop, &out};
            return xo__cuda_launch(st, d, XO_CUDA_K_REDUCE, f64, 1, 1, params);
        }
        /* Pass 1: one partial per block into scratch; pass 2: one block folds them. */
        CUdeviceptr scratch = d->scratch;
        void *p1[] = {&x, &n, &subop, &scratch};
        XO_CUDA_TRY(xo__cuda_launch(st, d, XO_CUDA_K_REDUCE, f64, blocks, 1, p1));
        unsigned long long nparts = blocks;
        void *p2[] = {&scratch, &nparts, &subop, &out};
        return xo__cuda_launch(st, d, XO_CUDA_K_REDUCE, f64, 1, 1, p2);
    }
    default:
        return st->host->set_error(XO_ERR_UNSUPPORTED, "cuda run: op kind %d has no CUDA kernel", (int)op->kind);
    }
}

unsigned xo__cuda_needs(xo_op_kind kind)
{
    enum { B = XO_CUDA_NEED_BLAS, K = XO_CUDA_NEED_KERNELS, NN = XO_CUDA_NEED_NN };
    static const unsigned char needs[XO_OP_KIND_COUNT] = {
        /* gemm, gemv, scal with alpha == 0 run on our xo_scale kernel, nrm2 on our scaled
         * one (xo__cuda_blas_on_kernels) */
        [XO_OP_GEMM] = B | K, [XO_OP_GEMV] = B | K, [XO_OP_AXPY] = B, [XO_OP_SCAL] = B | K, [XO_OP_DOT] = B,
        [XO_OP_NRM2] = K, [XO_OP_UNARY] = K, [XO_OP_BINARY] = K, [XO_OP_BIAS] = K, [XO_OP_REDUCE] = K,
        [XO_OP_COPY] = K | NN, [XO_OP_FILL] = K | NN, [XO_OP_AXPBY] = K | NN, [XO_OP_GER] = B | NN,
        [XO_OP_BINARY_SCALAR] = K | NN, [XO_OP_SCALE_BY] = K | NN, [XO_OP_SOFTMAX] = K | NN,
        [XO_OP_REDUCE_AXIS] = K | NN, [XO_OP_GEMM_BIAS_ACT] = B | K | NN, /* cuBLAS gemm + epilogue kernel */
        [XO_OP_SOFTMAX_XENT] = K | NN,
    };
    return (unsigned)kind < XO_OP_KIND_COUNT ? needs[kind] : 0u;
}

static xo_status check_operands(xo__cuda_state *st, const xo_op_desc *op)
{
    if (op->narg < 1 || op->narg > XO_MAX_ARGS)
        return st->host->set_error(XO_ERR_INVALID_ARGUMENT, "cuda run: %d operands", op->narg);
    for (int i = 0; i < op->narg; i++)
        if (!op->arg[i].mem)
            return st->host->set_error(XO_ERR_INVALID_ARGUMENT, "cuda run: operand %d is not in device memory", i);
    return XO_OK;
}

xo_status xo__cuda_run(void *state, int dev, const xo_op_desc *op, uint64_t token)
{
    xo__cuda_state *st = state;
    xo__cuda_device *d = xo__cuda_device_at(st, dev, "cuda run");
    if (!d) return XO_ERR_INVALID_ARGUMENT;
    if (!op) return st->host->set_error(XO_ERR_INVALID_ARGUMENT, "cuda run: op is NULL");
    XO_CUDA_TRY(check_operands(st, op));
    const unsigned need = xo__cuda_needs(op->kind);
    if (!need)
        return st->host->set_error(XO_ERR_UNSUPPORTED, "cuda run: op kind %d does not run on CUDA", (int)op->kind);

    XO_CUDA_TRY(xo__cuda_enter(st, d));
    for (int blas = 1; blas >= 0; blas--)
        if ((need & (blas ? XO_CUDA_NEED_BLAS : XO_CUDA_NEED_KERNELS)) && !xo__cuda_ready_locked(st, d, blas)) {
            xo__cuda_leave(d);
            return st->host->set_error(XO_ERR_UNSUPPORTED, "cuda run: %s unavailable on device %d",
                                       blas ? "cuBLAS" : "the kernel module", dev);
        }
    xo__cuda_timing *t = timing_begin(d, token);
    xo_status s = (need & XO_CUDA_NEED_NN)                                       ? xo__cuda_run_nn(st, d, op)
                  : (need & XO_CUDA_NEED_BLAS) && !xo__cuda_blas_on_kernels(op) ? xo__cuda_run_blas(st, d, op)
                                                                                : run_kernel(st, d, op);
    if (s == XO_OK) timing_end(d, t);
    xo__cuda_leave(d);
    return s;
}
