# Run at every build (cli/CMakeLists.txt): writes OUTPUT with the commit the binary is built
# from ("unknown" outside a git checkout, "+dirty" with uncommitted changes), rewriting the
# file only when that changes so an unchanged tree relinks nothing.
execute_process(COMMAND git -C "${SOURCE_DIR}" describe --always --dirty=+dirty --abbrev=12
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE status ERROR_QUIET)
if(NOT status EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
endif()
set(text "#pragma once\n#define LOCKSTEP_VERSION \"${VERSION}\"\n#define LOCKSTEP_COMMIT \"${commit}\"\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
