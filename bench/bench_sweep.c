/* xo bench, part 1: the sweep. Every op class over its sizes, on every forced device and
 * under auto placement, in two states:
 *   resident  operands already current where the op runs: one untimed call, then timed
 *             calls each followed by xo_finish;
 *   host      every call pays its transfers: xo_buffer_write of the inputs (the host copy
 *             becomes the only current one), the op, xo_buffer_read of the output.
 * Each point: per placement a warm-up, then many short rounds in which the placements
 * take turns; median and (p90 - p10) / median over all samples, and each round's median. */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const xo__bench_op_names[XO_BENCH_NOPS] = {"sgemm", "dgemm", "sgemv", "saxpy", "tanh", "add", "sum"};
const char *const xo__bench_state_names[XO_BENCH_NSTATES] = {"resident", "host"};

/* ---- the plan ------------------------------------------------------------------- */

static int add_point(xo__bench *b, int cap, xo__bench_op op, size_t m, size_t n, size_t k, int skinny)
{
    if (b->npoints >= cap) return -1;
    xo__bench_point *p = &b->points[b->npoints++];
    memset(p, 0, sizeof *p);
    p->op = op;
    p->m = m;
    p->n = n;
    p->k = k;
    p->skinny = skinny;
    switch (op) {
    case XO_BENCH_SGEMM:
    case XO_BENCH_DGEMM:
        p->size = skinny ? cbrt((double)m * (double)n * (double)k) : (double)n;
        snprintf(p->shape, sizeof p->shape, "%zux%zux%zu", m, n, k);
        break;
    case XO_BENCH_SGEMV:
        p->size = (double)m * (double)n;
        snprintf(p->shape, sizeof p->shape, "%zux%zu", m, n);
        break;
    default:
        p->size = (double)n;
        snprintf(p->shape, sizeof p->shape, "%zu", n);
        break;
    }
    return 0;
}

xo_status xo__bench_plan(xo__bench *b)
{
    const int cap = 256;
    b->points = calloc((size_t)cap, sizeof *b->points);
    if (!b->points) return XO_ERR_OUT_OF_MEMORY;
    b->npoints = 0;

    /* Square gemm: full 2..2048 by powers of 2; quick 4..512 by powers of 4, plus 512. */
    size_t gemm_max = b->quick ? 512 : 2048;
    size_t gemm_step = b->quick ? 4 : 2;
    for (int op = XO_BENCH_SGEMM; op <= XO_BENCH_DGEMM; op++) {
        size_t n = b->quick ? 4 : 2;
        for (; n <= gemm_max; n *= gemm_step) add_point(b, cap, (xo__bench_op)op, n, n, n, 0);
        if (b->quick) add_point(b, cap, (xo__bench_op)op, gemm_max, gemm_max, gemm_max, 0);
    }
    /* Skinny shapes of small networks: batch x features (m x n x k). */
    add_point(b, cap, XO_BENCH_SGEMM, 100, 100, 3, 1);   /* 3 -> 100 layer, batch 100 */
    add_point(b, cap, XO_BENCH_SGEMM, 100, 3, 100, 1);   /* 100 -> 3 layer, batch 100 */
    add_point(b, cap, XO_BENCH_SGEMM, 3, 100, 100, 1);   /* a 3 x 100 by 100 x 100 product */
    add_point(b, cap, XO_BENCH_SGEMM, 100, 256, 8, 1);   /* RNN input projection */
    add_point(b, cap, XO_BENCH_SGEMM, 100, 256, 256, 1); /* RNN recurrent step, batch 100 */
    if (!b->quick) add_point(b, cap, XO_BENCH_SGEMM, 10000, 256, 256, 1);

    /* Vector ops: full 16..16M by powers of 2; quick 16..1M by powers of 4. */
    size_t vmax = b->quick ? ((size_t)1 << 20) : ((size_t)1 << 24);
    size_t vstep = b->quick ? 4 : 2;
    for (int op = XO_BENCH_SGEMV; op <= XO_BENCH_SUM; op++) {
        for (size_t n = 16; n <= vmax; n *= vstep) {
            if (op == XO_BENCH_SGEMV) {
                int e = 0;
                while (((size_t)1 << e) < n) e++;
                size_t rows = (size_t)1 << ((e + 1) / 2);
                add_point(b, cap, XO_BENCH_SGEMV, rows, n / rows, 0, 0);
            } else {
                add_point(b, cap, (xo__bench_op)op, 0, n, 0, 0);
            }
        }
    }
    b->results = calloc((size_t)b->npoints * (size_t)b->nconfigs * XO_BENCH_NSTATES, sizeof *b->results);
    if (!b->results) return XO_ERR_OUT_OF_MEMORY;
    b->total = b->npoints * b->nconfigs * XO_BENCH_NSTATES;
    return XO_OK;
}

