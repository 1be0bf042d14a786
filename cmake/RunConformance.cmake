# ctest helper: replays the project's conformance fixtures with the C runner.
#
#   cmake -DRUNNER=<wf-conformance-c> -DFIXTURES=<folder> -P RunConformance.cmake
#
# Skipped (see SKIP_REGULAR_EXPRESSION of the test) while the folder does not exist.
cmake_minimum_required(VERSION 3.25)
if(NOT IS_DIRECTORY "${FIXTURES}")
  message("conformance fixtures folder ${FIXTURES} does not exist (yet): nothing to replay")
  return()
endif()
execute_process(COMMAND "${RUNNER}" "${FIXTURES}" RESULT_VARIABLE exit_code)
if(NOT exit_code EQUAL 0)
  message(FATAL_ERROR "wf-conformance-c ${FIXTURES} exited with ${exit_code}")
endif()
