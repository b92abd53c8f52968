/* Plans on the CUDA plugin with graphs (core/plan/plan_graph.c, the "xo_graph" extra): a
 * training step of a small MLP (forward, softmax cross-entropy, backward, SGD update; a
 * new minibatch written and the loss read back each run) forced on CUDA, captured once
 * and run several times, against the same calls made eagerly on twin buffers.
 *
 * On the stand-in driver (tests/cuda.cmake) its counters show what happened: argument
 * "graphs" expects one capture per graph segment and one launch per segment and run;
 * "nographs" (the stand-in without graph entries) expects none and the same results;
 * "broken" (XO_MOCK_CUDA_GRAPH_FAIL=instantiate) expects the ops run one by one after a
 * bounded number of failed captures. Without a CUDA device it exits 77. */
#include "xo_test.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 8, IN = 16, HID = 32, OUT = 10, RUNS = 5 };
static const float k_lr = 0.1f;

typedef struct net {
    xo_buffer *x, *labels, *w1, *b1, *h, *gh, *w2, *b2, *logits, *loss, *dlogits, *dw2, *dh, *dw1, *db2, *db1;
} net;

static const char *g_mode = "graphs";

#define TRY(expr)                           \
    do {                                    \
        xo_status try_st_ = (expr);         \
        if (try_st_ != XO_OK) return try_st_; \
    } while (0)

static void net_make(xo_context *ctx, net *n)
{
    float w1[IN * HID], w2[HID * OUT], b1[HID], b2[OUT];
    xot_fill_f(w1, IN * HID, 11, -0.5, 0.5);
    xot_fill_f(w2, HID * OUT, 12, -0.5, 0.5);
    xot_fill_f(b1, HID, 13, -0.1, 0.1);
    xot_fill_f(b2, OUT, 14, -0.1, 0.1);
    n->x = xot_buffer(ctx, NULL, B * IN * sizeof(float));
    n->labels = xot_buffer(ctx, NULL, B * sizeof(int32_t));
    n->w1 = xot_buffer(ctx, w1, sizeof w1);
    n->b1 = xot_buffer(ctx, b1, sizeof b1);
    n->h = xot_buffer(ctx, NULL, B * HID * sizeof(float));
    n->gh = xot_buffer(ctx, NULL, B * HID * sizeof(float));
    n->w2 = xot_buffer(ctx, w2, sizeof w2);
    n->b2 = xot_buffer(ctx, b2, sizeof b2);
    n->logits = xot_buffer(ctx, NULL, B * OUT * sizeof(float));
    n->loss = xot_buffer(ctx, NULL, B * sizeof(float));
    n->dlogits = xot_buffer(ctx, NULL, B * OUT * sizeof(float));
    n->dw2 = xot_buffer(ctx, NULL, HID * OUT * sizeof(float));
    n->dh = xot_buffer(ctx, NULL, B * HID * sizeof(float));
    n->dw1 = xot_buffer(ctx, NULL, IN * HID * sizeof(float));
    n->db2 = xot_buffer(ctx, NULL, OUT * sizeof(float));
    n->db1 = xot_buffer(ctx, NULL, HID * sizeof(float));
}

static void net_free(net *n)
{
    xo_buffer **all = (xo_buffer **)n;
    for (size_t i = 0; i < sizeof *n / sizeof *all; i++) xo_buffer_destroy(all[i]);
}

/* The minibatch of step `run`, written into the buffers the plan recorded writes from. */
static float g_xb[B * IN];
static int32_t g_lb[B];
static float g_loss[B];
static void minibatch(int run)
{
    xot_fill_f(g_xb, B * IN, 100 + (uint64_t)run, -1, 1);
    for (int i = 0; i < B; i++) g_lb[i] = (int32_t)((i * 7 + run * 3) % OUT);
}

