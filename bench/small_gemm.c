/* xo_small_gemm: crossover's sgemm on the CPU against OpenBLAS's cblas_sgemm called
 * directly and against the CPU plugin's small-product kernel called alone (white-box:
 * xo__cpu_small_gemm of plugins/cpu/cpu_internal.h, "-" where it declines the shape), on small shapes (the neural ODE's products and their neighbours), on the very
 * memory of crossover's host copies (white-box: xo_internal.h), row-major, each shape with
 * the transposes the ODE's backward pass uses. Rounds of the sides alternate; each
 * figure is the median over the rounds of ns per call; ratio = OpenBLAS / crossover
 * (> 1: crossover faster). crossover's side includes its whole call (validation,
 * placement, dispatch); kernel is the same product without them; resolved is the kernel
 * chosen once for the shape (xo__cpu_small_resolve, as a plan's step is when the plan is
 * placed: the "xo_resolve" extra) and called on its own (xo__cpu_small_run). Where CMake found
 * libxsmm (XO_HAVE_LIBXSMM), its JIT kernel for each untransposed shape takes turns too
 * (dispatched once, before the rounds, as a user keeps it; libxsmm 1.17 has no JIT kernel
 * for transposes): ratio_x = libxsmm / crossover, ratio_k = libxsmm / kernel, ratio_r =
 * libxsmm / resolved (> 1: ours faster); and
 * libxsmm_sgemm, libxsmm's BLAS-style call, which finds the kernel for the shape on every
 * call as crossover's and OpenBLAS's calls do: ratio_s = libxsmm_sgemm / crossover.
 * Then sgemv at the ODE's and the MLP's shapes, each call after some host work (see
 * gemv_lines), against OpenBLAS with its threads and on one thread.
 * Then an 8x8x8 sgemm followed by xo_finish, under auto against forced cpu, after one op
 * on another device (OpenCL or CUDA, where there is one): xo_finish waits only on devices
 * sent work since the last finish, so the two should cost the same.
 *   usage: xo_small_gemm [rounds (default 31) [shape: only the sgemm lines that start with it, as
 *          "100x3x16 (T N)"; no gemv lines]] */
#include <crossover.h>

#include "xo_internal.h" /* xo_buffer.host */
#include "cpu_internal.h" /* xo__cpu_small_gemm, xo__cpu_small_gemv */

#include <cblas.h>
#ifdef XO_HAVE_LIBXSMM
#include <libxsmm.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The median of v[0..n), sorting v. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

typedef struct shape {
    size_t m, n, k;
    int ta, tb;
    float beta; /* 1: C += op(A) op(B), as a gradient's sum */
} shape;

/* Host work between two calls, as a program does between ops (about 0.5 us): OpenBLAS's
 * threads, woken by a call, spin on after it; the next call finds them asleep or not. */
static void host_work(void)
{
    for (volatile int i = 0; i < 1000; i++) {
    }
}

/* sgemv on the CPU: crossover, the plugin's kernel alone (xo__cpu_small_gemv, "-" where it
 * declines), OpenBLAS as the application set its threads, and OpenBLAS on one thread, each
 * call after the same host work; the figures are the median per call less that work's own
 * time. */
