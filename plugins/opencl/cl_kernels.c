/* cl_kernels.c: our own kernels (kernels_cl/NAME.cl, embedded at build time).
 *
 * Each program is built at most once per device per context, lazily, in float and (on
 * fp64 devices) in double with -DXO_FP64. A build first asks the core's fault hook
 * ("compile"), then tries the on-disk binary cache (cl_cache.c), then the source. A
 * program that fails makes its ops ineligible on that device: logged once at warn, the
 * build log at debug. Builds hold the device's build lock (uploads and other launches go
 * on meanwhile); launches hold the device lock because a cl_kernel's arguments are
 * shared state. xo__cl_program_build is also the way the generated chain kernels
 * (cl_chain.c) are built and cached. */
#include "cl_internal.h"
#include "xo_cl_embedded.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(XO_SUM == 0 && XO_MAX_ELEMENT == 1, "kernels_cl/reduce.cl hard-codes xo_reduce_op");
_Static_assert(XO_SOFTMAX == 0 && XO_LOG_SOFTMAX == 1, "kernels_cl/reduce.cl hard-codes xo_softmax_op");

static const char *const program_sources[XO_CL_PROG_COUNT] = {
#define XO_CL_PROG_ROW_(ID, source) [XO_CL_PROG_##ID] = source,
    XO_CL_PROGRAMS(XO_CL_PROG_ROW_)
#undef XO_CL_PROG_ROW_
};

static const struct {
    const char *name;
    xo__cl_prog_id prog;
} kernels[XO_CL_K_COUNT] = {
#define XO_CL_KERNEL_ROW_(ID, name_, prog_) [XO_CL_K_##ID] = {name_, XO_CL_PROG_##prog_},
    XO_CL_KERNELS(XO_CL_KERNEL_ROW_)
#undef XO_CL_KERNEL_ROW_
};

/* What every program is compiled with, before its own source: the op maps of
 * crossover.h (the kernels make their enums and switches from them) and the formulas
 * of plugins/common/xo_formulas.h (embedded as "xo_formulas"). */
#define XO_CL_UNARY_ROW_(NAME, ...) " X(" #NAME ")"
#define XO_CL_BINARY_ROW_(NAME) " X(" #NAME ")"
static const char maps_prefix[] = "#define XO_UNARY_OP_MAP(X)" XO_UNARY_OP_MAP(XO_CL_UNARY_ROW_) "\n"
                                  "#define XO_BINARY_OP_MAP(X)" XO_BINARY_OP_MAP(XO_CL_BINARY_ROW_) "\n";
#undef XO_CL_UNARY_ROW_
#undef XO_CL_BINARY_ROW_

static const char *const build_options[2] = {"", "-DXO_FP64=1"};
static const char *const dtype_names[2] = {"float", "double"};

static _Atomic uint64_t n_source, n_hits, n_rejected, n_writes, n_failures;

void xo__cl_counters_get(xo__cl_counters *out)
{
    out->builds_from_source = atomic_load(&n_source);
    out->cache_hits = atomic_load(&n_hits);
    out->cache_rejected = atomic_load(&n_rejected);
    out->cache_writes = atomic_load(&n_writes);
    out->build_failures = atomic_load(&n_failures);
}

static const xo__cl_source *find_source(const char *name)
{
    for (int i = 0; xo__cl_sources[i]; i++)
        if (strcmp(xo__cl_sources[i]->name, name) == 0) return xo__cl_sources[i];
    return NULL;
}

const char *xo__cl_formulas_text(size_t *len, uint64_t *hash)
{
    const xo__cl_source *f = find_source("xo_formulas");
    if (!f) return NULL;
    *len = f->size;
    *hash = f->hash;
    return (const char *)f->data;
}

