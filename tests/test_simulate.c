/* XO_SIMULATE (docs/machines/README.md): a recorded machine, simulated. The H200 file
 * gives the recorded devices by their names (cuda works) with results computed on the
 * host; xo_clock_us advances exactly as a machine file says for a known sequence (issue
 * cost on the host, the kernel on the device's timeline, the wait and the transfer at a
 * read; a plan as one graph launch of its nodes); twice the same program gives the same
 * times; a bad file fails context creation with the file and the line.
 *
 * Usage: test_simulate H200_FILE SCRATCH_DIR */
#include "xo_test.h"
#include "xo_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *g_h200, *g_dir;

/* A machine file in the scratch folder: a profile of each device, then `body`. */
static const char *write_machine(const char *name, const char *body)
{
    static char path[4096];
    static const char *const prof[2][2] = {
        {"cpu", "plugin = cpu\nname = Sim CPU\nvendor = test\ndriver = t\nkind = cpu\nhost_unified = 1\n"
                "launch_us = 0.1\ntransfer_latency_us = 0\nh2d_gbps = 0\nd2h_gbps = 0\nmem_gbps = 10\n"
                "peak_gflops = 100\n"},
        {"gpu", "plugin = cuda\nname = Sim GPU\nvendor = test\ndriver = t\nkind = gpu\nhost_unified = 0\n"
                "launch_us = 10\ntransfer_latency_us = 5\nh2d_gbps = 10\nd2h_gbps = 10\nmem_gbps = 1000\n"
                "peak_gflops = 10000\n"}};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s.profile", g_dir, prof[i][0]);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "# crossover device profile v1\n%s", prof[i][1]);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(body, f);
    fclose(f);
    return path;
}

/* Constant times, so that every step of a sequence is known: on the CPU 10 us an op; on
 * the GPU an issue of 2 us, kernels of 100 us, waits of 1 (idle) and 5 (busy), 7 us an
 * upload, 3 us a download. */
static const char *const k_known =
    "# crossover machine v1\n"
    "machine known\n"
    "device cpu cpu.profile\n"
    "threads 4\n"
    "kernel * * 1 10\n"
    "kernel * * 1e12 10\n"
    "device cuda gpu.profile\n"
    "issue_us 2\n"
    "wait_us 1 5\n"
    "graph_us 3 1\n"
    "transfer h2d pageable 1 7\n"
    "transfer h2d pageable 1e12 7\n"
    "transfer d2h pageable 1 3\n"
    "transfer d2h pageable 1e12 3\n"
    "kernel * * 1 100\n"
    "kernel * * 1e12 100\n";

static xo_context *simulated(const char *path)
{
    setenv("XO_SIMULATE", path, 1);
    xo_context *ctx = NULL;
    xo_status st = xo_context_create(&ctx);
    unsetenv("XO_SIMULATE");
    if (st != XO_OK)
        fail_msg("xo_context_create under XO_SIMULATE=%s: %s", path, xo_last_error());
    return ctx;
}

static void test_h200_devices(void **state)
{
    (void)state;
    xo_context *ctx = simulated(g_h200);
    assert_int_equal(xo_device_count(ctx), 2);
    xo_device_info in;
    xot_assert_ok(xo_device_get_info(ctx, 1, &in));
    assert_string_equal(in.plugin, "cuda");
    assert_string_equal(in.name, "NVIDIA H200");
    assert_int_equal(in.kind, XO_DEVICE_GPU);
    /* the profile it had there (docs/profiles/h200-cuda.profile), not a measurement */
    assert_true(in.launch_us == 14.0 && in.peak_gflops == 50000.0 && in.h2d_gbps == 11.5);
    xot_assert_ok(xo_device_get_info(ctx, 0, &in));
    assert_true(xot_contains(in.name, "Xeon") && in.peak_gflops == 250.0);
    int dev = -1;
    xot_assert_ok(xo_device_find(ctx, "cuda:0", &dev));
    assert_int_equal(dev, 1);
    xo_context_destroy(ctx);
}

/* The 16-core CPU beside the H200: its profile's thread wake-up term is in the model's
 * prediction for a vector op long enough to be threaded (25,600 floats: the 3-10x of
 * docs/cuda.md), not for a short one, and the prediction is near what the recording says
 * the op took there (the simulated clock), where the streaming rate alone was 3x short. */
