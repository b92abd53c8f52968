/* Device profiles: the built-in defaults per device kind, and the profile files
 * (`# crossover device profile v1`, `key = value` lines) kept in XO_CACHE_DIR.
 * See docs/placement.md for every key. */
#include "xo_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define PROFILE_HEADER "# crossover device profile v1"
#define PROFILE_MAX_BYTES ((off_t)1 << 20) /* a written profile is about 1.5 KB */


static const char *const kind_names[] = {[XO_DEVICE_CPU] = "cpu", [XO_DEVICE_GPU] = "gpu",
                                         [XO_DEVICE_ACCELERATOR] = "accelerator"};

/* ---- built-in defaults (XO_CALIBRATE=off, and what a what-if file leaves out) ---- */

/* Shapes of the sgemm curve, as fractions of the peak at n = 16, 32, ..., 2048. */
static const double shape_cpu[XO_CURVE_POINTS] = {0.05, 0.15, 0.35, 0.6, 0.8, 0.9, 1.0, 1.0};
static const double shape_ocl_cpu[XO_CURVE_POINTS] = {0.02, 0.08, 0.2, 0.45, 0.7, 0.85, 1.0, 1.0};
static const double shape_gpu[XO_CURVE_POINTS] = {0.002, 0.008, 0.03, 0.1, 0.3, 0.6, 0.85, 1.0};

typedef struct default_row {
    xo_device_kind kind;
    const char *plugin; /* NULL: any plugin */
    double launch_us, transfer_latency_us, h2d_gbps, d2h_gbps, mem_gbps, peak_gflops;
    double fp64_ratio;  /* dgemm peak / sgemm peak */
    const double *shape;
} default_row;

/* First matching row wins: specific plugin rows before the per-kind catch-alls. */
static const default_row default_table[] = {
    /* the host CPU through OpenBLAS: no transfers (it is the host) */
    {XO_DEVICE_CPU, "cpu", 0.05, 0.0, 0.0, 0.0, 10.0, 50.0, 0.5, shape_cpu},
    /* an OpenCL CPU device (PoCL, Intel CPU runtime): a queue and copies in host memory */
    {XO_DEVICE_CPU, "opencl", 30.0, 10.0, 5.0, 5.0, 5.0, 20.0, 0.5, shape_ocl_cpu},
    {XO_DEVICE_CPU, NULL, 30.0, 10.0, 5.0, 5.0, 5.0, 20.0, 0.5, shape_ocl_cpu},
    /* discrete GPUs behind PCIe */
    {XO_DEVICE_GPU, "cuda", 12.0, 10.0, 10.0, 10.0, 500.0, 4000.0, 1.0 / 32.0, shape_gpu},
    {XO_DEVICE_GPU, "opencl", 20.0, 15.0, 8.0, 8.0, 300.0, 2000.0, 1.0 / 16.0, shape_gpu},
    {XO_DEVICE_GPU, NULL, 12.0, 10.0, 10.0, 10.0, 500.0, 4000.0, 1.0 / 32.0, shape_gpu},
    {XO_DEVICE_ACCELERATOR, NULL, 50.0, 20.0, 5.0, 5.0, 100.0, 500.0, 1.0 / 16.0, shape_gpu},
};

static const default_row *default_lookup(xo_device_kind kind, const char *plugin)
{
    size_t n = sizeof default_table / sizeof default_table[0];
    for (size_t i = 0; i < n; i++) {
        const default_row *r = &default_table[i];
        if (r->kind == kind && (!r->plugin || (plugin && strcmp(r->plugin, plugin) == 0)))
            return r;
    }
    return &default_table[n - 1];
}

void xo__profile_defaults(xo_device_kind kind, const char *plugin, xo__profile *out)
{
    const default_row *r = default_lookup(kind, plugin);
    memset(out, 0, sizeof *out);
    if (plugin)
        snprintf(out->info.plugin, sizeof out->info.plugin, "%s", plugin);
    out->info.kind = kind;
    out->info.fp64 = 1;
    out->info.host_unified = kind == XO_DEVICE_CPU;
    out->info.launch_us = r->launch_us;
    out->info.transfer_latency_us = r->transfer_latency_us;
    out->info.h2d_gbps = r->h2d_gbps;
    out->info.d2h_gbps = r->d2h_gbps;
    out->info.mem_gbps = r->mem_gbps;
    out->info.peak_gflops = r->peak_gflops;
    for (int i = 0; i < XO_CURVE_POINTS; i++) {
        out->gemm_gflops[XO_F32][i] = r->peak_gflops * r->shape[i];
        out->gemm_gflops[XO_F64][i] = r->peak_gflops * r->shape[i] * r->fp64_ratio;
    }
    out->stream_gbps[XO_F32] = r->mem_gbps;
    out->stream_gbps[XO_F64] = r->mem_gbps;
}