static void log_build_failure(xo__cl_state *st, xo__cl_device *d, cl_program prog, const char *call,
                              const char *what, cl_int err)
{
    const xo_plugin_host *h = st->host;
    h->log(XO_LOG_WARN, "opencl: %s: %s failed (%s: %s); its ops run elsewhere", d->info.name, what, call,
           xo__cl_error_name(err));
    if (!prog) return;
    size_t len = 0;
    if (clGetProgramBuildInfo(prog, d->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &len) != CL_SUCCESS || len == 0)
        return;
    char *log = malloc(len + 1);
    if (!log) return;
    if (clGetProgramBuildInfo(prog, d->id, CL_PROGRAM_BUILD_LOG, len, log, NULL) == CL_SUCCESS) {
        log[len] = '\0';
        h->log(XO_LOG_DEBUG, "opencl: build log of %s on %s:\n%s", what, d->info.name, log);
    }
    free(log);
}

static cl_program build_from_binary(xo__cl_device *d, const unsigned char *bin, size_t size,
                                    const char *opts)
{
    cl_int err = CL_SUCCESS, bin_status = CL_SUCCESS;
    cl_program p = clCreateProgramWithBinary(d->ctx, 1, &d->id, &size, &bin, &bin_status, &err);
    if (err != CL_SUCCESS || bin_status != CL_SUCCESS) {
        if (p) clReleaseProgram(p);
        return NULL;
    }
    if (clBuildProgram(p, 1, &d->id, opts, NULL, NULL) != CL_SUCCESS) {
        clReleaseProgram(p);
        return NULL;
    }
    return p;
}

static void store_binary(xo__cl_state *st, cl_program p, const char *path, const char *key)
{
    size_t size = 0;
    if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS || size == 0)
        return;
    unsigned char *bin = malloc(size);
    if (!bin) return;
    unsigned char *bins[1] = {bin};
    if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) == CL_SUCCESS) {
        xo__cl_cache_store(st->host, path, key, bin, size);
        atomic_fetch_add(&n_writes, 1);
    }
    free(bin);
}

cl_program xo__cl_program_build(xo__cl_state *st, xo__cl_device *d, const char *what, const char *key,
                                int ntext, const char *const *text, const size_t *len, const char *opts)
{
    const xo_plugin_host *h = st->host;
    cl_program p = NULL;
    cl_int err = CL_SUCCESS;

    if (h->fault(h, "compile")) {
        h->log(XO_LOG_WARN, "opencl: %s: %s: injected compile fault; its ops run elsewhere", d->info.name, what);
        atomic_fetch_add(&n_failures, 1);
        return NULL;
    }

    char path[PATH_MAX];
    int cached = xo__cl_cache_path(h, key, path, sizeof path);
    if (cached) {
        unsigned char *bin = NULL;
        size_t size = 0;
        char why[128];
        int r = xo__cl_cache_load(path, key, &bin, &size, why, sizeof why);
        if (r == 1) p = build_from_binary(d, bin, size, opts);
        free(bin);
        if (p) {
            atomic_fetch_add(&n_hits, 1);
            h->log(XO_LOG_DEBUG, "opencl: %s: %s loaded from %s", d->info.name, what, path);
            return p;
        }
        if (r < 0) {
            atomic_fetch_add(&n_rejected, 1);
            h->log(XO_LOG_WARN, "opencl: kernel cache entry %s is damaged (%s); rebuilding", path, why);
        } else if (r == 1) {
            atomic_fetch_add(&n_rejected, 1);
            h->log(XO_LOG_INFO, "opencl: kernel cache entry %s refused by the driver; rebuilding", path);
        }
    }

    p = clCreateProgramWithSource(d->ctx, (cl_uint)ntext, (const char **)text, len, &err);
    if (err != CL_SUCCESS) {
        log_build_failure(st, d, NULL, "clCreateProgramWithSource", what, err);
        atomic_fetch_add(&n_failures, 1);
        return NULL;
    }
    err = clBuildProgram(p, 1, &d->id, opts, NULL, NULL);
    if (err != CL_SUCCESS) {
        log_build_failure(st, d, p, "clBuildProgram", what, err);
        clReleaseProgram(p);
        atomic_fetch_add(&n_failures, 1);
        return NULL;
    }
    atomic_fetch_add(&n_source, 1);
    h->log(XO_LOG_DEBUG, "opencl: %s: %s built from source", d->info.name, what);
    if (cached) store_binary(st, p, path, key);
    return p;
}

