/* xo bench, a real program: training a neural ODE, written twice, as a user would write
 * it with crossover and with plain CBLAS, and timed in the same run.
 *
 * The right-hand side is a 3 -> 100 -> 3 tanh MLP, f(z) = tanh(z W1 + b1) W2 + b2, over a
 * batch of B trajectories. One iteration integrates with RK4 over 101 points, reads
 * the loss 0.5 ||z_N - target||^2 back, backpropagates through every RK4 stage (the
 * discrete adjoint), clips the gradient's norm on the device (no host sync: scale_by),
 * and takes an SGD step. About 8,000 ops per iteration over a few dozen buffers; the
 * stages' inputs and activations live in a few large buffers at offsets. As a plan
 * (xo__bench_ode_capture): the whole iteration recorded once, the loss given out by a
 * recorded read. */
#include "bench.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TRY(expr) XO_RETURN_IF_ERROR(expr)
#define RM XO_ROW_MAJOR
#define NT XO_NO_TRANS
#define TR XO_TRANS

enum { ODE_B = 16, ODE_D = 3, ODE_H = 100, ODE_STEPS = 100, ODE_STAGES = 4 * ODE_STEPS };
static const float ode_dt = 0.01f, ode_lr = 1e-3f, ode_clip = 1.0f;

/* The parameters, their gradients, and what backprop keeps, by name. */
enum {
    O_W1, O_B1, O_W2, O_B2,     /* parameters */
    O_DW1, O_DB1, O_DW2, O_DB2, /* gradients */
    O_Z,                        /* z at every time point: (STEPS + 1) x B x D */
    O_U, O_HID, O_K,            /* per stage: input B x D, hidden B x H, f(u) B x D */
    O_TARGET, O_DIFF, O_A, O_DZ, O_AK, O_DU, O_DHID, O_DPRE, O_ONES,
    O_NORMS, O_NORM, O_SCALE, O_LOSS,
    O_N
};

typedef struct ode_sizes {
    size_t n;
    float scale;
} ode_sizes;

static ode_sizes ode_size(int id)
{
    const size_t B = ODE_B, D = ODE_D, H = ODE_H;
    switch (id) {
    case O_W1: case O_DW1: return (ode_sizes){D * H, 0.5f};
    case O_B1: case O_DB1: return (ode_sizes){H, 0.1f};
    case O_W2: case O_DW2: return (ode_sizes){H * D, 0.1f};
    case O_B2: case O_DB2: return (ode_sizes){D, 0.1f};
    case O_Z: return (ode_sizes){(ODE_STEPS + 1) * B * D, 0.5f};
    case O_U: case O_K: return (ode_sizes){(size_t)ODE_STAGES * B * D, 0};
    case O_HID: return (ode_sizes){(size_t)ODE_STAGES * B * H, 0};
    case O_TARGET: return (ode_sizes){B * D, 0.5f};
    case O_AK: return (ode_sizes){4 * B * D, 0};
    case O_DHID: case O_DPRE: return (ode_sizes){B * H, 0};
    case O_ONES: return (ode_sizes){B, 0};
    case O_NORMS: return (ode_sizes){4, 0};
    case O_NORM: case O_SCALE: case O_LOSS: return (ode_sizes){1, 0};
    default: return (ode_sizes){B * D, 0}; /* diff, a, dz, du */
    }
}

static const float rk_weight[4] = {1.0f / 6, 1.0f / 3, 1.0f / 3, 1.0f / 6}; /* of h in the update */
static const float rk_from[4] = {0.0f, 0.5f, 0.5f, 1.0f};                  /* of h in stage inputs */

#ifndef XO_BENCH_TUNED /* the twin alone there (bench.h) */
/* Initial values: noise of the given scale (the same for both twins), ones for O_ONES. */
static void ode_init(int id, float *h, size_t n)
{
    ode_sizes s = ode_size(id);
    uint32_t x = (uint32_t)id * 2654435761u + 17u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        h[i] = id == O_ONES ? 1.0f : s.scale * ((float)(x >> 8) / (float)(1u << 24) * 2.0f - 1.0f);
    }
}

