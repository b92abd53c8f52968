/* The cost model, the built-in defaults, op descriptions and the online correction,
 * tested with hand-written profiles: no device is needed. */
#include "xo_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

/* ---- hand-written profiles --------------------------------------------------------- */

/* Profile 0: the host CPU. Profile 1: a discrete GPU (12 us launch floor, 10 GB/s
 * transfers with 10 us latency, 4 TFLOP/s). Curves derived from the peaks. */
static void make_profiles(xo__profile p[2])
{
    memset(p, 0, 2 * sizeof *p);
    xo__profile_defaults(XO_DEVICE_CPU, "cpu", &p[0]);
    p[0].info.launch_us = 0.05;
    p[0].info.transfer_latency_us = 0.0;
    p[0].info.h2d_gbps = p[0].info.d2h_gbps = 0.0;
    p[0].info.mem_gbps = 20.0;
    p[0].info.peak_gflops = 100.0;
    p[0].stream_gbps[0] = p[0].stream_gbps[1] = 20.0;
    static const double cpu_curve[XO_CURVE_POINTS] = {10, 30, 60, 80, 90, 95, 100, 100};
    static const double gpu_curve[XO_CURVE_POINTS] = {8, 32, 120, 400, 1200, 2400, 3400, 4000};
    for (int i = 0; i < XO_CURVE_POINTS; i++) {
        p[0].gemm_gflops[XO_F32][i] = cpu_curve[i];
        p[0].gemm_gflops[XO_F64][i] = cpu_curve[i] / 2;
    }
    xo__profile_defaults(XO_DEVICE_GPU, "cuda", &p[1]);
    p[1].info.launch_us = 12.0;
    p[1].info.transfer_latency_us = 10.0;
    p[1].info.h2d_gbps = p[1].info.d2h_gbps = 10.0;
    p[1].info.mem_gbps = 500.0;
    p[1].info.peak_gflops = 4000.0;
    p[1].stream_gbps[0] = p[1].stream_gbps[1] = 500.0;
    for (int i = 0; i < XO_CURVE_POINTS; i++) {
        p[1].gemm_gflops[XO_F32][i] = gpu_curve[i];
        p[1].gemm_gflops[XO_F64][i] = gpu_curve[i] / 32;
    }
}

static void describe(const char *op, int ndims, size_t d0, size_t d1, size_t d2, int resident, xo__op_cost *out)
{
    size_t dims[3] = {d0, d1, d2};
    assert_int_equal(xo__describe_op(op, ndims, dims, resident, out), XO_OK);
}

static int cheapest(const xo__profile *p, int ndev, const xo__op_cost *op, xo_estimate *est)
{
    int best = 0;
    for (int d = 0; d < ndev; d++) {
        xo__estimate(p, ndev, d, op, 1.0, &est[d]);
        assert_int_equal(est[d].eligible, 1);
        assert_true(fabs(est[d].total_us - (est[d].launch_us + est[d].transfer_us + est[d].compute_us)) <
                    1e-9 * est[d].total_us + 1e-12);
        if (est[d].total_us < est[best].total_us)
            best = d;
    }
    return best;
}

/* ---- placement scenarios ------------------------------------------------------------- */

static void small_gemv_stays_on_cpu(void **state)
{
    (void)state;
    xo__profile p[2];
    make_profiles(p);
    xo__op_cost op;
    describe("sgemv", 2, 100, 3, 0, 0, &op);
    xo_estimate est[2];
    assert_int_equal(cheapest(p, 2, &op, est), 0);
    assert_true(est[0].transfer_us == 0.0);
    /* three uploads at 10 us latency each, plus the 12 us launch floor */
    assert_true(est[1].transfer_us >= 30.0);
    assert_true(est[1].launch_us == 12.0);
    assert_true(est[1].total_us > 40.0 * est[0].total_us);
}

static void big_gemm_goes_to_gpu(void **state)
{
    (void)state;
    xo__profile p[2];
    make_profiles(p);
    xo__op_cost op;
    describe("sgemm", 3, 4096, 4096, 4096, 0, &op);
    xo_estimate est[2];
    assert_int_equal(cheapest(p, 2, &op, est), 1);
    /* CPU: 2*4096^3 flop at 100 GFLOP/s */
    double cpu_us = 2.0 * 4096.0 * 4096.0 * 4096.0 / 100e3;
    assert_true(fabs(est[0].compute_us - cpu_us) < 1e-6 * cpu_us);
    /* GPU: three 64 MiB uploads at 10 GB/s */
    double up_us = 3.0 * (10.0 + 4096.0 * 4096.0 * 4.0 / 10e3);
    assert_true(fabs(est[1].transfer_us - up_us) < 1e-6 * up_us);
    assert_true(est[1].total_us * 10.0 < est[0].total_us);
}

