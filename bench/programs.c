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
 *   [--seconds S]             time budget of the timed part (default 2) */
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
    float loss;
    TRY(xo_buffer_read(m->loss, 0, &loss, sizeof loss));
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
    return isfinite(loss) ? XO_OK : XO_ERR_DEVICE;
}

/* ---- the driver ------------------------------------------------------------------- */

typedef xo_status (*iter_fn)(xo_context *, void *);
static xo_status mlp_iter_v(xo_context *ctx, void *st) { return mlp_iter(ctx, st); }

static int usage(void)
{
    fprintf(stderr, "usage: xo_programs mlp BATCH | rnn BATCH | ode  [--seconds S]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) return usage();
    const char *prog = argv[1];
    size_t batch = 0;
    double seconds = 2.0;
    int a = 2;
    if (strcmp(prog, "mlp") == 0 || strcmp(prog, "rnn") == 0) {
        if (argc < 3 || (batch = strtoul(argv[2], NULL, 10)) == 0) return usage();
        a = 3;
    } else if (strcmp(prog, "ode") != 0) {
        return usage();
    }
    for (; a < argc; a++) {
        if (strcmp(argv[a], "--seconds") == 0 && a + 1 < argc) seconds = atof(argv[++a]);
        else return usage();
    }
    double t0 = xo__now_us();
    xo_context *ctx = NULL;
    xo_status s = xo_context_create(&ctx);
    if (s != XO_OK) {
        fprintf(stderr, "xo_programs: %s\n", xo_last_error());
        return 1;
    }
    double create_ms = (xo__now_us() - t0) * 1e-3;
    mlp m;
    void *st = NULL;
    iter_fn iter = NULL;
    if (prog[0] == 'm') {
        s = mlp_setup(ctx, &m, batch);
        st = &m;
        iter = mlp_iter_v;
    } else if (prog[0] == 'r') {
        st = xo__bench_rnn_new(ctx, batch, 0);
        iter = xo__bench_rnn_iter;
    } else {
        st = xo__bench_ode_new(ctx, 0);
        iter = xo__bench_ode_iter;
    }
    if (s != XO_OK || !st) {
        fprintf(stderr, "xo_programs: setup failed: %s\n", xo_last_error());
        return 1;
    }
    long n = 0;
    if (s == XO_OK) s = iter(ctx, st); /* the first iteration: one-time costs, not timed */
    double start = xo__now_us(), now = start;
    while (s == XO_OK && now - start < seconds * 1e6) {
        s = iter(ctx, st);
        if (s == XO_OK) s = xo_finish(ctx);
        n++;
        now = xo__now_us();
    }
    if (s != XO_OK) {
        fprintf(stderr, "xo_programs: %s failed: %s\n", prog, xo_last_error());
        return 1;
    }
    printf("%s%s%s %.2f it/s (%ld iterations, context create %.0f ms)\n", prog, batch ? " b" : "",
           batch ? argv[2] : "", (double)n / ((now - start) * 1e-6), n, create_ms);
    if (prog[0] == 'm') mlp_free(&m);
    else if (prog[0] == 'r') xo__bench_rnn_free(st);
    else xo__bench_ode_free(st, 0);
    xo_context_destroy(ctx);
    return 0;
}
