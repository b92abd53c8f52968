/* The residency trap (issue 21), end to end against the mock device priced like a
 * discrete GPU (launch 12 us, transfers 12 GB/s): a small op on a big buffer that was
 * last written on the device is priced with moving the whole buffer home, which costs
 * more than one launch there, so without ski rental it stays there for ever. With it
 * (core/place/dispatch.c, pay_rent), every call that costs more on the device than on the host
 * pays the difference as rent toward the move, and the buffer comes home once the rent
 * has paid for it: the op ends on the CPU, the buffer moves once, no prefix of the run
 * costs more than twice the best forced device, and the steady state is the CPU's.
 *
 * Costs are accounted, not timed as a whole: the mock's op and move times are its model
 * (it takes exactly that long), the CPU's per-call time is measured on the CPU's calls.
 *
 * ctest runs it with XO_PLUGINS=cpu,mock, XO_CALIBRATE=off and XO_THREADS=1. */
#include "xo_test.h"
#include "mock_plugin.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG (8u << 20) /* floats: a 32 MB buffer */
#define SMALL 1000     /* elements of each small op */
#define CALLS 6000

typedef struct fixture {
    xo_context *ctx;
    int mock;
    xo_buffer *big, *x;
    double move_us; /* the mock's modelled download of the big buffer */
    double mock_us; /* the mock's modelled small op */
} fixture;

static void open_fixture(fixture *f)
{
    xo_mock_config cfg = {.launch_us = 12, .gflops = 2000, .gbps = 300, .transfer_latency_us = 10,
                          .transfer_gbps = 12};
    xo_mock_install(&cfg);
    xot_assert_ok(xo_context_create(&f->ctx));
    xot_assert_ok(xo_device_find(f->ctx, "mock", &f->mock));
    xo__profile p;
    xo_mock_profile(&f->ctx->dev[f->mock].info, &p);
    xo__device_set_profile(f->ctx, f->mock, &p);
    f->move_us = xo__d2h_us(&p, (double)BIG * sizeof(float));
    f->mock_us = xo_mock_op_us(&(xo_op_desc){.kind = XO_OP_AXPY, .dtype = XO_F32, .n = SMALL});
    float *h = malloc((size_t)BIG * sizeof(float));
    assert_non_null(h);
    for (size_t i = 0; i < BIG; i++)
        h[i] = (float)(i % 7);
    f->big = xot_buffer(f->ctx, h, (size_t)BIG * sizeof(float));
    free(h);
    float hx[SMALL];
    for (int i = 0; i < SMALL; i++)
        hx[i] = 1.0f;
    f->x = xot_buffer(f->ctx, hx, sizeof hx);
    /* The big buffer is written on the device (as a forced round of the sweep leaves it). */
    xot_assert_ok(xo_set_device(f->ctx, "mock"));
    xot_assert_ok(xo_sscal(f->ctx, BIG, 2.0f, f->big, 0, 1));
    xot_assert_ok(xo_sscal(f->ctx, SMALL, 1.0f, f->x, 0, 1)); /* x there too */
    xot_assert_ok(xo_finish(f->ctx));
    xot_assert_ok(xo_set_device(f->ctx, "auto"));
    xot_assert_ok(xo_stats_reset(f->ctx));
}

static void close_fixture(fixture *f)
{
    xo_buffer_destroy(f->big);
    xo_buffer_destroy(f->x);
    xo_context_destroy(f->ctx);
    xo_mock_install(NULL);
}

/* Run CALLS small saxpy on spans of the big buffer (span `i` at offset i * stride
 * elements, wrapping), accounting each call's cost; checks what the trap breaks. */