static void resident_gemm_stays_on_gpu(void **state)
{
    (void)state;
    xo__profile p[2];
    make_profiles(p);
    xo__op_cost op;
    describe("sgemm", 3, 1000, 1000, 1000, 1, &op);
    xo_estimate est[2];
    assert_int_equal(cheapest(p, 2, &op, est), 1);
    assert_true(est[1].transfer_us == 0.0);
    /* the CPU would first download the three matrices from the GPU */
    double down_us = 3.0 * (10.0 + 1000.0 * 1000.0 * 4.0 / 10e3);
    assert_true(fabs(est[0].transfer_us - down_us) < 1e-6 * down_us);
}

static void mid_gemm_is_close_call(void **state)
{
    (void)state;
    xo__profile p[2];
    make_profiles(p);
    xo__op_cost op;
    describe("sgemm", 3, 200, 200, 200, 0, &op);
    xo_estimate est[2];
    cheapest(p, 2, &op, est);
    double ratio = est[0].total_us / est[1].total_us;
    print_message("200^3 sgemm from the host: cpu %.1f us, gpu %.1f us (ratio %.2f)\n", est[0].total_us,
                  est[1].total_us, ratio);
    assert_true(ratio > 0.5 && ratio < 2.0);
}

static void transfers_between_devices_go_through_host(void **state)
{
    (void)state;
    xo__profile p[3];
    make_profiles(p);
    p[2] = p[1];
    p[2].info.h2d_gbps = 5.0;
    xo__op_cost op;
    describe("saxpy", 1, 1000000, 0, 0, 1, &op); /* x, y current on device 1 only */
    xo_estimate e;
    xo__estimate(p, 3, 2, &op, 1.0, &e);
    double bytes = 4e6;
    double want = 2.0 * ((10.0 + bytes / 10e3) + (10.0 + bytes / 5e3));
    assert_true(fabs(e.transfer_us - want) < 1e-6 * want);
    /* current on the host and on device 1: device 2 uploads from the host */
    op.operand[0].valid = op.operand[1].valid = 3u;
    xo__estimate(p, 3, 2, &op, 1.0, &e);
    want = 2.0 * (10.0 + bytes / 5e3);
    assert_true(fabs(e.transfer_us - want) < 1e-6 * want);
    /* current everywhere: nothing moves */
    op.operand[0].valid = op.operand[1].valid = 7u;
    for (int d = 0; d < 3; d++) {
        xo__estimate(p, 3, d, &op, 1.0, &e);
        assert_true(e.transfer_us == 0.0);
    }
}

static void correction_scales_compute_only(void **state)
{
    (void)state;
    xo__profile p[2];
    make_profiles(p);
    xo__op_cost op;
    describe("sgemm", 3, 512, 512, 512, 0, &op);
    xo_estimate e1, e4;
    xo__estimate(p, 2, 1, &op, 1.0, &e1);
    xo__estimate(p, 2, 1, &op, 4.0, &e4);
    assert_true(fabs(e4.compute_us - 4.0 * e1.compute_us) < 1e-9 * e4.compute_us);
    assert_true(e4.launch_us == e1.launch_us && e4.transfer_us == e1.transfer_us);
    /* a nonsense factor is ignored */
    xo__estimate(p, 2, 1, &op, NAN, &e4);
    assert_true(e4.compute_us == e1.compute_us);
}

static void per_op_launch_floor(void **state)
{
    (void)state;
    xo__profile p[2];
    make_profiles(p);
    p[1].op_launch_us[XO_OP_GEMM] = 30.0;
    xo__op_cost op;
    describe("sgemm", 3, 64, 64, 64, 1, &op);
    xo_estimate e;
    xo__estimate(p, 2, 1, &op, 1.0, &e);
    assert_true(e.launch_us == 30.0);
    describe("saxpy", 1, 64, 0, 0, 1, &op);
    xo__estimate(p, 2, 1, &op, 1.0, &e);
    assert_true(e.launch_us == 12.0);
}

/* ---- the pieces ---------------------------------------------------------------------- */

