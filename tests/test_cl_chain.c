/* The OpenCL plugin's "xo_chain" extra (plugins/opencl/cl_chain.c) through its own vtable,
 * below the core, on the first OpenCL device (exit 77 without one):
 *   - random chains (fixed seeds) covering every step kind and sub-op, with fused-away
 *     intermediates (store 0), from[] links, in-place steps, operands that share a
 *     cl_mem at other offsets, scale_by's factor in a buffer that other steps use; float,
 *     and double where the device has it; each against a plain C reference that runs the
 *     steps one after another over whole arrays; each run again with other scalars, n and
 *     data, which must reuse the kernel (no build);
 *   - BLAS rules (NaN in what scal by 0, axpby with alpha or beta 0 and fill must not
 *     read does not survive) and bit-exact copy and fill;
 *   - the "compile" fault: supports() == -1 once, the failure remembered, run() refused;
 *     another context then builds the shape, a third loads it from the disk cache;
 *   - shapes the plugin must refuse (supports() == 0, run() an error, nothing built);
 *   - four threads asking for one new shape at once: one build, every answer 1.
 * Few distinct shapes (each is a compile on PoCL); small n, so it also runs under Oclgrind
 * (tests/oclgrind.sh). Usage: test_cl_chain [ignored]. */
#include "cl_testing.h"
#include "xo_test.h"

#include <crossover/plugin.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const xo_plugin *xo_plugin_opencl(void);

/* ---- a stand-in for the core's host services -------------------------------------------- */

static xo_plugin_host g_host; /* xo_test.c's quiet host, set in main */

static const xo_plugin *g_p;
static const xo_chain_runner *g_run;
static void *g_st; /* one plugin state (one set of cl_contexts) for the whole program */
static int g_fp64;
static xo_dtype g_dt;

static uint64_t builds(void) /* programs built or loaded, failed included */
{
    xo__cl_counters c;
    xo__cl_counters_get(&c);
    return c.builds_from_source + c.cache_hits + c.build_failures;
}

/* ---- buffers: NB device buffers of g_len elements, mirrored on the host in double ------ */

enum { NB = 5, NMAX = 300, LEN = 2 * NMAX + 8 };
static xo_plugin_mem *g_mem[NB];
static void *g_mem_st;           /* the state that holds them */
static size_t g_len;             /* their length: 2n + 4 for a chain of n (slot n + 4 ends there: Oclgrind sees overruns) */
static double g_host_v[NB][LEN]; /* the reference's memory, values the dtype holds */
static unsigned char g_steep[NB][LEN]; /* the reference went through a steep place there */

static size_t esize(void) { return g_dt == XO_F64 ? sizeof(double) : sizeof(float); }
static double round_dt(double v) { return g_dt == XO_F64 ? v : (double)(float)v; }

static void free_all(void)
{
    if (!g_mem_st) return;
    for (int b = 0; b < NB; b++) g_p->mem_free(g_mem_st, 0, g_mem[b]);
    g_mem_st = NULL;
}

/* Fresh buffers on st for chains of n elements (the earlier ones freed). */
static void alloc_all(void *st, size_t n)
{
    free_all();
    g_len = 2 * n + 4;
    assert_true(g_len <= LEN);
    for (int b = 0; b < NB; b++) assert_int_equal(g_p->mem_alloc(st, 0, g_len * esize(), &g_mem[b]), XO_OK);
    g_mem_st = st;
}

static void upload_all(void *st)
{
    unsigned char raw[LEN * sizeof(double)];
    for (int b = 0; b < NB; b++) {
        for (size_t i = 0; i < g_len; i++) {
            if (g_dt == XO_F64) ((double *)raw)[i] = g_host_v[b][i];
            else ((float *)raw)[i] = (float)g_host_v[b][i];
        }
        assert_int_equal(g_p->upload(st, 0, g_mem[b], 0, raw, g_len * esize()), XO_OK);
    }
}

