/* xo_chain_cpu's memory-speed reference: y = a*b + c over host arrays in plain C, split
 * over `threads` threads (the calling one and threads - 1 started for the pass), built
 * -O3 -march=native where the compiler takes it (bench/CMakeLists.txt). The pass reads
 * three arrays and writes one, the 16 bytes per element of the fused chain's pass, with
 * one multiply-add per element: the rate memory allows such a pass on this machine. */
#include <pthread.h>
#include <stddef.h>

void xo__bench_stream_pass(const float *a, const float *b, const float *c, float *y, size_t n, int threads);

typedef struct part {
    const float *a, *b, *c;
    float *y;
    size_t n;
} part;

static void *run(void *arg)
{
    const part *p = arg;
    for (size_t i = 0; i < p->n; i++)
        p->y[i] = p->a[i] * p->b[i] + p->c[i];
    return NULL;
}

void xo__bench_stream_pass(const float *a, const float *b, const float *c, float *y, size_t n, int threads)
{
    enum { MAXT = 64 };
    if (threads < 1)
        threads = 1;
    if (threads > MAXT)
        threads = MAXT;
    part parts[MAXT];
    pthread_t tid[MAXT];
    int started[MAXT] = {0};
    size_t per = (n / (size_t)threads + 15) / 16 * 16;
    for (int t = 0; t < threads; t++) {
        size_t b0 = (size_t)t * per < n ? (size_t)t * per : n, e = b0 + per < n ? b0 + per : n;
        parts[t] = (part){a + b0, b + b0, c + b0, y + b0, e - b0};
        if (t > 0)
            started[t] = pthread_create(&tid[t], NULL, run, &parts[t]) == 0;
        if (t > 0 && !started[t])
            run(&parts[t]);
    }
    run(&parts[0]);
    for (int t = 1; t < threads; t++)
        if (started[t])
            pthread_join(tid[t], NULL);
}
