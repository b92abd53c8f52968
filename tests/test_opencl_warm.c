/* A CLBlast routine's first use on a device is compiled outside the CLBlast lock
 * (plugins/opencl/cl_warm.c), once per device and precision for every context:
 *  - the first sgemm warms GEMM once; later sgemms, and a second context's, do not;
 *  - while one thread's first sgemv is held inside its warm-up (the test's hook stands
 *    for a compile that takes seconds), another thread's saxpy on the same device, a
 *    routine already warm, completes: it is not queued behind that compile (on runtimes
 *    that take several calls at once; the others get one call at a time, by design);
 *  - with every runtime given one call at a time (as NVIDIA's is: cl_device.c), four
 *    threads' first and later gemm, gemv, axpy and dot calls, warm-ups included, neither
 *    deadlock nor go wrong.
 * Runs on device "opencl" (skipped, exit 77, when there is none). */
#include "xo_test.h"
#include "cl_testing.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 256

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static xo_context *open_forced(void)
{
    xo_context *ctx;
    xot_assert_ok(xo_context_create(&ctx));
    xot_assert_ok(xo_set_device(ctx, "opencl"));
    return ctx;
}

/* C = A B (N x N) on ctx, checked. */
static void sgemm_checked(xo_context *ctx, unsigned seed)
{
    static float a[N * N], b[N * N], want[N * N];
    xot_fill_f(a, N * N, seed, -1, 1);
    xot_fill_f(b, N * N, seed + 1, -1, 1);
    xo_buffer *ba = xot_buffer(ctx, a, sizeof a), *bb = xot_buffer(ctx, b, sizeof b), *bc = xot_buffer(ctx, NULL, sizeof a);
    xot_assert_ok(xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, N, N, N, 1.0f, ba, 0, N, bb, 0, N, 0.0f, bc, 0, N));
    xot_ref_sgemm(XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, N, N, N, 1.0f, a, N, b, N, 0.0f, want, N);
    float *got = xot_read_all(bc);
    xot_assert_close_f(got, want, N * N, "sgemm on OpenCL");
    free(got);
    xo_buffer_destroy(ba);
    xo_buffer_destroy(bb);
    xo_buffer_destroy(bc);
}

static void warmed_once_per_device(void **state)
{
    (void)state;
    xo_context *keep = open_forced(); /* holds the shared device while others come and go */
    uint64_t w0 = xo__cl_warmups();
    sgemm_checked(keep, 1);
    uint64_t w1 = xo__cl_warmups();
    assert_true(w1 - w0 <= 1); /* 1, or 0 where an earlier test warmed it in this process */
    sgemm_checked(keep, 3);
    assert_int_equal(xo__cl_warmups(), w1);
    xo_context *other = open_forced();
    sgemm_checked(other, 5);
    assert_int_equal(xo__cl_warmups(), w1); /* the cl_context, and its compiled programs, are shared */
    xo_context_destroy(other);
    xo_context_destroy(keep);
}

/* ---- not queued behind another thread's compile ------------------------------------- */

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_in_warmup, g_release;

/* The hook: say "inside", then wait for the main thread (10 s at most). */
static void hold_warmup(void)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&g_mu);
    g_in_warmup = 1;
    pthread_cond_broadcast(&g_cv);
    while (!g_release)
        if (pthread_cond_timedwait(&g_cv, &g_mu, &until) != 0)
            break;
    pthread_mutex_unlock(&g_mu);
}

typedef struct gemv_job {
    xo_context *ctx;
    xo_status st;
    float y[N];
    float want[N];
} gemv_job;

static void *first_sgemv(void *arg)
{
    gemv_job *j = arg;
    static float a[N * N], x[N];
    xot_fill_f(a, N * N, 7, -1, 1);
    xot_fill_f(x, N, 8, -1, 1);
    memset(j->want, 0, sizeof j->want);
    xot_ref_sgemv(XO_ROW_MAJOR, XO_NO_TRANS, N, N, 1.0f, a, N, x, 1, 0.0f, j->want, 1);
    xo_buffer *ba, *bx, *by;
    j->st = XO_ERR_DEVICE;
    if (xo_buffer_create(j->ctx, sizeof a, &ba) != XO_OK || xo_buffer_create(j->ctx, sizeof x, &bx) != XO_OK ||
        xo_buffer_create(j->ctx, sizeof j->y, &by) != XO_OK)
        return NULL;
    xo_buffer_write(ba, 0, a, sizeof a);
    xo_buffer_write(bx, 0, x, sizeof x);
    j->st = xo_sgemv(j->ctx, XO_ROW_MAJOR, XO_NO_TRANS, N, N, 1.0f, ba, 0, N, bx, 0, 1, 0.0f, by, 0, 1);
    if (j->st == XO_OK)
        j->st = xo_buffer_read(by, 0, j->y, sizeof j->y);
    xo_buffer_destroy(ba);
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
    return NULL;
}

