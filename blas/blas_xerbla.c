/* The error handlers xerbla_ and cblas_xerbla, and how the routines defined here reach
 * them.
 *
 * Whose handler runs. A program's own xerbla_ / cblas_xerbla take over the drop-in's:
 * linked into the executable they come first in the global scope anyway. In a module the
 * program loads itself (numpy's lapack_lite, an R package), they would have won only in
 * that module's local scope, and with LD_PRELOAD the drop-in's global definition wins
 * instead. So the drop-in's handler looks, when called, for another loaded object that
 * defines the handler and is not a BLAS or LAPACK library (those define lsame_ or
 * cblas_sdot: their handler is a default like ours), and calls that one.
 *
 * CBLAS numbering. As reference CBLAS, a routine hands cblas_xerbla the INFO of the
 * column-major call it became (+1 for the layout); a row-major INFO is renumbered as the
 * caller wrote the call by the handler (reference CBLAS's cblas_xerbla and its testers'
 * handler do that with their RowMajorStrg flag; ours with the flag set below). */
#include "xo_blas.h"

#include <dlfcn.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef void xerbla_fn(const char *srname, const int *info, size_t len);
typedef void cblas_xerbla_fn(blasint p, char *rout, char *form, ...);

/* ---- finding the program's own handler ------------------------------------------------ */

/* 1 when `name` resolves in `h` to a definition inside the object `lm` itself. */
static void *defined_in(void *h, const struct link_map *lm, const char *name)
{
    void *p = dlsym(h, name);
    Dl_info info;
    struct link_map *owner = NULL;
    if (!p || !dladdr1(p, &info, (void **)&owner, RTLD_DL_LINKMAP) || owner != lm)
        return NULL;
    return p;
}

/* The first loaded object, in load order, other than this library, that defines `name`
 * and is not a BLAS or LAPACK library; NULL when there is none. The handle of the object
 * chosen stays open, so the pointer stays valid. */
static void *program_handler(const char *name)
{
    Dl_info self;
    struct link_map *me = NULL, *lm = NULL;
    void *main_h = dlopen(NULL, RTLD_LAZY);
    if (!dladdr1((void *)program_handler, &self, (void **)&me, RTLD_DL_LINKMAP) || !main_h ||
        dlinfo(main_h, RTLD_DI_LINKMAP, &lm) != 0)
        return NULL;
    for (; lm; lm = lm->l_next) {
        if (lm == me || !lm->l_name || !lm->l_name[0]) /* the executable's win without us */
            continue;
        void *h = dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            continue;
        struct link_map *hl = NULL;
        void *p = dlinfo(h, RTLD_DI_LINKMAP, &hl) == 0 ? defined_in(h, hl, name) : NULL;
        if (p && !defined_in(h, hl, "lsame_") && !defined_in(h, hl, "cblas_sdot"))
            return p;
        dlclose(h);
    }
    return NULL;
}

/* Looked up at each error until found (a module may be loaded after the first one);
 * errors are rare, a lock is fine. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static void *g_handler[2];
static void *find_handler(int which)
{
    static const char *const names[2] = {"xerbla_", "cblas_xerbla"};
    pthread_mutex_lock(&g_lock);
    if (!g_handler[which])
        g_handler[which] = program_handler(names[which]);
    void *p = g_handler[which];
    pthread_mutex_unlock(&g_lock);
    return p;
}

/* Set while a handler of the program runs on this thread: one that calls back into ours
 * gets our message, never a loop. */
static _Thread_local int t_forwarding;

/* ---- the drop-in's handlers ------------------------------------------------------------- */

/* The program's xerbla_, or reference BLAS's message; unlike reference XERBLA we do not
 * STOP the program: a library never ends its caller. */
__attribute__((weak)) void xerbla_(const char *srname, const int *info, size_t len)
{
    xerbla_fn *theirs = t_forwarding ? NULL : (xerbla_fn *)find_handler(0);
    if (theirs) {
        t_forwarding = 1;
        theirs(srname, info, len);
        t_forwarding = 0;
        return;
    }
    int n = 0;
    while ((size_t)n < len && n < 32 && srname[n] && srname[n] != ' ')
        n++;
    fprintf(stderr, " ** On entry to %.*s parameter number %2d had an illegal value\n", n, srname, *info);
}

/* 1 while this thread reports an error of a row-major call (reference CBLAS's RowMajorStrg). */
static _Thread_local int t_row_major;
/* The CPU BLAS's RowMajorStrg where it is reference CBLAS (its routines report through
 * the global cblas_xerbla, which is ours). */
XO_HIDDEN int *xo__blas_cpu_row_major;

/* The CBLAS argument the caller wrote, for INFO of a row-major call to one of the routines
 * that swap arguments on their way to the column-major one (as reference CBLAS numbers). */
static int caller_info(const char *rout, int info)
{
    const char *op = strncmp(rout, "cblas_", 6) == 0 ? rout + 6 : rout;
    if (*op && strchr("sdcz", *op))
        op++;
    /* pairs of INFO values that trade places */
    static const struct { const char *op; int swap[4][2]; } rules[] = {
        {"gemm", {{4, 5}, {9, 11}}},    {"symm", {{4, 5}}},   {"hemm", {{4, 5}}}, {"trmm", {{6, 7}}},
        {"trsm", {{6, 7}}},             {"gemv", {{3, 4}}},   {"gbmv", {{3, 4}, {5, 6}}},
        {"ger", {{2, 3}, {6, 8}}},      {"geru", {{2, 3}, {6, 8}}}, {"gerc", {{2, 3}, {6, 8}}},
        {"her2", {{6, 8}}},             {"hpr2", {{6, 8}}},
    };
    for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
        if (strcmp(op, rules[r].op) != 0)
            continue;
        for (int i = 0; i < 4 && rules[r].swap[i][0]; i++)
            if (info == rules[r].swap[i][0] || info == rules[r].swap[i][1])
                return rules[r].swap[i][0] + rules[r].swap[i][1] - info;
    }
    return info;
}

/* The program's cblas_xerbla, or reference CBLAS's message, again without ending the
 * program. */
__attribute__((weak)) void cblas_xerbla(blasint p, char *rout, char *form, ...)
{
    char detail[256] = "";
    va_list ap;
    va_start(ap, form);
    vsnprintf(detail, sizeof detail, form ? form : "", ap);
    va_end(ap);
    cblas_xerbla_fn *theirs = t_forwarding ? NULL : (cblas_xerbla_fn *)find_handler(1);
    if (theirs) {
        t_forwarding = 1;
        theirs(p, rout, (char *)"%s", detail);
        t_forwarding = 0;
        return;
    }
    int row_major = t_row_major || (xo__blas_cpu_row_major && *xo__blas_cpu_row_major);
    if (p)
        fprintf(stderr, "Parameter %d to routine %s was incorrect\n",
                row_major ? caller_info(rout, (int)p) : (int)p, rout);
    fputs(detail, stderr);
}

void xo__blas_xerbla(const char *name6, int info) { xerbla_(name6, &info, 6); }

void xo__blas_cblas_xerbla(const char *rout, int info, int row_major)
{
    t_row_major = row_major;
    cblas_xerbla(info, (char *)rout, (char *)"");
    t_row_major = 0;
}
