/* Plans (CONTRACT.md "Additions in 0.4"): capture, whole-plan placement, replay.
 * Every result is checked against the same calls issued eagerly on twin buffers.
 * The mock plugin (mock_plugin.h) is the last device: a GPU-like device whose model the
 * core is told exactly. */
#include "xo_test.h"
#include "mock_plugin.h"
#include "test_plan_cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const xo_mock_config fast_mock = {
    .launch_us = 20, .gflops = 5000, .gbps = 500, .transfer_latency_us = 2, .transfer_gbps = 50};

static xo_context *context_with_mock(const xo_mock_config *cfg, int *mock)
{
    xo_mock_install(cfg);
    xo_context *ctx = NULL;
    xot_assert_ok(xo_context_create(&ctx));
    *mock = xo_device_count(ctx) - 1;
    assert_string_equal(ctx->dev[*mock].info.plugin, "mock");
    xo__profile p;
    xo_mock_profile(&ctx->dev[*mock].info, &p);
    xo__device_set_profile(ctx, *mock, &p);
    return ctx;
}

static void done(xo_context *ctx)
{
    xo_context_destroy(ctx);
    xo_mock_install(NULL);
}

/* ---- twin buffer sets --------------------------------------------------------------- */

#define NBUF 4
typedef struct twin {
    xo_buffer *b[NBUF];
    size_t bytes;
} twin;

static void twin_make(xo_context *ctx, twin *t, xo_dtype dt, uint64_t seed, int labels_in_1)
{
    size_t es = dt == XO_F64 ? 8 : 4;
    t->bytes = XOT_PLAN_ELEMS * es;
    void *data = malloc(t->bytes);
    for (int i = 0; i < NBUF; i++) {
        if (i == 1 && labels_in_1) {
            int32_t *l = data;
            for (size_t j = 0; j < XOT_PLAN_ELEMS * es / 4; j++)
                l[j] = (int32_t)((j * 5 + seed) % XOT_PLAN_COLS);
        } else if (dt == XO_F64) {
            xot_fill_d(data, XOT_PLAN_ELEMS, seed * 31 + (uint64_t)i, 0.5, 1.5);
        } else {
            xot_fill_f(data, XOT_PLAN_ELEMS, seed * 31 + (uint64_t)i, 0.5, 1.5);
        }
        t->b[i] = xot_buffer(ctx, data, t->bytes);
    }
    free(data);
}

static void twin_free(twin *t)
{
    for (int i = 0; i < NBUF; i++)
        xo_buffer_destroy(t->b[i]);
}

/* Every buffer of a and b holds the same values (bit-exact when `exact`). */
static void twin_compare(const twin *a, const twin *b, xo_dtype dt, int exact, const char *what)
{
    for (int i = 0; i < NBUF; i++) {
        void *x = xot_read_all(a->b[i]), *y = xot_read_all(b->b[i]);
        long bad;
        if (exact)
            bad = memcmp(x, y, a->bytes) ? 0 : -1;
        else if (dt == XO_F64)
            bad = xot_first_mismatch_d(x, y, XOT_PLAN_ELEMS, 1e-12);
        else
            bad = xot_first_mismatch_f(x, y, XOT_PLAN_ELEMS, 1e-6);
        if (bad >= 0)
            fail_msg("%s: buffer %d differs at %ld", what, i, bad);
        free(x);
        free(y);
    }
}

static xo_stats stats_of(xo_context *ctx, int d)
{
    xo_stats s;
    xot_assert_ok(xo_finish(ctx));
    xot_assert_ok(xo_stats_get(ctx, d, &s));
    return s;
}

/* ---- every op of the op table, captured and replayed, on every device ---------------- */