/* Buffer b from the device, as doubles (and its raw bytes in *raw when given). */
static void download(void *st, int b, double *out, unsigned char *raw)
{
    unsigned char tmp[LEN * sizeof(double)];
    assert_int_equal(g_p->download(st, 0, g_mem[b], 0, tmp, g_len * esize()), XO_OK);
    for (size_t i = 0; i < g_len; i++) out[i] = g_dt == XO_F64 ? ((double *)tmp)[i] : (double)((float *)tmp)[i];
    if (raw) memcpy(raw, tmp, g_len * esize());
}

/* ---- chains as the test describes them ------------------------------------------------- */

/* An operand: buffer b at element offset off. */
typedef struct loc {
    int b;
    size_t off;
} loc;

typedef struct tstep {
    xo_op_kind kind;
    int subop;
    loc arg[3];
    int from[3];
    int store;
    double alpha, beta;
} tstep;

static int nargs_of(xo_op_kind k)
{
    switch (k) {
    case XO_OP_BINARY: return 3;
    case XO_OP_SCAL: case XO_OP_FILL: return 1;
    default: return 2;
    }
}
static int out_of(xo_op_kind k)
{
    switch (k) {
    case XO_OP_BINARY: return 2;
    case XO_OP_SCAL: case XO_OP_FILL: return 0;
    default: return 1;
    }
}

static void to_chain(const tstep *t, int nsteps, size_t n, xo_chain_step *cs, xo_chain *c)
{
    memset(cs, 0, sizeof *cs * (size_t)nsteps);
    for (int k = 0; k < nsteps; k++) {
        xo_op_desc *op = &cs[k].op;
        op->kind = t[k].kind;
        op->dtype = g_dt;
        op->subop = t[k].subop;
        op->n = n;
        op->inc[0] = op->inc[1] = 1;
        op->alpha = t[k].alpha;
        op->beta = t[k].beta;
        op->narg = nargs_of(t[k].kind);
        for (int a = 0; a < XO_MAX_ARGS; a++) cs[k].from[a] = -1;
        for (int a = 0; a < op->narg; a++) {
            op->arg[a].mem = g_mem[t[k].arg[a].b];
            op->arg[a].off = t[k].arg[a].off;
            cs[k].from[a] = (signed char)t[k].from[a];
        }
        cs[k].store = (unsigned char)t[k].store;
    }
    *c = (xo_chain){.dtype = g_dt, .n = n, .nsteps = nsteps, .steps = cs};
}

#include "xo_test_formulas.h"

#define REF_UNARY_(NAME, ...) case XO_##NAME: return XO_F_##NAME(x);
#define REF_BINARY_(NAME) case XO_##NAME: return XO_F_##NAME(x, y);
#define REF_STEP(T)                                                                                  \
    static T ref_unary_##T(int op, T x)                                                              \
    {                                                                                                \
        typedef T xo_real __attribute__((unused));                                                   \
        switch (op) { XO_UNARY_OP_MAP(REF_UNARY_) default: return x; }                               \
    }                                                                                                \
    static T ref_binary_##T(int op, T x, T y)                                                        \
    {                                                                                                \
        switch (op) { XO_BINARY_OP_MAP(REF_BINARY_) default: return x; }                             \
    }                                                                                                \
    static T ref_step_##T(const tstep *t, T x, T y, T s)                                             \
    {                                                                                                \
        const T alpha = (T)t->alpha, beta = (T)t->beta;                                              \
        switch (t->kind) {                                                                           \
        case XO_OP_UNARY: return ref_unary_##T(t->subop, x);                                         \
        case XO_OP_BINARY: return ref_binary_##T(t->subop, x, y);                                    \
        case XO_OP_BINARY_SCALAR: return ref_binary_##T(t->subop, x, alpha);                         \
        case XO_OP_SCAL: return alpha == 0 ? 0 : alpha * x;                                          \
        case XO_OP_FILL: return alpha;                                                               \
        case XO_OP_AXPY: return alpha * x + y;                                                       \
        case XO_OP_AXPBY:                                                                            \
            return alpha == 0 ? (beta != 0 ? beta * y : 0) : (beta != 0 ? alpha * x + beta * y : alpha * x); \
        case XO_OP_COPY: return x;                                                                   \
        default: return x * s; /* SCALE_BY */                                                        \
        }                                                                                            \
    }
