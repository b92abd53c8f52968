/* xo: devices, profiles, placement predictions and the cross-vendor benchmark.
 * Exit status: 0 success, 1 failure (message on stderr), 2 bad usage (usage on stderr). */
#include "xo_tool.h"
#include "cpu_coretype.h"

#include <cblas.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void xo__tool_usage(FILE *f)
{
    fputs("usage: xo COMMAND [ARGS]\n"
          "\n"
          "commands:\n"
          "  info                     devices and their profiles (a clinfo for crossover)\n"
          "  calibrate [--force]      measure every device's profile, with progress on stderr\n"
          "                           (--force: re-measure even when a cached profile is valid)\n"
          "  explain [--profile FILE]... [--resident DEVICE] OP DIMS...\n"
          "                           predicted launch/transfer/compute/total per device for\n"
          "                           one op; each --profile FILE adds a what-if device read\n"
          "                           from a profile file; --resident DEVICE (index or spec)\n"
          "                           says the operands are current there, not on the host.\n"
          "                           OP DIMS: sgemm|dgemm M N K, sgemv|dgemv M N,\n"
          "                           saxpy|sscal|sdot|snrm2|sunary|sbinary|sreduce N,\n"
          "                           sbias ROWS COLS (and the d* forms)\n"
          "                           e.g. xo explain sgemm 256 256 256\n"
          "  bench [--quick] [--workloads] [--out DIR]\n"
          "                           the cross-vendor benchmark: sweeps every device and\n"
          "                           auto placement, finds crossovers, regret, runs the\n"
          "                           workloads (eagerly, as plans, in plain CBLAS) and the\n"
          "                           batch-1 3-100-3 evaluation; writes results.csv,\n"
          "                           workloads.csv, summary.json, report.md and SVG plots\n"
          "                           to DIR (default ./xo-bench); --workloads: no sweep\n"
          "  help                     this text\n"
          "\n"
          "environment: XO_DEVICE, XO_PLUGINS, XO_LOG, XO_CACHE_DIR, XO_CALIBRATE, XO_THREADS\n"
          "exit status: 0 success, 1 failure, 2 bad usage\n",
          f);
}

int xo__tool_usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("xo: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n\n", stderr);
    xo__tool_usage(stderr);
    return XO_TOOL_USAGE;
}

int xo__tool_fail(xo_status s, const char *fmt, ...)
{
    va_list ap;
    fputs("xo: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    const char *detail = xo_last_error();
    fprintf(stderr, ": %s%s%s\n", xo_status_string(s), detail[0] ? ": " : "", detail);
    return XO_TOOL_FAIL;
}

int xo__tool_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

double xo__tool_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* OpenBLAS picks its kernels when it loads, before main. When it picked a core far below
 * this CPU and the user left OPENBLAS_CORETYPE unset, xo runs itself again with the right
 * one, so that its measurements and profiles are the CPU's (the new process tells xo info
 * what OpenBLAS had picked). A value the user set is never overridden; if the exec fails,
 * xo goes on with the old kernels and says what to do. */
static void openblas_kernels_for_this_cpu(char **argv)
{
    const char *picked = openblas_get_corename();
    const char *set = xo__openblas_coretype_to_set(getenv("OPENBLAS_CORETYPE"), picked, xo__cpu_features());
    if (!set) return;
    setenv("OPENBLAS_CORETYPE", set, 1);
    setenv(XO_CORETYPE_FROM_ENV, picked, 1);
    execv("/proc/self/exe", argv);
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv(XO_CORETYPE_FROM_ENV);
}

int main(int argc, char **argv)
{
    openblas_kernels_for_this_cpu(argv);
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } commands[] = {
        {"info", xo__tool_cmd_info},
        {"calibrate", xo__tool_cmd_calibrate},
        {"explain", xo__tool_cmd_explain},
        {"bench", xo__tool_cmd_bench},
    };

    if (argc < 2) return xo__tool_usage_error("missing command");
    const char *cmd = argv[1];
    if (xo__tool_is_help(cmd) || strcmp(cmd, "help") == 0) {
        xo__tool_usage(stdout);
        return XO_TOOL_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("xo (crossover) %s\n", XO_VERSION_STRING);
        return XO_TOOL_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(cmd, commands[i].name) == 0) {
            for (int a = 2; a < argc; a++) {
                if (strcmp(argv[a], "--") == 0) break;
                if (xo__tool_is_help(argv[a])) {
                    xo__tool_usage(stdout);
                    return XO_TOOL_OK;
                }
            }
            return commands[i].run(argc - 1, argv + 1);
        }
    }
    return xo__tool_usage_error("unknown command '%s'", cmd);
}