static void plan_every_op(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = context_with_mock(&fast_mock, &mock);
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
                    twin eager, planned;
                    uint64_t seed = (uint64_t)(kind * 7 + dt * 3 + sub);
                    twin_make(ctx, &eager, (xo_dtype)dt, seed, kind == XO_OP_SOFTMAX_XENT);
                    twin_make(ctx, &planned, (xo_dtype)dt, seed, kind == XO_OP_SOFTMAX_XENT);
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
                        ops += stats_of(ctx, d).ops;
                    assert_int_equal(ops, 0); /* recorded, not run */
                    xot_assert_ok(xo_plan_run(plan));
                    xot_assert_ok(xo_plan_run(plan));
                    ops = 0;
                    for (int d = 0; d < ndev; d++)
                        ops += stats_of(ctx, d).ops;
                    assert_int_equal(ops, 2); /* one count per recorded op and run */
                    if (dev >= 0) { /* a forced device runs every op it can */
                        char text[2048];
                        xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
                        xo_stats on = stats_of(ctx, dev), cpu = stats_of(ctx, 0);
                        assert_true(on.ops == 2 || cpu.ops == 2);
                    }
                    twin_compare(&planned, &eager, (xo_dtype)dt, kind == XO_OP_COPY || kind == XO_OP_FILL, what);
                    xo_plan_destroy(plan);
                    twin_free(&eager);
                    twin_free(&planned);
                }
    }
    done(ctx);
}

/* ---- random sequences: plan against eager, random forced devices --------------------- */

static void plan_random_sequences(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = context_with_mock(&fast_mock, &mock);
    int ndev = xo_device_count(ctx);
    uint64_t rng = 12345;
    for (int seq = 0; seq < 24; seq++) {
        xo_dtype dt = (xo_dtype)(seq & 1);
        int dev = (int)(xot_uniform(&rng, 0, ndev + 1)) - 1; /* -1: auto */
        ctx->forced = dev;
        /* A pool of 6 buffers; each call takes 4 distinct ones. */
        twin e[2], p[2];
        twin_make(ctx, &e[0], dt, (uint64_t)seq, 0);
        twin_make(ctx, &e[1], dt, (uint64_t)seq + 100, 0);
        twin_make(ctx, &p[0], dt, (uint64_t)seq, 0);
        twin_make(ctx, &p[1], dt, (uint64_t)seq + 100, 0);
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
        twin_compare(&p[0], &e[0], dt, 0, what);
        twin_compare(&p[1], &e[1], dt, 0, what);
        xo_plan_destroy(plan);
        for (int t = 0; t < 2; t++) {
            twin_free(&e[t]);
            twin_free(&p[t]);
        }
    }
    done(ctx);
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
    xo_context *ctx = context_with_mock(&fast_mock, &mock);
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
    done(ctx);
}

/* ---- the error rules --------------------------------------------------------------- */

static void plan_errors(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = context_with_mock(&fast_mock, &mock);
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
    done(ctx);
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
    xo_context *ctx = context_with_mock(&fast_mock, &mock);
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
    done(ctx);
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
        xo_context *c2 = context_with_mock(&fast_mock, &mk);
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
        done(c2);
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
    xo_context *ctx = context_with_mock(&fast_mock, &mock);
    twin e, p;
    twin_make(ctx, &e, XO_F32, 9, 0);
    twin_make(ctx, &p, XO_F32, 9, 0);
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
    xo_stats s0 = stats_of(ctx, 0), s1 = stats_of(ctx, mock);
    assert_int_equal(s0.ops + s1.ops, 2);
    twin_compare(&p, &e, XO_F32, 0, "eager plan");
    xo_plan_destroy(plan);
    twin_free(&e);
    twin_free(&p);
    xot_capture cap;
    assert_int_equal(xot_capture_begin(&cap, 2), 0);
    done(ctx);
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
    xo_context *ctx = context_with_mock(&fast_mock, &mock);
    unsetenv("XO_FAULTS");
    ctx->forced = mock;
    twin e, p;
    twin_make(ctx, &e, XO_F32, 5, 0);
    twin_make(ctx, &p, XO_F32, 5, 0);
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
    xo_stats s1 = stats_of(ctx, mock), s0 = stats_of(ctx, 0);
    assert_int_equal(s1.fallbacks, 1);
    assert_int_equal(s0.ops + s1.ops, 10);
    assert_true(s0.ops >= 1);
    twin_compare(&p, &e, XO_F32, 0, "faulted plan");
    xo_plan_destroy(plan);
    twin_free(&e);
    twin_free(&p);
    done(ctx);
}

/* ---- a GPU-priced device: whole-plan placement against op-by-op ----------------------- */

/* A chain of 16 cheap element-wise ops on a vector the host writes in and reads out.
 * Op by op, the first op stays home (the CPU's pass is cheaper than moving it plus a
 * launch) and so does every later one; as a whole, one move in, 16 launches and one move
 * out are cheaper: the plan keeps the chain on the device. */
