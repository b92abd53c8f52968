/* Conformance: every op of the contract, in single and double precision, against the
 * plain reference loops of xo_test.c, on one device or on all of them.
 *
 *   test_conformance            every device of this machine, each forced in turn
 *   test_conformance SPEC       one device ("cpu", "opencl", "opencl:1", "cuda", ...),
 *                               exit 77 when it does not exist here
 *   test_conformance auto       no forced device: the scheduler places every op
 *
 * One table drives it, in the manner of ggml's test-backend-ops: a row names an op, a
 * shape generator (the sizes, layouts, strides, scalars and variants the op is tried
 * with), the op's runner and a tolerance. A runner lays the operands out from one shape,
 * calls the op on the device and its reference on host copies, in the precision under
 * test, and says which operands the op writes. The harness does the rest the same way
 * for every row: the decision (the forced device, or any device under auto), each
 * written operand against the reference (relative error within the tolerance, NaN only
 * where the reference has NaN, or bit for bit), every other operand unchanged, and one
 * label for a failure:
 *
 *   FAIL gemm f32 [row ta=N tb=T m=7 n=33 k=5 ... beta=0 C=NaN] on cpu:0: C[12] = 0.5,
 *        want 0.25 (3 of 280 elements beyond tolerance)
 *
 * A new op is one runner and one row; a new set of shapes for an op is one generator and
 * one row. What is not one eager op against its reference (zero sizes, the references
 * against the NaN rule, plans, fused chains of the op map) lives in
 * test_conformance_zero.c, _max.c and _map.c, run in the same cmocka group. */
#include "xo_test.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_conformance.h"

xo_context *g_ctx;
int g_dev = -1;  /* forced device index, -1 under "auto" */
int g_forced;    /* 1 when a device is forced */
int g_fp64 = 1;  /* the device runs double precision */
static char g_devname[64] = "auto";

void check_decision(const char *prefix, const char *op)
{
    char name[32];
    snprintf(name, sizeof name, "%s%s", prefix, op);
    xot_assert_decision(g_ctx, name, g_forced ? g_dev : -1, g_forced);
}

/* ---- one case: shape, operands, and the calls in either precision ------------------- */

/* What a generator gives a runner; each runner reads the fields its op has. */
typedef struct xoc_shape {
    xo_layout lay;
    xo_transpose ta, tb;
    size_t m, n, k;       /* sizes; vectors use n, matrices m x n (rows x cols) */
    size_t inc[2];        /* increments of x and y */
    size_t pad[3];        /* added to the smallest leading dimension of each matrix */
    double alpha, beta;
    int op;               /* the unary/binary/reduce/softmax op, or the activation */
    int axis;
    int v;                /* the runner's variant: NaN where nothing reads, alias, ... */
    int nan;              /* NaN planted in the inputs, by the runner's pattern; 0: none */
    int pooled;           /* products: the CPU plugin's pool woken just before (xoc_wake_pool) */
} xoc_shape;

enum { XOC_MAX_ARGS = 6, XOC_MAX_SHAPES = 512, XOC_MAX_REPORTS = 5 };

typedef struct xoc_arg {
    const char *name;
    size_t len, esz;
    int is_int;     /* int32 elements (labels, indices), else the case's precision */
    void *host;     /* the reference's copy: inputs as uploaded, outputs as it writes */
    void *orig;     /* as uploaded */
    xo_buffer *buf;
    int written;    /* 1: compared with host; 0: must still hold orig */
} xoc_arg;

typedef struct xoc_t {
    int f64;
    size_t esz;
    uint64_t seed;
    xoc_arg arg[XOC_MAX_ARGS];
    int nargs;
    xo_status st;
    char shape[192];
} xoc_t;

/* The op (xo_sNAME or xo_dNAME on g_ctx) and its reference (xot_ref_sNAME or _dNAME) in the
 * case's precision: host pointers are void * (xoc_in, xoc_out) and scalars double, so
 * one argument list serves both. */
#define XOC_OP(t, fn, ...) \
    ((t)->st = (t)->f64 ? xo_d##fn(g_ctx, __VA_ARGS__) : xo_s##fn(g_ctx, __VA_ARGS__))
#define XOC_REF(t, fn, ...) ((t)->f64 ? xot_ref_d##fn(__VA_ARGS__) : xot_ref_s##fn(__VA_ARGS__))

static void xoc_desc(xoc_t *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->shape, sizeof t->shape, fmt, ap);
    va_end(ap);
}

/* Element i of p, an array of a's elements. */
static double xoc_val(const xoc_arg *a, const void *p, size_t i)
{
    if (a->is_int) return ((const int32_t *)p)[i];
    return a->esz == sizeof(double) ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static double xoc_get(const xoc_arg *a, size_t i) { return xoc_val(a, a->host, i); }

static void xoc_set(xoc_arg *a, size_t i, double v)
{
    if (a->esz == sizeof(double))
        ((double *)a->host)[i] = v;
    else
        ((float *)a->host)[i] = (float)v;
}

/* An operand of len elements of the case's precision, uniform in [lo, hi). */
static xoc_arg *xoc_arg_new(xoc_t *t, const char *name, size_t len, double lo, double hi)
{
    assert_true(t->nargs < XOC_MAX_ARGS);
    xoc_arg *a = &t->arg[t->nargs++];
    memset(a, 0, sizeof *a);
    a->name = name;
    a->len = len;
    a->esz = t->esz;
    a->host = calloc(len ? len : 1, a->esz);
    assert_non_null(a->host);
    if (t->f64)
        xot_fill_d(a->host, len, t->seed++, lo, hi);
    else
        xot_fill_f(a->host, len, t->seed++, lo, hi);
    return a;
}

/* An operand of len int32 elements, each `init`. */
static xoc_arg *xoc_arg_int(xoc_t *t, const char *name, size_t len, int32_t init)
{
    assert_true(t->nargs < XOC_MAX_ARGS);
    xoc_arg *a = &t->arg[t->nargs++];
    *a = (xoc_arg){.name = name, .len = len, .esz = sizeof(int32_t), .is_int = 1};
    a->host = calloc(len ? len : 1, sizeof(int32_t));
    assert_non_null(a->host);
    for (size_t i = 0; i < len; i++) ((int32_t *)a->host)[i] = init;
    return a;
}

/* n elements from `at` with stride inc set to v (NaN where nothing may read, ...). */
static void xoc_put(xoc_arg *a, size_t at, size_t n, size_t inc, double v)
{
    for (size_t i = 0; i < n; i++) xoc_set(a, at + i * inc, v);
}

/* Inputs from the unary op's domain (negatives included where it has them). */
static void xoc_unary_fill(xoc_t *t, xoc_arg *a, int op)
{
    if (t->f64)
        xot_unary_fill_d(op, a->host, a->len, t->seed++);
    else
        xot_unary_fill_s(op, a->host, a->len, t->seed++);
}

/* Every operand to its buffer, and a copy kept as uploaded. A runner changes host after
 * this only where the reference must start from something else than the device. */
static void xoc_upload(xoc_t *t)
{
    for (int i = 0; i < t->nargs; i++) {
        xoc_arg *a = &t->arg[i];
        a->orig = malloc(a->len ? a->len * a->esz : 1);
        assert_non_null(a->orig);
        memcpy(a->orig, a->host, a->len * a->esz);
        a->buf = xot_buffer(g_ctx, a->host, a->len * a->esz);
    }
}

/* The op writes `a`. Operands the op may alias (c == a, y == x in place) are one xoc_arg:
 * the reference reads it through xoc_in (as uploaded) and writes it through xoc_out. */
static void xoc_writes(xoc_arg *a) { a->written = 1; }

/* Element `off` of what the reference reads (as uploaded) and of what it writes. */
static void *xoc_in(const xoc_arg *a, size_t off) { return (char *)a->orig + off * a->esz; }
static void *xoc_out(const xoc_arg *a, size_t off) { return (char *)a->host + off * a->esz; }

/* ---- the table -------------------------------------------------------------------- */

typedef size_t (*xoc_gen)(xoc_shape *out);
typedef void (*xoc_runner)(xoc_t *t, const xoc_shape *s);

enum { XOC_CLOSE = 0, XOC_BITS = 1, XOC_FINITE = 2 };

typedef struct xoc_row {
    const char *op;   /* its name in labels and in the decision ("gemm" for sgemm) */
    xoc_gen gen;
    xoc_runner run;
    int compare;      /* XOC_CLOSE, XOC_BITS (copy, fill), | XOC_FINITE (no overflow) */
    double tol_f, tol_d; /* 0: XOT_TOL_F, XOT_TOL_D */
} xoc_row;

static const xo_layout LAYS[] = {XO_ROW_MAJOR, XO_COL_MAJOR};
static const char *lay_name(xo_layout l) { return l == XO_ROW_MAJOR ? "row" : "col"; }
static const char *tr_name(xo_transpose t) { return t == XO_NO_TRANS ? "N" : "T"; }
static const xo_transpose TRS[] = {XO_NO_TRANS, XO_TRANS};
#define XOC_N(a) (sizeof(a) / sizeof((a)[0]))

static size_t xoc_push(xoc_shape *out, size_t *count, xoc_shape s)
{
    assert_true(*count < XOC_MAX_SHAPES);
    out[(*count)++] = s;
    return *count;
}

/* ---- gemm ---------------------------------------------------------------------------- */

/* With s->pooled: a loop over 1M floats (a scal of a scratch buffer) just before the op, so
 * that the CPU plugin's pool has its worker awake and a medium product that follows is split
 * between the threads (cpu_pool.c runs a lone loop of fewer grains on the caller alone, as
 * most of the suite's products are). The runner destroys the scratch after the op. */
static xo_buffer *xoc_wake_pool(const xoc_shape *s)
{
    xo_buffer *w = NULL;
    const size_t n = (size_t)1 << 20;
    if (!s->pooled)
        return NULL;
    assert_int_equal(xo_buffer_create(g_ctx, n * sizeof(float), &w), XO_OK);
    assert_int_equal(xo_sscal(g_ctx, n, 2.0f, w, 0, 1), XO_OK);
    return w;
}

/* C at an offset, A, B and C with their pads; v = 1: C holds NaN (beta = 0 never reads it). */
static void run_gemm(xoc_t *t, const xoc_shape *s)
{
    size_t m = s->m, n = s->n, k = s->k;
    size_t ar = s->ta == XO_NO_TRANS ? m : k, ac = s->ta == XO_NO_TRANS ? k : m;
    size_t br = s->tb == XO_NO_TRANS ? k : n, bc = s->tb == XO_NO_TRANS ? n : k;
    size_t lda = (s->lay == XO_ROW_MAJOR ? ac : ar) + s->pad[0];
    size_t ldb = (s->lay == XO_ROW_MAJOR ? bc : br) + s->pad[1];
    size_t ldc = (s->lay == XO_ROW_MAJOR ? n : m) + s->pad[2];
    size_t aoff = 5, boff = 3, coff = 7;
    xoc_arg *a = xoc_arg_new(t, "A", aoff + xot_mat_span(s->lay, ar, ac, lda) + 2, -1, 1);
    xoc_arg *b = xoc_arg_new(t, "B", boff + xot_mat_span(s->lay, br, bc, ldb) + 1, -1, 1);
    xoc_arg *c = xoc_arg_new(t, "C", coff + xot_mat_span(s->lay, m, n, ldc) + 3, -1, 1);
    if (s->v) xoc_put(c, 0, c->len, 1, NAN);
    xoc_writes(c);
    xoc_upload(t);
    xoc_desc(t, "%s ta=%s tb=%s m=%zu n=%zu k=%zu lda=%zu ldb=%zu ldc=%zu alpha=%g beta=%g%s",
             lay_name(s->lay), tr_name(s->ta), tr_name(s->tb), m, n, k, lda, ldb, ldc, s->alpha,
             s->beta, s->v ? " C=NaN" : "");
    xo_buffer *w = xoc_wake_pool(s);
    XOC_OP(t, gemm, s->lay, s->ta, s->tb, m, n, k, s->alpha, a->buf, aoff, lda, b->buf, boff, ldb,
           s->beta, c->buf, coff, ldc);
    xo_buffer_destroy(w);
    XOC_REF(t, gemm, s->lay, s->ta, s->tb, m, n, k, s->alpha, xoc_in(a, aoff), lda, xoc_in(b, boff),
            ldb, s->beta, xoc_out(c, coff), ldc);
}

static xoc_shape gemm_shape(int l, int ta, int tb, size_t m, size_t n, size_t k, double alpha,
                            double beta, int nan_c)
{
    xoc_shape s = {.lay = LAYS[l], .ta = TRS[ta], .tb = TRS[tb], .m = m, .n = n, .k = k,
                   .pad = {3, 2, 1}, .alpha = alpha, .beta = beta, .v = nan_c};
    return s;
}

/* Both layouts and every transpose over a few shapes, then beta = 0 (C's old contents,
 * NaN here, are never read) and alpha = 0 (C = beta * C). */
static size_t gen_gemm(xoc_shape *out)
{
    static const size_t dims[][3] = {{1, 1, 1}, {7, 7, 7}, {100, 3, 7}, {3, 100, 33}, {33, 130, 17}};
    size_t c = 0;
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++)
                for (size_t d = 0; d < XOC_N(dims); d++)
                    xoc_push(out, &c, gemm_shape(l, i, j, dims[d][0], dims[d][1], dims[d][2], 1.5, -0.5, 0));
    for (int l = 0; l < 2; l++) {
        xoc_push(out, &c, gemm_shape(l, 0, 1, 7, 33, 5, 1, 0, 1));
        xoc_push(out, &c, gemm_shape(l, 1, 0, 130, 7, 9, 0.75, 0, 0));
        xoc_push(out, &c, gemm_shape(l, 0, 0, 9, 10, 11, 0, 2, 0));
    }
    return c;
}

