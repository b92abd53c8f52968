/* A recorded machine, simulated (XO_SIMULATE=FILE; docs/machines/README.md).
 *
 * machine.c reads a machine file: per device its identity, its profile (the placer gets
 * the profile it had there) and the simulation's truth (the host's issue cost of an
 * asynchronous launch, kernel times by kind and size, waits, transfers, graph launches).
 * sim.c turns those into devices: plugins whose ops compute on the host through the CPU
 * plugin's kernels while the times come from the file, on a simulated clock. Only the
 * devices and the clock are simulated; placement runs unchanged on top. */
#ifndef XO_SIM_H
#define XO_SIM_H

#include "xo_internal.h"

/* A table of (size, us) points, interpolated log-log; below the first point its time
 * (a fixed cost dominates there), past the last one growing as size^power. */
#define XO_SIM_POINTS 32
typedef struct xo__sim_table {
    int n;
    double size[XO_SIM_POINTS], us[XO_SIM_POINTS];
} xo__sim_table;
double xo__sim_table_us(const xo__sim_table *t, double size, double power);

enum { XO_SIM_H2D = 0, XO_SIM_D2H = 1 };
enum { XO_SIM_PAGEABLE = 0, XO_SIM_PINNED = 1 };
#define XO_SIM_ANY 0 /* kernel[0][..] / kernel[..][0]: a row for every kind / dtype ("*") */

typedef struct xo__sim_device {
    char plugin[16];          /* cpu, cuda, opencl: the spec name */
    int line;                 /* its `device` line, for messages */
    xo_device_info info;      /* identity (the file's) */
    xo__profile profile;      /* what calibration measured there */
    int threads;              /* the CPU: the thread count its kernel rows were timed with */
    double issue_us;          /* the calling thread's cost of an asynchronous launch */
    double wait_us[2];        /* a read or xo_finish: [0] its queue already empty, [1] still busy */
    double graph_us[2];       /* a graph launch: [0] host cost per segment, [1] device cost per node */
    xo__sim_table transfer[2][2];                      /* [XO_SIM_H2D/D2H][PAGEABLE/PINNED] by bytes */
    xo__sim_table kernel[XO_OP_KIND_COUNT + 1][3];     /* [1 + kind or ANY][1 + dtype or ANY] */
} xo__sim_device;

typedef struct xo__machine {
    char path[XO_PATH_MAX];
    char title[256];
    int ndev;
    xo__sim_device dev[XO_MAX_DEVICES];
} xo__machine;

/* Read a machine file. XO_ERR_INVALID_ARGUMENT naming the file and the line for anything
 * it cannot take (an unreadable file, a bad line, a device without the rows it needs). */
xo_status xo__machine_read(const char *path, xo__machine *out);

/* Kernel time (us) of `op` on simulated device d: the (kind, dtype) rows, else (kind, *),
 * (*, dtype), (*, *). */
double xo__sim_kernel_us(const xo__sim_device *d, const xo_op_desc *op);

/* ---- the simulation of one context (sim.c) ---- */

typedef struct xo__sim xo__sim;
/* Read XO_SIMULATE's file and set ctx up to simulate it: ctx->sim, ctx->registry (the
 * simulated devices' plugins) and ctx->clock_us. Before xo__devices_open. */
xo_status xo__sim_create(xo_context *ctx, const char *path);
void xo__sim_destroy(xo_context *ctx);
/* The simulated host clock (us since the context was created). */
double xo__sim_now_us(const xo_context *ctx);
/* Give every device its profile from the file (calibration under simulation). */
void xo__sim_profiles(xo_context *ctx);
/* The machine file's path (xo info). */
const char *xo__sim_path(const xo_context *ctx);

#endif /* XO_SIM_H */
