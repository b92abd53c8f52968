/* One context shared by four threads, each with its own buffers, each running a mix of
 * ops in a loop (auto placement, then every device forced in turn) and checking the
 * results; and the last decision is per thread. Worker threads record failures; the
 * main thread asserts (cmocka's failure handling is not thread-safe). */
#include "xo_test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 4
#define ITERS 12
#define GM 33
#define GN 17
#define GK 9
#define VN 1000

static xo_context *g_ctx;

typedef struct worker {
    int id;
    int failures;
    char msg[256];
} worker;

static void record(worker *w, const char *fmt, const char *what, xo_status st)
{
    if (w->failures++ == 0)
        snprintf(w->msg, sizeof w->msg, fmt, what, xo_status_string(st), xo_last_error());
}

#define CHECK_OK(w, expr)                                                                \
    do {                                                                                 \
        xo_status st_ = (expr);                                                          \
        if (st_ != XO_OK) {                                                              \
            record((w), "%s: %s (%s)", #expr, st_);                                      \
            goto done;                                                                   \
        }                                                                                \
    } while (0)

static void check_close(worker *w, const float *got, const float *want, size_t n, const char *what)
{
    long i = xot_first_mismatch_f(got, want, n, XOT_TOL_F);
    if (i >= 0 && w->failures++ == 0)
        snprintf(w->msg, sizeof w->msg, "thread %d: %s: element %ld got %g want %g", w->id, what,
                 i, (double)got[i], (double)want[i]);
}

static void *mixed_ops(void *arg)
{
    worker *w = arg;
    float *a = malloc(GM * GK * sizeof(float)), *b = malloc(GK * GN * sizeof(float));
    float *c = malloc(GM * GN * sizeof(float)), *cw = malloc(GM * GN * sizeof(float));
    float *x = malloc(VN * sizeof(float)), *y = malloc(VN * sizeof(float));
    float *yw = malloc(VN * sizeof(float)), *u = malloc(VN * sizeof(float));
    float *uw = malloc(VN * sizeof(float)), out[2], outw[2];
    xo_buffer *ba = NULL, *bb = NULL, *bc = NULL, *bx = NULL, *by = NULL, *bu = NULL, *bo = NULL;
    CHECK_OK(w, xo_buffer_create(g_ctx, GM * GK * sizeof(float), &ba));
    CHECK_OK(w, xo_buffer_create(g_ctx, GK * GN * sizeof(float), &bb));
    CHECK_OK(w, xo_buffer_create(g_ctx, GM * GN * sizeof(float), &bc));
    CHECK_OK(w, xo_buffer_create(g_ctx, VN * sizeof(float), &bx));
    CHECK_OK(w, xo_buffer_create(g_ctx, VN * sizeof(float), &by));
    CHECK_OK(w, xo_buffer_create(g_ctx, VN * sizeof(float), &bu));
    CHECK_OK(w, xo_buffer_create(g_ctx, 2 * sizeof(float), &bo));
    for (int it = 0; it < ITERS && w->failures == 0; it++) {
        uint64_t seed = (uint64_t)w->id * 100000u + (uint64_t)it * 10u;
        xot_fill_f(a, GM * GK, seed, -1, 1);
        xot_fill_f(b, GK * GN, seed + 1, -1, 1);
        xot_fill_f(x, VN, seed + 2, -1, 1);
        xot_fill_f(y, VN, seed + 3, -1, 1);
        CHECK_OK(w, xo_buffer_write(ba, 0, a, GM * GK * sizeof(float)));
        CHECK_OK(w, xo_buffer_write(bb, 0, b, GK * GN * sizeof(float)));
        CHECK_OK(w, xo_buffer_write(bx, 0, x, VN * sizeof(float)));
        CHECK_OK(w, xo_buffer_write(by, 0, y, VN * sizeof(float)));

        /* C = A B; y += 0.5 x; u = tanh(y); out[0] = sum(u); out[1] = x . y */
        CHECK_OK(w, xo_sgemm(g_ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, GM, GN, GK, 1.0f,
                             ba, 0, GK, bb, 0, GN, 0.0f, bc, 0, GN));
        CHECK_OK(w, xo_saxpy(g_ctx, VN, 0.5f, bx, 0, 1, by, 0, 1));
        CHECK_OK(w, xo_sunary(g_ctx, XO_TANH, VN, by, 0, bu, 0));
        CHECK_OK(w, xo_sreduce(g_ctx, XO_SUM, VN, bu, 0, bo, 0));
        CHECK_OK(w, xo_sdot(g_ctx, VN, bx, 0, 1, by, 0, 1, bo, 1));

        xot_ref_sgemm(XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, GM, GN, GK, 1.0f, a, GK, b, GN,
                      0.0f, cw, GN);
        memcpy(yw, y, VN * sizeof(float));
        xot_ref_saxpy(VN, 0.5f, x, 1, yw, 1);
        xot_ref_sunary(XO_TANH, VN, yw, uw);
        outw[0] = xot_ref_sreduce(XO_SUM, VN, uw);
        outw[1] = xot_ref_sdot(VN, x, 1, yw, 1);

        CHECK_OK(w, xo_buffer_read(bc, 0, c, GM * GN * sizeof(float)));
        CHECK_OK(w, xo_buffer_read(by, 0, y, VN * sizeof(float)));
        CHECK_OK(w, xo_buffer_read(bu, 0, u, VN * sizeof(float)));
        CHECK_OK(w, xo_buffer_read(bo, 0, out, sizeof out));
        check_close(w, c, cw, GM * GN, "sgemm");
        check_close(w, y, yw, VN, "saxpy");
        check_close(w, u, uw, VN, "sunary");
        check_close(w, out, outw, 2, "sreduce/sdot");
    }
done:
    xo_buffer_destroy(ba);
    xo_buffer_destroy(bb);
    xo_buffer_destroy(bc);
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
    xo_buffer_destroy(bu);
    xo_buffer_destroy(bo);
    free(a);
    free(b);
    free(c);
    free(cw);
    free(x);
    free(y);
    free(yw);
    free(u);
    free(uw);
    return NULL;
}

static void run_workers(void *(*fn)(void *), worker *ws)
{
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        memset(&ws[i], 0, sizeof ws[i]);
        ws[i].id = i;
        assert_int_equal(pthread_create(&th[i], NULL, fn, &ws[i]), 0);
    }
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    xot_assert_ok(xo_finish(g_ctx));
    for (int i = 0; i < NTHREADS; i++) {
        if (ws[i].failures) {
            print_error("thread %d: %d failure(s); first: %s\n", i, ws[i].failures, ws[i].msg);
            fail();
        }
    }
}