/* Small products (the CPU's own kernels, plugins/cpu/cpu_small.c, and OpenBLAS beside
 * them): random shapes with m, n or k = 1, narrow and wide C, short and long k, every
 * layout and transpose, beta = 0 over NaN in C and beta != 0. */
static size_t gen_gemm_small(xoc_shape *out)
{
    static const size_t sides[] = {1, 2, 3, 7, 8, 16, 17, 31, 32, 33, 100};
    uint64_t r = 0x9e3779b97f4a7c15u;
    size_t c = 0;
    for (int t = 0; t < 96; t++) {
        size_t d[3];
        for (int q = 0; q < 3; q++) {
            r = r * 6364136223846793005u + 1442695040888963407u;
            d[q] = sides[(r >> 33) % XOC_N(sides)];
        }
        if (t % 3 == 0) d[t / 3 % 3] = 1; /* m, n or k = 1 in turn */
        int nan_c = t % 2;
        xoc_push(out, &c, gemm_shape(t / 2 % 2, t / 4 % 2, t / 8 % 2, d[0], d[1], d[2], 1.25, nan_c ? 0 : 0.5, nan_c));
    }
    return c;
}

/* The neural ODE's shapes, forward and backward (m, n, k, transposes), C NaN under beta = 0,
 * and each again with beta = 1 (the gradients' sums: dW2 += h^T a). */
static size_t gen_gemm_ode(xoc_shape *out)
{
    static const size_t ode[][5] = {{16, 3, 100, 0, 0}, {100, 3, 16, 0, 0}, {1, 100, 3, 0, 0},
                                    {16, 100, 3, 0, 0}, {1, 3, 100, 0, 0},  {16, 100, 3, 0, 1},
                                    {100, 3, 16, 1, 0}, {3, 100, 16, 1, 0}, {1, 3, 100, 1, 0}};
    size_t c = 0;
    for (size_t i = 0; i < XOC_N(ode); i++)
        for (int l = 0; l < 4; l++)
            xoc_push(out, &c, gemm_shape(l % 2, (int)ode[i][3], (int)ode[i][4], ode[i][0], ode[i][1], ode[i][2], 1,
                                         l / 2, l < 2));
    return c;
}

/* Narrow C from rows of A (cpu_small.c's transposed blocks: 16 rows of A, 8 in double,
 * transposed in registers, then n <= 4 columns of C interleaved into whole vectors where C is
 * dense): random shapes with m around the blocks (1, 8, 9, 15, 16, 17, 31-33, 100), n 1-4,
 * k 1-32, both layouts (column-major: C^T narrow), B either way, A transposed for a third (the
 * columns kernel beside); C dense or rows apart, A and B dense or not; beta = 0 over NaN in C,
 * or 0.5; alpha 1 or 1.5. */
static size_t gen_gemm_narrow(xoc_shape *out)
{
    static const size_t ms[] = {1, 8, 9, 15, 16, 17, 31, 32, 33, 100};
    uint64_t r = 0x6a09e667f3bcc909u;
    size_t c = 0;
    for (int t = 0; t < 80; t++) {
        size_t d[3];
        r = r * 6364136223846793005u + 1442695040888963407u;
        d[0] = ms[(r >> 33) % XOC_N(ms)];
        d[1] = 1 + (size_t)(r >> 40) % 4;
        d[2] = 1 + (size_t)(r >> 50) % 32;
        const int l = t % 2, nan_c = t / 2 % 2;
        xoc_shape s = gemm_shape(l, t / 8 % 3 == 2, t / 4 % 2, l ? d[1] : d[0], l ? d[0] : d[1], d[2],
                                 t % 3 ? 1.5 : 1, nan_c ? 0 : 0.5, nan_c);
        if (t % 5 != 4)
            s.pad[2] = 0; /* C dense, mostly */
        if (t % 3 == 0)
            s.pad[0] = s.pad[1] = 0;
        xoc_push(out, &c, s);
    }
    return c;
}

/* One row of C up to 8 wide (cpu_small.c's narrow rows, whose vector reads run on into
 * B's next row and whose last rows come from a padded copy), every k from 1 to 9 and
 * long, both layouts (column-major: one column), A either way; beta = 0 over NaN in C
 * for odd widths. */
static size_t gen_gemm_row(xoc_shape *out)
{
    static const size_t ks[] = {1, 2, 3, 4, 5, 9, 100};
    size_t c = 0;
    for (size_t n = 1; n <= 8; n++)
        for (size_t q = 0; q < XOC_N(ks); q++) {
            int l = (int)((n + q) % 2);
            xoc_push(out, &c, gemm_shape(l, (int)(q % 2), 0, l ? n : 1, l ? 1 : n, ks[q], 0.75, n % 2 ? 0 : 1.5,
                                         (int)(n % 2)));
        }
    return c;
}

/* One row of C up to 8 wide over dense operands (ld = the row's length: cpu_small.c's
 * packed rows read B's rows as they lie, several per vector), every k from 1 to 9, 16 to
 * 18 and long, both layouts, A either way (one row of A transposed is dense only as a
 * column of one); beta = 0 over NaN in C for odd widths. */
static size_t gen_gemm_row_dense(xoc_shape *out)
{
    static const size_t ks[] = {1, 2, 3, 4, 5, 9, 16, 17, 18, 100};
    size_t c = 0;
    for (size_t n = 1; n <= 8; n++)
        for (size_t q = 0; q < XOC_N(ks); q++) {
            int l = (int)((n + q) % 2);
            xoc_shape s = gemm_shape(l, (int)(q % 2), 0, l ? n : 1, l ? 1 : n, ks[q], 0.75, n % 2 ? 0 : 1.5,
                                     (int)(n % 2));
            s.pad[0] = s.pad[1] = 0;
            xoc_push(out, &c, s);
        }
    return c;
}

/* One row of C from 8 to 129 wide, any k (cpu_small.c's row kernel: up to 8 vectors of C's
 * row as accumulators, 128 floats or 64 doubles; the widths past it take the other loops):
 * widths on each side of a vector's edge, k from 1 to 100, A either way, B's rows apart or
 * dense, both layouts (column-major: one column of C, B^T A^T), alpha 1 or 0.75, beta = 0
 * over NaN in C or 0.5. */
static size_t gen_gemm_row_wide(xoc_shape *out)
{
    static const size_t ns[] = {8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 100, 113, 127, 128, 129};
    static const size_t ks[] = {1, 2, 3, 5, 16, 33, 100};
    size_t c = 0;
    for (size_t i = 0; i < XOC_N(ns); i++)
        for (size_t q = 0; q < 3; q++) {
            const size_t t = i * 3 + q, k = ks[(i + q * 3) % XOC_N(ks)];
            const int l = t % 4 == 3, nan_c = t % 2 == 0;
            xoc_shape s = gemm_shape(l, t % 3 == 1, 0, l ? ns[i] : 1, l ? 1 : ns[i], k, t % 5 == 2 ? 0.75 : 1,
                                     nan_c ? 0 : 0.5, nan_c);
            if (t % 2)
                s.pad[0] = s.pad[1] = s.pad[2] = 0;
            xoc_push(out, &c, s);
        }
    return c;
}

/* Wide C (n from 8) with k from 5 (cpu_small.c's tiles: 8 rows x 2 vectors of C in
 * registers with AVX-512, 4 elsewhere, then 4 rows and the last 1-3): every count of rows
 * left after the 8-row tiles (m 1-31), C one vector wide, two, or two and a partial third,
 * A either way, B's rows apart or dense, both layouts (column-major: C^T's rows are C's
 * columns), alpha 1 or 0.75, beta = 0 over NaN in C or 0.5. */
static size_t gen_gemm_tiles(xoc_shape *out)
{
    static const size_t ms[] = {1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 15, 16, 20, 23, 31};
    static const size_t ns[] = {8, 15, 16, 17, 32, 33, 40};
    static const size_t ks[] = {5, 8, 17, 33};
    size_t c = 0;
    for (size_t i = 0; i < XOC_N(ms); i++)
        for (size_t q = 0; q < 3; q++) {
            const size_t t = i * 3 + q, n = ns[t % XOC_N(ns)], k = ks[(i + q) % XOC_N(ks)];
            const int l = t % 4 == 3, nan_c = t % 2 == 0;
            xoc_shape s = gemm_shape(l, t % 3 == 1, 0, l ? n : ms[i], l ? ms[i] : n, k, t % 5 == 2 ? 0.75 : 1,
                                     nan_c ? 0 : 0.5, nan_c);
            if (t % 2)
                s.pad[0] = s.pad[1] = s.pad[2] = 0;
            xoc_push(out, &c, s);
        }
    return c;
}

/* Medium products (cpu_small.c's tiles past the small kernels, with AVX-512: B upright after
 * the layout swap and at most 512 KB of it, C split over the pool when its worker is awake,
 * gen_gemm_pooled):
 * m up to 2001 (split over the pool's threads), n 8-256, k 5-256, A either way, both layouts,
 * beta = 0 over NaN in C or 0.5; and beside them B transposed and B past 512 KB (OpenBLAS). */