/* ---- operands -------------------------------------------------------------------- */

typedef struct op_inst {
    const xo__bench_point *p;
    int nbuf, ninputs, out; /* buffers [0, ninputs) are inputs; `out` is read back */
    xo_buffer *buf[3];
    void *host[3];
    size_t bytes[3];
} op_inst;

static void inst_free(op_inst *in)
{
    for (int i = 0; i < in->nbuf; i++) {
        xo_buffer_destroy(in->buf[i]);
        free(in->host[i]);
    }
    memset(in, 0, sizeof *in);
}

static void fill(void *host, size_t bytes, int dbl, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1u;
    size_t n = dbl ? bytes / sizeof(double) : bytes / sizeof(float);
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        double v = (double)(x >> 8) / (double)(1u << 24) * 2.0 - 1.0; /* [-1, 1) */
        if (dbl)
            ((double *)host)[i] = v;
        else
            ((float *)host)[i] = (float)v;
    }
}

static xo_status inst_create(xo_context *ctx, const xo__bench_point *p, op_inst *in)
{
    memset(in, 0, sizeof *in);
    in->p = p;
    size_t e = p->op == XO_BENCH_DGEMM ? sizeof(double) : sizeof(float);
    switch (p->op) {
    case XO_BENCH_SGEMM:
    case XO_BENCH_DGEMM:
        in->nbuf = 3, in->ninputs = 2, in->out = 2;
        in->bytes[0] = p->m * p->k * e, in->bytes[1] = p->k * p->n * e, in->bytes[2] = p->m * p->n * e;
        break;
    case XO_BENCH_SGEMV:
        in->nbuf = 3, in->ninputs = 2, in->out = 2;
        in->bytes[0] = p->m * p->n * e, in->bytes[1] = p->n * e, in->bytes[2] = p->m * e;
        break;
    case XO_BENCH_SAXPY: /* y is input and output */
        in->nbuf = 2, in->ninputs = 2, in->out = 1;
        in->bytes[0] = in->bytes[1] = p->n * e;
        break;
    case XO_BENCH_TANH:
        in->nbuf = 2, in->ninputs = 1, in->out = 1;
        in->bytes[0] = in->bytes[1] = p->n * e;
        break;
    case XO_BENCH_ADD:
        in->nbuf = 3, in->ninputs = 2, in->out = 2;
        in->bytes[0] = in->bytes[1] = in->bytes[2] = p->n * e;
        break;
    case XO_BENCH_SUM:
        in->nbuf = 2, in->ninputs = 1, in->out = 1;
        in->bytes[0] = p->n * e, in->bytes[1] = e;
        break;
    case XO_BENCH_NOPS: return XO_ERR_INVALID_ARGUMENT;
    }
    for (int i = 0; i < in->nbuf; i++) {
        in->host[i] = aligned_alloc(64, (in->bytes[i] + 63) / 64 * 64);
        if (!in->host[i]) {
            inst_free(in);
            return XO_ERR_OUT_OF_MEMORY;
        }
        fill(in->host[i], in->bytes[i], p->op == XO_BENCH_DGEMM, (uint32_t)i + 1u);
        xo_status s = xo_buffer_create(ctx, in->bytes[i], &in->buf[i]);
        if (s == XO_OK) s = xo_buffer_write(in->buf[i], 0, in->host[i], in->bytes[i]);
        if (s != XO_OK) {
            in->nbuf = i + 1;
            inst_free(in);
            return s;
        }
    }
    return XO_OK;
}

