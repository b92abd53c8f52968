/* xo bench, part 2: workloads. Real programs on the public API, each timed under every
 * forced device and under auto placement, taking turns in short rounds:
 *   - tanh RNN training (hidden 256, input 8, BPTT over 8 steps, SGD), batch 100 and 10000,
 *     and neural-ODE training (RK4, backprop through every stage, clipping on the device),
 *     each also written in plain CBLAS and timed in the same rounds (bench_rnn.c,
 *     bench_ode.c);
 *   - a 3 -> 100 -> 3 tanh MLP evaluated (state in from host, result out to host, as an
 *     ODE solver does) and trained one step, in a loop;
 *   - 200x200 sgemm with operands copied in and out on every call, versus resident;
 *   - chained 100x100 matmuls reading the norm back every step, versus once at the end.
 * The real programs (the RNNs, the neural ODE, the MLP) also run as a plan: one iteration
 * captured once under auto placement and replayed, checked against the eager program
 * first (wl_plan_check) and timed in the same rounds (columns plan, plan/eager,
 * plan/CBLAS). */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TRY(expr) XO_RETURN_IF_ERROR(expr)
#define RM XO_ROW_MAJOR
#define NT XO_NO_TRANS
#define TR XO_TRANS

/* A float buffer of n elements: filled with scale * [-1, 1) noise, or a constant when
 * scale == 0 (value `c`). */
static xo_status make_buf(xo_context *ctx, size_t n, float scale, float c, uint32_t seed, xo_buffer **out)
{
    float *h = malloc(n * sizeof *h);
    if (!h) return XO_ERR_OUT_OF_MEMORY;
    uint32_t x = seed * 2654435761u + 7u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        h[i] = scale != 0.0f ? scale * ((float)(x >> 8) / (float)(1u << 24) * 2.0f - 1.0f) : c;
    }
    xo_status s = xo_buffer_create(ctx, n * sizeof *h, out);
    if (s == XO_OK) s = xo_buffer_write(*out, 0, h, n * sizeof *h);
    free(h);
    return s;
}

static void free_bufs(xo_buffer **bufs, int n)
{
    for (int i = 0; i < n; i++) {
        xo_buffer_destroy(bufs[i]);
        bufs[i] = NULL;
    }
}

/* ---- 3 -> 100 -> 3 MLP: the right-hand side of a neural ODE ------------------------- */

enum { M_X, M_W1, M_B1, M_H, M_W2, M_B2, M_Y, M_TGT, M_DY, M_DW2, M_DB2, M_DH, M_DZ, M_DW1, M_DB1, M_ONES, M_N };
typedef struct mlp {
    size_t B, D, H;
    float lr, dt;
    float *state, *deriv; /* the ODE solver's state on the host */
    xo_buffer *buf[M_N];
    xo_plan *plan;        /* the device part of an iteration, recorded */
} mlp;

static xo_status mlp_setup(xo_context *ctx, mlp *m)
{
    memset(m, 0, sizeof *m);
    m->B = 100, m->D = 3, m->H = 100, m->lr = 1e-4f, m->dt = 1e-3f;
    size_t B = m->B, D = m->D, H = m->H;
    const struct { int id; size_t n; float scale, c; } spec[M_N] = {
        {M_X, B * D, 1.0f, 0}, {M_W1, D * H, 0.5f, 0}, {M_B1, H, 0.1f, 0}, {M_H, B * H, 0, 0},
        {M_W2, H * D, 0.1f, 0}, {M_B2, D, 0.1f, 0}, {M_Y, B * D, 0, 0}, {M_TGT, B * D, 0.2f, 0},
        {M_DY, B * D, 0, 0}, {M_DW2, H * D, 0, 0}, {M_DB2, D, 0, 0}, {M_DH, B * H, 0, 0},
        {M_DZ, B * H, 0, 0}, {M_DW1, D * H, 0, 0}, {M_DB1, H, 0, 0}, {M_ONES, B, 0, 1.0f},
    };
    m->state = calloc(B * D, sizeof *m->state);
    m->deriv = calloc(B * D, sizeof *m->deriv);
    if (!m->state || !m->deriv) return XO_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < B * D; i++) m->state[i] = (float)((double)(i % 17) / 17.0 - 0.5);
    for (int i = 0; i < M_N; i++) {
        xo_status s = make_buf(ctx, spec[i].n, spec[i].scale, spec[i].c, (uint32_t)i + 31u, &m->buf[spec[i].id]);
        if (s != XO_OK) return s;
    }
    return XO_OK;
}

static void mlp_free(mlp *m)
{
    xo_plan_destroy(m->plan);
    m->plan = NULL;
    free_bufs(m->buf, M_N);
    free(m->state);
    free(m->deriv);
}

