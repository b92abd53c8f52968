/* Conformance: every op of the contract, in single and double precision, against a
 * plain reference loop, on one device or on all of them.
 *
 *   test_conformance            every device of this machine, each forced in turn
 *   test_conformance SPEC       one device ("cpu", "opencl", "opencl:1", "cuda", ...),
 *                               exit 77 when it does not exist here
 *   test_conformance auto       no forced device: the scheduler places every op
 *
 * The typed test bodies live in the template section at the end of this file, which
 * the file includes twice (T = float, then T = double). */
#ifndef XOT_T

#include "xo_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_conformance.h"

xo_context *g_ctx;
int g_dev = -1;  /* forced device index, -1 under "auto" */
int g_forced;    /* 1 when a device is forced */
int g_fp64 = 1;  /* the device runs double precision */

/* The decision of the op just run: the forced device and forced = 1, or under auto any
 * device and forced = 0. */
void check_decision(const char *prefix, const char *op)
{
    char name[32];
    snprintf(name, sizeof name, "%s%s", prefix, op);
    xot_assert_decision(g_ctx, name, g_forced ? g_dev : -1, g_forced);
}

void check_unchanged(xo_buffer *b, const void *orig, const char *what)
{
    void *now = xot_read_all(b);
    int diff = memcmp(now, orig, xo_buffer_size(b)) != 0;
    free(now);
    if (diff) {
        print_error("%s: an input buffer changed\n", what);
        fail();
    }
}

#define XOT_T float
#define XOT_P s
#define XOT_PS "s"
#define XOT_FILL xot_fill_f
#define XOT_CLOSE xot_assert_close_f
#include "test_conformance.c"
#undef XOT_T
#undef XOT_P
#undef XOT_PS
#undef XOT_FILL
#undef XOT_CLOSE

#define XOT_T double
#define XOT_P d
#define XOT_PS "d"
#define XOT_FILL xot_fill_d
#define XOT_CLOSE xot_assert_close_d
#include "test_conformance.c"
#undef XOT_T
#undef XOT_P
#undef XOT_PS
#undef XOT_FILL
#undef XOT_CLOSE

#define BOTH(name) cmocka_unit_test(test_##name##_s), cmocka_unit_test(test_##name##_d)

static int run_suite(const char *label)
{
    const struct CMUnitTest tests[] = {
        BOTH(gemm),  BOTH(gemv),  BOTH(axpy),   BOTH(scal),
        BOTH(dot),   BOTH(nrm2),  BOTH(unary),  BOTH(binary),
        BOTH(bias),  BOTH(reduce),
        cmocka_unit_test(conformance_zero_sizes),         /* test_conformance_zero.c */
        cmocka_unit_test(conformance_disjoint_same_buffer),
    };
    int failed = _cmocka_run_group_tests(label, tests, sizeof tests / sizeof tests[0], NULL, NULL);
    failed += conformance_max(label);      /* test_conformance_max.c */
    failed += conformance_map(label);      /* test_conformance_map.c */
    return failed + conformance_nn(label); /* the 0.3 ops: test_conformance_nn.c */
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
    return run_suite(label);
}