/* ---- file names and staleness ---------------------------------------------------- */

static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    h ^= 0xff; /* field separator */
    h *= 1099511628211ull;
    return h;
}

void xo__profile_filename(const xo_device_info *info, char *out, size_t cap)
{
    char clean[48];
    size_t j = 0;
    int sep = 0;
    for (const char *s = info->name; *s && j < sizeof clean - 1; s++) {
        unsigned char ch = (unsigned char)*s;
        if (isalnum(ch)) {
            if (sep && j > 0 && j < sizeof clean - 2)
                clean[j++] = '_';
            clean[j++] = (char)tolower(ch);
            sep = 0;
        } else {
            sep = 1;
        }
    }
    clean[j] = '\0';
    if (j == 0)
        snprintf(clean, sizeof clean, "device");
    uint64_t h = 14695981039346656037ull;
    h = fnv1a(h, info->plugin);
    h = fnv1a(h, info->name);
    h = fnv1a(h, info->driver);
    h = fnv1a(h, XO_VERSION_STRING);
    snprintf(out, cap, "%s-%s-%016llx.profile", info->plugin[0] ? info->plugin : "device", clean,
             (unsigned long long)h);
}

/* 1 if `file_value` (as read back from a profile) is `device_value` as written: the
 * writer blanks newlines and '#', and the reader trims both ends. */
static int same_text(const char *file_value, const char *device_value)
{
    while (isspace((unsigned char)*device_value))
        device_value++;
    size_t n = strlen(device_value);
    while (n > 0 && isspace((unsigned char)device_value[n - 1]))
        n--;
    if (strlen(file_value) != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = device_value[i];
        if (c == '\n' || c == '\r' || c == '#')
            c = ' ';
        if (file_value[i] != c)
            return 0;
    }
    return 1;
}

int xo__profile_matches(const xo__profile *p, const xo_device_info *info)
{
    return same_text(p->info.plugin, info->plugin) && same_text(p->info.name, info->name) &&
           same_text(p->info.driver, info->driver) && strcmp(p->library_version, XO_VERSION_STRING) == 0 &&
           p->info.kind == info->kind;
}

/* ---- reading ----------------------------------------------------------------------- */

/* Keys a profile must have (every double of xo_device_info, and kind). */
enum {
    REQ_KIND = 1 << 0, REQ_LAUNCH = 1 << 1, REQ_LATENCY = 1 << 2, REQ_H2D = 1 << 3,
    REQ_D2H = 1 << 4, REQ_MEM = 1 << 5, REQ_PEAK = 1 << 6,
    REQ_ALL = (1 << 7) - 1
};

/* Every key of a profile file with a fixed name, one row each: its type, where it goes
 * in an xo__profile, and the "required" bit it sets. (The curves, the streaming
 * bandwidths and the per-op launch floors are named by pattern: apply_key.) */
