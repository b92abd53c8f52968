/* cl_warm.c: a CLBlast routine's first use on a device, outside the CLBlast lock.
 *
 * A routine's first call on a cl_context compiles its program (seconds on PoCL the first
 * time, ~3 s on every process with Intel's CPU runtime, which keeps no program cache).
 * Made under xo__clblast_lock, that compile held every other thread's CLBlast call,
 * however long compiled its own routine was. So before a routine's first real call on a
 * device, one tiny call of it (sizes of 1 on scratch buffers) compiles it without that
 * lock; the real calls then only find it in CLBlast's caches.
 *
 * What CLBlast 1.5 cannot take concurrently is two first calls: two threads producing
 * the same cache entry (CLBlast issue 486: the second Store fails), and two threads
 * building tuning databases at once, even for different routines (ThreadSanitizer: a
 * data race inside clblast::Database::Database between a first sdot and a first sgemv).
 * So warm-ups take one process-wide lock of their own; a call of a warm routine only
 * reads CLBlast's caches (each under CLBlast's own mutex) and goes on meanwhile, under
 * xo__clblast_lock. A flag per table device, routine and precision (cl_device.c,
 * cleared with CLBlast's cache) says the routine is warm. */
#include "cl_internal.h"

#include <stdatomic.h>
#include <stdint.h>

static pthread_mutex_t warm_lock = PTHREAD_MUTEX_INITIALIZER;

static _Atomic uint64_t n_warmups;
void (*xo__cl_warm_hook)(void);

uint64_t xo__cl_warmups(void) { return atomic_load(&n_warmups); }

static const char *const routine_names[XO_CLB_COUNT][2] = {
    [XO_CLB_GEMM] = {"CLBlastSgemm", "CLBlastDgemm"}, [XO_CLB_GEMV] = {"CLBlastSgemv", "CLBlastDgemv"},
    [XO_CLB_AXPY] = {"CLBlastSaxpy", "CLBlastDaxpy"}, [XO_CLB_SCAL] = {"CLBlastSscal", "CLBlastDscal"},
    [XO_CLB_COPY] = {"CLBlastScopy", "CLBlastDcopy"}, [XO_CLB_DOT] = {"CLBlastSdot", "CLBlastDdot"},
    [XO_CLB_GER] = {"CLBlastSger", "CLBlastDger"},
};

/* One call of r with every size 1 on scratch buffers a, b, c (8 elements each). */
static CLBlastStatusCode tiny_call(xo__clblast_routine r, int dbl, cl_mem a, cl_mem b, cl_mem c, cl_command_queue *q,
                                   cl_event *ev)
{
    const CLBlastLayout row = CLBlastLayoutRowMajor;
    const CLBlastTranspose no = CLBlastTransposeNo;
    switch (r) {
    case XO_CLB_GEMM:
        return dbl ? CLBlastDgemm(row, no, no, 1, 1, 1, 1.0, a, 0, 1, b, 0, 1, 0.0, c, 0, 1, q, ev)
                   : CLBlastSgemm(row, no, no, 1, 1, 1, 1.0f, a, 0, 1, b, 0, 1, 0.0f, c, 0, 1, q, ev);
    case XO_CLB_GEMV:
        return dbl ? CLBlastDgemv(row, no, 1, 1, 1.0, a, 0, 1, b, 0, 1, 0.0, c, 0, 1, q, ev)
                   : CLBlastSgemv(row, no, 1, 1, 1.0f, a, 0, 1, b, 0, 1, 0.0f, c, 0, 1, q, ev);
    case XO_CLB_AXPY:
        return dbl ? CLBlastDaxpy(1, 1.0, a, 0, 1, c, 0, 1, q, ev) : CLBlastSaxpy(1, 1.0f, a, 0, 1, c, 0, 1, q, ev);
    case XO_CLB_SCAL:
        return dbl ? CLBlastDscal(1, 1.0, c, 0, 1, q, ev) : CLBlastSscal(1, 1.0f, c, 0, 1, q, ev);
    case XO_CLB_COPY:
        return dbl ? CLBlastDcopy(1, a, 0, 1, c, 0, 1, q, ev) : CLBlastScopy(1, a, 0, 1, c, 0, 1, q, ev);
    case XO_CLB_DOT:
        return dbl ? CLBlastDdot(1, c, 0, a, 0, 1, b, 0, 1, q, ev) : CLBlastSdot(1, c, 0, a, 0, 1, b, 0, 1, q, ev);
    case XO_CLB_GER:
        return dbl ? CLBlastDger(row, 1, 1, 1.0, a, 0, 1, b, 0, 1, c, 0, 1, q, ev)
                   : CLBlastSger(row, 1, 1, 1.0f, a, 0, 1, b, 0, 1, c, 0, 1, q, ev);
    default:
        return CLBlastNotImplemented;
    }
}

static xo_status warm_up(xo__cl_state *st, xo__cl_device *d, xo__clblast_routine r, int dbl)
{
    if (xo__cl_warm_hook) xo__cl_warm_hook();
    cl_int err = CL_SUCCESS;
    cl_mem m[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3 && err == CL_SUCCESS; i++) m[i] = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
    if (err != CL_SUCCESS) {
        for (int i = 0; i < 3; i++)
            if (m[i]) clReleaseMemObject(m[i]);
        return xo__cl_fail(st->host, "clCreateBuffer", err);
    }
    cl_command_queue q = d->queue;
    cl_event ev = NULL;
    CLBlastStatusCode s = tiny_call(r, dbl, m[0], m[1], m[2], &q, &ev);
    if (ev) clReleaseEvent(ev);
    for (int i = 0; i < 3; i++) clReleaseMemObject(m[i]); /* freed once the tiny call is done */
    atomic_fetch_add(&n_warmups, 1);
    if (s != CLBlastSuccess) return xo__clblast_fail(st->host, routine_names[r][dbl], s);
    return XO_OK;
}

xo_status xo__clblast_warm(xo__cl_state *st, xo__cl_device *d, xo__clblast_routine r, xo_dtype dtype)
{
    const int dbl = dtype == XO_F64;
    _Atomic int *flag = &d->warm[r * 2 + dbl];
    if (atomic_load_explicit(flag, memory_order_acquire)) return XO_OK;
    pthread_mutex_lock(&warm_lock);
    xo_status s = XO_OK;
    if (!atomic_load_explicit(flag, memory_order_relaxed)) {
        s = warm_up(st, d, r, dbl);
        if (s == XO_OK) atomic_store_explicit(flag, 1, memory_order_release);
    }
    pthread_mutex_unlock(&warm_lock);
    return s;
}
