/* xo_fused: what the 0.3 ops buy.
 *
 *  1. gemm_bias_act (C = tanh(A B + bias), one op) against the three ops it replaces
 *     (gemm, bias, unary tanh), per device (cpu, and opencl where present, each forced)
 *     and size; prints the time of each and the ratio separate / fused (> 1: the fused
 *     op is faster).
 *  2. One Adam step over 1M parameters written with crossover ops (axpby, binary,
 *     binary_scalar, unary sqrt, axpy), against the same step as a plain C loop, both
 *     on the CPU; prints both and the ratio loop / crossover (> 1: crossover faster).
 *
 * Batches of the two sides alternate, and each figure is the fastest batch, so both
 * sides see the same machine state on a shared host.
 *   usage: xo_fused [batches]   (default 15) */
#include <crossover.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int g_failed;
static void check(xo_status s, const char *what)
{
    if (s != XO_OK && !g_failed) {
        fprintf(stderr, "xo_fused: %s: %s: %s\n", what, xo_status_string(s), xo_last_error());
        g_failed = 1;
    }
}

static xo_buffer *random_buffer(xo_context *ctx, size_t n, unsigned seed, float lo, float hi)
{
    float *h = malloc(n * sizeof *h);
    srand(seed);
    for (size_t i = 0; i < n; i++) h[i] = lo + (hi - lo) * (float)rand() / (float)RAND_MAX;
    xo_buffer *b = NULL;
    check(xo_buffer_create(ctx, n * sizeof *h, &b), "xo_buffer_create");
    if (b) check(xo_buffer_write(b, 0, h, n * sizeof *h), "xo_buffer_write");
    free(h);
    return b;
}

/* ---- 1. gemm_bias_act against gemm + bias + tanh --------------------------------- */

typedef struct gemm_case {
    xo_context *ctx;
    size_t m, n, k;
    xo_buffer *a, *b, *c, *bias;
} gemm_case;

static void run_fused(gemm_case *g, long reps)
{
    for (long r = 0; r < reps; r++)
        check(xo_sgemm_bias_act(g->ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, g->m, g->n, g->k, 1.0f, g->a, 0, g->k,
                                g->b, 0, g->n, 0.0f, g->c, 0, g->n, g->bias, 0, XO_TANH),
              "xo_sgemm_bias_act");
    check(xo_finish(g->ctx), "xo_finish");
}

static void run_separate(gemm_case *g, long reps)
{
    for (long r = 0; r < reps; r++) {
        check(xo_sgemm(g->ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, g->m, g->n, g->k, 1.0f, g->a, 0, g->k, g->b,
                       0, g->n, 0.0f, g->c, 0, g->n),
              "xo_sgemm");
        check(xo_sbias(g->ctx, g->m, g->n, g->c, 0, g->n, g->bias, 0), "xo_sbias");
        check(xo_sunary(g->ctx, XO_TANH, g->m * g->n, g->c, 0, g->c, 0), "xo_sunary");
    }
    check(xo_finish(g->ctx), "xo_finish");
}

/* Fastest batch of each side, us per step; batches alternate. */
static void race(void (*f1)(void *, long), void (*f2)(void *, long), void *arg, int batches, double *t1, double *t2)
{
    double start;
    long reps = 1;
    f1(arg, 1); /* warm up both (placement learning, page faults) */
    f2(arg, 1);
    for (;;) { /* about 20 ms a batch; both sides run the same number of times */
        start = now_us();
        f1(arg, reps);
        double took = now_us() - start;
        f2(arg, reps);
        if (took >= 2e4 || reps >= 1 << 20) break;
        reps *= 2;
    }
    *t1 = *t2 = INFINITY;
    for (int b = 0; b < batches && !g_failed; b++)
        for (int side = 0; side < 2; side++) {
            int which = (b & 1) ^ side;
            double s = now_us();
            (which ? f2 : f1)(arg, reps);
            double per = (now_us() - s) / (double)reps;
            double *t = which ? t2 : t1;
            if (per < *t) *t = per;
        }
}

static void fused_cb(void *g, long r) { run_fused(g, r); }
static void separate_cb(void *g, long r) { run_separate(g, r); }

