/* Parallel reductions of the OpenCL plugin: SUM and MAX_ELEMENT over a vector, over
 * either axis of a matrix (reduce_axis), softmax / log-softmax along rows, argmax along
 * rows, and nrm2.
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
    return op == XO_SUM ? u + v : XO_F_MAX(v, u); /* xo_formulas.h: NaN wins */
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

/* reduce_axis: out[out_off + r] = op over e < count of x[x_off + r*rs + e*es], for
 * r < results. Axis 1 (a row per result): rs = ldx, es = 1; axis 0 (a column per
 * result): rs = 1, es = ldx. Dimension 0 of the work-group runs over results (adjacent
 * columns read together on axis 0), dimension 1 over elements (a row's elements on axis
 * 1); local size 1 must be a power of two, and scratch holds both local sizes' product. */
__kernel void xo_reduce_axis(const int op, const ulong results, const ulong count,
                             __global const real *x, const ulong x_off, const ulong rs, const ulong es,
                             __global real *out, const ulong out_off, __local real *scratch)
{
    const size_t lx = get_local_id(0), ly = get_local_id(1);
    const size_t nx = get_local_size(0), ny = get_local_size(1);
    __local real *mine = scratch + ly * nx + lx;
    x += x_off;
    out += out_off;
    /* every item runs every trip, so the barriers are reached by the whole group */
    for (ulong base = get_group_id(0) * nx; base < results; base += get_num_groups(0) * nx) {
        const ulong r = base + lx;
        real acc = xo_identity(op);
        if (r < results)
            for (ulong e = ly; e < count; e += ny)
                acc = xo_combine(op, acc, x[r * rs + e * es]);
        *mine = acc;
        for (size_t s = ny / 2; s > 0; s >>= 1) {
            barrier(CLK_LOCAL_MEM_FENCE);
            if (ly < s)
                *mine = xo_combine(op, *mine, mine[s * nx]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (ly == 0 && r < results)
            out[r] = *mine;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* xo_softmax_op of crossover.h. */
#define XO_SOFTMAX 0
#define XO_LOG_SOFTMAX 1

/* A row's max and sum(exp(x - max)) over the work-group, into *m and *sum of every item;
 * every item of the group calls it (it has barriers), and scratch is free again after. */
inline void xo_row_max_sumexp(__global const real *row, const ulong cols, __local real *scratch, real *m_out,
                              real *sum_out)
{
    const size_t lid = get_local_id(0), lsz = get_local_size(0);
    real m = -(real)INFINITY;
    for (ulong j = lid; j < cols; j += lsz)
        m = xo_combine(XO_MAX_ELEMENT, m, row[j]);
    scratch[lid] = m;
    xo_tree(XO_MAX_ELEMENT, scratch);
    m = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE); /* everyone has read scratch[0] */
    real sum = (real)0;
    for (ulong j = lid; j < cols; j += lsz)
        sum += exp(row[j] - m);
    scratch[lid] = sum;
    xo_tree(XO_SUM, scratch);
    *sum_out = scratch[0];
    *m_out = m;
    barrier(CLK_LOCAL_MEM_FENCE); /* the next use reuses scratch */
}

/* Row-major softmax (or log-softmax) of each row, one work-group per row: the row's
 * max, then sum(exp(x - max)), then y = exp(x - max) / sum or (x - max) - log(sum).
 * y may be x (same offset and ld): a row is read in full before it is written. */
__kernel void xo_softmax(const int op, const ulong rows, const ulong cols,
                         __global const real *x, const ulong x_off, const ulong ldx,
                         __global real *y, const ulong y_off, const ulong ldy,
                         __local real *scratch)
{
    const size_t lid = get_local_id(0), lsz = get_local_size(0);
    x += x_off;
    y += y_off;
    for (ulong i = get_group_id(0); i < rows; i += get_num_groups(0)) {
        __global const real *row = x + i * ldx;
        real m, sum;
        xo_row_max_sumexp(row, cols, scratch, &m, &sum);
        __global real *out = y + i * ldy;
        if (op == XO_LOG_SOFTMAX) {
            const real lse = log(sum);
            for (ulong j = lid; j < cols; j += lsz)
                out[j] = (row[j] - m) - lse;
        } else {
            for (ulong j = lid; j < cols; j += lsz)
                out[j] = exp(row[j] - m) / sum;
        }
    }
}

/* Softmax cross-entropy over int32 labels, one work-group per row: the row's max, then
 * sum(exp(x - max)); loss = log(sum) - (x[c] - max) and, when there is a grad,
 * grad = scale * (exp(x - max) / sum - onehot(c)). A label outside [0, cols) gives a
 * loss of 0 and a zero gradient row. grad may be x (same offset and ld): the row and
 * x[c] are read in full before anything is written. */
__kernel void xo_softmax_xent(const ulong rows, const ulong cols,
                              __global const real *x, const ulong x_off, const ulong ldx,
                              __global const int *labels, const ulong labels_off,
                              const real scale, __global real *loss, const ulong loss_off,
                              const int has_grad, __global real *grad, const ulong grad_off,
                              const ulong ldg, __local real *scratch)
{
    const size_t lid = get_local_id(0), lsz = get_local_size(0);
    x += x_off;
    labels += labels_off;
    loss += loss_off;
    for (ulong i = get_group_id(0); i < rows; i += get_num_groups(0)) {
        __global const real *row = x + i * ldx;
        __global real *g = has_grad ? grad + grad_off + i * ldg : 0;
        const int c = labels[i];
        const int valid = c >= 0 && (ulong)c < cols;
        /* every item passes every barrier, whatever the label: no early exit; x[c] is
         * read by every item before the barriers inside, so grad may be x */
        const real xc = valid ? row[c] : (real)0;
        real m, sum;
        xo_row_max_sumexp(row, cols, scratch, &m, &sum);
        if (lid == 0) loss[i] = valid ? log(sum) - (xc - m) : (real)0;
        if (has_grad) {
            const real k = valid ? scale / sum : (real)0;
            for (ulong j = lid; j < cols; j += lsz)
                g[j] = valid ? exp(row[j] - m) * k - ((ulong)c == j ? scale : (real)0) : (real)0;
        }
    }
}

/* ---- argmax ------------------------------------------------------------------------
 * Whether candidate (v at column i) comes before (u at column j): a NaN before any
 * number (XO_F_MAX's rule), a larger number before a smaller, the lower column on ties
 * and between two NaNs, so the first NaN and the first of equal maxima win. */
inline int xo_arg_before(const real v, const uint i, const real u, const uint j)
{
    const int vn = v != v, un = u != u;
    if (vn != un) return vn;
    if (!vn && v != u) return v > u;
    return i < j;
}

/* idx[idx_off + r] = the column of row r's first largest element, one work-group per row
 * (grid-strided): each item keeps the best of its strided share, then a tree over
 * (value, column) pairs in local memory. A column of `cols` marks an item with none.
 * The local size must be a power of two; sv and si hold one entry per item. */
__kernel void xo_argmax(const ulong rows, const uint cols,
                        __global const real *x, const ulong x_off, const ulong ldx,
                        __global int *idx, const ulong idx_off,
                        __local real *sv, __local uint *si)
{
    const uint lid = (uint)get_local_id(0), lsz = (uint)get_local_size(0);
    x += x_off;
    idx += idx_off;
    for (ulong r = get_group_id(0); r < rows; r += get_num_groups(0)) {
        __global const real *row = x + r * ldx;
        real bv = (real)0;
        uint bi = cols;
        for (uint j = lid; j < cols; j += lsz)
            if (bi == cols || xo_arg_before(row[j], j, bv, bi)) {
                bv = row[j];
                bi = j;
            }
        sv[lid] = bv;
        si[lid] = bi;
        for (uint s = lsz / 2; s > 0; s >>= 1) {
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid < s && si[lid + s] < cols &&
                (si[lid] == cols || xo_arg_before(sv[lid + s], si[lid + s], sv[lid], si[lid]))) {
                sv[lid] = sv[lid + s];
                si[lid] = si[lid + s];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0) idx[r] = (int)si[0];
        barrier(CLK_LOCAL_MEM_FENCE); /* the next row reuses sv and si */
    }
}

/* ---- nrm2 --------------------------------------------------------------------------
 * Blue's scaled sum of squares, as reference BLAS's dnrm2.f90 (LAPACK 3.10): three plain
 * sums, of tiny magnitudes' squares scaled up by SSML, of huge ones' scaled down by SBIG,
 * and of the rest as they are. No square overflows or underflows where the norm is
 * representable, and each sum folds in any order, so both passes are SUM trees over
 * three values. The constants are reference BLAS's for this precision. */
#ifdef XO_FP64
#define XO_TSML 0x1p-511
#define XO_TBIG 0x1p486
#define XO_SSML 0x1p537
#define XO_SBIG 0x1p-538
#else
#define XO_TSML 0x1p-63f
#define XO_TBIG 0x1p52f
#define XO_SSML 0x1p75f
#define XO_SBIG 0x1p-76f
#endif

/* Add v to the sums s[0] (tiny), s[1] (mid-range), s[2] (huge). NaN lands in s[1]. */
inline void xo_nrm2_add(const real v, real *s)
{
    const real ax = fabs(v);
    if (ax > XO_TBIG) {
        const real t = ax * XO_SBIG;
        s[2] += t * t;
    } else if (ax < XO_TSML) {
        const real t = ax * XO_SSML;
        s[0] += t * t;
    } else {
        s[1] += ax * ax;
    }
}

/* The norm from the three sums (dnrm2.f90's final step). */
inline real xo_nrm2_finish(const real sml, const real med, const real big)
{
    if (big > (real)0) {
        const real b = med > (real)0 || isnan(med) ? big + (med * XO_SBIG) * XO_SBIG : big;
        return sqrt(b) / XO_SBIG;
    }
    if (sml > (real)0) {
        if (!(med > (real)0 || isnan(med)))
            return sqrt(sml) / XO_SSML;
        const real ym = sqrt(med), ys = sqrt(sml) / XO_SSML;
        const real ymin = ys > ym ? ym : ys, ymax = ys > ym ? ys : ym;
        return ymax * sqrt((real)1 + (ymin / ymax) * (ymin / ymax));
    }
    return sqrt(med);
}

/* Pass 1: each work-group's three sums into partial[3*group + 0..2]. */
__kernel void xo_nrm2_partial(const ulong n, __global const real *x, const ulong x_off, const ulong incx,
                              __global real *partial, __local real *scratch)
{
    const ulong stride = get_global_size(0);
    real s[3] = {(real)0, (real)0, (real)0};
    x += x_off;
    for (ulong i = get_global_id(0); i < n; i += stride)
        xo_nrm2_add(x[i * incx], s);
    for (int j = 0; j < 3; j++) { /* only item 0 reads scratch[0] between trees */
        scratch[get_local_id(0)] = s[j];
        xo_tree(XO_SUM, scratch);
        if (get_local_id(0) == 0)
            partial[3 * get_group_id(0) + j] = scratch[0];
    }
}

/* Pass 2: one work-group folds `count` triples and writes the norm to out[out_off]. */
__kernel void xo_nrm2_final(const uint count, __global const real *partial,
                            __global real *out, const ulong out_off, __local real *scratch)
{
    const uint lid = (uint)get_local_id(0), lsz = (uint)get_local_size(0);
    real s[3];
    for (int j = 0; j < 3; j++) {
        real acc = (real)0;
        for (uint i = lid; i < count; i += lsz)
            acc += partial[3 * i + j];
        scratch[lid] = acc;
        xo_tree(XO_SUM, scratch);
        s[j] = scratch[0];
        barrier(CLK_LOCAL_MEM_FENCE); /* everyone has read scratch[0] before it changes */
    }
    if (lid == 0)
        out[out_off] = xo_nrm2_finish(s[0], s[1], s[2]);
}
