# Real masters, agents and CLI on 127.0.0.1, one binary:
#   master_api_test         the REST API
#   scheduling_api_test     pools, priorities and the queue through the API and CLI
#   bad_requests_test       limits and a storm of bad requests
#   hardening_test          security headers, private data folder, log bytes and pages, hidden tokens,
#                           admin-set bounds, pools for named users
#   limits_test             limits without credentials: metric labels, connections per address, sign-in queue
#                           and lockout, bodies after the token, log rates and pages, security headers, ...
#   checkpoint_permissions_test  the shared checkpoint folder's modes with real Unix accounts and a master
#                           running as its own account
#   checkpoint_security_test  links, unissued names and swapped folders in checkpoint storage; the download
#                           rule; allowed storage roots; streamed answers and their limit
#   tls_test                an HTTPS master, an agent over wss, trials and the CLI verifying its certificate
#   authorization_test      every route × every kind of caller (the authorisation matrix)
#   users_cli_test          sign-in, whoami, creation, passwords, deactivation, the first admin
#   unix_accounts_test      linking users to Unix accounts (admins only), own passwords, agents' modes
#   retention_cli_test      `ring master cleanup` against a real master and agent
#   webui_http_test         ETag/304 on the API, cache headers and the web UI's client-route fallback
#   distributed_store_test  MasterStore and a Gloo group through a real master and agents
#   sharded_checkpoint_integration_test  two ranks write one sharded checkpoint through a real master
#   rendezvous_integration_test  multi-node rendezvous, MASTER_PORT and rank order on real agents
#   trial_isolation_test    trials run as their account in a 0700 folder, see no agent secret, and take
#                           every process (setsid, double fork) with them (needs root)
ring_add_test(integration_tests LABEL integration TIMEOUT 240
  SOURCES
    integration/authorization_test.cc
    integration/bad_requests_test.cc
    integration/checkpoint_permissions_test.cc
    integration/checkpoint_security_test.cc
    integration/distributed_store_test.cc
    integration/hardening_test.cc
    integration/limits_test.cc
    integration/master_api_test.cc
    integration/rendezvous_integration_test.cc
    integration/retention_cli_test.cc
    integration/scheduling_api_test.cc
    integration/sharded_checkpoint_integration_test.cc
    integration/tls_test.cc
    integration/trial_isolation_test.cc
    integration/unix_accounts_test.cc
    integration/users_cli_test.cc
    integration/webui_http_test.cc
  LIBS ring_test_support ring_common ring_master_http ring_lifecycle_driver ringtrial SQLite::SQLite3)
# Compiled alone, so the other files' unity batches stay as they were.
set_source_files_properties(integration/sharded_checkpoint_integration_test.cc
  PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
# The binaries the tests start must be built first.
add_dependencies(integration_tests ringmaster ringagent ring quadratic_model)

# The terminal endpoint on a real HttpServer with the CLI's real client on
# a pseudo-terminal, the agent played by the test.
ring_add_test(terminal_endpoint_tests LABEL integration
  SOURCES integration/terminal_endpoint_test.cc
  LIBS ring_master_http ring_cli_lib ring_test_support ring_common util)
set_source_files_properties(integration/terminal_endpoint_test.cc PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)

# Terminal tickets (how a browser opens a shell's terminal) against a real
# master and agent, through a raw WebSocket client.
ring_add_test(terminal_ticket_tests LABEL integration TIMEOUT 180
  SOURCES integration/terminal_ticket_test.cc
  LIBS ring_test_support ring_common)
add_dependencies(terminal_ticket_tests ringmaster ringagent)

# Agents prove who they are: enrolment, credentials, removal, rotation, and
# fake agents (a raw WebSocket client) attacking a real master and agent.
ring_add_test(agent_identity_tests LABEL integration TIMEOUT 240
  SOURCES integration/agent_identity_test.cc
  LIBS ring_test_support ring_fake_agent ring_common)
add_dependencies(agent_identity_tests ringmaster ringagent ring)

# Silence after hello: the heartbeat deadline closes a quiet agent's
# connection, a heartbeating one stays (raw WebSocket clients).
ring_add_test(agent_silence_tests LABEL integration TIMEOUT 60
  SOURCES integration/agent_silence_test.cc
  LIBS ring_test_support ring_fake_agent ring_common)
add_dependencies(agent_silence_tests ringmaster)

# `cmake --install` into a temporary prefix: the layout, the systemd units, the installed master serving
# the installed web UI, and a trial built against the installed runtime.
add_test(NAME install_test COMMAND ${PROJECT_SOURCE_DIR}/tests/install/install_test.sh ${CMAKE_BINARY_DIR})
set_tests_properties(install_test PROPERTIES LABELS integration TIMEOUT 180 COST ${RING_TEST_COST_INTEGRATION})