/* One training step: 15 ops between a write of the minibatch and a read of the loss. */
#define STEP_OPS 15
static xo_status step(xo_context *ctx, net *n)
{
    const xo_layout R = XO_ROW_MAJOR;
    TRY(xo_buffer_write(n->x, 0, g_xb, sizeof g_xb));
    TRY(xo_buffer_write(n->labels, 0, g_lb, sizeof g_lb));
    TRY(xo_sgemm_bias_act(ctx, R, XO_NO_TRANS, XO_NO_TRANS, B, HID, IN, 1, n->x, 0, IN, n->w1, 0, HID, 0,
                                         n->h, 0, HID, n->b1, 0, XO_TANH));
    TRY(xo_sgemm(ctx, R, XO_NO_TRANS, XO_NO_TRANS, B, OUT, HID, 1, n->h, 0, HID, n->w2, 0, OUT, 0,
                                n->logits, 0, OUT));
    TRY(xo_sbias(ctx, B, OUT, n->logits, 0, OUT, n->b2, 0));
    TRY(xo_ssoftmax_xent(ctx, B, OUT, n->logits, 0, OUT, n->labels, 0, 1.0f / B, n->loss, 0, n->dlogits,
                                        0, OUT));
    TRY(xo_sgemm(ctx, R, XO_TRANS, XO_NO_TRANS, HID, OUT, B, 1, n->h, 0, HID, n->dlogits, 0, OUT, 0,
                                n->dw2, 0, OUT));
    TRY(xo_sreduce_axis(ctx, XO_SUM, B, OUT, n->dlogits, 0, OUT, 0, n->db2, 0));
    TRY(xo_sgemm(ctx, R, XO_NO_TRANS, XO_TRANS, B, HID, OUT, 1, n->dlogits, 0, OUT, n->w2, 0, OUT, 0,
                                n->dh, 0, HID));
    TRY(xo_sunary(ctx, XO_TANH_GRAD, B * HID, n->h, 0, n->gh, 0));
    TRY(xo_sbinary(ctx, XO_MUL, B * HID, n->dh, 0, n->gh, 0, n->dh, 0));
    TRY(xo_sgemm(ctx, R, XO_TRANS, XO_NO_TRANS, IN, HID, B, 1, n->x, 0, IN, n->dh, 0, HID, 0, n->dw1,
                                0, HID));
    TRY(xo_saxpy(ctx, HID * OUT, -k_lr, n->dw2, 0, 1, n->w2, 0, 1));
    TRY(xo_saxpy(ctx, IN * HID, -k_lr, n->dw1, 0, 1, n->w1, 0, 1));
    TRY(xo_saxpy(ctx, OUT, -k_lr, n->db2, 0, 1, n->b2, 0, 1));
    TRY(xo_sreduce_axis(ctx, XO_SUM, B, HID, n->dh, 0, HID, 0, n->db1, 0));
    TRY(xo_saxpby(ctx, HID, -k_lr, n->db1, 0, 1, 1, n->b1, 0, 1));
    return xo_buffer_read(n->loss, 0, g_loss, sizeof g_loss);
}

/* The stand-in driver's counters: captures, instantiations, launches, live graphs. */
static int mock_counts(long out[4])
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void *sym = lib ? dlsym(lib, "xo_mock_cuda_graph_counts") : NULL;
    if (lib) dlclose(lib);
    memset(out, 0, 4 * sizeof *out);
    if (!sym) return 0;
    void (*fn)(long *);
    memcpy(&fn, &sym, sizeof fn);
    fn(out);
    return 1;
}

static void compare(xo_buffer *got, xo_buffer *want, size_t n, const char *what)
{
    float *g = xot_read_all(got), *w = xot_read_all(want);
    xot_assert_close_f(g, w, n, what);
    free(g);
    free(w);
}

