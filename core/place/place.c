/* Placement: the one pure function that turns the model's estimates into a decision.
 * Dispatch, `xo explain` and the tests call it with the same inputs (profiles, the
 * correction factors in force, where each operand is current, which devices can run
 * the op, the forced device) and so cannot disagree. Nothing here reads the context,
 * builds kernels or takes a lock: the callers resolve those first. */
#include "xo_internal.h"

/* How long an op placed on d waits before it starts: for d's own queue, and for every
 * operand it must fetch from a device whose queue is still producing it (StarPU dmda's
 * expected start time). */
static double start_wait(const xo__place_in *in, int d)
{
    if (!in->wait_us)
        return 0.0;
    double w = in->wait_us[d];
    for (int i = 0; i < in->cost->noperands; i++) {
        uint32_t v = in->cost->operand[i].valid;
        if ((v & (1u << d)) || (v & 1u))
            continue; /* current there, or on the host */
        for (int h = 1; h < in->ndev; h++)
            if (v & (1u << h)) {
                if (in->wait_us[h] > w)
                    w = in->wait_us[h];
                break;
            }
    }
    return w;
}

/* The device holding the largest operand that must be current (0 when on the host). */
static int home_device(int ndev, const xo__op_cost *cost)
{
    int home = 0;
    double best = -1;
    for (int i = 0; i < cost->noperands; i++) {
        if (cost->operand[i].bytes <= best)
            continue;
        best = cost->operand[i].bytes;
        uint32_t v = cost->operand[i].valid;
        home = 0;
        if (!(v & 1u))
            for (int d = 1; d < ndev; d++)
                if (v & (1u << d)) {
                    home = d;
                    break;
                }
    }
    return home;
}

void xo__place(const xo__place_in *in, xo__placement *out)
{
    const int ndev = in->ndev;
    int best = -1, failed = -1;
    double failed_total = 0;
    for (int d = 0; d < ndev; d++) {
        xo_estimate *e = &out->est[d];
        int support = d == 0 ? XO_SUPPORT_YES : in->support[d];
        if (support == XO_SUPPORT_FAILED) {
            /* Failed here: what it would have cost tells whether this op is a fallback. */
            xo_estimate would;
            xo__estimate(in->profiles, ndev, d, in->cost, 1.0, &would);
            if (failed < 0 || would.total_us < failed_total) {
                failed = d;
                failed_total = would.total_us;
            }
        }
        if (support != XO_SUPPORT_YES) {
            *e = (xo_estimate){0};
            out->raw[d] = 0;
            continue;
        }
        double f = in->correction ? in->correction[d] : 1.0;
        xo__estimate(in->profiles, ndev, d, in->cost, f, e);
        e->total_us += start_wait(in, d); /* the expected finish, not the op alone */
        out->raw[d] = f > 0 ? e->compute_us / f : e->compute_us;
        if (best < 0 || e->total_us < out->est[best].total_us)
            best = d;
    }
    out->failed = (failed >= 0 && failed_total < out->est[best].total_us) ? failed : -1;
    /* Stay where the data lives unless another device is clearly cheaper: close calls
     * must not ping-pong buffers between devices. */
    int home = home_device(ndev, in->cost);
    if (best != home && out->est[home].eligible && out->est[best].total_us > 0.9 * out->est[home].total_us)
        best = home;
    /* A device on the host's cores (PoCL) runs on the cores the CPU's BLAS would use:
     * the two are not independent workers, and what one gains over the other is mostly
     * the model's error. It gets an op only when clearly faster than the CPU. */
    if (best != 0 && out->est[0].eligible && xo__device_on_host_cores(&in->profiles[best].info) &&
        out->est[best].total_us > XO_HOST_CORES_MARGIN * out->est[0].total_us)
        best = 0;
    out->best = best;
    out->device = xo__place_force(best, out->failed, out->est, in->forced,
                                  in->forced >= 0 ? in->support[in->forced] : XO_SUPPORT_YES, &out->forced,
                                  &out->fallback_from);
}

int xo__place_force(int best, int failed, const xo_estimate *est, int forced, int forced_support, int *out_forced,
                    int *out_fallback_from)
{
    *out_forced = 0;
    *out_fallback_from = failed;
    if (forced < 0)
        return best;
    if (est[forced].eligible) {
        *out_forced = 1;
        *out_fallback_from = -1; /* placed by the user, not by cost */
        return forced;
    }
    /* Forced onto a device that cannot run it: the CPU. If its kernels failed, a fault
     * overrides the forcing and the op is a fallback from that device. */
    *out_fallback_from = forced_support == XO_SUPPORT_FAILED ? forced : -1;
    return 0;
}
