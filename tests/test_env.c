/* The XO_* environment variables, read at xo_context_create: valid values work, invalid
 * ones make the create fail with the status and message the contract gives, and the
 * library never writes to stdout. Each case sets the variable with setenv() right
 * before creating a context in this process. */
#include "xo_test.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int g_have_opencl; /* an OpenCL device exists in a default context */
static int g_default_count;
static int g_cuda_count; /* CUDA devices in a default context */

/* Create a context with `var` set to `value` (NULL: unset); the variable is unset again
 * afterwards. On failure *out must be NULL. */
static xo_status create_with(const char *var, const char *value, xo_context **out)
{
    static int sentinel;
    *out = (xo_context *)&sentinel;
    if (value)
        setenv(var, value, 1);
    else
        unsetenv(var);
    xo_status st = xo_context_create(out);
    unsetenv(var);
    if (st != XO_OK) assert_null(*out);
    return st;
}

/* A valid value: the create succeeds. */
static void expect_ok(const char *var, const char *value)
{
    xo_context *ctx;
    xo_status st = create_with(var, value, &ctx);
    if (st != XO_OK) {
        print_error("%s=\"%s\": %s (%s)\n", var, value ? value : "(unset)", xo_status_string(st),
                    xo_last_error());
        fail();
    }
    xo_context_destroy(ctx);
}

/* An invalid value: the create fails with `want` and the message names the variable. */
static void expect_fail(const char *var, const char *value, xo_status want)
{
    xo_context *ctx;
    xo_status st = create_with(var, value, &ctx);
    const char *msg = xo_last_error();
    if (st != want || !xot_contains(msg, var)) {
        print_error("%s=\"%s\": got %s \"%s\", want %s naming %s\n", var, value,
                    xo_status_string(st), msg, xo_status_string(want), var);
        xo_context_destroy(st == XO_OK ? ctx : NULL);
        fail();
    }
}

/* Run a small saxpy on ctx and return the decision. */
static xo_decision run_saxpy(xo_context *ctx)
{
    float x[16], y[16], want[16], got[16];
    xot_fill_f(x, 16, 1, -1, 1);
    xot_fill_f(y, 16, 2, -1, 1);
    memcpy(want, y, sizeof want);
    xot_ref_saxpy(16, 2.0f, x, 1, want, 1);
    xo_buffer *bx = xot_buffer(ctx, x, sizeof x), *by = xot_buffer(ctx, y, sizeof y);
    xot_assert_ok(xo_saxpy(ctx, 16, 2.0f, bx, 0, 1, by, 0, 1));
    xo_decision d;
    xot_assert_ok(xo_last_decision(ctx, &d));
    xot_assert_ok(xo_buffer_read(by, 0, got, sizeof got));
    xot_assert_close_f(got, want, 16, "saxpy");
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
    return d;
}

static int setup(void **state)
{
    (void)state;
    unsetenv("XO_DEVICE");
    unsetenv("XO_PLUGINS");
    unsetenv("XO_LOG");
    unsetenv("XO_THREADS");
    unsetenv("XO_FAULTS");
    setenv("XO_CALIBRATE", "off", 1);
    xo_context *ctx;
    if (xo_context_create(&ctx) != XO_OK) return -1;
    int dev;
    g_have_opencl = xo_device_find(ctx, "opencl", &dev) == XO_OK;
    g_default_count = xo_device_count(ctx);
    for (int d = 0; d < g_default_count; d++) {
        xo_device_info info;
        if (xo_device_get_info(ctx, d, &info) == XO_OK && strcmp(info.plugin, "cuda") == 0)
            g_cuda_count++;
    }
    xo_context_destroy(ctx);
    return 0;
}

