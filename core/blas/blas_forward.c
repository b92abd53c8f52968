/* The forwarding half of libcrossover_blas.so: the CPU BLAS (XO_BLAS_LIB, default
 * OpenBLAS's shared library) is loaded privately (RTLD_LOCAL) when the library loads, so
 * its symbols never enter the global scope and never clash with ours; every routine the
 * drop-in does not run itself is a trampoline that jumps through a pointer into it, with
 * the caller's arguments untouched (whatever the routine's signature). The routines
 * defined here (and the CPU plugin built into this library) reach it through the same
 * pointers, never by name: by name they would reach our own exports and recurse. */
#include "xo_blas.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef XO_BLAS_DEFAULT_LIB
#define XO_BLAS_DEFAULT_LIB "libopenblas.so.0"
#endif

XO_HIDDEN int xo__blas_lib_ok;

/* Where XO_BLAS_LIB lacks a routine: say so once (a forwarded routine has no status to
 * return) and return without touching anything. */
static void missing(void)
{
    static _Atomic int told;
    if (!atomic_exchange(&told, 1))
        fprintf(stderr, "crossover_blas: a BLAS routine was called that XO_BLAS_LIB does not provide; "
                        "it did nothing\n");
}

#define XO_BLAS_DEFINE_POINTER(name, route) XO_HIDDEN void (*xo__fwd_##name)(void) = missing;
XO_BLAS_FORTRAN(XO_BLAS_DEFINE_POINTER)
XO_BLAS_CBLAS(XO_BLAS_DEFINE_POINTER)
XO_BLAS_POINTERS(XO_BLAS_DEFINE_POINTER)

/* A trampoline: `name` jumps to *xo__fwd_<name>, arguments and return untouched. */
#if defined(__x86_64__)
#if defined(__CET__)
#define XO_ENDBR "\tendbr64\n"
#else
#define XO_ENDBR ""
#endif
#define XO_TRAMPOLINE(name)                                                                       \
    __asm__(".text\n\t.globl " #name "\n\t.type " #name ", @function\n\t.p2align 4\n" #name ":\n" \
            XO_ENDBR "\tjmp *xo__fwd_" #name "(%rip)\n\t.size " #name ", .-" #name "\n");
#elif defined(__aarch64__)
#define XO_TRAMPOLINE(name)                                                                       \
    __asm__(".text\n\t.globl " #name "\n\t.type " #name ", %function\n\t.p2align 4\n" #name ":\n" \
            "\tadrp x16, xo__fwd_" #name "\n\tldr x16, [x16, :lo12:xo__fwd_" #name "]\n\tbr x16\n"  \
            "\t.size " #name ", .-" #name "\n");
#else
#error "libcrossover_blas: trampolines are written for x86-64 and AArch64"
#endif
#define XO_BLAS_GEN_OWN(name)
#define XO_BLAS_GEN_PTR(name)
#define XO_BLAS_GEN_FWD(name) XO_TRAMPOLINE(name)
#define XO_BLAS_GENERATE(name, route) XO_BLAS_GEN_##route(name)
XO_BLAS_FORTRAN(XO_BLAS_GENERATE)
XO_BLAS_CBLAS(XO_BLAS_GENERATE)

/* Point *slot at `name` in the library `h`, unless that is this library itself (e.g.
 * XO_BLAS_LIB naming a libblas.so.3 that is the drop-in): never call ourselves. */
static int resolve(void *h, const char *name, void (**slot)(void), const void *self)
{
    void *p = dlsym(h, name);
    Dl_info where;
    if (!p || (dladdr(p, &where) && where.dli_fbase == self))
        return 0;
    memcpy(slot, &p, sizeof p);
    return 1;
}

/* What the CPU plugin asks of a CPU BLAS that is not OpenBLAS. */
static void any_threads(int n) { (void)n; }
static char *no_config(void) { return (char *)"CPU BLAS"; }
static char *no_core(void) { return (char *)"unknown"; }

/* The program shares this OpenBLAS (numpy loads the same libopenblas.so.0): its thread
 * count (OPENBLAS_NUM_THREADS, or what the program set) stays as it is unless XO_THREADS
 * asks for another. */
static void (*g_set_threads)(int);
static void set_threads_if_asked(int n)
{
    if (getenv("XO_THREADS"))
        g_set_threads(n);
}

__attribute__((constructor)) static void load_cpu_blas(void)
{
    const char *lib = getenv("XO_BLAS_LIB");
    if (!lib || !lib[0])
        lib = XO_BLAS_DEFAULT_LIB;
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "crossover_blas: cannot load the CPU BLAS (XO_BLAS_LIB=%s): %s\n", lib, dlerror());
        return;
    }
    Dl_info self;
    if (!dladdr((void *)load_cpu_blas, &self)) {
        fprintf(stderr, "crossover_blas: cannot locate this library\n");
        return;
    }
    int found = 0;
#define XO_BLAS_RESOLVE(name, route) found += resolve(h, #name, &xo__fwd_##name, self.dli_fbase);
    XO_BLAS_FORTRAN(XO_BLAS_RESOLVE)
    XO_BLAS_CBLAS(XO_BLAS_RESOLVE)
    XO_BLAS_POINTERS(XO_BLAS_RESOLVE)
    void *row_major = dlsym(h, "RowMajorStrg");
    Dl_info where;
    if (row_major && dladdr(row_major, &where) && where.dli_fbase != self.dli_fbase)
        xo__blas_cpu_row_major = row_major;
    g_set_threads = xo__fwd_openblas_set_num_threads == missing ? any_threads
                                                                 : (void (*)(int))xo__fwd_openblas_set_num_threads;
    xo__fwd_openblas_set_num_threads = (void (*)(void))set_threads_if_asked;
    if (xo__fwd_openblas_get_config == missing)
        xo__fwd_openblas_get_config = (void (*)(void))no_config;
    if (xo__fwd_openblas_get_corename == missing) /* a CPU BLAS other than OpenBLAS */
        xo__fwd_openblas_get_corename = (void (*)(void))no_core;
    xo__blas_lib_ok = xo__fwd_cblas_sgemm != missing && xo__fwd_sgemm_ != missing;
    if (!xo__blas_lib_ok)
        fprintf(stderr, "crossover_blas: XO_BLAS_LIB=%s is not a usable CPU BLAS (%d routines found%s)\n", lib,
                found, found == 0 ? "; is it libcrossover_blas itself?" : "");
}
