/* xo_medium_gemm: the RNN's products (bench_rnn.c: hidden 256, input 8, at batch 100 and
 * 10000) one at a time, through crossover on the CPU (xo_sgemm, xo_sgemm_bias_act; forced
 * there by this program) against cblas_sgemm on the same data (for the hidden layer the
 * product alone: crossover's side also adds the bias and takes the tanh, OpenBLAS's
 * leaves them out). Rounds alternate the two sides: a block of
 * crossover calls, a block of OpenBLAS calls, then a pause that lets OpenBLAS's threads
 * stop spinning (they spin about 0.1 s after each call, on the cores crossover's pool
 * uses). Each block starts with untimed calls (threads awake, caches warm) and times at
 * least 20 ms of calls; each figure is the median over the rounds of us per call;
 * ratio = OpenBLAS / crossover (> 1: crossover faster).
 *   usage: xo_medium_gemm [rounds (default 7)] */
#include <crossover.h>

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROUNDS_MAX 64

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

typedef struct shape {
    const char *what;
    int ta, tb, act; /* act: the hidden layer, C = tanh(A B + C + bias) */
    size_t m, n, k;
    float beta;
} shape;

typedef struct side {
    xo_context *ctx;
    xo_buffer *a, *b, *c, *bias;
    float *ha, *hb, *hc, *hbias;
} side;

static xo_status xo_call(const side *s, const shape *p)
{
    const size_t lda = p->ta ? p->m : p->k, ldb = p->tb ? p->k : p->n;
    const xo_transpose ta = p->ta ? XO_TRANS : XO_NO_TRANS, tb = p->tb ? XO_TRANS : XO_NO_TRANS;
    if (p->act)
        return xo_sgemm_bias_act(s->ctx, XO_ROW_MAJOR, ta, tb, p->m, p->n, p->k, 1.0f, s->a, 0, lda, s->b, 0, ldb,
                                 p->beta, s->c, 0, p->n, s->bias, 0, XO_TANH);
    return xo_sgemm(s->ctx, XO_ROW_MAJOR, ta, tb, p->m, p->n, p->k, 1.0f, s->a, 0, lda, s->b, 0, ldb, p->beta, s->c,
                    0, p->n);
}

static void blas_call(const side *s, const shape *p)
{
    const int lda = (int)(p->ta ? p->m : p->k), ldb = (int)(p->tb ? p->k : p->n), n = (int)p->n;
    cblas_sgemm(CblasRowMajor, p->ta ? CblasTrans : CblasNoTrans, p->tb ? CblasTrans : CblasNoTrans, (int)p->m, n,
                (int)p->k, 1.0f, s->ha, lda, s->hb, ldb, p->beta, s->hc, n);
}

static int call(const side *s, const shape *p, int xo)
{
    if (xo)
        return xo_call(s, p) == XO_OK;
    blas_call(s, p);
    return 1;
}

/* us per call over a block of about 20 ms, after 2 ms of untimed calls; -1: an error */
static double block(const side *s, const shape *p, int xo)
{
    int warm = 0;
    double t0 = now_us();
    while (now_us() - t0 < 2e3 || warm < 1) {
        if (!call(s, p, xo)) return -1;
        warm++;
    }
    if (xo && xo_finish(s->ctx) != XO_OK) return -1;
    const double per = (now_us() - t0) / warm;
    const int calls = per > 2e4 / 3 ? 3 : (int)(2e4 / per);
    t0 = now_us();
    for (int i = 0; i < calls; i++)
        if (!call(s, p, xo)) return -1;
    if (xo && xo_finish(s->ctx) != XO_OK) return -1;
    return (now_us() - t0) / calls;
}

