# SPDX-License-Identifier: MIT
# Man pages: docs/clove.3, and for every other name in its NAME section a
# link page NAME.3 that holds ".so man3/clove.3" (man-db's convention for
# one page documenting several names), so that `man clove_fork` and
# `man CLOVE_MAX_THREADS` show clove.3. The NAME section is the list: the
# names before "\-", separated by commas, across any number of lines;
# request and comment lines (".na", ".\"") are skipped and the escapes \%
# and \& are dropped. The link pages are written at configure time into
# ${PROJECT_BINARY_DIR}/man/man3, and docs/clove.3 is a configure
# dependency, so editing it re-runs the configure step at the next build.
# scripts/check-man.sh checks the NAME section against include/clove.h and
# the installed pages.

set(clove_man_page ${PROJECT_SOURCE_DIR}/docs/clove.3)
set(clove_man_dir ${PROJECT_BINARY_DIR}/man/man3)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${clove_man_page})

file(READ ${clove_man_page} clove_man_text)
string(FIND "${clove_man_text}" "\n.SH NAME\n" clove_man_at)
if(clove_man_at EQUAL -1)
  message(FATAL_ERROR "${clove_man_page}: no line \".SH NAME\"")
endif()
math(EXPR clove_man_at "${clove_man_at} + 10")
string(SUBSTRING "${clove_man_text}" ${clove_man_at} -1 clove_man_text)
# The section up to the next ".SH", with a newline in front so that its
# first line is matched like the others, without request and comment lines.
string(FIND "${clove_man_text}" "\n.SH" clove_man_at)
if(NOT clove_man_at EQUAL -1)
  math(EXPR clove_man_at "${clove_man_at} + 1")
endif()
string(SUBSTRING "\n${clove_man_text}" 0 ${clove_man_at} clove_man_text)
string(REGEX REPLACE "\n[.'][^\n]*" "" clove_man_text "${clove_man_text}")
string(FIND "${clove_man_text}" "\\-" clove_man_at)
if(clove_man_at EQUAL -1)
  message(FATAL_ERROR "${clove_man_page}: the NAME section has no \"\\-\"")
endif()
string(SUBSTRING "${clove_man_text}" 0 ${clove_man_at} clove_man_names)
string(REPLACE "\\%" "" clove_man_names "${clove_man_names}")
string(REPLACE "\\&" "" clove_man_names "${clove_man_names}")
string(REGEX REPLACE "[ \t\n]+" "" clove_man_names "${clove_man_names}")
string(REPLACE "," ";" clove_man_names "${clove_man_names}")

set(clove_man_links "")
foreach(clove_man_name IN LISTS clove_man_names)
  if(NOT clove_man_name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR
      "${clove_man_page}: \"${clove_man_name}\" in the NAME section is not a C identifier")
  endif()
  if(NOT clove_man_name STREQUAL "clove")
    list(APPEND clove_man_links ${clove_man_dir}/${clove_man_name}.3)
  endif()
endforeach()
list(REMOVE_DUPLICATES clove_man_links)

# Write each link page unless it already holds the line; remove pages of
# names no longer listed.
file(MAKE_DIRECTORY ${clove_man_dir})
file(GLOB clove_man_old ${clove_man_dir}/*.3)
foreach(clove_man_file IN LISTS clove_man_old)
  list(FIND clove_man_links ${clove_man_file} clove_man_at)
  if(clove_man_at EQUAL -1)
    file(REMOVE ${clove_man_file})
  endif()
endforeach()
foreach(clove_man_file IN LISTS clove_man_links)
  set(clove_man_have "")
  if(EXISTS ${clove_man_file})
    file(READ ${clove_man_file} clove_man_have)
  endif()
  if(NOT clove_man_have STREQUAL ".so man3/clove.3\n")
    file(WRITE ${clove_man_file} ".so man3/clove.3\n")
  endif()
endforeach()

install(FILES ${clove_man_page} ${clove_man_links}
  DESTINATION ${CMAKE_INSTALL_MANDIR}/man3)
