/* Four threads, one context, and input buffers that every thread's ops read at once
 * (CONTRACT.md, "Threads"): gemm, gemv, axpy, dot, nrm2, unary and binary over the same
 * shared operands, each thread writing its own outputs and checking them against a
 * plain reference, under auto placement, forced on the first device of a plugin
 * (argument 1, default opencl; skipped without one) and forced cpu. Before each phase
 * the main thread rewrites the shared inputs; in every other round it also scales two
 * of them on that device, so that they are current there only and the threads' first
 * uses race to bring them back to the host.
 *
 * With "exact" as argument 2 (where every move is a real copy and counted: XO_ZERO_COPY=off,
 * or a device that does not share host memory) the device's transfer counters must show
 * each shared buffer moved once per phase, however many threads needed it: two readers
 * bringing the same buffer somewhere move it once. Under ThreadSanitizer
 * (XO_SANITIZE=thread) this test is also the race check of buffer residency, device
 * copies, statistics and the plugins' entry points. */
#include "xo_test.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 4
#define ROUNDS 4
#define GM 40
#define GN 24
#define GK 32
#define VN 8192
#define FSZ sizeof(float)

typedef struct shared_in {
    float a[GM * GK], b[GK * GN], x[VN], z[VN];         /* what the buffers hold */
    float c[GM * GN], y[GM], u[VN], s[VN], dot, nrm;    /* references */
} shared_in;

static xo_context *g_ctx;
static int g_exact;        /* transfers are real copies: check their counts */
static const char *g_plugin; /* the plugin under test */
static int g_dev = -1;       /* its first device, or -1 */
static xo_buffer *g_a, *g_b, *g_x, *g_z;
static shared_in g_in;
static pthread_barrier_t g_start, g_end;
static int g_stop;

typedef struct worker {
    int id, failures;
    char msg[256];
    xo_buffer *c, *y, *w, *u, *s, *dot, *nrm;
} worker;

static void fail_once(worker *w, const char *what, xo_status st)
{
    if (w->failures++ == 0)
        snprintf(w->msg, sizeof w->msg, "thread %d: %s: %s (%s)", w->id, what, xo_status_string(st),
                 xo_last_error());
}

static void check(worker *w, xo_buffer *buf, const float *want, size_t n, const char *what)
{
    float got[VN];
    xo_status st = xo_buffer_read(buf, 0, got, n * FSZ);
    if (st != XO_OK) {
        fail_once(w, what, st);
        return;
    }
    long i = xot_first_mismatch_f(got, want, n, XOT_TOL_F);
    if (i >= 0 && w->failures++ == 0)
        snprintf(w->msg, sizeof w->msg, "thread %d: %s: element %ld got %g want %g", w->id, what, i,
                 (double)got[i], (double)want[i]);
}

