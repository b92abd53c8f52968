/* xo bench's report.md read back: it opens with findings computed from the data, writes
 * every rate and time in one plain format (no 1.205e+04 beside 583.6), and a workload row
 * whose rate columns and paired ratio disagree (medians over rounds of different speed)
 * shows the ratio's spread and is marked, with a finding that says why. The data are
 * made up here, shaped like a run on a busy machine. */
#include "xo_test.h"
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The tool's helpers from xo_main.c (not linked: it has main): tool_stubs.c. */

static xo__bench_workload *workload(xo__bench *b, const char *name, double cpu, double autor, double ratio,
                                    double q1, double q3)
{
    xo__bench_workload *w = &b->workloads[b->nworkloads++];
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, "%s", name);
    snprintf(w->unit, sizeof w->unit, "it/s");
    w->rate[0] = cpu;
    w->rate[1] = autor;
    w->best = 0;
    w->auto_over_best = ratio;
    w->auto_over_best_q1 = q1;
    w->auto_over_best_q3 = q3;
    w->auto_ops[0] = 1000;
    return w;
}

static char *report_of(xo__bench *b)
{
    char path[] = "/tmp/xo_report_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(xo__bench_write_markdown(b, path), XO_TOOL_OK);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    unlink(path);
    return text;
}

static void report_reads_consistently(void **state)
{
    (void)state;
    static xo__bench b;
    memset(&b, 0, sizeof b);
    snprintf(b.date, sizeof b.date, "2026-01-01");
    b.nconfigs = 2;
    snprintf(b.cfg[0].spec, sizeof b.cfg[0].spec, "cpu");
    snprintf(b.cfg[1].spec, sizeof b.cfg[1].spec, "auto");
    b.cfg[1].device = -1;
    /* cpu's rounds mostly fast, auto's mostly slow: the medians halve, the paired ratio does not */
    workload(&b, "mlp-3-100-3-ode", 12050, 6520, 0.98, 0.93, 1.01);
    xo__bench_workload *ode = workload(&b, "neural-ode-train", 639.9, 634.2, 0.99, 0.97, 1.01);
    ode->plan_check = XO_BENCH_PLAN_OK;
    ode->plan_rate = 684.8;
    ode->plan_over_eager = 1.07;
    ode->plan_check_steps = 3; /* exact: written "0" */
    const char *text = report_of(&b);
    print_message("%s", text);

    const char *findings = strstr(text, "## Findings"), *devices = strstr(text, "## Devices");
    assert_non_null(findings);
    assert_true(devices && findings < devices);
    assert_non_null(strstr(findings, "Only the CPU is present"));
    assert_non_null(strstr(findings, "in 2 of 2 workloads"));
    assert_non_null(strstr(findings, "In 1 workload row (marked †) the rate columns and the paired ratio disagree"));
    assert_non_null(strstr(findings, "Plans over eager ops (plan/eager): 1.07"));
    assert_null(strstr(text, "e+")); /* no exponent beside plain numbers */
    const char *row = strstr(text, "| mlp-3-100-3-ode | it/s | 12050 | 6520 | 0.98 [0.93, 1.01] † |");
    if (!row)
        fail_msg("the disagreeing row is not written plainly with its spread and mark");
    assert_non_null(strstr(text, "| neural-ode-train | it/s | 639.9 | 634.2 | 0.99 [0.97, 1.01] | - | - | 684.8 | 1.07 |"));
}

static void numbers_have_one_format(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *want;
    } cases[] = {{12050, "12050"}, {42970.4, "42970"}, {583.64, "583.6"}, {5.0513, "5.051"},
                 {0.012345, "0.01235"}, {0, "0"}, {1e9, "1000000000"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[32];
        assert_string_equal(xo__bench_format_num(cases[i].v, out, sizeof out), cases[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(report_reads_consistently),
        cmocka_unit_test(numbers_have_one_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
