/* xo_programs: one user-style program, run for a time budget under the environment it is
 * given (XO_DEVICE, XO_CACHE_DIR, XO_CALIBRATE, ...), as a user's program would run:
 * context creation (and whatever calibration it does) included in the process, not in
 * the rate. Prints one line: `PROGRAM RATE it/s (N iterations, context create MS ms)`.
 * bench/trust_table.sh runs it under every placement and cache situation for the table
 * of docs/placement.md ("Auto against forced devices, run by run").
 *
 *   xo_programs mlp BATCH     784-256-128-10 ReLU MLP, softmax cross-entropy, Adam
 *   xo_programs rnn BATCH     tanh RNN, BPTT over 8 steps, SGD (the bench's, bench_rnn.c)
 *   xo_programs ode           neural ODE, RK4 with backprop (the bench's, bench_ode.c)
 *   [--seconds S]             time budget of the timed part (default 2)
 *   [--paired]                auto and every forced placement in this one process, taking
 *                             turns in 100 ms slices (each its own context and copy of the
 *                             program); S is each placement's share. Prints a line per
 *                             placement and `... paired: auto / best forced (DEVICE) R ...`
 *   [--min-ratio R]           with --paired: exit 1 when auto / best forced (the ratio of
 *                             the totals) is under R (the simulated tests' assertion)
 *   [--plan]                  one iteration captured (xo_capture_begin/end) under the
 *                             placement in force, then run as a plan each iteration */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRY(expr) XO_RETURN_IF_ERROR(expr)
#define RM XO_ROW_MAJOR
#define NT XO_NO_TRANS
#define TR XO_TRANS

/* ---- the MLP with Adam -------------------------------------------------------------- */

enum { IN = 784, H1 = 256, H2 = 128, OUT = 10, LAYERS = 3 };
static const size_t fan_in[LAYERS] = {IN, H1, H2}, fan_out[LAYERS] = {H1, H2, OUT};

typedef struct mlp {
    size_t batch;
    xo_buffer *x, *y;                         /* the minibatch and its one-hot targets */
    xo_buffer *w[LAYERS], *b[LAYERS];         /* parameters */
    xo_buffer *gw[LAYERS], *gb[LAYERS];       /* gradients */
    xo_buffer *mw[LAYERS], *vw[LAYERS], *mb[LAYERS], *vb[LAYERS], *tw[LAYERS], *tb[LAYERS]; /* Adam */
    xo_buffer *a[LAYERS];                     /* activations: relu, relu, softmax */
    xo_buffer *d[LAYERS];                     /* gradients of the pre-activations */
    xo_buffer *da[LAYERS];                    /* gradients of the activations (layers 0, 1) */
    xo_buffer *loss;
    float loss_host; /* the loss read back: here, not on mlp_iter's stack, since a plan
                      * captured from mlp_iter replays the read into the same address */
    int step;
} mlp;

static xo_status filled(xo_context *ctx, size_t n, float scale, uint32_t seed, xo_buffer **out)
{
    float *h = malloc(n * sizeof *h);
    if (!h) return XO_ERR_OUT_OF_MEMORY;
    uint32_t s = seed * 2654435761u + 1u;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        h[i] = scale * ((float)(s >> 8) / (float)(1u << 24) * 2.0f - 1.0f);
    }
    xo_status st = xo_buffer_create(ctx, n * sizeof *h, out);
    if (st == XO_OK) st = xo_buffer_write(*out, 0, h, n * sizeof *h);
    free(h);
    return st;
}