int main(int argc, char **argv)
{
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

#else /* ---- template section: T = XOT_T, prefix XOT_P ------------------------------ */

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define T XOT_T
#define XO(name) CAT(CAT(xo_, XOT_P), name)         /* xo_sgemm */
#define REF(name) CAT(CAT(xot_ref_, XOT_P), name)   /* xot_ref_sgemm */
#define TEST(name) CAT(CAT(test_, name), CAT(_, XOT_P)) /* test_gemm_s */
#define CASE(name) CAT(CAT(case_, name), CAT(_, XOT_P))
#define HOST(n) ((T *)calloc((n) ? (n) : 1, sizeof(T)))

static void CASE(gemm)(xo_layout lay, xo_transpose ta, xo_transpose tb, size_t m, size_t n,
                       size_t k, T alpha, T beta, int nan_c, uint64_t seed)
{
    size_t ar = ta == XO_NO_TRANS ? m : k, ac = ta == XO_NO_TRANS ? k : m;
    size_t br = tb == XO_NO_TRANS ? k : n, bc = tb == XO_NO_TRANS ? n : k;
    size_t lda = (lay == XO_ROW_MAJOR ? ac : ar) + 3;
    size_t ldb = (lay == XO_ROW_MAJOR ? bc : br) + 2;
    size_t ldc = (lay == XO_ROW_MAJOR ? n : m) + 1;
    size_t aoff = 5, boff = 3, coff = 7;
    size_t alen = aoff + xot_mat_span(lay, ar, ac, lda) + 2;
    size_t blen = boff + xot_mat_span(lay, br, bc, ldb) + 1;
    size_t clen = coff + xot_mat_span(lay, m, n, ldc) + 3;
    T *ha = HOST(alen), *hb = HOST(blen), *hc = HOST(clen);
    XOT_FILL(ha, alen, seed, -1, 1);
    XOT_FILL(hb, blen, seed + 1, -1, 1);
    XOT_FILL(hc, clen, seed + 2, -1, 1);
    if (nan_c)
        for (size_t i = 0; i < clen; i++) hc[i] = (T)NAN;
    xo_buffer *a = xot_buffer(g_ctx, ha, alen * sizeof(T));
    xo_buffer *b = xot_buffer(g_ctx, hb, blen * sizeof(T));
    xo_buffer *c = xot_buffer(g_ctx, hc, clen * sizeof(T));
    xot_assert_ok(XO(gemm)(g_ctx, lay, ta, tb, m, n, k, alpha, a, aoff, lda, b, boff, ldb, beta,
                           c, coff, ldc));
    check_decision(XOT_PS, "gemm");
    REF(gemm)(lay, ta, tb, m, n, k, alpha, ha + aoff, lda, hb + boff, ldb, beta, hc + coff, ldc);
    T *got = xot_read_all(c);
    char what[160];
    snprintf(what, sizeof what, "%sgemm layout=%d ta=%d tb=%d m=%zu n=%zu k=%zu beta=%g%s",
             XOT_PS, lay, ta, tb, m, n, k, (double)beta, nan_c ? " (C was NaN)" : "");
    XOT_CLOSE(got, hc, clen, what);
    check_unchanged(a, ha, what);
    check_unchanged(b, hb, what);
    free(got);
    free(ha);
    free(hb);
    free(hc);
    xo_buffer_destroy(a);
    xo_buffer_destroy(b);
    xo_buffer_destroy(c);
}

static void TEST(gemm)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t dims[][3] = {{1, 1, 1}, {7, 7, 7}, {100, 3, 7}, {3, 100, 33}, {33, 130, 17}};
    const xo_layout lays[] = {XO_ROW_MAJOR, XO_COL_MAJOR};
    const xo_transpose trs[] = {XO_NO_TRANS, XO_TRANS};
    uint64_t seed = 100;
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++)
                for (size_t s = 0; s < sizeof dims / sizeof dims[0]; s++)
                    CASE(gemm)(lays[l], trs[i], trs[j], dims[s][0], dims[s][1], dims[s][2],
                               (T)1.5, (T)-0.5, 0, seed++);
    /* beta = 0: C's old contents (NaN here) are never read. alpha = 0: C = beta * C. */
    for (int l = 0; l < 2; l++) {
        CASE(gemm)(lays[l], XO_NO_TRANS, XO_TRANS, 7, 33, 5, (T)1, (T)0, 1, seed++);
        CASE(gemm)(lays[l], XO_TRANS, XO_NO_TRANS, 130, 7, 9, (T)0.75, (T)0, 0, seed++);
        CASE(gemm)(lays[l], XO_NO_TRANS, XO_NO_TRANS, 9, 10, 11, (T)0, (T)2, 0, seed++);
    }
    /* Small products (the CPU's own kernels, plugins/cpu/cpu_small.c, and OpenBLAS beside
     * them): random shapes with m, n or k = 1, narrow and wide C, short and long k, every
     * layout and transpose, beta = 0 over NaN in C and beta != 0. */
    static const size_t sides[] = {1, 2, 3, 7, 8, 16, 17, 31, 32, 33, 100};
    const size_t nsides = sizeof sides / sizeof sides[0];
    uint64_t r = 0x9e3779b97f4a7c15u;
    for (int t = 0; t < 96; t++) {
        size_t d[3];
        for (int q = 0; q < 3; q++) {
            r = r * 6364136223846793005u + 1442695040888963407u;
            d[q] = sides[(r >> 33) % nsides];
        }
        if (t % 3 == 0)
            d[t / 3 % 3] = 1; /* m, n or k = 1 in turn */
        int nan_c = t % 2;
        CASE(gemm)(lays[t / 2 % 2], trs[t / 4 % 2], trs[t / 8 % 2], d[0], d[1], d[2], (T)1.25,
                   nan_c ? (T)0 : (T)0.5, nan_c, seed++);
    }
    /* The neural ODE's shapes, forward and backward. */
    static const size_t ode[][5] = {{16, 3, 100, 0, 0}, {100, 3, 16, 0, 0}, {1, 100, 3, 0, 0},
                                    {16, 100, 3, 0, 0}, {1, 3, 100, 0, 0},  {16, 100, 3, 0, 1},
                                    {100, 3, 16, 1, 0}, {3, 100, 16, 1, 0}, {1, 3, 100, 1, 0}};
    for (size_t i = 0; i < sizeof ode / sizeof ode[0]; i++)
        for (int l = 0; l < 2; l++)
            CASE(gemm)(lays[l], trs[ode[i][3]], trs[ode[i][4]], ode[i][0], ode[i][1], ode[i][2], (T)1,
                       (T)0, 1, seed++);
    /* One row of C up to 8 wide (cpu_small.c's narrow rows, whose vector reads run on into
     * B's next row and whose last rows come from a padded copy), every k from 1 to 9 and
     * long, both layouts (column-major: one column), A either way. */
    static const size_t ks[] = {1, 2, 3, 4, 5, 9, 100};
    for (size_t n = 1; n <= 8; n++)
        for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++)
            CASE(gemm)(lays[(n + q) % 2], trs[q % 2], XO_NO_TRANS, (n + q) % 2 ? n : 1, (n + q) % 2 ? 1 : n,
                       ks[q], (T)0.75, n % 2 ? (T)0 : (T)1.5, (int)(n % 2), seed++);
}