static void test_training_step(void **state)
{
    (void)state;
    xo_context *ctx = NULL;
    xot_assert_ok(xo_context_create(&ctx));
    int cuda = -1;
    if (xo_device_find(ctx, "cuda", &cuda) != XO_OK) {
        xo_context_destroy(ctx);
        skip();
    }
    xot_assert_ok(xo_set_device(ctx, "cuda"));
    net eager, planned;
    net_make(ctx, &eager);
    net_make(ctx, &planned);

    /* Record the step (minibatch 0's data is what the recorded writes will copy). */
    minibatch(0);
    xot_assert_ok(xo_capture_begin(ctx));
    xot_assert_ok(step(ctx, &planned));
    xo_plan *plan = NULL;
    xot_assert_ok(xo_capture_end(ctx, &plan));
    char text[4096];
    xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
    if (strcmp(g_mode, "nographs") == 0) assert_false(xot_contains(text, "graph:"));
    else if (!xot_contains(text, "graph: recorded calls 3..")) fail_msg("no graph segment in:\n%s", text);
    xot_assert_ok(xo_finish(ctx));
    xot_assert_ok(xo_stats_reset(ctx));

    long c0[4], c1[4], cn[4];
    const int mock = mock_counts(c0);
    float eager_loss[B];
    for (int run = 0; run < RUNS; run++) {
        minibatch(run);
        xot_assert_ok(step(ctx, &eager));
        memcpy(eager_loss, g_loss, sizeof g_loss);
        xot_assert_ok(xo_plan_run(plan)); /* writes g_xb/g_lb, reads into g_loss */
        xot_assert_close_f(g_loss, eager_loss, B, "loss read back by the plan");
        if (run == 0) mock_counts(c1);
    }
    xot_assert_ok(xo_finish(ctx));
    compare(planned.w1, eager.w1, IN * HID, "w1 after the steps");
    compare(planned.w2, eager.w2, HID * OUT, "w2 after the steps");
    compare(planned.b1, eager.b1, HID, "b1 after the steps");
    compare(planned.b2, eager.b2, OUT, "b2 after the steps");
    compare(planned.dh, eager.dh, B * HID, "dh after the steps");

    /* Every op ran on CUDA and counts once per run, graph or not (eager and plan). */
    xo_stats st;
    xot_assert_ok(xo_stats_get(ctx, cuda, &st));
    assert_int_equal(st.ops, 2 * RUNS * STEP_OPS);
    assert_int_equal(st.fallbacks, 0);

    mock_counts(cn);
    if (mock && strcmp(g_mode, "graphs") == 0) {
        const long segs = c1[0] - c0[0];
        assert_true(segs >= 1);                        /* captured at the first run ... */
        assert_int_equal(cn[0] - c0[0], segs);         /* ... and never again */
        assert_int_equal(cn[2] - c0[2], segs * RUNS);  /* one launch per segment and run */
        assert_int_equal(cn[3] - c0[3], segs);         /* alive until the plan goes */
    } else if (mock && strcmp(g_mode, "broken") == 0) {
        assert_int_equal(cn[1] - c0[1], 0);            /* nothing instantiated */
        assert_int_equal(cn[2] - c0[2], 0);            /* nothing launched */
        const long tries = cn[0] - c0[0];
        assert_true(tries >= 1 && tries <= 2 * (c1[0] - c0[0])); /* bounded: then op by op */
        assert_true(c1[0] - c0[0] >= 1);
    } else if (mock) { /* nographs */
        assert_int_equal(cn[0] - c0[0], 0);
        assert_int_equal(cn[2] - c0[2], 0);
    }
    xo_plan_destroy(plan);
    if (mock) {
        mock_counts(cn);
        assert_int_equal(cn[3], c0[3]); /* the plan's graphs went with it */
    }
    net_free(&eager);
    net_free(&planned);
    xo_context_destroy(ctx);
}

/* ---- two threads, one context, a plan each ------------------------------------------------
 * One thread's capture holds its device's other callers back until it ends (cuda_graph.c):
 * both plans still give their eager twins' results. No cmocka asserts off the main thread:
 * a worker returns what went wrong. */
typedef struct worker {
    xo_context *ctx;
    int id;
    char failure[256];
} worker;

