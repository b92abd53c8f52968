/* Plans (CONTRACT.md, "Additions in 0.4"): a sequence of validated ops, recorded once
 * and replayed many times.
 *
 *   plan_capture.c  xo_capture_begin/end; the hook dispatch.c and buffer.c call for a
 *                   validated op or a read/write while this thread captures; which plans
 *                   use which buffers (a destroyed buffer fails them, naming it)
 *   plan_place.c    placement of the whole sequence with the cost model (simulated
 *                   residency; all on the CPU, op by op, and improved)
 *   plan_run.c      xo_plan_run (a flat walk calling run.c, or the CPU plugin directly),
 *                   xo_plan_describe, xo_plan_destroy
 *   plan_episode.c  eager ops that repeat between two reads placed as one run
 *                   (the context's episode_op / episode_io)
 *   plan_graph.c    runs of ops on one device recorded once and replayed as one graph
 *                   launch (the "xo_graph" extra: CUDA graphs) */
#ifndef XO_PLAN_H
#define XO_PLAN_H

#include "xo_op.h"

typedef enum xo__step_kind { XO_STEP_OP, XO_STEP_WRITE, XO_STEP_READ } xo__step_kind;

/* One recorded call. */
typedef struct xo__step {
    xo__step_kind kind;
    int dev;           /* ops: the device the plan runs it on */
    int direct;        /* ops on the CPU: XO_DIRECT_BLAS, call the host BLAS entry (xo_host_blas)
                        * directly; XO_DIRECT_RESOLVED, call res (the "xo_resolve" extra); 0: run() */
    int fused;         /* ops: the first of a fused group: how many ops it runs (>= 2) as one
                        * chain (xo__plan_chain `chain`); -1: run by the group before it; 0: not
                        * fused (plan_fuse.c) */
    int chain;         /* the first of a fused group: its index in the plan's chains */
    int epilogue;      /* ops: a gemm run as gemm_bias_act: how many ops after it that one runs
                        * (bias, activation); -1: run by the gemm before it; 0: neither */
    int epi;           /* such a gemm: its op as recorded, in the plan's epis (XO_PLAN=eager) */
    int seg;           /* ops: 1 + the index of the run of CPU steps this one starts (plan_cpu.c), else 0 */
    int cls;           /* ops: size class (correction, summary) */
    uint32_t known_ns; /* ops: corrected compute on dev, +1, when under XO_UNTIMED_US (not timed); else 0 */
    double known_us;   /* ops: corrected compute on dev (busy time of untimed ops) */
    double pred_us;    /* predicted time in one run: launch, moves, compute */
    int bi[XO_MAX_ARGS]; /* plan buffer index of each operand (reads, writes: bi[0]), -1: none */
    void *host;        /* reads: dst; writes: src (the caller's) */
    size_t offset, bytes;
    xo__op op;         /* ops: as validated, host pointers filled in */
    xo_resolved res;   /* direct == XO_DIRECT_RESOLVED: op's kernel, chosen when the plan was placed */
} xo__step;
enum { XO_DIRECT_BLAS = 1, XO_DIRECT_RESOLVED };

/* A run of consecutive CPU steps (plan_cpu.c): checked once, run back to back, recorded
 * once. bufs[0..nbuf) are the distinct buffers its ops use: `need`, read before written
 * (its host copy must be current); `write`, written (no zero-copy device may still read
 * it; current on the host only afterwards). */
typedef struct xo__seg_buf {
    xo_buffer *b;
    unsigned char need, write;
} xo__seg_buf;
typedef struct xo__seg {
    int first, len;   /* steps [first, first + len) */
    int buf0, nbuf;   /* its entries of the plan's seg_bufs */
    uint64_t known_ns; /* every op's known_ns (untimed, as eager's tiny ops): their sum; else 0 (timed) */
} xo__seg;

/* A fused group (plan_fuse.c): consecutive recorded ops that run as one xo_chain through
 * their device's chain runner. Built at capture end; a run only fills in where each
 * operand is on the device. */
typedef struct xo__plan_chain {
    xo_chain chain;       /* .steps = steps */
    xo_chain_step *steps; /* [chain.nsteps]: the ops, from[] and store */
    xo__op **ops;         /* [chain.nsteps]: the recorded ops themselves */
    int head;             /* index of the first in the plan's steps */
    int dev;
    int nfused_away;      /* results not stored (store = 0) */
} xo__plan_chain;

/* A buffer the plan uses. b is NULL once it was destroyed. */
typedef struct xo__plan_buf {
    xo_buffer *b;
    struct xo__plan_link *link;
    double bytes;
    int first_step; /* the first recorded call that used it */
    int first_arg;  /* as which operand (-1: a recorded read or write) */
} xo__plan_buf;

