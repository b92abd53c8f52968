/* The "xo_chain" extra (plugin.h): an element-wise chain of a plan as one launch: of a
 * kernel compiled for its shape with NVRTC where libnvrtc is present (cuda_nvrtc.c), else
 * of the interpreter kernel xo_chain_{f32,f64} (kernels/xo_cuda_kernels.cu). The chain becomes
 * an xo_cuda_chain_prog (cuda_kernels.h), passed by value: per step its interpreter code,
 * the device addresses of the inputs it reads from memory and of its output, from[] and
 * store. Both kernels take that same parameter; the interpreter needs no run-time compiler. */
#include "cuda_internal.h"

#include <string.h>

_Static_assert(XO_CUDA_CHAIN_STEPS >= XO_CHAIN_MAX, "the interpreter holds every chain the core builds");
_Static_assert(sizeof(xo_cuda_chain_prog) <= 4096, "kernel parameters stay under 4 KiB");

/* Per op kind: the interpreter code and which operands are the inputs u, v and the output
 * (-1: none). scale_by's v is its factor s, read whole. */
typedef struct chain_kind {
    int ok, code, u, v, out;
} chain_kind;

static chain_kind kind_of(xo_op_kind k)
{
    switch (k) {
    case XO_OP_UNARY: return (chain_kind){1, XO_CUDA_CC_UNARY, 0, -1, 1};
    case XO_OP_BINARY: return (chain_kind){1, XO_CUDA_CC_BINARY, 0, 1, 2};
    case XO_OP_BINARY_SCALAR: return (chain_kind){1, XO_CUDA_CC_BINARY_SCALAR, 0, -1, 1};
    case XO_OP_SCAL: return (chain_kind){1, XO_CUDA_CC_SCAL, 0, -1, 0};
    case XO_OP_FILL: return (chain_kind){1, XO_CUDA_CC_FILL, -1, -1, 0};
    case XO_OP_AXPY: return (chain_kind){1, XO_CUDA_CC_AXPY, 0, 1, 1};
    case XO_OP_AXPBY: return (chain_kind){1, XO_CUDA_CC_AXPBY, 0, 1, 1};
    case XO_OP_COPY: return (chain_kind){1, XO_CUDA_CC_COPY, 0, -1, 1};
    case XO_OP_SCALE_BY: return (chain_kind){1, XO_CUDA_CC_SCALE_BY, 1, 0, 1};
    default: return (chain_kind){0, 0, -1, -1, -1};
    }
}

/* The shape rules: dtype, step count, kinds, from[] naming earlier steps, and scale_by's
 * factor read from memory (one element, not element i of a step's result). */
static int chain_shape_ok(const xo_chain *c)
{
    if (!c || !c->steps || c->nsteps < 1 || c->nsteps > XO_CUDA_CHAIN_STEPS || c->n == 0 ||
        (c->dtype != XO_F32 && c->dtype != XO_F64))
        return 0;
    for (int k = 0; k < c->nsteps; k++) {
        const xo_chain_step *s = &c->steps[k];
        const chain_kind ck = kind_of(s->op.kind);
        if (!ck.ok || s->op.dtype != c->dtype || s->op.narg < 1 || s->op.narg > XO_MAX_ARGS) return 0;
        for (int a = 0; a < s->op.narg; a++)
            if (s->from[a] >= k) return 0;
        if (s->op.kind == XO_OP_SCALE_BY && s->from[0] >= 0) return 0;
        if ((s->op.kind == XO_OP_UNARY && (unsigned)s->op.subop >= XO_UNARY_OP_COUNT) ||
            ((s->op.kind == XO_OP_BINARY || s->op.kind == XO_OP_BINARY_SCALAR) &&
             (unsigned)s->op.subop >= XO_BINARY_OP_COUNT))
            return 0;
    }
    return 1;
}

static int cuda_chain_supports(void *state, int dev, const xo_chain *chain)
{
    xo__cuda_state *st = state;
    if (!st || dev < 0 || dev >= st->ndev || xo__cuda_lost(st) || !chain_shape_ok(chain)) return 0;
    return xo__cuda_ready(st, &st->dev[dev], 0);
}

