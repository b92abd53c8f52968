/* How the CPU plugin reaches OpenBLAS. Included after <cblas.h>.
 *
 * In libcrossover.a and libcrossover.so it calls OpenBLAS by name, linked as usual.
 * Inside libcrossover_blas.so (built with XO_CPU_OPENBLAS_PRIVATE) those names are the
 * drop-in's own exports: called by name, crossover's CPU device would call the drop-in
 * again and recurse. There the plugin calls the drop-in's pointers into the CPU BLAS it
 * loaded privately (blas/blas_forward.c). Every OpenBLAS entry the plugin uses is
 * listed here. */
#ifndef XO_CPU_OPENBLAS_H
#define XO_CPU_OPENBLAS_H
#ifdef XO_CPU_OPENBLAS_PRIVATE

#define XO_CPU_OPENBLAS_NAMES(X)                                                                       \
    X(cblas_sgemm) X(cblas_dgemm) X(cblas_sgemv) X(cblas_dgemv) X(cblas_sger) X(cblas_dger)           \
    X(cblas_saxpy) X(cblas_daxpy) X(cblas_saxpby) X(cblas_daxpby) X(cblas_sscal) X(cblas_dscal)       \
    X(cblas_scopy) X(cblas_dcopy) X(cblas_sdot) X(cblas_ddot) X(cblas_snrm2) X(cblas_dnrm2)           \
    X(openblas_set_num_threads) X(openblas_get_num_threads) X(openblas_get_config) X(openblas_get_corename)
#define XO_CPU_OPENBLAS_DECLARE(name) extern __attribute__((visibility("hidden"))) void (*xo__fwd_##name)(void);
XO_CPU_OPENBLAS_NAMES(XO_CPU_OPENBLAS_DECLARE)
#undef XO_CPU_OPENBLAS_DECLARE
/* The pointer, with OpenBLAS's prototype of `name` (cblas.h). */
#define XO_CPU_OPENBLAS(name) ((__typeof__(name) *)xo__fwd_##name)

#define cblas_sgemm XO_CPU_OPENBLAS(cblas_sgemm)
#define cblas_dgemm XO_CPU_OPENBLAS(cblas_dgemm)
#define cblas_sgemv XO_CPU_OPENBLAS(cblas_sgemv)
#define cblas_dgemv XO_CPU_OPENBLAS(cblas_dgemv)
#define cblas_sger XO_CPU_OPENBLAS(cblas_sger)
#define cblas_dger XO_CPU_OPENBLAS(cblas_dger)
#define cblas_saxpy XO_CPU_OPENBLAS(cblas_saxpy)
#define cblas_daxpy XO_CPU_OPENBLAS(cblas_daxpy)
#define cblas_saxpby XO_CPU_OPENBLAS(cblas_saxpby)
#define cblas_daxpby XO_CPU_OPENBLAS(cblas_daxpby)
#define cblas_sscal XO_CPU_OPENBLAS(cblas_sscal)
#define cblas_dscal XO_CPU_OPENBLAS(cblas_dscal)
#define cblas_scopy XO_CPU_OPENBLAS(cblas_scopy)
#define cblas_dcopy XO_CPU_OPENBLAS(cblas_dcopy)
#define cblas_sdot XO_CPU_OPENBLAS(cblas_sdot)
#define cblas_ddot XO_CPU_OPENBLAS(cblas_ddot)
#define cblas_snrm2 XO_CPU_OPENBLAS(cblas_snrm2)
#define cblas_dnrm2 XO_CPU_OPENBLAS(cblas_dnrm2)
#define openblas_set_num_threads XO_CPU_OPENBLAS(openblas_set_num_threads)
#define openblas_get_num_threads XO_CPU_OPENBLAS(openblas_get_num_threads)
#define openblas_get_config XO_CPU_OPENBLAS(openblas_get_config)
#define openblas_get_corename XO_CPU_OPENBLAS(openblas_get_corename)

#endif /* XO_CPU_OPENBLAS_PRIVATE */
#endif /* XO_CPU_OPENBLAS_H */
