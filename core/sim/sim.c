/* The simulated devices of XO_SIMULATE (xo_sim.h): plugins named as the recorded ones
 * (cpu, opencl, cuda) whose ops compute on the host through the CPU plugin's kernels,
 * while every time comes from the machine file, on a clock of their own.
 *
 * The clock: one host timeline per context (threads that share a context are timed as
 * if their calls ran one after another) and one timeline per device. An op on the CPU
 * advances the host by its kernel time. An op on a device costs the host its issue time,
 * then runs on the device's timeline once both the host has issued it and the device is
 * free (an asynchronous queue). A read (download) or xo_finish waits: the host moves to
 * the device's end, plus the wait's own cost (queue still busy or already empty). An
 * upload costs the host its transfer time and is ordered on the device's timeline. No
 * host core spins for a modelled time: the results are computed at the call, at the
 * CPU's real speed, and the clocks only add numbers, so a run is deterministic. */
#include "xo_sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMINGS 1024 /* device timings not yet drained (run() is drained at once) */

/* A graph being recorded or recorded: the ops and chains, copied, replayed at launch. */
typedef struct sim_node {
    int is_chain;
    xo_op_desc op;
    xo_chain chain;
    xo_chain_step *steps;
} sim_node;
typedef struct sim_graph {
    int n, cap;
    sim_node *node;
} sim_graph;

typedef struct sim_timeline {
    double busy_until;         /* the device's queue is empty from then on (simulated us) */
    xo_op_timing timing[TIMINGS];
    int head, count;
    sim_graph *recording;      /* between graph begin and end, by `recorder` (under the lock) */
    pthread_t recorder;
    pthread_mutex_t capture;   /* held by the recorder from begin to end: other threads wait */
} sim_timeline;

struct xo__sim {
    xo__machine machine;
    pthread_mutex_t lock;      /* the clocks and the timelines */
    double host_us;
    sim_timeline tl[XO_MAX_DEVICES];
    const xo_plugin *cpu;      /* the CPU plugin that computes every result */
    void *cpu_state;
    xo_plugin_host cpu_host;
    const xo_chain_runner *cpu_chain;
};

/* A simulated plugin's state: its devices, as indices into the machine. */
typedef struct sim_state {
    xo__sim *sim;
    int ndev;
    int machine_dev[XO_MAX_DEVICES];
} sim_state;

/* ---- the clocks ------------------------------------------------------------------- */

static void push_timing(sim_timeline *t, uint64_t token, double us)
{
    if (t->count == TIMINGS) { /* the oldest undrained one goes */
        t->head = (t->head + 1) % TIMINGS;
        t->count--;
    }
    t->timing[(t->head + t->count) % TIMINGS] = (xo_op_timing){token, us};
    t->count++;
}

/* `us` of work on machine device m: on the host CPU the calling thread does it; on a
 * device the host pays `issue_us` and the device's queue runs it. */
static void charge_run(xo__sim *s, int m, double issue_us, double us, uint64_t token, int timed)
{
    pthread_mutex_lock(&s->lock);
    sim_timeline *t = &s->tl[m];
    if (m == 0) {
        s->host_us += us;
    } else {
        s->host_us += issue_us;
        double start = t->busy_until > s->host_us ? t->busy_until : s->host_us;
        t->busy_until = start + us;
    }
    if (timed)
        push_timing(t, token, us);
    pthread_mutex_unlock(&s->lock);
}

/* The host waits for device m's queue (a read, xo_finish), then spends `then_us`. */
static void charge_wait(xo__sim *s, int m, double then_us)
{
    const xo__sim_device *d = &s->machine.dev[m];
    pthread_mutex_lock(&s->lock);
    sim_timeline *t = &s->tl[m];
    int busy = t->busy_until > s->host_us;
    s->host_us = (busy ? t->busy_until : s->host_us) + d->wait_us[busy] + then_us;
    t->busy_until = s->host_us;
    pthread_mutex_unlock(&s->lock);
}

/* An upload: the host pays the copy; the device sees it after its earlier work. */
static void charge_upload(xo__sim *s, int m, double us)
{
    pthread_mutex_lock(&s->lock);
    sim_timeline *t = &s->tl[m];
    s->host_us += us;
    if (t->busy_until < s->host_us)
        t->busy_until = s->host_us;
    pthread_mutex_unlock(&s->lock);
}

