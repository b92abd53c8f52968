/* A newcomer's first program: a 64-128-10 classifier (ReLU, softmax cross-entropy, Adam
 * with its bias correction through a buffer) on 20,000 generated samples, batch 128,
 * written against <crossover.h> from the README and docs alone.
 *
 * It trains three times from the same start on the same batches and compares the losses
 * step by step:
 *   - eagerly, one crossover call per op;
 *   - as a plan: one step captured once (minibatch in, forward, backward, Adam, loss out)
 *     and replayed, the minibatch and the step's bias correction fed through recorded
 *     writes from host arrays (docs/plans.md);
 *   - a plain CBLAS twin: cblas_sgemm and C loops, the same arithmetic in the same order.
 * Then it takes each held-out row's class on the device (xo_sargmax) and reads back only
 * those B int32 per batch, not the logits.
 * Exit status: 0 when the three agree (within TOLERANCE relative, as fusion may round
 * differently) and the classifier learned (accuracy >= MIN_ACCURACY); 1 otherwise; 2 on
 * bad usage. Needs nothing set in the environment.
 *
 * Usage: classifier [--epochs N]   (default 2) */
#include <crossover.h>
#include <cblas.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { D = 64, H = 128, C = 10, B = 128, SAMPLES = 20000, HELD_OUT = 16 * B };
/* All parameters in one buffer: W1 (H x D, row-major), b1, W2 (C x H), b2. */
enum { OW1 = 0, OB1 = OW1 + H * D, OW2 = OB1 + H, OB2 = OW2 + C * H, P = OB2 + C };
static const float LR = 1e-3f, BETA1 = 0.9f, BETA2 = 0.999f, EPS = 1e-8f;
#define TOLERANCE 1e-4
#define MIN_ACCURACY 0.9