static void test_h200_cpu_threads(void **state)
{
    (void)state;
    xo_context *ctx = simulated(g_h200);
    xot_assert_ok(xo_set_device(ctx, "cpu"));
    enum { LONG = 25600, SHORT = 8192 };
    static float x[LONG], y[LONG];
    xot_fill_f(x, LONG, 11, -1, 1);
    xot_fill_f(y, LONG, 12, -1, 1);
    xo_buffer *bx = xot_buffer(ctx, x, sizeof x), *by = xot_buffer(ctx, y, sizeof y);
    const double stream_us = 3.0 * LONG * sizeof(float) / 60e3; /* 60 GB/s: 5.1 us */
    double t0 = xo_clock_us(ctx);
    xot_assert_ok(xo_saxpy(ctx, LONG, 0.5f, bx, 0, 1, by, 0, 1));
    double took = xo_clock_us(ctx) - t0;
    xo_decision d;
    xot_assert_ok(xo_last_decision(ctx, &d));
    assert_int_equal(d.device, 0);
    if (!(d.est[0].compute_us >= stream_us + 10.0 - 1e-9))
        fail_msg("predicted %.3g us for saxpy %d on the 16-core CPU: no wake-up term", d.est[0].compute_us, LONG);
    if (!(took > 2.0 * stream_us && d.est[0].compute_us > 0.5 * took && d.est[0].compute_us < 2.0 * took))
        fail_msg("saxpy %d: predicted %.3g us, the recording %.3g us", LONG, d.est[0].compute_us, took);
    xot_assert_ok(xo_saxpy(ctx, SHORT, 0.5f, bx, 0, 1, by, 0, 1));
    xot_assert_ok(xo_last_decision(ctx, &d));
    assert_true(d.est[0].compute_us < 10.0); /* one thread: no wake-up */
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
    xo_context_destroy(ctx);
}

/* Forced onto the simulated H200 by XO_DEVICE=cuda and by xo_set_device: the results are
 * the reference's, and the ops ran there. */
static void test_h200_cuda_results(void **state)
{
    (void)state;
    setenv("XO_DEVICE", "cuda", 1);
    xo_context *ctx = simulated(g_h200);
    unsetenv("XO_DEVICE");
    enum { M = 37, N = 29, K = 41 };
    float a[M * K], b[K * N], c[M * N], want[M * N];
    xot_fill_f(a, M * K, 1, -1, 1);
    xot_fill_f(b, K * N, 2, -1, 1);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int p = 0; p < K; p++)
                s += (double)a[i * K + p] * b[p * N + j];
            want[i * N + j] = (float)s;
        }
    xo_buffer *ba = xot_buffer(ctx, a, sizeof a), *bb = xot_buffer(ctx, b, sizeof b), *bc;
    xot_assert_ok(xo_buffer_create(ctx, sizeof c, &bc));
    xot_assert_ok(xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, M, N, K, 1.0f, ba, 0, K, bb, 0, N, 0.0f, bc,
                           0, N));
    xot_assert_decision(ctx, "sgemm", 1, 1);
    xot_assert_ok(xo_buffer_read(bc, 0, c, sizeof c));
    xot_assert_close_f(c, want, M * N, "sgemm on the simulated H200");
    xot_assert_ok(xo_set_device(ctx, "cuda:0"));
    xot_assert_ok(xo_sscal(ctx, M * N, 3.0f, bc, 0, 1));
    xot_assert_decision(ctx, "sscal", 1, 1);
    xot_assert_ok(xo_buffer_read(bc, 0, c, sizeof c));
    for (int i = 0; i < M * N; i++)
        want[i] *= 3.0f;
    xot_assert_close_f(c, want, M * N, "sscal on the simulated H200");
    xo_stats st;
    xot_assert_ok(xo_stats_get(ctx, 1, &st));
    assert_int_equal(st.ops, 2);
    assert_true(st.busy_us > 0.0); /* the file's kernel times */
    xo_buffer_destroy(ba);
    xo_buffer_destroy(bb);
    xo_buffer_destroy(bc);
    xo_context_destroy(ctx);
}