typedef enum field_type {
    F_TEXT,   /* identity text, at most size - 1 characters */
    F_KIND,   /* cpu | gpu | accelerator */
    F_FLAG,   /* 0 or 1 (an int) */
    F_FIGURE, /* a double of xo_device_info, written among the figures */
    F_NUMBER, /* another finite non-negative double */
    F_COUNT,  /* an int from 0 to 1000 */
} field_type;
#define FIELD(key, type, member, req) {key, type, offsetof(xo__profile, member), sizeof(((xo__profile *)0)->member), req}
static const struct field {
    const char *key;
    field_type type;
    size_t off, size;
    int req;
} fields[] = {
    FIELD("plugin", F_TEXT, info.plugin, 0),
    FIELD("name", F_TEXT, info.name, 0),
    FIELD("vendor", F_TEXT, info.vendor, 0),
    FIELD("driver", F_TEXT, info.driver, 0),
    FIELD("library_version", F_TEXT, library_version, 0),
    FIELD("kind", F_KIND, info.kind, REQ_KIND),
    FIELD("host_unified", F_FLAG, info.host_unified, 0),
    FIELD("fp64", F_FLAG, info.fp64, 0),
    FIELD("provisional", F_FLAG, provisional, 0),
    FIELD("launch_us", F_FIGURE, info.launch_us, REQ_LAUNCH),
    FIELD("transfer_latency_us", F_FIGURE, info.transfer_latency_us, REQ_LATENCY),
    FIELD("h2d_gbps", F_FIGURE, info.h2d_gbps, REQ_H2D),
    FIELD("d2h_gbps", F_FIGURE, info.d2h_gbps, REQ_D2H),
    FIELD("mem_gbps", F_FIGURE, info.mem_gbps, REQ_MEM),
    FIELD("peak_gflops", F_FIGURE, info.peak_gflops, REQ_PEAK),
    FIELD("spread", F_NUMBER, spread, 0),
    FIELD("thread_wake_us", F_NUMBER, thread_wake_us, 0),
    FIELD("threaded_from", F_NUMBER, threaded_from, 0),
    FIELD("issue_us", F_NUMBER, issue_us, 0),
    FIELD("untrusted_runs", F_COUNT, untrusted_runs, 0),
};
#undef FIELD
#define NFIELDS (sizeof fields / sizeof fields[0])

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* A finite, non-negative number occupying the whole value. */
static int parse_number(const char *v, double *out)
{
    if (!*v)
        return 0;
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || *end != '\0' || errno == ERANGE || !isfinite(d) || d < 0.0)
        return 0;
    *out = d;
    return 1;
}

static int parse_flag(const char *v, int *out)
{
    if (strcmp(v, "0") == 0 || strcmp(v, "1") == 0) {
        *out = v[0] == '1';
        return 1;
    }
    return 0;
}

/* sgemm_gflops_<n> / dgemm_gflops_<n>: curve index for n = 16 << i, or -1. */
static int curve_index(const char *key, xo_dtype *dtype)
{
    if (strncmp(key, "sgemm_gflops_", 13) == 0)
        *dtype = XO_F32;
    else if (strncmp(key, "dgemm_gflops_", 13) == 0)
        *dtype = XO_F64;
    else
        return -1;
    for (int i = 0; i < XO_CURVE_POINTS; i++) {
        char want[16];
        snprintf(want, sizeof want, "%d", XO_CURVE_MIN_N << i);
        if (strcmp(key + 13, want) == 0)
            return i;
    }
    return -1;
}

/* Apply one `key = value` line to `p`. Returns 0 on a bad value (detail in `why`). */
/* One fixed-name key: 1 if applied, 0 with the reason in `why`. */
static int apply_field(xo__profile *p, const struct field *f, const char *val, int *have, char *why, size_t whycap)
{
    void *dst = (char *)p + f->off;
    double d;
    int flag;
    switch (f->type) {
    case F_TEXT:
        if (strlen(val) >= f->size) {
            snprintf(why, whycap, "value of %s is longer than %zu characters", f->key, f->size - 1);
            return 0;
        }
        memcpy(dst, val, strlen(val) + 1);
        break;
    case F_KIND:
        for (int k = 0; k < 3; k++)
            if (strcmp(val, kind_names[k]) == 0) {
                *(xo_device_kind *)dst = (xo_device_kind)k;
                *have |= f->req;
                return 1;
            }
        snprintf(why, whycap, "kind = \"%s\": allowed cpu, gpu, accelerator", val);
        return 0;
    case F_FLAG:
        if (!parse_flag(val, &flag)) {
            snprintf(why, whycap, "%s = \"%s\": allowed 0 or 1", f->key, val);
            return 0;
        }
        *(int *)dst = flag;
        break;
    case F_FIGURE:
    case F_NUMBER:
        if (!parse_number(val, &d)) {
            snprintf(why, whycap, "%s = \"%s\" is not a finite non-negative number", f->key, val);
            return 0;
        }
        *(double *)dst = d;
        break;
    case F_COUNT:
        if (!parse_number(val, &d) || d != floor(d) || d > 1000) {
            snprintf(why, whycap, "%s = \"%s\": a count from 0 to 1000", f->key, val);
            return 0;
        }
        *(int *)dst = (int)d;
        break;
    }
    *have |= f->req;
    return 1;
}

