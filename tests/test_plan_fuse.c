/* Plans: fusion of element-wise chains (core/plan/plan_fuse.c) through each device's
 * "xo_chain" runner (the CPU plugin's, the mock's, and any other plugin's that has one),
 * every result checked against the same calls issued eagerly on twin buffers: random
 * chains, results fused away (store = 0) only where the plan proves nothing sees them,
 * chains on every device, a chain whose launch fails; gemm epilogues. */
#include "xo_test.h"
#include "mock_plugin.h"
#include "test_plan_cases.h"
#include "xo_plan.h" /* a step's direct */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random chains and what describe shows ------------------------------------------- */

#define FN (3 * 4096 + 17) /* more than one CPU block (1024), and a tail; 107 x 115 */
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
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
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
    xot_plan_done(ctx);
}

/* A chain that fuses whole, then ops that must not join it: one reads what the chain
 * wrote at another offset, one takes its factor from an element the chain wrote. */
static void plan_fused_describe(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
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
    /* b[2]'s last writer in the chain is saxpy (read later at offset 1), b[3]'s saxpby
     * (the plan ends with it), b[1]'s sunary (scaled later): the others are fused away. */
    assert_true(xot_contains(text, "; not stored: sbinary (call 2), sscal (call 3), scopy (call 5), sscale_by (call 6), "
                                   "sbinary_scalar (call 7)\n"));
    assert_true(xot_contains(text, "step 2: sunary n=12305 on 0"));
    assert_true(xot_contains(text, "step 3: sscale_by n=12305 on 0"));
    assert_true(xot_contains(text, "plan: 10 ops in 3 steps"));
    xot_assert_ok(xo_stats_reset(ctx));
    xot_assert_ok(xo_plan_run(plan));
    xo_stats s = xot_plan_stats(ctx, 0);
    assert_int_equal(s.ops, 10);
    assert_true(s.busy_us > 0);
    xo_plan_destroy(plan);
    for (int i = 0; i < 5; i++)
        xo_buffer_destroy(b[i]);
    free(init);
    xot_plan_done(ctx);
}

/* ---- what is fused away and what is kept ---------------------------------------------- */

/* Buffers of the programs below, FN floats each. */
enum { X, T, Y, A, B, OUT, NB };
#define RET(e) XO_RETURN_IF_ERROR(e)

/* The chain: T = tanh(X) (an intermediate), Y = 2 T + Y, Y *= 0.5. Then a tail that
 * decides whether T must reach memory. io: host data of recorded reads and writes. */
static xo_status chain_head(xo_context *ctx, xo_buffer *const *b)
{
    RET(xo_sunary(ctx, XO_TANH, FN, b[X], 0, b[T], 0));
    RET(xo_saxpy(ctx, FN, 2.0f, b[T], 0, 1, b[Y], 0, 1));
    return xo_sbinary_scalar(ctx, XO_MUL, FN, b[Y], 0, 0.5f, b[Y], 0);
}

/* T overwritten whole by a gemm with beta 0 (C = T as 107 x 115; A 107 x 2, B 2 x 115). */
static xo_status gemm_over_t(xo_context *ctx, xo_buffer *const *b, float beta)
{
    return xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 107, 115, 2, 1.0f, b[A], 0, 2, b[B], 0, 115, beta,
                    b[T], 0, 115);
}

/* A dot of Y with itself: not element-wise, so the chain ends before what follows. */
static xo_status dot_y(xo_context *ctx, xo_buffer *const *b)
{
    return xo_sdot(ctx, FN, b[Y], 0, 1, b[Y], 0, 1, b[OUT], 0);
}

typedef struct tail_case {
    const char *name;
    int fused_away; /* T's producer (call 1) is not stored */
    xo_status (*tail)(xo_context *ctx, xo_buffer *const *b, float *io);
} tail_case;

static xo_status away_gemm(xo_context *ctx, xo_buffer *const *b, float *io)
{
    (void)io;
    return gemm_over_t(ctx, b, 0.0f);
}
static xo_status away_fill(xo_context *ctx, xo_buffer *const *b, float *io)
{
    (void)io;
    RET(dot_y(ctx, b));
    return xo_sfill(ctx, FN, 0.25f, b[T], 0, 1);
}
static xo_status away_unary(xo_context *ctx, xo_buffer *const *b, float *io)
{
    (void)io;
    RET(dot_y(ctx, b));
    RET(xo_sunary(ctx, XO_NEG, FN, b[Y], 0, b[T], 0)); /* reads Y, writes T whole */
    return xo_saxpy(ctx, FN, 1.0f, b[T], 0, 1, b[Y], 0, 1);
}
static xo_status away_write(xo_context *ctx, xo_buffer *const *b, float *io)
{
    RET(dot_y(ctx, b));
    return xo_buffer_write(b[T], 0, io, FN * sizeof(float)); /* a recorded write over all of T */
}
static xo_status kept_end(xo_context *ctx, xo_buffer *const *b, float *io)
{
    (void)ctx, (void)b, (void)io;
    return XO_OK; /* the caller may read T after the run */
}
static xo_status kept_read(xo_context *ctx, xo_buffer *const *b, float *io)
{
    RET(xo_buffer_read(b[T], 0, io, FN * sizeof(float))); /* a recorded read sees T */
    return gemm_over_t(ctx, b, 0.0f);
}
static xo_status kept_read_part(xo_context *ctx, xo_buffer *const *b, float *io)
{
    RET(xo_buffer_read(b[T], 4000 * sizeof(float), io, 16 * sizeof(float)));
    return gemm_over_t(ctx, b, 0.0f);
}
static xo_status kept_op(xo_context *ctx, xo_buffer *const *b, float *io)
{
    (void)io;
    RET(xo_sdot(ctx, FN, b[T], 0, 1, b[X], 0, 1, b[OUT], 0)); /* an op reads T */
    return gemm_over_t(ctx, b, 0.0f);
}
static xo_status kept_gemm_beta(xo_context *ctx, xo_buffer *const *b, float *io)
{
    (void)io;
    return gemm_over_t(ctx, b, 0.5f); /* beta != 0: the gemm reads T */
}
static xo_status kept_partial(xo_context *ctx, xo_buffer *const *b, float *io)
{
    (void)io;
    return xo_sfill(ctx, FN / 2, 0.0f, b[T], 0, 1); /* half of T survives the run */
}
static xo_status kept_scale_by(xo_context *ctx, xo_buffer *const *b, float *io)
{
    (void)io;
    RET(dot_y(ctx, b));
    RET(xo_sscale_by(ctx, FN, b[T], 77, b[Y], 0, 1)); /* one element of T as a factor */
    return xo_sfill(ctx, FN, 0.25f, b[T], 0, 1);
}

