/* A persistent thread pool for the CPU plugin's loops.
 *
 * fork(): the child has none of the pool's threads, and its locks may have been held by
 * a thread of the parent. A pool made before the fork runs every loop on the calling
 * thread in the child and is freed there without touching its threads or locks; pools
 * made in the child are whole. */
#include "cpu_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

/* A thread that expects the next event soon (a worker its next loop, the caller its
 * workers' end) watches for it this long before it sleeps on the condition variable.
 * Waking a sleeping thread costs far more than the loops it runs at these sizes: on the
 * 2-core AMD EPYC VM an add of 65,536 floats took 45-51 us through the pool against 1.1
 * us for 16,384 on one thread, the time the hypervisor takes to wake an idle vCPU. Short
 * against OpenBLAS's own spin (about 0.1 s after each call): the pool gives its cores
 * back quickly when no loop follows. */
#define XO_POOL_SPIN_NS 50000
/* A loop of fewer than this many grains wakes no sleeping worker: it runs on the caller
 * alone unless every worker is still spinning, or it follows another loop within
 * XO_POOL_SPIN_NS (a stream of loops: the first wakes the worker, the next find it
 * awake). Waking one (40-60 us here) costs more than its half of a shorter loop saves;
 * at 16 grains (1M floats) the two are level: saxpy of 1M floats takes 81 us on one
 * thread, 42-45 on two once awake. Measured (xo bench --quick, rnn-train-b100, whose SGD
 * update of 256x256 weights is a lone 65,536-float saxpy after OpenBLAS's gemms): 554-565
 * it/s waking the worker each step, 589-607 with this rule, 571-603 when that saxpy was
 * OpenBLAS's, whose threads the gemms keep awake. */
#define XO_POOL_WAKE_GRAINS 16

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spins while (*v == x) == same, at most XO_POOL_SPIN_NS. */
static void spin_while(const _Atomic unsigned *v, unsigned x, int same)
{
    const uint64_t t0 = mono_ns();
    for (unsigned i = 1; (atomic_load_explicit(v, memory_order_acquire) == x) == same; i++) {
        CPU_RELAX();
        if (i % 64 == 0 && mono_ns() - t0 > XO_POOL_SPIN_NS)
            return;
    }
}

/* Counts the fork()s this process is a child of (bumped in the child). */
static _Atomic unsigned fork_gen;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void after_fork_child(void) { atomic_fetch_add_explicit(&fork_gen, 1, memory_order_relaxed); }
static void register_atfork(void) { pthread_atfork(NULL, NULL, after_fork_child); }

struct xo__cpu_pool {
    unsigned fork_gen; /* fork_gen when made: another value means its threads are gone */
    int nworkers;
    pthread_t *workers;
    pthread_mutex_t busy;   /* held by the op that owns the pool */
    pthread_mutex_t lock;
    pthread_cond_t start, done;
    _Atomic unsigned generation, pending; /* written under lock; watched without it (spin_while) */
    _Atomic unsigned spinning;            /* workers in spin_while now: awake, a loop reaches them at once */
    _Atomic uint64_t last_ns;             /* when the last loop of a grain or more ended (mono_ns) */
    int stop;
    xo__cpu_range_fn fn;
    void *arg;
    size_t n;
    int chunks, next; /* next: the first chunk nobody has claimed (under lock) */
};

static void run_chunk(xo__cpu_pool *p, int c)
{
    size_t per = p->n / (size_t)p->chunks, rem = p->n % (size_t)p->chunks;
    size_t b = (size_t)c * per + ((size_t)c < rem ? (size_t)c : rem);
    size_t e = b + per + ((size_t)c < rem ? 1 : 0);
    if (b < e)
        p->fn(p->arg, b, e, c);
}

/* The next unclaimed chunk of loop `gen`, or -1 (lock held). Chunks go to whoever asks
 * first: a caller done with its own takes those no worker has started, so a worker that
 * wakes late (40-60 us on this VM) or shares the caller's core costs the loop nothing more
 * than running it alone. Measured (xo_medium_gemm, 2-core AMD EPYC): in the runs where the
 * scheduler had put both threads on one vCPU, a 100x256x256 product took 160 us through the
 * pool, each thread spinning through the other's turn, against 53 on the caller alone. */
static int claim(xo__cpu_pool *p, unsigned gen)
{
    return p->generation == gen && p->next < p->chunks ? p->next++ : -1;
}

/* Runs chunk c claimed under the lock (held on entry and on return), then counts it done. */
static void run_claimed(xo__cpu_pool *p, int c)
{
    pthread_mutex_unlock(&p->lock);
    run_chunk(p, c);
    pthread_mutex_lock(&p->lock);
    if (--p->pending == 0)
        pthread_cond_signal(&p->done);
}