/* The device part of an iteration: state in, f(state) out, one training step. */
static xo_status mlp_device(xo_context *ctx, mlp *m)
{
    xo_buffer **bf = m->buf;
    size_t B = m->B, D = m->D, H = m->H;
    /* evaluate f(state): state in from the solver, derivative out to it */
    TRY(xo_buffer_write(bf[M_X], 0, m->state, B * D * sizeof(float)));
    TRY(xo_sgemm(ctx, RM, NT, NT, B, H, D, 1.0f, bf[M_X], 0, D, bf[M_W1], 0, H, 0.0f, bf[M_H], 0, H));
    TRY(xo_sbias(ctx, B, H, bf[M_H], 0, H, bf[M_B1], 0));
    TRY(xo_sunary(ctx, XO_TANH, B * H, bf[M_H], 0, bf[M_H], 0));
    TRY(xo_sgemm(ctx, RM, NT, NT, B, D, H, 1.0f, bf[M_H], 0, H, bf[M_W2], 0, D, 0.0f, bf[M_Y], 0, D));
    TRY(xo_sbias(ctx, B, D, bf[M_Y], 0, D, bf[M_B2], 0));
    TRY(xo_buffer_read(bf[M_Y], 0, m->deriv, B * D * sizeof(float)));
    /* one training step towards the target derivative */
    TRY(xo_sbinary(ctx, XO_SUB, B * D, bf[M_Y], 0, bf[M_TGT], 0, bf[M_DY], 0));
    TRY(xo_sgemm(ctx, RM, TR, NT, H, D, B, 1.0f, bf[M_H], 0, H, bf[M_DY], 0, D, 0.0f, bf[M_DW2], 0, D));
    TRY(xo_sgemv(ctx, RM, TR, B, D, 1.0f, bf[M_DY], 0, D, bf[M_ONES], 0, 1, 0.0f, bf[M_DB2], 0, 1));
    TRY(xo_sgemm(ctx, RM, NT, TR, B, H, D, 1.0f, bf[M_DY], 0, D, bf[M_W2], 0, D, 0.0f, bf[M_DH], 0, H));
    TRY(xo_sunary(ctx, XO_TANH_GRAD, B * H, bf[M_H], 0, bf[M_DZ], 0));
    TRY(xo_sbinary(ctx, XO_MUL, B * H, bf[M_DZ], 0, bf[M_DH], 0, bf[M_DZ], 0));
    TRY(xo_sgemm(ctx, RM, TR, NT, D, H, B, 1.0f, bf[M_X], 0, D, bf[M_DZ], 0, H, 0.0f, bf[M_DW1], 0, H));
    TRY(xo_sgemv(ctx, RM, TR, B, H, 1.0f, bf[M_DZ], 0, H, bf[M_ONES], 0, 1, 0.0f, bf[M_DB1], 0, 1));
    TRY(xo_saxpy(ctx, H * D, -m->lr, bf[M_DW2], 0, 1, bf[M_W2], 0, 1));
    TRY(xo_saxpy(ctx, D, -m->lr, bf[M_DB2], 0, 1, bf[M_B2], 0, 1));
    TRY(xo_saxpy(ctx, D * H, -m->lr, bf[M_DW1], 0, 1, bf[M_W1], 0, 1));
    return xo_saxpy(ctx, H, -m->lr, bf[M_DB1], 0, 1, bf[M_B1], 0, 1);
}

/* The solver's explicit Euler step, on the host. */
static void mlp_host(mlp *m)
{
    for (size_t i = 0; i < m->B * m->D; i++) {
        m->state[i] += m->dt * m->deriv[i];
        if (!isfinite(m->state[i]) || fabsf(m->state[i]) > 10.0f) m->state[i] = 0.0f;
    }
}

static xo_status mlp_iter(xo_context *ctx, void *st)
{
    TRY(mlp_device(ctx, st));
    mlp_host(st);
    return XO_OK;
}

static xo_status mlp_capture(xo_context *ctx, void *st, xo_plan **out)
{
    mlp *m = st;
    TRY(xo_capture_begin(ctx));
    xo_status s = mlp_device(ctx, m);
    xo_plan *plan = NULL;
    xo_status e = xo_capture_end(ctx, &plan); /* ends the capture even when a call failed */
    if (s != XO_OK) {
        xo_plan_destroy(plan);
        return s;
    }
    *out = m->plan = plan;
    return e;
}

static xo_status mlp_plan_iter(xo_context *ctx, void *st)
{
    (void)ctx;
    mlp *m = st;
    TRY(xo_plan_run(m->plan));
    mlp_host(m);
    return XO_OK;
}

/* What the plan check compares: the norm of the derivative the last iteration read back. */
static double mlp_check_value(const void *st)
{
    const mlp *m = st;
    double sq = 0;
    for (size_t i = 0; i < m->B * m->D; i++) sq += (double)m->deriv[i] * m->deriv[i];
    return sqrt(sq);
}

/* ---- 200x200 sgemm: copied in and out, or resident ---------------------------------- */