static xo_status inst_run(xo_context *ctx, const op_inst *in)
{
    const xo__bench_point *p = in->p;
    xo_buffer *const *bf = in->buf;
    switch (p->op) {
    case XO_BENCH_SGEMM:
        return xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, p->m, p->n, p->k, 1.0f, bf[0], 0, p->k,
                        bf[1], 0, p->n, 0.0f, bf[2], 0, p->n);
    case XO_BENCH_DGEMM:
        return xo_dgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, p->m, p->n, p->k, 1.0, bf[0], 0, p->k,
                        bf[1], 0, p->n, 0.0, bf[2], 0, p->n);
    case XO_BENCH_SGEMV:
        return xo_sgemv(ctx, XO_ROW_MAJOR, XO_NO_TRANS, p->m, p->n, 1.0f, bf[0], 0, p->n, bf[1], 0, 1, 0.0f,
                        bf[2], 0, 1);
    case XO_BENCH_SAXPY: return xo_saxpy(ctx, p->n, 1e-3f, bf[0], 0, 1, bf[1], 0, 1);
    case XO_BENCH_TANH: return xo_sunary(ctx, XO_TANH, p->n, bf[0], 0, bf[1], 0);
    case XO_BENCH_ADD: return xo_sbinary(ctx, XO_ADD, p->n, bf[0], 0, bf[1], 0, bf[2], 0);
    case XO_BENCH_SUM: return xo_sreduce(ctx, XO_SUM, p->n, bf[0], 0, bf[1], 0);
    case XO_BENCH_NOPS: break;
    }
    return XO_ERR_INVALID_ARGUMENT;
}

/* Write every operand from host memory: the host copy becomes the only current one. */
static xo_status inst_reset(const op_inst *in)
{
    for (int i = 0; i < in->nbuf; i++) XO_RETURN_IF_ERROR(xo_buffer_write(in->buf[i], 0, in->host[i], in->bytes[i]));
    return XO_OK;
}

/* One call in the "host" state: inputs from host memory, op, output back. */
static xo_status inst_run_host(xo_context *ctx, const op_inst *in)
{
    for (int i = 0; i < in->ninputs; i++) XO_RETURN_IF_ERROR(xo_buffer_write(in->buf[i], 0, in->host[i], in->bytes[i]));
    XO_RETURN_IF_ERROR(inst_run(ctx, in));
    return xo_buffer_read(in->buf[in->out], 0, in->host[in->out], in->bytes[in->out]);
}

/* ---- timing ------------------------------------------------------------------------ */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, c = *(const double *)y;
    return (a > c) - (a < c);
}

static double percentile(const double *sorted, int n, double q)
{
    double pos = q * (double)(n - 1);
    int lo = (int)pos;
    if (lo >= n - 1) return sorted[n - 1];
    double f = pos - (double)lo;
    return sorted[lo] * (1.0 - f) + sorted[lo + 1] * f;
}

void xo__bench_stats(double *samples, int n, xo__bench_result *out)
{
    qsort(samples, (size_t)n, sizeof *samples, cmp_double);
    out->reps = n;
    out->median_us = percentile(samples, n, 0.5);
    out->p10_us = percentile(samples, n, 0.1);
    out->p90_us = percentile(samples, n, 0.9);
    out->spread = out->median_us > 0 ? (out->p90_us - out->p10_us) / out->median_us : 0.0;
}

