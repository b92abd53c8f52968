/* xo bench, part 4: plots as plain SVG text.
 *   plot_<op>.svg   time vs size per device and auto, log-log, resident and host panels,
 *                   each device's crossover marked with a dashed line;
 *   plot_regret.svg geometric-mean regret per op (bars) with the worst point (tick). */
#include "bench.h"

#include <math.h>
#include <string.h>

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                      "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
#define AUTO_COLOR "#000000"

static const char *color_of(const xo__bench *b, int c)
{
    if (b->cfg[c].device < 0) return AUTO_COLOR;
    return palette[(size_t)c % (sizeof palette / sizeof palette[0])];
}

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

typedef struct axes {
    double x0, y0, w, h;       /* plot area in pixels (y0: top) */
    double lx0, lx1, ly0, ly1; /* log10 ranges */
} axes;

static double ax_x(const axes *a, double v) { return a->x0 + (log10(v) - a->lx0) / (a->lx1 - a->lx0) * a->w; }
static double ax_y(const axes *a, double v) { return a->y0 + a->h - (log10(v) - a->ly0) / (a->ly1 - a->ly0) * a->h; }

static void draw_axes(FILE *f, const axes *a, const char *title, const char *xlabel, const char *ylabel)
{
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n", a->x0,
            a->y0, a->w, a->h);
    for (int e = (int)a->lx0; e <= (int)a->lx1; e++) {
        double x = ax_x(a, pow(10.0, e));
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", x, a->y0, x,
                a->y0 + a->h);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">10<tspan dy=\"-5\" "
                   "font-size=\"8\">%d</tspan></text>\n",
                x, a->y0 + a->h + 16, e);
    }
    for (int e = (int)a->ly0; e <= (int)a->ly1; e++) {
        double y = ax_y(a, pow(10.0, e));
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", a->x0, y,
                a->x0 + a->w, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">10<tspan dy=\"-5\" "
                   "font-size=\"8\">%d</tspan></text>\n",
                a->x0 - 6, y + 4, e);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"14\" text-anchor=\"middle\">", a->x0 + a->w / 2, a->y0 - 10);
    xml_text(f, title);
    fprintf(f, "</text>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">", a->x0 + a->w / 2,
            a->y0 + a->h + 34);
    xml_text(f, xlabel);
    fprintf(f, "</text>\n<text transform=\"translate(%.1f,%.1f) rotate(-90)\" font-size=\"12\" "
               "text-anchor=\"middle\">",
            a->x0 - 40, a->y0 + a->h / 2);
    xml_text(f, ylabel);
    fputs("</text>\n", f);
}

static int close_svg(FILE *f, const char *path)
{
    fputs("</svg>\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "xo: bench: cannot write '%s'\n", path);
        return XO_TOOL_FAIL;
    }
    return XO_TOOL_OK;
}

static FILE *open_svg(const char *path, int w, int h)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "xo: bench: cannot create '%s'\n", path);
        return NULL;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
               "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            w, h, w, h);
    return f;
}

int xo__bench_write_plot(xo__bench *b, xo__bench_op op, const char *path)
{
    /* ranges over both panels, so they compare at a glance */
    double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
    for (int i = 0; i < b->npoints; i++) {
        const xo__bench_point *p = &b->points[i];
        if (p->op != op || p->skinny) continue;
        xmin = fmin(xmin, p->size), xmax = fmax(xmax, p->size);
        for (int c = 0; c < b->nconfigs; c++)
            for (int st = 0; st < XO_BENCH_NSTATES; st++) {
                const xo__bench_result *r = xo__bench_at(b, i, c, st);
                if (r->status == XO_BENCH_OK && r->median_us > 0)
                    ymin = fmin(ymin, r->median_us), ymax = fmax(ymax, r->median_us);
            }
    }
    if (!(xmax > 0)) xmin = 1, xmax = 10;
    if (!(ymax > 0)) ymin = 1, ymax = 10;
    const int W = 1000, legend_rows = (b->nconfigs + 2) / 3, H = 420 + 18 * legend_rows;
    FILE *f = open_svg(path, W, H);
    if (!f) return XO_TOOL_FAIL;
    const char *xlabel = op <= XO_BENCH_DGEMM ? "n (n x n x n product)" : "elements";
    for (int st = 0; st < XO_BENCH_NSTATES; st++) {
        axes a = {.x0 = 70 + st * 480, .y0 = 40, .w = 400, .h = 320};
        a.lx0 = floor(log10(xmin)), a.lx1 = ceil(log10(xmax));
        a.ly0 = floor(log10(ymin)), a.ly1 = ceil(log10(ymax));
        if (a.lx1 <= a.lx0) a.lx1 = a.lx0 + 1;
        if (a.ly1 <= a.ly0) a.ly1 = a.ly0 + 1;
        char title[96];
        snprintf(title, sizeof title, "%s, %s", xo__bench_op_names[op],
                 st == XO_BENCH_RESIDENT ? "operands resident" : "operands from/to host");
        draw_axes(f, &a, title, xlabel, "median time (us)");
        for (int c = 0; c < b->nconfigs; c++) {
            const char *col = color_of(b, c);
            int started = 0;
            for (int i = 0; i < b->npoints; i++) {
                const xo__bench_point *p = &b->points[i];
                const xo__bench_result *r = xo__bench_at(b, i, c, st);
                if (p->op != op || p->skinny || r->status != XO_BENCH_OK || r->median_us <= 0) continue;
                if (!started)
                    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"%s points=\"", col,
                            b->cfg[c].device < 0 ? " stroke-dasharray=\"5,3\"" : "");
                started = 1;
                fprintf(f, "%.1f,%.1f ", ax_x(&a, p->size), ax_y(&a, r->median_us));
            }
            if (started) fputs("\"/>\n", f);
            for (int i = 0; i < b->npoints; i++) {
                const xo__bench_point *p = &b->points[i];
                const xo__bench_result *r = xo__bench_at(b, i, c, st);
                if (p->op != op || p->skinny || r->status != XO_BENCH_OK || r->median_us <= 0) continue;
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"><title>%s %s %s: %.4g us</title>"
                           "</circle>\n",
                        ax_x(&a, p->size), ax_y(&a, r->median_us), col, b->cfg[c].spec, p->shape,
                        xo__bench_state_names[st], r->median_us);
            }
            const xo__bench_crossover *x = &b->cross[op][c][st];
            if (c > 0 && b->cfg[c].device >= 0 && x->known && !x->never) {
                double px = ax_x(&a, x->size);
                fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                           "stroke-dasharray=\"2,3\" stroke-width=\"1.2\"/>\n",
                        px, a.y0, px, a.y0 + a.h, col);
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\">crossover %s</text>\n", px + 3,
                        a.y0 + 12 + 12 * c, col, b->cfg[c].spec);
            }
        }
    }
    /* legend */
    for (int c = 0; c < b->nconfigs; c++) {
        double lx = 70 + (c % 3) * 320, ly = 425 + 18 * (c / 3);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>\n", lx,
                ly, lx + 24, ly, color_of(b, c), b->cfg[c].device < 0 ? " stroke-dasharray=\"5,3\"" : "");
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">", lx + 30, ly + 4);
        xml_text(f, b->cfg[c].spec);
        if (b->cfg[c].device >= 0) {
            fputs(" (", f);
            char name[40];
            snprintf(name, sizeof name, "%.36s", b->cfg[c].info.name);
            xml_text(f, name);
            fputs(")", f);
        }
        fputs("</text>\n", f);
    }
    return close_svg(f, path);
}