typedef struct gemm200 {
    size_t n;
    int copy;
    float *ha, *hb, *hc;
    xo_buffer *a, *b, *c;
} gemm200;

static xo_status gemm200_setup(xo_context *ctx, gemm200 *g, int copy)
{
    memset(g, 0, sizeof *g);
    g->n = 200, g->copy = copy;
    size_t nn = g->n * g->n;
    g->ha = malloc(nn * sizeof(float));
    g->hb = malloc(nn * sizeof(float));
    g->hc = malloc(nn * sizeof(float));
    if (!g->ha || !g->hb || !g->hc) return XO_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < nn; i++) g->ha[i] = (float)(i % 13) * 0.1f, g->hb[i] = (float)(i % 7) * 0.1f;
    TRY(make_buf(ctx, nn, 1.0f, 0, 5, &g->a));
    TRY(make_buf(ctx, nn, 1.0f, 0, 6, &g->b));
    return make_buf(ctx, nn, 0, 0, 0, &g->c);
}

static void gemm200_free(gemm200 *g)
{
    xo_buffer_destroy(g->a), xo_buffer_destroy(g->b), xo_buffer_destroy(g->c);
    free(g->ha), free(g->hb), free(g->hc);
}

static xo_status gemm200_iter(xo_context *ctx, void *st)
{
    gemm200 *g = st;
    size_t n = g->n, bytes = n * n * sizeof(float);
    if (g->copy) {
        TRY(xo_buffer_write(g->a, 0, g->ha, bytes));
        TRY(xo_buffer_write(g->b, 0, g->hb, bytes));
    }
    TRY(xo_sgemm(ctx, RM, NT, NT, n, n, n, 1.0f, g->a, 0, n, g->b, 0, n, 0.0f, g->c, 0, n));
    return g->copy ? xo_buffer_read(g->c, 0, g->hc, bytes) : xo_finish(ctx);
}

/* ---- chained 100x100 matmuls --------------------------------------------------------- */

typedef struct chain {
    size_t n, steps;
    int norm_every_step;
    xo_buffer *x[2], *m, *norm;
} chain;

static xo_status chain_setup(xo_context *ctx, chain *c, size_t steps, int every)
{
    memset(c, 0, sizeof *c);
    c->n = 100, c->steps = steps, c->norm_every_step = every;
    /* entries uniform in [-s, s) with s = sqrt(3 / n): the product keeps the norm steady */
    TRY(make_buf(ctx, c->n * c->n, sqrtf(3.0f / (float)c->n), 0, 9, &c->m));
    TRY(make_buf(ctx, c->n * c->n, 1.0f, 0, 10, &c->x[0]));
    TRY(make_buf(ctx, c->n * c->n, 0, 0, 0, &c->x[1]));
    return make_buf(ctx, 1, 0, 0, 0, &c->norm);
}

static void chain_free(chain *c)
{
    xo_buffer_destroy(c->x[0]), xo_buffer_destroy(c->x[1]), xo_buffer_destroy(c->m), xo_buffer_destroy(c->norm);
}

static xo_status chain_iter(xo_context *ctx, void *st)
{
    chain *c = st;
    size_t n = c->n;
    float norm = 0;
    for (size_t i = 0; i < c->steps; i++) {
        xo_buffer *src = c->x[i & 1], *dst = c->x[(i + 1) & 1];
        TRY(xo_sgemm(ctx, RM, NT, NT, n, n, n, 1.0f, src, 0, n, c->m, 0, n, 0.0f, dst, 0, n));
        if (c->norm_every_step || i + 1 == c->steps) {
            TRY(xo_snrm2(ctx, n * n, dst, 0, 1, c->norm, 0));
            TRY(xo_buffer_read(c->norm, 0, &norm, sizeof norm));
        }
    }
    /* renormalise on the way: keeps values far from overflow and denormals */
    if (norm > 0 && isfinite(norm)) TRY(xo_sscal(ctx, n * n, 100.0f / norm, c->x[c->steps & 1], 0, 1));
    return XO_OK;
}

/* ---- the runner ------------------------------------------------------------------------ */

typedef xo_status (*iter_fn)(xo_context *ctx, void *st);

/* The placements take turns in short rounds, in a balanced order (as in the
 * sweep, bench_sweep.c): this machine drops into a ~1.4-2x slower state for tens to
 * hundreds of ms at a time (load from outside the process), and one long run per placement
 * let that state hit one placement and not another (auto at 0.55-1.79x of forced cpu with
 * identical placement). Each placement's rate is the median of its rounds' rates, and auto
 * is compared with the best forced device round by round. A placement too slow for a round
 * in every round samples every 2nd, 4th, ... round (strides are powers of 2, so their
 * rounds nest and round 0 has them all). */
#define WL_ROUNDS_FULL 12
#define WL_ROUNDS_QUICK 6
#define WL_MIN_SAMPLED_ROUNDS 2