static void not_held_behind_a_compile(void **state)
{
    (void)state;
    xo_context *ctx = open_forced();
    if (xo__cl_one_call_at_a_time(0)) {
        print_message("this runtime gets one call at a time: a saxpy waits behind a compile, by design\n");
        xo_context_destroy(ctx);
        skip();
    }
    float x[N], y[N];
    xot_fill_f(x, N, 11, -1, 1);
    xot_fill_f(y, N, 12, -1, 1);
    xo_buffer *bx = xot_buffer(ctx, x, sizeof x), *by = xot_buffer(ctx, y, sizeof y);
    xot_assert_ok(xo_saxpy(ctx, N, 2.0f, bx, 0, 1, by, 0, 1)); /* AXPY warm */
    xot_ref_saxpy(N, 2.0f, x, 1, y, 1);
    uint64_t w0 = xo__cl_warmups();

    xo__cl_warm_hook = hold_warmup;
    gemv_job job = {.ctx = ctx};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, first_sgemv, &job), 0);
    pthread_mutex_lock(&g_mu);
    while (!g_in_warmup) pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu);

    /* The other thread is inside GEMV's warm-up: a saxpy now must not wait for it. */
    double t0 = now_us();
    xot_assert_ok(xo_saxpy(ctx, N, 2.0f, bx, 0, 1, by, 0, 1));
    float got[N];
    xot_assert_ok(xo_buffer_read(by, 0, got, sizeof got));
    double waited_s = (now_us() - t0) * 1e-6;
    int released_by_timeout;
    pthread_mutex_lock(&g_mu);
    released_by_timeout = g_release == 0 && waited_s >= 9.0;
    g_release = 1;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
    pthread_join(t, NULL);
    xo__cl_warm_hook = NULL;

    print_message("saxpy beside a held warm-up took %.3f s\n", waited_s);
    if (released_by_timeout || waited_s > 5.0)
        fail_msg("a saxpy waited %.1f s for another thread's first sgemv to compile", waited_s);
    xot_ref_saxpy(N, 2.0f, x, 1, y, 1);
    xot_assert_close_f(got, y, N, "saxpy beside the warm-up");
    xot_assert_ok(job.st);
    xot_assert_close_f(job.y, job.want, N, "the held sgemv");
    assert_true(xo__cl_warmups() - w0 <= 2); /* GEMV, and COPY (beta = 0 copies a temporary) */
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
    xo_context_destroy(ctx);
}

/* ---- one call at a time, from four threads ---------------------------------------- */

#define SN 96
typedef struct serial_job {
    xo_context *ctx;
    unsigned seed;
    int failures;
    char msg[200];
} serial_job;

static int close_enough(const float *got, const float *want, size_t n, float tol)
{
    for (size_t i = 0; i < n; i++)
        if (!(fabsf(got[i] - want[i]) <= tol * (1.0f + fabsf(want[i])))) return 0;
    return 1;
}