static void gemm_curve_interpolation(void **state)
{
    (void)state;
    xo__profile p[2];
    make_profiles(p);
    /* on the points */
    for (int i = 0; i < XO_CURVE_POINTS; i++)
        assert_true(fabs(xo__gemm_gflops(&p[1], XO_F32, (double)(16 << i)) - p[1].gemm_gflops[0][i]) <
                    1e-9 * p[1].gemm_gflops[0][i]);
    /* clamped outside */
    assert_true(xo__gemm_gflops(&p[1], XO_F32, 2.0) == 8.0);
    assert_true(xo__gemm_gflops(&p[1], XO_F32, 100000.0) == 4000.0);
    /* log-log: halfway (in log n) between 16 and 32 is the geometric mean */
    double g = xo__gemm_gflops(&p[1], XO_F32, 16.0 * sqrt(2.0));
    assert_true(fabs(g - 16.0) < 1e-9);
    /* monotone between points of a rising curve */
    double prev = 0.0;
    for (double n = 16; n <= 2048; n *= 1.1) {
        double v = xo__gemm_gflops(&p[1], XO_F32, n);
        assert_true(v >= prev - 1e-9);
        prev = v;
    }
    /* the double curve is used for double */
    assert_true(xo__gemm_gflops(&p[1], XO_F64, 2048.0) == 4000.0 / 32);
    /* a missing double curve falls back to half the single one */
    memset(p[0].gemm_gflops[XO_F64], 0, sizeof p[0].gemm_gflops[XO_F64]);
    assert_true(xo__gemm_gflops(&p[0], XO_F64, 2048.0) == 50.0);
}

static void roofline(void **state)
{
    (void)state;
    xo__profile p[2];
    make_profiles(p);
    xo__op_cost op;
    /* saxpy: memory-bound: 12 MB at 20 GB/s on the CPU */
    describe("saxpy", 1, 1000000, 0, 0, 0, &op);
    assert_true(fabs(xo__compute_us(&p[0], &op) - 12e6 / 20e3) < 1e-6);
    /* a flat-out compute-bound gemm: flops / GFLOP/s */
    describe("sgemm", 3, 2048, 2048, 2048, 0, &op);
    assert_true(fabs(xo__compute_us(&p[0], &op) - 2.0 * 2048.0 * 2048.0 * 2048.0 / 100e3) < 1e-3);
    /* a gemm on a device with almost no bandwidth becomes memory-bound */
    xo__profile slow = p[0];
    slow.info.mem_gbps = 0.001;
    assert_true(xo__compute_us(&slow, &op) > op.bytes / 1.0 - 1.0);
    /* zero figures never divide by zero */
    xo__profile zero;
    memset(&zero, 0, sizeof zero);
    double t = xo__compute_us(&zero, &op);
    assert_true(isfinite(t) && t > 0.0);
    assert_true(xo__h2d_us(&zero, 1e6) == 0.0 && xo__d2h_us(&zero, 1e6) == 0.0);
    /* transfers: latency + bytes / bandwidth, nothing for nothing */
    assert_true(fabs(xo__h2d_us(&p[1], 1e6) - (10.0 + 100.0)) < 1e-9);
    assert_true(fabs(xo__d2h_us(&p[1], 1e6) - (10.0 + 100.0)) < 1e-9);
    assert_true(xo__h2d_us(&p[1], 0.0) == 0.0);
}

