/* Every registered plugin asked about every op kind, precision and sub-op (so a kind
 * added to XO_OP_MAP is covered without an edit here), and the null plugin skeleton
 * (plugins/null): every entry present, each failing cleanly, loadable into a context.
 *
 * ctest runs it with XO_CALIBRATE=off. */
#include "xo_test.h"
#include "xo_internal.h"

#include <string.h>

const xo_plugin *xo_plugin_null(void);

/* Sub-ops each kind takes (1: none). */
static int subops(xo_op_kind kind)
{
    switch (kind) {
    case XO_OP_UNARY:
    case XO_OP_GEMM_BIAS_ACT: return XO_UNARY_OP_COUNT;
    case XO_OP_BINARY:
    case XO_OP_BINARY_SCALAR: return XO_BINARY_OP_COUNT;
    case XO_OP_REDUCE:
    case XO_OP_REDUCE_AXIS: return XO_MAX_ELEMENT + 1;
    case XO_OP_SOFTMAX: return XO_LOG_SOFTMAX + 1;
    default: return 1;
    }
}

/* The op table itself: names round-trip, operands are named, the output is one of them. */
static void test_op_table(void **state)
{
    (void)state;
    for (int k = 0; k < XO_OP_KIND_COUNT; k++) {
        const xo__op_info *info = &xo__ops[k];
        assert_non_null(info->name);
        assert_int_equal(xo__op_find(info->name), k);
        assert_true(info->nargs >= 1 && info->nargs <= XO_MAX_ARGS);
        assert_true(info->out >= 0 && info->out < info->nargs);
        assert_true(xo__op_ndims((xo_op_kind)k) >= 1);
        int words = 1;
        for (const char *c = info->operands; *c; c++) words += *c == ' ';
        assert_int_equal(words, info->nargs);
    }
}

/* Every device of every registered plugin answers for every kind, dtype and sub-op; the
 * CPU runs everything, and so does an OpenCL device in single precision (every op has
 * a kernel or a CLBlast routine there). */
static void test_every_plugin_every_kind(void **state)
{
    (void)state;
    xo_context *ctx;
    xot_assert_ok(xo_context_create(&ctx));
    int asked = 0;
    for (int d = 0; d < ctx->ndev; d++)
        for (int k = 0; k < XO_OP_KIND_COUNT; k++)
            for (int t = 0; t < 2; t++)
                for (int u = 0; u < subops((xo_op_kind)k); u++) {
                    xo_op_desc op = {.kind = (xo_op_kind)k, .dtype = (xo_dtype)t, .subop = u};
                    int s = xo__dev_support(ctx, d, &op);
                    asked++;
                    if (s != XO_SUPPORT_NO && s != XO_SUPPORT_YES && s != XO_SUPPORT_FAILED) {
                        print_error("device %d (%s): %s dtype %d subop %d: answer %d\n", d, ctx->dev[d].info.plugin,
                                    xo__ops[k].name, t, u, s);
                        fail();
                    }
                    int must = (d == 0 && ctx->dev[0].plugin->supports) ||
                               (strcmp(ctx->dev[d].info.plugin, "opencl") == 0 && t == XO_F32);
                    if (must && s != XO_SUPPORT_YES) {
                        print_error("device %d (%s) does not run %s (dtype %d, subop %d)\n", d,
                                    ctx->dev[d].info.plugin, xo__ops[k].name, t, u);
                        fail();
                    }
                }
    print_message("asked %d questions of %d devices\n", asked, ctx->ndev);
    assert_true(asked >= XO_OP_KIND_COUNT * 2);
    xo_context_destroy(ctx);
}

static int count_devices(void)
{
    xo_context *ctx;
    xot_assert_ok(xo_context_create(&ctx));
    int n = xo_device_count(ctx);
    xo_context_destroy(ctx);
    return n;
}

/* The skeleton: every entry present; init finds nothing; every other fallible entry
 * fails with XO_ERR_UNSUPPORTED and a message naming it; a context loads it quietly. */
static void test_null_plugin(void **state)
{
    (void)state;
    const xo_plugin *p = xo_plugin_null();
    assert_int_equal(p->api_version, XO_PLUGIN_API_VERSION);
    assert_string_equal(p->name, "null");
    assert_true(p->init && p->shutdown && p->device_info && p->supports && p->mem_alloc && p->mem_free &&
                p->upload && p->download && p->run && p->finish && p->mem_wrap && p->drain_timings &&
                p->get_proc_address);

    /* Through a context: no device, no error. */
    int without = count_devices();
    xo__test_plugin = xo_plugin_null;
    int with = count_devices();
    xo__test_plugin = NULL;
    assert_int_equal(with, without);

    /* Each entry on its own, with the core's services as a context hands them over. */
    xo_context *ctx;
    xot_assert_ok(xo_context_create(&ctx));
    void *st = NULL;
    int ndev = -1;
    xot_assert_ok(p->init(&ctx->plugins[0].host, &st, &ndev));
    assert_int_equal(ndev, 0);
    xo_device_info info;
    xo_plugin_mem *mem = (xo_plugin_mem *)&info;
    float buf[4] = {0};
    xo_op_desc op = {.kind = XO_OP_AXPY, .dtype = XO_F32, .n = 4};
    struct {
        const char *entry;
        xo_status s;
    } calls[] = {
        {"device_info", p->device_info(st, 0, &info)},
        {"mem_alloc", p->mem_alloc(st, 0, 16, &mem)},
        {"upload", p->upload(st, 0, NULL, 0, buf, sizeof buf)},
        {"download", p->download(st, 0, NULL, 0, buf, sizeof buf)},
        {"run", p->run(st, 0, &op, 0)},
        {"finish", p->finish(st, 0)},
        {"mem_wrap", p->mem_wrap(st, 0, buf, sizeof buf, &mem)},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        assert_int_equal(calls[i].s, XO_ERR_UNSUPPORTED);
        (void)calls[i].entry;
    }
    /* the last message names the last entry called */
    assert_non_null(strstr(xo_last_error(), "null plugin: mem_wrap"));
    assert_null(mem);
    assert_int_equal(p->supports(st, 0, &op), 0);
    assert_int_equal(p->drain_timings(st, 0, NULL, 0), 0);
    assert_null(p->get_proc_address("xo_host_blas"));
    p->mem_free(st, 0, NULL);
    p->shutdown(st);
    xo_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_op_table),
        cmocka_unit_test(test_every_plugin_every_kind),
        cmocka_unit_test(test_null_plugin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