static const tail_case tails[] = {
    {"gemm beta 0 overwrites T", 1, away_gemm},
    {"fill overwrites T", 1, away_fill},
    {"unary overwrites T", 1, away_unary},
    {"recorded write overwrites T", 1, away_write},
    {"the plan ends", 0, kept_end},
    {"recorded read of T", 0, kept_read},
    {"recorded read of part of T", 0, kept_read_part},
    {"an op reads T", 0, kept_op},
    {"gemm beta 0.5 reads T", 0, kept_gemm_beta},
    {"half of T overwritten", 0, kept_partial},
    {"scale_by reads an element of T", 0, kept_scale_by},
};

/* Buffers with the same seeded data for an eager run and a plan. */
static void make_bufs(xo_context *ctx, xo_buffer **e, xo_buffer **p, size_t n)
{
    float *init = malloc(sizeof(float) * n);
    for (int i = 0; i < NB; i++) {
        xot_fill_f(init, n, (uint64_t)(i + 1), -1.0, 1.0);
        e[i] = xot_buffer(ctx, init, sizeof(float) * n);
        p[i] = xot_buffer(ctx, init, sizeof(float) * n);
    }
    free(init);
}

/* Every buffer (and the recorded reads' data) of the plan's run equals the eager run's. */
static void compare_bufs(xo_buffer **e, xo_buffer **p, size_t n, const float *io_e, const float *io_p, double tol,
                         const char *what, const char *text)
{
    for (int i = 0; i < NB; i++) {
        float *x = xot_read_all(p[i]), *y = xot_read_all(e[i]);
        long bad = xot_first_mismatch_f(x, y, n, tol);
        if (bad >= 0)
            fail_msg("%s: buffer %d differs at %ld (%g, eager %g)\n%s", what, i, bad, x[bad], y[bad], text);
        free(x);
        free(y);
    }
    long bad = xot_first_mismatch_f(io_p, io_e, FN, tol);
    if (bad >= 0)
        fail_msg("%s: recorded read differs at %ld (%g, eager %g)\n%s", what, bad, io_p[bad], io_e[bad], text);
}

/* Each tail on device `dev` (forced), the plan run twice against the eager calls twice;
 * describe says whether T's producer is fused away. */
static void run_tails(xo_context *ctx, int dev, double tol, int expect_fused)
{
    for (size_t c = 0; c < sizeof tails / sizeof *tails; c++) {
        const tail_case *tc = &tails[c];
        char what[160];
        snprintf(what, sizeof what, "device %d, %s", dev, tc->name);
        ctx->forced = dev;
        xo_buffer *e[NB], *p[NB];
        make_bufs(ctx, e, p, FN);
        float *io_e = calloc(FN, sizeof(float)), *io_p = calloc(FN, sizeof(float));
        xot_fill_f(io_e, FN, 99, -2.0, 2.0);
        memcpy(io_p, io_e, FN * sizeof(float));
        for (int r = 0; r < 2; r++) {
            xot_assert_ok(chain_head(ctx, e));
            xot_assert_ok(tc->tail(ctx, e, io_e));
        }
        xot_assert_ok(xo_capture_begin(ctx));
        xot_assert_ok(chain_head(ctx, p));
        xot_assert_ok(tc->tail(ctx, p, io_p));
        xo_plan *plan;
        xot_assert_ok(xo_capture_end(ctx, &plan));
        char text[4096];
        xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
        if (expect_fused) {
            if (!xot_contains(text, "step 1: sunary+saxpy+sbinary_scalar n=12305"))
                fail_msg("%s: the chain did not fuse\n%s", what, text);
            const char *want = tc->fused_away ? "; not stored: sunary (call 1), saxpy (call 2)\n"
                                              : "; not stored: saxpy (call 2)\n";
            if (!xot_contains(text, want))
                fail_msg("%s: describe lacks \"%s\"\n%s", what, want, text);
        }
        xot_assert_ok(xo_plan_run(plan));
        xot_assert_ok(xo_plan_run(plan));
        compare_bufs(e, p, FN, io_e, io_p, tol, what, text);
        xo_plan_destroy(plan);
        for (int i = 0; i < NB; i++) {
            xo_buffer_destroy(e[i]);
            xo_buffer_destroy(p[i]);
        }
        free(io_e);
        free(io_p);
    }
}