static size_t gen_gemm_medium(xoc_shape *out)
{
    static const size_t dims[][3] = {{100, 256, 8},  {100, 256, 256}, {257, 40, 100}, {2001, 64, 64},
                                     {33, 130, 33},  {9, 256, 255},   {1000, 8, 5},   {64, 100, 300},
                                     {100, 520, 256}, {300, 64, 1100}};
    size_t c = 0;
    for (size_t d = 0; d < XOC_N(dims); d++)
        for (int q = 0; q < 2; q++) {
            const int l = (int)(d + (size_t)q) % 2, nan_c = q == 0;
            /* column-major C^T = B^T A^T: m and n trade places, so that B stays the one tested */
            xoc_shape s = gemm_shape(l, (int)(d % 3 == 1) ^ q, d == 4 && q, l ? dims[d][1] : dims[d][0],
                                     l ? dims[d][0] : dims[d][1], dims[d][2], d % 4 == 2 ? 0.75 : 1,
                                     nan_c ? 0 : 0.5, nan_c);
            if (q)
                s.pad[0] = s.pad[1] = s.pad[2] = 0;
            xoc_push(out, &c, s);
        }
    return c;
}

/* Medium products past the medium path's 512 KB for B: long k (a weight's gradient over a
 * batch, A transposed) taken in blocks of B's rows, 2-6 blocks in float and double, the last
 * one partial; every transpose in both layouts (some stay with OpenBLAS); beside them B
 * transposed (copied upright) at widths and depths that are not multiples of a vector. */
static size_t gen_gemm_kblocks(xoc_shape *out)
{
    static const size_t dims[][3] = {{96, 136, 1100}, {8, 256, 3000}, {50, 200, 70}, {37, 72, 129}};
    size_t c = 0;
    for (size_t d = 0; d < XOC_N(dims); d++)
        for (int l = 0; l < 2; l++)
            for (int q = 0; q < 2; q++) {
                const int nan_c = (d + (size_t)q) % 2 == 0;
                const int ta = d < 2 ? 1 - l : q, tb = d < 2 ? q : 1 - l; /* d < 2: B upright after the swap */
                xoc_shape s = gemm_shape(l, ta, tb, l ? dims[d][1] : dims[d][0], l ? dims[d][0] : dims[d][1],
                                         dims[d][2], q ? 0.5 : 1, nan_c ? 0 : 1, nan_c);
                xoc_push(out, &c, s);
            }
    return c;
}

/* Medium products with the pool's worker awake (xoc_wake_pool), so that the tiles are split
 * between threads: by C's columns, in panels of two vectors, where A is at most 256 KB (each
 * thread packing its own panels of a transposed B), else by blocks of 8 rows (a transposed B
 * packed whole first). Widths that end in a partial panel or vector, k in blocks with A
 * transposed (64x100x300), both layouts (the column-major C^T = B^T A^T), every transpose,
 * beta 0 over NaN and 0.5. */
static size_t gen_gemm_pooled(xoc_shape *out)
{
    static const size_t dims[][3] = {{100, 256, 256}, {37, 200, 64}, {64, 100, 300}, {2001, 64, 64}, {1000, 72, 129}};
    size_t c = 0;
    for (size_t d = 0; d < XOC_N(dims); d++)
        for (int q = 0; q < 4; q++) {
            const int l = q & 1, ta = (q >> 1) ^ (int)(d == 2), tb = (int)(d % 2) ^ (q >> 1), nan_c = (q + (int)d) % 2;
            xoc_shape s = gemm_shape(l, ta, tb, l ? dims[d][1] : dims[d][0], l ? dims[d][0] : dims[d][1], dims[d][2],
                                     q == 3 ? 0.75 : 1, nan_c ? 0 : 0.5, nan_c);
            s.pooled = 1;
            xoc_push(out, &c, s);
        }
    return c;
}

/* ---- gemv ---------------------------------------------------------------------------- */

/* v = 1: y holds NaN (beta = 0 never reads it). */
static void run_gemv(xoc_t *t, const xoc_shape *s)
{
    size_t m = s->m, n = s->n, incx = s->inc[0], incy = s->inc[1];
    size_t lda = (s->lay == XO_ROW_MAJOR ? n : m) + s->pad[0];
    size_t lenx = s->ta == XO_NO_TRANS ? n : m, leny = s->ta == XO_NO_TRANS ? m : n;
    size_t aoff = 3, xoff = 2, yoff = 5;
    xoc_arg *a = xoc_arg_new(t, "A", aoff + xot_mat_span(s->lay, m, n, lda) + 1, -1, 1);
    xoc_arg *x = xoc_arg_new(t, "x", xoff + xot_span(lenx, incx) + 1, -1, 1);
    xoc_arg *y = xoc_arg_new(t, "y", yoff + xot_span(leny, incy) + 2, -1, 1);
    if (s->v) xoc_put(y, yoff, leny, incy, NAN);
    xoc_writes(y);
    xoc_upload(t);
    xoc_desc(t, "%s ta=%s m=%zu n=%zu lda=%zu incx=%zu incy=%zu alpha=%g beta=%g%s",
             lay_name(s->lay), tr_name(s->ta), m, n, lda, incx, incy, s->alpha, s->beta,
             s->v ? " y=NaN" : "");
    XOC_OP(t, gemv, s->lay, s->ta, m, n, s->alpha, a->buf, aoff, lda, x->buf, xoff, incx, s->beta,
           y->buf, yoff, incy);
    XOC_REF(t, gemv, s->lay, s->ta, m, n, s->alpha, xoc_in(a, aoff), lda, xoc_in(x, xoff), incx,
            s->beta, xoc_out(y, yoff), incy);
}

static size_t gen_gemv(xoc_shape *out)
{
    static const size_t dims[][2] = {{1, 1}, {7, 33}, {100, 3}, {3, 100}, {130, 130}};
    size_t c = 0;
    for (int l = 0; l < 2; l++)
        for (int tr = 0; tr < 2; tr++)
            for (size_t d = 0; d < XOC_N(dims); d++) {
                size_t inc = d % 2 ? 2 : 1;
                xoc_shape s = {.lay = LAYS[l], .ta = TRS[tr], .m = dims[d][0], .n = dims[d][1],
                               .inc = {inc, inc + d % 3}, .pad = {2}, .alpha = 1.25, .beta = 0.5};
                xoc_push(out, &c, s);
            }
    xoc_shape r = {.lay = XO_ROW_MAJOR, .ta = XO_NO_TRANS, .m = 33, .n = 7, .inc = {1, 3}, .pad = {2},
                   .alpha = 2, .beta = 0, .v = 1};
    xoc_push(out, &c, r);
    xoc_shape q = {.lay = XO_COL_MAJOR, .ta = XO_TRANS, .m = 7, .n = 33, .inc = {2, 1}, .pad = {2},
                   .alpha = -1, .beta = 0, .v = 1};
    return xoc_push(out, &c, q);
}

/* Random shapes around cpu_small.c's gemv (a gemm with one column, from 9216 elements of A
 * to its limit: transposed blocks, dots, columns and one row by shape) and past both ends
 * (OpenBLAS): every increment from 1 to 3, both layouts and transposes, A's rows padded or
 * not, alpha 1 or not, beta = 0 over NaN in y. */
static size_t gen_gemv_small(xoc_shape *out)
{
    static const size_t ds[][2] = {{100, 100}, {96, 96}, {129, 100}, {300, 33}, {33, 300}, {181, 181},
                                   {3100, 3}, {3, 3100}, {10000, 1}, {1, 10000}, {17, 600}, {95, 97},
                                   {300, 300}, {64, 31}, {7, 1500}, {2000, 16}};
    uint64_t r = 0xbb67ae8584caa73bu;
    size_t c = 0;
    for (int t = 0; t < 64; t++) {
        r = r * 6364136223846793005u + 1442695040888963407u;
        const int nan_y = t / 4 % 2, d = (int)((r >> 33) % XOC_N(ds)), flip = (r >> 40) & 1;
        xoc_shape s = {.lay = LAYS[t % 2], .ta = TRS[t / 2 % 2], .m = ds[d][flip], .n = ds[d][!flip],
                       .inc = {1 + (r >> 49) % 3, 1 + (r >> 53) % 3}, .pad = {(r >> 57) % 2 ? 3 : 0},
                       .alpha = t % 3 ? -0.75 : 1, .beta = nan_y ? 0 : 0.5, .v = nan_y};
        if (t % 4 == 1)
            s.inc[0] = s.inc[1] = 1; /* dense vectors: the transposed product as one row */
        xoc_push(out, &c, s);
    }
    return c;
}

/* ---- vector ops ------------------------------------------------------------------------ */

/* 70000: past 65,536, where the CPU plugin splits axpy, scal and copy over its pool */
static const size_t VEC_NS[] = {1, 7, 33, 130, 1000, 70000};
static const size_t INCS[][2] = {{1, 1}, {2, 3}, {3, 1}};

/* n from VEC_NS, the increments of INCS: axpy, copy. */
static size_t gen_vec_incs(xoc_shape *out)
{
    size_t c = 0;
    for (size_t d = 0; d < XOC_N(VEC_NS); d++)
        for (size_t i = 0; i < XOC_N(INCS); i++) {
            xoc_shape s = {.n = VEC_NS[d], .inc = {INCS[i][0], INCS[i][1]}, .alpha = -0.75};
            xoc_push(out, &c, s);
        }
    return c;
}

static void run_axpy(xoc_t *t, const xoc_shape *s)
{
    size_t n = s->n, incx = s->inc[0], incy = s->inc[1], xoff = 4, yoff = 1;
    xoc_arg *x = xoc_arg_new(t, "x", xoff + xot_span(n, incx) + 2, -1, 1);
    xoc_arg *y = xoc_arg_new(t, "y", yoff + xot_span(n, incy) + 3, -1, 1);
    xoc_writes(y);
    xoc_upload(t);
    xoc_desc(t, "n=%zu incx=%zu incy=%zu alpha=%g", n, incx, incy, s->alpha);
    XOC_OP(t, axpy, n, s->alpha, x->buf, xoff, incx, y->buf, yoff, incy);
    XOC_REF(t, axpy, n, s->alpha, xoc_in(x, xoff), incx, xoc_out(y, yoff), incy);
}

/* Special values travel unchanged: NaN, -infinity, -0, a denormal. */
static void run_copy(xoc_t *t, const xoc_shape *s)
{
    size_t n = s->n, ix = s->inc[0], iy = s->inc[1], xoff = 2, yoff = 1;
    xoc_arg *x = xoc_arg_new(t, "x", xoff + xot_span(n, ix) + 2, -1, 1);
    xoc_arg *y = xoc_arg_new(t, "y", yoff + xot_span(n, iy) + 3, -1, 1);
    static const double special[] = {NAN, -INFINITY, -0.0, 1e-40};
    for (size_t i = 0; i < n && i < XOC_N(special); i++) xoc_set(x, xoff + i * ix, special[i]);
    xoc_writes(y);
    xoc_upload(t);
    xoc_desc(t, "n=%zu incx=%zu incy=%zu", n, ix, iy);
    XOC_OP(t, copy, n, x->buf, xoff, ix, y->buf, yoff, iy);
    XOC_REF(t, copy, n, xoc_in(x, xoff), ix, xoc_out(y, yoff), iy);
}

static size_t gen_scal(xoc_shape *out)
{
    size_t c = 0;
    for (size_t d = 0; d < XOC_N(VEC_NS); d++)
        for (size_t inc = 1; inc <= 3; inc += 2) {
            xoc_shape s = {.n = VEC_NS[d], .inc = {inc}, .alpha = 1.5};
            xoc_push(out, &c, s);
        }
    return c;
}

