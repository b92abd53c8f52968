/* cl_chain.c: the "xo_chain" extra of the OpenCL plugin (crossover/plugin.h). A chain of
 * element-wise ops runs as one kernel, generated as OpenCL C from the chain's shape,
 * compiled once per device of a context and cached in memory and on disk.
 *
 * The shape is what the generated source depends on, and nothing else: the dtype, and per
 * step its kind, sub-op, store flag, and where each operand comes from: the value of an
 * earlier step (from[]), or a kernel argument. The arguments are the distinct
 * (cl_mem, offset) pairs of the chain's operands in order of first use, so the shape says
 * which operands are the same memory (in-place ops, a buffer two steps read, a result
 * stored over an input). n, the offsets, the buffers themselves and the scalars (alpha,
 * beta) are kernel arguments: chains that differ only in them share one kernel. In memory
 * the kernels are found by the shape's bytes (no source is generated on a hit); on disk
 * (cl_cache.c) by the full generated source with the device and driver, as the other
 * programs are.
 *
 * The kernel: one grid-stride loop; per element i each step's value is a private
 * variable v<k> computed with the formulas of plugins/common/xo_formulas.h (the program's
 * first piece); an operand whose from[] names an earlier step uses that variable and
 * reads no memory; other operands are read once per element (m<p>); a result is written
 * only where store == 1. BLAS rules are kept as the single-op kernels keep them
 * (kernels_cl/elementwise.cl): scal by 0 writes zeros without reading x, axpby reads x
 * only when alpha != 0 and y only when beta != 0, fill reads nothing, axpy with
 * alpha == 0 leaves y; scale_by's factor is one element read once per work-item, so a
 * chain that also writes that element is not supported (the core then runs the steps
 * one by one). copy and fill move values through loads and stores only, which keep bits. */
#include "cl_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHAIN_PARAMS 60    /* distinct (cl_mem, offset) pairs: 16 bytes of arguments each */
#define CHAIN_ARG_BYTES 1024 /* CL_DEVICE_MAX_PARAMETER_SIZE's minimum (OpenCL 1.2) */
#define CHAIN_BUCKETS 64
#define SRC_NONE 0xFF      /* operand not read */
#define SRC_MEM 0x80       /* | argument index: read from memory; below: an earlier step's value */

/* What each kind of step reads (a bit per operand, XO_OP_MAP order), how many scalars it
 * takes (alpha, then beta) and which operands have an increment that must be 1. */
static const struct {
    unsigned char ok, reads, nscalars, incs;
} kinds[XO_OP_KIND_COUNT] = {
    [XO_OP_UNARY] = {1, 0x1, 0, 0},         [XO_OP_BINARY] = {1, 0x3, 0, 0},
    [XO_OP_BINARY_SCALAR] = {1, 0x1, 1, 0}, [XO_OP_SCAL] = {1, 0x1, 1, 0x1},
    [XO_OP_FILL] = {1, 0x0, 1, 0x1},        [XO_OP_AXPY] = {1, 0x3, 1, 0x3},
    [XO_OP_AXPBY] = {1, 0x3, 2, 0x3},       [XO_OP_COPY] = {1, 0x1, 0, 0x3},
    [XO_OP_SCALE_BY] = {1, 0x3, 0, 0x1},
};

static const struct {
    unsigned char nargs, out;
} op_map[XO_OP_KIND_COUNT] = {
#define XO_CL_CHAIN_ROW_(K, name, nargs_, out_, operands) [XO_OP_##K] = {nargs_, out_},
    XO_OP_MAP(XO_CL_CHAIN_ROW_)
#undef XO_CL_CHAIN_ROW_
};

#define XO_CL_CHAIN_UNARY_(NAME, ...) #NAME,
#define XO_CL_CHAIN_BINARY_(NAME) #NAME,
static const char *const unary_names[] = {XO_UNARY_OP_MAP(XO_CL_CHAIN_UNARY_)};
static const char *const binary_names[] = {XO_BINARY_OP_MAP(XO_CL_CHAIN_BINARY_)};
#undef XO_CL_CHAIN_UNARY_
#undef XO_CL_CHAIN_BINARY_

