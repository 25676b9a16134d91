# Runs TOOL with ARGS ('|'-separated) in WORK and checks its exit code (EXIT) and that its
# combined stdout and stderr match the regular expression MATCH.
string(REPLACE "|" ";" arguments "${ARGS}")
execute_process(COMMAND "${TOOL}" ${arguments} WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE code OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT "${code}" STREQUAL "${EXIT}")
  message(FATAL_ERROR "${TOOL} ${arguments}: exit code ${code}, expected ${EXIT}\n${all}")
endif()
if(NOT all MATCHES "${MATCH}")
  message(FATAL_ERROR "${TOOL} ${arguments}: output does not match '${MATCH}':\n${all}")
endif()
message(STATUS "${TOOL} ${arguments}: exit ${code}\n${all}")
