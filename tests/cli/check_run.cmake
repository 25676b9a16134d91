# Runs `act run` (ARGS, '|'-separated) where the CPU decides what is possible:
#   exit 0 and output matching MATCH     the program ran natively and agreed: pass
#   exit 3 and "this CPU cannot run"     the CPU lacks a feature the program needs: prints
#                                        "SKIPPED: <act's message>", which the test's
#                                        SKIP_REGULAR_EXPRESSION turns into a skipped test
#   anything else                        fail
string(REPLACE "|" ";" arguments "${ARGS}")
execute_process(COMMAND "${ACT}" ${arguments} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if("${code}" STREQUAL "0" AND all MATCHES "${MATCH}")
  message(STATUS "act ${arguments}: exit 0\n${all}")
elseif("${code}" STREQUAL "3" AND all MATCHES "this CPU cannot run the program natively: it lacks [a-z0-9-]+ \\(needed by [a-z0-9_, ]+\\); nothing was run")
  string(REGEX MATCH "this CPU cannot run[^\n]*" reason "${all}")
  message(STATUS "SKIPPED: ${reason}")
else()
  message(FATAL_ERROR "act ${arguments}: exit code ${code} (expected 0 with output matching '${MATCH}', or 3 naming a missing CPU feature)\n${all}")
endif()