static void plan_gpu_priced_chain(void **state)
{
    (void)state;
    static const xo_mock_config gpu = {
        .launch_us = 12, .gflops = 20000, .gbps = 500, .transfer_latency_us = 5, .transfer_gbps = 12};
    int mock;
    setenv("XO_PLUGINS", "cpu,mock", 1); /* no other device competes */
    xo_context *ctx = context_with_mock(&gpu, &mock);
    unsetenv("XO_PLUGINS");
    /* The CPU priced as a small host: 12 GB/s streaming (27 us per op here, under the
     * 31 us of one move and launch, over the 13 us of a launch). */
    xo__profile cpu = ctx->dev[0].profile;
    cpu.stream_gbps[0] = cpu.stream_gbps[1] = 12;
    cpu.info.mem_gbps = 12;
    cpu.info.launch_us = 0.5;
    for (int k = 0; k < XO_OP_KIND_COUNT; k++)
        cpu.op_launch_us[k] = 0;
    xo__device_set_profile(ctx, 0, &cpu);
    const size_t n = 40000;
    float *host = malloc(n * sizeof *host), *out_plan = malloc(n * sizeof *out_plan),
          *out_eager = malloc(n * sizeof *out_eager);
    xo_buffer *x = xot_buffer(ctx, NULL, n * sizeof(float)), *xe = xot_buffer(ctx, NULL, n * sizeof(float));
    xot_assert_ok(xo_capture_begin(ctx));
    xot_assert_ok(xo_buffer_write(x, 0, host, n * sizeof(float)));
    for (int i = 0; i < 16; i++)
        xot_assert_ok(i % 2 ? xo_sunary(ctx, XO_TANH, n, x, 0, x, 0) : xo_sscal(ctx, n, 1.5f, x, 0, 1));
    xot_assert_ok(xo_buffer_read(x, 0, out_plan, n * sizeof(float)));
    xo_plan *plan;
    xot_assert_ok(xo_capture_end(ctx, &plan));
    char text[8192];
    xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
    double t, c, g;
    const char *last = strstr(text, "plan: ");
    assert_non_null(last);
    assert_int_equal(sscanf(last, "plan: 16 ops in 16 steps, predicted %lf us per run (all on cpu: %lf us, op by op: %lf us)",
                            &t, &c, &g), 3);
    print_message("%s", strstr(text, "step 16"));
    if (!(t < 0.8 * g && t < 0.8 * c))
        fail_msg("whole-plan placement should beat op by op clearly:\n%s", text);
    assert_true(xot_contains(text, "step 1: sscal n=40000 on 1 (mock)"));
    assert_true(xot_contains(text, "step 16: sunary n=40000 on 1 (mock)"));
    assert_true(g == c); /* op by op keeps every op home */
    for (int run = 0; run < 3; run++) {
        xot_fill_f(host, n, 77 + (uint64_t)run, -1, 1);
        xot_assert_ok(xo_stats_reset(ctx));
        xot_assert_ok(xo_plan_run(plan));
        xo_stats m = stats_of(ctx, mock);
        assert_int_equal(m.ops, 16);
        assert_int_equal(m.transfers, 2); /* in once, out once */
        /* eager, op by op, on twin data (placed by the model corrected by what it
         * measures on this machine) */
        xot_assert_ok(xo_buffer_write(xe, 0, host, n * sizeof(float)));
        xot_assert_ok(xo_stats_reset(ctx));
        for (int i = 0; i < 16; i++)
            xot_assert_ok(i % 2 ? xo_sunary(ctx, XO_TANH, n, xe, 0, xe, 0) : xo_sscal(ctx, n, 1.5f, xe, 0, 1));
        xot_assert_ok(xo_buffer_read(xe, 0, out_eager, n * sizeof(float)));
        xot_assert_close_f(out_plan, out_eager, n, "chain");
    }
    xo_plan_destroy(plan);
    xo_buffer_destroy(x);
    xo_buffer_destroy(xe);
    free(host);
    free(out_plan);
    free(out_eager);
    done(ctx);
}


/* Op by op ping-pongs: a gemm (cheaper on the device) writes a small matrix that a
 * cheap element-wise op then reads; alone, that op is cheaper brought home (one small
 * move, no launch) than launched on the device, so each round trip moves the matrix down
 * and up again. As a whole the chain stays on the device. */
