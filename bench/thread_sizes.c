/* xo_thread_sizes: what the CPU's threads cost small element-wise ops. Median
 * microseconds per op of saxpy, tanh and add (the CPU plugin's loops, split over its pool
 * from 65,536 elements; saxpy was OpenBLAS's, threaded from 10,000, until 0.5's issue 30
 * moved BLAS's level-1 ops to the plugin's loops) at sizes from 4K to 2M
 * floats, on the CPU. Run it once per thread count and compare (docs/placement.md,
 * "Threads on small ops"):
 *   XO_DEVICE=cpu XO_PLUGINS=cpu XO_CALIBRATE=off XO_THREADS=1 build/bench/xo_thread_sizes
 *   XO_DEVICE=cpu XO_PLUGINS=cpu XO_CALIBRATE=off XO_THREADS=2 build/bench/xo_thread_sizes */
#include <crossover.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROUNDS 41
#define MAX_N ((size_t)1 << 21)

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static xo_status run_op(xo_context *c, int op, size_t n, xo_buffer *x, xo_buffer *y)
{
    if (op == 0)
        return xo_saxpy(c, n, 0.5f, x, 0, 1, y, 0, 1);
    if (op == 1)
        return xo_sunary(c, XO_TANH, n, x, 0, y, 0);
    return xo_sbinary(c, XO_ADD, n, x, 0, y, 0, y, 0);
}

int main(void)
{
    static const char *const names[] = {"saxpy", "tanh", "add"};
    static const size_t sizes[] = {4096, 16384, 25600, 65536, 131072, 262144, 1048576, MAX_N};
    xo_context *c;
    xo_buffer *x = NULL, *y = NULL;
    if (xo_context_create(&c) != XO_OK) {
        fprintf(stderr, "xo_thread_sizes: %s\n", xo_last_error());
        return 1;
    }
    if (xo_buffer_create(c, MAX_N * 4, &x) != XO_OK || xo_buffer_create(c, MAX_N * 4, &y) != XO_OK) {
        fprintf(stderr, "xo_thread_sizes: %s\n", xo_last_error());
        return 1;
    }
    const char *threads = getenv("XO_THREADS");
    printf("op elements us_per_op (median of %d rounds; XO_THREADS=%s)\n", ROUNDS, threads ? threads : "unset");
    for (int op = 0; op < 3; op++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t n = sizes[s];
            int reps = n < 100000 ? 50 : 5;
            double t[ROUNDS];
            for (int r = 0; r < ROUNDS; r++) {
                double t0 = now_us();
                for (int i = 0; i < reps; i++)
                    if (run_op(c, op, n, x, y) != XO_OK) {
                        fprintf(stderr, "xo_thread_sizes: %s\n", xo_last_error());
                        return 1;
                    }
                t[r] = (now_us() - t0) / reps;
            }
            qsort(t, ROUNDS, sizeof t[0], cmp_double);
            printf("%s %zu %.2f\n", names[op], n, t[ROUNDS / 2]);
        }
    xo_buffer_destroy(x);
    xo_buffer_destroy(y);
    xo_context_destroy(c);
    return 0;
}
