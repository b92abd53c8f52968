/* xo_overhead: what crossover adds to a tiny op. Times xo_sgemm at 4x4, 8x8, 32x32 and
 * xo_saxpy at 16 (auto placement and forced cpu, operands resident on the host) against
 * OpenBLAS cblas_sgemm / cblas_saxpy called directly, in the same run, on the very
 * memory of crossover's host copies (white-box: xo_internal.h), so that where the data
 * lies (alignment, 4K aliasing between operands: worth 20+ ns to a 32x32 sgemm here)
 * is the same on both sides and only the call path differs.
 * Each shape also with 8 and 64 sets of buffers used in turn (a program's working set),
 * and 1024 sets, more than the decision cache holds: the cost of a miss.
 * Many calls per batch, crossover and direct batches alternating; prints the fastest
 * batch's ns per call of each, their ratio and difference (ns added), and the median of
 * the paired differences. Target: ratio <= 1.10, <= 30 ns added. */
#include <crossover.h>

#include "xo_internal.h" /* xo_buffer.host */

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCHES 61
#define BATCH_TARGET_NS 1e6 /* each batch runs about 1 ms */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* A program uses many buffers: `sets` sets of operands per shape, each of its own size
 * (so each is a decision of its own), used in turn. 1024 sets are more decisions than a
 * thread's cache holds: every call is a miss. */
#define MAX_SETS 1024
typedef struct bench_case {
    const char *op;
    size_t n;               /* sgemm: n x n x n; saxpy: n elements */
    int sets;
    xo_context *ctx;
    xo_buffer *xa[MAX_SETS], *xb[MAX_SETS], *xc[MAX_SETS];
    float *a[MAX_SETS], *b[MAX_SETS], *c[MAX_SETS]; /* the host copies of xa, xb, xc */
    int failed;
} bench_case;

static void run_direct(bench_case *k, long calls)
{
    int n = (int)k->n, sets = k->sets;
    if (k->op[1] == 'g')
        for (long i = 0, j = 0; i < calls; i++, j = j + 1 == sets ? 0 : j + 1)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, k->a[j], n, k->b[j], n, 0.0f,
                        k->c[j], n);
    else
        for (long i = 0, j = 0; i < calls; i++, j = j + 1 == sets ? 0 : j + 1)
            cblas_saxpy(n, 1e-7f, k->a[j], 1, k->c[j], 1);
}

static void run_xo(bench_case *k, long calls)
{
    size_t n = k->n;
    int sets = k->sets;
    xo_status s = XO_OK;
    if (k->op[1] == 'g')
        for (long i = 0, j = 0; i < calls && s == XO_OK; i++, j = j + 1 == sets ? 0 : j + 1)
            s = xo_sgemm(k->ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, n, n, n, 1.0f, k->xa[j], 0, n, k->xb[j], 0, n,
                         0.0f, k->xc[j], 0, n);
    else
        for (long i = 0, j = 0; i < calls && s == XO_OK; i++, j = j + 1 == sets ? 0 : j + 1)
            s = xo_saxpy(k->ctx, n, 1e-7f, k->xa[j], 0, 1, k->xc[j], 0, 1);
    if (s == XO_OK) s = xo_finish(k->ctx);
    if (s != XO_OK && !k->failed) {
        fprintf(stderr, "xo_overhead: %s n=%zu: %s: %s\n", k->op, n, xo_status_string(s), xo_last_error());
        k->failed = 1;
    }
}

/* Direct and crossover batches alternate (and swap order every pair), so both see the
 * same machine state. This machine's speed drifts (a shared host: whole seconds at about
 * half speed), which scales both timings alike, so the figures are the fastest batch of
 * each (the cost of the code at full speed) and, for the drift, the median of the
 * paired per-call differences. */
typedef struct pair_result {
    double direct, xo;    /* fastest batch, ns per call */
    double added_min;     /* xo - direct */
    double added_median;  /* median over pairs of (xo - direct) */
} pair_result;

