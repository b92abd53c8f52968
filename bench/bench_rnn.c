/* xo bench, a real program: a tanh RNN (hidden 256, input 8) trained with BPTT over 8
 * steps and SGD, at batch 100 and 10000, written with crossover and with plain CBLAS and
 * timed in the same run. Every iteration writes a new minibatch (one of four, as a data
 * loader would hand them out) and reads the loss back. As a plan (xo__bench_rnn_capture):
 * the same step recorded once, the minibatch taken in by a recorded write from a host
 * array the loop fills before each run, the loss given out by a recorded read. */
#include "bench.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TRY(expr) XO_RETURN_IF_ERROR(expr)
#define RM XO_ROW_MAJOR
#define NT XO_NO_TRANS
#define TR XO_TRANS
#define MINIBATCHES 4

enum { R_X, R_TARGET, R_WX, R_WH, R_B, R_DWX, R_DWH, R_DB, R_HS, R_DH, R_DZ, R_DBT, R_LOSS, R_N };

typedef struct rnn {
    size_t B, H, IN, T;
    float lr, loss;
    int cblas;
    unsigned step;
    float *batches[MINIBATCHES]; /* the host's minibatches, T x B x IN each */
    float *inbox;                /* plan: the minibatch of the next run (the recorded write's src) */
    xo_plan *plan;               /* plan: the step, recorded */
    xo_buffer *buf[R_N];         /* crossover */
    float *h[R_N];               /* plain CBLAS */
} rnn;

#ifndef XO_BENCH_TUNED /* the twin alone there (bench.h) */
static size_t rnn_elems(const rnn *r, int id, float *scale, float *c)
{
    size_t B = r->B, H = r->H, IN = r->IN, T = r->T;
    *scale = 0, *c = 0;
    switch (id) {
    case R_X: *scale = 1.0f; return T * B * IN;
    case R_TARGET: *scale = 0.5f; return B * H;
    case R_WX: *scale = 0.3f; return IN * H;
    case R_WH: *scale = 1.0f / 16.0f; return H * H;
    case R_B: *scale = 0.1f; return H;
    case R_DWX: return IN * H;
    case R_DWH: return H * H;
    case R_DB: case R_DBT: return H;
    case R_HS: return (T + 1) * B * H;
    case R_LOSS: return 1;
    default: return B * H; /* dh, dz */
    }
}

static void fill(float *h, size_t n, float scale, float c, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 7u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        h[i] = scale != 0.0f ? scale * ((float)(x >> 8) / (float)(1u << 24) * 2.0f - 1.0f) : c;
    }
}

void xo__bench_rnn_free(void *st)
{
    rnn *r = st;
    if (!r) return;
    xo_plan_destroy(r->plan);
    free(r->inbox);
    for (int i = 0; i < R_N; i++) {
        xo_buffer_destroy(r->buf[i]);
        free(r->h[i]);
    }
    for (int i = 0; i < MINIBATCHES; i++) free(r->batches[i]);
    free(r);
}

void *xo__bench_rnn_new(xo_context *ctx, size_t batch, int cblas)
{
    rnn *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->B = batch, r->H = 256, r->IN = 8, r->T = 8, r->cblas = cblas;
    r->lr = 1e-3f / (float)batch;
    int ok = 1;
    for (int i = 0; ok && i < MINIBATCHES; i++) {
        size_t n = r->T * r->B * r->IN;
        ok = (r->batches[i] = malloc(n * sizeof(float))) != NULL;
        if (ok) fill(r->batches[i], n, 1.0f, 0, 100u + (uint32_t)i);
    }
    for (int i = 0; ok && i < R_N; i++) {
        float scale, c;
        size_t n = rnn_elems(r, i, &scale, &c);
        float *h = malloc(n * sizeof *h);
        ok = h != NULL;
        if (!ok) break;
        fill(h, n, scale, c, (uint32_t)i + 11u);
        if (cblas) {
            r->h[i] = h;
            continue;
        }
        ok = xo_buffer_create(ctx, n * sizeof *h, &r->buf[i]) == XO_OK &&
             xo_buffer_write(r->buf[i], 0, h, n * sizeof *h) == XO_OK;
        free(h);
    }
    if (!ok) {
        xo__bench_rnn_free(r);
        return NULL;
    }
    return r;
}

