/* Plans: capture and replay. Every result is checked
 * against the same calls issued eagerly on twin buffers; the mock plugin (mock_plugin.h)
 * is the last device. Placement and fusion: test_plan_place.c. */
#include "xo_test.h"
#include "mock_plugin.h"
#include "test_plan_cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- every op of the op table, captured and replayed, on every device ---------------- */

static void plan_every_op(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
    int ndev = xo_device_count(ctx);
    for (int kind = 0; kind < XO_OP_KIND_COUNT; kind++) {
        if (!xot_plan_cases[kind])
            fail_msg("op kind %d (%s) has no case in test_plan_cases.c", kind, ctx ? "" : "");
        for (int dt = 0; dt < 2; dt++)
            for (int dev = -1; dev < ndev; dev++)
                for (int sub = 0; sub < 2; sub++) {
                    char what[128];
                    snprintf(what, sizeof what, "kind %d dtype %d device %d sub %d", kind, dt, dev, sub);
                    if (dev < 0)
                        xot_assert_ok(xo_set_device(ctx, "auto"));
                    else
                        ctx->forced = dev; /* white box: a device spec by index */
                    xot_twin eager, planned;
                    uint64_t seed = (uint64_t)(kind * 7 + dt * 3 + sub);
                    xot_twin_make(ctx, &eager, (xo_dtype)dt, seed, kind == XO_OP_SOFTMAX_XENT);
                    xot_twin_make(ctx, &planned, (xo_dtype)dt, seed, kind == XO_OP_SOFTMAX_XENT);
                    xot_assert_ok(xot_plan_cases[kind](ctx, (xo_dtype)dt, sub, eager.b));
                    xot_assert_ok(xot_plan_cases[kind](ctx, (xo_dtype)dt, sub, eager.b));
                    xot_assert_ok(xo_finish(ctx));
                    xot_assert_ok(xo_stats_reset(ctx));

                    xot_assert_ok(xo_capture_begin(ctx));
                    xot_assert_ok(xot_plan_cases[kind](ctx, (xo_dtype)dt, sub, planned.b));
                    xo_plan *plan = NULL;
                    xot_assert_ok(xo_capture_end(ctx, &plan));
                    assert_non_null(plan);
                    uint64_t ops = 0;
                    for (int d = 0; d < ndev; d++)
                        ops += xot_plan_stats(ctx, d).ops;
                    assert_int_equal(ops, 0); /* recorded, not run */
                    xot_assert_ok(xo_plan_run(plan));
                    xot_assert_ok(xo_plan_run(plan));
                    ops = 0;
                    for (int d = 0; d < ndev; d++)
                        ops += xot_plan_stats(ctx, d).ops;
                    assert_int_equal(ops, 2); /* one count per recorded op and run */
                    if (dev >= 0) { /* a forced device runs every op it can */
                        char text[2048];
                        xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
                        xo_stats on = xot_plan_stats(ctx, dev), cpu = xot_plan_stats(ctx, 0);
                        assert_true(on.ops == 2 || cpu.ops == 2);
                    }
                    xot_twin_compare(&planned, &eager, (xo_dtype)dt, kind == XO_OP_COPY || kind == XO_OP_FILL, what);
                    xo_plan_destroy(plan);
                    xot_twin_free(&eager);
                    xot_twin_free(&planned);
                }
    }
    xot_plan_done(ctx);
}

/* ---- random sequences: plan against eager, random forced devices --------------------- */

