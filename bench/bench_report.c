/* xo bench, part 3: analysis (crossovers, regret) and the text outputs:
 * results.csv, summary.json, report.md. */
#include "bench.h"
#include "cpu_coretype.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- analysis ----------------------------------------------------------------------- */

static void crossover_of(xo__bench *b, xo__bench_op op, int c, int state, xo__bench_crossover *out)
{
    memset(out, 0, sizeof *out);
    int any = 0;
    double from = 0;
    int broken = 0;
    /* points of one op are planned in increasing size: walk down from the largest */
    for (int i = b->npoints - 1; i >= 0; i--) {
        const xo__bench_point *p = &b->points[i];
        if (p->op != op || p->skinny) continue;
        const xo__bench_result *dev = xo__bench_at(b, i, c, state);
        const xo__bench_result *cpu = xo__bench_at(b, i, 0, state);
        if (dev->status == XO_BENCH_OK) any = 1;
        if (broken) continue;
        if (dev->status == XO_BENCH_OK && cpu->status == XO_BENCH_OK && dev->median_us < cpu->median_us)
            from = p->size;
        else
            broken = 1;
    }
    out->known = any;
    out->never = from == 0;
    out->size = from;
}

static void regret_add(xo__bench_regret *g, double r, int point, int state)
{
    if (g->n == 0 || r > g->worst) {
        g->worst = r;
        g->worst_point = point;
        g->worst_state = state;
    }
    g->geomean += log(r); /* sum of logs until finished */
    g->n++;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, c = *(const double *)y;
    return (a > c) - (a < c);
}

/* Regret of auto `ra` against the best forced device `rb`, paired by round: the median
 * over the rounds both sampled of time(auto) / time(best) within the round. They ran close
 * together in each round, so a change of machine state (load from outside) hits both
 * sides of a ratio, where it would shift one whole-run median and not the other. The
 * ratio of whole-run medians where no round pairs up. */
static double paired_regret(const xo__bench_result *ra, const xo__bench_result *rb)
{
    double q[XO_BENCH_MAX_ROUNDS];
    int n = 0;
    if (ra->nrounds == rb->nrounds)
        for (int r = 0; r < ra->nrounds; r++)
            if (ra->round_us[r] > 0 && rb->round_us[r] > 0) q[n++] = ra->round_us[r] / rb->round_us[r];
    if (n == 0) return ra->median_us / rb->median_us;
    qsort(q, (size_t)n, sizeof q[0], cmp_double);
    return n % 2 ? q[n / 2] : sqrt(q[n / 2 - 1] * q[n / 2]);
}

void xo__bench_analyse(xo__bench *b)
{
    for (int op = 0; op < XO_BENCH_NOPS; op++)
        for (int c = 0; c < b->nconfigs; c++)
            for (int st = 0; st < XO_BENCH_NSTATES; st++) {
                if (c == 0 || b->cfg[c].device < 0)
                    memset(&b->cross[op][c][st], 0, sizeof b->cross[op][c][st]);
                else
                    crossover_of(b, (xo__bench_op)op, c, st, &b->cross[op][c][st]);
            }

    memset(b->regret, 0, sizeof b->regret);
    int au = xo__bench_auto(b);
    for (int i = 0; i < b->npoints; i++) {
        int op = b->points[i].op;
        for (int st = 0; st < XO_BENCH_NSTATES; st++) {
            const xo__bench_result *ra = xo__bench_at(b, i, au, st);
            const xo__bench_result *rb = NULL; /* the best forced device: lowest median */
            for (int c = 0; c < au; c++) {
                const xo__bench_result *r = xo__bench_at(b, i, c, st);
                if (r->status == XO_BENCH_OK && r->median_us > 0 && (!rb || r->median_us < rb->median_us)) rb = r;
            }
            if (ra->status != XO_BENCH_OK || !rb || ra->median_us <= 0) continue;
            double reg = paired_regret(ra, rb);
            regret_add(&b->regret[op][st], reg, i, st);
            regret_add(&b->regret[op][XO_BENCH_NSTATES], reg, i, st);
            regret_add(&b->regret[XO_BENCH_NOPS][st], reg, i, st);
            regret_add(&b->regret[XO_BENCH_NOPS][XO_BENCH_NSTATES], reg, i, st);
        }
    }
    for (int op = 0; op <= XO_BENCH_NOPS; op++)
        for (int st = 0; st <= XO_BENCH_NSTATES; st++) {
            xo__bench_regret *g = &b->regret[op][st];
            g->geomean = g->n ? exp(g->geomean / g->n) : 0.0;
        }
}

