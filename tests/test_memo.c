/* The call memo (core/place/xo_dispatch.h): a call repeated with the same arguments and
 * buffers runs as its last fast-path run did, neither checked nor keyed again. These tests
 * repeat memo'd ops (bias, unary, binary, binary_scalar) on a context with the mock device
 * and check, against plain loops, that everything the memo skips is still honoured when
 * it changes: a buffer moved to another device, the device policy (xo_set_device), a
 * profile that makes another device cheaper, a buffer destroyed and another created
 * (perhaps at the same address) of another size, a capture, and the counters. */
#include "xo_test.h"
#include "mock_plugin.h"
#include "test_plan_cases.h"
#include "xo_dispatch.h" /* XO_REFRESH_NANO */

#include <math.h>
#include <stdio.h>
#include <string.h>

#define N 64
#define REPS 40 /* past the learning calls (8): the fast path, then the memo */

typedef struct memo_case {
    xo_buffer *x, *bias, *y;
    float hx[N], hbias[N], hy[N];
} memo_case;

static void make_case(xo_context *ctx, memo_case *c)
{
    xot_fill_f(c->hx, N, 1, -1, 1);
    xot_fill_f(c->hbias, N, 2, -0.5, 0.5);
    xot_fill_f(c->hy, N, 3, -1, 1);
    c->x = xot_buffer(ctx, c->hx, sizeof c->hx);
    c->bias = xot_buffer(ctx, c->hbias, sizeof c->hbias);
    c->y = xot_buffer(ctx, c->hy, sizeof c->hy);
}

static void free_case(memo_case *c)
{
    xo_buffer_destroy(c->x);
    xo_buffer_destroy(c->bias);
    xo_buffer_destroy(c->y);
}

/* One step of four memo'd ops, on the buffers and on the host twins alike:
 * y = tanh(x + bias) * x * 0.5 (bias added in place to y's copy of x). */
static void step(xo_context *ctx, memo_case *c)
{
    xot_assert_ok(xo_sbinary(ctx, XO_ADD, N, c->x, 0, c->bias, 0, c->y, 0));
    xot_assert_ok(xo_sbias(ctx, 1, N, c->y, 0, N, c->bias, 0));
    xot_assert_ok(xo_sunary(ctx, XO_TANH, N, c->y, 0, c->y, 0));
    xot_assert_ok(xo_sbinary(ctx, XO_MUL, N, c->y, 0, c->x, 0, c->y, 0));
    xot_assert_ok(xo_sbinary_scalar(ctx, XO_MUL, N, c->y, 0, 0.5f, c->y, 0));
    for (int i = 0; i < N; i++)
        c->hy[i] = tanhf(c->hx[i] + 2.0f * c->hbias[i]) * c->hx[i] * 0.5f;
}

static void check(memo_case *c, const char *what)
{
    float got[N];
    xot_assert_ok(xo_buffer_read(c->y, 0, got, sizeof got));
    xot_assert_close_f(got, c->hy, N, what);
}

/* A context forced to the CPU (the mock its last device) with a memo case on it. */
static xo_context *cpu_case(memo_case *c, int *mock)
{
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, mock);
    xot_assert_ok(xo_set_device(ctx, "cpu"));
    make_case(ctx, c);
    return ctx;
}

/* A context with the mock as its last device (spec: its device spec, 32 bytes) and a
 * memo case on it. */
static xo_context *mock_case(memo_case *c, int *mock, char *spec)
{
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, mock);
    xot_device_spec(ctx, *mock, spec, 32);
    make_case(ctx, c);
    return ctx;
}

static uint64_t ops_on(xo_context *ctx, int d) { return xot_plan_stats(ctx, d).ops; }

/* Repeated steps count every op once, on the CPU, and give the loops' results; the
 * steps past the learning calls take the memo (the fast path's counts are its own). */
static void memo_counts_and_results(void **state)
{
    (void)state;
    int mock;
    memo_case c;
    xo_context *ctx = cpu_case(&c, &mock);
    xot_assert_ok(xo_stats_reset(ctx));
    for (int r = 0; r < REPS; r++) {
        step(ctx, &c);
        check(&c, "repeated step");
    }
    assert_int_equal(ops_on(ctx, 0), 5 * REPS);
    assert_int_equal(ops_on(ctx, mock), 0);
    xot_assert_decision(ctx, "sbinary_scalar", 0, 1);
    free_case(&c);
    xot_plan_done(ctx);
}

