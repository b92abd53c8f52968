/* Bad inputs for every entry point. For each case: the status, an xo_last_error() that
 * names the function and the offending argument (one of the '|' alternatives, as a
 * whole word), no buffer changed, and the calling thread's last decision unchanged.
 *
 * The op cases live in the template section at the end of this file, which the file
 * includes twice (T = float, then T = double). */
#ifndef XOT_T

#include "xo_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBYTES 256 /* every fixture buffer: 64 floats, 32 doubles */

static xo_context *g_ctx, *g_other;
static xo_buffer *A, *B, *C, *X, *Y, *O, *F; /* F belongs to g_other */
static xot_snap g_snap;
static const char *g_note; /* printed with a failing case (e.g. the spec tried) */
static xo_decision g_before;

static int setup(void **state)
{
    (void)state;
    if (xo_context_create(&g_ctx) != XO_OK || xo_context_create(&g_other) != XO_OK) return -1;
    unsigned char data[NBYTES];
    xo_buffer **all[] = {&A, &B, &C, &X, &Y, &O};
    for (int i = 0; i < 6; i++) {
        xot_fill_f((float *)data, NBYTES / sizeof(float), 1000u + (unsigned)i, 0.25, 1);
        if (xo_buffer_create(g_ctx, NBYTES, all[i]) != XO_OK) return -1;
        if (xo_buffer_write(*all[i], 0, data, NBYTES) != XO_OK) return -1;
    }
    if (xo_buffer_create(g_other, NBYTES, &F) != XO_OK) return -1;
    /* A known last decision, which no failing call may change. */
    xo_buffer *s = NULL;
    if (xo_buffer_create(g_ctx, 16, &s) != XO_OK) return -1;
    if (xo_sscal(g_ctx, 1, 2.0f, s, 0, 1) != XO_OK) return -1;
    xo_buffer_destroy(s);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    xo_buffer *all[] = {A, B, C, X, Y, O, F};
    for (int i = 0; i < 7; i++) xo_buffer_destroy(all[i]);
    xo_context_destroy(g_other);
    xo_context_destroy(g_ctx);
    return 0;
}

static void pre_case(void)
{
    xo_buffer *all[] = {A, B, C, X, Y, O, F};
    xot_snap_take(&g_snap, all, 7);
    xot_assert_ok(xo_last_decision(g_ctx, &g_before));
}

static void post_case(xo_status st, xo_status want, const char *fn, const char *args,
                      const char *expr, int line)
{
    const char *err = xo_last_error();
    if (!err) {
        xot_snap_free(&g_snap);
        print_error("line %d: %s: xo_last_error() is NULL\n", line, expr);
        fail();
    }
    char msg[1024]; /* copied: the snapshot check below makes successful calls */
    snprintf(msg, sizeof msg, "%s", err);
    int changed = xot_snap_changed(&g_snap);
    xot_snap_free(&g_snap);
    if (st != want) {
        print_error("line %d: %s [%s]\n  returned %s, want %s (\"%s\")\n", line, expr,
                    g_note ? g_note : "", xo_status_string(st), xo_status_string(want),
                    st == XO_OK ? "" : msg);
        fail();
    }
    if (!xot_has_word(msg, fn) || (args && !xot_has_word(msg, args))) {
        print_error("line %d: %s\n  message \"%s\" should name %s and %s\n", line, expr, msg, fn,
                    args ? args : "-");
        fail();
    }
    if (changed >= 0) {
        print_error("line %d: %s\n  changed fixture buffer %d\n", line, expr, changed);
        fail();
    }
    xo_decision now;
    xot_assert_ok(xo_last_decision(g_ctx, &now));
    if (strcmp(now.op, g_before.op) != 0 || now.device != g_before.device) {
        print_error("line %d: %s\n  changed the last decision (%s -> %s)\n", line, expr,
                    g_before.op, now.op);
        fail();
    }
}

