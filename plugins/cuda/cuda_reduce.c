/* The reduction family and the ops built on one: reduce (two passes through the
 * device's scratch when one block is not enough), reduce_axis, softmax, softmax_xent
 * and argmax (one block per row). */
#include "cuda_internal.h"

#define DEVPTR XO_CUDA_DEVPTR

xo_status xo__cuda_reduce(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const int f64 = op->dtype == XO_F64;
    const size_t es = xo__cuda_esize(op);
    CUdeviceptr x = DEVPTR(op, 0, es), out = DEVPTR(op, 1, es);
    unsigned long long n = op->n;
    int subop = op->subop;
    const unsigned blocks = xo__cuda_grid_for(op->n, XO_CUDA_REDUCE_BLOCKS);
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

xo_status xo__cuda_reduce_axis(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const int f64 = op->dtype == XO_F64;
    const size_t es = xo__cuda_esize(op);
    CUdeviceptr x = DEVPTR(op, 0, es), out = DEVPTR(op, 1, es);
    unsigned long long ldx = op->ld[0], rows = op->m, n = op->n;
    int subop = op->subop;
    void *params[] = {&x, &ldx, &rows, &n, &subop, &out};
    if (op->axis == 1) /* a block per row */
        return xo__cuda_launch(st, d, XO_CUDA_K_REDUCE_ROWS, f64, xo__cuda_grid_cap(op->m), 1, params);
    if (op->axis != 0)
        return st->host->set_error(XO_ERR_INVALID_ARGUMENT, "cuda run: reduce_axis axis %d", op->axis);
    /* a block per XO_CUDA_COLS_TILE columns */
    return xo__cuda_launch(st, d, XO_CUDA_K_REDUCE_COLS, f64,
                           xo__cuda_grid_cap((op->n + XO_CUDA_COLS_TILE - 1) / XO_CUDA_COLS_TILE), 1, params);
}

xo_status xo__cuda_softmax(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const size_t es = xo__cuda_esize(op);
    CUdeviceptr x = DEVPTR(op, 0, es), y = DEVPTR(op, 1, es);
    unsigned long long ldx = op->ld[0], ldy = op->ld[1], rows = op->m, n = op->n;
    int subop = op->subop;
    void *params[] = {&x, &ldx, &y, &ldy, &rows, &n, &subop};
    return xo__cuda_launch(st, d, XO_CUDA_K_SOFTMAX, op->dtype == XO_F64, xo__cuda_grid_cap(op->m), 1, params);
}

/* Labels are int32 whatever the precision, and their offset counts int32 elements; the
 * grad (narg 4) may be x itself, or absent (a NULL pointer to the kernel). */
xo_status xo__cuda_softmax_xent(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const int f64 = op->dtype == XO_F64;
    const size_t es = xo__cuda_esize(op);
    CUdeviceptr x = DEVPTR(op, 0, es), labels = DEVPTR(op, 1, sizeof(int32_t)), loss = DEVPTR(op, 2, es);
    CUdeviceptr g = op->narg >= 4 ? DEVPTR(op, 3, es) : 0;
    unsigned long long ldx = op->ld[0], ldg = op->ld[1], rows = op->m, n = op->n;
    xo__cuda_scalar scale;
    void *params[] = {&x, &ldx, &labels, &loss, &g, &ldg, &rows, &n, xo__cuda_scalar_of(&scale, f64, op->alpha)};
    return xo__cuda_launch(st, d, XO_CUDA_K_SOFTMAX_XENT, f64, xo__cuda_grid_cap(op->m), 1, params);
}

/* The indices are int32 whatever the precision, and their offset counts int32 elements. */
xo_status xo__cuda_argmax(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const size_t es = xo__cuda_esize(op);
    CUdeviceptr x = DEVPTR(op, 0, es), idx = DEVPTR(op, 1, sizeof(int32_t));
    unsigned long long ldx = op->ld[0], rows = op->m, n = op->n;
    void *params[] = {&x, &ldx, &idx, &rows, &n};
    return xo__cuda_launch(st, d, XO_CUDA_K_ARGMAX, op->dtype == XO_F64, xo__cuda_grid_cap(op->m), 1, params);
}