/* On the CPU: T is fused away exactly where the plan proves nobody sees it. */
static void plan_fused_away(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
    run_tails(ctx, 0, 1e-6, 1);
    xot_plan_done(ctx);
}

/* The same programs forced onto every device: the mock's runner (asynchronous, device
 * memory), and whatever runner another plugin offers (PoCL, CUDA); a device without one,
 * or refusing the chain, runs the ops one by one with the same results. */
static void plan_chain_every_device(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
    for (int d = 1; d < xo_device_count(ctx); d++) {
        print_message("device %d (%s): %s\n", d, ctx->dev[d].info.plugin,
                      ctx->dev[d].chain ? "has a chain runner" : "runs chains op by op");
        run_tails(ctx, d, 1e-5, d == mock);
    }
    xot_plan_done(ctx);
}

/* The plan of chain_head and away_fill forced onto the mock, over buffers p, and the eager
 * calls of its 18 runs done on twin buffers e; `alloc_fails`: the mock's next allocation
 * fails while xo_capture_end builds the chain. */
static xo_plan *mock_chain_plan(xo_context *ctx, int mock, xo_buffer **e, xo_buffer **p, int alloc_fails)
{
    ctx->forced = mock;
    make_bufs(ctx, e, p, FN);
    float io[FN];
    for (int r = 0; r < 18; r++) {
        xot_assert_ok(chain_head(ctx, e));
        xot_assert_ok(away_fill(ctx, e, io));
    }
    xot_assert_ok(xo_capture_begin(ctx));
    xot_assert_ok(chain_head(ctx, p));
    xot_assert_ok(away_fill(ctx, p, io));
    xo_plan *plan;
    if (alloc_fails)
        xo_mock_fail(XO_MOCK_ALLOC, 1);
    xot_assert_ok(xo_capture_end(ctx, &plan));
    xo_mock_fail(XO_MOCK_ALLOC, 0);
    return plan;
}

/* After 18 runs: the plan's buffers equal the eager twins'; then everything goes. */
static void mock_chain_done(xo_plan *plan, xo_buffer **e, xo_buffer **p, const char *what, const char *text)
{
    float none[FN];
    memset(none, 0, sizeof none);
    compare_bufs(e, p, FN, none, none, 1e-6, what, text);
    xo_plan_destroy(plan);
    for (int i = 0; i < NB; i++) {
        xo_buffer_destroy(e[i]);
        xo_buffer_destroy(p[i]);
    }
}

/* The mock's chain launch fails once: each op of the chain completes on the CPU (one
 * fallback per recorded op), with the right results; the plan is placed again without the
 * mock (plan_run.c), and after 16 runs with it again, where it fuses again. */
static void plan_chain_launch_fails(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
    xo_buffer *e[NB], *p[NB];
    xo_plan *plan = mock_chain_plan(ctx, mock, e, p, 0);
    xot_assert_ok(xo_finish(ctx));
    xot_assert_ok(xo_stats_reset(ctx));
    long runs0 = xo_mock_calls(XO_MOCK_RUN);
    xo_mock_fail(XO_MOCK_RUN, 1);
    xot_assert_ok(xo_plan_run(plan));
    xo_stats s1 = xot_plan_stats(ctx, mock), s0 = xot_plan_stats(ctx, 0);
    assert_int_equal(s1.fallbacks, 3);                     /* the chain's three ops */
    assert_int_equal(s0.ops, 3);                           /* ... completed on the CPU */
    assert_int_equal(s1.ops, 2);                           /* dot and fill */
    assert_int_equal(xo_mock_calls(XO_MOCK_RUN) - runs0, 1 + 2); /* the failed chain, dot, fill */
    for (int r = 2; r <= 17; r++) /* placed again without the mock; with it after run 17 */
        xot_assert_ok(xo_plan_run(plan));
    s0 = xot_plan_stats(ctx, 0);
    assert_int_equal(s0.ops, 3 + 16 * 5);
    long before = xo_mock_calls(XO_MOCK_RUN);
    xot_assert_ok(xo_plan_run(plan));
    s1 = xot_plan_stats(ctx, mock);
    assert_int_equal(s1.ops, 2 + 5);                      /* the chain's three ops, dot, fill */
    assert_int_equal(xo_mock_calls(XO_MOCK_RUN) - before, 3); /* one chain launch, dot, fill */
    assert_int_equal(s1.fallbacks, 3);
    char text[4096];
    xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
    mock_chain_done(plan, e, p, "a chain whose launch failed", text);
    xot_plan_done(ctx);
}

/* An allocation on the mock fails while xo_capture_end builds the chain: the ops run one
 * by one (right results), fusion is tried again after 16 runs (as a failed device is,
 * plan_run.c) and then fuses, and XO_LOG=summary's plan line counts the miss. */
