/* The fused family: gemm_bias_act = C = act(alpha op(A) op(B) + beta C + bias), the gemm
 * in cuBLAS (cuda_blas.c) followed by ONE epilogue kernel over C that adds the bias and
 * applies the activation. alpha == 0 reads neither A nor B: no gemm, the epilogue
 * computes act(beta C + bias), not reading C where beta == 0. */
#include "cuda_internal.h"

xo_status xo__cuda_gemm_bias_act(xo__cuda_state *st, xo__cuda_device *d, const xo_op_desc *op)
{
    const int f64 = op->dtype == XO_F64;
    const size_t es = xo__cuda_esize(op);
    double beta = op->beta;
    if (op->alpha != 0) {
        xo_op_desc g = *op;
        g.kind = XO_OP_GEMM;
        g.narg = 3;
        XO_CUDA_TRY(xo__cuda_gemm(st, d, &g));
        if (op->narg < 4 && op->subop == XO_IDENTITY) return XO_OK;
        beta = 1; /* C already holds alpha op(A) op(B) + beta C */
    }
    const int row_major = op->layout == XO_ROW_MAJOR;
    CUdeviceptr c = XO_CUDA_DEVPTR(op, 2, es), bias = op->narg >= 4 ? XO_CUDA_DEVPTR(op, 3, es) : 0;
    unsigned long long ld = op->ld[2], outer = row_major ? op->m : op->n, inner = row_major ? op->n : op->m;
    int bias_inner = row_major, act = op->subop;
    xo__cuda_scalar b;
    void *params[] = {&c, &ld, &outer, &inner, &bias, &bias_inner, xo__cuda_scalar_of(&b, f64, beta), &act};
    return xo__cuda_launch(st, d, XO_CUDA_K_EPILOGUE, f64, xo__cuda_grid_for(inner, XO_CUDA_MAX_GRID),
                           xo__cuda_grid_cap(outer), params);
}