void xo__bench_format_size(double size, char *out, size_t cap)
{
    unsigned long long v = (unsigned long long)size;
    if ((double)v != size)
        snprintf(out, cap, "%.1f", size);
    else if (v >= (1ull << 20) && v % (1ull << 20) == 0)
        snprintf(out, cap, "%lluM", v >> 20);
    else if (v >= (1ull << 14) && v % (1ull << 10) == 0)
        snprintf(out, cap, "%lluK", v >> 10);
    else
        snprintf(out, cap, "%llu", v);
}

static const char *status_name(int status)
{
    return status == XO_BENCH_OK ? "ok" : status == XO_BENCH_UNSUPPORTED ? "unsupported" : "error";
}

static void placed_spec(const xo__bench *b, int placed, char *out, size_t cap)
{
    if (placed < 0)
        snprintf(out, cap, "%s", "");
    else
        xo__tool_device_spec(b->ctx, placed, out, cap);
}

static int close_file(FILE *f, const char *path)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "xo: bench: cannot write '%s'\n", path);
        return XO_TOOL_FAIL;
    }
    return XO_TOOL_OK;
}

static FILE *open_out(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) fprintf(stderr, "xo: bench: cannot create '%s'\n", path);
    return f;
}

/* ---- results.csv ---------------------------------------------------------------------- */

int xo__bench_write_csv(xo__bench *b, const char *path)
{
    FILE *f = open_out(path);
    if (!f) return XO_TOOL_FAIL;
    fprintf(f, "device,op,shape,state,median_us,spread,size,p10_us,p90_us,reps,placed,status\n");
    for (int i = 0; i < b->npoints; i++) {
        const xo__bench_point *p = &b->points[i];
        for (int c = 0; c < b->nconfigs; c++)
            for (int st = 0; st < XO_BENCH_NSTATES; st++) {
                const xo__bench_result *r = xo__bench_at(b, i, c, st);
                char placed[64];
                placed_spec(b, r->placed, placed, sizeof placed);
                if (r->status == XO_BENCH_OK)
                    fprintf(f, "%s,%s,%s,%s,%.3f,%.4f,%.6g,%.3f,%.3f,%d,%s,ok\n", b->cfg[c].spec,
                            xo__bench_op_names[p->op], p->shape, xo__bench_state_names[st], r->median_us, r->spread,
                            p->size, r->p10_us, r->p90_us, r->reps, placed);
                else
                    fprintf(f, "%s,%s,%s,%s,,,%.6g,,,0,%s,%s\n", b->cfg[c].spec, xo__bench_op_names[p->op], p->shape,
                            xo__bench_state_names[st], p->size, placed, status_name(r->status));
            }
    }
    return close_file(f, path);
}

/* ---- summary.json ------------------------------------------------------------------------ */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fputs("null", f);
}

static void json_regret(FILE *f, const xo__bench *b, const xo__bench_regret *g)
{
    if (!g->n) {
        fputs("null", f);
        return;
    }
    const xo__bench_point *p = &b->points[g->worst_point];
    fprintf(f, "{\"points\": %d, \"geomean\": ", g->n);
    json_num(f, g->geomean);
    fputs(", \"worst\": ", f);
    json_num(f, g->worst);
    fprintf(f, ", \"worst_at\": {\"op\": \"%s\", \"shape\": \"%s\", \"state\": \"%s\"}}", xo__bench_op_names[p->op],
            p->shape, xo__bench_state_names[g->worst_state]);
}

static void json_regret_set(FILE *f, const xo__bench *b, const xo__bench_regret g[XO_BENCH_NSTATES + 1])
{
    fputs("{\"resident\": ", f);
    json_regret(f, b, &g[XO_BENCH_RESIDENT]);
    fputs(", \"host\": ", f);
    json_regret(f, b, &g[XO_BENCH_HOST]);
    fputs(", \"both\": ", f);
    json_regret(f, b, &g[XO_BENCH_NSTATES]);
    fputs("}", f);
}

/* auto's rate over the best forced device's rate, paired by round (bench_workloads.c);
 * 0 when unknown */
static double workload_ratio(const xo__bench *b, const xo__bench_workload *w, int *best_cfg)
{
    (void)b;
    *best_cfg = w->best;
    return w->best >= 0 ? w->auto_over_best : 0.0;
}