/* The shape: the in-memory key (its first 4 + 8 * nsteps bytes). */
typedef struct shape_step {
    unsigned char kind, subop, store, out; /* out: the argument written, SRC_NONE if not stored */
    unsigned char src[XO_MAX_ARGS];        /* per operand: SRC_NONE, SRC_MEM | argument, or a step */
} shape_step;
typedef struct shape {
    unsigned char dtype, nsteps, nparams, pad;
    shape_step step[XO_CHAIN_MAX];
} shape;
_Static_assert(sizeof(shape_step) == 8 && sizeof(shape) == 4 + 8 * XO_CHAIN_MAX, "shape has no padding");
_Static_assert(CHAIN_PARAMS < SRC_MEM && XO_CHAIN_MAX < SRC_MEM, "source codes fit a byte");
_Static_assert(XO_UNARY_OP_COUNT <= 256 && XO_BINARY_OP_COUNT <= 256, "a sub-op fits its byte of the shape");

/* A chain seen through its shape, with the values of one run. */
typedef struct chain_args {
    shape sh;
    size_t key_len;
    int nparams, nscalars;
    cl_mem mem[CHAIN_PARAMS];
    cl_ulong off[CHAIN_PARAMS];
    unsigned char written[CHAIN_PARAMS], span[CHAIN_PARAMS]; /* span: read or written over n elements */
    double scalar[2 * XO_CHAIN_MAX];
} chain_args;

/* One compiled shape; never removed until the device is released. */
typedef struct chain_entry {
    struct chain_entry *next;
    uint64_t hash;
    cl_program prog;
    cl_kernel kernel; /* NULL: the build failed (not retried) */
    size_t key_len;
    unsigned char key[];
} chain_entry;

struct xo__cl_chains {
    _Atomic(chain_entry *) bucket[CHAIN_BUCKETS]; /* pushed under build_lock, read without */
};

static int param_of(chain_args *a, const xo_operand *o)
{
    if (!o->mem) return -1;
    cl_mem m = xo__cl_mem(o->mem);
    for (int p = 0; p < a->nparams; p++)
        if (a->mem[p] == m && a->off[p] == (cl_ulong)o->off) return p;
    if (a->nparams >= CHAIN_PARAMS) return -1;
    a->mem[a->nparams] = m;
    a->off[a->nparams] = o->off;
    a->written[a->nparams] = a->span[a->nparams] = 0;
    return a->nparams++;
}