static void CASE(gemv)(xo_layout lay, xo_transpose ta, size_t m, size_t n, size_t incx,
                       size_t incy, T alpha, T beta, int nan_y, uint64_t seed)
{
    size_t lda = (lay == XO_ROW_MAJOR ? n : m) + 2;
    size_t lenx = ta == XO_NO_TRANS ? n : m, leny = ta == XO_NO_TRANS ? m : n;
    size_t aoff = 3, xoff = 2, yoff = 5;
    size_t alen = aoff + xot_mat_span(lay, m, n, lda) + 1;
    size_t xlen = xoff + xot_span(lenx, incx) + 1, ylen = yoff + xot_span(leny, incy) + 2;
    T *ha = HOST(alen), *hx = HOST(xlen), *hy = HOST(ylen);
    XOT_FILL(ha, alen, seed, -1, 1);
    XOT_FILL(hx, xlen, seed + 1, -1, 1);
    XOT_FILL(hy, ylen, seed + 2, -1, 1);
    if (nan_y)
        for (size_t i = 0; i < leny; i++) hy[yoff + i * incy] = (T)NAN;
    xo_buffer *a = xot_buffer(g_ctx, ha, alen * sizeof(T));
    xo_buffer *x = xot_buffer(g_ctx, hx, xlen * sizeof(T));
    xo_buffer *y = xot_buffer(g_ctx, hy, ylen * sizeof(T));
    xot_assert_ok(XO(gemv)(g_ctx, lay, ta, m, n, alpha, a, aoff, lda, x, xoff, incx, beta, y,
                           yoff, incy));
    check_decision(XOT_PS, "gemv");
    REF(gemv)(lay, ta, m, n, alpha, ha + aoff, lda, hx + xoff, incx, beta, hy + yoff, incy);
    T *got = xot_read_all(y);
    char what[160];
    snprintf(what, sizeof what, "%sgemv layout=%d ta=%d m=%zu n=%zu incx=%zu incy=%zu beta=%g",
             XOT_PS, lay, ta, m, n, incx, incy, (double)beta);
    XOT_CLOSE(got, hy, ylen, what);
    check_unchanged(a, ha, what);
    check_unchanged(x, hx, what);
    free(got);
    free(ha);
    free(hx);
    free(hy);
    xo_buffer_destroy(a);
    xo_buffer_destroy(x);
    xo_buffer_destroy(y);
}