static void run_scal(xoc_t *t, const xoc_shape *s)
{
    size_t n = s->n, inc = s->inc[0], off = 3;
    xoc_arg *x = xoc_arg_new(t, "x", off + xot_span(n, inc) + 2, -1, 1);
    xoc_writes(x);
    xoc_upload(t);
    xoc_desc(t, "n=%zu inc=%zu alpha=%g", n, inc, s->alpha);
    XOC_OP(t, scal, n, s->alpha, x->buf, off, inc);
    XOC_REF(t, scal, n, s->alpha, xoc_out(x, off), inc);
}

static const size_t DOT_NS[] = {1, 7, 33, 130, 1000, 4099};

/* dot and nrm2: unit steps, and strides on either side. */
static size_t gen_dot(xoc_shape *out)
{
    size_t c = 0;
    for (size_t d = 0; d < XOC_N(DOT_NS); d++)
        for (size_t i = 0; i < XOC_N(INCS); i++)
            xoc_push(out, &c, (xoc_shape){.n = DOT_NS[d], .inc = {INCS[i][0], INCS[i][1]}});
    return c;
}

/* dot and nrm2 write out[3]; the rest of out stays. */
static void run_dot(xoc_t *t, const xoc_shape *s)
{
    size_t n = s->n, incx = s->inc[0], incy = s->inc[1], xoff = 2, yoff = 5, ooff = 3;
    xoc_arg *x = xoc_arg_new(t, "x", xoff + xot_span(n, incx) + 1, -1, 1);
    xoc_arg *y = xoc_arg_new(t, "y", yoff + xot_span(n, incy) + 1, -1, 1);
    xoc_arg *o = xoc_arg_new(t, "out", 8, -1, 1);
    xoc_writes(o);
    xoc_upload(t);
    xoc_desc(t, "n=%zu incx=%zu incy=%zu", n, incx, incy);
    XOC_OP(t, dot, n, x->buf, xoff, incx, y->buf, yoff, incy, o->buf, ooff);
    xoc_set(o, ooff, XOC_REF(t, dot, n, xoc_in(x, xoff), incx, xoc_in(y, yoff), incy));
}

static void run_nrm2(xoc_t *t, const xoc_shape *s)
{
    size_t n = s->n, incx = s->inc[0], xoff = 2, ooff = 3;
    xoc_arg *x = xoc_arg_new(t, "x", xoff + xot_span(n, incx) + 1, -1, 1);
    xoc_arg *o = xoc_arg_new(t, "out", 8, -1, 1);
    xoc_writes(o);
    xoc_upload(t);
    xoc_desc(t, "n=%zu incx=%zu", n, incx);
    XOC_OP(t, nrm2, n, x->buf, xoff, incx, o->buf, ooff);
    xoc_set(o, ooff, XOC_REF(t, nrm2, n, xoc_in(x, xoff), incx));
}

/* ---- element-wise ops ------------------------------------------------------------------- */

/* Every row of the unary op map, on inputs from its domain; v = 1: in place (y == x). */
static size_t gen_unary(xoc_shape *out)
{
    static const size_t ns[] = {1, 7, 130, 1000, 70000};
    size_t c = 0;
    for (int op = 0; op < XO_UNARY_OP_COUNT; op++)
        for (size_t d = 0; d < XOC_N(ns); d++)
            for (int v = 0; v < 2; v++) xoc_push(out, &c, (xoc_shape){.op = op, .n = ns[d], .v = v});
    return c;
}

static void run_unary(xoc_t *t, const xoc_shape *s)
{
    size_t n = s->n, xoff = 3, yoff = s->v ? xoff : 6;
    xoc_arg *x = xoc_arg_new(t, "x", n + 5, 0, 1);
    xoc_unary_fill(t, x, s->op);
    xoc_arg *y = s->v ? x : xoc_arg_new(t, "y", n + 9, -1, 1);
    xoc_writes(y);
    xoc_upload(t);
    xoc_desc(t, "%s(%c) n=%zu%s", xot_unary_name(s->op), xot_unary_takes(s->op), n,
             s->v ? " in place" : "");
    XOC_OP(t, unary, (xo_unary_op)s->op, n, x->buf, xoff, y->buf, yoff);
    XOC_REF(t, unary, (xo_unary_op)s->op, n, xoc_in(x, xoff), xoc_out(y, yoff));
}

/* Every binary op of the map; v: c separate, c == a, c == b. */
static size_t gen_binary(xoc_shape *out)
{
    static const size_t ns[] = {1, 7, 130, 1000};
    size_t c = 0;
    for (int op = XO_ADD; op < XO_BINARY_OP_COUNT; op++)
        for (size_t d = 0; d < XOC_N(ns); d++)
            for (int v = 0; v < 3; v++) xoc_push(out, &c, (xoc_shape){.op = op, .n = ns[d], .v = v});
    return c;
}

static void run_binary(xoc_t *t, const xoc_shape *s)
{
    size_t n = s->n, aoff = 1, boff = 4, len = n + 7;
    xoc_arg *a = xoc_arg_new(t, "a", len, -2, 2);
    xoc_arg *b = xoc_arg_new(t, "b", len, 0.5, 2); /* DIV stays well-conditioned */
    xoc_arg *c = s->v == 1 ? a : s->v == 2 ? b : xoc_arg_new(t, "c", len, -1, 1);
    size_t coff = s->v == 1 ? aoff : s->v == 2 ? boff : 2;
    for (size_t i = 0; s->nan && i < n; i++) { /* NaN in a at i % 5 == 1, in b at i % 5 == 2 */
        if (i % 5 == 1) xoc_set(a, aoff + i, NAN);
        if (i % 5 == 2) xoc_set(b, boff + i, NAN);
    }
    xoc_writes(c);
    xoc_upload(t);
    xoc_desc(t, "%s n=%zu%s%s", xot_binary_name(s->op), n, s->v == 1 ? " c==a" : s->v == 2 ? " c==b" : "",
             s->nan ? " NaN planted" : "");
    XOC_OP(t, binary, (xo_binary_op)s->op, n, a->buf, aoff, b->buf, boff, c->buf, coff);
    XOC_REF(t, binary, (xo_binary_op)s->op, n, xoc_in(a, aoff), xoc_in(b, boff), xoc_out(c, coff));
}

/* MAX with NaN on either side: NaN wins. */
static size_t gen_binary_nan(xoc_shape *out)
{
    static const size_t ns[] = {3, 37, 5000};
    size_t c = 0;
    for (size_t d = 0; d < XOC_N(ns); d++)
        for (int v = 0; v < 3; v++) xoc_push(out, &c, (xoc_shape){.op = XO_MAX, .n = ns[d], .v = v, .nan = 1});
    return c;
}

/* Every binary op with a scalar; v = 1: c == a. */
static size_t gen_binary_scalar(xoc_shape *out)
{
    static const size_t ns[] = {1, 7, 1000, 70000};
    size_t c = 0;
    for (int op = XO_ADD; op < XO_BINARY_OP_COUNT; op++)
        for (size_t d = 0; d < XOC_N(ns); d++)
            for (int v = 0; v < 2; v++)
                xoc_push(out, &c, (xoc_shape){.op = op, .n = ns[d], .v = v, .alpha = op == XO_DIV ? 1.75 : 0.25});
    return c;
}

static void run_binary_scalar(xoc_t *t, const xoc_shape *s)
{
    size_t n = s->n, aoff = 3, coff = s->v ? aoff : 1, len = n + 5;
    xoc_arg *a = xoc_arg_new(t, "a", len, -2, 2);
    xoc_arg *c = s->v ? a : xoc_arg_new(t, "c", len, -1, 1);
    xoc_writes(c);
    xoc_upload(t);
    xoc_desc(t, "%s n=%zu s=%g%s", xot_binary_name(s->op), n, s->alpha, s->v ? " c==a" : "");
    XOC_OP(t, binary_scalar, (xo_binary_op)s->op, n, a->buf, aoff, s->alpha, c->buf, coff);
    XOC_REF(t, binary_scalar, (xo_binary_op)s->op, n, xoc_in(a, aoff), s->alpha, xoc_out(c, coff));
}

static const size_t NN_NS[] = {1, 7, 1000, 70000};

/* value, inc: NaN where fill writes (never read), values that must come out bit for bit. */
static size_t gen_fill(xoc_shape *out)
{
    static const double values[] = {1.5, -0.0, INFINITY};
    size_t c = 0;
    for (size_t d = 0; d < XOC_N(NN_NS); d++)
        for (size_t inc = 1; inc <= 3; inc += 2)
            for (size_t v = 0; v < XOC_N(values); v++)
                xoc_push(out, &c, (xoc_shape){.n = NN_NS[d], .inc = {inc}, .alpha = values[v]});
    return c;
}

static void run_fill(xoc_t *t, const xoc_shape *s)
{
    size_t n = s->n, inc = s->inc[0], xoff = 3;
    xoc_arg *x = xoc_arg_new(t, "x", xoff + xot_span(n, inc) + 2, -1, 1);
    xoc_put(x, xoff, n, inc, NAN);
    xoc_writes(x);
    xoc_upload(t);
    xoc_desc(t, "n=%zu inc=%zu value=%g", n, inc, s->alpha);
    XOC_OP(t, fill, n, s->alpha, x->buf, xoff, inc);
    XOC_REF(t, fill, n, s->alpha, xoc_out(x, xoff), inc);
}

/* alpha, beta; NaN in y where beta == 0, in x where alpha == 0: neither is read. */
static size_t gen_axpby(xoc_shape *out)
{
    static const double ab[][2] = {{2, 0.5}, {-0.5, 0}, {0, 2}, {0, 0}, {1, 1}};
    size_t c = 0;
    for (size_t d = 0; d < XOC_N(NN_NS); d++)
        for (size_t i = 0; i < XOC_N(ab); i++)
            for (size_t inc = 1; inc <= 2; inc++)
                xoc_push(out, &c, (xoc_shape){.n = NN_NS[d], .alpha = ab[i][0], .beta = ab[i][1],
                                              .inc = {inc, inc == 1 ? 1 : 3}});
    return c;
}

static void run_axpby(xoc_t *t, const xoc_shape *s)
{
    size_t n = s->n, ix = s->inc[0], iy = s->inc[1], xoff = 1, yoff = 2;
    xoc_arg *x = xoc_arg_new(t, "x", xoff + xot_span(n, ix) + 1, -1, 1);
    xoc_arg *y = xoc_arg_new(t, "y", yoff + xot_span(n, iy) + 2, -1, 1);
    if (s->alpha == 0) xoc_put(x, xoff, n, ix, NAN);
    if (s->beta == 0) xoc_put(y, yoff, n, iy, NAN);
    xoc_writes(y);
    xoc_upload(t);
    xoc_desc(t, "n=%zu incx=%zu incy=%zu alpha=%g beta=%g", n, ix, iy, s->alpha, s->beta);
    XOC_OP(t, axpby, n, s->alpha, x->buf, xoff, ix, s->beta, y->buf, yoff, iy);
    XOC_REF(t, axpby, n, s->alpha, xoc_in(x, xoff), ix, s->beta, xoc_out(y, yoff), iy);
}

static size_t gen_scale_by(xoc_shape *out)
{
    size_t c = 0;
    for (size_t d = 0; d < XOC_N(NN_NS); d++)
        for (size_t inc = 1; inc <= 2; inc++) xoc_push(out, &c, (xoc_shape){.n = NN_NS[d], .inc = {inc}});
    return c;
}