/* "cpu 97%, opencl:0 3%": where auto placement ran a workload's ops */
static void auto_share(const xo__bench *b, const xo__bench_workload *w, char *out, size_t cap)
{
    uint64_t total = 0;
    size_t len = 0;
    out[0] = '\0';
    for (int c = 0; c < xo__bench_auto(b); c++) total += w->auto_ops[b->cfg[c].device];
    if (!total) {
        snprintf(out, cap, "-");
        return;
    }
    for (int c = 0; c < xo__bench_auto(b) && len < cap; c++) {
        uint64_t n = w->auto_ops[b->cfg[c].device];
        if (!n) continue;
        int k = snprintf(out + len, cap - len, "%s%s %.0f%%", len ? ", " : "", b->cfg[c].spec,
                         100.0 * (double)n / (double)total);
        if (k < 0) break;
        len += (size_t)k;
    }
}

static const char *plan_check_name(int c)
{
    return c == XO_BENCH_PLAN_OK ? "ok" : c == XO_BENCH_PLAN_MISMATCH ? "mismatch" : c == XO_BENCH_PLAN_ERROR ? "error" : "none";
}

static void json_rate(FILE *f, double v)
{
    if (v > 0)
        json_num(f, v);
    else
        fputs("null", f);
}

static void json_eval1(FILE *f, const xo__bench_eval1 *e)
{
    if (!e->batches) {
        fputs("null", f);
        return;
    }
    fprintf(f, "{\"unit\": \"ns per evaluation\", \"result\": \"%s\", \"batches\": %d, \"evals_per_batch\": %d",
            e->status == XO_BENCH_OK ? "ok" : "error", e->batches, e->evals_per_batch);
    const char *keys[3] = {"median_ns", "best_ns", "max_rel_error"};
    for (int t = 0; t < 3; t++) {
        fprintf(f, ", \"%s\": {", keys[t]);
        for (int k = 0; k < XO_EVAL1_N; k++) {
            fprintf(f, "%s\"%s\": ", k ? ", " : "", xo__bench_eval1_names[k]);
            if (t == 2)
                json_num(f, e->max_rel[k]);
            else
                json_rate(f, t == 0 ? e->median_ns[k] : e->best_ns[k]);
        }
        fputs("}", f);
    }
    fputs(", \"plan_summary\": ", f);
    json_str(f, e->plan_summary);
    fputs("}", f);
}