static xo_status mlp_setup(xo_context *ctx, mlp *m, size_t batch)
{
    memset(m, 0, sizeof *m);
    m->batch = batch;
    TRY(filled(ctx, batch * IN, 1.0f, 1, &m->x));
    float *t = calloc(batch * OUT, sizeof *t);
    if (!t) return XO_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < batch; i++) t[i * OUT + i % OUT] = 1.0f;
    xo_status st = xo_buffer_create(ctx, batch * OUT * sizeof *t, &m->y);
    if (st == XO_OK) st = xo_buffer_write(m->y, 0, t, batch * OUT * sizeof *t);
    free(t);
    TRY(st);
    for (int l = 0; l < LAYERS; l++) {
        size_t nw = fan_in[l] * fan_out[l], nb = fan_out[l];
        TRY(filled(ctx, nw, 1.0f / sqrtf((float)fan_in[l]), 10 + (uint32_t)l, &m->w[l]));
        TRY(filled(ctx, nb, 0.0f, 20, &m->b[l]));
        xo_buffer **zw[] = {&m->gw[l], &m->mw[l], &m->vw[l], &m->tw[l]};
        xo_buffer **zb[] = {&m->gb[l], &m->mb[l], &m->vb[l], &m->tb[l]};
        for (int i = 0; i < 4; i++) {
            TRY(filled(ctx, nw, 0.0f, 30, zw[i]));
            TRY(filled(ctx, nb, 0.0f, 30, zb[i]));
        }
        TRY(xo_buffer_create(ctx, batch * fan_out[l] * sizeof(float), &m->a[l]));
        TRY(xo_buffer_create(ctx, batch * fan_out[l] * sizeof(float), &m->d[l]));
        TRY(xo_buffer_create(ctx, batch * fan_out[l] * sizeof(float), &m->da[l]));
    }
    return xo_buffer_create(ctx, sizeof(float), &m->loss);
}

static void mlp_free(mlp *m)
{
    xo_buffer *all[] = {m->x, m->y, m->loss};
    for (int i = 0; i < 3; i++) xo_buffer_destroy(all[i]);
    for (int l = 0; l < LAYERS; l++) {
        xo_buffer *per[] = {m->w[l], m->b[l], m->gw[l], m->gb[l], m->mw[l], m->vw[l], m->mb[l],
                            m->vb[l], m->tw[l], m->tb[l], m->a[l], m->d[l], m->da[l]};
        for (int i = 0; i < 13; i++) xo_buffer_destroy(per[i]);
    }
}

/* Adam on one parameter buffer (the 7 ops of bench/fused.c). */
static xo_status adam(xo_context *ctx, size_t n, xo_buffer *p, xo_buffer *g, xo_buffer *mo, xo_buffer *v,
                      xo_buffer *t, int step)
{
    const float b1 = 0.9f, b2 = 0.999f, lr = 1e-3f, eps = 1e-8f;
    float c2 = sqrtf(1.0f - powf(b2, (float)step)), k = lr * c2 / (1.0f - powf(b1, (float)step));
    TRY(xo_saxpby(ctx, n, 1 - b1, g, 0, 1, b1, mo, 0, 1));
    TRY(xo_sbinary(ctx, XO_MUL, n, g, 0, g, 0, t, 0));
    TRY(xo_saxpby(ctx, n, 1 - b2, t, 0, 1, b2, v, 0, 1));
    TRY(xo_sunary(ctx, XO_SQRT, n, v, 0, t, 0));
    TRY(xo_sbinary_scalar(ctx, XO_ADD, n, t, 0, eps * c2, t, 0));
    TRY(xo_sbinary(ctx, XO_DIV, n, mo, 0, t, 0, t, 0));
    return xo_saxpy(ctx, n, -k, t, 0, 1, p, 0, 1);
}