/* ---- with crossover ------------------------------------------------------------------ */

typedef struct ode_xo {
    xo_buffer *b[O_N];
    float loss;
    xo_plan *plan; /* the iteration, recorded (xo__bench_ode_capture) */
} ode_xo;

static void ode_xo_free(ode_xo *o)
{
    xo_plan_destroy(o->plan);
    for (int i = 0; i < O_N; i++) xo_buffer_destroy(o->b[i]);
    memset(o, 0, sizeof *o);
}

static xo_status ode_xo_setup(xo_context *ctx, ode_xo *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 0; i < O_N; i++) {
        size_t n = ode_size(i).n;
        float *h = malloc(n * sizeof *h);
        if (!h) return XO_ERR_OUT_OF_MEMORY;
        ode_init(i, h, n);
        xo_status s = xo_buffer_create(ctx, n * sizeof *h, &o->b[i]);
        if (s == XO_OK) s = xo_buffer_write(o->b[i], 0, h, n * sizeof *h);
        free(h);
        if (s != XO_OK) return s;
    }
    return XO_OK;
}

/* k = f(u) for stage s; keeps the hidden activations for backprop. */
static xo_status f_xo(xo_context *ctx, ode_xo *o, size_t s)
{
    xo_buffer **b = o->b;
    const size_t B = ODE_B, D = ODE_D, H = ODE_H;
    TRY(xo_sgemm(ctx, RM, NT, NT, B, H, D, 1.0f, b[O_U], s * B * D, D, b[O_W1], 0, H, 0.0f, b[O_HID], s * B * H, H));
    TRY(xo_sbias(ctx, B, H, b[O_HID], s * B * H, H, b[O_B1], 0));
    TRY(xo_sunary(ctx, XO_TANH, B * H, b[O_HID], s * B * H, b[O_HID], s * B * H));
    TRY(xo_sgemm(ctx, RM, NT, NT, B, D, H, 1.0f, b[O_HID], s * B * H, H, b[O_W2], 0, D, 0.0f, b[O_K], s * B * D, D));
    return xo_sbias(ctx, B, D, b[O_K], s * B * D, D, b[O_B2], 0);
}

/* Backprop of stage s with output gradient AK[j]: parameter gradients accumulate, DU
 * gets the gradient of the stage's input. */
static xo_status vjp_xo(xo_context *ctx, ode_xo *o, size_t s, int j)
{
    xo_buffer **b = o->b;
    const size_t B = ODE_B, D = ODE_D, H = ODE_H, g = (size_t)j * B * D;
    TRY(xo_sgemm(ctx, RM, TR, NT, H, D, B, 1.0f, b[O_HID], s * B * H, H, b[O_AK], g, D, 1.0f, b[O_DW2], 0, D));
    TRY(xo_sgemv(ctx, RM, TR, B, D, 1.0f, b[O_AK], g, D, b[O_ONES], 0, 1, 1.0f, b[O_DB2], 0, 1));
    TRY(xo_sgemm(ctx, RM, NT, TR, B, H, D, 1.0f, b[O_AK], g, D, b[O_W2], 0, D, 0.0f, b[O_DHID], 0, H));
    TRY(xo_sunary(ctx, XO_TANH_GRAD, B * H, b[O_HID], s * B * H, b[O_DPRE], 0));
    TRY(xo_sbinary(ctx, XO_MUL, B * H, b[O_DPRE], 0, b[O_DHID], 0, b[O_DPRE], 0));
    TRY(xo_sgemm(ctx, RM, TR, NT, D, H, B, 1.0f, b[O_U], s * B * D, D, b[O_DPRE], 0, H, 1.0f, b[O_DW1], 0, H));
    TRY(xo_sgemv(ctx, RM, TR, B, H, 1.0f, b[O_DPRE], 0, H, b[O_ONES], 0, 1, 1.0f, b[O_DB1], 0, 1));
    return xo_sgemm(ctx, RM, NT, TR, B, D, H, 1.0f, b[O_DPRE], 0, H, b[O_W1], 0, H, 0.0f, b[O_DU], 0, D);
}