/* The shape and arguments of `c`; 0 if this plugin does not run it as one kernel. */
static int analyse(const xo_chain *c, int fp64, chain_args *a)
{
    if (!c->steps || c->nsteps < 1 || c->nsteps > XO_CHAIN_MAX || c->n == 0) return 0;
    if ((c->dtype != XO_F32 && c->dtype != XO_F64) || (c->dtype == XO_F64 && !fp64)) return 0;
    memset(&a->sh, 0, sizeof a->sh);
    a->nparams = a->nscalars = 0;
    a->sh.dtype = (unsigned char)c->dtype;
    a->sh.nsteps = (unsigned char)c->nsteps;
    for (int k = 0; k < c->nsteps; k++) {
        const xo_chain_step *s = &c->steps[k];
        const xo_op_desc *op = &s->op;
        shape_step *t = &a->sh.step[k];
        if ((unsigned)op->kind >= XO_OP_KIND_COUNT || !kinds[op->kind].ok) return 0;
        const int kind = op->kind, nargs = op_map[kind].nargs, out = op_map[kind].out;
        if (op->dtype != c->dtype || op->n != c->n || op->narg != nargs) return 0;
        if (((kinds[kind].incs & 1) && op->inc[0] != 1) || ((kinds[kind].incs & 2) && op->inc[1] != 1)) return 0;
        if (kind == XO_OP_UNARY && (op->subop < 0 || op->subop >= XO_UNARY_OP_COUNT)) return 0;
        if ((kind == XO_OP_BINARY || kind == XO_OP_BINARY_SCALAR) && (op->subop < 0 || op->subop >= XO_BINARY_OP_COUNT))
            return 0;
        t->kind = (unsigned char)kind;
        t->subop = (unsigned char)(kind == XO_OP_UNARY || kind == XO_OP_BINARY || kind == XO_OP_BINARY_SCALAR
                                       ? op->subop : 0);
        t->store = s->store ? 1 : 0;
        t->out = SRC_NONE;
        for (int i = 0; i < XO_MAX_ARGS; i++) {
            t->src[i] = SRC_NONE;
            if (i >= nargs || !(kinds[kind].reads >> i & 1)) continue;
            const int from = s->from[i];
            if (from >= 0) {
                /* scale_by's factor is element 0, not element i, of its operand */
                if (from >= k || (kind == XO_OP_SCALE_BY && i == 0)) return 0;
                t->src[i] = (unsigned char)from;
                continue;
            }
            /* memory an earlier step writes is read through from[] (the contract) */
            for (int j = 0; j < k; j++) {
                const xo_operand *o = &c->steps[j].op.arg[op_map[c->steps[j].op.kind].out];
                if (o->mem == op->arg[i].mem && o->off == op->arg[i].off) return 0;
            }
            int p = param_of(a, &op->arg[i]);
            if (p < 0) return 0;
            if (!(kind == XO_OP_SCALE_BY && i == 0)) a->span[p] = 1;
            t->src[i] = (unsigned char)(SRC_MEM | p);
        }
        if (t->store) {
            int p = param_of(a, &op->arg[out]);
            if (p < 0) return 0;
            a->written[p] = a->span[p] = 1;
            t->out = (unsigned char)p;
        }
        if (kinds[kind].nscalars >= 1) a->scalar[a->nscalars++] = op->alpha;
        if (kinds[kind].nscalars >= 2) a->scalar[a->nscalars++] = op->beta;
    }
    /* The pointers are restrict: what a step stores never overlaps another argument (the
     * contract says so: element-aligned, which is one argument, or disjoint). Checked. */
    for (int p = 0; p < a->nparams; p++)
        for (int q = 0; a->written[p] && q < a->nparams; q++) {
            const cl_ulong qn = a->span[q] ? c->n : 1;
            if (q != p && a->mem[q] == a->mem[p] && a->off[q] < a->off[p] + c->n && a->off[p] < a->off[q] + qn)
                return 0;
        }
    /* scale_by's factor is read by every work-item: no step may store over it. */
    for (int k = 0; k < c->nsteps; k++) {
        if (c->steps[k].op.kind != XO_OP_SCALE_BY) continue;
        const xo_operand *f = &c->steps[k].op.arg[0];
        for (int j = 0; j < c->nsteps; j++) {
            const xo_operand *o = &c->steps[j].op.arg[op_map[c->steps[j].op.kind].out];
            if (c->steps[j].store && o->mem == f->mem && f->off >= o->off && f->off - o->off < c->n) return 0;
        }
    }
    const size_t es = c->dtype == XO_F64 ? sizeof(cl_double) : sizeof(cl_float);
    if (sizeof(cl_ulong) + (size_t)a->nparams * (sizeof(cl_mem) + sizeof(cl_ulong)) + (size_t)a->nscalars * es >
        CHAIN_ARG_BYTES)
        return 0;
    a->sh.nparams = (unsigned char)a->nparams;
    a->key_len = 4 + 8 * (size_t)c->nsteps;
    return 1;
}

/* ---- source generation ------------------------------------------------------------ */

