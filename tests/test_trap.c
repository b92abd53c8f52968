/* The residency trap, end to end against the mock device priced like a
 * discrete GPU (launch 12 us, transfers 12 GB/s): a small op on a big buffer that was
 * last written on the device. Priced with moving the whole buffer home (2.8 ms against a
 * 12 us launch), it stayed there for ever; ski rental (core/place/dispatch.c, pay_rent)
 * brought it home after the rent had paid for the move, at 1.6-1.7x the best forced
 * device over the whole run. With residency per span (core/exec/residency.c) the op
 * moves, and is priced with, only the span it touches: the whole run costs at most
 * 1.25x the best forced device, no prefix more than 2x, and the steady state is the
 * CPU's; a minibatch taken by offset ships the minibatch, never the dataset.
 *
 * Costs are accounted, not timed as a whole: a call on the mock costs its modelled time
 * (it takes exactly that long), one on the CPU the CPU's median per-call time measured
 * on buffers current on the host, and each transfer the mock's model (latency + bytes at
 * 12 GB/s), counted from the mock's calls and the device's stats. Each placement (auto,
 * forced cpu, forced mock) runs the same calls from the same state.
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
#define LATENCY_US 10.0
#define TRANSFER_GBPS 12.0

typedef struct fixture {
    xo_context *ctx;
    int mock;
    xo_buffer *big, *x;
    double move_us; /* the mock's modelled download of the big buffer */
    double mock_us; /* the mock's modelled small op */
} fixture;