static void plan_random_sequences(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
    int ndev = xo_device_count(ctx);
    uint64_t rng = 12345;
    for (int seq = 0; seq < 24; seq++) {
        xo_dtype dt = (xo_dtype)(seq & 1);
        int dev = (int)(xot_uniform(&rng, 0, ndev + 1)) - 1; /* -1: auto */
        ctx->forced = dev;
        /* A pool of 6 buffers; each call takes 4 distinct ones. */
        xot_twin e[2], p[2];
        xot_twin_make(ctx, &e[0], dt, (uint64_t)seq, 0);
        xot_twin_make(ctx, &e[1], dt, (uint64_t)seq + 100, 0);
        xot_twin_make(ctx, &p[0], dt, (uint64_t)seq, 0);
        xot_twin_make(ctx, &p[1], dt, (uint64_t)seq + 100, 0);
        int len = 4 + (int)xot_uniform(&rng, 0, 16);
        int kinds[32], subs[32], pick[32][4];
        for (int i = 0; i < len; i++) {
            do
                kinds[i] = (int)xot_uniform(&rng, 0, XO_OP_KIND_COUNT);
            while (kinds[i] == XO_OP_SOFTMAX_XENT); /* its labels are ints */
            subs[i] = (int)xot_uniform(&rng, 0, 16);
            int used = 0;
            for (int r = 0; r < 4; r++) {
                int k;
                do
                    k = (int)xot_uniform(&rng, 0, 8);
                while (used >> k & 1);
                used |= 1 << k;
                pick[i][r] = k;
            }
        }
        xo_status eager_st[32];
        for (int i = 0; i < len; i++) {
            xo_buffer *b[4];
            for (int r = 0; r < 4; r++)
                b[r] = e[pick[i][r] / 4].b[pick[i][r] % 4];
            eager_st[i] = xot_plan_cases[kinds[i]](ctx, dt, subs[i], b);
        }
        xot_assert_ok(xo_capture_begin(ctx));
        for (int i = 0; i < len; i++) {
            xo_buffer *b[4];
            for (int r = 0; r < 4; r++)
                b[r] = p[pick[i][r] / 4].b[pick[i][r] % 4];
            assert_int_equal(xot_plan_cases[kinds[i]](ctx, dt, subs[i], b), eager_st[i]);
        }
        xo_plan *plan;
        xot_assert_ok(xo_capture_end(ctx, &plan));
        xot_assert_ok(xo_plan_run(plan));
        char what[64];
        snprintf(what, sizeof what, "sequence %d (device %d)", seq, dev);
        xot_twin_compare(&p[0], &e[0], dt, 0, what);
        xot_twin_compare(&p[1], &e[1], dt, 0, what);
        xo_plan_destroy(plan);
        for (int t = 0; t < 2; t++) {
            xot_twin_free(&e[t]);
            xot_twin_free(&p[t]);
        }
    }
    xot_plan_done(ctx);
}

/* ---- a training step: minibatch in, loss out, a per-run scalar through a buffer ------- */

/* One step of linear regression by SGD with a decaying rate: pred = X w, r = pred - y,
 * loss = r.r, w -= (lr_t * 2) X^T r, where lr_t comes from the host each step. */
#define TB 8  /* batch */
#define TF 4  /* features */
static void step_eager(xo_context *ctx, xo_buffer *X, xo_buffer *y, xo_buffer *w, xo_buffer *r, xo_buffer *g,
                       xo_buffer *lr, xo_buffer *loss, const float *xb, const float *yb, const float *lr_host,
                       float *loss_host)
{
    xot_assert_ok(xo_buffer_write(X, 0, xb, sizeof(float) * TB * TF));
    xot_assert_ok(xo_buffer_write(y, 0, yb, sizeof(float) * TB));
    xot_assert_ok(xo_buffer_write(lr, 0, lr_host, sizeof(float)));
    xot_assert_ok(xo_sgemv(ctx, XO_ROW_MAJOR, XO_NO_TRANS, TB, TF, 1.0f, X, 0, TF, w, 0, 1, 0.0f, r, 0, 1));
    xot_assert_ok(xo_saxpy(ctx, TB, -1.0f, y, 0, 1, r, 0, 1));
    xot_assert_ok(xo_sdot(ctx, TB, r, 0, 1, r, 0, 1, loss, 0));
    xot_assert_ok(xo_sgemv(ctx, XO_ROW_MAJOR, XO_TRANS, TB, TF, 2.0f, X, 0, TF, r, 0, 1, 0.0f, g, 0, 1));
    xot_assert_ok(xo_sscale_by(ctx, TF, lr, 0, g, 0, 1));
    xot_assert_ok(xo_saxpy(ctx, TF, -1.0f, g, 0, 1, w, 0, 1));
    xot_assert_ok(xo_buffer_read(loss, 0, loss_host, sizeof(float)));
}