static int gemv_lines(xo_context *ctx, int rounds, double **t)
{
    static const struct {
        size_t m, n;
        int ta;
    } shapes[] = {{100, 100, 1}, {100, 100, 0}, {100, 3, 1}, {100, 3, 0}, {3, 100, 1}, {130, 130, 1}, {256, 256, 0}};
    const int threads = openblas_get_num_threads();
    printf("\nsgemv on the CPU, row-major, ns per call after 0.5 us of host work, median of %d rounds taking turns\n",
           rounds);
    printf("%-18s %10s %10s %10s %10s\n", "m x n (tA)", "crossover", "kernel", "OpenBLAS", "1 thread");
    int failed = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes && !failed; s++) {
        const size_t m = shapes[s].m, n = shapes[s].n, lx = shapes[s].ta ? m : n, ly = shapes[s].ta ? n : m;
        const xo_transpose ta = shapes[s].ta ? XO_TRANS : XO_NO_TRANS;
        xo_buffer *xa, *xx, *xy;
        if (xo_buffer_create(ctx, m * n * sizeof(float), &xa) != XO_OK ||
            xo_buffer_create(ctx, lx * sizeof(float), &xx) != XO_OK ||
            xo_buffer_create(ctx, ly * sizeof(float), &xy) != XO_OK)
            return 1;
        float *a = xa->host, *x = xx->host, *y = xy->host;
        for (size_t i = 0; i < m * n; i++) a[i] = (float)(i % 7) * 0.1f - 0.3f;
        for (size_t i = 0; i < lx; i++) x[i] = (float)(i % 5) * 0.1f - 0.2f;
        const int kernel = xo__cpu_small_gemv(XO_F32, XO_ROW_MAJOR, ta, m, n, 1.0, a, n, x, 1, 0.0, y, 1);
        const int reps = 1000, sides = 5; /* 0 crossover, 1 OpenBLAS, 2 kernel, 3 OpenBLAS on 1 thread, 4 the work */
        for (int r = -2; r < rounds && !failed; r++)
            for (int q = 0; q < sides; q++) {
                const int side = (q + r + 2) % sides;
                if (side == 2 && !kernel)
                    continue;
                if (side == 3)
                    openblas_set_num_threads(1);
                double t0 = now_ns();
                for (int i = 0; i < reps && !failed; i++) {
                    host_work();
                    if (side == 0)
                        failed =
                            xo_sgemv(ctx, XO_ROW_MAJOR, ta, m, n, 1.0f, xa, 0, n, xx, 0, 1, 0.0f, xy, 0, 1) != XO_OK;
                    else if (side == 2)
                        xo__cpu_small_gemv(XO_F32, XO_ROW_MAJOR, ta, m, n, 1.0, a, n, x, 1, 0.0, y, 1);
                    else if (side != 4)
                        cblas_sgemv(CblasRowMajor, (enum CBLAS_TRANSPOSE)ta, (int)m, (int)n, 1.0f, a, (int)n, x, 1,
                                    0.0f, y, 1);
                }
                failed |= side == 0 && xo_finish(ctx) != XO_OK;
                if (r >= 0)
                    t[side][r] = (now_ns() - t0) / reps;
                if (side == 3)
                    openblas_set_num_threads(threads);
            }
        double med[5];
        for (int i = 0; i < sides; i++)
            med[i] = median(t[i], rounds);
        char name[40];
        snprintf(name, sizeof name, "%zux%zu (%c)", m, n, shapes[s].ta ? 'T' : 'N');
        printf("%-18s %10.1f", name, med[0] - med[4]);
        if (kernel)
            printf(" %10.1f", med[2] - med[4]);
        else
            printf(" %10s", "-");
        printf(" %10.1f %10.1f\n", med[1] - med[4], med[3] - med[4]);
        xo_buffer_destroy(xa);
        xo_buffer_destroy(xx);
        xo_buffer_destroy(xy);
    }
    return failed;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 31;
    if (rounds < 1)
        rounds = 1;
    static const shape shapes[] = {
        {16, 3, 100, 0, 0, 0}, {100, 3, 16, 0, 0, 0}, {1, 100, 3, 0, 0, 0}, {16, 100, 3, 0, 0, 0}, {1, 3, 100, 0, 0, 0},
        {16, 100, 3, 0, 1, 0}, {100, 3, 16, 1, 0, 0}, {3, 100, 16, 1, 0, 0}, {8, 8, 8, 0, 0, 0},    {32, 32, 32, 0, 0, 0},
        {64, 64, 8, 0, 0, 0},  {128, 16, 16, 0, 0, 0}, {100, 100, 3, 0, 0, 0}, {100, 3, 100, 0, 0, 0}, {100, 100, 3, 0, 1, 0},
        {3, 100, 100, 1, 0, 0}, {1, 100, 16, 0, 0, 0}, {1, 100, 100, 0, 0, 0}, {1, 128, 128, 0, 0, 0}, {1, 100, 100, 1, 0, 0},
        {16, 3, 100, 0, 1, 0}, /* the ODE's dx = dz W1^T */
        {100, 3, 16, 1, 0, 1.0f}, {3, 100, 16, 1, 0, 1.0f}, /* the ODE's dW2 += h^T a, dW1 += u^T dpre */
    };
    xo_context *ctx;
    if (xo_context_create(&ctx) != XO_OK || xo_set_device(ctx, "cpu") != XO_OK) {
        fprintf(stderr, "xo_small_gemm: %s\n", xo_last_error());
        return 1;
    }
    printf("sgemm on the CPU, row-major, ns per call, median of %d rounds taking turns\n", rounds);
    printf("%-18s %10s %10s %10s %10s %8s", "m x n x k (tA tB)", "crossover", "kernel", "resolved", "OpenBLAS",
           "ratio");
