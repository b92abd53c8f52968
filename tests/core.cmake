# Core test suite, written against the public API (crossover.h) only.

# Shared utilities (reference loops, comparison, snapshots, capture), compiled once.
add_library(xo_testutil STATIC xo_test.c)
target_include_directories(xo_testutil PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(xo_testutil PRIVATE _GNU_SOURCE)
target_link_libraries(xo_testutil PUBLIC crossover ${XO_CMOCKA} m)
xo_target_warnings(xo_testutil)

# One conformance suite, every device: a table of ops against their references
# (test_conformance.c) and the rules beside it (_zero.c, _max.c, _map.c).
# The executable takes a device argument
# (cpu, opencl, cuda, auto; none: every device) and exits 77 when that device is absent.
# It is a target of its own so other fragments register it too (tests/cuda.cmake:
# EXE test_conformance ARGS cuda).
add_executable(test_conformance test_conformance.c test_conformance_zero.c
  test_conformance_max.c test_conformance_map.c)
target_compile_definitions(test_conformance PRIVATE _GNU_SOURCE)
target_link_libraries(test_conformance PRIVATE xo_testutil crossover ${XO_CMOCKA} m)
xo_target_warnings(test_conformance)
xo_add_test(conformance_cpu EXE test_conformance ARGS cpu ENV XO_CALIBRATE=off)
# The CPU plugin's AVX2 and baseline kernels, which an AVX-512 machine would not run.
xo_add_test(conformance_cpu_avx2 EXE test_conformance ARGS cpu avx2 ENV XO_CALIBRATE=off)
xo_add_test(conformance_cpu_baseline EXE test_conformance ARGS cpu baseline ENV XO_CALIBRATE=off)
xo_add_test(conformance_opencl EXE test_conformance ARGS opencl LABELS opencl ENV XO_CALIBRATE=off)
xo_add_test(conformance_auto EXE test_conformance ARGS auto ENV XO_CALIBRATE=off)

# Bad inputs for every entry point: status, message, and no buffer changed.
xo_add_test(test_errors SOURCES test_errors.c LIBS xo_testutil m ENV XO_CALIBRATE=off)
# XO_* variables, read at xo_context_create (the test sets them itself).
xo_add_test(test_env SOURCES test_env.c LIBS xo_testutil m ENV XO_CALIBRATE=off)
if(TARGET crossover_opencl)
  target_compile_definitions(test_env PRIVATE XOT_HAVE_OPENCL_PLUGIN=1)
endif()
# One context, four threads.
xo_add_test(test_threads SOURCES test_threads.c LIBS xo_testutil m ENV XO_CALIBRATE=off)
# Input buffers shared by four threads' ops: results, and ("exact": every move a real
# copy) each shared buffer moved once however many threads need it. Run under
# ThreadSanitizer by .ci/run (XO_SANITIZE=thread, ctest -R threads).
xo_add_test(test_threads_shared SOURCES test_threads_shared.c LIBS xo_testutil m ENV XO_CALIBRATE=off)
xo_add_test(test_threads_shared_copy EXE test_threads_shared ARGS opencl exact ENV XO_CALIBRATE=off XO_ZERO_COPY=off)
# Residency and transfer counters (needs an OpenCL device, else skipped).
# Exact byte counts of real copies: the copy path (XO_ZERO_COPY=off), even on a
# host-unified device such as PoCL. test_zero_copy covers the shared path.
xo_add_test(test_residency SOURCES test_residency.c LIBS xo_testutil m LABELS opencl
            ENV XO_CALIBRATE=off XO_ZERO_COPY=off)
xo_add_test(test_zero_copy SOURCES test_zero_copy.c LIBS xo_testutil m LABELS opencl
            ENV XO_CALIBRATE=off)
# XO_FAULTS: fallbacks and failed downloads (needs an OpenCL device, else skipped).
xo_add_test(test_faults SOURCES test_faults.c LIBS xo_testutil m LABELS opencl
            ENV XO_CALIBRATE=off)
# Seeded random arguments to every op: no crash, defined statuses, failed calls change nothing.
xo_add_test(test_random_args SOURCES test_random_args.c LIBS xo_testutil m ENV XO_CALIBRATE=off)
# Repeated calls: the decision cache and the express path against the reference.
xo_add_test(test_fastpath SOURCES test_fastpath.c express_count.c LIBS xo_testutil crossover_internal m ENV XO_CALIBRATE=off)
# The express path and the full path apply one set of operand rules (warm vs cold calls).
xo_add_test(test_express SOURCES test_express.c express_count.c LIBS xo_testutil crossover_internal m
            ENV XO_CALIBRATE=off XO_PLUGINS=cpu)
# xo explain and dispatch agree: random profiles, corrections and residency (needs an
# OpenCL device, else skipped); runs the real xo tool.
xo_add_test(test_place SOURCES test_place.c LIBS xo_testutil crossover_internal m LABELS opencl
            ENV XO_ZERO_COPY=off)
target_compile_definitions(test_place PRIVATE XO_TOOL_PATH="$<TARGET_FILE:xo>")
add_dependencies(test_place xo)
# xo explain takes an op from its map row alone (argmax: ROWS COLS), in both precisions.
add_test(NAME tool_explain_argmax COMMAND sh -c "$<TARGET_FILE:xo> explain sargmax 64 10 && $<TARGET_FILE:xo> explain dargmax 3 5")
set_tests_properties(tool_explain_argmax PROPERTIES
  ENVIRONMENT "XO_CALIBRATE=off;XO_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/cache/tool_explain_argmax"
  PASS_REGULAR_EXPRESSION "op: sargmax 64 10 .*op: dargmax 3 5 .*chosen:")
# XO_LOG=summary: the table at xo_context_destroy counts every call, fast path included.
xo_add_test(test_summary SOURCES test_summary.c LIBS xo_testutil m ENV XO_CALIBRATE=off)
# OpenBLAS's core and the thread count in the CPU's identity, the warning for a core
# far below the CPU (OPENBLAS_CORETYPE is read when OpenBLAS loads, so ctest sets it),
# the advice's table and what xo info says; runs the real xo tool.
xo_add_test(test_blas_core SOURCES test_blas_core.c LIBS xo_testutil crossover_internal m
            ENV XO_CALIBRATE=off XO_PLUGINS=cpu OPENBLAS_CORETYPE=Prescott)
target_include_directories(test_blas_core PRIVATE ${PROJECT_SOURCE_DIR}/plugins/cpu)
add_library(xo_coretype_shim MODULE coretype_shim.c)
target_link_libraries(xo_coretype_shim PRIVATE ${CMAKE_DL_LIBS})
target_compile_definitions(test_blas_core PRIVATE XO_TOOL_PATH="$<TARGET_FILE:xo>"
                           XO_CORETYPE_SHIM="$<TARGET_FILE:xo_coretype_shim>")
add_dependencies(test_blas_core xo xo_coretype_shim)
# The bench's real programs (neural ODE, RNN) against their plain-CBLAS twins.
xo_add_test(test_programs SOURCES test_programs.c ${PROJECT_SOURCE_DIR}/bench/bench_ode.c
            ${PROJECT_SOURCE_DIR}/bench/bench_rnn.c LIBS xo_testutil crossover_internal crossover::openblas m
            ENV XO_CALIBRATE=off XO_ZERO_COPY=off) # real copies: a host sync shows as bytes_out
target_include_directories(test_programs PRIVATE ${PROJECT_SOURCE_DIR}/bench)
# BLAS semantics (alpha/beta == 0 read nothing, scal by 0, nrm2 range), adversarial
# inputs against reference-BLAS loops; one suite per device (cuda.cmake adds CUDA's).
add_executable(test_semantics test_semantics.c)
target_compile_definitions(test_semantics PRIVATE _GNU_SOURCE)
target_link_libraries(test_semantics PRIVATE xo_testutil crossover ${XO_CMOCKA} m)
xo_target_warnings(test_semantics)
xo_add_test(semantics_cpu EXE test_semantics ARGS cpu ENV XO_CALIBRATE=off)
xo_add_test(semantics_opencl EXE test_semantics ARGS opencl LABELS opencl ENV XO_CALIBRATE=off)
# Buffers over the caller's memory (xo_buffer_wrap) on the CPU and a forced OpenCL device.
xo_add_test(test_wrap SOURCES test_wrap.c LIBS xo_testutil m ENV XO_CALIBRATE=off)
# Every op family over wrapped memory at odd alignments (run under UBSan by .ci/run;
# PoCL's own leaks suppressed there, tests/lsan.supp).
set(_xo_align_env XO_CALIBRATE=off)
if(XO_SANITIZE MATCHES "address|leak")
  list(APPEND _xo_align_env "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/lsan.supp")
endif()
xo_add_test(test_wrap_align SOURCES test_wrap_align.c LIBS xo_testutil m ENV ${_xo_align_env})
# The mock device plugin (tests only, mock_plugin.h): queue-aware placement, placement by
# profile, fallback and residency against a device whose speed and failures the test sets.
add_library(xo_mock STATIC mock_plugin.c)
target_compile_definitions(xo_mock PRIVATE _GNU_SOURCE)
target_link_libraries(xo_mock PUBLIC crossover_internal Threads::Threads)
xo_target_warnings(xo_mock)
xo_add_test(test_mock SOURCES test_mock.c LIBS xo_mock xo_testutil crossover_internal m
            ENV XO_CALIBRATE=off XO_PLUGINS=cpu,mock XO_THREADS=1)
# It times two threads side by side: alone on the machine.
set_tests_properties(test_mock PROPERTIES RUN_SERIAL TRUE)
# The device layer: XO_FAULTS sites and transfer statistics against the mock's own counts.
xo_add_test(test_device SOURCES test_device.c LIBS xo_mock xo_testutil crossover_internal m
            ENV XO_CALIBRATE=off XO_PLUGINS=cpu,mock XO_THREADS=1)
# Healing end to end: a load spike on the mock, a slow warm-up, more than 4 devices.
xo_add_test(test_explore SOURCES test_explore.c express_count.c LIBS xo_mock xo_testutil crossover_internal m
            ENV XO_CALIBRATE=off XO_PLUGINS=cpu,mock XO_THREADS=1)
set_tests_properties(test_explore PROPERTIES RUN_SERIAL TRUE)
# Every registered plugin asked about every op kind and sub-op; the null plugin skeleton.
xo_add_test(test_plugins SOURCES test_plugins.c LIBS xo_testutil crossover_internal crossover_null m
            ENV XO_CALIBRATE=off)
xo_add_test(test_trap SOURCES test_trap.c LIBS xo_mock xo_testutil crossover_internal m
            ENV XO_CALIBRATE=off XO_PLUGINS=cpu,mock XO_THREADS=1)
set_tests_properties(test_trap PROPERTIES RUN_SERIAL TRUE)
# The trap as a plan: placed on the CPU from the first run, the buffer moved once.
xo_add_test(test_plan_trap SOURCES test_plan_trap.c LIBS xo_mock xo_testutil crossover_internal m
            ENV XO_CALIBRATE=off XO_PLUGINS=cpu,mock XO_THREADS=1)
set_tests_properties(test_plan_trap PROPERTIES RUN_SERIAL TRUE)
# xo info's transfer figures on host-unified devices ("shared memory" or what was measured).
xo_add_test(test_tool_info SOURCES test_tool_info.c tool_stubs.c ../bench/cmd_info.c ../bench/tool_text.c
            LIBS xo_mock xo_testutil crossover_internal m ENV XO_CALIBRATE=off XO_PLUGINS=cpu,mock)
target_include_directories(test_tool_info PRIVATE ${PROJECT_SOURCE_DIR}/bench ${PROJECT_SOURCE_DIR}/plugins/cpu)
# Residency per span against a plain reference, with and without faults.
xo_add_test(test_spans SOURCES test_spans.c LIBS xo_mock xo_testutil crossover_internal m
            ENV XO_CALIBRATE=off XO_PLUGINS=cpu,mock XO_THREADS=1)
xo_add_test(test_trust SOURCES test_trust.c LIBS xo_mock xo_testutil crossover_internal m
            ENV XO_PLUGINS=cpu,mock XO_THREADS=1)
set_tests_properties(test_trust PROPERTIES RUN_SERIAL TRUE)
# Issue 22: an op failing on two devices names both reasons; gemm with k = 0 and an
# unused lda past INT_MAX on every device.
xo_add_test(test_robust_calls SOURCES test_robust_calls.c LIBS xo_mock xo_testutil crossover_internal m
            ENV XO_CALIBRATE=off XO_PLUGINS=cpu,mock,opencl XO_THREADS=1)
# fork(): a child works with an inherited context (CPU pool, a lost OpenCL device) and
# with a new one; alarm() in each child turns a hang into a failure.
xo_add_test(test_fork SOURCES test_fork.c LIBS xo_testutil m
            ENV XO_CALIBRATE=off XO_THREADS=4 XO_ZERO_COPY=off)
# The layers of docs/design.md, checked: every internal header compiles alone, no call
# cycle between the files of a library (from nm), and #include lines follow the layers
# (tests/layers/check_layers.py).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME layers COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/layers/check_layers.py
           ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR} ${CMAKE_C_COMPILER})
  set_tests_properties(layers PROPERTIES LABELS layers)
