/* crossover CUDA kernels: the ops cuBLAS does not have.
 *
 * Compiled by nvcc at build time into a fatbin (SASS for a few architectures plus PTX
 * for newer ones), embedded into libcrossover_cuda.a as a byte array and loaded with
 * cuModuleLoadData. Every kernel is extern "C" so the plugin finds it by its plain name:
 *   xo_unary_{f32,f64}   y[i] = f(x[i])            (y may be x; f from xo_formulas.h)
 *   xo_binary_{f32,f64}  c[i] = a[i] (op) b[i]     (c may be a or b)
 *   xo_bias_{f32,f64}    a[r*lda + c] += bias[c]   r < rows, c < cols (row-major)
 *   xo_reduce_{f32,f64}  out[blockIdx.x] = reduction of x over this block's grid stride;
 *                        run twice (partials, then one block) for a full reduction.
 *   xo_scale_{f32,f64}   a[r*lda + c] *= factor, r < rows, c < cols; factor 0 writes
 *                        zeros without reading (gemm/gemv/scal with alpha == 0).
 *   xo_nrm2_{f32,f64}    Euclidean norm without overflow or underflow (Blue's three
 *                        scaled sums, as reference BLAS); one block, or partials + one.
 * The rest (strided vectors: element i at p[i*inc]; scalars passed by value as T):
 *   xo_copy_*            y[i] = x[i]                          (bit-exact)
 *   xo_fill_*            x[i] = value                         (x never read)
 *   xo_axpby_*           y[i] = alpha x[i] + beta y[i]        (x not read where alpha == 0,
 *                                                              y not read where beta == 0)
 *   xo_binary_scalar_*   c[i] = a[i] (op) s                   (c may be a)
 *   xo_scale_by_*        x[i] *= s[0]                         (s read on the device)
 *   xo_softmax_*         one block per row: max, sum of exp(x - max), then the row
 *   xo_argmax_*          one block per row: the first largest column (the first NaN)
 *   xo_softmax_xent_*    one block per row: max, sum of exp(x - max), then the loss and
 *                        (g not NULL) g = scale (softmax - onehot(label)); g may be x
 *   xo_reduce_rows_*     out[r] = fold of row r: one block per row (axis 1)
 *   xo_reduce_cols_*     out[c] = fold of column c: a block is 32 columns x 8 row lanes
 *                        folded in shared memory (axis 0)
 *   xo_epilogue_*        c = act((beta == 0 ? 0 : beta c) + bias[j]) over a matrix, in
 *                        place: the one pass after cuBLAS's gemm in gemm_bias_act
 *                        (beta = 1 there; the user's beta when alpha == 0 skips the gemm)
 *   xo_chain_*           an element-wise chain of up to 32 steps in one pass, interpreted
 *                        from an xo_cuda_chain_prog (cuda_kernels.h) passed by value
 * All loops are grid-stride loops, so any grid size is correct. Block size: 256
 * (XO_CUDA_BLOCK; the reduction's shared-memory tree relies on it being a power of 2). */
#include <crossover.h>

#include "../cuda_kernels.h" /* the kernel list and xo_chain's program */

#define XO_CUDA_BLOCK 256

typedef unsigned long long xo_u64;

__device__ __forceinline__ float xo_exp(float v) { return expf(v); }
__device__ __forceinline__ double xo_exp(double v) { return exp(v); }
__device__ __forceinline__ float xo_tanh(float v) { return tanhf(v); }
__device__ __forceinline__ double xo_tanh(double v) { return tanh(v); }
__device__ __forceinline__ float xo_sqrt(float v) { return sqrtf(v); }
__device__ __forceinline__ double xo_sqrt(double v) { return sqrt(v); }
__device__ __forceinline__ float xo_rsqrt(float v) { return rsqrtf(v); }
__device__ __forceinline__ double xo_rsqrt(double v) { return rsqrt(v); }
__device__ __forceinline__ float xo_log(float v) { return logf(v); }
__device__ __forceinline__ double xo_log(double v) { return log(v); }
__device__ __forceinline__ float xo_abs(float v) { return fabsf(v); }
__device__ __forceinline__ double xo_abs(double v) { return fabs(v); }

