# Process groups and key-value stores of the trial runtime (Gloo over real
# loopback sockets). The tests that reach into trial_runtime/src (rendezvous
# internals) add it to their include path.
set(ring_distributed_tests_dir ${CMAKE_CURRENT_LIST_DIR})

# Debian's Gloo (2022) gives every pair its own listening socket and takes the
# first connection it sees, so two processes connecting Gloo groups on
# 127.0.0.1 at the same moment fail about once in 500 connects (a stress loop
# of this file's tests in two processes; never in one). Tests that connect
# groups in-process hold the gloo_loopback lock.

foreach(distributed_test distributed_store_test distributed_gloo_test distributed_stray_test distributed_rendezvous_test
        distributed_context_test)
  ring_add_test(${distributed_test} LABEL unit TIMEOUT 180 RESOURCE_LOCK gloo_loopback
    SOURCES ${ring_distributed_tests_dir}/${distributed_test}.cc
    LIBS ringtrial)
  target_include_directories(${distributed_test} PRIVATE
    ${ring_distributed_tests_dir}/../../trial_runtime/src)
endforeach()
target_link_libraries(distributed_rendezvous_test PRIVATE nlohmann_json::nlohmann_json)

# One rank per process: the helper each test process starts.
add_executable(distributed_rank_helper ${ring_distributed_tests_dir}/distributed_rank_main.cc)
target_link_libraries(distributed_rank_helper PRIVATE ringtrial ring_warnings)

ring_add_test(distributed_process_test LABEL unit TIMEOUT 180 RESOURCE_LOCK gloo_loopback
  SOURCES ${ring_distributed_tests_dir}/distributed_process_test.cc
  LIBS ring_test_support)
target_compile_definitions(distributed_process_test PRIVATE
  DISTRIBUTED_RANK_HELPER="$<TARGET_FILE:distributed_rank_helper>")
add_dependencies(distributed_process_test distributed_rank_helper)

# MasterStore and a Gloo group through a real master and agents.
ring_add_test(distributed_store_integration_test LABEL integration TIMEOUT 180
  SOURCES ${ring_distributed_tests_dir}/../integration/distributed_store_test.cc
  LIBS ring_test_support ringtrial)
add_dependencies(distributed_store_integration_test ringmaster ringagent)
