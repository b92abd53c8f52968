/* Parallel reductions of the OpenCL plugin: SUM and MAX_ELEMENT.
 *
 * Pass 1 (xo_reduce_partial): every work-item folds a grid-strided slice of x, then
 * each work-group folds its items with a tree in local memory and writes one partial.
 * Pass 2 (xo_reduce_final): one work-group folds the partials the same way and writes
 * the result into out[out_off] on the device. The local size must be a power of two. */
#ifdef XO_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real;
#else
typedef float real;
#endif

/* xo_reduce_op of crossover.h. */
#define XO_SUM 0
#define XO_MAX_ELEMENT 1

inline real xo_identity(const int op)
{
    return op == XO_SUM ? (real)0 : -(real)INFINITY;
}

inline real xo_combine(const int op, const real u, const real v)
{
    return op == XO_SUM ? u + v : (v > u ? v : u);
}

/* Tree over the work-group's values in scratch; the result ends in scratch[0]. */
inline void xo_tree(const int op, __local real *scratch)
{
    const size_t lid = get_local_id(0);
    for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < s)
            scratch[lid] = xo_combine(op, scratch[lid], scratch[lid + s]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

__kernel void xo_reduce_partial(const int op, const ulong n,
                                __global const real *x, const ulong x_off,
                                __global real *partial, __local real *scratch)
{
    const ulong stride = get_global_size(0);
    real acc = xo_identity(op);
    x += x_off;
    for (ulong i = get_global_id(0); i < n; i += stride)
        acc = xo_combine(op, acc, x[i]);
    scratch[get_local_id(0)] = acc;
    xo_tree(op, scratch);
    if (get_local_id(0) == 0)
        partial[get_group_id(0)] = scratch[0];
}

__kernel void xo_reduce_final(const int op, const uint count,
                              __global const real *partial,
                              __global real *out, const ulong out_off,
                              __local real *scratch)
{
    const uint lid = (uint)get_local_id(0), lsz = (uint)get_local_size(0);
    real acc = xo_identity(op);
    for (uint i = lid; i < count; i += lsz)
        acc = xo_combine(op, acc, partial[i]);
    scratch[lid] = acc;
    xo_tree(op, scratch);
    if (lid == 0)
        out[out_off] = scratch[0];
}
