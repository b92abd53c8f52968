/* One call of every op kind of the op table (XO_OP_MAP), and helpers, for the plan
 * tests (test_plan.c, test_plan_place.c): each case
 * issues its op on the buffers it is given (b[0..3], XOT_PLAN_ELEMS elements of the
 * dtype each; for softmax_xent b[1] holds int32 labels below XOT_PLAN_COLS). A new op
 * kind without a case here fails plan_every_op. */
#ifndef TEST_PLAN_CASES_H
#define TEST_PLAN_CASES_H

#include "xo_test.h"
#include "mock_plugin.h"

#define XOT_PLAN_ELEMS 256
#define XOT_PLAN_ROWS 5
#define XOT_PLAN_COLS 7
#define XOT_PLAN_K 3
#define XOT_PLAN_N 20

/* dt: XO_F32 or XO_F64; sub: a sub-op choice (taken modulo the kind's sub-ops). */
typedef xo_status (*xot_plan_case)(xo_context *ctx, xo_dtype dt, int sub, xo_buffer *const b[4]);
extern const xot_plan_case xot_plan_cases[XO_OP_KIND_COUNT];

/* ---- helpers ---- */

/* A mock fast enough that most ops could go either way. */
extern const xo_mock_config xot_plan_fast_mock;
/* A context with the mock (model cfg) as its last device, the core told its profile. */
xo_context *xot_plan_context(const xo_mock_config *cfg, int *mock);
void xot_plan_done(xo_context *ctx); /* destroy it, uninstall the mock */
/* Device d's statistics after xo_finish. */
xo_stats xot_plan_stats(xo_context *ctx, int d);

/* Four buffers of XOT_PLAN_ELEMS elements of random data (seeded), b[1] int32 labels when
 * asked (softmax_xent). */
#define XOT_TWIN_BUFS 4
typedef struct xot_twin {
    xo_buffer *b[XOT_TWIN_BUFS];
    size_t bytes;
} xot_twin;
void xot_twin_make(xo_context *ctx, xot_twin *t, xo_dtype dt, uint64_t seed, int labels_in_1);
void xot_twin_free(xot_twin *t);
/* Every buffer of a and b holds the same values (bit-exact when `exact`). */
void xot_twin_compare(const xot_twin *a, const xot_twin *b, xo_dtype dt, int exact, const char *what);

/* The plan of one step (a sequence of calls on b[0..3]) captured on ctx. */
typedef xo_status (*xot_plan_step)(xo_context *ctx, xo_buffer *const b[4]);
xo_plan *xot_plan_capture(xo_context *ctx, xot_plan_step step, xo_buffer *const b[4]);
/* The end of a plan-against-eager test: the plan (may be NULL) and both twins freed,
 * then xot_plan_done. */
void xot_plan_finish(xo_context *ctx, xo_plan *plan, xot_twin *e, xot_twin *p);

#endif