static float *filled(size_t n, float scale, unsigned seed)
{
    float *h = malloc(n * sizeof *h);
    for (size_t i = 0; h && i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        h[i] = scale * ((float)(seed >> 8) / (float)(1u << 24) * 2.0f - 1.0f);
    }
    return h;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 7;
    rounds = rounds < 1 ? 1 : rounds > ROUNDS_MAX ? ROUNDS_MAX : rounds;
    setenv("XO_DEVICE", "cpu", 1);
    side s = {0};
    if (xo_context_create(&s.ctx) != XO_OK) {
        fprintf(stderr, "xo_medium_gemm: %s\n", xo_last_error());
        return 1;
    }
    printf("%-28s %-16s %12s %12s %8s %8s %7s\n", "product", "m x n x k", "crossover us", "OpenBLAS us",
           "xo GF/s", "BLAS GF/s", "ratio");
    int rc = 0;
    static const size_t batches[] = {100, 10000};
    for (size_t bi = 0; bi < 2 && !rc; bi++) {
        const size_t B = batches[bi], H = 256, IN = 8;
        const shape shapes[] = {
            {"hidden: tanh(h W + x W + b)", 0, 0, 1, B, H, H, 1.0f},
            {"input: x Wx", 0, 0, 0, B, H, IN, 0.0f},
            {"dWh += h^T dz (T N)", 1, 0, 0, H, H, B, 1.0f},
            {"dWx += x^T dz (T N)", 1, 0, 0, IN, H, B, 1.0f},
            {"dh = dz Wh^T (N T)", 0, 1, 0, B, H, H, 0.0f},
        };
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0] && !rc; i++) {
            const shape *p = &shapes[i];
            const size_t na = p->m * p->k, nb = p->k * p->n, nc = p->m * p->n;
            s.ha = filled(na, 0.5f, 1), s.hb = filled(nb, 1.0f / (float)p->k, 2), s.hc = filled(nc, 0.5f, 3);
            s.hbias = filled(p->n, 0.1f, 4);
            if (!s.ha || !s.hb || !s.hc || !s.hbias || xo_buffer_create(s.ctx, na * 4, &s.a) != XO_OK ||
                xo_buffer_create(s.ctx, nb * 4, &s.b) != XO_OK || xo_buffer_create(s.ctx, nc * 4, &s.c) != XO_OK ||
                xo_buffer_create(s.ctx, p->n * 4, &s.bias) != XO_OK || xo_buffer_write(s.a, 0, s.ha, na * 4) != XO_OK ||
                xo_buffer_write(s.b, 0, s.hb, nb * 4) != XO_OK || xo_buffer_write(s.c, 0, s.hc, nc * 4) != XO_OK ||
                xo_buffer_write(s.bias, 0, s.hbias, p->n * 4) != XO_OK) {
                fprintf(stderr, "xo_medium_gemm: %s\n", xo_last_error());
                rc = 1;
            }
            double tx[ROUNDS_MAX], tb[ROUNDS_MAX];
            for (int r = 0; r < rounds && !rc; r++) {
                tx[r] = block(&s, p, 1);
                tb[r] = block(&s, p, 0);
                if (tx[r] < 0) {
                    fprintf(stderr, "xo_medium_gemm: %s\n", xo_last_error());
                    rc = 1;
                }
                struct timespec pause = {0, 150000000L}; /* OpenBLAS's threads stop spinning */
                nanosleep(&pause, NULL);
            }
            if (!rc) {
                qsort(tx, (size_t)rounds, sizeof tx[0], cmp);
                qsort(tb, (size_t)rounds, sizeof tb[0], cmp);
                double x = tx[rounds / 2], o = tb[rounds / 2], flop = 2.0 * (double)p->m * (double)p->n * (double)p->k;
                char dims[32];
                snprintf(dims, sizeof dims, "%zux%zux%zu", p->m, p->n, p->k);
                printf("%-28s %-16s %12.1f %12.1f %8.0f %8.0f %7.2f\n", p->what, dims, x, o, flop / x * 1e-3,
                       flop / o * 1e-3, o / x);
                fflush(stdout);
            }
            xo_buffer_destroy(s.a), xo_buffer_destroy(s.b), xo_buffer_destroy(s.c), xo_buffer_destroy(s.bias);
            free(s.ha), free(s.hb), free(s.hc), free(s.hbias);
        }
    }
    xo_context_destroy(s.ctx);
    return rc;
}
