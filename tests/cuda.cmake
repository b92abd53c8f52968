# CUDA plugin tests (included when the plugin is built; see docs/cuda.md).

# Runs everywhere: discovery with and without a driver/GPU, XO_DEVICE=cuda, silence.
xo_add_test(test_cuda_discovery SOURCES test_cuda_discovery.c LIBS xo_testutil m
            ENV XO_CALIBRATE=off XO_PLUGINS=cpu,cuda)
# Runs everywhere: the embedded fatbin, the descriptor, init without a GPU, error names.
xo_add_test(test_cuda_kernels SOURCES test_cuda_kernels.c LIBS xo_testutil m ENV XO_CALIBRATE=off)
target_include_directories(test_cuda_kernels PRIVATE ${PROJECT_SOURCE_DIR}/plugins/cuda)

# The plugin's ops beyond cuBLAS's through its vtable (below the core), on the first CUDA device;
# exits 77 (skipped) without one.
xo_add_test(test_cuda_ops_nn SOURCES test_cuda_ops_nn.c LIBS xo_testutil m LABELS requires-gpu ENV XO_CALIBRATE=off)
target_include_directories(test_cuda_ops_nn PRIVATE ${PROJECT_SOURCE_DIR}/plugins/cuda)

# The plan extras ("xo_chain" interpreter kernel, "xo_graph" capture and replay) through
# the plugin's vtable, on the first CUDA device; exits 77 (skipped) without one.
xo_add_test(test_cuda_chain SOURCES test_cuda_chain.c LIBS xo_testutil m ${CMAKE_DL_LIBS} LABELS requires-gpu
            ENV XO_CALIBRATE=off)
target_include_directories(test_cuda_chain PRIVATE ${PROJECT_SOURCE_DIR}/plugins/cuda)

# A training step as a plan forced on CUDA, replayed through CUDA graphs, against eager.
xo_add_test(test_cuda_plan SOURCES test_cuda_plan.c LIBS xo_testutil m ${CMAKE_DL_LIBS} LABELS requires-gpu
            ENV XO_CALIBRATE=off XO_PLUGINS=cpu,cuda)

# The conformance suite on the first CUDA device; exits 77 (skipped) without one.
# `ctest -L requires-gpu` runs it; `ctest -LE requires-gpu` leaves it out.
if(TARGET test_conformance)
  xo_add_test(conformance_cuda EXE test_conformance ARGS cuda LABELS requires-gpu
              ENV XO_CALIBRATE=off)
endif()
if(TARGET test_semantics)
  xo_add_test(semantics_cuda EXE test_semantics ARGS cuda LABELS requires-gpu ENV XO_CALIBRATE=off)
endif()

# Without a GPU, the plugin's own logic (context/stream handling, staging, timing ring,
# launch parameters, the two-pass reduction, row-major -> column-major cuBLAS calls)
# runs against stand-ins for libcuda.so.1 and libcublas.so.13: host memory, synchronous
# streams, the kernels and BLAS re-implemented as reference loops. They are found
# through LD_LIBRARY_PATH, so these tests never touch a real driver.
set(XO_CUDA_MOCK_DIR ${CMAKE_CURRENT_BINARY_DIR}/cuda_mock)
add_library(xo_mock_libcuda SHARED test_cuda_mock_driver.c)
add_library(xo_mock_libcublas SHARED test_cuda_mock_cublas.c)
foreach(t xo_mock_libcuda xo_mock_libcublas)
  target_include_directories(${t} PRIVATE ${PROJECT_SOURCE_DIR}/plugins/cuda ${PROJECT_SOURCE_DIR}/core/include)
  target_compile_definitions(${t} PRIVATE _GNU_SOURCE)
  target_link_libraries(${t} PRIVATE m ${CMAKE_DL_LIBS} Threads::Threads)
  set_target_properties(${t} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${XO_CUDA_MOCK_DIR})
  xo_target_warnings(${t})