xo_status xo__bench_ode_iter(xo_context *ctx, void *st)
{
    ode_xo *o = st;
    xo_buffer **b = o->b;
    const size_t BD = (size_t)ODE_B * ODE_D;
    const float h = ode_dt;
    for (int p = O_DW1; p <= O_DB2; p++) TRY(xo_sfill(ctx, ode_size(p).n, 0.0f, b[p], 0, 1));
    /* forward: RK4 */
    for (size_t n = 0; n < ODE_STEPS; n++) {
        for (int j = 0; j < 4; j++) {
            size_t s = 4 * n + (size_t)j;
            TRY(xo_scopy(ctx, BD, b[O_Z], n * BD, 1, b[O_U], s * BD, 1));
            if (j > 0) TRY(xo_saxpy(ctx, BD, rk_from[j] * h, b[O_K], (s - 1) * BD, 1, b[O_U], s * BD, 1));
            TRY(f_xo(ctx, o, s));
        }
        TRY(xo_scopy(ctx, BD, b[O_Z], n * BD, 1, b[O_Z], (n + 1) * BD, 1));
        for (int j = 0; j < 4; j++)
            TRY(xo_saxpy(ctx, BD, rk_weight[j] * h, b[O_K], (4 * n + (size_t)j) * BD, 1, b[O_Z], (n + 1) * BD, 1));
    }
    /* loss, read once per iteration */
    TRY(xo_sbinary(ctx, XO_SUB, BD, b[O_Z], ODE_STEPS * BD, b[O_TARGET], 0, b[O_DIFF], 0));
    TRY(xo_snrm2(ctx, BD, b[O_DIFF], 0, 1, b[O_LOSS], 0));
    TRY(xo_buffer_read(b[O_LOSS], 0, &o->loss, sizeof o->loss));
    /* backward through every stage */
    TRY(xo_scopy(ctx, BD, b[O_DIFF], 0, 1, b[O_A], 0, 1));
    for (size_t n = ODE_STEPS; n-- > 0;) {
        TRY(xo_scopy(ctx, BD, b[O_A], 0, 1, b[O_DZ], 0, 1));
        for (int j = 0; j < 4; j++) TRY(xo_saxpby(ctx, BD, rk_weight[j] * h, b[O_A], 0, 1, 0.0f, b[O_AK], (size_t)j * BD, 1));
        for (int j = 3; j >= 0; j--) {
            TRY(vjp_xo(ctx, o, 4 * n + (size_t)j, j));
            TRY(xo_saxpy(ctx, BD, 1.0f, b[O_DU], 0, 1, b[O_DZ], 0, 1));
            if (j > 0) TRY(xo_saxpy(ctx, BD, rk_from[j] * h, b[O_DU], 0, 1, b[O_AK], (size_t)(j - 1) * BD, 1));
        }
        TRY(xo_scopy(ctx, BD, b[O_DZ], 0, 1, b[O_A], 0, 1));
    }
    /* clip the gradient's norm on the device: scale = clip / max(norm, clip) */
    for (int p = O_DW1; p <= O_DB2; p++) TRY(xo_snrm2(ctx, ode_size(p).n, b[p], 0, 1, b[O_NORMS], (size_t)(p - O_DW1)));
    TRY(xo_snrm2(ctx, 4, b[O_NORMS], 0, 1, b[O_NORM], 0));
    TRY(xo_sbinary_scalar(ctx, XO_MAX, 1, b[O_NORM], 0, ode_clip, b[O_SCALE], 0));
    TRY(xo_sunary(ctx, XO_RECIPROCAL, 1, b[O_SCALE], 0, b[O_SCALE], 0));
    TRY(xo_sbinary_scalar(ctx, XO_MUL, 1, b[O_SCALE], 0, ode_clip, b[O_SCALE], 0));
    for (int p = O_DW1; p <= O_DB2; p++) {
        TRY(xo_sscale_by(ctx, ode_size(p).n, b[O_SCALE], 0, b[p], 0, 1));
        TRY(xo_saxpy(ctx, ode_size(p).n, -ode_lr, b[p], 0, 1, b[p - O_DW1], 0, 1));
    }
    return XO_OK;
}

