/* Buffers over memory the caller owns (xo_buffer_wrap): the host copy is the caller's
 * pointer, so the CPU runs ops on it in place and devices move data as for any buffer. */
#include "xo_internal.h"

#include <stdlib.h>

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
    return xo__buffer_new(ctx, host, bytes, 1, "xo_buffer_wrap", out);
}

xo_status xo_buffer_sync(xo_buffer *b)
{
    if (!b)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_buffer_sync: b is NULL");
    XO_RETURN_IF_ERROR(xo__buffer_make_current(b, 0));
    /* Ops still queued on a zero-copy device may read `host`: the caller may write it next. */
    xo__buffer_host_write_barrier(b, -1);
    return XO_OK;
}

xo_status xo_buffer_host_written(xo_buffer *b)
{
    if (!b)
        return xo__error(XO_ERR_INVALID_ARGUMENT, "xo_buffer_host_written: b is NULL");
    xo__buffer_host_write_barrier(b, -1);
    xo__buffer_mark_written(b, 0);
    return XO_OK;
}
