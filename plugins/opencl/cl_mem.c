/* cl_mem.c: device buffers and host<->device moves.
 *
 * Zero-copy: on a host-unified device the core asks for a buffer that uses its host
 * copy as storage (CL_MEM_USE_HOST_PTR). For those, upload and download only
 * synchronise the two views with map/unmap: a write-invalidate map + unmap before the
 * device reads host-written data, a blocking read map + unmap before the host reads
 * device-written data. Nothing is copied on a device that really shares memory.
 *
 * A device copy is a plain cl_mem (CL_MEM_READ_WRITE). Uploads copy the caller's bytes
 * into a staging block and enqueue a non-blocking write of it, so the caller's memory is
 * free as soon as upload() returns and later ops on the in-order queue see the data;
 * cl_events.c frees the block when the write completes. On CPU devices the "transfer"
 * is itself a memcpy by the runtime, so staging would only double it: there the write is
 * blocking. Downloads are blocking reads, ordered after every op queued before them. The
 * core counts every move. */
#include "cl_internal.h"

#include <stdlib.h>
#include <string.h>

static xo__cl_device *device_of(void *state, int dev) { return &((xo__cl_state *)state)->dev[dev]; }

/* 1 if `err` says the runtime could not allocate memory. */
static int allocation_failed(cl_int err)
{
    return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY;
}

/* Many runtimes allocate a plain buffer's memory lazily, at the first command that uses
 * it, and PoCL aborts the process there when the memory cannot be had. A failure must
 * surface here instead, so that the core completes the op on another device:
 *  - the size is checked against CL_DEVICE_MAX_MEM_ALLOC_SIZE and against
 *    CL_DEVICE_GLOBAL_MEM_SIZE less what crossover already holds on the device;
 *  - on a host-unified device (its memory is host memory) the buffer is created with
 *    CL_MEM_ALLOC_HOST_PTR, which makes the runtime allocate in clCreateBuffer (PoCL
 *    then fails it with CL_OUT_OF_HOST_MEMORY, e.g. under `ulimit -v`);
 *  - elsewhere a content-undefined migration to the device makes a lazy runtime
 *    allocate now; an allocation error it returns fails the allocation. */
xo_status xo__cl_mem_alloc(void *state, int dev, size_t bytes, xo_plugin_mem **out)
{
    xo__cl_state *st = state;
    xo__cl_device *d = device_of(state, dev);
    *out = NULL;
    if (bytes == 0) return st->host->set_error(XO_ERR_INVALID_ARGUMENT, "opencl: mem_alloc: bytes is 0");
    if (d->max_alloc && bytes > d->max_alloc)
        return st->host->set_error(XO_ERR_OUT_OF_MEMORY,
                                   "clCreateBuffer: %zu bytes exceed CL_DEVICE_MAX_MEM_ALLOC_SIZE (%llu) of %s",
                                   bytes, (unsigned long long)d->max_alloc, d->info.name);
    cl_ulong held = atomic_fetch_add(&d->held, bytes);
    if (d->global_mem && held + bytes > d->global_mem) {
        atomic_fetch_sub(&d->held, bytes);
        return st->host->set_error(XO_ERR_OUT_OF_MEMORY,
                                   "clCreateBuffer: %zu bytes do not fit in CL_DEVICE_GLOBAL_MEM_SIZE (%llu) of %s, "
                                   "where crossover already holds %llu bytes",
                                   bytes, (unsigned long long)d->global_mem, d->info.name, (unsigned long long)held);
    }
    cl_int err = CL_SUCCESS;
    cl_mem_flags flags = CL_MEM_READ_WRITE | (d->info.host_unified ? CL_MEM_ALLOC_HOST_PTR : 0);
    cl_mem m = clCreateBuffer(d->ctx, flags, bytes, NULL, &err);
    if (err == CL_SUCCESS && m && !d->info.host_unified) {
        cl_int merr = clEnqueueMigrateMemObjects(d->queue, 1, &m, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, NULL,
                                                 NULL);
        if (allocation_failed(merr)) { /* other errors (e.g. an OpenCL 1.1 runtime): nothing learnt */
            clReleaseMemObject(m);
            m = NULL;
            err = merr;
        }
    }
    if (err != CL_SUCCESS || !m) {
        atomic_fetch_sub(&d->held, bytes);
        return xo__cl_fail(st->host, "clCreateBuffer", err);
    }
    *out = (xo_plugin_mem *)(uintptr_t)m;
    return XO_OK;
}

