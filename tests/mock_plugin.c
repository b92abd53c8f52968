/* The mock device plugin (tests only): see mock_plugin.h. */
#include "mock_plugin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

const xo_plugin *xo_plugin_cpu(void); /* the CPU plugin computes the mock's results */

struct xo_plugin_mem {
    unsigned char *p;
    size_t bytes;
};

/* One entry of the in-order queue: an op, or an upload whose source is staged. */
typedef struct item {
    struct item *next;
    uint64_t token;
    xo_op_desc op;          /* an op when staged == NULL and chain == NULL */
    xo_chain_step *chain;   /* a chain (the "xo_chain" extra): its steps, copied */
    int nsteps;
    unsigned char *staged;  /* an upload: its data, copied at upload() */
    xo_plugin_mem *dst;
    size_t off, bytes;
} item;

#define MOCK_TIMINGS 1024

typedef struct mock_state {
    const xo_plugin_host *host;
    void *cpu; /* a private CPU plugin state */
    pthread_t worker;
    pthread_mutex_t lock;
    pthread_cond_t wake, idle;
    item *head, *tail;
    int busy, stop;
    xo_op_timing done[MOCK_TIMINGS]; /* ring of completed ops' modelled times */
    int done_first, ndone;
    xo_status error; /* the first failure of a queued op, reported by finish/download */
    char message[256];
} mock_state;

static xo_mock_config config;
static _Atomic long fail_at[XO_MOCK_SITES], calls[XO_MOCK_SITES];
static _Atomic long slow_runs;
static _Atomic double slow_factor;

static const xo_plugin *mock_plugin_fn(void) { return xo_plugin_mock(); }

void xo_mock_install(const xo_mock_config *cfg)
{
    if (cfg)
        config = *cfg;
    for (int s = 0; s < XO_MOCK_SITES; s++) {
        atomic_store(&fail_at[s], 0);
        atomic_store(&calls[s], 0);
    }
    atomic_store(&slow_runs, 0);
    xo__test_plugin = cfg ? mock_plugin_fn : NULL;
}

void xo_mock_fail(xo_mock_site site, long nth)
{
    atomic_store(&fail_at[site], nth > 0 ? atomic_load(&calls[site]) + nth : nth);
}

long xo_mock_calls(xo_mock_site site) { return atomic_load(&calls[site]); }

void xo_mock_slow(double factor, long runs)
{
    atomic_store(&slow_factor, factor);
    atomic_store(&slow_runs, runs);
}

static int fails(xo_mock_site site)
{
    long n = atomic_fetch_add(&calls[site], 1) + 1, at = atomic_load(&fail_at[site]);
    return at == -1 || (at > 0 && n == at);
}

void xo_mock_profile(const xo_device_info *identity, xo__profile *out)
{
    memset(out, 0, sizeof *out);
    out->info = *identity;
    out->info.launch_us = config.launch_us;
    out->info.transfer_latency_us = config.transfer_latency_us;
    out->info.h2d_gbps = out->info.d2h_gbps = config.transfer_gbps;
    out->info.mem_gbps = config.gbps;
    out->info.peak_gflops = config.gflops;
    for (int t = 0; t < 2; t++) {
        out->stream_gbps[t] = config.gbps;
        for (int i = 0; i < XO_CURVE_POINTS; i++)
            out->gemm_gflops[t][i] = config.gflops;
    }
    snprintf(out->library_version, sizeof out->library_version, "%s", XO_VERSION_STRING);
}

double xo_mock_op_us(const xo_op_desc *op)
{
    xo__profile p;
    xo_mock_profile(&(xo_device_info){0}, &p);
    xo__op_cost cost;
    xo__op_cost_init(&cost, op->kind, op->dtype, op->m, op->n, op->k);
    return config.launch_us + xo__compute_us(&p, &cost);
}

