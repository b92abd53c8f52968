/* A C program against the installed drop-in only (pkg-config crossover-blas or
 * crossover::blas): both ABIs of dgemm, checked against a plain loop. Exit 0 on success. */
#include <stddef.h>
#include <stdio.h>

void cblas_dgemm(int layout, int ta, int tb, int m, int n, int k, double alpha, const double *a, int lda,
                 const double *b, int ldb, double beta, double *c, int ldc);
void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k, const double *alpha,
            const double *a, const int *lda, const double *b, const int *ldb, const double *beta, double *c,
            const int *ldc, size_t lta, size_t ltb);

int main(void)
{
    enum { N = 40 };
    static double a[N * N], b[N * N], c[N * N], f[N * N];
    for (int i = 0; i < N * N; i++)
        a[i] = (double)(i % 7) - 3, b[i] = (double)(i % 5) - 2;
    cblas_dgemm(101, 111, 111, N, N, N, 1.0, a, N, b, N, 0.0, c, N); /* row-major */
    int n = N;
    double one = 1, zero = 0;
    dgemm_("N", "N", &n, &n, &n, &one, b, &n, a, &n, &zero, f, &n, 1, 1); /* the same C, column-major */
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int l = 0; l < N; l++)
                s += a[i * N + l] * b[l * N + j];
            if (c[i * N + j] != s || f[i * N + j] != s) {
                fprintf(stderr, "C[%d][%d] = %g / %g, want %g\n", i, j, c[i * N + j], f[i * N + j], s);
                return 1;
            }
        }
    puts("blas consumer ok");
    return 0;
}