/* The clock, step by step, on the file of constant times. */
static void test_clock_follows_recording(void **state)
{
    (void)state;
    xo_context *ctx = simulated(write_machine("known.xom", k_known));
    enum { N = 1000 };
    float x[N], y[N];
    xot_fill_f(x, N, 3, -1, 1);
    xot_fill_f(y, N, 4, -1, 1);
    xo_buffer *bx = xot_buffer(ctx, x, sizeof x), *by = xot_buffer(ctx, y, sizeof y);
    xot_assert_ok(xo_set_device(ctx, "cuda"));
    double t0 = xo_clock_us(ctx);
    /* x and y uploaded (7 us each, on the host), the launch issued (2 us); the kernel
     * runs on the device until t0 + 14 + 100 = t0 + 114 (it starts at t0 + 14, once
     * both uploads are there: the host issued it at t0 + 16, later still) */
    xot_assert_ok(xo_saxpy(ctx, N, 2.0f, bx, 0, 1, by, 0, 1));
    assert_true(xo_clock_us(ctx) - t0 == 16.0);
    /* a second launch queues behind the first: 2 us on the host, the device busy until
     * t0 + 216 */
    xot_assert_ok(xo_saxpy(ctx, N, 2.0f, bx, 0, 1, by, 0, 1));
    assert_true(xo_clock_us(ctx) - t0 == 18.0);
    /* the read waits for the device (busy: 5 us), then the download (3 us) */
    float got[N];
    xot_assert_ok(xo_buffer_read(by, 0, got, sizeof got));
    assert_true(xo_clock_us(ctx) - t0 == 116.0 + 100.0 + 5.0 + 3.0);
    for (int i = 0; i < N; i++)
        y[i] += 4.0f * x[i];
    xot_assert_close_f(got, y, N, "saxpy twice");
    /* xo_finish: the queue is already empty (the read waited for it), 1 us */
    double t1 = xo_clock_us(ctx);
    xot_assert_ok(xo_finish(ctx));
    assert_true(xo_clock_us(ctx) - t1 == 1.0);
    /* an op on the CPU: the calling thread does it, 10 us (y is current on the host) */
    xot_assert_ok(xo_set_device(ctx, "cpu"));
    xot_assert_ok(xo_sscal(ctx, N, 0.5f, by, 0, 1));
    assert_true(xo_clock_us(ctx) - t1 == 11.0);
    xo_stats st;
    xot_assert_ok(xo_stats_get(ctx, 1, &st));
    assert_true(fabs(st.busy_us - 200.0) < 1e-6); /* the device's two kernels, from the file */
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
    xo_context_destroy(ctx);
}

/* A profile without `issue_us` (written before calibration measured it) takes the
 * recording's, as calibration on that machine would have measured it; one that has its
 * own keeps it, and an issue cost not under the launch floor is none. */
static void test_issue_from_recording(void **state)
{
    (void)state;
    xo_context *ctx = simulated(write_machine("known.xom", k_known));
    assert_true(ctx->dev[1].profile.issue_us == 2.0); /* gpu.profile has none; the file says 2 */
    assert_true(ctx->dev[0].profile.issue_us == 0.0); /* the CPU: never */
    xo_context_destroy(ctx);
    /* 9: under the profile's launch floor of 10, taken; 10: the host waits for each op */
    static const char *const issue[][2] = {{"9", "9"}, {"10", "0"}}; /* file, profile */
    for (int i = 0; i < 2; i++) {
        char body[2048], name[32];
        const char *at = strstr(k_known, "issue_us 2\n");
        assert_non_null(at);
        snprintf(body, sizeof body, "%.*sissue_us %s%s", (int)(at - k_known), k_known, issue[i][0],
                 at + strlen("issue_us 2"));
        snprintf(name, sizeof name, "issue%s.xom", issue[i][0]);
        ctx = simulated(write_machine(name, body));
        assert_true(ctx->dev[1].profile.issue_us == atof(issue[i][1]));
        xo_context_destroy(ctx);
    }
    ctx = simulated(g_h200); /* the reconstructed H200: its profile's own figure */
    assert_true(ctx->dev[1].profile.issue_us == 10.5);
    xo_context_destroy(ctx);
}