xo_status xo__bench_ode_capture(xo_context *ctx, void *st, xo_plan **out)
{
    ode_xo *o = st;
    *out = o->plan;
    if (o->plan) return XO_OK;
    TRY(xo_capture_begin(ctx));
    xo_status s = xo__bench_ode_iter(ctx, o);
    xo_plan *plan = NULL;
    xo_status e = xo_capture_end(ctx, &plan); /* ends the capture even when a call failed */
    if (s != XO_OK) {
        xo_plan_destroy(plan);
        return s;
    }
    *out = o->plan = plan;
    return e;
}

xo_status xo__bench_ode_plan_iter(xo_context *ctx, void *st)
{
    (void)ctx;
    return xo_plan_run(((ode_xo *)st)->plan);
}

#endif

/* ---- with plain CBLAS (and C loops where BLAS has nothing) ---------------------------- */

typedef struct ode_c {
    float *b[O_N];
    float loss;
} ode_c;

#ifndef XO_BENCH_TUNED
static void ode_c_free(ode_c *o)
{
    for (int i = 0; i < O_N; i++) free(o->b[i]);
    memset(o, 0, sizeof *o);
}

static xo_status ode_c_setup(ode_c *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 0; i < O_N; i++) {
        size_t n = ode_size(i).n;
        if (!(o->b[i] = malloc(n * sizeof(float)))) return XO_ERR_OUT_OF_MEMORY;
        ode_init(i, o->b[i], n);
    }
    return XO_OK;
}

#endif

static void bias_rows(float *a, const float *bias, size_t rows, size_t cols)
{
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) a[i * cols + j] += bias[j];
}

static void f_c(ode_c *o, size_t s)
{
    float **b = o->b;
    const int B = ODE_B, D = ODE_D, H = ODE_H;
    float *u = b[O_U] + s * B * D, *hid = b[O_HID] + s * B * H, *k = b[O_K] + s * B * D;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, H, D, 1.0f, u, D, b[O_W1], H, 0.0f, hid, H);
    bias_rows(hid, b[O_B1], B, H);
    for (int i = 0; i < B * H; i++) hid[i] = tanhf(hid[i]);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, D, H, 1.0f, hid, H, b[O_W2], D, 0.0f, k, D);
    bias_rows(k, b[O_B2], B, D);
}

static void vjp_c(ode_c *o, size_t s, int j)
{
    float **b = o->b;
    const int B = ODE_B, D = ODE_D, H = ODE_H;
    float *u = b[O_U] + s * B * D, *hid = b[O_HID] + s * B * H, *g = b[O_AK] + j * B * D;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, H, D, B, 1.0f, hid, H, g, D, 1.0f, b[O_DW2], D);
    cblas_sgemv(CblasRowMajor, CblasTrans, B, D, 1.0f, g, D, b[O_ONES], 1, 1.0f, b[O_DB2], 1);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, H, D, 1.0f, g, D, b[O_W2], D, 0.0f, b[O_DHID], H);
    for (int i = 0; i < B * H; i++) b[O_DPRE][i] = (1.0f - hid[i] * hid[i]) * b[O_DHID][i];
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, D, H, B, 1.0f, u, D, b[O_DPRE], H, 1.0f, b[O_DW1], H);
    cblas_sgemv(CblasRowMajor, CblasTrans, B, H, 1.0f, b[O_DPRE], H, b[O_ONES], 1, 1.0f, b[O_DB1], 1);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, D, H, 1.0f, b[O_DPRE], H, b[O_W1], H, 0.0f, b[O_DU], D);
}