static int apply_key(xo__profile *p, const char *key, const char *val, int *have, unsigned curve_seen[2],
                     int *stream_seen, char *why, size_t whycap)
{
    for (size_t i = 0; i < NFIELDS; i++)
        if (strcmp(key, fields[i].key) == 0)
            return apply_field(p, &fields[i], val, have, why, whycap);
    double d;
    xo_dtype dt = XO_F32;
    int ci = curve_index(key, &dt);
    int is_stream = strcmp(key, "sstream_gbps") == 0 || strcmp(key, "dstream_gbps") == 0;
    int op_launch = -1;
    if (strncmp(key, "launch_us_", 10) == 0)
        for (int k = 0; k < XO_OP_KIND_COUNT; k++)
            if (strcmp(key + 10, xo__ops[k].name) == 0)
                op_launch = k;
    if (ci < 0 && !is_stream && op_launch < 0)
        return 1; /* unknown key: ignored */
    if (!parse_number(val, &d)) {
        snprintf(why, whycap, "%s = \"%s\" is not a finite non-negative number", key, val);
        return 0;
    }
    if (ci >= 0) {
        p->gemm_gflops[dt][ci] = d;
        curve_seen[dt] |= 1u << ci;
    } else if (is_stream) {
        int s = key[0] == 'd';
        p->stream_gbps[s] = d;
        *stream_seen |= 1 << s;
    } else {
        p->op_launch_us[op_launch] = d;
    }
    return 1;
}

/* Fill what a hand-written file may leave out: the curves (from peak_gflops and the
 * default shape of its kind) and the streaming bandwidths (mem_gbps). */
static void complete_profile(xo__profile *p, const unsigned curve_seen[2], int stream_seen)
{
    const default_row *r = default_lookup(p->info.kind, p->info.plugin);
    if (curve_seen[XO_F32] == 0)
        for (int i = 0; i < XO_CURVE_POINTS; i++)
            p->gemm_gflops[XO_F32][i] = p->info.peak_gflops * r->shape[i];
    if (curve_seen[XO_F64] == 0 && p->info.fp64)
        for (int i = 0; i < XO_CURVE_POINTS; i++)
            p->gemm_gflops[XO_F64][i] = p->gemm_gflops[XO_F32][i] * r->fp64_ratio;
    if (!(stream_seen & 1))
        p->stream_gbps[XO_F32] = p->info.mem_gbps;
    if (!(stream_seen & 2))
        p->stream_gbps[XO_F64] = p->stream_gbps[XO_F32];
}

const char *xo__file_kind(unsigned mode)
{
    return S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a FIFO" : S_ISCHR(mode) ? "a character device"
         : S_ISBLK(mode) ? "a block device" : S_ISSOCK(mode) ? "a socket" : S_ISLNK(mode) ? "a symbolic link"
                         : "a special file";
}

/* Open a profile without blocking (a FIFO or a device in its place must not hang the
 * caller) and accept only a regular file of a sane size. */
static xo_status open_profile(const char *path, FILE **out)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0) {
        int e = errno;
        if (e != ENOENT && stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) /* e.g. a socket: ENXIO */
            return xo__error(XO_ERR_IO, "xo__profile_read: \"%s\" is %s, not a regular file", path,
                             xo__file_kind(sb.st_mode));
        return xo__error(XO_ERR_IO, "xo__profile_read: cannot open \"%s\": %s", path, strerror(e));
    }
    xo_status st = XO_OK;
    if (fstat(fd, &sb) != 0)
        st = xo__error(XO_ERR_IO, "xo__profile_read: cannot stat \"%s\": %s", path, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        st = xo__error(XO_ERR_IO, "xo__profile_read: \"%s\" is %s, not a regular file", path,
                       xo__file_kind(sb.st_mode));
    else if (sb.st_size > PROFILE_MAX_BYTES)
        st = xo__error(XO_ERR_IO, "xo__profile_read: \"%s\" is damaged: %lld bytes, a profile has at most %lld",
                       path, (long long)sb.st_size, (long long)PROFILE_MAX_BYTES);
    else if (!(*out = fdopen(fd, "rb")))
        st = xo__error(XO_ERR_IO, "xo__profile_read: cannot read \"%s\": %s", path, strerror(errno));
    if (st != XO_OK)
        close(fd);
    return st;
}

