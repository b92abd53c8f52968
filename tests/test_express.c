/* The express path (gemm, gemv, axpy on a warm decision) and the full path apply one
 * set of operand rules: around each rule's boundary (a leading dimension of inner - 1
 * and inner, a span that ends exactly at its buffer's end and one element past it, an
 * increment of 0, no buffer, a buffer of another context), in both layouts and every
 * transpose, a call on a warm decision gives the same status, message and result as the
 * same call with the fast paths off; a refused call runs nothing (the express path's
 * host BLAS entry is never reached) and writes nothing, and a valid one matches the
 * reference.
 *
 * The decision cache keys on shapes and buffer sizes, not on offsets, leading
 * dimensions or increments, so every case below finds the warm entry its valid base
 * left: exactly where an express check that accepted too much would run BLAS past a
 * buffer's end. ctest runs it with XO_PLUGINS=cpu. */
#include "xo_test.h"
#include "express_count.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEN 64  /* floats in each buffer */
#define WARM 12 /* past the learning calls (8) */

static xo_context *g_ctx, *g_other;
static xo_buffer *g_buf[3], *g_foreign;
static float g_init[3][LEN];

typedef struct outcome {
    xo_status st;
    char msg[512];
    float out[LEN];
} outcome;

typedef enum op_kind { GEMM, GEMV, AXPY } op_kind;

/* One call's arguments: buffers by index (3: NULL, 4: another context's). */
typedef struct call {
    op_kind op;
    xo_layout layout;
    xo_transpose ta, tb;
    size_t m, n, k;
    int buf[3];
    size_t off[3], ld[3], inc[2];
} call;

static xo_buffer *buffer_of(int i) { return i < 3 ? g_buf[i] : i == 3 ? NULL : g_foreign; }

static xo_status run(const call *c)
{
    xo_buffer *a = buffer_of(c->buf[0]), *b = buffer_of(c->buf[1]), *o = buffer_of(c->buf[2]);
    switch (c->op) {
    case GEMM:
        return xo_sgemm(g_ctx, c->layout, c->ta, c->tb, c->m, c->n, c->k, 0.5f, a, c->off[0], c->ld[0], b, c->off[1],
                        c->ld[1], 0.0f, o, c->off[2], c->ld[2]);
    case GEMV:
        return xo_sgemv(g_ctx, c->layout, c->ta, c->m, c->n, 0.5f, a, c->off[0], c->ld[0], b, c->off[1], c->inc[0],
                        0.0f, o, c->off[2], c->inc[1]);
    default:
        return xo_saxpy(g_ctx, c->n, 0.5f, a, c->off[0], c->inc[0], o, c->off[2], c->inc[1]);
    }
}

/* The output buffer's contents back to their start, the call made, its outcome. */
static void attempt(const call *c, outcome *r)
{
    xot_assert_ok(xo_buffer_write(g_buf[2], 0, g_init[2], sizeof g_init[2]));
    r->st = run(c);
    snprintf(r->msg, sizeof r->msg, "%s", r->st == XO_OK ? "" : xo_last_error());
    xot_assert_ok(xo_buffer_read(g_buf[2], 0, r->out, sizeof r->out));
}

/* The reference result of a valid call on the initial contents. */
static void reference(const call *c, float *out)
{
    memcpy(out, g_init[2], sizeof g_init[2]);
    const float *a = g_init[0] + c->off[0], *b = g_init[1] + c->off[1];
    if (c->op == GEMM)
        xot_ref_sgemm(c->layout, c->ta, c->tb, c->m, c->n, c->k, 0.5f, a, c->ld[0], b, c->ld[1], 0.0f, out + c->off[2],
                      c->ld[2]);
    else if (c->op == GEMV)
        xot_ref_sgemv(c->layout, c->ta, c->m, c->n, 0.5f, a, c->ld[0], b, c->inc[0], 0.0f, out + c->off[2], c->inc[1]);
    else
        xot_ref_saxpy(c->n, 0.5f, a, c->inc[0], out + c->off[2], c->inc[1]);
}