int xo__bench_write_regret_plot(xo__bench *b, const char *path)
{
    const int W = 760, H = 420;
    const double x0 = 70, y0 = 40, w = 640, h = 300;
    double ymax = 1.5;
    for (int op = 0; op <= XO_BENCH_NOPS; op++)
        for (int st = 0; st <= XO_BENCH_NSTATES; st++)
            if (b->regret[op][st].n) /* a worst point above 5x is drawn clipped, with its value */
                ymax = fmax(ymax, fmax(b->regret[op][st].geomean, fmin(b->regret[op][st].worst, 5.0)));
    ymax = ceil(ymax * 1.1 * 2.0) / 2.0;
    FILE *f = open_svg(path, W, H);
    if (!f) return XO_TOOL_FAIL;
    fprintf(f, "<text x=\"%.1f\" y=\"24\" font-size=\"14\" text-anchor=\"middle\">regret of auto placement: "
               "time(auto) / time(best forced device)</text>\n",
            x0 + w / 2);
    double step = ymax <= 3 ? 0.5 : ymax <= 10 ? 1 : ceil(ymax / 10);
    for (double v = 0; v <= ymax + 1e-9; v += step) {
        double y = y0 + h - v / ymax * h;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", x0, y, x0 + w, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%.1f</text>\n", x0 - 6, y + 4, v);
    }
    double one = y0 + h - 1.0 / ymax * h;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" stroke-dasharray=\"4,3\"/>\n", x0,
            one, x0 + w, one);
    const int groups = XO_BENCH_NOPS + 1;
    const double gw = w / groups, bw = gw * 0.32;
    const char *state_col[XO_BENCH_NSTATES] = {"#1f77b4", "#ff7f0e"};
    for (int op = 0; op < groups; op++) {
        double gx = x0 + op * gw + gw * 0.15;
        for (int st = 0; st < XO_BENCH_NSTATES; st++) {
            const xo__bench_regret *g = &b->regret[op][st];
            if (!g->n) continue;
            double bx = gx + st * bw, top = y0 + h - g->geomean / ymax * h;
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>geomean %.3f"
                       "</title></rect>\n",
                    bx, top, bw - 2, y0 + h - top, state_col[st], g->geomean);
            double wy = y0 + h - fmin(g->worst, ymax) / ymax * h;
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" stroke-width=\"2\">"
                       "<title>worst %.3f</title></line>\n",
                    bx, wy, bx + bw - 2, wy, g->worst);
            if (g->worst > ymax)
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\">%.1fx</text>\n",
                        bx + bw / 2, wy - 4, g->worst);
        }
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">%s</text>\n", gx + bw,
                y0 + h + 18, op < XO_BENCH_NOPS ? xo__bench_op_names[op] : "all");
    }
    for (int st = 0; st < XO_BENCH_NSTATES; st++) {
        double lx = x0 + st * 200, ly = H - 30;
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\"/>\n", lx, ly - 9,
                state_col[st]);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">geomean, %s</text>\n", lx + 20, ly,
                xo__bench_state_names[st]);
    }
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" stroke-width=\"2\"/>\n"
               "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">worst point</text>\n",
            x0 + 400, (double)H - 34, x0 + 414, (double)H - 34, x0 + 420, (double)H - 30);
    return close_svg(f, path);
}
