/*
 * list.h - every test of clove_tests, one X(name) per line.
 *
 * test/CMakeLists.txt reads this file to register each line as the CTest
 * test clove.<name>, so keep exactly one X(...) per line, at its start.
 */
X(joblist_deep_no_heartbeat)
X(joblist_lifo_sequences)
X(joblist_many_forks_sharing)
X(join2_basic)
X(fork_not_taken)
X(fork_taken)
X(fork_shared_then_joined)
X(tree_random_shapes)
X(external_threads_run)
X(nested_run_same_pool)
X(nested_run_other_pool)
X(for_edge_ranges)
X(for_large)
X(for_near_size_max)
X(for_nested_three_deep)
X(for_in_forked_jobs)
X(for_irregular_cost)
X(for_full_size_range)
X(for_body_forks)
X(create_destroy_cycles)
X(single_thread_pool_no_threads)
X(einval_paths)
X(fault_injection_walk)
X(create_huge_stack_fails)
X(misuse_aborts)
X(misuse_join_twice_taken_message)
X(stress_mix)
X(idle_pool_sleeps)
