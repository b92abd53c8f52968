# `xo record` (docs/machines/README.md, "Recording"): this machine recorded in quick mode,
# read back under XO_SIMULATE, a simple program's simulated time near its real one.
if(TARGET xo)
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/record)
  # One CPU thread and no other test beside it: on a shared machine a 2-thread OpenBLAS
  # waits for a descheduled thread and the real side of the comparison measures the load.
  xo_add_test(test_record SOURCES test_record.c LIBS xo_testutil LABELS "simulated;record"
              ARGS $<TARGET_FILE:xo> ${CMAKE_CURRENT_BINARY_DIR}/record ENV XO_THREADS=1)
  set_tests_properties(test_record PROPERTIES RUN_SERIAL TRUE)
endif()
# Every committed machine file still reads (xo info under XO_SIMULATE), whoever wrote it.
if(TARGET xo)
  file(GLOB xo_machine_files ${PROJECT_SOURCE_DIR}/docs/machines/*.xom)
  foreach(f ${xo_machine_files})
    get_filename_component(stem ${f} NAME_WE)
    add_test(NAME machine_file_${stem} COMMAND xo info)
    set_tests_properties(machine_file_${stem} PROPERTIES LABELS simulated
      PASS_REGULAR_EXPRESSION "simulated from the machine file"
      ENVIRONMENT "XO_SIMULATE=${f};XO_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/cache/machine_file_${stem}")
  endforeach()
endif()
