/* A plan's replay fast path (core/plan/plan_cpu.c): consecutive CPU ops run as one segment,
 * their buffers checked once and recorded once. Checked against the same calls issued
 * eagerly on twin buffers, with the mock device (mock_plugin.h) holding the only current
 * copy of some buffers before a run, so that the segment's checks decide. */
#include "xo_test.h"
#include "mock_plugin.h"
#include "test_plan_cases.h"
#include "xo_plan.h"

#include <stdio.h>
#include <string.h>

/* The five calls eagerly on the twin's buffers eb, then the plan: one count per recorded
 * op, all on the CPU. */
static void eager_then_plan(xo_context *ctx, int mock, xo_status (*calls)(xo_context *, xo_buffer *const[4]),
                            xo_buffer *const eb[4], xo_plan *plan)
{
    xot_assert_ok(calls(ctx, eb));
    xot_assert_ok(xo_finish(ctx));
    xot_assert_ok(xo_stats_reset(ctx));
    xot_assert_ok(xo_plan_run(plan));
    assert_int_equal(xot_plan_stats(ctx, 0).ops, 5);
    assert_int_equal(xot_plan_stats(ctx, mock).ops, 0);
}

/* The sequence: every op on the CPU, b[3] written whole before it is read; over SEQ
 * elements (the tanh over all of b[3]), under the CPU's shortest fused chain
 * (plan_fuse.c), so the ops stay unfused and form a segment. */
#define SEQ 64
static xo_status sequence(xo_context *ctx, xo_buffer *const b[4])
{
    xo_status st;
    if ((st = xo_saxpy(ctx, SEQ, 0.5f, b[0], 0, 1, b[2], 0, 1)) != XO_OK ||
        (st = xo_sscal(ctx, SEQ, 1.25f, b[2], 0, 1)) != XO_OK ||
        (st = xo_sunary(ctx, XO_TANH, XOT_PLAN_ELEMS, b[2], 0, b[3], 0)) != XO_OK ||
        (st = xo_sbinary(ctx, XO_MUL, SEQ, b[3], 0, b[1], 0, b[3], 0)) != XO_OK)
        return st;
    return xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 4, 4, 4, 1.0f, b[3], 0, 4, b[0], 0, 4, 0.5f,
                    b[2], 0, 4);
}

/* Make buffer b's only current copy the mock's (scal by 1 forced there). */
static void move_to(xo_context *ctx, int dev, xo_buffer *b)
{
    int was = ctx->forced;
    ctx->forced = dev;
    xot_assert_ok(xo_sscal(ctx, XOT_PLAN_ELEMS, 1.0f, b, 0, 1));
    xot_assert_ok(xo_finish(ctx));
    ctx->forced = was;
    assert_int_equal(xo__valid(b), 1u << dev);
}

static void plan_cpu_segment(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
    ctx->forced = 0;
    xot_twin e, p;
    xot_twin_make(ctx, &e, XO_F32, 3, 0);
    xot_twin_make(ctx, &p, XO_F32, 3, 0);
    xo_plan *plan = xot_plan_capture(ctx, sequence, p.b);
    assert_int_equal(plan->nsegs, 1); /* five CPU ops, one segment */
    assert_int_equal(plan->segs[0].len, 5);
    assert_int_equal(plan->steps[0].seg, 1);

    for (int run = 0; run < 4; run++) {
        char what[64];
        snprintf(what, sizeof what, "run %d", run);
        /* run 1: b[3] (written whole before read) only on the mock: the segment runs and
         * leaves it current on the host only. run 2: b[0] (read) only on the mock: the
         * segment is not ready; its ops run one by one and bring b[0] home. run 3: b[1],
         * read after b[3] was written, only on the mock. */
        if (run == 1) {
            move_to(ctx, mock, p.b[3]);
            move_to(ctx, mock, e.b[3]);
        } else if (run == 2) {
            move_to(ctx, mock, p.b[0]);
            move_to(ctx, mock, e.b[0]);
        } else if (run == 3) {
            move_to(ctx, mock, p.b[1]);
            move_to(ctx, mock, e.b[1]);
        }
        eager_then_plan(ctx, mock, sequence, e.b, plan);
        /* (b[0] and b[1] are only read: after run 2 and 3 only the spans read are current on
         * the host, residency.c) */
        assert_int_equal(xo__valid(p.b[2]), 1u); /* written: current on the host only */
        assert_int_equal(xo__valid(p.b[3]), 1u);
        xot_twin_compare(&p, &e, XO_F32, 0, what);
    }
    xot_plan_finish(ctx, plan, &e, &p);
}