/* A plan forced onto the GPU runs as one graph of two nodes (the three element-wise ops
 * fused into one chain, which takes its slowest step's time; then nrm2): per run the
 * host pays the segment's launch (3 us) and xo_finish's wait on a busy queue (5 us), the
 * device each node's kernel and per-node cost (2 x (100 + 1) us); the results are the
 * ops'. */
static void test_plan_graph(void **state)
{
    (void)state;
    xo_context *ctx = simulated(write_machine("known.xom", k_known));
    enum { N = 500 };
    float x[N], y[N], got[N];
    xot_fill_f(x, N, 5, -1, 1);
    xot_fill_f(y, N, 6, -1, 1);
    xo_buffer *bx = xot_buffer(ctx, x, sizeof x), *by = xot_buffer(ctx, y, sizeof y), *bn;
    xot_assert_ok(xo_buffer_create(ctx, sizeof(float), &bn));
    xot_assert_ok(xo_set_device(ctx, "cuda"));
    xot_assert_ok(xo_capture_begin(ctx));
    xot_assert_ok(xo_saxpy(ctx, N, 2.0f, bx, 0, 1, by, 0, 1));
    xot_assert_ok(xo_sscal(ctx, N, 0.5f, by, 0, 1));
    xot_assert_ok(xo_saxpy(ctx, N, 1.0f, bx, 0, 1, by, 0, 1));
    xot_assert_ok(xo_snrm2(ctx, N, by, 0, 1, bn, 0));
    xo_plan *plan = NULL;
    xot_assert_ok(xo_capture_end(ctx, &plan));
    for (int run = 0; run < 4; run++) {
        double t0 = xo_clock_us(ctx);
        xot_assert_ok(xo_plan_run(plan));
        xot_assert_ok(xo_finish(ctx));
        if (run >= 2 && xo_clock_us(ctx) - t0 != 3.0 + 2 * 101.0 + 5.0)
            fail_msg("run %d took %.17g simulated us, want 210", run, xo_clock_us(ctx) - t0);
        for (int i = 0; i < N; i++)
            y[i] = (y[i] + 2.0f * x[i]) * 0.5f + x[i];
    }
    xot_assert_ok(xo_buffer_read(by, 0, got, sizeof got));
    xot_assert_close_f(got, y, N, "the plan's four runs");
    double sq = 0;
    for (int i = 0; i < N; i++)
        sq += (double)y[i] * y[i];
    float norm;
    xot_assert_ok(xo_buffer_read(bn, 0, &norm, sizeof norm));
    xot_assert_close_f(&norm, &(float){(float)sqrt(sq)}, 1, "nrm2 in the plan");
    xo_plan_destroy(plan);
    xo_buffer_destroy(bn);
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
    xo_context_destroy(ctx);
}

/* A program of mixed ops under auto on the H200 file: its times, op counts and bytes
 * moved, twice. */
static void run_program(double out[8])
{
    xo_context *ctx = simulated(g_h200);
    enum { N = 1 << 16, S = 256 };
    xo_buffer *x, *y, *a, *c;
    xot_assert_ok(xo_buffer_create(ctx, N * sizeof(float), &x));
    xot_assert_ok(xo_buffer_create(ctx, N * sizeof(float), &y));
    xot_assert_ok(xo_buffer_create(ctx, S * S * sizeof(float), &a));
    xot_assert_ok(xo_buffer_create(ctx, S * S * sizeof(float), &c));
    double t0 = xo_clock_us(ctx);
    for (int it = 0; it < 20; it++) {
        xot_assert_ok(xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, S, S, S, 1.0f, a, 0, S, a, 0, S, 0.5f, c,
                               0, S));
        xot_assert_ok(xo_saxpy(ctx, N, 0.5f, x, 0, 1, y, 0, 1));
        xot_assert_ok(xo_sunary(ctx, XO_TANH, N, y, 0, y, 0));
        xot_assert_ok(xo_saxpy(ctx, 64, 0.5f, y, 0, 1, x, 0, 1));
        float r;
        xot_assert_ok(xo_buffer_read(c, 0, &r, sizeof r));
    }
    xot_assert_ok(xo_finish(ctx));
    out[0] = xo_clock_us(ctx) - t0;
    for (int d = 0; d < 2; d++) {
        xo_stats st;
        xot_assert_ok(xo_stats_get(ctx, d, &st));
        out[1 + 3 * d] = (double)st.ops;
        out[2 + 3 * d] = st.busy_us;
        out[3 + 3 * d] = (double)(st.bytes_in + st.bytes_out);
    }
    out[7] = 0;
    xo_buffer_destroy(x);
    xo_buffer_destroy(y);
    xo_buffer_destroy(a);
    xo_buffer_destroy(c);
    xo_context_destroy(ctx);
}

