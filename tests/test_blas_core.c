/* The CPU's BLAS identity: the driver string names OpenBLAS's core and the thread count
 * (so the profile cache is keyed on them), and a core far below the CPU (run here with
 * OPENBLAS_CORETYPE=Prescott set by ctest) is warned about with the fix, by the library
 * and by xo info, which never overrides the user's value. */
#include "xo_test.h"
#include "cpu_coretype.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_core_in_driver_and_warning(void **state)
{
    (void)state;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2"))
        skip(); /* nothing to warn about on this CPU */
    setenv("XO_LOG", "warn", 1);
    setenv("XO_THREADS", "1", 1);
    xot_capture err;
    assert_int_equal(xot_capture_begin(&err, 2), 0);
    xo_context *ctx;
    xo_status st = xo_context_create(&ctx);
    char *e = xot_capture_end(&err);
    xot_assert_ok(st);
    xo_device_info info;
    xot_assert_ok(xo_device_get_info(ctx, 0, &info));
    assert_true(xot_contains(info.driver, "OpenBLAS"));
    assert_true(xot_contains(info.driver, "Prescott"));
    assert_true(xot_contains(info.driver, "1 thread"));
    assert_true(xot_contains(e, "Prescott"));
    assert_true(xot_contains(e, "OPENBLAS_CORETYPE="));
    free(e);
    xo_context_destroy(ctx);

    /* Another thread count is another profile: the driver string differs. */
    setenv("XO_THREADS", "2", 1);
    xot_assert_ok(xo_context_create(&ctx));
    xo_device_info two;
    xot_assert_ok(xo_device_get_info(ctx, 0, &two));
    assert_true(strcmp(info.driver, two.driver) != 0);
    xo_context_destroy(ctx);
}

/* Core OpenBLAS picked + what the CPU has (+ the user's OPENBLAS_CORETYPE) -> the core
 * to set, or none. */
static void test_coretype_table(void **state)
{
    (void)state;
    const unsigned avx2 = XO_CPU_FEAT_AVX2, avx512 = XO_CPU_FEAT_AVX2 | XO_CPU_FEAT_AVX512, amd = XO_CPU_FEAT_AMD;
    static const struct {
        const char *env, *core;
        unsigned feat;
        const char *want; /* NULL: leave OpenBLAS's choice */
    } cases[] = {
        {NULL, "Prescott", 0, NULL},               /* no AVX2: Prescott is what the CPU runs */
        {NULL, "Prescott", 3, "SkylakeX"},         /* the 16-core Xeon: AVX-512 */
        {NULL, "prescott", 3 | 4, "SkylakeX"},     /* AMD with AVX-512 (Zen 4) */
        {NULL, "Nehalem", 1, "Haswell"},
        {NULL, "Core2", 1 | 4, "Zen"},             /* AMD with AVX2 only */
        {NULL, "Sandybridge", 1, "Haswell"},       /* AVX but not AVX2 kernels */
        {NULL, "Generic", 3, "SkylakeX"},
        {NULL, "Haswell", 1, NULL},                /* AVX2 kernels on an AVX2 CPU */
        {NULL, "Haswell", 3, "SkylakeX"},          /* AVX2 kernels on AVX-512: two thirds of its gemm */
        {NULL, "Zen", 3 | 4, "SkylakeX"},          /* Zen 4 taken for an older Zen */
        {"Haswell", "Haswell", 3, NULL},           /* this machine's environment: kept, only advised */
        {NULL, "SkylakeX", 3, NULL},
        {NULL, "Cooperlake", 3, NULL},
        {NULL, "Zen", 1 | 4, NULL},
        {NULL, "", 3, NULL},
        {NULL, NULL, 3, NULL},
        {"", "Prescott", 3, "SkylakeX"},           /* set but empty: OpenBLAS chose */
        {"Prescott", "Prescott", 3, NULL},         /* the user's value is never overridden */
        {"SkylakeX", "Prescott", 3, NULL},         /* ignored (no DYNAMIC_ARCH): still the user's */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned f = (cases[i].feat & 1 ? avx2 : 0) | (cases[i].feat & 2 ? avx512 : 0) | (cases[i].feat & 4 ? amd : 0);
        const char *got = xo__openblas_coretype_to_set(cases[i].env, cases[i].core, f);
        if ((got == NULL) != (cases[i].want == NULL) || (got && strcmp(got, cases[i].want) != 0))
            fail_msg("case %zu: env %s, core %s, features %u: got %s, want %s", i,
                     cases[i].env ? cases[i].env : "(unset)", cases[i].core ? cases[i].core : "(null)",
                     cases[i].feat, got ? got : "(none)", cases[i].want ? cases[i].want : "(none)");
    }
}

/* Runs `xo info` through `cmd` and keeps the CPU's driver and openblas kernels lines. */
static void xo_info_lines(const char *cmd, char driver[1024], char kernels[1024])
{
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[1024];
    driver[0] = kernels[0] = '\0';
    while (fgets(line, sizeof line, p)) {
        if (!driver[0] && xot_contains(line, "  driver "))
            snprintf(driver, 1024, "%s", line);
        if (xot_contains(line, "  openblas kernels "))
            snprintf(kernels, 1024, "%s", line);
    }
    assert_int_equal(pclose(p), 0);
}

/* xo info with the user's OPENBLAS_CORETYPE=Prescott: it keeps the value (no re-exec),
 * and the CPU's entry says what that costs and what to set instead. */
static void test_xo_info_says_so(void **state)
{
    (void)state;
    const char *better = xo__openblas_better_core("Prescott", xo__cpu_features());
    if (!better)
        skip(); /* a CPU without AVX2: Prescott is right for it */
    char driver[1024], kernels[1024];
    xo_info_lines("'" XO_TOOL_PATH "' info 2>/dev/null", driver, kernels);
    assert_true(xot_contains(driver, "Prescott"));
    assert_true(xot_contains(kernels, "Prescott"));
    assert_true(xot_contains(kernels, "OPENBLAS_CORETYPE=Prescott"));
    char want[64];
    snprintf(want, sizeof want, "Set OPENBLAS_CORETYPE=%s", better);
    assert_true(xot_contains(kernels, want));
}

/* An OpenBLAS that picks Prescott when left to itself (the shim): xo runs itself again
 * with OPENBLAS_CORETYPE set, so its OpenBLAS runs the better core, and xo info says what
 * happened and that programs need the variable too. */
static void test_xo_sets_the_core(void **state)
{
    (void)state;
    const char *better = xo__openblas_better_core("Prescott", xo__cpu_features());
    if (!better)
        skip();
    /* under AddressSanitizer the shim comes before its runtime: allowed for this run */
    char driver[1024], kernels[1024];
    xo_info_lines("env -u OPENBLAS_CORETYPE ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0\" "
                  "LD_PRELOAD='" XO_CORETYPE_SHIM "' '" XO_TOOL_PATH "' info 2>&1",
                  driver, kernels);
    char want[96];
    snprintf(want, sizeof want, " %s, ", better); /* "OpenBLAS 0.3.21 SkylakeX, 2 threads" */
    if (!xot_contains(driver, want))
        fail_msg("driver line %s lacks %s", driver, want);
    snprintf(want, sizeof want, "xo set OPENBLAS_CORETYPE=%s", better);
    assert_true(xot_contains(kernels, "picked its Prescott kernels"));
    assert_true(xot_contains(kernels, want));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_core_in_driver_and_warning),
                                       cmocka_unit_test(test_coretype_table), cmocka_unit_test(test_xo_info_says_so),
                                       cmocka_unit_test(test_xo_sets_the_core)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