static double transfer_us(size_t bytes)
{
    double gbps = config.transfer_gbps > 0 ? config.transfer_gbps : 1e9;
    return config.transfer_latency_us + (double)bytes / (gbps * 1e3);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* Sleep until the monotonic clock reads `t_us` (no earlier, and not much later: the
 * worker's timer slack is 1 ns). */
static void sleep_until(double t_us)
{
    struct timespec ts = {.tv_sec = (time_t)(t_us * 1e-6)};
    ts.tv_nsec = (long)((t_us - (double)ts.tv_sec * 1e6) * 1e3);
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_nsec = 999999999L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* ---- the queue ---------------------------------------------------------------- */

/* The host memory behind each operand of d, for the CPU plugin to run it on. */
static void on_host(xo_op_desc *d)
{
    for (int i = 0; i < d->narg; i++) {
        d->arg[i].host = d->arg[i].mem ? d->arg[i].mem->p : NULL;
        d->arg[i].mem = NULL;
    }
}

/* The first failure of the queue, reported by the next finish. */
static void keep_first_error(mock_state *s, xo_status st)
{
    if (st == XO_OK) return;
    pthread_mutex_lock(&s->lock);
    if (s->error == XO_OK) {
        s->error = st;
        snprintf(s->message, sizeof s->message, "%s", xo_last_error());
    }
    pthread_mutex_unlock(&s->lock);
}

static void execute(mock_state *s, item *it)
{
    double t0 = now_us(), us;
    if (it->staged) {
        memcpy(it->dst->p + it->off, it->staged, it->bytes);
        us = transfer_us(it->bytes);
    } else if (it->chain) {
        /* The CPU plugin's chain runner on the host memory behind each operand. */
        const xo_chain_runner *cpu = xo_plugin_cpu()->get_proc_address("xo_chain");
        us = config.launch_us;
        for (int k = 0; k < it->nsteps; k++) {
            on_host(&it->chain[k].op);
            us += xo_mock_op_us(&it->chain[k].op) - config.launch_us;
        }
        xo_chain c = {it->chain[0].op.dtype, it->chain[0].op.n, it->nsteps, it->chain};
        keep_first_error(s, cpu->run(s->cpu, 0, &c, 0));
    } else {
        xo_op_desc d = it->op;
        on_host(&d);
        keep_first_error(s, xo_plugin_cpu()->run(s->cpu, 0, &d, 0));
        us = xo_mock_op_us(&it->op);
        long left = atomic_load(&slow_runs);
        if (left > 0 && atomic_compare_exchange_strong(&slow_runs, &left, left - 1))
            us *= atomic_load(&slow_factor);
    }
    sleep_until(t0 + us);
    if (it->staged)
        return;
    pthread_mutex_lock(&s->lock);
    if (s->ndone == MOCK_TIMINGS) { /* nobody drained: forget the oldest */
        s->done_first = (s->done_first + 1) % MOCK_TIMINGS;
        s->ndone--;
    }
    s->done[(s->done_first + s->ndone++) % MOCK_TIMINGS] = (xo_op_timing){it->token, us};
    pthread_mutex_unlock(&s->lock);
}

static void *worker_main(void *arg)
{
    mock_state *s = arg;
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->head && !s->stop)
            pthread_cond_wait(&s->wake, &s->lock);
        if (!s->head)
            break;
        item *it = s->head;
        s->head = it->next;
        if (!s->head)
            s->tail = NULL;
        s->busy = 1;
        pthread_mutex_unlock(&s->lock);
        execute(s, it);
        free(it->staged);
        free(it->chain);
        free(it);
        pthread_mutex_lock(&s->lock);
        s->busy = 0;
        if (!s->head)
            pthread_cond_broadcast(&s->idle);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static void enqueue(mock_state *s, item *it)
{
    pthread_mutex_lock(&s->lock);
    if (s->tail)
        s->tail->next = it;
    else
        s->head = it;
    s->tail = it;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
}

/* Wait until the queue is empty; the caller holds s->lock. */
static void wait_idle(mock_state *s)
{
    while (s->head || s->busy)
        pthread_cond_wait(&s->idle, &s->lock);
}

/* Wait until the queue is empty; report (once) the first failure of a queued op. */
static xo_status drain(mock_state *s, const char *what)
{
    pthread_mutex_lock(&s->lock);
    wait_idle(s);
    xo_status st = s->error;
    char message[256];
    snprintf(message, sizeof message, "%s", s->message);
    s->error = XO_OK;
    pthread_mutex_unlock(&s->lock);
    return st == XO_OK ? XO_OK : s->host->set_error(st, "mock %s: a queued op failed: %s", what, message);
}

/* ---- the plugin ---------------------------------------------------------------- */

static xo_status mock_init(const xo_plugin_host *host, void **out_state, int *out_ndevices)
{
    mock_state *s = calloc(1, sizeof *s);
    if (!s)
        return host->set_error(XO_ERR_OUT_OF_MEMORY, "mock: out of host memory");
    s->host = host;
    int n = 0;
    xo_status st = xo_plugin_cpu()->init(host, &s->cpu, &n);
    if (st != XO_OK) {
        free(s);
        return st;
    }
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->wake, NULL);
    pthread_cond_init(&s->idle, NULL);
    if (pthread_create(&s->worker, NULL, worker_main, s) != 0) {
        xo_plugin_cpu()->shutdown(s->cpu);
        free(s);
        return host->set_error(XO_ERR_DEVICE, "mock: pthread_create failed");
    }
    *out_state = s;
    *out_ndevices = config.devices > 1 ? config.devices : 1;
    return XO_OK;
}

static void mock_shutdown(void *state)
{
    mock_state *s = state;
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->worker, NULL); /* runs what is queued first */
    xo_plugin_cpu()->shutdown(s->cpu);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->wake);
    pthread_cond_destroy(&s->idle);
    free(s);
}

