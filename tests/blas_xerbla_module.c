/* A module a program loads itself (dlopen, RTLD_LOCAL), as numpy loads lapack_lite: it has
 * its own xerbla_ and cblas_xerbla, which record what they are given, and calls BLAS with
 * bad arguments. Without LD_PRELOAD its handlers win in its own scope; with the drop-in
 * preloaded, the drop-in's global ones are found first and must hand over to these. */
#include <stddef.h>
#include <stdio.h>

enum { CblasRowMajor = 101, CblasNoTrans = 111 };
void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k, const double *alpha,
            const double *a, const int *lda, const double *b, const int *ldb, const double *beta, double *c,
            const int *ldc, size_t la, size_t lb);
void cblas_sgemv(int layout, int trans, int m, int n, float alpha, const float *a, int lda, const float *x,
                 int incx, float beta, float *y, int incy);

char module_name[32];
int module_info, module_calls;

void xerbla_(const char *srname, const int *info, size_t len);
void xerbla_(const char *srname, const int *info, size_t len)
{
    snprintf(module_name, sizeof module_name, "%.*s", (int)len, srname);
    module_info = *info;
    module_calls++;
}
void cblas_xerbla(int p, const char *rout, const char *form, ...);
void cblas_xerbla(int p, const char *rout, const char *form, ...)
{
    (void)form;
    snprintf(module_name, sizeof module_name, "%s", rout);
    module_info = p;
    module_calls++;
}

/* DGEMM with M = -1 (INFO 3). */
void module_bad_dgemm(void);
void module_bad_dgemm(void)
{
    double a[4] = {0};
    int neg = -1, two = 2;
    double one = 1, zero = 0;
    dgemm_("N", "N", &neg, &two, &two, &one, a, &two, a, &two, &zero, a, &two, 1, 1);
}
/* cblas_sgemv, column-major, lda 1 < M 2 (CBLAS INFO 7). */
void module_bad_sgemv(void);
void module_bad_sgemv(void)
{
    float a[4] = {0};
    cblas_sgemv(102, CblasNoTrans, 2, 2, 1, a, 1, a, 1, 0, a, 1);
}
/* The module's own call of its handler by name (numpy's lapack_lite.xerbla). */
void module_own_call(void);
void module_own_call(void)
{
    int info = 9;
    xerbla_("OWN   ", &info, 6);
}
