/* The forwarding half of libcrossover_blas.so: the CPU BLAS (XO_BLAS_LIB, default
 * OpenBLAS's shared library) is loaded privately (RTLD_LOCAL) when the library loads, so
 * its symbols never enter the global scope and never clash with ours; every routine the
 * drop-in does not run itself is a trampoline that jumps through a pointer into it, with
 * the caller's arguments untouched (whatever the routine's signature). The routines
 * defined here (and the CPU plugin built into this library) reach it through the same
 * pointers, never by name: by name they would reach our own exports and recurse. */
#include "xo_blas.h"
#include "cpu_coretype.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef XO_BLAS_DEFAULT_LIB
#define XO_BLAS_DEFAULT_LIB "libopenblas.so.0"
#endif

XO_HIDDEN int xo__blas_lib_ok;
XO_HIDDEN uintptr_t xo__blas_cpu_span[2][2];

/* Where neither XO_BLAS_LIB nor the default CPU BLAS has a routine: a BLAS has no error
 * channel, and going on with an answer never computed is worse than stopping, so say
 * which routine it was and stop the process (as reference XERBLA STOPs). */
static const char *g_lib_name = XO_BLAS_DEFAULT_LIB;
static void missing(const char *name)
{
    fprintf(stderr,
            "crossover_blas: %s was called, but neither XO_BLAS_LIB=%s nor %s provides it; stopping the "
            "process\n",
            name, g_lib_name, XO_BLAS_DEFAULT_LIB);
    abort();
}
#define XO_BLAS_DEFINE_MISSING(name, route) \
    static void missing_##name(void) { missing(#name); }
XO_BLAS_FORTRAN(XO_BLAS_DEFINE_MISSING)
XO_BLAS_CBLAS(XO_BLAS_DEFINE_MISSING)
XO_BLAS_POINTERS(XO_BLAS_DEFINE_MISSING)

#define XO_BLAS_DEFINE_POINTER(name, route) XO_HIDDEN void (*xo__fwd_##name)(void) = missing_##name;
XO_BLAS_FORTRAN(XO_BLAS_DEFINE_POINTER)
XO_BLAS_CBLAS(XO_BLAS_DEFINE_POINTER)
XO_BLAS_POINTERS(XO_BLAS_DEFINE_POINTER)

/* Every entry: its name, its pointer, and its stub (the pointer's value while unresolved). */
typedef struct entry {
    const char *name;
    void (**slot)(void);
    void (*stub)(void);
} entry;
#define XO_BLAS_ENTRY(name, route) {#name, &xo__fwd_##name, missing_##name},
static const entry g_entries[] = {XO_BLAS_FORTRAN(XO_BLAS_ENTRY) XO_BLAS_CBLAS(XO_BLAS_ENTRY)
                                      XO_BLAS_POINTERS(XO_BLAS_ENTRY)};
#define XO_BLAS_NENTRIES (sizeof g_entries / sizeof g_entries[0])

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

/* Where this library lies in memory (start, length): what XO_BLAS_LIB resolves to in it
 * is never used (e.g. XO_BLAS_LIB naming a libblas.so.3 that is the drop-in): never call
 * ourselves. A range test, not dladdr, which scans a whole symbol table at each call. */
static uintptr_t g_self[2];
static int inside(const uintptr_t span[2], const void *p) { return (uintptr_t)p - span[0] < span[1]; }

/* Point *slot at `name` in the library `h`, unless that is this library itself. */
static int resolve(void *h, const char *name, void (**slot)(void))
{
    void *p = dlsym(h, name);
    if (!p || inside(g_self, p))
        return 0;
    memcpy(slot, &p, sizeof p);
    return 1;
}

/* Record where the object of handle `h` lies in memory (slot i of xo__blas_cpu_span), so
 * that calls coming from inside it go straight back to it (xo__blas_inner). */
static int span_of(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t *span = arg; /* in: the object's load address; out: start, length */
    if (info->dlpi_addr != span[0])
        return 0;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD) {
            uintptr_t a = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            lo = a < lo ? a : lo;
            hi = a + info->dlpi_phdr[i].p_memsz > hi ? a + info->dlpi_phdr[i].p_memsz : hi;
        }
    span[0] = lo;
    span[1] = hi > lo ? hi - lo : 0;
    return 1;
}
/* The span of the object of link map `lm` into out[2]; 1 when found. */
static int span_of_map(const struct link_map *lm, uintptr_t out[2])
{
    uintptr_t span[2] = {(uintptr_t)lm->l_addr, 0};
    if (dl_iterate_phdr(span_of, span) != 1)
        return 0;
    memcpy(out, span, sizeof span);
    return 1;
}
static void record_span(void *h, int i)
{
    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm)
        span_of_map(lm, xo__blas_cpu_span[i]);
}

/* Resolve in `h` every entry still unresolved; how many were. */
static int resolve_all(void *h)
{
    int found = 0;
    for (size_t i = 0; i < XO_BLAS_NENTRIES; i++)
        if (*g_entries[i].slot == g_entries[i].stub)
            found += resolve(h, g_entries[i].name, g_entries[i].slot);
    return found;
}

/* OpenBLAS picks its kernels when it loads. One that took a core far below this CPU while
 * the user left OPENBLAS_CORETYPE unset is loaded again with the right one
 * (cpu_coretype.h), and the environment is put back as it was. Where the program holds
 * the same OpenBLAS too, it stays loaded with its first choice and the CPU plugin warns. */
