/* Elementwise kernels of the OpenCL plugin: unary, binary, bias, scale.
 *
 * Compiled once per device as float, and once more as double (-DXO_FP64) on devices
 * with cl_khr_fp64. Every kernel takes element counts and element offsets as ulong
 * arguments (no sub-buffers, so no alignment rules) and loops with a grid stride, so
 * any n works whatever global size the host picks. */
#ifdef XO_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real;
#else
typedef float real;
#endif

/* xo_unary_op and xo_binary_op of crossover.h (the host checks these values). */
#define XO_RELU 0
#define XO_TANH 1
#define XO_SIGMOID 2
#define XO_EXP 3
#define XO_NEG 4
#define XO_SQUARE 5
#define XO_RELU_GRAD 6
#define XO_TANH_GRAD 7
#define XO_SIGMOID_GRAD 8

#define XO_ADD 0
#define XO_SUB 1
#define XO_MUL 2
#define XO_DIV 3
#define XO_MAX 4

/* y[i] = f(x[i]); y may be x (same offset). */
__kernel void xo_unary(const int op, const ulong n,
                       __global const real *x, const ulong x_off,
                       __global real *y, const ulong y_off)
{
    const ulong stride = get_global_size(0);
    x += x_off;
    y += y_off;
    for (ulong i = get_global_id(0); i < n; i += stride) {
        const real v = x[i];
        real r;
        switch (op) {
        case XO_RELU:         r = v > (real)0 ? v : (real)0; break;
        case XO_TANH:         r = tanh(v); break;
        case XO_SIGMOID:      r = (real)1 / ((real)1 + exp(-v)); break;
        case XO_EXP:          r = exp(v); break;
        case XO_NEG:          r = -v; break;
        case XO_SQUARE:       r = v * v; break;
        case XO_RELU_GRAD:    r = v > (real)0 ? (real)1 : (real)0; break;
        case XO_TANH_GRAD:    r = (real)1 - v * v; break;
        case XO_SIGMOID_GRAD: r = v * ((real)1 - v); break;
        default:              r = v; break;
        }
        y[i] = r;
    }
}

/* c[i] = a[i] op b[i]; c may be a or b (same offset). */
__kernel void xo_binary(const int op, const ulong n,
                        __global const real *a, const ulong a_off,
                        __global const real *b, const ulong b_off,
                        __global real *c, const ulong c_off)
{
    const ulong stride = get_global_size(0);
    a += a_off;
    b += b_off;
    c += c_off;
    for (ulong i = get_global_id(0); i < n; i += stride) {
        const real u = a[i], v = b[i];
        real r;
        switch (op) {
        case XO_ADD: r = u + v; break;
        case XO_SUB: r = u - v; break;
        case XO_MUL: r = u * v; break;
        case XO_DIV: r = u / v; break;
        case XO_MAX: r = u > v ? u : v; break;
        default:     r = u; break;
        }
        c[i] = r;
    }
}

/* Row-major a[i*lda + j] += bias[j] for i < rows, j < cols. Dimension 0 runs over
 * columns (contiguous), dimension 1 over rows. */
__kernel void xo_bias(const ulong rows, const ulong cols,
                      __global real *a, const ulong a_off, const ulong lda,
                      __global const real *bias, const ulong bias_off)
{
    const ulong row_stride = get_global_size(1), col_stride = get_global_size(0);
    a += a_off;
    bias += bias_off;
    for (ulong i = get_global_id(1); i < rows; i += row_stride) {
        __global real *row = a + i * lda;
        for (ulong j = get_global_id(0); j < cols; j += col_stride)
            row[j] += bias[j];
    }
}

/* Row-major a[i*lda + j] *= factor for i < rows, j < cols, laid out as xo_bias. A factor
 * of 0 writes zeros without reading a (BLAS: beta == 0 never reads C or y; crossover's
 * scal by 0 writes zeros over NaN and Inf). gemm and gemv with alpha == 0 (C = beta*C,
 * y = beta*y) and scal by 0 run here; a vector is rows x 1 with lda = its increment. */
__kernel void xo_scale(const ulong rows, const ulong cols,
                       __global real *a, const ulong a_off, const ulong lda, const real factor)
{
    const ulong row_stride = get_global_size(1), col_stride = get_global_size(0);
    a += a_off;
    for (ulong i = get_global_id(1); i < rows; i += row_stride) {
        __global real *row = a + i * lda;
        for (ulong j = get_global_id(0); j < cols; j += col_stride)
            row[j] = factor == (real)0 ? (real)0 : factor * row[j];
    }
}
