/* Residency per span (core/exec/residency.c) against a plain reference: random small ops,
 * host writes and reads on random spans of a few buffers, each placed on the CPU, one of
 * two mock devices or by the model, so that copies are current on some spans only, on
 * several devices at once, and past XO_SPANS spans (where gaps move too, or the writer's
 * copy goes whole). Every read, and every buffer at the end, must equal the reference.
 * The same runs with faults: the XO_FAULTS sites (upload, download, launch) and the
 * mock's own failures at random calls; a failed call changes nothing, nothing is lost.
 *
 * ctest runs it with XO_PLUGINS=cpu,mock and XO_CALIBRATE=off. */
#include "xo_test.h"
#include "mock_plugin.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBUF 4
#define LEN 2048 /* floats per buffer */
#define STEPS 4000

typedef struct world {
    xo_context *ctx;
    xo_buffer *b[NBUF];
    float ref[NBUF][LEN];
    uint64_t rng;
    long failed; /* calls that returned an error (faults) */
} world;

static uint64_t next(world *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}
static size_t below(world *w, size_t n) { return (size_t)(next(w) % n); }
static float value(world *w) { return (float)((double)below(w, 2001) / 1000.0 - 1.0); }

/* A world in `w` (malloc'ed by the caller; close_world frees it). */
static void open_world(world *w, uint64_t seed, const char *faults)
{
    memset(w, 0, sizeof *w);
    w->rng = seed * 0x9E3779B97F4A7C15ull + 1;
    xo_mock_config cfg = {.launch_us = 2, .gflops = 100, .gbps = 50, .transfer_latency_us = 1,
                          .transfer_gbps = 50, .devices = 2};
    xo_mock_install(&cfg);
    if (faults)
        setenv("XO_FAULTS", faults, 1);
    xot_assert_ok(xo_context_create(&w->ctx));
    unsetenv("XO_FAULTS");
    for (int k = 0; k < NBUF; k++) {
        for (int i = 0; i < LEN; i++)
            w->ref[k][i] = value(w);
        w->b[k] = xot_buffer(w->ctx, w->ref[k], sizeof w->ref[k]);
    }
}

static void close_world(world *w)
{
    for (int k = 0; k < NBUF; k++)
        xo_buffer_destroy(w->b[k]);
    xo_context_destroy(w->ctx);
    xo_mock_install(NULL);
    free(w);
}

/* A failed call is allowed only as a device failure (a download that failed twice), and
 * changes nothing; returns 1 if the call succeeded. */
static int outcome(world *w, xo_status st)
{
    if (st == XO_OK)
        return 1;
    assert_int_equal(st, XO_ERR_DEVICE);
    w->failed++;
    return 0;
}

static void check_span(world *w, int k, size_t off, size_t n, const char *what)
{
    float got[LEN];
    xo_status st = xo_buffer_read(w->b[k], off * sizeof(float), got, n * sizeof(float));
    if (!outcome(w, st))
        return;
    xot_assert_close_f(got, w->ref[k] + off, n, what);
}

