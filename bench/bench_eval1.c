/* xo bench, part 2b: the batch-1 3 -> 100 -> 3 evaluation, y = W2 tanh(W1 x + b1) + b2
 * (row vectors: y = tanh(x W1 + b1) W2 + b2, W1 3 x 100, W2 100 x 3), the right-hand side
 * of a small neural ODE as a solver calls it: x in from host memory, y out to it, one
 * evaluation at a time. Four ways, taking turns in short batches:
 *   eager  crossover ops as a user writes them (bench_ode.c's f at batch 1): xo_buffer_write
 *          of x, xo_sgemm + xo_sbias + xo_sunary(XO_TANH) + xo_sgemm + xo_sbias,
 *          xo_buffer_read of y, under auto placement;
 *   plan   the same calls captured once (x in by a recorded write, y out by a recorded
 *          read) and replayed with xo_plan_run;
 *   CBLAS  cblas_sgemv twice on host arrays, the bias and tanh in plain C loops (tanhf);
 *   tuned C  the same function built -O3 -march=native -ffast-math (bench.h), where tanhf
 *          vectorises;
 *   loop   one C function hand-vectorised with vector types (padded arrays, a rational
 *          tanh, lane accumulators), compiled for AVX2+FMA where the CPU has it: the floor.
 * Between evaluations the "solver" moves x by 1e-3 y, so every evaluation sees new input.
 * Each way's y is first checked against a double-precision reference. */
#include "bench.h"

#include "xo_plan.h" /* the plan's steps, for its kernels alone */

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define D 3
#define H 100
#define HP 104 /* H padded to a multiple of 8 lanes (zeros) */
#define LANES 8


typedef struct eval1 {
    /* host copies: W1 3 x 100 (row-major), W2 100 x 3, and for the loop W2 transposed and padded */
    float w1[D * H], b1[H], w2[H * D], b2[D];
    float w1p[D][HP], b1p[HP], w2t[D][HP];
    float hid[HP];             /* CBLAS's hidden layer */
    float x0[D], x[D], y[D];   /* the solver's state, the point evaluated, the result */
    xo_buffer *bx, *bw1, *bb1, *bh, *bw2, *bb2, *by;
    xo_plan *plan;
} eval1;

/* ---- the ways ---------------------------------------------------------------------------- */

static void eval_cblas(eval1 *e)
{
    cblas_sgemv(CblasRowMajor, CblasTrans, D, H, 1.0f, e->w1, H, e->x, 1, 0.0f, e->hid, 1);
    for (int j = 0; j < H; j++) e->hid[j] = tanhf(e->hid[j] + e->b1[j]);
    cblas_sgemv(CblasRowMajor, CblasTrans, H, D, 1.0f, e->w2, D, e->hid, 1, 0.0f, e->y, 1);
    for (int k = 0; k < D; k++) e->y[k] += e->b2[k];
}

#ifdef XO_BENCH_TUNED
void xo__bench_eval1_cblas_tuned(void *e) { eval_cblas(e); }
#else
const char *const xo__bench_eval1_names[XO_EVAL1_N] = {"eager", "plan", "CBLAS", "tuned C", "loop"};

static xo_status eval_xo(xo_context *ctx, eval1 *e)
{
    XO_RETURN_IF_ERROR(xo_buffer_write(e->bx, 0, e->x, sizeof e->x));
    XO_RETURN_IF_ERROR(xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 1, H, D, 1.0f, e->bx, 0, D, e->bw1, 0, H,
                                0.0f, e->bh, 0, H));
    XO_RETURN_IF_ERROR(xo_sbias(ctx, 1, H, e->bh, 0, H, e->bb1, 0));
    XO_RETURN_IF_ERROR(xo_sunary(ctx, XO_TANH, H, e->bh, 0, e->bh, 0));
    XO_RETURN_IF_ERROR(xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, 1, D, H, 1.0f, e->bh, 0, H, e->bw2, 0, D,
                                0.0f, e->by, 0, D));
    XO_RETURN_IF_ERROR(xo_sbias(ctx, 1, D, e->by, 0, D, e->bb2, 0));
    return xo_buffer_read(e->by, 0, e->y, sizeof e->y);
}