static int g_cases, g_refused, g_express;

/* Warm the decision of `base`'s shape, then try `c` there and with the fast paths off. */
static void check(const call *base, const call *c, const char *what)
{
    for (int i = 0; i < WARM; i++)
        xot_assert_ok(run(base));
    outcome warm, cold;
    xot_express_count(g_ctx);
    attempt(c, &warm);
    int express = xot_express_calls[XOT_SGEMM] + xot_express_calls[XOT_SGEMV] + xot_express_calls[XOT_SAXPY];
    xot_express_uncount(g_ctx);
    g_ctx->fast_dispatch = 0;
    attempt(c, &cold);
    g_ctx->fast_dispatch = 1;
    if (warm.st != cold.st || strcmp(warm.msg, cold.msg) != 0)
        fail_msg("%s: warm %d \"%s\", cold %d \"%s\"", what, warm.st, warm.msg, cold.st, cold.msg);
    g_cases++;
    g_express += express;
    if (warm.st != XO_OK) {
        g_refused++;
        assert_int_equal(express, 0);
        xot_assert_close_f(warm.out, g_init[2], LEN, what); /* nothing written */
        return;
    }
    float want[LEN];
    reference(c, want);
    xot_assert_close_f(warm.out, want, LEN, what);
    xot_assert_close_f(cold.out, want, LEN, what);
}

/* Each rule's boundary on operand `i` of `base`: a leading dimension one short and
 * exact (matrices), an increment of 0 (vectors), the span ending at the buffer's end
 * and one element past it, no buffer, another context's buffer. */
static void boundaries(const call *base, int i, int is_matrix, size_t inner, size_t span, const char *call_what,
                       const char *operand)
{
    char name[160], what[128];
    snprintf(what, sizeof what, "%s operand %s", call_what, operand);
    call c = *base;
    if (is_matrix) {
        c.ld[i] = inner - 1;
        snprintf(name, sizeof name, "%s: ld = inner - 1", what);
        check(base, &c, name);
        c.ld[i] = inner;
        c.off[i] = LEN - span; /* ends exactly at the end */
    } else {
        int v = i == 2 ? 1 : 0;
        c.inc[v] = 0;
        snprintf(name, sizeof name, "%s: inc = 0", what);
        check(base, &c, name);
        c.inc[v] = base->inc[v];
        c.off[i] = LEN - span;
    }
    snprintf(name, sizeof name, "%s: span ends at the buffer's end", what);
    check(base, &c, name);
    c.off[i]++;
    snprintf(name, sizeof name, "%s: span one element past the end", what);
    check(base, &c, name);
    c = *base;
    c.buf[i] = 3;
    snprintf(name, sizeof name, "%s: NULL buffer", what);
    check(base, &c, name);
    c.buf[i] = 4;
    snprintf(name, sizeof name, "%s: another context's buffer", what);
    check(base, &c, name);
}

/* rows x cols in `layout` with ld = inner: inner and span. */
static void mat(xo_layout layout, size_t rows, size_t cols, size_t *inner, size_t *span)
{
    *inner = layout == XO_ROW_MAJOR ? cols : rows;
    size_t outer = layout == XO_ROW_MAJOR ? rows : cols;
    *span = (outer - 1) * *inner + *inner;
}