#define MAX_REPS 1000     /* samples per placement and point */
#define MIN_SAMPLE_US 50.0 /* tiny ops: one sample times a batch of calls at least this long */
#define MAX_BATCH 1000

static void report_error(const op_inst *in, xo_status s)
{
    fprintf(stderr, "xo: bench: %s %s: %s: %s\n", xo__bench_op_names[in->p->op], in->p->shape, xo_status_string(s),
            xo_last_error());
}

/* One call in `state`, completed. */
static xo_status call_once(xo_context *ctx, const op_inst *in, int state)
{
    if (state == XO_BENCH_HOST) return inst_run_host(ctx, in);
    xo_status s = inst_run(ctx, in);
    return s == XO_OK ? xo_finish(ctx) : s;
}

/* The placements take turns in many short rounds, in a balanced order (below), so that
 * a change of the machine's state (load from outside the process slows a tiny op by ~1.4x
 * for tens of ms to seconds on a shared 2-core machine; the threads of OpenBLAS and PoCL
 * behave differently for some ms after a switch) hits them all alike and auto can be compared with
 * each forced device round by round (the regret, bench_report.c). A placement too slow to
 * take a sample in every round samples every 2nd, 4th, ... round (its stride), so that the
 * fast ones still get many rounds; strides are powers of 2, so their rounds nest. */
/* The order of the placements in round `round`: the rows of a Williams design, so that
 * over a cycle of rounds (n rows for an even count n, 2n for an odd one) every placement
 * runs right after every other one equally often. What ran just before matters here: for
 * some ms after PoCL runs a large kernel, a CPU op that follows is ~15% slower, and a
 * random order let that land on auto in most rounds of a point (a false regret of 1.7
 * on a memory-bound op that auto ran on the CPU, like the best forced run). */
void xo__bench_round_order(int n, int round, int *order)
{
    int rows = n % 2 ? 2 * n : n, row = rows > 0 ? round % rows : 0;
    for (int k = 0; k < n; k++) {
        int base = k == 0 ? 0 : k % 2 ? (k + 1) / 2 : n - k / 2; /* 0, 1, n-1, 2, n-2, ... */
        int pos = row < n ? k : n - 1 - k;                         /* odd n: the mirrored rows */
        order[pos] = (base + row % n) % n;
    }
}

#define ROUNDS_FULL 24
#define ROUNDS_QUICK 12
#define MIN_SAMPLED_ROUNDS 3 /* the largest stride leaves this many rounds */

typedef struct sampler {
    int status;
    int batch;       /* calls per sample */
    int stride;      /* samples in rounds 0, stride, 2 stride, ... */
    int n;           /* samples so far */
    double per_call;
    double start_us; /* inst_reset and the untimed calls that start a round */
    double samples[MAX_REPS];
    double round_us[XO_BENCH_MAX_ROUNDS]; /* median of each round's samples; 0: none */
} sampler;

static void fail(sampler *sm, const op_inst *in, xo_status s)
{
    sm->status = s == XO_ERR_UNSUPPORTED ? XO_BENCH_UNSUPPORTED : XO_BENCH_ERROR;
    if (sm->status == XO_BENCH_ERROR) report_error(in, s);
}

static double budget_us(const xo__bench *b) { return b->quick ? 50e3 : 150e3; }
static int rounds_of(const xo__bench *b) { return b->quick ? ROUNDS_QUICK : ROUNDS_FULL; }

/* Before the rounds, per placement: bring the operands from the host, warm up (one-time
 * costs: kernel builds, first-touch page faults, caches; two calls or more, up to a fifth
 * of the budget; one if that is slower than the budget), size the batch and the stride. */
