/* The run stage of the op path (run.c): make an op's operands current where placement
 * put it, run it there, record it, and complete it elsewhere if that device failed. */
#ifndef XO_RUN_H
#define XO_RUN_H

#include "xo_internal.h"
#include "xo_op.h"

#define XO_UNTIMED_US 2.0 /* ops predicted under this are not timed one by one */

/* Run `op` on device d and record it. raw_compute_us > 0 feeds the online correction;
 * known_us >= 0 is the corrected predicted run time (busy time of untimed tiny ops). */
xo_status xo__run(xo__op *op, int d, double raw_compute_us, int cls, double known_us);
/* A plan's fused chain of ops[0..chain->nsteps) on device d, as xo__run runs one op: their
 * operands made current there (except those from[] says an earlier op of the chain wrote),
 * steps' operands filled in, one call to d's chain runner, every op recorded. */
xo_status xo__run_chain(xo_context *ctx, int d, xo__op *const *ops, xo_chain_step *steps, const xo_chain *chain,
                        int stat_slot);
/* The op failed on `failed`: complete it elsewhere (the CPU, or for a failed CPU the
 * cheapest other eligible device in dec), every operand's current copy intact. */
xo_status xo__fall_back(xo__op *op, int failed, const xo_decision *dec, int *out_dev);
#endif
