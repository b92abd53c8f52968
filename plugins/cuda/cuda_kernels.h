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
    X(EPILOGUE, epilogue)           /* gemm_bias_act's pass over C                       */ \
    X(ARGMAX, argmax)               /* a block per row: the first largest column         */ \
    X(CHAIN, chain)                 /* an element-wise chain (xo_chain), interpreted     */

/* xo_chain_{f32,f64}: the "xo_chain" extra's interpreter kernel. Its one parameter is an
 * xo_cuda_chain_prog, by value (under the 4 KiB of kernel parameters every driver takes).
 * Element i (grid-stride) runs the steps in order, each step's result kept in a per-thread
 * array r[]; step k computes from inputs u and v:
 *   u, v   from[j] >= 0: r[from[j]]; else in[j][i] read from memory (in[j] == 0: unused)
 *   UNARY  f(u)          subop: xo_unary_op       BINARY        u (op) v   subop: xo_binary_op
 *   BINARY_SCALAR  u (op) alpha                   SCAL          alpha == 0 ? 0 : alpha u
 *   FILL   alpha                                  AXPY          alpha u + v
 *   AXPBY  ax = alpha == 0 ? 0 : alpha u; beta == 0 ? ax : ax + beta v
 *   COPY   u                                      SCALE_BY      u * in[1][0] (s, read whole)
 * and, where store, writes it to out[i]. Scalars are doubles here and converted to the
 * kernel's precision, as the single-op kernels receive them. The stand-in driver
 * (tests/test_cuda_mock_driver.c) interprets the same struct. */
#define XO_CUDA_CHAIN_STEPS 32
enum {
    XO_CUDA_CC_UNARY, XO_CUDA_CC_BINARY, XO_CUDA_CC_BINARY_SCALAR, XO_CUDA_CC_SCAL, XO_CUDA_CC_FILL,
    XO_CUDA_CC_AXPY, XO_CUDA_CC_AXPBY, XO_CUDA_CC_COPY, XO_CUDA_CC_SCALE_BY
};
typedef struct xo_cuda_chain_step {
    unsigned long long in[2]; /* device addresses of inputs read from memory (element 0 of the chain) */
    unsigned long long out;   /* device address of the output, where store */
    double alpha, beta;
    int code;                 /* XO_CUDA_CC_* */
    int subop;
    signed char from[2];      /* >= 0: the earlier step whose result input j is */
    unsigned char store;
    unsigned char pad_[5];
} xo_cuda_chain_step;
typedef struct xo_cuda_chain_prog {
    unsigned long long n;
    int nsteps;
    int pad_;
    xo_cuda_chain_step step[XO_CUDA_CHAIN_STEPS];
} xo_cuda_chain_prog;

#endif /* XO_CUDA_KERNELS_H */
