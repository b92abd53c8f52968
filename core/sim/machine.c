/* Machine files (docs/machines/README.md): `# crossover machine v1`, then one fact per
 * line. Everything in them is checked here, so a simulation never runs on a guess: a
 * file that cannot be read, a line that cannot be parsed, a device without the rows its
 * simulation needs all fail with the file and the line. */
#include "xo_sim.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MACHINE_HEADER "# crossover machine v1"
#define MACHINE_MAX_BYTES ((long)1 << 20)
#define MAX_WORDS 8

typedef struct parser {
    const char *path;
    int line;
    xo__machine *m;
    xo__sim_device *cur; /* the device the lines below its `device` line describe */
} parser;

static xo_status bad(const parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static xo_status bad(const parser *p, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (p->line == 0) /* the file as a whole: not there, not a file, too big, empty */
        return xo__error(XO_ERR_INVALID_ARGUMENT, "XO_SIMULATE: machine file \"%s\": %s", p->path, why);
    return xo__error(XO_ERR_INVALID_ARGUMENT, "XO_SIMULATE: machine file \"%s\" line %d: %s", p->path, p->line, why);
}

static int number(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v) || v < 0)
        return 0;
    *out = v;
    return 1;
}

/* ---- tables ----------------------------------------------------------------------- */

double xo__sim_table_us(const xo__sim_table *t, double size, double power)
{
    if (t->n == 0)
        return 0.0;
    if (t->n == 1 || size <= t->size[0])
        return t->n == 1 && size > t->size[0] ? t->us[0] * pow(size / t->size[0], power) : t->us[0];
    int i = 1;
    while (i < t->n - 1 && t->size[i] < size)
        i++;
    if (size > t->size[t->n - 1]) /* past the last point: the work grows, the rate stays */
        return t->us[t->n - 1] * pow(size / t->size[t->n - 1], power);
    if (size == t->size[i] || t->us[i] == t->us[i - 1]) /* exact: a constant stays one */
        return t->us[i];
    double x0 = log(t->size[i - 1]), x1 = log(t->size[i]);
    double y0 = log(t->us[i - 1] > 0 ? t->us[i - 1] : 1e-9), y1 = log(t->us[i] > 0 ? t->us[i] : 1e-9);
    return exp(y0 + (y1 - y0) * (log(size) - x0) / (x1 - x0));
}

static xo_status table_add(const parser *p, xo__sim_table *t, const char *size_s, const char *us_s)
{
    double size, us;
    if (!number(size_s, &size) || size <= 0)
        return bad(p, "size \"%s\" is not a positive number", size_s);
    if (!number(us_s, &us))
        return bad(p, "time \"%s\" is not a finite non-negative number of microseconds", us_s);
    if (t->n >= XO_SIM_POINTS)
        return bad(p, "more than %d points in one table", XO_SIM_POINTS);
    if (t->n > 0 && size <= t->size[t->n - 1])
        return bad(p, "size %g does not follow %g: a table's sizes increase", size, t->size[t->n - 1]);
    t->size[t->n] = size;
    t->us[t->n] = us;
    t->n++;
    return XO_OK;
}

/* The exponent a kernel's time grows with past the table's last size: its work is
 * size^3 for the cubic ops (size is cbrt(m n k)), size for the others. */
static double kind_power(xo_op_kind kind)
{
    return kind == XO_OP_GEMM || kind == XO_OP_GEMM_BIAS_ACT ? 3.0 : 1.0;
}

double xo__sim_kernel_us(const xo__sim_device *d, const xo_op_desc *op)
{
    xo__op_cost c;
    xo__op_cost_init(&c, op->kind, op->dtype, op->m, op->n, op->k);
    int k = 1 + (int)op->kind, t = 1 + (int)op->dtype;
    const xo__sim_table *tab = d->kernel[k][t].n ? &d->kernel[k][t] : d->kernel[k][XO_SIM_ANY].n ? &d->kernel[k][XO_SIM_ANY]
                             : d->kernel[XO_SIM_ANY][t].n ? &d->kernel[XO_SIM_ANY][t]
                                                           : &d->kernel[XO_SIM_ANY][XO_SIM_ANY];
    return xo__sim_table_us(tab, c.size, kind_power(op->kind));
}

/* ---- lines ------------------------------------------------------------------------ */

