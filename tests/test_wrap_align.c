/* xo_buffer_wrap takes memory at any alignment: doubles 4-byte aligned, floats and int32
 * labels at an odd address. Every op family (BLAS, reductions, element-wise, softmax,
 * fused gemm, a plan's fused chain) over such memory gives the reference results on the
 * CPU and on a forced OpenCL device, and the library itself never loads or stores a
 * misaligned element: .ci/run runs this under UBSan (XO_SANITIZE=address,undefined),
 * where one misaligned access fails the test. */
#include "xo_test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define N 24           /* matrices are N x N, vectors N */
#define NN (N * N)
/* Where each op's result lands in the output region (elements). */
#define O_GEMM 0
#define O_GEMV (O_GEMM + NN)
#define O_DOT (O_GEMV + N)
#define O_NRM2 (O_DOT + 1)
#define O_SUM (O_NRM2 + 1)
#define O_MAX (O_SUM + 1)
#define O_AXIS (O_MAX + 1)
#define O_UNARY (O_AXIS + N)
#define O_BINARY (O_UNARY + NN)
#define O_SOFTMAX (O_BINARY + NN)
#define O_XENT (O_SOFTMAX + NN)
#define O_GBA (O_XENT + N)
#define O_PLAN (O_GBA + NN)
#define O_PLAN_SUM (O_PLAN + NN)
#define O_TOTAL (O_PLAN_SUM + 1)

/* The same call in single or double precision (scalars convert to the call's type). */
#define CALL(f32, name, ...) ((f32) ? xo_s##name(__VA_ARGS__) : xo_d##name(__VA_ARGS__))

/* The caller's memory: `bytes` at `misalign` past a 64-byte boundary. */
typedef struct region {
    void *block;
    unsigned char *p;
} region;

static region carve(size_t bytes, size_t misalign)
{
    region r;
    r.block = aligned_alloc(64, (bytes + misalign + 63) / 64 * 64);
    assert_non_null(r.block);
    r.p = (unsigned char *)r.block + misalign;
    return r;
}

/* Elements go in and out through memcpy: the test itself never touches a misaligned one. */
static void put(unsigned char *p, int f32, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float f = (float)v[i];
        memcpy(p + i * (f32 ? sizeof f : sizeof v[i]), f32 ? (const void *)&f : (const void *)&v[i],
               f32 ? sizeof f : sizeof v[i]);
    }
}

static void get(const unsigned char *p, int f32, double *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float f;
        if (f32) {
            memcpy(&f, p + i * sizeof f, sizeof f);
            v[i] = f;
        } else {
            memcpy(&v[i], p + i * sizeof v[i], sizeof v[i]);
        }
    }
}

static xo_buffer *wrap(xo_context *ctx, void *host, size_t bytes)
{
    xo_buffer *b = NULL;
    xot_assert_ok(xo_buffer_wrap(ctx, host, bytes, &b));
    return b;
}

static void expect(const double *got, const double *want, size_t n, int f32, const char *what, const char *spec,
                   size_t misalign)
{
    long bad = xot_first_mismatch_d(got, want, n, f32 ? 1e-4 : 1e-10);
    if (bad >= 0)
        fail_msg("%s (%s, %s, %zu bytes past alignment): element %ld is %.17g, want %.17g", what, spec,
                 f32 ? "float" : "double", misalign, bad, got[bad], want[bad]);
}

/* The references, in double over the values the memory holds. */
static void reference(const double *x, const double *y, const int32_t *labels, double *want)
{
    memset(want, 0, O_TOTAL * sizeof *want);
    xot_ref_dgemm(XO_ROW_MAJOR, XO_NO_TRANS, XO_TRANS, N, N, N, 0.5, x, N, y, N, 0.0, want + O_GEMM, N);
    xot_ref_dgemv(XO_ROW_MAJOR, XO_NO_TRANS, N, N, 1.0, x, N, y, 1, 0.0, want + O_GEMV, 1);
    want[O_DOT] = xot_ref_ddot(NN, x, 1, y, 1);
    want[O_NRM2] = xot_ref_dnrm2(NN, x, 1);
    want[O_SUM] = xot_ref_dreduce(XO_SUM, NN, x);
    want[O_MAX] = xot_ref_dreduce(XO_MAX_ELEMENT, NN, x);
    xot_ref_dreduce_axis(XO_SUM, N, N, x, N, 0, want + O_AXIS);
    xot_ref_dunary(XO_TANH, NN, x, want + O_UNARY);
    xot_ref_dbinary(XO_MUL, NN, x, y, want + O_BINARY);
    xot_ref_dsoftmax(XO_SOFTMAX, N, N, x, N, want + O_SOFTMAX, N);
    xot_ref_dsoftmax_xent(N, N, x, N, labels, 1.0, want + O_XENT, NULL, 0);
    xot_ref_dgemm_bias_act(XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, N, N, N, 1.0, x, N, y, N, 0.0, want + O_GBA, N, y,
                           XO_RELU);
    /* The plan: t = tanh(x) + y, then its sum. */
    xot_ref_dunary(XO_TANH, NN, x, want + O_PLAN);
    xot_ref_dbinary(XO_ADD, NN, want + O_PLAN, y, want + O_PLAN);
    want[O_PLAN_SUM] = xot_ref_dreduce(XO_SUM, NN, want + O_PLAN);
}