REF_STEP(float)
REF_STEP(double)

/* Whether step s is steep at its inputs: a unary op infinite at 0 (1/x, rsqrt, log) or a
 * division, with its input within 1/4 of 0, the hole the op map's domains leave out.
 * There a last-place difference in the input is any difference in the output, so a value
 * that went through one is not compared. */
static int steep(const tstep *s, double x, double y)
{
    if (s->kind == XO_OP_UNARY) return !isfinite(ref_unary_double(s->subop, 0)) && fabs(x) < 0.25;
    if (s->kind == XO_OP_BINARY && s->subop == XO_DIV) return fabs(y) < 0.25;
    return 0;
}

/* The chain run op by op over whole arrays on g_host_v: step k's value V[k][i] from its
 * operands (an earlier step's values where from[] says, else memory), stored where
 * store says. Reads what the op's rules say it reads (an unread NaN does not matter).
 * g_steep marks the values that went through a steep place (steep()). */
static void reference(const tstep *t, int nsteps, size_t n)
{
    static double V[XO_CHAIN_MAX][NMAX];
    static unsigned char S[XO_CHAIN_MAX][NMAX];
    memset(g_steep, 0, sizeof g_steep);
    for (int k = 0; k < nsteps; k++) {
        const tstep *s = &t[k];
        const int nargs = nargs_of(s->kind), out = out_of(s->kind);
        for (size_t i = 0; i < n; i++) {
            double in[3] = {0, 0, 0};
            S[k][i] = 0;
            for (int a = 0; a < nargs; a++) {
                if (s->kind == XO_OP_SCALE_BY && a == 0) {
                    in[a] = g_host_v[s->arg[0].b][s->arg[0].off];
                    S[k][i] |= g_steep[s->arg[0].b][s->arg[0].off];
                } else if (s->from[a] >= 0) {
                    in[a] = V[s->from[a]][i];
                    S[k][i] |= S[s->from[a]][i];
                } else {
                    in[a] = g_host_v[s->arg[a].b][s->arg[a].off + i];
                    S[k][i] |= g_steep[s->arg[a].b][s->arg[a].off + i];
                }
            }
            double x = in[0], y = in[1], f = 0;
            if (s->kind == XO_OP_SCALE_BY) x = in[1], f = in[0];
            if (s->kind == XO_OP_FILL) x = 0, S[k][i] = 0;
            S[k][i] |= (unsigned char)steep(s, x, y);
            V[k][i] = g_dt == XO_F64 ? ref_step_double(s, x, y, f) : (double)ref_step_float(s, (float)x, (float)y, (float)f);
        }
        if (s->store)
            for (size_t i = 0; i < n; i++) {
                g_host_v[s->arg[out].b][s->arg[out].off + i] = V[k][i];
                g_steep[s->arg[out].b][s->arg[out].off + i] = S[k][i];
            }
    }
}

/* Run the chain on the device and compare every buffer, whole, with the reference. */
static void run_and_check(const tstep *t, int nsteps, size_t n, const char *what)
{
    xo_chain_step cs[XO_CHAIN_MAX];
    xo_chain c;
    alloc_all(g_st, n);
    to_chain(t, nsteps, n, cs, &c);
    upload_all(g_st);
    assert_int_equal(g_run->supports(g_st, 0, &c), 1);
    assert_int_equal(g_run->run(g_st, 0, &c, 7), XO_OK);
    reference(t, nsteps, n);
    for (int b = 0; b < NB; b++) {
        double got[LEN];
        download(g_st, b, got, NULL);
        for (size_t j = 0; j < g_len; j++)
            if (g_steep[b][j]) got[j] = g_host_v[b][j]; /* not compared: see steep() */
        long i = xot_first_mismatch_d(got, g_host_v[b], g_len, g_dt == XO_F64 ? 1e-9 : 2e-4);
        if (i >= 0)
            fail_msg("%s (%s, n %zu): buffer %d element %ld: got %.9g want %.9g", what,
                     g_dt == XO_F64 ? "double" : "float", n, b, i, got[i], g_host_v[b][i]);
    }
}