/* A small model's forward pass: two gemms, each with its epilogue (bias and tanh, then
 * bias: gemm_bias_act, plan_fuse.c), as one segment of five recorded ops. */
static xo_status two_layers(xo_context *ctx, xo_buffer *const b[4])
{
    xo_status st;
    if ((st = xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 8, 8, 4, 1.0f, b[0], 0, 4, b[1], 0, 8, 0.0f,
                       b[2], 0, 8)) != XO_OK ||
        (st = xo_sbias(ctx, 8, 8, b[2], 0, 8, b[3], 0)) != XO_OK ||
        (st = xo_sunary(ctx, XO_TANH, 64, b[2], 0, b[2], 0)) != XO_OK ||
        (st = xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 8, 4, 8, 1.0f, b[2], 0, 8, b[1], 64, 4, 0.0f,
                       b[0], 128, 4)) != XO_OK)
        return st;
    return xo_sbias(ctx, 8, 4, b[0], 128, 4, b[3], 64);
}

/* Run 0 as it was captured; before run 1 the bias (read) is current on the mock only, so
 * the segment is not ready and its gemms run one by one; run 2 as run 0 again. Each run
 * counts five ops on the CPU and gives what the calls give eagerly. */
static void plan_epilogue_segment(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
    ctx->forced = 0;
    xot_twin e, p;
    xot_twin_make(ctx, &e, XO_F32, 5, 0);
    xot_twin_make(ctx, &p, XO_F32, 5, 0);
    xo_plan *plan = xot_plan_capture(ctx, two_layers, p.b);
    char text[2048];
    xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
    if (!xot_contains(text, "plan: 5 ops in 2 steps"))
        fail_msg("two gemms with their epilogues:\n%s", text);
    assert_int_equal(plan->nsegs, 1);
    assert_int_equal(plan->segs[0].first, 0);
    assert_int_equal(plan->segs[0].len, 5);
    for (int run = 0; run < 3; run++) {
        char what[64];
        snprintf(what, sizeof what, "run %d", run);
        if (run == 1) {
            move_to(ctx, mock, p.b[3]);
            move_to(ctx, mock, e.b[3]);
        }
        eager_then_plan(ctx, mock, two_layers, e.b, plan);
        assert_int_equal(xo__valid(p.b[2]), 1u); /* written: current on the host only */
        assert_int_equal(xo__valid(p.b[0]), 1u);
        xot_twin_compare(&p, &e, XO_F32, 0, what);
    }
    xot_plan_finish(ctx, plan, &e, &p);
}

/* A recorded write or an op on another device ends a segment; XO_PLAN=eager takes none. */
static void plan_segments_split(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
    ctx->forced = 0;
    xot_twin p;
    xot_twin_make(ctx, &p, XO_F32, 4, 0);
    float host[XOT_PLAN_ELEMS];
    for (int i = 0; i < XOT_PLAN_ELEMS; i++)
        host[i] = (float)i / XOT_PLAN_ELEMS;
    xot_assert_ok(xo_capture_begin(ctx));
    xot_assert_ok(sequence(ctx, p.b));
    xot_assert_ok(xo_buffer_write(p.b[1], 0, host, sizeof host));
    xot_assert_ok(sequence(ctx, p.b));
    xot_assert_ok(xo_sscal(ctx, XOT_PLAN_ELEMS, 2.0f, p.b[0], 0, 1)); /* alone: no segment */
    xo_plan *plan;
    xot_assert_ok(xo_capture_end(ctx, &plan));
    assert_int_equal(plan->nsegs, 2);
    assert_int_equal(plan->segs[0].first, 0);
    assert_int_equal(plan->segs[1].first, 6);
    assert_int_equal(plan->segs[1].len, 6);
    xot_assert_ok(xo_stats_reset(ctx));
    xot_assert_ok(xo_plan_run(plan));
    assert_int_equal(xot_plan_stats(ctx, 0).ops, 11);
    xo_plan_destroy(plan);
    xot_twin_free(&p);
    xot_plan_done(ctx);
}