static void measure_setup(xo__bench *b, const op_inst *in, int state, sampler *sm)
{
    xo_context *ctx = b->ctx;
    const double warm_us = budget_us(b) / 5;
    double r0 = xo_clock_us(ctx);
    xo_status s = inst_reset(in);
    double reset = xo_clock_us(ctx) - r0;
    double f0 = xo_clock_us(ctx);
    if (s == XO_OK) s = call_once(ctx, in, state); /* the first call pays the one-time costs */
    double w0 = xo_clock_us(ctx), last = w0 - f0;
    int w = 0;
    /* a call slower than the whole budget is its own warm-up (and per-call estimate) */
    if (last > budget_us(b)) w0 = f0, w = 1;
    while (s == XO_OK && (w < 1 || (xo_clock_us(ctx) - w0 < warm_us && last < warm_us / 2))) {
        double t0 = xo_clock_us(ctx);
        s = call_once(ctx, in, state);
        last = xo_clock_us(ctx) - t0;
        w++;
    }
    if (s != XO_OK) return fail(sm, in, s);
    /* per call: the warm calls after the first; calls per sample, so that clock resolution
     * and jitter do not swamp tiny ops */
    sm->per_call = (xo_clock_us(ctx) - w0) / (double)w;
    sm->batch = sm->per_call > 0 ? (int)(MIN_SAMPLE_US / sm->per_call) + 1 : MAX_BATCH;
    if (sm->batch > MAX_BATCH) sm->batch = MAX_BATCH;
    sm->start_us = reset + sm->per_call * sm->batch;
    const double round_cost = sm->start_us + sm->per_call * sm->batch, round_budget = budget_us(b) / rounds_of(b);
    const int max_stride = rounds_of(b) / MIN_SAMPLED_ROUNDS;
    sm->stride = 1;
    while (sm->stride * 2 <= max_stride && round_cost > sm->stride * round_budget) sm->stride *= 2;
}

/* One round of one placement, just switched to: every operand is rewritten from host
 * memory (so all placements start each round from the same state, and auto decides from
 * it), an untimed call places the operands where this placement runs the op and waits for
 * it, the rest of an untimed batch settles caches, then the round's share of samples;
 * records the round's median. */
static void measure_round(xo__bench *b, const op_inst *in, int state, int round, sampler *sm)
{
    xo_context *ctx = b->ctx;
    const int rounds = (rounds_of(b) + sm->stride - 1) / sm->stride; /* that this placement samples */
    const double round_budget = budget_us(b) / rounds;
    const int min_reps = ((b->quick ? 7 : 11) + rounds - 1) / rounds;
    const int max_reps = MAX_REPS / rounds;

    xo_status s = inst_reset(in);
    for (int i = 0; i < sm->batch && s == XO_OK; i++) s = call_once(ctx, in, state);
    if (s != XO_OK) return fail(sm, in, s);
    int n = 0, n0 = sm->n;
    double spent = 0;
    /* slow points (seconds per call): one sample per round once the round's budget is spent */
    while (n < max_reps && sm->n < MAX_REPS && (n < min_reps || spent < round_budget) &&
           !(n >= 1 && spent >= round_budget)) {
        double t0 = xo_clock_us(ctx);
        for (int i = 0; i < sm->batch && s == XO_OK; i++) s = call_once(ctx, in, state);
        double dt = xo_clock_us(ctx) - t0;
        if (s != XO_OK) return fail(sm, in, s);
        sm->samples[sm->n++] = dt / sm->batch;
        n++;
        spent += dt;
    }
    double tmp[MAX_REPS];
    memcpy(tmp, sm->samples + n0, (size_t)n * sizeof *tmp);
    xo__bench_result r;
    xo__bench_stats(tmp, n, &r);
    sm->round_us[round] = r.median_us;
}

xo_status xo__bench_use_config(xo__bench *b, int c)
{
    return xo_set_device(b->ctx, b->cfg[c].device < 0 ? "auto" : b->cfg[c].spec);
}

