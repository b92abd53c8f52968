/* One call of every op kind of the op table (XO_OP_MAP), for the plan tests: each case
 * issues its op on the buffers it is given (b[0..3], XOT_PLAN_ELEMS elements of the
 * dtype each; for softmax_xent b[1] holds int32 labels below XOT_PLAN_COLS). A new op
 * kind without a case here fails plan_every_op. */
#ifndef TEST_PLAN_CASES_H
#define TEST_PLAN_CASES_H

#include <crossover.h>
#include <crossover/plugin.h>

#define XOT_PLAN_ELEMS 256
#define XOT_PLAN_ROWS 5
#define XOT_PLAN_COLS 7
#define XOT_PLAN_K 3
#define XOT_PLAN_N 20

/* dt: XO_F32 or XO_F64; sub: a sub-op choice (taken modulo the kind's sub-ops). */
typedef xo_status (*xot_plan_case)(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4]);
extern const xot_plan_case xot_plan_cases[XO_OP_KIND_COUNT];

#endif
