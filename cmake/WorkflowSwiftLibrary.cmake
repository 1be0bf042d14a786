# workflow::workflow -- the Swift-built libworkflow.so as an imported C library.
#
# SwiftPM owns the build of the engine; CMake only consumes its product. With
# WF_BUILD_SWIFT (the default) the custom target workflow_swift_build runs
# `swift build -c release --product workflow` on every build, so targets that link
# workflow::workflow always see a current library. SwiftPM's own up-to-date check makes
# that cheap when nothing changed.

function(wf_add_swift_library)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(JANSSON REQUIRED IMPORTED_TARGET GLOBAL jansson)

  set(library "${WF_SWIFT_BUILD_DIR}/libworkflow.so")

  add_library(workflow::workflow SHARED IMPORTED GLOBAL)
  set_target_properties(workflow::workflow PROPERTIES
    IMPORTED_LOCATION "${library}"
    # SwiftPM does not give the library a SONAME: link it by name (-lworkflow) so
    # executables record "libworkflow.so", not the build path, and find it by rpath.
    IMPORTED_NO_SONAME TRUE
    INTERFACE_INCLUDE_DIRECTORIES "${PROJECT_SOURCE_DIR}/include"
    INTERFACE_LINK_LIBRARIES PkgConfig::JANSSON)

  if(WF_BUILD_SWIFT)
    find_program(SWIFT_EXECUTABLE swift REQUIRED)
    # SwiftPM puts release products in <scratch>/release (a link to <scratch>/<triple>/release).
    get_filename_component(configuration "${WF_SWIFT_BUILD_DIR}" NAME)
    get_filename_component(scratch "${WF_SWIFT_BUILD_DIR}" DIRECTORY)
    if(NOT configuration STREQUAL "release")
      message(FATAL_ERROR
        "WF_SWIFT_BUILD_DIR (${WF_SWIFT_BUILD_DIR}) must end in /release when WF_BUILD_SWIFT is ON; "
        "set -DWF_BUILD_SWIFT=OFF to use a prebuilt libworkflow.so from another folder.")
    endif()
    # No BYPRODUCTS on purpose: generators delete byproducts on "clean", and SwiftPM's
    # .build folder is not ours to delete.
    add_custom_target(workflow_swift_build ALL
      COMMAND "${SWIFT_EXECUTABLE}" build -c release --product workflow --scratch-path "${scratch}"
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
      COMMENT "Building libworkflow.so with SwiftPM (swift build -c release --product workflow)"
      USES_TERMINAL
      VERBATIM)
    # Dependencies of an imported target are followed by every target that links it.
    add_dependencies(workflow::workflow workflow_swift_build)
  elseif(NOT EXISTS "${library}")
    message(WARNING "WF_BUILD_SWIFT is OFF and ${library} does not exist (yet)")
  endif()
endfunction()
