/* The XO_* environment variables, parsed and validated at context creation. */
#include "xo_env.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* "cpu, opencl, cuda" */
static void names_text(const char *const *names, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; names[i] && used < cap; i++) {
        int w = snprintf(out + used, cap - used, "%s%s", i ? ", " : "", names[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}
static const char *const fault_sites[] = {"alloc", "upload", "download", "launch", "compile", NULL};
static const char *const log_names[] = {"off", "error", "warn", "info", "decisions", "debug", NULL};
static const char *const calibrate_names[] = {"auto", "force", "off", NULL};
static const char *const zero_copy_names[] = {"off", "on", NULL};
static const char *const plan_names[] = {"on", "eager", NULL};

/* Parse a positive decimal integer occupying exactly [s, s+len). */
static int parse_positive(const char *s, size_t len, long max, long *out)
{
    if (len == 0 || len > 9)
        return 0;
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    if (v < 1 || v > max)
        return 0;
    *out = v;
    return 1;
}

static xo_status parse_plugins(const char *v, unsigned *mask)
{
    const char *names[XO_MAX_PLUGIN_NAMES + 1];
    xo__plugin_names(names);
    *mask = 0;
    const char *p = v;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        int i = xo__word_index(names, p, len);
        if (i < 0) {
            char allowed[256];
            names_text(names, allowed, sizeof allowed);
            return xo__error(XO_ERR_INVALID_ARGUMENT,
                             "xo_context_create: XO_PLUGINS=\"%s\": \"%.*s\" is not a plugin; "
                             "allowed: a comma list of %s",
                             v, (int)len, p, allowed);
        }
        *mask |= 1u << i;
        if (!comma)
            break;
        p = comma + 1;
    }
    return XO_OK;
}

static xo_status parse_faults(const char *v, xo__env *env)
{
    const char *names[XO_MAX_PLUGIN_NAMES + 1];
    xo__plugin_names(names);
    const char *p = v;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const char *dot = memchr(p, '.', len);
        const char *at = memchr(p, '@', len);
        long nth = 0;
        int plugin = dot ? xo__word_index(names, p, (size_t)(dot - p)) : -1;
        int site = (dot && at && at > dot) ? xo__word_index(fault_sites, dot + 1, (size_t)(at - dot - 1)) : -1;
        int count_ok = 0;
        if (at) {
            size_t nlen = len - (size_t)(at + 1 - p);
            count_ok = (nlen == 1 && at[1] == '*') || parse_positive(at + 1, nlen, 999999999L, &nth);
        }
        if (plugin < 0 || site < 0 || !count_ok || env->nfaults >= XO_MAX_FAULTS) {
            char allowed[256];
            names_text(names, allowed, sizeof allowed);
            return xo__error(XO_ERR_INVALID_ARGUMENT,
                             "xo_context_create: XO_FAULTS=\"%s\": bad entry \"%.*s\"; allowed: a comma "
                             "list (at most %d) of PLUGIN.SITE@N, PLUGIN one of %s, SITE one "
                             "of alloc, upload, download, launch, compile, N a positive count or *",
                             v, (int)len, p, XO_MAX_FAULTS, allowed);
        }
        xo__fault *f = &env->faults[env->nfaults++];
        snprintf(f->plugin, sizeof f->plugin, "%s", names[plugin]);
        snprintf(f->site, sizeof f->site, "%s", fault_sites[site]);
        f->nth = nth;
        if (!comma)
            break;
        p = comma + 1;
    }
    return XO_OK;
}

static xo_status parse_choice(const char *var, const char *v, const char *const *words,
                              const char *allowed, int *out)
{
    int i = xo__word_index(words, v, strlen(v));
    if (i < 0)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_context_create: %s=\"%s\" is not valid; allowed: %s",
                         var, v, allowed);
    *out = i;
    return XO_OK;
}

