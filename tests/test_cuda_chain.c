/* The CUDA plugin's plan extras through its vtable, below the core (plugin.h):
 *   "xo_chain"  random element-wise chains of every step kind (from[] and store as the
 *               core sets them) against running the steps one after another with the
 *               reference loops of xo_test.h, in both precisions;
 *   "xo_graph"  work recorded between begin and end runs only when the graph is
 *               launched, once per launch.
 * Runs on the first CUDA device, which without a GPU is the stand-in driver and cuBLAS
 * (tests/cuda.cmake); exits 77 where there is none. With the argument "nographs" (the
 * stand-in driver built without graph entries) it checks that no "xo_graph" is offered. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <time.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cuda_internal.h"
#include "xo_test.h"

const xo_plugin *xo_plugin_cuda(void);

static xo_plugin_host k_host; /* xot_quiet_host, set in main */

static const xo_plugin *g_p;
static void *g_st;

/* ---- random chains ------------------------------------------------------------------ */

#define NBUF 5   /* vectors of n elements the steps use */
#define SBUF NBUF /* index of scale_by's one-element factor */

static const xo_op_kind k_kinds[] = {XO_OP_UNARY, XO_OP_BINARY, XO_OP_BINARY_SCALAR, XO_OP_SCAL, XO_OP_FILL,
                                     XO_OP_AXPY,  XO_OP_AXPBY,  XO_OP_COPY,          XO_OP_SCALE_BY};
#define NKINDS ((int)(sizeof k_kinds / sizeof k_kinds[0]))

/* Which buffer each operand of a step is (XO_OP_MAP order) and which operand it writes. */
typedef struct step_plan {
    int buf[3];
    int out;
} step_plan;

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static int pick(int n)
{
    return (int)xot_uniform(&g_rng, 0, n) % n;
}

/* A random step of kind k: operands, sub-op, scalars. Unary ops that leave the real line
 * on negative inputs (sqrt, rsqrt, log) take abs first in the reference too: every value
 * stays a number, so agreement means something. */
static void random_step(xo_op_kind k, xo_op_desc *op, step_plan *sp)
{
    memset(op, 0, sizeof *op);
    op->kind = k;
    op->narg = 2;
    const double scalars[] = {0.5, -1.25, 2, 0, 0.75};
    op->alpha = scalars[pick(5)];
    op->beta = scalars[pick(5)];
    op->inc[0] = op->inc[1] = 1;
    int a = pick(NBUF), b = pick(NBUF), c = pick(NBUF);
    switch (k) {
    case XO_OP_UNARY: {
        /* from the op map: the ops whose domain takes negatives and that are finite at 0,
         * so any value a chain makes stays a number */
        int safe[XO_UNARY_OP_COUNT], nsafe = 0;
        for (int u = 0; u < XO_UNARY_OP_COUNT; u++) {
            double zero = 0, at0;
            xot_ref_dunary((xo_unary_op)u, 1, &zero, &at0);
            if (xot_unary_input(u, 0) < 0 && isfinite(at0)) safe[nsafe++] = u;
        }
        op->subop = safe[pick(nsafe)];
        *sp = (step_plan){{a, c, -1}, 1};
        break;
    }
    case XO_OP_BINARY:
        op->subop = pick(XO_BINARY_OP_COUNT);
        if (op->subop == XO_DIV) op->subop = XO_MUL; /* no division by values near 0 */
        op->narg = 3;
        *sp = (step_plan){{a, b, c}, 2};
        break;
    case XO_OP_BINARY_SCALAR:
        op->subop = pick(XO_BINARY_OP_COUNT);
        if (op->subop == XO_DIV) op->alpha = 4; /* a / 4 */
        *sp = (step_plan){{a, c, -1}, 1};
        break;
    case XO_OP_SCAL: op->narg = 1; *sp = (step_plan){{a, -1, -1}, 0}; break;
    case XO_OP_FILL: op->narg = 1; *sp = (step_plan){{a, -1, -1}, 0}; break;
    case XO_OP_AXPY:
        if (op->alpha == 0) op->alpha = 1.5; /* axpy by 0 never reaches a plugin */
        *sp = (step_plan){{a, c, -1}, 1};
        break;
    case XO_OP_AXPBY: *sp = (step_plan){{a, c, -1}, 1}; break;
    case XO_OP_COPY: *sp = (step_plan){{a, c, -1}, 1}; break;
    default: /* SCALE_BY: s, x */ *sp = (step_plan){{SBUF, c, -1}, 1}; break;
    }
}