static pair_result time_pairs(bench_case *k, long calls)
{
    double td[BATCHES], tx[BATCHES], dd[BATCHES];
    run_direct(k, calls); /* warm-up */
    run_xo(k, calls);
    for (int i = 0; i < BATCHES; i++) {
        for (int j = 0; j < 2; j++) {
            int do_xo = (i + j) & 1;
            double t0 = now_ns();
            if (do_xo) run_xo(k, calls);
            else run_direct(k, calls);
            double t = (now_ns() - t0) / (double)calls;
            if (do_xo) tx[i] = t;
            else td[i] = t;
        }
        dd[i] = tx[i] - td[i];
    }
    qsort(td, BATCHES, sizeof td[0], cmp_double);
    qsort(tx, BATCHES, sizeof tx[0], cmp_double);
    qsort(dd, BATCHES, sizeof dd[0], cmp_double);
    return (pair_result){.direct = td[0], .xo = tx[0], .added_min = tx[0] - td[0], .added_median = dd[BATCHES / 2]};
}

static long calls_per_batch(bench_case *k)
{
    long calls = 64;
    for (;;) {
        double t0 = now_ns();
        run_direct(k, calls);
        double dt = now_ns() - t0;
        if (dt > BATCH_TARGET_NS / 4 || calls > (1L << 24)) return (long)((double)calls * BATCH_TARGET_NS / (dt > 1 ? dt : 1)) + 1;
        calls *= 4;
    }
}

static int setup(bench_case *k)
{
    size_t elems = k->op[1] == 'g' ? k->n * k->n : k->n;
    size_t bytes = elems * sizeof(float);
    if (k->sets < 1)
        k->sets = 1;
    float *init = malloc(bytes);
    if (!init)
        return -1;
    xo_status s = XO_OK;
    for (int j = 0; j < k->sets && s == XO_OK; j++) {
        /* set j's buffers are j * 64 bytes longer than the op needs: sizes of their own */
        size_t size = bytes + (size_t)j * 64;
        if (xo_buffer_create(k->ctx, size, &k->xa[j]) != XO_OK || xo_buffer_create(k->ctx, size, &k->xb[j]) != XO_OK ||
            xo_buffer_create(k->ctx, size, &k->xc[j]) != XO_OK) {
            s = XO_ERR_OUT_OF_MEMORY;
            break;
        }
        for (size_t i = 0; i < elems; i++) init[i] = (float)(i % 7) * 0.25f;
        s = xo_buffer_write(k->xa[j], 0, init, bytes);
        for (size_t i = 0; i < elems; i++) init[i] = (float)(i % 5) * 0.5f;
        if (s == XO_OK) s = xo_buffer_write(k->xb[j], 0, init, bytes);
        if (s == XO_OK) s = xo_buffer_write(k->xc[j], 0, init, bytes);
        /* Current on the host (device 0) and only there: every crossover call below runs
         * on the CPU without moving data, and a direct call writes what crossover would. */
        k->a[j] = k->xa[j]->host, k->b[j] = k->xb[j]->host, k->c[j] = k->xc[j]->host;
    }
    free(init);
    return s == XO_OK ? 0 : -1;
}

static void teardown(bench_case *k)
{
    for (int j = 0; j < k->sets; j++)
        xo_buffer_destroy(k->xa[j]), xo_buffer_destroy(k->xb[j]), xo_buffer_destroy(k->xc[j]);
}

/* --loop OP N CALLS xo|direct: only the calls, for an instruction counter (callgrind):
 * the difference of the two runs' totals over CALLS is what crossover adds per call. */
static int loop_only(char **argv)
{
    static bench_case k;
    k = (bench_case){.op = argv[2], .n = (size_t)atol(argv[3]), .sets = 1};
    long calls = atol(argv[4]);
    int xo = strcmp(argv[5], "xo") == 0;
    if ((strcmp(k.op, "sgemm") != 0 && strcmp(k.op, "saxpy") != 0) || k.n < 1 || k.n > 4096 || calls < 1 ||
        (!xo && strcmp(argv[5], "direct") != 0)) {
        fprintf(stderr, "usage: xo_overhead --loop sgemm|saxpy N CALLS xo|direct\n");
        return 2;
    }
    if (xo_context_create(&k.ctx) != XO_OK || setup(&k) != 0) {
        fprintf(stderr, "xo_overhead: %s\n", xo_last_error());
        return 1;
    }
    if (xo)
        run_xo(&k, calls);
    else
        run_direct(&k, calls);
    teardown(&k);
    xo_context_destroy(k.ctx);
    return k.failed;
}

