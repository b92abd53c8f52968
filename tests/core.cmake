# Core test suite, written against the public API (crossover.h) only.

# Shared utilities (reference loops, comparison, snapshots, capture), compiled once.
add_library(xo_testutil STATIC xo_test.c)
target_include_directories(xo_testutil PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(xo_testutil PRIVATE _GNU_SOURCE)
target_link_libraries(xo_testutil PUBLIC crossover ${XO_CMOCKA} m)
xo_target_warnings(xo_testutil)

# One conformance suite, every device (test_conformance_nn.c: the 0.3 ops, same runs).
# The executable takes a device argument
# (cpu, opencl, cuda, auto; none: every device) and exits 77 when that device is absent.
# It is a target of its own so other fragments register it too (tests/cuda.cmake:
# EXE test_conformance ARGS cuda).
add_executable(test_conformance test_conformance.c test_conformance_nn.c)
target_compile_definitions(test_conformance PRIVATE _GNU_SOURCE)
target_link_libraries(test_conformance PRIVATE xo_testutil crossover ${XO_CMOCKA} m)
xo_target_warnings(test_conformance)
xo_add_test(conformance_cpu EXE test_conformance ARGS cpu ENV XO_CALIBRATE=off)
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
xo_add_test(test_fastpath SOURCES test_fastpath.c LIBS xo_testutil crossover_internal m ENV XO_CALIBRATE=off)