/* One training step: forward, softmax cross-entropy (its loss read back), backward, Adam. */
static xo_status mlp_iter(xo_context *ctx, mlp *m)
{
    size_t B = m->batch;
    xo_buffer *in = m->x;
    for (int l = 0; l < LAYERS; l++) {
        TRY(xo_sgemm_bias_act(ctx, RM, NT, NT, B, fan_out[l], fan_in[l], 1.0f, in, 0, fan_in[l], m->w[l], 0,
                              fan_out[l], 0.0f, m->a[l], 0, fan_out[l], m->b[l], 0,
                              l + 1 < LAYERS ? XO_RELU : XO_IDENTITY));
        in = m->a[l];
    }
    TRY(xo_ssoftmax(ctx, XO_SOFTMAX, B, OUT, m->a[2], 0, OUT, m->a[2], 0, OUT));
    /* dlogits = (p - y) / B; the loss proxy: its sum of squares */
    TRY(xo_sbinary(ctx, XO_SUB, B * OUT, m->a[2], 0, m->y, 0, m->d[2], 0));
    TRY(xo_sscal(ctx, B * OUT, 1.0f / (float)B, m->d[2], 0, 1));
    TRY(xo_snrm2(ctx, B * OUT, m->d[2], 0, 1, m->loss, 0));
    TRY(xo_buffer_read(m->loss, 0, &m->loss_host, sizeof m->loss_host));
    for (int l = LAYERS - 1; l >= 0; l--) {
        xo_buffer *prev = l ? m->a[l - 1] : m->x;
        TRY(xo_sgemm(ctx, RM, TR, NT, fan_in[l], fan_out[l], B, 1.0f, prev, 0, fan_in[l], m->d[l], 0, fan_out[l],
                     0.0f, m->gw[l], 0, fan_out[l]));
        TRY(xo_sreduce_axis(ctx, XO_SUM, B, fan_out[l], m->d[l], 0, fan_out[l], 0, m->gb[l], 0));
        if (l == 0) break;
        /* d[l-1] = (d[l] W^T) * relu'(a[l-1]) */
        TRY(xo_sgemm(ctx, RM, NT, TR, B, fan_in[l], fan_out[l], 1.0f, m->d[l], 0, fan_out[l], m->w[l], 0,
                     fan_out[l], 0.0f, m->da[l - 1], 0, fan_in[l]));
        TRY(xo_sunary(ctx, XO_RELU_GRAD, B * fan_in[l], m->a[l - 1], 0, m->d[l - 1], 0));
        TRY(xo_sbinary(ctx, XO_MUL, B * fan_in[l], m->da[l - 1], 0, m->d[l - 1], 0, m->d[l - 1], 0));
    }
    m->step++;
    for (int l = 0; l < LAYERS; l++) {
        TRY(adam(ctx, fan_in[l] * fan_out[l], m->w[l], m->gw[l], m->mw[l], m->vw[l], m->tw[l], m->step));
        TRY(adam(ctx, fan_out[l], m->b[l], m->gb[l], m->mb[l], m->vb[l], m->tb[l], m->step));
    }
    return isfinite(m->loss_host) ? XO_OK : XO_ERR_DEVICE;
}

/* ---- the driver ------------------------------------------------------------------- */

typedef xo_status (*iter_fn)(xo_context *, void *);
static xo_status mlp_iter_v(xo_context *ctx, void *st) { return mlp_iter(ctx, st); }

/* One instance of the program on a context: its own buffers, its own state. */
typedef struct program {
    char name;     /* 'm', 'r' or 'o' */
    size_t batch;
    mlp m;
    void *st;
    iter_fn iter;
    xo_plan *plan; /* --plan: one iteration captured, run as a plan */
} program;

static xo_status plan_iter(xo_context *ctx, void *st)
{
    (void)ctx;
    return xo_plan_run(st);
}

/* --plan: the next iteration captured (under the placement in force), then the program
 * is that plan, run once per iteration (its first run places it: not timed). */
static xo_status program_capture(xo_context *ctx, program *p)
{
    xo_status s = xo_capture_begin(ctx);
    if (s != XO_OK) return s;
    s = p->iter(ctx, p->st);
    xo_status e = xo_capture_end(ctx, &p->plan);
    if (s == XO_OK) s = e;
    if (s != XO_OK) return s;
    s = xo_plan_run(p->plan);
    return s == XO_OK ? xo_finish(ctx) : s;
}

static xo_status program_new(xo_context *ctx, char name, size_t batch, program *p)
{
    memset(p, 0, sizeof *p);
    p->name = name;
    p->batch = batch;
    xo_status s = XO_OK;
    if (name == 'm') {
        s = mlp_setup(ctx, &p->m, batch);
        p->st = &p->m;
        p->iter = mlp_iter_v;
    } else if (name == 'r') {
        p->st = xo__bench_rnn_new(ctx, batch, 0);
        p->iter = xo__bench_rnn_iter;
    } else {
        p->st = xo__bench_ode_new(ctx, 0);
        p->iter = xo__bench_ode_iter;
    }
    if (s == XO_OK && !p->st) s = XO_ERR_OUT_OF_MEMORY;
    if (s == XO_OK) s = p->iter(ctx, p->st); /* the first iteration: one-time costs, not timed */
    if (s == XO_OK) s = xo_finish(ctx);
    return s;
}