static void plan_training_step(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
    xo_buffer *bufs[2][7];
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 7; i++)
            bufs[t][i] = xot_buffer(ctx, NULL, 64 * sizeof(float));
    float xb[TB * TF], yb[TB], lr, loss_plan = -1, loss_eager = -2;
    /* Capture with the host variables the plan will read and fill on every run. */
    xot_assert_ok(xo_capture_begin(ctx));
    xo_buffer **p = bufs[1];
    step_eager(ctx, p[0], p[1], p[2], p[3], p[4], p[5], p[6], xb, yb, &lr, &loss_plan);
    assert_true(loss_plan == -1.0f); /* a recorded read fills nothing yet */
    xo_plan *plan;
    xot_assert_ok(xo_capture_end(ctx, &plan));
    char text[4096];
    xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
    assert_true(xot_contains(text, "plan: 6 ops in 6 steps"));
    for (int it = 0; it < 20; it++) {
        xot_fill_f(xb, TB * TF, 1000 + (uint64_t)it, -1, 1);
        for (int i = 0; i < TB; i++)
            yb[i] = 0.5f * xb[i * TF] - 0.25f * xb[i * TF + 2] + 0.1f;
        lr = 0.1f / (1.0f + 0.1f * (float)it);
        xo_buffer **e = bufs[0];
        step_eager(ctx, e[0], e[1], e[2], e[3], e[4], e[5], e[6], xb, yb, &lr, &loss_eager);
        xot_assert_ok(xo_plan_run(plan));
        assert_true(fabsf(loss_plan - loss_eager) <= 1e-6f * fmaxf(1.0f, fabsf(loss_eager)));
    }
    float w_e[TF], w_p[TF];
    xot_assert_ok(xo_buffer_read(bufs[0][2], 0, w_e, sizeof w_e));
    xot_assert_ok(xo_buffer_read(bufs[1][2], 0, w_p, sizeof w_p));
    xot_assert_close_f(w_p, w_e, TF, "weights");
    assert_true(fabsf(w_p[0] - 0.5f) < 0.3f); /* it learns */
    xo_plan_destroy(plan);
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 7; i++)
            xo_buffer_destroy(bufs[t][i]);
    xot_plan_done(ctx);
}

/* ---- the error rules --------------------------------------------------------------- */