static void plan_chain_alloc_fails(void **state)
{
    (void)state;
    setenv("XO_LOG", "summary", 1);
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
    unsetenv("XO_LOG");
    xo_buffer *e[NB], *p[NB];
    xo_plan *plan = mock_chain_plan(ctx, mock, e, p, 1);
    char text[4096];
    xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
    if (strchr(text, '+'))
        fail_msg("the chain fused although an allocation failed:\n%s", text);
    for (int r = 1; r <= 16; r++) {
        xot_assert_ok(xo_plan_run(plan));
        xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
        if ((strchr(text, '+') != NULL) != (r == 16))
            fail_msg("after run %d the chain should %sbe fused:\n%s", r, r == 16 ? "" : "not ", text);
    }
    long before = xo_mock_calls(XO_MOCK_RUN);
    xot_assert_ok(xo_plan_run(plan));
    xot_assert_ok(xo_plan_run(plan));
    assert_int_equal(xo_mock_calls(XO_MOCK_RUN) - before, 2 * 3); /* one chain launch, dot, fill */
    mock_chain_done(plan, e, p, "a chain fused again after an allocation failed", text);
    xot_capture cap;
    assert_int_equal(xot_capture_begin(&cap, 2), 0);
    xot_plan_done(ctx);
    char *err = xot_capture_end(&cap);
    if (!xot_contains(err, "18 runs") || !xot_contains(err, "left unfused by an allocation failure: 1 (0 now"))
        fail_msg("the summary should count the chain left unfused:\n%s", err);
    free(err);
}

/* A chain large enough for the CPU plugin to split its blocks over its threads (each
 * with its own temporaries): Adam's update with its temporary fused away. */
#define LN ((size_t)5 << 16)
static xo_status adam(xo_context *ctx, xo_buffer *const *b, size_t n)
{
    /* b: X = w, T = t, Y = m, A = v, B = g, OUT = lr_t (element 0) */
    RET(xo_saxpby(ctx, n, 0.1f, b[B], 0, 1, 0.9f, b[Y], 0, 1));
    RET(xo_sbinary(ctx, XO_MUL, n, b[B], 0, b[B], 0, b[T], 0));
    RET(xo_saxpby(ctx, n, 0.001f, b[T], 0, 1, 0.999f, b[A], 0, 1));
    RET(xo_sunary(ctx, XO_SQRT, n, b[A], 0, b[T], 0));
    RET(xo_sbinary_scalar(ctx, XO_ADD, n, b[T], 0, 1e-8f, b[T], 0));
    RET(xo_sbinary(ctx, XO_DIV, n, b[Y], 0, b[T], 0, b[T], 0));
    RET(xo_sscale_by(ctx, n, b[OUT], 0, b[T], 0, 1));
    RET(xo_saxpy(ctx, n, -1.0f, b[T], 0, 1, b[X], 0, 1));
    return xo_sfill(ctx, n - 1, 0.0f, b[T], 1, 1); /* not joined (n differs): overwrites part of T */
}

static void plan_fused_threads(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
    ctx->forced = 0;
    xo_buffer *e[NB], *p[NB];
    make_bufs(ctx, e, p, LN);
    float lr = 0.01f;
    xot_assert_ok(xo_buffer_write(e[OUT], 0, &lr, sizeof lr));
    xot_assert_ok(xo_buffer_write(p[OUT], 0, &lr, sizeof lr));
    for (int r = 0; r < 2; r++) { /* v must stay positive */
        xot_assert_ok(xo_sunary(ctx, XO_SQUARE, LN, e[A], 0, e[A], 0));
        xot_assert_ok(xo_sunary(ctx, XO_SQUARE, LN, p[A], 0, p[A], 0));
    }
    for (int r = 0; r < 3; r++)
        xot_assert_ok(adam(ctx, e, LN));
    xot_assert_ok(xo_capture_begin(ctx));
    xot_assert_ok(adam(ctx, p, LN));
    xo_plan *plan;
    xot_assert_ok(xo_capture_end(ctx, &plan));
    char text[4096];
    xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
    print_message("%s", text);
    assert_true(xot_contains(text, "step 1: saxpby+sbinary+saxpby+sunary+sbinary_scalar+sbinary+sscale_by+saxpy n=327680"));
    /* t's first element is left as the chain's last write stored it (the fill starts at 1) */
    assert_true(xot_contains(text, "; not stored: sbinary (call 2), sunary (call 4), sbinary_scalar (call 5), "
                                   "sbinary (call 6)\n"));
    for (int r = 0; r < 3; r++)
        xot_assert_ok(xo_plan_run(plan));
    float none[FN];
    memset(none, 0, sizeof none);
    compare_bufs(e, p, LN, none, none, 1e-5, "adam", text);
    xo_plan_destroy(plan);
    for (int i = 0; i < NB; i++) {
        xo_buffer_destroy(e[i]);
        xo_buffer_destroy(p[i]);
    }
    xot_plan_done(ctx);
}

/* ---- gemm epilogues --------------------------------------------------------------- */

enum { EM = 33, EN = 40, EK = 17 };
typedef struct epi_case {
    const char *name;
    const char *step1; /* what describe shows as step 1 */
    int layout, bias, act, in_place;
    float beta;
    int m; /* C's rows: EM where 0 */
} epi_case;