/* Step k on host copies, one op after another (the reference loops of xo_test.h). */
#define REF_STEP(T, P)                                                                          \
    static void ref_step_##P(const xo_op_desc *op, const step_plan *sp, T **h, size_t n)        \
    {                                                                                           \
        T *x = h[sp->buf[0]], *y = sp->buf[1] >= 0 ? h[sp->buf[1]] : NULL;                      \
        switch (op->kind) {                                                                     \
        case XO_OP_UNARY: xot_ref_##P##unary((xo_unary_op)op->subop, n, x, y); break;           \
        case XO_OP_BINARY: xot_ref_##P##binary((xo_binary_op)op->subop, n, x, y, h[sp->buf[2]]); break; \
        case XO_OP_BINARY_SCALAR:                                                               \
            xot_ref_##P##binary_scalar((xo_binary_op)op->subop, n, x, (T)op->alpha, y);        \
            break;                                                                              \
        case XO_OP_SCAL: xot_ref_##P##scal(n, (T)op->alpha, x, 1); break;                       \
        case XO_OP_FILL: xot_ref_##P##fill(n, (T)op->alpha, x, 1); break;                       \
        case XO_OP_AXPY: xot_ref_##P##axpy(n, (T)op->alpha, x, 1, y, 1); break;                 \
        case XO_OP_AXPBY: xot_ref_##P##axpby(n, (T)op->alpha, x, 1, (T)op->beta, y, 1); break;  \
        case XO_OP_COPY: xot_ref_##P##copy(n, x, 1, y, 1); break;                               \
        default: {                                                                              \
            const T s = x[0];                                                                   \
            for (size_t i = 0; i < n; i++) y[i] *= s;                                           \
        }                                                                                       \
        }                                                                                       \
    }
REF_STEP(float, s)
REF_STEP(double, d)

typedef struct chain_case {
    xo_dtype dt;
    size_t n;
    int nsteps;
    xo_chain_step steps[XO_CHAIN_MAX];
    step_plan sp[XO_CHAIN_MAX];
    xo_plugin_mem *mem[NBUF + 1];
    void *host[NBUF + 1]; /* the reference's copies */
} chain_case;

static size_t esize_of(xo_dtype dt)
{
    return dt == XO_F64 ? sizeof(double) : sizeof(float);
}

/* Device buffers with random values in [-2, 2] and the same in the reference's copies. */
static void case_buffers(chain_case *c, uint64_t seed)
{
    const size_t es = esize_of(c->dt);
    for (int b = 0; b <= NBUF; b++) {
        size_t len = b == SBUF ? 1 : c->n;
        c->host[b] = malloc(len * es);
        assert_non_null(c->host[b]);
        if (c->dt == XO_F64) xot_fill_d(c->host[b], len, seed + (uint64_t)b, -2, 2);
        else xot_fill_f(c->host[b], len, seed + (uint64_t)b, -2, 2);
        assert_int_equal(g_p->mem_alloc(g_st, 0, len * es, &c->mem[b]), XO_OK);
        assert_int_equal(g_p->upload(g_st, 0, c->mem[b], 0, c->host[b], len * es), XO_OK);
    }
}

static void case_free(chain_case *c)
{
    for (int b = 0; b <= NBUF; b++) {
        g_p->mem_free(g_st, 0, c->mem[b]);
        free(c->host[b]);
    }
}

/* A random chain as the core builds them: from[a] names the last earlier step that wrote
 * operand a's buffer; a step's result is not stored (store 0) only where a later step
 * overwrites the same buffer, so nothing outside the chain can see the difference. */
static void random_chain(chain_case *c)
{
    int last_writer[NBUF + 1];
    for (int b = 0; b <= NBUF; b++) last_writer[b] = -1;
    for (int k = 0; k < c->nsteps; k++) {
        xo_chain_step *s = &c->steps[k];
        memset(s, 0, sizeof *s);
        random_step(k_kinds[pick(NKINDS)], &s->op, &c->sp[k]);
        s->op.dtype = c->dt;
        s->op.n = c->n;
        for (int a = 0; a < XO_MAX_ARGS; a++) s->from[a] = -1;
        for (int a = 0; a < s->op.narg; a++) {
            const int b = c->sp[k].buf[a];
            s->op.arg[a] = (xo_operand){.mem = c->mem[b], .off = 0};
            s->from[a] = (signed char)last_writer[b];
        }
        s->store = 1;
        const int out = c->sp[k].buf[c->sp[k].out];
        if (last_writer[out] >= 0 && pick(2)) c->steps[last_writer[out]].store = 0; /* overwritten here */
        last_writer[out] = k;
    }
}

