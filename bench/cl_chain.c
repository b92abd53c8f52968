/* xo_cl_chain: a chain of 8 element-wise ops over N floats (default 2^20) on the first
 * OpenCL device, through the OpenCL plugin's vtable (below the core, so nothing but the
 * device work and the launches is timed):
 *   eager       8 single-op launches (the plugin's run(): our kernels, CLBlast's axpy and scal)
 *   chain       the "xo_chain" extra, one generated kernel, intermediates fused away
 *   chain+st    the same chain storing every intermediate (one pass, 8 stores)
 * Each: REPS runs, each ended by finish(); the median per run in microseconds. The ops:
 *   t = x * 1.5; t = tanh(t); t = t + z; t = relu(t); t += 0.5 x; t = t * z; t *= 0.9; y = sigmoid(t)
 * or, with "cheap" (memory-bound: no transcendental), abs in place of tanh and neg in place
 * of sigmoid. Usage: xo_cl_chain [N [REPS [cheap]]]. */
#include <crossover/plugin.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const xo_plugin *xo_plugin_opencl(void);

static void quiet_log(xo_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void quiet_log(xo_log_level level, const char *fmt, ...)
{
    if (level > XO_LOG_WARN) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static char g_err[512];
static xo_status keep_error(xo_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static xo_status keep_error(xo_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_err, sizeof g_err, fmt, ap);
    va_end(ap);
    return s;
}

static int no_fault(const xo_plugin_host *self, const char *site)
{
    (void)self, (void)site;
    return 0;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define CHECK(call)                                                                     \
    do {                                                                                \
        if ((call) != XO_OK) {                                                          \
            fprintf(stderr, "%s failed: %s\n", #call, g_err);                           \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

enum { NSTEPS = 8 };

/* The 8 steps over x (arg X), z (Z), t (T), y (Y). */
static void make_steps(xo_chain_step *s, xo_plugin_mem *x, xo_plugin_mem *z, xo_plugin_mem *t, xo_plugin_mem *y,
                       size_t n, int store_all, int cheap)
{
    memset(s, 0, sizeof *s * NSTEPS);
    for (int k = 0; k < NSTEPS; k++) {
        s[k].op.dtype = XO_F32;
        s[k].op.n = n;
        s[k].op.inc[0] = s[k].op.inc[1] = 1;
        for (int a = 0; a < XO_MAX_ARGS; a++) s[k].from[a] = -1;
        s[k].store = (unsigned char)(store_all || k == NSTEPS - 1);
    }
#define ARG(k, a, m) s[k].op.arg[a] = (xo_operand){.mem = (m)}
    s[0].op.kind = XO_OP_BINARY_SCALAR, s[0].op.subop = XO_MUL, s[0].op.alpha = 1.5, s[0].op.narg = 2;
    ARG(0, 0, x), ARG(0, 1, t);
    s[1].op.kind = XO_OP_UNARY, s[1].op.subop = cheap ? XO_ABS : XO_TANH, s[1].op.narg = 2, s[1].from[0] = 0;
    ARG(1, 0, t), ARG(1, 1, t);
    s[2].op.kind = XO_OP_BINARY, s[2].op.subop = XO_ADD, s[2].op.narg = 3, s[2].from[0] = 1;
    ARG(2, 0, t), ARG(2, 1, z), ARG(2, 2, t);
    s[3].op.kind = XO_OP_UNARY, s[3].op.subop = XO_RELU, s[3].op.narg = 2, s[3].from[0] = 2;
    ARG(3, 0, t), ARG(3, 1, t);
    s[4].op.kind = XO_OP_AXPY, s[4].op.alpha = 0.5, s[4].op.narg = 2, s[4].from[1] = 3;
    ARG(4, 0, x), ARG(4, 1, t);
    s[5].op.kind = XO_OP_BINARY, s[5].op.subop = XO_MUL, s[5].op.narg = 3, s[5].from[0] = 4;
    ARG(5, 0, t), ARG(5, 1, z), ARG(5, 2, t);
    s[6].op.kind = XO_OP_SCAL, s[6].op.alpha = 0.9, s[6].op.narg = 1, s[6].from[0] = 5;
    ARG(6, 0, t);
    s[7].op.kind = XO_OP_UNARY, s[7].op.subop = cheap ? XO_NEG : XO_SIGMOID, s[7].op.narg = 2, s[7].from[0] = 6;
    ARG(7, 0, t), ARG(7, 1, y);
#undef ARG
}

int main(int argc, char **argv)
{
    const size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : (size_t)1 << 20;
    const int reps = argc > 2 ? atoi(argv[2]) : 30;
    const int cheap = argc > 3 && strcmp(argv[3], "cheap") == 0;
    const char *cache = getenv("XO_CACHE_DIR");
    const xo_plugin_host host = {.log = quiet_log, .set_error = keep_error, .fault = no_fault,
                                 .cache_dir = cache ? cache : "", .threads = 1, .plugin_name = "opencl"};
    const xo_plugin *p = xo_plugin_opencl();
    void *st = NULL;
    int ndev = 0;
    CHECK(p->init(&host, &st, &ndev));
    if (ndev == 0 || n == 0 || reps <= 0) {
        printf("no OpenCL device (or nothing to do)\n");
        return 0;
    }
    const xo_chain_runner *r = p->get_proc_address ? p->get_proc_address("xo_chain") : NULL;
    if (!r) {
        fprintf(stderr, "no xo_chain extra\n");
        return 1;
    }
    xo_device_info info;
    CHECK(p->device_info(st, 0, &info));

    float *h = malloc(n * sizeof *h);
    if (!h) return 1;
    xo_plugin_mem *x, *z, *t, *y;
    CHECK(p->mem_alloc(st, 0, n * sizeof(float), &x));
    CHECK(p->mem_alloc(st, 0, n * sizeof(float), &z));
    CHECK(p->mem_alloc(st, 0, n * sizeof(float), &t));
    CHECK(p->mem_alloc(st, 0, n * sizeof(float), &y));
    for (size_t i = 0; i < n; i++) h[i] = (float)((double)(i % 1000) / 500.0 - 1.0);
    CHECK(p->upload(st, 0, x, 0, h, n * sizeof(float)));
    CHECK(p->upload(st, 0, z, 0, h, n * sizeof(float)));

    xo_chain_step fused[NSTEPS], stored[NSTEPS];
    make_steps(fused, x, z, t, y, n, 0, cheap);
    make_steps(stored, x, z, t, y, n, 1, cheap);
    const xo_chain cf = {XO_F32, n, NSTEPS, fused}, cs = {XO_F32, n, NSTEPS, stored};
    if (r->supports(st, 0, &cf) != 1 || r->supports(st, 0, &cs) != 1) {
        fprintf(stderr, "the chain kernel did not build\n");
        return 1;
    }
    for (int k = 0; k < NSTEPS; k++)
        if (p->supports(st, 0, &fused[k].op) != 1) {
            fprintf(stderr, "op %d is not supported\n", k);
            return 1;
        }

    double *us = malloc((size_t)reps * sizeof *us), med[3];
    float *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    if (!us || !want || !got) return 1;
    for (int mode = 0; mode < 3; mode++) {
        for (int rep = -2; rep < reps; rep++) { /* two warm-up runs (CLBlast compiles on first use) */
            double t0 = now_us();
            if (mode == 0)
                for (int k = 0; k < NSTEPS; k++) CHECK(p->run(st, 0, &fused[k].op, XO_NO_TOKEN));
            else
                CHECK(r->run(st, 0, mode == 1 ? &cf : &cs, XO_NO_TOKEN));
            CHECK(p->finish(st, 0));
            if (rep >= 0) us[rep] = now_us() - t0;
        }
        qsort(us, (size_t)reps, sizeof *us, cmp_double);
        med[mode] = us[reps / 2];
        CHECK(p->download(st, 0, y, 0, mode == 0 ? want : got, n * sizeof(float)));
        if (mode > 0) {
            double worst = 0;
            for (size_t i = 0; i < n; i++) {
                double d = got[i] - want[i];
                if (d < 0) d = -d;
                if (d > worst) worst = d;
            }
            if (worst > 1e-5) {
                fprintf(stderr, "mode %d differs from eager by %g\n", mode, worst);
                return 1;
            }
        }
    }
    printf("%s: 8 element-wise ops (%s) over %zu floats, median of %d runs\n", info.name,
           cheap ? "no transcendental" : "tanh and sigmoid among them", n, reps);
    printf("  eager (8 launches)            %10.1f us\n", med[0]);
    printf("  chain (1 kernel, 1 store)     %10.1f us  %.2fx\n", med[1], med[0] / med[1]);
    printf("  chain (1 kernel, 8 stores)    %10.1f us  %.2fx\n", med[2], med[0] / med[2]);
    free(us);
    free(want);
    free(got);
    free(h);
    p->mem_free(st, 0, x);
    p->mem_free(st, 0, z);
    p->mem_free(st, 0, t);
    p->mem_free(st, 0, y);
    p->shutdown(st);
    return 0;
}