/* Copy the value of `var` (with `suffix`) into out[cap] whole, or refuse it. */
static xo_status copy_whole(const char *var, const char *v, const char *suffix, char *out, size_t cap)
{
    size_t n = strlen(v) + strlen(suffix);
    if (n >= cap)
        return xo__error(XO_ERR_INVALID_ARGUMENT,
                         "xo_context_create: %s=\"%.40s...\" is %zu bytes long; at most %zu are allowed", var, v,
                         strlen(v), cap - 1 - strlen(suffix));
    size_t lv = strlen(v);
    memcpy(out, v, lv); /* n < cap: both fit, with the terminator */
    memcpy(out + lv, suffix, strlen(suffix) + 1);
    return XO_OK;
}

static xo_status cache_dir(xo__env *env)
{
    const char *v = getenv("XO_CACHE_DIR");
    if (v && v[0])
        return copy_whole("XO_CACHE_DIR", v, "", env->cache_dir, sizeof env->cache_dir);
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (xdg && xdg[0])
        return copy_whole("XDG_CACHE_HOME", xdg, "/crossover", env->cache_dir, sizeof env->cache_dir);
    if (home && home[0])
        return copy_whole("HOME", home, "/.cache/crossover", env->cache_dir, sizeof env->cache_dir);
    env->cache_dir[0] = '\0';
    return XO_OK;
}

xo_status xo__env_read(xo__env *env)
{
    memset(env, 0, sizeof *env);
    env->plugin_mask = ~0u;
    env->log_level = XO_LOG_OFF;
    env->calibrate = XO_CALIBRATE_AUTO;
    env->zero_copy = 1;

    const char *v;
    if ((v = getenv("XO_LOG")) != NULL) {
        int lvl = 0;
        if (strcasecmp(v, "summary") == 0) { /* warnings, and the summary table at the end */
            lvl = XO_LOG_WARN;
            env->summary = 1;
        } else {
            XO_RETURN_IF_ERROR(parse_choice("XO_LOG", v, log_names,
                                            "off, error, warn, info, summary, decisions, debug", &lvl));
        }
        env->log_level = lvl;
    }
    if ((v = getenv("XO_PLUGINS")) != NULL)
        XO_RETURN_IF_ERROR(parse_plugins(v, &env->plugin_mask));
    if ((v = getenv("XO_THREADS")) != NULL) {
        long n;
        if (!parse_positive(v, strlen(v), 4096, &n))
            return xo__error(XO_ERR_INVALID_ARGUMENT,
                             "xo_context_create: XO_THREADS=\"%s\" is not valid; allowed: a whole number "
                             "from 1 to 4096",
                             v);
        env->threads = (int)n;
    }
    if ((v = getenv("XO_CALIBRATE")) != NULL) {
        int c = 0;
        XO_RETURN_IF_ERROR(parse_choice("XO_CALIBRATE", v, calibrate_names, "auto, force, off", &c));
        env->calibrate = (xo__calibrate_mode)c;
    }
    if ((v = getenv("XO_ZERO_COPY")) != NULL)
        XO_RETURN_IF_ERROR(parse_choice("XO_ZERO_COPY", v, zero_copy_names, "on, off", &env->zero_copy));
    if ((v = getenv("XO_PLAN")) != NULL)
        XO_RETURN_IF_ERROR(parse_choice("XO_PLAN", v, plan_names, "on, eager", &env->plan_eager));
    if ((v = getenv("XO_FAULTS")) != NULL)
        XO_RETURN_IF_ERROR(parse_faults(v, env));
    XO_RETURN_IF_ERROR(cache_dir(env));
    if ((v = getenv("XO_SIMULATE")) != NULL && *v)
        XO_RETURN_IF_ERROR(copy_whole("XO_SIMULATE", v, "", env->simulate, sizeof env->simulate));
    v = getenv("XO_DEVICE");
    env->device_set = v != NULL;
    return copy_whole("XO_DEVICE", v ? v : "auto", "", env->device, sizeof env->device);
}