/* The device policy changes between memo hits: every op follows it at once. */
static void memo_follows_the_device_policy(void **state)
{
    (void)state;
    int mock;
    char spec[32];
    memo_case c;
    xo_context *ctx = mock_case(&c, &mock, spec);
    for (int round = 0; round < 3; round++) {
        xot_assert_ok(xo_set_device(ctx, "cpu"));
        for (int r = 0; r < REPS; r++)
            step(ctx, &c);
        xot_assert_ok(xo_set_device(ctx, spec));
        xot_assert_ok(xo_stats_reset(ctx));
        step(ctx, &c);
        assert_int_equal(ops_on(ctx, mock), 5);
        assert_int_equal(ops_on(ctx, 0), 0);
        xot_assert_decision(ctx, "sbinary_scalar", mock, 1);
        check(&c, "forced to the mock after memo hits");
    }
    free_case(&c);
    xot_plan_done(ctx);
}

/* A buffer current only on the mock (written there) between memo hits: the next call
 * brings it home and gives the loop's result. */
static void memo_sees_residency(void **state)
{
    (void)state;
    int mock;
    char spec[32];
    memo_case c;
    xo_context *ctx = mock_case(&c, &mock, spec);
    for (int round = 0; round < 3; round++) {
        xot_assert_ok(xo_set_device(ctx, "cpu"));
        for (int r = 0; r < REPS; r++)
            step(ctx, &c);
        xot_assert_ok(xo_set_device(ctx, spec));
        xot_assert_ok(xo_sscal(ctx, N, -1.0f, c.bias, 0, 1)); /* bias now current on the mock only */
        for (int i = 0; i < N; i++)
            c.hbias[i] = -c.hbias[i];
        xot_assert_ok(xo_finish(ctx));
        assert_int_equal(xo__valid(c.bias), 1u << mock);
        xot_assert_ok(xo_set_device(ctx, "cpu"));
        step(ctx, &c);
        check(&c, "bias moved to the mock between memo hits");
    }
    free_case(&c);
    xot_plan_done(ctx);
}

/* A new profile (as a calibration publishes one): the op's entry re-evaluates at its
 * refresh interval, memo or not, and its estimates from then on are the new profile's
 * (where the op then runs is the corrected model's: measured times correct a profile). */
static void memo_follows_a_profile_change(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
    memo_case c;
    make_case(ctx, &c);
    xot_assert_ok(xo_set_device(ctx, "cpu"));
    xo__profile slow = ctx->dev[0].profile;
    slow.info.launch_us = 1e4;
    for (int k = 0; k < XO_OP_KIND_COUNT; k++)
        slow.op_launch_us[k] = 1e4;
    xo_decision d;
    for (int r = 0; r < 2 * XO_REFRESH_NANO; r++) {
        if (r == REPS) { /* the memo has the call by now */
            xot_assert_ok(xo_last_decision(ctx, &d));
            assert_true(d.est[0].launch_us < 1e3);
            xo__device_set_profile(ctx, 0, &slow);
        }
        xot_assert_ok(xo_sbinary_scalar(ctx, XO_MUL, N, c.x, 0, 0.5f, c.y, 0));
    }
    xot_assert_ok(xo_last_decision(ctx, &d));
    if (!(d.est[0].launch_us >= 1e4))
        fail_msg("the CPU's launch after the profile change: %g us", d.est[0].launch_us);
    for (int i = 0; i < N; i++)
        c.hy[i] = c.hx[i] * 0.5f;
    check(&c, "after the profile change");
    free_case(&c);
    xot_plan_done(ctx);
}

/* The bias buffer destroyed and a smaller one created (often at the same address): the
 * same arguments are checked again and refused; a buffer of the old size works. */
