/* cl_kernels.c: our own kernels (kernels_cl/NAME.cl, embedded at build time).
 *
 * Each program is built at most once per device per context, lazily, in float and (on
 * fp64 devices) in double with -DXO_FP64. A build first asks the core's fault hook
 * ("compile"), then tries the on-disk binary cache (cl_cache.c), then the source. A
 * program that fails makes its ops ineligible on that device: logged once at warn, the
 * build log at debug. Builds hold the device's build lock (uploads and other launches go
 * on meanwhile); launches hold the device lock because a cl_kernel's arguments are
 * shared state. */
#include "cl_internal.h"
#include "xo_cl_embedded.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(XO_RELU == 0 && XO_TANH == 1 && XO_SIGMOID == 2 && XO_EXP == 3 && XO_NEG == 4 &&
                   XO_SQUARE == 5 && XO_RELU_GRAD == 6 && XO_TANH_GRAD == 7 && XO_SIGMOID_GRAD == 8 &&
                   XO_SQRT == 9 && XO_RSQRT == 10 && XO_LOG == 11 && XO_ABS == 12 && XO_RECIPROCAL == 13 &&
                   XO_IDENTITY == 14,
               "kernels_cl/elementwise.cl hard-codes xo_unary_op");
_Static_assert(XO_ADD == 0 && XO_SUB == 1 && XO_MUL == 2 && XO_DIV == 3 && XO_MAX == 4,
               "kernels_cl/elementwise.cl hard-codes xo_binary_op");
_Static_assert(XO_SUM == 0 && XO_MAX_ELEMENT == 1, "kernels_cl/reduce.cl hard-codes xo_reduce_op");
_Static_assert(XO_SOFTMAX == 0 && XO_LOG_SOFTMAX == 1, "kernels_cl/reduce.cl hard-codes xo_softmax_op");

static const struct {
    const char *source; /* kernels_cl/<source>.cl */
    xo__cl_kernel_id first, end;
} programs[XO_CL_PROG_COUNT] = {
    [XO_CL_PROG_ELEMENTWISE] = {"elementwise", XO_CL_K_UNARY, XO_CL_K_SCALE + 1},
    [XO_CL_PROG_REDUCE] = {"reduce", XO_CL_K_REDUCE_PARTIAL, XO_CL_K_NRM2_FINAL + 1},
};

static const char *const kernel_names[XO_CL_K_COUNT] = {
    [XO_CL_K_UNARY] = "xo_unary",
    [XO_CL_K_BINARY] = "xo_binary",
    [XO_CL_K_BINARY_SCALAR] = "xo_binary_scalar",
    [XO_CL_K_COPY] = "xo_copy",
    [XO_CL_K_FILL] = "xo_fill",
    [XO_CL_K_AXPBY] = "xo_axpby",
    [XO_CL_K_SCALE_BY] = "xo_scale_by",
    [XO_CL_K_BIAS_ACT] = "xo_bias_act",
    [XO_CL_K_SCALE] = "xo_scale",
    [XO_CL_K_REDUCE_PARTIAL] = "xo_reduce_partial",
    [XO_CL_K_REDUCE_FINAL] = "xo_reduce_final",
    [XO_CL_K_REDUCE_AXIS] = "xo_reduce_axis",
    [XO_CL_K_SOFTMAX] = "xo_softmax",
    [XO_CL_K_NRM2_PARTIAL] = "xo_nrm2_partial",
    [XO_CL_K_NRM2_FINAL] = "xo_nrm2_final",
};

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