/* The element-wise formulas (xo_formulas.h), one case per row of XO_UNARY_OP_MAP /
 * XO_BINARY_OP_MAP: a new op there needs no edit here. The XO_FN_* functions are the
 * overloads above, so float math stays float. */
#define XO_FN_EXP(x) xo_exp(x)
#define XO_FN_TANH(x) xo_tanh(x)
#define XO_FN_SQRT(x) xo_sqrt(x)
#define XO_FN_RSQRT(x) xo_rsqrt(x)
#define XO_FN_LOG(x) xo_log(x)
#define XO_FN_FABS(x) xo_abs(x)
#include "../../common/xo_formulas.h"

template <typename T>
__device__ __forceinline__ T xo_unary_apply(int op, T v)
{
    typedef T xo_real; /* the element type of xo_formulas.h */
    switch (op) {
#define XO_UNARY_CASE_(NAME, ...) case XO_##NAME: return T(XO_F_##NAME(v));
    XO_UNARY_OP_MAP(XO_UNARY_CASE_)
#undef XO_UNARY_CASE_
    default: return v;
    }
}

template <typename T>
__device__ __forceinline__ T xo_binary_apply(int op, T a, T b)
{
    switch (op) {
#define XO_BINARY_CASE_(NAME) case XO_##NAME: return T(XO_F_##NAME(a, b));
    XO_BINARY_OP_MAP(XO_BINARY_CASE_)
#undef XO_BINARY_CASE_
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
        acc = sum ? acc + v : T(XO_F_MAX(v, acc));
    }
    part[tid] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            const T o = part[tid + s];
            part[tid] = sum ? part[tid] + o : T(XO_F_MAX(o, part[tid]));
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = part[0];
}

/* Row-major a[r*lda + c] = factor * a[r*lda + c] (grid as xo_bias). A factor of 0 writes
 * zeros without reading a: BLAS never reads C or y when beta == 0, and crossover's scal
 * by 0 writes zeros over NaN and Inf. cuBLAS documents neither for alpha == 0, so gemm and
 * gemv with alpha == 0 (C = beta*C, y = beta*y; a vector is rows x 1, lda = its
 * increment) and scal by 0 run here instead. */
template <typename T>
__device__ __forceinline__ void xo_scale_impl(T *a, xo_u64 rows, xo_u64 cols, xo_u64 lda, T factor)
{
    const xo_u64 cstride = (xo_u64)gridDim.x * blockDim.x;
    for (xo_u64 r = blockIdx.y; r < rows; r += gridDim.y) {
        T *row = a + r * lda;
        for (xo_u64 c = (xo_u64)blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += cstride)
            row[c] = factor == T(0) ? T(0) : factor * row[c];
    }
}

/* nrm2: Blue's scaled sum of squares, as reference BLAS's dnrm2.f90 (LAPACK 3.10). Three
 * plain sums, of tiny magnitudes' squares scaled up by ssml, of huge ones' scaled down by
 * sbig, and of the rest: no square overflows or underflows where the norm is
 * representable, and each sum folds in any order. The constants are reference BLAS's. */
template <typename T> struct xo_blue;
template <> struct xo_blue<float> {
    static __device__ __forceinline__ float tsml() { return 0x1p-63f; }
    static __device__ __forceinline__ float tbig() { return 0x1p52f; }
    static __device__ __forceinline__ float ssml() { return 0x1p75f; }
    static __device__ __forceinline__ float sbig() { return 0x1p-76f; }
};
template <> struct xo_blue<double> {
    static __device__ __forceinline__ double tsml() { return 0x1p-511; }
    static __device__ __forceinline__ double tbig() { return 0x1p486; }
    static __device__ __forceinline__ double ssml() { return 0x1p537; }
    static __device__ __forceinline__ double sbig() { return 0x1p-538; }
};

