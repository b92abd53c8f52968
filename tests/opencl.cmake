# OpenCL plugin tests (run on PoCL in CI; skipped, exit 77, without an OpenCL device).
find_package(OpenCL REQUIRED)
find_package(XoCLBlast REQUIRED)

# The kernel binary cache: reused by a second context; a damaged entry is rebuilt.
xo_add_test(test_opencl_cache SOURCES test_opencl_cache.c LIBS xo_testutil m LABELS opencl
            ENV XO_CALIBRATE=off)
target_include_directories(test_opencl_cache PRIVATE ${PROJECT_SOURCE_DIR}/plugins/opencl)

# Error translation: every cl_int / CLBlastStatusCode has a name and a status.
xo_add_test(test_opencl_status SOURCES test_opencl_status.c LIBS OpenCL::OpenCL crossover::clblast LABELS opencl)
target_include_directories(test_opencl_status PRIVATE ${PROJECT_SOURCE_DIR}/plugins/opencl
                           ${PROJECT_SOURCE_DIR}/core/include)
target_compile_definitions(test_opencl_status PRIVATE CL_TARGET_OPENCL_VERSION=120)

# No OpenCL platform at all: no devices, no error (ocl-icd reads OCL_ICD_VENDORS).
set(_xo_no_icd_dir ${CMAKE_CURRENT_BINARY_DIR}/no-opencl-vendors)
file(MAKE_DIRECTORY ${_xo_no_icd_dir})
xo_add_test(test_opencl_noplatform SOURCES test_opencl_noplatform.c LIBS xo_testutil m LABELS opencl
            ENV XO_CALIBRATE=off OCL_ICD_VENDORS=${_xo_no_icd_dir} OCL_ICD_FILENAMES=)

# The plugin's own paths for the 0.3 ops: gemm_bias_act with alpha == 0 runs no product
# (NaN/Inf in A, B, and in C where beta == 0, never reach C); copy and fill move bits.
xo_add_test(test_opencl_nn SOURCES test_opencl_nn.c LIBS xo_testutil m LABELS opencl ENV XO_CALIBRATE=off)

# A device allocation the memory limit cannot back (RLIMIT_AS, set by the test in a
# forked child) falls back to the CPU instead of aborting inside the OpenCL runtime.
xo_add_test(test_alloc_limit SOURCES test_alloc_limit.c LIBS xo_testutil m LABELS opencl
            ENV XO_CALIBRATE=off XO_ZERO_COPY=off)

# Issue 22: four threads creating and destroying contexts at once; RSS flat over many
# short-lived contexts that ran CLBlast while another context lives.
xo_add_test(test_context_cycles SOURCES test_context_cycles.c LIBS xo_testutil m Threads::Threads LABELS opencl
            ENV XO_CALIBRATE=off)

# Issue 22: a CLBlast routine's first call compiles outside the CLBlast lock, once per
# device and precision (white-box counter and hook in plugins/opencl/cl_testing.h).
xo_add_test(test_opencl_warm SOURCES test_opencl_warm.c LIBS xo_testutil m Threads::Threads LABELS opencl
            ENV XO_CALIBRATE=off)
target_include_directories(test_opencl_warm PRIVATE ${PROJECT_SOURCE_DIR}/plugins/opencl)