static void plan_gpu_priced_ping_pong(void **state)
{
    (void)state;
    static const xo_mock_config gpu = {
        .launch_us = 12, .gflops = 20000, .gbps = 500, .transfer_latency_us = 5, .transfer_gbps = 12};
    int mock;
    setenv("XO_PLUGINS", "cpu,mock", 1);
    xo_context *ctx = context_with_mock(&gpu, &mock);
    unsetenv("XO_PLUGINS");
    xo__profile cpu = ctx->dev[0].profile;
    cpu.stream_gbps[0] = cpu.stream_gbps[1] = 20;
    cpu.info.mem_gbps = 20;
    cpu.info.launch_us = 0.5;
    for (int k = 0; k < XO_OP_KIND_COUNT; k++)
        cpu.op_launch_us[k] = 0;
    for (int i = 0; i < XO_CURVE_POINTS; i++)
        cpu.gemm_gflops[0][i] = cpu.gemm_gflops[1][i] = 20;
    xo__device_set_profile(ctx, 0, &cpu);
    enum { R = 256, K = 256, C = 16 };
    float *w = malloc(sizeof(float) * R * K), *x0 = malloc(sizeof(float) * K * C);
    xot_fill_f(w, R * K, 1, -0.1, 0.1);
    xot_fill_f(x0, K * C, 2, -1, 1);
    xo_buffer *W = xot_buffer(ctx, w, sizeof(float) * R * K), *xa[2], *xb[2];
    for (int t = 0; t < 2; t++) {
        xa[t] = xot_buffer(ctx, x0, sizeof(float) * K * C);
        xb[t] = xot_buffer(ctx, NULL, sizeof(float) * K * C);
    }
    xot_assert_ok(xo_capture_begin(ctx));
    for (int t = 0; t < 2; t++) { /* t = 0: captured; t = 1: eager, for the results */
        if (t == 1) {
            xo_plan *plan;
            xot_assert_ok(xo_capture_end(ctx, &plan));
            char text[8192];
            xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
            double tt, c, g;
            const char *last = strstr(text, "plan: ");
            assert_non_null(last);
            assert_int_equal(sscanf(last, "plan: 16 ops in 16 steps, predicted %lf us per run (all on cpu: %lf us, "
                                          "op by op: %lf us)", &tt, &c, &g), 3);
            print_message("%s", last);
            if (!(tt < 0.95 * g && tt < c))
                fail_msg("whole-plan placement should beat op by op:\n%s", text);
            char want[64];
            for (int i = 1; i <= 16; i++) {
                snprintf(want, sizeof want, "step %d: %s", i, i % 2 ? "sgemm" : "sunary");
                assert_true(xot_contains(text, want));
            }
            assert_false(xot_contains(text, "(cpu)")); /* the whole chain on the device */
            xot_assert_ok(xo_plan_run(plan));
            xot_assert_ok(xo_stats_reset(ctx));
            xot_assert_ok(xo_plan_run(plan)); /* the steady state: nothing moves */
            xo_stats m = stats_of(ctx, mock);
            assert_int_equal(m.ops, 16);
            assert_int_equal(m.transfers, 0);
            xo_plan_destroy(plan);
        }
        for (int rep = 0; rep < (t ? 2 : 1); rep++)
            for (int i = 0; i < 4; i++) {
                xot_assert_ok(xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, R, C, K, 1.0f, W, 0, K, xa[t], 0,
                                       C, 0.0f, xb[t], 0, C));
                xot_assert_ok(xo_sunary(ctx, XO_TANH, R * C, xb[t], 0, xb[t], 0));
                xot_assert_ok(xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, R, C, K, 1.0f, W, 0, K, xb[t], 0,
                                       C, 0.0f, xa[t], 0, C));
                xot_assert_ok(xo_sunary(ctx, XO_TANH, R * C, xa[t], 0, xa[t], 0));
            }
    }
    float *pa = xot_read_all(xa[0]), *ea = xot_read_all(xa[1]);
    xot_assert_close_f(pa, ea, K * C, "ping-pong chain");
    free(pa);
    free(ea);
    for (int t = 0; t < 2; t++) {
        xo_buffer_destroy(xa[t]);
        xo_buffer_destroy(xb[t]);
    }
    xo_buffer_destroy(W);
    free(w);
    free(x0);
    done(ctx);
}