static void gemm_table(xo_context *ctx, int batches)
{
    /* the small networks' shapes first (cpu_small.c's kernels, the epilogue in registers) */
    static const size_t sizes[][3] = {{1, 100, 3},      {16, 100, 3},     {100, 100, 3},     {1, 3, 100}, {16, 3, 100},
                                      {64, 64, 64},     {256, 256, 256},  {1024, 1024, 64}, {4096, 256, 256},
                                      {4096, 4096, 64}};
    static const char *devices[] = {"cpu", "opencl"};
    printf("gemm_bias_act (C = tanh(A B + bias), sgemm shapes M x N x K, row-major) vs gemm + bias + unary tanh\n");
    printf("%-8s %-16s %-10s %12s %12s %8s\n", "device", "M x N x K", "ran on", "fused us", "separate us", "ratio");
    for (size_t d = 0; d < sizeof devices / sizeof devices[0]; d++) {
        int dev;
        if (xo_device_find(ctx, devices[d], &dev) != XO_OK) continue;
        check(xo_set_device(ctx, devices[d]), "xo_set_device");
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0] && !g_failed; s++) {
            gemm_case g = {ctx, sizes[s][0], sizes[s][1], sizes[s][2], NULL, NULL, NULL, NULL};
            g.a = random_buffer(ctx, g.m * g.k, 1, -1, 1);
            g.b = random_buffer(ctx, g.k * g.n, 2, -0.1f, 0.1f);
            g.c = random_buffer(ctx, g.m * g.n, 3, -1, 1);
            g.bias = random_buffer(ctx, g.n, 4, -1, 1);
            double tf, ts;
            race(fused_cb, separate_cb, &g, batches, &tf, &ts);
            run_fused(&g, 1);
            xo_decision dec;
            xo_device_info info;
            check(xo_last_decision(ctx, &dec), "xo_last_decision");
            check(xo_device_get_info(ctx, dec.device, &info), "xo_device_get_info");
            char shape[48];
            snprintf(shape, sizeof shape, "%zux%zux%zu", g.m, g.n, g.k);
            printf("%-8s %-16s %-10s %12.1f %12.1f %8.2f\n", devices[d], shape, info.plugin, tf, ts, ts / tf);
            xo_buffer_destroy(g.a);
            xo_buffer_destroy(g.b);
            xo_buffer_destroy(g.c);
            xo_buffer_destroy(g.bias);
        }
    }
    check(xo_set_device(ctx, "auto"), "xo_set_device");
}

/* ---- 2. Adam over 1M parameters ---------------------------------------------------- */

#define ADAM_N ((size_t)1 << 20)
static const float B1 = 0.9f, B2 = 0.999f, LR = 1e-3f, EPS = 1e-8f;

typedef struct adam_case {
    xo_context *ctx;
    xo_buffer *p, *g, *m, *v, *t;  /* crossover's state; t: scratch */
    float *hp, *hg, *hm, *hv;      /* the plain loop's */
    int step_xo, step_loop;
} adam_case;

/* Adam (Kingma & Ba, section 2's efficient form):
 *   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
 *   p -= lr sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps sqrt(1 - b2^t))  */
static void adam_xo(void *arg, long reps)
{
    adam_case *a = arg;
    xo_context *ctx = a->ctx;
    for (long r = 0; r < reps; r++) {
        int t = ++a->step_xo;
        float c2 = sqrtf(1.0f - powf(B2, (float)t)), step = LR * c2 / (1.0f - powf(B1, (float)t));
        check(xo_saxpby(ctx, ADAM_N, 1 - B1, a->g, 0, 1, B1, a->m, 0, 1), "xo_saxpby m");
        check(xo_sbinary(ctx, XO_MUL, ADAM_N, a->g, 0, a->g, 0, a->t, 0), "xo_sbinary g*g");
        check(xo_saxpby(ctx, ADAM_N, 1 - B2, a->t, 0, 1, B2, a->v, 0, 1), "xo_saxpby v");
        check(xo_sunary(ctx, XO_SQRT, ADAM_N, a->v, 0, a->t, 0), "xo_sunary sqrt");
        check(xo_sbinary_scalar(ctx, XO_ADD, ADAM_N, a->t, 0, EPS * c2, a->t, 0), "xo_sbinary_scalar");
        check(xo_sbinary(ctx, XO_DIV, ADAM_N, a->m, 0, a->t, 0, a->t, 0), "xo_sbinary m/t");
        check(xo_saxpy(ctx, ADAM_N, -step, a->t, 0, 1, a->p, 0, 1), "xo_saxpy p");
    }
    check(xo_finish(ctx), "xo_finish");
}