/* ---- random chains -------------------------------------------------------------------- */

static uint64_t g_rng;
static int rnd(int k) { return (int)xot_uniform(&g_rng, 0, k); }

/* Buffer contents: 0 and 1 positive (log, sqrt, ... stay finite), the others signed. */
static void fresh_data(uint64_t seed)
{
    for (int b = 0; b < NB; b++)
        for (int i = 0; i < LEN; i++)
            g_host_v[b][i] = round_dt(b < 2 ? xot_uniform(&seed, 0.5, 2) : xot_uniform(&seed, -2, 2));
}

/* Slot s of 8: buffer s / 2 (0..3) at offset 1 or n + 4 (disjoint n-element ranges); the
 * elements outside them (0, n + 1 .. n + 3) are never written. */
static loc slot(int s, size_t n) { return (loc){s / 2, s % 2 ? n + 4 : 1}; }

/* Every kind once, and every sub-op of unary, binary and binary_scalar, in a random order. */
enum { NITEMS = XO_UNARY_OP_COUNT + 2 * XO_BINARY_OP_COUNT + 6 };
static void items(tstep *it)
{
    int k = 0;
    for (int u = 0; u < XO_UNARY_OP_COUNT; u++) it[k++] = (tstep){.kind = XO_OP_UNARY, .subop = u};
    for (int o = 0; o < XO_BINARY_OP_COUNT; o++) {
        it[k++] = (tstep){.kind = XO_OP_BINARY, .subop = o};
        it[k++] = (tstep){.kind = XO_OP_BINARY_SCALAR, .subop = o};
    }
    const xo_op_kind rest[] = {XO_OP_SCAL, XO_OP_FILL, XO_OP_AXPY, XO_OP_AXPBY, XO_OP_COPY, XO_OP_SCALE_BY};
    for (int r = 0; r < 6; r++) it[k++] = (tstep){.kind = rest[r]};
    for (int i = NITEMS - 1; i > 0; i--) {
        int j = rnd(i + 1);
        tstep tmp = it[i];
        it[i] = it[j];
        it[j] = tmp;
    }
}

/* Scalars for step t (varied per run: `v` picks a set). */
static void scalars(tstep *t, int v)
{
    static const double bs[] = {1.25, -0.75, 0.5, 2}, sc[] = {1.5, 0, -0.5}, fl[] = {-0.75, 0.1, -0.0};
    static const double ab[][2] = {{0.5, -1.25}, {0, 0.75}, {1.5, 0}, {0, 0}};
    t->alpha = t->beta = 0;
    switch (t->kind) {
    case XO_OP_BINARY_SCALAR: t->alpha = bs[v % 4]; break;
    case XO_OP_SCAL: t->alpha = sc[v % 3]; break;
    case XO_OP_FILL: t->alpha = fl[v % 3]; break;
    case XO_OP_AXPY: t->alpha = v % 2 ? -1.25 : 0.5; break;
    case XO_OP_AXPBY: t->alpha = ab[v % 4][0], t->beta = ab[v % 4][1]; break;
    default: break;
    }
}

/* Operands for the steps t[0..nsteps) whose kinds are set: slots chosen at random (an
 * output often one of the inputs: in place), from[] the last earlier step that wrote the
 * slot, store 0 for about half of the steps whose slot a later step writes again and a
 * quarter of the others (their results fused away: memory keeps what it had). */
