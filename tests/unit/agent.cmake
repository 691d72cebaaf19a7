# Agent unit tests (label unit). Test suites are named Agent* so `ctest -R Agent` selects them.

# A stand-in libnvidia-ml for the GPU detector test.
add_library(agent_fake_nvml SHARED unit/agent_fake_nvml.cc)
set_target_properties(agent_fake_nvml PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test-lib)

ring_add_test(agent_core_test LABEL unit
  SOURCES unit/agent_core_test.cc
  LIBS ring_agent_lib)
target_compile_definitions(agent_core_test PRIVATE RING_FAKE_NVML_PATH="$<TARGET_FILE:agent_fake_nvml>")
add_dependencies(agent_core_test agent_fake_nvml)

ring_add_test(agent_process_launcher_test LABEL unit
  SOURCES unit/agent_process_launcher_test.cc
  LIBS ring_agent_lib)

ring_add_test(agent_allocation_runner_test LABEL unit
  SOURCES unit/agent_allocation_runner_test.cc
  LIBS ring_agent_fakes ring_agent_lib)

ring_add_test(agent_master_link_test LABEL unit
  SOURCES unit/agent_master_link_test.cc
  LIBS ring_agent_lib ring_asio)

# The ringagent binary against an in-test fake master (real processes, 127.0.0.1 only).
ring_add_test(agent_daemon_test LABEL integration
  SOURCES unit/agent_daemon_test.cc
  LIBS ring_common ring_asio)
add_dependencies(agent_daemon_test ringagent)

ring_add_test(agent_launcher_conformance_test LABEL unit
  SOURCES unit/agent_launcher_conformance_test.cc
  LIBS ring_agent_fakes ring_agent_lib)

ring_add_test(agent_tls_test LABEL unit
  SOURCES unit/agent_tls_test.cc
  LIBS ring_agent_lib ring_test_support)

ring_add_test(agent_config_file_test LABEL unit SOURCES unit/agent_config_file_test.cc LIBS ring_agent_lib)
target_compile_definitions(agent_config_file_test PRIVATE RING_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