/* x *= s[2], the scalar read from a buffer. */
static void run_scale_by(xoc_t *t, const xoc_shape *s)
{
    size_t n = s->n, inc = s->inc[0], soff = 2, xoff = 1;
    xoc_arg *sb = xoc_arg_new(t, "s", 4, -1, 1);
    xoc_set(sb, soff, -0.375);
    xoc_arg *x = xoc_arg_new(t, "x", xoff + xot_span(n, inc) + 2, -1, 1);
    xoc_writes(x);
    xoc_upload(t);
    xoc_desc(t, "n=%zu inc=%zu", n, inc);
    XOC_OP(t, scale_by, n, sb->buf, soff, x->buf, xoff, inc);
    XOC_REF(t, scal, n, xoc_get(sb, soff), xoc_out(x, xoff), inc);
}

/* ---- matrix ops (row-major unless they take a layout) --------------------------------- */

/* bias over rows x cols, packed and padded (pad 0 and 3). */
static size_t gen_bias(xoc_shape *out)
{
    static const size_t dims[][2] = {{1, 1}, {7, 33}, {100, 3}, {3, 100}, {130, 7}};
    size_t c = 0;
    for (size_t d = 0; d < XOC_N(dims); d++)
        for (size_t pad = 0; pad <= 3; pad += 3)
            xoc_push(out, &c, (xoc_shape){.m = dims[d][0], .n = dims[d][1], .pad = {pad}});
    return c;
}

static void run_bias(xoc_t *t, const xoc_shape *s)
{
    size_t rows = s->m, cols = s->n, lda = cols + s->pad[0], aoff = 2, boff = 1;
    xoc_arg *a = xoc_arg_new(t, "A", aoff + (rows - 1) * lda + cols + 2, -1, 1);
    xoc_arg *b = xoc_arg_new(t, "bias", boff + cols + 1, -1, 1);
    xoc_writes(a);
    xoc_upload(t);
    xoc_desc(t, "%zux%zu lda=%zu", rows, cols, lda);
    XOC_OP(t, bias, rows, cols, a->buf, aoff, lda, b->buf, boff);
    XOC_REF(t, bias, rows, cols, xoc_out(a, aoff), lda, xoc_in(b, boff));
}

/* SUM and MAX_ELEMENT; MAX_ELEMENT's maximum is the last element. */
static size_t gen_reduce(xoc_shape *out)
{
    static const size_t ns[] = {1, 7, 130, 1000, 4099};
    size_t c = 0;
    for (int op = XO_SUM; op <= XO_MAX_ELEMENT; op++)
        for (size_t d = 0; d < XOC_N(ns); d++) xoc_push(out, &c, (xoc_shape){.op = op, .n = ns[d]});
    return c;
}

static const char *const NAN_AT[] = {"", " NaN first", " NaN in the middle", " NaN last", " NaN beside"};

/* nan: a NaN first (1), in the middle (2), last (3), or only beside the range (4), with a
 * larger value at n/3; a NaN anywhere among the elements makes the maximum NaN. */
static void run_reduce(xoc_t *t, const xoc_shape *s)
{
    size_t n = s->n, xoff = 3, ooff = 2;
    xoc_arg *x = xoc_arg_new(t, "x", n + 4, -1, 1);
    xoc_arg *o = xoc_arg_new(t, "out", 5, -1, 1);
    if (s->op == XO_MAX_ELEMENT) xoc_set(x, xoff + n - 1, 0.999);
    if (s->nan) {
        xoc_set(x, xoff + n / 3, 5);
        if (s->nan < 4) xoc_set(x, xoff + (s->nan == 1 ? 0 : s->nan == 2 ? n / 2 : n - 1), NAN);
        xoc_set(x, xoff - 1, s->nan < 4 ? NAN : 9);
        xoc_set(x, xoff + n, s->nan < 4 ? NAN : 9);
    }
    xoc_writes(o);
    xoc_upload(t);
    xoc_desc(t, "%s n=%zu%s", s->op == XO_SUM ? "SUM" : "MAX_ELEMENT", n, NAN_AT[s->nan]);
    XOC_OP(t, reduce, (xo_reduce_op)s->op, n, x->buf, xoff, o->buf, ooff);
    xoc_set(o, ooff, XOC_REF(t, reduce, (xo_reduce_op)s->op, n, xoc_in(x, xoff)));
}

static size_t gen_reduce_axis(xoc_shape *out)
{
    static const size_t dims[][2] = {{1, 1}, {1, 9}, {9, 1}, {7, 33}, {130, 7}, {3, 1000}, {600, 300}};
    size_t c = 0;
    for (int op = XO_SUM; op <= XO_MAX_ELEMENT; op++)
        for (int axis = 0; axis <= 1; axis++)
            for (size_t d = 0; d < XOC_N(dims); d++)
                for (size_t pad = 0; pad <= 2; pad += 2)
                    xoc_push(out, &c, (xoc_shape){.op = op, .axis = axis, .m = dims[d][0], .n = dims[d][1],
                                                  .pad = {pad}});
    return c;
}

static size_t gen_reduce_nan(xoc_shape *out)
{
    static const size_t ns[] = {1, 2, 7, 130, 1000, 4099, 300001};
    size_t c = 0;
    for (size_t d = 0; d < XOC_N(ns); d++)
        for (int w = 1; w <= 4; w++) xoc_push(out, &c, (xoc_shape){.op = XO_MAX_ELEMENT, .n = ns[d], .nan = w});
    return c;
}

/* MAX over either axis; result r has its NaN first, middle or last, or none, in turn, and
 * the padding holds NaN (never read). */
static size_t gen_reduce_axis_nan(xoc_shape *out)
{
    static const size_t dims[][2] = {{1, 1}, {3, 5}, {130, 7}, {7, 130}, {64, 300}};
    size_t c = 0;
    for (size_t d = 0; d < XOC_N(dims); d++)
        for (int axis = 0; axis <= 1; axis++)
            xoc_push(out, &c, (xoc_shape){.op = XO_MAX_ELEMENT, .axis = axis, .m = dims[d][0], .n = dims[d][1],
                                          .pad = {1}, .nan = 1 + (int)d});
    return c;
}

static void run_reduce_axis(xoc_t *t, const xoc_shape *s)
{
    size_t rows = s->m, cols = s->n, ldx = cols + s->pad[0], xoff = 1, ooff = 3;
    size_t results = s->axis == 0 ? cols : rows;
    xoc_arg *x = xoc_arg_new(t, "x", xoff + xot_mat_span(XO_ROW_MAJOR, rows, cols, ldx) + 1, -1, 1);
    xoc_arg *o = xoc_arg_new(t, "out", ooff + results + 2, -1, 1);
    if (s->nan) {
        size_t over = s->axis == 0 ? rows : cols, rs = s->axis == 0 ? 1 : ldx, es = s->axis == 0 ? ldx : 1;
        for (size_t i = 0; i < rows && ldx > cols; i++) xoc_set(x, xoff + i * ldx + cols, NAN);
        for (size_t r = 0; r < results; r++) {
            size_t k = (r + (size_t)s->nan) % 4, e = k == 0 ? 0 : k == 1 ? over / 2 : over - 1;
            if (k < 3) xoc_set(x, xoff + r * rs + e * es, NAN);
        }
    }
    xoc_writes(o);
    xoc_upload(t);
    xoc_desc(t, "%s axis=%d %zux%zu ldx=%zu%s", s->op == XO_SUM ? "SUM" : "MAX", s->axis, rows, cols, ldx,
             s->nan ? " NaN planted" : "");
    XOC_OP(t, reduce_axis, (xo_reduce_op)s->op, rows, cols, x->buf, xoff, ldx, s->axis, o->buf, ooff);
    XOC_REF(t, reduce_axis, (xo_reduce_op)s->op, rows, cols, xoc_in(x, xoff), ldx, s->axis, xoc_out(o, ooff));
}

/* ger in both layouts; v = 1: padded A and strided x, y. */
static size_t gen_ger(xoc_shape *out)
{
    static const size_t dims[][2] = {{1, 1}, {1, 9}, {7, 33}, {33, 7}, {130, 70}};
    size_t c = 0;
    for (int l = 0; l < 2; l++)
        for (size_t d = 0; d < XOC_N(dims); d++)
            for (int v = 0; v < 2; v++)
                xoc_push(out, &c, (xoc_shape){.lay = LAYS[l], .m = dims[d][0], .n = dims[d][1], .alpha = 0.75,
                                              .inc = {v ? 2 : 1, v ? 3 : 1}, .pad = {v ? 3 : 0}});
    return c;
}

static void run_ger(xoc_t *t, const xoc_shape *s)
{
    size_t m = s->m, n = s->n, ix = s->inc[0], iy = s->inc[1], xoff = 1, yoff = 2, aoff = 4;
    size_t lda = (s->lay == XO_ROW_MAJOR ? n : m) + s->pad[0];
    xoc_arg *x = xoc_arg_new(t, "x", xoff + xot_span(m, ix), -1, 1);
    xoc_arg *y = xoc_arg_new(t, "y", yoff + xot_span(n, iy), -1, 1);
    xoc_arg *a = xoc_arg_new(t, "A", aoff + xot_mat_span(s->lay, m, n, lda) + 2, -1, 1);
    xoc_writes(a);
    xoc_upload(t);
    xoc_desc(t, "%s %zux%zu lda=%zu incx=%zu incy=%zu alpha=%g", lay_name(s->lay), m, n,
             lda, ix, iy, s->alpha);
    XOC_OP(t, ger, s->lay, m, n, s->alpha, x->buf, xoff, ix, y->buf, yoff, iy, a->buf, aoff, lda);
    XOC_REF(t, ger, s->lay, m, n, s->alpha, xoc_in(x, xoff), ix, xoc_in(y, yoff), iy, xoc_out(a, aoff), lda);
}

/* softmax and log_softmax; v: packed, padded, in place (y == x, ldy == ldx). */
static size_t gen_softmax(xoc_shape *out)
{
    static const size_t dims[][2] = {{1, 1}, {1, 7}, {7, 33}, {130, 7}, {3, 1000}};
    size_t c = 0;
    for (int op = XO_SOFTMAX; op <= XO_LOG_SOFTMAX; op++)
        for (size_t d = 0; d < XOC_N(dims); d++)
            for (int v = 0; v < 3; v++)
                xoc_push(out, &c, (xoc_shape){.op = op, .m = dims[d][0], .n = dims[d][1], .v = v,
                                              .pad = {v ? 3 : 0, v == 1 ? 1 : v ? 3 : 0}});
    return c;
}

/* Large inputs: without the maximum subtracted, exp overflows. */
static void run_softmax(xoc_t *t, const xoc_shape *s)
{
    size_t rows = s->m, cols = s->n, ldx = cols + s->pad[0], ldy = cols + s->pad[1], xoff = 2;
    size_t yoff = s->v == 2 ? xoff : 1;
    xoc_arg *x = xoc_arg_new(t, "x", xoff + xot_mat_span(XO_ROW_MAJOR, rows, cols, ldx) + 2, 60, 100);
    xoc_arg *y = s->v == 2 ? x : xoc_arg_new(t, "y", yoff + xot_mat_span(XO_ROW_MAJOR, rows, cols, ldy) + 2, -1, 1);
    xoc_writes(y);
    xoc_upload(t);
    xoc_desc(t, "%s %zux%zu ldx=%zu ldy=%zu%s", s->op == XO_SOFTMAX ? "SOFTMAX" : "LOG_SOFTMAX", rows, cols, ldx,
             ldy, s->v == 2 ? " in place" : "");
    XOC_OP(t, softmax, (xo_softmax_op)s->op, rows, cols, x->buf, xoff, ldx, y->buf, yoff, ldy);
    XOC_REF(t, softmax, (xo_softmax_op)s->op, rows, cols, xoc_in(x, xoff), ldx, xoc_out(y, yoff), ldy);
}