double xo__sim_now_us(const xo_context *ctx)
{
    xo__sim *s = ctx->sim;
    pthread_mutex_lock(&s->lock);
    double us = s->host_us;
    pthread_mutex_unlock(&s->lock);
    return us;
}

/* ---- computing on the host ---------------------------------------------------------- */

/* A device's operands are host allocations of ours: hand them to the CPU plugin. */
static void to_host(xo_operand *arg, int narg)
{
    for (int i = 0; i < narg; i++)
        if (arg[i].mem) {
            arg[i].host = arg[i].mem;
            arg[i].mem = NULL;
        }
}

static xo_status compute_op(xo__sim *s, const xo_op_desc *op)
{
    xo_op_desc h = *op;
    to_host(h.arg, h.narg);
    return s->cpu->run(s->cpu_state, 0, &h, 0);
}

/* `chain` with its steps' operands in host memory (copied into steps[]). */
static xo_chain host_chain(const xo_chain *chain, xo_chain_step steps[XO_CHAIN_MAX])
{
    int n = chain->nsteps < XO_CHAIN_MAX ? chain->nsteps : XO_CHAIN_MAX;
    for (int i = 0; i < n; i++) {
        steps[i] = chain->steps[i];
        to_host(steps[i].op.arg, steps[i].op.narg);
    }
    xo_chain c = *chain;
    c.steps = steps;
    return c;
}

static xo_status compute_chain(xo__sim *s, const xo_chain *chain)
{
    xo_chain_step steps[XO_CHAIN_MAX];
    xo_chain c = host_chain(chain, steps);
    return s->cpu_chain->run(s->cpu_state, 0, &c, 0);
}

/* A fused chain is one pass over its elements: the time of its slowest step as a kernel. */
static double chain_us(const xo__sim_device *d, const xo_chain *chain)
{
    double us = 0;
    for (int i = 0; i < chain->nsteps; i++) {
        double k = xo__sim_kernel_us(d, &chain->steps[i].op);
        us = k > us ? k : us;
    }
    return us;
}

/* ---- the plugins' entries ----------------------------------------------------------- */

static int mdev(void *state, int dev) { return ((sim_state *)state)->machine_dev[dev]; }

static xo_status sim_init(const xo_plugin_host *host, void **out_state, int *out_ndevices)
{
    xo_context *ctx = host->core;
    xo__sim *s = ctx->sim;
    sim_state *st = calloc(1, sizeof *st);
    if (!st)
        return host->set_error(XO_ERR_OUT_OF_MEMORY, "simulated %s: out of host memory", host->plugin_name);
    st->sim = s;
    for (int m = 0; m < s->machine.ndev; m++)
        if (strcmp(s->machine.dev[m].plugin, host->plugin_name) == 0)
            st->machine_dev[st->ndev++] = m;
    *out_state = st;
    *out_ndevices = st->ndev;
    return XO_OK;
}

static void sim_shutdown(void *state) { free(state); }

static xo_status sim_device_info(void *state, int dev, xo_device_info *out)
{
    sim_state *st = state;
    *out = st->sim->machine.dev[mdev(state, dev)].info;
    return XO_OK;
}

static int sim_supports(void *state, int dev, const xo_op_desc *op)
{
    (void)dev;
    xo__sim *s = ((sim_state *)state)->sim;
    return s->cpu->supports ? s->cpu->supports(s->cpu_state, 0, op) : 1;
}

static xo_status sim_mem_alloc(void *state, int dev, size_t bytes, xo_plugin_mem **out)
{
    (void)state;
    (void)dev;
    void *p = aligned_alloc(XO_HOST_ALIGN, (bytes + XO_HOST_ALIGN - 1) / XO_HOST_ALIGN * XO_HOST_ALIGN);
    if (!p)
        return xo__error(XO_ERR_OUT_OF_MEMORY, "simulated device: out of host memory for %zu bytes", bytes);
    *out = (xo_plugin_mem *)p;
    return XO_OK;
}

