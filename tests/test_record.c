/* `xo record` (docs/machines/README.md, "Recording"): this machine recorded in quick mode
 * gives a machine file that XO_SIMULATE takes: a context is created with the devices this
 * machine has, by the same names; `xo info` says they are simulated and from which file;
 * and a batch of sgemm 256 forced on the CPU takes, on the simulated clock, between half
 * and twice what it takes here for real (ctest runs it with one CPU thread, alone). Bad
 * arguments fail with the usage status, an unwritable file with a failure, neither with
 * a crash.
 *
 * Usage: test_record XO_TOOL SCRATCH_DIR */
#include "xo_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const char *g_xo, *g_dir;
static char g_file[4096];

/* The exit status of `sh -c CMD`, or -1 when it did not exit. */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    return rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static int record_once(void **state)
{
    (void)state;
    snprintf(g_file, sizeof g_file, "%s/machines/here.xom", g_dir);
    int rc = run("rm -rf '%s/machines' '%s/profiles' && '%s' record --quick --out '%s' --profiles ../profiles "
                 "> '%s/record.out' 2> '%s/record.log'",
                 g_dir, g_dir, g_xo, g_file, g_dir, g_dir);
    if (rc != 0) {
        fprintf(stderr, "xo record exited with %d; the end of %s/record.log:\n", rc, g_dir);
        run("tail -20 '%s/record.log' >&2", g_dir);
        return -1;
    }
    return 0;
}

static xo_context *context(const char *simulate)
{
    if (simulate)
        setenv("XO_SIMULATE", simulate, 1);
    xo_context *ctx = NULL;
    xo_status s = xo_context_create(&ctx);
    unsetenv("XO_SIMULATE");
    if (s != XO_OK)
        fprintf(stderr, "xo_context_create: %s\n", xo_last_error());
    assert_int_equal(s, XO_OK);
    return ctx;
}

/* The file parses; its devices are this machine's, by name and plugin; the profiles
 * stand in the folder --profiles named. */
static void test_file_is_this_machine(void **state)
{
    (void)state;
    xo_context *real = context(NULL), *sim = context(g_file);
    assert_int_equal(xo_device_count(sim), xo_device_count(real));
    for (int d = 0; d < xo_device_count(real); d++) {
        xo_device_info a, b;
        xot_assert_ok(xo_device_get_info(real, d, &a));
        xot_assert_ok(xo_device_get_info(sim, d, &b));
        assert_string_equal(a.name, b.name);
        assert_string_equal(a.plugin, b.plugin);
    }
    xo_context_destroy(real);
    xo_context_destroy(sim);
    assert_int_equal(run("test -s '%s/profiles/here-cpu.profile'", g_dir), 0);
    assert_int_equal(run("grep -q '^device cpu ../profiles/here-cpu.profile$' '%s'", g_file), 0);
}

static void test_info_says_simulated(void **state)
{
    (void)state;
    assert_int_equal(run("XO_SIMULATE='%s' '%s' info > '%s/info.txt' 2>&1", g_file, g_xo, g_dir), 0);
    assert_int_equal(run("grep -q 'simulated from the machine file %s' '%s/info.txt'", g_file, g_dir), 0);
}

/* Microseconds of REPS sgemm 256 forced on the CPU, read on the context's clock: the best
 * of ROUNDS batches (the real machine may be shared with other work, which only ever adds
 * time; the recording takes its best batch too). */
static double sgemm_batch_us(xo_context *ctx)
{
    enum { N = 256, REPS = 10, ROUNDS = 15 };
    xot_assert_ok(xo_set_device(ctx, "cpu"));
    xo_buffer *a, *b, *c;
    xot_assert_ok(xo_buffer_create(ctx, N * N * 4, &a));
    xot_assert_ok(xo_buffer_create(ctx, N * N * 4, &b));
    xot_assert_ok(xo_buffer_create(ctx, N * N * 4, &c));
    double best = 0;
    for (int round = -1; round < ROUNDS; round++) { /* one round of warm-up */
        double t0 = xo_clock_us(ctx);
        for (int i = 0; i < REPS; i++)
            xot_assert_ok(xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, N, N, N, 1.0f, a, 0, N, b, 0, N,
                                   0.0f, c, 0, N));
        xot_assert_ok(xo_finish(ctx));
        double us = xo_clock_us(ctx) - t0;
        if (round >= 0 && (best == 0 || us < best))
            best = us;
    }
    xo_buffer_destroy(a);
    xo_buffer_destroy(b);
    xo_buffer_destroy(c);
    return best;
}

static void test_simulated_time_near_real(void **state)
{
    (void)state;
    xo_context *real = context(NULL), *sim = context(g_file);
    double r = sgemm_batch_us(real), s = sgemm_batch_us(sim);
    fprintf(stderr, "sgemm 256 x 10 forced cpu: real %.0f us, simulated %.0f us, simulated / real %.2f\n", r, s,
            s / r);
    assert_true(r > 0 && s > 0);
    assert_true(s / r >= 0.5 && s / r <= 2.0);
    xo_context_destroy(real);
    xo_context_destroy(sim);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    assert_int_equal(run("'%s' record --bogus 2>/dev/null", g_xo), 2);
    assert_int_equal(run("'%s' record --out 2>/dev/null", g_xo), 2);
    /* a recording measures the real machine, never a simulated one */
    assert_int_equal(run("XO_SIMULATE='%s' '%s' record --quick --out '%s/no.xom' 2>/dev/null", g_file, g_xo, g_dir), 2);
    /* a file that cannot be written: a failure, and nothing half-written left */
    assert_int_equal(run("'%s' record --quick --out /proc/no/such/dir/x.xom >/dev/null 2>&1", g_xo), 1);
    assert_int_equal(run("test -e '%s/no.xom'", g_dir), 1);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_record XO_TOOL SCRATCH_DIR\n");
        return 2;
    }
    g_xo = argv[1];
    g_dir = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_is_this_machine),
        cmocka_unit_test(test_info_says_simulated),
        cmocka_unit_test(test_simulated_time_near_real),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, record_once, NULL);
}
