/* Runs of one plan from several threads are serialized (CONTRACT.md, plans): four threads
 * run one plan that increments a buffer; every run's increment lands. Run under
 * ThreadSanitizer by the CI's threads pass (ctest -R threads). */
#include "xo_test.h"

#include <pthread.h>
#include <stdlib.h>

#define THREADS 4
#define RUNS 100
#define N (1 << 16)

static void *runner(void *arg)
{
    xo_plan *plan = arg;
    for (int i = 0; i < RUNS; i++)
        if (xo_plan_run(plan) != XO_OK)
            return (void *)1;
    return NULL;
}

static void plan_threads_serialized(void **state)
{
    (void)state;
    xo_context *ctx = NULL;
    xot_assert_ok(xo_context_create(&ctx));
    xo_buffer *x = xot_buffer(ctx, NULL, N * sizeof(float)), *one = xot_buffer(ctx, NULL, N * sizeof(float)),
              *t = xot_buffer(ctx, NULL, N * sizeof(float));
    xot_assert_ok(xo_sfill(ctx, N, 1.0f, one, 0, 1));
    static float host[N];
    xot_assert_ok(xo_capture_begin(ctx));
    /* x += 1 through t: two runs at once would lose increments */
    xot_assert_ok(xo_scopy(ctx, N, x, 0, 1, t, 0, 1));
    xot_assert_ok(xo_saxpy(ctx, N, 1.0f, one, 0, 1, t, 0, 1));
    xot_assert_ok(xo_scopy(ctx, N, t, 0, 1, x, 0, 1));
    xot_assert_ok(xo_buffer_read(x, 0, host, sizeof host));
    xo_plan *plan;
    xot_assert_ok(xo_capture_end(ctx, &plan));
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, runner, plan), 0);
    for (int i = 0; i < THREADS; i++) {
        void *ret;
        pthread_join(th[i], &ret);
        assert_null(ret);
    }
    static float got[N];
    xot_assert_ok(xo_buffer_read(x, 0, got, sizeof got));
    for (int i = 0; i < N; i++)
        assert_true(got[i] == (float)(THREADS * RUNS));
    /* every recorded op counted once per run, on whichever device ran it (a plan may be
     * placed on a GPU where there is one) */
    uint64_t ops = 0;
    for (int d = 0; d < xo_device_count(ctx); d++) {
        xo_stats s;
        xot_assert_ok(xo_stats_get(ctx, d, &s));
        ops += s.ops;
    }
    assert_true(ops >= 3u * THREADS * RUNS);
    xo_plan_destroy(plan);
    xo_buffer_destroy(x);
    xo_buffer_destroy(one);
    xo_buffer_destroy(t);
    xo_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(plan_threads_serialized)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