/* Loss and gradient per row; labels in range, -1 and cols (ignored rows). v: grad
 * packed, padded, absent (NULL), in place over x. */
static size_t gen_softmax_xent(xoc_shape *out)
{
    static const size_t dims[][2] = {{1, 1}, {1, 7}, {7, 33}, {130, 10}, {3, 1000}};
    size_t c = 0;
    for (size_t d = 0; d < XOC_N(dims); d++)
        for (int v = 0; v < 4; v++)
            xoc_push(out, &c, (xoc_shape){.m = dims[d][0], .n = dims[d][1], .v = v, .k = d,
                                          .pad = {v ? 2 : 0, v == 1 ? 3 : v ? 2 : 0}});
    return c;
}

static void run_softmax_xent(xoc_t *t, const xoc_shape *s)
{
    size_t rows = s->m, cols = s->n, ldx = cols + s->pad[0], ldg = cols + s->pad[1];
    size_t xoff = 1, goff = s->v == 3 ? xoff : 2, loff = 3, lboff = 1;
    xoc_arg *x = xoc_arg_new(t, "x", xoff + xot_mat_span(XO_ROW_MAJOR, rows, cols, ldx) + 2, 60, 100);
    xoc_arg *g = s->v == 3 ? x : xoc_arg_new(t, "grad", goff + xot_mat_span(XO_ROW_MAJOR, rows, cols, ldg) + 2, -1, 1);
    xoc_arg *loss = xoc_arg_new(t, "loss", loff + rows + 1, -1, 1);
    xoc_arg *lab = xoc_arg_int(t, "labels", lboff + rows, 0);
    int32_t *l = lab->host;
    for (size_t i = 0; i < rows; i++)
        l[lboff + i] = i % 5 == 3 ? -1 : i % 7 == 5 ? (int32_t)cols : (int32_t)((i * 7 + s->k) % cols);
    xoc_writes(loss);
    if (s->v != 2) xoc_writes(g);
    xoc_upload(t);
    xoc_desc(t, "%zux%zu ldx=%zu ldg=%zu%s", rows, cols, ldx, ldg,
             s->v == 2 ? " no grad" : s->v == 3 ? " in place" : "");
    double scale = 1.0 / (double)rows;
    XOC_OP(t, softmax_xent, rows, cols, x->buf, xoff, ldx, lab->buf, lboff, scale, loss->buf, loff,
           s->v == 2 ? NULL : g->buf, goff, ldg);
    XOC_REF(t, softmax_xent, rows, cols, xoc_in(x, xoff), ldx, (const int32_t *)lab->orig + lboff, scale,
            xoc_out(loss, loff), s->v == 2 ? NULL : xoc_out(g, goff), ldg);
}

/* Row r gets, by r % 6: a NaN first, in the middle or last, two NaNs, its largest value
 * twice (a tie), or nothing planted; the padding holds NaN (never read). The first NaN
 * wins, else the first of equal maxima. */
static size_t gen_argmax(xoc_shape *out)
{
    static const size_t dims[][2] = {{1, 1}, {1, 2}, {6, 3}, {13, 37}, {40, 300}, {12, 5000}, {300, 7}};
    size_t c = 0;
    for (size_t d = 0; d < XOC_N(dims); d++)
        for (size_t pad = 0; pad <= 2; pad += 2)
            xoc_push(out, &c, (xoc_shape){.m = dims[d][0], .n = dims[d][1], .pad = {pad}, .nan = 1});
    return c;
}

static void run_argmax(xoc_t *t, const xoc_shape *s)
{
    size_t rows = s->m, cols = s->n, ldx = cols + s->pad[0], xoff = 3, ioff = 2;
    xoc_arg *x = xoc_arg_new(t, "x", xoff + rows * ldx + 1, -1, 1);
    for (size_t r = 0; r < rows; r++) {
        size_t row = xoff + r * ldx, mid = cols / 2, last = cols - 1;
        if (ldx > cols) xoc_set(x, row + cols, NAN);
        switch (r % 6) {
        case 0: xoc_set(x, row, NAN); break;
        case 1: xoc_set(x, row + mid, NAN); break;
        case 2: xoc_set(x, row + last, NAN); break;
        case 3: xoc_set(x, row + last, NAN), xoc_set(x, row + mid, NAN); break;
        case 4: xoc_set(x, row + last, 2), xoc_set(x, row + cols / 3, 2); break;
        default: break;
        }
    }
    xoc_arg *idx = xoc_arg_int(t, "idx", rows + 3, -5);
    xoc_writes(idx);
    xoc_upload(t);
    xoc_desc(t, "%zux%zu ldx=%zu", rows, cols, ldx);
    XOC_OP(t, argmax, rows, cols, x->buf, xoff, ldx, idx->buf, ioff);
    XOC_REF(t, argmax, rows, cols, xoc_in(x, xoff), ldx, xoc_out(idx, ioff));
}

/* ---- gemm_bias_act ----------------------------------------------------------------------- */

/* C at an offset (padded for even k, dense for odd k), NaN in it when beta is 0; B's rows
 * padded by pad[1]; the bias (v = 0: none) at an offset. */
static void run_gemm_bias_act(xoc_t *t, const xoc_shape *s)
{
    size_t m = s->m, n = s->n, k = s->k;
    size_t ar = s->ta == XO_NO_TRANS ? m : k, ac = s->ta == XO_NO_TRANS ? k : m;
    size_t br = s->tb == XO_NO_TRANS ? k : n, bc = s->tb == XO_NO_TRANS ? n : k;
    size_t lda = (s->lay == XO_ROW_MAJOR ? ac : ar) + 1, ldb = (s->lay == XO_ROW_MAJOR ? bc : br) + s->pad[1];
    size_t ldc = (s->lay == XO_ROW_MAJOR ? n : m) + (k & 1 ? 0 : 3), aoff = 2, boff = 1, coff = 3, biasoff = 2;
    double kk = (double)(k ? k : 1);
    /* A and B in [-1, 1] scaled so |A B| < 1, and C's beta term at most 0.5: a bias from
     * the activation's domain pushed 1.75 further from 0 keeps C in its domain (negatives
     * included where it has them) and |C| >= 1/2, away from where 1/x and log are steep. */
    xoc_arg *a = xoc_arg_new(t, "A", aoff + xot_mat_span(s->lay, ar, ac, lda) + 1, -1, 1);
    xoc_arg *b = xoc_arg_new(t, "B", boff + xot_mat_span(s->lay, br, bc, ldb) + 1, -1 / kk, 1 / kk);
    xoc_arg *c = xoc_arg_new(t, "C", coff + xot_mat_span(s->lay, m, n, ldc) + 2, -1, 1);
    xoc_arg *bias = xoc_arg_new(t, "bias", biasoff + n + 1, 0, 1);
    xoc_unary_fill(t, bias, s->op);
    for (size_t i = 0; i < bias->len; i++) xoc_set(bias, i, xoc_get(bias, i) + (xoc_get(bias, i) < 0 ? -1.75 : 1.75));
    if (s->beta == 0) xoc_put(c, 0, c->len, 1, NAN);
    xoc_writes(c);
    xoc_upload(t);
    /* beta == 0 never reads C: the reference starts from zeros where C holds NaN */
    for (size_t i = 0; s->beta == 0 && i < m; i++)
        for (size_t j = 0; j < n; j++) xoc_set(c, coff + (s->lay == XO_ROW_MAJOR ? i * ldc + j : i + j * ldc), 0);
    xoc_desc(t, "%s ta=%s tb=%s m=%zu n=%zu k=%zu ldc=%zu alpha=%g beta=%g bias=%d act=%s",
             lay_name(s->lay), tr_name(s->ta), tr_name(s->tb), m, n, k, ldc, s->alpha != 0 ? s->alpha : 1.0,
             s->beta, s->v, xot_unary_name(s->op));
    const double alpha = s->alpha != 0 ? s->alpha : 1.0; /* unset: 1 */
    xo_buffer *w = xoc_wake_pool(s);
    XOC_OP(t, gemm_bias_act, s->lay, s->ta, s->tb, m, n, k, alpha, a->buf, aoff, lda, b->buf, boff, ldb, s->beta,
           c->buf, coff, ldc, s->v ? bias->buf : NULL, biasoff, (xo_unary_op)s->op);
    xo_buffer_destroy(w);
    XOC_REF(t, gemm_bias_act, s->lay, s->ta, s->tb, m, n, k, alpha, xoc_in(a, aoff), lda, xoc_in(b, boff), ldb,
            s->beta, xoc_out(c, coff), ldc, s->v ? xoc_in(bias, biasoff) : NULL, (xo_unary_op)s->op);
}

static xoc_shape gba_shape(int l, int ta, int tb, size_t m, size_t n, size_t k, double beta, int with_bias, int act)
{
    return (xoc_shape){.lay = LAYS[l], .ta = TRS[ta], .tb = TRS[tb], .m = m, .n = n, .k = k, .beta = beta,
                       .v = with_bias, .op = act, .pad = {0, 2, 0}};
}

static size_t gen_gemm_bias_act(xoc_shape *out)
{
    static const size_t dims[][3] = {{1, 1, 1}, {1, 9, 4}, {7, 5, 3}, {33, 17, 9}};
    size_t c = 0;
    /* every activation of the op map, with the bias, on small shapes in both layouts */
    for (int a = 0; a < XO_UNARY_OP_COUNT; a++)
        for (size_t d = 0; xot_unary_is_activation(a) && d < XOC_N(dims); d++)
            for (int l = 0; l < 2; l++)
                xoc_push(out, &c, gba_shape(l, d & 1, (d & 2) != 0, dims[d][0], dims[d][1], dims[d][2],
                                            a & 1 ? 0 : 0.5, 1, a));
    /* no bias (activations defined everywhere), beta 0 with NaN in C and beta 0.5 */
    for (int tr = 0; tr < 4; tr++)
        for (int l = 0; l < 2; l++)
            xoc_push(out, &c, gba_shape(l, tr & 1, (tr & 2) != 0, 13, 11, 6, tr & 1 ? 0 : 0.5, 0,
                                        tr < 2 ? XO_TANH : XO_RELU));
    /* several blocks of lines (the CPU works on blocks of at least 8 MiB of C and
     * 64 Mflop: here 1024 lines of 2048 in float, 521 in double) */
    xoc_push(out, &c, gba_shape(0, 0, 1, 1100, 2048, 30, 0.5, 1, XO_SIGMOID));
    xoc_push(out, &c, gba_shape(1, 1, 0, 2048, 1100, 30, 0, 0, XO_SIGMOID));
    /* k == 0: C = act(beta C + bias); a forced device runs it too */
    xoc_push(out, &c, gba_shape(0, 0, 0, 5, 4, 0, 0.5, 1, XO_TANH));
    xoc_push(out, &c, gba_shape(1, 0, 1, 5, 4, 0, 0, 1, XO_SQRT));
    return xoc_push(out, &c, gba_shape(0, 0, 0, 4, 4, 0, -0.5, 1, XO_TANH));
}