template <typename T>
__device__ __forceinline__ T xo_nrm2_finish(T sml, T med, T big)
{
    typedef xo_blue<T> B;
    if (big > T(0)) {
        if (med > T(0) || med != med) big += (med * B::sbig()) * B::sbig();
        return sqrt(big) / B::sbig();
    }
    if (sml > T(0)) {
        if (!(med > T(0) || med != med)) return sqrt(sml) / B::ssml();
        const T ym = sqrt(med), ys = sqrt(sml) / B::ssml();
        const T ymin = ys > ym ? ym : ys, ymax = ys > ym ? ys : ym;
        return ymax * sqrt(T(1) + (ymin / ymax) * (ymin / ymax));
    }
    return sqrt(med);
}

/* stage 0: x is the vector (stride inc); stage 1: x holds n triples of partial sums. A
 * grid of one block writes the norm to out[0]; a larger one writes its triples to
 * out[3*blockIdx.x + 0..2] for a stage-1 launch of one block. */
template <typename T>
__device__ __forceinline__ void xo_nrm2_impl(const T *x, xo_u64 n, xo_u64 inc, T *out, int stage)
{
    typedef xo_blue<T> B;
    __shared__ T part[3][XO_CUDA_BLOCK];
    const unsigned tid = threadIdx.x;
    const xo_u64 stride = (xo_u64)gridDim.x * blockDim.x;
    T s[3] = {T(0), T(0), T(0)};
    for (xo_u64 i = (xo_u64)blockIdx.x * blockDim.x + tid; i < n; i += stride) {
        if (stage) {
            for (int j = 0; j < 3; j++) s[j] += x[3 * i + j];
            continue;
        }
        const T ax = fabs(x[i * inc]);
        if (ax > B::tbig()) s[2] += (ax * B::sbig()) * (ax * B::sbig());
        else if (ax < B::tsml()) s[0] += (ax * B::ssml()) * (ax * B::ssml());
        else s[1] += ax * ax;
    }
    for (int j = 0; j < 3; j++) part[j][tid] = s[j];
    __syncthreads();
    for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
        if (tid < h)
            for (int j = 0; j < 3; j++) part[j][tid] += part[j][tid + h];
        __syncthreads();
    }
    if (tid != 0) return;
    if (gridDim.x == 1) out[0] = xo_nrm2_finish<T>(part[0][0], part[1][0], part[2][0]);
    else for (int j = 0; j < 3; j++) out[3 * blockIdx.x + j] = part[j][0];
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

__global__ void __launch_bounds__(XO_CUDA_BLOCK)
xo_scale_f32(float *a, xo_u64 rows, xo_u64 cols, xo_u64 lda, float factor)
{
    xo_scale_impl<float>(a, rows, cols, lda, factor);
}
__global__ void __launch_bounds__(XO_CUDA_BLOCK)
xo_scale_f64(double *a, xo_u64 rows, xo_u64 cols, xo_u64 lda, double factor)
{
    xo_scale_impl<double>(a, rows, cols, lda, factor);
}

__global__ void __launch_bounds__(XO_CUDA_BLOCK)
xo_nrm2_f32(const float *x, xo_u64 n, xo_u64 inc, float *out, int stage)
{
    xo_nrm2_impl<float>(x, n, inc, out, stage);
}
__global__ void __launch_bounds__(XO_CUDA_BLOCK)
xo_nrm2_f64(const double *x, xo_u64 n, xo_u64 inc, double *out, int stage)
{
    xo_nrm2_impl<double>(x, n, inc, out, stage);
}

} /* extern "C" */

/* ---- strided vectors, rows, and the gemm epilogue --------------------------------- */

#define XO_GRID_STRIDE_LOOP(i, n)                                                  \
    for (xo_u64 i = (xo_u64)blockIdx.x * blockDim.x + threadIdx.x; i < (n);        \
         i += (xo_u64)gridDim.x * blockDim.x)

template <typename T>
__device__ __forceinline__ T xo_fold(bool sum, T acc, T v)
{
    return sum ? acc + v : T(XO_F_MAX(v, acc));
}

/* Fold one value per thread across the block (every thread calls it, same `sum`); all
 * threads get the result. `part` is XO_CUDA_BLOCK entries of shared memory. */
template <typename T>
__device__ __forceinline__ T xo_block_fold(bool sum, T v, T *part)
{
    const unsigned tid = threadIdx.x;
    part[tid] = v;
    __syncthreads();
    for (unsigned s = XO_CUDA_BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) part[tid] = xo_fold<T>(sum, part[tid], part[tid + s]);
        __syncthreads();
    }
    const T r = part[0];
    __syncthreads(); /* part is reused by the next fold */
    return r;
}