typedef struct wl_config {
    int failed;
    int stride;                        /* samples rounds 0, stride, 2 stride, ...; 0: not sized yet */
    double rate[XO_BENCH_MAX_ROUNDS];  /* per round; 0: not sampled */
} wl_config;

/* One slice of config `c`: switch to it, `warmup` untimed iterations (the first after a
 * switch may move data to where this placement runs the ops), then timed iterations until
 * `budget_us` is spent (at least one). Returns the rate (0 on failure) and the time per
 * timed iteration. Under auto the device stats are reset after the warm-up and the slice's
 * ops added to w->auto_ops. */
static double run_slice(xo__bench *b, xo__bench_workload *w, int c, iter_fn iter, void *st, int warmup,
                        double budget_us, double units_per_iter, double *per_iter_us)
{
    const int is_auto = b->cfg[c].device < 0;
    xo_status s = xo__bench_use_config(b, c);
    for (int i = 0; s == XO_OK && i < warmup; i++) s = iter(b->ctx, st);
    if (s == XO_OK) s = xo_finish(b->ctx);
    if (s == XO_OK && is_auto) s = xo_stats_reset(b->ctx);
    double t0 = xo_clock_us(b->ctx), spent = 0;
    int iters = 0;
    while (s == XO_OK && (iters < 1 || spent < budget_us)) {
        s = iter(b->ctx, st);
        iters++;
        spent = xo_clock_us(b->ctx) - t0;
    }
    if (s == XO_OK) s = xo_finish(b->ctx);
    spent = xo_clock_us(b->ctx) - t0;
    if (s != XO_OK) {
        fprintf(stderr, "%sxo: bench: workload %s on %s: %s: %s\n", isatty(2) ? "\n" : "", w->name, b->cfg[c].spec,
                xo_status_string(s), xo_last_error());
        return 0.0;
    }
    if (is_auto)
        for (int d = 0; d < xo_device_count(b->ctx) && d < XO_MAX_DEVICES; d++) {
            xo_stats stats;
            if (xo_stats_get(b->ctx, d, &stats) == XO_OK) w->auto_ops[d] += stats.ops;
        }
    *per_iter_us = spent / iters;
    return spent > 0 ? (double)iters * units_per_iter / (spent * 1e-6) : 0.0;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, c = *(const double *)y;
    return (a > c) - (a < c);
}

/* Median of n > 0 values (sorts them); `geo`: the geometric mean of the middle two when n
 * is even (for ratios), else their mean. */
static double median_of(double *v, int n, int geo)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    if (n % 2) return v[n / 2];
    return geo ? sqrt(v[n / 2 - 1] * v[n / 2]) : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static xo__bench_workload *new_workload(xo__bench *b, const char *name, const char *unit, const char *note)
{
    if (b->nworkloads >= XO_BENCH_MAX_WORKLOADS) return NULL;
    xo__bench_workload *w = &b->workloads[b->nworkloads++];
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, "%s", name);
    snprintf(w->unit, sizeof w->unit, "%s", unit);
    snprintf(w->note, sizeof w->note, "%s", note);
    w->best = -1;
    return w;
}

/* Time `iter` under every config: `budget_us` of timed iterations per config, spread over
 * the rounds. Round 0 runs `warmup` untimed iterations per config (one-time costs: kernel
 * builds, first touch) and sizes its stride from the time per iteration; later rounds one
 * untimed iteration after the switch. A config whose round (untimed + one timed iteration)
 * fits in `stride` shares of the budget samples every stride-th round (at least
 * WL_MIN_SAMPLED_ROUNDS), one whose minimum would take more than 3x its budget only round 0.
 * Fills w->rate (median over the config's rounds), w->best (highest median rate among the
 * forced devices) and w->auto_over_best (median over the rounds both sampled of auto's rate
 * over best's within the round). */
/* A slice of the CBLAS twin or of the plan: `warmup` untimed iterations, then timed ones
 * until `budget_us` is spent (then xo_finish, as the placements' slices end), by
 * xo_clock_us(clock): the plan's on its context (a simulated machine's under XO_SIMULATE),
 * the twin's on the real one (NULL: CBLAS never leaves this machine). Its rate, 0 on
 * failure (said on stderr). */
static double run_other_slice(xo__bench *b, const xo__bench_workload *w, const char *what, xo_context *clock,
                              iter_fn fn, void *st, int warmup, double budget_us, double units)
{
    xo_status s = XO_OK;
    for (int i = 0; s == XO_OK && i < warmup; i++) s = fn(b->ctx, st);
    double t0 = xo_clock_us(clock), spent = 0;
    int iters = 0;
    while (s == XO_OK && (iters < 1 || spent < budget_us)) {
        s = fn(b->ctx, st);
        iters++;
        spent = xo_clock_us(clock) - t0;
    }
    if (s == XO_OK) s = xo_finish(b->ctx);
    spent = xo_clock_us(clock) - t0;
    if (s != XO_OK) {
        fprintf(stderr, "%sxo: bench: workload %s as %s: %s: %s\n", isatty(2) ? "\n" : "", w->name, what,
                xo_status_string(s), xo_last_error());
        return 0.0;
    }
    return spent > 0 ? (double)iters * units / (spent * 1e-6) : 0.0;
}