static void test_xo_device(void **state)
{
    (void)state;
    xo_context *ctx;
    static const char *autos[] = {NULL, "auto"};
    for (int i = 0; i < 2; i++) {
        xot_assert_ok(create_with("XO_DEVICE", autos[i], &ctx));
        xo_decision d = run_saxpy(ctx);
        assert_int_equal(d.forced, 0);
        assert_string_equal(d.op, "saxpy");
        xo_context_destroy(ctx);
    }
    static const char *cpus[] = {"cpu", "cpu:0", "CPU", "Cpu:0"};
    for (int i = 0; i < 4; i++) {
        xot_assert_ok(create_with("XO_DEVICE", cpus[i], &ctx));
        /* read at create: changing the variable afterwards changes nothing */
        setenv("XO_DEVICE", "nonsense:", 1);
        xo_decision d = run_saxpy(ctx);
        unsetenv("XO_DEVICE");
        assert_int_equal(d.device, 0);
        assert_int_equal(d.forced, 1);
        xo_context_destroy(ctx);
    }
    if (g_have_opencl) {
        xot_assert_ok(create_with("XO_DEVICE", "opencl", &ctx));
        int dev = -1;
        xot_assert_ok(xo_device_find(ctx, "opencl", &dev));
        xo_decision d = run_saxpy(ctx);
        assert_int_equal(d.device, dev);
        assert_int_equal(d.forced, 1);
        xo_context_destroy(ctx);
    } else {
        expect_fail("XO_DEVICE", "opencl", XO_ERR_NO_DEVICE);
    }
    expect_fail("XO_DEVICE", "gpu:", XO_ERR_INVALID_ARGUMENT);
    /* absent: NO_DEVICE, and the message lists the devices that exist */
    static const char *absent[] = {"cuda:99", "opencl:99", "cpu:1"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(create_with("XO_DEVICE", absent[i], &ctx), XO_ERR_NO_DEVICE);
        const char *msg = xo_last_error();
        if (!xot_contains(msg, "XO_DEVICE") || !xot_contains(msg, "cpu")) {
            print_error("XO_DEVICE=%s: message \"%s\" should name XO_DEVICE and list cpu\n",
                        absent[i], msg);
            fail();
        }
    }
}

/* Malformed specs (the CPU has no cpu:TEXT form). */
static void test_xo_device_malformed(void **state)
{
    (void)state;
    static const char *bad[] = {"gpu:", "opencl:", "cpu:zz", "cpu:0x", "auto:", ":1"};
    for (int i = 0; i < 6; i++) expect_fail("XO_DEVICE", bad[i], XO_ERR_INVALID_ARGUMENT);
}

static void test_xo_plugins(void **state)
{
    (void)state;
    xo_context *ctx;
    xot_assert_ok(create_with("XO_PLUGINS", "cpu", &ctx));
    assert_int_equal(xo_device_count(ctx), 1);
    xo_device_info info;
    xot_assert_ok(xo_device_get_info(ctx, 0, &info));
    assert_string_equal(info.plugin, "cpu");
    int dev;
    assert_int_equal(xo_device_find(ctx, "opencl", &dev), XO_ERR_NO_DEVICE);
    run_saxpy(ctx);
    xo_context_destroy(ctx);

#ifdef XOT_HAVE_OPENCL_PLUGIN
    xot_assert_ok(create_with("XO_PLUGINS", "cpu,opencl", &ctx));
    assert_int_equal(xo_device_find(ctx, "opencl", &dev), g_have_opencl ? XO_OK : XO_ERR_NO_DEVICE);
    run_saxpy(ctx);
    xo_context_destroy(ctx);
    xot_assert_ok(create_with("XO_PLUGINS", "OpenCL,CPU", &ctx));
    assert_int_equal(xo_device_count(ctx), g_default_count - g_cuda_count);
    xo_context_destroy(ctx);
#endif

    expect_fail("XO_PLUGINS", "bogus", XO_ERR_INVALID_ARGUMENT);
    expect_fail("XO_PLUGINS", "cpu,bogus", XO_ERR_INVALID_ARGUMENT);
}

