/* Data-parallel training of a 784-256-128-10 MLP (ReLU, softmax cross-entropy, Adam)
 * with MPI, written as an application would, against <crossover.h> only.
 *
 * One crossover context per rank. Every global batch of B samples is cut into equal
 * shards of B/p rows; each rank computes its shard's gradients (already divided by the
 * global B, so the sum over ranks is the mean over the batch), the gradients are summed
 * over ranks with one MPI_Allreduce on host memory, and every rank applies the same Adam
 * update to the same weights, so the weights stay identical on every rank.
 *
 * The gradient buffer wraps a host array (xo_buffer_wrap): after the backward ops,
 * xo_buffer_sync makes the array current, MPI sums it in place, and
 * xo_buffer_host_written tells crossover that the array changed. The shard's loss sum
 * rides in the same array (one element after the gradients), so one step costs one
 * allreduce.
 *
 * --plan: the same step as two plans around the allreduce (docs/plans.md): the first
 * writes the minibatch in from host arrays, runs forward and backward and reads the
 * gradient out into the host array MPI sums; the second writes the summed gradient and
 * the step's two bias-correction factors back and runs Adam. Recorded writes and reads
 * copy from and to the same host arrays at every run, so the loop only fills them.
 *
 * Usage: mpirun -np P mpi_mlp [--steps N] [--batch B] [--samples N] [--seed S]
 *                              [--lr LR] [--print] [--plan]
 *   --print: rank 0 prints the loss of every step ("step T loss L"), every rank the
 *   FNV-1a hash of its final weights ("rank R weights HASH").
 * The last line (rank 0) gives steps/s (step 1, the warm-up, left out) and the split of
 * a step into gradients, allreduce and update. Device: XO_DEVICE as usual, one context
 * per rank (docs/scale-out.md). */
#include <crossover.h>
#include <mpi.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { D = 784, H1 = 256, H2 = 128, C = 10 };
/* All parameters in one buffer, as torch's parameter list: W (out x in, row-major) then b. */
enum {
    OW1 = 0, OB1 = OW1 + H1 * D,
    OW2 = OB1 + H1, OB2 = OW2 + H2 * H1,
    OW3 = OB2 + H2, OB3 = OW3 + C * H2,
    P = OB3 + C /* 235,146 parameters */
};
static const float BETA1 = 0.9f, BETA2 = 0.999f, EPS = 1e-8f;

static int g_rank;

#define CHECK(call)                                                                      \
    do {                                                                                 \
        xo_status s_ = (call);                                                           \
        if (s_ != XO_OK) {                                                               \
            fprintf(stderr, "mpi_mlp: rank %d: %s: %s: %s\n", g_rank, #call,             \
                    xo_status_string(s_), xo_last_error());                              \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                \
        }                                                                                \
    } while (0)

/* ---- deterministic data: splitmix64, the same numbers on every rank ---------------- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double uniform01(uint64_t *s) { return ((splitmix64(s) >> 11) + 0.5) * 0x1.0p-53; }
static float gaussian(uint64_t *s)
{
    double u = uniform01(s), v = uniform01(s);
    return (float)(sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
}

/* Sample g of the data set: label uniform in [0, C), x = centre[label] + N(0, 1) noise.
 * Each sample has a generator of its own (seed, g), so a rank makes only its rows. */
static void make_sample(uint64_t seed, uint64_t g, const float *centres, float *x, int32_t *label)
{
    uint64_t s = seed * 0x2545F4914F6CDD1Dull ^ (g + 1) * 0x9E3779B97F4A7C15ull;
    int k = (int)(splitmix64(&s) % C);
    for (int d = 0; d < D; d++)
        x[d] = centres[(size_t)k * D + d] + gaussian(&s);
    *label = k;
}

/* He-uniform weights and zero biases, from the seed alone (identical on every rank). */
static void init_params(uint64_t seed, float *p)
{
    uint64_t s = seed ^ 0xD1B54A32D192ED03ull;
    const struct { int off, n, fan_in; } w[] = {{OW1, H1 * D, D}, {OW2, H2 * H1, H1}, {OW3, C * H2, H2}};
    memset(p, 0, (size_t)P * sizeof *p);
    for (int l = 0; l < 3; l++) {
        double a = sqrt(6.0 / w[l].fan_in);
        for (int i = 0; i < w[l].n; i++)
            p[w[l].off + i] = (float)((2 * uniform01(&s) - 1) * a);
    }
}