/* BAD(expected status, function name, argument alternatives "a|a_off" or NULL, call) */
#define BAD(want, fn, args, call)                                     \
    do {                                                              \
        pre_case();                                                   \
        xo_status st_ = (call);                                       \
        post_case(st_, (want), (fn), (args), #call, __LINE__);        \
    } while (0)
#define INVALID(fn, args, call) BAD(XO_ERR_INVALID_ARGUMENT, fn, args, call)

#define HUGE_SZ ((size_t)SIZE_MAX)
#define HALF_SZ ((size_t)SIZE_MAX / 2 + 1)

#define XOT_T float
#define XOT_P s
#define XOT_PS "s"
#include "test_errors.c"
#undef XOT_T
#undef XOT_P
#undef XOT_PS

#define XOT_T double
#define XOT_P d
#define XOT_PS "d"
#include "test_errors.c"
#undef XOT_T
#undef XOT_P
#undef XOT_PS

/* ---- buffers ------------------------------------------------------------------ */

static void test_buffers(void **state)
{
    (void)state;
    unsigned char src[16] = {1, 2, 3}, dst[16];
    xo_buffer *b = (xo_buffer *)&src; /* garbage that must be overwritten with NULL */
    INVALID("xo_buffer_create", "ctx", xo_buffer_create(NULL, 16, &b));
    b = (xo_buffer *)&src;
    INVALID("xo_buffer_create", "bytes", xo_buffer_create(g_ctx, 0, &b));
    assert_null(b);
    INVALID("xo_buffer_create", "out", xo_buffer_create(g_ctx, 16, NULL));
    b = NULL;
    xo_status st = xo_buffer_create(g_ctx, HUGE_SZ, &b);
    assert_true(st == XO_ERR_OUT_OF_MEMORY || st == XO_ERR_INVALID_ARGUMENT);
    assert_null(b);

    INVALID("xo_buffer_write", "b", xo_buffer_write(NULL, 0, src, 4));
    INVALID("xo_buffer_write", "src", xo_buffer_write(A, 0, NULL, 4));
    INVALID("xo_buffer_write", "offset|bytes", xo_buffer_write(A, NBYTES - 4, src, 8));
    INVALID("xo_buffer_write", "offset|bytes", xo_buffer_write(A, NBYTES + 1, src, 0));
    INVALID("xo_buffer_write", "offset|bytes", xo_buffer_write(A, HUGE_SZ, src, 2));
    INVALID("xo_buffer_write", "offset|bytes", xo_buffer_write(A, 4, src, HUGE_SZ));
    INVALID("xo_buffer_read", "b", xo_buffer_read(NULL, 0, dst, 4));
    INVALID("xo_buffer_read", "dst", xo_buffer_read(A, 0, NULL, 4));
    INVALID("xo_buffer_read", "offset|bytes", xo_buffer_read(A, NBYTES - 4, dst, 8));
    INVALID("xo_buffer_read", "offset|bytes", xo_buffer_read(A, HUGE_SZ, dst, 2));
    INVALID("xo_buffer_read", "offset|bytes", xo_buffer_read(A, 4, dst, HUGE_SZ));
    /* a failed read leaves dst alone */
    memset(dst, 0xab, sizeof dst);
    assert_int_equal(xo_buffer_read(A, NBYTES - 4, dst, 8), XO_ERR_INVALID_ARGUMENT);
    for (size_t i = 0; i < sizeof dst; i++) assert_int_equal(dst[i], 0xab);

    assert_int_equal(xo_buffer_size(NULL), 0);
    assert_int_equal(xo_buffer_size(A), NBYTES);
    xo_buffer_destroy(NULL);
    /* exactly up to the end is fine */
    xot_assert_ok(xo_buffer_read(A, NBYTES - 8, dst, 8));
}

/* ---- context, devices, decisions, stats ------------------------------------------ */

static void test_context_devices(void **state)
{
    (void)state;
    INVALID("xo_context_create", "out", xo_context_create(NULL));
    xo_context_destroy(NULL);
    assert_int_equal(xo_device_count(NULL), 0);
    int n = xo_device_count(g_ctx);
    assert_true(n >= 1 && n <= XO_MAX_DEVICES);

    xo_device_info info;
    INVALID("xo_device_get_info", "ctx", xo_device_get_info(NULL, 0, &info));
    INVALID("xo_device_get_info", "device", xo_device_get_info(g_ctx, -1, &info));
    INVALID("xo_device_get_info", "device", xo_device_get_info(g_ctx, n, &info));
    INVALID("xo_device_get_info", "out", xo_device_get_info(g_ctx, 0, NULL));
    xot_assert_ok(xo_device_get_info(g_ctx, 0, &info));
    assert_string_equal(info.plugin, "cpu");

    int dev = 12345;
    INVALID("xo_device_find", "ctx", xo_device_find(NULL, "cpu", &dev));
    INVALID("xo_device_find", "spec", xo_device_find(g_ctx, NULL, &dev));
    INVALID("xo_device_find", "out|out_device", xo_device_find(g_ctx, "cpu", NULL));
    static const char *malformed[] = {"", "opencl:", "foo", "cuda:", ":0", "cpu:0:0", "auto",
                                      "cpu:", "cpu "};
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        g_note = malformed[i];
        INVALID("xo_device_find", "spec", xo_device_find(g_ctx, malformed[i], &dev));
        INVALID("xo_set_device", "spec", xo_set_device(g_ctx, malformed[i][0] == 'a' ? "auto:" : malformed[i]));
    }
    static const char *absent[] = {"cuda:99", "opencl:99", "cpu:1"};
    for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++) {
        g_note = absent[i];
        BAD(XO_ERR_NO_DEVICE, "xo_device_find", NULL, xo_device_find(g_ctx, absent[i], &dev));
        BAD(XO_ERR_NO_DEVICE, "xo_set_device", NULL, xo_set_device(g_ctx, absent[i]));
    }
    g_note = NULL;
    xot_assert_ok(xo_device_find(g_ctx, "cpu", &dev));
    assert_int_equal(dev, 0);
    xot_assert_ok(xo_device_find(g_ctx, "CPU:0", &dev));
    assert_int_equal(dev, 0);
    INVALID("xo_set_device", "ctx", xo_set_device(NULL, "cpu"));
    INVALID("xo_set_device", "spec", xo_set_device(g_ctx, NULL));
    xot_assert_ok(xo_set_device(g_ctx, "auto"));

    xo_decision d;
    INVALID("xo_last_decision", "ctx", xo_last_decision(NULL, &d));
    INVALID("xo_last_decision", "out", xo_last_decision(g_ctx, NULL));

    xo_stats s;
    INVALID("xo_stats_get", "ctx", xo_stats_get(NULL, 0, &s));
    INVALID("xo_stats_get", "device", xo_stats_get(g_ctx, -1, &s));
    INVALID("xo_stats_get", "device", xo_stats_get(g_ctx, n, &s));
    INVALID("xo_stats_get", "out", xo_stats_get(g_ctx, 0, NULL));
    INVALID("xo_stats_reset", "ctx", xo_stats_reset(NULL));
    INVALID("xo_finish", "ctx", xo_finish(NULL));
}

