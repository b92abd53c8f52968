/* xo_cl_chain: a chain of 8 element-wise ops over N floats (default 2^20) on the first
 * OpenCL device, through the OpenCL plugin's vtable (below the core, so nothing but the
 * device work and the launches is timed):
 *   eager       8 single-op launches (the plugin's run(): our kernels, CLBlast's axpy and scal)
 *   chain       the "xo_chain" extra, one generated kernel, intermediates fused away
 *   chain+st    the same chain storing every intermediate (one pass, 8 stores)
 *   interp      the alternative the plans issue names: one small interpreter kernel that
 *               walks the steps (opcode, sub-op, operand sources) per element, written
 *               here against OpenCL directly (only the kinds and sub-ops used below)
 * Each: REPS runs, each ended by finish(), the four taking turns; the median per run in
 * microseconds. The ops:
 *   t = x * 1.5; t = tanh(t); t = t + z; t = relu(t); t += 0.5 x; t = t * z; t *= 0.9; y = sigmoid(t)
 * or, with "cheap" (memory-bound: no transcendental), abs in place of tanh and neg in place
 * of sigmoid. Usage: xo_cl_chain [N [REPS [cheap]]]. */
#include <crossover/plugin.h>

#include <CL/cl.h>
#include <stdint.h>

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

/* ---- the interpreter kernel ------------------------------------------------------------ */

/* Per step 5 ints: opcode (0 unary, 1 binary, 2 binary_scalar, 3 scal, 4 axpy), sub-op,
 * the sources of x and y (>= 0: that step's value; -1 - p: operand p's memory; -99:
 * none), the operand stored to (-1: none); scalars one per step. */
static const char interp_src[] =
    "__kernel void xo_interp(const ulong n, const int nsteps, __constant int *code, __constant float *sc,\n"
    "                        __global float *p0, __global float *p1, __global float *p2, __global float *p3)\n"
    "{\n"
    "    __global float *P[4] = {p0, p1, p2, p3};\n"
    "    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {\n"
    "        float v[32];\n"
    "        for (int k = 0; k < nsteps; k++) {\n"
    "            __constant int *c = code + 5 * k;\n"
    "            const float x = c[2] >= 0 ? v[c[2]] : c[2] == -99 ? 0.0f : P[-c[2] - 1][i];\n"
    "            const float y = c[3] >= 0 ? v[c[3]] : c[3] == -99 ? 0.0f : P[-c[3] - 1][i];\n"
    "            const float a = sc[k];\n"
    "            float r = x;\n"
    "            switch (c[0]) {\n"
    "            case 0:\n"
    "                switch (c[1]) {\n"
    "                case 0: r = x > 0 ? x : 0; break;\n"
    "                case 1: r = tanh(x); break;\n"
    "                case 2: r = 1 / (1 + exp(-x)); break;\n"
    "                case 4: r = -x; break;\n"
    "                case 12: r = fabs(x); break;\n"
    "                }\n"
    "                break;\n"
    "            case 1: r = c[1] == 0 ? x + y : x * y; break;\n"
    "            case 2: r = c[1] == 0 ? x + a : x * a; break;\n"
    "            case 3: r = a == 0 ? 0 : a * x; break;\n"
    "            case 4: r = a * x + y; break;\n"
    "            }\n"
    "            v[k] = r;\n"
    "            if (c[4] >= 0) P[c[4]][i] = r;\n"
    "        }\n"
    "    }\n"
    "}\n";

typedef struct interp {
    cl_command_queue q;
    cl_program prog;
    cl_kernel k;
    cl_mem code, sc;
} interp;

static int param_index(xo_plugin_mem *const *mems, xo_plugin_mem *m)
{
    for (int p = 0; p < 4; p++)
        if (mems[p] == m) return p;
    return -1;
}

