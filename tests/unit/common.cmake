ring_add_test(experiment_config_test LABEL unit
  SOURCES unit/experiment_config_test.cc unit/experiment_config_errors_test.cc LIBS ring_common)
ring_add_test(archive_test LABEL unit
  SOURCES unit/archive_test.cc unit/archive_unpack_test.cc LIBS ring_common LibArchive::LibArchive)
ring_add_test(states_test LABEL unit SOURCES unit/states_test.cc LIBS ring_common)
ring_add_test(agent_protocol_test LABEL unit SOURCES unit/agent_protocol_test.cc LIBS ring_common)
# TLS clients: https URLs, CA files, what a failed verification says (certificates made at test time).
ring_add_test(tls_client_test LABEL unit SOURCES unit/tls_client_test.cc LIBS ring_common ring_test_support OpenSSL::SSL)
