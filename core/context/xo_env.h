/* Environment parsing (env.c) and device specs (context.c). */
#ifndef XO_ENV_H
#define XO_ENV_H
#include "xo_internal.h"

typedef struct xo__env {
    unsigned plugin_mask; /* bit i: name i of xo__plugin_names allowed */
    int log_level;
    int summary; /* XO_LOG=summary */
    int plan_eager; /* XO_PLAN=eager */
    int threads; /* XO_THREADS; 0 when not set */
    xo__calibrate_mode calibrate;
    int zero_copy;
    int nfaults;
    xo__fault faults[XO_MAX_FAULTS];
    char cache_dir[XO_CACHE_DIR_MAX + 1];
    char device[XO_SPEC_MAX + 1];
    int device_set;
    char simulate[XO_PATH_MAX]; /* XO_SIMULATE: a machine file to simulate; "": none */
} xo__env;

/* Read and validate every XO_* variable; the failure names the variable. */
xo_status xo__env_read(xo__env *env);
/* Resolve a device spec; `fn` names the caller in messages. "auto" gives -1 when
 * allow_auto, else XO_ERR_INVALID_ARGUMENT. `what` names the argument ("spec", "XO_DEVICE"). */
xo_status xo__spec_resolve(const xo_context *ctx, const char *fn, const char *what, const char *spec,
                           int allow_auto, int *out_dev);
#endif
