/* Every routine libcrossover_blas.so exports, once: the reference BLAS (Fortran ABI and
 * CBLAS) as OpenBLAS also has it, plus ?axpby. X(name, route), route one of
 *   OWN    defined in C here (blas_level*.c): placed by crossover over the caller's memory
 *   FWD    forwarded as is to the CPU BLAS loaded privately (XO_BLAS_LIB)
 * Every entry also gets a pointer into the private CPU BLAS (xo__fwd_<name>), which the
 * OWN routines use for the calls they hand over. XO_BLAS_POINTERS are pointers only. */
#ifndef XO_BLAS_NAMES_H
#define XO_BLAS_NAMES_H

#define XO_BLAS_FORTRAN(X) \
    X(caxpby_, FWD) X(caxpy_, FWD) X(ccopy_, FWD) X(cdotc_, FWD) X(cdotu_, FWD) X(cgbmv_, FWD) \
    X(cgemm_, FWD) X(cgemv_, FWD) X(cgerc_, FWD) X(cgeru_, FWD) X(chbmv_, FWD) X(chemm_, FWD) X(chemv_, FWD) \
    X(cher2_, FWD) X(cher2k_, FWD) X(cher_, FWD) X(cherk_, FWD) X(chpmv_, FWD) X(chpr2_, FWD) X(chpr_, FWD) \
    X(crotg_, FWD) X(cscal_, FWD) X(csrot_, FWD) X(csscal_, FWD) X(cswap_, FWD) X(csymm_, FWD) \
    X(csyr2k_, FWD) X(csyrk_, FWD) X(ctbmv_, FWD) X(ctbsv_, FWD) X(ctpmv_, FWD) X(ctpsv_, FWD) \
    X(ctrmm_, FWD) X(ctrmv_, FWD) X(ctrsm_, FWD) X(ctrsv_, FWD) X(dasum_, FWD) X(daxpby_, OWN) \
    X(daxpy_, OWN) X(dcabs1_, FWD) X(dcopy_, OWN) X(ddot_, OWN) X(dgbmv_, FWD) X(dgemm_, OWN) \
    X(dgemv_, OWN) X(dger_, OWN) X(dnrm2_, OWN) X(drot_, FWD) X(drotg_, FWD) X(drotm_, FWD) X(drotmg_, FWD) \
    X(dsbmv_, FWD) X(dscal_, OWN) X(dsdot_, FWD) X(dspmv_, FWD) X(dspr2_, FWD) X(dspr_, FWD) X(dswap_, FWD) \
    X(dsymm_, FWD) X(dsymv_, FWD) X(dsyr2_, FWD) X(dsyr2k_, FWD) X(dsyr_, FWD) X(dsyrk_, FWD) X(dtbmv_, FWD) \
    X(dtbsv_, FWD) X(dtpmv_, FWD) X(dtpsv_, FWD) X(dtrmm_, FWD) X(dtrmv_, FWD) X(dtrsm_, FWD) X(dtrsv_, FWD) \
    X(dzasum_, FWD) X(dznrm2_, FWD) X(icamax_, FWD) X(idamax_, FWD) X(isamax_, FWD) X(izamax_, FWD) \
    X(lsame_, FWD) X(sasum_, FWD) X(saxpby_, OWN) X(saxpy_, OWN) X(scabs1_, FWD) X(scasum_, FWD) \
    X(scnrm2_, FWD) X(scopy_, OWN) X(sdot_, OWN) X(sdsdot_, FWD) X(sgbmv_, FWD) X(sgemm_, OWN) \
    X(sgemv_, OWN) X(sger_, OWN) X(snrm2_, OWN) X(srot_, FWD) X(srotg_, FWD) X(srotm_, FWD) X(srotmg_, FWD) \
    X(ssbmv_, FWD) X(sscal_, OWN) X(sspmv_, FWD) X(sspr2_, FWD) X(sspr_, FWD) X(sswap_, FWD) X(ssymm_, FWD) \
    X(ssymv_, FWD) X(ssyr2_, FWD) X(ssyr2k_, FWD) X(ssyr_, FWD) X(ssyrk_, FWD) X(stbmv_, FWD) X(stbsv_, FWD) \
    X(stpmv_, FWD) X(stpsv_, FWD) X(strmm_, FWD) X(strmv_, FWD) X(strsm_, FWD) X(strsv_, FWD) \
    X(xerbla_, OWN) X(xerbla_array_, FWD) X(zaxpby_, FWD) X(zaxpy_, FWD) X(zcopy_, FWD) X(zdotc_, FWD) \
    X(zdotu_, FWD) X(zdrot_, FWD) X(zdscal_, FWD) X(zgbmv_, FWD) X(zgemm_, FWD) X(zgemv_, FWD) \
    X(zgerc_, FWD) X(zgeru_, FWD) X(zhbmv_, FWD) X(zhemm_, FWD) X(zhemv_, FWD) X(zher2_, FWD) \
    X(zher2k_, FWD) X(zher_, FWD) X(zherk_, FWD) X(zhpmv_, FWD) X(zhpr2_, FWD) X(zhpr_, FWD) X(zrotg_, FWD) \
    X(zscal_, FWD) X(zswap_, FWD) X(zsymm_, FWD) X(zsyr2k_, FWD) X(zsyrk_, FWD) X(ztbmv_, FWD) \
    X(ztbsv_, FWD) X(ztpmv_, FWD) X(ztpsv_, FWD) X(ztrmm_, FWD) X(ztrmv_, FWD) X(ztrsm_, FWD) X(ztrsv_, FWD)

