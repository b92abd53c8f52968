/* A device allocation that the process's memory limit cannot back (RLIMIT_AS, what
 * `ulimit -v` sets) fails when crossover allocates, and the op completes on the CPU with
 * its data intact, counted in `fallbacks`: the process is never aborted. (PoCL allocates
 * a plain buffer's memory lazily, at the first command that uses it, and asserts there
 * when malloc fails: crossover must make the failure surface at clCreateBuffer.)
 *
 * The work runs in a forked child that lowers its own RLIMIT_AS to what it already
 * uses plus half a buffer, so the host copies fit and no device copy does; the parent
 * reports a signal as a failure. Runs on device "opencl" with XO_ZERO_COPY=off (a wrap
 * needs no memory); skipped (exit 77) without one, and under sanitizers that reserve
 * terabytes of address space (ASan, TSan). */
#include "xo_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define XOT_BIG_SHADOW 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define XOT_BIG_SHADOW 1
#endif
#endif

#define N ((size_t)8 << 20) /* floats per buffer: 32 MiB */
#define NB (N * sizeof(float))
#define CHUNK ((size_t)1 << 18) /* floats moved per read or write */
#define ALPHA 2.0f

static xo_context *g_ctx;
static int g_ocl = -1;

static float x_at(size_t i) { return (float)(i % 1000) * 0.001f; }
static float y_at(size_t i) { return (float)(i % 777) * 0.5f - 100.0f; }

/* Virtual memory the process uses now (VmSize), in bytes; 0 if unknown. */
static size_t vm_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    size_t kb = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmSize:", 7) == 0) kb = strtoull(line + 7, NULL, 10);
    fclose(f);
    return kb * 1024;
}

static void fill(xo_buffer *b, float (*at)(size_t), float *chunk)
{
    for (size_t i = 0; i < N; i += CHUNK) {
        for (size_t k = 0; k < CHUNK; k++) chunk[k] = at(i + k);
        xot_assert_ok(xo_buffer_write(b, i * sizeof(float), chunk, CHUNK * sizeof(float)));
    }
}

static void test_saxpy_falls_back(void **state)
{
    (void)state;
    float *chunk = malloc(CHUNK * sizeof(float)), *want = malloc(CHUNK * sizeof(float));
    assert_non_null(chunk);
    assert_non_null(want);
    xo_buffer *bx = xot_buffer(g_ctx, NULL, NB), *by = xot_buffer(g_ctx, NULL, NB);
    fill(bx, x_at, chunk);
    fill(by, y_at, chunk);
    xot_assert_ok(xo_set_device(g_ctx, "opencl"));

    size_t vm = vm_bytes();
    assert_true(vm > 0);
    struct rlimit lim = {.rlim_cur = vm + NB / 2, .rlim_max = RLIM_INFINITY};
    assert_int_equal(setrlimit(RLIMIT_AS, &lim), 0);

    xot_assert_ok(xo_saxpy(g_ctx, N, ALPHA, bx, 0, 1, by, 0, 1));
    xo_decision dec;
    xot_assert_ok(xo_last_decision(g_ctx, &dec));
    assert_int_equal(dec.device, 0); /* completed on the CPU */
    xot_assert_ok(xo_finish(g_ctx));
    xo_stats s;
    xot_assert_ok(xo_stats_get(g_ctx, g_ocl, &s));
    assert_int_equal(s.fallbacks, 1);
    assert_int_equal(s.ops, 0);
    for (size_t i = 0; i < N; i += CHUNK) {
        xot_assert_ok(xo_buffer_read(by, i * sizeof(float), chunk, CHUNK * sizeof(float)));
        for (size_t k = 0; k < CHUNK; k++) want[k] = ALPHA * x_at(i + k) + y_at(i + k);
        xot_assert_close_f(chunk, want, CHUNK, "saxpy completed on the CPU");
    }
    xo_buffer_destroy(bx);
    xo_buffer_destroy(by);
    free(chunk);
    free(want);
}

/* The child: everything OpenCL happens here (never before a fork). */
static int child(void)
{
    int rc = xot_main_context(&g_ctx, "opencl", &g_ocl);
    if (rc) return rc;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_saxpy_falls_back)};
    int failed = cmocka_run_group_tests_name("allocation under RLIMIT_AS", tests, NULL, NULL);
    xo_context_destroy(g_ctx);
    return failed ? 1 : 0;
}

int main(void)
{
#ifdef XOT_BIG_SHADOW
    printf("built with a sanitizer that reserves most of the address space: skipped\n");
    return XOT_EXIT_SKIP;
#endif
    if (vm_bytes() == 0 || vm_bytes() > ((size_t)64 << 30)) {
        printf("VmSize unknown or huge (a sanitizer?): skipped\n");
        return XOT_EXIT_SKIP;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        int rc = child();
        fflush(NULL);
        _exit(rc);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) {
        perror("waitpid");
        return 1;
    }
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "FAIL: the process was killed by signal %d (%s)\n", WTERMSIG(status),
                strsignal(WTERMSIG(status)));
        return 1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
