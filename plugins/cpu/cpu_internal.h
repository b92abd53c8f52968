/* CPU plugin internals. */
#ifndef XO_CPU_INTERNAL_H
#define XO_CPU_INTERNAL_H
#include <crossover/plugin.h>

/* A small persistent pool for the elementwise loops. One op uses it at a time; a
 * caller that finds it busy runs its loop alone (never more threads than XO_THREADS). */
typedef struct xo_cpu_pool xo_cpu_pool;
typedef void (*xo_cpu_range_fn)(void *arg, size_t begin, size_t end, int chunk);
xo_status xo_cpu_pool_create(int threads, xo_cpu_pool **out);
void xo_cpu_pool_destroy(xo_cpu_pool *p);
int xo_cpu_pool_threads(const xo_cpu_pool *p);
/* Run fn over [0, n) split into at most `threads` chunks (chunk index passed), when n
 * is at least `grain`; otherwise inline on the caller. Returns the number of chunks used. */
int xo_cpu_parallel_for(xo_cpu_pool *p, size_t n, size_t grain, xo_cpu_range_fn fn, void *arg);

/* Run one op on host memory. */
xo_status xo_cpu_run(const xo_plugin_host *host, xo_cpu_pool *pool, const xo_op_desc *op);
#endif
