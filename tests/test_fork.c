/* fork() around crossover. Each case forks a child that works with crossover under
 * alarm(): a hang is killed by SIGALRM and fails the case instead of hanging the suite.
 *  - a context inherited by the child runs ops big enough for the CPU pool, and is
 *    destroyed there (the pool's threads are the parent's);
 *  - with OpenCL (or the plugin named by argv[1], e.g. cuda on the stand-in driver;
 *    skipped without it): the inherited context's device is lost in
 *    the child; data current only there reads as XO_ERR_DEVICE naming fork, ops complete
 *    on the CPU, destroy returns; a new context in the child works, on every device it
 *    offers (none of OpenCL once the parent started it), also when the parent destroyed
 *    its own before forking.
 *
 * ctest runs it with XO_THREADS=4 (the pool has workers), XO_ZERO_COPY=off (a device
 * copy is a copy), XO_CALIBRATE=off. */
#include "xo_test.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BIG (1u << 22) /* elements: well past the CPU pool's grain */
#define CHILD_SECONDS 30

static float *g_x, *g_want;
static const char *g_plugin = "opencl"; /* the device plugin under test (argv[1]) */
static int g_have_device;

/* Exit codes of a child: 0 ok, else the line that failed (mod 200, +1). */
#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "child: %s:%d: %s (%s)\n", __FILE__, __LINE__, #cond, xo_last_error()); \
            _exit(1 + __LINE__ % 200);                                                  \
        }                                                                               \
    } while (0)

/* Run fn in a child under alarm(); fail unless it exits 0. */
static void in_child(int (*fn)(void *), void *arg, const char *what)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(CHILD_SECONDS);
        _exit(fn(arg));
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status))
        fail_msg("%s: the child died of signal %d%s", what, WTERMSIG(status),
                 WTERMSIG(status) == SIGALRM ? " (it hung: alarm)" : "");
    if (WEXITSTATUS(status) != 0)
        fail_msg("%s: the child failed (exit %d)", what, WEXITSTATUS(status));
}

/* y = tanh(x) over BIG elements on the current placement; 0 when right. */
static int big_tanh_ok(xo_context *ctx)
{
    xo_buffer *x = NULL, *y = NULL;
    CHECK(xo_buffer_create(ctx, BIG * sizeof(float), &x) == XO_OK);
    CHECK(xo_buffer_create(ctx, BIG * sizeof(float), &y) == XO_OK);
    CHECK(xo_buffer_write(x, 0, g_x, BIG * sizeof(float)) == XO_OK);
    CHECK(xo_sunary(ctx, XO_TANH, BIG, x, 0, y, 0) == XO_OK);
    float *got = malloc(BIG * sizeof(float));
    CHECK(got != NULL);
    CHECK(xo_buffer_read(y, 0, got, BIG * sizeof(float)) == XO_OK);
    CHECK(xot_first_mismatch_f(got, g_want, BIG, 1e-4) < 0);
    free(got);
    xo_buffer_destroy(x);
    xo_buffer_destroy(y);
    return 0;
}

/* ---- an inherited context ------------------------------------------------------- */

static int child_inherited_cpu(void *arg)
{
    xo_context *ctx = arg;
    CHECK(xo_set_device(ctx, "cpu") == XO_OK);
    big_tanh_ok(ctx);
    big_tanh_ok(ctx);
    CHECK(xo_finish(ctx) == XO_OK);
    xo_context_destroy(ctx);
    return 0;
}

static void inherited_context_cpu_pool(void **state)
{
    (void)state;
    xo_context *ctx;
    xot_assert_ok(xo_context_create(&ctx));
    xot_assert_ok(xo_set_device(ctx, "cpu"));
    assert_int_equal(big_tanh_ok(ctx), 0); /* the pool's workers have run in the parent */
    in_child(child_inherited_cpu, ctx, "inherited context, CPU pool");
    assert_int_equal(big_tanh_ok(ctx), 0); /* and the parent's context is untouched */
    xo_context_destroy(ctx);
}

typedef struct ocl_case {
    xo_context *ctx;
    xo_buffer *y; /* current only on OpenCL */
} ocl_case;