static void plan_errors(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
    xo_plan *plan = (xo_plan *)&plan;
    xot_assert_status(xo_capture_end(ctx, &plan), XO_ERR_INVALID_ARGUMENT);
    assert_null(plan);
    assert_true(xot_contains(xo_last_error(), "no capture was begun"));
    xot_assert_status(xo_capture_begin(NULL), XO_ERR_INVALID_ARGUMENT);
    xot_assert_status(xo_plan_run(NULL), XO_ERR_INVALID_ARGUMENT);
    xo_plan_destroy(NULL);
    xot_assert_status(xo_plan_describe(NULL, NULL, 0), XO_ERR_INVALID_ARGUMENT);

    xo_buffer *x = xot_buffer(ctx, NULL, 16 * sizeof(float)), *y = xot_buffer(ctx, NULL, 16 * sizeof(float));
    /* An invalid call's status and message, eagerly. */
    xo_status want = xo_saxpy(ctx, 17, 1.0f, x, 0, 1, y, 0, 1);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", xo_last_error());
    xot_assert_ok(xo_capture_begin(ctx));
    xot_assert_status(xo_capture_begin(ctx), XO_ERR_INVALID_ARGUMENT);
    assert_true(xot_contains(xo_last_error(), "already capturing"));
    assert_int_equal(xo_saxpy(ctx, 17, 1.0f, x, 0, 1, y, 0, 1), want); /* validated as when it runs */
    assert_string_equal(xo_last_error(), msg);
    xot_assert_ok(xo_saxpy(ctx, 0, 1.0f, x, 0, 1, y, 0, 1)); /* a no-op: not recorded */
    xot_assert_ok(xo_sfill(ctx, 16, 3.0f, x, 0, 1));
    xot_assert_ok(xo_finish(ctx)); /* records nothing */
    xot_assert_status(xo_capture_end(ctx, NULL), XO_ERR_INVALID_ARGUMENT); /* the capture stays open */
    xot_assert_ok(xo_capture_end(ctx, &plan));
    char text[1024];
    xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
    assert_true(xot_contains(text, "plan: 1 ops in 1 steps, predicted"));
    assert_true(xot_contains(text, "(all on cpu: "));
    assert_true(xot_contains(text, " us, op by op: "));
    assert_true(xot_contains(text, "step 1: sfill n=16"));
    /* Cut to size, NUL-terminated. */
    char small[10];
    xot_assert_ok(xo_plan_describe(plan, small, sizeof small));
    assert_int_equal(strlen(small), sizeof small - 1);
    /* The size it needs is exact: that many bytes hold all of it, one fewer cuts it. */
    assert_int_equal(xo_plan_describe_size(NULL), 0);
    size_t need = xo_plan_describe_size(plan);
    assert_int_equal(need, strlen(text) + 1);
    char *whole = malloc(need), *cut = malloc(need - 1);
    assert_non_null(whole);
    assert_non_null(cut);
    xot_assert_ok(xo_plan_describe(plan, whole, need));
    assert_string_equal(whole, text);
    xot_assert_ok(xo_plan_describe(plan, cut, need - 1));
    assert_int_equal(strlen(cut), need - 2);
    assert_memory_equal(cut, text, need - 2);
    free(whole);
    free(cut);
    float got[16];
    xot_assert_ok(xo_buffer_read(x, 0, got, sizeof got));
    assert_true(got[0] == 0.0f); /* the fill was recorded, not run */
    /* Running a plan while capturing on its context. */
    xot_assert_ok(xo_capture_begin(ctx));
    xot_assert_status(xo_plan_run(plan), XO_ERR_INVALID_ARGUMENT);
    xo_plan *empty;
    xot_assert_ok(xo_capture_end(ctx, &empty));
    xot_assert_ok(xo_plan_run(empty));
    xo_plan_destroy(empty);
    xot_assert_ok(xo_plan_run(plan));
    xot_assert_ok(xo_buffer_read(x, 0, got, sizeof got));
    assert_true(got[0] == 3.0f && got[15] == 3.0f);

    /* A buffer destroyed before the run: the run fails naming it and changes nothing. */
    xo_plan *p2;
    xot_assert_ok(xo_capture_begin(ctx));
    xot_assert_ok(xo_sfill(ctx, 16, 5.0f, x, 0, 1));
    xot_assert_ok(xo_saxpy(ctx, 16, 1.0f, x, 0, 1, y, 0, 1));
    xot_assert_ok(xo_capture_end(ctx, &p2));
    xo_buffer_destroy(y);
    xot_assert_status(xo_plan_run(p2), XO_ERR_INVALID_ARGUMENT);
    assert_true(xot_contains(xo_last_error(), "destroyed"));
    assert_true(xot_contains(xo_last_error(), "y of recorded call 2 (xo_saxpy)"));
    xot_assert_ok(xo_buffer_read(x, 0, got, sizeof got));
    assert_true(got[0] == 3.0f); /* nothing run */
    xo_plan_destroy(p2);

    /* A buffer the capture used, destroyed before the capture ends: no plan. */
    xo_buffer *z = xot_buffer(ctx, NULL, 16 * sizeof(float));
    xot_assert_ok(xo_capture_begin(ctx));
    xo_buffer *fresh = xot_buffer(ctx, NULL, 16 * sizeof(float)); /* created during a capture */
    xot_assert_ok(xo_scopy(ctx, 16, x, 0, 1, fresh, 0, 1));
    xot_assert_ok(xo_buffer_write(z, 0, got, sizeof got));
    xo_buffer_destroy(z);
    xo_plan *p3 = (xo_plan *)&p3;
    xot_assert_status(xo_capture_end(ctx, &p3), XO_ERR_INVALID_ARGUMENT);
    assert_null(p3);
    assert_true(xot_contains(xo_last_error(), "recorded call 2 (xo_buffer_write)"));
    xot_assert_status(xo_capture_end(ctx, &p3), XO_ERR_INVALID_ARGUMENT); /* it did end */

    xo_plan_destroy(plan);
    xo_buffer_destroy(x);
    xo_buffer_destroy(fresh);
    xot_plan_done(ctx);
}