template <typename T>
__device__ __forceinline__ void xo_copy_impl(const T *x, xo_u64 incx, T *y, xo_u64 incy, xo_u64 n)
{
    XO_GRID_STRIDE_LOOP(i, n) y[i * incy] = x[i * incx];
}

template <typename T>
__device__ __forceinline__ void xo_fill_impl(T *x, xo_u64 incx, xo_u64 n, T value)
{
    XO_GRID_STRIDE_LOOP(i, n) x[i * incx] = value;
}

template <typename T>
__device__ __forceinline__ void xo_axpby_impl(const T *x, xo_u64 incx, T *y, xo_u64 incy, xo_u64 n, T alpha,
                                              T beta)
{
    const T zero = T(0);
    XO_GRID_STRIDE_LOOP(i, n) {
        T *yi = &y[i * incy];
        const T ax = alpha == zero ? zero : alpha * x[i * incx];
        *yi = beta == zero ? ax : ax + beta * *yi;
    }
}

template <typename T>
__device__ __forceinline__ void xo_binary_scalar_impl(const T *a, T s, T *c, xo_u64 n, int op)
{
    XO_GRID_STRIDE_LOOP(i, n) c[i] = xo_binary_apply<T>(op, a[i], s);
}

template <typename T>
__device__ __forceinline__ void xo_scale_by_impl(const T *s, T *x, xo_u64 incx, xo_u64 n)
{
    const T f = *s;
    XO_GRID_STRIDE_LOOP(i, n) x[i * incx] *= f;
}

/* Rows in a grid stride over blockIdx.x; within a row, threads stride by the block.
 * y may be x (same ld): each element is read before the same thread writes it. */