static void *worker_main(void *arg)
{
    xo__cpu_pool *p = arg;
    unsigned seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        if (!p->stop && p->generation == seen) { /* the next loop may follow at once */
            pthread_mutex_unlock(&p->lock);
            atomic_fetch_add_explicit(&p->spinning, 1, memory_order_relaxed);
            spin_while(&p->generation, seen, 1);
            atomic_fetch_sub_explicit(&p->spinning, 1, memory_order_relaxed);
            pthread_mutex_lock(&p->lock);
        }
        while (!p->stop && p->generation == seen)
            pthread_cond_wait(&p->start, &p->lock);
        if (p->stop)
            break;
        seen = p->generation;
        for (int c; (c = claim(p, seen)) >= 0;)
            run_claimed(p, c);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

xo_status xo__cpu_pool_create(int threads, xo__cpu_pool **out)
{
    pthread_once(&atfork_once, register_atfork);
    xo__cpu_pool *p = calloc(1, sizeof *p);
    if (!p)
        return XO_ERR_OUT_OF_MEMORY;
    p->fork_gen = atomic_load_explicit(&fork_gen, memory_order_relaxed);
    pthread_mutex_init(&p->busy, NULL);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->start, NULL);
    pthread_cond_init(&p->done, NULL);
    int want = threads > 1 ? threads - 1 : 0;
    p->workers = want ? calloc((size_t)want, sizeof *p->workers) : NULL;
    for (int i = 0; i < want && p->workers; i++) {
        if (pthread_create(&p->workers[i], NULL, worker_main, p) != 0)
            break;
        p->nworkers++;
    }
    *out = p;
    return XO_OK;
}

void xo__cpu_pool_destroy(xo__cpu_pool *p)
{
    if (!p)
        return;
    if (p->fork_gen != atomic_load_explicit(&fork_gen, memory_order_relaxed)) {
        free(p->workers); /* the parent's threads and locks: nothing to join or destroy here */
        free(p);
        return;
    }
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    p->generation++; /* a spinning worker sees it at once */
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nworkers; i++)
        pthread_join(p->workers[i], NULL);
    free(p->workers);
    pthread_cond_destroy(&p->start);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->lock);
    pthread_mutex_destroy(&p->busy);
    free(p);
}

int xo__cpu_pool_threads(const xo__cpu_pool *p) { return p->nworkers + 1; }

int xo__cpu_pool_for(xo__cpu_pool *p, size_t n, size_t grain, xo__cpu_range_fn fn, void *arg)
{
    if (p->nworkers == 0 || n < grain || p->fork_gen != atomic_load_explicit(&fork_gen, memory_order_relaxed)) {
        fn(arg, 0, n, 0);
        return 1;
    }
    const int awake = atomic_load_explicit(&p->spinning, memory_order_relaxed) >= (unsigned)p->nworkers,
              stream = mono_ns() - atomic_load_explicit(&p->last_ns, memory_order_relaxed) < XO_POOL_SPIN_NS;
    if ((n / XO_POOL_WAKE_GRAINS < grain && !awake && !stream) || pthread_mutex_trylock(&p->busy) != 0) {
        fn(arg, 0, n, 0);
        atomic_store_explicit(&p->last_ns, mono_ns(), memory_order_relaxed);
        return 1;
    }
    size_t want = n / (grain / 2 ? grain / 2 : 1);
    int chunks = want < (size_t)(p->nworkers + 1) ? (int)want : p->nworkers + 1;
    if (chunks < 2) {
        pthread_mutex_unlock(&p->busy);
        fn(arg, 0, n, 0);
        return 1;
    }
    pthread_mutex_lock(&p->lock);
    p->fn = fn;
    p->arg = arg;
    p->n = n;
    p->chunks = chunks;
    p->next = 1; /* the caller's */
    p->pending = chunks;
    const unsigned gen = ++p->generation;
    pthread_cond_broadcast(&p->start);
    run_claimed(p, 0);
    for (int c; (c = claim(p, gen)) >= 0;)
        run_claimed(p, c);
    pthread_mutex_unlock(&p->lock);
    spin_while(&p->pending, 0, 0); /* the workers are at it: watch for their end */
    pthread_mutex_lock(&p->lock);
    while (p->pending > 0)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
    atomic_store_explicit(&p->last_ns, mono_ns(), memory_order_relaxed);
    pthread_mutex_unlock(&p->busy);
    return chunks;
}