/* Input j of a step: an earlier step's result, or operand `a` read from memory. */
static xo_status set_input(xo__cuda_state *st, const xo_chain_step *s, int a, int j, size_t es,
                           xo_cuda_chain_step *out)
{
    out->from[j] = -1;
    out->in[j] = 0;
    if (a < 0) return XO_OK;
    if (s->from[a] >= 0) {
        out->from[j] = s->from[a];
        return XO_OK;
    }
    if (a >= s->op.narg || !s->op.arg[a].mem)
        return st->host->set_error(XO_ERR_INVALID_ARGUMENT, "cuda chain: operand %d is not in device memory", a);
    out->in[j] = XO_CUDA_DEVPTR(&s->op, a, es);
    return XO_OK;
}

static xo_status build(xo__cuda_state *st, const xo_chain *c, xo_cuda_chain_prog *p)
{
    const size_t es = c->dtype == XO_F64 ? sizeof(double) : sizeof(float);
    memset(p, 0, sizeof *p);
    p->n = c->n;
    p->nsteps = c->nsteps;
    for (int k = 0; k < c->nsteps; k++) {
        const xo_chain_step *s = &c->steps[k];
        const chain_kind ck = kind_of(s->op.kind);
        xo_cuda_chain_step *o = &p->step[k];
        o->code = ck.code;
        o->subop = s->op.subop;
        o->alpha = s->op.alpha;
        o->beta = s->op.beta;
        o->store = s->store ? 1 : 0;
        /* Inputs whose value is never used are not read: fill's x, axpby's x where
         * alpha == 0 and y where beta == 0, scal's x where alpha == 0. */
        int u = ck.u, v = ck.v;
        if ((s->op.kind == XO_OP_AXPBY || s->op.kind == XO_OP_SCAL) && s->op.alpha == 0) u = -1;
        if (s->op.kind == XO_OP_AXPBY && s->op.beta == 0) v = -1;
        XO_CUDA_TRY(set_input(st, s, u, 0, es, o));
        XO_CUDA_TRY(set_input(st, s, v, 1, es, o));
        if (o->store) {
            if (!s->op.arg[ck.out].mem)
                return st->host->set_error(XO_ERR_INVALID_ARGUMENT, "cuda chain: output of step %d is not in device memory", k);
            o->out = XO_CUDA_DEVPTR(&s->op, ck.out, es);
        }
    }
    return XO_OK;
}

static xo_status cuda_chain_run(void *state, int dev, const xo_chain *chain, uint64_t token)
{
    xo__cuda_state *st = state;
    xo__cuda_device *d = xo__cuda_device_at(st, dev, "cuda chain");
    if (!d) return XO_ERR_INVALID_ARGUMENT;
    if (!chain_shape_ok(chain))
        return st->host->set_error(XO_ERR_UNSUPPORTED, "cuda chain: a chain the interpreter does not run");
    xo_cuda_chain_prog prog;
    XO_CUDA_TRY(build(st, chain, &prog));

    XO_CUDA_TRY(xo__cuda_enter(st, d));
    if (!xo__cuda_ready_locked(st, d, 0)) {
        xo__cuda_leave(d);
        return st->host->set_error(XO_ERR_UNSUPPORTED, "cuda chain: the kernel module is unavailable on device %d", dev);
    }
    const int f64 = chain->dtype == XO_F64;
    CUfunction fn = xo__cuda_chain_fn(st, d, &prog, f64); /* NVRTC's for this shape, or NULL */
    xo__cuda_timing *t = xo__cuda_timing_begin(d, token);
    void *params[] = {&prog};
    const unsigned grid = xo__cuda_grid_for(chain->n, XO_CUDA_MAX_GRID);
    xo_status s = fn ? xo__cuda_launch_fn(st, d, fn, "xo_chain (compiled)", grid, 1, params)
                     : xo__cuda_launch(st, d, XO_CUDA_K_CHAIN, f64, grid, 1, params);
    if (s == XO_OK) xo__cuda_timing_end(d, t);
    xo__cuda_leave(d);
    return s;
}

const xo_chain_runner xo__cuda_chain_runner = {
    .supports = cuda_chain_supports,
    .run = cuda_chain_run,
};
