/* xo bench: the cross-vendor benchmark's data model, shared by the sweep, the workloads,
 * the analysis and the writers (csv, json, markdown, svg). */
#ifndef XO_BENCH_H
#define XO_BENCH_H

#include "xo_tool.h"

/* Op classes of the sweep. */
typedef enum xo__bench_op {
    XO_BENCH_SGEMM, XO_BENCH_DGEMM, XO_BENCH_SGEMV, XO_BENCH_SAXPY,
    XO_BENCH_TANH, XO_BENCH_ADD, XO_BENCH_SUM, XO_BENCH_NOPS
} xo__bench_op;
extern const char *const xo__bench_op_names[XO_BENCH_NOPS];

enum { XO_BENCH_RESIDENT = 0, XO_BENCH_HOST = 1, XO_BENCH_NSTATES = 2 };
extern const char *const xo__bench_state_names[XO_BENCH_NSTATES];

enum { XO_BENCH_OK = 0, XO_BENCH_UNSUPPORTED, XO_BENCH_ERROR };

/* A placement under test: a forced device (index >= 0) or auto placement (-1). */
typedef struct xo__bench_config {
    char spec[32]; /* "cpu", "opencl:0", ..., "auto" */
    int device;    /* -1: auto */
    xo_device_info info;
} xo__bench_config;

typedef struct xo__bench_point {
    xo__bench_op op;
    size_t m, n, k; /* gemm: C(m x n) = A(m x k) B(k x n); gemv: A(m x n); vectors: n */
    double size;    /* x axis: n for square gemm, elements for the rest */
    int skinny;     /* a named shape, off the size axis (no crossover, no plot) */
    char shape[48]; /* "256x256x256" (m x n x k), "64x64" (m x n), "1048576" */
} xo__bench_point;

#define XO_BENCH_MAX_ROUNDS 32 /* the sweep's rounds per point (placements take turns) */

typedef struct xo__bench_result {
    int status;    /* XO_BENCH_OK, _UNSUPPORTED, _ERROR */
    double median_us, p10_us, p90_us, spread; /* over all samples; spread = (p90 - p10) / median */
    int reps;
    int placed;    /* device of the last timed call (auto: where it chose) */
    int nrounds;   /* rounds of the point; round_us[r]: median of this placement's samples in round r */
    double round_us[XO_BENCH_MAX_ROUNDS];
} xo__bench_result;

#define XO_BENCH_MAX_CONFIGS (XO_MAX_DEVICES + 1)
#define XO_BENCH_MAX_WORKLOADS 12

typedef struct xo__bench_workload {
    char name[64];
    char unit[16];  /* "it/s", "calls/s", "steps/s" */
    char note[192];
    double rate[XO_BENCH_MAX_CONFIGS]; /* per config, median over its rounds; 0 = failed / not run */
    uint64_t auto_ops[XO_MAX_DEVICES];  /* ops auto placement ran on each device (timed part) */
    int best;                           /* forced config with the highest rate; -1: none */
    double auto_over_best;              /* median over rounds of rate(auto) / rate(best); 0: unknown */
    double auto_over_best_q1, auto_over_best_q3; /* quartiles of those per-round ratios (the spread) */
    double cblas_rate;                  /* the same program in plain CBLAS; 0: none */
    double auto_over_cblas;             /* median over rounds of rate(auto) / rate(CBLAS); 0: none */
    /* The same iteration captured once as a plan (under auto) and replayed, timed in the
     * same rounds (bench_workloads.c); rates 0: none. */
    int plan_check;                     /* XO_BENCH_PLAN_NONE, _OK, _MISMATCH, _ERROR */
    int plan_check_steps;               /* iterations compared, plan against eager */
    double plan_check_rel;              /* largest relative difference of the checked value */
    double plan_rate;                   /* median over rounds */
    double plan_over_eager;             /* median over rounds of rate(plan) / rate(auto) */
    double plan_over_cblas;             /* median over rounds of rate(plan) / rate(CBLAS) */
    double tuned_rate;                  /* the CBLAS twin built -O3 -march=native -ffast-math; 0: none */
    double plan_over_tuned;             /* median over rounds of rate(plan) / rate(tuned C) */
    char plan_summary[192];             /* xo_plan_describe's last line */
} xo__bench_workload;

