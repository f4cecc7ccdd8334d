# SPDX-License-Identifier: MIT
# CTest script: including clove.hpp below C++17 stops with exactly one
# diagnostic, clove.hpp's own #error, and <clove.h> alone still compiles
# there. Run as: cmake -DCXX=compiler -DINCLUDE=dir -DWORK=dir -P cxx_std_check.cmake
foreach(v CXX INCLUDE WORK)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "cxx_std_check.cmake: -D${v}=... is required")
  endif()
endforeach()
file(WRITE ${WORK}/cxx14_hpp.cpp "#include <clove.hpp>\nint main() { return 0; }\n")
file(WRITE ${WORK}/cxx14_h.cpp
  "#include <clove.h>\nint main() { return clove_version() == CLOVE_VERSION ? 0 : 1; }\n")
execute_process(COMMAND ${CXX} -std=c++14 -I${INCLUDE} -fsyntax-only ${WORK}/cxx14_hpp.cpp
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "clove.hpp compiled as C++14; it must stop with an #error:\n${out}")
endif()
string(REGEX MATCHALL "error:" errors "${out}")
list(LENGTH errors nerrors)
if(NOT nerrors EQUAL 1 OR NOT out MATCHES "clove.hpp needs C\\+\\+17 or later")
  message(FATAL_ERROR "expected one error naming C++17, got ${nerrors}:\n${out}")
endif()
execute_process(COMMAND ${CXX} -std=c++11 -Wall -Wextra -Wpedantic -Werror -I${INCLUDE}
  -fsyntax-only ${WORK}/cxx14_h.cpp
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "clove.h did not compile as C++11:\n${out}")
endif()
message(STATUS "clove.hpp below C++17: one error naming C++17; clove.h compiles as C++11")