template <typename T>
__device__ __forceinline__ void xo_softmax_impl(const T *x, xo_u64 ldx, T *y, xo_u64 ldy, xo_u64 rows,
                                                xo_u64 cols, int op)
{
    __shared__ T part[XO_CUDA_BLOCK];
    for (xo_u64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *xr = x + r * ldx;
        T *yr = y + r * ldy;
        T m = xr[0];
        for (xo_u64 j = threadIdx.x; j < cols; j += blockDim.x) m = xo_fold<T>(false, m, xr[j]);
        m = xo_block_fold<T>(false, m, part);
        T s = T(0);
        for (xo_u64 j = threadIdx.x; j < cols; j += blockDim.x) s += xo_exp(xr[j] - m);
        s = xo_block_fold<T>(true, s, part);
        if (op == XO_LOG_SOFTMAX) {
            const T ls = xo_log(s);
            for (xo_u64 j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = (xr[j] - m) - ls;
        } else {
            for (xo_u64 j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = xo_exp(xr[j] - m) / s;
        }
    }
}

template <typename T>
__device__ __forceinline__ void xo_reduce_rows_impl(const T *x, xo_u64 ldx, xo_u64 rows, xo_u64 cols, int op,
                                                    T *out)
{
    __shared__ T part[XO_CUDA_BLOCK];
    const bool sum = (op == XO_SUM);
    for (xo_u64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *xr = x + r * ldx;
        T acc = sum ? T(0) : xr[0];
        for (xo_u64 j = threadIdx.x; j < cols; j += blockDim.x) acc = xo_fold<T>(sum, acc, xr[j]);
        acc = xo_block_fold<T>(sum, acc, part);
        if (threadIdx.x == 0) out[r] = acc;
    }
}

/* Softmax cross-entropy over integer labels, one block per row (rows in a grid stride):
 * the max, the sum of exp(x - max), then loss[r] = log(sum) - (x[c] - max) and, where g
 * is not NULL, g row = scale (softmax - onehot(c)). A label outside [0, cols) gives
 * loss 0 and a zero g row. g may be x (same ld): x[c] is read before the folds (whose
 * barriers order it before any write), and every other element is read by the thread
 * that then writes it. */
template <typename T>
__device__ __forceinline__ void xo_softmax_xent_impl(const T *x, xo_u64 ldx, const int *labels, T *loss, T *g,
                                                     xo_u64 ldg, xo_u64 rows, xo_u64 cols, T scale)
{
    __shared__ T part[XO_CUDA_BLOCK];
    for (xo_u64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *xr = x + r * ldx;
        T *gr = g ? g + r * ldg : 0;
        const int c = labels[r];
        if (c < 0 || (xo_u64)c >= cols) { /* the same branch for the whole block */
            if (threadIdx.x == 0) loss[r] = T(0);
            if (gr)
                for (xo_u64 j = threadIdx.x; j < cols; j += blockDim.x) gr[j] = T(0);
            continue;
        }
        const T xc = xr[c];
        T m = xr[0];
        for (xo_u64 j = threadIdx.x; j < cols; j += blockDim.x) m = xo_fold<T>(false, m, xr[j]);
        m = xo_block_fold<T>(false, m, part);
        T s = T(0);
        for (xo_u64 j = threadIdx.x; j < cols; j += blockDim.x) s += xo_exp(xr[j] - m);
        s = xo_block_fold<T>(true, s, part);
        if (threadIdx.x == 0) loss[r] = xo_log(s) - (xc - m);
        if (gr) {
            const T inv = scale / s;
            for (xo_u64 j = threadIdx.x; j < cols; j += blockDim.x)
                gr[j] = xo_exp(xr[j] - m) * inv - ((xo_u64)c == j ? scale : T(0));
        }
    }
}

/* Whether (v at column i) comes before (u at column j) for argmax: a NaN before any
 * number (XO_F_MAX's rule), a larger number before a smaller, the lower column on ties
 * and between two NaNs, so the first NaN and the first of equal maxima win. */
template <typename T>
__device__ __forceinline__ bool xo_arg_before(T v, xo_u64 i, T u, xo_u64 j)
{
    const bool vn = v != v, un = u != u;
    if (vn != un) return vn;
    if (!vn && v != u) return v > u;
    return i < j;
}

/* One block per row (rows in a grid stride): each thread keeps the best of its strided
 * share, then a tree over (value, column) pairs; a column of `cols` marks none. */
template <typename T>
__device__ __forceinline__ void xo_argmax_impl(const T *x, xo_u64 ldx, int *idx, xo_u64 rows, xo_u64 cols)
{
    __shared__ T sv[XO_CUDA_BLOCK];
    __shared__ xo_u64 si[XO_CUDA_BLOCK];
    const unsigned tid = threadIdx.x;
    for (xo_u64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *xr = x + r * ldx;
        T bv = T(0);
        xo_u64 bi = cols;
        for (xo_u64 j = tid; j < cols; j += blockDim.x)
            if (bi == cols || xo_arg_before<T>(xr[j], j, bv, bi)) {
                bv = xr[j];
                bi = j;
            }
        sv[tid] = bv;
        si[tid] = bi;
        __syncthreads();
        for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
            if (tid < s && si[tid + s] < cols &&
                (si[tid] == cols || xo_arg_before<T>(sv[tid + s], si[tid + s], sv[tid], si[tid]))) {
                sv[tid] = sv[tid + s];
                si[tid] = si[tid + s];
            }
            __syncthreads();
        }
        if (tid == 0) idx[r] = (int)si[0];
        __syncthreads(); /* sv and si are reused by the next row */
    }
}

#define XO_COLS_TILE 32u /* columns per block, one warp wide (XO_CUDA_COLS_TILE in C) */
#define XO_COLS_LANES (XO_CUDA_BLOCK / XO_COLS_TILE) /* row lanes per block */

template <typename T>
__device__ __forceinline__ void xo_reduce_cols_impl(const T *x, xo_u64 ldx, xo_u64 rows, xo_u64 cols, int op,
                                                    T *out)
{
    __shared__ T part[XO_COLS_LANES][XO_COLS_TILE];
    const bool sum = (op == XO_SUM);
    const unsigned cx = threadIdx.x % XO_COLS_TILE, lane = threadIdx.x / XO_COLS_TILE;
    for (xo_u64 c0 = (xo_u64)blockIdx.x * XO_COLS_TILE; c0 < cols; c0 += (xo_u64)gridDim.x * XO_COLS_TILE) {
        const xo_u64 c = c0 + cx;
        T acc = T(0);
        if (c < cols) {
            acc = sum ? T(0) : x[c];
            for (xo_u64 r = lane; r < rows; r += XO_COLS_LANES) acc = xo_fold<T>(sum, acc, x[r * ldx + c]);
        }
        part[lane][cx] = acc;
        __syncthreads();
        if (lane == 0 && c < cols) {
            for (unsigned l = 1; l < XO_COLS_LANES; l++) acc = xo_fold<T>(sum, acc, part[l][cx]);
            out[c] = acc;
        }
        __syncthreads();
    }
}

/* C seen as `outer` lines of `inner` contiguous elements, line o at c + o*ld: row-major
 * C has lines = rows (bias indexed by the inner index), column-major lines = columns
 * (bias indexed by the line). bias may be NULL. */
template <typename T>
__device__ __forceinline__ void xo_epilogue_impl(T *c, xo_u64 ld, xo_u64 outer, xo_u64 inner, const T *bias,
                                                 int bias_inner, T beta, int act)
{
    const T zero = T(0);
    const xo_u64 stride = (xo_u64)gridDim.x * blockDim.x;
    for (xo_u64 o = blockIdx.y; o < outer; o += gridDim.y) {
        T *line = c + o * ld;
        for (xo_u64 i = (xo_u64)blockIdx.x * blockDim.x + threadIdx.x; i < inner; i += stride) {
            T v = beta == zero ? zero : beta * line[i];
            if (bias) v += bias[bias_inner ? i : o];
            line[i] = xo_unary_apply<T>(act, v);
        }
    }
}

/* Both precisions of one kernel: PARAMS(T) is its parameter list, ARGS the call. */
#define XO_KERNEL_PAIR(name, PARAMS, ARGS)                                                     \
    __global__ void __launch_bounds__(XO_CUDA_BLOCK) name##_f32 PARAMS(float) { name##_impl<float> ARGS; } \
    __global__ void __launch_bounds__(XO_CUDA_BLOCK) name##_f64 PARAMS(double) { name##_impl<double> ARGS; }

#define XO_COPY_PARAMS(T) (const T *x, xo_u64 incx, T *y, xo_u64 incy, xo_u64 n)
#define XO_FILL_PARAMS(T) (T *x, xo_u64 incx, xo_u64 n, T value)
#define XO_AXPBY_PARAMS(T) (const T *x, xo_u64 incx, T *y, xo_u64 incy, xo_u64 n, T alpha, T beta)
#define XO_BINARY_SCALAR_PARAMS(T) (const T *a, T s, T *c, xo_u64 n, int op)
#define XO_SCALE_BY_PARAMS(T) (const T *s, T *x, xo_u64 incx, xo_u64 n)
#define XO_SOFTMAX_PARAMS(T) (const T *x, xo_u64 ldx, T *y, xo_u64 ldy, xo_u64 rows, xo_u64 cols, int op)
#define XO_REDUCE_AXIS_PARAMS(T) (const T *x, xo_u64 ldx, xo_u64 rows, xo_u64 cols, int op, T *out)
#define XO_SOFTMAX_XENT_PARAMS(T) \
    (const T *x, xo_u64 ldx, const int *labels, T *loss, T *g, xo_u64 ldg, xo_u64 rows, xo_u64 cols, T scale)
#define XO_ARGMAX_PARAMS(T) (const T *x, xo_u64 ldx, int *idx, xo_u64 rows, xo_u64 cols)
#define XO_EPILOGUE_PARAMS(T) \
    (T *c, xo_u64 ld, xo_u64 outer, xo_u64 inner, const T *bias, int bias_inner, T beta, int act)

extern "C" {
XO_KERNEL_PAIR(xo_copy, XO_COPY_PARAMS, (x, incx, y, incy, n))
XO_KERNEL_PAIR(xo_fill, XO_FILL_PARAMS, (x, incx, n, value))
XO_KERNEL_PAIR(xo_axpby, XO_AXPBY_PARAMS, (x, incx, y, incy, n, alpha, beta))
XO_KERNEL_PAIR(xo_binary_scalar, XO_BINARY_SCALAR_PARAMS, (a, s, c, n, op))
XO_KERNEL_PAIR(xo_scale_by, XO_SCALE_BY_PARAMS, (s, x, incx, n))
XO_KERNEL_PAIR(xo_softmax, XO_SOFTMAX_PARAMS, (x, ldx, y, ldy, rows, cols, op))
XO_KERNEL_PAIR(xo_softmax_xent, XO_SOFTMAX_XENT_PARAMS, (x, ldx, labels, loss, g, ldg, rows, cols, scale))
XO_KERNEL_PAIR(xo_reduce_rows, XO_REDUCE_AXIS_PARAMS, (x, ldx, rows, cols, op, out))
XO_KERNEL_PAIR(xo_reduce_cols, XO_REDUCE_AXIS_PARAMS, (x, ldx, rows, cols, op, out))
XO_KERNEL_PAIR(xo_epilogue, XO_EPILOGUE_PARAMS, (c, ld, outer, inner, bias, bias_inner, beta, act))
XO_KERNEL_PAIR(xo_argmax, XO_ARGMAX_PARAMS, (x, ldx, idx, rows, cols))
} /* extern "C" */

/* ---- the chain interpreter (the "xo_chain" extra) ------------------------------------ */

template <typename T>
__device__ __forceinline__ T xo_chain_input(const xo_cuda_chain_step &s, int j, const T *r, xo_u64 i)
{
    return s.from[j] >= 0 ? r[s.from[j]] : ((const T *)s.in[j])[i];
}

/* Each thread keeps the step results of its element in r[] (registers or local memory);
 * an input that is an earlier step's result is never read from memory. */
template <typename T>
__device__ __forceinline__ void xo_chain_impl(const xo_cuda_chain_prog &p)
{
    T r[XO_CUDA_CHAIN_STEPS];
    const T zero = T(0);
    XO_GRID_STRIDE_LOOP(i, p.n) {
        for (int k = 0; k < p.nsteps; k++) {
            const xo_cuda_chain_step &s = p.step[k];
            const T alpha = T(s.alpha), beta = T(s.beta);
            T v;
            switch (s.code) {
            case XO_CUDA_CC_UNARY: v = xo_unary_apply<T>(s.subop, xo_chain_input<T>(s, 0, r, i)); break;
            case XO_CUDA_CC_BINARY:
                v = xo_binary_apply<T>(s.subop, xo_chain_input<T>(s, 0, r, i), xo_chain_input<T>(s, 1, r, i));
                break;
            case XO_CUDA_CC_BINARY_SCALAR: v = xo_binary_apply<T>(s.subop, xo_chain_input<T>(s, 0, r, i), alpha); break;
            case XO_CUDA_CC_SCAL: v = alpha == zero ? zero : alpha * xo_chain_input<T>(s, 0, r, i); break;
            case XO_CUDA_CC_FILL: v = alpha; break;
            case XO_CUDA_CC_AXPY: v = alpha * xo_chain_input<T>(s, 0, r, i) + xo_chain_input<T>(s, 1, r, i); break;
            case XO_CUDA_CC_AXPBY: {
                const T ax = alpha == zero ? zero : alpha * xo_chain_input<T>(s, 0, r, i);
                v = beta == zero ? ax : ax + beta * xo_chain_input<T>(s, 1, r, i);
                break;
            }
            case XO_CUDA_CC_SCALE_BY: v = xo_chain_input<T>(s, 0, r, i) * ((const T *)s.in[1])[0]; break;
            default: v = xo_chain_input<T>(s, 0, r, i); break; /* XO_CUDA_CC_COPY */
            }
            r[k] = v;
            if (s.store) ((T *)s.out)[i] = v;
        }
    }
}

extern "C" {
__global__ void __launch_bounds__(XO_CUDA_BLOCK) xo_chain_f32(const xo_cuda_chain_prog p) { xo_chain_impl<float>(p); }
__global__ void __launch_bounds__(XO_CUDA_BLOCK) xo_chain_f64(const xo_cuda_chain_prog p) { xo_chain_impl<double>(p); }
} /* extern "C" */