/* The neural-network ops' work rows (core/base/optable.c): flops, operands and bytes streamed. */
static void describe_nn_ops(void **state)
{
    (void)state;
    xo__op_cost op;
    static const struct {
        const char *name;
        int nops;
        double flops_per_n, elements_per_n, extra;
    } vec[] = {/* an output the op overwrites is not an operand to move (as in dispatch) */
               {"scopy", 1, 0, 2, 0},          {"sfill", 0, 0, 1, 0}, {"saxpby", 2, 3, 3, 0},
               {"sbinary_scalar", 1, 1, 2, 0}, {"sscale_by", 2, 1, 2, 1}};
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        describe(vec[i].name, 1, 1000, 0, 0, 0, &op);
        assert_int_equal(op.noperands, vec[i].nops);
        assert_true(op.flops == vec[i].flops_per_n * 1000.0);
        assert_true(op.bytes == (vec[i].elements_per_n * 1000.0 + vec[i].extra) * 4);
        assert_true(op.size == 1000.0);
    }
    describe("sscale_by", 1, 1000, 0, 0, 0, &op); /* the factor is one element */
    assert_true(op.operand[0].bytes == 4 && op.operand[1].bytes == 4000);

    describe("dger", 2, 30, 20, 0, 0, &op); /* x m, y n, A m x n read and written */
    assert_int_equal(op.noperands, 3);
    assert_true(op.flops == 2.0 * 600);
    assert_true(op.operand[0].bytes == 30 * 8 && op.operand[1].bytes == 20 * 8 && op.operand[2].bytes == 600 * 8);
    assert_true(op.bytes == (2.0 * 600 + 30 + 20) * 8);

    describe("ssoftmax", 2, 10, 20, 0, 0, &op);
    assert_int_equal(op.noperands, 1); /* y is overwritten */
    assert_true(op.flops == 12.0 * 200 && op.bytes == 2.0 * 200 * 4);
    assert_true(op.operand[0].bytes == 200 * 4);

    describe("sreduce_axis", 2, 10, 20, 0, 0, &op);
    assert_int_equal(op.noperands, 1);
    assert_true(op.flops == 200.0 && op.bytes == (200.0 + 20) * 4);

    /* gemm_bias_act: gemm's work, the epilogue's 5 flops per element of C, the bias */
    describe("sgemm_bias_act", 3, 2, 3, 4, 0, &op);
    assert_int_equal(op.noperands, 4);
    assert_true(op.flops == 48.0 + 5.0 * 6);
    assert_true(fabs(op.size - cbrt(24.0)) < 1e-12);
    assert_true(op.operand[0].bytes == 8 * 4 && op.operand[1].bytes == 12 * 4 && op.operand[2].bytes == 6 * 4 &&
                op.operand[3].bytes == 3 * 4);
    assert_true(op.bytes == (8 + 12 + 2 * 6 + 3) * 4);
    /* priced on the gemm curve like gemm: a big one costs what its gemm does, give or
     * take the epilogue, on a device with a slow gemm curve */
    xo__profile p[2];
    make_profiles(p);
    xo__op_cost g;
    describe("sgemm", 3, 64, 64, 64, 0, &g);
    describe("sgemm_bias_act", 3, 64, 64, 64, 0, &op);
    double tg = xo__compute_us(&p[1], &g), tf = xo__compute_us(&p[1], &op);
    assert_true(tf >= tg && tf < tg * 1.05);
}

static void describe_ops(void **state)
{
    (void)state;
    xo__op_cost op;
    describe("sgemm", 3, 2, 3, 4, 0, &op);
    assert_int_equal(op.kind, XO_OP_GEMM);
    assert_int_equal(op.dtype, XO_F32);
    assert_true(op.flops == 48.0);
    assert_true(fabs(op.size - cbrt(24.0)) < 1e-12);
    assert_int_equal(op.noperands, 3);
    assert_true(op.operand[0].bytes == 8 * 4 && op.operand[1].bytes == 12 * 4 && op.operand[2].bytes == 6 * 4);
    assert_true(op.bytes == (8 + 12 + 2 * 6) * 4);
    for (int i = 0; i < 3; i++)
        assert_true(op.operand[i].valid == 1u);

    describe("dgemv", 2, 100, 3, 0, 2, &op);
    assert_int_equal(op.dtype, XO_F64);
    assert_true(op.flops == 600.0);
    assert_int_equal(op.noperands, 3);
    assert_true(op.operand[0].bytes == 300 * 8 && op.operand[1].bytes == 3 * 8 && op.operand[2].bytes == 100 * 8);
    assert_true(op.operand[0].valid == 4u);

    static const struct {
        const char *name;
        int nops;
        double flops_per_n;
    } vec[] = {/* an output the op overwrites is not an operand to move (as in dispatch) */
               {"saxpy", 2, 2}, {"sscal", 1, 1}, {"sdot", 2, 2}, {"snrm2", 1, 2},
               {"sunary", 1, 4}, {"sbinary", 2, 1}, {"sreduce", 1, 1}, {"daxpy", 2, 2}};
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        describe(vec[i].name, 1, 1000, 0, 0, 0, &op);
        assert_int_equal(op.noperands, vec[i].nops);
        assert_true(op.flops == vec[i].flops_per_n * 1000.0);
        assert_true(op.size == 1000.0);
        assert_true(op.operand[0].bytes == 1000.0 * (vec[i].name[0] == 'd' ? 8 : 4));
    }
    describe("sbias", 2, 10, 20, 0, 0, &op);
    assert_int_equal(op.noperands, 2);
    assert_true(op.operand[0].bytes == 200 * 4 && op.operand[1].bytes == 20 * 4);
    assert_true(op.flops == 200.0);

    /* the shared helper fills the same work figures */
    xo__op_cost c;
    xo__op_cost_init(&c, XO_OP_GEMM, XO_F32, 2, 3, 4);
    assert_true(c.flops == 48.0 && c.bytes == (8 + 12 + 2 * 6) * 4 && c.noperands == 0);

    size_t dims[3] = {10, 10, 10}, zero[3] = {10, 0, 10};
    assert_int_equal(xo__describe_op("sgemm", 2, dims, 0, &op), XO_ERR_INVALID_ARGUMENT);
    assert_int_equal(xo__describe_op("sgemm", 3, zero, 0, &op), XO_ERR_INVALID_ARGUMENT);
    assert_int_equal(xo__describe_op("xgemm", 3, dims, 0, &op), XO_ERR_INVALID_ARGUMENT);
    assert_int_equal(xo__describe_op("sgemmx", 3, dims, 0, &op), XO_ERR_INVALID_ARGUMENT);
    assert_int_equal(xo__describe_op("", 0, dims, 0, &op), XO_ERR_INVALID_ARGUMENT);
    assert_int_equal(xo__describe_op("saxpy", 1, dims, -1, &op), XO_ERR_INVALID_ARGUMENT);
    assert_int_equal(xo__describe_op("saxpy", 1, dims, XO_MAX_DEVICES, &op), XO_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(xo_last_error(), "xo__describe_op"));
}