#define XO_BLAS_CBLAS(X) \
    X(cblas_caxpby, FWD) X(cblas_caxpy, FWD) X(cblas_ccopy, FWD) X(cblas_cdotc_sub, FWD) \
    X(cblas_cdotu_sub, FWD) X(cblas_cgbmv, FWD) X(cblas_cgemm, FWD) X(cblas_cgemv, FWD) X(cblas_cgerc, FWD) \
    X(cblas_cgeru, FWD) X(cblas_chbmv, FWD) X(cblas_chemm, FWD) X(cblas_chemv, FWD) X(cblas_cher, FWD) \
    X(cblas_cher2, FWD) X(cblas_cher2k, FWD) X(cblas_cherk, FWD) X(cblas_chpmv, FWD) X(cblas_chpr, FWD) \
    X(cblas_chpr2, FWD) X(cblas_crotg, FWD) X(cblas_cscal, FWD) X(cblas_csrot, FWD) X(cblas_csscal, FWD) \
    X(cblas_cswap, FWD) X(cblas_csymm, FWD) X(cblas_csyr2k, FWD) X(cblas_csyrk, FWD) X(cblas_ctbmv, FWD) \
    X(cblas_ctbsv, FWD) X(cblas_ctpmv, FWD) X(cblas_ctpsv, FWD) X(cblas_ctrmm, FWD) X(cblas_ctrmv, FWD) \
    X(cblas_ctrsm, FWD) X(cblas_ctrsv, FWD) X(cblas_dasum, FWD) X(cblas_daxpby, OWN) X(cblas_daxpy, OWN) \
    X(cblas_dcopy, OWN) X(cblas_ddot, OWN) X(cblas_dgbmv, FWD) X(cblas_dgemm, OWN) X(cblas_dgemv, OWN) \
    X(cblas_dger, OWN) X(cblas_dnrm2, OWN) X(cblas_drot, FWD) X(cblas_drotg, FWD) X(cblas_drotm, FWD) \
    X(cblas_drotmg, FWD) X(cblas_dsbmv, FWD) X(cblas_dscal, OWN) X(cblas_dsdot, FWD) X(cblas_dspmv, FWD) \
    X(cblas_dspr, FWD) X(cblas_dspr2, FWD) X(cblas_dswap, FWD) X(cblas_dsymm, FWD) X(cblas_dsymv, FWD) \
    X(cblas_dsyr, FWD) X(cblas_dsyr2, FWD) X(cblas_dsyr2k, FWD) X(cblas_dsyrk, FWD) X(cblas_dtbmv, FWD) \
    X(cblas_dtbsv, FWD) X(cblas_dtpmv, FWD) X(cblas_dtpsv, FWD) X(cblas_dtrmm, FWD) X(cblas_dtrmv, FWD) \
    X(cblas_dtrsm, FWD) X(cblas_dtrsv, FWD) X(cblas_dzasum, FWD) X(cblas_dznrm2, FWD) X(cblas_icamax, FWD) \
    X(cblas_idamax, FWD) X(cblas_isamax, FWD) X(cblas_izamax, FWD) X(cblas_sasum, FWD) \
    X(cblas_saxpby, OWN) X(cblas_saxpy, OWN) X(cblas_scasum, FWD) X(cblas_scnrm2, FWD) \
    X(cblas_scopy, OWN) X(cblas_sdot, OWN) X(cblas_sdsdot, FWD) X(cblas_sgbmv, FWD) X(cblas_sgemm, OWN) \
    X(cblas_sgemv, OWN) X(cblas_sger, OWN) X(cblas_snrm2, OWN) X(cblas_srot, FWD) X(cblas_srotg, FWD) \
    X(cblas_srotm, FWD) X(cblas_srotmg, FWD) X(cblas_ssbmv, FWD) X(cblas_sscal, OWN) X(cblas_sspmv, FWD) \
    X(cblas_sspr, FWD) X(cblas_sspr2, FWD) X(cblas_sswap, FWD) X(cblas_ssymm, FWD) X(cblas_ssymv, FWD) \
    X(cblas_ssyr, FWD) X(cblas_ssyr2, FWD) X(cblas_ssyr2k, FWD) X(cblas_ssyrk, FWD) X(cblas_stbmv, FWD) \
    X(cblas_stbsv, FWD) X(cblas_stpmv, FWD) X(cblas_stpsv, FWD) X(cblas_strmm, FWD) X(cblas_strmv, FWD) \
    X(cblas_strsm, FWD) X(cblas_strsv, FWD) X(cblas_xerbla, OWN) X(cblas_zaxpby, FWD) X(cblas_zaxpy, FWD) \
    X(cblas_zcopy, FWD) X(cblas_zdotc_sub, FWD) X(cblas_zdotu_sub, FWD) X(cblas_zdrot, FWD) \
    X(cblas_zdscal, FWD) X(cblas_zgbmv, FWD) X(cblas_zgemm, FWD) X(cblas_zgemv, FWD) X(cblas_zgerc, FWD) \
    X(cblas_zgeru, FWD) X(cblas_zhbmv, FWD) X(cblas_zhemm, FWD) X(cblas_zhemv, FWD) X(cblas_zher, FWD) \
    X(cblas_zher2, FWD) X(cblas_zher2k, FWD) X(cblas_zherk, FWD) X(cblas_zhpmv, FWD) X(cblas_zhpr, FWD) \
    X(cblas_zhpr2, FWD) X(cblas_zrotg, FWD) X(cblas_zscal, FWD) X(cblas_zswap, FWD) X(cblas_zsymm, FWD) \
    X(cblas_zsyr2k, FWD) X(cblas_zsyrk, FWD) X(cblas_ztbmv, FWD) X(cblas_ztbsv, FWD) X(cblas_ztpmv, FWD) \
    X(cblas_ztpsv, FWD) X(cblas_ztrmm, FWD) X(cblas_ztrmv, FWD) X(cblas_ztrsm, FWD) X(cblas_ztrsv, FWD)

/* Not BLAS, not exported: entries the CPU plugin needs from the same private library. */
#define XO_BLAS_POINTERS(X)                                                                  \
    X(openblas_set_num_threads, PTR) X(openblas_get_num_threads, PTR) X(openblas_get_config, PTR) \
        X(openblas_get_corename, PTR)

#endif /* XO_BLAS_NAMES_H */