xo_status xo__profile_read(const char *path, xo__profile *out)
{
    if (!path || !out)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo__profile_read: %s is NULL", path ? "out" : "path");
    FILE *f;
    XO_RETURN_IF_ERROR(open_profile(path, &f));
    xo__profile p;
    memset(&p, 0, sizeof p);
    char line[512], why[256] = "";
    int lineno = 0, have = 0, stream_seen = 0, ok = 1, last_newline = 1;
    unsigned curve_seen[2] = {0, 0};
    while (ok && fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        last_newline = len > 0 && line[len - 1] == '\n';
        if (!last_newline && !feof(f)) {
            snprintf(why, sizeof why, "line %d is too long", lineno);
            ok = 0;
            break;
        }
        if (lineno == 1) {
            if (strcmp(trim(line), PROFILE_HEADER) != 0) {
                snprintf(why, sizeof why, "first line is not \"%s\"", PROFILE_HEADER);
                ok = 0;
            }
            continue;
        }
        /* '#' at the start of a line or after a blank starts a comment */
        for (char *c = line; *c; c++)
            if (*c == '#' && (c == line || isspace((unsigned char)c[-1]))) {
                *c = '\0';
                break;
            }
        char *s = trim(line);
        if (!*s)
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            snprintf(why, sizeof why, "line %d is not \"key = value\"", lineno);
            ok = 0;
            break;
        }
        *eq = '\0';
        char *key = trim(s), *val = trim(eq + 1);
        if (!*key) {
            snprintf(why, sizeof why, "line %d has no key", lineno);
            ok = 0;
            break;
        }
        if (!apply_key(&p, key, val, &have, curve_seen, &stream_seen, why, sizeof why)) {
            char tmp[sizeof why];
            snprintf(tmp, sizeof tmp, "line %d: %.200s", lineno, why);
            memcpy(why, tmp, sizeof why);
            ok = 0;
        }
    }
    int rerr = ferror(f);
    fclose(f);
    if (ok && rerr) {
        snprintf(why, sizeof why, "read error");
        ok = 0;
    }
    if (ok && lineno == 0) {
        snprintf(why, sizeof why, "empty file");
        ok = 0;
    }
    if (ok && !last_newline) {
        snprintf(why, sizeof why, "truncated (no newline at the end)");
        ok = 0;
    }
    if (ok && (have & REQ_ALL) != REQ_ALL) {
        static const char *const req_names[] = {"kind", "launch_us", "transfer_latency_us", "h2d_gbps",
                                                "d2h_gbps", "mem_gbps", "peak_gflops"};
        for (int i = 0; i < 7; i++)
            if (!(have & (1 << i))) {
                snprintf(why, sizeof why, "missing key %s", req_names[i]);
                break;
            }
        ok = 0;
    }
    for (int d = 0; ok && d < 2; d++)
        if (curve_seen[d] != 0 && curve_seen[d] != (1u << XO_CURVE_POINTS) - 1) {
            snprintf(why, sizeof why, "the %cgemm_gflops_* curve is incomplete", d ? 'd' : 's');
            ok = 0;
        }
    if (!ok)
        return xo__error(XO_ERR_IO, "xo__profile_read: \"%s\" is damaged: %s", path, why);
    complete_profile(&p, curve_seen, stream_seen);
    *out = p;
    return XO_OK;
}

/* ---- writing ------------------------------------------------------------------------ */