static const epi_case epis[] = {
    {"gemm, bias, tanh", "step 1: sgemm+sbias+sunary 33x40x17 on", XO_ROW_MAJOR, 1, XO_TANH, 1, 0.0f, 0},
    {"gemm, relu", "step 1: sgemm+sunary 33x40x17 on", XO_ROW_MAJOR, 0, XO_RELU, 1, 0.0f, 0},
    {"gemm, bias", "step 1: sgemm+sbias 33x40x17 on", XO_ROW_MAJOR, 1, -1, 1, 0.0f, 0},
    {"gemm beta 0.5, bias, sigmoid", "step 1: sgemm+sbias+sunary 33x40x17 on", XO_ROW_MAJOR, 1, XO_SIGMOID, 1, 0.5f, 0},
    {"activation written elsewhere", "step 1: sgemm+sbias 33x40x17 on", XO_ROW_MAJOR, 1, XO_TANH, 0, 0.0f, 0},
    {"column-major C", "step 1: sgemm 33x40x17 on", XO_COL_MAJOR, 1, XO_TANH, 1, 0.0f, 0},
    {"a gradient is no activation", "step 1: sgemm+sbias 33x40x17 on", XO_ROW_MAJOR, 1, XO_TANH_GRAD, 1, 0.0f, 0},
    {"one row, bias, tanh (batch 1)", "step 1: sgemm+sbias+sunary 1x40x17 on", XO_ROW_MAJOR, 1, XO_TANH, 1, 0.0f, 1},
    {"one row, beta 0.5, relu", "step 1: sgemm+sunary 1x40x17 on", XO_ROW_MAJOR, 0, XO_RELU, 1, 0.5f, 1},
};

/* b: A (EM x EK), B (EK x EN), C (EM x EN), bias (EN), D (EM x EN). */
static xo_status epi_program(xo_context *ctx, const epi_case *ec, xo_buffer *const *b)
{
    int row = ec->layout == XO_ROW_MAJOR;
    const size_t m = ec->m ? (size_t)ec->m : EM;
    RET(xo_sgemm(ctx, (xo_layout)ec->layout, XO_NO_TRANS, XO_NO_TRANS, m, EN, EK, 1.0f, b[0], 0, row ? EK : m, b[1], 0,
                 row ? EN : EK, ec->beta, b[2], 0, row ? EN : m));
    if (ec->bias)
        RET(xo_sbias(ctx, m, EN, b[2], 0, EN, b[3], 0));
    if (ec->act >= 0)
        RET(xo_sunary(ctx, (xo_unary_op)ec->act, m * EN, b[2], 0, b[ec->in_place ? 2 : 4], 0));
    return XO_OK;
}

/* A gemm whose C a bias and/or an activation then finish in place runs as one
 * gemm_bias_act, on every device, with the results of the ops one by one (and with
 * XO_PLAN=eager, the ops as recorded); other shapes stay apart. */
static void plan_gemm_epilogue(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
    for (int d = 0; d < xo_device_count(ctx); d++)
        for (size_t c = 0; c < sizeof epis / sizeof *epis; c++)
            for (int eager = 0; eager < 2; eager++) {
                const epi_case *ec = &epis[c];
                char what[160];
                snprintf(what, sizeof what, "device %d, %s%s", d, ec->name, eager ? ", XO_PLAN=eager" : "");
                ctx->forced = d;
                ctx->plan_eager = 0;
                xo_buffer *e[5], *p[5];
                float *init = malloc(sizeof(float) * EM * EN);
                for (int i = 0; i < 5; i++) {
                    xot_fill_f(init, EM * EN, (uint64_t)(i + 7), -1.0, 1.0);
                    e[i] = xot_buffer(ctx, init, sizeof(float) * EM * EN);
                    p[i] = xot_buffer(ctx, init, sizeof(float) * EM * EN);
                }
                free(init);
                for (int r = 0; r < 2; r++)
                    xot_assert_ok(epi_program(ctx, ec, e));
                xot_assert_ok(xo_capture_begin(ctx));
                xot_assert_ok(epi_program(ctx, ec, p));
                xo_plan *plan;
                xot_assert_ok(xo_capture_end(ctx, &plan));
                char text[4096];
                xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
                if (!xot_contains(text, ec->step1))
                    fail_msg("%s: describe lacks \"%s\"\n%s", what, ec->step1, text);
                ctx->plan_eager = eager;
                xot_assert_ok(xo_finish(ctx));
                xot_assert_ok(xo_stats_reset(ctx));
                xot_assert_ok(xo_plan_run(plan));
                xot_assert_ok(xo_plan_run(plan));
                uint64_t ops = 0;
                for (int k = 0; k < xo_device_count(ctx); k++)
                    ops += xot_plan_stats(ctx, k).ops;
                assert_int_equal(ops, 2 * (1 + ec->bias + (ec->act >= 0))); /* one count per recorded op */
                for (int i = 0; i < 5; i++) {
                    float *x = xot_read_all(p[i]), *y = xot_read_all(e[i]);
                    long bad = xot_first_mismatch_f(x, y, EM * EN, 1e-5);
                    if (bad >= 0)
                        fail_msg("%s: buffer %d differs at %ld (%g, eager %g)\n%s", what, i, bad, x[bad], y[bad], text);
                    free(x);
                    free(y);
                }
                xo_plan_destroy(plan);
                for (int i = 0; i < 5; i++) {
                    xo_buffer_destroy(e[i]);
                    xo_buffer_destroy(p[i]);
                }
            }
    ctx->plan_eager = 0;
    xot_plan_done(ctx);
}

/* ---- small products resolved when the plan is placed ------------------------------------ */

