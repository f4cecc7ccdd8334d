# SPDX-License-Identifier: MIT
# CTest script: warnings_user.c (the forms of fork a program writes)
# compiles without a warning at -O0, -O1, -O2, -O3 and -Os, with the debug
# checks (no NDEBUG) and without, as C11 and, when CXX is given, as C++17;
# and a program that ignores a join's result does get a warning.
# Run as: cmake -DCC=compiler [-DCXX=compiler] -DINCLUDE=dir -DSRC=file
#               -DWORK=dir -P header_warnings.cmake
foreach(v CC INCLUDE SRC WORK)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "header_warnings.cmake: -D${v}=... is required")
  endif()
endforeach()
set(flags -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Werror -I${INCLUDE} -c -o ${WORK}/warnings_user.o)
set(langs C)
if(DEFINED CXX AND NOT CXX STREQUAL "")
  list(APPEND langs CXX)
endif()
set(n 0)
foreach(lang ${langs})
  if(lang STREQUAL C)
    set(cmd ${CC} -std=c11)
  else()
    set(cmd ${CXX} -std=c++17 -x c++)
  endif()
  foreach(opt -O0 -O1 -O2 -O3 -Os)
    foreach(nd "" -DNDEBUG)
      execute_process(COMMAND ${cmd} ${opt} ${nd} ${flags} ${SRC}
        RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${lang} ${opt} ${nd}: warnings or errors:\n${out}")
      endif()
      math(EXPR n "${n} + 1")
    endforeach()
  endforeach()
endforeach()
file(WRITE ${WORK}/ignored_join.c "#include <clove.h>
void ignore(clove_task *t, clove_future *f) { clove_join(t, f); }
")
execute_process(COMMAND ${CC} -std=c11 -O2 -Wall -I${INCLUDE} -c -o ${WORK}/ignored_join.o
                        ${WORK}/ignored_join.c
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT out MATCHES "clove_join")
  message(FATAL_ERROR "ignoring clove_join's result did not warn:\n${out}")
endif()
message(STATUS "warnings_user.c: no warning in ${n} builds; an ignored join warns")