void xo__cl_count_build_failure(void) { atomic_fetch_add(&n_failures, 1); }

/* Build program `pid` in `dt` on `d`; d->build_lock held. Returns 1 if built. */
static int build_locked(xo__cl_state *st, xo__cl_device *d, xo__cl_prog_id pid, xo_dtype dt)
{
    const xo_plugin_host *h = st->host;
    const char *src_name = program_sources[pid];
    const char *opts = build_options[dt];
    const xo__cl_source *src = find_source(src_name), *formulas = find_source("xo_formulas");
    cl_int err = CL_SUCCESS;

    if (!src || !formulas) {
        h->log(XO_LOG_WARN, "opencl: kernel source '%s' is not embedded", src_name);
        atomic_fetch_add(&n_failures, 1);
        return 0;
    }
    char key[1024], what[96];
    snprintf(what, sizeof what, "program '%s' (%s)", src_name, dtype_names[dt]);
    snprintf(key, sizeof key,
             "crossover OpenCL program v1\nplatform=%s\ndevice=%s\nvendor=%s\ndriver=%s\n"
             "options=%s\nsource=%s:%016llx:%zu\nprefix=%016llx:%016llx\n",
             d->platform_version, d->info.name, d->info.vendor, d->info.driver, opts, src_name,
             (unsigned long long)src->hash, src->size,
             (unsigned long long)xo__cl_fnv1a(maps_prefix, sizeof maps_prefix - 1, XO_CL_FNV_BASIS),
             (unsigned long long)formulas->hash);
    const char *text[3] = {maps_prefix, (const char *)formulas->data, (const char *)src->data};
    size_t len[3] = {sizeof maps_prefix - 1, formulas->size, src->size};
    cl_program p = xo__cl_program_build(st, d, what, key, 3, text, len, opts);
    if (!p) return 0;

    for (int k = 0; k < XO_CL_K_COUNT; k++) {
        if (kernels[k].prog != pid) continue;
        d->kernel[k][dt] = clCreateKernel(p, kernels[k].name, &err);
        if (err != CL_SUCCESS) {
            log_build_failure(st, d, NULL, kernels[k].name, what, err);
            for (int j = 0; j < k; j++) {
                if (kernels[j].prog != pid) continue;
                clReleaseKernel(d->kernel[j][dt]);
                d->kernel[j][dt] = NULL;
            }
            d->kernel[k][dt] = NULL;
            clReleaseProgram(p);
            atomic_fetch_add(&n_failures, 1);
            return 0;
        }
    }
    d->prog[pid][dt] = p;
    return 1;
}

int xo__cl_program_ready(xo__cl_state *st, xo__cl_device *d, xo__cl_prog_id prog, xo_dtype dtype)
{
    int pid = (int)prog;
    if (pid < 0 || pid >= XO_CL_PROG_COUNT || (dtype != XO_F32 && dtype != XO_F64)) return 0;
    if (dtype == XO_F64 && !d->info.fp64) return 0;
    pthread_mutex_lock(&d->build_lock);
    if (d->prog_state[pid][dtype] == 0)
        d->prog_state[pid][dtype] = build_locked(st, d, (xo__cl_prog_id)pid, dtype) ? 1 : -1;
    int ok = d->prog_state[pid][dtype] == 1;
    pthread_mutex_unlock(&d->build_lock);
    return ok;
}

void xo__cl_kernels_release(xo__cl_device *d)
{
    for (int k = 0; k < XO_CL_K_COUNT; k++)
        for (int t = 0; t < 2; t++)
            if (d->kernel[k][t]) {
                clReleaseKernel(d->kernel[k][t]);
                d->kernel[k][t] = NULL;
            }
    for (int p = 0; p < XO_CL_PROG_COUNT; p++)
        for (int t = 0; t < 2; t++) {
            if (d->prog[p][t]) clReleaseProgram(d->prog[p][t]);
            d->prog[p][t] = NULL;
            d->prog_state[p][t] = 0;
        }
    if (d->partials) clReleaseMemObject(d->partials);
    d->partials = NULL;
}

