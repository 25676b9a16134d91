# Runs ACT with ARGS ('|'-separated) and checks its exit code (EXIT) and that its combined
# stdout+stderr matches the regular expression MATCH (when given).
#   cmake -DACT=/path/act -DARGS="verify|--isa|qkv|k.hlo|p.asm" -DEXIT=1 -DMATCH="mismatch" -P check_exit.cmake
# Optional:
#   -DSTDOUT=FILE    standard output goes to FILE (e.g. /dev/full); MATCH then sees stderr only
#   -DNOMATCH=REGEX  the output must not match REGEX
#   -DULIMIT_KB=N    runs under `ulimit -v N` (virtual memory in KiB; not under sanitizers)
#   -DCOPY=SRC|DST   copies SRC to DST first (a scratch input the command may try to overwrite),
#                    and afterwards checks that DST is still byte-identical to SRC
string(REPLACE "|" ";" arguments "${ARGS}")
if(DEFINED COPY AND NOT "${COPY}" STREQUAL "")
  string(REPLACE "|" ";" copy "${COPY}")
  list(GET copy 0 copy_source)
  list(GET copy 1 copy_target)
  configure_file("${copy_source}" "${copy_target}" COPYONLY)
endif()
set(launcher)
if(DEFINED ULIMIT_KB AND NOT "${ULIMIT_KB}" STREQUAL "")
  set(launcher /bin/sh -c "ulimit -v ${ULIMIT_KB} && exec \"$0\" \"$@\"")
endif()
if(DEFINED STDOUT AND NOT "${STDOUT}" STREQUAL "")
  execute_process(COMMAND ${launcher} "${ACT}" ${arguments} RESULT_VARIABLE code OUTPUT_FILE "${STDOUT}" ERROR_VARIABLE err)
  set(out "")
else()
  execute_process(COMMAND ${launcher} "${ACT}" ${arguments} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
endif()
set(all "${out}${err}")
if(NOT "${code}" STREQUAL "${EXIT}")
  message(FATAL_ERROR "act ${arguments}: exit code ${code}, expected ${EXIT}\n${all}")
endif()
if(DEFINED MATCH AND NOT "${MATCH}" STREQUAL "" AND NOT all MATCHES "${MATCH}")
  message(FATAL_ERROR "act ${arguments}: output does not match '${MATCH}':\n${all}")
endif()
if(DEFINED NOMATCH AND NOT "${NOMATCH}" STREQUAL "" AND all MATCHES "${NOMATCH}")
  message(FATAL_ERROR "act ${arguments}: output matches '${NOMATCH}', which it must not:\n${all}")
endif()
if(DEFINED COPY AND NOT "${COPY}" STREQUAL "")
  file(SHA256 "${copy_source}" source_hash)
  file(SHA256 "${copy_target}" target_hash)
  if(NOT source_hash STREQUAL target_hash)
    message(FATAL_ERROR "act ${arguments}: ${copy_target} was changed")
  endif()
endif()
message(STATUS "act ${arguments}: exit ${code}\n${all}")
