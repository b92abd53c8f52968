/* xo_chain_cpu: a fused element-wise chain on the CPU against the same ops issued eagerly,
 * and the fused pass's rate in GB/s against the streaming rate the CPU's own ops reach in
 * the same run. The chain (8 ops, three inputs a, b, c and one output y):
 *     y = a*b; y += c; y = tanh(y); y *= 1.5; y *= c; y -= 0.1; y = relu(y); y += 0.5 a
 * A plan fuses it into one pass that reads a, b, c and writes y (16 bytes per element).
 * Beside it, in the same rotation:
 *   - the streaming rate: one op, z = x*y, over three other buffers of the same size
 *     (12 bytes per element from and to memory: the other sides pass over 48-64 MB
 *     between its turns, more than the L3 cache holds);
 *   - the eager ops' rate: the first seven ops move 68 bytes per element, flattered (y,
 *     16 MB, comes back from the L3 cache between the ops);
 *   - a plain C pass y = a*b + c over host arrays of the same size on every core
 *     (chain_stream.c): it reads and writes what the fused pass does, with one
 *     multiply-add: memory speed for the pass;
 *   - the tuned C chain: the 8 ops hand-fused into one C loop over those arrays, built
 *     -O3 -march=native -ffast-math (chain_stream.c): what a C programmer writes for the
 *     chain, the bound a fused pass is judged by; its ratio to eager is the most fusion
 *     can give here.
 * Then the same chain over short vectors (16 to 65536 elements): the plan with chains
 * fused from that n on, against the plan with every op alone (white-box: the CPU plugin's
 * threshold xo__cpu_chain_min_n), to find where fusion starts to pay.
 * Rounds of the sides alternate; each figure is the median over the rounds.
 * Then the 4M chain's plan with blocks of 64 to 2048 elements, taking turns (sizes other
 * than the runner's own take its generic loops).
 *   usage: xo_chain_cpu [rounds (default 21) [big|tiny|blocks (default all)]] */
#include <crossover.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern size_t xo__cpu_chain_min_n, xo__cpu_chain_block; /* plugins/cpu/cpu_chain.c */
void xo__bench_stream_pass(const float *a, const float *b, const float *c, float *y, size_t n, int threads,
                           int whole_chain); /* chain_stream.c */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int g_failed;
static void check(xo_status s, const char *what)
{
    if (s != XO_OK && !g_failed) {
        fprintf(stderr, "xo_chain_cpu: %s: %s: %s\n", what, xo_status_string(s), xo_last_error());
        g_failed = 1;
    }
}

enum { A, B, C, Y, NBUF };