/* The CPU's only forms are "cpu" and "cpu:0": "cpu:TEXT" is malformed, not a name. */
static void test_cpu_spec_forms(void **state)
{
    (void)state;
    int dev = -1;
    static const char *malformed[] = {"cpu:x", "cpu:0x", "cpu:intel", "cpu:xeon"};
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        g_note = malformed[i];
        INVALID("xo_device_find", "spec", xo_device_find(g_ctx, malformed[i], &dev));
        INVALID("xo_set_device", "spec", xo_set_device(g_ctx, malformed[i]));
    }
    g_note = NULL;
    xot_assert_ok(xo_set_device(g_ctx, "auto"));
}

static void test_status_strings(void **state)
{
    (void)state;
    static const struct {
        xo_status s;
        const char *name;
    } all[] = {
        {XO_OK, "XO_OK"},
        {XO_ERR_INVALID_ARGUMENT, "XO_ERR_INVALID_ARGUMENT"},
        {XO_ERR_OUT_OF_MEMORY, "XO_ERR_OUT_OF_MEMORY"},
        {XO_ERR_NO_DEVICE, "XO_ERR_NO_DEVICE"},
        {XO_ERR_DEVICE, "XO_ERR_DEVICE"},
        {XO_ERR_UNSUPPORTED, "XO_ERR_UNSUPPORTED"},
        {XO_ERR_IO, "XO_ERR_IO"},
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        assert_string_equal(xo_status_string(all[i].s), all[i].name);
    const int junk[] = {7, 99, -1, 1 << 30};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        const char *t = xo_status_string((xo_status)junk[i]);
        assert_non_null(t);
        assert_true(strlen(t) > 0);
    }
    assert_non_null(xo_last_error());
}

/* Buffers of another context are refused. */
static void test_foreign_buffer(void **state)
{
    (void)state;
    INVALID("xo_saxpy", "x", xo_saxpy(g_ctx, 4, 1.0f, F, 0, 1, Y, 0, 1));
    INVALID("xo_saxpy", "y", xo_saxpy(g_ctx, 4, 1.0f, X, 0, 1, F, 0, 1));
    INVALID("xo_sgemm", "c", xo_sgemm(g_ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 2, 2, 2,
                                      1.0f, A, 0, 2, B, 0, 2, 0.0f, F, 0, 2));
    INVALID("xo_dunary", "x", xo_dunary(g_ctx, XO_EXP, 4, F, 0, Y, 0));
}

#define BOTH(name) cmocka_unit_test(test_##name##_s), cmocka_unit_test(test_##name##_d)