#define RUN(w, expr)                                    \
    do {                                                \
        xo_status st_ = (expr);                         \
        if (st_ != XO_OK) {                             \
            fail_once((w), #expr, st_);                 \
            return;                                     \
        }                                               \
    } while (0)

/* One phase of one thread: its own y for axpy, then every op over the shared inputs.
 * Threads start with different ops so that first uses of a buffer meet. */
static void phase(worker *w, int round)
{
    xo_context *ctx = g_ctx;
    static float wh[NTHREADS][VN], wref[NTHREADS][VN];
    float *wv = wh[w->id], *wr = wref[w->id];
    xot_fill_f(wv, VN, (uint64_t)(round * NTHREADS + w->id) + 1000u, -1, 1);
    RUN(w, xo_buffer_write(w->w, 0, wv, sizeof wh[0]));
    memcpy(wr, wv, sizeof wref[0]);
    xot_ref_saxpy(VN, 0.5f, g_in.x, 1, wr, 1);
    for (int k = 0; k < 4; k++) {
        switch ((k + w->id) % 4) {
        case 0:
            RUN(w, xo_sgemm(ctx, XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, GM, GN, GK, 1.0f, g_a, 0, GK, g_b, 0, GN,
                            0.0f, w->c, 0, GN));
            break;
        case 1:
            RUN(w, xo_sgemv(ctx, XO_ROW_MAJOR, XO_NO_TRANS, GM, GK, 1.0f, g_a, 0, GK, g_x, 0, 1, 0.0f, w->y, 0, 1));
            RUN(w, xo_saxpy(ctx, VN, 0.5f, g_x, 0, 1, w->w, 0, 1));
            break;
        case 2:
            RUN(w, xo_sdot(ctx, VN, g_x, 0, 1, g_z, 0, 1, w->dot, 0));
            RUN(w, xo_snrm2(ctx, VN, g_z, 0, 1, w->nrm, 0));
            break;
        default:
            RUN(w, xo_sunary(ctx, XO_TANH, VN, g_x, 0, w->u, 0));
            RUN(w, xo_sbinary(ctx, XO_MUL, VN, g_x, 0, g_z, 0, w->s, 0));
            break;
        }
    }
    check(w, g_x, g_in.x, VN, "shared x read back");
    check(w, w->c, g_in.c, GM * GN, "sgemm");
    check(w, w->y, g_in.y, GM, "sgemv");
    check(w, w->w, wr, VN, "saxpy");
    check(w, w->dot, &g_in.dot, 1, "sdot");
    check(w, w->nrm, &g_in.nrm, 1, "snrm2");
    check(w, w->u, g_in.u, VN, "sunary tanh");
    check(w, w->s, g_in.s, VN, "sbinary mul");
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    for (int round = 0;; round++) {
        pthread_barrier_wait(&g_start);
        if (g_stop)
            break;
        if (w->failures == 0)
            phase(w, round);
        pthread_barrier_wait(&g_end);
    }
    return NULL;
}

/* New shared inputs (scaled by 2 on the device under test when `on_device`: then x and
 * b are current there only) and their references. */
static void prepare(int seed, int on_device)
{
    shared_in *in = &g_in;
    xot_fill_f(in->a, GM * GK, (uint64_t)seed, -1, 1);
    xot_fill_f(in->b, GK * GN, (uint64_t)seed + 1, -1, 1);
    xot_fill_f(in->x, VN, (uint64_t)seed + 2, -1, 1);
    xot_fill_f(in->z, VN, (uint64_t)seed + 3, -1, 1);
    xot_assert_ok(xo_buffer_write(g_a, 0, in->a, sizeof in->a));
    xot_assert_ok(xo_buffer_write(g_b, 0, in->b, sizeof in->b));
    xot_assert_ok(xo_buffer_write(g_x, 0, in->x, sizeof in->x));
    xot_assert_ok(xo_buffer_write(g_z, 0, in->z, sizeof in->z));
    if (on_device) {
        char spec[64];
        xot_device_spec(g_ctx, g_dev, spec, sizeof spec);
        xot_assert_ok(xo_set_device(g_ctx, spec));
        xot_assert_ok(xo_sscal(g_ctx, VN, 2.0f, g_x, 0, 1));
        xot_assert_ok(xo_sscal(g_ctx, GK * GN, 2.0f, g_b, 0, 1));
        xot_ref_sscal(VN, 2.0f, in->x, 1);
        xot_ref_sscal(GK * GN, 2.0f, in->b, 1);
    }
    xot_ref_sgemm(XO_ROW_MAJOR, XO_NO_TRANS, XO_NO_TRANS, GM, GN, GK, 1.0f, in->a, GK, in->b, GN, 0.0f, in->c, GN);
    xot_ref_sgemv(XO_ROW_MAJOR, XO_NO_TRANS, GM, GK, 1.0f, in->a, GK, in->x, 1, 0.0f, in->y, 1);
    in->dot = xot_ref_sdot(VN, in->x, 1, in->z, 1);
    in->nrm = xot_ref_snrm2(VN, in->z, 1);
    xot_ref_sunary(XO_TANH, VN, in->x, in->u);
    xot_ref_sbinary(XO_MUL, VN, in->x, in->z, in->s);
}

/* Bytes the device under test must have moved in one phase when every move is a copy. */
static void expected_moves(int forced, int on_device, uint64_t *in_bytes, uint64_t *out_bytes)
{
    const uint64_t a = sizeof g_in.a, b = sizeof g_in.b, v = VN * FSZ;
    *in_bytes = *out_bytes = 0;
    if (forced == g_dev) {
        /* a and z (and x, b unless they are there already) once; each thread's own w,
         * which axpy reads. Each thread reads back its seven outputs, and x once in all
         * when it was current on the device only. */
        *in_bytes = a + v + (on_device ? 0 : v + b) + NTHREADS * v;
        *out_bytes = NTHREADS * ((GM * GN + GM + 3 * VN + 2) * FSZ) + (on_device ? v : 0);
    } else if (forced == 0 && on_device) {
        *out_bytes = v + b; /* x and b come back to the host once */
    }
}

static void run_phases(const char *placement, int forced)
{
    worker ws[NTHREADS];
    pthread_t th[NTHREADS];
    memset(ws, 0, sizeof ws);
    assert_int_equal(pthread_barrier_init(&g_start, NULL, NTHREADS + 1), 0);
    assert_int_equal(pthread_barrier_init(&g_end, NULL, NTHREADS + 1), 0);
    g_stop = 0;
    for (int i = 0; i < NTHREADS; i++) {
        worker *w = &ws[i];
        w->id = i;
        w->c = xot_buffer(g_ctx, NULL, GM * GN * FSZ);
        w->y = xot_buffer(g_ctx, NULL, GM * FSZ);
        w->w = xot_buffer(g_ctx, NULL, VN * FSZ);
        w->u = xot_buffer(g_ctx, NULL, VN * FSZ);
        w->s = xot_buffer(g_ctx, NULL, VN * FSZ);
        w->dot = xot_buffer(g_ctx, NULL, FSZ);
        w->nrm = xot_buffer(g_ctx, NULL, FSZ);
        assert_int_equal(pthread_create(&th[i], NULL, worker_main, w), 0);
    }
    int failed = 0;
    for (int round = 0; round < ROUNDS && !failed; round++) {
        int on_device = g_dev >= 0 && round % 2 == 1;
        prepare(100 * round + forced + 7, on_device);
        xot_assert_ok(xo_set_device(g_ctx, placement));
        xo_stats before = {0}, after = {0};
        if (g_dev >= 0)
            xot_assert_ok(xo_stats_get(g_ctx, g_dev, &before));
        pthread_barrier_wait(&g_start);
        pthread_barrier_wait(&g_end);
        for (int i = 0; i < NTHREADS; i++)
            if (ws[i].failures) {
                print_error("%s, round %d: %d failure(s); first: %s\n", placement, round, ws[i].failures,
                            ws[i].msg);
                failed = 1;
            }
        if (failed || !g_exact || g_dev < 0)
            continue;
        xot_assert_ok(xo_stats_get(g_ctx, g_dev, &after));
        uint64_t want_in, want_out;
        expected_moves(forced, on_device, &want_in, &want_out);
        if (forced >= 0 && (after.bytes_in - before.bytes_in != want_in ||
                            after.bytes_out - before.bytes_out != want_out)) {
            print_error("%s, round %d: the device moved %llu bytes in and %llu out, want %llu and %llu "
                        "(each shared buffer once)\n", placement, round,
                        (unsigned long long)(after.bytes_in - before.bytes_in),
                        (unsigned long long)(after.bytes_out - before.bytes_out), (unsigned long long)want_in,
                        (unsigned long long)want_out);
            failed = 1;
        }
    }
    g_stop = 1;
    pthread_barrier_wait(&g_start);
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        xo_buffer *own[] = {ws[i].c, ws[i].y, ws[i].w, ws[i].u, ws[i].s, ws[i].dot, ws[i].nrm};
        for (size_t j = 0; j < sizeof own / sizeof own[0]; j++)
            xo_buffer_destroy(own[j]);
    }
    pthread_barrier_destroy(&g_start);
    pthread_barrier_destroy(&g_end);
    xot_assert_ok(xo_set_device(g_ctx, "auto"));
    if (failed)
        fail();
}