/* The first seven ops (the streaming part), then the saxpy. */
static void chain(xo_context *ctx, xo_buffer **b, size_t n, int with_axpy)
{
    check(xo_sbinary(ctx, XO_MUL, n, b[A], 0, b[B], 0, b[Y], 0), "mul");
    check(xo_sbinary(ctx, XO_ADD, n, b[Y], 0, b[C], 0, b[Y], 0), "add");
    check(xo_sunary(ctx, XO_TANH, n, b[Y], 0, b[Y], 0), "tanh");
    check(xo_sscal(ctx, n, 1.5f, b[Y], 0, 1), "scal");
    check(xo_sbinary(ctx, XO_MUL, n, b[Y], 0, b[C], 0, b[Y], 0), "mul c");
    check(xo_sbinary_scalar(ctx, XO_SUB, n, b[Y], 0, 0.1f, b[Y], 0), "sub");
    check(xo_sunary(ctx, XO_RELU, n, b[Y], 0, b[Y], 0), "relu");
    if (with_axpy)
        check(xo_saxpy(ctx, n, 0.5f, b[A], 0, 1, b[Y], 0, 1), "axpy");
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

static void make_buffers(xo_context *ctx, xo_buffer **b, int count, size_t n)
{
    float *h = malloc(n * sizeof *h);
    for (int k = 0; k < count; k++) {
        for (size_t i = 0; i < n; i++)
            h[i] = (float)((i * 7919u + (unsigned)k * 104729u) % 2001u) / 1000.0f - 1.0f;
        check(xo_buffer_create(ctx, n * sizeof *h, &b[k]), "xo_buffer_create");
        if (b[k])
            check(xo_buffer_write(b[k], 0, h, n * sizeof *h), "xo_buffer_write");
    }
    free(h);
}

static xo_plan *capture(xo_context *ctx, xo_buffer **b, size_t n)
{
    xo_plan *p = NULL;
    check(xo_capture_begin(ctx), "xo_capture_begin");
    chain(ctx, b, n, 1);
    check(xo_capture_end(ctx, &p), "xo_capture_end");
    return p;
}

#define BIG ((size_t)4 << 20)

/* The sides of the 4M comparison, timed in turns. */
enum { EAGER, EAGER7, PLAN, CPASS, CCHAIN, ONEOP, NSIDE };

static void big(xo_context *ctx, int rounds)
{
    xo_buffer *b[NBUF], *o[3]; /* o: the one op's own x, y and out, apart from the chain's */
    make_buffers(ctx, b, NBUF, BIG);
    make_buffers(ctx, o, 3, BIG);
    xo_plan *plan = capture(ctx, b, BIG);
    if (g_failed)
        return;
    double *t[NSIDE];
    for (int s = 0; s < NSIDE; s++)
        t[s] = malloc((size_t)rounds * sizeof(double));
    /* the C references' own arrays, as filled as the buffers */
    float *ha[4];
    for (int k = 0; k < 4; k++) {
        ha[k] = malloc(BIG * sizeof(float));
        for (size_t i = 0; ha[k] && i < BIG; i++)
            ha[k][i] = (float)((i * 7919u + (unsigned)k * 104729u) % 2001u) / 1000.0f - 1.0f;
        if (!ha[k])
            g_failed = 1;
    }
    const int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    for (int w = 0; w < 2; w++) { /* warm-up: page faults, placement's learning */
        chain(ctx, b, BIG, 1);
        check(xo_plan_run(plan), "xo_plan_run");
        check(xo_sbinary(ctx, XO_MUL, BIG, o[0], 0, o[1], 0, o[2], 0), "mul");
        check(xo_finish(ctx), "xo_finish");
    }
    for (int r = 0; r < rounds && !g_failed; r++)
        for (int k = 0; k < NSIDE; k++) {
            int s = (k + r) % NSIDE;
            double t0 = now_ns();
            if (s == CPASS || s == CCHAIN)
                xo__bench_stream_pass(ha[0], ha[1], ha[2], ha[3], BIG, threads, s == CCHAIN);
            else if (s == PLAN)
                check(xo_plan_run(plan), "xo_plan_run");
            else if (s == ONEOP)
                check(xo_sbinary(ctx, XO_MUL, BIG, o[0], 0, o[1], 0, o[2], 0), "mul");
            else
                chain(ctx, b, BIG, s == EAGER);
            check(xo_finish(ctx), "xo_finish");
            t[s][r] = now_ns() - t0;
        }
    double m[NSIDE];
    for (int s = 0; s < NSIDE; s++)
        m[s] = median(t[s], rounds);
    double gbs[NSIDE] = {0};
    for (int s = EAGER7; s < NSIDE; s++) /* bytes moved per element over ns: GB/s */
        gbs[s] = (s == EAGER7 ? 68.0 : s == ONEOP ? 12.0 : 16.0) * BIG / m[s];
    printf("chain of 8 element-wise ops over %zu floats on the CPU, median of %d rounds taking turns\n", BIG, rounds);
    printf("  eager (8 ops)          %8.3f ms\n", m[EAGER] * 1e-6);
    printf("  eager first 7 ops      %8.3f ms  %6.1f GB/s  (68 bytes per element, y in part from the L3 cache)\n",
           m[EAGER7] * 1e-6, gbs[EAGER7]);
    printf("  one op from memory     %8.3f ms  %6.1f GB/s  (xo_sbinary z = x*y over other buffers, 12 bytes per "
           "element: the streaming rate)\n",
           m[ONEOP] * 1e-6, gbs[ONEOP]);
    printf("  plan (one fused pass)  %8.3f ms  %6.1f GB/s  (16 bytes per element)\n", m[PLAN] * 1e-6, gbs[PLAN]);
    printf("  C pass y = a*b + c     %8.3f ms  %6.1f GB/s  (16 bytes per element, %d threads: memory speed for one pass)\n",
           m[CPASS] * 1e-6, gbs[CPASS], threads);
    printf("  C chain, tuned         %8.3f ms  %6.1f GB/s  (the 8 ops as one C loop, %d threads, -O3 -march=native "
           "-ffast-math)\n",
           m[CCHAIN] * 1e-6, gbs[CCHAIN], threads);
    printf("  plan / eager %.2fx (tuned C chain / eager %.2fx), plan / tuned C chain %.2fx\n", m[EAGER] / m[PLAN],
           m[EAGER] / m[CCHAIN], m[CCHAIN] / m[PLAN]);
    printf("  fused pass at %.0f%% of the streaming rate, %.0f%% of the C pass, %.0f%% of the eager ops' rate\n",
           100.0 * gbs[PLAN] / gbs[ONEOP], 100.0 * gbs[PLAN] / gbs[CPASS], 100.0 * gbs[PLAN] / gbs[EAGER7]);
    /* the tuned C chain computes what the plan computes: same inputs, same y */
    float *y = malloc(BIG * sizeof *y);
    check(xo_plan_run(plan), "xo_plan_run");
    if (y)
        check(xo_buffer_read(b[Y], 0, y, BIG * sizeof *y), "xo_buffer_read");
    xo__bench_stream_pass(ha[0], ha[1], ha[2], ha[3], BIG, threads, 1);
    double worst = y ? 0 : INFINITY;
    for (size_t i = 0; y && i < BIG; i++)
        worst = fmax(worst, fabs((double)y[i] - ha[3][i]));
    printf("  plan's y against the tuned C chain's: largest difference %.2g%s\n", worst,
           worst <= 1e-5 ? "" : " (NOT the same program)");
    g_failed |= !(worst <= 1e-5);
    free(y);
    char text[1024];
    check(xo_plan_describe(plan, text, sizeof text), "xo_plan_describe");
    printf("%s", text);
    for (int s = 0; s < NSIDE; s++)
        free(t[s]);
    for (int k = 0; k < 4; k++)
        free(ha[k]);
    xo_plan_destroy(plan);
    for (int k = 0; k < NBUF; k++)
        xo_buffer_destroy(b[k]);
    for (int k = 0; k < 3; k++)
        xo_buffer_destroy(o[k]);
}

/* The plan over 4M floats with each block size, taking turns. */
static void blocks(xo_context *ctx, int rounds)
{
    static const size_t sizes[] = {64, 128, 256, 512, 1024, 2048};
    enum { NB = sizeof sizes / sizeof *sizes };
    const size_t saved = xo__cpu_chain_block;
    xo_buffer *b[NBUF];
    make_buffers(ctx, b, NBUF, BIG);
    xo_plan *plan = capture(ctx, b, BIG);
    double *t[NB];
    for (int s = 0; s < NB; s++)
        t[s] = malloc((size_t)rounds * sizeof(double));
    for (int r = -1; r < rounds && !g_failed; r++)
        for (int k = 0; k < NB; k++) {
            int s = (k + r + 1) % NB;
            xo__cpu_chain_block = sizes[s];
            double t0 = now_ns();
            check(xo_plan_run(plan), "xo_plan_run");
            check(xo_finish(ctx), "xo_finish");
            if (r >= 0)
                t[s][r] = now_ns() - t0;
        }
    xo__cpu_chain_block = saved;
    printf("\nthe plan over %zu floats by block size, ms, median of %d rounds taking turns\n", BIG, rounds);
    for (int s = 0; s < NB && !g_failed; s++)
        printf("%8zu %8.3f\n", sizes[s], median(t[s], rounds) * 1e-6);
    for (int s = 0; s < NB; s++)
        free(t[s]);
    xo_plan_destroy(plan);
    for (int k = 0; k < NBUF; k++)
        xo_buffer_destroy(b[k]);
}

/* Tiny vectors: the plan fused against the plan op by op, each a plan run per call. */
static void tiny(xo_context *ctx, int rounds)
{
    static const size_t sizes[] = {16, 64, 256, 1024, 2048, 4096, 8192, 16384, 65536};
    const size_t saved = xo__cpu_chain_min_n;
    printf("\ntiny chains (the same 8 ops), ns per plan run, median of %d rounds taking turns\n", rounds);
    printf("%8s %12s %12s %8s\n", "n", "fused", "op by op", "ratio");
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes && !g_failed; i++) {
        size_t n = sizes[i];
        xo_buffer *b[NBUF];
        make_buffers(ctx, b, NBUF, n);
        xo_plan *p[2];
        xo__cpu_chain_min_n = 1;
        p[0] = capture(ctx, b, n);
        xo__cpu_chain_min_n = (size_t)-1;
        p[1] = capture(ctx, b, n);
        xo__cpu_chain_min_n = saved;
        double *t[2] = {malloc((size_t)rounds * sizeof(double)), malloc((size_t)rounds * sizeof(double))};
        const int reps = n > 4096 ? 200 : 2000;
        for (int r = -2; r < rounds && !g_failed; r++)
            for (int k = 0; k < 2; k++) {
                int s = (k + r + 2) % 2;
                xo__cpu_chain_min_n = s == 0 ? 1 : (size_t)-1; /* the runner checks it too */
                double t0 = now_ns();
                for (int q = 0; q < reps; q++)
                    check(xo_plan_run(p[s]), "xo_plan_run");
                check(xo_finish(ctx), "xo_finish");
                if (r >= 0)
                    t[s][r] = (now_ns() - t0) / reps;
            }
        xo__cpu_chain_min_n = saved;
        double f = median(t[0], rounds), o = median(t[1], rounds);
        printf("%8zu %12.1f %12.1f %8.2f\n", n, f, o, o / f);
        for (int s = 0; s < 2; s++) {
            free(t[s]);
            xo_plan_destroy(p[s]);
        }
        for (int k = 0; k < NBUF; k++)
            xo_buffer_destroy(b[k]);
    }
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 21;
    if (rounds < 1)
        rounds = 1;
    xo_context *ctx = NULL;
    check(xo_context_create(&ctx), "xo_context_create");
    if (!ctx)
        return 1;
    check(xo_set_device(ctx, "cpu"), "xo_set_device");
    const char *part = argc > 2 ? argv[2] : "";
    if (!*part || strcmp(part, "big") == 0)
        big(ctx, rounds);
    if (!*part || strcmp(part, "tiny") == 0)
        tiny(ctx, rounds);
    if (!*part || strcmp(part, "blocks") == 0)
        blocks(ctx, rounds);
    xo_context_destroy(ctx);
    return g_failed;
}
