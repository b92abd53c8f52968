/* How the report reads: one number format, the rows whose figures disagree, and the
 * opening "Findings", a few lines a reader can act on, each computed from the run's data
 * (never written by hand), so a run on a busy machine says so itself. */
#include "bench.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* Auto's paired ratio within this of 1 counts as "matches the best forced device". */
#define MATCH_MARGIN 0.05

const char *xo__bench_format_num(double v, char *out, size_t cap)
{
    double a = fabs(v);
    int decimals = a >= 1000 ? 0 : a >= 100 ? 1 : a >= 10 ? 2 : a >= 1 ? 3 : a > 0 ? 3 - (int)floor(log10(a)) : 0;
    if (decimals > 9)
        decimals = 9;
    snprintf(out, cap, "%.*f", decimals, v);
    return out;
}

int xo__bench_row_disagrees(const xo__bench *b, const xo__bench_workload *w)
{
    int au = xo__bench_auto(b);
    if (w->best < 0 || w->rate[au] <= 0 || w->rate[w->best] <= 0 || w->auto_over_best <= 0)
        return 0;
    double r = w->rate[au] / w->rate[w->best];
    /* a 2% margin: medians of a handful of rounds move that much without a cause */
    return r < w->auto_over_best_q1 * 0.98 || r > w->auto_over_best_q3 * 1.02;
}

static void workloads_line(FILE *f, const xo__bench *b)
{
    int rated = 0, matched = 0, worst = -1, disagree = 0;
    for (int i = 0; i < b->nworkloads; i++) {
        const xo__bench_workload *w = &b->workloads[i];
        if (w->best < 0 || w->auto_over_best <= 0)
            continue;
        rated++;
        matched += w->auto_over_best >= 1.0 - MATCH_MARGIN;
        if (worst < 0 || w->auto_over_best < b->workloads[worst].auto_over_best)
            worst = i;
        disagree += xo__bench_row_disagrees(b, w);
    }
    if (!rated) {
        fputs("- No workload gave both an auto and a forced rate.\n", f);
        return;
    }
    const xo__bench_workload *w = &b->workloads[worst];
    fprintf(f, "- Auto placement ran within %.0f%% of the best forced device (or faster) in %d of %d workloads; "
               "the furthest below is %s at %.2f of %s (rounds spread %.2f to %.2f).\n",
            MATCH_MARGIN * 100, matched, rated, w->name, w->auto_over_best, b->cfg[w->best].spec,
            w->auto_over_best_q1, w->auto_over_best_q3);
    if (disagree)
        fprintf(f, "- In %d workload row%s (marked †) the rate columns and the paired ratio disagree: the machine's "
                   "speed changed between rounds (another load?). Their ratios, paired within rounds, are the "
                   "figures to trust; rerun on a quiet machine for rates.\n",
                disagree, disagree == 1 ? "" : "s");
}

/* The geometric mean, least and greatest of a ratio over the workloads that have it. */
static int ratio_line(FILE *f, const xo__bench *b, const char *what, size_t offset)
{
    double logsum = 0, lo = 0, hi = 0;
    int n = 0;
    for (int i = 0; i < b->nworkloads; i++) {
        double r;
        memcpy(&r, (const char *)&b->workloads[i] + offset, sizeof r);
        if (!(r > 0))
            continue;
        logsum += log(r);
        lo = n == 0 || r < lo ? r : lo;
        hi = n == 0 || r > hi ? r : hi;
        n++;
    }
    if (n)
        fprintf(f, "- %s: %.2f (geometric mean over %d workload%s; %.2f to %.2f).\n", what, exp(logsum / n), n,
                n == 1 ? "" : "s", lo, hi);
    return n;
}

static void plans_line(FILE *f, const xo__bench *b)
{
    int bad = 0;
    for (int i = 0; i < b->nworkloads; i++)
        bad += b->workloads[i].plan_check == XO_BENCH_PLAN_MISMATCH || b->workloads[i].plan_check == XO_BENCH_PLAN_ERROR;
    if (ratio_line(f, b, "Plans over eager ops (plan/eager)", offsetof(xo__bench_workload, plan_over_eager)) || bad)
        fprintf(f, "- Plan checks: %s.\n", bad ? "SOME FAILED (see Plans below)" : "every plan matched its eager program");
}

static void sweep_line(FILE *f, const xo__bench *b)
{
    const xo__bench_regret *all = &b->regret[XO_BENCH_NOPS][XO_BENCH_NSTATES];
    if (!all->n)
        return;
    const xo__bench_point *p = &b->points[all->worst_point];
    fprintf(f, "- Sweep: auto's time over the best forced device's is %.2f (geometric mean over %d points); the "
               "worst point is %s %s (%s) at %.2f.\n",
            all->geomean, all->n, xo__bench_op_names[p->op], p->shape, xo__bench_state_names[all->worst_state],
            all->worst);
    int au = xo__bench_auto(b);
    for (int c = 1; c < au; c++) {
        int crosses = 0, known = 0;
        for (int op = 0; op < XO_BENCH_NOPS; op++) {
            const xo__bench_crossover *x = &b->cross[op][c][XO_BENCH_HOST];
            known += x->known;
            crosses += x->known && !x->never;
        }
        if (known)
            fprintf(f, "- %s beats the CPU at large sizes for %d of %d op classes with data from the host (see "
                       "Crossover points).\n",
                    b->cfg[c].spec, crosses, known);
    }
}

void xo__bench_write_findings(FILE *f, const xo__bench *b)
{
    fputs("## Findings\n\n", f);
    if (xo__bench_auto(b) <= 1) /* the CPU, then auto */
        fputs("- Only the CPU is present: auto placement has nothing to choose.\n", f);
    sweep_line(f, b);
    if (b->nworkloads) {
        workloads_line(f, b);
        ratio_line(f, b, "Auto over the same programs in plain CBLAS (auto/CBLAS)",
                   offsetof(xo__bench_workload, auto_over_cblas));
        plans_line(f, b);
        ratio_line(f, b, "Plans over the same programs as tuned C, CBLAS built -O3 -march=native -ffast-math "
                         "(plan/tuned C)",
                   offsetof(xo__bench_workload, plan_over_tuned));
    }
    const xo__bench_eval1 *ev = &b->eval1;
    if (ev->batches && ev->median_ns[XO_EVAL1_PLAN] > 0 && ev->median_ns[XO_EVAL1_LOOP] > 0) {
        char plan[32], loop[32], tuned[32];
        fprintf(f, "- Batch-1 3-100-3 evaluation: a plan takes %s ns, %.1fx the %s ns of one hand-written C loop",
                xo__bench_format_num(ev->median_ns[XO_EVAL1_PLAN], plan, sizeof plan),
                ev->median_ns[XO_EVAL1_PLAN] / ev->median_ns[XO_EVAL1_LOOP],
                xo__bench_format_num(ev->median_ns[XO_EVAL1_LOOP], loop, sizeof loop));
        if (ev->median_ns[XO_EVAL1_TUNED] > 0)
            fprintf(f, " and %.1fx the %s ns of tuned C", ev->median_ns[XO_EVAL1_PLAN] / ev->median_ns[XO_EVAL1_TUNED],
                    xo__bench_format_num(ev->median_ns[XO_EVAL1_TUNED], tuned, sizeof tuned));
        fputs(".\n", f);
    }
    fputc('\n', f);
}