xo_status XO_BENCH_TWIN(xo__bench_ode_cblas_iter)(xo_context *ctx, void *st)
{
    (void)ctx;
    ode_c *o = st;
    float **b = o->b;
    const int BD = ODE_B * ODE_D;
    const float h = ode_dt;
    for (int p = O_DW1; p <= O_DB2; p++) memset(b[p], 0, ode_size(p).n * sizeof(float));
    for (size_t n = 0; n < ODE_STEPS; n++) {
        float *z = b[O_Z] + n * BD;
        for (int j = 0; j < 4; j++) {
            size_t s = 4 * n + (size_t)j;
            cblas_scopy(BD, z, 1, b[O_U] + s * BD, 1);
            if (j > 0) cblas_saxpy(BD, rk_from[j] * h, b[O_K] + (s - 1) * BD, 1, b[O_U] + s * BD, 1);
            f_c(o, s);
        }
        cblas_scopy(BD, z, 1, z + BD, 1);
        for (int j = 0; j < 4; j++) cblas_saxpy(BD, rk_weight[j] * h, b[O_K] + (4 * n + (size_t)j) * BD, 1, z + BD, 1);
    }
    for (int i = 0; i < BD; i++) b[O_DIFF][i] = b[O_Z][ODE_STEPS * BD + i] - b[O_TARGET][i];
    o->loss = cblas_snrm2(BD, b[O_DIFF], 1);
    cblas_scopy(BD, b[O_DIFF], 1, b[O_A], 1);
    for (size_t n = ODE_STEPS; n-- > 0;) {
        cblas_scopy(BD, b[O_A], 1, b[O_DZ], 1);
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < BD; i++) b[O_AK][j * BD + i] = rk_weight[j] * h * b[O_A][i];
        for (int j = 3; j >= 0; j--) {
            vjp_c(o, 4 * n + (size_t)j, j);
            cblas_saxpy(BD, 1.0f, b[O_DU], 1, b[O_DZ], 1);
            if (j > 0) cblas_saxpy(BD, rk_from[j] * h, b[O_DU], 1, b[O_AK] + (j - 1) * BD, 1);
        }
        cblas_scopy(BD, b[O_DZ], 1, b[O_A], 1);
    }
    float sq = 0;
    for (int p = O_DW1; p <= O_DB2; p++) {
        float nrm = cblas_snrm2((int)ode_size(p).n, b[p], 1);
        sq += nrm * nrm;
    }
    float norm = sqrtf(sq), scale = ode_clip / (norm > ode_clip ? norm : ode_clip);
    for (int p = O_DW1; p <= O_DB2; p++) {
        cblas_sscal((int)ode_size(p).n, scale, b[p], 1);
        cblas_saxpy((int)ode_size(p).n, -ode_lr, b[p], 1, b[p - O_DW1], 1);
    }
    return XO_OK;
}

#ifndef XO_BENCH_TUNED
/* ---- both, for the runner ------------------------------------------------------------- */

void *xo__bench_ode_new(xo_context *ctx, int cblas)
{
    void *st = calloc(1, cblas ? sizeof(ode_c) : sizeof(ode_xo));
    if (!st) return NULL;
    xo_status s = cblas ? ode_c_setup(st) : ode_xo_setup(ctx, st);
    if (s != XO_OK) {
        xo__bench_ode_free(st, cblas);
        return NULL;
    }
    return st;
}

void xo__bench_ode_free(void *st, int cblas)
{
    if (!st) return;
    if (cblas) ode_c_free(st);
    else ode_xo_free(st);
    free(st);
}

float xo__bench_ode_loss(const void *st, int cblas)
{
    return cblas ? ((const ode_c *)st)->loss : ((const ode_xo *)st)->loss;
}
#endif