struct xo_plan {
    xo_context *ctx;
    uint64_t ctx_id;
    xo_plan *next_capture; /* this thread's open captures */
    xo__step *steps;
    int nsteps, step_cap, nops;
    int nfused;            /* ops in fused groups */
    xo__plan_chain *chains; /* the fused groups [nchains] */
    int nchains;
    xo__op *epis;          /* gemms run with their epilogue: the gemm as recorded [nepis] */
    int nepis;
    xo__plan_buf *bufs;    /* grown under the links' lock (destroy marks entries) */
    int nbufs, buf_cap;
    int *hash;             /* buffer -> index (open addressing, -1: empty) */
    int hash_cap;
    _Atomic int gone;      /* buffers destroyed since they were first used */
    /* placement (plan_place.c) */
    int forced;            /* the device forced when placed, or -1 */
    uint32_t avoid;        /* devices placement leaves out: an op of a run failed there */
    uint32_t failed;       /* devices an op of this run failed on (plan_run.c) */
    int replaced;          /* times the plan was placed again (after a failure, or to retry) */
    int strikes;           /* runs in which a device not yet left out failed */
    uint64_t retry_at;     /* the run count at which the devices left out are tried again */
    /* fused groups an allocation failure left unfused (plan_fuse.c), fused again later */
    int fuse_short;        /* at the latest fusion */
    int fuse_missed;       /* over the plan's life (the summary) */
    int fuse_strikes;      /* fusions in a row that came short */
    uint64_t fuse_retry_at; /* the run count at which fusion is tried again */
    double total_us, cpu_us, greedy_us;
    double place_ms;       /* time plan building took */
    /* runs of CPU steps (plan_cpu.c) */
    xo__seg *segs;
    xo__seg_buf *seg_bufs;
    int nsegs;
    struct xo__plan_graphs *graphs; /* graph segments (plan_graph.c), NULL: none */
    /* runs */
    pthread_mutex_t run_lock;
    uint64_t runs;
    double run_us;      /* xo__clock_us() the runs took (XO_LOG=summary) */
};

/* This thread's capture on ctx, or NULL (plan_recorder.c). */
xo_plan *xo__capture_of(const xo_context *ctx);

/* The context's capture_op (dispatch.c calls it after validation): 1 if this thread
 * captures op->ctx (the op is recorded, *st says how that went), else 0 (run it). */
int xo__capture_op(const xo__op *op, xo_status *st);
/* The context's capture_io (buffer.c, after validation): the same for xo_buffer_write
 * (write = 1) / xo_buffer_read. */
int xo__capture_io(xo_buffer *b, int write, size_t offset, void *p, size_t bytes, xo_status *st);
/* Append op (validated) / a read or write to p's steps, as a capture records them; 0: out
 * of memory (nothing appended). */
int xo__plan_record_op(xo_plan *p, const xo__op *op);
int xo__plan_record_io(xo_plan *p, xo_buffer *b, int write, size_t offset, void *ptr, size_t bytes);
/* The context's plan_buffer_gone (xo_buffer_destroy, for a buffer some plan uses):
 * plans and captures that use b fail from now on, naming it. */
void xo__plan_buffer_gone(xo_buffer *b);
/* "y of recorded call 3 (xo_saxpy)": how plan buffer i was first used. */
void xo__plan_buf_name(const xo_plan *p, int i, char *out, size_t cap);
/* How the first destroyed buffer of p was first used (xo__plan_buf_name), "" if none. */
void xo__plan_gone_name(xo_plan *p, char *out, size_t cap);
/* Unlink from buffers and free (no run may be in progress). */
void xo__plan_free(xo_plan *p);

/* After placement: chains of element-wise ops over the same elements, on a device whose
 * plugin runs them as one pass (the "xo_chain" extra), become fused groups (plan_fuse.c;
 * xo__plan_free frees them). */
void xo__plan_fuse(xo_plan *p);
/* Undo fusion: every step its recorded op again (before the plan is placed again), the
 * groups freed. */
void xo__plan_unfuse(xo_plan *p);
/* Steps of the plan: ops, a fused group counting once. */
int xo__plan_nsteps(const xo_plan *p);
/* After placement: fusion, which CPU steps call the host BLAS directly, the runs of CPU
 * steps (plan_run.c, plan_cpu.c). */
void xo__plan_prepare_run(xo_plan *p);
/* plan_cpu.c: how step s may run without run(), 0 if not (XO_DIRECT_RESOLVED: s->res filled
 * in); running it so. */
int xo__plan_direct(const xo_context *ctx, xo__step *s);
void xo__plan_run_direct(const xo_context *ctx, const xo__step *s);
/* plan_cpu.c: find the runs of >= 2 consecutive unfused CPU ops (best effort: none if
 * memory is short); run run `seg` if its buffers are ready on the host: returns how many
 * of its steps ran and were recorded (0: not ready, run them one by one; fewer than its
 * length: that step's CPU kernel failed, *st untouched). */
void xo__plan_segments(xo_plan *p);
int xo__plan_run_segment(xo_plan *p, const xo__seg *seg, int stat_slot);
/* Graph segments (plan_graph.c): found after placement and fusion; run: if a segment
 * starts at step i, run it as one graph and return its op count, else (or when the graph
 * failed and nothing ran) 0: the walk runs the ops one by one. free: destroy the graphs. */
void xo__plan_graph_prepare(xo_plan *p);
int xo__plan_graph_run(xo_plan *p, int i, int stat_slot);
void xo__plan_graph_free(xo_plan *p);
/* One line per graph segment for xo_plan_describe ("" when none). */
void xo__plan_graph_describe(const xo_plan *p, char *out, size_t cap);
/* Place every op (plan_place.c): step dev, cls, known_*, pred_us; the plan's totals. */
xo_status xo__plan_place(xo_plan *p);
/* The model's launch + compute of step s on every device (< 0: cannot run there), for a
 * fallback's choice of another device. */
void xo__plan_step_costs(xo_plan *p, const xo__step *s, double *out);

/* plan_episode.c: give ctx an episode placer when it has a device off the host's cores
 * (sets ctx->episode and its hooks; none when memory is short); free it. */
void xo__episode_init(xo_context *ctx);
void xo__episode_free(xo_context *ctx);

#endif
