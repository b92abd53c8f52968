/* White-box counters of the OpenCL plugin's program cache, for its tests.
 * Process-wide totals over every context; plain C, no OpenCL headers needed. */
#ifndef XO_CL_TESTING_H
#define XO_CL_TESTING_H

#include <stdint.h>

typedef struct xo__cl_counters {
    uint64_t builds_from_source; /* programs compiled from kernels_cl sources */
    uint64_t cache_hits;         /* programs built from a cached binary */
    uint64_t cache_rejected;     /* damaged entries (or binaries the driver refused) */
    uint64_t cache_writes;       /* entries written */
    uint64_t build_failures;     /* programs that failed to build (or a compile fault) */
} xo__cl_counters;

void xo__cl_counters_get(xo__cl_counters *out);

/* CLBlast warm-ups made (cl_warm.c): a routine's first use per device and precision. */
uint64_t xo__cl_warmups(void);
/* Called by a warm-up before it compiles (the warm-up lock held, not the CLBlast lock). */
extern void (*xo__cl_warm_hook)(void);

/* Whether the runtime of the process's OpenCL device i (in discovery order) gets one call
 * at a time (cl_device.c, one_call_at_a_time); 0 when there is no such device. */
int xo__cl_one_call_at_a_time(int i);
/* 1: treat every runtime as needing one call at a time (PoCL too), 0: the usual rule. */
void xo__cl_set_one_call_at_a_time(int all);

#endif /* XO_CL_TESTING_H */