#define CHECK(call)                                                                                      \
    do {                                                                                                 \
        xo_status s_ = (call);                                                                           \
        if (s_ != XO_OK) {                                                                               \
            fprintf(stderr, "classifier: %s: %s: %s\n", #call, xo_status_string(s_), xo_last_error());   \
            exit(1);                                                                                     \
        }                                                                                                \
    } while (0)

/* ---- generated data: class centres plus Gaussian noise ------------------------------ */

static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double uniform01(uint64_t *s) { return ((next_u64(s) >> 11) + 0.5) * 0x1.0p-53; }
static float gaussian(uint64_t *s)
{
    return (float)(sqrt(-2.0 * log(uniform01(s))) * cos(6.283185307179586 * uniform01(s)));
}

static void make_data(uint64_t seed, size_t n, float *x, int32_t *y)
{
    static float centres[C * D];
    uint64_t s = 12345;
    for (int i = 0; i < C * D; i++)
        centres[i] = 0.5f * gaussian(&s);
    s = seed;
    for (size_t i = 0; i < n; i++) {
        int k = (int)(next_u64(&s) % C);
        for (int d = 0; d < D; d++)
            x[i * D + d] = centres[k * D + d] + gaussian(&s);
        y[i] = k;
    }
}

/* He-uniform weights, zero biases. */
static void init_params(float *p)
{
    uint64_t s = 7;
    memset(p, 0, P * sizeof *p);
    for (int i = 0; i < H * D; i++)
        p[OW1 + i] = (float)((2 * uniform01(&s) - 1) * sqrt(6.0 / D));
    for (int i = 0; i < C * H; i++)
        p[OW2 + i] = (float)((2 * uniform01(&s) - 1) * sqrt(6.0 / H));
}

/* Adam's two step-dependent factors: 1/sqrt(c2) and -lr/c1 (step t from 1). */
static void bias_correction(long t, float hyper[2])
{
    hyper[0] = (float)(1.0 / sqrt(1.0 - pow(BETA2, (double)t)));
    hyper[1] = (float)(-LR / (1.0 - pow(BETA1, (double)t)));
}

/* ---- crossover ------------------------------------------------------------------------ */

typedef struct net {
    xo_context *ctx;
    xo_buffer *x, *y, *param, *grad, *m, *v, *h, *dh, *z, *dz, *loss, *loss_sum, *tmp, *hyper;
    float x_host[B * D], hyper_host[2], loss_host;
    int32_t y_host[B];
} net;

static xo_buffer *buffer(xo_context *ctx, size_t bytes)
{
    xo_buffer *b = NULL;
    CHECK(xo_buffer_create(ctx, bytes, &b));
    return b;
}

/* One training step on the minibatch in x_host/y_host: the calls a plan records. */
static void step_ops(net *n)
{
    xo_context *ctx = n->ctx;
    const xo_layout R = XO_ROW_MAJOR;
    const xo_transpose N = XO_NO_TRANS, T = XO_TRANS;
    xo_buffer *p = n->param, *g = n->grad;
    CHECK(xo_buffer_write(n->x, 0, n->x_host, sizeof n->x_host));
    CHECK(xo_buffer_write(n->y, 0, n->y_host, sizeof n->y_host));
    CHECK(xo_buffer_write(n->hyper, 0, n->hyper_host, sizeof n->hyper_host));
    /* h = relu(x W1^T + b1), z = h W2^T + b2 */
    CHECK(xo_sgemm_bias_act(ctx, R, N, T, B, H, D, 1, n->x, 0, D, p, OW1, D, 0, n->h, 0, H, p, OB1, XO_RELU));
    CHECK(xo_sgemm_bias_act(ctx, R, N, T, B, C, H, 1, n->h, 0, H, p, OW2, H, 0, n->z, 0, C, p, OB2, XO_IDENTITY));
    /* per-row loss and dz = (softmax(z) - onehot(y)) / B in one pass */
    CHECK(xo_ssoftmax_xent(ctx, B, C, n->z, 0, C, n->y, 0, 1.0f / B, n->loss, 0, n->dz, 0, C));
    CHECK(xo_sreduce(ctx, XO_SUM, B, n->loss, 0, n->loss_sum, 0));
    /* dW2 = dz^T h, db2 = column sums of dz, dh = dz W2 * relu'(h) */
    CHECK(xo_sgemm(ctx, R, T, N, C, H, B, 1, n->dz, 0, C, n->h, 0, H, 0, g, OW2, H));
    CHECK(xo_sreduce_axis(ctx, XO_SUM, B, C, n->dz, 0, C, 0, g, OB2));
    CHECK(xo_sgemm(ctx, R, N, N, B, H, C, 1, n->dz, 0, C, p, OW2, H, 0, n->dh, 0, H));
    CHECK(xo_sunary(ctx, XO_RELU_GRAD, B * H, n->h, 0, n->tmp, 0));
    CHECK(xo_sbinary(ctx, XO_MUL, B * H, n->dh, 0, n->tmp, 0, n->dh, 0));
    /* dW1 = dh^T x, db1 = column sums of dh */
    CHECK(xo_sgemm(ctx, R, T, N, H, D, B, 1, n->dh, 0, H, n->x, 0, D, 0, g, OW1, D));
    CHECK(xo_sreduce_axis(ctx, XO_SUM, B, H, n->dh, 0, H, 0, g, OB1));
    /* Adam: p += (-lr/c1) m / (sqrt(v)/sqrt(c2) + eps), the factors from the buffer */
    CHECK(xo_saxpby(ctx, P, 1 - BETA1, g, 0, 1, BETA1, n->m, 0, 1));
    CHECK(xo_sbinary(ctx, XO_MUL, P, g, 0, g, 0, n->tmp, 0));
    CHECK(xo_saxpby(ctx, P, 1 - BETA2, n->tmp, 0, 1, BETA2, n->v, 0, 1));
    CHECK(xo_sunary(ctx, XO_SQRT, P, n->v, 0, n->tmp, 0));
    CHECK(xo_sscale_by(ctx, P, n->hyper, 0, n->tmp, 0, 1));
    CHECK(xo_sbinary_scalar(ctx, XO_ADD, P, n->tmp, 0, EPS, n->tmp, 0));
    CHECK(xo_sbinary(ctx, XO_DIV, P, n->m, 0, n->tmp, 0, n->tmp, 0));
    CHECK(xo_sscale_by(ctx, P, n->hyper, 1, n->tmp, 0, 1));
    CHECK(xo_sbinary(ctx, XO_ADD, P, p, 0, n->tmp, 0, p, 0));
    CHECK(xo_buffer_read(n->loss_sum, 0, &n->loss_host, sizeof n->loss_host));
}

static void net_reset(net *n, const float *p0)
{
    CHECK(xo_buffer_write(n->param, 0, p0, P * sizeof *p0));
    CHECK(xo_sfill(n->ctx, P, 0.0f, n->m, 0, 1));
    CHECK(xo_sfill(n->ctx, P, 0.0f, n->v, 0, 1));
}

/* The minibatch of step t (from 1) into the host arrays a step reads. */
static void next_batch(net *n, const float *x, const int32_t *y, long t)
{
    size_t first = (size_t)(t - 1) % (SAMPLES / B) * B;
    memcpy(n->x_host, x + first * D, sizeof n->x_host);
    memcpy(n->y_host, y + first, sizeof n->y_host);
    bias_correction(t, n->hyper_host);
}

/* ---- the plain CBLAS twin ---------------------------------------------------------------- */

static void twin_step(float *p, float *m, float *v, const float *x, const int32_t *y, long t, float *loss_out)
{
    static float h[B * H], z[B * C], dz[B * C], dh[B * H], g[P], tmp[P];
    float hyper[2];
    bias_correction(t, hyper);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, H, D, 1, x, D, p + OW1, D, 0, h, H);
    for (int i = 0; i < B * H; i++)
        h[i] = fmaxf(h[i] + p[OB1 + i % H], 0.0f);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, C, H, 1, h, H, p + OW2, H, 0, z, C);
    float loss = 0;
    for (int i = 0; i < B; i++) {
        float mx = -INFINITY, sum = 0;
        for (int c = 0; c < C; c++)
            mx = fmaxf(mx, z[i * C + c] += p[OB2 + c]);
        for (int c = 0; c < C; c++)
            sum += expf(z[i * C + c] - mx);
        loss += logf(sum) + mx - z[i * C + y[i]];
        for (int c = 0; c < C; c++)
            dz[i * C + c] = (expf(z[i * C + c] - mx) / sum - (c == y[i])) / B;
    }
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, C, H, B, 1, dz, C, h, H, 0, g + OW2, H);
    for (int c = 0; c < C; c++) {
        g[OB2 + c] = 0;
        for (int i = 0; i < B; i++)
            g[OB2 + c] += dz[i * C + c];
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, H, C, 1, dz, C, p + OW2, H, 0, dh, H);
    for (int i = 0; i < B * H; i++)
        dh[i] *= h[i] > 0 ? 1.0f : 0.0f;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, H, D, B, 1, dh, H, x, D, 0, g + OW1, D);
    for (int j = 0; j < H; j++) {
        g[OB1 + j] = 0;
        for (int i = 0; i < B; i++)
            g[OB1 + j] += dh[i * H + j];
    }
    for (int i = 0; i < P; i++) {
        m[i] = BETA1 * m[i] + (1 - BETA1) * g[i];
        v[i] = BETA2 * v[i] + (1 - BETA2) * (g[i] * g[i]);
        tmp[i] = m[i] / (sqrtf(v[i]) * hyper[0] + EPS);
        p[i] += tmp[i] * hyper[1];
    }
    *loss_out = loss;
}

