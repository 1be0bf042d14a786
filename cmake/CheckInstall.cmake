# ctest helper: installs the build into a scratch prefix, then compiles and runs a small
# program with nothing but `pkg-config --cflags --libs workflow` from that prefix.
#
#   cmake -DBUILD_DIR=<build> -DPREFIX=<scratch> -DSOURCE=<file.c> -DCC=<compiler>
#         -DPKG_CONFIG=<pkg-config> -P CheckInstall.cmake
cmake_minimum_required(VERSION 3.25)

file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}"
  RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "cmake --install failed")
endif()
foreach(file IN ITEMS include/workflow.h lib/libworkflow.so lib/pkgconfig/workflow.pc)
  if(NOT EXISTS "${PREFIX}/${file}")
    message(FATAL_ERROR "not installed: ${PREFIX}/${file}")
  endif()
endforeach()

set(ENV{PKG_CONFIG_PATH} "${PREFIX}/lib/pkgconfig")
execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs workflow
  OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "pkg-config --cflags --libs workflow failed")
endif()
message("pkg-config --cflags --libs workflow: ${flags}")
separate_arguments(flags UNIX_COMMAND "${flags}")

execute_process(COMMAND "${CC}" -std=c99 -Wall -Wextra -Werror "${SOURCE}" ${flags}
                        "-Wl,-rpath,${PREFIX}/lib" -o "${PREFIX}/pkg_config_smoke"
  RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "compiling against the installed prefix failed")
endif()
execute_process(COMMAND "${PREFIX}/pkg_config_smoke" RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "the program built against the installed prefix failed")
endif()
file(REMOVE_RECURSE "${PREFIX}")
