/* run() for the 0.3 ops: copy, fill, axpby, ger, binary_scalar, scale_by, softmax,
 * reduce_axis and gemm_bias_act (operands and fields as plugin.h's table says).
 *
 * ger runs in cuBLAS (row-major A is column-major A^T, so A^T += alpha y x^T);
 * gemm_bias_act is cuBLAS's gemm followed by ONE epilogue kernel over C that adds the
 * bias and applies the activation. Everything else is one of our kernels
 * (kernels/xo_cuda_kernels.cu). BLAS semantics are kept here, not left to cuBLAS:
 * alpha == 0 reads neither x/y (ger: nothing to do) nor A/B (gemm_bias_act: no gemm,
 * the epilogue computes act(beta C + bias), not reading C where beta == 0). */
#include "cuda_internal.h"

#include <limits.h>

/* A scalar kernel argument of the op's precision. */
typedef union scalar_arg {
    float f;
    double d;
} scalar_arg;

static void *scalar(scalar_arg *s, int f64, double v)
{
    if (f64) s->d = v;
    else s->f = (float)v;
    return s;
}

static unsigned grid_cap(size_t blocks)
{
    if (blocks < 1) return 1;
    return blocks > XO_CUDA_MAX_GRID ? XO_CUDA_MAX_GRID : (unsigned)blocks;
}

static xo_status run_ger(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op, size_t es)
{
    if (op->alpha == 0) return XO_OK; /* A unchanged; x and y not read */
    if (op->m > INT_MAX || op->n > INT_MAX || op->inc[0] > INT_MAX || op->inc[1] > INT_MAX || op->ld[2] > INT_MAX)
        return st->host->set_error(XO_ERR_UNSUPPORTED, "cuda run: a ger dimension exceeds cuBLAS's int range");
    const int row_major = op->layout == XO_ROW_MAJOR;
    /* Column-major: A (m x n) += alpha x y^T. Row-major: A^T (n x m) += alpha y x^T. */
    const int rows = (int)(row_major ? op->n : op->m), cols = (int)(row_major ? op->m : op->n);
    const int u = row_major ? 1 : 0, v = row_major ? 0 : 1; /* operand of the column / row vector */
    const CUdeviceptr pu = XO_CUDA_DEVPTR(op, u, es), pv = XO_CUDA_DEVPTR(op, v, es), a = XO_CUDA_DEVPTR(op, 2, es);
    const int incu = (int)op->inc[u], incv = (int)op->inc[v], lda = (int)op->ld[2];
    XO_CUDA_TRY(XO_CUBLAS(st, cublasSetPointerMode_v2, (d->blas, CUBLAS_POINTER_MODE_HOST)));
    if (es == sizeof(double)) {
        const double alpha = op->alpha;
        return XO_CUBLAS(st, cublasDger_v2, (d->blas, rows, cols, &alpha, (const double *)(uintptr_t)pu, incu,
                                             (const double *)(uintptr_t)pv, incv, (double *)(uintptr_t)a, lda));
    }
    const float alpha = (float)op->alpha;
    return XO_CUBLAS(st, cublasSger_v2, (d->blas, rows, cols, &alpha, (const float *)(uintptr_t)pu, incu,
                                         (const float *)(uintptr_t)pv, incv, (float *)(uintptr_t)a, lda));
}

/* C = act(alpha op(A) op(B) + beta C + bias): the gemm in cuBLAS (when alpha != 0),
 * then one epilogue pass over C (unless there is nothing left to do). */
static xo_status run_gemm_bias_act(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op, int f64,
                                   size_t es)
{
    double beta = op->beta;
    if (op->alpha != 0) {
        xo_op_desc g = *op;
        g.kind = XO_OP_GEMM;
        g.narg = 3;
        XO_CUDA_TRY(xo__cuda_run_blas(st, d, &g));
        if (op->narg < 4 && op->subop == XO_IDENTITY) return XO_OK;
        beta = 1; /* C already holds alpha op(A) op(B) + beta C */
    }
    const int row_major = op->layout == XO_ROW_MAJOR;
    CUdeviceptr c = XO_CUDA_DEVPTR(op, 2, es), bias = op->narg >= 4 ? XO_CUDA_DEVPTR(op, 3, es) : 0;
    unsigned long long ld = op->ld[2], outer = row_major ? op->m : op->n, inner = row_major ? op->n : op->m;
    int bias_inner = row_major, act = op->subop;
    scalar_arg b;
    void *params[] = {&c, &ld, &outer, &inner, &bias, &bias_inner, scalar(&b, f64, beta), &act};
    return xo__cuda_launch(st, d, XO_CUDA_K_EPILOGUE, f64, xo__cuda_grid_for(inner, XO_CUDA_MAX_GRID),
                           grid_cap(outer), params);
}