/* A workload's other forms: the same program in plain CBLAS (twin, state twin_st), that
 * program as tuned C (tuned, on twin_st: bench.h) and as a plan (plan_iter, state plan_st,
 * captured by wl_plan_check); NULL: none. */
typedef struct wl_forms {
    iter_fn twin;
    void *twin_st;
    iter_fn plan_iter;
    void *plan_st;
    iter_fn tuned;
} wl_forms;

#ifdef XO_BENCH_HAS_TUNED
#define WL_TUNED(fn) fn##_tuned
#else
#define WL_TUNED(fn) NULL
#endif

/* Median over the rounds where both are sampled of num[r] / den[r]; 0: no such round. */
static double paired_ratio(const double *num, const double *den, int rounds);

/* OpenBLAS's threads spin for their next call for about 0.1 s after each (its
 * OPENBLAS_THREAD_TIMEOUT), on the cores the CPU plugin's pool needs; a crossover form timed
 * right after the CBLAS twins ran at their mercy: rnn-train-b100's plan, whose products run
 * on the pool, at 501-605 it/s where the same plan alone (xo_programs rnn 100 --plan) and
 * the eager forms later in the round ran 680-740. Each form is timed as a program of its
 * own would run, so the twins' threads are let go to sleep first. */
#define WL_BLAS_SETTLE_NS 150000000L
static void settle_after_openblas(void)
{
    struct timespec ts = {0, WL_BLAS_SETTLE_NS};
    nanosleep(&ts, NULL);
}

/* The CBLAS twin (and its tuned build) and the plan are timed in every round beside the
 * placements, for auto / CBLAS, plan / eager (auto), plan / CBLAS and plan / tuned C. */
