/* The element-wise formulas of plugins/common/xo_formulas.h in host C, in the precision of
 * their argument, for the test code that computes them as a device would (the CUDA
 * stand-in driver, the OpenCL chain test's model); xo_test.c's references stay written out
 * apart on purpose. */
#ifndef XO_TEST_FORMULAS_H
#define XO_TEST_FORMULAS_H

#include <math.h>

#define XO_FN_EXP(x) _Generic((x), float: expf, default: exp)(x)
#define XO_FN_TANH(x) _Generic((x), float: tanhf, default: tanh)(x)
#define XO_FN_SQRT(x) _Generic((x), float: sqrtf, default: sqrt)(x)
#define XO_FN_RSQRT(x) (1 / XO_FN_SQRT(x))
#define XO_FN_LOG(x) _Generic((x), float: logf, default: log)(x)
#define XO_FN_FABS(x) _Generic((x), float: fabsf, default: fabs)(x)
#include "../plugins/common/xo_formulas.h"

#endif
