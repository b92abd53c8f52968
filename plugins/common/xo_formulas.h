/* xo_formulas.h: the scalar formula of every xo_unary_op and xo_binary_op, one line
 * each, in the subset of C that C99, OpenCL C and CUDA C++ share. Every plugin's
 * elementwise kernels expand these (the CPU's loops, kernels_cl/elementwise.cl, the
 * CUDA kernels), iterating XO_UNARY_OP_MAP / XO_BINARY_OP_MAP of crossover.h, so a new
 * element-wise op is one row in the map plus one line here.
 *
 * The including file defines the functions for the element type of x (float or
 * double): XO_FN_EXP, XO_FN_TANH, XO_FN_SQRT, XO_FN_RSQRT, XO_FN_LOG, XO_FN_FABS. The
 * constants are int literals, which the usual arithmetic conversions turn into the
 * element type in all three languages (a 1.0 would make float math double).
 * (For OpenCL the host prepends this file and the maps to each program's source.) */
#ifndef XO_FORMULAS_H
#define XO_FORMULAS_H

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

#define XO_F_ADD(a, b) ((a) + (b))
#define XO_F_SUB(a, b) ((a) - (b))
#define XO_F_MUL(a, b) ((a) * (b))
#define XO_F_DIV(a, b) ((a) / (b))
/* A NaN in either operand gives NaN (x != x only for NaN), so a max reduction folding
 * with it gives NaN wherever the NaN stands, in whatever order a device folds; on ties it
 * is b. Every max of every device is this one, element-wise and in reductions. */
#define XO_F_MAX(a, b) ((a) > (b) || (a) != (a) ? (a) : (b))

#endif
