/* Conformance of every row of the unary op map (crossover.h) inside a plan, on the device
 * under test: op(x) * x and then + x, captured as one element-wise chain that the plan
 * fuses (the device's chain runner: the CPU's blocked pass, OpenCL's generated kernel,
 * CUDA's interpreter), on inputs from the op's domain, negatives included. The eager op
 * and gemm_bias_act's epilogue walk the same map in the typed suites; this is the third
 * place a formula runs. */
#include "test_conformance.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CHAIN_N = 8195 }; /* the CPU fuses chains from 8192 elements (cpu_chain.c) */

void conformance_unary_chains(void **state)
{
    (void)state;
    double *x = malloc(CHAIN_N * sizeof(double)), *want = malloc(CHAIN_N * sizeof(double));
    assert_non_null(x);
    assert_non_null(want);
    for (int fp64 = 0; fp64 <= g_fp64; fp64++)
        for (int op = 0; op < XO_UNARY_OP_COUNT; op++) {
            xot_unary_fill_d(op, x, CHAIN_N, 7600 + (uint64_t)op);
            for (size_t i = 0; i < CHAIN_N; i++) x[i] = (double)(float)x[i]; /* one reference for both */
            xot_ref_dunary((xo_unary_op)op, CHAIN_N, x, want);
            for (size_t i = 0; i < CHAIN_N; i++) want[i] = want[i] * x[i] + x[i];
            xo_buffer *bx = conformance_make(x, CHAIN_N, fp64), *by = conformance_make(x, CHAIN_N, fp64);
            xo_plan *plan = NULL;
            xot_assert_ok(xo_capture_begin(g_ctx));
            if (fp64) {
                xot_assert_ok(xo_dunary(g_ctx, (xo_unary_op)op, CHAIN_N, bx, 0, by, 0));
                xot_assert_ok(xo_dbinary(g_ctx, XO_MUL, CHAIN_N, by, 0, bx, 0, by, 0));
                xot_assert_ok(xo_dbinary(g_ctx, XO_ADD, CHAIN_N, by, 0, bx, 0, by, 0));
            } else {
                xot_assert_ok(xo_sunary(g_ctx, (xo_unary_op)op, CHAIN_N, bx, 0, by, 0));
                xot_assert_ok(xo_sbinary(g_ctx, XO_MUL, CHAIN_N, by, 0, bx, 0, by, 0));
                xot_assert_ok(xo_sbinary(g_ctx, XO_ADD, CHAIN_N, by, 0, bx, 0, by, 0));
            }
            xot_assert_ok(xo_capture_end(g_ctx, &plan));
            char text[2048], what[96];
            xot_assert_ok(xo_plan_describe(plan, text, sizeof text));
            snprintf(what, sizeof what, "%cunary %s(%c) * x + x, fused in a plan", fp64 ? 'd' : 's',
                     xot_unary_name(op), xot_unary_takes(op));
            if (!strstr(text, "unary+")) {
                print_error("%s: not fused:\n%s", what, text);
                fail();
            }
            xot_assert_ok(xo_plan_run(plan));
            conformance_expect(by, want, CHAIN_N, fp64, what);
            xo_plan_destroy(plan);
            xo_buffer_destroy(bx);
            xo_buffer_destroy(by);
        }
    free(x);
    free(want);
}
