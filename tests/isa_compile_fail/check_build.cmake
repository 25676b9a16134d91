# cmake -DBUILD_DIR=... -DTARGET=... -DEXPECT=pass|fail -DPATTERN=regex -P check_build.cmake
# Builds TARGET; with EXPECT=fail the build must fail and its output match PATTERN.
execute_process(
  COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET} -j1
  RESULT_VARIABLE result
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output)
if(EXPECT STREQUAL "pass")
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${TARGET} should compile but failed:\n${output}")
  endif()
  message(STATUS "${TARGET} compiled, as expected")
  return()
endif()
if(result EQUAL 0)
  message(FATAL_ERROR "${TARGET} compiled, but its ISA description is broken and must be rejected")
endif()
if(NOT output MATCHES "${PATTERN}")
  message(FATAL_ERROR "${TARGET} failed to compile, but the output does not match '${PATTERN}':\n${output}")
endif()
message(STATUS "${TARGET} was rejected with the expected diagnostic")
