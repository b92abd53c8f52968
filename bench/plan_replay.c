/* xo_plan_replay: what a plan's replay costs per recorded op on the CPU, against the
 * same tiny ops issued eagerly and against OpenBLAS called directly on the same memory
 * (white-box: xo_internal.h gives the host copies). A sequence of 64 ops (saxpy and
 * sscal, n = 16, over 8 buffers) is captured once; batches of runs of each kind
 * alternate, and the fastest batch of each is reported as ns per op.
 * Then Adam's update of 4M floats, 8 element-wise ops (a chain the plan fuses into one
 * pass over cache-sized blocks, its temporary kept in registers), eagerly and as a plan,
 * fastest of 7 runs each.
 * Usage: xo_plan_replay [ops-per-sequence (default 64) [axpy: saxpy only]]. */
#include <crossover.h>

#include "xo_internal.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 16
#define NBUF 8
#define BATCHES 41
#define REPS 2000

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int axpy_only; /* argv[2] == "axpy": every op a saxpy (host BLAS entry on replay) */

static xo_status issue(xo_context *ctx, xo_buffer **b, int ops)
{
    for (int i = 0; i < ops; i++) {
        xo_status st = (i & 1) && !axpy_only ? xo_sscal(ctx, N, 0.999f, b[i % NBUF], 0, 1)
                             : xo_saxpy(ctx, N, 1e-3f, b[i % NBUF], 0, 1, b[(i + 1) % NBUF], 0, 1);
        if (st != XO_OK)
            return st;
    }
    return XO_OK;
}

static void direct(float **h, int ops)
{
    for (int i = 0; i < ops; i++) {
        if ((i & 1) && !axpy_only)
            cblas_sscal(N, 0.999f, h[i % NBUF], 1);
        else
            cblas_saxpy(N, 1e-3f, h[i % NBUF], 1, h[(i + 1) % NBUF], 1);
    }
}

#define CHAIN_N (4u << 20)
enum { W, M, V, G, T, LR, NCHAIN };
/* Adam's update of 4M weights, as a user writes it: 8 element-wise ops, the temporary t
 * overwritten by each op in turn, the per-step learning rate (bias correction included)
 * read from a buffer. */
static xo_status adam(xo_context *ctx, xo_buffer *const *b)
{
    xo_status st;
    if ((st = xo_saxpby(ctx, CHAIN_N, 0.1f, b[G], 0, 1, 0.9f, b[M], 0, 1)) != XO_OK ||   /* m = .9m + .1g */
        (st = xo_sbinary(ctx, XO_MUL, CHAIN_N, b[G], 0, b[G], 0, b[T], 0)) != XO_OK ||      /* t = g*g */
        (st = xo_saxpby(ctx, CHAIN_N, 0.001f, b[T], 0, 1, 0.999f, b[V], 0, 1)) != XO_OK || /* v = .999v + .001t */
        (st = xo_sunary(ctx, XO_SQRT, CHAIN_N, b[V], 0, b[T], 0)) != XO_OK ||             /* t = sqrt(v) */
        (st = xo_sbinary_scalar(ctx, XO_ADD, CHAIN_N, b[T], 0, 1e-8f, b[T], 0)) != XO_OK || /* t += eps */
        (st = xo_sbinary(ctx, XO_DIV, CHAIN_N, b[M], 0, b[T], 0, b[T], 0)) != XO_OK ||      /* t = m / t */
        (st = xo_sscale_by(ctx, CHAIN_N, b[LR], 0, b[T], 0, 1)) != XO_OK)                   /* t *= lr_t */
        return st;
    return xo_saxpy(ctx, CHAIN_N, -1.0f, b[T], 0, 1, b[W], 0, 1); /* w -= t */
}