static void test_xo_log_values(void **state)
{
    (void)state;
    static const char *ok[] = {"off", "error", "warn", "info", "decisions", "debug"};
    for (int i = 0; i < 6; i++) expect_ok("XO_LOG", ok[i]);
    expect_fail("XO_LOG", "loud", XO_ERR_INVALID_ARGUMENT);
    expect_fail("XO_LOG", "decision", XO_ERR_INVALID_ARGUMENT);
}

static size_t count_lines_with(const char *text, const char *word)
{
    size_t n = 0;
    const char *line = text;
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf - 1 ? len : sizeof buf - 1), line);
        if (xot_has_word(buf, word)) n++;
        line += len + (end ? 1 : 0);
    }
    return n;
}

/* Run a few ops (two saxpy, one sdot, one failing call) with XO_LOG=`level`, capturing
 * stdout and stderr of the whole context lifetime. */
static void run_logged(const char *level, char **out_text, char **err_text, int *ok)
{
    xot_capture cout, cerr;
    *ok = 0;
    assert_int_equal(xot_capture_begin(&cout, 1), 0);
    assert_int_equal(xot_capture_begin(&cerr, 2), 0);
    xo_context *ctx = NULL;
    if (level)
        setenv("XO_LOG", level, 1);
    else
        unsetenv("XO_LOG");
    xo_status st = xo_context_create(&ctx);
    unsetenv("XO_LOG");
    if (st == XO_OK) {
        xo_buffer *x = NULL, *y = NULL, *o = NULL;
        float h[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        int good = xo_buffer_create(ctx, sizeof h, &x) == XO_OK &&
                   xo_buffer_create(ctx, sizeof h, &y) == XO_OK &&
                   xo_buffer_create(ctx, sizeof h, &o) == XO_OK &&
                   xo_buffer_write(x, 0, h, sizeof h) == XO_OK &&
                   xo_saxpy(ctx, 8, 1.0f, x, 0, 1, y, 0, 1) == XO_OK &&
                   xo_saxpy(ctx, 8, 2.0f, x, 0, 1, y, 0, 1) == XO_OK &&
                   xo_sdot(ctx, 8, x, 0, 1, y, 0, 1, o, 0) == XO_OK &&
                   xo_saxpy(ctx, 8, 2.0f, x, 0, 0, y, 0, 1) == XO_ERR_INVALID_ARGUMENT &&
                   xo_buffer_read(o, 0, h, sizeof h) == XO_OK && h[0] == 612.0f;
        xo_buffer_destroy(x);
        xo_buffer_destroy(y);
        xo_buffer_destroy(o);
        xo_context_destroy(ctx);
        *ok = good;
    }
    *err_text = xot_capture_end(&cerr);
    *out_text = xot_capture_end(&cout);
    assert_non_null(*err_text);
    assert_non_null(*out_text);
}

static void test_xo_log_output(void **state)
{
    (void)state;
    static const char *levels[] = {"off", "error", "warn", "info", "decisions", "debug"};
    for (int i = 0; i < 6; i++) {
        char *out, *err;
        int ok;
        run_logged(levels[i], &out, &err, &ok);
        if (!ok || out[0] != '\0') {
            print_error("XO_LOG=%s: ops ok=%d, stdout \"%s\" (must stay empty)\n", levels[i], ok, out);
            fail();
        }
        if (strcmp(levels[i], "off") == 0 && err[0] != '\0') {
            print_error("XO_LOG=off wrote to stderr: \"%s\"\n", err);
            fail();
        }
        if (strcmp(levels[i], "decisions") == 0) {
            /* one line per op, naming the op */
            if (count_lines_with(err, "saxpy") != 2 || count_lines_with(err, "sdot") != 1) {
                print_error("XO_LOG=decisions: want 2 lines naming saxpy and 1 naming sdot, "
                            "stderr was:\n%s\n", err);
                fail();
            }
        }
        if (strcmp(levels[i], "debug") == 0 && count_lines_with(err, "saxpy") < 2) {
            print_error("XO_LOG=debug: decisions missing, stderr was:\n%s\n", err);
            fail();
        }
        free(out);
        free(err);
    }
    /* XO_LOG unset (default off), after a context that logged at debug: silence */
    char *out, *err;
    int ok;
    run_logged(NULL, &out, &err, &ok);
    if (!ok || out[0] != '\0' || err[0] != '\0') {
        print_error("XO_LOG unset after XO_LOG=debug: ops ok=%d, stdout \"%s\", stderr \"%s\" "
                    "(both must stay empty)\n", ok, out, err);
        fail();
    }
    free(out);
    free(err);
}

static void test_xo_threads(void **state)
{
    (void)state;
    static const char *ok[] = {"1", "2"};
    for (int i = 0; i < 2; i++) {
        xo_context *ctx;
        xot_assert_ok(create_with("XO_THREADS", ok[i], &ctx));
        xot_check_cpu_sgemm(ctx, 96, "sgemm under XO_THREADS");
        xo_context_destroy(ctx);
    }
    static const char *bad[] = {"0", "-1", "abc", "", "2x", "99999999999999999999"};
    for (int i = 0; i < 6; i++) expect_fail("XO_THREADS", bad[i], XO_ERR_INVALID_ARGUMENT);
}

static void test_xo_calibrate(void **state)
{
    (void)state;
    /* Measuring only the CPU keeps this quick. */
    setenv("XO_PLUGINS", "cpu", 1);
    expect_ok("XO_CALIBRATE", "off");
    expect_ok("XO_CALIBRATE", "auto");
    expect_ok("XO_CALIBRATE", "force");
    expect_ok("XO_CALIBRATE", "auto"); /* now from the cache */
    expect_fail("XO_CALIBRATE", "maybe", XO_ERR_INVALID_ARGUMENT);
    unsetenv("XO_PLUGINS");
    setenv("XO_CALIBRATE", "off", 1);
}

static void test_xo_faults_syntax(void **state)
{
    (void)state;
    static const char *ok[] = {"opencl.launch@1", "opencl.alloc@*", "opencl.upload@2,opencl.download@*",
                               "opencl.compile@3"};
    for (int i = 0; i < 4; i++) expect_ok("XO_FAULTS", ok[i]);
    static const char *bad[] = {"opencl.nosuch@1", "opencl.launch@x", "garbage", "opencl.launch",
                                "opencl.launch@", "opencl.launch@1,", "@1", "opencl.launch@1x"};
    for (int i = 0; i < 8; i++) expect_fail("XO_FAULTS", bad[i], XO_ERR_INVALID_ARGUMENT);
}


/* ---- long values: kept whole or refused, never cut ----------------------------------- */

/* A string of `n` characters: `head`, then `fill` repeated, then `tail`. */
static char *long_value(const char *head, char fill, size_t n, const char *tail)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    size_t h = strlen(head), t = strlen(tail);
    assert_true(h + t <= n);
    memcpy(s, head, h);
    memset(s + h, fill, n - h - t);
    memcpy(s + n - t, tail, t + 1);
    return s;
}

