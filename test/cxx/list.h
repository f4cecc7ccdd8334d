/* SPDX-License-Identifier: MIT */
/* The C++ interface tests, one X(name) per line: test_cxx.cpp defines
 * test_<name>, and test/CMakeLists.txt registers clove.cxx_<name> for each
 * line, as it does for the C tests of test/list.h. */
X(pool_basics)
X(join_tree_sum)
X(join_kinds)
X(join_sides)
X(join_exceptions)
X(parallel_for)
X(parallel_for_exceptions)
X(reduce)
X(reduce_exceptions)
X(sort)
X(scope)
X(scope_exceptions)
X(cancel_in_run)
X(run_current)
X(reduce_deterministic)
X(cancel)
