/* Chains compiled for their shape with NVRTC, when libnvrtc is present (loaded at run time,
 * cuda_loader.c); otherwise, or when compiling or loading fails, chains run on the
 * interpreter kernel of the fatbin. The generated kernel has the interpreter's name and
 * parameter (an xo_cuda_chain_prog, cuda_kernels.h) but the shape fixed in its code: each
 * step's operation, where its inputs come from and whether it stores are constants, the
 * step results are named registers, and only addresses, scalars and n are read from the
 * parameter. So one compiled kernel serves every chain of that shape (all runs of a plan).
 * Compiled once per shape and device (a compile is tens of milliseconds) and cached; the
 * generated source is the cache key. */
#include "cuda_internal.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int xo__cuda_nvrtc_enabled = 1;

/* The formulas of xo_formulas.h as source text, in `v` (unary) and `a`, `b` (binary). */
#define XO_FN_EXP(x) xo_exp(x)
#define XO_FN_TANH(x) xo_tanh(x)
#define XO_FN_SQRT(x) xo_sqrt(x)
#define XO_FN_RSQRT(x) xo_rsqrt(x)
#define XO_FN_LOG(x) xo_log(x)
#define XO_FN_FABS(x) xo_abs(x)
#include "../common/xo_formulas.h"
#define XO_STR_(...) #__VA_ARGS__
#define XO_XSTR_(...) XO_STR_(__VA_ARGS__)
static const char *const k_unary_src[XO_UNARY_OP_COUNT] = {
#define XO_U_SRC_(NAME, ...) [XO_##NAME] = XO_XSTR_(XO_F_##NAME(v)),
    XO_UNARY_OP_MAP(XO_U_SRC_)
#undef XO_U_SRC_
};
static const char *const k_binary_src[XO_BINARY_OP_COUNT] = {
#define XO_B_SRC_(NAME) [XO_##NAME] = XO_XSTR_(XO_F_##NAME(a, b)),
    XO_BINARY_OP_MAP(XO_B_SRC_)
#undef XO_B_SRC_
};

/* The program's layout, restated for the generated source; the asserts keep the two equal. */
static const char k_prelude[] =
    "typedef unsigned long long xo_u64;\n"
    "struct xo_step { xo_u64 in[2]; xo_u64 out; double alpha, beta; int code, subop; signed char from[2];\n"
    "                 unsigned char store; unsigned char pad_[5]; };\n"
    "struct xo_prog { xo_u64 n; int nsteps, pad_; struct xo_step step[32]; };\n"
    "__device__ __forceinline__ float xo_exp(float v) { return expf(v); }\n"
    "__device__ __forceinline__ double xo_exp(double v) { return exp(v); }\n"
    "__device__ __forceinline__ float xo_tanh(float v) { return tanhf(v); }\n"
    "__device__ __forceinline__ double xo_tanh(double v) { return tanh(v); }\n"
    "__device__ __forceinline__ float xo_sqrt(float v) { return sqrtf(v); }\n"
    "__device__ __forceinline__ double xo_sqrt(double v) { return sqrt(v); }\n"
    "__device__ __forceinline__ float xo_rsqrt(float v) { return rsqrtf(v); }\n"
    "__device__ __forceinline__ double xo_rsqrt(double v) { return rsqrt(v); }\n"
    "__device__ __forceinline__ float xo_log(float v) { return logf(v); }\n"
    "__device__ __forceinline__ double xo_log(double v) { return log(v); }\n"
    "__device__ __forceinline__ float xo_abs(float v) { return fabsf(v); }\n"
    "__device__ __forceinline__ double xo_abs(double v) { return fabs(v); }\n";
_Static_assert(XO_CUDA_CHAIN_STEPS == 32, "k_prelude's step count");
_Static_assert(offsetof(xo_cuda_chain_step, out) == 16 && offsetof(xo_cuda_chain_step, alpha) == 24 &&
                   offsetof(xo_cuda_chain_step, code) == 40 && offsetof(xo_cuda_chain_step, from) == 48 &&
                   offsetof(xo_cuda_chain_step, store) == 50 && sizeof(xo_cuda_chain_step) == 56,
               "k_prelude's xo_step");
_Static_assert(offsetof(xo_cuda_chain_prog, step) == 16, "k_prelude's xo_prog");

