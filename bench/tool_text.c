/* Figures of a device in words, for xo info and the xo bench report (one rule each). */
#include "xo_tool.h"

#include <stdio.h>

/* A device that shares the host's memory moves a buffer without copying it: a 16 MiB
 * move then takes the 1 us floor of the clock, which would read as thousands of GB/s (a
 * byte count over the floor, not a bandwidth). Such a figure is said in words; anything
 * else is what was measured. */
#define SHARED_GBPS 1000.0

const char *xo__tool_bandwidth_text(const xo_device_info *in, int dev, double gbps, int words, char *out,
                                    size_t cap)
{
    if (dev == 0)
        snprintf(out, cap, "%s", words ? "none: the host itself" : "host");
    else if (in->host_unified && gbps >= SHARED_GBPS)
        snprintf(out, cap, words ? "shared memory (no copy: a move costs the %.1f us latency)" : "shared memory",
                 in->transfer_latency_us);
    else
        snprintf(out, cap, words ? "%.3f" : "%.2f", gbps);
    return out;
}