static void defaults_are_sane(void **state)
{
    (void)state;
    const struct {
        xo_device_kind kind;
        const char *plugin;
    } rows[] = {{XO_DEVICE_CPU, "cpu"},    {XO_DEVICE_CPU, "opencl"}, {XO_DEVICE_GPU, "cuda"},
                {XO_DEVICE_GPU, "opencl"}, {XO_DEVICE_GPU, "other"},  {XO_DEVICE_ACCELERATOR, "opencl"}};
    xo__profile p[6];
    for (int r = 0; r < 6; r++) {
        xo__profile_defaults(rows[r].kind, rows[r].plugin, &p[r]);
        const xo_device_info *in = &p[r].info;
        assert_int_equal(in->kind, rows[r].kind);
        assert_string_equal(in->plugin, rows[r].plugin);
        assert_true(in->launch_us > 0.0 && in->launch_us < 1000.0);
        assert_true(in->mem_gbps > 0.0 && in->peak_gflops > 0.0);
        assert_true(in->transfer_latency_us >= 0.0 && in->h2d_gbps >= 0.0 && in->d2h_gbps >= 0.0);
        double top = 0.0;
        for (int i = 0; i < XO_CURVE_POINTS; i++) {
            assert_true(p[r].gemm_gflops[XO_F32][i] > 0.0);
            assert_true(p[r].gemm_gflops[XO_F64][i] > 0.0);
            assert_true(p[r].gemm_gflops[XO_F64][i] <= p[r].gemm_gflops[XO_F32][i]);
            if (i > 0)
                assert_true(p[r].gemm_gflops[XO_F32][i] >= p[r].gemm_gflops[XO_F32][i - 1]);
            if (p[r].gemm_gflops[XO_F32][i] > top)
                top = p[r].gemm_gflops[XO_F32][i];
        }
        assert_true(fabs(top - in->peak_gflops) < 1e-9 * top);
        assert_true(p[r].stream_gbps[0] > 0.0 && p[r].stream_gbps[1] > 0.0);
    }
    /* the host CPU moves nothing, an OpenCL CPU device has a queue to go through */
    assert_true(p[0].info.h2d_gbps == 0.0 && p[0].info.transfer_latency_us == 0.0);
    assert_true(p[1].info.launch_us > p[0].info.launch_us);
    /* with the defaults, the placement scenarios come out the same way */
    xo__profile pair[2] = {p[0], p[2]};
    xo__op_cost op;
    xo_estimate est[2];
    describe("sgemv", 2, 100, 3, 0, 0, &op);
    assert_int_equal(cheapest(pair, 2, &op, est), 0);
    describe("sgemm", 3, 4096, 4096, 4096, 0, &op);
    assert_int_equal(cheapest(pair, 2, &op, est), 1);
    describe("sgemm", 3, 1000, 1000, 1000, 1, &op);
    assert_int_equal(cheapest(pair, 2, &op, est), 1);
    describe("saxpy", 1, 1000, 0, 0, 0, &op);
    assert_int_equal(cheapest(pair, 2, &op, est), 0);
}