/* Small products (cpu_small.c's kernels apply the epilogue to each vector of C in
 * registers): random shapes with m, n or k = 1, narrow and wide C (tiles, narrow rows,
 * dots), every layout and transpose, each activation with the bias (column-major: by
 * C^T's rows in the kernels), and without it (activations defined everywhere), beta = 0
 * over NaN in C and beta = 0.5, alpha 1 and 0.5. */
static size_t gen_gemm_bias_act_small(xoc_shape *out)
{
    static const size_t sides[] = {1, 2, 3, 4, 5, 7, 8, 16, 17, 31, 32, 33, 100};
    static const int everywhere[] = {XO_TANH, XO_RELU, XO_SIGMOID, XO_IDENTITY, XO_GELU, XO_SILU};
    uint64_t r = 0x2545f4914f6cdd1du;
    size_t c = 0;
    int t = 0;
    for (int a = 0; a < XO_UNARY_OP_COUNT; a++)
        for (int rep = 0; xot_unary_is_activation(a) && rep < 8; rep++, t++) {
            size_t d[3];
            for (int q = 0; q < 3; q++) {
                r = r * 6364136223846793005u + 1442695040888963407u;
                d[q] = sides[(r >> 33) % XOC_N(sides)];
            }
            if (t % 3 == 0) d[t / 3 % 3] = 1; /* m, n or k = 1 in turn */
            int with_bias = rep % 4 != 3, act = with_bias ? a : everywhere[t % (int)XOC_N(everywhere)];
            xoc_shape s = gba_shape(rep % 2, rep / 2 % 2, (t + rep / 4) % 2, d[0], d[1], d[2], t % 2 ? 0 : 0.5,
                                    with_bias, act);
            s.alpha = t % 5 == 0 ? 0.5 : 1;
            xoc_push(out, &c, s);
        }
    return c;
}

/* Narrow C from rows of A with the epilogue (cpu_small.c's transposed blocks apply it down
 * each column of C before interleaving): m 16-100 with tails, n 1-4, k 1-32, both layouts,
 * C dense, every third shape beta 0.5, alpha 1 or 0.5, tanh, relu and sigmoid (not inline). */
static size_t gen_gemm_bias_act_narrow(xoc_shape *out)
{
    static const size_t ms[] = {15, 16, 17, 33, 100};
    static const int acts[] = {XO_IDENTITY, XO_TANH, XO_RELU, XO_SIGMOID};
    size_t c = 0;
    for (int t = 0; t < 24; t++) {
        const size_t m = ms[t % 5], n = 1 + (size_t)t % 4, k = 1 + (size_t)(t * 7) % 32;
        const int l = t / 4 % 2;
        xoc_shape s = gba_shape(l, 0, t / 3 % 2, l ? n : m, l ? m : n, k, t % 3 == 0 ? 0.5 : 0, t % 6 != 5,
                                acts[t / 2 % 4]);
        s.alpha = t % 5 == 1 ? 0.5 : 1;
        xoc_push(out, &c, s);
    }
    return c;
}

/* One row of C (the batch-1 evaluation's 1x100x3 and 1x3x100 with their bias and tanh): over a
 * dense B, cpu_small.c's packed rows at every width to 8 (k 3 and 100); wider rows with k 1 to 4
 * and 17, its row kernel of 1 to 8 vectors (129: the short-k blocks), the last full or partial,
 * with B's rows apart; each with an activation (the ones computed inline and one that is not),
 * with and without the bias, alpha 1 and 0.5, beta 0 over NaN in C and 0.5, and in column-major
 * as one column of C. */
static size_t gen_gemm_bias_act_row(xoc_shape *out)
{
    static const int acts[] = {XO_IDENTITY, XO_TANH, XO_RELU, XO_SIGMOID};
    static const size_t wide[] = {9, 16, 17, 33, 48, 63, 64, 65, 100, 129};
    size_t c = 0;
    for (size_t n = 1; n <= 8; n++)
        for (size_t k = 3; k <= 100; k += 97) {
            xoc_shape s = gba_shape(0, 0, 0, 1, n, k, n % 2 ? 0 : 0.5, 1, acts[n % 4]);
            s.pad[1] = 0;
            xoc_push(out, &c, s);
        }
    for (size_t w = 0; w < XOC_N(wide); w++)
        for (size_t q = 0; q < 5; q++) {
            const size_t k = q < 4 ? q + 1 : 17, i = w * 5 + q + 1, col = i % 5 == 4; /* column-major: C is wide x 1 */
            xoc_shape s = gba_shape((int)col, (int)(i % 3 == 2), 0, col ? wide[w] : 1, col ? 1 : wide[w], k,
                                    i % 4 == 0 ? 0.5 : 0, i % 7 != 6, acts[i % 4]);
            s.alpha = i % 6 == 5 ? 0.5 : 1;
            xoc_push(out, &c, s);
        }
    return c;
}

/* Tiles with the epilogue (cpu_small.c: one line of C wider than the row kernel, 129 to 257,
 * k from 5, gets a layer's bias by column and tanh or relu inline with alpha 1 and beta 0,
 * else the general epilogue, on each vector in registers; column-major, C one column, the
 * bias by C^T's row); then several lines, m 2-31 past every count of 8-row tiles, which get
 * the plain tiles and the epilogue's loops after. Alpha 1 or 0.5, beta 0 over NaN or 0.5,
 * with and without the bias. */
static size_t gen_gemm_bias_act_tiles(xoc_shape *out)
{
    static const int acts[] = {XO_TANH, XO_RELU, XO_IDENTITY, XO_SIGMOID};
    static const size_t wide[] = {129, 130, 143, 144, 161, 200, 257};
    static const size_t ms[] = {2, 4, 7, 8, 12, 15, 20, 31};
    static const size_t ks[] = {5, 9, 17, 33};
    size_t c = 0;
    for (size_t i = 0; i < XOC_N(wide) + XOC_N(ms); i++)
        for (size_t q = 0; q < 3; q++) {
            const size_t t = i * 3 + q, k = ks[(i + q) % XOC_N(ks)];
            const int col = t % 5 == 4, line = i < XOC_N(wide);
            const size_t m = line ? 1 : ms[i - XOC_N(wide)], n = line ? wide[i] : 8 + t % 33;
            xoc_shape s = gba_shape(col, t % 3 == 1, 0, col ? n : m, col ? m : n, k, t % 4 == 3 ? 0.5 : 0,
                                    t % 7 != 6, acts[t % 4]);
            s.alpha = t % 6 == 5 ? 0.5 : 1;
            xoc_push(out, &c, s);
        }
    return c;
}

/* Medium products (the tiles over the pool, with AVX-512) with the epilogue in registers: an
 * RNN's hidden layer (beta = 1, bias by column, tanh), column-major (the bias by C^T's rows),
 * B transposed, and a long k in blocks (the epilogue on the last block only). */
static size_t gen_gemm_bias_act_medium(xoc_shape *out)
{
    static const int acts[] = {XO_TANH, XO_RELU, XO_SIGMOID, XO_GELU, XO_SILU, XO_IDENTITY};
    static const size_t dims[][3] = {{100, 256, 256}, {64, 300, 40}, {40, 200, 3000}, {65, 136, 100}, {130, 24, 4100}};
    size_t c = 0;
    for (size_t d = 0; d < XOC_N(dims); d++)
        for (int l = 0; l < 2; l++) {
            const size_t t = d * 2 + (size_t)l;
            xoc_shape s = gba_shape(l, 0, d == 3, l ? dims[d][1] : dims[d][0], l ? dims[d][0] : dims[d][1], dims[d][2],
                                    t % 3 == 1 ? 0 : 1, t % 4 != 3, acts[t % XOC_N(acts)]);
            s.alpha = t % 5 == 4 ? 0.5 : 1;
            xoc_push(out, &c, s);
        }
    return c;
}

/* The hidden layer's product (bias, activation, beta 1 or 0) with the pool's worker awake:
 * split by C's columns, the bias offset by each panel's first column (by C^T's rows when
 * column-major), and by rows past 256 KB of A. */
static size_t gen_gemm_bias_act_pooled(xoc_shape *out)
{
    static const int acts[] = {XO_TANH, XO_RELU, XO_SIGMOID, XO_IDENTITY};
    static const size_t dims[][3] = {{100, 256, 256}, {50, 136, 100}, {1200, 96, 64}};
    size_t c = 0;
    for (size_t d = 0; d < XOC_N(dims); d++)
        for (int q = 0; q < 4; q++) {
            const int l = q & 1;
            xoc_shape s = gba_shape(l, 0, q == 2, l ? dims[d][1] : dims[d][0], l ? dims[d][0] : dims[d][1],
                                    dims[d][2], q < 2 ? 1 : 0, q != 3, acts[(d + (size_t)q) % XOC_N(acts)]);
            s.pooled = 1;
            xoc_push(out, &c, s);
        }
    return c;
}

/* ---- the table ------------------------------------------------------------------------ */

static const xoc_row ROWS[] = {
    {"gemm", gen_gemm, run_gemm, XOC_CLOSE, 0, 0},
    {"gemm", gen_gemm_small, run_gemm, XOC_CLOSE, 0, 0},
    {"gemm", gen_gemm_ode, run_gemm, XOC_CLOSE, 0, 0},
    {"gemm", gen_gemm_narrow, run_gemm, XOC_CLOSE, 0, 0},
    {"gemm", gen_gemm_row, run_gemm, XOC_CLOSE, 0, 0},
    {"gemm", gen_gemm_row_dense, run_gemm, XOC_CLOSE, 0, 0},
    {"gemm", gen_gemm_row_wide, run_gemm, XOC_CLOSE, 0, 0},
    {"gemm", gen_gemm_tiles, run_gemm, XOC_CLOSE, 0, 0},
    {"gemm", gen_gemm_medium, run_gemm, XOC_CLOSE, 0, 0},
    {"gemm", gen_gemm_kblocks, run_gemm, XOC_CLOSE, 0, 0},
    {"gemm", gen_gemm_pooled, run_gemm, XOC_CLOSE, 0, 0},
    {"gemv", gen_gemv, run_gemv, XOC_CLOSE, 0, 0},
    {"gemv", gen_gemv_small, run_gemv, XOC_CLOSE, 0, 0},
    {"axpy", gen_vec_incs, run_axpy, XOC_CLOSE, 0, 0},
    {"scal", gen_scal, run_scal, XOC_CLOSE, 0, 0},
    {"dot", gen_dot, run_dot, XOC_CLOSE, 0, 0},
    {"nrm2", gen_dot, run_nrm2, XOC_CLOSE, 0, 0},
    {"unary", gen_unary, run_unary, XOC_CLOSE, 0, 0},
    {"binary", gen_binary, run_binary, XOC_CLOSE, 0, 0},
    {"binary", gen_binary_nan, run_binary, XOC_CLOSE, 0, 0},
    {"bias", gen_bias, run_bias, XOC_CLOSE, 0, 0},
    {"reduce", gen_reduce, run_reduce, XOC_CLOSE, 0, 0},
    {"reduce", gen_reduce_nan, run_reduce, XOC_CLOSE, 0, 0},
    {"copy", gen_vec_incs, run_copy, XOC_BITS, 0, 0},
    {"fill", gen_fill, run_fill, XOC_BITS, 0, 0},
    {"axpby", gen_axpby, run_axpby, XOC_CLOSE, 0, 0},
    {"ger", gen_ger, run_ger, XOC_CLOSE, 0, 0},
    {"binary_scalar", gen_binary_scalar, run_binary_scalar, XOC_CLOSE, 0, 0},
    {"scale_by", gen_scale_by, run_scale_by, XOC_CLOSE, 0, 0},
    {"softmax", gen_softmax, run_softmax, XOC_CLOSE | XOC_FINITE, 0, 0},
    {"softmax_xent", gen_softmax_xent, run_softmax_xent, XOC_CLOSE, 0, 0},
    {"reduce_axis", gen_reduce_axis, run_reduce_axis, XOC_CLOSE, 0, 0},
    {"reduce_axis", gen_reduce_axis_nan, run_reduce_axis, XOC_CLOSE, 0, 0},
    {"argmax", gen_argmax, run_argmax, XOC_CLOSE, 0, 0},
    {"gemm_bias_act", gen_gemm_bias_act, run_gemm_bias_act, XOC_CLOSE, 0, 0},
    {"gemm_bias_act", gen_gemm_bias_act_small, run_gemm_bias_act, XOC_CLOSE, 0, 0},
    {"gemm_bias_act", gen_gemm_bias_act_narrow, run_gemm_bias_act, XOC_CLOSE, 0, 0},
    {"gemm_bias_act", gen_gemm_bias_act_row, run_gemm_bias_act, XOC_CLOSE, 0, 0},
    {"gemm_bias_act", gen_gemm_bias_act_tiles, run_gemm_bias_act, XOC_CLOSE, 0, 0},
    {"gemm_bias_act", gen_gemm_bias_act_medium, run_gemm_bias_act, XOC_CLOSE, 0, 0},
    {"gemm_bias_act", gen_gemm_bias_act_pooled, run_gemm_bias_act, XOC_CLOSE, 0, 0},
};
enum { XOC_ROWS = (int)(sizeof ROWS / sizeof ROWS[0]) };