static void sim_mem_free(void *state, int dev, xo_plugin_mem *mem)
{
    (void)state;
    (void)dev;
    free(mem);
}

static xo_status sim_upload(void *state, int dev, xo_plugin_mem *dst, size_t dst_off, const void *src, size_t bytes)
{
    sim_state *st = state;
    int m = mdev(state, dev);
    memcpy((char *)dst + dst_off, src, bytes);
    charge_upload(st->sim, m, xo__sim_table_us(&st->sim->machine.dev[m].transfer[XO_SIM_H2D][XO_SIM_PAGEABLE],
                                               (double)bytes, 1.0));
    return XO_OK;
}

static xo_status sim_download(void *state, int dev, xo_plugin_mem *src, size_t src_off, void *dst, size_t bytes)
{
    sim_state *st = state;
    int m = mdev(state, dev);
    memcpy(dst, (const char *)src + src_off, bytes);
    charge_wait(st->sim, m, xo__sim_table_us(&st->sim->machine.dev[m].transfer[XO_SIM_D2H][XO_SIM_PAGEABLE],
                                             (double)bytes, 1.0));
    return XO_OK;
}

static xo_status graph_add(sim_graph *g, const xo_op_desc *op, const xo_chain *chain)
{
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 16;
        sim_node *nn = realloc(g->node, (size_t)cap * sizeof *nn);
        if (!nn)
            return xo__error(XO_ERR_OUT_OF_MEMORY, "simulated graph: out of host memory");
        g->node = nn;
        g->cap = cap;
    }
    sim_node *n = &g->node[g->n];
    memset(n, 0, sizeof *n);
    if (chain) {
        n->is_chain = 1;
        n->chain = *chain;
        n->steps = malloc((size_t)chain->nsteps * sizeof *n->steps);
        if (!n->steps)
            return xo__error(XO_ERR_OUT_OF_MEMORY, "simulated graph: out of host memory");
        memcpy(n->steps, chain->steps, (size_t)chain->nsteps * sizeof *n->steps);
        n->chain.steps = n->steps;
    } else {
        n->op = *op;
    }
    g->n++;
    return XO_OK;
}

/* One op or one chain (exactly one of them): recorded into a graph being captured, or
 * computed now and charged to the clocks. */
static xo_status run_one(void *state, int dev, const xo_op_desc *op, const xo_chain *chain, uint64_t token)
{
    sim_state *st = state;
    xo__sim *s = st->sim;
    int m = mdev(state, dev);
    sim_timeline *t = &s->tl[m];
    pthread_mutex_lock(&s->lock);
    sim_graph *g = t->recording;
    int mine = g && pthread_equal(t->recorder, pthread_self());
    pthread_mutex_unlock(&s->lock);
    if (mine)
        return graph_add(g, op, chain);
    if (g) { /* another thread records on this device: its work must not land in the graph */
        pthread_mutex_lock(&t->capture);
        pthread_mutex_unlock(&t->capture);
    }
    XO_RETURN_IF_ERROR(chain ? compute_chain(s, chain) : compute_op(s, op));
    const xo__sim_device *d = &s->machine.dev[m];
    charge_run(s, m, d->issue_us, chain ? chain_us(d, chain) : xo__sim_kernel_us(d, op), token, 1);
    return XO_OK;
}

static xo_status sim_run(void *state, int dev, const xo_op_desc *op, uint64_t token)
{
    return run_one(state, dev, op, NULL, token);
}

static xo_status sim_finish(void *state, int dev)
{
    sim_state *st = state;
    int m = mdev(state, dev);
    if (m != 0) /* the host CPU has nothing queued */
        charge_wait(st->sim, m, 0.0);
    return XO_OK;
}

static int sim_drain(void *state, int dev, xo_op_timing *out, int max)
{
    sim_state *st = state;
    sim_timeline *t = &st->sim->tl[mdev(state, dev)];
    pthread_mutex_lock(&st->sim->lock);
    int n = 0;
    for (; n < max && t->count > 0; n++, t->count--, t->head = (t->head + 1) % TIMINGS)
        out[n] = t->timing[t->head];
    pthread_mutex_unlock(&st->sim->lock);
    return n;
}