/* The whole evaluation in one function, hand-vectorised with GCC/Clang vector types:
 * the hidden layer in chunks of LANES, each chunk's tanh as a rational function on
 * [-7.9, 7.9] (Eigen's float approximation, a few ulp; +-1 beyond), and its share of the
 * three output sums kept per lane, summed at the end. Loads through memcpy (unaligned). */
typedef float v8f __attribute__((vector_size(LANES * sizeof(float))));
typedef int32_t v8i __attribute__((vector_size(LANES * sizeof(int32_t))));

#define EVAL_LOOP(NAME, ATTR)                                                                   \
    ATTR static void NAME(eval1 *e)                                                             \
    {                                                                                           \
        const float c = 7.90531110763549805f;                                                   \
        v8f x0, x1, x2, acc[D], hi, lo, w;                                                      \
        for (int l = 0; l < LANES; l++) {                                                       \
            x0[l] = e->x[0], x1[l] = e->x[1], x2[l] = e->x[2], hi[l] = c, lo[l] = -c;            \
            for (int k = 0; k < D; k++) acc[k][l] = 0.0f;                                       \
        }                                                                                       \
        for (int j = 0; j < HP; j += LANES) {                                                   \
            v8f a;                                                                              \
            memcpy(&a, &e->b1p[j], sizeof a);                                                   \
            memcpy(&w, &e->w1p[0][j], sizeof w), a += x0 * w;                                   \
            memcpy(&w, &e->w1p[1][j], sizeof w), a += x1 * w;                                   \
            memcpy(&w, &e->w1p[2][j], sizeof w), a += x2 * w;                                   \
            v8i m = a < hi; /* clamp: lanes -1 where true */                                    \
            a = (v8f)((m & (v8i)a) | (~m & (v8i)hi));                                           \
            m = a > lo;                                                                         \
            a = (v8f)((m & (v8i)a) | (~m & (v8i)lo));                                           \
            v8f z = a * a;                                                                      \
            v8f p = z * -2.76076847742355e-16f + 2.00018790482477e-13f;                         \
            p = p * z - 8.60467152213735e-11f;                                                  \
            p = p * z + 5.12229709037114e-08f;                                                  \
            p = p * z + 1.48572235717979e-05f;                                                  \
            p = p * z + 6.37261928875436e-04f;                                                  \
            p = p * z + 4.89352455891786e-03f;                                                  \
            v8f q = z * 1.19825839466702e-06f + 1.18534705686654e-04f;                          \
            q = q * z + 2.26843463243900e-03f;                                                  \
            q = q * z + 4.89352518554385e-03f;                                                  \
            v8f h = a * p / q; /* padded lanes: b1p, w1p 0, so h 0 */                           \
            for (int k = 0; k < D; k++) memcpy(&w, &e->w2t[k][j], sizeof w), acc[k] += h * w;   \
        }                                                                                       \
        for (int k = 0; k < D; k++) {                                                           \
            float s = e->b2[k];                                                                 \
            for (int l = 0; l < LANES; l++) s += acc[k][l];                                     \
            e->y[k] = s;                                                                        \
        }                                                                                       \
    }

EVAL_LOOP(eval_loop_base, )
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
EVAL_LOOP(eval_loop_avx2, __attribute__((target("avx2,fma"))))
#endif

static void (*eval_loop)(eval1 *e) = eval_loop_base;

static void pick_loop(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) eval_loop = eval_loop_avx2;
#endif
}

static xo_status eval_kind(xo_context *ctx, eval1 *e, int kind)
{
    switch (kind) {
    case XO_EVAL1_EAGER: return eval_xo(ctx, e);
    case XO_EVAL1_PLAN: return xo_plan_run(e->plan);
    case XO_EVAL1_CBLAS: eval_cblas(e); return XO_OK;
    case XO_EVAL1_TUNED:
#ifdef XO_BENCH_HAS_TUNED
        xo__bench_eval1_cblas_tuned(e);
        return XO_OK;
#else
        return XO_ERR_UNSUPPORTED;
#endif
    default: eval_loop(e); return XO_OK;
    }
}

/* The plan's work without the replay: each recorded write and read as its memcpy, each
 * step the plan runs on the CPU as the CPU plugin's run() of its description (host
 * pointers filled in), back to back. 0 if the plan has a step elsewhere. */