int main(void)
{
    const struct CMUnitTest tests[] = {
        BOTH(gemm), BOTH(gemv), BOTH(axpy), BOTH(scal), BOTH(dot), BOTH(nrm2),
        BOTH(unary), BOTH(binary), BOTH(bias), BOTH(reduce),
        BOTH(copy), BOTH(fill), BOTH(axpby), BOTH(ger), BOTH(binary_scalar), BOTH(scale_by),
        BOTH(softmax), BOTH(reduce_axis), BOTH(gemm_bias_act), BOTH(softmax_xent), BOTH(argmax),
        cmocka_unit_test(test_buffers),
        cmocka_unit_test(test_context_devices),
        cmocka_unit_test(test_cpu_spec_forms),
        cmocka_unit_test(test_status_strings),
        cmocka_unit_test(test_foreign_buffer),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

#else /* ---- template section: ops in precision XOT_P ------------------------------ */

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define T XOT_T
#define XO(name) CAT(CAT(xo_, XOT_P), name)
#define TEST(name) CAT(CAT(test_, name), CAT(_, XOT_P))
#define FN(name) "xo_" XOT_PS #name
#define E (NBYTES / sizeof(T)) /* elements per fixture buffer */

static void TEST(gemm)(void **state)
{
    (void)state;
    const xo_layout R = XO_ROW_MAJOR, K = XO_COL_MAJOR;
    const xo_transpose N = XO_NO_TRANS, Tr = XO_TRANS;
    /* m = 2, n = 3, k = 4 */
#define G(lay, ta, tb, m, n, k, a, ao, lda, b, bo, ldb, c, co, ldc) \
    XO(gemm)(g_ctx, lay, ta, tb, m, n, k, (T)1, a, ao, lda, b, bo, ldb, (T)0.5, c, co, ldc)
    INVALID(FN(gemm), "ctx", XO(gemm)(NULL, R, N, N, 2, 3, 4, 1, A, 0, 4, B, 0, 3, 0, C, 0, 3));
    INVALID(FN(gemm), "layout", G((xo_layout)0, N, N, 2, 3, 4, A, 0, 4, B, 0, 3, C, 0, 3));
    INVALID(FN(gemm), "layout", G((xo_layout)103, N, N, 2, 3, 4, A, 0, 4, B, 0, 3, C, 0, 3));
    INVALID(FN(gemm), "ta", G(R, (xo_transpose)113, N, 2, 3, 4, A, 0, 4, B, 0, 3, C, 0, 3));
    INVALID(FN(gemm), "tb", G(R, N, (xo_transpose)0, 2, 3, 4, A, 0, 4, B, 0, 3, C, 0, 3));
    INVALID(FN(gemm), "a", G(R, N, N, 2, 3, 4, NULL, 0, 4, B, 0, 3, C, 0, 3));
    INVALID(FN(gemm), "b", G(R, N, N, 2, 3, 4, A, 0, 4, NULL, 0, 3, C, 0, 3));
    INVALID(FN(gemm), "c", G(R, N, N, 2, 3, 4, A, 0, 4, B, 0, 3, NULL, 0, 3));
    /* leading dimensions, row-major: A m x k (N) lda >= k, k x m (T) lda >= m; B k x n (N)
     * ldb >= n, n x k (T) ldb >= k; ldc >= n */
    INVALID(FN(gemm), "lda", G(R, N, N, 2, 3, 4, A, 0, 3, B, 0, 3, C, 0, 3));
    INVALID(FN(gemm), "lda", G(R, Tr, N, 2, 3, 4, A, 0, 1, B, 0, 3, C, 0, 3));
    INVALID(FN(gemm), "ldb", G(R, N, N, 2, 3, 4, A, 0, 4, B, 0, 2, C, 0, 3));
    INVALID(FN(gemm), "ldb", G(R, N, Tr, 2, 3, 4, A, 0, 4, B, 0, 3, C, 0, 3));
    INVALID(FN(gemm), "ldc", G(R, N, N, 2, 3, 4, A, 0, 4, B, 0, 3, C, 0, 2));
    /* column-major: lda >= m (N) / k (T); ldb >= k (N) / n (T); ldc >= m */
    INVALID(FN(gemm), "lda", G(K, N, N, 2, 3, 4, A, 0, 1, B, 0, 4, C, 0, 2));
    INVALID(FN(gemm), "lda", G(K, Tr, N, 2, 3, 4, A, 0, 3, B, 0, 4, C, 0, 2));
    INVALID(FN(gemm), "ldb", G(K, N, N, 2, 3, 4, A, 0, 2, B, 0, 3, C, 0, 2));
    INVALID(FN(gemm), "ldb", G(K, N, Tr, 2, 3, 4, A, 0, 2, B, 0, 2, C, 0, 2));
    INVALID(FN(gemm), "ldc", G(K, N, N, 2, 3, 4, A, 0, 2, B, 0, 4, C, 0, 1));
    /* validated even when sizes are zero: ld >= max(1, ...) */
    INVALID(FN(gemm), "lda|ldb|ldc", G(R, N, N, 0, 0, 0, A, 0, 0, B, 0, 0, C, 0, 0));
    INVALID(FN(gemm), "lda", G(R, N, N, 0, 3, 4, A, 0, 3, B, 0, 3, C, 0, 3));
    INVALID(FN(gemm), "layout", G((xo_layout)0, N, N, 0, 0, 0, A, 0, 1, B, 0, 1, C, 0, 1));
    INVALID(FN(gemm), "c", G(R, N, N, 0, 0, 0, A, 0, 1, B, 0, 1, NULL, 0, 1));
    /* access past the end, including size_t overflow */
    INVALID(FN(gemm), "a|a_off", G(R, N, N, 2, 3, 4, A, E - 7, 4, B, 0, 3, C, 0, 3));
    INVALID(FN(gemm), "b|b_off", G(R, N, N, 2, 3, 4, A, 0, 4, B, E, 3, C, 0, 3));
    INVALID(FN(gemm), "c|c_off", G(R, N, N, 2, 3, 4, A, 0, 4, B, 0, 3, C, E - 5, 3));
    INVALID(FN(gemm), "a|a_off", G(R, N, N, 2, 3, 4, A, HUGE_SZ, 4, B, 0, 3, C, 0, 3));
    INVALID(FN(gemm), "c|c_off", G(R, N, N, 2, 3, 4, A, 0, 4, B, 0, 3, C, HUGE_SZ - 2, 3));
    INVALID(FN(gemm), "a|lda|m", G(R, N, N, 2, 3, 4, A, 0, HALF_SZ, B, 0, 3, C, 0, 3));
    INVALID(FN(gemm), "a|c|m|lda|ldc", G(R, N, N, HALF_SZ, 1, 1, A, 0, 1, B, 0, 1, C, 0, 1));
    INVALID(FN(gemm), "a|b|k|lda|ldb", G(K, N, N, 1, 1, HALF_SZ + 3, A, 0, 1, B, 0, HALF_SZ, C, 0, 1));
    /* C overlapping A or B (same buffer) */
    INVALID(FN(gemm), "c|a", G(R, N, N, 2, 3, 4, A, 0, 4, B, 0, 3, A, 4, 3));
    INVALID(FN(gemm), "c|b", G(R, N, N, 2, 3, 4, A, 0, 4, B, 0, 3, B, 10, 3));
    INVALID(FN(gemm), "c|a", G(R, N, N, 2, 3, 4, A, 0, 4, B, 0, 3, A, 0, 3));
#undef G
}

static void TEST(gemv)(void **state)
{
    (void)state;
    const xo_layout R = XO_ROW_MAJOR, K = XO_COL_MAJOR;
    const xo_transpose N = XO_NO_TRANS;
    /* m = 3, n = 4: no-trans x has n elements, y has m */
#define G(lay, ta, m, n, a, ao, lda, x, xo, incx, y, yo, incy) \
    XO(gemv)(g_ctx, lay, ta, m, n, (T)1, a, ao, lda, x, xo, incx, (T)0.5, y, yo, incy)
    INVALID(FN(gemv), "ctx", XO(gemv)(NULL, R, N, 3, 4, 1, A, 0, 4, X, 0, 1, 0, Y, 0, 1));
    INVALID(FN(gemv), "layout", G((xo_layout)7, N, 3, 4, A, 0, 4, X, 0, 1, Y, 0, 1));
    INVALID(FN(gemv), "ta", G(R, (xo_transpose)110, 3, 4, A, 0, 4, X, 0, 1, Y, 0, 1));
    INVALID(FN(gemv), "a", G(R, N, 3, 4, NULL, 0, 4, X, 0, 1, Y, 0, 1));
    INVALID(FN(gemv), "x", G(R, N, 3, 4, A, 0, 4, NULL, 0, 1, Y, 0, 1));
    INVALID(FN(gemv), "y", G(R, N, 3, 4, A, 0, 4, X, 0, 1, NULL, 0, 1));
    INVALID(FN(gemv), "lda", G(R, N, 3, 4, A, 0, 3, X, 0, 1, Y, 0, 1));
    INVALID(FN(gemv), "lda", G(K, N, 3, 4, A, 0, 2, X, 0, 1, Y, 0, 1));
    INVALID(FN(gemv), "lda", G(R, N, 0, 0, A, 0, 0, X, 0, 1, Y, 0, 1));
    INVALID(FN(gemv), "incx", G(R, N, 3, 4, A, 0, 4, X, 0, 0, Y, 0, 1));
    INVALID(FN(gemv), "incy", G(R, N, 3, 4, A, 0, 4, X, 0, 1, Y, 0, 0));
    INVALID(FN(gemv), "incx", G(R, N, 0, 0, A, 0, 1, X, 0, 0, Y, 0, 1));
    INVALID(FN(gemv), "a|a_off", G(R, N, 3, 4, A, E - 11, 4, X, 0, 1, Y, 0, 1));
    INVALID(FN(gemv), "x|x_off|incx", G(R, N, 3, 4, A, 0, 4, X, E - 6, 2, Y, 0, 1));
    INVALID(FN(gemv), "y|y_off", G(R, N, 3, 4, A, 0, 4, X, 0, 1, Y, HUGE_SZ, 1));
    INVALID(FN(gemv), "x|incx|n", G(R, N, 3, 4, A, 0, 4, X, 0, HALF_SZ, Y, 0, 1));
    INVALID(FN(gemv), "y|incy|m", G(R, N, 3, 4, A, 0, 4, X, 0, 1, Y, 0, HALF_SZ / 2));
    INVALID(FN(gemv), "y|x", G(R, N, 3, 4, A, 0, 4, X, 0, 1, X, 2, 1));
    INVALID(FN(gemv), "y|a", G(R, N, 3, 4, A, 0, 4, X, 0, 1, A, 11, 1));
#undef G
}

static void TEST(axpy)(void **state)
{
    (void)state;
    INVALID(FN(axpy), "ctx", XO(axpy)(NULL, 4, 1, X, 0, 1, Y, 0, 1));
    INVALID(FN(axpy), "x", XO(axpy)(g_ctx, 4, 1, NULL, 0, 1, Y, 0, 1));
    INVALID(FN(axpy), "y", XO(axpy)(g_ctx, 4, 1, X, 0, 1, NULL, 0, 1));
    INVALID(FN(axpy), "incx", XO(axpy)(g_ctx, 4, 1, X, 0, 0, Y, 0, 1));
    INVALID(FN(axpy), "incy", XO(axpy)(g_ctx, 4, 1, X, 0, 1, Y, 0, 0));
    INVALID(FN(axpy), "incx", XO(axpy)(g_ctx, 0, 1, X, 0, 0, Y, 0, 1));
    INVALID(FN(axpy), "x", XO(axpy)(g_ctx, 0, 1, NULL, 0, 1, Y, 0, 1));
    INVALID(FN(axpy), "x|x_off", XO(axpy)(g_ctx, 2, 1, X, E - 1, 1, Y, 0, 1));
    INVALID(FN(axpy), "y|y_off|incy", XO(axpy)(g_ctx, 4, 1, X, 0, 1, Y, 1, E / 3 + 1));
    INVALID(FN(axpy), "x|x_off", XO(axpy)(g_ctx, 1, 1, X, HUGE_SZ, 1, Y, 0, 1));
    INVALID(FN(axpy), "x|y|n|incx|incy", XO(axpy)(g_ctx, HUGE_SZ, 1, X, 0, 1, Y, 0, 1));
    INVALID(FN(axpy), "x|n|incx", XO(axpy)(g_ctx, 3, 1, X, 0, HALF_SZ, Y, 0, 1));
    INVALID(FN(axpy), "y|x", XO(axpy)(g_ctx, 4, 1, X, 0, 1, X, 2, 1));
    INVALID(FN(axpy), "y|x", XO(axpy)(g_ctx, 4, 1, X, 0, 1, X, 0, 1));
    INVALID(FN(axpy), "y|x", XO(axpy)(g_ctx, 4, 1, X, 1, 2, X, 0, 2)); /* interleaved spans */
}

static void TEST(scal)(void **state)
{
    (void)state;
    INVALID(FN(scal), "ctx", XO(scal)(NULL, 4, 2, X, 0, 1));
    INVALID(FN(scal), "x", XO(scal)(g_ctx, 4, 2, NULL, 0, 1));
    INVALID(FN(scal), "incx", XO(scal)(g_ctx, 4, 2, X, 0, 0));
    INVALID(FN(scal), "incx", XO(scal)(g_ctx, 0, 2, X, 0, 0));
    INVALID(FN(scal), "x|x_off", XO(scal)(g_ctx, 4, 2, X, E - 3, 1));
    INVALID(FN(scal), "x|n|incx", XO(scal)(g_ctx, E + 1, 2, X, 0, 1));
    INVALID(FN(scal), "x|n|incx", XO(scal)(g_ctx, 2, 2, X, 0, HUGE_SZ));
}

static void TEST(dot)(void **state)
{
    (void)state;
    INVALID(FN(dot), "ctx", XO(dot)(NULL, 4, X, 0, 1, Y, 0, 1, O, 0));
    INVALID(FN(dot), "x", XO(dot)(g_ctx, 4, NULL, 0, 1, Y, 0, 1, O, 0));
    INVALID(FN(dot), "y", XO(dot)(g_ctx, 4, X, 0, 1, NULL, 0, 1, O, 0));
    INVALID(FN(dot), "out", XO(dot)(g_ctx, 4, X, 0, 1, Y, 0, 1, NULL, 0));
    INVALID(FN(dot), "incx", XO(dot)(g_ctx, 4, X, 0, 0, Y, 0, 1, O, 0));
    INVALID(FN(dot), "incy", XO(dot)(g_ctx, 4, X, 0, 1, Y, 0, 0, O, 0));
    INVALID(FN(dot), "out|out_off", XO(dot)(g_ctx, 4, X, 0, 1, Y, 0, 1, O, E));
    INVALID(FN(dot), "out|out_off", XO(dot)(g_ctx, 0, X, 0, 1, Y, 0, 1, O, E));
    INVALID(FN(dot), "out|out_off", XO(dot)(g_ctx, 4, X, 0, 1, Y, 0, 1, O, HUGE_SZ));
    INVALID(FN(dot), "x|x_off|incx", XO(dot)(g_ctx, 4, X, E - 2, 1, Y, 0, 1, O, 0));
    INVALID(FN(dot), "y|y_off|incy|n", XO(dot)(g_ctx, 4, X, 0, 1, Y, 0, HALF_SZ, O, 0));
    INVALID(FN(dot), "out|x", XO(dot)(g_ctx, 4, X, 0, 1, Y, 0, 1, X, 3));
    INVALID(FN(dot), "out|y", XO(dot)(g_ctx, 4, X, 0, 1, Y, 0, 2, Y, 6));
}

static void TEST(nrm2)(void **state)
{
    (void)state;
    INVALID(FN(nrm2), "ctx", XO(nrm2)(NULL, 4, X, 0, 1, O, 0));
    INVALID(FN(nrm2), "x", XO(nrm2)(g_ctx, 4, NULL, 0, 1, O, 0));
    INVALID(FN(nrm2), "out", XO(nrm2)(g_ctx, 4, X, 0, 1, NULL, 0));
    INVALID(FN(nrm2), "incx", XO(nrm2)(g_ctx, 4, X, 0, 0, O, 0));
    INVALID(FN(nrm2), "out|out_off", XO(nrm2)(g_ctx, 4, X, 0, 1, O, E));
    INVALID(FN(nrm2), "x|x_off", XO(nrm2)(g_ctx, 4, X, HUGE_SZ - 1, 1, O, 0));
    INVALID(FN(nrm2), "out|x", XO(nrm2)(g_ctx, 4, X, 0, 1, X, 0));
}

static void TEST(unary)(void **state)
{
    (void)state;
    INVALID(FN(unary), "ctx", XO(unary)(NULL, XO_TANH, 4, X, 0, Y, 0));
    INVALID(FN(unary), "op", XO(unary)(g_ctx, (xo_unary_op)99, 4, X, 0, Y, 0));
    INVALID(FN(unary), "op", XO(unary)(g_ctx, (xo_unary_op)-1, 4, X, 0, Y, 0));
    INVALID(FN(unary), "op", XO(unary)(g_ctx, (xo_unary_op)XO_UNARY_OP_COUNT, 0, X, 0, Y, 0));
    INVALID(FN(unary), "x", XO(unary)(g_ctx, XO_TANH, 4, NULL, 0, Y, 0));
    INVALID(FN(unary), "y", XO(unary)(g_ctx, XO_TANH, 4, X, 0, NULL, 0));
    INVALID(FN(unary), "x|x_off", XO(unary)(g_ctx, XO_TANH, 4, X, E - 3, Y, 0));
    INVALID(FN(unary), "y|y_off", XO(unary)(g_ctx, XO_TANH, 4, X, 0, Y, HUGE_SZ));
    INVALID(FN(unary), "x|y|n", XO(unary)(g_ctx, XO_TANH, HUGE_SZ, X, 0, Y, 0));
    INVALID(FN(unary), "y|x", XO(unary)(g_ctx, XO_TANH, 4, X, 0, X, 1));
    INVALID(FN(unary), "y|x", XO(unary)(g_ctx, XO_TANH, 4, X, 3, X, 0));
}

static void TEST(binary)(void **state)
{
    (void)state;
    INVALID(FN(binary), "ctx", XO(binary)(NULL, XO_ADD, 4, A, 0, B, 0, C, 0));
    INVALID(FN(binary), "op", XO(binary)(g_ctx, (xo_binary_op)5, 4, A, 0, B, 0, C, 0));
    INVALID(FN(binary), "op", XO(binary)(g_ctx, (xo_binary_op)-3, 0, A, 0, B, 0, C, 0));
    INVALID(FN(binary), "a", XO(binary)(g_ctx, XO_ADD, 4, NULL, 0, B, 0, C, 0));
    INVALID(FN(binary), "b", XO(binary)(g_ctx, XO_ADD, 4, A, 0, NULL, 0, C, 0));
    INVALID(FN(binary), "c", XO(binary)(g_ctx, XO_ADD, 4, A, 0, B, 0, NULL, 0));
    INVALID(FN(binary), "a|a_off", XO(binary)(g_ctx, XO_ADD, 4, A, E - 1, B, 0, C, 0));
    INVALID(FN(binary), "b|b_off", XO(binary)(g_ctx, XO_ADD, 4, A, 0, B, HUGE_SZ - 1, C, 0));
    INVALID(FN(binary), "c|c_off", XO(binary)(g_ctx, XO_ADD, 4, A, 0, B, 0, C, E - 2));
    INVALID(FN(binary), "c|a", XO(binary)(g_ctx, XO_ADD, 4, A, 0, B, 0, A, 1));
    INVALID(FN(binary), "c|b", XO(binary)(g_ctx, XO_MUL, 4, A, 0, B, 2, B, 0));
}

static void TEST(bias)(void **state)
{
    (void)state;
    INVALID(FN(bias), "ctx", XO(bias)(NULL, 2, 4, A, 0, 4, B, 0));
    INVALID(FN(bias), "a", XO(bias)(g_ctx, 2, 4, NULL, 0, 4, B, 0));
    INVALID(FN(bias), "bias", XO(bias)(g_ctx, 2, 4, A, 0, 4, NULL, 0));
    INVALID(FN(bias), "lda", XO(bias)(g_ctx, 2, 4, A, 0, 3, B, 0));
    INVALID(FN(bias), "lda", XO(bias)(g_ctx, 0, 0, A, 0, 0, B, 0));
    INVALID(FN(bias), "a|a_off", XO(bias)(g_ctx, 2, 4, A, E - 7, 4, B, 0));
    INVALID(FN(bias), "a|rows|lda", XO(bias)(g_ctx, HALF_SZ, 4, A, 0, 4, B, 0));
    INVALID(FN(bias), "bias|bias_off", XO(bias)(g_ctx, 2, 4, A, 0, 4, B, E - 3));
    INVALID(FN(bias), "bias|bias_off", XO(bias)(g_ctx, 2, 4, A, 0, 4, B, HUGE_SZ));
    INVALID(FN(bias), "bias|a", XO(bias)(g_ctx, 2, 4, A, 0, 4, A, 6));
}

static void TEST(reduce)(void **state)
{
    (void)state;
    INVALID(FN(reduce), "ctx", XO(reduce)(NULL, XO_SUM, 4, X, 0, O, 0));
    INVALID(FN(reduce), "op", XO(reduce)(g_ctx, (xo_reduce_op)2, 4, X, 0, O, 0));
    INVALID(FN(reduce), "op", XO(reduce)(g_ctx, (xo_reduce_op)-1, 0, X, 0, O, 0));
    INVALID(FN(reduce), "x", XO(reduce)(g_ctx, XO_SUM, 4, NULL, 0, O, 0));
    INVALID(FN(reduce), "out", XO(reduce)(g_ctx, XO_SUM, 4, X, 0, NULL, 0));
    INVALID(FN(reduce), "x|x_off", XO(reduce)(g_ctx, XO_SUM, 4, X, E - 2, O, 0));
    INVALID(FN(reduce), "out|out_off", XO(reduce)(g_ctx, XO_MAX_ELEMENT, 4, X, 0, O, E));
    INVALID(FN(reduce), "out|out_off", XO(reduce)(g_ctx, XO_SUM, 0, X, 0, O, HUGE_SZ));
    INVALID(FN(reduce), "x|n", XO(reduce)(g_ctx, XO_SUM, HUGE_SZ, X, 0, O, 0));
    INVALID(FN(reduce), "out|x", XO(reduce)(g_ctx, XO_SUM, 4, X, 0, X, 2));
    INVALID(FN(reduce), "n", XO(reduce)(g_ctx, XO_MAX_ELEMENT, 0, X, 0, O, 0));
}

#include "test_errors_nn.c" /* the neural-network ops */

#undef CAT_
#undef CAT
#undef T
#undef XO
#undef TEST
#undef FN
#undef E

#endif /* XOT_T */
