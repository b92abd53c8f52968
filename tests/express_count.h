/* A host BLAS table (the "xo_host_blas" extra of crossover/plugin.h) that counts its calls and forwards them to a
 * context's own: installed in place of ctx->host_blas, it shows which calls took the
 * express path (test_fastpath, test_express). */
#ifndef XO_EXPRESS_COUNT_H
#define XO_EXPRESS_COUNT_H

#include "xo_internal.h"

enum { XOT_SGEMM, XOT_DGEMM, XOT_SGEMV, XOT_DGEMV, XOT_SAXPY, XOT_DAXPY, XOT_EXPRESS_ENTRIES };
/* Calls per entry since the last install. */
extern int xot_express_calls[XOT_EXPRESS_ENTRIES];
/* Count ctx's express calls from now on (its table must be the CPU plugin's); the counts
 * restart at 0. */
void xot_express_count(xo_context *ctx);
/* Give ctx its own table back. */
void xot_express_uncount(xo_context *ctx);

#endif