typedef struct eval1_kernels {
    int n;
    xo_op_desc desc[8];
    struct { int kind; void *host, *buf; size_t bytes; } io[2];
} eval1_kernels;

static int kernels_of(const xo_plan *p, eval1_kernels *k)
{
    memset(k, 0, sizeof *k);
    int nio = 0;
    for (int i = 0; i < p->nsteps; i++) {
        const xo__step *s = &p->steps[i];
        if (s->kind != XO_STEP_OP) {
            if (nio == 2) return 0;
            k->io[nio].kind = s->kind;
            k->io[nio].host = s->host;
            k->io[nio].buf = (char *)s->op.buf[0]->host + s->offset;
            k->io[nio++].bytes = s->bytes;
            continue;
        }
        if (s->epilogue < 0 || s->fused < 0) continue; /* run by the step before it */
        if (s->dev != 0 || s->fused > 0 || k->n == 8) return 0;
        k->desc[k->n] = s->op.desc;
        for (int a = 0; a < s->op.desc.narg; a++)
            k->desc[k->n].arg[a].host = s->op.buf[a] ? s->op.buf[a]->host : NULL;
        k->n++;
    }
    return nio == 2 && k->io[0].kind == XO_STEP_WRITE && k->io[1].kind == XO_STEP_READ;
}

static void kernels_run(xo_context *ctx, const eval1_kernels *k)
{
    const xo__device *cpu = &ctx->dev[0];
    memcpy(k->io[0].buf, k->io[0].host, k->io[0].bytes);
    for (int i = 0; i < k->n; i++) cpu->plugin->run(cpu->pstate, 0, &k->desc[i], 0);
    memcpy(k->io[1].host, k->io[1].buf, k->io[1].bytes);
}

/* ---- setup, check, timing ------------------------------------------------------------------ */

static void eval1_free(eval1 *e)
{
    xo_plan_destroy(e->plan);
    xo_buffer *all[] = {e->bx, e->bw1, e->bb1, e->bh, e->bw2, e->bb2, e->by};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) xo_buffer_destroy(all[i]);
    free(e);
}

static xo_status make(xo_context *ctx, const float *h, size_t n, xo_buffer **out)
{
    XO_RETURN_IF_ERROR(xo_buffer_create(ctx, n * sizeof(float), out));
    return h ? xo_buffer_write(*out, 0, h, n * sizeof(float)) : XO_OK;
}

static xo_status eval1_setup(xo_context *ctx, eval1 *e)
{
    uint32_t r = 12345u;
#define NOISE(scale) (r = r * 1664525u + 1013904223u, (scale) * ((float)(r >> 8) / (float)(1u << 24) * 2.0f - 1.0f))
    for (int i = 0; i < D * H; i++) e->w1[i] = NOISE(1.0f);
    for (int j = 0; j < H; j++) e->b1[j] = NOISE(0.5f);
    for (int i = 0; i < H * D; i++) e->w2[i] = NOISE(0.2f);
    for (int k = 0; k < D; k++) e->b2[k] = NOISE(0.1f), e->x0[k] = e->x[k] = NOISE(1.0f);
#undef NOISE
    for (int k = 0; k < D; k++)
        for (int j = 0; j < H; j++) e->w1p[k][j] = e->w1[k * H + j], e->w2t[k][j] = e->w2[j * D + k];
    memcpy(e->b1p, e->b1, sizeof e->b1);
    XO_RETURN_IF_ERROR(make(ctx, e->x, D, &e->bx));
    XO_RETURN_IF_ERROR(make(ctx, e->w1, D * H, &e->bw1));
    XO_RETURN_IF_ERROR(make(ctx, e->b1, H, &e->bb1));
    XO_RETURN_IF_ERROR(make(ctx, NULL, H, &e->bh));
    XO_RETURN_IF_ERROR(make(ctx, e->w2, H * D, &e->bw2));
    XO_RETURN_IF_ERROR(make(ctx, e->b2, D, &e->bb2));
    XO_RETURN_IF_ERROR(make(ctx, NULL, D, &e->by));
    XO_RETURN_IF_ERROR(xo_capture_begin(ctx));
    xo_status s = eval_xo(ctx, e);
    xo_status end = xo_capture_end(ctx, &e->plan);
    return s != XO_OK ? s : end;
}