static void run_all_configs(xo__bench *b, xo__bench_workload *w, iter_fn iter, void *st, int warmup,
                            double budget_us, double units, const wl_forms *fm)
{
    if (!w) return;
    const int rounds = b->quick ? WL_ROUNDS_QUICK : WL_ROUNDS_FULL, au = xo__bench_auto(b), tty = isatty(2);
    int max_stride = 1;
    while (max_stride * 2 < rounds && (rounds + max_stride * 2 - 1) / (max_stride * 2) >= WL_MIN_SAMPLED_ROUNDS)
        max_stride *= 2;
    wl_config cf[XO_BENCH_MAX_CONFIGS];
    memset(cf, 0, sizeof cf);
    double twin_rate[XO_BENCH_MAX_ROUNDS] = {0}, plan_rate[XO_BENCH_MAX_ROUNDS] = {0};
    double tuned_rate[XO_BENCH_MAX_ROUNDS] = {0};
    const int has_twin = fm && fm->twin && fm->twin_st, has_tuned = has_twin && fm->tuned;
    int has_plan = fm && fm->plan_iter && fm->plan_st && w->plan_check == XO_BENCH_PLAN_OK;
    for (int round = 0; round < rounds; round++) {
        if (has_twin)
            twin_rate[round] =
                run_other_slice(b, w, "plain CBLAS", NULL, fm->twin, fm->twin_st, round == 0 ? warmup : 1, budget_us / rounds, units);
        if (has_tuned)
            tuned_rate[round] = run_other_slice(b, w, "tuned C", NULL, fm->tuned, fm->twin_st, round == 0 ? warmup : 1,
                                                budget_us / rounds, units);
        if (has_twin)
            settle_after_openblas();
        /* the plan samples the rounds auto samples (a slow workload's auto every 2nd, 4th
         * round: bench_workloads.c's strides), so that plan/eager pairs every round it can */
        if (has_plan && (round == 0 || !cf[au].stride || round % cf[au].stride == 0)) {
            xo__bench_use_config(b, au); /* placed at capture; a re-placement would use auto */
            /* warm-up in round 0 only: a plan's placement is fixed and its buffers its own */
            plan_rate[round] = run_other_slice(b, w, "a plan", b->ctx, fm->plan_iter, fm->plan_st, round == 0 ? warmup : 0,
                                               budget_us / rounds, units);
            if (plan_rate[round] <= 0) {
                w->plan_check = XO_BENCH_PLAN_ERROR;
                has_plan = 0;
            }
        }
        int order[XO_BENCH_MAX_CONFIGS];
        xo__bench_round_order(b->nconfigs, round + b->nworkloads, order);
        for (int k = 0; k < b->nconfigs; k++) {
            int c = order[k];
            wl_config *x = &cf[c];
            if (x->failed || (x->stride && round % x->stride)) continue;
            if (tty)
                fprintf(stderr, "\r\033[K[workload] %s on %s (round %d/%d)", w->name, b->cfg[c].spec, round + 1, rounds);
            else if (round == 0)
                fprintf(stderr, "[workload] %s on %s\n", w->name, b->cfg[c].spec);
            fflush(stderr);
            const int sampled = x->stride ? (rounds + x->stride - 1) / x->stride : rounds;
            double per_iter = 0;
            double rate = run_slice(b, w, c, iter, st, round == 0 ? warmup : 1, budget_us / sampled, units, &per_iter);
            if (rate <= 0) {
                x->failed = 1;
                continue;
            }
            x->rate[round] = rate;
            if (!x->stride) {
                const double cost = 2 * per_iter; /* a round: the untimed iteration and one timed */
                if (WL_MIN_SAMPLED_ROUNDS * cost > 3 * budget_us) {
                    x->stride = rounds;
                } else {
                    x->stride = 1;
                    while (x->stride < max_stride && cost > x->stride * budget_us / rounds) x->stride *= 2;
                }
            }
        }
    }
    for (int c = 0; c < b->nconfigs; c++) {
        double v[XO_BENCH_MAX_ROUNDS];
        int n = 0;
        for (int r = 0; r < rounds; r++)
            if (cf[c].rate[r] > 0) v[n++] = cf[c].rate[r];
        w->rate[c] = cf[c].failed || n == 0 ? 0.0 : median_of(v, n, 0);
        if (c < au && w->rate[c] > 0 && (w->best < 0 || w->rate[c] > w->rate[w->best])) w->best = c;
    }
    if (w->best >= 0 && w->rate[au] > 0) {
        double q[XO_BENCH_MAX_ROUNDS];
        int n = 0;
        for (int r = 0; r < rounds; r++)
            if (cf[au].rate[r] > 0 && cf[w->best].rate[r] > 0) q[n++] = cf[au].rate[r] / cf[w->best].rate[r];
        w->auto_over_best = n ? median_of(q, n, 1) : w->rate[au] / w->rate[w->best];
        /* q is sorted now: its quartiles show how far the rounds spread */
        w->auto_over_best_q1 = n ? q[n / 4] : w->auto_over_best;
        w->auto_over_best_q3 = n ? q[(3 * n) / 4 < n ? (3 * n) / 4 : n - 1] : w->auto_over_best;
    }
    double v[XO_BENCH_MAX_ROUNDS], p[XO_BENCH_MAX_ROUNDS], t[XO_BENCH_MAX_ROUNDS];
    int nv = 0, np = 0, nt = 0;
    for (int r = 0; r < rounds; r++) {
        if (twin_rate[r] > 0) v[nv++] = twin_rate[r];
        if (plan_rate[r] > 0) p[np++] = plan_rate[r];
        if (tuned_rate[r] > 0) t[nt++] = tuned_rate[r];
    }
    w->cblas_rate = nv ? median_of(v, nv, 0) : 0.0;
    w->tuned_rate = nt ? median_of(t, nt, 0) : 0.0;
    w->auto_over_cblas = paired_ratio(cf[au].rate, twin_rate, rounds);
    if (w->plan_check == XO_BENCH_PLAN_OK) {
        w->plan_rate = np ? median_of(p, np, 0) : 0.0;
        w->plan_over_eager = paired_ratio(plan_rate, cf[au].rate, rounds);
        w->plan_over_cblas = paired_ratio(plan_rate, twin_rate, rounds);
        w->plan_over_tuned = paired_ratio(plan_rate, tuned_rate, rounds);
    }
}

static double paired_ratio(const double *num, const double *den, int rounds)
{
    double q[XO_BENCH_MAX_ROUNDS];
    int n = 0;
    for (int r = 0; r < rounds; r++)
        if (num[r] > 0 && den[r] > 0) q[n++] = num[r] / den[r];
    return n ? median_of(q, n, 1) : 0.0;
}

/* ---- the plan check -------------------------------------------------------------------- */

typedef xo_status (*capture_fn)(xo_context *ctx, void *st, xo_plan **out);
typedef double (*check_fn)(const void *st);

/* xo_plan_describe's last line ("plan: N ops in M steps, ..."), "" if none. */
static void plan_summary(const xo_plan *plan, char *out, size_t cap)
{
    const size_t size = (size_t)8 << 20; /* a line per step: the neural ODE has thousands */
    char *text = malloc(size);
    out[0] = '\0';
    if (!text) return;
    if (xo_plan_describe(plan, text, size) == XO_OK) {
        size_t n = strlen(text);
        while (n > 0 && text[n - 1] == '\n') text[--n] = '\0';
        const char *last = strrchr(text, '\n');
        last = last ? last + 1 : text;
        if (strncmp(last, "plan:", 5) == 0) snprintf(out, cap, "%s", last);
    }
    free(text);
}