/* A context with the mock under XO_FAULTS=`faults` (read at creation), and twin buffers
 * (seeded) for an eager run and a plan. */
static xo_context *faulty_context(const char *faults, uint64_t seed, int *mock, xot_twin *e, xot_twin *p)
{
    setenv("XO_FAULTS", faults, 1);
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, mock);
    unsetenv("XO_FAULTS");
    xot_twin_make(ctx, e, XO_F32, seed, 0);
    xot_twin_make(ctx, p, XO_F32, seed, 0);
    return ctx;
}

/* 1 when the plan's description shows `what`. */
static int plan_shows(const xo_plan *plan, const char *what)
{
    char text[2048];
    xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
    return xot_contains(text, what);
}

/* The plan of `step` captured with the mock forced (then no device forced), its
 * description showing `shows`. */
static xo_plan *captured_on_mock(xo_context *ctx, int mock, xot_plan_step step, xo_buffer *const b[4],
                                 const char *shows)
{
    ctx->forced = mock;
    xo_plan *plan = xot_plan_capture(ctx, step, b);
    assert_true(plan_shows(plan, shows));
    ctx->forced = 0;
    return plan;
}

/* A device that fails during a run: the op completes elsewhere (data intact) and the plan
 * is placed again without that device, so later runs neither fail over op by op nor
 * change their results. */
static void plan_replaced_after_fault(void **state)
{
    (void)state;
    int mock;
    xot_twin e, p;
    xo_context *ctx = faulty_context("mock.launch@*", 8, &mock, &e, &p);
    xo_plan *plan = captured_on_mock(ctx, mock, sequence, p.b, "(mock)");
    xot_assert_ok(xo_stats_reset(ctx));
    for (int run = 0; run < 3; run++) {
        xot_assert_ok(sequence(ctx, e.b));
        xot_assert_ok(xo_plan_run(plan));
        xot_twin_compare(&p, &e, XO_F32, 0, "re-placed plan");
    }
    xo_stats s0 = xot_plan_stats(ctx, 0), s1 = xot_plan_stats(ctx, mock);
    assert_int_equal(s1.fallbacks, 5); /* the first run's five ops; then none goes there */
    assert_int_equal(s1.ops, 0);
    assert_int_equal(s0.ops, 30);      /* the plan's 3 x 5 and the eager twin's 3 x 5 */
    assert_int_equal(plan->replaced, 1);
    assert_false(plan_shows(plan, "(mock)"));
    /* After 16 runs the mock gets another chance: run 17 places it back, run 18 fails
     * there and leaves it out for 32 runs. */
    for (int run = 3; run < 20; run++) {
        xot_assert_ok(sequence(ctx, e.b));
        xot_assert_ok(xo_plan_run(plan));
    }
    xot_twin_compare(&p, &e, XO_F32, 0, "re-placed plan, 20 runs");
    s1 = xot_plan_stats(ctx, mock);
    assert_int_equal(s1.fallbacks, 10);
    assert_int_equal(plan->replaced, 3);
    xot_plan_finish(ctx, plan, &e, &p);
}

/* A gemm with its epilogue (bias, tanh: one gemm_bias_act) on a device that fails: placed
 * again, the plan runs the recorded ops, each once (the epilogue is not applied twice). */
static xo_status epilogue_step(xo_context *ctx, xo_buffer *const b[4])
{
    xo_status st = xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 8, 8, 4, 1.0f, b[0], 0, 4, b[1], 0, 8,
                            0.0f, b[2], 0, 8);
    if (st == XO_OK)
        st = xo_sbias(ctx, 8, 8, b[2], 0, 8, b[3], 0);
    return st == XO_OK ? xo_sunary(ctx, XO_TANH, 64, b[2], 0, b[2], 0) : st;
}