/* One training iteration: minibatch `x` in, forward over T steps, loss out, BPTT, SGD. */
static xo_status rnn_step(xo_context *ctx, rnn *r, const float *x)
{
    xo_buffer **bf = r->buf;
    size_t B = r->B, H = r->H, IN = r->IN, T = r->T, BH = B * H;
    TRY(xo_buffer_write(bf[R_X], 0, x, T * B * IN * sizeof(float)));
    for (size_t t = 1; t <= T; t++) {
        TRY(xo_sgemm(ctx, RM, NT, NT, B, H, IN, 1.0f, bf[R_X], (t - 1) * B * IN, IN, bf[R_WX], 0, H, 0.0f,
                     bf[R_HS], t * BH, H));
        /* h_t = tanh(x_t Wx + h_{t-1} Wh + b): the second product, the bias and tanh in one pass */
        TRY(xo_sgemm_bias_act(ctx, RM, NT, NT, B, H, H, 1.0f, bf[R_HS], (t - 1) * BH, H, bf[R_WH], 0, H, 1.0f,
                              bf[R_HS], t * BH, H, bf[R_B], 0, XO_TANH));
    }
    TRY(xo_sbinary(ctx, XO_SUB, BH, bf[R_HS], T * BH, bf[R_TARGET], 0, bf[R_DH], 0));
    TRY(xo_snrm2(ctx, BH, bf[R_DH], 0, 1, bf[R_LOSS], 0));
    for (size_t t = T; t >= 1; t--) {
        float beta = t == T ? 0.0f : 1.0f;
        TRY(xo_sunary(ctx, XO_TANH_GRAD, BH, bf[R_HS], t * BH, bf[R_DZ], 0));
        TRY(xo_sbinary(ctx, XO_MUL, BH, bf[R_DZ], 0, bf[R_DH], 0, bf[R_DZ], 0));
        TRY(xo_sgemm(ctx, RM, TR, NT, IN, H, B, 1.0f, bf[R_X], (t - 1) * B * IN, IN, bf[R_DZ], 0, H, beta,
                     bf[R_DWX], 0, H));
        TRY(xo_sgemm(ctx, RM, TR, NT, H, H, B, 1.0f, bf[R_HS], (t - 1) * BH, H, bf[R_DZ], 0, H, beta,
                     bf[R_DWH], 0, H));
        TRY(xo_sreduce_axis(ctx, XO_SUM, B, H, bf[R_DZ], 0, H, 0, bf[R_DBT], 0)); /* db of this step */
        TRY(xo_saxpby(ctx, H, 1.0f, bf[R_DBT], 0, 1, beta, bf[R_DB], 0, 1));
        if (t > 1)
            TRY(xo_sgemm(ctx, RM, NT, TR, B, H, H, 1.0f, bf[R_DZ], 0, H, bf[R_WH], 0, H, 0.0f, bf[R_DH], 0, H));
    }
    TRY(xo_saxpy(ctx, IN * H, -r->lr, bf[R_DWX], 0, 1, bf[R_WX], 0, 1));
    TRY(xo_saxpy(ctx, H * H, -r->lr, bf[R_DWH], 0, 1, bf[R_WH], 0, 1));
    TRY(xo_saxpy(ctx, H, -r->lr, bf[R_DB], 0, 1, bf[R_B], 0, 1));
    return xo_buffer_read(bf[R_LOSS], 0, &r->loss, sizeof r->loss);
}

xo_status xo__bench_rnn_iter(xo_context *ctx, void *state)
{
    rnn *r = state;
    return rnn_step(ctx, r, r->batches[r->step++ % MINIBATCHES]);
}