endforeach()
set_target_properties(xo_mock_libcuda PROPERTIES OUTPUT_NAME cuda SOVERSION 1)
set_target_properties(xo_mock_libcublas PROPERTIES OUTPUT_NAME cublas SOVERSION 13)
set(XO_CUDA_MOCK_ENV XO_CALIBRATE=off LD_LIBRARY_PATH=${XO_CUDA_MOCK_DIR})
# The same stand-in driver without the graph entries (an older driver: no "xo_graph"),
# in its own directory, found before the other one.
set(XO_CUDA_MOCK_NOGRAPH_DIR ${CMAKE_CURRENT_BINARY_DIR}/cuda_mock_nographs)
add_library(xo_mock_libcuda_nographs SHARED test_cuda_mock_driver.c)
target_include_directories(xo_mock_libcuda_nographs PRIVATE ${PROJECT_SOURCE_DIR}/plugins/cuda
                           ${PROJECT_SOURCE_DIR}/core/include)
target_compile_definitions(xo_mock_libcuda_nographs PRIVATE _GNU_SOURCE XO_MOCK_NO_GRAPHS)
target_link_libraries(xo_mock_libcuda_nographs PRIVATE m)
set_target_properties(xo_mock_libcuda_nographs PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${XO_CUDA_MOCK_NOGRAPH_DIR}
                      OUTPUT_NAME cuda SOVERSION 1)
xo_target_warnings(xo_mock_libcuda_nographs)
set(XO_CUDA_MOCK_NOGRAPH_ENV XO_CALIBRATE=off
    "LD_LIBRARY_PATH=${XO_CUDA_MOCK_NOGRAPH_DIR}:${XO_CUDA_MOCK_DIR}")
xo_add_test(test_cuda_discovery_mock EXE test_cuda_discovery
            ENV ${XO_CUDA_MOCK_ENV} XO_PLUGINS=cpu,cuda)
xo_add_test(test_cuda_kernels_mock EXE test_cuda_kernels ENV ${XO_CUDA_MOCK_ENV})
xo_add_test(test_cuda_ops_nn_mock EXE test_cuda_ops_nn ENV ${XO_CUDA_MOCK_ENV})
xo_add_test(test_cuda_chain_mock EXE test_cuda_chain ENV ${XO_CUDA_MOCK_ENV})
xo_add_test(test_cuda_chain_nographs_mock EXE test_cuda_chain ARGS nographs ENV ${XO_CUDA_MOCK_NOGRAPH_ENV})
# Plans through graphs on the stand-in: one capture per segment, then launches; without
# graph entries; with instantiation failing (the ops run one by one).
xo_add_test(test_cuda_plan_mock EXE test_cuda_plan ARGS graphs ENV ${XO_CUDA_MOCK_ENV} XO_PLUGINS=cpu,cuda)
xo_add_test(test_cuda_plan_nographs_mock EXE test_cuda_plan ARGS nographs
            ENV ${XO_CUDA_MOCK_NOGRAPH_ENV} XO_PLUGINS=cpu,cuda)
xo_add_test(test_cuda_plan_broken_mock EXE test_cuda_plan ARGS broken ENV ${XO_CUDA_MOCK_ENV} XO_PLUGINS=cpu,cuda)
if(TARGET test_conformance)
  xo_add_test(conformance_cuda_mock EXE test_conformance ARGS cuda ENV ${XO_CUDA_MOCK_ENV})
endif()
# The plugin's entry points from four threads at once, over shared input buffers.
xo_add_test(test_threads_shared_cuda_mock EXE test_threads_shared ARGS cuda exact ENV ${XO_CUDA_MOCK_ENV})
if(TARGET test_semantics)
  xo_add_test(semantics_cuda_mock EXE test_semantics ARGS cuda ENV ${XO_CUDA_MOCK_ENV})
endif()
# fork(): an inherited context's CUDA device is lost in the child (ops complete on the
# CPU, data only there reads as XO_ERR_DEVICE naming fork), on the stand-in driver.
xo_add_test(test_fork_cuda_mock EXE test_fork ARGS cuda
            ENV ${XO_CUDA_MOCK_ENV} XO_PLUGINS=cpu,cuda XO_THREADS=4 XO_ZERO_COPY=off)