static void test_mixed_auto(void **state)
{
    (void)state;
    worker ws[NTHREADS];
    xot_assert_ok(xo_set_device(g_ctx, "auto"));
    run_workers(mixed_ops, ws);
}

static void test_mixed_forced(void **state)
{
    (void)state;
    worker ws[NTHREADS];
    for (int d = 0; d < xo_device_count(g_ctx); d++) {
        char spec[64];
        xot_device_spec(g_ctx, d, spec, sizeof spec);
        xot_assert_ok(xo_set_device(g_ctx, spec));
        run_workers(mixed_ops, ws);
    }
    xot_assert_ok(xo_set_device(g_ctx, "auto"));
}

/* ---- the last decision is per thread ------------------------------------------------ */

static pthread_barrier_t g_barrier;

static void *own_decision(void *arg)
{
    worker *w = arg;
    static const char *names[NTHREADS] = {"saxpy", "sdot", "sunary", "sreduce"};
    xo_buffer *x = NULL, *y = NULL, *o = NULL;
    xo_decision d;
    /* before this thread's first op: device -1, ndevices 0 */
    if (xo_last_decision(g_ctx, &d) != XO_OK || d.device != -1 || d.ndevices != 0) {
        w->failures++;
        snprintf(w->msg, sizeof w->msg, "fresh thread: device %d ndevices %d", d.device, d.ndevices);
    }
    float h[64];
    xot_fill_f(h, 64, (uint64_t)w->id, -1, 1);
    if (xo_buffer_create(g_ctx, sizeof h, &x) != XO_OK || xo_buffer_create(g_ctx, sizeof h, &y) != XO_OK ||
        xo_buffer_create(g_ctx, sizeof h, &o) != XO_OK || xo_buffer_write(x, 0, h, sizeof h) != XO_OK) {
        w->failures++;
        snprintf(w->msg, sizeof w->msg, "buffers: %s", xo_last_error());
    }
    int usable = w->failures == 0;
    /* every thread goes through every barrier, even after a failure */
    for (int round = 0; round < 20; round++) {
        xo_status st = XO_OK;
        if (usable) switch (w->id) {
        case 0: st = xo_saxpy(g_ctx, 64, 1.0f, x, 0, 1, y, 0, 1); break;
        case 1: st = xo_sdot(g_ctx, 64, x, 0, 1, y, 0, 1, o, 0); break;
        case 2: st = xo_sunary(g_ctx, XO_RELU, 64, x, 0, y, 0); break;
        default: st = xo_sreduce(g_ctx, XO_SUM, 64, x, 0, o, 0); break;
        }
        if (st != XO_OK && w->failures++ == 0)
            snprintf(w->msg, sizeof w->msg, "%s: %s", names[w->id], xo_last_error());
        /* everybody has run an op; now each looks at its own decision */
        pthread_barrier_wait(&g_barrier);
        if (usable && (xo_last_decision(g_ctx, &d) != XO_OK || strcmp(d.op, names[w->id]) != 0 ||
            d.device < 0 || d.ndevices != xo_device_count(g_ctx))) {
            if (w->failures++ == 0)
                snprintf(w->msg, sizeof w->msg, "round %d: last decision op \"%.32s\" device %d "
                         "ndevices %d, want \"%s\"", round, d.op, d.device, d.ndevices, names[w->id]);
        }
        pthread_barrier_wait(&g_barrier);
    }
    xo_buffer_destroy(x);
    xo_buffer_destroy(y);
    xo_buffer_destroy(o);
    return NULL;
}

static void test_decision_per_thread(void **state)
{
    (void)state;
    /* the main thread never ran an op on g_ctx */
    xo_decision d;
    xot_assert_ok(xo_last_decision(g_ctx, &d));
    assert_int_equal(d.device, -1);
    assert_int_equal(d.ndevices, 0);
    worker ws[NTHREADS];
    assert_int_equal(pthread_barrier_init(&g_barrier, NULL, NTHREADS), 0);
    run_workers(own_decision, ws);
    pthread_barrier_destroy(&g_barrier);
}

static int setup(void **state)
{
    (void)state;
    return xo_context_create(&g_ctx) == XO_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    xo_context_destroy(g_ctx);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decision_per_thread),
        cmocka_unit_test(test_mixed_auto),
        cmocka_unit_test(test_mixed_forced),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