static void program_free(program *p)
{
    xo_plan_destroy(p->plan);
    if (p->name == 'm') mlp_free(&p->m);
    else if (p->name == 'r' && p->st) xo__bench_rnn_free(p->st);
    else if (p->st) xo__bench_ode_free(p->st, 0);
}

/* Iterations (each ending in xo_finish) until `us` microseconds have passed; at least one. */
static xo_status program_run(xo_context *ctx, program *p, double us, long *iters, double *spent_us)
{
    xo_status s = XO_OK;
    double start = xo_clock_us(ctx), now = start; /* the simulated machine's under XO_SIMULATE */
    long n = 0;
    do {
        s = p->iter(ctx, p->st);
        if (s == XO_OK) s = xo_finish(ctx);
        n++;
        now = xo_clock_us(ctx);
    } while (s == XO_OK && now - start < us);
    *iters += n;
    *spent_us += now - start;
    return s;
}

/* --paired: auto and every forced placement in one process, taking turns in slices of
 * about SLICE_MS, so that a slow spell of the machine falls on all of them alike. Each
 * placement is its own context with its own copy of the program, as if it were its own
 * process: auto's context is created first (it meets the cache as the environment left
 * it, and pays whatever that costs at creation), the forced ones after it. */
enum { MAX_PLACEMENTS = 8 };
#define SLICE_MS 100.0