static xo_status device_line(parser *p, char **w, int n)
{
    static const char *const plugins[] = {"cpu", "opencl", "cuda", NULL};
    if (n != 3)
        return bad(p, "expected \"device PLUGIN PROFILE\" (PLUGIN: cpu, opencl or cuda; PROFILE: a profile "
                      "file, relative to this one)");
    if (xo__word_index(plugins, w[1], strlen(w[1])) < 0)
        return bad(p, "device plugin \"%s\": allowed cpu, opencl, cuda", w[1]);
    xo__machine *m = p->m;
    if ((m->ndev == 0) != (strcmp(w[1], "cpu") == 0))
        return bad(p, "the first device, and only it, is the host CPU (device cpu)");
    if (m->ndev >= XO_MAX_DEVICES)
        return bad(p, "more than %d devices", XO_MAX_DEVICES);
    xo__sim_device *d = p->cur = &m->dev[m->ndev++];
    memset(d, 0, sizeof *d);
    d->line = p->line;
    snprintf(d->plugin, sizeof d->plugin, "%s", w[1]);
    char prof[XO_PATH_MAX + 64];
    const char *slash = strrchr(p->path, '/');
    if (w[2][0] == '/' || !slash)
        snprintf(prof, sizeof prof, "%s", w[2]);
    else
        snprintf(prof, sizeof prof, "%.*s/%s", (int)(slash - p->path), p->path, w[2]);
    if (xo__profile_read(prof, &d->profile) != XO_OK) {
        char why[XO_ERROR_MAX];
        snprintf(why, sizeof why, "%s", xo_last_error());
        return bad(p, "profile \"%s\": %.400s", w[2], why);
    }
    if (strcmp(d->profile.info.plugin, w[1]) != 0)
        return bad(p, "profile \"%s\" is a %s device's, not a %s device's", w[2], d->profile.info.plugin, w[1]);
    d->info = d->profile.info;
    return XO_OK;
}

static xo_status figures(parser *p, char **w, int n, int want, double *out)
{
    if (n != want + 1)
        return bad(p, "%s takes %d number%s", w[0], want, want > 1 ? "s" : "");
    for (int i = 0; i < want; i++)
        if (!number(w[1 + i], &out[i]))
            return bad(p, "%s: \"%s\" is not a finite non-negative number", w[0], w[1 + i]);
    return XO_OK;
}

static xo_status kernel_line(parser *p, char **w, int n)
{
    if (n != 5 && n != 6)
        return bad(p, "expected \"kernel KIND DTYPE SIZE US [THREADS]\"");
    int kind = strcmp(w[1], "*") == 0 ? -1 : xo__op_find(w[1]);
    if (kind < 0 && strcmp(w[1], "*") != 0)
        return bad(p, "kernel kind \"%s\" is no op kind (gemm, axpy, unary, ... or *)", w[1]);
    int dt = strcmp(w[2], "*") == 0 ? -1 : strcmp(w[2], "f32") == 0 ? XO_F32 : strcmp(w[2], "f64") == 0 ? XO_F64 : -2;
    if (dt == -2)
        return bad(p, "kernel dtype \"%s\": allowed f32, f64, *", w[2]);
    if (n == 6) { /* a thread count: only the rows of the device's own count are simulated */
        double th;
        if (!number(w[5], &th) || th < 1 || th != floor(th))
            return bad(p, "thread count \"%s\" is not a whole number >= 1", w[5]);
        if (strcmp(p->cur->plugin, "cpu") != 0)
            return bad(p, "only the CPU's kernel rows have a thread count");
        if ((int)th != p->cur->threads)
            return XO_OK;
    }
    return table_add(p, &p->cur->kernel[kind + 1][dt + 1], w[3], w[4]);
}

static xo_status transfer_line(parser *p, char **w, int n)
{
    if (n != 5)
        return bad(p, "expected \"transfer h2d|d2h pageable|pinned BYTES US\"");
    int dir = strcmp(w[1], "h2d") == 0 ? XO_SIM_H2D : strcmp(w[1], "d2h") == 0 ? XO_SIM_D2H : -1;
    int mem = strcmp(w[2], "pageable") == 0 ? XO_SIM_PAGEABLE : strcmp(w[2], "pinned") == 0 ? XO_SIM_PINNED : -1;
    if (dir < 0 || mem < 0)
        return bad(p, "transfer \"%s %s\": allowed h2d or d2h, then pageable or pinned", w[1], w[2]);
    if (strcmp(p->cur->plugin, "cpu") == 0)
        return bad(p, "the host CPU has no transfers");
    return table_add(p, &p->cur->transfer[dir][mem], w[3], w[4]);
}