/* ---- the extras: chains, graphs --------------------------------------------------- */

/* The simulated CPU fuses what the real one does; another simulated device fuses every
 * chain the CPU runner can compute (its own plugin has no minimum length). */
static int sim_chain_supports(void *state, int dev, const xo_chain *chain)
{
    xo__sim *s = ((sim_state *)state)->sim;
    xo_chain_step steps[XO_CHAIN_MAX];
    xo_chain c = host_chain(chain, steps);
    return s->cpu_chain->supports(s->cpu_state, mdev(state, dev) == 0 ? 0 : -1, &c);
}

static xo_status sim_chain_run(void *state, int dev, const xo_chain *chain, uint64_t token)
{
    return run_one(state, dev, NULL, chain, token);
}

static const xo_chain_runner sim_chain = {.supports = sim_chain_supports, .run = sim_chain_run};

static void graph_free(sim_graph *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->n; i++)
        free(g->node[i].steps);
    free(g->node);
    free(g);
}

static xo_status sim_graph_begin(void *state, int dev)
{
    sim_state *st = state;
    sim_timeline *t = &st->sim->tl[mdev(state, dev)];
    sim_graph *g = calloc(1, sizeof *g);
    if (!g)
        return xo__error(XO_ERR_OUT_OF_MEMORY, "simulated graph: out of host memory");
    pthread_mutex_lock(&t->capture);
    pthread_mutex_lock(&st->sim->lock);
    t->recording = g;
    t->recorder = pthread_self();
    pthread_mutex_unlock(&st->sim->lock);
    return XO_OK;
}

static xo_status sim_graph_end(void *state, int dev, void **graph)
{
    sim_state *st = state;
    sim_timeline *t = &st->sim->tl[mdev(state, dev)];
    pthread_mutex_lock(&st->sim->lock);
    *graph = t->recording;
    t->recording = NULL;
    pthread_mutex_unlock(&st->sim->lock);
    pthread_mutex_unlock(&t->capture);
    return XO_OK;
}

/* One launch: the host pays a segment's launch, the device runs every node's kernel
 * plus a per-node cost (no timings: a graph has none per op). */
static xo_status sim_graph_launch(void *state, int dev, void *graph)
{
    sim_state *st = state;
    xo__sim *s = st->sim;
    int m = mdev(state, dev);
    const xo__sim_device *d = &s->machine.dev[m];
    sim_graph *g = graph;
    double us = 0;
    for (int i = 0; i < g->n; i++) {
        sim_node *n = &g->node[i];
        XO_RETURN_IF_ERROR(n->is_chain ? compute_chain(s, &n->chain) : compute_op(s, &n->op));
        us += (n->is_chain ? chain_us(d, &n->chain) : xo__sim_kernel_us(d, &n->op)) + d->graph_us[1];
    }
    charge_run(s, m, d->graph_us[0], us, 0, 0);
    return XO_OK;
}

static void sim_graph_destroy(void *state, int dev, void *graph)
{
    (void)state;
    (void)dev;
    graph_free(graph);
}

static const xo_graph_runner sim_graphs = {
    .begin = sim_graph_begin, .end = sim_graph_end, .launch = sim_graph_launch, .destroy = sim_graph_destroy};

/* No "xo_host_blas": every op on the simulated CPU goes through run(), which keeps its clock. */
static const void *sim_proc_cpu(const char *name) { return strcmp(name, "xo_chain") == 0 ? &sim_chain : NULL; }

static const void *sim_proc_device(const char *name)
{
    if (strcmp(name, "xo_graph") == 0)
        return &sim_graphs;
    return strcmp(name, "xo_chain") == 0 ? &sim_chain : NULL;
}

#define SIM_PLUGIN(NAME, PROC)                                                                              \
    {.api_version = XO_PLUGIN_API_VERSION, .name = NAME, .init = sim_init, .shutdown = sim_shutdown,      \
     .device_info = sim_device_info, .supports = sim_supports, .mem_alloc = sim_mem_alloc,                 \
     .mem_free = sim_mem_free, .upload = sim_upload, .download = sim_download, .run = sim_run,              \
     .finish = sim_finish, .drain_timings = sim_drain, .get_proc_address = PROC}