/* Largest relative difference a plan's checked value (the loss) may show against the
 * eager program's after a few iterations: the ops' own tolerance (1e-4 relative, float).
 * Plans that ran other kernels (fused, on PoCL) differed by 1e-7 at most; one that ran
 * the RNN on a stale minibatch by 3.6e-4 at batch 10000 (the loss over 2.56 M elements
 * averages the minibatch out) and 5e-3 at batch 100, so 1e-3 would pass the former. */
#define WL_PLAN_TOL 1e-4

/* Check the plan before timing it: `steps` eager iterations on `eager_st` (fresh, under
 * auto; they also warm it up), then one captured into `plan_st` (a twin of eager_st made
 * the same way) and `steps` runs of it; after each, the checked value of both must agree
 * within WL_PLAN_TOL. Sets w->plan_check (loudly on stderr when not OK), _steps, _rel,
 * _summary. Returns 0, or XO_TOOL_FAIL. */
static int wl_plan_check(xo__bench *b, xo__bench_workload *w, iter_fn iter, void *eager_st, capture_fn capture,
                         iter_fn plan_iter, void *plan_st, check_fn check, int steps)
{
    if (!w || !eager_st || !plan_st) return 0;
    double ev[8], pv[8];
    if (steps > 8) steps = 8;
    xo_status s = xo__bench_use_config(b, xo__bench_auto(b));
    for (int i = 0; s == XO_OK && i < steps; i++) {
        s = iter(b->ctx, eager_st);
        ev[i] = check(eager_st);
    }
    if (s == XO_OK) s = xo_finish(b->ctx);
    if (s != XO_OK) {
        fprintf(stderr, "xo: bench: workload %s: eager check run: %s: %s\n", w->name, xo_status_string(s),
                xo_last_error());
        w->plan_check = XO_BENCH_PLAN_ERROR;
        return XO_TOOL_FAIL;
    }
    xo_plan *plan = NULL;
    s = capture(b->ctx, plan_st, &plan);
    if (s == XO_OK) plan_summary(plan, w->plan_summary, sizeof w->plan_summary);
    for (int i = 0; s == XO_OK && i < steps; i++) {
        s = plan_iter(b->ctx, plan_st);
        pv[i] = check(plan_st);
    }
    if (s == XO_OK) s = xo_finish(b->ctx);
    if (s != XO_OK) {
        fprintf(stderr, "xo: bench: workload %s: FAILED as a plan: %s: %s\n", w->name, xo_status_string(s),
                xo_last_error());
        w->plan_check = XO_BENCH_PLAN_ERROR;
        return XO_TOOL_FAIL;
    }
    w->plan_check_steps = steps;
    w->plan_check_rel = 0;
    int bad = -1;
    for (int i = 0; i < steps; i++) {
        double scale = fabs(ev[i]) > 1e-30 ? fabs(ev[i]) : 1e-30;
        double rel = fabs(pv[i] - ev[i]) / scale;
        if (!(rel <= w->plan_check_rel)) w->plan_check_rel = rel; /* NaN sticks */
        if (bad < 0 && !(rel <= WL_PLAN_TOL)) bad = i;
    }
    if (bad >= 0) {
        fprintf(stderr,
                "xo: bench: workload %s: PLAN DIFFERS FROM EAGER: checked value after iteration %d: eager %.9g, "
                "plan %.9g (relative difference %.3g > %.0e); not timed as a plan\n",
                w->name, bad + 1, ev[bad], pv[bad], fabs(pv[bad] - ev[bad]) / fabs(ev[bad]), WL_PLAN_TOL);
        w->plan_check = XO_BENCH_PLAN_MISMATCH;
        return XO_TOOL_FAIL;
    }
    w->plan_check = XO_BENCH_PLAN_OK;
    return 0;
}

static void setup_failed(const char *name, xo_status s)
{
    fprintf(stderr, "xo: bench: workload %s: setup failed: %s: %s\n", name, xo_status_string(s), xo_last_error());
}

static double rnn_check_value(const void *st) { return xo__bench_rnn_loss(st); }
static double ode_check_value(const void *st) { return xo__bench_ode_loss(st, 0); }

