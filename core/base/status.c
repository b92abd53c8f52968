/* Status strings, the thread-local error detail, logging and the clock. */
#include "xo_internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

const char *xo_status_string(xo_status s)
{
    switch (s) {
#define XO_STATUS_CASE_(name) \
    case name:                \
        return #name;
        XO_STATUS_MAP(XO_STATUS_CASE_)
#undef XO_STATUS_CASE_
    }
    return "XO_UNKNOWN_STATUS";
}

static _Thread_local char xo__last_error_text[XO_ERROR_MAX];

const char *xo_last_error(void) { return xo__last_error_text; }

void xo__clear_error(void) { xo__last_error_text[0] = '\0'; }

xo_status xo__error(xo_status s, const char *fmt, ...)
{
    /* Formatted aside, then copied: an argument may be this thread's previous message
     * (xo_last_error()), which formatting in place would overwrite while reading it. */
    char text[sizeof xo__last_error_text];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    memcpy(xo__last_error_text, text, sizeof text);
    xo__log(XO_LOG_DEBUG, "returning %s: %s", xo_status_string(s), xo__last_error_text);
    return s;
}

_Atomic int xo__log_level = XO_LOG_OFF;

void xo__log(xo_log_level level, const char *fmt, ...)
{
    if (level == XO_LOG_OFF || (int)level > atomic_load_explicit(&xo__log_level, memory_order_relaxed))
        return;
    static const char *const names[] = {"off", "error", "warn", "info", "decision", "debug"};
    char line[XO_ERROR_MAX + 1024]; /* messages may quote an error detail */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* One fprintf per line so lines from several threads do not interleave. */
    fprintf(stderr, "crossover %s: %s\n", names[level], line);
}

double xo__now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}
