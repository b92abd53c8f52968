/* Buffers over memory the caller owns (xo_buffer_wrap): the host copy is the caller's
 * pointer, so the CPU runs ops on it in place and devices move data as for any buffer.
 * The contract takes any alignment, but every kernel (ours, OpenBLAS's) loads elements
 * as floats, doubles or int32s: memory not aligned for a double gets an aligned host copy
 * instead (b->user keeps the caller's), which xo_buffer_write writes through,
 * xo_buffer_sync copies back and xo_buffer_host_written refreshes. The caller sees the
 * same rules either way; only such memory pays the copies. */
#include "xo_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ELEM_ALIGN _Alignof(double) /* the strictest element any op loads */

xo_status xo_buffer_wrap(xo_context *ctx, void *host, size_t bytes, xo_buffer **out)
{
    if (!out)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_buffer_wrap: out is NULL");
    *out = NULL;
    if (!ctx)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_buffer_wrap: ctx is NULL");
    if (!host)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_buffer_wrap: host is NULL");
    if (bytes == 0)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_buffer_wrap: bytes = 0; a buffer holds at least one byte");
    if ((uintptr_t)host % ELEM_ALIGN == 0)
        return xo__buffer_new(ctx, host, bytes, 1, "xo_buffer_wrap", out);
    void *copy;
    XO_RETURN_IF_ERROR(xo__host_alloc(bytes, "xo_buffer_wrap", &copy));
    memcpy(copy, host, bytes);
    xo_status st = xo__buffer_new(ctx, copy, bytes, 0, "xo_buffer_wrap", out);
    if (st != XO_OK) {
        free(copy);
        return st;
    }
    (*out)->user = host;
    return XO_OK;
}

xo_status xo_buffer_sync(xo_buffer *b)
{
    if (!b)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_buffer_sync: b is NULL");
    XO_RETURN_IF_ERROR(xo__buffer_make_current(b, 0));
    /* Ops still queued on a zero-copy device may read `host`: the caller may write it next. */
    xo__buffer_host_write_barrier(b, -1);
    if (b->user)
        memcpy(b->user, b->host, b->bytes);
    return XO_OK;
}

xo_status xo_buffer_host_written(xo_buffer *b)
{
    if (!b)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_buffer_host_written: b is NULL");
    xo__buffer_host_write_barrier(b, -1);
    if (b->user)
        memcpy(b->host, b->user, b->bytes);
    xo__buffer_mark_written(b, 0);
    return XO_OK;
}