/* ---- online correction ------------------------------------------------------------------ */

static void size_classes(void **state)
{
    (void)state;
    xo__op_cost op;
    memset(&op, 0, sizeof op);
    assert_int_equal(xo__size_class(&op), 0);
    op.flops = 1023.0;
    assert_int_equal(xo__size_class(&op), 10);
    op.flops = 1e300;
    assert_int_equal(xo__size_class(&op), 47);
    op.flops = NAN;
    op.bytes = 3.0;
    assert_int_equal(xo__size_class(&op), 2);
    describe("sgemm", 3, 64, 64, 64, 0, &op);
    int small = xo__size_class(&op);
    describe("sgemm", 3, 1024, 1024, 1024, 0, &op);
    assert_true(xo__size_class(&op) > small);
}

static void correction_robust(void **state)
{
    (void)state;
    xo__correction *c = NULL;
    assert_int_equal(xo__correction_create(2, &c), XO_OK);
    const int dev = 1, cls = 20;
    /* nothing known: 1 */
    assert_true(xo__correction_factor(c, dev, XO_OP_GEMM, XO_F32, cls) == 1.0);
    /* one sample is not enough */
    xo__correction_record(c, dev, XO_OP_GEMM, XO_F32, cls, 100.0, 400.0);
    assert_true(xo__correction_factor(c, dev, XO_OP_GEMM, XO_F32, cls) == 1.0);
    /* a consistently 4x-wrong prediction is corrected within 3 records */
    xo__correction_record(c, dev, XO_OP_GEMM, XO_F32, cls, 100.0, 400.0);
    xo__correction_record(c, dev, XO_OP_GEMM, XO_F32, cls, 100.0, 400.0);
    assert_true(fabs(xo__correction_factor(c, dev, XO_OP_GEMM, XO_F32, cls) - 4.0) < 1e-9);
    /* other cells are untouched */
    assert_true(xo__correction_factor(c, 0, XO_OP_GEMM, XO_F32, cls) == 1.0);
    assert_true(xo__correction_factor(c, dev, XO_OP_GEMM, XO_F64, cls) == 1.0);
    assert_true(xo__correction_factor(c, dev, XO_OP_GEMV, XO_F32, cls) == 1.0);
    assert_true(xo__correction_factor(c, dev, XO_OP_GEMM, XO_F32, cls + 1) == 1.0);
    /* settle at 4, then a single spike (even a huge one) does not move the factor */
    for (int i = 0; i < 8; i++)
        xo__correction_record(c, dev, XO_OP_GEMM, XO_F32, cls, 100.0, 400.0);
    xo__correction_record(c, dev, XO_OP_GEMM, XO_F32, cls, 100.0, 1e6);
    assert_true(fabs(xo__correction_factor(c, dev, XO_OP_GEMM, XO_F32, cls) - 4.0) < 1e-9);
    xo__correction_record(c, dev, XO_OP_GEMM, XO_F32, cls, 100.0, 0.001);
    assert_true(fabs(xo__correction_factor(c, dev, XO_OP_GEMM, XO_F32, cls) - 4.0) < 1e-9);
    xo__correction_record(c, dev, XO_OP_GEMM, XO_F32, cls, 100.0, 1500.0); /* 15/4 > 2: a shift */
    assert_true(fabs(xo__correction_factor(c, dev, XO_OP_GEMM, XO_F32, cls) - 4.0) < 1e-9);
    /* the device becomes 4x faster than that: followed within 3 records */
    for (int i = 0; i < 3; i++)
        xo__correction_record(c, dev, XO_OP_GEMM, XO_F32, cls, 100.0, 100.0);
    assert_true(fabs(xo__correction_factor(c, dev, XO_OP_GEMM, XO_F32, cls) - 1.0) < 1e-9);
    /* a spike among the first samples does not move it either */
    xo__correction_reset(c);
    assert_true(xo__correction_factor(c, dev, XO_OP_GEMM, XO_F32, cls) == 1.0);
    xo__correction_record(c, dev, XO_OP_GEMM, XO_F32, cls, 100.0, 200.0);
    xo__correction_record(c, dev, XO_OP_GEMM, XO_F32, cls, 100.0, 50000.0);
    assert_true(fabs(xo__correction_factor(c, dev, XO_OP_GEMM, XO_F32, cls) - 2.0) < 1e-9);
    xo__correction_record(c, dev, XO_OP_GEMM, XO_F32, cls, 100.0, 200.0);
    assert_true(fabs(xo__correction_factor(c, dev, XO_OP_GEMM, XO_F32, cls) - 2.0) < 1e-9);
    /* clamped to [1/64, 64] */
    for (int i = 0; i < 3; i++)
        xo__correction_record(c, 0, XO_OP_AXPY, XO_F64, 3, 1.0, 1e6);
    assert_true(xo__correction_factor(c, 0, XO_OP_AXPY, XO_F64, 3) == 64.0);
    /* nonsense is ignored, out-of-range cells are harmless */
    xo__correction_record(c, 0, XO_OP_SCAL, XO_F32, 3, 0.0, 5.0);
    xo__correction_record(c, 0, XO_OP_SCAL, XO_F32, 3, NAN, 5.0);
    xo__correction_record(c, 0, XO_OP_SCAL, XO_F32, 3, 5.0, INFINITY);
    xo__correction_record(c, 0, XO_OP_SCAL, XO_F32, 3, 5.0, -1.0);
    xo__correction_record(c, 0, XO_OP_SCAL, XO_F32, 3, 5.0, 10.0);
    assert_true(xo__correction_factor(c, 0, XO_OP_SCAL, XO_F32, 3) == 1.0);
    xo__correction_record(c, 7, XO_OP_SCAL, XO_F32, 3, 5.0, 10.0);
    xo__correction_record(c, 0, XO_OP_KIND_COUNT, XO_F32, 3, 5.0, 10.0);
    xo__correction_record(c, 0, XO_OP_SCAL, XO_F32, 999, 5.0, 10.0);
    assert_true(xo__correction_factor(c, 7, XO_OP_SCAL, XO_F32, 3) == 1.0);
    assert_true(xo__correction_factor(NULL, 0, XO_OP_SCAL, XO_F32, 3) == 1.0);
    xo__correction_destroy(c);
    xo__correction_destroy(NULL);
    assert_int_equal(xo__correction_create(0, &c), XO_ERR_INVALID_ARGUMENT);
}

