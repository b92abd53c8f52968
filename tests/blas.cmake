# libcrossover_blas.so, the BLAS drop-in. test_blas links the drop-in only (not the
# crossover archive, not OpenBLAS), so every BLAS name it calls is the drop-in's.
add_executable(test_blas test_blas.c)
target_include_directories(test_blas PRIVATE $<TARGET_PROPERTY:crossover::openblas,INTERFACE_INCLUDE_DIRECTORIES>)
target_link_libraries(test_blas PRIVATE crossover_blas ${XO_CMOCKA} Threads::Threads m)
xo_target_warnings(test_blas)
# Under ASan: the first BLAS call (which creates the context, and PoCL's LLVM with it) may
# come from a thread that then exits; LLVM gives that thread a malloc'ed signal stack,
# which ASan's own thread teardown then fails to unmap.
set(XO_BLAS_ENV XO_CALIBRATE=off)
if(XO_SANITIZE)
  list(APPEND XO_BLAS_ENV ASAN_OPTIONS=use_sigaltstack=0)
  # PoCL's first compile of CLBlast's kernels loses some of its own and LLVM's memory
  # (seen once in blas_opencl, on an empty kernel cache; never again with the cache
  # warm): suppressed by library, crossover's frames never (tests/lsan.supp).
  list(APPEND XO_BLAS_ENV LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/lsan.supp)
endif()
# Small calls straight to OpenBLAS; every call placed on the CPU (XO_BLAS_PLACE=all: the
# CPU plugin inside the drop-in reaching OpenBLAS must not come back into the drop-in);
# XO_DEVICE=cpu alone (every call straight to OpenBLAS); on OpenCL.
xo_add_test(blas_auto EXE test_blas ENV ${XO_BLAS_ENV})
xo_add_test(blas_cpu EXE test_blas ENV ${XO_BLAS_ENV} XO_DEVICE=cpu XO_BLAS_PLACE=all)
xo_add_test(blas_cpu_direct EXE test_blas ENV ${XO_BLAS_ENV} XO_DEVICE=cpu XO_LOG=summary)
set_tests_properties(blas_cpu_direct PROPERTIES
  PASS_REGULAR_EXPRESSION "crossover_blas summary.*dgemm +cblas +[1-9][0-9]* *\n"
  FAIL_REGULAR_EXPRESSION "dgemm +cblas +[0-9]+ +[1-9]")
xo_add_test(blas_opencl EXE test_blas LABELS opencl ENV ${XO_BLAS_ENV} XO_DEVICE=opencl)
# Nothing in the drop-in calls a BLAS name through the PLT (which would reach the drop-in's
# own export and recurse) except the error handlers a program may replace.
find_program(XO_OBJDUMP objdump)
if(XO_OBJDUMP)
  add_test(NAME blas_no_recursion COMMAND sh -c
    "! '${XO_OBJDUMP}' -d --no-show-raw-insn '$<TARGET_FILE:crossover_blas>' | grep -E '(call|jmp).*<(cblas_[a-z0-9]+|[a-z0-9]+_)@plt>' | grep -v -E '<(xerbla_|cblas_xerbla)@plt>'")
endif()
# XO_LOG=summary: the drop-in's table at exit shows the placed calls per device (gemm,
# and the routines placed since the core has them: ger, axpby, copy).
xo_add_test(blas_summary EXE test_blas ENV ${XO_BLAS_ENV} XO_DEVICE=cpu XO_BLAS_PLACE=all XO_LOG=summary)
set_tests_properties(blas_summary PROPERTIES
  PASS_REGULAR_EXPRESSION "crossover_blas summary.*dgemm +cblas +[0-9]+ +[1-9].*dger +cblas +[0-9]+ +[1-9].*daxpby +cblas +[0-9]+ +[1-9].*dcopy +cblas +[0-9]+ +[1-9]")

# Unchanged programs: numpy (Debian's python3-numpy) and a Fortran program built against
# -lblas, run on the drop-in. A sanitizer build cannot be preloaded into them: skipped.
set(XO_BLAS_LIB_FILE $<TARGET_FILE:crossover_blas>)
find_library(XO_REFERENCE_BLAS NAMES libblas.so.3 PATH_SUFFIXES blas NO_CACHE)
find_library(XO_BLIS NAMES libblis.so.4 libblis.so NO_CACHE)
set(XO_OTHER_CPU_BLAS)
foreach(lib IN ITEMS XO_REFERENCE_BLAS XO_BLIS)
  if(${lib})
    list(APPEND XO_OTHER_CPU_BLAS ${${lib}})
  endif()
endforeach()
add_test(NAME blas_numpy COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/blas_numpy.py ${XO_BLAS_LIB_FILE}
         ${XO_OTHER_CPU_BLAS})
add_test(NAME blas_fortran COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/blas_fortran.sh ${XO_BLAS_LIB_FILE}
         ${CMAKE_CURRENT_SOURCE_DIR}/blas_fortran.f90 ${CMAKE_CURRENT_BINARY_DIR}/blas_fortran)
set_tests_properties(blas_numpy blas_fortran PROPERTIES SKIP_RETURN_CODE 77
  ENVIRONMENT "XO_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/cache/blas;XO_CALIBRATE=off;XO_SANITIZE=${XO_SANITIZE}")

