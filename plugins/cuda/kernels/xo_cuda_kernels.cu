/* crossover CUDA kernels: the ops cuBLAS does not have.
 *
 * Compiled by nvcc at build time into a fatbin (SASS for a few architectures plus PTX
 * for newer ones), embedded into libcrossover_cuda.a as a byte array and loaded with
 * cuModuleLoadData. Every kernel is extern "C" so the plugin finds it by its plain name:
 *   xo_unary_{f32,f64}   y[i] = f(x[i])            (y may be x)
 *   xo_binary_{f32,f64}  c[i] = a[i] (op) b[i]     (c may be a or b)
 *   xo_bias_{f32,f64}    a[r*lda + c] += bias[c]   r < rows, c < cols (row-major)
 *   xo_reduce_{f32,f64}  out[blockIdx.x] = reduction of x over this block's grid stride;
 *                        run twice (partials, then one block) for a full reduction.
 * All loops are grid-stride loops, so any grid size is correct. Block size: 256
 * (XO_CUDA_BLOCK; the reduction's shared-memory tree relies on it being a power of 2). */
#include <crossover.h>

#define XO_CUDA_BLOCK 256

typedef unsigned long long xo_u64;

__device__ __forceinline__ float xo_exp(float v) { return expf(v); }
__device__ __forceinline__ double xo_exp(double v) { return exp(v); }
__device__ __forceinline__ float xo_tanh(float v) { return tanhf(v); }
__device__ __forceinline__ double xo_tanh(double v) { return tanh(v); }

template <typename T>
__device__ __forceinline__ T xo_unary_apply(int op, T v)
{
    const T zero = T(0), one = T(1);
    switch (op) {
    case XO_RELU: return v > zero ? v : zero;
    case XO_TANH: return xo_tanh(v);
    case XO_SIGMOID: return one / (one + xo_exp(-v));
    case XO_EXP: return xo_exp(v);
    case XO_NEG: return -v;
    case XO_SQUARE: return v * v;
    case XO_RELU_GRAD: return v > zero ? one : zero;
    case XO_TANH_GRAD: return one - v * v;
    case XO_SIGMOID_GRAD: return v * (one - v);
    default: return v;
    }
}

template <typename T>
__device__ __forceinline__ T xo_binary_apply(int op, T a, T b)
{
    switch (op) {
    case XO_ADD: return a + b;
    case XO_SUB: return a - b;
    case XO_MUL: return a * b;
    case XO_DIV: return a / b;
    case XO_MAX: return a > b ? a : b;
    default: return a;
    }
}

template <typename T>
__device__ __forceinline__ void xo_unary_impl(const T *x, T *y, xo_u64 n, int op)
{
    const xo_u64 stride = (xo_u64)gridDim.x * blockDim.x;
    for (xo_u64 i = (xo_u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = xo_unary_apply<T>(op, x[i]);
}

template <typename T>
__device__ __forceinline__ void xo_binary_impl(const T *a, const T *b, T *c, xo_u64 n, int op)
{
    const xo_u64 stride = (xo_u64)gridDim.x * blockDim.x;
    for (xo_u64 i = (xo_u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        c[i] = xo_binary_apply<T>(op, a[i], b[i]);
}

template <typename T>
__device__ __forceinline__ void xo_bias_impl(T *a, const T *bias, xo_u64 rows, xo_u64 cols, xo_u64 lda)
{
    const xo_u64 cstride = (xo_u64)gridDim.x * blockDim.x;
    for (xo_u64 r = blockIdx.y; r < rows; r += gridDim.y) {
        T *row = a + r * lda;
        for (xo_u64 c = (xo_u64)blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += cstride)
            row[c] += bias[c];
    }
}

/* One block reduces its grid-stride share of x into out[blockIdx.x]: each thread folds
 * its elements, then a shared-memory tree folds the block's 256 values. */
template <typename T>
__device__ __forceinline__ void xo_reduce_impl(const T *x, xo_u64 n, int op, T *out)
{
    __shared__ T part[XO_CUDA_BLOCK];
    const unsigned tid = threadIdx.x;
    const xo_u64 stride = (xo_u64)gridDim.x * blockDim.x;
    const bool sum = (op == XO_SUM);
    /* Identity: 0 for a sum; for a max, x[0] (n > 0 always), which every block may
     * include without changing the result. */
    T acc = sum ? T(0) : x[0];
    for (xo_u64 i = (xo_u64)blockIdx.x * blockDim.x + tid; i < n; i += stride) {
        const T v = x[i];
        acc = sum ? acc + v : (v > acc ? v : acc);
    }
    part[tid] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            const T o = part[tid + s];
            part[tid] = sum ? part[tid] + o : (o > part[tid] ? o : part[tid]);
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = part[0];
}

extern "C" {

__global__ void __launch_bounds__(XO_CUDA_BLOCK) xo_unary_f32(const float *x, float *y, xo_u64 n, int op)
{
    xo_unary_impl<float>(x, y, n, op);
}
__global__ void __launch_bounds__(XO_CUDA_BLOCK) xo_unary_f64(const double *x, double *y, xo_u64 n, int op)
{
    xo_unary_impl<double>(x, y, n, op);
}

__global__ void __launch_bounds__(XO_CUDA_BLOCK)
xo_binary_f32(const float *a, const float *b, float *c, xo_u64 n, int op)
{
    xo_binary_impl<float>(a, b, c, n, op);
}
__global__ void __launch_bounds__(XO_CUDA_BLOCK)
xo_binary_f64(const double *a, const double *b, double *c, xo_u64 n, int op)
{
    xo_binary_impl<double>(a, b, c, n, op);
}

__global__ void __launch_bounds__(XO_CUDA_BLOCK)
xo_bias_f32(float *a, const float *bias, xo_u64 rows, xo_u64 cols, xo_u64 lda)
{
    xo_bias_impl<float>(a, bias, rows, cols, lda);
}
__global__ void __launch_bounds__(XO_CUDA_BLOCK)
xo_bias_f64(double *a, const double *bias, xo_u64 rows, xo_u64 cols, xo_u64 lda)
{
    xo_bias_impl<double>(a, bias, rows, cols, lda);
}

__global__ void __launch_bounds__(XO_CUDA_BLOCK) xo_reduce_f32(const float *x, xo_u64 n, int op, float *out)
{
    xo_reduce_impl<float>(x, n, op, out);
}
__global__ void __launch_bounds__(XO_CUDA_BLOCK) xo_reduce_f64(const double *x, xo_u64 n, int op, double *out)
{
    xo_reduce_impl<double>(x, n, op, out);
}

} /* extern "C" */
