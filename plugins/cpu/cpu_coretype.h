/* Which kernels OpenBLAS runs, against what the CPU can run.
 *
 * An OpenBLAS that does not know a CPU falls back to an old core (Debian's 0.3.21 picked
 * Prescott on a 16-core Xeon with AVX-512) and runs several times below the CPU's speed.
 * OPENBLAS_CORETYPE, read once when OpenBLAS loads, picks the kernels instead. The CPU
 * plugin warns, `xo info` and the bench report say what to do, and the `xo` tool and the
 * BLAS drop-in set it themselves when the user has not. */
#ifndef XO_CPU_CORETYPE_H
#define XO_CPU_CORETYPE_H
#include <stddef.h>

/* What the CPU has, as far as OpenBLAS's choice of kernels goes. */
enum {
    XO_CPU_FEAT_AVX2 = 1u << 0,
    XO_CPU_FEAT_AVX512 = 1u << 1, /* AVX-512 F, BW, DQ and VL: what OpenBLAS's SkylakeX kernels use */
    XO_CPU_FEAT_AMD = 1u << 2,    /* AMD's cores take OpenBLAS's Zen kernels for AVX2 */
};
unsigned xo__cpu_features(void);

/* The OPENBLAS_CORETYPE that suits a CPU with `features` when OpenBLAS runs its `core`
 * kernels and those lack what the CPU has (no AVX2 kernels on an AVX2 or AVX-512 CPU, no
 * AVX-512 kernels on an AVX-512 CPU);
 * NULL when the core is fine or unknown (NULL or empty). Pure. */
const char *xo__openblas_better_core(const char *core, unsigned features);

/* The value to give OPENBLAS_CORETYPE before OpenBLAS loads again: the better core when
 * `env_value` (the variable's current value, NULL when unset) leaves OpenBLAS's choice
 * to it, NULL when the user set the variable (never overridden) or the core is fine. */
const char *xo__openblas_coretype_to_set(const char *env_value, const char *core, unsigned features);

/* The running OpenBLAS's core against this CPU: a sentence saying what it costs and what
 * to do, written to `out`; returns 1 when there is something to say, else 0 (out ""). */
int xo__openblas_core_advice(char *out, size_t cap);

/* The environment variable through which `xo` tells its re-executed self which core
 * OpenBLAS had picked before it set OPENBLAS_CORETYPE. */
#define XO_CORETYPE_FROM_ENV "XO__OPENBLAS_PICKED"
#endif /* XO_CPU_CORETYPE_H */