static void check_case(chain_case *c, const char *what)
{
    const size_t es = esize_of(c->dt);
    void *got = malloc(c->n * es);
    assert_non_null(got);
    for (int b = 0; b < NBUF; b++) {
        assert_int_equal(g_p->download(g_st, 0, c->mem[b], 0, got, c->n * es), XO_OK);
        const long bad = c->dt == XO_F64 ? xot_first_mismatch_d(got, c->host[b], c->n, 1e-10)
                                         : xot_first_mismatch_f(got, c->host[b], c->n, 1e-4);
        if (bad >= 0) {
            const double g = c->dt == XO_F64 ? ((double *)got)[bad] : ((float *)got)[bad];
            const double w = c->dt == XO_F64 ? ((double *)c->host[b])[bad] : ((float *)c->host[b])[bad];
            free(got);
            fail_msg("%s (%s, n %zu, %d steps): buffer %d [%ld] got %.9g want %.9g", what,
                     c->dt == XO_F64 ? "f64" : "f32", c->n, c->nsteps, b, bad, g, w);
        }
    }
    free(got);
}

static void run_reference(chain_case *c)
{
    for (int k = 0; k < c->nsteps; k++) {
        if (c->dt == XO_F64) ref_step_d(&c->steps[k].op, &c->sp[k], (double **)c->host, c->n);
        else ref_step_s(&c->steps[k].op, &c->sp[k], (float **)c->host, c->n);
    }
}

/* The stand-in driver's count of launches of compiled (PTX) kernels; -1 on a real driver. */
static long mock_generated(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void *sym = lib ? dlsym(lib, "xo_mock_cuda_generated_launches") : NULL;
    if (lib) dlclose(lib);
    if (!sym) return -1;
    long (*fn)(void);
    memcpy(&fn, &sym, sizeof fn);
    return fn();
}

static const xo_chain_runner *chain_runner(void)
{
    assert_non_null(g_p->get_proc_address);
    const xo_chain_runner *r = g_p->get_proc_address("xo_chain");
    assert_non_null(r);
    return r;
}

static void test_random_chains(void **state)
{
    (void)state;
    const xo_chain_runner *r = chain_runner();
    const size_t sizes[] = {1, 7, 1000, 70001};
    int kinds_seen[NKINDS] = {0}, unstored = 0, from_register = 0;
    const long gen0 = mock_generated();
    for (int t = 0; t < 120; t++) {
        xo__cuda_nvrtc_enabled = t >= 60; /* the interpreter, then NVRTC's kernels where it is present */
        chain_case c = {.dt = t % 2 ? XO_F64 : XO_F32, .n = sizes[(t / 2) % 4], .nsteps = 2 + pick(XO_CHAIN_MAX - 1)};
        case_buffers(&c, 1000 + (uint64_t)t * 16);
        random_chain(&c);
        for (int k = 0; k < c.nsteps; k++) {
            for (int i = 0; i < NKINDS; i++) kinds_seen[i] += c.steps[k].op.kind == k_kinds[i];
            unstored += !c.steps[k].store;
            for (int a = 0; a < c.steps[k].op.narg; a++) from_register += c.steps[k].from[a] >= 0;
        }
        xo_chain chain = {.dtype = c.dt, .n = c.n, .nsteps = c.nsteps, .steps = c.steps};
        assert_int_equal(r->supports(g_st, 0, &chain), 1);
        if (r->run(g_st, 0, &chain, XO_NO_TOKEN) != XO_OK) fail_msg("chain run: %s", xot_host_error);
        run_reference(&c);
        check_case(&c, "random chain");
        case_free(&c);
    }
    xo__cuda_nvrtc_enabled = 1;
    for (int i = 0; i < NKINDS; i++)
        if (kinds_seen[i] == 0) fail_msg("step kind %d never drawn", (int)k_kinds[i]);
    assert_true(unstored > 0 && from_register > 0);
    /* On the stand-in with NVRTC present, the second half ran compiled kernels. */
    if (mock_generated() >= 0 && xo__cuda_nvrtc(NULL)) assert_int_equal(mock_generated() - gen0, 60);
}