static void memo_checks_a_new_buffer(void **state)
{
    (void)state;
    int mock;
    memo_case c;
    xo_context *ctx = cpu_case(&c, &mock);
    for (int round = 0; round < 4; round++) {
        for (int r = 0; r < REPS; r++)
            xot_assert_ok(xo_sbias(ctx, 1, N, c.y, 0, N, c.bias, 0));
        xo_buffer_destroy(c.bias);
        xo_buffer *small = xot_buffer(ctx, c.hbias, sizeof(float) * N / 2);
        assert_int_equal(xo_sbias(ctx, 1, N, c.y, 0, N, small, 0), XO_ERR_INVALID_ARGUMENT);
        if (!xot_contains(xo_last_error(), "bias"))
            fail_msg("the message names the bias: %s", xo_last_error());
        xo_buffer_destroy(small);
        c.bias = xot_buffer(ctx, c.hbias, sizeof c.hbias);
    }
    float want[N], got[N];
    memcpy(want, c.hy, sizeof want);
    xot_assert_ok(xo_buffer_write(c.y, 0, want, sizeof want));
    for (int r = 0; r < REPS; r++) {
        xot_assert_ok(xo_sbias(ctx, 1, N, c.y, 0, N, c.bias, 0));
        for (int i = 0; i < N; i++)
            want[i] += c.hbias[i];
    }
    xot_assert_ok(xo_buffer_read(c.y, 0, got, sizeof got));
    xot_assert_close_f(got, want, N, "bias on a new buffer");
    free_case(&c);
    xot_plan_done(ctx);
}

/* A capture records a memo'd call instead of running it. */
static void memo_yields_to_a_capture(void **state)
{
    (void)state;
    int mock;
    memo_case c;
    xo_context *ctx = cpu_case(&c, &mock);
    for (int r = 0; r < REPS; r++)
        step(ctx, &c);
    xot_assert_ok(xo_stats_reset(ctx));
    xot_assert_ok(xo_capture_begin(ctx));
    xot_assert_ok(xo_sbias(ctx, 1, N, c.y, 0, N, c.bias, 0));
    xo_plan *plan;
    xot_assert_ok(xo_capture_end(ctx, &plan));
    assert_int_equal(ops_on(ctx, 0), 0); /* recorded, not run */
    check(&c, "after the capture");
    xot_assert_ok(xo_plan_run(plan));
    for (int i = 0; i < N; i++)
        c.hy[i] += c.hbias[i];
    check(&c, "the plan ran it");
    assert_int_equal(ops_on(ctx, 0), 1);
    xo_plan_destroy(plan);
    free_case(&c);
    xot_plan_done(ctx);
}

/* Every memo's entry holds the memo's key: a memo hit no longer compares them, so the
 * full path, when it gives an entry to another key, forgets the entry's memos. */
static void assert_memos_name_their_entries(void)
{
    for (int i = 0; i < 1 << XO_MEMO_SETS_LOG2; i++)
        for (int w = 0; w < 2; w++) {
            const xo__memo *k = &xo__tl.memo[i].way[w];
            if (k->e)
                assert_memory_equal(k->e->key, k->key, sizeof k->key);
        }
}

/* Ops of 3000 other shapes between memo hits replace every entry of the thread's
 * decision cache (512): the memos of those entries are forgotten, the next steps are
 * checked and placed again, then memo'd again, with the loops' results and counts. */
static void memo_forgets_a_replaced_entry(void **state)
{
    (void)state;
    int mock;
    memo_case c;
    xo_context *ctx = cpu_case(&c, &mock);
    enum { SHAPES = 3000 };
    xo_buffer *big = xot_buffer(ctx, NULL, SHAPES * sizeof(float));
    for (int round = 0; round < 3; round++) {
        for (int r = 0; r < REPS; r++)
            step(ctx, &c);
        check(&c, "memo'd steps");
        assert_memos_name_their_entries();
        for (size_t n = 1; n <= SHAPES; n++)
            xot_assert_ok(xo_sunary(ctx, XO_ABS, n, big, 0, big, 0));
        assert_memos_name_their_entries();
        xot_assert_ok(xo_stats_reset(ctx));
        for (int r = 0; r < REPS; r++) {
            step(ctx, &c);
            check(&c, "steps after the cache was replaced");
            assert_memos_name_their_entries();
        }
        assert_int_equal(ops_on(ctx, 0), 5 * REPS);
        assert_int_equal(ops_on(ctx, mock), 0);
    }
    xo_buffer_destroy(big);
    free_case(&c);
    xot_plan_done(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(memo_counts_and_results),
        cmocka_unit_test(memo_follows_the_device_policy),
        cmocka_unit_test(memo_sees_residency),
        cmocka_unit_test(memo_follows_a_profile_change),
        cmocka_unit_test(memo_checks_a_new_buffer),
        cmocka_unit_test(memo_yields_to_a_capture),
        cmocka_unit_test(memo_forgets_a_replaced_entry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