enum { XO_BENCH_PLAN_NONE = 0, XO_BENCH_PLAN_OK, XO_BENCH_PLAN_MISMATCH, XO_BENCH_PLAN_ERROR };

/* The batch-1 3 -> 100 -> 3 evaluation y = W2 tanh(W1 x + b1) + b2, x in from the host and
 * y out to it (an ODE solver's right-hand side), per evaluation: eager crossover ops,
 * the same ops as a plan, plain CBLAS calls, those calls as tuned C (below), one
 * hand-vectorised C loop (bench_eval1.c). */
enum { XO_EVAL1_EAGER, XO_EVAL1_PLAN, XO_EVAL1_CBLAS, XO_EVAL1_TUNED, XO_EVAL1_LOOP, XO_EVAL1_N };
extern const char *const xo__bench_eval1_names[XO_EVAL1_N];
typedef struct xo__bench_eval1 {
    int status;                   /* XO_BENCH_OK, _ERROR (batches 0: not run) */
    double median_ns[XO_EVAL1_N]; /* median over batches, ns per evaluation; 0: failed */
    double best_ns[XO_EVAL1_N];   /* fastest batch */
    double max_rel[XO_EVAL1_N];   /* largest relative error of y against a double reference */
    int batches, evals_per_batch;
    char plan_summary[192];
    /* the plan's CPU kernels alone (its steps' plugin calls and the write's and read's
     * copies, without the replay around them) and the plan in turn with them: medians */
    double kernels_ns, kernels_plan_ns;
} xo__bench_eval1;

/* A crossover: the smallest size from which a device beats the CPU at every larger
 * measured size. */
typedef struct xo__bench_crossover {
    int known;     /* 0: no data (device could not run the op) */
    int never;     /* the device never beats the CPU at the largest sizes */
    double size;
} xo__bench_crossover;

typedef struct xo__bench_regret {
    int n;              /* points that count */
    double geomean;     /* geometric mean of time(auto) / time(best forced) */
    double worst;
    int worst_point, worst_state;
} xo__bench_regret;

typedef struct xo__bench {
    xo_context *ctx;
    int quick;
    const char *out_dir;
    char date[32];
    double started_us;
    int nconfigs; /* the forced devices, then auto (last) */
    xo__bench_config cfg[XO_BENCH_MAX_CONFIGS];
    int npoints;
    xo__bench_point *points;
    xo__bench_result *results; /* [point][config][state] */
    int nworkloads;
    xo__bench_workload workloads[XO_BENCH_MAX_WORKLOADS];
    xo__bench_eval1 eval1;
    /* analysis (bench_report.c) */
    xo__bench_crossover cross[XO_BENCH_NOPS][XO_BENCH_MAX_CONFIGS][XO_BENCH_NSTATES];
    xo__bench_regret regret[XO_BENCH_NOPS + 1][XO_BENCH_NSTATES + 1]; /* [op or all][state or both] */
    /* progress */
    int done, total;
} xo__bench;

static inline xo__bench_result *xo__bench_at(xo__bench *b, int point, int config, int state)
{
    return &b->results[((size_t)point * (size_t)b->nconfigs + (size_t)config) * XO_BENCH_NSTATES + (size_t)state];
}
static inline int xo__bench_auto(const xo__bench *b) { return b->nconfigs - 1; }

/* bench_sweep.c */
xo_status xo__bench_plan(xo__bench *b);   /* fills points, allocates results */
int xo__bench_sweep(xo__bench *b);        /* 0, or XO_TOOL_FAIL */
/* Median, p10, p90 and spread of `n` samples (sorts them); reps = n. */
void xo__bench_stats(double *samples, int n, xo__bench_result *out);
/* Place ops as config `c` says. */
xo_status xo__bench_use_config(xo__bench *b, int c);
/* The placements' order in round `round` (bench_sweep.c): each follows each other one
 * equally often over a cycle of rounds. */
void xo__bench_round_order(int n, int round, int *order);

