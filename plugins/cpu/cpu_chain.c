/* The CPU's "xo_chain" extra (crossover/plugin.h): a plan's chain of element-wise ops as
 * one pass over small blocks, the blocks split over the pool when the chain is large.
 *
 * Each run decodes the chain once into a program: one instruction per step (an opcode
 * and where its operands are), plus a store where a result computed in a temporary must
 * also reach memory. The program then runs block by block, every instruction over a
 * block before the next block, all in one function per instruction set and element
 * type: the instruction's loop is a case of one switch, the loops of the unary, binary
 * and binary_scalar ops expanded from the op maps and xo_formulas.h (the same formulas as
 * cpu_elementwise.c's loops, so the same results) and five loops for the BLAS-like kinds
 * (scal, fill, axpy, axpby, copy, scale_by reduced to axpby, axpy, scale, fill, copy). A
 * step reads an operand from memory, or (from[a] >= 0) the result of an earlier step:
 * that result lives in its output operand's memory when it is stored and nothing stores
 * over it while it is still read, else in one of the thread's temporary blocks (slots,
 * reused once their value is dead). A result that is not stored (store = 0) never
 * reaches memory.
 *
 * Why this shape (xo_chain_cpu 15 big: the 8-op tanh chain over 4M floats, 2-core AMD
 * EPYC with AVX-512 shared with other builds, the two builds alternating): the former
 * runner called each op's own loop (cpu_elementwise.c, through its function table) per
 * step per block of 2048 elements and ran at 1.48-1.53x eager, 19.5-21.1 GB/s; this one
 * at 2.31-2.34x, 32.4-34.6 GB/s (47-49% of the eager ops' streaming rate), 1.0-1.3 ms
 * (50-64 GB/s) in the quietest moments. In cache one element of that chain costs
 * 0.33-0.38 ns on one core: half of it the tanh (one division per vector), the rest
 * about a cycle per vector for each other step (a load, the op and a store in L1). */
#include "cpu_internal.h"
#include "../common/xo_formulas.h"

#include <pthread.h>
#include <stdlib.h>

/* Elements per block. In cache, long blocks: the loop overhead of one instruction (about
 * 10 cycles) is spread over more vectors (1024 floats: 13-16% faster than 128 at 1K-64K
 * elements). Streaming from memory, short ones: every instruction's loads and stores of
 * memory come in small bursts between the others' work, and the pass runs 20-30% faster
 * with 128 than with 256-1024 (2M-8M floats, in-process A/B of xo_chain_cpu's chain).
 * The long ones while each operand fits in 4 MB. Full blocks run loops compiled for that
 * count (2-7% faster than the same loops with the count in a variable). */
#define BLOCK_CACHED 1024
#define BLOCK_STREAMED 128
#define STREAMED_BYTES ((size_t)4 << 20)
/* 0: as above; else every chain's block (xo_chain_cpu blocks' sweep; sizes other than
 * the two take the generic loops). */
size_t xo__cpu_chain_block = 0;
/* Shorter chains run op by op. While the operands stay in cache the ops alone stream
 * through L1 as a fused block does, so fusion saves nothing per element and costs its
 * setup: about 55 ns here (decoding the chain, and the plan's own path for a fused step),
 * against about 7 ns per op of a plan replaying ops. Measured (xo_chain_cpu 21 tiny: the
 * 8-op tanh chain, plan fused against plan op by op, 2-core AMD EPYC, medians of 21
 * rounds, three runs): 0.40x at 16 elements, 0.45 at 64, 0.58 at 256, 0.81 at 1024,
 * 0.85-0.89 at 2048, 0.93-0.97 at 4096, 1.11-1.15 at 8192, 1.20 at 16384, 1.40 at 65536.
 * (Fusion paid from 4096 while the chain's scal and axpy were OpenBLAS's, slower there.)
 * A variable only so that the bench can time both sides. */
size_t xo__cpu_chain_min_n = 8192;
/* Temporary blocks up to this size come from the caller's stack. */
#define XO_CHAIN_STACK 16384

/* Which operand each kind writes (XO_OP_MAP's `out`). */
#define OUT_(K, name, nargs, out, operands) out,
static const signed char out_arg[] = {XO_OP_MAP(OUT_)};
#undef OUT_

/* What an instruction computes: the unary, binary and binary_scalar ops (one code per
 * sub-op, their formulas from xo_formulas.h) and the BLAS-like kinds reduced to five
 * forms (scal with alpha == 0 is a fill of zeros, axpy with alpha == 0 a copy...). */
enum {
    I_UNARY = 0,
    I_BINARY = I_UNARY + XO_UNARY_OP_COUNT,
    I_BSCALAR = I_BINARY + XO_BINARY_OP_COUNT,
    I_AXPBY = I_BSCALAR + XO_BINARY_OP_COUNT, /* o = a x + b y */
    I_AXPY,                                   /* o = a x + y */
    I_SCALE,                                  /* o = x a */
    I_FILL,                                   /* o = a */
    I_COPY                                    /* o = x */
};