static void test_shared_auto(void **state)
{
    (void)state;
    run_phases("auto", -1);
}

static void test_shared_device(void **state)
{
    (void)state;
    if (g_dev < 0)
        skip();
    char spec[64];
    xot_device_spec(g_ctx, g_dev, spec, sizeof spec);
    run_phases(spec, g_dev);
}

static void test_shared_cpu(void **state)
{
    (void)state;
    run_phases("cpu", 0);
}

static int setup(void **state)
{
    (void)state;
    if (xo_context_create(&g_ctx) != XO_OK)
        return -1;
    for (int d = 0; d < xo_device_count(g_ctx); d++) {
        xo_device_info info;
        if (xo_device_get_info(g_ctx, d, &info) == XO_OK && strcmp(info.plugin, g_plugin) == 0) {
            g_dev = d;
            break;
        }
    }
    g_a = xot_buffer(g_ctx, NULL, sizeof g_in.a);
    g_b = xot_buffer(g_ctx, NULL, sizeof g_in.b);
    g_x = xot_buffer(g_ctx, NULL, sizeof g_in.x);
    g_z = xot_buffer(g_ctx, NULL, sizeof g_in.z);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    xo_buffer_destroy(g_a);
    xo_buffer_destroy(g_b);
    xo_buffer_destroy(g_x);
    xo_buffer_destroy(g_z);
    xo_context_destroy(g_ctx);
    return 0;
}

int main(int argc, char **argv)
{
    g_plugin = argc > 1 ? argv[1] : "opencl";
    g_exact = argc > 2 && strcmp(argv[2], "exact") == 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_device),
        cmocka_unit_test(test_shared_cpu),
        cmocka_unit_test(test_shared_auto),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