/* One random step. */
static void step(world *w)
{
    static const char *where[] = {"cpu", "mock:0", "mock:1", "auto"};
    xot_assert_ok(xo_set_device(w->ctx, where[below(w, 4)]));
    int k = (int)below(w, NBUF), j = (int)below(w, NBUF);
    size_t n = 1 + below(w, below(w, 4) ? 300 : LEN); /* mostly small spans */
    size_t inc = below(w, 4) ? 1 : 2;
    size_t span = (n - 1) * inc + 1;
    if (span > LEN) {
        n = (LEN - 1) / inc + 1;
        span = (n - 1) * inc + 1;
    }
    size_t off = below(w, LEN - span + 1), off2 = below(w, LEN - span + 1);
    float a = value(w);
    switch (below(w, 6)) {
    case 0: /* y += a x, two buffers (or one, spans apart) */
        if (j == k && (off < off2 ? off2 - off : off - off2) < span)
            j = (k + 1) % NBUF;
        if (outcome(w, xo_saxpy(w->ctx, n, a, w->b[j], off2, inc, w->b[k], off, inc)))
            for (size_t i = 0; i < n; i++)
                w->ref[k][off + i * inc] += a * w->ref[j][off2 + i * inc];
        break;
    case 1: /* x *= a, near 1 so that values stay bounded */
        a = a < 0 ? -1.0f - a * 0.05f : 1.0f - a * 0.05f;
        if (outcome(w, xo_sscal(w->ctx, n, a, w->b[k], off, inc)))
            for (size_t i = 0; i < n; i++)
                w->ref[k][off + i * inc] *= a;
        break;
    case 2: /* y = -x, in place or into another buffer */
        if (outcome(w, xo_sunary(w->ctx, XO_NEG, span, w->b[j], off2, w->b[k], j == k ? off2 : off))) {
            float tmp[LEN];
            memcpy(tmp, w->ref[j] + off2, span * sizeof(float));
            for (size_t i = 0; i < span; i++)
                w->ref[k][(j == k ? off2 : off) + i] = -tmp[i];
        }
        break;
    case 3: { /* a host write of a span */
        float v[LEN];
        for (size_t i = 0; i < span; i++)
            v[i] = value(w);
        if (outcome(w, xo_buffer_write(w->b[k], off * sizeof(float), v, span * sizeof(float))))
            memcpy(w->ref[k] + off, v, span * sizeof(float));
        break;
    }
    default: /* a read of a span */
        check_span(w, k, off, span, "a span read between ops");
        break;
    }
}

static void run_world(uint64_t seed, const char *faults, int mock_faults)
{
    world *w = malloc(sizeof *w);
    assert_non_null(w);
    open_world(w, seed, faults);
    for (int s = 0; s < STEPS; s++) {
        if (mock_faults && below(w, 40) == 0)
            xo_mock_fail((xo_mock_site)below(w, XO_MOCK_SITES), 1 + (long)below(w, 4));
        step(w);
    }
    xo_mock_fail(XO_MOCK_DOWNLOAD, 0);
    xo_mock_fail(XO_MOCK_UPLOAD, 0);
    xot_assert_ok(xo_set_device(w->ctx, "auto"));
    xo_stats st = {0};
    uint64_t fallbacks = 0;
    for (int d = 1; d < xo_device_count(w->ctx); d++) {
        xot_assert_ok(xo_stats_get(w->ctx, d, &st));
        fallbacks += st.fallbacks;
    }
    for (int k = 0; k < NBUF; k++) {
        xo_mock_fail(XO_MOCK_DOWNLOAD, 0); /* the device copies stayed current: now they come */
        check_span(w, k, 0, LEN, "every buffer at the end");
    }
    printf("# seed %llu%s%s: %ld calls failed, %llu ops fell back\n", (unsigned long long)seed,
           faults ? ", XO_FAULTS=" : "", faults ? faults : "", w->failed, (unsigned long long)fallbacks);
    if (faults || mock_faults)
        assert_true(fallbacks > 0 || w->failed > 0);
    close_world(w);
}

static void random_spans_match_the_reference(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++)
        run_world(seed, NULL, 0);
}

static void fault_sites_lose_nothing(void **state)
{
    (void)state;
    run_world(11, "mock.upload@3,mock.upload@40,mock.download@2,mock.download@3,mock.download@30,"
                  "mock.launch@5,mock.launch@77,mock.alloc@2",
              0);
    run_world(12, "mock.download@*", 0); /* no download ever succeeds: reads fail, nothing lost */
}

static void mock_failures_lose_nothing(void **state)
{
    (void)state;
    for (uint64_t seed = 21; seed <= 23; seed++)
        run_world(seed, NULL, 1);
}

/* The span lists themselves, step by step on one device: a partial read, a partial write
 * from the host, more spans than XO_SPANS (the smallest gap moves too), and a write whose
 * hole would split another copy past XO_SPANS (the writer's copy goes whole). */