static void chain_bench(xo_context *ctx)
{
    xo_buffer *b[NCHAIN];
    static const float init[NCHAIN] = {1.0f, 0.0f, 0.0f, 0.01f, 0.0f, 0.001f};
    for (int i = 0; i < NCHAIN; i++)
        if (xo_buffer_create(ctx, (i == LR ? 1 : CHAIN_N) * sizeof(float), &b[i]) != XO_OK ||
            xo_sfill(ctx, i == LR ? 1 : CHAIN_N, init[i], b[i], 0, 1) != XO_OK)
            return;
    xo_plan *plan;
    if (xo_capture_begin(ctx) != XO_OK || adam(ctx, b) != XO_OK || xo_capture_end(ctx, &plan) != XO_OK) {
        fprintf(stderr, "xo_plan_replay: %s\n", xo_last_error());
        return;
    }
    double best[2] = {1e30, 1e30};
    for (int rep = 0; rep < 7; rep++)
        for (int kind = 0; kind < 2; kind++) {
            double t = now_ns();
            if (kind == 0)
                adam(ctx, b);
            else
                xo_plan_run(plan);
            t = now_ns() - t;
            if (t < best[kind])
                best[kind] = t;
        }
    char text[2048];
    xo_plan_describe(plan, text, sizeof text);
    printf("Adam's update, 8 element-wise ops over %u floats (CPU), fastest of 7:\n  eager %8.2f ms\n  plan  %8.2f ms  "
           "(%.2fx)\n%s",
           CHAIN_N, best[0] * 1e-6, best[1] * 1e-6, best[0] / best[1], text);
    xo_plan_destroy(plan);
    for (int i = 0; i < NCHAIN; i++)
        xo_buffer_destroy(b[i]);
}

int main(int argc, char **argv)
{
    int ops = argc > 1 ? atoi(argv[1]) : 64;
    axpy_only = argc > 2 && strcmp(argv[2], "axpy") == 0;
    if (ops < 2 || ops > 100000) {
        fprintf(stderr, "usage: xo_plan_replay [ops-per-sequence, 2..100000]\n");
        return 2;
    }
    xo_context *ctx;
    if (xo_context_create(&ctx) != XO_OK || xo_set_device(ctx, "cpu") != XO_OK) {
        fprintf(stderr, "xo_plan_replay: %s\n", xo_last_error());
        return 1;
    }
    xo_buffer *b[NBUF];
    float *h[NBUF];
    for (int i = 0; i < NBUF; i++) {
        if (xo_buffer_create(ctx, N * sizeof(float), &b[i]) != XO_OK)
            return 1;
        h[i] = b[i]->host;
    }
    xo_plan *plan;
    double t0 = now_ns();
    if (xo_capture_begin(ctx) != XO_OK || issue(ctx, b, ops) != XO_OK || xo_capture_end(ctx, &plan) != XO_OK) {
        fprintf(stderr, "xo_plan_replay: %s\n", xo_last_error());
        return 1;
    }
    double build_us = (now_ns() - t0) * 1e-3;
    int reps = REPS * 64 / ops > 1 ? REPS * 64 / ops : 1;
    double best[3] = {1e30, 1e30, 1e30};
    for (int batch = 0; batch < BATCHES; batch++)
        for (int kind = 0; kind < 3; kind++) {
            double t = now_ns();
            for (int r = 0; r < reps; r++) {
                if (kind == 0)
                    direct(h, ops);
                else if (kind == 1)
                    issue(ctx, b, ops);
                else
                    xo_plan_run(plan);
            }
            double ns = (now_ns() - t) / ((double)reps * ops);
            if (ns < best[kind])
                best[kind] = ns;
        }
    printf("sequence of %d tiny ops (%s n=%d), fastest of %d batches, ns per op:\n", ops,
           axpy_only ? "saxpy" : "saxpy, sscal", N, BATCHES);
    printf("  OpenBLAS direct  %7.2f\n", best[0]);
    printf("  eager            %7.2f  (+%.2f)\n", best[1], best[1] - best[0]);
    printf("  plan replay      %7.2f  (+%.2f)\n", best[2], best[2] - best[0]);
    printf("plan built in %.1f us (capture end)\n", build_us);
    xo_plan_destroy(plan);
    for (int i = 0; i < NBUF; i++)
        xo_buffer_destroy(b[i]);
    chain_bench(ctx);
    xo_context_destroy(ctx);
    return 0;
}
