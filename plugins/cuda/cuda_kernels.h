/* The CUDA plugin's own kernels (kernels/xo_cuda_kernels.cu), one row each:
 *   X(ID, name)  ->  XO_CUDA_K_ID, and the extern "C" kernels xo_<name>_f32 / _f64.
 * The plugin's kernel enum and name table (cuda_internal.h, cuda_device.c) and the
 * stand-in driver's function list (tests/test_cuda_mock_driver.c) are expanded from
 * this list; a new kernel is one row here plus its pair in the .cu file. Depends on
 * nothing, so the stand-in driver can include it. */
#ifndef XO_CUDA_KERNELS_H
#define XO_CUDA_KERNELS_H

#define XO_CUDA_KERNEL_MAP(X)                                                                 \
    X(UNARY, unary)                 /* y = f(x), f from xo_formulas.h                    */ \
    X(BINARY, binary)               /* c = a (op) b                                      */ \
    X(BIAS, bias)                   /* row-major a[r][c] += bias[c]                      */ \
    X(REDUCE, reduce)               /* sum / max: partials per block, then one block     */ \
    X(SCALE, scale)                 /* a *= factor, 0 writes zeros (alpha == 0 paths)    */ \
    X(NRM2, nrm2)                   /* Blue's scaled sums: partials, then one block      */ \
    X(COPY, copy)                   /* strided y = x                                     */ \
    X(FILL, fill)                   /* strided x = value                                 */ \
    X(AXPBY, axpby)                 /* strided y = alpha x + beta y                      */ \
    X(BINARY_SCALAR, binary_scalar) /* c = a (op) s                                      */ \
    X(SCALE_BY, scale_by)           /* strided x *= s[0], s on the device                */ \
    X(SOFTMAX, softmax)             /* a block per row                                   */ \
    X(SOFTMAX_XENT, softmax_xent)   /* a block per row: loss and grad                    */ \
    X(REDUCE_ROWS, reduce_rows)     /* reduce_axis 1: a block per row                    */ \
    X(REDUCE_COLS, reduce_cols)     /* reduce_axis 0: 32 columns per block               */ \
    X(EPILOGUE, epilogue)           /* gemm_bias_act's pass over C                       */

#endif /* XO_CUDA_KERNELS_H */