static xo_status line(parser *p, char **w, int n)
{
    if (strcmp(w[0], "machine") == 0) {
        size_t used = 0;
        for (int i = 1; i < n && used < sizeof p->m->title; i++)
            used += (size_t)snprintf(p->m->title + used, sizeof p->m->title - used, "%s%s", i > 1 ? " " : "", w[i]);
        return XO_OK;
    }
    if (strcmp(w[0], "device") == 0)
        return device_line(p, w, n);
    if (!p->cur)
        return bad(p, "\"%s\" before the first device line", w[0]);
    double f[2];
    xo__sim_device *d = p->cur;
    if (strcmp(w[0], "threads") == 0) {
        XO_RETURN_IF_ERROR(figures(p, w, n, 1, f));
        if (f[0] < 1 || f[0] != floor(f[0]) || f[0] > 4096)
            return bad(p, "threads %s: a whole number from 1 to 4096", w[1]);
        d->threads = (int)f[0];
        return XO_OK;
    }
    if (strcmp(w[0], "issue_us") == 0) {
        XO_RETURN_IF_ERROR(figures(p, w, n, 1, f));
        d->issue_us = f[0];
        return XO_OK;
    }
    if (strcmp(w[0], "wait_us") == 0)
        return figures(p, w, n, 2, d->wait_us);
    if (strcmp(w[0], "graph_us") == 0)
        return figures(p, w, n, 2, d->graph_us);
    if (strcmp(w[0], "transfer") == 0)
        return transfer_line(p, w, n);
    if (strcmp(w[0], "kernel") == 0)
        return kernel_line(p, w, n);
    return bad(p, "unknown line \"%s\" (machine, device, threads, issue_us, wait_us, graph_us, transfer, kernel)",
               w[0]);
}

/* What a device's simulation needs, checked at the end of the file (against its line). */
static xo_status complete(parser *p, const xo__sim_device *d)
{
    p->line = d->line;
    if (!d->kernel[XO_SIM_ANY][XO_SIM_ANY].n)
        return bad(p, "device %s has no \"kernel * * SIZE US\" rows (the time of every kind without its own)",
                   d->plugin);
    if (strcmp(d->plugin, "cpu") == 0)
        return d->threads ? XO_OK : bad(p, "device cpu has no \"threads\" line");
    if (!d->transfer[XO_SIM_H2D][XO_SIM_PAGEABLE].n || !d->transfer[XO_SIM_D2H][XO_SIM_PAGEABLE].n)
        return bad(p, "device %s has no \"transfer h2d pageable\" or \"transfer d2h pageable\" rows", d->plugin);
    return XO_OK;
}

xo_status xo__machine_read(const char *path, xo__machine *out)
{
    parser p = {path, 0, out, NULL};
    memset(out, 0, sizeof *out);
    if (strlen(path) >= sizeof out->path)
        return bad(&p, "the path is longer than %d characters", XO_PATH_MAX - 1);
    snprintf(out->path, sizeof out->path, "%s", path);
    struct stat sb;
    if (stat(path, &sb) != 0)
        return bad(&p, "cannot open it: %s", strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return bad(&p, "it is %s, not a regular file", xo__file_kind(sb.st_mode));
    if (sb.st_size > MACHINE_MAX_BYTES)
        return bad(&p, "%lld bytes; a machine file has at most %ld", (long long)sb.st_size, MACHINE_MAX_BYTES);
    FILE *f = fopen(path, "rb");
    if (!f)
        return bad(&p, "cannot open it: %s", strerror(errno));
    char buf[1024];
    xo_status st = XO_OK;
    while (st == XO_OK && fgets(buf, sizeof buf, f)) {
        p.line++;
        size_t len = strlen(buf);
        if (len && buf[len - 1] != '\n' && !feof(f)) {
            st = bad(&p, "longer than %zu characters", sizeof buf - 2);
            break;
        }
        if (p.line == 1) {
            buf[strcspn(buf, "\r\n")] = '\0';
            if (strcmp(buf, MACHINE_HEADER) != 0)
                st = bad(&p, "the first line is not \"%s\"", MACHINE_HEADER);
            continue;
        }
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = '\0';
        char *w[MAX_WORDS + 1];
        int n = 0;
        for (char *tok = strtok(buf, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n"))
            if (n <= MAX_WORDS)
                w[n++] = tok;
        if (n > MAX_WORDS && strcmp(w[0], "machine") != 0)
            st = bad(&p, "more than %d words", MAX_WORDS);
        else if (n > 0)
            st = line(&p, w, n > MAX_WORDS ? MAX_WORDS : n);
    }
    if (st == XO_OK && ferror(f))
        st = bad(&p, "read error");
    fclose(f);
    if (st == XO_OK && p.line == 0)
        st = bad(&p, "empty file");
    if (st == XO_OK && out->ndev == 0)
        st = bad(&p, "no device line");
    for (int d = 0; st == XO_OK && d < out->ndev; d++) {
        xo__sim_device *md = &out->dev[d];
        st = complete(&p, md);
        /* Calibration under simulation measures nothing: a profile written before
         * calibration measured the issue cost takes the recording's, as calibration there
         * would have (calibrate.c, xo__measure_issue: not the CPU, not on the host's cores). */
        if (st == XO_OK && d > 0 && md->profile.issue_us <= 0 && md->issue_us > 0 &&
            md->issue_us < md->profile.info.launch_us && !xo__device_on_host_cores(&md->profile.info))
            md->profile.issue_us = md->issue_us;
    }
    return st;
}