static void wire(tstep *t, int nsteps, size_t n)
{
    int last[8];
    for (int s = 0; s < 8; s++) last[s] = -1;
    int out_slot[XO_CHAIN_MAX];
    for (int k = 0; k < nsteps; k++) {
        tstep *s = &t[k];
        const int nargs = nargs_of(s->kind), out = out_of(s->kind);
        int sl[3];
        for (int a = 0; a < nargs; a++) sl[a] = rnd(8);
        if (out != 0 && rnd(3) == 0) sl[out] = sl[rnd(out)]; /* in place over an input */
        for (int a = 0; a < nargs; a++) {
            s->arg[a] = slot(sl[a], n);
            s->from[a] = last[sl[a]];
        }
        if (s->kind == XO_OP_SCALE_BY) { /* s: an element no step writes, in a shared buffer */
            s->arg[0] = (loc){rnd(4), rnd(2) ? 0 : n + 2};
            s->from[0] = -1;
        }
        if (s->kind == XO_OP_FILL) s->from[0] = -1;
        out_slot[k] = sl[out];
        last[sl[out]] = k;
    }
    for (int k = 0; k < nsteps; k++)
        t[k].store = last[out_slot[k]] == k ? rnd(4) != 0 : rnd(2);
}

static void random_chains(xo_dtype dt, int nchains, uint64_t seed)
{
    g_dt = dt;
    g_rng = seed;
    tstep it[NITEMS];
    items(it);
    int cursor = 0;
    for (int c = 0; c < nchains; c++) {
        tstep t[XO_CHAIN_MAX];
        int nsteps = 5 + rnd(6); /* and enough that the chains cover every item */
        const int need = (NITEMS - cursor + (nchains - c) - 1) / (nchains - c);
        if (nsteps < need) nsteps = need < XO_CHAIN_MAX ? need : XO_CHAIN_MAX;
        size_t n = 37 + (size_t)rnd(200);
        for (int k = 0; k < nsteps; k++) t[k] = it[cursor++ % NITEMS];
        wire(t, nsteps, n);
        for (int k = 0; k < nsteps; k++) scalars(&t[k], c + k);
        char what[64];
        snprintf(what, sizeof what, "random chain %d (seed %llu)", c, (unsigned long long)seed);
        fresh_data(seed + (uint64_t)c);
        run_and_check(t, nsteps, n, what);

        /* The same shape with other scalars, n and data: no build. Each operand keeps its
         * buffer, and its slot (offset 1, or n + 4 for the new n). */
        const uint64_t before = builds();
        const size_t n2 = n + 11;
        for (int k = 0; k < nsteps; k++) {
            scalars(&t[k], c + k + 1);
            for (int a = 0; a < nargs_of(t[k].kind); a++)
                if (t[k].arg[a].off == n + 4) t[k].arg[a].off = n2 + 4;
                else if (t[k].arg[a].off == n + 2) t[k].arg[a].off = n2 + 2;
        }
        fresh_data(seed + 100 + (uint64_t)c);
        run_and_check(t, nsteps, n2, what);
        assert_int_equal(builds(), before);
    }
    assert_true(cursor >= NITEMS);
}

static void test_random_float(void **state)
{
    (void)state;
    random_chains(XO_F32, 7, 2024);
}

static void test_random_double(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    random_chains(XO_F64, 4, 77);
}

/* ---- BLAS rules, bit-exact copy and fill --------------------------------------------- */