static void *load_with_right_core(void *h, const char *lib, int *found)
{
    if (xo__fwd_openblas_get_corename == missing_openblas_get_corename)
        return h; /* not OpenBLAS */
    const char *core = ((char *(*)(void))xo__fwd_openblas_get_corename)();
    const char *env = getenv("OPENBLAS_CORETYPE");
    const char *set = xo__openblas_coretype_to_set(env, core, xo__cpu_features());
    if (!set)
        return h;
    int was_empty = env != NULL;
    setenv("OPENBLAS_CORETYPE", set, 1);
    dlclose(h);
    for (size_t i = 0; i < XO_BLAS_NENTRIES; i++)
        *g_entries[i].slot = g_entries[i].stub;
    h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    *found = h ? resolve_all(h) : 0;
    if (!h)
        fprintf(stderr, "crossover_blas: cannot load the CPU BLAS again (XO_BLAS_LIB=%s): %s\n", lib, dlerror());
    if (was_empty)
        setenv("OPENBLAS_CORETYPE", "", 1);
    else
        unsetenv("OPENBLAS_CORETYPE");
    return h;
}

/* What the CPU plugin asks of a CPU BLAS that is not OpenBLAS. */
static void any_threads(int n) { (void)n; }
static int all_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
static char *no_config(void) { return (char *)"CPU BLAS"; }
static char *no_core(void) { return (char *)"unknown"; }

/* The CPU BLAS: XO_BLAS_LIB, and for what it lacks (or when it cannot be loaded) the
 * default, with a warning: a missing routine never returns silently. Each is loaded
 * privately (RTLD_LOCAL). The calls one makes to BLAS names of its own (reference CBLAS's
 * cblas_saxpy calls saxpy_) reach the drop-in's exports through the global scope; those
 * go straight back to it (xo__blas_inner), so they never wait on the drop-in's start or
 * come back into crossover. */
__attribute__((constructor)) static void load_cpu_blas(void)
{
    Dl_info self;
    struct link_map *me = NULL;
    if (!dladdr1((void *)load_cpu_blas, &self, (void **)&me, RTLD_DL_LINKMAP) || !me || !span_of_map(me, g_self)) {
        fprintf(stderr, "crossover_blas: cannot locate this library\n");
        return;
    }
    const char *lib = getenv("XO_BLAS_LIB");
    if (!lib || !lib[0])
        lib = XO_BLAS_DEFAULT_LIB;
    g_lib_name = lib;
    int is_default = strcmp(lib, XO_BLAS_DEFAULT_LIB) == 0, found = 0, spans = 0;
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        fprintf(stderr, "crossover_blas: cannot load the CPU BLAS (XO_BLAS_LIB=%s): %s\n", lib, dlerror());
    else {
        found = resolve_all(h);
        h = load_with_right_core(h, lib, &found);
        if (h)
            record_span(h, spans++);
    }
    size_t lacking = 0, first = 0;
    for (size_t i = 0; i < XO_BLAS_NENTRIES; i++) /* openblas_* are extras (substitutes below) */
        if (*g_entries[i].slot == g_entries[i].stub && strncmp(g_entries[i].name, "openblas_", 9) != 0 &&
            !lacking++)
            first = i;
    if (lacking && !is_default) {
        void *d = dlopen(XO_BLAS_DEFAULT_LIB, RTLD_NOW | RTLD_LOCAL);
        int more = d ? resolve_all(d) : 0;
        if (more)
            record_span(d, spans++);
        fprintf(stderr, "crossover_blas: XO_BLAS_LIB=%s %s %zu BLAS routine%s (%s%s); %s\n", lib,
                h ? (found ? "lacks" : "provides none of the") : "could not be loaded: its", lacking,
                lacking == 1 ? "" : "s", g_entries[first].name, lacking > 1 ? ", ..." : "",
                more ? "they run on " XO_BLAS_DEFAULT_LIB : "calling one stops the process");
        found += more;
    }
    void *row_major = h ? dlsym(h, "RowMajorStrg") : NULL;
    if (row_major && !inside(g_self, row_major))
        xo__blas_cpu_row_major = row_major;
    /* The program may share this OpenBLAS (numpy loads the same libopenblas.so.0): the CPU
     * plugin keeps its thread count unless XO_THREADS asks for another. */
    if (xo__fwd_openblas_set_num_threads == missing_openblas_set_num_threads)
        xo__fwd_openblas_set_num_threads = (void (*)(void))any_threads;
    if (xo__fwd_openblas_get_num_threads == missing_openblas_get_num_threads)
        xo__fwd_openblas_get_num_threads = (void (*)(void))all_threads;
    if (xo__fwd_openblas_get_config == missing_openblas_get_config)
        xo__fwd_openblas_get_config = (void (*)(void))no_config;
    if (xo__fwd_openblas_get_corename == missing_openblas_get_corename) /* a CPU BLAS other than OpenBLAS */
        xo__fwd_openblas_get_corename = (void (*)(void))no_core;
    xo__blas_lib_ok = xo__fwd_cblas_sgemm != missing_cblas_sgemm && xo__fwd_sgemm_ != missing_sgemm_;
    if (!xo__blas_lib_ok)
        fprintf(stderr, "crossover_blas: XO_BLAS_LIB=%s is not a usable CPU BLAS (%d routines found%s)\n", lib,
                found, found == 0 ? "; is it libcrossover_blas itself?" : "");
}
