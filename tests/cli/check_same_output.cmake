# Runs ACT with ARGS ('|'-separated) RUNS times and checks that every run exits 0 and prints
# byte-identical stdout (the --deterministic promise of `act compile`).
#   cmake -DACT=/path/act -DARGS="compile|--isa|qkv|k.hlo|--deterministic" -DRUNS=10 -P check_same_output.cmake
string(REPLACE "|" ";" arguments "${ARGS}")
set(first "")
foreach(run RANGE 1 ${RUNS})
  execute_process(COMMAND "${ACT}" ${arguments} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT "${code}" STREQUAL "0")
    message(FATAL_ERROR "act ${arguments} (run ${run}): exit code ${code}\n${out}${err}")
  endif()
  if(run EQUAL 1)
    set(first "${out}")
  elseif(NOT "${out}" STREQUAL "${first}")
    message(FATAL_ERROR "act ${arguments}: run ${run} printed something else than run 1:\n--- run 1\n${first}\n--- run ${run}\n${out}")
  endif()
endforeach()
message(STATUS "act ${arguments}: ${RUNS} identical runs\n${first}")
