# OpenCL plugin tests (run on PoCL in CI; skipped, exit 77, without an OpenCL device).
find_package(OpenCL REQUIRED)
find_package(XoCLBlast REQUIRED)

# The kernel binary cache: reused by a second context; a damaged entry is rebuilt.
xo_add_test(test_opencl_cache SOURCES test_opencl_cache.c LIBS xo_testutil m LABELS opencl
            ENV XO_CALIBRATE=off)
target_include_directories(test_opencl_cache PRIVATE ${PROJECT_SOURCE_DIR}/plugins/opencl)

# Error translation: every cl_int / CLBlastStatusCode has a name and a status.
xo_add_test(test_opencl_status SOURCES test_opencl_status.c LIBS xo_testutil m OpenCL::OpenCL crossover::clblast LABELS opencl)
target_include_directories(test_opencl_status PRIVATE ${PROJECT_SOURCE_DIR}/plugins/opencl
                           ${PROJECT_SOURCE_DIR}/core/include)
target_compile_definitions(test_opencl_status PRIVATE CL_TARGET_OPENCL_VERSION=120)

# No OpenCL platform at all: no devices, no error (ocl-icd reads OCL_ICD_VENDORS).
set(_xo_no_icd_dir ${CMAKE_CURRENT_BINARY_DIR}/no-opencl-vendors)
file(MAKE_DIRECTORY ${_xo_no_icd_dir})
xo_add_test(test_opencl_noplatform SOURCES test_opencl_noplatform.c LIBS xo_testutil m LABELS opencl
            ENV XO_CALIBRATE=off OCL_ICD_VENDORS=${_xo_no_icd_dir} OCL_ICD_FILENAMES=)

# The plugin's own paths for the neural-network ops: gemm_bias_act with alpha == 0 runs no product
# (NaN/Inf in A, B, and in C where beta == 0, never reach C); copy and fill move bits.
xo_add_test(test_opencl_nn SOURCES test_opencl_nn.c LIBS xo_testutil m LABELS opencl ENV XO_CALIBRATE=off)

# A device allocation the memory limit cannot back (RLIMIT_AS, set by the test in a
# forked child) falls back to the CPU instead of aborting inside the OpenCL runtime.
xo_add_test(test_alloc_limit SOURCES test_alloc_limit.c LIBS xo_testutil m LABELS opencl
            ENV XO_CALIBRATE=off XO_ZERO_COPY=off)

# Every own kernel once at small odd sizes, strides and offsets, on the default OpenCL
# device here; tests/oclgrind.sh runs the same program under Oclgrind.
xo_add_test(test_cl_kernels SOURCES test_cl_kernels.c LIBS xo_testutil m LABELS opencl ENV XO_CALIBRATE=off)
# The same program under Oclgrind (out-of-bounds accesses, data races, API errors; every
# kernel of kernels_cl/ must run). Skipped (77) where Oclgrind is not installed.
add_test(NAME oclgrind_kernels
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/oclgrind.sh $<TARGET_FILE:test_cl_kernels>
          ${PROJECT_SOURCE_DIR}/kernels_cl ${CMAKE_CURRENT_BINARY_DIR}/oclgrind)
set_tests_properties(oclgrind_kernels PROPERTIES LABELS "oclgrind;opencl" SKIP_RETURN_CODE 77 TIMEOUT 600)
# The "xo_chain" extra (plans' fused element-wise chains): random chains of every step kind
# as one generated kernel against a step-by-step reference, the compile fault, the kernel
# caches; through the plugin's vtable. And the same program under Oclgrind.
xo_add_test(test_cl_chain SOURCES test_cl_chain.c LIBS xo_testutil m Threads::Threads LABELS opencl
            ENV XO_CALIBRATE=off)
target_include_directories(test_cl_chain PRIVATE ${PROJECT_SOURCE_DIR}/plugins/opencl)
add_test(NAME oclgrind_chain
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/oclgrind.sh $<TARGET_FILE:test_cl_chain> xo_chain
          ${CMAKE_CURRENT_BINARY_DIR}/oclgrind_chain)
set_tests_properties(oclgrind_chain PROPERTIES LABELS "oclgrind;opencl" SKIP_RETURN_CODE 77 TIMEOUT 600)
# Those runtimes' own leaks, in a sanitizer build (tests/lsan.supp).
set(_xo_lsan "")
if(XO_SANITIZE MATCHES "address|leak")
  set(_xo_lsan "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/lsan.supp")
  set_tests_properties(oclgrind_kernels oclgrind_chain PROPERTIES ENVIRONMENT "${_xo_lsan}")
endif()

# A second vendor: the OpenCL conformance suite and the own kernels on Intel's OpenCL CPU
# runtime (PyPI intel-opencl-rt, installed by .ci/deps), the only platform the programs
# see there. Skipped (77) where the runtime is not installed.
foreach(_xo_t IN ITEMS conformance cl_kernels cl_chain)
  add_test(NAME intel_ocl_${_xo_t}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/intel_ocl.sh ${CMAKE_CURRENT_BINARY_DIR}/intel-ocl/${_xo_t}
            $<TARGET_FILE:test_${_xo_t}>)
  set(_xo_env "XO_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/cache/intel_ocl_${_xo_t}" XO_CALIBRATE=off ${_xo_lsan})
  set_tests_properties(intel_ocl_${_xo_t} PROPERTIES LABELS "intel-ocl;opencl" SKIP_RETURN_CODE 77
    TIMEOUT 600 ENVIRONMENT "${_xo_env}")
endforeach()
# Issue 22: four threads creating and destroying contexts at once; RSS flat over many
# short-lived contexts that ran CLBlast while another context lives.
xo_add_test(test_context_cycles SOURCES test_context_cycles.c LIBS xo_testutil m Threads::Threads LABELS opencl
            ENV XO_CALIBRATE=off)

# Issue 22: a CLBlast routine's first call compiles outside the CLBlast lock, once per
# device and precision (white-box counter and hook in plugins/opencl/cl_testing.h).
xo_add_test(test_opencl_warm SOURCES test_opencl_warm.c LIBS xo_testutil m Threads::Threads LABELS opencl
            ENV XO_CALIBRATE=off)
target_include_directories(test_opencl_warm PRIVATE ${PROJECT_SOURCE_DIR}/plugins/opencl)