xo_status xo__cl_mem_wrap(void *state, int dev, void *host, size_t bytes, xo_plugin_mem **out)
{
    xo__cl_state *st = state;
    xo__cl_device *d = device_of(state, dev);
    *out = NULL;
    if (!d->info.host_unified)
        return st->host->set_error(XO_ERR_UNSUPPORTED, "opencl: %s does not share host memory", d->info.name);
    if (!host || bytes == 0 || (uintptr_t)host % d->base_align != 0)
        return st->host->set_error(XO_ERR_UNSUPPORTED, "opencl: host copy not aligned to %u bytes for zero-copy",
                                   d->base_align);
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, host, &err);
    if (err != CL_SUCCESS || !m) return xo__cl_fail(st->host, "clCreateBuffer(CL_MEM_USE_HOST_PTR)", err);
    *out = (xo_plugin_mem *)(uintptr_t)m;
    return XO_OK;
}

static int uses_host_ptr(cl_mem m)
{
    cl_mem_flags f = 0;
    return clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof f, &f, NULL) == CL_SUCCESS && (f & CL_MEM_USE_HOST_PTR);
}

/* Make the device's view of a zero-copy buffer agree with the host's (to_device) or the
 * host's with the device's, waiting for the ops that write it. */
static xo_status sync_shared(xo__cl_state *st, xo__cl_device *d, cl_mem m, size_t off, size_t bytes, int to_device)
{
    cl_int err = CL_SUCCESS;
    cl_map_flags how = to_device ? CL_MAP_WRITE_INVALIDATE_REGION : CL_MAP_READ;
    void *p = clEnqueueMapBuffer(d->queue, m, to_device ? CL_FALSE : CL_TRUE, how, off, bytes, 0, NULL, NULL, &err);
    if (err != CL_SUCCESS || !p) return xo__cl_fail(st->host, "clEnqueueMapBuffer", err);
    cl_event unmapped = NULL;
    err = clEnqueueUnmapMemObject(d->queue, m, p, 0, NULL, to_device ? NULL : &unmapped);
    if (err != CL_SUCCESS) return xo__cl_fail(st->host, "clEnqueueUnmapMemObject", err);
    if (unmapped) { /* the host may write the memory as soon as we return */
        err = clWaitForEvents(1, &unmapped);
        clReleaseEvent(unmapped);
        if (err != CL_SUCCESS) return xo__cl_fail(st->host, "clWaitForEvents", err);
    } else {
        clFlush(d->queue);
    }
    return XO_OK;
}

void xo__cl_mem_free(void *state, int dev, xo_plugin_mem *mem)
{
    if (!mem) return;
    cl_mem m = xo__cl_mem(mem);
    size_t size = 0;
    if (!uses_host_ptr(m) && clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL) == CL_SUCCESS)
        atomic_fetch_sub(&device_of(state, dev)->held, size); /* one of mem_alloc's */
    /* OpenCL defers the release until commands that use the buffer have completed. */
    clReleaseMemObject(m);
}

xo_status xo__cl_upload(void *state, int dev, xo_plugin_mem *dst, size_t dst_off, const void *src,
                        size_t bytes)
{
    xo__cl_state *st = state;
    xo__cl_device *d = device_of(state, dev);
    if (bytes == 0) return XO_OK;
    if (uses_host_ptr(xo__cl_mem(dst))) return sync_shared(st, d, xo__cl_mem(dst), dst_off, bytes, 1);
    void *copy = d->info.kind == XO_DEVICE_CPU ? NULL : malloc(bytes);
    cl_int err;
    if (!copy) { /* CPU device, or no room to stage: write synchronously */
        err = clEnqueueWriteBuffer(d->queue, xo__cl_mem(dst), CL_TRUE, dst_off, bytes, src, 0, NULL, NULL);
        return err == CL_SUCCESS ? XO_OK : xo__cl_fail(st->host, "clEnqueueWriteBuffer", err);
    }
    memcpy(copy, src, bytes);
    cl_event done = NULL;
    err = clEnqueueWriteBuffer(d->queue, xo__cl_mem(dst), CL_FALSE, dst_off, bytes, copy, 0, NULL, &done);
    if (err != CL_SUCCESS) {
        free(copy);
        return xo__cl_fail(st->host, "clEnqueueWriteBuffer", err);
    }
    /* Push the write to the device now rather than at the next blocking call. */
    clFlush(d->queue);
    pthread_mutex_lock(&d->lock);
    xo__cl_staging_push_locked(d, done, copy, bytes);
    pthread_mutex_unlock(&d->lock);
    return XO_OK;
}

xo_status xo__cl_download(void *state, int dev, xo_plugin_mem *src, size_t src_off, void *dst, size_t bytes)
{
    xo__cl_state *st = state;
    xo__cl_device *d = device_of(state, dev);
    if (bytes == 0) return XO_OK;
    if (uses_host_ptr(xo__cl_mem(src))) return sync_shared(st, d, xo__cl_mem(src), src_off, bytes, 0);
    cl_int err = clEnqueueReadBuffer(d->queue, xo__cl_mem(src), CL_TRUE, src_off, bytes, dst, 0, NULL, NULL);
    if (err != CL_SUCCESS) return xo__cl_fail(st->host, "clEnqueueReadBuffer", err);
    return XO_OK;
}