xo_status xo__cuda_run_nn(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const int f64 = op->dtype == XO_F64;
    const size_t es = f64 ? sizeof(double) : sizeof(float);
    unsigned long long n = op->n, inc0 = op->inc[0], inc1 = op->inc[1];
    const unsigned grid = xo__cuda_grid_for(op->n, XO_CUDA_MAX_GRID);
    int subop = op->subop;
    scalar_arg s1, s2;

    switch (op->kind) {
    case XO_OP_COPY: {
        CUdeviceptr x = XO_CUDA_DEVPTR(op, 0, es), y = XO_CUDA_DEVPTR(op, 1, es);
        if (x == y && inc0 == inc1) return XO_OK; /* y is x: nothing changes */
        void *params[] = {&x, &inc0, &y, &inc1, &n};
        return xo__cuda_launch(st, d, XO_CUDA_K_COPY, f64, grid, 1, params);
    }
    case XO_OP_FILL: {
        CUdeviceptr x = XO_CUDA_DEVPTR(op, 0, es);
        void *params[] = {&x, &inc0, &n, scalar(&s1, f64, op->alpha)};
        return xo__cuda_launch(st, d, XO_CUDA_K_FILL, f64, grid, 1, params);
    }
    case XO_OP_AXPBY: {
        CUdeviceptr x = XO_CUDA_DEVPTR(op, 0, es), y = XO_CUDA_DEVPTR(op, 1, es);
        void *params[] = {&x, &inc0, &y, &inc1, &n, scalar(&s1, f64, op->alpha), scalar(&s2, f64, op->beta)};
        return xo__cuda_launch(st, d, XO_CUDA_K_AXPBY, f64, grid, 1, params);
    }
    case XO_OP_GER:
        return run_ger(st, d, op, es);
    case XO_OP_BINARY_SCALAR: {
        CUdeviceptr a = XO_CUDA_DEVPTR(op, 0, es), c = XO_CUDA_DEVPTR(op, 1, es);
        void *params[] = {&a, scalar(&s1, f64, op->alpha), &c, &n, &subop};
        return xo__cuda_launch(st, d, XO_CUDA_K_BINARY_SCALAR, f64, grid, 1, params);
    }
    case XO_OP_SCALE_BY: {
        CUdeviceptr s = XO_CUDA_DEVPTR(op, 0, es), x = XO_CUDA_DEVPTR(op, 1, es);
        void *params[] = {&s, &x, &inc0, &n};
        return xo__cuda_launch(st, d, XO_CUDA_K_SCALE_BY, f64, grid, 1, params);
    }
    case XO_OP_SOFTMAX: {
        CUdeviceptr x = XO_CUDA_DEVPTR(op, 0, es), y = XO_CUDA_DEVPTR(op, 1, es);
        unsigned long long ldx = op->ld[0], ldy = op->ld[1], rows = op->m;
        void *params[] = {&x, &ldx, &y, &ldy, &rows, &n, &subop};
        return xo__cuda_launch(st, d, XO_CUDA_K_SOFTMAX, f64, grid_cap(op->m), 1, params);
    }
    case XO_OP_SOFTMAX_XENT: { /* labels are int32, their offset counts int32 elements */
        CUdeviceptr x = XO_CUDA_DEVPTR(op, 0, es), labels = XO_CUDA_DEVPTR(op, 1, sizeof(int32_t)),
                    loss = XO_CUDA_DEVPTR(op, 2, es), g = op->narg >= 4 ? XO_CUDA_DEVPTR(op, 3, es) : 0;
        unsigned long long ldx = op->ld[0], ldg = op->ld[1], rows = op->m;
        void *params[] = {&x, &ldx, &labels, &loss, &g, &ldg, &rows, &n, scalar(&s1, f64, op->alpha)};
        return xo__cuda_launch(st, d, XO_CUDA_K_SOFTMAX_XENT, f64, grid_cap(op->m), 1, params);
    }
    case XO_OP_REDUCE_AXIS: {
        CUdeviceptr x = XO_CUDA_DEVPTR(op, 0, es), out = XO_CUDA_DEVPTR(op, 1, es);
        unsigned long long ldx = op->ld[0], rows = op->m;
        void *params[] = {&x, &ldx, &rows, &n, &subop, &out};
        if (op->axis == 1) /* a block per row */
            return xo__cuda_launch(st, d, XO_CUDA_K_REDUCE_ROWS, f64, grid_cap(op->m), 1, params);
        if (op->axis != 0)
            return st->host->set_error(XO_ERR_INVALID_ARGUMENT, "cuda run: reduce_axis axis %d", op->axis);
        return xo__cuda_launch(st, d, XO_CUDA_K_REDUCE_COLS, f64,
                               grid_cap((op->n + XO_CUDA_COLS_TILE - 1) / XO_CUDA_COLS_TILE), 1, params);
    }
    case XO_OP_GEMM_BIAS_ACT:
        return run_gemm_bias_act(st, d, op, f64, es);
    default:
        return st->host->set_error(XO_ERR_UNSUPPORTED, "cuda run: op kind %d is not a 0.3 op", (int)op->kind);
    }
}