static const xo_plugin sim_cpu = SIM_PLUGIN("cpu", sim_proc_cpu);
static const xo_plugin sim_opencl = SIM_PLUGIN("opencl", sim_proc_device);
static const xo_plugin sim_cuda = SIM_PLUGIN("cuda", sim_proc_device);
static const xo_plugin *get_sim_cpu(void) { return &sim_cpu; }
static const xo_plugin *get_sim_opencl(void) { return &sim_opencl; }
static const xo_plugin *get_sim_cuda(void) { return &sim_cuda; }
/* In the order of the compiled-in registry, so that devices are numbered as there. */
static const xo_plugin *(*const sim_registry[])(void) = {get_sim_cpu, get_sim_opencl, get_sim_cuda, NULL};

/* ---- the context's side ------------------------------------------------------------- */

static double sim_clock(const xo_context *ctx) { return xo__sim_now_us(ctx); }

/* The computing CPU plugin's own fault sites: XO_FAULTS reaches the simulated devices
 * through the core's sites (device.c), not through the plugin that computes for them. */
static int no_fault(const xo_plugin_host *self, const char *site)
{
    (void)self;
    (void)site;
    return 0;
}

xo_status xo__sim_create(xo_context *ctx, const char *path)
{
    xo__sim *s = calloc(1, sizeof *s);
    if (!s)
        return xo__error(XO_ERR_OUT_OF_MEMORY, "xo_context_create: out of host memory");
    xo_status st = xo__machine_read(path, &s->machine);
    for (int r = 0; st == XO_OK && !s->cpu && xo__plugin_registry[r]; r++) {
        const xo_plugin *pl = xo__plugin_registry[r]();
        if (pl && pl->name && strcmp(pl->name, "cpu") == 0)
            s->cpu = pl;
    }
    if (st == XO_OK && !s->cpu)
        st = xo__error(XO_ERR_DEVICE, "XO_SIMULATE: no cpu plugin to compute the results with");
    if (st == XO_OK) {
        s->cpu_host = (xo_plugin_host){.log = xo__log, .set_error = xo__error, .fault = no_fault,
                                       .cache_dir = ctx->cache_dir, .threads = ctx->threads, .core = ctx,
                                       .plugin_name = "cpu"};
        int n = 0;
        st = s->cpu->init(&s->cpu_host, &s->cpu_state, &n);
        s->cpu_chain = st == XO_OK && s->cpu->get_proc_address ? s->cpu->get_proc_address("xo_chain") : NULL;
        if (st == XO_OK && (n < 1 || !s->cpu_chain))
            st = xo__error(XO_ERR_DEVICE, "XO_SIMULATE: the cpu plugin offers no device or no chain runner");
    }
    if (st != XO_OK) {
        if (s->cpu_state)
            s->cpu->shutdown(s->cpu_state);
        free(s);
        return st;
    }
    pthread_mutex_init(&s->lock, NULL);
    for (int m = 0; m < XO_MAX_DEVICES; m++)
        pthread_mutex_init(&s->tl[m].capture, NULL);
    ctx->sim = s;
    ctx->registry = sim_registry;
    ctx->clock_us = sim_clock;
    return XO_OK;
}

void xo__sim_destroy(xo_context *ctx)
{
    xo__sim *s = ctx->sim;
    if (!s)
        return;
    for (int m = 0; m < XO_MAX_DEVICES; m++) {
        graph_free(s->tl[m].recording);
        pthread_mutex_destroy(&s->tl[m].capture);
    }
    s->cpu->shutdown(s->cpu_state);
    pthread_mutex_destroy(&s->lock);
    free(s);
    ctx->sim = NULL;
}

void xo__sim_profiles(xo_context *ctx)
{
    for (int d = 0; d < ctx->ndev; d++) {
        const xo__sim_device *md = &ctx->sim->machine.dev[mdev(ctx->dev[d].pstate, ctx->dev[d].pdev)];
        xo__device_set_profile(ctx, d, &md->profile);
    }
}

const char *xo__sim_path(const xo_context *ctx) { return ctx->sim ? ctx->sim->machine.path : NULL; }