/* ---- CPU fusion: element-wise chains run block by block ------------------------------- */

#define FN (3 * 4096 + 17) /* more than one fusion block, and a tail */
#define FBUF 6

/* One random element-wise op over FN elements of buffers from bufs (FN + 8 each), at
 * element offset 0 or 3, or a scale_by whose factor is an element of one of them. */
static xo_status fused_op(xo_context *ctx, uint64_t *rng, xo_buffer *const *bufs, int *kind_out)
{
    int k = (int)xot_uniform(rng, 0, 9), i = (int)xot_uniform(rng, 0, FBUF), j;
    do
        j = (int)xot_uniform(rng, 0, FBUF);
    while (j == i);
    int l = (int)xot_uniform(rng, 0, FBUF);
    size_t oi = xot_uniform(rng, 0, 1) < 0.75 ? 0 : 3, oj = xot_uniform(rng, 0, 1) < 0.75 ? 0 : 3;
    xo_buffer *x = bufs[i], *y = bufs[j];
    *kind_out = k;
    switch (k) {
    case 0: return xo_sunary(ctx, (xo_unary_op)(xot_uniform(rng, 0, 2) < 1 ? XO_TANH : XO_NEG), FN, x, oi, y, oj);
    case 1: return xo_sbinary(ctx, XO_ADD, FN, x, oi, bufs[l], 0, y, oj);
    case 2: return xo_sbinary_scalar(ctx, XO_MUL, FN, x, oi, 0.75f, y, oj);
    case 3: return xo_sscal(ctx, FN, 1.25f, y, oj, 1);
    case 4: return xo_sfill(ctx, FN, 0.5f, y, oj, 1);
    case 5: return xo_saxpy(ctx, FN, 0.5f, x, oi, 1, y, oj, 1);
    case 6: return xo_saxpby(ctx, FN, 0.5f, x, oi, 1, 0.25f, y, oj, 1);
    case 7: return xo_scopy(ctx, FN, x, oi, 1, y, oj, 1);
    default: return xo_sscale_by(ctx, FN, x, (size_t)xot_uniform(rng, 0, FN), y, oj, 1);
    }
}

static void plan_fused_chains(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = context_with_mock(&fast_mock, &mock);
    ctx->forced = 0; /* every op on the CPU: chains fuse there */
    float *init = malloc(sizeof(float) * (FN + 8));
    int fused_total = 0;
    for (int seq = 0; seq < 40; seq++) {
        xo_buffer *e[FBUF], *p[FBUF];
        for (int b = 0; b < FBUF; b++) {
            xot_fill_f(init, FN + 8, (uint64_t)(seq * 10 + b), 0.5, 1.0);
            e[b] = xot_buffer(ctx, init, sizeof(float) * (FN + 8));
            p[b] = xot_buffer(ctx, init, sizeof(float) * (FN + 8));
        }
        uint64_t rng_e = 99 + (uint64_t)seq, rng_p = rng_e;
        int len = 2 + seq % 12, kind;
        xo_status st_e[16];
        for (int i = 0; i < len; i++)
            st_e[i] = fused_op(ctx, &rng_e, e, &kind);
        xot_assert_ok(xo_capture_begin(ctx));
        for (int i = 0; i < len; i++)
            assert_int_equal(fused_op(ctx, &rng_p, p, &kind), st_e[i]);
        xo_plan *plan;
        xot_assert_ok(xo_capture_end(ctx, &plan));
        char text[8192];
        xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
        fused_total += xot_contains(text, "+");
        xot_assert_ok(xo_plan_run(plan));
        for (int b = 0; b < FBUF; b++) {
            float *x = xot_read_all(p[b]), *y = xot_read_all(e[b]);
            long bad = xot_first_mismatch_f(x, y, FN + 8, 1e-6);
            if (bad >= 0)
                fail_msg("sequence %d: buffer %d differs at %ld (%g, eager %g)\n%s", seq, b, bad, x[bad], y[bad], text);
            free(x);
            free(y);
            xo_buffer_destroy(e[b]);
            xo_buffer_destroy(p[b]);
        }
        xo_plan_destroy(plan);
    }
    assert_true(fused_total >= 10); /* the random chains did fuse */
    free(init);
    done(ctx);
}