int xo__bench_workloads(xo__bench *b)
{
    const int q = b->quick;
    const double budget = q ? 1e6 : 3e6;
    xo__bench_workload *w;
    xo_status s;
    int rc = 0;

    static const size_t batches[2] = {100, 10000};
    for (int i = 0; i < 2; i++) {
        char name[64], note[128];
        snprintf(name, sizeof name, "rnn-train-b%zu", batches[i]);
        snprintf(note, sizeof note, "tanh RNN h256 in8, BPTT 8 steps + SGD, batch %zu, minibatch in, loss out",
                 batches[i]);
        w = new_workload(b, name, "it/s", note);
        void *r = xo__bench_rnn_new(b->ctx, batches[i], 0), *rt = xo__bench_rnn_new(b->ctx, batches[i], 1),
             *rp = xo__bench_rnn_new(b->ctx, batches[i], 0);
        if (r && rt && rp) {
            /* 2 iterations at batch 10000 (0.25 s each), 3 at batch 100 */
            rc |= wl_plan_check(b, w, xo__bench_rnn_iter, r, xo__bench_rnn_capture, xo__bench_rnn_plan_iter, rp,
                                rnn_check_value, batches[i] > 1000 ? 2 : 3);
            wl_forms fm = {xo__bench_rnn_cblas_iter, rt, xo__bench_rnn_plan_iter, rp,
                           WL_TUNED(xo__bench_rnn_cblas_iter)};
            run_all_configs(b, w, xo__bench_rnn_iter, r, 1, budget, 1.0, &fm);
        } else {
            setup_failed(w->name, XO_ERR_OUT_OF_MEMORY);
        }
        xo__bench_rnn_free(rp);
        xo__bench_rnn_free(r);
        xo__bench_rnn_free(rt);
    }
    {
        w = new_workload(b, "neural-ode-train", "it/s",
                         "3-100-3 tanh MLP RHS, RK4 over 101 points, backprop through every stage, clipping "
                         "on the device, SGD, loss read each iteration; batch 16");
        void *o = xo__bench_ode_new(b->ctx, 0), *oc = xo__bench_ode_new(b->ctx, 1), *op = xo__bench_ode_new(b->ctx, 0);
        if (o && oc && op) {
            rc |= wl_plan_check(b, w, xo__bench_ode_iter, o, xo__bench_ode_capture, xo__bench_ode_plan_iter, op,
                                ode_check_value, 3);
            wl_forms fm = {xo__bench_ode_cblas_iter, oc, xo__bench_ode_plan_iter, op,
                           WL_TUNED(xo__bench_ode_cblas_iter)};
            run_all_configs(b, w, xo__bench_ode_iter, o, 1, budget, 1.0, &fm);
        } else {
            setup_failed(w->name, XO_ERR_OUT_OF_MEMORY);
        }
        xo__bench_ode_free(op, 0);
        xo__bench_ode_free(o, 0);
        xo__bench_ode_free(oc, 1);
    }
    {
        mlp m, mp;
        memset(&mp, 0, sizeof mp);
        w = new_workload(b, "mlp-3-100-3-ode", "it/s", "neural ODE RHS: eval (state in, f out) + 1 train step, batch 100");
        if ((s = mlp_setup(b->ctx, &m)) == XO_OK && (s = mlp_setup(b->ctx, &mp)) == XO_OK) {
            rc |= wl_plan_check(b, w, mlp_iter, &m, mlp_capture, mlp_plan_iter, &mp, mlp_check_value, 3);
            wl_forms fm = {NULL, NULL, mlp_plan_iter, &mp, NULL};
            run_all_configs(b, w, mlp_iter, &m, 3, budget, 1.0, &fm);
        } else {
            setup_failed(w->name, s);
        }
        mlp_free(&mp);
        mlp_free(&m);
    }
    for (int copy = 1; copy >= 0; copy--) {
        gemm200 g;
        w = new_workload(b, copy ? "sgemm200-copy" : "sgemm200-resident", "calls/s",
                         copy ? "200x200 sgemm, A and B written, C read on every call"
                              : "200x200 sgemm, operands resident, xo_finish per call");
        if ((s = gemm200_setup(b->ctx, &g, copy)) == XO_OK)
            run_all_configs(b, w, gemm200_iter, &g, 3, budget, 1.0, NULL);
        else
            setup_failed(w->name, s);
        gemm200_free(&g);
    }
    for (int every = 1; every >= 0; every--) {
        chain c;
        size_t steps = q ? 200 : 1000;
        char note[128];
        snprintf(note, sizeof note, "%zu chained 100x100 sgemm, snrm2 read back %s", steps,
                 every ? "every step" : "once at the end");
        w = new_workload(b, every ? "chain-norm-every-step" : "chain-norm-at-end", "steps/s", note);
        if ((s = chain_setup(b->ctx, &c, steps, every)) == XO_OK)
            run_all_configs(b, w, chain_iter, &c, 1, q ? budget / 2 : budget, (double)steps, NULL);
        else
            setup_failed(w->name, s);
        chain_free(&c);
    }
    if (isatty(2)) fputc('\n', stderr);
    xo_set_device(b->ctx, "auto");
    for (int i = 0; i < b->nworkloads; i++) /* a plan that failed while timed, too */
        rc |= b->workloads[i].plan_check == XO_BENCH_PLAN_MISMATCH || b->workloads[i].plan_check == XO_BENCH_PLAN_ERROR;
    return rc ? XO_TOOL_FAIL : 0;
}