/* y for x0 in double precision; the largest error of e->y relative to max |y|. */
static double check_y(const eval1 *e)
{
    double y[D], ymax = 0, err = 0;
    for (int k = 0; k < D; k++) y[k] = e->b2[k];
    for (int j = 0; j < H; j++) {
        double a = e->b1[j];
        for (int k = 0; k < D; k++) a += (double)e->x0[k] * e->w1[k * H + j];
        a = tanh(a);
        for (int k = 0; k < D; k++) y[k] += a * e->w2[j * D + k];
    }
    for (int k = 0; k < D; k++) ymax = fmax(ymax, fabs(y[k]));
    for (int k = 0; k < D; k++) {
        double d = fabs((double)e->y[k] - y[k]) / (ymax > 0 ? ymax : 1);
        if (!(d <= err)) err = d; /* NaN sticks */
    }
    return err;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, c = *(const double *)y;
    return (a > c) - (a < c);
}

#define EVAL1_TOL 1e-4 /* the ops' float tolerance (CONTRACT.md, Ops) */

int xo__bench_run_eval1(xo__bench *b)
{
    xo__bench_eval1 *out = &b->eval1;
    memset(out, 0, sizeof *out);
    out->status = XO_BENCH_ERROR;
    pick_loop();
    eval1 *e = calloc(1, sizeof *e);
    if (!e) return XO_TOOL_FAIL;
    fprintf(stderr, "[eval] 3-100-3 batch 1: eager, plan, CBLAS, tuned C, C loop\n");
    xo_status s = xo__bench_use_config(b, xo__bench_auto(b));
    if (s == XO_OK) s = eval1_setup(b->ctx, e);
    if (s != XO_OK) {
        fprintf(stderr, "xo: bench: 3-100-3 evaluation: setup failed: %s: %s\n", xo_status_string(s), xo_last_error());
        eval1_free(e);
        return XO_TOOL_FAIL;
    }
    {
        char *text = malloc(1 << 16);
        if (text && xo_plan_describe(e->plan, text, 1 << 16) == XO_OK) {
            size_t n = strlen(text);
            while (n > 0 && text[n - 1] == '\n') text[--n] = '\0';
            const char *last = strrchr(text, '\n');
            snprintf(out->plan_summary, sizeof out->plan_summary, "%s", last ? last + 1 : text);
        }
        free(text);
    }
    int rc = 0;
    for (int kind = 0; kind < XO_EVAL1_N; kind++) {
        memcpy(e->x, e->x0, sizeof e->x);
        memset(e->y, 0, sizeof e->y);
#ifndef XO_BENCH_HAS_TUNED
        if (kind == XO_EVAL1_TUNED) { /* not built: left out, its times 0 */
            out->max_rel[kind] = NAN;
            continue;
        }
#endif
        s = eval_kind(b->ctx, e, kind);
        out->max_rel[kind] = s == XO_OK ? check_y(e) : INFINITY;
        if (s != XO_OK || !(out->max_rel[kind] <= EVAL1_TOL)) {
            fprintf(stderr, "xo: bench: 3-100-3 evaluation as %s: %s (largest error %.3g of max |y|, tolerance %.0e)\n",
                    xo__bench_eval1_names[kind], s != XO_OK ? xo_last_error() : "WRONG RESULT", out->max_rel[kind],
                    EVAL1_TOL);
            rc = XO_TOOL_FAIL;
        }
    }
    /* batches of `per` evaluations, the four ways taking turns (the order rotates) */
    const int batches = b->quick ? 101 : 301, per = 200;
    double *ns = malloc((size_t)XO_EVAL1_N * batches * sizeof *ns);
    if (!ns) {
        eval1_free(e);
        return XO_TOOL_FAIL;
    }
    int failed[XO_EVAL1_N] = {0};
    for (int k = 0; k < XO_EVAL1_N; k++) failed[k] = !(out->max_rel[k] <= EVAL1_TOL);
    memcpy(e->x, e->x0, sizeof e->x);
    s = XO_OK;
    for (int bt = -1; bt < batches; bt++) /* batch -1: warm-up */
        for (int i = 0; i < XO_EVAL1_N; i++) {
            int kind = (i + (bt < 0 ? 0 : bt)) % XO_EVAL1_N;
            if (failed[kind]) continue;
            double t0 = xo__tool_now_us();
            for (int r = 0; r < per && s == XO_OK; r++) {
                s = eval_kind(b->ctx, e, kind);
                for (int k = 0; k < D; k++) e->x[k] = e->x0[k] + 1e-3f * e->y[k]; /* the solver's step */
            }
            double t = (xo__tool_now_us() - t0) * 1e3 / per;
            if (s != XO_OK) {
                fprintf(stderr, "xo: bench: 3-100-3 evaluation as %s: %s: %s\n", xo__bench_eval1_names[kind],
                        xo_status_string(s), xo_last_error());
                failed[kind] = 1, rc = XO_TOOL_FAIL, s = XO_OK;
            }
            if (bt >= 0) ns[(size_t)kind * batches + bt] = t;
        }
    for (int k = 0; k < XO_EVAL1_N; k++) {
        if (failed[k]) continue;
        double *v = ns + (size_t)k * batches;
        qsort(v, (size_t)batches, sizeof *v, cmp_double);
        out->median_ns[k] = v[batches / 2];
        out->best_ns[k] = v[0];
    }
    /* the plan and its kernels alone, in turn (what the replay adds: their difference) */
    eval1_kernels kern;
    if (!failed[XO_EVAL1_PLAN] && kernels_of(e->plan, &kern)) {
        memcpy(e->x, e->x0, sizeof e->x);
        s = XO_OK;
        for (int bt = -1; bt < batches && s == XO_OK; bt++)
            for (int way = 0; way < 2; way++) {
                double t0 = xo__tool_now_us();
                for (int r = 0; r < per && s == XO_OK; r++) {
                    if ((way + bt) & 1)
                        kernels_run(b->ctx, &kern);
                    else
                        s = xo_plan_run(e->plan);
                    for (int k = 0; k < D; k++) e->x[k] = e->x0[k] + 1e-3f * e->y[k];
                }
                if (bt >= 0) ns[(size_t)((way + bt) & 1) * batches + bt] = (xo__tool_now_us() - t0) * 1e3 / per;
            }
        if (s == XO_OK) {
            qsort(ns, (size_t)batches, sizeof *ns, cmp_double);
            qsort(ns + batches, (size_t)batches, sizeof *ns, cmp_double);
            out->kernels_plan_ns = ns[batches / 2];
            out->kernels_ns = ns[batches + batches / 2];
        }
    }
    free(ns);
    out->batches = batches;
    out->evals_per_batch = per;
    out->status = rc ? XO_BENCH_ERROR : XO_BENCH_OK;
    eval1_free(e);
    return rc;
}

