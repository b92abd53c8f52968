# XO_SIMULATE (docs/machines/README.md): the recorded H200 of docs/machines/, simulated on
# whatever machine runs the tests. Label `simulated`.
set(XO_H200 ${PROJECT_SOURCE_DIR}/docs/machines/h200.xom)
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/simulate)
# The file parses, cuda works with correct results, the clock follows the recording step
# by step, twice the same program gives the same times, bad files name file and line.
xo_add_test(test_simulate SOURCES test_simulate.c LIBS xo_testutil crossover_internal m LABELS simulated
            ARGS ${XO_H200} ${CMAKE_CURRENT_BINARY_DIR}/simulate ENV XO_CALIBRATE=off)
# The bench's programs, unchanged, against their CBLAS twins on the simulated H200 (the
# OpenCL cases skip: that machine has no OpenCL device in its file).
xo_add_test(test_programs_h200 EXE test_programs LABELS simulated ENV XO_SIMULATE=${XO_H200} XO_ZERO_COPY=off)
# xo_programs, unchanged, runs each program paired (auto, forced cpu, forced cuda) on it,
# then auto's program as a plan, and fails when eager auto is under 0.95x the best forced
# device or the plan under the best forced eager run (docs/placement.md, "A recorded H200,
# simulated": a simulation is deterministic, so one run is the figure). rnn b10000 runs
# its shortest budget: its 100 ms slices are still about 20 s of host compute. Twice: on
# the reconstructed H200 (h200) and on the one `.ci/gpu-check` recorded on 2026-11-27
# (h200rec: a CPU twice as fast, so the GPU's margins are thinner).
set(XO_H200_RECORDED ${PROJECT_SOURCE_DIR}/docs/machines/h200-2026-11-27.xom)
if(TARGET xo_programs)
  foreach(machine "h200;${XO_H200}" "h200rec;${XO_H200_RECORDED}")
    list(GET machine 0 mname)
    list(GET machine 1 mfile)
    foreach(prog "rnn;100;0.05" "mlp;1;0.05" "mlp;32;0.05" "mlp;256;0.05" "mlp;2048;0.05" "ode;0.05" "rnn;10000;0.02")
      list(POP_BACK prog seconds)
      string(REPLACE ";" "_" pname "${prog}")
      add_test(NAME xo_programs_${mname}_${pname}
               COMMAND xo_programs ${prog} --paired --seconds ${seconds} --min-ratio 0.95 --min-plan-ratio 1)
      set_tests_properties(xo_programs_${mname}_${pname} PROPERTIES LABELS simulated TIMEOUT 300
        ENVIRONMENT "XO_SIMULATE=${mfile};XO_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/cache/xo_programs_${mname}")
    endforeach()
  endforeach()
endif()