static void span_lists_step_by_step(void **state)
{
    (void)state;
    world *w = malloc(sizeof *w);
    assert_non_null(w);
    open_world(w, 99, NULL);
    int mock;
    xot_assert_ok(xo_device_find(w->ctx, "mock:0", &mock));
    xo_buffer *b = w->b[0];
    float *r = w->ref[0];
    xot_assert_ok(xo_set_device(w->ctx, "mock:0"));
    xot_assert_ok(xo_sscal(w->ctx, LEN, 2.0f, b, 0, 1)); /* current on the mock only */
    for (int i = 0; i < LEN; i++)
        r[i] *= 2.0f;
    xot_assert_ok(xo_finish(w->ctx));
    xot_assert_ok(xo_stats_reset(w->ctx));
    xo_stats st;

    /* A read of 10 floats downloads 10 floats; reading them again moves nothing. */
    check_span(w, 0, 100, 10, "partial read");
    check_span(w, 0, 100, 10, "partial read again");
    xot_assert_ok(xo_stats_get(w->ctx, mock, &st));
    assert_int_equal(st.bytes_out, 10 * sizeof(float));
    assert_int_equal(st.transfers, 1);

    /* A host write of 4 floats elsewhere moves nothing; the mock's next op on the whole
     * buffer uploads those 4 floats only. */
    float v[4] = {1, 2, 3, 4};
    xot_assert_ok(xo_buffer_write(b, 500 * sizeof(float), v, sizeof v));
    memcpy(r + 500, v, sizeof v);
    xot_assert_ok(xo_sscal(w->ctx, LEN, 0.5f, b, 0, 1));
    for (int i = 0; i < LEN; i++)
        r[i] *= 0.5f;
    xot_assert_ok(xo_finish(w->ctx));
    xot_assert_ok(xo_stats_get(w->ctx, mock, &st));
    assert_int_equal(st.bytes_out, 10 * sizeof(float));
    assert_int_equal(st.bytes_in, sizeof v);

    /* Six reads of 8 floats, 100 floats apart: past XO_SPANS spans on the host, the smallest
     * gaps come along, so more than 48 floats move but far fewer than the buffer. */
    xot_assert_ok(xo_stats_reset(w->ctx));
    for (int s = 0; s < 6; s++)
        check_span(w, 0, 1000 + 100 * (size_t)s, 8, "six separate spans");
    xot_assert_ok(xo_stats_get(w->ctx, mock, &st));
    assert_true(st.bytes_out > 48 * sizeof(float));
    assert_true(st.bytes_out <= 508 * sizeof(float));

    /* The mock's copy whole again, the host's dropped: host writes of one float each,
     * 40 floats apart, each punch a hole into the mock's copy. The fourth would leave it
     * five spans: the host's copy is made whole first (the rest of the buffer comes
     * down), and the mock's is dropped. Data stays right throughout. */
    xot_assert_ok(xo_sscal(w->ctx, LEN, -1.0f, b, 0, 1));
    for (int i = 0; i < LEN; i++)
        r[i] = -r[i];
    xot_assert_ok(xo_finish(w->ctx));
    xot_assert_ok(xo_stats_reset(w->ctx));
    for (int s = 0; s < 3; s++) {
        float x = (float)s;
        size_t at = 1700 + 40 * (size_t)s;
        xot_assert_ok(xo_buffer_write(b, at * sizeof(float), &x, sizeof x));
        r[at] = x;
    }
    xot_assert_ok(xo_stats_get(w->ctx, mock, &st));
    assert_int_equal(st.bytes_out, 0);
    float x = 3.0f;
    xot_assert_ok(xo_buffer_write(b, 1820 * sizeof(float), &x, sizeof x));
    r[1820] = x;
    xot_assert_ok(xo_stats_get(w->ctx, mock, &st));
    assert_int_equal(st.bytes_out, (LEN - 3) * sizeof(float));
    check_span(w, 0, 0, LEN, "holes punched by host writes");
    xot_assert_ok(xo_stats_get(w->ctx, mock, &st));
    assert_int_equal(st.bytes_out, (LEN - 3) * sizeof(float)); /* the host's copy is whole */
    xot_assert_ok(xo_sscal(w->ctx, LEN, 1.0f, b, 0, 1));
    xot_assert_ok(xo_finish(w->ctx));
    xot_assert_ok(xo_stats_get(w->ctx, mock, &st));
    assert_int_equal(st.bytes_in, LEN * sizeof(float)); /* the mock's copy was dropped */
    check_span(w, 0, 0, LEN, "after the mock's op");
    close_world(w);
}

