# Writes workflow.pc from workflow.pc.in at install time (included by the install
# script, where CMAKE_INSTALL_PREFIX is the prefix actually installed to).
#
# In: WF_PC_TEMPLATE, WF_PC_OUTPUT, WF_PC_LIBDIR, WF_PC_INCLUDEDIR (relative to the
# prefix or absolute), WF_PC_VERSION, WF_PC_DESCRIPTION, CMAKE_INSTALL_PREFIX.

set(WF_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
foreach(kind IN ITEMS LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${WF_PC_${kind}}")
    set(WF_PC_FULL_${kind} "${WF_PC_${kind}}")
  else()
    set(WF_PC_FULL_${kind} "\${prefix}/${WF_PC_${kind}}")
  endif()
endforeach()
configure_file("${WF_PC_TEMPLATE}" "${WF_PC_OUTPUT}" @ONLY)
