# Install rules: the library, its header, and a pkg-config file.
#
#   <prefix>/lib/libworkflow.so
#   <prefix>/include/workflow.h
#   <prefix>/lib/pkgconfig/workflow.pc     (Requires: jansson)
#
# The .pc file is written at install time, so `cmake --install build --prefix P`
# records P, not the prefix the build was configured with.

install(IMPORTED_RUNTIME_ARTIFACTS workflow::workflow
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}")

install(FILES "${PROJECT_SOURCE_DIR}/include/workflow.h"
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

set(_wf_pc_file "${PROJECT_BINARY_DIR}/pkgconfig/workflow.pc")
install(CODE "
  set(WF_PC_TEMPLATE \"${PROJECT_SOURCE_DIR}/workflow.pc.in\")
  set(WF_PC_OUTPUT \"${_wf_pc_file}\")
  set(WF_PC_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(WF_PC_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
  set(WF_PC_VERSION \"${PROJECT_VERSION}\")
  set(WF_PC_DESCRIPTION \"${PROJECT_DESCRIPTION}\")
  include(\"${CMAKE_CURRENT_LIST_DIR}/WorkflowPkgConfig.cmake\")
")
install(FILES "${_wf_pc_file}" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