/* Another thread's calls on a context this thread captures run as usual. */
static void *other_thread(void *arg)
{
    xo_buffer *x = arg;
    xo_status st = xo_sfill(x->ctx, 4, 7.0f, x, 0, 1);
    return (void *)(intptr_t)st;
}

static void plan_other_thread_runs(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
    xo_buffer *x = xot_buffer(ctx, NULL, 16 * sizeof(float));
    xot_assert_ok(xo_capture_begin(ctx));
    pthread_t t;
    void *ret;
    assert_int_equal(pthread_create(&t, NULL, other_thread, x), 0);
    pthread_join(t, &ret);
    assert_int_equal((int)(intptr_t)ret, XO_OK);
    float got[4];
    xot_assert_ok(xo_buffer_read(x, 0, got, sizeof got)); /* recorded: this thread captures */
    xo_plan *plan;
    xot_assert_ok(xo_capture_end(ctx, &plan));
    xot_assert_ok(xo_buffer_read(x, 0, got, sizeof got));
    assert_true(got[0] == 7.0f); /* the other thread's fill ran */
    xo_plan_destroy(plan);
    xo_buffer_destroy(x);
    xot_plan_done(ctx);
}

/* ---- XO_PLAN=eager and XO_LOG=summary ------------------------------------------------ */

static void plan_eager_and_summary(void **state)
{
    (void)state;
    setenv("XO_PLAN", "bogus", 1);
    xo_context *bad = NULL;
    xot_assert_status(xo_context_create(&bad), XO_ERR_INVALID_ARGUMENT);
    assert_true(xot_contains(xo_last_error(), "XO_PLAN"));
    setenv("XO_PLAN", "on", 1);
    setenv("XO_LOG", "summary", 1);
    {   /* XO_PLAN=on: the table counts a plan's ops, and the plan's line follows it */
        int mk;
        xo_context *c2 = xot_plan_context(&xot_plan_fast_mock, &mk);
        c2->forced = 0;
        xo_buffer *x = xot_buffer(c2, NULL, 64 * sizeof(float));
        xot_assert_ok(xo_capture_begin(c2));
        xot_assert_ok(xo_sfill(c2, 64, 2.0f, x, 0, 1));
        xot_assert_ok(xo_sscal(c2, 64, 2.0f, x, 0, 1));
        xo_plan *pl;
        xot_assert_ok(xo_capture_end(c2, &pl));
        for (int i = 0; i < 3; i++)
            xot_assert_ok(xo_plan_run(pl));
        xo_plan_destroy(pl);
        xo_buffer_destroy(x);
        xot_capture cap;
        assert_int_equal(xot_capture_begin(&cap, 2), 0);
        xot_plan_done(c2);
        char *err = xot_capture_end(&cap);
        assert_true(xot_contains(err, "plan: 2 ops in 2 steps, 0 fused ops, 3 runs, predicted"));
        const char *row = strstr(err, "\nsfill ");
        assert_non_null(row);
        unsigned cls, dev;
        unsigned long long calls;
        char plugin[32];
        assert_int_equal(sscanf(row + 1, "sfill %u %u %31s %llu", &cls, &dev, plugin, &calls), 4);
        assert_int_equal(calls, 3);
        free(err);
    }
    setenv("XO_PLAN", "eager", 1);
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
    xot_twin e, p;
    xot_twin_make(ctx, &e, XO_F32, 9, 0);
    xot_twin_make(ctx, &p, XO_F32, 9, 0);
    xot_assert_ok(xot_plan_cases[XO_OP_GEMM](ctx, XO_F32, 0, e.b));
    xot_assert_ok(xot_plan_cases[XO_OP_UNARY](ctx, XO_F32, 1, e.b));
    xot_assert_ok(xo_capture_begin(ctx));
    xot_assert_ok(xot_plan_cases[XO_OP_GEMM](ctx, XO_F32, 0, p.b));
    xot_assert_ok(xot_plan_cases[XO_OP_UNARY](ctx, XO_F32, 1, p.b));
    xo_plan *plan;
    xot_assert_ok(xo_capture_end(ctx, &plan));
    xot_assert_ok(xo_stats_reset(ctx));
    xot_assert_ok(xo_plan_run(plan));
    xo_decision dec;
    xot_assert_ok(xo_last_decision(ctx, &dec)); /* an eager call made a decision */
    assert_string_equal(dec.op, "sunary");
    xo_stats s0 = xot_plan_stats(ctx, 0), s1 = xot_plan_stats(ctx, mock);
    assert_int_equal(s0.ops + s1.ops, 2);
    xot_twin_compare(&p, &e, XO_F32, 0, "eager plan");
    xo_plan_destroy(plan);
    xot_twin_free(&e);
    xot_twin_free(&p);
    xot_capture cap;
    assert_int_equal(xot_capture_begin(&cap, 2), 0);
    xot_plan_done(ctx);
    char *err = xot_capture_end(&cap);
    assert_true(xot_contains(err, "plan: 2 ops in 2 steps, 0 fused ops, 1 runs, predicted"));
    assert_true(xot_contains(err, "measured"));
    free(err);
    unsetenv("XO_PLAN");
    unsetenv("XO_LOG");
}