static int has_profile(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strstr(e->d_name, ".profile") != NULL;
    closedir(d);
    return n;
}

/* A 1037-byte XO_CACHE_DIR (existing nested directories) is where the profile goes. */
static void test_long_cache_dir(void **state)
{
    (void)state;
    const char *base = getenv("XO_CACHE_DIR");
    assert_true(base && base[0] == '/');
    enum { LEN = 1037 };
    char dir[LEN + 1];
    int n = snprintf(dir, sizeof dir, "%s/long", base);
    assert_true(n > 0 && n < 900);
    mkdir(base, 0755);
    mkdir(dir, 0755);
    while (strlen(dir) < LEN) { /* components of at most 100 bytes */
        size_t add = LEN - strlen(dir) - 1;
        if (add > 100) add = 100;
        if (add == 0) add = 1; /* never a trailing '/' */
        size_t len = strlen(dir);
        dir[len] = '/';
        memset(dir + len + 1, 'd', add);
        dir[len + 1 + add] = '\0';
        assert_true(mkdir(dir, 0755) == 0 || errno == EEXIST);
    }
    assert_int_equal(strlen(dir), LEN);
    setenv("XO_PLUGINS", "cpu", 1);
    setenv("XO_CALIBRATE", "auto", 1);
    expect_ok("XO_CACHE_DIR", dir);
    setenv("XO_CALIBRATE", "off", 1);
    unsetenv("XO_PLUGINS");
    assert_true(has_profile(dir));
    setenv("XO_CACHE_DIR", base, 1);

    /* longer than any path its entries could have: refused, naming the variable */
    char *huge = long_value("/tmp/", 'd', 5000, "");
    expect_fail("XO_CACHE_DIR", huge, XO_ERR_INVALID_ARGUMENT);
    setenv("XO_CACHE_DIR", base, 1);
    free(huge);
}

