/* Device memory and host<->device copies.
 *
 * Copies go through a small ring of pinned staging buffers (cuMemHostAlloc) so that they
 * are truly asynchronous and ordered on the device's stream:
 *   upload    memcpy src -> staging slot, cuMemcpyHtoDAsync, record the slot's event;
 *             returns without waiting (src is never read after returning). A slot is
 *             reused only after its event completed.
 *   download  cuMemcpyDtoHAsync into up to XO_CUDA_STAGING_SLOTS slots ahead, then for
 *             each chunk in order: wait its event, memcpy staging -> dst. Blocking, and
 *             ordered after every op queued earlier on the stream.
 * If pinned memory cannot be had, copies run directly from/to the caller's memory and
 * wait for the stream before returning. */
#include "cuda_internal.h"

#include <stdlib.h>
#include <string.h>

xo_status xo__cuda_mem_alloc(void *state, int dev, size_t bytes, xo_plugin_mem **out)
{
    xo__cuda_state *st = state;
    xo__cuda_device *d = xo__cuda_device_at(st, dev, "cuda mem_alloc");
    if (!d) return XO_ERR_INVALID_ARGUMENT;
    *out = NULL;
    xo_plugin_mem *m = calloc(1, sizeof *m);
    if (!m) return st->host->set_error(XO_ERR_OUT_OF_MEMORY, "cuda mem_alloc: out of host memory");
    m->bytes = bytes;
    xo_status s = xo__cuda_enter(st, d);
    if (s == XO_OK) {
        s = XO_CU(st, cuMemAlloc_v2, (&m->ptr, bytes ? bytes : 1));
        xo__cuda_leave(d);
    }
    if (s != XO_OK) {
        free(m);
        return s;
    }
    *out = m;
    return XO_OK;
}

void xo__cuda_mem_free(void *state, int dev, xo_plugin_mem *mem)
{
    xo__cuda_state *st = state;
    if (!mem) return;
    xo__cuda_device *d = xo__cuda_device_at(st, dev, "cuda mem_free");
    if (d && xo__cuda_enter(st, d) == XO_OK) {
        /* Queued ops may still use it: let them finish before the memory goes. */
        (void)xo__cu.cuStreamSynchronize(d->stream);
        (void)xo__cu.cuMemFree_v2(mem->ptr);
        xo__cuda_leave(d);
    }
    free(mem);
}

/* The next staging slot, allocated on first use and free to overwrite (its last copy
 * completed). Returns NULL when pinned memory is unavailable. Context current. */