endif()
# Plans (capture, whole-plan placement, replay) against eager calls on twin buffers, on
# every device and the mock (a GPU-like device priced as the test says).
xo_add_test(test_plan SOURCES test_plan.c test_plan_cases.c LIBS xo_mock xo_testutil crossover_internal m
            ENV XO_CALIBRATE=off)
# Whole-plan placement against op by op (the mock priced like a discrete GPU), plan
# building time.
xo_add_test(test_plan_place SOURCES test_plan_place.c test_plan_cases.c LIBS xo_mock xo_testutil crossover_internal m
            ENV XO_CALIBRATE=off)
# The replay's fast path: runs of CPU steps checked and recorded once (mock holding copies).
xo_add_test(test_plan_run SOURCES test_plan_run.c test_plan_cases.c LIBS xo_mock xo_testutil crossover_internal m
            ENV XO_CALIBRATE=off)
# The call memo: repeated calls skip checks and keys, yet follow every change of residency,
# device policy, profile and buffer (mock holding copies).
xo_add_test(test_memo SOURCES test_memo.c test_plan_cases.c LIBS xo_mock xo_testutil crossover_internal m
            ENV XO_CALIBRATE=off)
# Fusion of element-wise chains through each device's chain runner (CPU, mock, and any
# other plugin's), results fused away only where the plan proves nobody sees them.
xo_add_test(test_plan_fuse SOURCES test_plan_fuse.c test_plan_cases.c LIBS xo_mock xo_testutil crossover_internal m
            ENV XO_CALIBRATE=off)