/* Elements a layout's rows x cols matrix with leading dimension ld spans. */
static size_t span(int row, size_t rows, size_t cols, size_t ld)
{
    return row ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
}

/* One random small product of the kernels' edges (m, n or k = 1, the ODE's shapes, padded
 * leading dimensions, transposes, both layouts, beta 0 over NaN, alpha 1 or not), f32 or f64,
 * as a gemm or as a one-line gemm_bias_act (bias or none, activations), captured alone as a
 * plan on the CPU: the plan's step calls the kernel the CPU plugin resolved for it (the
 * "xo_resolve" extra) where the small kernels take the shape, and every run computes what the
 * reference loops do with the operands as they are then (new A, B, bias and C before the
 * second run). */
static void small_case(xo_context *ctx, uint64_t *rng, int c, int *resolved)
{
    static const size_t dims[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100};
    static const size_t ode[][3] = {{16, 3, 100}, {100, 3, 16}, {1, 100, 3}, {16, 100, 3}, {1, 3, 100}};
    const int f64 = c & 1, gba = c % 3 == 0, row = xot_uniform(rng, 0, 2) < 1;
    const size_t nd = sizeof dims / sizeof *dims;
    size_t m = dims[(size_t)xot_uniform(rng, 0, nd)], n = dims[(size_t)xot_uniform(rng, 0, nd)],
           k = dims[(size_t)xot_uniform(rng, 0, nd)];
    if (c < 10) { /* the neural ODE's shapes first, row-major */
        m = ode[c / 2][0], n = ode[c / 2][1], k = ode[c / 2][2];
    }
    const xo_transpose ta = c >= 10 && xot_uniform(rng, 0, 2) < 1 ? XO_TRANS : XO_NO_TRANS,
                       tb = c >= 10 && xot_uniform(rng, 0, 2) < 1 ? XO_TRANS : XO_NO_TRANS;
    const xo_layout layout = row || c < 10 ? XO_ROW_MAJOR : XO_COL_MAJOR;
    const int r = layout == XO_ROW_MAJOR;
    if (gba) /* one line of C: what a plan resolves of gemm_bias_act */
        *(r ? &m : &n) = 1;
    const int at = ta == XO_TRANS, bt = tb == XO_TRANS;
    const size_t ar = at ? k : m, ac = at ? m : k, br = bt ? n : k, bc = bt ? k : n; /* A, B as stored */
    const size_t pad = xot_uniform(rng, 0, 2) < 1 ? 0 : (size_t)xot_uniform(rng, 1, 5);
    const size_t lda = (r ? ac : ar) + pad, ldb = (r ? bc : br) + pad, ldc = (r ? n : m) + pad;
    const size_t na = span(r, ar, ac, lda), nb = span(r, br, bc, ldb), nc = span(r, m, n, ldc);
    const double alpha = xot_uniform(rng, 0, 2) < 1 ? 1.0 : 0.75, beta = xot_uniform(rng, 0, 2) < 1 ? 0.0 : 0.5;
    static const xo_unary_op acts[] = {XO_IDENTITY, XO_TANH, XO_RELU, XO_SIGMOID};
    const xo_unary_op act = gba ? acts[(size_t)xot_uniform(rng, 0, 4)] : XO_IDENTITY;
    const int with_bias = gba && xot_uniform(rng, 0, 3) < 2;
    const size_t es = f64 ? sizeof(double) : sizeof(float);
    char what[200];
    snprintf(what, sizeof what, "case %d: %s %s %zux%zux%zu %c%c %s lda %zu ldb %zu ldc %zu alpha %g beta %g", c,
             f64 ? "f64" : "f32", gba ? "gemm_bias_act" : "gemm", m, n, k, at ? 'T' : 'N', bt ? 'T' : 'N',
             r ? "row" : "col", lda, ldb, ldc, alpha, beta);
    double *h[4]; /* A, B, C, bias in double; the buffers hold them as the dtype */
    const size_t cnt[4] = {na, nb, nc, n};
    xo_buffer *b[4];
    for (int i = 0; i < 4; i++) {
        h[i] = malloc(cnt[i] * sizeof(double));
        assert_non_null(h[i]);
        b[i] = NULL;
        assert_int_equal(xo_buffer_create(ctx, cnt[i] * es, &b[i]), XO_OK);
    }
    xo_plan *plan = NULL;
    for (int run = 0; run < 2; run++) {
        for (int i = 0; i < 4; i++) { /* new operands; C all NaN under beta 0 (never read) */
            xot_fill_d(h[i], cnt[i], (uint64_t)(c * 8 + run * 4 + i + 1), -1.0, 1.0);
            if (i == 2 && beta == 0)
                for (size_t e = 0; e < cnt[i]; e++)
                    h[i][e] = NAN;
            void *t = malloc(cnt[i] * es);
            for (size_t e = 0; e < cnt[i]; e++)
                if (f64)
                    ((double *)t)[e] = h[i][e];
                else
                    ((float *)t)[e] = (float)(h[i][e] = (float)h[i][e]);
            xot_assert_ok(xo_buffer_write(b[i], 0, t, cnt[i] * es));
            free(t);
        }
        if (!plan) {
            xot_assert_ok(xo_capture_begin(ctx));
            xo_buffer *bias = with_bias ? b[3] : NULL;
            if (gba && f64)
                xot_assert_ok(xo_dgemm_bias_act(ctx, layout, ta, tb, m, n, k, alpha, b[0], 0, lda, b[1], 0, ldb, beta,
                                                b[2], 0, ldc, bias, 0, act));
            else if (gba)
                xot_assert_ok(xo_sgemm_bias_act(ctx, layout, ta, tb, m, n, k, (float)alpha, b[0], 0, lda, b[1], 0, ldb,
                                                (float)beta, b[2], 0, ldc, bias, 0, act));
            else if (f64)
                xot_assert_ok(
                    xo_dgemm(ctx, layout, ta, tb, m, n, k, alpha, b[0], 0, lda, b[1], 0, ldb, beta, b[2], 0, ldc));
            else
                xot_assert_ok(xo_sgemm(ctx, layout, ta, tb, m, n, k, (float)alpha, b[0], 0, lda, b[1], 0, ldb,
                                       (float)beta, b[2], 0, ldc));
            xot_assert_ok(xo_capture_end(ctx, &plan));
        }
        xot_assert_ok(xo_plan_run(plan));
        xot_assert_ok(xo_finish(ctx));
        const int res = plan->steps[0].direct == XO_DIRECT_RESOLVED;
        if (c < 10 && !res)
            fail_msg("%s: the neural ODE's shape was not resolved", what);
        *resolved += res && run == 0;
        double *want = malloc(nc * sizeof(double));
        memcpy(want, h[2], nc * sizeof(double));
        xot_ref_dgemm_bias_act(layout, ta, tb, m, n, k, alpha, h[0], lda, h[1], ldb, beta, want, ldc,
                               with_bias ? h[3] : NULL, act);
        void *got = xot_read_all(b[2]);
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++) {
                const size_t e = r ? i * ldc + j : j * ldc + i;
                const double g = f64 ? ((double *)got)[e] : ((float *)got)[e];
                if (!(fabs(g - want[e]) <= (f64 ? 1e-12 : 2e-5) * (1 + fabs(want[e])) * (double)k))
                    fail_msg("%s, run %d%s: C(%zu, %zu) = %.9g, reference %.9g", what, run, res ? " (resolved)" : "",
                             i, j, g, want[e]);
            }
        free(got);
        free(want);
    }
    xo_plan_destroy(plan);
    for (int i = 0; i < 4; i++) {
        xo_buffer_destroy(b[i]);
        free(h[i]);
    }
}