/* Long device specs are judged whole: malformed past byte 255 is still malformed, and an
 * absent one is quoted whole; the same through xo_device_find and xo_set_device. */
static void test_long_device_spec(void **state)
{
    (void)state;
    char *bad = long_value("opencl:", 'a', 260, ":bad");
    expect_fail("XO_DEVICE", bad, XO_ERR_INVALID_ARGUMENT);
    char *absent = long_value("opencl:", 'z', 300, "!");
    xo_context *ctx;
    assert_int_equal(create_with("XO_DEVICE", absent, &ctx), XO_ERR_NO_DEVICE);
    if (!xot_contains(xo_last_error(), absent))
        fail_msg("XO_DEVICE: message does not quote the whole spec: %s", xo_last_error());

    xot_assert_ok(xo_context_create(&ctx));
    int dev = -1;
    assert_int_equal(xo_device_find(ctx, absent, &dev), XO_ERR_NO_DEVICE);
    assert_true(xot_contains(xo_last_error(), absent));
    assert_int_equal(xo_set_device(ctx, absent), XO_ERR_NO_DEVICE);
    assert_int_equal(xo_set_device(ctx, bad), XO_ERR_INVALID_ARGUMENT);
    assert_int_equal(xo_device_find(ctx, bad, &dev), XO_ERR_INVALID_ARGUMENT);
    char *huge = long_value("opencl:", 'q', 100000, "");
    assert_int_equal(xo_device_find(ctx, huge, &dev), XO_ERR_INVALID_ARGUMENT);
    assert_true(xot_contains(xo_last_error(), "spec"));
    xo_context_destroy(ctx);
    expect_fail("XO_DEVICE", huge, XO_ERR_INVALID_ARGUMENT);
    free(huge);
    free(absent);
    free(bad);
}

/* Every other variable with a 5000-character value: refused, naming it. */
static void test_long_values(void **state)
{
    (void)state;
    static const struct {
        const char *var, *head;
    } cases[] = {{"XO_PLUGINS", "cpu,"}, {"XO_FAULTS", "opencl.alloc@1,"}, {"XO_LOG", "warn"},
                 {"XO_THREADS", "1"}, {"XO_CALIBRATE", "auto"}, {"XO_ZERO_COPY", "on"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *v = long_value(cases[i].head, '1', 5000, "");
        expect_fail(cases[i].var, v, XO_ERR_INVALID_ARGUMENT);
        free(v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xo_device),
        cmocka_unit_test(test_xo_device_malformed),
        cmocka_unit_test(test_xo_plugins),
        cmocka_unit_test(test_xo_log_values),
        cmocka_unit_test(test_xo_log_output),
        cmocka_unit_test(test_xo_threads),
        cmocka_unit_test(test_xo_calibrate),
        cmocka_unit_test(test_xo_faults_syntax),
        cmocka_unit_test(test_long_cache_dir),
        cmocka_unit_test(test_long_device_spec),
        cmocka_unit_test(test_long_values),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
