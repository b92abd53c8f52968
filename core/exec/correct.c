/* Online correction: for each (device, op kind, dtype, size class) a ring of the last
 * RING ratios measured / predicted compute time. The factor is their median, so one
 * noisy timing cannot steer placement; once the ring has a few samples, a ratio more
 * than OUTLIER x away from the median is dropped. When ratios more than SHIFT x away
 * keep coming (REGIME in a row on the same side), the device really changed (or the
 * model was wrong): the ring restarts from them, so the factor follows within REGIME
 * records instead of waiting for half the ring to turn over.
 *
 * A factor learned on a device that no longer runs the op would never be measured
 * again (one bad timing would misplace the op for good), so a factor decays toward 1
 * (the profile) while it is consulted without new measurements: every DECAY_EVERY
 * look-ups it moves halfway there on a log scale (64 -> 8 -> 2.8 -> ...), and the ring
 * restarts from the decayed value. The op then returns to that device once it looks
 * cheap again, is measured there, and either stays or re-learns the factor: a bounded
 * exploration whose cost is one run per decay step. */
#include "xo_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NCLASS XO_SIZE_CLASSES
#define RING 8
#define MIN_SAMPLES 2      /* the factor stays 1 until then */
#define OUTLIER_AFTER 4    /* outlier rejection starts with this many samples */
#define OUTLIER 8.0        /* ratio beyond median * / OUTLIER is an outlier */
#define SHIFT 2.0          /* ratio beyond median * / SHIFT hints at a changed device */
#define REGIME 3           /* consecutive same-side shifts that restart the ring */
#define FACTOR_MIN (1.0 / 64.0)
#define FACTOR_MAX 64.0
#define DECAY_EVERY 64     /* look-ups without a new measurement per decay step: with a
                            * re-evaluation every 16 calls, one exploring run per ~1000 calls */

typedef struct ratio_ring {
    double r[RING];
    double rejected[REGIME];
    unsigned char n, head, nrejected;
    signed char rejected_side;
    unsigned short idle; /* look-ups since the last measurement */
    double factor; /* cached median, 1 until MIN_SAMPLES */
} ratio_ring;

struct xo__correction {
    pthread_mutex_t lock;
    int ndev;
    ratio_ring *cells; /* [ndev][XO_OP_KIND_COUNT][2][NCLASS] */
};

xo_status xo__correction_create(int ndev, xo__correction **out)
{
    if (!out || ndev < 1 || ndev > XO_MAX_DEVICES)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo__correction_create: ndev = %d", ndev);
    xo__correction *c = calloc(1, sizeof *c);
    size_t ncells = (size_t)ndev * XO_OP_KIND_COUNT * 2 * NCLASS;
    if (c)
        c->cells = calloc(ncells, sizeof *c->cells);
    if (!c || !c->cells) {
        free(c);
        return xo__error(XO_ERR_OUT_OF_MEMORY, "xo__correction_create: %zu cells", ncells);
    }
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c->cells);
        free(c);
        return xo__error(XO_ERR_OUT_OF_MEMORY, "xo__correction_create: pthread_mutex_init failed");
    }
    c->ndev = ndev;
    for (size_t i = 0; i < ncells; i++)
        c->cells[i].factor = 1.0;
    *out = c;
    return XO_OK;
}

void xo__correction_destroy(xo__correction *c)
{
    if (!c)
        return;
    pthread_mutex_destroy(&c->lock);
    free(c->cells);
    free(c);
}

void xo__correction_reset(xo__correction *c)
{
    if (!c)
        return;
    size_t ncells = (size_t)c->ndev * XO_OP_KIND_COUNT * 2 * NCLASS;
    pthread_mutex_lock(&c->lock);
    memset(c->cells, 0, ncells * sizeof *c->cells);
    for (size_t i = 0; i < ncells; i++)
        c->cells[i].factor = 1.0;
    pthread_mutex_unlock(&c->lock);
}

int xo__size_class(const xo__op_cost *op)
{
    double w = 1.0;
    if (isfinite(op->flops) && op->flops > 0.0)
        w += op->flops;
    if (isfinite(op->bytes) && op->bytes > 0.0)
        w += op->bytes;
    int cls = (int)floor(log2(w));
    if (cls < 0)
        cls = 0;
    return cls >= NCLASS ? NCLASS - 1 : cls;
}

static ratio_ring *cell(xo__correction *c, int dev, xo_op_kind kind, xo_dtype dtype, int cls)
{
    if (!c || dev < 0 || dev >= c->ndev || (int)kind < 0 || kind >= XO_OP_KIND_COUNT ||
        (dtype != XO_F32 && dtype != XO_F64))
        return NULL;
    if (cls < 0)
        cls = 0;
    if (cls >= NCLASS)
        cls = NCLASS - 1;
    return &c->cells[(((size_t)dev * XO_OP_KIND_COUNT + (size_t)kind) * 2 + (size_t)dtype) * NCLASS +
                     (size_t)cls];
}

/* Lower median: for an even count the smaller middle value, so with two samples a
 * single slow spike does not move the factor. */
static double median(const double *v, int n)
{
    double s[RING];
    memcpy(s, v, (size_t)n * sizeof *s);
    for (int i = 1; i < n; i++) { /* insertion sort: n <= 8 */
        double x = s[i];
        int j = i - 1;
        while (j >= 0 && s[j] > x) {
            s[j + 1] = s[j];
            j--;
        }
        s[j + 1] = x;
    }
    return s[(n - 1) / 2];
}

