/* A mock device plugin for tests only (after IREE's null driver): one device of kind GPU
 * named "mock", whose "device memory" is host memory (malloc) and whose queue is real and
 * asynchronous (a worker thread runs ops and uploads in order). Every op computes the
 * right result (the arithmetic is the CPU plugin's run() on host pointers) and then takes
 * the time its model says (launch + the roofline of the GFLOP/s and GB/s chosen here),
 * which is what drain_timings reports. Its "xo_chain" extra queues a plan's chain as one
 * item (the CPU plugin's chain runner on the host memory; one launch plus each op's
 * arithmetic). Uploads and downloads are memcpy plus the modelled
 * latency and bandwidth; a download waits for the queued ops. Sites fail when the test
 * says so.
 *
 * Use: xo_mock_install(&cfg) before xo_context_create (the core loads the mock after the
 * compiled-in plugins, so it is the last device), then give the core the matching
 * profile (xo_mock_profile) so placement prices the mock exactly as it behaves. */
#ifndef XO_MOCK_PLUGIN_H
#define XO_MOCK_PLUGIN_H

#include "xo_internal.h"

typedef enum xo_mock_site { XO_MOCK_ALLOC, XO_MOCK_UPLOAD, XO_MOCK_DOWNLOAD, XO_MOCK_RUN, XO_MOCK_SITES } xo_mock_site;

typedef struct xo_mock_config {
    double launch_us;           /* per op, before its arithmetic */
    double gflops;              /* arithmetic rate (every op kind, flops as the core counts them) */
    double gbps;                /* streaming rate of the op's bytes (roofline with gflops) */
    double transfer_latency_us; /* per upload or download */
    double transfer_gbps;       /* both directions */
    int devices;                /* identical devices sharing one queue (0: 1) */
    int host_cores;             /* 1: a device on the host's cores (kind cpu, host-unified), like PoCL */
} xo_mock_config;

/* Set the model of every mock device created from now on and register the mock with the
 * core (xo__test_plugin); NULL unregisters it. Resets failures and call counts. */
void xo_mock_install(const xo_mock_config *cfg);
/* The profile that prices an op on the mock as it runs (for xo__device_set_profile). */
void xo_mock_profile(const xo_device_info *identity, xo__profile *out);
/* The modelled time of one op on the mock, in us (launch included). */
double xo_mock_op_us(const xo_op_desc *op);
/* From now on, call `nth` (1 = the next) at `site` fails; 0: none fails; -1: every call. */
void xo_mock_fail(xo_mock_site site, long nth);
/* The next `runs` ops take `factor` times their modelled time (and report it): a load
 * spike, a first call that is slow. */
void xo_mock_slow(double factor, long runs);
/* Calls made at `site` since install (failed ones included). */
long xo_mock_calls(xo_mock_site site);

const xo_plugin *xo_plugin_mock(void);

#endif