/* ---- launches ------------------------------------------------------------------ */

size_t xo__cl_kernel_wg(xo__cl_device *d, cl_kernel k)
{
    size_t wg = 0;
    if (clGetKernelWorkGroupInfo(k, d->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) != CL_SUCCESS ||
        wg == 0)
        wg = 1;
    if (wg > d->max_wg) wg = d->max_wg;
    return wg;
}

cl_int xo__cl_launch_locked(xo__cl_device *d, cl_kernel k, const xo__cl_arg *args, int nargs, cl_uint dims,
                            const size_t *global, const size_t *local, cl_event *ev, const char **call)
{
    for (int i = 0; i < nargs; i++) {
        cl_int err = clSetKernelArg(k, (cl_uint)i, args[i].size, args[i].value);
        if (err != CL_SUCCESS) {
            *call = "clSetKernelArg";
            return err;
        }
    }
    *call = "clEnqueueNDRangeKernel";
    return clEnqueueNDRangeKernel(d->queue, k, dims, NULL, global, local, 0, NULL, ev);
}

cl_int xo__cl_launch_1d_locked(xo__cl_device *d, cl_kernel k, const xo__cl_arg *args, int nargs, size_t n,
                               cl_event *ev, const char **call)
{
    size_t lsz = xo__cl_pow2_floor(xo__cl_kernel_wg(d, k));
    if (lsz > 256) lsz = 256;
    size_t global = xo__cl_round_up(n < XO_CL_MAX_ITEMS ? n : XO_CL_MAX_ITEMS, lsz);
    return xo__cl_launch_locked(d, k, args, nargs, 1, &global, &lsz, ev, call);
}

cl_int xo__cl_launch_2d_locked(xo__cl_device *d, cl_kernel k, const xo__cl_arg *args, int nargs, size_t outer,
                               size_t inner, cl_event *ev, const char **call)
{
    size_t wg = xo__cl_kernel_wg(d, k);
    size_t total = xo__cl_pow2_floor(wg < 64 ? wg : 64);
    size_t l0 = 1;
    while (l0 < total && l0 < inner) l0 *= 2;
    size_t local[2] = {l0, total / l0};
    size_t global[2] = {xo__cl_round_up(inner < 4096 ? inner : 4096, local[0]),
                        xo__cl_round_up(outer < 4096 ? outer : 4096, local[1])};
    return xo__cl_launch_locked(d, k, args, nargs, 2, global, local, ev, call);
}

/* An op on our kernels: `launch` under the device lock, timed from the first event to
 * the last; its kernels are in program `prog`. */
xo_status xo__cl_run_kernel(xo__cl_state *st, xo__cl_device *d, const xo_op_desc *op, uint64_t token,
                            xo__cl_launch_fn launch, xo__cl_prog_id prog)
{
    const xo_plugin_host *h = st->host;
    if (!launch || prog == XO_CL_PROG_NONE)
        return h->set_error(XO_ERR_UNSUPPORTED, "opencl: op kind %d has no kernel", (int)op->kind);
    if (!xo__cl_program_ready(st, d, prog, op->dtype))
        return h->set_error(XO_ERR_UNSUPPORTED, "opencl: %s: program '%s' (%s) is not available",
                            d->info.name, program_sources[prog], dtype_names[op->dtype == XO_F64]);
    cl_event first = NULL, last = NULL;
    const char *call = "clEnqueueNDRangeKernel";
    pthread_mutex_lock(&d->lock);
    cl_int err = launch(d, op, &first, &last, &call);
    if (err == CL_SUCCESS) xo__cl_timing_push_locked(d, first, last, token);
    pthread_mutex_unlock(&d->lock);
    if (err != CL_SUCCESS) return xo__cl_fail(h, call, err);
    return XO_OK;
}