/* An operand of an instruction: memory (at element i0 of a block: mem + i0 * es) or one
 * of the thread's temporary blocks (slot >= 0). */
typedef struct ref {
    char *mem;
    int slot;
} ref;

/* One instruction: a step of the chain, or the store of a result computed in a slot. */
typedef struct insn {
    int code;
    ref x, y, o;
    double a, b;
} insn;

/* One run of a chain: where each step's result lives, and the program. */
typedef struct job {
    const xo_chain *c;
    size_t es, block; /* bytes per element, elements per block */
    int nslots, len;
    signed char slot[XO_CHAIN_MAX];   /* -1: in its output operand's memory */
    unsigned char copy[XO_CHAIN_MAX]; /* computed in a slot, then stored */
    insn prog[2 * XO_CHAIN_MAX];
    char *scratch; /* [chunk][slot][block] */
} job;

/* The loop of each instruction over one block of n elements: o may be x or y (element i
 * reads and writes only element i), which the pragma tells the vectoriser. */
#if defined(__clang__)
#define XO_ELEMENTWISE _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define XO_ELEMENTWISE _Pragma("GCC ivdep")
#else
#define XO_ELEMENTWISE
#endif
#define LOOP_(expr) \
    XO_ELEMENTWISE for (size_t i = 0; i < n; i++) o[i] = (expr); break;
#define UNARY_CASE_(NAME, ...) case I_UNARY + XO_##NAME: LOOP_(XO_F_##NAME(x[i]))
#define BINARY_CASE_(NAME) case I_BINARY + XO_##NAME: LOOP_(XO_F_##NAME(x[i], y[i]))
#define BSCALAR_CASE_(NAME) case I_BSCALAR + XO_##NAME: LOOP_(XO_F_##NAME(x[i], a))

/* The program over elements [b, e) of the chain, block by block: every instruction on a
 * block before the next block. */