static void progress(xo__bench *b, const xo__bench_point *p, int c, int state)
{
    static int tty = -1;
    if (tty < 0) tty = isatty(STDERR_FILENO);
    b->done++;
    fprintf(stderr, "%s[%4d/%d] %s %s %s %s%s", tty ? "\r\033[K" : "", b->done, b->total,
            xo__bench_op_names[p->op], p->shape, b->cfg[c].spec, xo__bench_state_names[state], tty ? "" : "\n");
    fflush(stderr);
}

int xo__bench_sweep(xo__bench *b)
{
    sampler *sm = calloc((size_t)b->nconfigs, sizeof *sm);
    if (!sm) {
        fprintf(stderr, "xo: bench: out of memory\n");
        return XO_TOOL_FAIL;
    }
    for (int i = 0; i < b->npoints; i++) {
        const xo__bench_point *p = &b->points[i];
        op_inst in;
        xo_status s = inst_create(b->ctx, p, &in);
        if (s != XO_OK) {
            fprintf(stderr, "\nxo: bench: %s %s: cannot allocate operands: %s: %s\n", xo__bench_op_names[p->op],
                    p->shape, xo_status_string(s), xo_last_error());
            for (int c = 0; c < b->nconfigs; c++)
                for (int st = 0; st < XO_BENCH_NSTATES; st++) {
                    xo__bench_at(b, i, c, st)->status = XO_BENCH_ERROR;
                    b->done++;
                }
            continue;
        }
        for (int st = 0; st < XO_BENCH_NSTATES; st++) {
            for (int c = 0; c < b->nconfigs; c++) {
                sm[c].status = XO_BENCH_OK;
                sm[c].n = 0;
                memset(sm[c].round_us, 0, sizeof sm[c].round_us);
                xo__bench_at(b, i, c, st)->placed = -1;
                progress(b, p, c, st);
                s = xo__bench_use_config(b, c);
                if (s != XO_OK)
                    fail(&sm[c], &in, s);
                else
                    measure_setup(b, &in, st, &sm[c]);
            }
            const int rounds = rounds_of(b);
            for (int round = 0; round < rounds; round++) {
                int order[XO_BENCH_MAX_CONFIGS];
                xo__bench_round_order(b->nconfigs, round + i * XO_BENCH_NSTATES + st, order);
                for (int k = 0; k < b->nconfigs; k++) {
                    int c = order[k];
                    xo__bench_result *r = xo__bench_at(b, i, c, st);
                    if (sm[c].status != XO_BENCH_OK || round % sm[c].stride) continue;
                    s = xo__bench_use_config(b, c);
                    if (s != XO_OK) {
                        fail(&sm[c], &in, s);
                        continue;
                    }
                    measure_round(b, &in, st, round, &sm[c]);
                    xo_decision dec;
                    if (sm[c].status == XO_BENCH_OK && xo_last_decision(b->ctx, &dec) == XO_OK) {
                        /* a forced device that cannot run the op leaves it to another one */
                        if (b->cfg[c].device >= 0 && dec.device >= 0 && dec.device != b->cfg[c].device)
                            sm[c].status = XO_BENCH_UNSUPPORTED;
                        r->placed = dec.device;
                    }
                }
            }
            for (int c = 0; c < b->nconfigs; c++) {
                xo__bench_result *r = xo__bench_at(b, i, c, st);
                r->status = sm[c].status;
                if (r->status != XO_BENCH_OK || sm[c].n == 0) {
                    if (r->status == XO_BENCH_OK) r->status = XO_BENCH_ERROR;
                    continue;
                }
                xo__bench_stats(sm[c].samples, sm[c].n, r);
                r->reps = sm[c].n * sm[c].batch;
                r->nrounds = rounds;
                memcpy(r->round_us, sm[c].round_us, (size_t)rounds * sizeof r->round_us[0]);
            }
        }
        inst_free(&in);
    }
    free(sm);
    if (isatty(STDERR_FILENO)) fputc('\n', stderr);
    xo_set_device(b->ctx, "auto");
    return 0;
}