static void run_on(xo_context *ctx, const char *spec, int f32, size_t misalign)
{
    size_t es = f32 ? sizeof(float) : sizeof(double);
    double x[NN], y[NN], *want = malloc(O_TOTAL * sizeof *want), *got = malloc(O_TOTAL * sizeof *got);
    assert_non_null(want);
    assert_non_null(got);
    xot_fill_d(x, NN, 1, -1, 1);
    xot_fill_d(y, NN, 2, -1, 1);
    if (f32) /* the references see what the memory holds */
        for (size_t i = 0; i < NN; i++) {
            x[i] = (float)x[i];
            y[i] = (float)y[i];
        }
    int32_t labels[N];
    for (int i = 0; i < N; i++)
        labels[i] = (i * 7) % N;
    reference(x, y, labels, want);

    region rx = carve(NN * es, misalign), ry = carve(NN * es, misalign), ro = carve(O_TOTAL * es, misalign);
    region rl = carve(sizeof labels, misalign);
    put(rx.p, f32, x, NN);
    put(ry.p, f32, y, NN);
    memset(ro.p, 0, O_TOTAL * es);
    memcpy(rl.p, labels, sizeof labels);
    xo_buffer *bx = wrap(ctx, rx.p, NN * es), *by = wrap(ctx, ry.p, NN * es), *bo = wrap(ctx, ro.p, O_TOTAL * es);
    xo_buffer *bl = wrap(ctx, rl.p, sizeof labels);

    xot_assert_ok(CALL(f32, gemm, ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_TRANS, N, N, N, 0.5, bx, 0, N, by, 0, N, 0.0, bo,
                       O_GEMM, N));
    xot_assert_ok(CALL(f32, gemv, ctx, XO_ROW_MAJOR, XO_NO_TRANS, N, N, 1.0, bx, 0, N, by, 0, 1, 0.0, bo, O_GEMV, 1));
    xot_assert_ok(CALL(f32, dot, ctx, NN, bx, 0, 1, by, 0, 1, bo, O_DOT));
    xot_assert_ok(CALL(f32, nrm2, ctx, NN, bx, 0, 1, bo, O_NRM2));
    xot_assert_ok(CALL(f32, reduce, ctx, XO_SUM, NN, bx, 0, bo, O_SUM));
    xot_assert_ok(CALL(f32, reduce, ctx, XO_MAX_ELEMENT, NN, bx, 0, bo, O_MAX));
    xot_assert_ok(CALL(f32, reduce_axis, ctx, XO_SUM, N, N, bx, 0, N, 0, bo, O_AXIS));
    xot_assert_ok(CALL(f32, unary, ctx, XO_TANH, NN, bx, 0, bo, O_UNARY));
    xot_assert_ok(CALL(f32, binary, ctx, XO_MUL, NN, bx, 0, by, 0, bo, O_BINARY));
    xot_assert_ok(CALL(f32, softmax, ctx, XO_SOFTMAX, N, N, bx, 0, N, bo, O_SOFTMAX, N));
    xot_assert_ok(CALL(f32, softmax_xent, ctx, N, N, bx, 0, N, bl, 0, 1.0, bo, O_XENT, NULL, 0, 0));
    xot_assert_ok(CALL(f32, gemm_bias_act, ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, N, N, N, 1.0, bx, 0, N, by,
                       0, N, 0.0, bo, O_GBA, N, by, 0, XO_RELU));
    /* A plan whose element-wise chain fuses, then reduces. */
    xo_plan *plan = NULL;
    xot_assert_ok(xo_capture_begin(ctx));
    xot_assert_ok(CALL(f32, unary, ctx, XO_TANH, NN, bx, 0, bo, O_PLAN));
    xot_assert_ok(CALL(f32, binary, ctx, XO_ADD, NN, bo, O_PLAN, by, 0, bo, O_PLAN));
    xot_assert_ok(CALL(f32, reduce, ctx, XO_SUM, NN, bo, O_PLAN, bo, O_PLAN_SUM));
    xot_assert_ok(xo_capture_end(ctx, &plan));
    xot_assert_ok(xo_plan_run(plan));

    xot_assert_ok(xo_buffer_sync(bo));
    get(ro.p, f32, got, O_TOTAL);
    static const struct {
        size_t at, n;
        const char *what;
    } parts[] = {{O_GEMM, NN, "gemm"},       {O_GEMV, N, "gemv"},         {O_DOT, 1, "dot"},
                 {O_NRM2, 1, "nrm2"},        {O_SUM, 1, "reduce sum"},    {O_MAX, 1, "reduce max"},
                 {O_AXIS, N, "reduce_axis"}, {O_UNARY, NN, "unary"},      {O_BINARY, NN, "binary"},
                 {O_SOFTMAX, NN, "softmax"}, {O_XENT, N, "softmax_xent"}, {O_GBA, NN, "gemm_bias_act"},
                 {O_PLAN, NN, "plan chain"}, {O_PLAN_SUM, 1, "plan sum"}};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        expect(got + parts[i].at, want + parts[i].at, parts[i].n, f32, parts[i].what, spec, misalign);

    /* The caller writes its memory directly and says so: the next run sees it. */
    for (size_t i = 0; i < NN; i++)
        x[i] = -x[i];
    put(rx.p, f32, x, NN);
    xot_assert_ok(xo_buffer_host_written(bx));
    xot_assert_ok(xo_plan_run(plan));
    xot_assert_ok(xo_buffer_sync(bo));
    get(ro.p, f32, got, O_TOTAL);
    reference(x, y, labels, want);
    expect(got + O_PLAN, want + O_PLAN, NN + 1, f32, "plan after host_written", spec, misalign);

    xo_plan_destroy(plan);
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
    xo_buffer_destroy(bo);
    xo_buffer_destroy(bl);
    free(rx.block);
    free(ry.block);
    free(ro.block);
    free(rl.block);
    free(want);
    free(got);
}