static void TEST(gemv)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t dims[][2] = {{1, 1}, {7, 33}, {100, 3}, {3, 100}, {130, 130}};
    const xo_layout lays[] = {XO_ROW_MAJOR, XO_COL_MAJOR};
    const xo_transpose trs[] = {XO_NO_TRANS, XO_TRANS};
    uint64_t seed = 200;
    for (int l = 0; l < 2; l++)
        for (int t = 0; t < 2; t++)
            for (size_t s = 0; s < sizeof dims / sizeof dims[0]; s++) {
                size_t inc = s % 2 ? 2 : 1;
                CASE(gemv)(lays[l], trs[t], dims[s][0], dims[s][1], inc, inc + (s % 3),
                           (T)1.25, (T)0.5, 0, seed++);
            }
    CASE(gemv)(XO_ROW_MAJOR, XO_NO_TRANS, 33, 7, 1, 3, (T)2, (T)0, 1, seed++);
    CASE(gemv)(XO_COL_MAJOR, XO_TRANS, 7, 33, 2, 1, (T)-1, (T)0, 1, seed++);
}

static void TEST(axpy)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t ns[] = {1, 7, 33, 130, 1000};
    static const size_t incs[][2] = {{1, 1}, {2, 3}, {3, 1}};
    uint64_t seed = 300;
    for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++)
        for (size_t i = 0; i < 3; i++) {
            size_t n = ns[s], incx = incs[i][0], incy = incs[i][1], xoff = 4, yoff = 1;
            size_t xlen = xoff + xot_span(n, incx) + 2, ylen = yoff + xot_span(n, incy) + 3;
            T *hx = HOST(xlen), *hy = HOST(ylen);
            XOT_FILL(hx, xlen, seed++, -1, 1);
            XOT_FILL(hy, ylen, seed++, -1, 1);
            xo_buffer *x = xot_buffer(g_ctx, hx, xlen * sizeof(T));
            xo_buffer *y = xot_buffer(g_ctx, hy, ylen * sizeof(T));
            xot_assert_ok(XO(axpy)(g_ctx, n, (T)-0.75, x, xoff, incx, y, yoff, incy));
            check_decision(XOT_PS, "axpy");
            REF(axpy)(n, (T)-0.75, hx + xoff, incx, hy + yoff, incy);
            T *got = xot_read_all(y);
            XOT_CLOSE(got, hy, ylen, XOT_PS "axpy");
            check_unchanged(x, hx, XOT_PS "axpy");
            free(got);
            free(hx);
            free(hy);
            xo_buffer_destroy(x);
            xo_buffer_destroy(y);
        }
}

static void TEST(scal)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t ns[] = {1, 7, 33, 130, 1000};
    uint64_t seed = 400;
    for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++)
        for (size_t inc = 1; inc <= 3; inc += 2) {
            size_t n = ns[s], off = 3, len = off + xot_span(n, inc) + 2;
            T *hx = HOST(len);
            XOT_FILL(hx, len, seed++, -1, 1);
            xo_buffer *x = xot_buffer(g_ctx, hx, len * sizeof(T));
            xot_assert_ok(XO(scal)(g_ctx, n, (T)1.5, x, off, inc));
            check_decision(XOT_PS, "scal");
            REF(scal)(n, (T)1.5, hx + off, inc);
            T *got = xot_read_all(x);
            XOT_CLOSE(got, hx, len, XOT_PS "scal");
            free(got);
            free(hx);
            xo_buffer_destroy(x);
        }
}

/* dot (two = 1) or nrm2 (two = 0) into out[out_off]; the rest of out stays. */
static void CASE(dotnrm)(int two, size_t n, size_t incx, size_t incy, uint64_t seed)
{
    size_t xoff = 2, yoff = 5, ooff = 3, olen = 8;
    size_t xlen = xoff + xot_span(n, incx) + 1, ylen = yoff + xot_span(n, incy) + 1;
    T *hx = HOST(xlen), *hy = HOST(ylen), *ho = HOST(olen);
    XOT_FILL(hx, xlen, seed, -1, 1);
    XOT_FILL(hy, ylen, seed + 1, -1, 1);
    XOT_FILL(ho, olen, seed + 2, -1, 1);
    xo_buffer *x = xot_buffer(g_ctx, hx, xlen * sizeof(T));
    xo_buffer *y = xot_buffer(g_ctx, hy, ylen * sizeof(T));
    xo_buffer *o = xot_buffer(g_ctx, ho, olen * sizeof(T));
    if (two) {
        xot_assert_ok(XO(dot)(g_ctx, n, x, xoff, incx, y, yoff, incy, o, ooff));
        check_decision(XOT_PS, "dot");
        ho[ooff] = REF(dot)(n, hx + xoff, incx, hy + yoff, incy);
    } else {
        xot_assert_ok(XO(nrm2)(g_ctx, n, x, xoff, incx, o, ooff));
        check_decision(XOT_PS, "nrm2");
        ho[ooff] = REF(nrm2)(n, hx + xoff, incx);
    }
    T *got = xot_read_all(o);
    char what[96];
    snprintf(what, sizeof what, "%s%s n=%zu incx=%zu incy=%zu", XOT_PS, two ? "dot" : "nrm2", n,
             incx, incy);
    XOT_CLOSE(got, ho, olen, what);
    check_unchanged(x, hx, what);
    check_unchanged(y, hy, what);
    free(got);
    free(hx);
    free(hy);
    free(ho);
    xo_buffer_destroy(x);
    xo_buffer_destroy(y);
    xo_buffer_destroy(o);
}