typedef struct text {
    char *p;
    size_t len, cap;
    int failed;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    for (int pass = 0; pass < 2 && !t->failed; pass++) {
        va_start(ap, fmt);
        int w = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (w < 0) {
            t->failed = 1;
        } else if (t->p && t->len + (size_t)w < t->cap) {
            t->len += (size_t)w;
            return;
        } else {
            size_t cap = (t->cap ? t->cap : 4096) + (size_t)w + 4096;
            char *np = realloc(t->p, cap);
            if (!np) t->failed = 1;
            else {
                t->p = np;
                t->cap = cap;
            }
        }
    }
}

/* Input j of step k as an expression. */
static void put_input(text *t, const xo_cuda_chain_step *s, int k, int j)
{
    if (s->from[j] >= 0) put(t, "r%d", s->from[j]);
    else if (s->in[j]) put(t, "((const T *)p.step[%d].in[%d])[i]", k, j);
    else put(t, "T(0)");
}

/* The source of the shape of `p` (NULL on host memory failure or an unknown code). */
static char *chain_source(const xo_cuda_chain_prog *p, int f64)
{
    text t = {0};
    put(&t, "%sextern \"C\" __global__ void __launch_bounds__(%d) xo_chain_%s(const struct xo_prog p)\n{\n"
            "    typedef %s T;\n    typedef T xo_real;\n    const xo_u64 stride = (xo_u64)gridDim.x * blockDim.x;\n"
            "    for (xo_u64 i = (xo_u64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += stride) {\n",
        k_prelude, XO_CUDA_BLOCK, f64 ? "f64" : "f32", f64 ? "double" : "float");
    for (int k = 0; k < p->nsteps && !t.failed; k++) {
        const xo_cuda_chain_step *s = &p->step[k];
        put(&t, "        T r%d;\n        {\n            const T al = T(p.step[%d].alpha), be = T(p.step[%d].beta);\n"
                "            (void)al; (void)be;\n",
            k, k, k);
        switch (s->code) {
        case XO_CUDA_CC_UNARY:
            if ((unsigned)s->subop >= XO_UNARY_OP_COUNT) t.failed = 1;
            put(&t, "            const T v = ");
            put_input(&t, s, k, 0);
            put(&t, ";\n            r%d = T(%s);\n", k, t.failed ? "" : k_unary_src[s->subop]);
            break;
        case XO_CUDA_CC_BINARY:
        case XO_CUDA_CC_BINARY_SCALAR:
            if ((unsigned)s->subop >= XO_BINARY_OP_COUNT) t.failed = 1;
            put(&t, "            const T a = ");
            put_input(&t, s, k, 0);
            put(&t, ", b = ");
            if (s->code == XO_CUDA_CC_BINARY) put_input(&t, s, k, 1);
            else put(&t, "al");
            put(&t, ";\n            r%d = T(%s);\n", k, t.failed ? "" : k_binary_src[s->subop]);
            break;
        case XO_CUDA_CC_SCAL:
            put(&t, "            r%d = al == T(0) ? T(0) : al * ", k);
            put_input(&t, s, k, 0);
            put(&t, ";\n");
            break;
        case XO_CUDA_CC_FILL: put(&t, "            r%d = al;\n", k); break;
        case XO_CUDA_CC_AXPY:
            put(&t, "            r%d = al * ", k);
            put_input(&t, s, k, 0);
            put(&t, " + ");
            put_input(&t, s, k, 1);
            put(&t, ";\n");
            break;
        case XO_CUDA_CC_AXPBY:
            put(&t, "            const T ax = al == T(0) ? T(0) : al * ");
            put_input(&t, s, k, 0);
            put(&t, ";\n            r%d = be == T(0) ? ax : ax + be * ", k);
            put_input(&t, s, k, 1);
            put(&t, ";\n");
            break;
        case XO_CUDA_CC_COPY:
            put(&t, "            r%d = ", k);
            put_input(&t, s, k, 0);
            put(&t, ";\n");
            break;
        case XO_CUDA_CC_SCALE_BY:
            put(&t, "            r%d = ", k);
            put_input(&t, s, k, 0);
            put(&t, " * ((const T *)p.step[%d].in[1])[0];\n", k);
            break;
        default: t.failed = 1;
        }
        if (s->store) put(&t, "            ((T *)p.step[%d].out)[i] = r%d;\n", k, k);
        put(&t, "        }\n");
    }
    put(&t, "    }\n}\n");
    if (t.failed) {
        free(t.p);
        return NULL;
    }
    return t.p;
}

