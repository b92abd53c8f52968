/* The CPU's "xo_chain" extra (crossover/plugin.h): a plan's chain of element-wise ops as
 * one pass over cache-sized blocks, the blocks split over the pool when the chain is large.
 *
 * On each block every step runs in order, with the loop its op runs alone where there is
 * one (unary, binary, binary_scalar: the very kernels of cpu_elementwise.c) and the loops
 * below for the BLAS-like kinds (scal, fill, axpy, axpby, copy, scale_by), written out of
 * place. A step reads an operand from memory, or (from[a] >= 0) the result of an earlier
 * step: that result lives in its output operand's memory when it is stored and nothing
 * stores over it while it is still read, else in one of the thread's temporary blocks
 * (slots, reused once their value is dead). A result that is not stored (store = 0) never
 * reaches memory. */
#include "cpu_internal.h"

#include <pthread.h>
#include <stdlib.h>

/* Elements per block: every live operand of a block stays in L1/L2 while the steps run.
 * Measured (xo_plan_replay's Adam chain over 4M floats, CPU time on one thread, 2-core
 * AMD EPYC under load): 1024-4096 alike (11.2-11.6 ms), 8192 and 16384 5% slower;
 * xo_chain_cpu blocks (the 8-op tanh chain, taking turns) found 256-2048 alike within
 * its noise. A variable only for that sweep. */
size_t xo__cpu_chain_block = 2048;
/* Shorter chains run op by op: while the operands stay in cache, each step of a fused
 * block streams through L1 as the op alone does, so fusion saves nothing per element and
 * costs its setup (~50 ns). Measured (xo_chain_cpu tiny: the 8-op tanh chain, plan fused
 * against the plan op by op, 2-core AMD EPYC under load, medians of 15-21 rounds): 0.66x
 * at 16 and 64 elements, 0.75 at 256, 0.90 at 1024, 0.99-1.18 at 2048, 1.15 at 8192, and
 * 2.4-20x from 16384 (where OpenBLAS starts threads for the scal and axpy). A variable
 * only so that the bench can time both sides. */
size_t xo__cpu_chain_min_n = 2048;
/* Temporary blocks up to this size come from the caller's stack. */
#define XO_CHAIN_STACK 16384

/* Which operand each kind writes (XO_OP_MAP's `out`). */
#define OUT_(K, name, nargs, out, operands) out,
static const signed char out_arg[] = {XO_OP_MAP(OUT_)};
#undef OUT_

#define CHAIN_LOOPS(T, SUF, ATTR)                                                                    \
    ATTR static void axpby_##SUF(T a, const T *x, T b, const T *y, T *o, size_t n)                \
    {                                                                                              \
        for (size_t i = 0; i < n; i++)                                                             \
            o[i] = a * x[i] + b * y[i];                                                            \
    }                                                                                              \
    ATTR static void axpy_##SUF(T a, const T *x, const T *y, T *o, size_t n)                      \
    {                                                                                              \
        for (size_t i = 0; i < n; i++)                                                             \
            o[i] = a * x[i] + y[i];                                                                \
    }                                                                                              \
    ATTR static void scale_##SUF(T s, const T *x, T *o, size_t n)                                 \
    {                                                                                              \
        for (size_t i = 0; i < n; i++)                                                             \
            o[i] = x[i] * s;                                                                       \
    }                                                                                              \
    ATTR static void fill_##SUF(T v, T *o, size_t n)                                              \
    {                                                                                              \
        for (size_t i = 0; i < n; i++)                                                             \
            o[i] = v;                                                                              \
    }

XO_CPU_INSTANTIATE(CHAIN_LOOPS)

typedef struct kernels {
    void (*axpby_f)(float, const float *, float, const float *, float *, size_t);
    void (*axpby_d)(double, const double *, double, const double *, double *, size_t);
    void (*axpy_f)(float, const float *, const float *, float *, size_t);
    void (*axpy_d)(double, const double *, const double *, double *, size_t);
    void (*scale_f)(float, const float *, float *, size_t);
    void (*scale_d)(double, const double *, double *, size_t);
    void (*fill_f)(float, float *, size_t);
    void (*fill_d)(double, double *, size_t);
} kernels;
#define TABLE(F, D) {axpby_##F, axpby_##D, axpy_##F, axpy_##D, scale_##F, scale_##D, fill_##F, fill_##D}

