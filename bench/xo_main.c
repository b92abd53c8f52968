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

/* Every subcommand: its name, its arguments and what it does (the help text of
 * `xo help` and of `xo COMMAND --help`). */
typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *args;
    const char *text;
} command;

static const command commands[] = {
    {"info", xo__tool_cmd_info, "", "devices and their profiles (a clinfo for crossover)\n"},
    {"calibrate", xo__tool_cmd_calibrate, "[--force]",
     "measure every device's profile, with progress on stderr\n"
     "(--force: re-measure even when a cached profile is valid or was kept)\n"},
    {"explain", xo__tool_cmd_explain, "[--profile FILE]... [--resident DEVICE] [--correction FILE] OP DIMS...",
     "predicted launch/transfer/compute/total per device for\n"
     "one op; each --profile FILE adds a what-if device read\n"
     "from a profile file; --resident DEVICE (index or spec)\n"
     "says the operands are current there, not on the host;\n"
     "--correction FILE reads correction factors as XO_LOG=summary\n"
     "prints them.\n"
     "e.g. xo explain sgemm 256 256 256\n"},
    {"bench", xo__tool_cmd_bench, "[--quick] [--workloads] [--eval1] [--out DIR]",
     "the cross-vendor benchmark: sweeps every device and\n"
     "auto placement, finds crossovers, regret, runs the\n"
     "workloads (eagerly, as plans, in plain CBLAS) and the\n"
     "batch-1 3-100-3 evaluation; writes results.csv,\n"
     "workloads.csv, summary.json, report.md and SVG plots\n"
     "to DIR (default ./xo-bench); --workloads: no sweep;\n"
     "--eval1: only the batch-1 evaluation, its figures on\n"
     "stderr, no files\n"},
    {"record", xo__tool_cmd_record, "[--out FILE] [--profiles DIR] [--quick]",
     "record this machine as a machine file for XO_SIMULATE\n"
     "(docs/machines/README.md): kernel times by kind and size,\n"
     "launch, wait and transfer costs; every device's profile\n"
     "beside FILE (default ./HOST.xom), or in DIR, relative to\n"
     "FILE's folder; --quick: fewer sizes, seconds not minutes\n"},
};

/* `text`, each line indented by `indent` spaces. */
static void indented(FILE *f, const char *text, int indent)
{
    while (*text) {
        const char *nl = strchr(text, '\n');
        int len = nl ? (int)(nl - text) : (int)strlen(text);
        fprintf(f, "%*s%.*s\n", indent, "", len, text);
        text += len + (nl != NULL);
    }
}

/* The ops explain takes, from the op table: "sgemm|dgemm M N K", one per line. */
static void explain_ops(FILE *f, int indent)
{
    fprintf(f, "%*sOP DIMS, every op of the op table:\n", indent, "");
    for (int k = 0; k < XO_OP_KIND_COUNT; k++)
        fprintf(f, "%*s  s%s|d%s %s\n", indent, "", xo__ops[k].name, xo__ops[k].name,
                xo__op_dims_text((xo_op_kind)k));
}

static void command_text(FILE *f, const command *c, int indent)
{
    indented(f, c->text, indent);
    if (c->run == xo__tool_cmd_explain)
        explain_ops(f, indent);
}

void xo__tool_usage(FILE *f)
{
    fputs("usage: xo COMMAND [ARGS]\n\ncommands:\n", f);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        fprintf(f, "  %s%s%s\n", commands[i].name, commands[i].args[0] ? " " : "", commands[i].args);
        command_text(f, &commands[i], 27);
    }
    fputs("  help [COMMAND]           this text, or one command's\n"
          "  COMMAND --help           one command's usage\n"
          "\n"
          "environment: XO_DEVICE, XO_PLUGINS, XO_LOG, XO_CACHE_DIR, XO_CALIBRATE, XO_THREADS\n"
          "exit status: 0 success, 1 failure, 2 bad usage\n",
          f);
}

/* `xo COMMAND --help`: that command's usage alone. */
static void command_usage(FILE *f, const command *c)
{
    fprintf(f, "usage: xo %s%s%s\n\n", c->name, c->args[0] ? " " : "", c->args);
    command_text(f, c, 0);
}

static const command *command_named(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0)
            return &commands[i];
    return NULL;
}

/* The usage shown after a usage error: the command's own when the message names one
 * ("explain: ..."), else the general one. */
int xo__tool_usage_error(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "xo: %s\n\n", msg);
    const command *c = NULL;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0] && !c; i++) {
        size_t n = strlen(commands[i].name);
        if (strncmp(msg, commands[i].name, n) == 0 && msg[n] == ':')
            c = &commands[i];
    }
    if (c)
        command_usage(stderr, c);
    else
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
    if (argc < 2) return xo__tool_usage_error("missing command");
    const char *cmd = argv[1];
    if (xo__tool_is_help(cmd) || strcmp(cmd, "help") == 0) {
        const command *c = argc > 2 ? command_named(argv[2]) : NULL;
        if (argc > 2 && !c) return xo__tool_usage_error("help: unknown command '%s'", argv[2]);
        if (c)
            command_usage(stdout, c);
        else
            xo__tool_usage(stdout);
        return XO_TOOL_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("xo (crossover) %s\n", XO_VERSION_STRING);
        return XO_TOOL_OK;
    }
    const command *c = command_named(cmd);
    if (!c) return xo__tool_usage_error("unknown command '%s'", cmd);
    for (int a = 2; a < argc; a++) {
        if (strcmp(argv[a], "--") == 0) break;
        if (xo__tool_is_help(argv[a])) {
            command_usage(stdout, c);
            return XO_TOOL_OK;
        }
    }
    return c->run(argc - 1, argv + 1);
}