/* A corrected model flips a decision that the raw model got wrong, within 3 ops. */
static void correction_flips_wrong_decision(void **state)
{
    (void)state;
    xo__profile p[2];
    make_profiles(p);
    xo__op_cost op;
    describe("sgemm", 3, 1000, 1000, 1000, 1, &op);
    xo_estimate e[2];
    assert_int_equal(cheapest(p, 2, &op, e), 1);
    /* the "GPU" really runs this 100x slower than predicted */
    xo__correction *c = NULL;
    assert_int_equal(xo__correction_create(2, &c), XO_OK);
    int cls = xo__size_class(&op), calls = 0, dev = 1;
    while (dev == 1 && calls < 10) {
        double raw = xo__compute_us(&p[1], &op);
        xo__correction_record(c, 1, op.kind, op.dtype, cls, raw, 100.0 * raw);
        calls++;
        for (int d = 0; d < 2; d++)
            xo__estimate(p, 2, d, &op, xo__correction_factor(c, d, op.kind, op.dtype, cls), &e[d]);
        dev = e[0].total_us < e[1].total_us ? 0 : 1;
    }
    assert_int_equal(dev, 0);
    assert_true(calls <= 3);
    xo__correction_destroy(c);
}

/* A wrong measurement must not misplace an op forever: the CPU measured 64x slow on a
 * sgemv's first runs (a load spike), the op moves to the other device, and the CPU is
 * no longer measured. Its factor decays while only consulted, so the op comes back to
 * the CPU within a bounded number of evaluations, and stays once measured right. */