XO_CPU_KERNELS_SELECTED(kernels, TABLE)

/* One run of a chain: where each step's result lives, and the temporary blocks. */
typedef struct job {
    const xo_chain *c;
    size_t es, block;
    int nslots;
    signed char slot[XO_CHAIN_MAX];   /* -1: in its output operand's memory */
    unsigned char copy[XO_CHAIN_MAX]; /* computed in a slot, then stored */
    char *scratch;                    /* [chunk][slot][block] */
} job;

static char *mem(const job *j, int k, int a, size_t i0)
{
    const xo_operand *o = &j->c->steps[k].op.arg[a];
    return (char *)o->host + (o->off + i0) * j->es;
}

/* Step k's result for the block at i0. */
static void *result(const job *j, int k, size_t i0, char *regs)
{
    if (j->slot[k] < 0)
        return mem(j, k, out_arg[j->c->steps[k].op.kind], i0);
    return regs + (size_t)j->slot[k] * j->block * j->es;
}

/* Operand a of step k for the block at i0. */
static const void *in(const job *j, int k, int a, size_t i0, char *regs)
{
    int f = j->c->steps[k].from[a];
    return f >= 0 ? result(j, f, i0, regs) : mem(j, k, a, i0);
}

static void copy_block(void *dst, const void *src, size_t bytes)
{
    if (dst != src)
        memmove(dst, src, bytes);
}

#define K2(NAME, ...) (f32 ? k()->NAME##_f(__VA_ARGS__) : k()->NAME##_d(__VA_ARGS__))
static void run_step(const job *j, int s, size_t i0, size_t n, char *regs)
{
    const xo_op_desc *d = &j->c->steps[s].op;
    const int f32 = d->dtype == XO_F32;
    const double a = d->alpha, b = d->beta;
    void *o = result(j, s, i0, regs);
    switch (d->kind) {
    case XO_OP_UNARY: xo__cpu_unary_loop(d->dtype, d->subop, in(j, s, 0, i0, regs), o, n); break;
    case XO_OP_BINARY:
        xo__cpu_binary_loop(d->dtype, d->subop, in(j, s, 0, i0, regs), in(j, s, 1, i0, regs), o, n);
        break;
    case XO_OP_BINARY_SCALAR: xo__cpu_bscalar_loop(d->dtype, d->subop, in(j, s, 0, i0, regs), a, o, n); break;
    case XO_OP_SCAL: /* alpha == 0 writes zeros, whatever x held */
        if (a == 0)
            K2(fill, 0, o, n);
        else
            K2(scale, a, in(j, s, 0, i0, regs), o, n);
        break;
    case XO_OP_FILL: K2(fill, a, o, n); break;
    case XO_OP_AXPY:
        if (a == 0) /* BLAS: y stays, x is not read */
            copy_block(o, in(j, s, 1, i0, regs), n * j->es);
        else
            K2(axpy, a, in(j, s, 0, i0, regs), in(j, s, 1, i0, regs), o, n);
        break;
    case XO_OP_AXPBY: /* beta == 0 never reads y, alpha == 0 never reads x */
        if (a == 0 && b == 0)
            K2(fill, 0, o, n);
        else if (b == 0)
            K2(scale, a, in(j, s, 0, i0, regs), o, n);
        else if (a == 0)
            K2(scale, b, in(j, s, 1, i0, regs), o, n);
        else
            K2(axpby, a, in(j, s, 0, i0, regs), b, in(j, s, 1, i0, regs), o, n);
        break;
    case XO_OP_COPY: copy_block(o, in(j, s, 0, i0, regs), n * j->es); break;
    default: { /* XO_OP_SCALE_BY: x *= s[0], the factor read whole */
        const char *sp = mem(j, s, 0, 0);
        K2(scale, f32 ? *(const float *)sp : *(const double *)sp, in(j, s, 1, i0, regs), o, n);
        break;
    }
    }
    if (j->copy[s])
        copy_block(mem(j, s, out_arg[d->kind], i0), o, n * j->es);
}
#undef K2

static void run_blocks(void *arg, size_t b, size_t e, int chunk)
{
    const job *j = arg;
    char *regs = j->scratch + (size_t)chunk * (size_t)j->nslots * j->block * j->es;
    for (size_t blk = b; blk < e; blk++) {
        size_t i0 = blk * j->block, n = j->c->n - i0 < j->block ? j->c->n - i0 : j->block;
        for (int s = 0; s < j->c->nsteps; s++)
            run_step(j, s, i0, n, regs);
    }
}

