/* What test_conformance.c (the table of ops against their references) shares with the
 * rules it runs beside them (test_conformance_zero.c, _max.c, _map.c): the context, the
 * device under test, and the checks. */
#ifndef XO_TEST_CONFORMANCE_H
#define XO_TEST_CONFORMANCE_H
#include "xo_test.h"

extern xo_context *g_ctx;
extern int g_dev;    /* forced device index, -1 under "auto" */
extern int g_forced; /* 1 when a device is forced */
extern int g_fp64;   /* the device runs double precision */

/* The decision of the op just run ("s", "gemm"): see test_conformance.c. */
void check_decision(const char *prefix, const char *op);

/* test_conformance_zero.c: zero sizes, and disjoint operands in one buffer. */
void conformance_zero_sizes(void **state);
void conformance_zero_sizes_nn(void **state);
void conformance_disjoint_same_buffer(void **state);

/* test_conformance_max.c: the references against the NaN rule of every max, and maxima
 * and argmax in a plan. */
void conformance_max_references(void **state);
void conformance_max_plan(void **state);
void conformance_argmax_plan(void **state);
/* Host doubles as a buffer of the op's precision (float when !fp64), and a buffer's n
 * elements against `want` (rounded to that precision; NaN matches NaN only). */
xo_buffer *conformance_make(const double *h, size_t n, int fp64);
void conformance_expect(xo_buffer *b, const double *want, size_t n, int fp64, const char *what);
/* test_conformance_map.c: every unary op of the map in a fused chain. */
void conformance_unary_chains(void **state);
#endif
