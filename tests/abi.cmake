# The closed ABI: libcrossover.so exports exactly crossover.h's functions (each XO_API),
# libcrossover_blas.so exactly the BLAS/CBLAS names of blas_names.h (tests/abi_exports.sh).
get_target_property(_xo_blas_src crossover_blas SOURCE_DIR)
add_test(NAME abi_exports
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/abi_exports.sh ${CMAKE_C_COMPILER} ${CMAKE_NM}
          "${PROJECT_SOURCE_DIR}/core/include:${XO_GENERATED_INCLUDE}"
          $<TARGET_FILE:crossover_shared> ${_xo_blas_src}/blas_names.h $<TARGET_FILE:crossover_blas>)
set_tests_properties(abi_exports PROPERTIES LABELS abi)
