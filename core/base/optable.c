/* The core's table of per-op facts: one row per XO_OP_MAP row (crossover/plugin.h),
 * from which the names, operand roles, output operand, dimensions, shape text and the
 * cost model's work come. Adding an op: docs/design.md, "Adding an op". */
#include "xo_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Work of each op as data, in the dimensions of xo_op_desc (m, n, k; a dimension the op
 * does not have counts as 1):
 *   flops    = F(mnk, mn, n) = mnk*MNK + mn*MN + n*N
 *   elements = E(mk, kn, mn, m, n, one): elements streamed through memory
 *   cube     = 1: characteristic size cbrt(MNK) (gemm-like), else MN
 *   operands = each operand's elements as `xo explain` sizes them (XO_E_*)
 *   dims     = what `xo explain` takes: 3 "M N K", 2 "M N" (rows cols), 1 "N"
 *   rmw      = 1: the op reads its output's prior contents (axpy's y; gemm's C, gemv's y
 *              when beta != 0, which is what `xo explain` assumes), so the output must be
 *              current where it runs; 0: it overwrites it (unary's y) */
#define F(mnk, mn, n) {mnk, mn, n}
#define E(mk, kn, mn, m, n, one) {mk, kn, mn, m, n, one}
enum { E_MK, E_KN, E_MN, E_M, E_N, E_ONE };
#define OPS(...) {__VA_ARGS__}

/*                        flops           elements                cube dims text       rmw operands  */
#define XO_WORK_GEMM          F(2, 0, 0),   E(1, 1, 2, 0, 0, 0),  1, 3, "M N K",     1, OPS(E_MK, E_KN, E_MN)
#define XO_WORK_GEMV          F(0, 2, 0),   E(0, 0, 1, 2, 1, 0),  0, 2, "M N",       1, OPS(E_MN, E_N, E_M)
#define XO_WORK_AXPY          F(0, 0, 2),   E(0, 0, 0, 0, 3, 0),  0, 1, "N",         1, OPS(E_N, E_N)
#define XO_WORK_SCAL          F(0, 0, 1),   E(0, 0, 0, 0, 2, 0),  0, 1, "N",         1, OPS(E_N)
#define XO_WORK_DOT           F(0, 0, 2),   E(0, 0, 0, 0, 2, 1),  0, 1, "N",         0, OPS(E_N, E_N, E_ONE)
#define XO_WORK_NRM2          F(0, 0, 2),   E(0, 0, 0, 0, 1, 1),  0, 1, "N",         0, OPS(E_N, E_ONE)
/* unary: arithmetic per element averaged over the sub-ops (relu 1, tanh/exp ~10-20) */
#define XO_WORK_UNARY         F(0, 0, 4),   E(0, 0, 0, 0, 2, 0),  0, 1, "N",         0, OPS(E_N, E_N)
#define XO_WORK_BINARY        F(0, 0, 1),   E(0, 0, 0, 0, 3, 0),  0, 1, "N",         0, OPS(E_N, E_N, E_N)
#define XO_WORK_BIAS          F(0, 1, 0),   E(0, 0, 2, 0, 1, 0),  0, 2, "ROWS COLS", 1, OPS(E_MN, E_N)
#define XO_WORK_REDUCE        F(0, 0, 1),   E(0, 0, 0, 0, 1, 1),  0, 1, "N",         0, OPS(E_N, E_ONE)
#define XO_WORK_COPY          F(0, 0, 0),   E(0, 0, 0, 0, 2, 0),  0, 1, "N",         0, OPS(E_N, E_N)
#define XO_WORK_FILL          F(0, 0, 0),   E(0, 0, 0, 0, 1, 0),  0, 1, "N",         0, OPS(E_N)
#define XO_WORK_AXPBY         F(0, 0, 3),   E(0, 0, 0, 0, 3, 0),  0, 1, "N",         1, OPS(E_N, E_N)
#define XO_WORK_GER           F(0, 2, 0),   E(0, 0, 2, 1, 1, 0),  0, 2, "M N",       1, OPS(E_M, E_N, E_MN)
#define XO_WORK_BINARY_SCALAR F(0, 0, 1),   E(0, 0, 0, 0, 2, 0),  0, 1, "N",         0, OPS(E_N, E_N)
#define XO_WORK_SCALE_BY      F(0, 0, 1),   E(0, 0, 0, 0, 2, 1),  0, 1, "N",         1, OPS(E_ONE, E_N)
/* softmax: max, exp, sum, scale per element */
#define XO_WORK_SOFTMAX       F(0, 12, 0),  E(0, 0, 2, 0, 0, 0),  0, 2, "ROWS COLS", 0, OPS(E_MN, E_MN)
#define XO_WORK_REDUCE_AXIS   F(0, 1, 0),   E(0, 0, 1, 0, 1, 0),  0, 2, "ROWS COLS", 0, OPS(E_MN, E_N)
/* gemm, then bias and activation on C while it is in cache */
#define XO_WORK_GEMM_BIAS_ACT F(2, 5, 0),   E(1, 1, 2, 0, 1, 0),  1, 3, "M N K",     1, OPS(E_MK, E_KN, E_MN, E_N)
/* softmax_xent: softmax's work plus the gradient; x in, grad out, a label and a loss per row */
#define XO_WORK_SOFTMAX_XENT  F(0, 14, 0),  E(0, 0, 2, 2, 0, 0),  0, 2, "ROWS COLS", 0, OPS(E_MN, E_M, E_M, E_MN)
/* argmax: a compare per element; x in, an index per row out */
#define XO_WORK_ARGMAX        F(0, 1, 0),   E(0, 0, 1, 1, 0, 0),  0, 2, "ROWS COLS", 0, OPS(E_MN, E_M)

typedef struct work_row {
    double flops[3];
    double elements[6];
    int cube, ndims;
    const char *dims;
    int rmw;
    int operands[XO_MAX_ARGS];
} work_row;

#define XO_OP_ROW_(K, name_, nargs_, out_, operands_) [XO_OP_##K] = {name_, operands_, nargs_, out_},
const xo__op_info xo__ops[XO_OP_KIND_COUNT] = {XO_OP_MAP(XO_OP_ROW_)};
#undef XO_OP_ROW_

#define XO_WORK_ROW_(K, name_, nargs_, out_, operands_) [XO_OP_##K] = {XO_WORK_##K},
static const work_row work[XO_OP_KIND_COUNT] = {XO_OP_MAP(XO_WORK_ROW_)};
#undef XO_WORK_ROW_

/* Every row's output is one of its operands. (The enum, this table and the plugins'
 * tables all come from XO_OP_MAP; test_plugins checks the names and operand lists.) */
#define XO_CHECK_(K, name_, nargs_, out_, operands_)                                                 \
    _Static_assert(nargs_ >= 1 && nargs_ <= XO_MAX_ARGS && out_ >= 0 && out_ < nargs_,            \
                   "XO_OP_MAP row " #K ": operand count or output out of range");
XO_OP_MAP(XO_CHECK_)
#undef XO_CHECK_

static double dim1(size_t d) { return d ? (double)d : 1.0; }

void xo__op_cost_init(xo__op_cost *c, xo_op_kind kind, xo_dtype dtype, size_t m, size_t n, size_t k)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->dtype = dtype;
    if ((unsigned)kind >= XO_OP_KIND_COUNT)
        return;
    const work_row *w = &work[kind];
    double es = dtype == XO_F64 ? 8.0 : 4.0;
    double M = dim1(m), N = dim1(n), K = dim1(k);
    c->flops = w->flops[0] * M * N * K + w->flops[1] * M * N + w->flops[2] * N;
    const double *e = w->elements;
    c->bytes = (e[0] * M * K + e[1] * K * N + e[2] * M * N + e[3] * M + e[4] * N + e[5]) * es;
    c->size = w->cube ? cbrt(M * N * K) : M * N;
}

int xo__op_ndims(xo_op_kind kind) { return (unsigned)kind < XO_OP_KIND_COUNT ? work[kind].ndims : 0; }

const char *xo__op_dims_text(xo_op_kind kind)
{
    return (unsigned)kind < XO_OP_KIND_COUNT ? work[kind].dims : "";
}

double xo__op_operand_elements(xo_op_kind kind, int i, size_t m, size_t n, size_t k)
{
    if ((unsigned)kind >= XO_OP_KIND_COUNT || i < 0 || i >= xo__ops[kind].nargs)
        return 0.0;
    double M = dim1(m), N = dim1(n), K = dim1(k);
    switch (work[kind].operands[i]) {
    case E_MK: return M * K;
    case E_KN: return K * N;
    case E_MN: return M * N;
    case E_M: return M;
    case E_N: return N;
    default: return 1.0;
    }
}

int xo__op_reads_output(xo_op_kind kind) { return (unsigned)kind < XO_OP_KIND_COUNT && work[kind].rmw; }

void xo__op_shape_text(const xo_op_desc *d, char *out, size_t cap)
{
    switch (xo__op_ndims(d->kind)) {
    case 3: snprintf(out, cap, "%zux%zux%zu", d->m, d->n, d->k); break;
    case 2: snprintf(out, cap, "%zux%zu", d->m, d->n); break;
    default: snprintf(out, cap, "n=%zu", d->n); break;
    }
}

int xo__op_find(const char *name)
{
    for (int k = 0; k < XO_OP_KIND_COUNT; k++)
        if (strcmp(name, xo__ops[k].name) == 0)
            return k;
    return -1;
}
