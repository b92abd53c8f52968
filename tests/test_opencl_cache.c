/* The OpenCL plugin's on-disk cache of compiled kernel programs:
 *   - the first context builds from source and writes entries under XO_CACHE_DIR/kernels;
 *   - a second context builds from those entries (no source build);
 *   - a truncated or garbled entry is rejected, rebuilt from source, results stay right,
 *     and the entry is rewritten (the next context loads it again);
 *   - an entry that is not a regular file (a FIFO, a directory) is rejected without
 *     blocking, and a FIFO is replaced by a good entry.
 * Counters come from the plugin's white-box header (cl_testing.h). Runs on device
 * "opencl" (skipped, exit 77, when there is none). */
#include "xo_test.h"
#include "cl_testing.h"

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N 1000
#define OFF 3
#define MAX_ENTRIES 32

static char g_kernels[1100]; /* XO_CACHE_DIR/kernels */

typedef struct entries {
    int n;
    char path[MAX_ENTRIES][1400];
    long size[MAX_ENTRIES];
} entries;

static void list_entries(entries *e)
{
    e->n = 0;
    DIR *d = opendir(g_kernels);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d)) && e->n < MAX_ENTRIES) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 6, ".clbin") != 0) continue;
        snprintf(e->path[e->n], sizeof e->path[0], "%s/%s", g_kernels, de->d_name);
        struct stat sb;
        e->size[e->n] = stat(e->path[e->n], &sb) == 0 ? (long)sb.st_size : -1;
        e->n++;
    }
    closedir(d);
}

static void remove_entries(void)
{
    entries e;
    list_entries(&e);
    for (int i = 0; i < e.n; i++) unlink(e.path[i]);
}

/* A fresh context forced onto the OpenCL device runs one unary op through the public
 * API; the result must match the reference loop and the op must have run there. */
static void run_unary_on_opencl(xo_unary_op op)
{
    xo_context *ctx = NULL;
    xot_assert_ok(xo_context_create(&ctx));
    xot_assert_ok(xo_set_device(ctx, "opencl"));
    int dev = -1;
    xot_assert_ok(xo_device_find(ctx, "opencl", &dev));

    float x[N + OFF], want[N + OFF], got[N + OFF];
    xot_fill_f(x, N + OFF, 11 + (uint64_t)op, -2, 2);
    memcpy(want, x, sizeof want);
    xot_ref_sunary(op, N, x + OFF, want + OFF);
    xo_buffer *b = xot_buffer(ctx, x, sizeof x);
    xot_assert_ok(xo_sunary(ctx, op, N, b, OFF, b, OFF));
    xot_assert_decision(ctx, "sunary", dev, 1);
    xot_assert_ok(xo_buffer_read(b, 0, got, sizeof got));
    xot_assert_close_f(got, want, N + OFF, "sunary on opencl");
    xo_buffer_destroy(b);
    xo_context_destroy(ctx);
}

static void test_second_context_uses_cache(void **state)
{
    (void)state;
    remove_entries();
    xo__cl_counters c0, c1, c2;
    xo__cl_counters_get(&c0);
    run_unary_on_opencl(XO_RELU);
    xo__cl_counters_get(&c1);
    assert_true(c1.builds_from_source > c0.builds_from_source);
    assert_true(c1.cache_writes > c0.cache_writes);
    entries e;
    list_entries(&e);
    assert_true(e.n >= 1);

    run_unary_on_opencl(XO_SIGMOID);
    xo__cl_counters_get(&c2);
    assert_true(c2.cache_hits > c1.cache_hits);
    assert_int_equal(c2.builds_from_source, c1.builds_from_source);
    assert_int_equal(c2.cache_rejected, c1.cache_rejected);
}

typedef enum damage { TRUNCATE, GARBLE, FIFO, DIRECTORY } damage;