static uint64_t hash_of(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Compile `src` for d and load it; logs why not. */
static CUfunction compile(xo__cuda_state *st, xo__cuda_device *d, const char *src, int f64, CUmodule *out_module)
{
    const xo_plugin_host *h = st->host;
    const char *note = NULL;
    const xo__nvrtc_api *nv = xo__cuda_nvrtc(&note);
    *out_module = NULL;
    if (!nv) {
        h->log(XO_LOG_INFO, "cuda: no NVRTC (%s): chains run on the interpreter kernel", note);
        return NULL;
    }
    if (h->fault && h->fault(h, "compile")) {
        h->log(XO_LOG_WARN, "cuda: chain kernel compile failed (injected fault); the interpreter runs it");
        return NULL;
    }
    nvrtcProgram prog = NULL;
    if (nv->nvrtcCreateProgram(&prog, src, "xo_chain.cu", 0, NULL, NULL) != NVRTC_SUCCESS) return NULL;
    char arch[48];
    snprintf(arch, sizeof arch, "--gpu-architecture=compute_%d%d", d->cc_major, d->cc_minor);
    const char *opts[] = {arch, "--std=c++11"};
    char *ptx = NULL;
    if (nv->nvrtcCompileProgram(prog, 2, opts) == NVRTC_SUCCESS) {
        size_t size = 0;
        if (nv->nvrtcGetPTXSize(prog, &size) == NVRTC_SUCCESS && size > 0 && (ptx = malloc(size)) != NULL &&
            nv->nvrtcGetPTX(prog, ptx) != NVRTC_SUCCESS) {
            free(ptx);
            ptx = NULL;
        }
    } else {
        size_t size = 0;
        char log[512] = "";
        if (nv->nvrtcGetProgramLogSize(prog, &size) == NVRTC_SUCCESS && size > 0 && size <= sizeof log)
            (void)nv->nvrtcGetProgramLog(prog, log);
        h->log(XO_LOG_WARN, "cuda: NVRTC could not compile a chain kernel (%s); the interpreter runs it", log);
    }
    (void)nv->nvrtcDestroyProgram(&prog);
    if (!ptx) return NULL;
    CUfunction fn = NULL;
    CUresult r = xo__cu.cuModuleLoadData(out_module, ptx);
    free(ptx);
    if (r == CUDA_SUCCESS) r = xo__cu.cuModuleGetFunction(&fn, *out_module, f64 ? "xo_chain_f64" : "xo_chain_f32");
    if (r != CUDA_SUCCESS) {
        h->log(XO_LOG_INFO, "cuda: a compiled chain kernel did not load (%s); the interpreter runs it",
               xo__cuda_result_name(r));
        if (*out_module) (void)xo__cu.cuModuleUnload(*out_module);
        *out_module = NULL;
        return NULL;
    }
    return fn;
}

CUfunction xo__cuda_chain_fn(xo__cuda_state *st, xo__cuda_device *d, const xo_cuda_chain_prog *p, int f64)
{
    if (!xo__cuda_nvrtc_enabled) return NULL;
    char *src = chain_source(p, f64);
    if (!src) return NULL;
    const uint64_t h = hash_of(src);
    for (int i = 0; i < d->ngen; i++)
        if (d->gen[i].hash == h && strcmp(d->gen[i].src, src) == 0) {
            free(src);
            return d->gen[i].fn; /* NULL: this shape failed before */
        }
    /* Not while recording a graph (loading a module is no stream work), nor past the cache. */
    if (d->capturing || d->ngen == XO_CUDA_GEN_SLOTS) {
        free(src);
        return NULL;
    }
    xo__cuda_gen *g = &d->gen[d->ngen++];
    g->hash = h;
    g->src = src;
    g->fn = compile(st, d, src, f64, &g->module);
    return g->fn;
}

void xo__cuda_gen_release(xo__cuda_device *d)
{
    for (int i = 0; i < d->ngen; i++) {
        if (d->gen[i].module) (void)xo__cu.cuModuleUnload(d->gen[i].module);
        free(d->gen[i].src);
    }
    memset(d->gen, 0, sizeof d->gen);
    d->ngen = 0;
}