static uint64_t fnv1a(const void *data, size_t bytes)
{
    const unsigned char *c = data;
    uint64_t h = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < bytes; i++)
        h = (h ^ c[i]) * 0x100000001B3ull;
    return h;
}

/* ---- options -------------------------------------------------------------------- */

typedef struct options {
    long steps, batch, samples;
    unsigned long long seed;
    double lr;
    int print, plan;
} options;

static int parse(int argc, char **argv, options *o)
{
    *o = (options){.steps = 100, .batch = 256, .samples = 0, .seed = 1, .lr = 1e-3, .print = 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "--print")) { o->print = 1; continue; }
        if (!strcmp(a, "--plan")) { o->plan = 1; continue; }
        if (!v) return 0;
        if (!strcmp(a, "--steps")) o->steps = strtol(v, &end, 10);
        else if (!strcmp(a, "--batch")) o->batch = strtol(v, &end, 10);
        else if (!strcmp(a, "--samples")) o->samples = strtol(v, &end, 10);
        else if (!strcmp(a, "--seed")) o->seed = strtoull(v, &end, 10);
        else if (!strcmp(a, "--lr")) o->lr = strtod(v, &end);
        else return 0;
        if (*end) return 0;
        i++;
    }
    if (o->samples == 0) o->samples = 16 * o->batch;
    return o->steps > 0 && o->batch > 0 && o->samples >= o->batch && o->lr > 0;
}

/* ---- the model ------------------------------------------------------------------ */

typedef struct model {
    xo_context *ctx;
    size_t b, global_b;        /* shard rows, global batch */
    xo_buffer *x, *y;          /* this rank's shards of the data set, one batch after another */
    xo_buffer *param, *m, *v;  /* weights, Adam's moments */
    xo_buffer *grad;           /* P gradients, then the shard's loss sum; eager: wraps gh */
    float *gh;                 /* what MPI sums */
    xo_buffer *h1, *h2, *z, *dz, *dh1, *dh2, *loss, *tmp, *hyper;
    float hyper_host[2];       /* this step's 1/sqrt(c2) and -lr/c1 */
    /* --plan: the host's copy of this rank's data, one minibatch staged for the plans'
     * recorded writes, and the buffers they write */
    float *x_host, *x_stage;
    int32_t *y_host, *y_stage;
    xo_buffer *xb, *yb;
} model;

static xo_buffer *buffer(xo_context *ctx, size_t floats)
{
    xo_buffer *b = NULL;
    CHECK(xo_buffer_create(ctx, floats * sizeof(float), &b));
    return b;
}

/* Forward and backward over the shard at rows `row` of x and y: grad = this shard's part
 * of the mean gradient over the global batch, grad[P] = the shard's loss sum. */