typedef struct sbuf {
    char *p;
    size_t len, cap;
    int failed;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(sbuf *b, const char *fmt, ...)
{
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap <= b->len + (size_t)n) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->failed = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

/* The expression of operand `i` of step `k` (a private variable or a load); a load that is
 * not conditional is made once per element, before the step (m<p>). */
static const char *operand(sbuf *b, const shape_step *t, int i, int conditional, unsigned char *loaded,
                           char *buf, size_t cap)
{
    const unsigned char src = t->src[i];
    if (src < SRC_MEM) {
        snprintf(buf, cap, "v%d", src);
        return buf;
    }
    const int p = src & ~SRC_MEM;
    if (!loaded[p] && conditional) {
        snprintf(buf, cap, "p%d[i]", p);
        return buf;
    }
    if (!loaded[p]) sb_add(b, "        const real m%d = p%d[i];\n", p, p);
    loaded[p] = 1;
    snprintf(buf, cap, "m%d", p);
    return buf;
}

/* The kernel "xo_chain" for shape `sh`, NUL-terminated (malloc'd); NULL when out of memory. */
static char *generate(const shape *sh, size_t *out_len)
{
    sbuf b = {0};
    unsigned char written[CHAIN_PARAMS] = {0}, loaded[CHAIN_PARAMS] = {0};
    for (int k = 0; k < sh->nsteps; k++)
        if (sh->step[k].out != SRC_NONE) written[sh->step[k].out] = 1;

    sb_add(&b, "/* crossover: a chain of %d element-wise steps (plugins/opencl/cl_chain.c) */\n", sh->nsteps);
    if (sh->dtype == XO_F64)
        sb_add(&b, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\ntypedef double real;\n");
    else /* xo_formulas.h's constants as float literals: no double without cl_khr_fp64 */
        sb_add(&b, "typedef float real;\n#undef XO_REAL\n#define XO_REAL(v) (v##f)\n");
    sb_add(&b, "typedef real xo_real;\n"); /* the element type of xo_formulas.h */
    sb_add(&b, "#define XO_FN_EXP(x) exp(x)\n#define XO_FN_TANH(x) tanh(x)\n#define XO_FN_SQRT(x) sqrt(x)\n"
               "#define XO_FN_RSQRT(x) rsqrt(x)\n#define XO_FN_LOG(x) log(x)\n#define XO_FN_FABS(x) fabs(x)\n");
    sb_add(&b, "__kernel void xo_chain(const ulong n");
    for (int p = 0; p < sh->nparams; p++)
        sb_add(&b, ",\n    __global %sreal *restrict p%d, const ulong o%d", written[p] ? "" : "const ", p, p);
    for (int k = 0, j = 0; k < sh->nsteps; k++)
        for (int q = 0; q < kinds[sh->step[k].kind].nscalars; q++) sb_add(&b, ", const real s%d", j++);
    sb_add(&b, ")\n{\n");
    for (int p = 0; p < sh->nparams; p++) sb_add(&b, "    p%d += o%d;\n", p, p);
    for (int k = 0; k < sh->nsteps; k++)
        if (sh->step[k].kind == XO_OP_SCALE_BY) sb_add(&b, "    const real f%d = p%d[0];\n", k, sh->step[k].src[0] & ~SRC_MEM);
    sb_add(&b, "    const ulong stride = get_global_size(0);\n"
               "    for (ulong i = get_global_id(0); i < n; i += stride) {\n");
    for (int k = 0, j = 0; k < sh->nsteps; k++) {
        const shape_step *t = &sh->step[k];
        char x[24], y[24];
        const char *X, *Y;
        switch (t->kind) {
        case XO_OP_UNARY:
            X = operand(&b, t, 0, 0, loaded, x, sizeof x);
            sb_add(&b, "        const real v%d = XO_F_%s(%s);\n", k, unary_names[t->subop], X);
            break;
        case XO_OP_BINARY:
            X = operand(&b, t, 0, 0, loaded, x, sizeof x);
            Y = operand(&b, t, 1, 0, loaded, y, sizeof y);
            sb_add(&b, "        const real v%d = XO_F_%s(%s, %s);\n", k, binary_names[t->subop], X, Y);
            break;
        case XO_OP_BINARY_SCALAR:
            X = operand(&b, t, 0, 0, loaded, x, sizeof x);
            sb_add(&b, "        const real v%d = XO_F_%s(%s, s%d);\n", k, binary_names[t->subop], X, j);
            break;
        case XO_OP_SCAL: /* alpha == 0 writes zeros, x unread */
            X = operand(&b, t, 0, 1, loaded, x, sizeof x);
            sb_add(&b, "        const real v%d = s%d == (real)0 ? (real)0 : s%d * %s;\n", k, j, j, X);
            break;
        case XO_OP_FILL:
            sb_add(&b, "        const real v%d = s%d;\n", k, j);
            break;
        case XO_OP_AXPY: /* alpha == 0 leaves y (the core never sends it, as BLAS) */
            X = operand(&b, t, 0, 1, loaded, x, sizeof x);
            Y = operand(&b, t, 1, 0, loaded, y, sizeof y);
            sb_add(&b, "        const real v%d = s%d == (real)0 ? %s : s%d * %s + %s;\n", k, j, Y, j, X, Y);
            break;
        case XO_OP_AXPBY: /* x read only when alpha != 0, y only when beta != 0 */
            X = operand(&b, t, 0, 1, loaded, x, sizeof x);
            Y = operand(&b, t, 1, 1, loaded, y, sizeof y);
            sb_add(&b,
                   "        const real v%d = s%d == (real)0 ? (s%d != (real)0 ? s%d * %s : (real)0)\n"
                   "                                 : (s%d != (real)0 ? s%d * %s + s%d * %s : s%d * %s);\n",
                   k, j, j + 1, j + 1, Y, j + 1, j, X, j + 1, Y, j, X);
            break;
        case XO_OP_COPY:
            X = operand(&b, t, 0, 0, loaded, x, sizeof x);
            sb_add(&b, "        const real v%d = %s;\n", k, X);
            break;
        default: /* XO_OP_SCALE_BY */
            X = operand(&b, t, 1, 0, loaded, x, sizeof x);
            sb_add(&b, "        const real v%d = %s * f%d;\n", k, X, k);
            break;
        }
        if (t->out != SRC_NONE) sb_add(&b, "        p%d[i] = v%d;\n", t->out, k);
        j += kinds[t->kind].nscalars;
    }
    sb_add(&b, "    }\n}\n");
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    *out_len = b.len;
    return b.p;
}

/* ---- the kernels by shape ------------------------------------------------------------ */

static const char *const dtype_names[2] = {"float", "double"};

static chain_entry *lookup(xo__cl_device *d, const unsigned char *key, size_t len, uint64_t h)
{
    struct xo__cl_chains *c = atomic_load_explicit(&d->chains, memory_order_acquire);
    if (!c) return NULL;
    for (chain_entry *e = atomic_load_explicit(&c->bucket[h % CHAIN_BUCKETS], memory_order_acquire); e; e = e->next)
        if (e->hash == h && e->key_len == len && memcmp(e->key, key, len) == 0) return e;
    return NULL;
}

/* Compile the kernel of `sh` into e; d->build_lock held. On failure e->kernel stays NULL. */
static void build_locked(xo__cl_state *st, xo__cl_device *d, const shape *sh, chain_entry *e)
{
    const xo_plugin_host *h = st->host;
    size_t glen = 0, flen = 0;
    uint64_t fhash = 0;
    const char *formulas = xo__cl_formulas_text(&flen, &fhash);
    char *gen = generate(sh, &glen);
    char *key = gen ? malloc(glen + 1024) : NULL;
    char what[96];
    snprintf(what, sizeof what, "chain kernel %016llx (%s, %d steps)",
             (unsigned long long)(gen ? xo__cl_fnv1a(gen, glen, XO_CL_FNV_BASIS) : 0), dtype_names[sh->dtype],
             sh->nsteps);
    if (!formulas || !key) {
        h->log(XO_LOG_WARN, "opencl: %s: %s: %s", d->info.name, what,
               formulas ? "out of host memory" : "xo_formulas is not embedded");
        xo__cl_count_build_failure();
        free(gen);
        free(key);
        return;
    }
    /* The whole source is in the key: the cache compares keys in full. */
    int n = snprintf(key, 1024,
                     "crossover OpenCL chain v1\nplatform=%s\ndevice=%s\nvendor=%s\ndriver=%s\n"
                     "formulas=%016llx:%zu\nsource:\n",
                     d->platform_version, d->info.name, d->info.vendor, d->info.driver,
                     (unsigned long long)fhash, flen);
    if (n < 0 || n >= 1024) n = 0;
    memcpy(key + n, gen, glen + 1);
    const char *text[2] = {formulas, gen};
    const size_t len[2] = {flen, glen};
    cl_program p = xo__cl_program_build(st, d, what, key, 2, text, len, "");
    if (p) {
        cl_int err = CL_SUCCESS;
        cl_kernel k = clCreateKernel(p, "xo_chain", &err);
        if (err == CL_SUCCESS && k) {
            e->prog = p;
            e->kernel = k;
        } else {
            h->log(XO_LOG_WARN, "opencl: %s: %s failed (clCreateKernel: %s); its chains run step by step",
                   d->info.name, what, xo__cl_error_name(err));
            clReleaseProgram(p);
            xo__cl_count_build_failure();
        }
    }
    free(gen);
    free(key);
}

/* The entry of a's shape on d, built now if never tried; NULL when out of host memory. */
static chain_entry *entry_of(xo__cl_state *st, xo__cl_device *d, const chain_args *a)
{
    const unsigned char *key = (const unsigned char *)&a->sh;
    const uint64_t h = xo__cl_fnv1a(key, a->key_len, XO_CL_FNV_BASIS);
    chain_entry *e = lookup(d, key, a->key_len, h);
    if (e) return e;
    pthread_mutex_lock(&d->build_lock);
    e = lookup(d, key, a->key_len, h);
    struct xo__cl_chains *c = atomic_load_explicit(&d->chains, memory_order_acquire);
    if (!e && !c && (c = calloc(1, sizeof *c))) atomic_store_explicit(&d->chains, c, memory_order_release);
    if (!e && c && (e = calloc(1, sizeof *e + a->key_len))) {
        e->hash = h;
        e->key_len = a->key_len;
        memcpy(e->key, key, a->key_len);
        build_locked(st, d, &a->sh, e);
        e->next = atomic_load_explicit(&c->bucket[h % CHAIN_BUCKETS], memory_order_relaxed);
        atomic_store_explicit(&c->bucket[h % CHAIN_BUCKETS], e, memory_order_release);
    }
    pthread_mutex_unlock(&d->build_lock);
    return e;
}

void xo__cl_chains_release(xo__cl_device *d)
{
    struct xo__cl_chains *c = atomic_exchange(&d->chains, NULL);
    if (!c) return;
    for (int b = 0; b < CHAIN_BUCKETS; b++) {
        chain_entry *e = atomic_load(&c->bucket[b]);
        while (e) {
            chain_entry *next = e->next;
            if (e->kernel) clReleaseKernel(e->kernel);
            if (e->prog) clReleaseProgram(e->prog);
            free(e);
            e = next;
        }
    }
    free(c);
}

/* ---- the runner ---------------------------------------------------------------------- */

int xo__cl_chain_supports(xo__cl_state *st, xo__cl_device *d, const xo_chain *chain)
{
    chain_args a;
    if (!analyse(chain, d->info.fp64, &a)) return 0;
    const chain_entry *e = entry_of(st, d, &a);
    return e && e->kernel ? 1 : -1; /* -1: its kernel failed to build here */
}

xo_status xo__cl_chain_run(xo__cl_state *st, xo__cl_device *d, const xo_chain *chain, uint64_t token)
{
    const xo_plugin_host *h = st->host;
    chain_args a;
    if (!analyse(chain, d->info.fp64, &a))
        return h->set_error(XO_ERR_UNSUPPORTED, "opencl: %s: this chain of %d steps does not run as one kernel",
                            d->info.name, chain->nsteps);
    const chain_entry *e = entry_of(st, d, &a);
    if (!e || !e->kernel)
        return h->set_error(XO_ERR_UNSUPPORTED, "opencl: %s: the kernel of this chain of %d steps is not available",
                            d->info.name, chain->nsteps);

    union {
        cl_float f;
        cl_double d;
    } sc[2 * XO_CHAIN_MAX];
    xo__cl_arg args[1 + 2 * CHAIN_PARAMS + 2 * XO_CHAIN_MAX];
    const cl_ulong n = chain->n;
    int na = 0;
    args[na++] = XO_CL_ARG(n);
    for (int p = 0; p < a.nparams; p++) {
        args[na++] = XO_CL_ARG(a.mem[p]);
        args[na++] = XO_CL_ARG(a.off[p]);
    }
    for (int j = 0; j < a.nscalars; j++) {
        if (chain->dtype == XO_F64) {
            sc[j].d = a.scalar[j];
            args[na++] = XO_CL_ARG(sc[j].d);
        } else {
            sc[j].f = (cl_float)a.scalar[j];
            args[na++] = XO_CL_ARG(sc[j].f);
        }
    }
    cl_event ev = NULL;
    const char *call = "clEnqueueNDRangeKernel";
    pthread_mutex_lock(&d->lock);
    cl_int err = xo__cl_launch_1d_locked(d, e->kernel, args, na, chain->n, &ev, &call);
    if (err == CL_SUCCESS) xo__cl_timing_push_locked(d, NULL, ev, token);
    pthread_mutex_unlock(&d->lock);
    if (err != CL_SUCCESS) return xo__cl_fail(h, call, err);
    return XO_OK;
}
