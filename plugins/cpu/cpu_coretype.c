/* OpenBLAS's kernels against the CPU (cpu_coretype.h). */
#include "cpu_coretype.h"

#include <cblas.h>
#include "cpu_openblas.h" /* after cblas.h: how OpenBLAS is reached */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

unsigned xo__cpu_features(void)
{
    unsigned f = 0;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    f |= __builtin_cpu_supports("avx2") ? XO_CPU_FEAT_AVX2 : 0;
    f |= __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")
             ? XO_CPU_FEAT_AVX512
             : 0;
    f |= __builtin_cpu_is("amd") ? XO_CPU_FEAT_AMD : 0;
#endif
    return f;
}

/* OpenBLAS cores without AVX2 kernels: on a CPU with AVX2 (or AVX-512) they run several
 * times below what it can do (the Xeon above: 15 GFLOP/s of sgemm instead of 146). */
static int core_lacks_avx2(const char *core)
{
    static const char *const weak[] = {"prescott", "core2", "penryn", "dunnington", "nehalem", "atom",
                                       "katmai", "coppermine", "northwood", "banias", "athlon", "opteron",
                                       "barcelona", "bobcat", "sandybridge", "bulldozer", "piledriver",
                                       "generic", NULL};
    for (int i = 0; weak[i]; i++)
        if (strcasecmp(core, weak[i]) == 0)
            return 1;
    return 0;
}

/* OpenBLAS cores with AVX2 but not AVX-512 kernels: on an AVX-512 CPU their gemm runs at
 * about two thirds of the SkylakeX kernels' (this 2-core AMD EPYC, where the environment
 * sets OPENBLAS_CORETYPE=Haswell: xo_programs rnn 10000 --plan 5.20 it/s, 8.14 with
 * SkylakeX, 7.86 with Cooperlake). */
static int core_lacks_avx512(const char *core)
{
    static const char *const avx2[] = {"haswell", "zen", "skylake", "broadwell", NULL};
    for (int i = 0; avx2[i]; i++)
        if (strcasecmp(core, avx2[i]) == 0)
            return 1;
    return core_lacks_avx2(core);
}

const char *xo__openblas_better_core(const char *core, unsigned features)
{
    if (!core || !core[0] || !(features & (XO_CPU_FEAT_AVX2 | XO_CPU_FEAT_AVX512)))
        return NULL;
    if (!core_lacks_avx2(core) && !((features & XO_CPU_FEAT_AVX512) && core_lacks_avx512(core)))
        return NULL;
    if (features & XO_CPU_FEAT_AVX512)
        return "SkylakeX"; /* AVX-512 kernels; AMD's AVX-512 cores run them well too */
    return features & XO_CPU_FEAT_AMD ? "Zen" : "Haswell";
}

const char *xo__openblas_coretype_to_set(const char *env_value, const char *core, unsigned features)
{
    if (env_value && env_value[0])
        return NULL;
    return xo__openblas_better_core(core, features);
}

static const char *isa_name(unsigned features)
{
    return features & XO_CPU_FEAT_AVX512 ? "AVX-512" : "AVX2";
}

int xo__openblas_core_advice(char *out, size_t cap)
{
    unsigned feat = xo__cpu_features();
    const char *core = openblas_get_corename();
    const char *better = xo__openblas_better_core(core, feat);
    const char *env = getenv("OPENBLAS_CORETYPE"), *picked = getenv(XO_CORETYPE_FROM_ENV);
    const char *cost = core && !core_lacks_avx2(core)
                           ? "its products run at about two thirds of what the CPU can do (AVX2 kernels on an "
                             "AVX-512 CPU), and the CPU's profile is measured at that speed"
                           : "expect several times less than the CPU can do; the CPU's profile is measured at "
                             "that speed, so placement sends more work to other devices than it should";
    if (better && env && env[0])
        snprintf(out, cap,
                 "OpenBLAS runs its %s kernels on a CPU with %s (OPENBLAS_CORETYPE=%s is set): %s. Set "
                 "OPENBLAS_CORETYPE=%s before the program starts; if that changes nothing, this OpenBLAS was "
                 "built without DYNAMIC_ARCH: use one that knows this CPU",
                 core, isa_name(feat), env, cost, better);
    else if (better)
        snprintf(out, cap,
                 "OpenBLAS runs its %s kernels on a CPU with %s: %s. Set OPENBLAS_CORETYPE=%s in the "
                 "environment before the program starts (or use an OpenBLAS that knows this CPU)",
                 core, isa_name(feat), cost, better);
    else if (picked && picked[0] && env && env[0])
        snprintf(out, cap,
                 "this OpenBLAS picked its %s kernels for this CPU; xo set OPENBLAS_CORETYPE=%s for itself. "
                 "Set it in your programs' environment too (the BLAS drop-in sets it by itself)",
                 picked, env);
    else {
        if (cap)
            out[0] = '\0';
        return 0;
    }
    return 1;
}