static void log_build_failure(xo__cl_state *st, xo__cl_device *d, cl_program prog, const char *what,
                              const char *src_name, xo_dtype dt, cl_int err)
{
    const xo_plugin_host *h = st->host;
    h->log(XO_LOG_WARN, "opencl: %s: program '%s' (%s) failed (%s: %s); its ops run elsewhere",
           d->info.name, src_name, dtype_names[dt], what, xo__cl_error_name(err));
    if (!prog) return;
    size_t len = 0;
    if (clGetProgramBuildInfo(prog, d->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &len) != CL_SUCCESS || len == 0)
        return;
    char *log = malloc(len + 1);
    if (!log) return;
    if (clGetProgramBuildInfo(prog, d->id, CL_PROGRAM_BUILD_LOG, len, log, NULL) == CL_SUCCESS) {
        log[len] = '\0';
        h->log(XO_LOG_DEBUG, "opencl: build log of '%s' (%s) on %s:\n%s", src_name, dtype_names[dt],
               d->info.name, log);
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

static void store_binary(xo__cl_state *st, xo__cl_device *d, cl_program p, const char *path,
                         const char *key)
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
    (void)d;
}

/* Build program `pid` in `dt` on `d`; d->build_lock held. Returns 1 if built. */
static int build_locked(xo__cl_state *st, xo__cl_device *d, xo__cl_prog_id pid, xo_dtype dt)
{
    const xo_plugin_host *h = st->host;
    const char *src_name = programs[pid].source;
    const char *opts = build_options[dt];
    const xo__cl_source *src = find_source(src_name);
    cl_program p = NULL;
    cl_int err = CL_SUCCESS;

    if (!src) {
        h->log(XO_LOG_WARN, "opencl: kernel source '%s' is not embedded", src_name);
        atomic_fetch_add(&n_failures, 1);
        return 0;
    }
    if (h->fault(h, "compile")) {
        h->log(XO_LOG_WARN, "opencl: %s: program '%s' (%s): injected compile fault; its ops run elsewhere",
               d->info.name, src_name, dtype_names[dt]);
        atomic_fetch_add(&n_failures, 1);
        return 0;
    }

    char key[1024], path[PATH_MAX];
    snprintf(key, sizeof key,
             "crossover OpenCL program v1\nplatform=%s\ndevice=%s\nvendor=%s\ndriver=%s\n"
             "options=%s\nsource=%s:%016llx:%zu\n",
             d->platform_version, d->info.name, d->info.vendor, d->info.driver, opts, src_name,
             (unsigned long long)src->hash, src->size);
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
            h->log(XO_LOG_DEBUG, "opencl: %s: program '%s' (%s) loaded from %s", d->info.name, src_name,
                   dtype_names[dt], path);
        } else if (r < 0) {
            atomic_fetch_add(&n_rejected, 1);
            h->log(XO_LOG_WARN, "opencl: kernel cache entry %s is damaged (%s); rebuilding", path, why);
        } else if (r == 1) {
            atomic_fetch_add(&n_rejected, 1);
            h->log(XO_LOG_INFO, "opencl: kernel cache entry %s refused by the driver; rebuilding", path);
        }
    }

    if (!p) {
        const char *text = (const char *)src->data;
        size_t len = src->size;
        p = clCreateProgramWithSource(d->ctx, 1, &text, &len, &err);
        if (err != CL_SUCCESS) {
            log_build_failure(st, d, NULL, "clCreateProgramWithSource", src_name, dt, err);
            atomic_fetch_add(&n_failures, 1);
            return 0;
        }
        err = clBuildProgram(p, 1, &d->id, opts, NULL, NULL);
        if (err != CL_SUCCESS) {
            log_build_failure(st, d, p, "clBuildProgram", src_name, dt, err);
            clReleaseProgram(p);
            atomic_fetch_add(&n_failures, 1);
            return 0;
        }
        atomic_fetch_add(&n_source, 1);
        h->log(XO_LOG_DEBUG, "opencl: %s: program '%s' (%s) built from source", d->info.name, src_name,
               dtype_names[dt]);
        if (cached) store_binary(st, d, p, path, key);
    }

    for (int k = programs[pid].first; k < (int)programs[pid].end; k++) {
        d->kernel[k][dt] = clCreateKernel(p, kernel_names[k], &err);
        if (err != CL_SUCCESS) {
            log_build_failure(st, d, NULL, kernel_names[k], src_name, dt, err);
            for (int j = programs[pid].first; j < k; j++) {
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

static int program_for(xo_op_kind kind)
{
    switch (kind) {
    case XO_OP_UNARY:
    case XO_OP_BINARY:
    case XO_OP_BIAS:
    case XO_OP_BINARY_SCALAR:
    case XO_OP_COPY:
    case XO_OP_FILL:
    case XO_OP_AXPBY:
    case XO_OP_SCALE_BY:
    case XO_OP_GEMM_BIAS_ACT: /* its epilogue */
    case XO_OP_GEMM:          /* alpha == 0: xo_scale */
    case XO_OP_GEMV:
    case XO_OP_SCAL:
        return XO_CL_PROG_ELEMENTWISE;
    case XO_OP_REDUCE:
    case XO_OP_REDUCE_AXIS:
    case XO_OP_SOFTMAX:
    case XO_OP_NRM2:
        return XO_CL_PROG_REDUCE;
    default:
        return -1;
    }
}

int xo__cl_kernels_ready(xo__cl_state *st, xo__cl_device *d, xo_op_kind kind, xo_dtype dtype)
{
    int pid = program_for(kind);
    if (pid < 0 || (dtype != XO_F32 && dtype != XO_F64)) return 0;
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

/* gemm, gemv or scal with alpha == 0: C = beta*C, y = beta*y, or x = 0 (xo_scale). */
static cl_int run_scale_locked(xo__cl_device *d, const xo_op_desc *op, cl_event *ev, const char **call)
{
    const int dt = op->dtype;
    const xo_scale_view v = xo_op_scale_view(op);
    const cl_double fd = v.factor;
    const cl_float ff = (cl_float)v.factor;
    cl_mem a = xo__cl_mem(op->arg[v.arg].mem);
    cl_ulong rows = v.rows, cols = v.cols, ld = v.ld, off = op->arg[v.arg].off;
    const xo__cl_arg args[] = {XO_CL_ARG(rows), XO_CL_ARG(cols), XO_CL_ARG(a),
                               XO_CL_ARG(off),  XO_CL_ARG(ld),   dt == XO_F64 ? XO_CL_ARG(fd) : XO_CL_ARG(ff)};
    return xo__cl_launch_2d_locked(d, d->kernel[XO_CL_K_SCALE][dt], args, 6, rows, cols, ev, call);
}

static cl_int run_elementwise_locked(xo__cl_device *d, const xo_op_desc *op, cl_event *ev, const char **call)
{
    const int dt = op->dtype;
    cl_ulong n = op->n;
    cl_int subop = op->subop;
    if (op->kind == XO_OP_UNARY) {
        cl_mem x = xo__cl_mem(op->arg[0].mem), y = xo__cl_mem(op->arg[1].mem);
        cl_ulong x_off = op->arg[0].off, y_off = op->arg[1].off;
        const xo__cl_arg args[] = {XO_CL_ARG(subop), XO_CL_ARG(n), XO_CL_ARG(x), XO_CL_ARG(x_off), XO_CL_ARG(y),
                                   XO_CL_ARG(y_off)};
        return xo__cl_launch_1d_locked(d, d->kernel[XO_CL_K_UNARY][dt], args, 6, op->n, ev, call);
    }
    cl_mem a = xo__cl_mem(op->arg[0].mem), b = xo__cl_mem(op->arg[1].mem), c = xo__cl_mem(op->arg[2].mem);
    cl_ulong a_off = op->arg[0].off, b_off = op->arg[1].off, c_off = op->arg[2].off;
    const xo__cl_arg args[] = {XO_CL_ARG(subop), XO_CL_ARG(n), XO_CL_ARG(a), XO_CL_ARG(a_off),
                               XO_CL_ARG(b),     XO_CL_ARG(b_off), XO_CL_ARG(c), XO_CL_ARG(c_off)};
    return xo__cl_launch_1d_locked(d, d->kernel[XO_CL_K_BINARY][dt], args, 8, op->n, ev, call);
}

/* Two passes: work-group trees into d->partials, then one work-group over the partials
 * (reduce: one value per group; nrm2: three). Both are enqueued under the lock, so
 * concurrent reductions never share partials. */
static cl_int run_reduce_locked(xo__cl_state *st, xo__cl_device *d, const xo_op_desc *op, cl_event *ev1,
                                cl_event *ev2, const char **call)
{
    const int dt = op->dtype;
    const size_t esize = dt == XO_F64 ? sizeof(double) : sizeof(float);
    const int nrm2 = op->kind == XO_OP_NRM2;
    cl_kernel k1 = d->kernel[nrm2 ? XO_CL_K_NRM2_PARTIAL : XO_CL_K_REDUCE_PARTIAL][dt],
              k2 = d->kernel[nrm2 ? XO_CL_K_NRM2_FINAL : XO_CL_K_REDUCE_FINAL][dt];
    cl_int err = CL_SUCCESS;
    if (!d->partials) {
        d->partials = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, 3 * XO_CL_REDUCE_LOCAL * sizeof(double), NULL, &err);
        if (err != CL_SUCCESS) {
            d->partials = NULL;
            *call = "clCreateBuffer";
            return err;
        }
    }
    (void)st;
    size_t w1 = xo__cl_kernel_wg(d, k1), w2 = xo__cl_kernel_wg(d, k2);
    size_t lsz = xo__cl_pow2_floor(w1 < w2 ? w1 : w2);
    if (lsz > XO_CL_REDUCE_LOCAL) lsz = XO_CL_REDUCE_LOCAL;
    size_t groups = (op->n + lsz - 1) / lsz;
    if (groups > lsz) groups = lsz; /* pass 2 folds at most lsz partials with one group */
    size_t global = groups * lsz;

    cl_int subop = op->subop;
    cl_ulong n = op->n, x_off = op->arg[0].off, out_off = op->arg[1].off, inc = op->inc[0];
    cl_uint count = (cl_uint)groups;
    cl_mem x = xo__cl_mem(op->arg[0].mem), out = xo__cl_mem(op->arg[1].mem), part = d->partials;
    const xo__cl_arg scratch = {lsz * esize, NULL};
    if (nrm2) {
        const xo__cl_arg a1[] = {XO_CL_ARG(n), XO_CL_ARG(x), XO_CL_ARG(x_off), XO_CL_ARG(inc), XO_CL_ARG(part), scratch};
        err = xo__cl_launch_locked(d, k1, a1, 6, 1, &global, &lsz, ev1, call);
    } else {
        const xo__cl_arg a1[] = {XO_CL_ARG(subop), XO_CL_ARG(n), XO_CL_ARG(x), XO_CL_ARG(x_off), XO_CL_ARG(part),
                                 scratch};
        err = xo__cl_launch_locked(d, k1, a1, 6, 1, &global, &lsz, ev1, call);
    }
    if (err != CL_SUCCESS) return err;
    /* Pass 2: the same arguments, less reduce's leading sub-op for nrm2. */
    const xo__cl_arg a2[] = {XO_CL_ARG(subop), XO_CL_ARG(count), XO_CL_ARG(part), XO_CL_ARG(out), XO_CL_ARG(out_off),
                             scratch};
    err = xo__cl_launch_locked(d, k2, a2 + nrm2, 6 - nrm2, 1, &lsz, &lsz, ev2, call);
    if (err != CL_SUCCESS) {
        /* pass 1 only wrote our scratch: out is untouched */
        clReleaseEvent(*ev1);
        *ev1 = NULL;
    }
    return err;
}

xo_status xo__cl_run_kernel(xo__cl_state *st, xo__cl_device *d, const xo_op_desc *op, uint64_t token)
{
    const xo_plugin_host *h = st->host;
    int pid = program_for(op->kind);
    if (pid < 0) return h->set_error(XO_ERR_UNSUPPORTED, "opencl: op kind %d has no kernel", (int)op->kind);
    if (!xo__cl_kernels_ready(st, d, op->kind, op->dtype))
        return h->set_error(XO_ERR_UNSUPPORTED, "opencl: %s: program '%s' (%s) is not available",
                            d->info.name, programs[pid].source, dtype_names[op->dtype == XO_F64]);
    cl_event first = NULL, last = NULL;
    const char *call = "clEnqueueNDRangeKernel";
    cl_int err;
    pthread_mutex_lock(&d->lock);
    if (op->kind == XO_OP_REDUCE || op->kind == XO_OP_NRM2)
        err = run_reduce_locked(st, d, op, &first, &last, &call);
    else if (op->kind == XO_OP_UNARY || op->kind == XO_OP_BINARY)
        err = run_elementwise_locked(d, op, &last, &call);
    else if (xo_op_scales_only(op))
        err = run_scale_locked(d, op, &last, &call);
    else
        err = xo__cl_run_nn_locked(d, op, &last, &call);
    if (err == CL_SUCCESS) xo__cl_timing_push_locked(d, first, last, token);
    pthread_mutex_unlock(&d->lock);
    if (err != CL_SUCCESS) return xo__cl_fail(h, call, err);
    return XO_OK;
}