static int paired(char name, size_t batch, const char *label, double seconds, double min_ratio,
                  double min_plan_ratio)
{
    xo_context *ctx[MAX_PLACEMENTS] = {0};
    program prog[MAX_PLACEMENTS];
    char spec[MAX_PLACEMENTS][16];
    long iters[MAX_PLACEMENTS] = {0};
    double spent[MAX_PLACEMENTS] = {0}, create_ms[MAX_PLACEMENTS] = {0};
    int np = 0, rc = 1, made = 0, under = 0;
    const char *env = getenv("XO_DEVICE");
    if (env && *env && strcmp(env, "auto") != 0) {
        fprintf(stderr, "xo_programs: --paired places by itself; unset XO_DEVICE\n");
        return 2;
    }
    /* auto first, then one forced placement per plugin among its devices */
    strcpy(spec[np++], "auto");
    double t0 = xo__now_us();
    if (xo_context_create(&ctx[0]) != XO_OK) goto fail;
    create_ms[0] = (xo__now_us() - t0) * 1e-3;
    for (int d = 0; d < xo_device_count(ctx[0]) && np < MAX_PLACEMENTS; d++) {
        xo_device_info info;
        if (xo_device_get_info(ctx[0], d, &info) != XO_OK) goto fail;
        int seen = 0;
        for (int i = 1; i < np; i++) seen |= strcmp(spec[i], info.plugin) == 0;
        if (!seen) snprintf(spec[np++], sizeof spec[0], "%s", info.plugin);
    }
    for (int i = 1; i < np; i++) {
        t0 = xo__now_us();
        if (xo_context_create(&ctx[i]) != XO_OK || xo_set_device(ctx[i], spec[i]) != XO_OK) goto fail;
        create_ms[i] = (xo__now_us() - t0) * 1e-3;
    }
    for (; made < np; made++)
        if (program_new(ctx[made], name, batch, &prog[made]) != XO_OK) {
            made++;
            goto fail;
        }
    /* Turns: every placement one slice per round, the first placement of a round moving
     * along each round; until every placement has had `seconds`. Each round's rates are
     * kept: the run's ratio is the median over its rounds of auto's rate over the best
     * forced placement's (best over the whole run), as xo bench's workloads do, so a
     * hiccup of the machine in one slice does not decide the run. */
    enum { MAX_ROUNDS = 4096 };
    static double rates[MAX_ROUNDS][MAX_PLACEMENTS]; /* -1: sat out that round */
    double ratios[MAX_ROUNDS];
    int rounds = 0;
    for (int done = 0; !done && rounds < MAX_ROUNDS; rounds++) {
        for (int k = 0; k < np; k++) {
            int i = (k + rounds) % np;
            rates[rounds][i] = -1;
            if (i && spent[i] >= seconds * 1e6 && spent[0] < seconds * 1e6)
                continue; /* a forced placement that has had its time sits out (a slow device's
                           * single iteration can take seconds) while auto has not */
            long n0 = iters[i];
            double s0 = spent[i];
            if (program_run(ctx[i], &prog[i], SLICE_MS * 1e3, &iters[i], &spent[i]) != XO_OK) goto fail;
            rates[rounds][i] = (double)(iters[i] - n0) / (spent[i] - s0);
        }
        done = 1;
        for (int i = 0; i < np; i++) done &= spent[i] >= seconds * 1e6;
    }
    double best = 0;
    int besti = 0;
    for (int i = 0; i < np; i++) {
        double r = (double)iters[i] / (spent[i] * 1e-6);
        printf("%s %s %.2f it/s (%ld iterations, context create %.0f ms)\n", label, spec[i], r, iters[i],
               create_ms[i]);
        if (i && r > best) best = r, besti = i;
    }
    int nr = 0; /* the rounds in which auto and the best forced placement both ran */
    for (int r = 0; r < rounds; r++)
        if (rates[r][0] >= 0 && rates[r][besti] > 0) ratios[nr++] = rates[r][0] / rates[r][besti];
    for (int a = 1; a < nr; a++) /* insertion sort: a few dozen rounds */
        for (int b = a; b > 0 && ratios[b] < ratios[b - 1]; b--) {
            double t = ratios[b];
            ratios[b] = ratios[b - 1];
            ratios[b - 1] = t;
        }
    /* where auto ran its ops: the share on the best forced placement's device */
    uint64_t all = 0, there = 0, ops[XO_MAX_DEVICES] = {0};
    int bestdev = -1, ndev = xo_device_count(ctx[0]);
    if (xo_device_find(ctx[0], spec[besti], &bestdev) != XO_OK) goto fail;
    for (int d = 0; d < ndev; d++) {
        xo_stats st;
        if (xo_stats_get(ctx[0], d, &st) != XO_OK) goto fail;
        all += ops[d] = st.ops;
        if (d == bestdev) there = st.ops;
    }
    printf("%s auto's ops by device:", label);
    for (int d = 0; d < ndev; d++) {
        xo_device_info in;
        if (xo_device_get_info(ctx[0], d, &in) != XO_OK) goto fail;
        printf(" %s %.1f%%", in.plugin, all ? 100.0 * (double)ops[d] / (double)all : 0.0);
    }
    printf("\n");
    printf("%s paired: auto / best forced (%s) %.3f over %d rounds of %.0f ms slices; "
           "per round: median %.3f, quartiles %.3f-%.3f; auto ran %.1f%% of its ops there\n",
           label, spec[besti], (double)iters[0] / (spent[0] * 1e-6) / best, rounds, SLICE_MS,
           nr ? ratios[nr / 2] : 0.0, nr ? ratios[nr / 4] : 0.0, nr ? ratios[(3 * nr) / 4] : 0.0,
           all ? 100.0 * (double)there / (double)all : 0.0);
    rc = 0;
    if ((double)iters[0] / (spent[0] * 1e-6) / best < min_ratio) {
        fprintf(stderr, "xo_programs: %s: auto / best forced %.3f is under %.3f\n", label,
                (double)iters[0] / (spent[0] * 1e-6) / best, min_ratio);
        under = 1;
    }
    if (min_plan_ratio > 0) {
        rc = 1;
        long pn = 0;
        double pspent = 0;
        if (program_capture(ctx[0], &prog[0]) != XO_OK) goto fail;
        program q = prog[0]; /* the plan runs on auto's program's buffers */
        q.iter = plan_iter;
        q.st = prog[0].plan;
        if (program_run(ctx[0], &q, seconds * 1e6, &pn, &pspent) != XO_OK) goto fail;
        double pr = (double)pn / (pspent * 1e-6);
        printf("%s plan (auto) %.2f it/s (%ld iterations); plan / best forced eager (%s) %.3f\n", label, pr, pn,
               spec[besti], pr / best);
        rc = 0;
        if (pr / best < min_plan_ratio) {
            fprintf(stderr, "xo_programs: %s: plan / best forced eager %.3f is under %.3f\n", label, pr / best,
                    min_plan_ratio);
            under = 1;
        }
    }
fail:
    if (rc) fprintf(stderr, "xo_programs: %s\n", xo_last_error());
    for (int i = 0; i < made; i++) program_free(&prog[i]);
    /* forced contexts go first: auto's is the one whose profile updates are kept last */
    for (int i = np - 1; i >= 0; i--) xo_context_destroy(ctx[i]);
    return rc ? rc : under;
}