static void test_rules_and_bits(void **state)
{
    (void)state;
    for (int dt = 0; dt <= g_fp64; dt++) {
        g_dt = (xo_dtype)dt;
        enum { N = 41 };
        fresh_data(5);
        for (int i = 0; i < LEN; i++) g_host_v[4][i] = NAN; /* buffer 4: what must not be read */
        g_host_v[2][3] = round_dt(1.0 / 3.0);              /* odd bits for copy */
        const loc A = {0, 1}, B = {1, 1}, C = {2, 1}, D = {3, 1}, E = {3, N + 4};
        const loc N1 = {4, 1}, N2 = {4, N + 4};
        const tstep t[] = {
            /* A = 0 x + 0.5 A, x NaN: not read */
            {XO_OP_AXPBY, 0, {N1, A}, {-1, -1}, 1, 0, 0.5},
            /* N2 = 2 v0 + 0 N2: y NaN not read */
            {XO_OP_AXPBY, 0, {A, N2}, {0, -1}, 1, 2, 0},
            /* N1 = 0 * N1: zeros, fused into... stored */
            {XO_OP_SCAL, 0, {N1}, {-1}, 1, 0, 0},
            /* B = 0.1 (fill never reads), not stored: copied below */
            {XO_OP_FILL, 0, {B}, {-1}, 0, 0.1, 0},
            /* D = C bit for bit; E = v3 (the fill value) bit for bit */
            {XO_OP_COPY, 0, {C, D}, {-1, -1}, 1, 0, 0},
            {XO_OP_COPY, 0, {B, E}, {3, -1}, 1, 0, 0},
            /* C = C * v2 (zeros): a NaN-free product */
            {XO_OP_BINARY, XO_MUL, {C, N1, C}, {-1, 2, -1}, 1, 0, 0},
        };
        const int nsteps = (int)(sizeof t / sizeof *t);
        double c_before[LEN];
        memcpy(c_before, g_host_v[2], sizeof c_before);
        run_and_check(t, nsteps, N, "rules");
        /* bits: D's copy of C, and E holding the fill value */
        unsigned char raw[LEN * sizeof(double)];
        double got[LEN];
        download(g_st, 3, got, raw);
        for (int i = 0; i < N; i++) {
            unsigned char want[8];
            if (g_dt == XO_F64) {
                memcpy(want, &c_before[1 + i], 8);
                assert_memory_equal(raw + (1 + i) * 8, want, 8);
                double f = 0.1;
                memcpy(want, &f, 8);
                assert_memory_equal(raw + (N + 4 + i) * 8, want, 8);
            } else {
                float v = (float)c_before[1 + i], f = (float)0.1;
                memcpy(want, &v, 4);
                assert_memory_equal(raw + (1 + i) * 4, want, 4);
                memcpy(want, &f, 4);
                assert_memory_equal(raw + (N + 4 + i) * 4, want, 4);
            }
        }
        /* the stored NaN-free results */
        download(g_st, 4, got, NULL);
        for (int i = 0; i < N; i++) {
            assert_true(got[1 + i] == 0 && !signbit(got[1 + i]));
            assert_false(isnan(got[N + 4 + i]));
        }
    }
}

/* ---- the compile fault and the caches ------------------------------------------------- */

static void test_fault_and_cache(void **state)
{
    (void)state;
    g_dt = XO_F32;
    enum { N = 19 };
    /* a shape used nowhere else: y = |-(x)| with the negation fused away */
    const tstep t[] = {
        {XO_OP_UNARY, XO_NEG, {{0, 1}, {1, 1}}, {-1, -1}, 0, 0, 0},
        {XO_OP_UNARY, XO_ABS, {{1, 1}, {1, 1}}, {0, -1}, 1, 0, 0},
    };
    xo_chain_step cs[2];
    xo_chain c;

    /* A context whose build hits the fault: -1, asked once, remembered; run refused. */
    void *st1 = NULL;
    int n = 0;
    assert_int_equal(g_p->init(&g_host, &st1, &n), XO_OK);
    assert_true(n > 0);
    alloc_all(st1, N);
    to_chain(t, 2, N, cs, &c);
    xo__cl_counters c0, c1;
    xo__cl_counters_get(&c0);
    xot_host_fail_site = "compile";
    xot_host_fault_asks = 0;
    assert_int_equal(g_run->supports(st1, 0, &c), -1);
    assert_int_equal(xot_host_fault_asks, 1);
    assert_int_equal(g_run->supports(st1, 0, &c), -1);
    assert_int_equal(g_run->run(st1, 0, &c, 1), XO_ERR_UNSUPPORTED);
    assert_int_equal(xot_host_fault_asks, 1);
    xot_host_fail_site = NULL;
    xo__cl_counters_get(&c1);
    assert_int_equal(c1.build_failures, c0.build_failures + 1);
    assert_int_equal(c1.builds_from_source + c1.cache_hits, c0.builds_from_source + c0.cache_hits);
    free_all();
    g_p->shutdown(st1);

    /* The program's context builds it (source or disk), once; a second supports and the
     * runs build nothing, and the result is right. */
    alloc_all(g_st, N);
    to_chain(t, 2, N, cs, &c);
    xo__cl_counters_get(&c0);
    assert_int_equal(g_run->supports(g_st, 0, &c), 1);
    xo__cl_counters_get(&c1);
    assert_int_equal(c1.builds_from_source + c1.cache_hits, c0.builds_from_source + c0.cache_hits + 1);
    const uint64_t before = builds();
    assert_int_equal(g_run->supports(g_st, 0, &c), 1);
    fresh_data(9);
    run_and_check(t, 2, N, "fault shape");
    assert_int_equal(builds(), before);

    /* A third context finds it in the disk cache (when there is one). */
    if (g_host.cache_dir[0]) {
        void *st3 = NULL;
        assert_int_equal(g_p->init(&g_host, &st3, &n), XO_OK);
        alloc_all(st3, N);
        to_chain(t, 2, N, cs, &c);
        xo__cl_counters_get(&c0);
        assert_int_equal(g_run->supports(st3, 0, &c), 1);
        xo__cl_counters_get(&c1);
        assert_int_equal(c1.builds_from_source, c0.builds_from_source);
        assert_int_equal(c1.cache_hits, c0.cache_hits + 1);
        free_all();
        g_p->shutdown(st3);
    }
}

