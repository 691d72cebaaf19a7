# The digits-libtorch example and ringtrial_torch (owned by that area). The
# loader's test needs zlib only and always runs; the ones that need libtorch
# are built only when trial_runtime/torch found it. The end-to-end test is
# always built and skips itself, saying why, in a build without libtorch.
set(ring_torch_tests_dir ${CMAKE_CURRENT_LIST_DIR})
find_package(ZLIB REQUIRED)

ring_add_test(digits_data_test LABEL unit
  SOURCES ${ring_torch_tests_dir}/digits_data_test.cc
  LIBS digits_data ZLIB::ZLIB)

# The digits-libtorch example on a cluster on loopback, and on one whose
# master and agents have network namespaces of their own.
if(TARGET ringtrial_torch)
  set(ring_have_torch 1)
else()
  set(ring_have_torch 0)
endif()
foreach(test digits_e2e_test digits_netns_e2e_test)
  ring_add_test(${test} LABEL e2e TIMEOUT 300
    SOURCES ${ring_torch_tests_dir}/../e2e/${test}.cc ${ring_torch_tests_dir}/../e2e/digits_harness.cc
    LIBS ring_test_support ring_common)
  target_compile_definitions(${test} PRIVATE RING_HAVE_TORCH=${ring_have_torch})
  add_dependencies(${test} ringmaster ringagent ring)
  if(TARGET digits_model)
    add_dependencies(${test} digits_model)
  endif()
endforeach()

if(NOT TARGET ringtrial_torch)
  return()
endif()
find_package(Torch REQUIRED)

ring_add_test(digits_trial_test LABEL unit TIMEOUT 180
  SOURCES ${ring_torch_tests_dir}/digits_trial_test.cc
  LIBS ring_test_support ring_common)
target_compile_definitions(digits_trial_test PRIVATE DIGITS_TRIAL_PATH="$<TARGET_FILE:digits_trial>")
add_dependencies(digits_trial_test digits_trial)

ring_add_test(torch_distributed_module_test LABEL unit TIMEOUT 180 RESOURCE_LOCK gloo_loopback
  SOURCES ${ring_torch_tests_dir}/torch_distributed_module_test.cc
  LIBS ringtrial_torch)
