# `xo record` (docs/machines/README.md, "Recording"): this machine recorded in quick mode,
# read back under XO_SIMULATE, a simple program's simulated time near its real one.
if(TARGET xo)
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/record)
  xo_add_test(test_record SOURCES test_record.c LIBS xo_testutil LABELS "simulated;record"
              ARGS $<TARGET_FILE:xo> ${CMAKE_CURRENT_BINARY_DIR}/record)
endif()