static void TEST(dot)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t ns[] = {1, 7, 33, 130, 1000, 4099};
    uint64_t seed = 500;
    for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++) {
        CASE(dotnrm)(1, ns[s], 1, 1, seed += 3);
        CASE(dotnrm)(1, ns[s], 2, 3, seed += 3);
    }
}

static void TEST(nrm2)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t ns[] = {1, 7, 33, 130, 1000, 4099};
    uint64_t seed = 600;
    for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++) {
        CASE(dotnrm)(0, ns[s], 1, 1, seed += 3);
        CASE(dotnrm)(0, ns[s], 3, 1, seed += 3);
    }
}

static void TEST(unary)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t ns[] = {1, 7, 130, 1000, 70000};
    uint64_t seed = 700;
    /* every row of the op map, on inputs from its domain (negatives included) */
    for (int op = 0; op < XO_UNARY_OP_COUNT; op++)
        for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++) {
            size_t n = ns[s], xoff = 3, yoff = 6, xlen = n + 5, ylen = n + 9;
            T *hx = HOST(xlen), *hy = HOST(ylen);
            CAT(xot_unary_fill_, XOT_P)(op, hx, xlen, seed++);
            XOT_FILL(hy, ylen, seed++, -1, 1);
            xo_buffer *x = xot_buffer(g_ctx, hx, xlen * sizeof(T));
            xo_buffer *y = xot_buffer(g_ctx, hy, ylen * sizeof(T));
            char what[64];
            snprintf(what, sizeof what, "%sunary %s(%c) n=%zu", XOT_PS, xot_unary_name(op), xot_unary_takes(op), n);
            xot_assert_ok(XO(unary)(g_ctx, (xo_unary_op)op, n, x, xoff, y, yoff));
            check_decision(XOT_PS, "unary");
            REF(unary)((xo_unary_op)op, n, hx + xoff, hy + yoff);
            T *got = xot_read_all(y);
            XOT_CLOSE(got, hy, ylen, what);
            check_unchanged(x, hx, what);
            free(got);
            /* in place: y == x at the same offset */
            xot_assert_ok(XO(unary)(g_ctx, (xo_unary_op)op, n, x, xoff, x, xoff));
            check_decision(XOT_PS, "unary");
            REF(unary)((xo_unary_op)op, n, hx + xoff, hx + xoff);
            got = xot_read_all(x);
            strcat(what, " in place");
            XOT_CLOSE(got, hx, xlen, what);
            free(got);
            free(hx);
            free(hy);
            xo_buffer_destroy(x);
            xo_buffer_destroy(y);
        }
}

static void TEST(binary)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t ns[] = {1, 7, 130, 1000};
    uint64_t seed = 800;
    for (int op = XO_ADD; op < XO_BINARY_OP_COUNT; op++)
        for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++)
            for (int alias = 0; alias < 3; alias++) { /* c separate, c == a, c == b */
                size_t n = ns[s], aoff = 1, boff = 4, coff = 2, len = n + 7;
                T *ha = HOST(len), *hb = HOST(len), *hc = HOST(len);
                XOT_FILL(ha, len, seed++, -2, 2);
                XOT_FILL(hb, len, seed++, 0.5, 2); /* DIV stays well-conditioned */
                XOT_FILL(hc, len, seed++, -1, 1);
                xo_buffer *a = xot_buffer(g_ctx, ha, len * sizeof(T));
                xo_buffer *b = xot_buffer(g_ctx, hb, len * sizeof(T));
                xo_buffer *c = xot_buffer(g_ctx, hc, len * sizeof(T));
                xo_buffer *cb = alias == 0 ? c : alias == 1 ? a : b;
                size_t co = alias == 0 ? coff : alias == 1 ? aoff : boff;
                T *hcb = alias == 0 ? hc : alias == 1 ? ha : hb;
                T *orig_a = HOST(len), *orig_b = HOST(len);
                memcpy(orig_a, ha, len * sizeof(T));
                memcpy(orig_b, hb, len * sizeof(T));
                char what[80];
                snprintf(what, sizeof what, "%sbinary %s n=%zu%s", XOT_PS, xot_binary_name(op), n,
                         alias == 1 ? " c==a" : alias == 2 ? " c==b" : "");
                xot_assert_ok(XO(binary)(g_ctx, (xo_binary_op)op, n, a, aoff, b, boff, cb, co));
                check_decision(XOT_PS, "binary");
                REF(binary)((xo_binary_op)op, n, orig_a + aoff, orig_b + boff, hcb + co);
                T *got = xot_read_all(cb);
                XOT_CLOSE(got, hcb, len, what);
                free(got);
                if (alias != 1) check_unchanged(a, orig_a, what);
                if (alias != 2) check_unchanged(b, orig_b, what);
                free(orig_a);
                free(orig_b);
                free(ha);
                free(hb);
                free(hc);
                xo_buffer_destroy(a);
                xo_buffer_destroy(b);
                xo_buffer_destroy(c);
            }
}