static void open_fixture(fixture *f)
{
    xo_mock_config cfg = {.launch_us = 12, .gflops = 2000, .gbps = 300, .transfer_latency_us = LATENCY_US,
                          .transfer_gbps = TRANSFER_GBPS};
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

/* One placement's run of CALLS small saxpy on spans of the big buffer (span i at offset
 * i * stride elements, wrapping). */
typedef struct run {
    int dev[CALLS];
    double cost[CALLS]; /* accounted: transfers, plus the op on the mock; the CPU's op is added later */
    uint64_t bytes_out;
} run;

static void run_calls(fixture *f, const char *spec, size_t stride, run *r)
{
    xot_assert_ok(xo_set_device(f->ctx, spec));
    xot_assert_ok(xo_stats_reset(f->ctx));
    for (int i = 0; i < CALLS; i++) {
        size_t off = (size_t)i * stride % (BIG - SMALL);
        long moves0 = xo_mock_calls(XO_MOCK_DOWNLOAD) + xo_mock_calls(XO_MOCK_UPLOAD);
        xo_stats s0, s1;
        xot_assert_ok(xo_stats_get(f->ctx, f->mock, &s0));
        xot_assert_ok(xo_saxpy(f->ctx, SMALL, 1.0f, f->x, 0, 1, f->big, off, 1));
        xo_decision d;
        xot_assert_ok(xo_last_decision(f->ctx, &d));
        r->dev[i] = d.device;
        if (d.device != 0)
            xot_assert_ok(xo_finish(f->ctx)); /* the mock's call takes its modelled time */
        xot_assert_ok(xo_stats_get(f->ctx, f->mock, &s1));
        long moves = xo_mock_calls(XO_MOCK_DOWNLOAD) + xo_mock_calls(XO_MOCK_UPLOAD) - moves0;
        double bytes = (double)(s1.bytes_out - s0.bytes_out + s1.bytes_in - s0.bytes_in);
        r->cost[i] = (double)moves * LATENCY_US + bytes / (TRANSFER_GBPS * 1e3) + (d.device != 0 ? f->mock_us : 0);
    }
    xo_stats st;
    xot_assert_ok(xo_stats_get(f->ctx, f->mock, &st));
    r->bytes_out = st.bytes_out;
    xot_assert_ok(xo_set_device(f->ctx, "auto"));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The CPU's per-call time: the median of CALLS small saxpy forced there on buffers
 * current on the host (the runs' CPU calls move spans, whose wall time includes the
 * mock's sleeping). */
static double cpu_call_us(fixture *f)
{
    double *c = malloc(CALLS * sizeof *c);
    assert_non_null(c);
    float h[SMALL];
    xot_fill_f(h, SMALL, 3, -1, 1);
    xo_buffer *x = xot_buffer(f->ctx, h, sizeof h), *y = xot_buffer(f->ctx, h, sizeof h);
    xot_assert_ok(xo_set_device(f->ctx, "cpu"));
    for (int i = 0; i < CALLS; i++) {
        double t0 = xo__now_us();
        xot_assert_ok(xo_saxpy(f->ctx, SMALL, 1e-3f, x, 0, 1, y, 0, 1));
        c[i] = xo__now_us() - t0;
    }
    xot_assert_ok(xo_set_device(f->ctx, "auto"));
    xo_buffer_destroy(x);
    xo_buffer_destroy(y);
    qsort(c, CALLS, sizeof *c, cmp_double);
    double us = c[CALLS / 2];
    free(c);
    return us;
}

static run runs[3]; /* auto, forced cpu, forced mock */

/* Auto against both forced devices on the same calls from the same state; returns the
 * whole run's regret (auto's cost over the best forced device's). */
static double run_small_ops(size_t stride)
{
    static const char *specs[3] = {"auto", "cpu", "mock"};
    fixture f;
    for (int p = 0; p < 3; p++) {
        open_fixture(&f);
        run_calls(&f, specs[p], stride, &runs[p]);
        if (p < 2)
            close_fixture(&f);
    }
    run *au = &runs[0], *cpu = &runs[1], *mock = &runs[2];
    double cpu_us = cpu_call_us(&f);
    if (cpu_us * 4 > f.mock_us) { /* a machine so slow that the CPU does not win the small op */
        close_fixture(&f);
        skip();
    }
    for (int p = 0; p < 3; p++)
        for (int i = 0; i < CALLS; i++)
            if (runs[p].dev[i] == 0)
                runs[p].cost[i] += cpu_us;

    /* It ends on the CPU and stays there. */
    int first_cpu = -1;
    for (int i = 0; i < CALLS && first_cpu < 0; i++)
        if (au->dev[i] == 0)
            first_cpu = i;
    assert_true(first_cpu >= 0);
    for (int i = first_cpu; i < CALLS; i++)
        assert_int_equal(au->dev[i], 0);

    /* No prefix costs more than twice the best forced device (plus one refresh interval of
     * the decision cache, 16 calls, before a cached decision is looked at again). */
    double a = 0, c = 0, m = 0, worst = 0;
    for (int n = 0; n < CALLS; n++) {
        a += au->cost[n];
        c += cpu->cost[n];
        m += mock->cost[n];
        double r = a / ((c < m ? c : m) + 16 * f.mock_us);
        worst = r > worst ? r : worst;
    }
    double regret = a / (c < m ? c : m);
    printf("# stride %zu: first call on the CPU %d; auto %.0f us, forced cpu %.0f us, forced mock %.0f us "
           "(cpu %.2f us/call, mock %.1f us/call): whole-run regret %.3f, worst prefix %.2f; %llu bytes came home\n",
           stride, first_cpu, a, c, m, cpu_us, f.mock_us, regret, worst, (unsigned long long)au->bytes_out);
    assert_true(worst <= 2.0);
    close_fixture(&f);
    return regret;
}

/* The sweep's case: many small ops on one span of a 32 MB buffer written on the device.
 * Only that span (and x) comes home, and the whole run costs at most 1.25x the best
 * forced device (1.6-1.7x with whole-buffer residency and ski rental). */
static void small_ops_bring_the_buffer_home(void **state)
{
    (void)state;
    double regret = run_small_ops(0);
    assert_int_equal(runs[0].bytes_out, 2 * SMALL * sizeof(float));
    assert_true(regret <= 1.25);
}

/* Minibatches by offset: each small op takes the next span of a big dataset buffer that
 * lives on the device; the spans it touches come home, never the whole dataset. */
static void minibatches_by_offset_bring_the_dataset_home_once(void **state)
{
    (void)state;
    double regret = run_small_ops(SMALL);
    assert_true(runs[0].bytes_out <= (uint64_t)(CALLS + 1) * SMALL * sizeof(float));
    assert_true(runs[0].bytes_out < (uint64_t)BIG * sizeof(float));
    assert_true(regret <= 1.25);
}

/* The other direction: a dataset written from the host and minibatches taken from it by
 * offset on the device. Each op uploads its minibatch only, and the results are right. */
static void a_minibatch_on_the_device_ships_the_minibatch(void **state)
{
    (void)state;
    fixture f;
    open_fixture(&f);
    enum { BATCHES = 50 };
    float *h = malloc((size_t)BIG * sizeof(float));
    assert_non_null(h);
    xot_fill_f(h, BIG, 5, -1, 1);
    xot_assert_ok(xo_buffer_write(f.big, 0, h, (size_t)BIG * sizeof(float))); /* current on the host only */
    float y[SMALL], got[SMALL];
    for (int i = 0; i < SMALL; i++)
        y[i] = 1.0f; /* x, as open_fixture left it on the mock */
    xot_assert_ok(xo_set_device(f.ctx, "mock"));
    xot_assert_ok(xo_stats_reset(f.ctx));
    for (int b = 0; b < BATCHES; b++) {
        size_t off = (size_t)b * 3 * SMALL; /* gaps between minibatches */
        xot_assert_ok(xo_saxpy(f.ctx, SMALL, 0.5f, f.big, off, 1, f.x, 0, 1));
        for (int i = 0; i < SMALL; i++)
            y[i] += 0.5f * h[off + i];
    }
    xot_assert_ok(xo_finish(f.ctx));
    xo_stats st;
    xot_assert_ok(xo_stats_get(f.ctx, f.mock, &st));
    printf("# %d minibatches of %zu bytes: %llu bytes uploaded\n", BATCHES, SMALL * sizeof(float),
           (unsigned long long)st.bytes_in);
    /* XO_SPANS spans are kept per copy; past them the smallest gaps move too: never more
     * than the bytes from the first minibatch to the last, far from the dataset */
    assert_true(st.bytes_in >= (uint64_t)(BATCHES * SMALL) * sizeof(float));
    assert_true(st.bytes_in <= (uint64_t)((BATCHES - 1) * 3 + 1) * SMALL * sizeof(float));
    xot_assert_ok(xo_buffer_read(f.x, 0, got, sizeof got));
    xot_assert_close_f(got, y, SMALL, "saxpy over minibatches on the mock");
    xot_assert_ok(xo_set_device(f.ctx, "auto"));
    free(h);
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
        cmocka_unit_test(a_minibatch_on_the_device_ships_the_minibatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
