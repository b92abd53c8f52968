/* The cost model: pure functions of (device profiles, op description, residency).
 *
 *   total    = launch + transfer + compute
 *   launch   = the profile's per-kind launch floor, else launch_us
 *   transfer = for each operand whose span (the bytes the op touches, residency.c)
 *              is not current on the device: host->device on it, or device->host on the
 *              device holding it (then host->device); device 0 is the host itself, so
 *              nothing moves onto it. Only the span is priced: only the span moves
 *   compute  = (roofline max(flops / gflops, bytes / bandwidth)
 *               + thread_wake_us for a vector op of threaded_from elements or more) x correction
 * Units: us, bytes, GB/s (1 GB/s = 1e3 bytes/us), GFLOP/s (1e3 flop/us).
 * See docs/placement.md. */
#include "xo_internal.h"

#include <math.h>

/* Floors that keep a zero or missing figure from dividing by zero: such a device is
 * simply predicted to be very slow. */
#define MIN_GFLOPS 1e-3
#define MIN_GBPS 1e-3

static double positive(double v, double fallback)
{
    return (isfinite(v) && v > 0.0) ? v : fallback;
}

/* One host<->device move: the latency plus bytes at `gbps`; gbps = 0 means "not
 * applicable" (the host itself), with no bandwidth term. */
static double move_us(const xo__profile *p, double bytes, double gbps)
{
    if (!(bytes > 0.0))
        return 0.0;
    double t = positive(p->info.transfer_latency_us, 0.0);
    if (gbps > 0.0)
        t += bytes / (gbps * 1e3);
    return t;
}

double xo__h2d_us(const xo__profile *p, double bytes) { return move_us(p, bytes, p->info.h2d_gbps); }

double xo__d2h_us(const xo__profile *p, double bytes) { return move_us(p, bytes, p->info.d2h_gbps); }

/* Curve point i of dtype, falling back to the sgemm curve (halved) and the peak. */
static double curve_point(const xo__profile *p, xo_dtype dtype, int i)
{
    double g = p->gemm_gflops[dtype][i];
    if (isfinite(g) && g > 0.0)
        return g;
    if (dtype == XO_F64) {
        g = p->gemm_gflops[XO_F32][i];
        if (isfinite(g) && g > 0.0)
            return g * 0.5;
    }
    return positive(p->info.peak_gflops, MIN_GFLOPS);
}

double xo__gemm_gflops(const xo__profile *p, xo_dtype dtype, double n)
{
    if (dtype != XO_F64)
        dtype = XO_F32;
    if (!(n > (double)XO_CURVE_MIN_N))
        return curve_point(p, dtype, 0);
    double x = log2(n / (double)XO_CURVE_MIN_N); /* 0 at the first point, 1 per doubling */
    if (x >= (double)(XO_CURVE_POINTS - 1))
        return curve_point(p, dtype, XO_CURVE_POINTS - 1);
    int i = (int)x;
    double frac = x - (double)i;
    double g0 = curve_point(p, dtype, i), g1 = curve_point(p, dtype, i + 1);
    /* log-log interpolation: a power law between neighbouring points */
    return exp2((1.0 - frac) * log2(g0) + frac * log2(g1));
}

/* Best arithmetic throughput of a dtype: the top of its gemm curve. */
static double peak_gflops(const xo__profile *p, xo_dtype dtype)
{
    double best = 0.0;
    for (int i = 0; i < XO_CURVE_POINTS; i++) {
        double g = curve_point(p, dtype, i);
        if (g > best)
            best = g;
    }
    if (dtype == XO_F32 && p->info.peak_gflops > best)
        best = p->info.peak_gflops;
    return positive(best, MIN_GFLOPS);
}

double xo__compute_us(const xo__profile *p, const xo__op_cost *op)
{
    xo_dtype dt = op->dtype == XO_F64 ? XO_F64 : XO_F32;
    double flops = positive(op->flops, 0.0), bytes = positive(op->bytes, 0.0);
    double gflops, gbps;
    if (op->kind == XO_OP_GEMM || op->kind == XO_OP_GEMM_BIAS_ACT) {
        gflops = positive(xo__gemm_gflops(p, dt, op->size), MIN_GFLOPS);
        gbps = positive(p->info.mem_gbps, MIN_GBPS);
    } else {
        gflops = peak_gflops(p, dt);
        gbps = positive(p->stream_gbps[dt], positive(p->info.mem_gbps, MIN_GBPS));
    }
    double t_flops = flops / (gflops * 1e3);
    double t_bytes = bytes / (gbps * 1e3);
    double t = t_flops > t_bytes ? t_flops : t_bytes;
    /* Waking a many-core CPU's threads costs more than a small op's work (16 cores: 3-10x
     * at 25K elements); the gemm curve was measured with the threads, so it has it. */
    int vector = op->kind != XO_OP_GEMM && op->kind != XO_OP_GEMM_BIAS_ACT;
    if (vector && p->thread_wake_us > 0.0 && op->size >= p->threaded_from)
        t += p->thread_wake_us;
    return t;
}

/* Cost of bringing one operand current on `dev` (credit_us: rent already paid toward
 * moving it home, ski rental). */
double xo__operand_us(const xo__profile *profiles, int ndev, int dev, double bytes, uint32_t valid, double credit)
{
    if (!(bytes > 0.0) || (valid & (1u << dev)))
        return 0.0;
    int holder = -1; /* lowest device other than the host holding a current copy */
    for (int e = 1; e < ndev && e < 32; e++)
        if (valid & (1u << e)) {
            holder = e;
            break;
        }
    if (dev == 0) {
        /* Ski rental: the rent already paid for keeping it away counts toward the move. */
        double t = holder > 0 ? xo__d2h_us(&profiles[holder], bytes) - positive(credit, 0.0) : 0.0;
        return t > 0.0 ? t : 0.0;
    }
    if (valid & 1u)
        return xo__h2d_us(&profiles[dev], bytes);
    double t = holder > 0 ? xo__d2h_us(&profiles[holder], bytes) : 0.0;
    return t + xo__h2d_us(&profiles[dev], bytes);
}

void xo__estimate(const xo__profile *profiles, int ndev, int dev, const xo__op_cost *op,
                  double correction, xo_estimate *out)
{
    const xo__profile *p = &profiles[dev];
    double launch = xo__launch_us(p, op->kind);
    double transfer = 0.0;
    int nop = op->noperands < XO_MAX_ARGS ? op->noperands : XO_MAX_ARGS;
    for (int i = 0; i < nop; i++)
        transfer += xo__operand_us(profiles, ndev, dev, op->operand[i].bytes, op->operand[i].valid,
                                   op->operand[i].credit_us);
    double compute = xo__compute_us(p, op) * positive(correction, 1.0);
    out->eligible = 1;
    out->launch_us = launch;
    out->transfer_us = transfer;
    out->compute_us = compute;
    out->total_us = launch + transfer + compute;
}