/* store = 0 leaves memory alone, and a later step reading that buffer through from[]
 * gets the step's value, not memory's. */
static void test_unstored_and_from(void **state)
{
    (void)state;
    const xo_chain_runner *r = chain_runner();
    chain_case c = {.dt = XO_F32, .n = 300, .nsteps = 2};
    case_buffers(&c, 77);
    /* t = neg(x) not stored into buffer 1; y(2) = t * x */
    xo_chain_step *s = c.steps;
    memset(s, 0, 2 * sizeof *s);
    s[0].op = (xo_op_desc){.kind = XO_OP_UNARY, .dtype = XO_F32, .subop = XO_NEG, .n = c.n, .narg = 2};
    s[0].op.arg[0] = (xo_operand){.mem = c.mem[0]};
    s[0].op.arg[1] = (xo_operand){.mem = c.mem[1]};
    s[0].from[0] = s[0].from[1] = -1;
    s[1].op = (xo_op_desc){.kind = XO_OP_BINARY, .dtype = XO_F32, .subop = XO_MUL, .n = c.n, .narg = 3};
    s[1].op.arg[0] = (xo_operand){.mem = c.mem[1]};
    s[1].op.arg[1] = (xo_operand){.mem = c.mem[0]};
    s[1].op.arg[2] = (xo_operand){.mem = c.mem[2]};
    s[1].from[0] = 0;
    s[1].from[1] = s[1].from[2] = -1;
    s[1].store = 1;
    xo_chain chain = {.dtype = XO_F32, .n = c.n, .nsteps = 2, .steps = s};
    assert_int_equal(r->run(g_st, 0, &chain, XO_NO_TOKEN), XO_OK);
    float *x = c.host[0], *want2 = c.host[2];
    for (size_t i = 0; i < c.n; i++) want2[i] = -x[i] * x[i]; /* buffer 1 keeps its values */
    check_case(&c, "unstored step read through from[]");
    case_free(&c);
}

/* Chains the interpreter does not take are declined, not run wrongly. */
static void test_declines(void **state)
{
    (void)state;
    const xo_chain_runner *r = chain_runner();
    xo_chain_step s[2];
    memset(s, 0, sizeof s);
    for (int k = 0; k < 2; k++) {
        s[k].op = (xo_op_desc){.kind = XO_OP_UNARY, .dtype = XO_F32, .subop = XO_NEG, .n = 8, .narg = 2};
        s[k].from[0] = s[k].from[1] = -1;
        s[k].store = 1;
    }
    xo_chain chain = {.dtype = XO_F32, .n = 8, .nsteps = 2, .steps = s};
    assert_int_equal(r->supports(g_st, 0, &chain), 1);
    s[1].op.kind = XO_OP_GEMM; /* not element-wise */
    assert_int_equal(r->supports(g_st, 0, &chain), 0);
    s[1].op.kind = XO_OP_UNARY;
    s[1].from[0] = 1; /* a step reading its own result */
    assert_int_equal(r->supports(g_st, 0, &chain), 0);
    s[1].from[0] = -1;
    chain.nsteps = XO_CUDA_CHAIN_STEPS + 1;
    assert_int_equal(r->supports(g_st, 0, &chain), 0);
    assert_int_equal(r->run(g_st, 0, &chain, XO_NO_TOKEN), XO_ERR_UNSUPPORTED);
}

/* ---- graphs ---------------------------------------------------------------------------- */

/* The stand-in driver's counters (captures, instantiations, launches, live graphs); 0
 * on a real driver. */
static int mock_counts(long out[4])
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void *sym = lib ? dlsym(lib, "xo_mock_cuda_graph_counts") : NULL;
    if (lib) dlclose(lib);
    if (!sym) return 0;
    void (*fn)(long *);
    memcpy(&fn, &sym, sizeof fn);
    fn(out);
    return 1;
}

