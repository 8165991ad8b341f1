# Writes OUT with `#define LACONIC_GIT_DESCRIBE "..."`: `git describe --always --dirty` of SOURCE,
# or "unknown" outside a git checkout. Run at every build; the file changes only when the
# description does, so nothing recompiles otherwise.
execute_process(COMMAND git -C "${SOURCE}" describe --always --dirty --tags
                OUTPUT_VARIABLE describe OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE result ERROR_QUIET)
if(NOT result EQUAL 0 OR describe STREQUAL "")
  set(describe "unknown")
endif()
set(text "#pragma once\n#define LACONIC_GIT_DESCRIBE \"${describe}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE "${OUT}" "${text}")
endif()