# Four threads run one plan: runs are serialized (ThreadSanitizer: ctest -R threads).
xo_add_test(test_plan_threads SOURCES test_plan_threads.c LIBS xo_testutil m ENV XO_CALIBRATE=off)
# The application's OpenBLAS thread count, kept beside crossover's contexts.
xo_add_test(test_app_threads SOURCES test_app_threads.c LIBS xo_testutil crossover::openblas m
            ENV XO_CALIBRATE=off XO_PLUGINS=cpu)
xo_add_test(test_app_threads_env EXE test_app_threads ARGS env
            ENV XO_CALIBRATE=off XO_PLUGINS=cpu OPENBLAS_NUM_THREADS=1)
# The xo tool's help, usage messages and device errors as a user reads them.
xo_add_test(test_tool_cli SOURCES test_tool_cli.c LIBS xo_testutil crossover_internal m ENV XO_CALIBRATE=off)
target_compile_definitions(test_tool_cli PRIVATE XO_TOOL_PATH="$<TARGET_FILE:xo>")
if(TARGET crossover_cuda)
  target_compile_definitions(test_tool_cli PRIVATE XOT_HAVE_CUDA_PLUGIN=1)
endif()
# xo bench's report.md, written from made-up data and read back.
xo_add_test(test_bench_report SOURCES test_bench_report.c tool_stubs.c ../bench/bench_report.c ../bench/bench_findings.c
            ../bench/bench_sweep.c ../bench/bench_eval1.c ../bench/cmd_info.c ../bench/tool_text.c
            LIBS xo_testutil crossover_internal crossover::openblas m ENV XO_CALIBRATE=off)
target_include_directories(test_bench_report PRIVATE ${PROJECT_SOURCE_DIR}/bench ${PROJECT_SOURCE_DIR}/plugins/cpu)
# What the docs promise a newcomer, read from the pages.
add_test(NAME docs_check COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR} -P ${CMAKE_CURRENT_SOURCE_DIR}/docs_check.cmake)
# The CPU plugin's own float math (its rational tanh) over the whole float range.
xo_add_test(test_cpu_math SOURCES test_cpu_math.c LIBS xo_testutil m ENV XO_CALIBRATE=off)