/* bench_workloads.c */
int xo__bench_workloads(xo__bench *b);
/* Real programs, each written with crossover and with plain CBLAS (bench_rnn.c,
 * bench_ode.c): state made by _new (cblas: the CBLAS twin's), one iteration by _iter. */
void *xo__bench_rnn_new(xo_context *ctx, size_t batch, int cblas);
void xo__bench_rnn_free(void *st);
xo_status xo__bench_rnn_iter(xo_context *ctx, void *st);
xo_status xo__bench_rnn_cblas_iter(xo_context *ctx, void *st);
float xo__bench_rnn_loss(const void *st);
/* The iteration as a plan: _capture records one iteration into the state's plan (under
 * the device policy in force; *out: the plan, owned by the state), _plan_iter runs it (the host's part around the run
 * included). */
xo_status xo__bench_rnn_capture(xo_context *ctx, void *st, xo_plan **out);
xo_status xo__bench_rnn_plan_iter(xo_context *ctx, void *st);
void *xo__bench_ode_new(xo_context *ctx, int cblas);
void xo__bench_ode_free(void *st, int cblas);
xo_status xo__bench_ode_iter(xo_context *ctx, void *st);
xo_status xo__bench_ode_cblas_iter(xo_context *ctx, void *st);
float xo__bench_ode_loss(const void *st, int cblas);
xo_status xo__bench_ode_capture(xo_context *ctx, void *st, xo_plan **out);
xo_status xo__bench_ode_plan_iter(xo_context *ctx, void *st);

/* "Tuned C": the CBLAS twins as a C programmer who cares builds them, -O3 -march=native
 * -ffast-math (vectorised tanhf), the same sources compiled a second time with
 * XO_BENCH_TUNED, which keeps only the twins and names them with _tuned
 * (bench/CMakeLists.txt; XO_BENCH_HAS_TUNED where the compiler takes those flags). They
 * run on the twins' state (xo__bench_*_new with cblas = 1). */
#ifdef XO_BENCH_TUNED
#define XO_BENCH_TWIN(name) name##_tuned
#else
#define XO_BENCH_TWIN(name) name
#endif
xo_status xo__bench_rnn_cblas_iter_tuned(xo_context *ctx, void *st);
xo_status xo__bench_ode_cblas_iter_tuned(xo_context *ctx, void *st);
void xo__bench_eval1_cblas_tuned(void *e); /* bench_eval1.c's state */

/* bench_eval1.c: fills b->eval1; 0, or XO_TOOL_FAIL (a variant failed or was wrong). */
int xo__bench_run_eval1(xo__bench *b);
void xo__bench_print_eval1(const xo__bench *b, FILE *f); /* `xo bench --eval1` */

/* bench_report.c */
void xo__bench_analyse(xo__bench *b);
int xo__bench_write_csv(xo__bench *b, const char *path);
int xo__bench_write_json(xo__bench *b, const char *path);
int xo__bench_write_markdown(xo__bench *b, const char *path);
int xo__bench_write_workloads_csv(xo__bench *b, const char *path);
/* "1048576" -> "1M", "2048" -> "2048"; for tables. */
void xo__bench_format_size(double size, char *out, size_t cap);
/* A rate or time as the report writes every figure: 4 significant digits, never an
 * exponent ("12050", "583.6", "5.051", "0.0123"). Returns out. */
const char *xo__bench_format_num(double v, char *out, size_t cap);
/* The rate ratio of a workload row (auto / best forced, each its own median over rounds)
 * lies outside the quartiles of the paired per-round ratio: the medians come from rounds
 * of different speed (a busy machine), so the row's rates and its ratio disagree. */
int xo__bench_row_disagrees(const xo__bench *b, const xo__bench_workload *w);

/* bench_findings.c: the report's opening lines, each computed from the data. */
void xo__bench_write_findings(FILE *f, const xo__bench *b);

/* bench_svg.c */
int xo__bench_write_plot(xo__bench *b, xo__bench_op op, const char *path);
int xo__bench_write_regret_plot(xo__bench *b, const char *path);

#endif /* XO_BENCH_H */