/* Every op kind of XO_OP_MAP has a row: a new kind without one fails here. */
static void every_kind_has_a_row(void **state)
{
    (void)state;
#define XOC_KIND_NAME_(K, name, nargs, out, operands) name,
    static const char *const kinds[] = {XO_OP_MAP(XOC_KIND_NAME_)};
#undef XOC_KIND_NAME_
    for (size_t k = 0; k < XOC_N(kinds); k++) {
        int found = 0;
        for (int r = 0; r < XOC_ROWS && !found; r++) found = strcmp(ROWS[r].op, kinds[k]) == 0;
        if (!found) fail_msg("op kind \"%s\" has no row in the conformance table", kinds[k]);
    }
}

/* ---- the harness ---------------------------------------------------------------------- */

typedef struct xoc_job {
    const xoc_row *row;
    int f64;
    char name[48];
} xoc_job;

static size_t g_cases; /* cases run on the device under test, for the summary line */

/* Written operand `a` on the device against its reference: 0, or 1 with the label printed
 * (worst element: the largest error relative to max(1, |want|), a NaN mismatch first). */
static int xoc_compare(const xoc_job *j, const xoc_t *t, const xoc_arg *a, const char *label)
{
    void *raw = xot_read_all(a->buf);
    double tol = j->f64 ? (j->row->tol_d ? j->row->tol_d : XOT_TOL_D) : (j->row->tol_f ? j->row->tol_f : XOT_TOL_F);
    int bits = (j->row->compare & XOC_BITS) != 0 || a->is_int, finite = (j->row->compare & XOC_FINITE) != 0;
    size_t bad = 0, worst = 0;
    double worst_err = -1;
    for (size_t i = 0; i < a->len; i++) {
        double got = xoc_val(a, raw, i), want = xoc_get(a, i), err;
        if (bits)
            err = memcmp((char *)raw + i * a->esz, (char *)a->host + i * a->esz, a->esz) ? INFINITY : 0;
        else if (isnan(want) || isnan(got))
            err = isnan(want) && isnan(got) ? 0 : INFINITY;
        else
            err = fabs(got - want) / (fabs(want) > 1 ? fabs(want) : 1);
        if (finite && !isfinite(got)) err = INFINITY;
        if (err > (bits ? 0 : tol)) bad++;
        if (err > worst_err) worst_err = err, worst = i;
    }
    if (bad) {
        double got = xoc_val(a, raw, worst);
        print_error("FAIL %s [%s] on %s: %s[%zu] = %.17g, want %.17g (%zu of %zu elements beyond %s)\n", label,
                    t->shape, g_devname, a->name, worst, got, xoc_get(a, worst), bad, a->len,
                    bits ? "bit-exact" : finite ? "tolerance or not finite" : "tolerance");
    }
    free(raw);
    return bad != 0;
}

/* One case: 0, or 1 with a label printed. */
static int xoc_case(const xoc_job *j, const xoc_shape *s, uint64_t seed)
{
    xoc_t t = {.f64 = j->f64, .esz = j->f64 ? sizeof(double) : sizeof(float), .seed = seed};
    char label[64], dec[32];
    snprintf(label, sizeof label, "%s %s", j->row->op, j->f64 ? "f64" : "f32");
    j->row->run(&t, s);
    int failed = 0;
    if (t.st != XO_OK) {
        print_error("FAIL %s [%s] on %s: returned %s: %s\n", label, t.shape, g_devname, xo_status_string(t.st),
                    xo_last_error());
        failed = 1;
    } else {
        xo_decision d;
        memset(&d, 0, sizeof d);
        snprintf(dec, sizeof dec, "%c%s", j->f64 ? 'd' : 's', j->row->op);
        xo_status st = xo_last_decision(g_ctx, &d);
        int dev_ok = g_forced ? d.device == g_dev : d.device >= 0 && d.device < xo_device_count(g_ctx);
        if (st != XO_OK || strncmp(d.op, dec, sizeof d.op) != 0 || !dev_ok || d.forced != g_forced) {
            print_error("FAIL %s [%s] on %s: decision op=\"%.32s\" device=%d forced=%d, want op=\"%s\" device=%d "
                        "forced=%d\n", label, t.shape, g_devname, d.op, d.device, d.forced, dec,
                        g_forced ? g_dev : -1, g_forced);
            failed = 1;
        }
        for (int i = 0; i < t.nargs; i++) {
            const xoc_arg *a = &t.arg[i];
            if (a->written)
                failed |= xoc_compare(j, &t, a, label);
            else {
                void *now = xot_read_all(a->buf);
                if (memcmp(now, a->orig, a->len * a->esz) != 0) {
                    print_error("FAIL %s [%s] on %s: input %s changed\n", label, t.shape, g_devname, a->name);
                    failed = 1;
                }
                free(now);
            }
        }
    }
    for (int i = 0; i < t.nargs; i++) {
        free(t.arg[i].host);
        free(t.arg[i].orig);
        xo_buffer_destroy(t.arg[i].buf);
    }
    return failed;
}

/* A row in one precision: every shape of its generator; all failures printed, then one
 * cmocka failure. */
static void xoc_run_job(void **state)
{
    const xoc_job *j = *state;
    if (j->f64 && !g_fp64) skip();
    xoc_shape *shapes = calloc(XOC_MAX_SHAPES, sizeof *shapes);
    assert_non_null(shapes);
    size_t n = j->row->gen(shapes), failed = 0;
    uint64_t seed = 1000 * (uint64_t)(j->row - ROWS + 1) + (j->f64 ? 500000 : 0);
    size_t i = 0;
    for (; i < n && failed < XOC_MAX_REPORTS; i++) failed += (size_t)xoc_case(j, &shapes[i], seed + 8 * i);
    if (i < n) print_error("%s: stopped after %d failed cases\n", j->name, XOC_MAX_REPORTS);
    g_cases += i;
    free(shapes);
    if (failed) fail_msg("%s: %zu case(s) failed", j->name, failed);
}

static int run_suite(const char *label)
{
    static xoc_job jobs[2 * XOC_ROWS];
    struct CMUnitTest tests[2 * XOC_ROWS + 8];
    int nt = 0;
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(every_kind_has_a_row);
    for (int f64 = 0; f64 <= 1; f64++)
        for (int r = 0; r < XOC_ROWS; r++) {
            xoc_job *j = &jobs[f64 * XOC_ROWS + r];
            j->row = &ROWS[r];
            j->f64 = f64;
            int again = 0; /* rows before this one for the same op */
            for (int q = 0; q < r; q++) again += strcmp(ROWS[q].op, ROWS[r].op) == 0;
            snprintf(j->name, sizeof j->name, again ? "%s %s #%d" : "%s %s", ROWS[r].op, f64 ? "f64" : "f32",
                     again + 1);
            tests[nt++] = (struct CMUnitTest){.name = j->name, .test_func = xoc_run_job, .initial_state = j};
        }
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(conformance_zero_sizes); /* test_conformance_zero.c */
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(conformance_zero_sizes_nn);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(conformance_disjoint_same_buffer);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(conformance_max_references); /* test_conformance_max.c */
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(conformance_max_plan);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(conformance_argmax_plan);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(conformance_unary_chains); /* test_conformance_map.c */
    g_cases = 0;
    int failed = _cmocka_run_group_tests(label, tests, (size_t)nt, NULL, NULL);
    printf("%s: %zu cases in %d rows checked against the reference\n", label, g_cases, XOC_ROWS);
    return failed;
}

/* Force device `dev` (by its spec) and run the suite there. */
static int run_on(int dev)
{
    char label[256];
    xo_device_info info;
    if (xot_force_device(g_ctx, dev, "conformance", &info, label, sizeof label)) return 1;
    g_dev = dev;
    g_forced = 1;
    g_fp64 = info.fp64;
    xot_device_spec(g_ctx, dev, g_devname, sizeof g_devname);
    return run_suite(label);
}

extern int xo__cpu_isa_limit; /* plugins/cpu/cpu_blas.c: the CPU's kernels for at most this set */

/* usage: test_conformance [device|auto [avx2|baseline]]: the second argument runs the CPU
 * plugin's kernels for that instruction set (white-box), where the CPU has a wider one. */
int main(int argc, char **argv)
{
    if (argc > 2)
        xo__cpu_isa_limit = strcmp(argv[2], "avx2") == 0 ? 1 : strcmp(argv[2], "baseline") == 0 ? 0 : 2;
    if (xo_context_create(&g_ctx) != XO_OK) {
        fprintf(stderr, "xo_context_create: %s\n", xo_last_error());
        return 1;
    }
    int failed = 0;
    if (argc < 2) {
        for (int d = 0; d < xo_device_count(g_ctx); d++) failed += run_on(d);
    } else if (strcmp(argv[1], "auto") == 0) {
        if (xo_set_device(g_ctx, "auto") != XO_OK) {
            fprintf(stderr, "xo_set_device(auto): %s\n", xo_last_error());
            failed = 1;
        } else {
            g_dev = -1;
            g_forced = 0;
            g_fp64 = 1;
            snprintf(g_devname, sizeof g_devname, "auto");
            failed = run_suite("conformance auto");
        }
    } else {
        int dev = -1;
        xo_status st = xo_device_find(g_ctx, argv[1], &dev);
        if (st == XO_ERR_NO_DEVICE) {
            printf("no device \"%s\" here: skipped\n", argv[1]);
            xo_context_destroy(g_ctx);
            return XOT_EXIT_SKIP;
        }
        if (st != XO_OK) {
            fprintf(stderr, "xo_device_find(%s): %s\n", argv[1], xo_last_error());
            failed = 1;
        } else {
            failed = run_on(dev);
        }
    }
    xo_context_destroy(g_ctx);
    return failed ? 1 : 0;
}