#define CHAIN_PROGRAM(T, SUF, ATTR)                                                                   \
    typedef struct { /* an instruction with its places for one thread's temporaries */          \
        int code;                                                                                     \
        T a, b;                                                                                       \
        char *at[3];    /* x, y, o of the block at element i0: at[k] + i0 * step[k] */                \
        size_t step[3]; /* bytes per element in memory, 0 in a slot */                                \
    } placed_##SUF;                                                                                   \
    ATTR static inline __attribute__((always_inline)) void insn_##SUF(const placed_##SUF *in, size_t i0, \
                                                                      size_t n)                       \
    {                                                                                                 \
        typedef T xo_real __attribute__((unused)); /* the element type of xo_formulas.h */         \
        const T *x = (const T *)(in->at[0] + i0 * in->step[0]);                                       \
        const T *y = (const T *)(in->at[1] + i0 * in->step[1]);                                       \
        T *o = (T *)(in->at[2] + i0 * in->step[2]);                                                   \
        const T a = in->a, b = in->b;                                                                 \
        if (in->code == I_UNARY + XO_TANH && XO_CPU_TANH_LOOP_##SUF(x, o, n))                         \
            return;                                                                                   \
        switch (in->code) {                                                                           \
            XO_UNARY_OP_MAP(UNARY_CASE_)                                                              \
            XO_BINARY_OP_MAP(BINARY_CASE_)                                                            \
            XO_BINARY_OP_MAP(BSCALAR_CASE_)                                                           \
        case I_AXPBY: LOOP_(a * x[i] + b * y[i])                                                      \
        case I_AXPY: LOOP_(a * x[i] + y[i])                                                           \
        case I_SCALE: LOOP_(x[i] * a)                                                                 \
        case I_FILL: LOOP_(a)                                                                         \
        default: LOOP_(x[i]) /* I_COPY */                                                             \
        }                                                                                             \
    }                                                                                                 \
    ATTR static void program_##SUF(const job *j, char *regs, size_t b, size_t e)                       \
    {                                                                                                 \
        placed_##SUF p[2 * XO_CHAIN_MAX];                                                             \
        for (int s = 0; s < j->len; s++) {                                                            \
            const ref *r[3] = {&j->prog[s].x, &j->prog[s].y, &j->prog[s].o};                          \
            p[s].code = j->prog[s].code;                                                              \
            p[s].a = (T)j->prog[s].a;                                                                 \
            p[s].b = (T)j->prog[s].b;                                                                 \
            for (int k = 0; k < 3; k++) {                                                             \
                p[s].at[k] = r[k]->slot >= 0 ? regs + (size_t)r[k]->slot * j->block * sizeof(T) : r[k]->mem; \
                p[s].step[k] = r[k]->slot >= 0 ? 0 : sizeof(T);                                       \
            }                                                                                         \
        }                                                                                             \
        for (size_t i0 = b; i0 < e; i0 += j->block) {                                                 \
            size_t n = e - i0 < j->block ? e - i0 : j->block;                                         \
            if (n == BLOCK_CACHED)                                                                    \
                for (int s = 0; s < j->len; s++)                                                      \
                    insn_##SUF(&p[s], i0, BLOCK_CACHED);                                              \
            else if (n == BLOCK_STREAMED)                                                             \
                for (int s = 0; s < j->len; s++)                                                      \
                    insn_##SUF(&p[s], i0, BLOCK_STREAMED);                                            \
            else                                                                                      \
                for (int s = 0; s < j->len; s++)                                                      \
                    insn_##SUF(&p[s], i0, n);                                                         \
        }                                                                                             \
    }

XO_CPU_INSTANTIATE(CHAIN_PROGRAM)

typedef struct kernels {
    void (*program_f)(const job *, char *, size_t, size_t);
    void (*program_d)(const job *, char *, size_t, size_t);
} kernels;
#define TABLE(F, D) {program_##F, program_##D}

XO_CPU_KERNELS_SELECTED(kernels, TABLE)

static inline char *mem(const job *j, int k, int a)
{
    const xo_operand *o = &j->c->steps[k].op.arg[a];
    return (char *)o->host + o->off * j->es;
}

/* Step k's result. */
static inline ref result(const job *j, int k)
{
    if (j->slot[k] < 0)
        return (ref){mem(j, k, out_arg[j->c->steps[k].op.kind]), -1};
    return (ref){NULL, j->slot[k]};
}

/* Operand a of step k. */
static inline ref in(const job *j, int k, int a)
{
    int f = j->c->steps[k].from[a];
    return f >= 0 ? result(j, f) : (ref){mem(j, k, a), -1};
}

/* Step s as an instruction (and the store of its result when it is computed in a slot). */
static void decode(job *j, int s)
{
    const xo_op_desc *d = &j->c->steps[s].op;
    const double a = d->alpha, b = d->beta;
    insn *p = &j->prog[j->len++];
    *p = (insn){.o = result(j, s), .x = {NULL, -1}, .y = {NULL, -1}, .a = a, .b = b};
    switch (d->kind) {
    case XO_OP_UNARY: p->code = I_UNARY + d->subop; p->x = in(j, s, 0); break;
    case XO_OP_BINARY: p->code = I_BINARY + d->subop; p->x = in(j, s, 0); p->y = in(j, s, 1); break;
    case XO_OP_BINARY_SCALAR: p->code = I_BSCALAR + d->subop; p->x = in(j, s, 0); break;
    case XO_OP_SCAL: /* alpha == 0 writes zeros, whatever x held */
        p->code = a == 0 ? I_FILL : I_SCALE;
        p->x = in(j, s, 0);
        break;
    case XO_OP_FILL: p->code = I_FILL; break;
    case XO_OP_AXPY: /* BLAS: alpha == 0 leaves y, x is not read */
        p->code = a == 0 ? I_COPY : I_AXPY;
        p->x = in(j, s, a == 0 ? 1 : 0);
        p->y = in(j, s, 1);
        break;
    case XO_OP_AXPBY: /* beta == 0 never reads y, alpha == 0 never reads x */
        if (a == 0 && b == 0) {
            p->code = I_FILL;
            p->a = 0;
        } else if (b == 0 || a == 0) {
            p->code = I_SCALE;
            p->x = in(j, s, b == 0 ? 0 : 1);
            p->a = b == 0 ? a : b;
        } else {
            p->code = I_AXPBY;
            p->x = in(j, s, 0);
            p->y = in(j, s, 1);
        }
        break;
    case XO_OP_COPY: p->code = I_COPY; p->x = in(j, s, 0); break;
    default: { /* XO_OP_SCALE_BY: x *= s[0], the factor read whole */
        const char *sp = mem(j, s, 0);
        p->code = I_SCALE;
        p->x = in(j, s, 1);
        p->a = d->dtype == XO_F32 ? *(const float *)sp : *(const double *)sp;
        break;
    }
    }
    if (j->copy[s])
        j->prog[j->len++] = (insn){.code = I_COPY, .x = p->o, .o = {mem(j, s, out_arg[d->kind]), -1}, .y = {NULL, -1}};
}

static void run_blocks(void *arg, size_t b, size_t e, int chunk)
{
    const job *j = arg;
    char *regs = j->scratch + (size_t)chunk * (size_t)j->nslots * j->block * j->es;
    size_t n = j->c->n;
    b *= j->block;
    e = e * j->block < n ? e * j->block : n;
    if (j->c->dtype == XO_F32)
        k()->program_f(j, regs, b, e);
    else
        k()->program_d(j, regs, b, e);
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
        at[s] = mem(j, s, out_arg[c->steps[s].op.kind]);
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
    job j; /* not zeroed: decode() writes the len instructions used */
    j.c = c;
    j.es = c->dtype == XO_F32 ? sizeof(float) : sizeof(double);
    j.len = 0;
    j.block = c->n * j.es > STREAMED_BYTES ? BLOCK_STREAMED : BLOCK_CACHED;
    if (xo__cpu_chain_block)
        j.block = xo__cpu_chain_block >= 16 ? xo__cpu_chain_block / 16 * 16 : 16;
    assign_slots(&j);
    for (int st = 0; st < c->nsteps; st++)
        decode(&j, st);
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
