/* xo_chain_cpu's references in plain C over host arrays, split over `threads` threads (the
 * calling one and threads - 1 started for the pass), built -O3 -march=native -ffast-math
 * where the compiler takes it (bench/CMakeLists.txt), as a C programmer who cares builds:
 *   - the C pass, y = a*b + c: it reads three arrays and writes one, the 16 bytes per
 *     element of the fused chain's pass, with one multiply-add per element: the rate
 *     memory allows such a pass on this machine;
 *   - the C chain: the whole 8-op chain written as one loop, the program a fused pass
 *     stands for, with the CPU plugin's tanh (white-box: the same rational function, so
 *     that both do the same work; libm's tanhf is a scalar call). */
#include "cpu_internal.h" /* xo__cpu_tanhf, the plugin's tanh */

#include <pthread.h>
#include <stddef.h>

void xo__bench_stream_pass(const float *a, const float *b, const float *c, float *y, size_t n, int threads,
                           int whole_chain);

typedef struct part {
    const float *a, *b, *c;
    float *y;
    size_t n;
} part;

static void *run_pass(void *arg)
{
    const part *p = arg;
    for (size_t i = 0; i < p->n; i++)
        p->y[i] = p->a[i] * p->b[i] + p->c[i];
    return NULL;
}

static void *run_chain(void *arg)
{
    const part *p = arg;
    const float *restrict a = p->a, *restrict b = p->b, *restrict c = p->c;
    float *restrict y = p->y;
    for (size_t i = 0; i < p->n; i++) {
        float v = xo__cpu_tanhf(a[i] * b[i] + c[i]) * 1.5f * c[i] - 0.1f;
        y[i] = (v > 0 ? v : 0) + 0.5f * a[i];
    }
    return NULL;
}

void xo__bench_stream_pass(const float *a, const float *b, const float *c, float *y, size_t n, int threads,
                           int whole_chain)
{
    void *(*run)(void *) = whole_chain ? run_chain : run_pass;
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