xo_status xo__bench_rnn_capture(xo_context *ctx, void *state, xo_plan **out)
{
    rnn *r = state;
    *out = r->plan;
    if (r->plan) return XO_OK;
    if (!r->inbox && !(r->inbox = malloc(r->T * r->B * r->IN * sizeof(float)))) return XO_ERR_OUT_OF_MEMORY;
    TRY(xo_capture_begin(ctx));
    xo_status s = rnn_step(ctx, r, r->inbox);
    xo_plan *plan = NULL;
    xo_status e = xo_capture_end(ctx, &plan); /* ends the capture even when a call failed */
    if (s != XO_OK) {
        xo_plan_destroy(plan);
        return s;
    }
    *out = r->plan = plan;
    return e;
}

/* The data loader fills the plan's input array; the run takes it in and the loss out. */
xo_status xo__bench_rnn_plan_iter(xo_context *ctx, void *state)
{
    (void)ctx;
    rnn *r = state;
    memcpy(r->inbox, r->batches[r->step++ % MINIBATCHES], r->T * r->B * r->IN * sizeof(float));
    return xo_plan_run(r->plan);
}

#endif

/* The same iteration with plain CBLAS and C loops. */
xo_status XO_BENCH_TWIN(xo__bench_rnn_cblas_iter)(xo_context *ctx, void *state)
{
    (void)ctx;
    rnn *r = state;
    float **h = r->h;
    const int B = (int)r->B, H = (int)r->H, IN = (int)r->IN, T = (int)r->T, BH = B * H;
    memcpy(h[R_X], r->batches[r->step++ % MINIBATCHES], (size_t)T * B * IN * sizeof(float));
    for (int t = 1; t <= T; t++) {
        float *hs = h[R_HS] + (size_t)t * BH;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, H, IN, 1.0f, h[R_X] + (size_t)(t - 1) * B * IN, IN,
                    h[R_WX], H, 0.0f, hs, H);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, H, H, 1.0f, hs - BH, H, h[R_WH], H, 1.0f, hs, H);
        for (int i = 0; i < B; i++)
            for (int j = 0; j < H; j++) hs[i * H + j] = tanhf(hs[i * H + j] + h[R_B][j]);
    }
    for (int i = 0; i < BH; i++) h[R_DH][i] = h[R_HS][(size_t)T * BH + i] - h[R_TARGET][i];
    r->loss = cblas_snrm2(BH, h[R_DH], 1);
    for (int t = T; t >= 1; t--) {
        float beta = t == T ? 0.0f : 1.0f;
        const float *hs = h[R_HS] + (size_t)t * BH;
        for (int i = 0; i < BH; i++) h[R_DZ][i] = (1.0f - hs[i] * hs[i]) * h[R_DH][i];
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, IN, H, B, 1.0f, h[R_X] + (size_t)(t - 1) * B * IN, IN,
                    h[R_DZ], H, beta, h[R_DWX], H);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, H, H, B, 1.0f, hs - BH, H, h[R_DZ], H, beta, h[R_DWH], H);
        for (int j = 0; j < H; j++) h[R_DB][j] *= beta;
        for (int i = 0; i < B; i++)
            for (int j = 0; j < H; j++) h[R_DB][j] += h[R_DZ][i * H + j];
        if (t > 1)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, H, H, 1.0f, h[R_DZ], H, h[R_WH], H, 0.0f, h[R_DH], H);
    }
    cblas_saxpy(IN * H, -r->lr, h[R_DWX], 1, h[R_WX], 1);
    cblas_saxpy(H * H, -r->lr, h[R_DWH], 1, h[R_WH], 1);
    cblas_saxpy(H, -r->lr, h[R_DB], 1, h[R_B], 1);
    return XO_OK;
}

#ifndef XO_BENCH_TUNED
float xo__bench_rnn_loss(const void *st) { return ((const rnn *)st)->loss; }
#endif