static xo__cuda_staging *staging_acquire(xo__cuda_state *st, xo__cuda_device *d, xo_status *out_status)
{
    *out_status = XO_OK;
    if (d->staging_broken) return NULL;
    xo__cuda_staging *s = &d->staging[d->staging_next];
    if (!s->host) {
        if (xo__cu.cuMemHostAlloc(&s->host, XO_CUDA_STAGING_BYTES, 0) != CUDA_SUCCESS) {
            s->host = NULL;
            d->staging_broken = 1;
            st->host->log(XO_LOG_INFO, "cuda: pinned staging unavailable; copying synchronously");
            return NULL;
        }
        if (xo__cu.cuEventCreate(&s->done, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
            (void)xo__cu.cuMemFreeHost(s->host);
            s->host = NULL;
            s->done = NULL;
            d->staging_broken = 1;
            return NULL;
        }
        s->pending = 0;
    } else if (s->pending) {
        *out_status = XO_CU(st, cuEventSynchronize, (s->done));
        if (*out_status != XO_OK) return NULL;
        s->pending = 0;
    }
    d->staging_next = (d->staging_next + 1) % XO_CUDA_STAGING_SLOTS;
    return s;
}

static xo_status check_range(xo__cuda_state *st, const char *fn, const xo_plugin_mem *m, size_t off, size_t bytes)
{
    if (!m || off > m->bytes || bytes > m->bytes - off)
        return st->host->set_error(XO_ERR_INVALID_ARGUMENT, "%s: range [%zu, +%zu) outside the %zu-byte allocation",
                                   fn, off, bytes, m ? m->bytes : 0);
    return XO_OK;
}

static xo_status upload_locked(xo__cuda_state *st, xo__cuda_device *d, CUdeviceptr dst, const unsigned char *src,
                               size_t bytes)
{
    size_t done = 0;
    while (done < bytes) {
        xo_status s;
        xo__cuda_staging *slot = staging_acquire(st, d, &s);
        if (s != XO_OK) return s;
        if (!slot) {
            /* No staging: copy from the caller's memory and wait, so it is not read later. */
            XO_CUDA_TRY(XO_CU(st, cuMemcpyHtoDAsync_v2, (dst + done, src + done, bytes - done, d->stream)));
            return XO_CU(st, cuStreamSynchronize, (d->stream));
        }
        size_t chunk = bytes - done < XO_CUDA_STAGING_BYTES ? bytes - done : XO_CUDA_STAGING_BYTES;
        memcpy(slot->host, src + done, chunk);
        XO_CUDA_TRY(XO_CU(st, cuMemcpyHtoDAsync_v2, (dst + done, slot->host, chunk, d->stream)));
        XO_CUDA_TRY(XO_CU(st, cuEventRecord, (slot->done, d->stream)));
        slot->pending = 1;
        done += chunk;
    }
    return XO_OK;
}

xo_status xo__cuda_upload(void *state, int dev, xo_plugin_mem *dst, size_t dst_off, const void *src, size_t bytes)
{
    xo__cuda_state *st = state;
    xo__cuda_device *d = xo__cuda_device_at(st, dev, "cuda upload");
    if (!d) return XO_ERR_INVALID_ARGUMENT;
    XO_CUDA_TRY(check_range(st, "cuda upload", dst, dst_off, bytes));
    if (bytes == 0) return XO_OK;
    XO_CUDA_TRY(xo__cuda_enter(st, d));
    xo_status s = upload_locked(st, d, dst->ptr + dst_off, src, bytes);
    xo__cuda_leave(d);
    return s;
}

static xo_status download_locked(xo__cuda_state *st, xo__cuda_device *d, unsigned char *dst, CUdeviceptr src,
                                 size_t bytes)
{
    xo__cuda_staging *inflight[XO_CUDA_STAGING_SLOTS];
    size_t queued = 0, done = 0; /* bytes enqueued / bytes delivered to dst */
    int head = 0, count = 0;     /* FIFO of chunks in flight, in inflight[] */
    xo_status s = XO_OK;

    while (done < bytes) {
        /* Keep up to XO_CUDA_STAGING_SLOTS chunks in flight. */
        while (queued < bytes && count < XO_CUDA_STAGING_SLOTS) {
            xo__cuda_staging *slot = staging_acquire(st, d, &s);
            if (s != XO_OK) return s;
            if (!slot) {
                if (count > 0) break; /* drain what is in flight first */
                /* No staging: wait for the stream, then copy straight into dst. */
                s = XO_CU(st, cuMemcpyDtoHAsync_v2, (dst + queued, src + queued, bytes - queued, d->stream));
                if (s == XO_OK) s = XO_CU(st, cuStreamSynchronize, (d->stream));
                return s;
            }
            size_t chunk = bytes - queued < XO_CUDA_STAGING_BYTES ? bytes - queued : XO_CUDA_STAGING_BYTES;
            XO_CUDA_TRY(XO_CU(st, cuMemcpyDtoHAsync_v2, (slot->host, src + queued, chunk, d->stream)));
            XO_CUDA_TRY(XO_CU(st, cuEventRecord, (slot->done, d->stream)));
            slot->pending = 1;
            inflight[(head + count) % XO_CUDA_STAGING_SLOTS] = slot;
            count++;
            queued += chunk;
        }
        /* Deliver the oldest chunk. */
        xo__cuda_staging *slot = inflight[head];
        size_t chunk = bytes - done < XO_CUDA_STAGING_BYTES ? bytes - done : XO_CUDA_STAGING_BYTES;
        XO_CUDA_TRY(XO_CU(st, cuEventSynchronize, (slot->done)));
        slot->pending = 0;
        memcpy(dst + done, slot->host, chunk);
        done += chunk;
        head = (head + 1) % XO_CUDA_STAGING_SLOTS;
        count--;
    }
    return XO_OK;
}

xo_status xo__cuda_download(void *state, int dev, xo_plugin_mem *src, size_t src_off, void *dst, size_t bytes)
{
    xo__cuda_state *st = state;
    xo__cuda_device *d = xo__cuda_device_at(st, dev, "cuda download");
    if (!d) return XO_ERR_INVALID_ARGUMENT;
    XO_CUDA_TRY(check_range(st, "cuda download", src, src_off, bytes));
    if (bytes == 0) return XO_OK;
    XO_CUDA_TRY(xo__cuda_enter(st, d));
    xo_status s = download_locked(st, d, dst, src->ptr + src_off, bytes);
    xo__cuda_leave(d);
    return s;
}