static xo_status mock_device_info(void *state, int dev, xo_device_info *out)
{
    (void)state;
    (void)dev;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, config.host_cores ? "mock CPU" : "mock GPU");
    snprintf(out->vendor, sizeof out->vendor, "crossover tests");
    snprintf(out->driver, sizeof out->driver, "mock 1");
    out->kind = config.host_cores ? XO_DEVICE_CPU : XO_DEVICE_GPU;
    out->host_unified = config.host_cores != 0;
    out->fp64 = 1;
    return XO_OK;
}

static xo_status mock_alloc(void *state, int dev, size_t bytes, xo_plugin_mem **out)
{
    (void)dev;
    mock_state *s = state;
    if (fails(XO_MOCK_ALLOC))
        return s->host->set_error(XO_ERR_DEVICE, "mock alloc: injected failure (%zu bytes)", bytes);
    xo_plugin_mem *m = calloc(1, sizeof *m);
    if (m)
        m->p = malloc(bytes ? bytes : 1);
    if (!m || !m->p) {
        free(m);
        return s->host->set_error(XO_ERR_OUT_OF_MEMORY, "mock alloc: out of host memory (%zu bytes)", bytes);
    }
    m->bytes = bytes;
    *out = m;
    return XO_OK;
}

static void mock_free(void *state, int dev, xo_plugin_mem *mem)
{
    (void)dev;
    mock_state *s = state;
    if (!mem)
        return;
    pthread_mutex_lock(&s->lock);
    wait_idle(s); /* queued ops may still use it */
    pthread_mutex_unlock(&s->lock);
    free(mem->p);
    free(mem);
}

static xo_status mock_upload(void *state, int dev, xo_plugin_mem *dst, size_t off, const void *src, size_t bytes)
{
    (void)dev;
    mock_state *s = state;
    if (fails(XO_MOCK_UPLOAD))
        return s->host->set_error(XO_ERR_DEVICE, "mock upload: injected failure");
    if (off > dst->bytes || bytes > dst->bytes - off)
        return s->host->set_error(XO_ERR_INVALID_ARGUMENT, "mock upload: out of bounds");
    item *it = calloc(1, sizeof *it);
    if (it)
        it->staged = malloc(bytes ? bytes : 1);
    if (!it || !it->staged) {
        free(it);
        return s->host->set_error(XO_ERR_OUT_OF_MEMORY, "mock upload: out of host memory");
    }
    memcpy(it->staged, src, bytes);
    it->dst = dst;
    it->off = off;
    it->bytes = bytes;
    enqueue(s, it);
    return XO_OK;
}

