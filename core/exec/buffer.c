/* Buffers: one host copy plus lazily allocated device copies; which bytes are current
 * where, and moving them, is residency.c's. */
#include "xo_internal.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

_Thread_local xo_plan *xo__capturing;

xo_status xo_buffer_create(xo_context *ctx, size_t bytes, xo_buffer **out)
{
    if (!out)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_buffer_create: out is NULL");
    *out = NULL;
    if (!ctx)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_buffer_create: ctx is NULL");
    if (bytes == 0)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_buffer_create: bytes = 0; a buffer holds at least one byte");
    void *host;
    XO_RETURN_IF_ERROR(xo__host_alloc(bytes, "xo_buffer_create", &host));
    xo_status st = xo__buffer_new(ctx, host, bytes, 0, "xo_buffer_create", out);
    if (st != XO_OK)
        free(host);
    return st;
}

xo_status xo__host_alloc(size_t bytes, const char *fn, void **out)
{
    if (bytes > SIZE_MAX - XO_HOST_ALIGN)
        return xo__error(XO_ERR_OUT_OF_MEMORY, "%s: bytes = %zu is too large", fn, bytes);
    size_t rounded = (bytes + XO_HOST_ALIGN - 1) / XO_HOST_ALIGN * XO_HOST_ALIGN;
    *out = aligned_alloc(XO_HOST_ALIGN, rounded);
    if (!*out)
        return xo__error(XO_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes of host memory", fn, bytes);
    memset(*out, 0, rounded);
    return XO_OK;
}

xo_status xo__buffer_new(xo_context *ctx, void *host, size_t bytes, int wrapped, const char *fn, xo_buffer **out)
{
    xo_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return xo__error(XO_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    if (pthread_mutex_init(&b->move_lock, NULL) != 0) {
        free(b);
        return xo__error(XO_ERR_OUT_OF_MEMORY, "%s: pthread_mutex_init failed", fn);
    }
    b->ctx = ctx;
    b->bytes = bytes;
    b->size_key = (uint64_t)bytes * 0x9E3779B97F4A7C15ull;
    static _Atomic uint64_t next_id = 1;
    b->id = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed);
    b->host = host;
    b->wrapped = wrapped;
    atomic_init(&b->valid, 1u);
    *out = b;
    return XO_OK;
}

void xo_buffer_destroy(xo_buffer *b)
{
    if (!b)
        return;
    xo_context *ctx = b->ctx;
    if (atomic_load_explicit(&b->plans, memory_order_relaxed))
        ctx->plan_buffer_gone(b); /* plans using it fail from now on, naming it */
    /* Queued ops on a zero-copy device read the host copy itself: let them finish. */
    xo__buffer_host_write_barrier(b, -1);
    for (int d = 1; d < ctx->ndev; d++)
        xo__dev_free(ctx, d, b->mem[d]);
    xo__buffer_spans_free(b);
    pthread_mutex_destroy(&b->move_lock);
    if (!b->wrapped)
        free(b->host);
    free(b);
}

size_t xo_buffer_size(const xo_buffer *b) { return b ? b->bytes : 0; }

static xo_status check_range(const char *fn, const xo_buffer *b, size_t offset, const void *p, const char *pname,
                             size_t bytes)
{
    if (!b)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: b is NULL", fn);
    if (!p)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, pname);
    if (offset > b->bytes || bytes > b->bytes - offset)
        return xo__error(XO_ERR_INVALID_ARGUMENT,
                         "%s: offset = %zu + bytes = %zu reaches past the buffer's end (%zu bytes)", fn, offset,
                         bytes, b->bytes);
    return XO_OK;
}

/* The copies of a write and a read, after their checks: inline in xo_buffer_write and
 * xo_buffer_read (a small input written and an output read every step pay no call for
 * them), out of line for a plan's recorded steps (xo__buffer_write_now, _read_now). */
static inline __attribute__((always_inline)) xo_status write_now(xo_buffer *b, size_t offset, const void *src,
                                                                 size_t bytes)
{
    /* Only the span written becomes current on the host (residency.c): nothing moves,
     * unless the span lists would grow too long. A buffer current on the host alone, with
     * no queued reader, needs none of that (a small input written every step). */
    int host_only = xo__valid(b) == 1u && !xo__inflight(b);
    if (!host_only) {
        XO_RETURN_IF_ERROR(xo__buffer_prepare(b, 0, offset, offset + bytes, 0, 1));
        xo__buffer_host_write_barrier(b, -1);
    }
    memcpy((char *)b->host + offset, src, bytes);
    if (b->user) /* the caller's memory holds what was written as soon as this returns */
        memcpy((char *)b->user + offset, src, bytes);
    atomic_store_explicit(&b->rent_ns, 0, memory_order_relaxed);
    if (!host_only)
        xo__buffer_wrote(b, 0, offset, offset + bytes);
    return XO_OK;
}

static inline __attribute__((always_inline)) xo_status read_now(xo_buffer *b, size_t offset, void *dst,
                                                                size_t bytes)
{
    if (!(xo__valid(b) & 1u)) /* the span read comes home */
        XO_RETURN_IF_ERROR(xo__buffer_prepare(b, 0, offset, offset + bytes, 1, 0));
    memcpy(dst, (char *)b->host + offset, bytes);
    return XO_OK;
}

xo_status xo__buffer_write_now(xo_buffer *b, size_t offset, const void *src, size_t bytes)
{
    return write_now(b, offset, src, bytes);
}

xo_status xo__buffer_read_now(xo_buffer *b, size_t offset, void *dst, size_t bytes)
{
    return read_now(b, offset, dst, bytes);
}

xo_status xo_buffer_write(xo_buffer *b, size_t offset, const void *src, size_t bytes)
{
    XO_RETURN_IF_ERROR(check_range("xo_buffer_write", b, offset, src, "src", bytes));
    if (bytes == 0)
        return XO_OK;
    xo_status st;
    if (__builtin_expect(xo__capturing != NULL, 0) && b->ctx->capture_io(b, 1, offset, (void *)src, bytes, &st))
        return st;
    if (b->ctx->episode)
        b->ctx->episode_io(b->ctx, b, 1, offset, bytes);
    return write_now(b, offset, src, bytes);
}

xo_status xo_buffer_read(xo_buffer *b, size_t offset, void *dst, size_t bytes)
{
    XO_RETURN_IF_ERROR(check_range("xo_buffer_read", b, offset, dst, "dst", bytes));
    if (bytes == 0)
        return XO_OK;
    xo_status st;
    if (__builtin_expect(xo__capturing != NULL, 0) && b->ctx->capture_io(b, 0, offset, dst, bytes, &st))
        return st;
    if (b->ctx->episode)
        b->ctx->episode_io(b->ctx, b, 0, offset, bytes);
    return read_now(b, offset, dst, bytes);
}