/* ---- shapes the plugin refuses: 0, nothing built, run() an error ----------------------- */

static void refuse(const tstep *t, int nsteps, size_t n, void (*edit)(xo_chain_step *), const char *what)
{
    xo_chain_step cs[XO_CHAIN_MAX];
    xo_chain c;
    alloc_all(g_st, n);
    to_chain(t, nsteps, n, cs, &c);
    if (edit) edit(cs);
    const uint64_t before = builds();
    if (g_run->supports(g_st, 0, &c) != 0) fail_msg("%s: supported", what);
    if (g_run->run(g_st, 0, &c, 3) == XO_OK) fail_msg("%s: ran", what);
    assert_int_equal(builds(), before);
}

static void edit_inc(xo_chain_step *cs) { cs[1].op.inc[1] = 2; }
static void edit_forward(xo_chain_step *cs) { cs[0].from[0] = 1; }
static void edit_gemm(xo_chain_step *cs) { cs[1].op.kind = XO_OP_GEMM; }
static void edit_subop(xo_chain_step *cs) { cs[0].op.subop = XO_UNARY_OP_COUNT; }
static void edit_n(xo_chain_step *cs) { cs[1].op.n = 5; }
static void edit_no_from(xo_chain_step *cs) { cs[1].from[0] = -1; }

static void test_refused(void **state)
{
    (void)state;
    g_dt = XO_F32;
    enum { N = 23 };
    const loc A = {0, 1}, B = {1, 1}, S = {1, 3};
    /* scale_by's factor B[3] inside what step 0 stores (B[1 .. N + 1)) */
    const tstep over[] = {
        {XO_OP_UNARY, XO_EXP, {A, B}, {-1, -1}, 1, 0, 0},
        {XO_OP_SCALE_BY, 0, {S, A}, {-1, -1}, 1, 0, 0},
    };
    refuse(over, 2, N, NULL, "scale_by factor stored over");
    const tstep ok[] = {
        {XO_OP_UNARY, XO_EXP, {A, B}, {-1, -1}, 1, 0, 0},
        {XO_OP_COPY, 0, {B, A}, {0, -1}, 1, 0, 0},
    };
    /* step 1 reads B one element past what step 0 stores there (the contract allows only
     * element-aligned or disjoint) */
    const tstep skew[] = {
        {XO_OP_UNARY, XO_EXP, {A, B}, {-1, -1}, 1, 0, 0},
        {XO_OP_BINARY, XO_ADD, {A, {1, 2}, A}, {-1, -1, -1}, 1, 0, 0},
    };
    refuse(skew, 2, N, NULL, "an output overlapping another operand, not aligned");
    refuse(ok, 2, N, edit_inc, "increment 2");
    refuse(ok, 2, N, edit_forward, "from[] names a later step");
    refuse(ok, 2, N, edit_gemm, "a gemm step");
    refuse(ok, 2, N, edit_subop, "sub-op out of range");
    refuse(ok, 2, N, edit_n, "steps of different n");
    refuse(ok, 2, N, edit_no_from, "memory an earlier step writes read without from[]");
    if (!g_fp64) {
        g_dt = XO_F64;
        refuse(ok, 2, N, NULL, "double without fp64");
    }
}

