# Distributed trials on the master: rendezvous store, MASTER_PORT, its REST routes, rank order.
ring_add_test(rendezvous_store_test LABEL unit
  SOURCES unit/rendezvous_store_test.cc unit/port_registry_test.cc LIBS ring_master_core)
ring_add_test(rendezvous_api_test LABEL unit
  SOURCES unit/rendezvous_api_test.cc LIBS ring_master_http ring_lifecycle_driver)
ring_add_test(lifecycle_distributed_test LABEL unit
  SOURCES unit/lifecycle_distributed_test.cc LIBS ring_master_core ring_lifecycle_driver)

# A real master and agents (tests/support's TestCluster).
ring_add_test(rendezvous_integration_test LABEL integration TIMEOUT 180
  SOURCES integration/rendezvous_integration_test.cc
  LIBS ring_test_support ring_common)
add_dependencies(rendezvous_integration_test ringmaster ringagent)

# An unmodified torchrun-style script (examples/torchrun-script) on two agents;
# skips when /usr/bin/python3 has no torch.
ring_add_test(torchrun_script_e2e_test LABEL e2e TIMEOUT 300
  SOURCES e2e/torchrun_script_e2e_test.cc
  LIBS ring_test_support ring_common)
add_dependencies(torchrun_script_e2e_test ringmaster ringagent ring)