static void plan_small_resolved(void **state)
{
    (void)state;
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
    ctx->forced = 0;
    uint64_t rng = 30;
    int resolved = 0, cases = 240;
    for (int c = 0; c < cases; c++)
        small_case(ctx, &rng, c, &resolved);
    /* most random shapes are small enough (not those with two of m, n, k past 32 and no line) */
    if (resolved < cases / 2)
        fail_msg("only %d of %d small products were resolved", resolved, cases);
    xot_plan_done(ctx);
}

/* ---- the CPU's chain runner on every op, every tail length ---------------------------- */

extern size_t xo__cpu_chain_min_n; /* plugins/cpu/cpu_chain.c: shorter chains run op by op */

#define SD(fp64, name, ...) ((fp64) ? xo_d##name(__VA_ARGS__) : xo_s##name(__VA_ARGS__))
enum { EA, EB, EC, EY, ED, EE, ENB };

/* A chain through every kind the runner decodes, with unary op u (and another in place),
 * the binary and binary_scalar sub-ops in turn, scal/axpy/axpby with their zero
 * coefficients in turn, outputs aliasing inputs (in place, c = b, copy then both read). */
static xo_status every_kind(xo_context *ctx, int fp64, int u, size_t n, xo_buffer **b)
{
    static const double ab[4][2] = {{0.5, 0.25}, {0.0, 0.25}, {0.5, 0.0}, {0.0, 0.0}};
    xo_status st = XO_OK;
#define STEP(call) if (st == XO_OK) st = (call)
    STEP(SD(fp64, unary, ctx, (xo_unary_op)u, n, b[EA], 0, b[EY], 0));
    STEP(SD(fp64, binary, ctx, (xo_binary_op)(u % XO_BINARY_OP_COUNT), n, b[EY], 0, b[EB], 0, b[EY], 0));
    STEP(SD(fp64, unary, ctx, (xo_unary_op)((u + 7) % XO_UNARY_OP_COUNT), n, b[EY], 0, b[EY], 0));
    STEP(SD(fp64, binary_scalar, ctx, (xo_binary_op)((u + 2) % XO_BINARY_OP_COUNT), n, b[EY], 0, 0.75, b[EY], 0));
    STEP(SD(fp64, scal, ctx, n, u % 4 == 0 ? 0.0 : 1.25, b[EY], 0, 1));
    STEP(SD(fp64, axpy, ctx, n, u % 3 == 0 ? 0.0 : 0.5, b[EA], 0, 1, b[EY], 0, 1));
    STEP(SD(fp64, axpby, ctx, n, ab[u % 4][0], b[EB], 0, 1, ab[u % 4][1], b[EY], 0, 1));
    STEP(SD(fp64, fill, ctx, n, 0.5, b[EE], 0, 1));
    STEP(SD(fp64, binary, ctx, XO_MAX, n, b[EY], 0, b[EE], 0, b[EY], 0));
    STEP(SD(fp64, scale_by, ctx, n, b[EC], (size_t)u % n, b[EY], 0, 1));
    STEP(SD(fp64, copy, ctx, n, b[EY], 0, 1, b[ED], 0, 1));
    STEP(SD(fp64, binary, ctx, XO_ADD, n, b[ED], 0, b[EY], 0, b[ED], 0));
    STEP(SD(fp64, binary, ctx, XO_SUB, n, b[EA], 0, b[EY], 0, b[EY], 0));
#undef STEP
    return st;
}