static void gradients(model *md, xo_buffer *x, xo_buffer *y, size_t row)
{
    xo_context *ctx = md->ctx;
    const xo_layout R = XO_ROW_MAJOR;
    const xo_transpose N = XO_NO_TRANS, T = XO_TRANS;
    size_t b = md->b, xo = row * D, yo = row;
    xo_buffer *p = md->param, *g = md->grad;

    /* h1 = relu(x W1^T + b1), h2 = relu(h1 W2^T + b2), z = h2 W3^T + b3 */
    CHECK(xo_sgemm_bias_act(ctx, R, N, T, b, H1, D, 1, x, xo, D, p, OW1, D, 0, md->h1, 0, H1, p, OB1, XO_RELU));
    CHECK(xo_sgemm_bias_act(ctx, R, N, T, b, H2, H1, 1, md->h1, 0, H1, p, OW2, H1, 0, md->h2, 0, H2, p, OB2, XO_RELU));
    CHECK(xo_sgemm_bias_act(ctx, R, N, T, b, C, H2, 1, md->h2, 0, H2, p, OW3, H2, 0, md->z, 0, C, p, OB3, XO_IDENTITY));
    /* loss and dz = (softmax(z) - onehot(y)) / B in one pass; the loss sum into gh[P] */
    CHECK(xo_ssoftmax_xent(ctx, b, C, md->z, 0, C, y, yo, 1.0f / (float)md->global_b, md->loss, 0, md->dz, 0, C));
    CHECK(xo_sreduce(ctx, XO_SUM, b, md->loss, 0, g, P));
    /* layer 3: dW3 = dz^T h2, db3 = column sums of dz, dh2 = dz W3 * relu'(h2) */
    CHECK(xo_sgemm(ctx, R, T, N, C, H2, b, 1, md->dz, 0, C, md->h2, 0, H2, 0, g, OW3, H2));
    CHECK(xo_sreduce_axis(ctx, XO_SUM, b, C, md->dz, 0, C, 0, g, OB3));
    CHECK(xo_sgemm(ctx, R, N, N, b, H2, C, 1, md->dz, 0, C, p, OW3, H2, 0, md->dh2, 0, H2));
    CHECK(xo_sunary(ctx, XO_RELU_GRAD, b * H2, md->h2, 0, md->tmp, 0));
    CHECK(xo_sbinary(ctx, XO_MUL, b * H2, md->dh2, 0, md->tmp, 0, md->dh2, 0));
    /* layer 2 */
    CHECK(xo_sgemm(ctx, R, T, N, H2, H1, b, 1, md->dh2, 0, H2, md->h1, 0, H1, 0, g, OW2, H1));
    CHECK(xo_sreduce_axis(ctx, XO_SUM, b, H2, md->dh2, 0, H2, 0, g, OB2));
    CHECK(xo_sgemm(ctx, R, N, N, b, H1, H2, 1, md->dh2, 0, H2, p, OW2, H1, 0, md->dh1, 0, H1));
    CHECK(xo_sunary(ctx, XO_RELU_GRAD, b * H1, md->h1, 0, md->tmp, 0));
    CHECK(xo_sbinary(ctx, XO_MUL, b * H1, md->dh1, 0, md->tmp, 0, md->dh1, 0));
    /* layer 1 */
    CHECK(xo_sgemm(ctx, R, T, N, H1, D, b, 1, md->dh1, 0, H1, x, xo, D, 0, g, OW1, D));
    CHECK(xo_sreduce_axis(ctx, XO_SUM, b, H1, md->dh1, 0, H1, 0, g, OB1));
}

/* Adam, step t from 1, in torch's arithmetic: p -= lr/c1 * m / (sqrt(v)/sqrt(c2) + eps).
 * The two step-dependent factors go through a buffer (xo_sscale_by), as a plan needs. */
static void bias_correction(model *md, long t, double lr)
{
    md->hyper_host[0] = (float)(1.0 / sqrt(1.0 - pow(BETA2, (double)t))); /* 1/sqrt(c2) */
    md->hyper_host[1] = (float)(-lr / (1.0 - pow(BETA1, (double)t)));     /* -lr/c1 */
}

static void adam(model *md)
{
    xo_context *ctx = md->ctx;
    xo_buffer *g = md->grad, *tmp = md->tmp;
    CHECK(xo_buffer_write(md->hyper, 0, md->hyper_host, sizeof md->hyper_host));
    CHECK(xo_saxpby(ctx, P, 1 - BETA1, g, 0, 1, BETA1, md->m, 0, 1)); /* m = b1 m + (1-b1) g */
    CHECK(xo_sbinary(ctx, XO_MUL, P, g, 0, g, 0, tmp, 0));            /* tmp = g^2 */
    CHECK(xo_saxpby(ctx, P, 1 - BETA2, tmp, 0, 1, BETA2, md->v, 0, 1)); /* v = b2 v + (1-b2) g^2 */
    CHECK(xo_sunary(ctx, XO_SQRT, P, md->v, 0, tmp, 0));
    CHECK(xo_sscale_by(ctx, P, md->hyper, 0, tmp, 0, 1));             /* sqrt(v) / sqrt(c2) */
    CHECK(xo_sbinary_scalar(ctx, XO_ADD, P, tmp, 0, EPS, tmp, 0));
    CHECK(xo_sbinary(ctx, XO_DIV, P, md->m, 0, tmp, 0, tmp, 0));
    CHECK(xo_sscale_by(ctx, P, md->hyper, 1, tmp, 0, 1));             /* * -lr/c1 */
    CHECK(xo_sbinary(ctx, XO_ADD, P, md->param, 0, tmp, 0, md->param, 0));
}