/* `xo bench --eval1`: the evaluation's figures alone, as text. */
void xo__bench_print_eval1(const xo__bench *b, FILE *f)
{
    const xo__bench_eval1 *ev = &b->eval1;
    if (!ev->batches) return;
    fprintf(f, "3-100-3 batch 1, ns per evaluation over %d batches of %d:\n%-8s %10s %10s %8s\n", ev->batches,
            ev->evals_per_batch, "way", "median", "fastest", "/ loop");
    const double loop = ev->median_ns[XO_EVAL1_LOOP];
    for (int k = 0; k < XO_EVAL1_N; k++) {
        if (!(ev->median_ns[k] > 0)) {
            fprintf(f, "%-8s %10s\n", xo__bench_eval1_names[k], "-");
            continue;
        }
        fprintf(f, "%-8s %10.1f %10.1f %8.2f\n", xo__bench_eval1_names[k], ev->median_ns[k], ev->best_ns[k],
                loop > 0 ? ev->median_ns[k] / loop : 0.0);
    }
    fprintf(f, "%s\n", ev->plan_summary);
    if (ev->kernels_ns > 0)
        fprintf(f, "the plan's CPU kernels alone (plugin calls and copies): %.1f ns, the plan in turn with them %.1f ns: "
                   "the replay adds %.1f ns\n",
                ev->kernels_ns, ev->kernels_plan_ns, ev->kernels_plan_ns - ev->kernels_ns);
}
#endif