# XO_BLAS_LIB. A library lacking routines (blas_partial.c): what it has runs there, the
# rest on the default CPU BLAS, with a warning (checked) and right answers.
add_library(blas_partial MODULE blas_partial.c)
add_executable(test_blas_lib test_blas_lib.c)
target_include_directories(test_blas_lib PRIVATE $<TARGET_PROPERTY:crossover::openblas,INTERFACE_INCLUDE_DIRECTORIES>)
target_link_libraries(test_blas_lib PRIVATE crossover_blas ${XO_CMOCKA} m)
xo_target_warnings(test_blas_lib)
add_test(NAME blas_lib_partial COMMAND sh -c
  "'$<TARGET_FILE:test_blas_lib>' 2>'${CMAKE_CURRENT_BINARY_DIR}/blas_lib_partial.err' && grep 'lacks .* they run on' '${CMAKE_CURRENT_BINARY_DIR}/blas_lib_partial.err'")
set_tests_properties(blas_lib_partial PROPERTIES ENVIRONMENT
  "${XO_BLAS_ENV};XO_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/cache/blas_lib;XO_TEST_PARTIAL=1;XO_BLAS_LIB=$<TARGET_FILE:blas_partial>")
# Other complete CPU BLAS libraries, whose CBLAS calls their own Fortran names (which the
# global scope gives to the drop-in): Debian's reference BLAS (libblas3) and BLIS
# (libblis4), where installed. A call that came back into the drop-in's start would wait
# for ever: the timeout fails it.
foreach(lib IN ITEMS REFERENCE_BLAS BLIS)
  if(XO_${lib})
    string(TOLOWER ${lib} low)
    foreach(dev IN ITEMS auto cpu)
      xo_add_test(blas_lib_${low}_${dev} EXE test_blas_lib ENV ${XO_BLAS_ENV} XO_BLAS_LIB=${XO_${lib}})
      if(dev STREQUAL "cpu")
        set_property(TEST blas_lib_${low}_${dev} APPEND PROPERTY ENVIRONMENT XO_DEVICE=cpu XO_BLAS_PLACE=all)
      endif()
      set_tests_properties(blas_lib_${low}_${dev} PROPERTIES TIMEOUT 120)
      if(XO_SANITIZE MATCHES "address" AND lib STREQUAL "BLIS")
        # LeakSanitizer's tracer crashes at exit while BLIS's own threads live ("Tracer
        # caught signal 11", after every check passed); the leak check is off there only.
        set_property(TEST blas_lib_${low}_${dev} APPEND PROPERTY ENVIRONMENT ASAN_OPTIONS=detect_leaks=0)
      endif()
    endforeach()
  else()
    message(STATUS "crossover: ${lib} not found; its XO_BLAS_LIB tests are not built")
  endif()
endforeach()

# LD_PRELOAD: the handlers of a module the program loads itself take the drop-in's place.
add_library(blas_xerbla_module MODULE blas_xerbla_module.c)
target_link_libraries(blas_xerbla_module PRIVATE crossover_blas)
add_executable(test_blas_preload test_blas_preload.c)
target_link_libraries(test_blas_preload PRIVATE ${XO_CMOCKA} ${CMAKE_DL_LIBS})
xo_target_warnings(test_blas_preload)
xo_add_test(blas_preload_xerbla EXE test_blas_preload ARGS $<TARGET_FILE:blas_xerbla_module>
            ENV ${XO_BLAS_ENV} LD_PRELOAD=$<TARGET_FILE:crossover_blas>)
if(XO_SANITIZE)
  # the instrumented drop-in preloaded ahead of the sanitizer runtime the program links
  set_property(TEST blas_preload_xerbla APPEND PROPERTY ENVIRONMENT ASAN_OPTIONS=verify_asan_link_order=0:use_sigaltstack=0)
endif()

# The start: small calls build no context and start no thread; the first call big enough
# for a device to plausibly win (by the built-in profiles) creates it.
add_executable(test_blas_start test_blas_start.c)
target_include_directories(test_blas_start PRIVATE $<TARGET_PROPERTY:crossover::openblas,INTERFACE_INCLUDE_DIRECTORIES>)
target_link_libraries(test_blas_start PRIVATE crossover_blas ${XO_CMOCKA})
xo_target_warnings(test_blas_start)
xo_add_test(blas_start EXE test_blas_start ENV ${XO_BLAS_ENV} XO_LOG=info)
set_tests_properties(blas_start PROPERTIES PASS_REGULAR_EXPRESSION
  "gemm leaves the CPU above work [0-9.e+]+ .float.*no context yet.*gemm leaves the CPU above work .*the devices found.*PASSED.*2 test")
# An OpenBLAS that picks Prescott on a CPU with AVX2 or AVX-512 while OPENBLAS_CORETYPE is
# unset (blas_old_core.c): the drop-in loads it again with the variable set to the core
# that suits the CPU (test_blas_lib's answers stay right); skipped on a CPU without AVX2.
add_library(blas_old_core MODULE blas_old_core.c)
target_link_libraries(blas_old_core PRIVATE crossover::openblas)
set(XO_CORE_LOG ${CMAKE_CURRENT_BINARY_DIR}/blas_old_core.log)
add_test(NAME blas_reload_core COMMAND sh -c
  "grep -qw avx2 /proc/cpuinfo || exit 77; rm -f '${XO_CORE_LOG}' && env -u OPENBLAS_CORETYPE '$<TARGET_FILE:test_blas_lib>' && sed -n 1p '${XO_CORE_LOG}' | grep -qx 'load OPENBLAS_CORETYPE=(unset)' && sed -n 2p '${XO_CORE_LOG}' | grep -Eqx 'load OPENBLAS_CORETYPE=(SkylakeX|Haswell|Zen)'")
set_tests_properties(blas_reload_core PROPERTIES SKIP_RETURN_CODE 77 ENVIRONMENT
  "${XO_BLAS_ENV};XO_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/cache/blas_reload;XO_BLAS_LIB=$<TARGET_FILE:blas_old_core>;XO_TEST_CORE_LOG=${XO_CORE_LOG}")