/* A chain that fuses whole, then ops that must not join it: one reads what the chain
 * wrote at another offset, one takes its factor from an element the chain wrote. */
static void plan_fused_describe(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = context_with_mock(&fast_mock, &mock);
    ctx->forced = 0;
    xo_buffer *b[5];
    float *init = malloc(sizeof(float) * (FN + 8));
    for (int i = 0; i < 5; i++) {
        xot_fill_f(init, FN + 8, (uint64_t)i, 0.5, 1.0);
        b[i] = xot_buffer(ctx, init, sizeof(float) * (FN + 8));
    }
    xot_assert_ok(xo_capture_begin(ctx));
    xot_assert_ok(xo_sunary(ctx, XO_TANH, FN, b[0], 0, b[1], 0));
    xot_assert_ok(xo_sbinary(ctx, XO_ADD, FN, b[1], 0, b[0], 0, b[2], 0));
    xot_assert_ok(xo_sscal(ctx, FN, 0.5f, b[2], 0, 1));
    xot_assert_ok(xo_saxpy(ctx, FN, 1.5f, b[1], 0, 1, b[2], 0, 1));
    xot_assert_ok(xo_scopy(ctx, FN, b[2], 0, 1, b[3], 0, 1));
    xot_assert_ok(xo_sscale_by(ctx, FN, b[4], FN + 2, b[3], 0, 1));
    xot_assert_ok(xo_sbinary_scalar(ctx, XO_MUL, FN, b[3], 0, 2.0f, b[3], 0));
    xot_assert_ok(xo_saxpby(ctx, FN, 0.3f, b[0], 0, 1, 0.7f, b[3], 0, 1));
    xot_assert_ok(xo_sunary(ctx, XO_EXP, FN, b[2], 1, b[4], 0));        /* b[2] shifted: a new step */
    xot_assert_ok(xo_sscale_by(ctx, FN, b[4], 5, b[1], 0, 1));          /* factor written by the step */
    xo_plan *plan;
    xot_assert_ok(xo_capture_end(ctx, &plan));
    char text[8192];
    xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
    print_message("%s", text);
    assert_true(xot_contains(text, "step 1: sunary+sbinary+sscal+saxpy+scopy+sscale_by+sbinary_scalar+saxpby n=12305 "
                                   "on 0 (cpu)"));
    assert_true(xot_contains(text, "step 2: sunary n=12305 on 0"));
    assert_true(xot_contains(text, "step 3: sscale_by n=12305 on 0"));
    assert_true(xot_contains(text, "plan: 10 ops in 3 steps"));
    xot_assert_ok(xo_stats_reset(ctx));
    xot_assert_ok(xo_plan_run(plan));
    xo_stats s = stats_of(ctx, 0);
    assert_int_equal(s.ops, 10);
    assert_true(s.busy_us > 0);
    xo_plan_destroy(plan);
    for (int i = 0; i < 5; i++)
        xo_buffer_destroy(b[i]);
    free(init);
    done(ctx);
}

/* Plan building stays well under 50 ms for 1000 recorded ops (two devices). */
static void plan_build_time(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = context_with_mock(&fast_mock, &mock);
    twin p;
    twin_make(ctx, &p, XO_F32, 3, 0);
    xot_assert_ok(xo_capture_begin(ctx));
    for (int i = 0; i < 1000; i++)
        xot_assert_ok(xot_plan_cases[(i % 3) == 0 ? XO_OP_GEMM : (i % 3) == 1 ? XO_OP_UNARY : XO_OP_AXPY](
            ctx, XO_F32, i, p.b));
    double t0 = xo__now_us();
    xo_plan *plan;
    xot_assert_ok(xo_capture_end(ctx, &plan));
    double ms = (xo__now_us() - t0) * 1e-3;
    print_message("plan building, 1000 ops: %.2f ms\n", ms);
    assert_true(ms < 50);
    xo_plan_destroy(plan);
    twin_free(&p);
    done(ctx);
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
        cmocka_unit_test(plan_gpu_priced_chain),
        cmocka_unit_test(plan_gpu_priced_ping_pong),
        cmocka_unit_test(plan_fused_chains),
        cmocka_unit_test(plan_fused_describe),
        cmocka_unit_test(plan_build_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