/* This rank's rows of the data set: batch j holds samples j*B + rank*b .. + b. */
static void load_data(model *md, const options *o, int rank, size_t nbatches)
{
    size_t b = md->b, rows = nbatches * b;
    float *centres = malloc((size_t)C * D * sizeof *centres), *x = malloc(rows * D * sizeof *x);
    int32_t *y = malloc(rows * sizeof *y);
    if (!centres || !x || !y) {
        fprintf(stderr, "mpi_mlp: rank %d: out of memory for %zu samples\n", rank, rows);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    uint64_t s = o->seed;
    for (size_t i = 0; i < (size_t)C * D; i++)
        centres[i] = 0.2f * gaussian(&s);
    for (size_t j = 0; j < nbatches; j++)
        for (size_t i = 0; i < b; i++) {
            size_t r = j * b + i;
            make_sample(o->seed, j * md->global_b + (size_t)rank * b + i, centres, x + r * D, y + r);
        }
    md->x = buffer(md->ctx, rows * D);
    CHECK(xo_buffer_write(md->x, 0, x, rows * D * sizeof *x));
    CHECK(xo_buffer_create(md->ctx, rows * sizeof *y, &md->y));
    CHECK(xo_buffer_write(md->y, 0, y, rows * sizeof *y));
    free(centres);
    md->x_host = x, md->y_host = y; /* the plans' minibatches come from here */
}

int main(int argc, char **argv)
{
    int nranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    options o;
    if (!parse(argc, argv, &o) || o.batch % nranks) {
        if (g_rank == 0)
            fprintf(stderr, "usage: mpirun -np P %s [--steps N] [--batch B] [--samples N] [--seed S] "
                            "[--lr LR] [--print] [--plan]\n  (B a multiple of P, N >= B)\n", argv[0]);
        MPI_Finalize();
        return 2;
    }

    model md = {.b = (size_t)(o.batch / nranks), .global_b = (size_t)o.batch};
    size_t nbatches = (size_t)(o.samples / o.batch), b = md.b;
    CHECK(xo_context_create(&md.ctx));
    load_data(&md, &o, g_rank, nbatches);

    float *ph = malloc((size_t)P * sizeof *ph);
    md.gh = calloc((size_t)P + 1, sizeof *md.gh);
    if (!ph || !md.gh) {
        fprintf(stderr, "mpi_mlp: rank %d: out of memory\n", g_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    init_params(o.seed, ph);
    md.param = buffer(md.ctx, P);
    CHECK(xo_buffer_write(md.param, 0, ph, (size_t)P * sizeof *ph));
    CHECK(xo_buffer_wrap(md.ctx, md.gh, ((size_t)P + 1) * sizeof *md.gh, &md.grad));
    md.m = buffer(md.ctx, P), md.v = buffer(md.ctx, P);
    md.h1 = buffer(md.ctx, b * H1), md.dh1 = buffer(md.ctx, b * H1);
    md.h2 = buffer(md.ctx, b * H2), md.dh2 = buffer(md.ctx, b * H2);
    md.z = buffer(md.ctx, b * C), md.dz = buffer(md.ctx, b * C), md.loss = buffer(md.ctx, b);
    md.tmp = buffer(md.ctx, b * H1 > P ? b * H1 : P), md.hyper = buffer(md.ctx, 2);

    /* --plan: the step as two plans around the allreduce. The gradient is a buffer of its
     * own (a recorded read fills gh, a recorded write takes it back), the minibatch comes
     * in through recorded writes from the staging arrays. */
    xo_plan *grad_plan = NULL, *update_plan = NULL;
    if (o.plan) {
        md.x_stage = malloc(b * D * sizeof *md.x_stage), md.y_stage = malloc(b * sizeof *md.y_stage);
        if (!md.x_stage || !md.y_stage)
            MPI_Abort(MPI_COMM_WORLD, 1);
        md.xb = buffer(md.ctx, b * D);
        CHECK(xo_buffer_create(md.ctx, b * sizeof *md.y_stage, &md.yb));
        xo_buffer_destroy(md.grad);
        md.grad = buffer(md.ctx, (size_t)P + 1);
        CHECK(xo_capture_begin(md.ctx));
        CHECK(xo_buffer_write(md.xb, 0, md.x_stage, b * D * sizeof *md.x_stage));
        CHECK(xo_buffer_write(md.yb, 0, md.y_stage, b * sizeof *md.y_stage));
        gradients(&md, md.xb, md.yb, 0);
        CHECK(xo_buffer_read(md.grad, 0, md.gh, ((size_t)P + 1) * sizeof *md.gh));
        CHECK(xo_capture_end(md.ctx, &grad_plan));
        CHECK(xo_capture_begin(md.ctx));
        CHECK(xo_buffer_write(md.grad, 0, md.gh, ((size_t)P + 1) * sizeof *md.gh));
        adam(&md);
        CHECK(xo_capture_end(md.ctx, &update_plan));
    }

    /* Step 1 is a warm-up (first touch of every buffer, thread start): timed apart.
     * A step's phases: gradients (forward, backward, sync), allreduce (including the
     * wait for the slowest rank), update (Adam, the same on every rank). */
    double phase[3] = {0, 0, 0}, t_start = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (long t = 1; t <= o.steps; t++) {
        if (t == 2 || o.steps == 1) {
            MPI_Barrier(MPI_COMM_WORLD);
            phase[0] = phase[1] = phase[2] = 0, t_start = MPI_Wtime();
        }
        double t0 = MPI_Wtime();
        size_t row = (size_t)(t - 1) % nbatches * b;
        if (o.plan) {
            memcpy(md.x_stage, md.x_host + row * D, b * D * sizeof *md.x_stage);
            memcpy(md.y_stage, md.y_host + row, b * sizeof *md.y_stage);
            CHECK(xo_plan_run(grad_plan)); /* returns with md.gh filled */
        } else {
            gradients(&md, md.x, md.y, row);
            CHECK(xo_buffer_sync(md.grad)); /* md.gh is current: hand it to MPI */
        }
        double t1 = MPI_Wtime();
        MPI_Allreduce(MPI_IN_PLACE, md.gh, P + 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        if (!o.plan)
            CHECK(xo_buffer_host_written(md.grad));
        double t2 = MPI_Wtime();
        if (o.print && g_rank == 0)
            printf("step %ld loss %.9e\n", t, md.gh[P] / (double)o.batch);
        bias_correction(&md, t, o.lr);
        if (o.plan)
            CHECK(xo_plan_run(update_plan));
        else
            adam(&md);
        CHECK(xo_finish(md.ctx));
        phase[0] += t1 - t0, phase[1] += t2 - t1, phase[2] += MPI_Wtime() - t2;
    }
    double elapsed = MPI_Wtime() - t_start, slowest = 0;
    long timed = o.steps > 1 ? o.steps - 1 : 1;
    MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    CHECK(xo_buffer_read(md.param, 0, ph, (size_t)P * sizeof *ph));
    if (o.print) /* one line per rank (mpirun may interleave the ranks' lines in any order) */
        printf("rank %d weights %016llx\n", g_rank, (unsigned long long)fnv1a(ph, (size_t)P * sizeof *ph));
    /* rank 0 prints every rank's phases (an idle allreduce is a wait for a slower rank) */
    double *all_phases = malloc(3 * sizeof(double) * (size_t)nranks);
    if (!all_phases)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Gather(phase, 3, MPI_DOUBLE, all_phases, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (g_rank == 0) {
        printf("ranks %d batch %ld (%zu per rank) steps %ld%s: %.2f steps/s\n", nranks, o.batch, b, o.steps,
               o.plan ? " as two plans" : "", timed / slowest);
        for (int r = 0; r < nranks; r++)
            printf("  rank %d, ms per step: gradients %.2f, allreduce of %zu bytes %.2f, update %.2f\n",
                   r, 1e3 * all_phases[3 * r] / timed, ((size_t)P + 1) * sizeof(float),
                   1e3 * all_phases[3 * r + 1] / timed, 1e3 * all_phases[3 * r + 2] / timed);
    }
    free(all_phases);

    xo_plan_destroy(grad_plan);
    xo_plan_destroy(update_plan);
    xo_buffer *all[] = {md.x, md.y, md.param, md.grad, md.m, md.v, md.h1, md.dh1, md.h2,
                        md.dh2, md.z, md.dz, md.loss, md.tmp, md.hyper, md.xb, md.yb};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        xo_buffer_destroy(all[i]);
    xo_context_destroy(md.ctx);
    free(ph), free(md.gh), free(md.x_host), free(md.y_host), free(md.x_stage), free(md.y_stage);
    MPI_Finalize();
    return 0;
}
