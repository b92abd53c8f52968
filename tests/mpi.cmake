# examples/mpi_mlp under mpirun: 2 ranks against 1 (tests/mpi_mlp.sh). Skipped (77) where
# MPI was not found at configure time or mpirun is absent.
set(XO_MPI_WORK ${CMAKE_CURRENT_BINARY_DIR}/mpi)
if(TARGET mpi_mlp)
  set(xo_mpi_exe $<TARGET_FILE:mpi_mlp>)
else()
  set(xo_mpi_exe "")
endif()
add_test(NAME mpi_mlp
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi_mlp.sh "${MPIEXEC_EXECUTABLE}" "${xo_mpi_exe}" ${XO_MPI_WORK})
# The two ranks share one profile cache, as ranks on one machine do.
set(env "XO_CACHE_DIR=${XO_MPI_WORK}/cache")
if(XO_SANITIZE MATCHES "address|leak")
  # Open MPI's own leaks are suppressed (mpi_lsan.supp); full stacks, so that frames in
  # uninstrumented MPI code still name their caller.
  list(APPEND env "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/mpi_lsan.supp"
                  "ASAN_OPTIONS=fast_unwind_on_malloc=0")
endif()
set_tests_properties(mpi_mlp PROPERTIES LABELS mpi SKIP_RETURN_CODE 77 PROCESSORS 2 TIMEOUT 300
  ENVIRONMENT "${env}")