static void *serial_worker(void *arg)
{
    serial_job *j = arg;
    float a[SN * SN], b[SN * SN], c[SN * SN], want[SN * SN], x[SN], y[SN], y0[SN], dot = 0, want_dot = 0;
    xot_fill_f(a, SN * SN, j->seed, -1, 1);
    xot_fill_f(b, SN * SN, j->seed + 1, -1, 1);
    xot_fill_f(x, SN, j->seed + 2, -1, 1);
    xot_fill_f(y0, SN, j->seed + 3, -1, 1);
    xo_buffer *ba = NULL, *bb = NULL, *bc = NULL, *bx = NULL, *by = NULL, *bd = NULL;
    xo_status st = xo_buffer_create(j->ctx, sizeof a, &ba);
    if (st == XO_OK) st = xo_buffer_create(j->ctx, sizeof b, &bb);
    if (st == XO_OK) st = xo_buffer_create(j->ctx, sizeof c, &bc);
    if (st == XO_OK) st = xo_buffer_create(j->ctx, sizeof x, &bx);
    if (st == XO_OK) st = xo_buffer_create(j->ctx, sizeof y, &by);
    if (st == XO_OK) st = xo_buffer_create(j->ctx, sizeof(float), &bd);
    if (st == XO_OK) st = xo_buffer_write(ba, 0, a, sizeof a);
    if (st == XO_OK) st = xo_buffer_write(bb, 0, b, sizeof b);
    if (st == XO_OK) st = xo_buffer_write(bx, 0, x, sizeof x);
    for (int it = 0; it < 3 && st == XO_OK; it++) {
        st = xo_buffer_write(by, 0, y0, sizeof y0);
        if (st == XO_OK)
            st = xo_sgemm(j->ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, SN, SN, SN, 1.0f, ba, 0, SN, bb, 0, SN,
                          0.0f, bc, 0, SN);
        if (st == XO_OK)
            st = xo_sgemv(j->ctx, XO_ROW_MAJOR, XO_NO_TRANS, SN, SN, 1.0f, ba, 0, SN, bx, 0, 1, 1.0f, by, 0, 1);
        if (st == XO_OK) st = xo_saxpy(j->ctx, SN, 2.0f, bx, 0, 1, by, 0, 1);
        if (st == XO_OK) st = xo_sdot(j->ctx, SN, bx, 0, 1, bx, 0, 1, bd, 0);
        if (st == XO_OK) st = xo_buffer_read(bc, 0, c, sizeof c);
        if (st == XO_OK) st = xo_buffer_read(by, 0, y, sizeof y);
        if (st == XO_OK) st = xo_buffer_read(bd, 0, &dot, sizeof dot);
    }
    if (st != XO_OK) {
        j->failures++;
        snprintf(j->msg, sizeof j->msg, "thread %u: %s (%s)", j->seed, xo_status_string(st), xo_last_error());
    } else {
        xot_ref_sgemm(XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, SN, SN, SN, 1.0f, a, SN, b, SN, 0.0f, want, SN);
        float want_y[SN];
        memcpy(want_y, y0, sizeof want_y);
        xot_ref_sgemv(XO_ROW_MAJOR, XO_NO_TRANS, SN, SN, 1.0f, a, SN, x, 1, 1.0f, want_y, 1);
        xot_ref_saxpy(SN, 2.0f, x, 1, want_y, 1);
        for (int i = 0; i < SN; i++) want_dot += x[i] * x[i];
        if (!close_enough(c, want, SN * SN, 1e-4f) || !close_enough(y, want_y, SN, 1e-4f) ||
            !close_enough(&dot, &want_dot, 1, 1e-4f)) {
            j->failures++;
            snprintf(j->msg, sizeof j->msg, "thread %u: results differ from the reference", j->seed);
        }
    }
    xo_buffer *all[] = {ba, bb, bc, bx, by, bd};
    for (int i = 0; i < 6; i++) xo_buffer_destroy(all[i]);
    return NULL;
}

static void one_call_at_a_time_threads(void **state)
{
    (void)state;
    xo__cl_set_one_call_at_a_time(1);
    xo_context *ctx = open_forced();
    enum { T = 4 };
    serial_job jobs[T];
    pthread_t th[T];
    for (int i = 0; i < T; i++) {
        jobs[i] = (serial_job){.ctx = ctx, .seed = 100u + 10u * (unsigned)i};
        assert_int_equal(pthread_create(&th[i], NULL, serial_worker, &jobs[i]), 0);
    }
    for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
    xot_assert_ok(xo_finish(ctx));
    xo_context_destroy(ctx);
    xo__cl_set_one_call_at_a_time(0);
    for (int i = 0; i < T; i++)
        if (jobs[i].failures) fail_msg("%s", jobs[i].msg);
}

int main(void)
{
    int skip = xot_skip_without("opencl");
    if (skip) return skip;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_call_at_a_time_threads), /* first: its threads' calls are first calls */
        cmocka_unit_test(warmed_once_per_device),
        cmocka_unit_test(not_held_behind_a_compile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
