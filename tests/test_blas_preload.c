/* Run with LD_PRELOAD=libcrossover_blas.so (tests/blas.cmake): the error handlers of a
 * module the program loads itself (blas_xerbla_module.c, as numpy's lapack_lite) are the
 * ones called, for the drop-in's routines' errors and for the module's own calls, not the
 * drop-in's (which print). argv[1]: the module. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void *g_module;
static const char *g_path;

static void *sym(const char *name)
{
    void *p = dlsym(g_module, name);
    assert_non_null(p);
    return p;
}
#define CALLS (*(int *)sym("module_calls"))
#define INFO (*(int *)sym("module_info"))
#define NAME ((const char *)sym("module_name"))

static void run(const char *fn) { ((void (*)(void))sym(fn))(); }

static void test_module_handlers(void **state)
{
    (void)state;
    assert_non_null(getenv("LD_PRELOAD"));
    g_module = dlopen(g_path, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(g_module);
    run("module_bad_dgemm");
    assert_int_equal(CALLS, 1);
    assert_string_equal(NAME, "DGEMM ");
    assert_int_equal(INFO, 3);
    run("module_bad_sgemv");
    assert_int_equal(CALLS, 2);
    assert_string_equal(NAME, "cblas_sgemv");
    assert_int_equal(INFO, 7);
    run("module_own_call");
    assert_int_equal(CALLS, 3);
    assert_string_equal(NAME, "OWN   ");
    assert_int_equal(INFO, 9);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    g_path = argv[1];
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_module_handlers)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