static void damage_entries(damage how, entries *before)
{
    list_entries(before);
    assert_true(before->n >= 1);
    for (int i = 0; i < before->n; i++) {
        if (how == FIFO || how == DIRECTORY) {
            assert_int_equal(unlink(before->path[i]), 0);
            assert_int_equal(how == FIFO ? mkfifo(before->path[i], 0644) : mkdir(before->path[i], 0755), 0);
            before->size[i] = 0;
        } else if (how == TRUNCATE) {
            assert_int_equal(truncate(before->path[i], before->size[i] / 2), 0);
            before->size[i] /= 2;
        } else { /* flip bytes in the middle of the compiled binary, keep the size */
            FILE *f = fopen(before->path[i], "r+b");
            assert_non_null(f);
            assert_int_equal(fseek(f, before->size[i] / 2, SEEK_SET), 0);
            unsigned char junk[16];
            for (int k = 0; k < 16; k++) junk[k] = (unsigned char)(0xA5 ^ (k * 37));
            assert_int_equal(fwrite(junk, 1, sizeof junk, f), sizeof junk);
            assert_int_equal(fclose(f), 0);
        }
    }
}

static void check_rebuilt(damage how)
{
    /* Make sure there are entries to damage. */
    run_unary_on_opencl(XO_RELU);
    entries damaged;
    damage_entries(how, &damaged);

    xo__cl_counters c0, c1, c2;
    xo__cl_counters_get(&c0);
    alarm(60); /* blocking on a FIFO fails the test instead of hanging it */
    run_unary_on_opencl(XO_TANH); /* results are checked inside */
    alarm(0);
    xo__cl_counters_get(&c1);
    assert_true(c1.cache_rejected > c0.cache_rejected);
    assert_true(c1.builds_from_source > c0.builds_from_source);
    assert_true(c1.cache_writes > c0.cache_writes);
    if (how == DIRECTORY) { /* cannot be replaced: rejected again, and removed by the test */
        for (int i = 0; i < damaged.n; i++) assert_int_equal(rmdir(damaged.path[i]), 0);
        return;
    }
    if (how != GARBLE) { /* the rewritten entries are whole again */
        entries now;
        list_entries(&now);
        for (int i = 0; i < damaged.n; i++)
            for (int j = 0; j < now.n; j++)
                if (strcmp(now.path[j], damaged.path[i]) == 0) assert_true(now.size[j] > damaged.size[i]);
    }

    /* The rewritten entries load: no source build, no rejection. */
    run_unary_on_opencl(XO_EXP);
    xo__cl_counters_get(&c2);
    assert_true(c2.cache_hits > c1.cache_hits);
    assert_int_equal(c2.builds_from_source, c1.builds_from_source);
    assert_int_equal(c2.cache_rejected, c1.cache_rejected);
}

static void test_truncated_entry_rebuilt(void **state)
{
    (void)state;
    check_rebuilt(TRUNCATE);
}

static void test_garbled_entry_rebuilt(void **state)
{
    (void)state;
    check_rebuilt(GARBLE);
}

static void test_fifo_entry_rebuilt(void **state)
{
    (void)state;
    check_rebuilt(FIFO);
}

static void test_directory_entry_rejected(void **state)
{
    (void)state;
    check_rebuilt(DIRECTORY);
}

int main(void)
{
    const char *dir = getenv("XO_CACHE_DIR");
    if (!dir || !dir[0]) {
        fprintf(stderr, "XO_CACHE_DIR is not set\n");
        return 1;
    }
    snprintf(g_kernels, sizeof g_kernels, "%s/kernels", dir);

    int skip = xot_skip_without("opencl");
    if (skip) return skip;

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_context_uses_cache),
        cmocka_unit_test(test_truncated_entry_rebuilt),
        cmocka_unit_test(test_garbled_entry_rebuilt),
        cmocka_unit_test(test_fifo_entry_rebuilt),
        cmocka_unit_test(test_directory_entry_rejected),
    };
    return cmocka_run_group_tests_name("opencl kernel cache", tests, NULL, NULL);
}