static int child_inherited_opencl(void *arg)
{
    ocl_case *c = arg;
    float *got = malloc(BIG * sizeof(float));
    CHECK(got != NULL);
    /* y's only current copy is on the device, which is gone: a clear failure. */
    xo_status st = xo_buffer_read(c->y, 0, got, BIG * sizeof(float));
    CHECK(st == XO_ERR_DEVICE);
    CHECK(xot_contains(xo_last_error(), "fork"));
    /* Ops complete on the CPU, forced onto the device or not. */
    big_tanh_ok(c->ctx);
    CHECK(xo_set_device(c->ctx, "auto") == XO_OK);
    big_tanh_ok(c->ctx);
    free(got);
    xo_context_destroy(c->ctx); /* buffers and all: never waits on the parent's runtime */
    return 0;
}

static void inherited_context_opencl_lost(void **state)
{
    (void)state;
    if (!g_have_device)
        skip();
    ocl_case c;
    xot_assert_ok(xo_context_create(&c.ctx));
    xot_assert_ok(xo_set_device(c.ctx, g_plugin));
    xo_buffer *x;
    xot_assert_ok(xo_buffer_create(c.ctx, BIG * sizeof(float), &x));
    xot_assert_ok(xo_buffer_create(c.ctx, BIG * sizeof(float), &c.y));
    xot_assert_ok(xo_buffer_write(x, 0, g_x, BIG * sizeof(float)));
    xot_assert_ok(xo_sunary(c.ctx, XO_TANH, BIG, x, 0, c.y, 0));
    xot_assert_ok(xo_finish(c.ctx));
    in_child(child_inherited_opencl, &c, "inherited context, its device plugin");
    float *got = xot_read_all(c.y); /* the parent's device is whole */
    xot_assert_close_f(got, g_want, BIG, "parent after the child");
    free(got);
    xo_buffer_destroy(x);
    xo_buffer_destroy(c.y);
    xo_context_destroy(c.ctx);
}

/* ---- a new context in the child --------------------------------------------------- */

static int child_new_context(void *arg)
{
    (void)arg;
    xo_context *ctx;
    CHECK(xo_context_create(&ctx) == XO_OK);
    int d;
    /* Whatever device of the plugin the child's context offers must work (PoCL started
     * in the parent hung here; crossover offers none in such a child). */
    if (xo_device_find(ctx, g_plugin, &d) == XO_OK) {
        CHECK(xo_set_device(ctx, g_plugin) == XO_OK);
        big_tanh_ok(ctx);
        CHECK(xo_set_device(ctx, "auto") == XO_OK);
    }
    big_tanh_ok(ctx); /* auto */
    CHECK(xo_set_device(ctx, "cpu") == XO_OK);
    big_tanh_ok(ctx);
    xo_context_destroy(ctx);
    return 0;
}

static void new_context_in_child_parent_alive(void **state)
{
    (void)state;
    xo_context *ctx;
    xot_assert_ok(xo_context_create(&ctx));
    assert_int_equal(big_tanh_ok(ctx), 0);
    in_child(child_new_context, NULL, "new context, the parent's alive");
    xo_context_destroy(ctx);
}

static void new_context_in_child_parent_gone(void **state)
{
    (void)state;
    xo_context *ctx;
    xot_assert_ok(xo_context_create(&ctx));
    assert_int_equal(big_tanh_ok(ctx), 0);
    xo_context_destroy(ctx);
    in_child(child_new_context, NULL, "new context, the parent's destroyed");
}

/* argv[1]: the device plugin whose loss in a child is checked (default opencl; cuda
 * against the stand-in driver). */
int main(int argc, char **argv)
{
    if (argc > 1)
        g_plugin = argv[1];
    g_x = malloc(BIG * sizeof(float));
    g_want = malloc(BIG * sizeof(float));
    if (!g_x || !g_want)
        return 1;
    xot_fill_f(g_x, BIG, 5, -3, 3);
    xot_ref_sunary(XO_TANH, BIG, g_x, g_want);
    xo_context *ctx;
    int d;
    if (xot_main_context(&ctx, NULL, NULL)) return 1;
    g_have_device = xo_device_find(ctx, g_plugin, &d) == XO_OK;
    xo_context_destroy(ctx);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(inherited_context_cpu_pool),
        cmocka_unit_test(inherited_context_opencl_lost),
        cmocka_unit_test(new_context_in_child_parent_alive),
        cmocka_unit_test(new_context_in_child_parent_gone),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(g_x);
    free(g_want);
    return rc;
}