static void plan_epilogue_replaced(void **state)
{
    (void)state;
    int mock;
    xot_twin e, p;
    xo_context *ctx = faulty_context("mock.launch@*", 11, &mock, &e, &p);
    xo_plan *plan = captured_on_mock(ctx, mock, epilogue_step, p.b, "sgemm+sbias+sunary"); /* one gemm_bias_act */
    for (int run = 0; run < 20; run++) { /* re-placed after run 1, retried at 17, again at 18 */
        xot_assert_ok(epilogue_step(ctx, e.b));
        xot_assert_ok(xo_plan_run(plan));
        char what[64];
        snprintf(what, sizeof what, "epilogue, run %d", run + 1);
        xot_twin_compare(&p, &e, XO_F32, 0, what);
    }
    assert_int_equal(plan->replaced, 3);
    xot_plan_finish(ctx, plan, &e, &p);
}

/* A step whose recorded read is of a buffer computed fresh each run from a recorded
 * write: x -> b[0], tanh -> b[2], b[2] * b[1] -> b[2], read b[2], then b[3] = -b[2]. */
static xo_status read_step(xo_context *ctx, xo_buffer *const b[4], const float *x, float *dst)
{
    xo_status st = xo_buffer_write(b[0], 0, x, XOT_PLAN_ELEMS * sizeof(float));
    if (st == XO_OK)
        st = xo_sunary(ctx, XO_TANH, XOT_PLAN_ELEMS, b[0], 0, b[2], 0);
    if (st == XO_OK)
        st = xo_sbinary(ctx, XO_MUL, XOT_PLAN_ELEMS, b[2], 0, b[1], 0, b[2], 0);
    if (st == XO_OK)
        st = xo_buffer_read(b[2], 0, dst, XOT_PLAN_ELEMS * sizeof(float));
    return st == XO_OK ? xo_sunary(ctx, XO_NEG, XOT_PLAN_ELEMS, b[2], 0, b[3], 0) : st;
}

/* Every download from the device fails: the run whose recorded read needs one still runs
 * every other step (the buffers then hold what the recorded calls give, the read's
 * destination is untouched, the device copy stays current, as an eager read leaves it)
 * and returns XO_ERR_DEVICE naming the read; the plan is then placed again without the
 * device, so the following runs fill the read and succeed. */
static void plan_read_fails(void **state)
{
    (void)state;
    int mock;
    xot_twin e, p;
    xo_context *ctx = faulty_context("mock.download@*", 12, &mock, &e, &p);
    float x[XOT_PLAN_ELEMS], got[XOT_PLAN_ELEMS], want[XOT_PLAN_ELEMS];
    ctx->forced = mock;
    xot_assert_ok(xo_capture_begin(ctx));
    xot_assert_ok(read_step(ctx, p.b, x, got));
    xo_plan *plan;
    xot_assert_ok(xo_capture_end(ctx, &plan));
    ctx->forced = 0;
    for (int run = 0; run < 4; run++) {
        xot_fill_f(x, XOT_PLAN_ELEMS, 100 + (uint64_t)run, -2, 2);
        memset(got, 0x7f, sizeof got);
        xot_assert_ok(read_step(ctx, e.b, x, want));
        xo_status st = xo_plan_run(plan);
        char what[64];
        snprintf(what, sizeof what, "run %d after a failed read", run + 1);
        if (run == 0) {
            xot_assert_status(st, XO_ERR_DEVICE);
            assert_true(xot_contains(xo_last_error(), "download"));
            for (size_t i = 0; i < sizeof got; i++)
                assert_int_equal(((unsigned char *)got)[i], 0x7f);
            assert_int_equal(xot_plan_stats(ctx, mock).ops, 3); /* the op after the read ran too */
        } else {
            xot_assert_ok(st);
            xot_assert_close_f(got, want, XOT_PLAN_ELEMS, what);
        }
        /* After the first run b[2] and b[3] are current on the device only, where no
         * download reaches them; each later run writes them whole on the host. */
        if (run > 0)
            xot_twin_compare(&p, &e, XO_F32, 0, what);
    }
    assert_int_equal(plan->replaced, 1);
    assert_false(plan_shows(plan, "(mock)"));
    xot_plan_finish(ctx, plan, &e, &p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plan_cpu_segment),
        cmocka_unit_test(plan_segments_split),
        cmocka_unit_test(plan_epilogue_segment),
        cmocka_unit_test(plan_replaced_after_fault),
        cmocka_unit_test(plan_epilogue_replaced),
        cmocka_unit_test(plan_read_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
