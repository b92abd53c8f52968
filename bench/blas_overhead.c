/* xo_blas_overhead: what libcrossover_blas.so adds to a call too small to leave the CPU.
 * Times sgemm 4x4, saxpy 16 and sdot 16 through the drop-in (this program links it, so
 * every BLAS name below is the drop-in's) against the same routines of OpenBLAS called
 * directly (the library XO_BLAS_LIB names, default libopenblas.so.0: the very instance
 * the drop-in loaded, resolved with dlsym), both ABIs, on the same memory, in the same
 * run. Batches of calls alternate between the two; prints the fastest batch's ns per
 * call of each and their difference, and the median of the paired differences.
 * Target: at most 30 ns added. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCHES 41
#define CALLS 20000

enum { CBLAS_ROW = 101, NOTRANS = 111 };
/* The prototypes both sides share (the drop-in's and OpenBLAS's are the same). */
typedef void sgemm_c_fn(int, int, int, int, int, int, float, const float *, int, const float *, int, float, float *,
                        int);
typedef void sgemm_f_fn(const char *, const char *, const int *, const int *, const int *, const float *,
                        const float *, const int *, const float *, const int *, const float *, float *, const int *,
                        size_t, size_t);
typedef void saxpy_c_fn(int, float, const float *, int, float *, int);
typedef void saxpy_f_fn(const int *, const float *, const float *, const int *, float *, const int *);
typedef float sdot_c_fn(int, const float *, int, const float *, int);
typedef float sdot_f_fn(const int *, const float *, const int *, const float *, const int *);
sgemm_c_fn cblas_sgemm;
sgemm_f_fn sgemm_;
saxpy_c_fn cblas_saxpy;
saxpy_f_fn saxpy_;
sdot_c_fn cblas_sdot;
sdot_f_fn sdot_;

static float g_a[64], g_b[64], g_c[64];
static volatile float g_sink;

typedef struct side {
    sgemm_c_fn *sgemm_c;
    sgemm_f_fn *sgemm_f;
    saxpy_c_fn *saxpy_c;
    saxpy_f_fn *saxpy_f;
    sdot_c_fn *sdot_c;
    sdot_f_fn *sdot_f;
} side;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns per call of case `which` over one batch. */
static double batch(const side *s, int which)
{
    static const int four = 4, sixteen = 16, one = 1;
    static const float alpha = 1.0f, zero = 0.0f, tiny = 1e-7f;
    float acc = 0;
    double t0 = now_ns();
    for (int i = 0; i < CALLS; i++)
        switch (which) {
        case 0: s->sgemm_c(CBLAS_ROW, NOTRANS, NOTRANS, 4, 4, 4, 1.0f, g_a, 4, g_b, 4, 0.0f, g_c, 4); break;
        case 1: s->sgemm_f("N", "N", &four, &four, &four, &alpha, g_a, &four, g_b, &four, &zero, g_c, &four, 1, 1); break;
        case 2: s->saxpy_c(16, 1e-7f, g_a, 1, g_c, 1); break;
        case 3: s->saxpy_f(&sixteen, &tiny, g_a, &one, g_c, &one); break;
        case 4: acc += s->sdot_c(16, g_a, 1, g_b, 1); break;
        default: acc += s->sdot_f(&sixteen, g_a, &one, g_b, &one); break;
        }
    g_sink = acc;
    return (now_ns() - t0) / CALLS;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void *need(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p) {
        fprintf(stderr, "xo_blas_overhead: %s not found in the CPU BLAS\n", name);
        exit(1);
    }
    return p;
}

int main(void)
{
    const char *lib = getenv("XO_BLAS_LIB") && getenv("XO_BLAS_LIB")[0] ? getenv("XO_BLAS_LIB") : "libopenblas.so.0";
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "xo_blas_overhead: cannot load %s: %s\n", lib, dlerror());
        return 1;
    }
    side direct, dropin = {cblas_sgemm, sgemm_, cblas_saxpy, saxpy_, cblas_sdot, sdot_};
    *(void **)&direct.sgemm_c = need(h, "cblas_sgemm");
    *(void **)&direct.sgemm_f = need(h, "sgemm_");
    *(void **)&direct.saxpy_c = need(h, "cblas_saxpy");
    *(void **)&direct.saxpy_f = need(h, "saxpy_");
    *(void **)&direct.sdot_c = need(h, "cblas_sdot");
    *(void **)&direct.sdot_f = need(h, "sdot_");
    for (int i = 0; i < 64; i++)
        g_a[i] = (float)(i % 7) * 0.25f, g_b[i] = (float)(i % 5) * 0.5f;
    static const char *const names[] = {"sgemm 4x4 cblas", "sgemm 4x4 f77", "saxpy 16 cblas",
                                        "saxpy 16 f77",    "sdot 16 cblas", "sdot 16 f77"};
    printf("%-16s %12s %12s %10s %14s\n", "call", "openblas ns", "drop-in ns", "added ns", "median added");
    int worst_ok = 1;
    for (int which = 0; which < 6; which++) {
        double d[BATCHES], x[BATCHES], diff[BATCHES], best_d = 1e30, best_x = 1e30;
        batch(&dropin, which), batch(&direct, which); /* warm up (the drop-in sets up on its first call) */
        for (int b = 0; b < BATCHES; b++) {
            d[b] = batch(&direct, which);
            x[b] = batch(&dropin, which);
            diff[b] = x[b] - d[b];
            best_d = d[b] < best_d ? d[b] : best_d;
            best_x = x[b] < best_x ? x[b] : best_x;
        }
        qsort(diff, BATCHES, sizeof diff[0], cmp_double);
        printf("%-16s %12.1f %12.1f %10.1f %14.1f\n", names[which], best_d, best_x, best_x - best_d,
               diff[BATCHES / 2]);
        worst_ok &= best_x - best_d <= 30.0;
    }
    printf("target: at most 30 ns added per call: %s\n", worst_ok ? "met" : "NOT met");
    return 0;
}
