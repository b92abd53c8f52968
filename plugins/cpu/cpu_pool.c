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
    unsigned generation;
    int pending, stop;
    xo__cpu_range_fn fn;
    void *arg;
    size_t n;
    int chunks;
};

static void run_chunk(xo__cpu_pool *p, int c)
{
    size_t per = p->n / (size_t)p->chunks, rem = p->n % (size_t)p->chunks;
    size_t b = (size_t)c * per + ((size_t)c < rem ? (size_t)c : rem);
    size_t e = b + per + ((size_t)c < rem ? 1 : 0);
    if (b < e)
        p->fn(p->arg, b, e, c);
}

static void *worker_main(void *arg)
{
    xo__cpu_pool *p = arg;
    int id = -1;
    unsigned seen = 0;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < p->nworkers; i++)
        if (pthread_equal(p->workers[i], pthread_self()))
            id = i;
    for (;;) {
        while (!p->stop && p->generation == seen)
            pthread_cond_wait(&p->start, &p->lock);
        if (p->stop)
            break;
        seen = p->generation;
        int chunk = id + 1; /* the caller runs chunk 0 */
        if (chunk < p->chunks) {
            pthread_mutex_unlock(&p->lock);
            run_chunk(p, chunk);
            pthread_mutex_lock(&p->lock);
            if (--p->pending == 0)
                pthread_cond_signal(&p->done);
        }
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
    pthread_mutex_lock(&p->lock); /* workers read p->workers to find their id */
    for (int i = 0; i < want && p->workers; i++) {
        if (pthread_create(&p->workers[i], NULL, worker_main, p) != 0)
            break;
        p->nworkers++;
    }
    pthread_mutex_unlock(&p->lock);
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
    if (p->nworkers == 0 || n < grain || p->fork_gen != atomic_load_explicit(&fork_gen, memory_order_relaxed) ||
        pthread_mutex_trylock(&p->busy) != 0) {
        fn(arg, 0, n, 0);
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
    p->pending = chunks - 1;
    p->generation++;
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->lock);
    run_chunk(p, 0);
    pthread_mutex_lock(&p->lock);
    while (p->pending > 0)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&p->busy);
    return chunks;
}