int xo__bench_write_json(xo__bench *b, const char *path)
{
    FILE *f = open_out(path);
    if (!f) return XO_TOOL_FAIL;
    fprintf(f, "{\n  \"tool\": \"xo bench\",\n  \"version\": \"%s\",\n  \"date\": \"%s\",\n  \"mode\": \"%s\",\n",
            XO_VERSION_STRING, b->date, b->quick ? "quick" : "full");
    fprintf(f, "  \"elapsed_s\": %.1f,\n  \"devices\": [", (xo__tool_now_us() - b->started_us) * 1e-6);
    for (int c = 0; c < b->nconfigs; c++) {
        const xo__bench_config *cf = &b->cfg[c];
        if (cf->device < 0) continue;
        const xo_device_info *in = &cf->info;
        const xo__profile *pr = xo__device_profile(b->ctx, cf->device);
        fprintf(f, "%s\n    {\"index\": %d, \"spec\": ", c ? "," : "", cf->device);
        json_str(f, cf->spec);
        fputs(", \"name\": ", f), json_str(f, in->name);
        fputs(", \"vendor\": ", f), json_str(f, in->vendor);
        fputs(", \"driver\": ", f), json_str(f, in->driver);
        fputs(", \"plugin\": ", f), json_str(f, in->plugin);
        fprintf(f, ", \"kind\": \"%s\", \"host_unified\": %d, \"fp64\": %d,\n     ", xo__tool_kind_name(in->kind),
                in->host_unified, in->fp64);
        const struct { const char *k; double v; } figs[] = {
            {"launch_us", in->launch_us}, {"transfer_latency_us", in->transfer_latency_us},
            {"h2d_gbps", in->h2d_gbps}, {"d2h_gbps", in->d2h_gbps}, {"mem_gbps", in->mem_gbps},
            {"peak_gflops", in->peak_gflops},
        };
        for (size_t k = 0; k < sizeof figs / sizeof figs[0]; k++) {
            fprintf(f, "%s\"%s\": ", k ? ", " : "", figs[k].k);
            json_num(f, figs[k].v);
        }
        if (pr) {
            fprintf(f, ",\n     \"profile\": {\"gemm_curve_n\": [");
            for (int i = 0; i < XO_CURVE_POINTS; i++) fprintf(f, "%s%d", i ? ", " : "", XO_CURVE_MIN_N << i);
            for (int dt = 0; dt < 2; dt++) {
                fprintf(f, "], \"gemm_gflops_%s\": [", dt ? "f64" : "f32");
                for (int i = 0; i < XO_CURVE_POINTS; i++) {
                    if (i) fputs(", ", f);
                    json_num(f, pr->gemm_gflops[dt][i]);
                }
            }
            fputs("], \"stream_gbps\": [", f);
            json_num(f, pr->stream_gbps[0]);
            fputs(", ", f);
            json_num(f, pr->stream_gbps[1]);
            fputs("]}", f);
        }
        fputs("}", f);
    }
    fputs("\n  ],\n  \"configs\": [", f);
    for (int c = 0; c < b->nconfigs; c++) fprintf(f, "%s\"%s\"", c ? ", " : "", b->cfg[c].spec);
    fputs("],\n  \"crossovers\": [", f);
    int first = 1;
    for (int op = 0; op < XO_BENCH_NOPS; op++)
        for (int c = 1; c < xo__bench_auto(b); c++)
            for (int st = 0; st < XO_BENCH_NSTATES; st++) {
                const xo__bench_crossover *x = &b->cross[op][c][st];
                fprintf(f, "%s\n    {\"op\": \"%s\", \"device\": \"%s\", \"state\": \"%s\", \"size\": ", first ? "" : ",",
                        xo__bench_op_names[op], b->cfg[c].spec, xo__bench_state_names[st]);
                first = 0;
                if (!x->known)
                    fputs("null, \"result\": \"n/a\"}", f);
                else if (x->never)
                    fputs("null, \"result\": \"never\"}", f);
                else
                    fprintf(f, "%.6g, \"result\": \"from %.6g\"}", x->size, x->size);
            }
    fputs("\n  ],\n  \"regret\": {\n    \"overall\": ", f);
    json_regret_set(f, b, b->regret[XO_BENCH_NOPS]);
    fputs(",\n    \"per_op\": {", f);
    for (int op = 0; op < XO_BENCH_NOPS; op++) {
        fprintf(f, "%s\n      \"%s\": ", op ? "," : "", xo__bench_op_names[op]);
        json_regret_set(f, b, b->regret[op]);
    }
    fputs("\n    }\n  },\n  \"workloads\": [", f);
    for (int i = 0; i < b->nworkloads; i++) {
        const xo__bench_workload *w = &b->workloads[i];
        int best;
        double ratio = workload_ratio(b, w, &best);
        fprintf(f, "%s\n    {\"name\": \"%s\", \"unit\": \"%s\", \"note\": ", i ? "," : "", w->name, w->unit);
        json_str(f, w->note);
        fputs(", \"rates\": {", f);
        for (int c = 0; c < b->nconfigs; c++) {
            fprintf(f, "%s\"%s\": ", c ? ", " : "", b->cfg[c].spec);
            if (w->rate[c] > 0)
                json_num(f, w->rate[c]);
            else
                fputs("null", f);
        }
        fputs("}, \"auto_ops\": {", f);
        for (int c = 0; c < xo__bench_auto(b); c++)
            fprintf(f, "%s\"%s\": %llu", c ? ", " : "", b->cfg[c].spec,
                    (unsigned long long)w->auto_ops[b->cfg[c].device]);
        fputs("}, \"auto_over_best\": ", f);
        if (ratio > 0)
            json_num(f, ratio);
        else
            fputs("null", f);
        fprintf(f, ", \"best\": %s%s%s", best >= 0 ? "\"" : "", best >= 0 ? b->cfg[best].spec : "null",
                best >= 0 ? "\"" : "");
        fputs(", \"cblas\": ", f);
        if (w->cblas_rate > 0)
            json_num(f, w->cblas_rate);
        else
            fputs("null", f);
        fputs(", \"auto_over_cblas\": ", f);
        if (w->auto_over_cblas > 0)
            json_num(f, w->auto_over_cblas);
        else
            fputs("null", f);
        fputs(", \"plan\": ", f), json_rate(f, w->plan_rate);
        fputs(", \"plan_over_eager\": ", f), json_rate(f, w->plan_over_eager);
        fputs(", \"plan_over_cblas\": ", f), json_rate(f, w->plan_over_cblas);
        fputs(", \"tuned\": ", f), json_rate(f, w->tuned_rate);
        fputs(", \"plan_over_tuned\": ", f), json_rate(f, w->plan_over_tuned);
        fprintf(f, ", \"plan_check\": {\"result\": \"%s\", \"iterations\": %d, \"max_rel_diff\": ",
                plan_check_name(w->plan_check), w->plan_check_steps);
        if (w->plan_check_steps)
            json_num(f, w->plan_check_rel);
        else
            fputs("null", f);
        fputs("}, \"plan_summary\": ", f);
        json_str(f, w->plan_summary);
        fputs("}", f);
    }
    fputs("\n  ],\n  \"eval_3_100_3\": ", f);
    json_eval1(f, &b->eval1);
    fputs("\n}\n", f);
    return close_file(f, path);
}

