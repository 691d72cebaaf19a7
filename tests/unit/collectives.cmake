# Collectives beyond Gloo: the shared-memory local group, the hierarchical
# backend and the nccl backend. The tests include trial_runtime/src for the
# internal headers (ringtrial exports those symbols).
set(ring_collectives_tests_dir ${CMAKE_CURRENT_LIST_DIR})

foreach(collectives_test shm_local_group_test hierarchical_test nccl_test)
  ring_add_test(${collectives_test} LABEL unit TIMEOUT 180 RESOURCE_LOCK gloo_loopback
    SOURCES ${ring_collectives_tests_dir}/${collectives_test}.cc
    LIBS ringtrial)
  target_include_directories(${collectives_test} PRIVATE
    ${ring_collectives_tests_dir}/../../trial_runtime/src ${ring_collectives_tests_dir}/..)
endforeach()

# The GPU half of nccl_test allocates device buffers itself.
if(RING_HAVE_NCCL)
  find_package(CUDAToolkit REQUIRED)
  target_compile_definitions(nccl_test PRIVATE RING_HAVE_NCCL)
  target_link_libraries(nccl_test PRIVATE CUDA::cudart_static)
endif()
