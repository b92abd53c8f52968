/* The xo tool as a user meets it: `xo help` names every op `explain` takes (walking the op
 * table), a wrong argument count is said without the library's internal names, each
 * subcommand's --help prints that subcommand's usage, and asking for a device a plugin
 * cannot give says why.
 *
 * ctest runs it with XO_CALIBRATE=off. */
#include "xo_test.h"
#include "xo_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#ifndef XO_TOOL_PATH
#error "XO_TOOL_PATH (the xo tool) must be defined by the build"
#endif

/* Run `env xo args` with stderr joined to stdout; the text (caller frees) and exit code. */
static char *run_xo(const char *env, const char *args, int *out_rc)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s '%s' %s 2>&1", env, XO_TOOL_PATH, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    size_t got;
    while ((got = fread(text + len, 1, cap - 1 - len, p)) > 0)
        len += got;
    text[len] = '\0';
    int st = pclose(p);
    *out_rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return text;
}

static void test_help_lists_every_op(void **state)
{
    (void)state;
    int rc;
    char *text = run_xo("", "help", &rc);
    assert_int_equal(rc, 0);
    for (int k = 0; k < XO_OP_KIND_COUNT; k++) {
        char want[128];
        snprintf(want, sizeof want, "s%s|d%s %s\n", xo__ops[k].name, xo__ops[k].name,
                 xo__op_dims_text((xo_op_kind)k));
        if (!strstr(text, want)) {
            print_error("xo help does not list \"%s\":\n%s\n", want, text);
            fail();
        }
    }
    free(text);
}

static void test_wrong_count_user_message(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"explain sgemm 2 2", "xo: explain: sgemm takes 3 dimensions (M N K), got 2"},
        {"explain ssoftmax_xent 4", "xo: explain: ssoftmax_xent takes 2 dimensions (ROWS COLS), got 1"},
        {"explain sgemm 2 0 3", "xo: explain: sgemm: dimension 2 = 0 is out of range"},
        {"explain xgemm 2", "xo: explain: unknown op \"xgemm\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc;
        char *text = run_xo("", cases[i][0], &rc);
        assert_int_equal(rc, 2);
        if (!strstr(text, cases[i][1]) || strstr(text, "xo__") || !strstr(text, "usage: xo explain")) {
            print_error("xo %s: want \"%s\", no internal name and explain's usage; got:\n%s\n", cases[i][0],
                        cases[i][1], text);
            fail();
        }
        free(text);
    }
}

static void test_subcommand_help(void **state)
{
    (void)state;
    static const char *const commands[] = {"info", "calibrate", "explain", "bench", "record"};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char args[64], want[64];
        for (int form = 0; form < 2; form++) {
            snprintf(args, sizeof args, form ? "help %s" : "%s --help", commands[i]);
            snprintf(want, sizeof want, "usage: xo %s", commands[i]);
            int rc;
            char *text = run_xo("", args, &rc);
            assert_int_equal(rc, 0);
            if (strncmp(text, want, strlen(want)) != 0 || strstr(text, "commands:")) {
                print_error("xo %s: want that command's usage alone (\"%s ...\"); got:\n%s\n", args, want, text);
                fail();
            }
            free(text);
        }
    }
}

/* A device spec naming a plugin that gives no devices says why in the error itself. */
static void test_absent_device_says_why(void **state)
{
    (void)state;
    int rc;
    char *text = run_xo("XO_PLUGINS=cpu XO_DEVICE=opencl", "info", &rc);
    assert_int_equal(rc, 1);
    if (!strstr(text, "names no device present here: plugin opencl gives none (not loaded (XO_PLUGINS))")) {
        print_error("XO_DEVICE=opencl with XO_PLUGINS=cpu:\n%s\n", text);
        fail();
    }
    free(text);
#ifdef XOT_HAVE_CUDA_PLUGIN
    text = run_xo("XO_PLUGINS=cpu,cuda XO_DEVICE=cuda", "info", &rc);
    /* A machine with a driver and a GPU has the device; one without says why. */
    if (rc != 0 && !strstr(text, "plugin cuda gives none (")) {
        print_error("XO_DEVICE=cuda without a CUDA device gives no reason:\n%s\n", text);
        fail();
    }
    free(text);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_lists_every_op),
        cmocka_unit_test(test_wrong_count_user_message),
        cmocka_unit_test(test_subcommand_help),
        cmocka_unit_test(test_absent_device_says_why),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