/* ---- workloads.csv ----------------------------------------------------------------------- */

int xo__bench_write_workloads_csv(xo__bench *b, const char *path)
{
    FILE *f = open_out(path);
    if (!f) return XO_TOOL_FAIL;
    fputs("workload,unit", f);
    for (int c = 0; c < b->nconfigs; c++) fprintf(f, ",%s", b->cfg[c].spec);
    fputs(",auto_over_best,cblas,auto_over_cblas,plan,plan_over_eager,plan_over_cblas,tuned,plan_over_tuned,plan_check,"
          "plan_check_max_rel\n",
          f);
    for (int i = 0; i < b->nworkloads; i++) {
        const xo__bench_workload *w = &b->workloads[i];
        fprintf(f, "%s,%s", w->name, w->unit);
        const double v[] = {w->auto_over_best, w->cblas_rate,      w->auto_over_cblas, w->plan_rate,
                            w->plan_over_eager, w->plan_over_cblas, w->tuned_rate,      w->plan_over_tuned};
        for (int c = 0; c < b->nconfigs; c++) w->rate[c] > 0 ? fprintf(f, ",%.6g", w->rate[c]) : fputs(",", f);
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) v[k] > 0 ? fprintf(f, ",%.6g", v[k]) : fputs(",", f);
        fprintf(f, ",%s,", plan_check_name(w->plan_check));
        if (w->plan_check != XO_BENCH_PLAN_NONE && w->plan_check_steps) fprintf(f, "%.3g", w->plan_check_rel);
        fputc('\n', f);
    }
    const xo__bench_eval1 *e = &b->eval1;
    if (e->batches) { /* the batch-1 evaluation as one row: ns per evaluation (lower is better) */
        fputs("eval-3-100-3-b1,ns", f);
        for (int c = 0; c < b->nconfigs; c++) fputs(",", f);
        double eager = e->median_ns[XO_EVAL1_EAGER], plan = e->median_ns[XO_EVAL1_PLAN], cb = e->median_ns[XO_EVAL1_CBLAS];
        fputs(",", f);
        cb > 0 ? fprintf(f, ",%.6g", cb) : fputs(",", f);
        fputs(",", f);
        plan > 0 ? fprintf(f, ",%.6g", plan) : fputs(",", f);
        plan > 0 && eager > 0 ? fprintf(f, ",%.6g", eager / plan) : fputs(",", f);
        plan > 0 && cb > 0 ? fprintf(f, ",%.6g", cb / plan) : fputs(",", f);
        const double tuned = e->median_ns[XO_EVAL1_TUNED];
        tuned > 0 ? fprintf(f, ",%.6g", tuned) : fputs(",", f);
        plan > 0 && tuned > 0 ? fprintf(f, ",%.6g", tuned / plan) : fputs(",", f);
        fprintf(f, ",%s,%.3g\n", e->max_rel[XO_EVAL1_PLAN] <= 1e-4 ? "ok" : "mismatch", e->max_rel[XO_EVAL1_PLAN]);
    }
    return close_file(f, path);
}

/* ---- report.md --------------------------------------------------------------------------- */

/* An error magnitude: "0" when exact, else "2.9e-07" (the one place with an exponent:
 * errors span many orders below 1). */
static const char *error_text(double v, char *out, size_t cap)
{
    snprintf(out, cap, v == 0 ? "0" : "%.1e", v);
    return out;
}