static void test_deterministic(void **state)
{
    (void)state;
    double first[8], second[8];
    run_program(first);
    run_program(second);
    assert_true(first[0] > 0);
    for (int i = 0; i < 8; i++)
        if (first[i] != second[i])
            fail_msg("figure %d: %.17g then %.17g", i, first[i], second[i]);
}

/* Each bad file: the line its message must name. */
static void test_bad_files(void **state)
{
    (void)state;
    static const struct {
        const char *body, *line;
    } cases[] = {
        {"crossover machine\n", "line 1"},
        {"# crossover machine v1\nmachine x\nwhat 3\n", "line 3"},
        {"# crossover machine v1\ndevice cpu cpu.profile\nthreads 4\nkernel * * 1 ten\n", "line 4"},
        {"# crossover machine v1\ndevice cpu nowhere.profile\n", "line 2"},
        {"# crossover machine v1\ndevice cuda gpu.profile\n", "line 2"},
        {"# crossover machine v1\ndevice cpu gpu.profile\n", "line 2"},
        {"# crossover machine v1\ndevice cpu cpu.profile\nthreads 4\nkernel * * 10 1\nkernel * * 5 1\n", "line 5"},
        {"# crossover machine v1\ndevice cpu cpu.profile\nthreads 4\nkernel nosuch * 1 1\n", "line 4"},
        {"# crossover machine v1\n# a comment\ndevice cpu cpu.profile\nthreads 4\n", "line 3"}, /* no rows */
        {"# crossover machine v1\ndevice cpu cpu.profile\nthreads 4\nkernel * * 1 1\ndevice cuda gpu.profile\n"
         "kernel * * 1 1\n",
         "line 5"}, /* a GPU without transfers */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "bad%zu.xom", i);
        const char *path = write_machine(name, cases[i].body);
        setenv("XO_SIMULATE", path, 1);
        xo_context *ctx = NULL;
        xo_status st = xo_context_create(&ctx);
        unsetenv("XO_SIMULATE");
        if (st != XO_ERR_INVALID_ARGUMENT || ctx)
            fail_msg("case %zu: status %d, want XO_ERR_INVALID_ARGUMENT", i, (int)st);
        const char *msg = xo_last_error();
        if (!xot_contains(msg, name) || !xot_contains(msg, cases[i].line) || !xot_contains(msg, "XO_SIMULATE"))
            fail_msg("case %zu: the message does not name the file and %s: %s", i, cases[i].line, msg);
    }
    /* no file at all */
    setenv("XO_SIMULATE", "/nonexistent/machine.xom", 1);
    xo_context *ctx = NULL;
    xot_assert_status(xo_context_create(&ctx), XO_ERR_INVALID_ARGUMENT);
    unsetenv("XO_SIMULATE");
    assert_true(xot_contains(xo_last_error(), "/nonexistent/machine.xom"));
}

/* Without XO_SIMULATE, xo_clock_us is the real monotonic clock. */
static void test_real_clock(void **state)
{
    (void)state;
    xo_context *ctx = NULL;
    xot_assert_ok(xo_context_create(&ctx));
    double a = xo_clock_us(ctx), b = xo_clock_us(NULL);
    assert_true(b >= a && b - a < 60e6);
    xo_context_destroy(ctx);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_simulate H200_FILE SCRATCH_DIR\n");
        return 2;
    }
    g_h200 = argv[1];
    g_dir = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_h200_devices), cmocka_unit_test(test_h200_cpu_threads),      cmocka_unit_test(test_h200_cuda_results),
        cmocka_unit_test(test_clock_follows_recording), cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_bad_files),         cmocka_unit_test(test_real_clock),
        cmocka_unit_test(test_plan_graph),        cmocka_unit_test(test_issue_from_recording),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
