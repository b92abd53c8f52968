/* xo_plan_replay: what a plan's replay costs per recorded op on the CPU, against the
 * same tiny ops issued eagerly and against OpenBLAS called directly on the same memory
 * (white-box: xo_internal.h gives the host copies). A sequence of 64 ops (saxpy and
 * sscal, n = 16, over 8 buffers) is captured once; batches of runs of each kind
 * alternate, and the fastest batch of each is reported as ns per op.
 * Usage: xo_plan_replay [ops-per-sequence] (default 64). */
#include <crossover.h>

#include "xo_internal.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
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

static xo_status issue(xo_context *ctx, xo_buffer **b, int ops)
{
    for (int i = 0; i < ops; i++) {
        xo_status st = i & 1 ? xo_sscal(ctx, N, 0.999f, b[i % NBUF], 0, 1)
                             : xo_saxpy(ctx, N, 1e-3f, b[i % NBUF], 0, 1, b[(i + 1) % NBUF], 0, 1);
        if (st != XO_OK)
            return st;
    }
    return XO_OK;
}

static void direct(float **h, int ops)
{
    for (int i = 0; i < ops; i++) {
        if (i & 1)
            cblas_sscal(N, 0.999f, h[i % NBUF], 1);
        else
            cblas_saxpy(N, 1e-3f, h[i % NBUF], 1, h[(i + 1) % NBUF], 1);
    }
}

int main(int argc, char **argv)
{
    int ops = argc > 1 ? atoi(argv[1]) : 64;
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
    printf("sequence of %d tiny ops (saxpy, sscal n=%d), fastest of %d batches, ns per op:\n", ops, N, BATCHES);
    printf("  OpenBLAS direct  %7.2f\n", best[0]);
    printf("  eager            %7.2f  (+%.2f)\n", best[1], best[1] - best[0]);
    printf("  plan replay      %7.2f  (+%.2f)\n", best[2], best[2] - best[0]);
    printf("plan built in %.1f us (capture end)\n", build_us);
    xo_plan_destroy(plan);
    for (int i = 0; i < NBUF; i++)
        xo_buffer_destroy(b[i]);
    xo_context_destroy(ctx);
    return 0;
}
