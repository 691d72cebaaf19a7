# Support for tests that start the real binaries.
add_library(ring_test_support STATIC
  support/process.cc support/test_certs.cc support/test_cluster.cc support/netns_cluster.cc)
target_include_directories(ring_test_support PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(ring_test_support PUBLIC ring_common GTest::gtest OpenSSL::Crypto PRIVATE ring_warnings)
# Where the binaries under test and the sources live (RING_BIN_DIR / RING_SOURCE_DIR override).
target_compile_definitions(ring_test_support PRIVATE
  RING_DEFAULT_BIN_DIR="${CMAKE_BINARY_DIR}/bin"
  RING_DEFAULT_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

ring_add_test(master_api_test LABEL integration TIMEOUT 120
  SOURCES integration/master_api_test.cc
  LIBS ring_test_support ring_common)
# The binaries the tests start must be built first.
add_dependencies(master_api_test ringmaster)

ring_add_test(scheduling_api_test LABEL integration TIMEOUT 120
  SOURCES integration/scheduling_api_test.cc
  LIBS ring_test_support ring_common)
add_dependencies(scheduling_api_test ringmaster ringagent ring)

# Limits and a storm of bad requests against a real master.
ring_add_test(bad_requests_test LABEL integration TIMEOUT 120
  SOURCES integration/bad_requests_test.cc
  LIBS ring_test_support ring_common SQLite::SQLite3)
add_dependencies(bad_requests_test ringmaster ringagent)

# TLS end to end: an HTTPS master, an agent over wss, trials and the CLI verifying its certificate.
ring_add_test(tls_test LABEL integration TIMEOUT 240
  SOURCES integration/tls_test.cc
  LIBS ring_test_support ring_common)
add_dependencies(tls_test ringmaster ringagent ring quadratic_model)

# Every route × every kind of caller against a real master (the authorisation matrix).
ring_add_test(authorization_test LABEL integration TIMEOUT 180
  SOURCES integration/authorization_test.cc
  LIBS ring_test_support ring_master_http ring_lifecycle_driver)
add_dependencies(authorization_test ringmaster ringagent ring)

# Users through the real CLI: sign-in, whoami, creation, passwords, deactivation, the first admin.
ring_add_test(users_cli_test LABEL integration TIMEOUT 120
  SOURCES integration/users_cli_test.cc
  LIBS ring_test_support ring_common)
add_dependencies(users_cli_test ringmaster ring)

# Retention through `ring master cleanup` against a real master and agent.
ring_add_test(retention_cli_test LABEL integration TIMEOUT 120
  SOURCES integration/retention_cli_test.cc
  LIBS ring_test_support ring_common)
add_dependencies(retention_cli_test ringmaster ringagent ring)

# `cmake --install` into a temporary prefix: the layout, the systemd units, the installed master serving
# the installed web UI, and a trial built against the installed runtime.
add_test(NAME install_test COMMAND ${PROJECT_SOURCE_DIR}/tests/install/install_test.sh ${CMAKE_BINARY_DIR})
set_tests_properties(install_test PROPERTIES LABELS integration TIMEOUT 180)