#ifdef XO_HAVE_LIBXSMM
    libxsmm_init();
    printf(" %10s %8s %8s %8s %10s %8s", "libxsmm", "ratio_x", "ratio_k", "ratio_r", "lx_sgemm", "ratio_s");
#endif
    putchar('\n');
    double *t[6];
    for (int i = 0; i < 6; i++)
        t[i] = calloc((size_t)rounds, sizeof(double));
    int failed = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes && !failed; s++) {
        const shape *sh = &shapes[s];
        char name[40];
        snprintf(name, sizeof name, "%zux%zux%zu (%c %c)%s", sh->m, sh->n, sh->k, sh->ta ? 'T' : 'N',
                 sh->tb ? 'T' : 'N', sh->beta != 0 ? " +=" : "");
        if (argc > 2 && strncmp(name, argv[2], strlen(argv[2])) != 0)
            continue;
        size_t lda = sh->ta ? sh->m : sh->k, ldb = sh->tb ? sh->k : sh->n;
        xo_buffer *xa, *xb, *xc;
        if (xo_buffer_create(ctx, sh->m * sh->k * sizeof(float), &xa) != XO_OK ||
            xo_buffer_create(ctx, sh->k * sh->n * sizeof(float), &xb) != XO_OK ||
            xo_buffer_create(ctx, sh->m * sh->n * sizeof(float), &xc) != XO_OK)
            return 1;
        float *a = xa->host, *b = xb->host, *c = xc->host;
        for (size_t i = 0; i < sh->m * sh->k; i++) a[i] = (float)(i % 7) * 0.1f - 0.3f;
        for (size_t i = 0; i < sh->k * sh->n; i++) b[i] = (float)(i % 5) * 0.1f - 0.2f;
        const xo_transpose ta = sh->ta ? XO_TRANS : XO_NO_TRANS, tb = sh->tb ? XO_TRANS : XO_NO_TRANS;
        const int reps = 2000;
        /* sides: 0 crossover, 1 OpenBLAS, 2 the plugin's kernel, 3 libxsmm's kernel, 4 libxsmm_sgemm, 5 the
         * plugin's kernel resolved (2, 5: where the kernels take the shape; 3, 4: where libxsmm does) */
        int side_of[6] = {0, 1}, sides = 2;
        xo__cpu_small_call call;
        const int kernel = xo__cpu_small_resolve(XO_F32, XO_ROW_MAJOR, ta, tb, sh->m, sh->n, sh->k, 1.0, lda, ldb,
                                                 sh->beta, sh->n, 0, XO_IDENTITY, &call);
        if (kernel) {
            side_of[sides++] = 2;
            side_of[sides++] = 5;
        }
#ifdef XO_HAVE_LIBXSMM
        /* column-major C^T = B^T A^T: libxsmm's m, n, a, b are our n, m, b, a */
        const libxsmm_blasint xm = (libxsmm_blasint)sh->n, xn = (libxsmm_blasint)sh->m, xk = (libxsmm_blasint)sh->k;
        const float one = 1.0f, zero = 0.0f;
        const libxsmm_smmfunction xs =
            sh->ta || sh->tb || sh->beta != 0 ? NULL : libxsmm_smmdispatch(xm, xn, xk, &xm, &xk, &xm, &one, &zero, NULL, NULL);
        if (xs) {
            side_of[sides++] = 3;
            side_of[sides++] = 4;
        }
#endif
        for (int r = -2; r < rounds && !failed; r++)
            for (int q = 0; q < sides; q++) {
                const int side = side_of[(q + r + 2) % sides];
                double t0 = now_ns();
                if (side == 0) {
                    for (int i = 0; i < reps && !failed; i++)
                        failed = xo_sgemm(ctx, XO_ROW_MAJOR, ta, tb, sh->m, sh->n, sh->k, 1.0f, xa, 0, lda, xb, 0, ldb,
                                          sh->beta, xc, 0, sh->n) != XO_OK;
                    failed |= xo_finish(ctx) != XO_OK;
                }
                else if (side == 2)
                    for (int i = 0; i < reps; i++)
                        xo__cpu_small_gemm(XO_F32, XO_ROW_MAJOR, ta, tb, sh->m, sh->n, sh->k, 1.0, a, lda, b, ldb, sh->beta,
                                           c, sh->n);
                else if (side == 5)
                    for (int i = 0; i < reps; i++)
                        xo__cpu_small_run(&call, a, b, c, NULL);
#ifdef XO_HAVE_LIBXSMM
                else if (side == 3)
                    for (int i = 0; i < reps; i++)
                        xs(b, a, c);
                else if (side == 4)
                    for (int i = 0; i < reps; i++)
                        libxsmm_sgemm("N", "N", &xm, &xn, &xk, &one, b, &xm, a, &xk, &zero, c, &xm);
#endif
                else
                    for (int i = 0; i < reps; i++)
                        cblas_sgemm(CblasRowMajor, (enum CBLAS_TRANSPOSE)ta, (enum CBLAS_TRANSPOSE)tb, (int)sh->m,
                                    (int)sh->n, (int)sh->k, 1.0f, a, (int)lda, b, (int)ldb, sh->beta, c, (int)sh->n);
                if (r >= 0)
                    t[side][r] = (now_ns() - t0) / reps;
            }
        double med[6];
        for (int i = 0; i < 6; i++)
            med[i] = median(t[i], rounds);
        printf("%-18s %10.1f", name, med[0]);
        if (kernel)
            printf(" %10.1f %10.1f", med[2], med[5]);
        else
            printf(" %10s %10s", "-", "-");
        printf(" %10.1f %8.2f", med[1], med[1] / med[0]);
#ifdef XO_HAVE_LIBXSMM
        if (xs) {
            printf(" %10.1f %8.2f", med[3], med[3] / med[0]);
            if (kernel)
                printf(" %8.2f %8.2f", med[3] / med[2], med[3] / med[5]);
            else
                printf(" %8s %8s", "-", "-");
            printf(" %10.1f %8.2f", med[4], med[4] / med[0]);
        }
#endif
        putchar('\n');
        xo_buffer_destroy(xa);
        xo_buffer_destroy(xb);
        xo_buffer_destroy(xc);
    }
    failed |= !failed && argc <= 2 && gemv_lines(ctx, rounds, t);
    /* A tiny op plus xo_finish, auto against forced cpu, once another device was used. */
    xo_buffer *xa = NULL, *xb = NULL, *xc = NULL;
    failed |= xo_buffer_create(ctx, 256, &xa) != XO_OK || xo_buffer_create(ctx, 256, &xb) != XO_OK ||
              xo_buffer_create(ctx, 256, &xc) != XO_OK;
    const char *other = xo_set_device(ctx, "opencl") == XO_OK ? "opencl"
                        : xo_set_device(ctx, "cuda") == XO_OK ? "cuda"
                                                               : NULL;
    float h[64];
    if (!failed && other)
        failed = xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 8, 8, 8, 1.0f, xa, 0, 8, xb, 0, 8, 0.0f, xc, 0,
                          8) != XO_OK ||
                 xo_buffer_read(xc, 0, h, sizeof h) != XO_OK;
    for (int r = -2; r < rounds && !failed; r++)
        for (int q = 0; q < 2; q++) {
            int side = (q + r + 2) & 1;
            failed |= xo_set_device(ctx, side ? "cpu" : "auto") != XO_OK;
            double t0 = now_ns();
            for (int i = 0; i < 5000 && !failed; i++)
                failed = xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 8, 8, 8, 1.0f, xa, 0, 8, xb, 0, 8, 0.0f,
                                  xc, 0, 8) != XO_OK ||
                         xo_finish(ctx) != XO_OK;
            if (r >= 0)
                t[side][r] = (now_ns() - t0) / 5000;
        }
    if (!failed) {
        const double at_auto = median(t[0], rounds), forced = median(t[1], rounds);
        printf("\n8x8x8 sgemm + xo_finish%s%s: auto %.1f ns, forced cpu %.1f ns, difference %.1f ns\n",
               other ? " after an op on " : " (no other device here)", other ? other : "", at_auto, forced,
               at_auto - forced);
    }
    xo_buffer_destroy(xa);
    xo_buffer_destroy(xb);
    xo_buffer_destroy(xc);
    if (failed)
        fprintf(stderr, "xo_small_gemm: %s\n", xo_last_error());
    for (int i = 0; i < 6; i++)
        free(t[i]);
    xo_context_destroy(ctx);
    return failed;
}