static xo_status mock_download(void *state, int dev, xo_plugin_mem *src, size_t off, void *dst, size_t bytes)
{
    (void)dev;
    mock_state *s = state;
    if (fails(XO_MOCK_DOWNLOAD))
        return s->host->set_error(XO_ERR_DEVICE, "mock download: injected failure");
    if (off > src->bytes || bytes > src->bytes - off)
        return s->host->set_error(XO_ERR_INVALID_ARGUMENT, "mock download: out of bounds");
    XO_RETURN_IF_ERROR(drain(s, "download"));
    double t0 = now_us();
    memcpy(dst, src->p + off, bytes);
    sleep_until(t0 + transfer_us(bytes));
    return XO_OK;
}

static xo_status mock_run(void *state, int dev, const xo_op_desc *op, uint64_t token)
{
    (void)dev;
    mock_state *s = state;
    if (fails(XO_MOCK_RUN))
        return s->host->set_error(XO_ERR_DEVICE, "mock run: injected launch failure");
    item *it = calloc(1, sizeof *it);
    if (!it)
        return s->host->set_error(XO_ERR_OUT_OF_MEMORY, "mock run: out of host memory");
    it->op = *op;
    it->token = token;
    enqueue(s, it);
    return XO_OK;
}

/* The "xo_chain" extra: whatever the CPU plugin's runner takes, queued as one item. */
static int mock_chain_supports(void *state, int dev, const xo_chain *chain)
{
    (void)state;
    (void)dev;
    for (int k = 0; k < chain->nsteps; k++)
        for (int i = 0; i < chain->steps[k].op.narg; i++)
            if (!chain->steps[k].op.arg[i].mem || chain->steps[k].op.arg[i].host)
                return 0; /* the core gives a device its allocations, nothing else */
    const xo_chain_runner *cpu = xo_plugin_cpu()->get_proc_address("xo_chain");
    return cpu->supports(NULL, 0, chain);
}

static xo_status mock_chain_run(void *state, int dev, const xo_chain *chain, uint64_t token)
{
    (void)dev;
    mock_state *s = state;
    if (fails(XO_MOCK_RUN))
        return s->host->set_error(XO_ERR_DEVICE, "mock run: injected launch failure (a chain)");
    item *it = calloc(1, sizeof *it);
    if (it)
        it->chain = malloc((size_t)chain->nsteps * sizeof *it->chain);
    if (!it || !it->chain) {
        free(it);
        return s->host->set_error(XO_ERR_OUT_OF_MEMORY, "mock run: out of host memory");
    }
    memcpy(it->chain, chain->steps, (size_t)chain->nsteps * sizeof *it->chain);
    it->nsteps = chain->nsteps;
    it->token = token;
    enqueue(s, it);
    return XO_OK;
}

static const xo_chain_runner mock_chain = {.supports = mock_chain_supports, .run = mock_chain_run};

static const void *mock_get_proc_address(const char *name)
{
    return strcmp(name, "xo_chain") == 0 ? &mock_chain : NULL;
}

static xo_status mock_finish(void *state, int dev)
{
    (void)dev;
    return drain(state, "finish");
}

static int mock_drain_timings(void *state, int dev, xo_op_timing *out, int max)
{
    (void)dev;
    mock_state *s = state;
    pthread_mutex_lock(&s->lock);
    int n = s->ndone < max ? s->ndone : max;
    for (int i = 0; i < n; i++)
        out[i] = s->done[(s->done_first + i) % MOCK_TIMINGS];
    s->done_first = (s->done_first + n) % MOCK_TIMINGS;
    s->ndone -= n;
    pthread_mutex_unlock(&s->lock);
    return n;
}

static const xo_plugin mock_plugin = {
    .api_version = XO_PLUGIN_API_VERSION,
    .name = "mock",
    .init = mock_init,
    .shutdown = mock_shutdown,
    .device_info = mock_device_info,
    .mem_alloc = mock_alloc,
    .mem_free = mock_free,
    .upload = mock_upload,
    .download = mock_download,
    .run = mock_run,
    .finish = mock_finish,
    .drain_timings = mock_drain_timings,
    .get_proc_address = mock_get_proc_address,
};

const xo_plugin *xo_plugin_mock(void) { return &mock_plugin; }