static void md_time(FILE *f, const xo__bench_result *r)
{
    char t[32];
    if (r->status == XO_BENCH_OK)
        fprintf(f, " %s |", xo__bench_format_num(r->median_us, t, sizeof t));
    else
        fprintf(f, " %s |", r->status == XO_BENCH_UNSUPPORTED ? "n/a" : "error");
}

static void md_crossover(FILE *f, const xo__bench_crossover *x)
{
    char s[32];
    if (!x->known)
        fputs(" n/a |", f);
    else if (x->never)
        fputs(" never |", f);
    else
        xo__bench_format_size(x->size, s, sizeof s), fprintf(f, " %s |", s);
}

static void md_regret_row(FILE *f, const xo__bench *b, const char *label, const xo__bench_regret g[3])
{
    fprintf(f, "| %s |", label);
    for (int st = 0; st <= XO_BENCH_NSTATES; st++)
        if (g[st].n)
            fprintf(f, " %.3f |", g[st].geomean);
        else
            fputs(" - |", f);
    const xo__bench_regret *all = &g[XO_BENCH_NSTATES];
    if (all->n) {
        const xo__bench_point *p = &b->points[all->worst_point];
        fprintf(f, " %.3f | %s %s %s | %d |\n", all->worst, xo__bench_op_names[p->op], p->shape,
                xo__bench_state_names[all->worst_state], all->n);
    } else {
        fputs(" - | - | 0 |\n", f);
    }
}

