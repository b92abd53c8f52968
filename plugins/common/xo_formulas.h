/* xo_formulas.h: the scalar formula of every xo_unary_op and xo_binary_op, one line
 * each, in the subset of C that C99, OpenCL C and CUDA C++ share. Every plugin's
 * elementwise kernels expand these (the CPU's loops, kernels_cl/elementwise.cl, the
 * CUDA kernels), iterating XO_UNARY_OP_MAP / XO_BINARY_OP_MAP of crossover.h, so a new
 * element-wise op is one row in the map plus one line here.
 *
 * Where a formula is expanded, the including file has xo_real, the element type of x
 * (float or double), in scope, and defines the functions for it: XO_FN_EXP, XO_FN_TANH,
 * XO_FN_SQRT, XO_FN_RSQRT, XO_FN_LOG, XO_FN_FABS. Constants are typed: XO_REAL(v) is v
 * in the element type (a bare 0.5 would make float math double); small integers may stay
 * int literals, which the usual arithmetic conversions make the element type (OpenCL's
 * float programs make XO_REAL(v) the literal v##f: no double without cl_khr_fp64). A value a
 * formula needs more than once is a named sub-expression (XO_S_*), the form of a local
 * that expressions in all three languages share; compilers evaluate it once.
 * (For OpenCL the host prepends this file and the maps to each program's source.) */
#ifndef XO_FORMULAS_H
#define XO_FORMULAS_H

#define XO_REAL(v) ((xo_real)(v))

/* Constants. */
#define XO_K_HALF        XO_REAL(0.5)
#define XO_K_SQRT_2_PI   XO_REAL(0.79788456080286535588) /* sqrt(2 / pi) */
#define XO_K_GELU_CUBIC  XO_REAL(0.044715)               /* GELU's tanh form: x + 0.044715 x^3 */

/* Named sub-expressions. GELU(x) = x (1 + t) / 2 with t = tanh(u), u = sqrt(2/pi) (x +
 * 0.044715 x^3); its derivative is (1 + t) / 2 + x (1 - t^2) u' / 2 = (1 + t) (1 + x (1 - t)
 * u') / 2, with u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2). */
#define XO_S_GELU_TANH(x) XO_FN_TANH(XO_K_SQRT_2_PI * ((x) + XO_K_GELU_CUBIC * (x) * (x) * (x)))
#define XO_S_GELU_DU(x)   (XO_K_SQRT_2_PI * (1 + 3 * XO_K_GELU_CUBIC * (x) * (x)))

#define XO_F_RELU(x)         ((x) > 0 ? (x) : 0)
#define XO_F_TANH(x)         XO_FN_TANH(x)
#define XO_F_SIGMOID(x)      (1 / (1 + XO_FN_EXP(-(x))))
#define XO_F_EXP(x)          XO_FN_EXP(x)
#define XO_F_NEG(x)          (-(x))
#define XO_F_SQUARE(x)       ((x) * (x))
#define XO_F_RELU_GRAD(x)    ((x) > 0 ? 1 : 0)
#define XO_F_TANH_GRAD(x)    (1 - (x) * (x))
#define XO_F_SIGMOID_GRAD(x) ((x) * (1 - (x)))
#define XO_F_SQRT(x)         XO_FN_SQRT(x)
#define XO_F_RSQRT(x)        XO_FN_RSQRT(x)
#define XO_F_LOG(x)          XO_FN_LOG(x)
#define XO_F_ABS(x)          XO_FN_FABS(x)
#define XO_F_RECIPROCAL(x)   (1 / (x))
#define XO_F_IDENTITY(x)     (x)
#define XO_F_GELU(x)         (XO_K_HALF * (x) * (1 + XO_S_GELU_TANH(x)))
#define XO_F_GELU_GRAD(x)    (XO_K_HALF * (1 + XO_S_GELU_TANH(x)) * (1 + (x) * (1 - XO_S_GELU_TANH(x)) * XO_S_GELU_DU(x)))
#define XO_F_SILU(x)         ((x) * XO_F_SIGMOID(x))
#define XO_F_SILU_GRAD(x)    (XO_F_SIGMOID(x) * (1 + (x) * (1 - XO_F_SIGMOID(x))))

#define XO_F_ADD(a, b) ((a) + (b))
#define XO_F_SUB(a, b) ((a) - (b))
#define XO_F_MUL(a, b) ((a) * (b))
#define XO_F_DIV(a, b) ((a) / (b))
/* A NaN in either operand gives NaN (x != x only for NaN), so a max reduction folding
 * with it gives NaN wherever the NaN stands, in whatever order a device folds; on ties it
 * is b. Every max of every device is this one, element-wise and in reductions. */
#define XO_F_MAX(a, b) ((a) > (b) || (a) != (a) ? (a) : (b))

#endif