/* mkdir -p of the directory part of `path`. */
static int make_parent_dirs(const char *path)
{
    char dir[XO_PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
        return -1;
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    for (char *c = dir + 1; *c; c++) {
        if (*c != '/')
            continue;
        *c = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return -1;
        *c = '/';
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

/* A string value on one line: newlines and comment starts become blanks. */
static void put_string(FILE *f, const char *key, const char *v)
{
    fprintf(f, "%s = ", key);
    for (; *v; v++)
        fputc((*v == '\n' || *v == '\r' || *v == '#') ? ' ' : *v, f);
    fputc('\n', f);
}

xo_status xo__profile_write(const char *path, const xo__profile *p)
{
    if (!path || !p)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo__profile_write: %s is NULL", path ? "p" : "path");
    if (make_parent_dirs(path) != 0)
        return xo__error(XO_ERR_IO, "xo__profile_write: cannot create the directory of \"%s\": %s", path,
                         strerror(errno));
    static _Atomic unsigned serial;
    char tmp[XO_PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&serial, 1u)) >=
        (int)sizeof tmp)
        return xo__error(XO_ERR_IO, "xo__profile_write: path \"%s\" is too long", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return xo__error(XO_ERR_IO, "xo__profile_write: cannot create \"%s\": %s", tmp, strerror(errno));
    const xo_device_info *in = &p->info;
    fprintf(f, "%s\n", PROFILE_HEADER);
    fprintf(f, "# Written by crossover; edit a copy for what-if questions (xo explain --profile).\n");
    fprintf(f, "# Figures: us = microseconds, gbps = GB/s (1e9 bytes), gflops = 1e9 flop/s.\n");
    put_string(f, "plugin", in->plugin);
    put_string(f, "name", in->name);
    put_string(f, "vendor", in->vendor);
    put_string(f, "driver", in->driver);
    fprintf(f, "kind = %s\n", kind_names[in->kind <= XO_DEVICE_ACCELERATOR ? in->kind : 0]);
    fprintf(f, "host_unified = %d\n", in->host_unified ? 1 : 0);
    fprintf(f, "fp64 = %d\n", in->fp64 ? 1 : 0);
    for (size_t i = 0; i < NFIELDS; i++)
        if (fields[i].type == F_FIGURE)
            fprintf(f, "%s = %.6g\n", fields[i].key, *(const double *)((const char *)p + fields[i].off));
    fprintf(f, "# gemm throughput (GFLOP/s) of square n x n x n products\n");
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < XO_CURVE_POINTS; i++)
            fprintf(f, "%cgemm_gflops_%d = %.6g\n", d ? 'd' : 's', XO_CURVE_MIN_N << i, p->gemm_gflops[d][i]);
    fprintf(f, "sstream_gbps = %.6g\n", p->stream_gbps[XO_F32]);
    fprintf(f, "dstream_gbps = %.6g\n", p->stream_gbps[XO_F64]);
    for (int k = 0; k < XO_OP_KIND_COUNT; k++)
        if (p->op_launch_us[k] > 0.0)
            fprintf(f, "launch_us_%s = %.6g\n", xo__ops[k].name, p->op_launch_us[k]);
    if (p->thread_wake_us > 0.0)
        fprintf(f, "# a vector op of threaded_from elements or more pays thread_wake_us to wake the threads\n"
                   "thread_wake_us = %.6g\nthreaded_from = %.6g\n",
                p->thread_wake_us, p->threaded_from);
    if (p->issue_us > 0.0)
        fprintf(f, "issue_us = %.6g\n", p->issue_us);
    fprintf(f, "# worst (q3 - q1) / median of the repeated runs; provisional = 1: measured again later\n");
    fprintf(f, "spread = %.3g\n", p->spread);
    fprintf(f, "provisional = %d\n", p->provisional ? 1 : 0);
    fprintf(f, "untrusted_runs = %d\n", p->untrusted_runs);
    /* last: a file cut short at a line boundary then no longer matches any device */
    put_string(f, "library_version", p->library_version);
    int bad = ferror(f);
    if (fflush(f) != 0)
        bad = 1;
    if (!bad && fsync(fileno(f)) != 0 && errno != EINVAL)
        bad = 1;
    if (fclose(f) != 0)
        bad = 1;
    if (bad) {
        int e = errno;
        unlink(tmp);
        return xo__error(XO_ERR_IO, "xo__profile_write: writing \"%s\" failed: %s", tmp, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return xo__error(XO_ERR_IO, "xo__profile_write: rename to \"%s\" failed: %s", path, strerror(e));
    }
    return XO_OK;
}

/* ---- what counts as a measurement ---------------------------------------------- */

#define TRUST_SPREAD 0.5 /* runs dispersed more than this were disturbed (a busy machine) */
#define TRUST_FALL 10.0  /* no real gemm curve falls this much between neighbouring sizes */

int xo__profile_trustworthy(const xo__profile *p, char *why, size_t cap)
{
    if (cap)
        why[0] = '\0';
    if (p->provisional) {
        snprintf(why, cap, "marked provisional");
        return 0;
    }
    if (p->spread > TRUST_SPREAD) {
        snprintf(why, cap, "its runs disagreed (spread %.2f > %.1f: a busy machine?)", p->spread, TRUST_SPREAD);
        return 0;
    }
    for (int t = 0; t < 2; t++)
        for (int i = 0; i + 1 < XO_CURVE_POINTS; i++) {
            double a = p->gemm_gflops[t][i], b = p->gemm_gflops[t][i + 1];
            if (a > 0 && b > 0 && a > TRUST_FALL * b) {
                snprintf(why, cap, "its %cgemm curve falls %.0fx from n = %d to %d (not a measurement)", t ? 'd' : 's',
                         a / b, XO_CURVE_MIN_N << i, XO_CURVE_MIN_N << (i + 1));
                return 0;
            }
        }
    return 1;
}