static void TEST(bias)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t dims[][2] = {{1, 1}, {7, 33}, {100, 3}, {3, 100}, {130, 7}};
    uint64_t seed = 900;
    for (size_t s = 0; s < sizeof dims / sizeof dims[0]; s++)
        for (size_t pad = 0; pad <= 3; pad += 3) {
            size_t rows = dims[s][0], cols = dims[s][1], lda = cols + pad, aoff = 2, boff = 1;
            size_t alen = aoff + (rows - 1) * lda + cols + 2, blen = boff + cols + 1;
            T *ha = HOST(alen), *hb = HOST(blen);
            XOT_FILL(ha, alen, seed++, -1, 1);
            XOT_FILL(hb, blen, seed++, -1, 1);
            xo_buffer *a = xot_buffer(g_ctx, ha, alen * sizeof(T));
            xo_buffer *b = xot_buffer(g_ctx, hb, blen * sizeof(T));
            char what[80];
            snprintf(what, sizeof what, "%sbias %zux%zu lda=%zu", XOT_PS, rows, cols, lda);
            xot_assert_ok(XO(bias)(g_ctx, rows, cols, a, aoff, lda, b, boff));
            check_decision(XOT_PS, "bias");
            REF(bias)(rows, cols, ha + aoff, lda, hb + boff);
            T *got = xot_read_all(a);
            XOT_CLOSE(got, ha, alen, what);
            check_unchanged(b, hb, what);
            free(got);
            free(ha);
            free(hb);
            xo_buffer_destroy(a);
            xo_buffer_destroy(b);
        }
}

static void TEST(reduce)(void **state)
{
    (void)state;
    if (!g_fp64) skip();
    static const size_t ns[] = {1, 7, 130, 1000, 4099};
    uint64_t seed = 1000;
    for (int op = XO_SUM; op <= XO_MAX_ELEMENT; op++)
        for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++) {
            size_t n = ns[s], xoff = 3, ooff = 2, xlen = n + 4, olen = 5;
            T *hx = HOST(xlen), *ho = HOST(olen);
            XOT_FILL(hx, xlen, seed++, -1, 1);
            XOT_FILL(ho, olen, seed++, -1, 1);
            if (op == XO_MAX_ELEMENT) hx[xoff + n - 1] = (T)0.999; /* a max at the end */
            xo_buffer *x = xot_buffer(g_ctx, hx, xlen * sizeof(T));
            xo_buffer *o = xot_buffer(g_ctx, ho, olen * sizeof(T));
            char what[80];
            snprintf(what, sizeof what, "%sreduce %s n=%zu", XOT_PS,
                     op == XO_SUM ? "SUM" : "MAX_ELEMENT", n);
            xot_assert_ok(XO(reduce)(g_ctx, (xo_reduce_op)op, n, x, xoff, o, ooff));
            check_decision(XOT_PS, "reduce");
            ho[ooff] = REF(reduce)((xo_reduce_op)op, n, hx + xoff);
            T *got = xot_read_all(o);
            XOT_CLOSE(got, ho, olen, what);
            check_unchanged(x, hx, what);
            free(got);
            free(hx);
            free(ho);
            xo_buffer_destroy(x);
            xo_buffer_destroy(o);
        }
}

#undef CAT_
#undef CAT
#undef T
#undef XO
#undef REF
#undef TEST
#undef CASE
#undef HOST

#endif /* XOT_T */
