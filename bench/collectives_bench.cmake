# collectives_bench: allreduce between ranks on this host, hierarchical
# (shared memory + Gloo) against plain Gloo. Included by bench/CMakeLists.txt.
add_executable(collectives_bench ${CMAKE_CURRENT_LIST_DIR}/collectives_bench.cc)
target_link_libraries(collectives_bench PRIVATE ringtrial ring_warnings)
target_compile_definitions(collectives_bench PRIVATE RING_BUILD_TYPE="${CMAKE_BUILD_TYPE}")
