/* The xo command-line tool: shared helpers and the subcommands. Not installed.
 * Tool-internal names are xo__tool_* (helpers, commands) and xo__bench_* (benchmark). */
#ifndef XO_TOOL_H
#define XO_TOOL_H

#include "xo_internal.h"

#include <stdio.h>
#include <time.h>

/* Exit codes of the contract. */
enum { XO_TOOL_OK = 0, XO_TOOL_FAIL = 1, XO_TOOL_USAGE = 2 };

/* ---- xo_main.c ----------------------------------------------------------------- */

void xo__tool_usage(FILE *f);
/* Print "xo: <message>" and the usage to stderr; returns XO_TOOL_USAGE. */
int xo__tool_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "xo: <what>: <STATUS>: <xo_last_error>" to stderr; returns XO_TOOL_FAIL. */
int xo__tool_fail(xo_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 1 if `arg` is -h / --help. */
int xo__tool_is_help(const char *arg);
/* Monotonic clock in microseconds. */
double xo__tool_now_us(void);

/* ---- cmd_info.c: devices and profiles --------------------------------------------- */

/* The spec that names device `dev`: "cpu" for device 0, else "<plugin>:<index in plugin>". */
void xo__tool_device_spec(const xo_context *ctx, int dev, char *out, size_t cap);
const char *xo__tool_kind_name(xo_device_kind kind);
/* Where device `dev`'s profile came from: defaults, cached file, or measured by this
 * process (a cache file written at or after `since`). Fills `path` with the file. */
const char *xo__tool_profile_source(const xo_context *ctx, int dev, time_t since,
                                    char *path, size_t cap);
/* tool_text.c: a host<->device bandwidth as xo info (`words`) or a report table shows
 * it: the host itself, "shared memory" for a host-unified device whose figure is a copy
 * that did not happen, else the figure measured. Returns out. */
const char *xo__tool_bandwidth_text(const xo_device_info *in, int dev, double gbps, int words, char *out,
                                    size_t cap);
/* Print every device with every xo_device_info field and its profile's origin. */
void xo__tool_print_devices(FILE *f, const xo_context *ctx, time_t since);

/* ---- the subcommands (argv[0] is the subcommand name) ------------------------------ */

int xo__tool_cmd_info(int argc, char **argv);
int xo__tool_cmd_calibrate(int argc, char **argv);
int xo__tool_cmd_explain(int argc, char **argv);
int xo__tool_cmd_bench(int argc, char **argv);
int xo__tool_cmd_record(int argc, char **argv);

#endif /* XO_TOOL_H */