static void test_gemm(void **state)
{
    (void)state;
    enum { M = 3, N = 4, K = 5 };
    for (int lay = 0; lay < 2; lay++)
        for (int t = 0; t < 4; t++) {
            xo_layout layout = lay ? XO_COL_MAJOR : XO_ROW_MAJOR;
            xo_transpose ta = t & 1 ? XO_TRANS : XO_NO_TRANS, tb = t & 2 ? XO_TRANS : XO_NO_TRANS;
            size_t dims[3][2] = {{ta == XO_NO_TRANS ? M : K, ta == XO_NO_TRANS ? K : M},
                                 {tb == XO_NO_TRANS ? K : N, tb == XO_NO_TRANS ? N : K},
                                 {M, N}};
            call base = {.op = GEMM, .layout = layout, .ta = ta, .tb = tb, .m = M, .n = N, .k = K, .buf = {0, 1, 2}};
            size_t inner[3], span[3];
            for (int i = 0; i < 3; i++) {
                mat(layout, dims[i][0], dims[i][1], &inner[i], &span[i]);
                base.ld[i] = inner[i];
            }
            char what[96];
            snprintf(what, sizeof what, "sgemm %s ta=%d tb=%d", lay ? "col" : "row", t & 1, t >> 1);
            for (int i = 0; i < 3; i++) boundaries(&base, i, 1, inner[i], span[i], what, (const char *[]){"a", "b", "c"}[i]);
        }
}

static void test_gemv(void **state)
{
    (void)state;
    enum { M = 4, N = 6, INC = 2 };
    for (int lay = 0; lay < 2; lay++)
        for (int t = 0; t < 2; t++) {
            xo_layout layout = lay ? XO_COL_MAJOR : XO_ROW_MAJOR;
            xo_transpose ta = t ? XO_TRANS : XO_NO_TRANS;
            size_t xn = t ? M : N, yn = t ? N : M, inner, span;
            mat(layout, M, N, &inner, &span);
            call base = {.op = GEMV, .layout = layout, .ta = ta, .m = M, .n = N, .buf = {0, 1, 2},
                         .ld = {inner}, .inc = {INC, INC}};
            char what[96];
            snprintf(what, sizeof what, "sgemv %s ta=%d", lay ? "col" : "row", t);
            boundaries(&base, 0, 1, inner, span, what, "a");
            boundaries(&base, 1, 0, 0, (xn - 1) * INC + 1, what, "x");
            boundaries(&base, 2, 0, 0, (yn - 1) * INC + 1, what, "y");
        }
}

static void test_axpy(void **state)
{
    (void)state;
    enum { N = 9 };
    for (size_t inc = 1; inc <= 3; inc++) {
        call base = {.op = AXPY, .n = N, .buf = {0, 1, 2}, .inc = {inc, inc}};
        char what[64];
        snprintf(what, sizeof what, "saxpy inc=%zu", inc);
        boundaries(&base, 0, 0, 0, (N - 1) * inc + 1, what, "x");
        boundaries(&base, 2, 0, 0, (N - 1) * inc + 1, what, "y");
    }
}

/* The cases above meant something: some were refused, and valid ones took the express
 * path (all but refreshes, which take the full path). */
static void test_tally(void **state)
{
    (void)state;
    printf("express rules: %d cases, %d refused, %d valid calls through the express path\n", g_cases, g_refused,
           g_express);
    assert_true(g_refused > g_cases / 2);
    assert_true(g_express >= (g_cases - g_refused) / 2);
}

int main(void)
{
    if (xo_context_create(&g_ctx) != XO_OK || xo_context_create(&g_other) != XO_OK) {
        fprintf(stderr, "xo_context_create: %s\n", xo_last_error());
        return 1;
    }
    if (!g_ctx->host_blas || !g_ctx->fast_dispatch) {
        fprintf(stderr, "no express path in this context: skipped\n");
        return XOT_EXIT_SKIP;
    }
    for (int i = 0; i < 3; i++) {
        xot_fill_f(g_init[i], LEN, 10 + (uint64_t)i, -1, 1);
        g_buf[i] = xot_buffer(g_ctx, g_init[i], sizeof g_init[i]);
    }
    g_foreign = xot_buffer(g_other, NULL, LEN * sizeof(float));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm),
        cmocka_unit_test(test_gemv),
        cmocka_unit_test(test_axpy),
        cmocka_unit_test(test_tally),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    for (int i = 0; i < 3; i++)
        xo_buffer_destroy(g_buf[i]);
    xo_buffer_destroy(g_foreign);
    xo_context_destroy(g_other);
    xo_context_destroy(g_ctx);
    return failed;
}