int main(int argc, char **argv)
{
    if (argc == 6 && strcmp(argv[1], "--loop") == 0)
        return loop_only(argv);
    if (argc > 1) {
        int help = strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0;
        fprintf(help ? stdout : stderr,
                "usage: xo_overhead\n"
                "  times xo_sgemm (4x4, 8x8, 32x32) and xo_saxpy (16) under auto placement and forced cpu\n"
                "  against cblas_sgemm / cblas_saxpy on plain arrays; prints ns per call, ratio, ns added\n"
                "usage: xo_overhead --loop sgemm|saxpy N CALLS xo|direct\n"
                "  only CALLS calls of one side, for an instruction counter such as callgrind\n");
        return help ? 0 : 2;
    }
    xo_context *ctx = NULL;
    xo_status s = xo_context_create(&ctx);
    if (s != XO_OK) {
        fprintf(stderr, "xo_overhead: xo_context_create: %s: %s\n", xo_status_string(s), xo_last_error());
        return 1;
    }
    static const struct { const char *op; size_t n; int sets; } cases[] = {
        {"sgemm", 4, 1},  {"sgemm", 8, 1},  {"sgemm", 32, 1}, {"saxpy", 16, 1}, {"sgemm", 4, 8},
        {"sgemm", 4, 64}, {"saxpy", 16, 8}, {"saxpy", 16, 64}, {"saxpy", 16, MAX_SETS},
    };
    static const char *const placements[] = {"auto", "cpu"};
    int rc = 0;
    double worst_ratio = 0, worst_added = 0;
    printf("%-6s %-8s %5s %-6s %12s %15s %7s %10s %14s\n", "op", "shape", "sets", "place", "xo ns/call",
           "direct ns/call", "ratio", "added ns", "median added");
    static bench_case k;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        k = (bench_case){.op = cases[i].op, .n = cases[i].n, .sets = cases[i].sets, .ctx = ctx};
        if (setup(&k) != 0) {
            fprintf(stderr, "xo_overhead: cannot set up %s n=%zu: %s\n", k.op, k.n, xo_last_error());
            teardown(&k);
            rc = 1;
            continue;
        }
        long calls = calls_per_batch(&k);
        char shape[32];
        if (k.op[1] == 'g')
            snprintf(shape, sizeof shape, "%zux%zu", k.n, k.n);
        else
            snprintf(shape, sizeof shape, "%zu", k.n);
        for (size_t p = 0; p < 2; p++) {
            if ((s = xo_set_device(ctx, placements[p])) != XO_OK) {
                fprintf(stderr, "xo_overhead: xo_set_device(%s): %s: %s\n", placements[p], xo_status_string(s),
                        xo_last_error());
                rc = 1;
                continue;
            }
            pair_result r = time_pairs(&k, calls);
            if (k.failed) {
                rc = 1;
                break;
            }
            double ratio = r.xo / r.direct, added = r.added_min;
            int misses = k.sets == MAX_SETS; /* every call a miss: reported, not a hit's target */
            if (!misses && ratio > worst_ratio) worst_ratio = ratio;
            if (!misses && added > worst_added) worst_added = added;
            printf("%-6s %-8s %5d %-6s %12.1f %15.1f %7.3f %10.1f %14.1f%s\n", k.op, shape, k.sets, placements[p], r.xo,
                   r.direct, ratio, added, r.added_median, misses ? "  (every call a cache miss)" : "");
            fflush(stdout);
        }
        teardown(&k);
    }
    printf("worst hit: ratio %.3f, %.1f ns added per call (target: <= 1.10x, <= 30 ns)\n", worst_ratio, worst_added);
    xo_context_destroy(ctx);
    return rc;
}