/* ---- the three runs, compared ------------------------------------------------------------- */

static double rel_diff(double a, double b) { return fabs(a - b) / fmax(fabs(b), 1e-30); }

int main(int argc, char **argv)
{
    long epochs = 2;
    if (argc == 3 && strcmp(argv[1], "--epochs") == 0)
        epochs = strtol(argv[2], NULL, 10);
    if ((argc != 1 && argc != 3) || epochs < 1 || epochs > 1000) {
        fprintf(stderr, "usage: %s [--epochs N]   (N from 1 to 1000, default 2)\n", argv[0]);
        return 2;
    }
    const long steps = epochs * (SAMPLES / B);
    float *x = malloc((size_t)(SAMPLES + HELD_OUT) * D * sizeof *x), *p0 = malloc(P * sizeof *p0);
    int32_t *y = malloc((size_t)(SAMPLES + HELD_OUT) * sizeof *y);
    float *loss_eager = malloc((size_t)steps * sizeof(float)), *loss_plan = malloc((size_t)steps * sizeof(float));
    float *tp = malloc(P * sizeof *tp), *tm = calloc(P, sizeof *tm), *tv = calloc(P, sizeof *tv);
    int32_t *predicted = malloc((size_t)HELD_OUT * sizeof *predicted);
    net *n = calloc(1, sizeof *n);
    if (!x || !p0 || !y || !loss_eager || !loss_plan || !tp || !tm || !tv || !predicted || !n) {
        fprintf(stderr, "classifier: out of memory\n");
        return 1;
    }
    make_data(1, SAMPLES + HELD_OUT, x, y);
    init_params(p0);

    CHECK(xo_context_create(&n->ctx));
    n->x = buffer(n->ctx, sizeof n->x_host), n->y = buffer(n->ctx, sizeof n->y_host);
    n->param = buffer(n->ctx, P * sizeof(float)), n->grad = buffer(n->ctx, P * sizeof(float));
    n->m = buffer(n->ctx, P * sizeof(float)), n->v = buffer(n->ctx, P * sizeof(float));
    n->tmp = buffer(n->ctx, (P > B * H ? P : B * H) * sizeof(float));
    n->h = buffer(n->ctx, B * H * sizeof(float)), n->dh = buffer(n->ctx, B * H * sizeof(float));
    n->z = buffer(n->ctx, B * C * sizeof(float)), n->dz = buffer(n->ctx, B * C * sizeof(float));
    n->loss = buffer(n->ctx, B * sizeof(float)), n->loss_sum = buffer(n->ctx, sizeof(float));
    n->hyper = buffer(n->ctx, sizeof n->hyper_host);

    /* eagerly */
    net_reset(n, p0);
    for (long t = 1; t <= steps; t++) {
        next_batch(n, x, y, t);
        step_ops(n);
        loss_eager[t - 1] = n->loss_host / B;
    }
    /* as a plan, from the same start */
    net_reset(n, p0);
    xo_plan *plan = NULL;
    CHECK(xo_capture_begin(n->ctx));
    step_ops(n);
    CHECK(xo_capture_end(n->ctx, &plan));
    for (long t = 1; t <= steps; t++) {
        next_batch(n, x, y, t);
        CHECK(xo_plan_run(plan));
        loss_plan[t - 1] = n->loss_host / B;
    }
    xo_plan_destroy(plan);

    /* held-out accuracy from the plan's weights: the predicted classes come from xo_sargmax */
    for (int k = 0; k < HELD_OUT / B; k++) {
        memcpy(n->x_host, x + (size_t)(SAMPLES + k * B) * D, sizeof n->x_host);
        CHECK(xo_buffer_write(n->x, 0, n->x_host, sizeof n->x_host));
        CHECK(xo_sgemm_bias_act(n->ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_TRANS, B, H, D, 1, n->x, 0, D, n->param, OW1,
                                D, 0, n->h, 0, H, n->param, OB1, XO_RELU));
        CHECK(xo_sgemm_bias_act(n->ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_TRANS, B, C, H, 1, n->h, 0, H, n->param, OW2,
                                H, 0, n->z, 0, C, n->param, OB2, XO_IDENTITY));
        CHECK(xo_sargmax(n->ctx, B, C, n->z, 0, C, n->y, 0)); /* the labels buffer is free now */
        CHECK(xo_buffer_read(n->y, 0, predicted + (size_t)k * B, B * sizeof(int32_t)));
    }
    int correct = 0;
    for (int i = 0; i < HELD_OUT; i++)
        correct += predicted[i] == y[SAMPLES + i];
    double accuracy = (double)correct / HELD_OUT;

    /* the CBLAS twin, from the same start */
    memcpy(tp, p0, P * sizeof *tp);
    double worst_twin = 0, worst_plan = 0;
    for (long t = 1; t <= steps; t++) {
        size_t first = (size_t)(t - 1) % (SAMPLES / B) * B;
        float loss;
        twin_step(tp, tm, tv, x + first * D, y + first, t, &loss);
        worst_twin = fmax(worst_twin, rel_diff(loss_eager[t - 1], loss / B));
        worst_plan = fmax(worst_plan, rel_diff(loss_plan[t - 1], loss_eager[t - 1]));
    }
    printf("classifier 64-128-10, %d samples, batch %d, %ld steps: loss %.4f -> %.4f, held-out accuracy %.3f\n",
           SAMPLES, B, steps, loss_eager[0], loss_eager[steps - 1], accuracy);
    printf("largest relative loss difference: eager against the CBLAS twin %.1e, plan against eager %.1e "
           "(tolerance %.0e)\n",
           worst_twin, worst_plan, TOLERANCE);
    int ok = worst_twin <= TOLERANCE && worst_plan <= TOLERANCE && accuracy >= MIN_ACCURACY;
    if (!ok)
        fprintf(stderr, "classifier: FAILED (%s)\n",
                accuracy < MIN_ACCURACY ? "it did not learn" : "the three runs disagree");

    xo_buffer *all[] = {n->x, n->y, n->param, n->grad, n->m, n->v, n->h, n->dh, n->z, n->dz, n->loss, n->loss_sum,
                        n->tmp, n->hyper};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        xo_buffer_destroy(all[i]);
    xo_context_destroy(n->ctx);
    free(x), free(p0), free(y), free(loss_eager), free(loss_plan), free(tp), free(tm), free(tv), free(predicted), free(n);
    return ok ? 0 : 1;
}