static void push(ratio_ring *r, double ratio)
{
    r->r[r->head] = ratio;
    r->head = (unsigned char)((r->head + 1) % RING);
    if (r->n < RING)
        r->n++;
}

static void refresh(ratio_ring *r)
{
    if (r->n < MIN_SAMPLES) {
        r->factor = 1.0;
        return;
    }
    double m = median(r->r, r->n);
    r->factor = m < FACTOR_MIN ? FACTOR_MIN : (m > FACTOR_MAX ? FACTOR_MAX : m);
}

double xo__correction_factor(xo__correction *c, int dev, xo_op_kind kind, xo_dtype dtype, int cls)
{
    ratio_ring *r = cell(c, dev, kind, dtype, cls);
    if (!r)
        return 1.0;
    pthread_mutex_lock(&c->lock);
    if (r->factor != 1.0 && ++r->idle >= DECAY_EVERY) {
        double f = sqrt(r->factor);
        if (fabs(log(f)) < 0.01)
            f = 1.0;
        r->n = 0;
        r->head = 0;
        r->nrejected = 0;
        r->rejected_side = 0;
        r->idle = 0;
        if (f != 1.0) {
            push(r, f);
            push(r, f);
        }
        refresh(r);
    }
    double f = r->factor;
    pthread_mutex_unlock(&c->lock);
    return f;
}

void xo__correction_reset_device(xo__correction *c, int dev)
{
    if (!c || dev < 0 || dev >= c->ndev)
        return;
    size_t per = (size_t)XO_OP_KIND_COUNT * 2 * NCLASS;
    pthread_mutex_lock(&c->lock);
    ratio_ring *r = &c->cells[(size_t)dev * per];
    memset(r, 0, per * sizeof *r);
    for (size_t i = 0; i < per; i++)
        r[i].factor = 1.0;
    pthread_mutex_unlock(&c->lock);
}

double xo__correction_peek(xo__correction *c, int dev, xo_op_kind kind, xo_dtype dtype, int cls)
{
    ratio_ring *r = cell(c, dev, kind, dtype, cls);
    if (!r)
        return 1.0;
    pthread_mutex_lock(&c->lock);
    double f = r->factor;
    pthread_mutex_unlock(&c->lock);
    return f;
}

int xo__correction_count(xo__correction *c, int dev, xo_op_kind kind, xo_dtype dtype, int cls)
{
    ratio_ring *r = cell(c, dev, kind, dtype, cls);
    if (!r)
        return 0;
    pthread_mutex_lock(&c->lock);
    int n = r->n;
    pthread_mutex_unlock(&c->lock);
    return n;
}

void xo__correction_record(xo__correction *c, int dev, xo_op_kind kind, xo_dtype dtype, int cls,
                           double predicted_us, double measured_us)
{
    ratio_ring *r = cell(c, dev, kind, dtype, cls);
    if (!r || !isfinite(predicted_us) || !isfinite(measured_us) || predicted_us <= 0.0 || measured_us < 0.0)
        return;
    double ratio = measured_us / predicted_us;
    /* a measurement below the clock's resolution says little; keep it in range */
    if (ratio < FACTOR_MIN / 4.0)
        ratio = FACTOR_MIN / 4.0;
    pthread_mutex_lock(&c->lock);
    r->idle = 0;
    if (r->n >= OUTLIER_AFTER) {
        double m = median(r->r, r->n);
        int side = ratio > m * SHIFT ? 1 : (ratio < m / SHIFT ? -1 : 0);
        int outlier = ratio > m * OUTLIER || ratio < m / OUTLIER;
        if (side != 0) {
            if (side != r->rejected_side)
                r->nrejected = 0;
            r->rejected_side = (signed char)side;
            r->rejected[r->nrejected++] = ratio;
            if (r->nrejected >= REGIME) {
                /* a new regime: restart the ring from the samples that announced it */
                r->n = 0;
                r->head = 0;
                for (int i = 0; i < REGIME; i++)
                    push(r, r->rejected[i]);
                r->nrejected = 0;
                r->rejected_side = 0;
                refresh(r);
                pthread_mutex_unlock(&c->lock);
                return;
            }
            if (outlier) {
                pthread_mutex_unlock(&c->lock);
                return; /* dropped: one spike cannot flip decisions */
            }
            push(r, ratio);
            refresh(r);
            pthread_mutex_unlock(&c->lock);
            return;
        }
    }
    r->nrejected = 0;
    r->rejected_side = 0;
    push(r, ratio);
    refresh(r);
    pthread_mutex_unlock(&c->lock);
}

int xo__correction_settled(xo__correction *c, int dev, int min_cls, double *out)
{
    *out = 1.0;
    if (!c || dev < 0 || dev >= c->ndev)
        return 0;
    size_t per = (size_t)XO_OP_KIND_COUNT * 2 * NCLASS, n = 0, cap = 64;
    double logs[64];
    pthread_mutex_lock(&c->lock);
    const ratio_ring *r = &c->cells[(size_t)dev * per];
    for (size_t i = 0; i < per && n < cap; i++)
        if ((int)(i % NCLASS) >= min_cls && r[i].n >= OUTLIER_AFTER)
            logs[n++] = log(r[i].factor);
    pthread_mutex_unlock(&c->lock);
    if (n == 0)
        return 0;
    for (size_t i = 1; i < n; i++) /* insertion sort: at most 64 */
        for (size_t j = i; j > 0 && logs[j] < logs[j - 1]; j--) {
            double t = logs[j];
            logs[j] = logs[j - 1];
            logs[j - 1] = t;
        }
    *out = exp(logs[(n - 1) / 2]);
    return (int)n;
}
