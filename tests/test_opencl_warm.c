/* A CLBlast routine's first use on a device is compiled outside the CLBlast lock
 * (plugins/opencl/cl_warm.c), once per device and precision for every context:
 *  - the first sgemm warms GEMM once; later sgemms, and a second context's, do not;
 *  - while one thread's first sgemv is held inside its warm-up (the test's hook stands
 *    for a compile that takes seconds), another thread's saxpy on the same device, a
 *    routine already warm, completes: it is not queued behind that compile.
 * Runs on device "opencl" (skipped, exit 77, when there is none). */
#include "xo_test.h"
#include "cl_testing.h"

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

int main(void)
{
    xo_context *ctx;
    int ocl;
    if (xo_context_create(&ctx) != XO_OK) {
        fprintf(stderr, "xo_context_create: %s\n", xo_last_error());
        return 1;
    }
    xo_status st = xo_device_find(ctx, "opencl", &ocl);
    xo_context_destroy(ctx);
    if (st != XO_OK) {
        printf("no OpenCL device: skipped\n");
        return XOT_EXIT_SKIP;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(warmed_once_per_device),
        cmocka_unit_test(not_held_behind_a_compile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
