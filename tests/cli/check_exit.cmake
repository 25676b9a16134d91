# Runs ACT with ARGS ('|'-separated) and checks its exit code (EXIT) and that its combined
# stdout+stderr matches the regular expression MATCH (when given).
#   cmake -DACT=/path/act -DARGS="verify|--isa|qkv|k.hlo|p.asm" -DEXIT=1 -DMATCH="mismatch" -P check_exit.cmake
string(REPLACE "|" ";" arguments "${ARGS}")
execute_process(COMMAND "${ACT}" ${arguments} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT "${code}" STREQUAL "${EXIT}")
  message(FATAL_ERROR "act ${arguments}: exit code ${code}, expected ${EXIT}\n${all}")
endif()
if(DEFINED MATCH AND NOT "${MATCH}" STREQUAL "" AND NOT all MATCHES "${MATCH}")
  message(FATAL_ERROR "act ${arguments}: output does not match '${MATCH}':\n${all}")
endif()
message(STATUS "act ${arguments}: exit ${code}\n${all}")