/* ---- four threads, one new shape ------------------------------------------------------ */

enum { NTHREADS = 4 };
static pthread_barrier_t g_barrier;
static const xo_chain *g_shared_chain;

static void *ask(void *arg)
{
    pthread_barrier_wait(&g_barrier);
    *(int *)arg = g_run->supports(g_st, 0, g_shared_chain);
    return NULL;
}

static void test_concurrent_build(void **state)
{
    (void)state;
    g_dt = XO_F32;
    enum { N = 29 };
    const loc A = {0, 1}, B = {1, 1};
    const tstep t[] = { /* used nowhere else */
        {XO_OP_UNARY, XO_SQUARE, {A, B}, {-1, -1}, 0, 0, 0},
        {XO_OP_BINARY, XO_SUB, {B, A, A}, {0, -1, -1}, 1, 0, 0},
    };
    xo_chain_step cs[2];
    xo_chain c;
    alloc_all(g_st, N);
    to_chain(t, 2, N, cs, &c);
    g_shared_chain = &c;
    const uint64_t before = builds();
    pthread_t th[NTHREADS];
    int got[NTHREADS];
    assert_int_equal(pthread_barrier_init(&g_barrier, NULL, NTHREADS), 0);
    for (int i = 0; i < NTHREADS; i++) assert_int_equal(pthread_create(&th[i], NULL, ask, &got[i]), 0);
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&g_barrier);
    for (int i = 0; i < NTHREADS; i++) assert_int_equal(got[i], 1);
    assert_int_equal(builds(), before + 1);
    fresh_data(17);
    run_and_check(t, 2, N, "concurrent shape");
}

static void test_descriptor(void **state)
{
    (void)state;
    assert_non_null(g_p->get_proc_address);
    assert_ptr_equal(g_p->get_proc_address("xo_chain"), g_run);
    assert_null(g_p->get_proc_address("xo_no_such_extra"));
    assert_non_null(g_run->supports);
    assert_non_null(g_run->run);
}

int main(int argc, char **argv)
{
    (void)argc, (void)argv;
    g_host = xot_quiet_host("opencl");
    const char *dir = getenv("XO_CACHE_DIR");
    if (dir) g_host.cache_dir = dir;
    g_p = xo_plugin_opencl();
    int n = 0;
    if (g_p->init(&g_host, &g_st, &n) != XO_OK) {
        fprintf(stderr, "opencl init: %s\n", xot_host_error);
        return 1;
    }
    if (n == 0) {
        printf("no OpenCL device here: skipped\n");
        return XOT_EXIT_SKIP;
    }
    xo_device_info info;
    if (g_p->device_info(g_st, 0, &info) != XO_OK) return 1;
    g_fp64 = info.fp64;
    g_run = g_p->get_proc_address ? g_p->get_proc_address("xo_chain") : NULL;
    if (!g_run) {
        fprintf(stderr, "the OpenCL plugin has no \"xo_chain\" extra\n");
        g_p->shutdown(g_st);
        return 1;
    }
    printf("%s, %s\n", info.name, g_fp64 ? "float and double" : "float only");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_descriptor),   cmocka_unit_test(test_random_float),
        cmocka_unit_test(test_random_double), cmocka_unit_test(test_rules_and_bits),
        cmocka_unit_test(test_fault_and_cache), cmocka_unit_test(test_refused),
        cmocka_unit_test(test_concurrent_build),
    };
    int failed = cmocka_run_group_tests_name("opencl chains", tests, NULL, NULL);
    free_all();
    g_p->shutdown(g_st);
    return failed ? 1 : 0;
}