static void wrong_factor_heals(void **state)
{
    (void)state;
    xo__profile p[2];
    make_profiles(p);
    xo__op_cost op;
    describe("sgemv", 2, 400, 100, 0, 0, &op);
    xo_estimate e[2];
    assert_int_equal(cheapest(p, 2, &op, e), 0);
    xo__correction *c = NULL;
    assert_int_equal(xo__correction_create(2, &c), XO_OK);
    int cls = xo__size_class(&op);
    double raw0 = xo__compute_us(&p[0], &op);
    for (int i = 0; i < 3; i++) /* the spike */
        xo__correction_record(c, 0, op.kind, op.dtype, cls, raw0, 64.0 * raw0);
    int evals = 0, dev = 1, away = 0;
    for (; evals < 2000; evals++) {
        for (int d = 0; d < 2; d++)
            xo__estimate(p, 2, d, &op, xo__correction_factor(c, d, op.kind, op.dtype, cls), &e[d]);
        dev = e[0].total_us < e[1].total_us ? 0 : 1;
        if (dev == 1)
            away++;
        else /* back on the CPU: measured at what the profile says */
            xo__correction_record(c, 0, op.kind, op.dtype, cls, raw0, raw0);
        if (dev == 0 && away > 0 && evals > away + 20)
            break;
    }
    assert_true(away > 0);          /* the spike did move it */
    assert_true(away <= 4 * 64);    /* and it came back within a few decay steps */
    assert_int_equal(dev, 0);       /* where it stays */
    assert_true(fabs(xo__correction_factor(c, 0, op.kind, op.dtype, cls) - 1.0) < 1e-9);
    xo__correction_destroy(c);
}

/* A 16-core CPU's profile, as a machine file carries it: waking its threads costs a
 * vector op of 25K elements 8 us (on such a CPU those ops took 3-10x their roofline).
 * The term is in the prediction from threaded_from elements on, not below, not in gemm
 * (its curve was measured with the threads), and survives a write and a read. */
static void thread_wake_term(void **state)
{
    (void)state;
    static const char text[] = "# crossover device profile v1\n"
                               "plugin = cpu\nname = 16-core Xeon\nkind = cpu\n"
                               "launch_us = 0.05\ntransfer_latency_us = 0\nh2d_gbps = 0\nd2h_gbps = 0\n"
                               "mem_gbps = 40\npeak_gflops = 1500\n"
                               "thread_wake_us = 8\nthreaded_from = 10001\n";
    const char *path = "test_model_16core.profile";
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
    xo__profile p, q;
    assert_int_equal(xo__profile_read(path, &p), XO_OK);
    assert_true(p.thread_wake_us == 8.0 && p.threaded_from == 10001.0);

    xo__op_cost op;
    describe("saxpy", 1, 25600, 0, 0, 1, &op);
    double roofline = 3.0 * 25600 * 4 / 40e3; /* 7.7 us at 40 GB/s */
    assert_true(fabs(xo__compute_us(&p, &op) - (roofline + 8.0)) < 1e-9);
    xo_estimate e;
    xo__estimate(&p, 1, 0, &op, 1.0, &e);
    assert_true(e.total_us > 8.0 + roofline);
    describe("sunary", 1, 25600, 0, 0, 1, &op);
    assert_true(xo__compute_us(&p, &op) > 8.0);
    describe("saxpy", 1, 10000, 0, 0, 1, &op); /* one thread: no wake-up */
    assert_true(fabs(xo__compute_us(&p, &op) - 3.0 * 10000 * 4 / 40e3) < 1e-9);
    describe("sgemm", 3, 256, 256, 256, 1, &op);
    xo__profile nowake = p;
    nowake.thread_wake_us = 0.0;
    assert_true(xo__compute_us(&p, &op) == xo__compute_us(&nowake, &op));

    assert_int_equal(xo__profile_write(path, &p), XO_OK);
    assert_int_equal(xo__profile_read(path, &q), XO_OK);
    assert_true(q.thread_wake_us == 8.0 && q.threaded_from == 10001.0);
    assert_int_equal(xo__profile_write(path, &nowake), XO_OK); /* 0: not written, read as 0 */
    assert_int_equal(xo__profile_read(path, &q), XO_OK);
    assert_true(q.thread_wake_us == 0.0);
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wrong_factor_heals),
        cmocka_unit_test(small_gemv_stays_on_cpu),
        cmocka_unit_test(big_gemm_goes_to_gpu),
        cmocka_unit_test(resident_gemm_stays_on_gpu),
        cmocka_unit_test(mid_gemm_is_close_call),
        cmocka_unit_test(transfers_between_devices_go_through_host),
        cmocka_unit_test(correction_scales_compute_only),
        cmocka_unit_test(per_op_launch_floor),
        cmocka_unit_test(gemm_curve_interpolation),
        cmocka_unit_test(roofline),
        cmocka_unit_test(describe_ops),
        cmocka_unit_test(describe_nn_ops),
        cmocka_unit_test(defaults_are_sane),
        cmocka_unit_test(size_classes),
        cmocka_unit_test(correction_robust),
        cmocka_unit_test(correction_flips_wrong_decision),
        cmocka_unit_test(thread_wake_term),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