static void *train_worker(void *arg)
{
    worker *w = arg;
    net eager, planned;
    net_make(w->ctx, &eager);
    net_make(w->ctx, &planned);
    float xb[B * IN], loss[B], eager_loss[B];
    int32_t lb[B];
    xo_plan *plan = NULL;
    /* The step writes from this worker's own host arrays (the globals are the main test's). */
    xo_status st = xo_capture_begin(w->ctx);
    for (int run = -1; run < RUNS && st == XO_OK; run++) {
        xot_fill_f(xb, B * IN, 500 + (uint64_t)(run + 1) + 50 * (uint64_t)w->id, -1, 1);
        for (int i = 0; i < B; i++) lb[i] = (int32_t)((i * 5 + run + w->id) % OUT);
        net *n = run < 0 ? &planned : &eager;
        for (int pass = 0; pass < (run < 0 ? 1 : 2) && st == XO_OK; pass++) {
            if (pass == 1) {
                memcpy(eager_loss, loss, sizeof loss);
                st = xo_plan_run(plan);
                if (st == XO_OK && xot_first_mismatch_f(loss, eager_loss, B, 1e-4) >= 0)
                    snprintf(w->failure, sizeof w->failure, "worker %d run %d: loss differs from eager", w->id, run);
                break;
            }
            const xo_layout R = XO_ROW_MAJOR;
            st = xo_buffer_write(n->x, 0, xb, sizeof xb);
            if (st == XO_OK) st = xo_buffer_write(n->labels, 0, lb, sizeof lb);
            if (st == XO_OK)
                st = xo_sgemm_bias_act(w->ctx, R, XO_NO_TRANS, XO_NO_TRANS, B, HID, IN, 1, n->x, 0, IN, n->w1, 0, HID, 0,
                                       n->h, 0, HID, n->b1, 0, XO_TANH);
            if (st == XO_OK)
                st = xo_sgemm(w->ctx, R, XO_NO_TRANS, XO_NO_TRANS, B, OUT, HID, 1, n->h, 0, HID, n->w2, 0, OUT, 0,
                              n->logits, 0, OUT);
            if (st == XO_OK)
                st = xo_ssoftmax_xent(w->ctx, B, OUT, n->logits, 0, OUT, n->labels, 0, 1.0f / B, n->loss, 0,
                                      n->dlogits, 0, OUT);
            if (st == XO_OK)
                st = xo_sgemm(w->ctx, R, XO_TRANS, XO_NO_TRANS, HID, OUT, B, 1, n->h, 0, HID, n->dlogits, 0, OUT, 0,
                              n->dw2, 0, OUT);
            if (st == XO_OK) st = xo_saxpy(w->ctx, HID * OUT, -k_lr, n->dw2, 0, 1, n->w2, 0, 1);
            if (st == XO_OK) st = xo_buffer_read(n->loss, 0, loss, sizeof loss);
            if (st == XO_OK && run < 0) st = xo_capture_end(w->ctx, &plan);
        }
    }
    if (st != XO_OK && !w->failure[0])
        snprintf(w->failure, sizeof w->failure, "worker %d: %s", w->id, xo_last_error());
    if (st == XO_OK && !w->failure[0]) {
        float *got = xot_read_all(planned.w2), *want = xot_read_all(eager.w2);
        if (xot_first_mismatch_f(got, want, HID * OUT, 1e-4) >= 0)
            snprintf(w->failure, sizeof w->failure, "worker %d: w2 differs from eager", w->id);
        free(got);
        free(want);
    }
    xo_plan_destroy(plan);
    net_free(&eager);
    net_free(&planned);
    return NULL;
}

static void test_two_threads(void **state)
{
    (void)state;
    xo_context *ctx = NULL;
    xot_assert_ok(xo_context_create(&ctx));
    xot_assert_ok(xo_set_device(ctx, "cuda"));
    worker w[2] = {{.ctx = ctx, .id = 0}, {.ctx = ctx, .id = 1}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&t[i], NULL, train_worker, &w[i]), 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 2; i++)
        if (w[i].failure[0]) fail_msg("%s", w[i].failure);
    xo_context_destroy(ctx);
}

int main(int argc, char **argv)
{
    if (argc > 1) g_mode = argv[1];
    if (strcmp(g_mode, "broken") == 0) setenv("XO_MOCK_CUDA_GRAPH_FAIL", "instantiate", 1);
    int skip = xot_skip_without("cuda"); /* a real one or the stand-in */
    if (skip) return skip;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_training_step), cmocka_unit_test(test_two_threads)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
