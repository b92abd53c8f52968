/* Run-time loading of the CUDA driver and cuBLAS (dlopen + the X-macro symbol tables of
 * cuda_api.h), once per process. Nothing here prints; notes go to the caller's log. */
#include "cuda_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

xo__cuda_driver_api xo__cu;
xo__cublas_api xo__cublas;

static xo__cuda_libs g_libs;
static char g_driver_note[256];
static char g_cublas_note[256];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

typedef struct symbol_entry {
    const char *name;
    const char *fallback;
    void **slot;
} symbol_entry;

/* Object pointer <-> function pointer conversion through memcpy: dlsym returns void *,
 * and ISO C does not define casting that to a function pointer. Every slot here is a
 * function pointer of the same size as void * (POSIX guarantees it for dlsym). */
static void store_symbol(void **slot, void *sym)
{
    memcpy(slot, &sym, sizeof sym);
}

/* Try each name in `names` (NULL-terminated); returns the handle or NULL and writes a
 * note naming what was loaded or the last dlerror(). */
static void *open_first(const char *const *names, char *note, size_t cap)
{
    char first_error[200] = "";
    for (size_t i = 0; names[i]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h) {
            snprintf(note, cap, "loaded %s", names[i]);
            return h;
        }
        const char *e = dlerror();
        if (i == 0) snprintf(first_error, sizeof first_error, "%s", e ? e : "unknown error");
    }
    snprintf(note, cap, "cannot load %s (%s)", names[0], first_error);
    return NULL;
}

/* Resolve every entry; a missing required symbol fails the whole table (the slots
 * are then cleared by the caller). Returns the name of the first missing symbol. */
static const char *resolve(void *lib, const symbol_entry *table, size_t n, int required)
{
    for (size_t i = 0; i < n; i++) {
        void *sym = dlsym(lib, table[i].name);
        if (!sym && table[i].fallback) sym = dlsym(lib, table[i].fallback);
        if (!sym && required) return table[i].name;
        store_symbol(table[i].slot, sym);
    }
    return NULL;
}

static void load_driver(void)
{
    static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
    void *lib = open_first(names, g_driver_note, sizeof g_driver_note);
    if (!lib) return;

#define XO_CU_ENTRY_(sym, fallback, params) {#sym, fallback, (void **)&xo__cu.sym},
    const symbol_entry required[] = {XO_CU_REQUIRED_SYMBOLS(XO_CU_ENTRY_)};
    const symbol_entry optional[] = {XO_CU_OPTIONAL_SYMBOLS(XO_CU_ENTRY_)};
#undef XO_CU_ENTRY_

    const char *missing = resolve(lib, required, sizeof required / sizeof required[0], 1);
    if (missing) {
        snprintf(g_driver_note, sizeof g_driver_note, "libcuda lacks %s (driver too old)", missing);
        memset(&xo__cu, 0, sizeof xo__cu);
        dlclose(lib);
        return;
    }
    (void)resolve(lib, optional, sizeof optional / sizeof optional[0], 0);
    g_libs.driver = 1;
}

int xo__cuda_graphs_loaded(void)
{
    int all = xo__cuda_load()->driver;
#define XO_CU_HAVE_(sym, fallback, params) all = all && xo__cu.sym != NULL;
    XO_CU_GRAPH_SYMBOLS(XO_CU_HAVE_)
#undef XO_CU_HAVE_
    return all;
}

static xo__nvrtc_api g_nvrtc;
static int g_nvrtc_ok;
static char g_nvrtc_note[256];
static pthread_once_t g_nvrtc_once = PTHREAD_ONCE_INIT;

static void load_nvrtc(void)
{
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", NULL};
    void *lib = open_first(names, g_nvrtc_note, sizeof g_nvrtc_note);
    if (!lib) return;
#define XO_NVRTC_ENTRY_(sym, fallback, params) {#sym, fallback, (void **)&g_nvrtc.sym},
    const symbol_entry table[] = {XO_NVRTC_SYMBOLS(XO_NVRTC_ENTRY_)};
#undef XO_NVRTC_ENTRY_
    const char *missing = resolve(lib, table, sizeof table / sizeof table[0], 1);
    if (missing) {
        snprintf(g_nvrtc_note, sizeof g_nvrtc_note, "libnvrtc lacks %s", missing);
        memset(&g_nvrtc, 0, sizeof g_nvrtc);
        dlclose(lib);
        return;
    }
    g_nvrtc_ok = 1;
}

const xo__nvrtc_api *xo__cuda_nvrtc(const char **note)
{
    pthread_once(&g_nvrtc_once, load_nvrtc);
    if (note) *note = g_nvrtc_note;
    return g_nvrtc_ok ? &g_nvrtc : NULL;
}

static void load_cublas(void)
{
    /* cuBLAS 13 needs a CUDA 13 driver: on an older driver prefer cuBLAS 12. */
    static const char *const names13[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so", NULL};
    static const char *const names12[] = {"libcublas.so.12", "libcublas.so.13", "libcublas.so", NULL};
    int version = 0;
    if (xo__cu.cuDriverGetVersion(&version) != CUDA_SUCCESS) version = 0;
    const char *const *names = version > 0 && version < 13000 ? names12 : names13;
    void *lib = open_first(names, g_cublas_note, sizeof g_cublas_note);
    if (!lib) return;

#define XO_CUBLAS_ENTRY_(sym, fallback, params) {#sym, fallback, (void **)&xo__cublas.sym},
    const symbol_entry table[] = {XO_CUBLAS_SYMBOLS(XO_CUBLAS_ENTRY_)};
#undef XO_CUBLAS_ENTRY_

    const char *missing = resolve(lib, table, sizeof table / sizeof table[0], 1);
    if (missing) {
        snprintf(g_cublas_note, sizeof g_cublas_note, "libcublas lacks %s", missing);
        memset(&xo__cublas, 0, sizeof xo__cublas);
        dlclose(lib);
        return;
    }
    g_libs.cublas = 1;
}

static void load_once(void)
{
    load_driver();
    /* cuBLAS is only useful with a driver; don't map ~100 MB of library otherwise. */
    if (g_libs.driver) load_cublas();
    else snprintf(g_cublas_note, sizeof g_cublas_note, "not loaded (no driver)");
    g_libs.driver_note = g_driver_note;
    g_libs.cublas_note = g_cublas_note;
}

const xo__cuda_libs *xo__cuda_load(void)
{
    pthread_once(&g_once, load_once);
    return &g_libs;
}