static void run_small_ops(fixture *f, size_t stride)
{
    static int dev[CALLS];
    static double wall[CALLS];
    for (int i = 0; i < CALLS; i++) {
        size_t off = (size_t)i * stride % (BIG - SMALL);
        double t0 = xo__now_us();
        xot_assert_ok(xo_saxpy(f->ctx, SMALL, 1.0f, f->x, 0, 1, f->big, off, 1));
        wall[i] = xo__now_us() - t0;
        xo_decision d;
        xot_assert_ok(xo_last_decision(f->ctx, &d));
        dev[i] = d.device;
        if (d.device != 0)
            xot_assert_ok(xo_finish(f->ctx)); /* the mock's call takes its modelled time */
    }
    /* It ends on the CPU and stays: the buffer came home once. */
    int first_cpu = -1;
    for (int i = 0; i < CALLS && first_cpu < 0; i++)
        if (dev[i] == 0)
            first_cpu = i;
    printf("# first call on the CPU: %d (move %.0f us, mock op %.1f us)\n", first_cpu, f->move_us, f->mock_us);
    assert_true(first_cpu >= 0);
    for (int i = first_cpu; i < CALLS; i++)
        assert_int_equal(dev[i], 0);
    xo_stats st;
    xot_assert_ok(xo_stats_get(f->ctx, f->mock, &st));
    assert_int_equal(st.bytes_out, (uint64_t)(BIG + SMALL) * sizeof(float)); /* each downloaded once */

    /* The CPU's per-call time: the median of its calls after the move. */
    int n_cpu = CALLS - first_cpu - 1;
    assert_true(n_cpu > CALLS / 2);
    double *c = malloc((size_t)n_cpu * sizeof *c);
    assert_non_null(c);
    memcpy(c, wall + first_cpu + 1, (size_t)n_cpu * sizeof *c);
    for (int i = 1; i < n_cpu; i++) /* insertion sort: n_cpu is a few thousand */
        for (int j = i; j > 0 && c[j] < c[j - 1]; j--) {
            double t = c[j];
            c[j] = c[j - 1];
            c[j - 1] = t;
        }
    double cpu_us = c[n_cpu / 2];
    free(c);
    if (cpu_us * 4 > f->mock_us) /* a machine so slow that the CPU does not win the small op */
        skip();

    /* Ski rental: at every prefix, auto costs at most twice the best forced device (plus
     * one refresh interval of the decision cache, 16 calls, before a cached decision is
     * looked at again), counting the move when it happens. */
    double cost = 0, worst = 0;
    for (int n = 1; n <= CALLS; n++) {
        cost += dev[n - 1] != 0 ? f->mock_us : cpu_us + (n - 1 == first_cpu ? f->move_us : 0);
        double forced_mock = n * f->mock_us, forced_cpu = f->move_us + n * cpu_us;
        double best = forced_mock < forced_cpu ? forced_mock : forced_cpu;
        double r = cost / (best + 16 * f->mock_us);
        if (r > worst)
            worst = r;
    }
    double forced_cpu = f->move_us + CALLS * cpu_us, forced_mock = CALLS * f->mock_us;
    double total = cost / (forced_cpu < forced_mock ? forced_cpu : forced_mock);
    printf("# worst prefix regret %.2f, whole run %.2f (cpu %.2f us/call)\n", worst, total, cpu_us);
    assert_true(worst <= 2.0);
}

/* The sweep's case: many small ops on one span of a 32 MB buffer written on the device. */
static void small_ops_bring_the_buffer_home(void **state)
{
    (void)state;
    fixture f;
    open_fixture(&f);
    run_small_ops(&f, 0);
    close_fixture(&f);
}

/* Minibatches by offset: each small op takes the next span of a big dataset buffer that
 * lives on the device; the dataset comes home once, not at every minibatch. */
static void minibatches_by_offset_bring_the_dataset_home_once(void **state)
{
    (void)state;
    fixture f;
    open_fixture(&f);
    run_small_ops(&f, SMALL);
    close_fixture(&f);
}

/* Rent only builds while the host would be cheaper: an op that is cheaper on the device
 * (a whole-buffer scal, 32 MB at the mock's 300 GB/s against the CPU's 10) stays there
 * however often it runs, and the buffer is never downloaded. */
static void an_op_cheaper_on_the_device_stays(void **state)
{
    (void)state;
    fixture f;
    open_fixture(&f);
    for (int i = 0; i < 200; i++) {
        xot_assert_ok(xo_sscal(f.ctx, BIG, 1.0f, f.big, 0, 1));
        xo_decision d;
        xot_assert_ok(xo_last_decision(f.ctx, &d));
        assert_int_equal(d.device, f.mock);
    }
    xot_assert_ok(xo_finish(f.ctx));
    xo_stats st;
    xot_assert_ok(xo_stats_get(f.ctx, f.mock, &st));
    assert_int_equal(st.bytes_out, 0);
    close_fixture(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_ops_bring_the_buffer_home),
        cmocka_unit_test(minibatches_by_offset_bring_the_dataset_home_once),
        cmocka_unit_test(an_op_cheaper_on_the_device_stays),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