/* Where each result lives: its output's memory when stored and no later step stores to
 * that memory while the result is still read; else a slot, taken from those whose value
 * is no longer read (a step may write the slot it reads: the loops work in place). */
static void assign_slots(job *j)
{
    const xo_chain *c = j->c;
    int last[XO_CHAIN_MAX], until[XO_CHAIN_MAX];
    for (int s = 0; s < c->nsteps; s++) {
        last[s] = s;
        for (int a = 0; a < c->steps[s].op.narg; a++)
            if (c->steps[s].from[a] >= 0)
                last[c->steps[s].from[a]] = s;
    }
    const char *at[XO_CHAIN_MAX]; /* each step's output */
    for (int s = 0; s < c->nsteps; s++)
        at[s] = mem(j, s, out_arg[c->steps[s].op.kind], 0);
    j->nslots = 0;
    for (int s = 0; s < c->nsteps; s++) {
        int home = c->steps[s].store;
        for (int m = s + 1; m <= last[s] && home; m++)
            if (c->steps[m].store && at[m] == at[s])
                home = 0;
        j->copy[s] = !home && c->steps[s].store;
        if (home) {
            j->slot[s] = -1;
            continue;
        }
        int t = 0;
        while (t < j->nslots && until[t] > s)
            t++;
        if (t == j->nslots)
            j->nslots++;
        until[t] = last[s];
        j->slot[s] = (signed char)t;
    }
}

int xo__cpu_chain_supports(const xo_chain *c, size_t min_n)
{
    if (!c || c->nsteps < 2 || c->nsteps > XO_CHAIN_MAX || c->n < min_n || !c->steps)
        return 0;
    for (int s = 0; s < c->nsteps; s++) {
        const xo_chain_step *st = &c->steps[s];
        switch (st->op.kind) {
        case XO_OP_UNARY: case XO_OP_BINARY: case XO_OP_BINARY_SCALAR: case XO_OP_SCAL: case XO_OP_FILL:
        case XO_OP_AXPY: case XO_OP_AXPBY: case XO_OP_COPY: case XO_OP_SCALE_BY: break;
        default: return 0;
        }
        if (st->op.dtype != c->dtype || st->op.n != c->n || st->op.narg > XO_MAX_ARGS)
            return 0;
        for (int a = 0; a < st->op.narg; a++)
            if (st->from[a] >= s || (st->from[a] >= 0 && st->op.kind == XO_OP_SCALE_BY && a == 0))
                return 0; /* a factor read whole comes from memory */
    }
    return 1;
}

xo_status xo__cpu_chain_run(const xo_plugin_host *host, xo__cpu_pool *pool, const xo_chain *c)
{
    if (!xo__cpu_chain_supports(c, 0))
        return host->set_error(XO_ERR_UNSUPPORTED, "cpu plugin: a chain it does not support (%d steps, n=%zu)",
                               c ? c->nsteps : 0, c ? c->n : 0);
    job j = {.c = c, .es = c->dtype == XO_F32 ? sizeof(float) : sizeof(double)};
    const size_t block = xo__cpu_chain_block >= 16 ? xo__cpu_chain_block / 16 * 16 : 16;
    j.block = c->n < block ? (c->n + 15) / 16 * 16 : block;
    assign_slots(&j);
    size_t nblocks = (c->n + j.block - 1) / j.block, grain = XO_CPU_GRAIN / j.block;
    grain = grain ? grain : 1;
    size_t chunks = nblocks >= grain ? (size_t)xo__cpu_pool_threads(pool) : 1;
    size_t bytes = chunks * (size_t)j.nslots * j.block * j.es;
    _Alignas(64) char stack[XO_CHAIN_STACK];
    char *heap = NULL;
    if (bytes > sizeof stack && !(heap = aligned_alloc(64, (bytes + 63) / 64 * 64)))
        return host->set_error(XO_ERR_OUT_OF_MEMORY, "cpu plugin: no host memory for a chain's %zu bytes of temporaries",
                               bytes);
    j.scratch = heap ? heap : stack;
    xo__cpu_parallel_for(pool, nblocks, grain, run_blocks, &j);
    free(heap);
    return XO_OK;
}