/* The same step as one would write it in C: one pass, PyTorch's formula. */
static void adam_loop(void *arg, long reps)
{
    adam_case *a = arg;
    float *p = a->hp, *g = a->hg, *m = a->hm, *v = a->hv;
    for (long r = 0; r < reps; r++) {
        int t = ++a->step_loop;
        float c1 = 1.0f - powf(B1, (float)t), c2 = 1.0f - powf(B2, (float)t);
        for (size_t i = 0; i < ADAM_N; i++) {
            m[i] = B1 * m[i] + (1 - B1) * g[i];
            v[i] = B2 * v[i] + (1 - B2) * g[i] * g[i];
            p[i] -= LR * (m[i] / c1) / (sqrtf(v[i] / c2) + EPS);
        }
    }
}

static void adam_table(xo_context *ctx, int batches)
{
    adam_case a;
    memset(&a, 0, sizeof a);
    a.ctx = ctx;
    check(xo_set_device(ctx, "cpu"), "xo_set_device");
    a.p = random_buffer(ctx, ADAM_N, 11, -1, 1);
    a.g = random_buffer(ctx, ADAM_N, 12, -1, 1);
    a.m = random_buffer(ctx, ADAM_N, 13, 0, 0);
    a.v = random_buffer(ctx, ADAM_N, 14, 0, 0);
    a.t = random_buffer(ctx, ADAM_N, 15, 0, 0);
    float **host[] = {&a.hp, &a.hg, &a.hm, &a.hv};
    xo_buffer *from[] = {a.p, a.g, a.m, a.v};
    for (int i = 0; i < 4; i++) {
        *host[i] = malloc(ADAM_N * sizeof(float));
        check(xo_buffer_read(from[i], 0, *host[i], ADAM_N * sizeof(float)), "xo_buffer_read");
    }
    double txo, tloop;
    race(adam_xo, adam_loop, &a, batches, &txo, &tloop);
    /* Both sides took the same number of steps from the same state: same parameters. */
    float *got = malloc(ADAM_N * sizeof(float));
    check(xo_buffer_read(a.p, 0, got, ADAM_N * sizeof(float)), "xo_buffer_read");
    double worst = 0;
    for (size_t i = 0; i < ADAM_N; i++) {
        double d = fabs((double)got[i] - a.hp[i]);
        worst = d > worst ? d : worst;
    }
    printf("\nAdam step, %zu float parameters, on the CPU (%d steps each side; parameters agree to %.1e)\n",
           ADAM_N, a.step_xo, worst);
    printf("%-34s %12s\n", "", "us / step");
    printf("%-34s %12.1f\n", "crossover ops (7 ops)", txo);
    printf("%-34s %12.1f\n", "plain C loop (one pass)", tloop);
    printf("%-34s %12.2f\n", "ratio loop / crossover", tloop / txo);
    if (a.step_xo != a.step_loop) fprintf(stderr, "xo_fused: step counts differ\n");
    free(got);
    for (int i = 0; i < 4; i++) free(*host[i]);
    xo_buffer *all[] = {a.p, a.g, a.m, a.v, a.t};
    for (int i = 0; i < 5; i++) xo_buffer_destroy(all[i]);
    check(xo_set_device(ctx, "auto"), "xo_set_device");
}

int main(int argc, char **argv)
{
    int batches = argc > 1 ? atoi(argv[1]) : 15;
    if (batches < 1) batches = 1;
    xo_context *ctx = NULL;
    check(xo_context_create(&ctx), "xo_context_create");
    if (!ctx) return 1;
    gemm_table(ctx, batches);
    adam_table(ctx, batches);
    xo_context_destroy(ctx);
    return g_failed;
}