/* run_on with every (precision, misalignment) pair of `cases`, on the CPU and on a
 * forced OpenCL device where there is one; one context for all. */
typedef struct align_case {
    int f32;
    size_t misalign;
} align_case;

static void run_cases(const align_case *cases, size_t n)
{
    static const char *const specs[] = {"cpu", "opencl"};
    xo_context *ctx = NULL;
    xot_assert_ok(xo_context_create(&ctx));
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        int dev = -1;
        if (xo_device_find(ctx, specs[s], &dev) != XO_OK)
            continue; /* no such device here: the CPU runs still ran */
        xot_assert_ok(xo_set_device(ctx, specs[s]));
        for (size_t c = 0; c < n; c++)
            run_on(ctx, specs[s], cases[c].f32, cases[c].misalign);
    }
    xo_context_destroy(ctx);
}

static void test_doubles_4_byte_aligned(void **state)
{
    (void)state;
    static const align_case cases[] = {{0, 4}};
    run_cases(cases, 1);
}

static void test_odd_addresses(void **state)
{
    (void)state;
    static const align_case cases[] = {{1, 1}, {0, 1}, {1, 2}};
    run_cases(cases, sizeof cases / sizeof *cases);
}

/* The reproducer: a dot into a one-double buffer 4 bytes past alignment. */
static void test_dot_into_4_byte_aligned_double(void **state)
{
    (void)state;
    xo_context *ctx = NULL;
    xot_assert_ok(xo_context_create(&ctx));
    xot_assert_ok(xo_set_device(ctx, "cpu"));
    unsigned char *m = aligned_alloc(64, 640);
    assert_non_null(m);
    double v[16], want = 0;
    xot_fill_d(v, 16, 3, -1, 1);
    for (int i = 0; i < 16; i++)
        want += v[i] * v[i];
    memcpy(m + 4, v, sizeof v);
    xo_buffer *x = wrap(ctx, m + 4, 128), *o = wrap(ctx, m + 132, 8);
    xot_assert_ok(xo_ddot(ctx, 16, x, 0, 1, x, 0, 1, o, 0));
    xot_assert_ok(xo_buffer_sync(o));
    double got;
    memcpy(&got, m + 132, sizeof got);
    expect(&got, &want, 1, 0, "ddot", "cpu", 4);
    /* xo_buffer_write lands in the caller's memory at once, xo_buffer_read sees it. */
    double one = 1.5, back = 0;
    xot_assert_ok(xo_buffer_write(o, 0, &one, sizeof one));
    memcpy(&got, m + 132, sizeof got);
    assert_true(got == one);
    xot_assert_ok(xo_buffer_read(o, 0, &back, sizeof back));
    assert_true(back == one);
    xo_buffer_destroy(x);
    xo_buffer_destroy(o);
    xo_context_destroy(ctx);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dot_into_4_byte_aligned_double),
        cmocka_unit_test(test_doubles_4_byte_aligned),
        cmocka_unit_test(test_odd_addresses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