/* The interpreter's program for `steps` over mems[0..4) (x, z, t, y); 0 on success. */
static int interp_make(interp *it, const xo_chain_step *steps, xo_plugin_mem *const *mems, size_t n)
{
    cl_mem any = (cl_mem)(uintptr_t)mems[0];
    cl_context ctx = NULL;
    cl_device_id dev = NULL;
    cl_int err = clGetMemObjectInfo(any, CL_MEM_CONTEXT, sizeof ctx, &ctx, NULL);
    if (err == CL_SUCCESS) err = clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL);
    if (err != CL_SUCCESS) return -1;
    it->q = clCreateCommandQueue(ctx, dev, 0, &err);
    if (err != CL_SUCCESS) return -1;
    const char *src = interp_src;
    it->prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (err != CL_SUCCESS || clBuildProgram(it->prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS) return -1;
    it->k = clCreateKernel(it->prog, "xo_interp", &err);
    if (err != CL_SUCCESS) return -1;
    cl_int code[NSTEPS * 5];
    cl_float sc[NSTEPS];
    for (int k = 0; k < NSTEPS; k++) {
        const xo_op_desc *op = &steps[k].op;
        cl_int *c = code + 5 * k;
        int xa = 0, ya = -1, out = 1;
        switch (op->kind) {
        case XO_OP_UNARY: c[0] = 0; break;
        case XO_OP_BINARY: c[0] = 1, ya = 1, out = 2; break;
        case XO_OP_BINARY_SCALAR: c[0] = 2; break;
        case XO_OP_SCAL: c[0] = 3, out = 0; break;
        default: c[0] = 4, ya = 1; break; /* AXPY */
        }
        c[1] = op->subop;
        c[2] = steps[k].from[xa] >= 0 ? steps[k].from[xa] : -1 - param_index(mems, op->arg[xa].mem);
        c[3] = ya < 0 ? -99 : steps[k].from[ya] >= 0 ? steps[k].from[ya] : -1 - param_index(mems, op->arg[ya].mem);
        c[4] = steps[k].store ? param_index(mems, op->arg[out].mem) : -1;
        sc[k] = (cl_float)op->alpha;
    }
    it->code = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof code, code, &err);
    if (err != CL_SUCCESS) return -1;
    it->sc = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof sc, sc, &err);
    if (err != CL_SUCCESS) return -1;
    const cl_ulong nn = n;
    const cl_int ns = NSTEPS;
    err = clSetKernelArg(it->k, 0, sizeof nn, &nn);
    err |= clSetKernelArg(it->k, 1, sizeof ns, &ns);
    err |= clSetKernelArg(it->k, 2, sizeof(cl_mem), &it->code);
    err |= clSetKernelArg(it->k, 3, sizeof(cl_mem), &it->sc);
    for (int p = 0; p < 4; p++) {
        cl_mem m = (cl_mem)(uintptr_t)mems[p];
        err |= clSetKernelArg(it->k, (cl_uint)(4 + p), sizeof m, &m);
    }
    return err == CL_SUCCESS ? 0 : -1;
}

static int interp_run(interp *it, size_t n)
{
    size_t local = 256, global = (n < ((size_t)1 << 20) ? n : (size_t)1 << 20);
    global = (global + local - 1) / local * local;
    if (clEnqueueNDRangeKernel(it->q, it->k, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS) return -1;
    return clFinish(it->q) == CL_SUCCESS ? 0 : -1;
}

static void interp_free(interp *it)
{
    if (it->code) clReleaseMemObject(it->code);
    if (it->sc) clReleaseMemObject(it->sc);
    if (it->k) clReleaseKernel(it->k);
    if (it->prog) clReleaseProgram(it->prog);
    if (it->q) clReleaseCommandQueue(it->q);
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

    xo_plugin_mem *const mems[4] = {x, z, t, y};
    interp it = {0};
    if (interp_make(&it, fused, mems, n) != 0) {
        fprintf(stderr, "the interpreter kernel did not build\n");
        return 1;
    }
    double *us = malloc(4 * (size_t)reps * sizeof *us), med[4];
    float *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    if (!us || !want || !got) return 1;
    /* The modes take turns within each round, so a machine loaded by other jobs slows
     * them alike; two warm-up rounds first (CLBlast compiles on first use). */
    for (int rep = -2; rep < reps; rep++)
        for (int mode = 0; mode < 4; mode++) {
            double t0 = now_us();
            if (mode == 0)
                for (int k = 0; k < NSTEPS; k++) CHECK(p->run(st, 0, &fused[k].op, XO_NO_TOKEN));
            else if (mode == 3 && interp_run(&it, n) != 0) {
                fprintf(stderr, "the interpreter kernel failed\n");
                return 1;
            } else if (mode < 3)
                CHECK(r->run(st, 0, mode == 1 ? &cf : &cs, XO_NO_TOKEN));
            if (mode < 3) CHECK(p->finish(st, 0));
            if (rep >= 0) us[mode * reps + rep] = now_us() - t0;
            if (rep != -1) continue;
            CHECK(p->download(st, 0, y, 0, mode == 0 ? want : got, n * sizeof(float)));
            double worst = 0;
            for (size_t i = 0; mode > 0 && i < n; i++) {
                double d = got[i] - want[i];
                if (d < 0) d = -d;
                if (d > worst) worst = d;
            }
            if (worst > 1e-5) {
                fprintf(stderr, "mode %d differs from eager by %g\n", mode, worst);
                return 1;
            }
        }
    for (int mode = 0; mode < 4; mode++) {
        qsort(us + mode * reps, (size_t)reps, sizeof *us, cmp_double);
        med[mode] = us[mode * reps + reps / 2];
    }
    printf("%s: 8 element-wise ops (%s) over %zu floats, median of %d runs\n", info.name,
           cheap ? "no transcendental" : "tanh and sigmoid among them", n, reps);
    printf("  eager (8 launches)            %10.1f us\n", med[0]);
    printf("  chain (1 kernel, 1 store)     %10.1f us  %.2fx\n", med[1], med[0] / med[1]);
    printf("  chain (1 kernel, 8 stores)    %10.1f us  %.2fx\n", med[2], med[0] / med[2]);
    printf("  interpreter (1 kernel, 1 store)%9.1f us  %.2fx\n", med[3], med[0] / med[3]);
    interp_free(&it);
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