/* ---- XO_FAULTS during a run ---------------------------------------------------------- */

static void plan_faults(void **state)
{
    (void)state;
    setenv("XO_FAULTS", "mock.launch@3", 1);
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
    unsetenv("XO_FAULTS");
    ctx->forced = mock;
    xot_twin e, p;
    xot_twin_make(ctx, &e, XO_F32, 5, 0);
    xot_twin_make(ctx, &p, XO_F32, 5, 0);
    int kinds[] = {XO_OP_GEMM, XO_OP_UNARY, XO_OP_AXPY, XO_OP_BINARY, XO_OP_SCAL};
    ctx->forced = 0;
    for (int r = 0; r < 2; r++)
        for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
            xot_assert_ok(xot_plan_cases[kinds[i]](ctx, XO_F32, (int)i, e.b));
    ctx->forced = mock;
    xot_assert_ok(xo_capture_begin(ctx));
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        xot_assert_ok(xot_plan_cases[kinds[i]](ctx, XO_F32, (int)i, p.b));
    xo_plan *plan;
    xot_assert_ok(xo_capture_end(ctx, &plan));
    xot_assert_ok(xo_stats_reset(ctx));
    xot_assert_ok(xo_plan_run(plan)); /* its third launch fails: completed on the CPU */
    xot_assert_ok(xo_plan_run(plan));
    xo_stats s1 = xot_plan_stats(ctx, mock), s0 = xot_plan_stats(ctx, 0);
    assert_int_equal(s1.fallbacks, 1);
    assert_int_equal(s0.ops + s1.ops, 10);
    assert_true(s0.ops >= 1);
    xot_twin_compare(&p, &e, XO_F32, 0, "faulted plan");
    xot_plan_finish(ctx, plan, &e, &p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plan_errors),
        cmocka_unit_test(plan_other_thread_runs),
        cmocka_unit_test(plan_every_op),
        cmocka_unit_test(plan_random_sequences),
        cmocka_unit_test(plan_training_step),
        cmocka_unit_test(plan_eager_and_summary),
        cmocka_unit_test(plan_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
