/* Elementwise kernels of the OpenCL plugin: unary, binary, binary_scalar, copy, fill,
 * axpby, scale_by, bias + activation over a matrix (bias, gemm_bias_act's epilogue),
 * and scale (gemm, gemv and scal with alpha == 0).
 *
 * Compiled once per device as float, and once more as double (-DXO_FP64) on devices
 * with cl_khr_fp64. Every kernel takes element counts and element offsets as ulong
 * arguments (no sub-buffers, so no alignment rules) and loops with a grid stride, so
 * any n works whatever global size the host picks. */
#ifdef XO_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real;
typedef ulong bits; /* copy and fill move bits, never values: bit-exact, NaN payloads kept */
#else
typedef float real;
typedef uint bits;
#undef XO_REAL /* xo_formulas.h's constants as float literals: no double without cl_khr_fp64 */
#define XO_REAL(v) (v##f)
#endif

/* xo_unary_op and xo_binary_op come from the op maps of crossover.h, and their formulas
 * from plugins/common/xo_formulas.h: the host puts both before this source (the maps
 * with one argument per row: X(NAME)). */
#define XO_ENUM_(NAME) XO_##NAME,
typedef real xo_real; /* the element type of xo_formulas.h */
enum xo_unary_op { XO_UNARY_OP_MAP(XO_ENUM_) };
enum xo_binary_op { XO_BINARY_OP_MAP(XO_ENUM_) };
#define XO_FN_EXP(x) exp(x)
#define XO_FN_TANH(x) tanh(x)
#define XO_FN_SQRT(x) sqrt(x)
#define XO_FN_RSQRT(x) rsqrt(x)
#define XO_FN_LOG(x) log(x)
#define XO_FN_FABS(x) fabs(x)

#define XO_UNARY_CASE_(NAME) case XO_##NAME: return XO_F_##NAME(v);
inline real xo_unary_fn(const int op, const real v)
{
    switch (op) {
    XO_UNARY_OP_MAP(XO_UNARY_CASE_)
    default: return v;
    }
}

#define XO_BINARY_CASE_(NAME) case XO_##NAME: return XO_F_##NAME(u, v);
inline real xo_binary_fn(const int op, const real u, const real v)
{
    switch (op) {
    XO_BINARY_OP_MAP(XO_BINARY_CASE_)
    default: return u;
    }
}

/* y[i] = f(x[i]); y may be x (same offset). */
__kernel void xo_unary(const int op, const ulong n,
                       __global const real *x, const ulong x_off,
                       __global real *y, const ulong y_off)
{
    const ulong stride = get_global_size(0);
    x += x_off;
    y += y_off;
    for (ulong i = get_global_id(0); i < n; i += stride)
        y[i] = xo_unary_fn(op, x[i]);
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
    for (ulong i = get_global_id(0); i < n; i += stride)
        c[i] = xo_binary_fn(op, a[i], b[i]);
}

/* c[i] = a[i] op s; c may be a (same offset). */
__kernel void xo_binary_scalar(const int op, const ulong n,
                               __global const real *a, const ulong a_off, const real s,
                               __global real *c, const ulong c_off)
{
    const ulong stride = get_global_size(0);
    a += a_off;
    c += c_off;
    for (ulong i = get_global_id(0); i < n; i += stride)
        c[i] = xo_binary_fn(op, a[i], s);
}

/* y[i*incy] = x[i*incx], bit for bit. */
__kernel void xo_copy(const ulong n, __global const bits *x, const ulong x_off, const ulong incx,
                      __global bits *y, const ulong y_off, const ulong incy)
{
    const ulong stride = get_global_size(0);
    x += x_off;
    y += y_off;
    for (ulong i = get_global_id(0); i < n; i += stride)
        y[i * incy] = x[i * incx];
}

/* x[i*incx] = value (its bits); x is never read. */
__kernel void xo_fill(const ulong n, const bits value, __global bits *x, const ulong x_off, const ulong incx)
{
    const ulong stride = get_global_size(0);
    x += x_off;
    for (ulong i = get_global_id(0); i < n; i += stride)
        x[i * incx] = value;
}

/* y = alpha x + beta y, as BLAS: x is not read when alpha == 0, y not when beta == 0. */
__kernel void xo_axpby(const ulong n, const real alpha, __global const real *x, const ulong x_off,
                       const ulong incx, const real beta, __global real *y, const ulong y_off,
                       const ulong incy)
{
    const ulong stride = get_global_size(0);
    x += x_off;
    y += y_off;
    for (ulong i = get_global_id(0); i < n; i += stride) {
        real r;
        if (alpha == (real)0)
            r = beta != (real)0 ? beta * y[i * incy] : (real)0;
        else
            r = beta != (real)0 ? alpha * x[i * incx] + beta * y[i * incy] : alpha * x[i * incx];
        y[i * incy] = r;
    }
}

/* x[i*incx] *= s[s_off]: the factor is read here, on the device. */
__kernel void xo_scale_by(const ulong n, __global const real *s, const ulong s_off,
                          __global real *x, const ulong x_off, const ulong incx)
{
    const ulong stride = get_global_size(0);
    const real f = s[s_off];
    x += x_off;
    for (ulong i = get_global_id(0); i < n; i += stride)
        x[i * incx] *= f;
}

/* c[o*ldc + i] = act(v + bias[j]) over an outer x inner matrix (inner contiguous),
 * where v = scale * c (read_c != 0) or 0 (c not read), and j, the logical column, is
 * the inner index when bias_inner (row-major) and the outer one otherwise. No bias when
 * has_bias == 0 (bias may then be NULL). Dimension 0 runs over inner, 1 over outer.
 * bias: act = XO_IDENTITY, scale = 1; gemm_bias_act: the pass after the product. */
__kernel void xo_bias_act(const int act, const ulong outer, const ulong inner,
                          __global real *c, const ulong c_off, const ulong ldc,
                          const int read_c, const real scale,
                          const int has_bias, const int bias_inner,
                          __global const real *bias, const ulong bias_off)
{
    const ulong outer_stride = get_global_size(1), inner_stride = get_global_size(0);
    c += c_off;
    if (has_bias) bias += bias_off;
    for (ulong o = get_global_id(1); o < outer; o += outer_stride) {
        __global real *line = c + o * ldc;
        const real bo = has_bias && !bias_inner ? bias[o] : (real)0;
        for (ulong i = get_global_id(0); i < inner; i += inner_stride) {
            real v = read_c ? scale * line[i] : (real)0;
            v += has_bias ? (bias_inner ? bias[i] : bo) : (real)0;
            line[i] = xo_unary_fn(act, v);
        }
    }
}

/* Row-major a[i*lda + j] *= factor for i < rows, j < cols (dimension 0 over columns,
 * 1 over rows). A factor of 0 writes zeros without reading a (BLAS: beta == 0 never
 * reads C or y; crossover's scal by 0 writes zeros over NaN and Inf). gemm and gemv with alpha == 0 (C = beta*C,
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
