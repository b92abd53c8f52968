/* xo_main.c's reporting helpers for tests that link a subcommand's or the report's
 * sources without the tool's main: a usage error or failure is only its exit code. */
#include "xo_tool.h"

int xo__tool_usage_error(const char *fmt, ...)
{
    (void)fmt;
    return XO_TOOL_USAGE;
}

int xo__tool_fail(xo_status s, const char *fmt, ...)
{
    (void)s;
    (void)fmt;
    return XO_TOOL_FAIL;
}

double xo__tool_now_us(void) { return 0.0; }
