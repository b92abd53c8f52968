/* The element-wise family, one grid-stride pass of our kernels each: unary, binary,
 * binary_scalar (their formulas: xo_formulas.h, in the .cu file), fill, scale_by, axpby
 * and bias. Strided vectors: element i at p[i*inc]; scalars pass by value in the op's
 * precision. */
#include "cuda_internal.h"

#define DEVPTR XO_CUDA_DEVPTR

static unsigned grid(const xo_op_desc *op)
{
    return xo__cuda_grid_for(op->n, XO_CUDA_MAX_GRID);
}

xo_status xo__cuda_unary(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const size_t es = xo__cuda_esize(op);
    CUdeviceptr x = DEVPTR(op, 0, es), y = DEVPTR(op, 1, es);
    unsigned long long n = op->n;
    int subop = op->subop;
    void *params[] = {&x, &y, &n, &subop};
    return xo__cuda_launch(st, d, XO_CUDA_K_UNARY, op->dtype == XO_F64, grid(op), 1, params);
}

xo_status xo__cuda_binary(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const size_t es = xo__cuda_esize(op);
    CUdeviceptr a = DEVPTR(op, 0, es), b = DEVPTR(op, 1, es), c = DEVPTR(op, 2, es);
    unsigned long long n = op->n;
    int subop = op->subop;
    void *params[] = {&a, &b, &c, &n, &subop};
    return xo__cuda_launch(st, d, XO_CUDA_K_BINARY, op->dtype == XO_F64, grid(op), 1, params);
}

xo_status xo__cuda_binary_scalar(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const int f64 = op->dtype == XO_F64;
    const size_t es = xo__cuda_esize(op);
    CUdeviceptr a = DEVPTR(op, 0, es), c = DEVPTR(op, 1, es);
    unsigned long long n = op->n;
    int subop = op->subop;
    xo__cuda_scalar s;
    void *params[] = {&a, xo__cuda_scalar_of(&s, f64, op->alpha), &c, &n, &subop};
    return xo__cuda_launch(st, d, XO_CUDA_K_BINARY_SCALAR, f64, grid(op), 1, params);
}

xo_status xo__cuda_fill(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const int f64 = op->dtype == XO_F64;
    CUdeviceptr x = DEVPTR(op, 0, xo__cuda_esize(op));
    unsigned long long n = op->n, incx = op->inc[0];
    xo__cuda_scalar v;
    void *params[] = {&x, &incx, &n, xo__cuda_scalar_of(&v, f64, op->alpha)};
    return xo__cuda_launch(st, d, XO_CUDA_K_FILL, f64, grid(op), 1, params);
}

xo_status xo__cuda_scale_by(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const size_t es = xo__cuda_esize(op);
    CUdeviceptr s = DEVPTR(op, 0, es), x = DEVPTR(op, 1, es);
    unsigned long long n = op->n, incx = op->inc[0];
    void *params[] = {&s, &x, &incx, &n};
    return xo__cuda_launch(st, d, XO_CUDA_K_SCALE_BY, op->dtype == XO_F64, grid(op), 1, params);
}

xo_status xo__cuda_axpby(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const int f64 = op->dtype == XO_F64;
    const size_t es = xo__cuda_esize(op);
    CUdeviceptr x = DEVPTR(op, 0, es), y = DEVPTR(op, 1, es);
    unsigned long long n = op->n, incx = op->inc[0], incy = op->inc[1];
    xo__cuda_scalar a, b;
    void *params[] = {&x, &incx, &y, &incy, &n, xo__cuda_scalar_of(&a, f64, op->alpha),
                      xo__cuda_scalar_of(&b, f64, op->beta)};
    return xo__cuda_launch(st, d, XO_CUDA_K_AXPBY, f64, grid(op), 1, params);
}

xo_status xo__cuda_bias(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const size_t es = xo__cuda_esize(op);
    CUdeviceptr a = DEVPTR(op, 0, es), bias = DEVPTR(op, 1, es);
    unsigned long long rows = op->m, cols = op->n, lda = op->ld[0];
    void *params[] = {&a, &bias, &rows, &cols, &lda};
    return xo__cuda_launch(st, d, XO_CUDA_K_BIAS, op->dtype == XO_F64, grid(op), xo__cuda_grid_cap(op->m), params);
}