/* Readers on several threads at once (CONTRACT.md: ops may read a buffer at once): each
 * reads random spans of a buffer current only on mock:0, from the host and through ops
 * on mock:1 into its own buffer, so that span lists grow on both copies concurrently.
 * Every result equals the reference. */
#define READERS 4
typedef struct reader {
    world *w;
    int id;
    xo_buffer *out;
    int failures;
} reader;

static void *read_spans(void *arg)
{
    reader *r = arg;
    world *w = r->w;
    uint64_t rng = 0x1234567ull * (uint64_t)(r->id + 1);
    float got[LEN], out[LEN];
    for (int s = 0; s < 300; s++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        size_t n = 1 + rng % 200, off = (rng >> 20) % (LEN - n);
        if (s % 2) {
            if (xo_buffer_read(w->b[0], off * sizeof(float), got, n * sizeof(float)) != XO_OK ||
                xot_first_mismatch_f(got, w->ref[0] + off, n, 1e-6) >= 0)
                r->failures++;
        } else {
            /* out[0, n) = -b0[off, off + n), on mock:1 */
            if (xo_sunary(w->ctx, XO_NEG, n, w->b[0], off, r->out, 0) != XO_OK ||
                xo_buffer_read(r->out, 0, out, n * sizeof(float)) != XO_OK) {
                r->failures++;
                continue;
            }
            for (size_t i = 0; i < n; i++)
                got[i] = -w->ref[0][off + i];
            if (xot_first_mismatch_f(out, got, n, 1e-6) >= 0)
                r->failures++;
        }
    }
    return NULL;
}

static void readers_on_threads_share_span_lists(void **state)
{
    (void)state;
    world *w = malloc(sizeof *w);
    assert_non_null(w);
    open_world(w, 7, NULL);
    xot_assert_ok(xo_set_device(w->ctx, "mock:0"));
    xot_assert_ok(xo_sscal(w->ctx, LEN, 3.0f, w->b[0], 0, 1));
    for (int i = 0; i < LEN; i++)
        w->ref[0][i] *= 3.0f;
    xot_assert_ok(xo_finish(w->ctx));
    /* The readers' ops run on mock:1 (the device policy is the context's), their reads
     * on the host: both copies gather spans of b0 at once. */
    xot_assert_ok(xo_set_device(w->ctx, "mock:1"));
    reader rd[READERS];
    pthread_t t[READERS];
    for (int i = 0; i < READERS; i++) {
        rd[i] = (reader){.w = w, .id = i, .out = xot_buffer(w->ctx, NULL, LEN * sizeof(float))};
        assert_int_equal(pthread_create(&t[i], NULL, read_spans, &rd[i]), 0);
    }
    for (int i = 0; i < READERS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(rd[i].failures, 0);
        xo_buffer_destroy(rd[i].out);
    }
    check_span(w, 0, 0, LEN, "the shared buffer after the readers");
    close_world(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(span_lists_step_by_step),
        cmocka_unit_test(random_spans_match_the_reference),
        cmocka_unit_test(fault_sites_lose_nothing),
        cmocka_unit_test(mock_failures_lose_nothing),
        cmocka_unit_test(readers_on_threads_share_span_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