int xo__bench_write_markdown(xo__bench *b, const char *path)
{
    FILE *f = open_out(path);
    if (!f) return XO_TOOL_FAIL;
    int au = xo__bench_auto(b);
    fprintf(f, "# crossover benchmark (%s run, %s)\n\n", b->quick ? "quick" : "full", b->date);
    fprintf(f, "crossover %s, `xo bench%s`, %.0f s. Times are medians in microseconds; `resident`: operands "
               "already on the device, `host`: inputs written from host memory and the output read back on every "
               "call. Files: results.csv (every measurement), summary.json, plot_*.svg.\n\n",
            XO_VERSION_STRING, b->quick ? " --quick" : "", (xo__tool_now_us() - b->started_us) * 1e-6);
    xo__bench_write_findings(f, b);

    fputs("## Devices\n\n| # | spec | name | vendor | kind | launch us | transfer us | h2d GB/s | d2h GB/s | mem GB/s "
          "| sgemm GFLOP/s | fp64 |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n", f);
    for (int c = 0; c < au; c++) {
        const xo_device_info *in = &b->cfg[c].info;
        char h2d[64], d2h[64];
        fprintf(f, "| %d | %s | %s | %s | %s | %.1f | %.1f | %s | %s | %.2f | %.1f | %s |\n", b->cfg[c].device,
                b->cfg[c].spec, in->name, in->vendor, xo__tool_kind_name(in->kind), in->launch_us,
                in->transfer_latency_us, xo__tool_bandwidth_text(in, b->cfg[c].device, in->h2d_gbps, 0, h2d, sizeof h2d),
                xo__tool_bandwidth_text(in, b->cfg[c].device, in->d2h_gbps, 0, d2h, sizeof d2h), in->mem_gbps,
                in->peak_gflops,
                in->fp64 ? "yes" : "no");
    }
    char advice[512];
    if (xo__openblas_core_advice(advice, sizeof advice))
        fprintf(f, "\n**The CPU's BLAS**: %s.\n", advice);

    fputs("\n## Crossover points\n\nThe smallest size from which the device beats the CPU at every larger measured "
          "size (gemm: n of an n x n x n product; others: elements), or `never`.\n\n",
          f);
    if (au <= 1) {
        fputs("Only the CPU is present: nothing to cross over to.\n", f);
    } else {
        fputs("| op |", f);
        for (int c = 1; c < au; c++) fprintf(f, " %s resident | %s host |", b->cfg[c].spec, b->cfg[c].spec);
        fputs("\n|---|", f);
        for (int c = 1; c < au; c++) fputs("---|---|", f);
        fputc('\n', f);
        for (int op = 0; op < XO_BENCH_NOPS; op++) {
            fprintf(f, "| %s |", xo__bench_op_names[op]);
            for (int c = 1; c < au; c++)
                for (int st = 0; st < XO_BENCH_NSTATES; st++) md_crossover(f, &b->cross[op][c][st]);
            fputc('\n', f);
        }
    }

    fputs("\n## Regret of auto placement\n\ntime(auto) / time(best forced device) per point (the median over the "
          "sweep's rounds of the ratio within a round); 1.0 is perfect, below 1 is noise in auto's favour.\n\n"
          "| op | geomean resident | geomean host | geomean both | worst | worst at | points |\n"
          "|---|---|---|---|---|---|---|\n",
          f);
    for (int op = 0; op < XO_BENCH_NOPS; op++) md_regret_row(f, b, xo__bench_op_names[op], b->regret[op]);
    md_regret_row(f, b, "**all**", b->regret[XO_BENCH_NOPS]);

    fputs("\n## Workloads\n\nRates (higher is better) per forced device and under auto placement, each the median "
          "over short rounds in which the placements take turns; ratio = auto / best forced device (the median over "
          "the rounds of the ratio within a round, with the quartiles of those ratios in brackets: how far the rounds spread; `†`: the rate columns' own medians, taken over rounds of different speed, give a ratio outside that spread, so read the row by its ratio); auto/CBLAS = auto over the same program written with plain CBLAS, "
          "timed in the same rounds; plan = one iteration captured once as a plan (under auto) and replayed, timed in "
          "the same rounds, plan/eager = plan over auto (eager ops), plan/CBLAS = plan over plain CBLAS, tuned C = the "
          "CBLAS program built -O3 -march=native -ffast-math, plan/tuned C = plan over it (each the "
          "median over the rounds of the ratio within a round). A plan is timed only after its results matched the "
          "eager program's (`MISMATCH` otherwise).\n\n| workload | unit |",
          f);
    for (int c = 0; c < b->nconfigs; c++) fprintf(f, " %s |", b->cfg[c].spec);
    fputs(" ratio | CBLAS | auto/CBLAS | plan | plan/eager | plan/CBLAS | tuned C | plan/tuned C | auto ran ops on | "
          "what |\n|---|---|",
          f);
    for (int c = 0; c < b->nconfigs; c++) fputs("---|", f);
    fputs("---|---|---|---|---|---|---|---|---|---|\n", f);
    for (int i = 0; i < b->nworkloads; i++) {
        const xo__bench_workload *w = &b->workloads[i];
        int best;
        double ratio = workload_ratio(b, w, &best);
        fprintf(f, "| %s | %s |", w->name, w->unit);
        char num[32];
        for (int c = 0; c < b->nconfigs; c++)
            if (w->rate[c] > 0)
                fprintf(f, " %s |", xo__bench_format_num(w->rate[c], num, sizeof num));
            else
                fputs(" failed |", f);
        char share[160];
        auto_share(b, w, share, sizeof share);
        if (ratio > 0)
            fprintf(f, " %.2f [%.2f, %.2f]%s |", ratio, w->auto_over_best_q1, w->auto_over_best_q3,
                    xo__bench_row_disagrees(b, w) ? " †" : "");
        else
            fputs(" - |", f);
        if (w->cblas_rate > 0)
            fprintf(f, " %s | %.2f |", xo__bench_format_num(w->cblas_rate, num, sizeof num), w->auto_over_cblas);
        else
            fputs(" - | - |", f);
        if (w->plan_check == XO_BENCH_PLAN_MISMATCH)
            fputs(" MISMATCH | - | - |", f);
        else if (w->plan_check == XO_BENCH_PLAN_ERROR)
            fputs(" failed | - | - |", f);
        else if (w->plan_rate > 0) {
            fprintf(f, " %s | %.2f |", xo__bench_format_num(w->plan_rate, num, sizeof num), w->plan_over_eager);
            w->plan_over_cblas > 0 ? fprintf(f, " %.2f |", w->plan_over_cblas) : fputs(" - |", f);
        } else
            fputs(" - | - | - |", f);
        w->tuned_rate > 0 ? fprintf(f, " %s |", xo__bench_format_num(w->tuned_rate, num, sizeof num)) : fputs(" - |", f);
        w->plan_over_tuned > 0 ? fprintf(f, " %.2f |", w->plan_over_tuned) : fputs(" - |", f);
        fprintf(f, " %s | %s |\n", share, w->note);
    }
    int any_plan = 0;
    for (int i = 0; i < b->nworkloads; i++) any_plan |= b->workloads[i].plan_check != XO_BENCH_PLAN_NONE;
    if (any_plan) {
        fputs("\nPlans: the check (after each of the first iterations, the loss of the plan against the eager "
              "program's, both from the same start; tolerance 1e-4 relative) and `xo_plan_describe`'s summary.\n\n",
              f);
        for (int i = 0; i < b->nworkloads; i++) {
            const xo__bench_workload *w = &b->workloads[i];
            if (w->plan_check == XO_BENCH_PLAN_NONE) continue;
            char num[32];
            fprintf(f, "- %s: check %s", w->name, plan_check_name(w->plan_check));
            if (w->plan_check_steps)
                fprintf(f, " (%d iterations, largest relative difference %s)", w->plan_check_steps,
                        error_text(w->plan_check_rel, num, sizeof num));
            fprintf(f, "%s%s%s\n", w->plan_summary[0] ? "; `" : "", w->plan_summary, w->plan_summary[0] ? "`" : "");
        }
    }
    const xo__bench_eval1 *ev = &b->eval1;
    if (ev->batches) {
        fprintf(f, "\n## Batch-1 3-100-3 evaluation\n\ny = W2 tanh(W1 x + b1) + b2 with x of 3, hidden 100, batch 1, x "
                   "in from host memory and y out to it (an ODE solver's right-hand side). Nanoseconds per evaluation, "
                   "the median (and fastest) of %d batches of %d evaluations, the ways taking turns: `eager` "
                   "crossover ops under auto (write x, sgemm, bias, tanh, sgemm, bias, read y), `plan` the same calls "
                   "captured once and replayed, `CBLAS` two cblas_sgemv and C loops, `tuned C` that function built "
                   "-O3 -march=native -ffast-math, `loop` one C function written to vectorise (the floor).\n\n| way | ns (median) | ns (fastest) | / loop | largest error |\n"
                   "|---|---|---|---|---|\n",
                ev->batches, ev->evals_per_batch);
        const double loop = ev->median_ns[XO_EVAL1_LOOP];
        for (int k = 0; k < XO_EVAL1_N; k++) {
            fprintf(f, "| %s |", xo__bench_eval1_names[k]);
            if (ev->median_ns[k] > 0) {
                fprintf(f, " %.1f | %.1f |", ev->median_ns[k], ev->best_ns[k]);
                loop > 0 ? fprintf(f, " %.2f |", ev->median_ns[k] / loop) : fputs(" - |", f);
            } else {
                fputs(k == XO_EVAL1_TUNED && ev->max_rel[k] != ev->max_rel[k] ? " not built | - | - |"
                                                                               : " failed | - | - |",
                      f);
            }
            char err[32];
            fprintf(f, " %s |\n", error_text(ev->max_rel[k], err, sizeof err));
        }
        if (ev->median_ns[XO_EVAL1_PLAN] > 0 && ev->median_ns[XO_EVAL1_EAGER] > 0)
            fprintf(f, "\nplan/eager %.2f (eager time over plan time); `%s`\n",
                    ev->median_ns[XO_EVAL1_EAGER] / ev->median_ns[XO_EVAL1_PLAN], ev->plan_summary);
    }

    fputs("\n## Timings per op\n\nMedian microseconds; `auto` also shows where auto placement ran the op.\n", f);
    for (int op = 0; op < XO_BENCH_NOPS; op++) {
        fprintf(f, "\n### %s\n\n![%s](plot_%s.svg)\n\n| shape |", xo__bench_op_names[op], xo__bench_op_names[op],
                xo__bench_op_names[op]);
        for (int c = 0; c < b->nconfigs; c++) fprintf(f, " %s res | %s host |", b->cfg[c].spec, b->cfg[c].spec);
        fputs(" auto ran on |\n|---|", f);
        for (int c = 0; c < b->nconfigs; c++) fputs("---|---|", f);
        fputs("---|\n", f);
        for (int i = 0; i < b->npoints; i++) {
            const xo__bench_point *p = &b->points[i];
            if ((int)p->op != op) continue;
            fprintf(f, "| %s |", p->shape);
            for (int c = 0; c < b->nconfigs; c++)
                for (int st = 0; st < XO_BENCH_NSTATES; st++) md_time(f, xo__bench_at(b, i, c, st));
            char r[64], h[64];
            placed_spec(b, xo__bench_at(b, i, au, XO_BENCH_RESIDENT)->placed, r, sizeof r);
            placed_spec(b, xo__bench_at(b, i, au, XO_BENCH_HOST)->placed, h, sizeof h);
            fprintf(f, " %s / %s |\n", r[0] ? r : "-", h[0] ? h : "-");
        }
    }
    fputs("\n![regret per op](plot_regret.svg)\n", f);
    return close_file(f, path);
}