static int usage(void)
{
    fprintf(stderr, "usage: xo_programs mlp BATCH | rnn BATCH | ode  [--seconds S] [--paired [--min-ratio R] [--min-plan-ratio R] | --plan]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) return usage();
    const char *name = argv[1];
    size_t batch = 0;
    double seconds = 2.0, min_ratio = 0.0, min_plan_ratio = 0.0;
    int a = 2, pair = 0, plan = 0;
    if (strcmp(name, "mlp") == 0 || strcmp(name, "rnn") == 0) {
        if (argc < 3 || (batch = strtoul(argv[2], NULL, 10)) == 0) return usage();
        a = 3;
    } else if (strcmp(name, "ode") != 0) {
        return usage();
    }
    for (; a < argc; a++) {
        if (strcmp(argv[a], "--seconds") == 0 && a + 1 < argc) seconds = atof(argv[++a]);
        else if (strcmp(argv[a], "--paired") == 0) pair = 1;
        else if (strcmp(argv[a], "--plan") == 0) plan = 1;
        else if (strcmp(argv[a], "--min-ratio") == 0 && a + 1 < argc) min_ratio = atof(argv[++a]);
        else if (strcmp(argv[a], "--min-plan-ratio") == 0 && a + 1 < argc) min_plan_ratio = atof(argv[++a]);
        else return usage();
    }
    char label[32];
    snprintf(label, sizeof label, "%s%s%s", name, batch ? " b" : "", batch ? argv[2] : "");
    if (pair && plan) return usage();
    if (!pair && (min_ratio > 0 || min_plan_ratio > 0)) return usage();
    if (pair) return paired(name[0], batch, label, seconds, min_ratio, min_plan_ratio);

    double t0 = xo__now_us();
    xo_context *ctx = NULL;
    xo_status s = xo_context_create(&ctx);
    if (s != XO_OK) {
        fprintf(stderr, "xo_programs: %s\n", xo_last_error());
        return 1;
    }
    double create_ms = (xo__now_us() - t0) * 1e-3;
    program p;
    long n = 0;
    double spent = 0;
    s = program_new(ctx, name[0], batch, &p);
    if (s == XO_OK && plan) s = program_capture(ctx, &p);
    if (s == XO_OK && plan) {
        program q = p; /* the plan runs on the program's buffers */
        q.iter = plan_iter;
        q.st = p.plan;
        s = program_run(ctx, &q, seconds * 1e6, &n, &spent);
    } else if (s == XO_OK) {
        s = program_run(ctx, &p, seconds * 1e6, &n, &spent);
    }
    if (s != XO_OK) {
        fprintf(stderr, "xo_programs: %s failed: %s\n", name, xo_last_error());
        program_free(&p);
        xo_context_destroy(ctx);
        return 1;
    }
    printf("%s%s %.2f it/s (%ld iterations, context create %.0f ms)\n", label, plan ? " plan" : "",
           (double)n / (spent * 1e-6), n, create_ms);
    program_free(&p);
    xo_context_destroy(ctx);
    return 0;
}