static void test_graph_records_and_replays(void **state)
{
    (void)state;
    const xo_graph_runner *gr = g_p->get_proc_address("xo_graph");
    assert_non_null(gr);
    long before[4] = {0}, after[4] = {0};
    const int mock = mock_counts(before);
    const size_t n = 1000;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *got = malloc(n * sizeof *got);
    assert_true(x && y && got);
    xot_fill_d(x, n, 5, -1, 1);
    xot_fill_d(y, n, 6, -1, 1);
    xo_plugin_mem *mx = NULL, *my = NULL;
    assert_int_equal(g_p->mem_alloc(g_st, 0, n * sizeof *x, &mx), XO_OK);
    assert_int_equal(g_p->mem_alloc(g_st, 0, n * sizeof *y, &my), XO_OK);
    assert_int_equal(g_p->upload(g_st, 0, mx, 0, x, n * sizeof *x), XO_OK);
    assert_int_equal(g_p->upload(g_st, 0, my, 0, y, n * sizeof *y), XO_OK);
    assert_int_equal(g_p->supports(g_st, 0, &(xo_op_desc){.kind = XO_OP_AXPY, .dtype = XO_F64}), 1);

    /* y += 2 x (cuBLAS), then y = tanh(y) (our kernel): recorded, not run. */
    xo_op_desc axpy = {.kind = XO_OP_AXPY, .dtype = XO_F64, .n = n, .inc = {1, 1}, .alpha = 2, .narg = 2};
    axpy.arg[0] = (xo_operand){.mem = mx};
    axpy.arg[1] = (xo_operand){.mem = my};
    xo_op_desc act = {.kind = XO_OP_UNARY, .dtype = XO_F64, .subop = XO_TANH, .n = n, .narg = 2};
    act.arg[0] = act.arg[1] = (xo_operand){.mem = my};
    assert_int_equal(gr->begin(g_st, 0), XO_OK);
    assert_int_equal(g_p->run(g_st, 0, &axpy, XO_NO_TOKEN), XO_OK);
    assert_int_equal(g_p->run(g_st, 0, &act, XO_NO_TOKEN), XO_OK);
    void *graph = NULL;
    if (gr->end(g_st, 0, &graph) != XO_OK) fail_msg("graph end: %s", xot_host_error);
    assert_non_null(graph);
    assert_int_equal(g_p->download(g_st, 0, my, 0, got, n * sizeof *got), XO_OK);
    assert_memory_equal(got, y, n * sizeof *y); /* nothing ran yet */

    for (int launch = 0; launch < 3; launch++) {
        assert_int_equal(gr->launch(g_st, 0, graph), XO_OK);
        for (size_t i = 0; i < n; i++) y[i] = tanh(y[i] + 2 * x[i]);
    }
    assert_int_equal(g_p->finish(g_st, 0), XO_OK);
    assert_int_equal(g_p->download(g_st, 0, my, 0, got, n * sizeof *got), XO_OK);
    xot_assert_close_d(got, y, n, "three launches of the graph");
    gr->destroy(g_st, 0, graph);
    if (mock) {
        mock_counts(after);
        assert_int_equal(after[0] - before[0], 1); /* one capture */
        assert_int_equal(after[2] - before[2], 3); /* three launches */
        assert_int_equal(after[3], before[3]);     /* destroyed */
    }
    /* A second begin while recording is refused; end still ends the first. */
    assert_int_equal(gr->begin(g_st, 0), XO_OK);
    assert_int_not_equal(gr->begin(g_st, 0), XO_OK);
    assert_int_equal(gr->end(g_st, 0, &graph), XO_OK);
    gr->destroy(g_st, 0, graph);
    g_p->mem_free(g_st, 0, mx);
    g_p->mem_free(g_st, 0, my);
    free(x);
    free(y);
    free(got);
}

/* A capture broken by something a stream cannot record (a download) fails at end and
 * leaves the device usable. */
static void test_graph_broken_capture(void **state)
{
    (void)state;
    const xo_graph_runner *gr = g_p->get_proc_address("xo_graph");
    assert_non_null(gr);
    float v[4] = {1, 2, 3, 4}, back[4];
    xo_plugin_mem *m = NULL;
    assert_int_equal(g_p->mem_alloc(g_st, 0, sizeof v, &m), XO_OK);
    assert_int_equal(g_p->upload(g_st, 0, m, 0, v, sizeof v), XO_OK);
    assert_int_equal(gr->begin(g_st, 0), XO_OK);
    assert_int_not_equal(g_p->download(g_st, 0, m, 0, back, sizeof back), XO_OK);
    void *graph = (void *)1;
    assert_int_not_equal(gr->end(g_st, 0, &graph), XO_OK);
    assert_null(graph);
    assert_int_equal(g_p->download(g_st, 0, m, 0, back, sizeof back), XO_OK);
    assert_memory_equal(back, v, sizeof v);
    g_p->mem_free(g_st, 0, m);
}

/* While one thread records on the device, another thread's op waits for the end of the
 * recording and then runs (it is not recorded into the first thread's graph). */