/* Inputs in [-2, 2] (the domains of log, sqrt... crossed, so NaN arises too), with NaN,
 * +-inf and zeros in a and b. */
static xo_buffer *every_kind_buffer(xo_context *ctx, int fp64, int which, size_t n)
{
    double *v = malloc(n * sizeof(double));
    xot_fill_d(v, n, 500 + (uint64_t)which, -2.0, 2.0);
    for (size_t i = 0; i < n; i++) {
        if (which == EA && i % 11 == 5) v[i] = NAN;
        if (which == EA && i % 17 == 9) v[i] = i % 2 ? INFINITY : -INFINITY;
        if (which == EB && i % 13 == 7) v[i] = NAN;
        if (which == EB && i % 19 == 3) v[i] = 0.0;
    }
    xo_buffer *buf;
    if (fp64) {
        buf = xot_buffer(ctx, v, n * sizeof(double));
    } else {
        float *f = malloc(n * sizeof(float));
        for (size_t i = 0; i < n; i++) f[i] = (float)v[i];
        buf = xot_buffer(ctx, f, n * sizeof(float));
        free(f);
    }
    free(v);
    return buf;
}

/* every_kind over n elements fused in a plan, against the same calls eagerly. */
static void check_every_kind(xo_context *ctx, int fp64, int u, size_t n)
{
    xo_buffer *e[ENB], *p[ENB];
    for (int i = 0; i < ENB; i++) {
        e[i] = every_kind_buffer(ctx, fp64, i, n);
        p[i] = every_kind_buffer(ctx, fp64, i, n);
    }
    xot_assert_ok(every_kind(ctx, fp64, u, n, e));
    xot_assert_ok(xo_capture_begin(ctx));
    xot_assert_ok(every_kind(ctx, fp64, u, n, p));
    xo_plan *plan;
    xot_assert_ok(xo_capture_end(ctx, &plan));
    char text[8192];
    xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
    if (!xot_contains(text, "unary+"))
        fail_msg("%s n=%zu unary %d: not fused\n%s", fp64 ? "f64" : "f32", n, u, text);
    xot_assert_ok(xo_plan_run(plan));
    for (int i = 0; i < ENB; i++) {
        void *x = xot_read_all(p[i]), *y = xot_read_all(e[i]);
        long bad = fp64 ? xot_first_mismatch_d(x, y, n, 1e-12) : xot_first_mismatch_f(x, y, n, 1e-6);
        if (bad >= 0)
            fail_msg("%s n=%zu unary %d: buffer %d differs at %ld (%g, eager %g)\n%s",
                     fp64 ? "f64" : "f32", n, u, i, bad,
                     fp64 ? ((double *)x)[bad] : (double)((float *)x)[bad],
                     fp64 ? ((double *)y)[bad] : (double)((float *)y)[bad], text);
        free(x);
        free(y);
        xo_buffer_destroy(e[i]);
        xo_buffer_destroy(p[i]);
    }
    xo_plan_destroy(plan);
}

/* Every op kind and sub-op the CPU's chain runner decodes, at every length to 65 and
 * around its blocks (and past 4 MB per operand, where they shorten), f32 and f64, in place and aliased, NaN, inf and zeros among the
 * inputs: the plan (fused whatever the length) against the same calls eagerly. */
static void plan_chain_cpu_every_op(void **state)
{
    (void)state;
    /* every length to 65 (the vector tails), then around the blocks of 128 and 1024 */
    static const size_t edges[] = {127, 128, 129, 255, 257, 1023, 1024, 1025, 4099, (1 << 20) + 37};
    size_t lengths[65 + sizeof edges / sizeof *edges];
    for (size_t l = 0; l < 65; l++)
        lengths[l] = l + 1;
    memcpy(lengths + 65, edges, sizeof edges);
    int mock;
    xo_context *ctx = xot_plan_context(&xot_plan_fast_mock, &mock);
    ctx->forced = 0;
    const size_t saved = xo__cpu_chain_min_n;
    xo__cpu_chain_min_n = 1; /* every length fuses */
    for (int fp64 = 0; fp64 <= 1; fp64++)
        for (size_t l = 0; l < sizeof lengths / sizeof *lengths; l++)
            for (int u = 0; u < XO_UNARY_OP_COUNT; u += lengths[l] > 4096 ? 5 : 1)
                check_every_kind(ctx, fp64, u, lengths[l]);
    xo__cpu_chain_min_n = saved;
    xot_plan_done(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plan_fused_chains),
        cmocka_unit_test(plan_fused_describe),
        cmocka_unit_test(plan_fused_away),
        cmocka_unit_test(plan_chain_every_device),
        cmocka_unit_test(plan_chain_launch_fails),
        cmocka_unit_test(plan_chain_alloc_fails),
        cmocka_unit_test(plan_fused_threads),
        cmocka_unit_test(plan_gemm_epilogue),
        cmocka_unit_test(plan_small_resolved),
        cmocka_unit_test(plan_chain_cpu_every_op),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