typedef struct other_op {
    xo_op_desc op;
    _Atomic int done;
    xo_status st;
} other_op;

static void *run_other(void *arg)
{
    other_op *o = arg;
    o->st = g_p->run(g_st, 0, &o->op, XO_NO_TOKEN);
    if (o->st == XO_OK) o->st = g_p->finish(g_st, 0);
    o->done = 1;
    return NULL;
}

static void test_graph_other_thread_waits(void **state)
{
    (void)state;
    const xo_graph_runner *gr = g_p->get_proc_address("xo_graph");
    assert_non_null(gr);
    float a[64], b[64], got[64];
    for (int i = 0; i < 64; i++) a[i] = b[i] = (float)i;
    xo_plugin_mem *ma = NULL, *mb = NULL;
    assert_int_equal(g_p->mem_alloc(g_st, 0, sizeof a, &ma), XO_OK);
    assert_int_equal(g_p->mem_alloc(g_st, 0, sizeof b, &mb), XO_OK);
    assert_int_equal(g_p->upload(g_st, 0, ma, 0, a, sizeof a), XO_OK);
    assert_int_equal(g_p->upload(g_st, 0, mb, 0, b, sizeof b), XO_OK);
    xo_op_desc neg_a = {.kind = XO_OP_UNARY, .dtype = XO_F32, .subop = XO_NEG, .n = 64, .narg = 2};
    neg_a.arg[0] = neg_a.arg[1] = (xo_operand){.mem = ma};
    other_op other = {.op = {.kind = XO_OP_UNARY, .dtype = XO_F32, .subop = XO_SQUARE, .n = 64, .narg = 2}};
    other.op.arg[0] = other.op.arg[1] = (xo_operand){.mem = mb};

    assert_int_equal(gr->begin(g_st, 0), XO_OK);
    assert_int_equal(g_p->run(g_st, 0, &neg_a, XO_NO_TOKEN), XO_OK);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, run_other, &other), 0);
    nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    assert_int_equal(other.done, 0); /* held back while this thread records */
    void *graph = NULL;
    assert_int_equal(gr->end(g_st, 0, &graph), XO_OK);
    pthread_join(t, NULL);
    assert_int_equal(other.st, XO_OK);
    assert_int_equal(g_p->download(g_st, 0, mb, 0, got, sizeof got), XO_OK);
    for (int i = 0; i < 64; i++) assert_true(got[i] == b[i] * b[i]); /* it ran, once */
    assert_int_equal(gr->launch(g_st, 0, graph), XO_OK);
    assert_int_equal(g_p->download(g_st, 0, mb, 0, got, sizeof got), XO_OK);
    for (int i = 0; i < 64; i++) assert_true(got[i] == b[i] * b[i]); /* not in the graph */
    assert_int_equal(g_p->download(g_st, 0, ma, 0, got, sizeof got), XO_OK);
    for (int i = 0; i < 64; i++) assert_true(got[i] == -a[i]);
    gr->destroy(g_st, 0, graph);
    g_p->mem_free(g_st, 0, ma);
    g_p->mem_free(g_st, 0, mb);
}

static void test_no_graph_entries(void **state)
{
    (void)state;
    assert_null(g_p->get_proc_address("xo_graph"));
    assert_non_null(g_p->get_proc_address("xo_chain")); /* chains need no graph entries */
    assert_null(g_p->get_proc_address("xo_no_such_extra"));
}

static int setup(void **state)
{
    (void)state;
    g_p = xo_plugin_cuda();
    return xot_plugin_open(g_p, &k_host, &g_st);
}

static int teardown(void **state)
{
    (void)state;
    g_p->shutdown(g_st);
    return 0;
}

int main(int argc, char **argv)
{
    k_host = xot_quiet_host("cuda");
    int skip = xot_plugin_skip_without(xo_plugin_cuda(), &k_host, "CUDA device (real or stand-in)");
    if (skip) return skip;
    if (argc > 1 && strcmp(argv[1], "nographs") == 0) {
        const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_graph_entries)};
        return cmocka_run_group_tests(tests, setup, teardown);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_chains),
        cmocka_unit_test(test_unstored_and_from),
        cmocka_unit_test(test_declines),
        cmocka_unit_test(test_graph_records_and_replays),
        cmocka_unit_test(test_graph_broken_capture),
        cmocka_unit_test(test_graph_other_thread_waits),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
