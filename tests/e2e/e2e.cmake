ring_add_test(agent_loss_e2e_test LABEL e2e TIMEOUT 180
  SOURCES e2e/agent_loss_e2e_test.cc
  LIBS ring_test_support ring_common)
add_dependencies(agent_loss_e2e_test ringmaster ringagent ring)

ring_add_test(quadratic_e2e_test LABEL e2e TIMEOUT 180
  SOURCES e2e/quadratic_e2e_test.cc
  LIBS ring_test_support ring_common)
add_dependencies(quadratic_e2e_test ringmaster ringagent ring quadratic_model)

ring_add_test(fault_tolerance_e2e_test LABEL e2e TIMEOUT 300
  SOURCES e2e/fault_tolerance_e2e_test.cc
  LIBS ring_test_support ring_common)
add_dependencies(fault_tolerance_e2e_test ringmaster ringagent ring quadratic_model)

ring_add_test(search_e2e_test LABEL e2e TIMEOUT 300
  SOURCES e2e/search_e2e_test.cc
  LIBS ring_test_support ring_common)
add_dependencies(search_e2e_test ringmaster ringagent ring quadratic_model quadratic_trial)

ring_add_test(scheduling_e2e_test LABEL e2e TIMEOUT 240
  SOURCES e2e/scheduling_e2e_test.cc
  LIBS ring_test_support ring_common)
add_dependencies(scheduling_e2e_test ringmaster ringagent ring quadratic_model)

# The digits-pytorch example (PyTorch DDP over the ringtrial Python module) on
# two agents; skips when /usr/bin/python3 has no torch or the module was not built.
ring_add_test(digits_pytorch_e2e_test LABEL e2e TIMEOUT 300
  SOURCES e2e/digits_pytorch_e2e_test.cc
  LIBS ring_test_support ring_common)
add_dependencies(digits_pytorch_e2e_test ringmaster ringagent ring)
if(TARGET digits_pytorch_model)
  add_dependencies(digits_pytorch_e2e_test digits_pytorch_model)
endif()

# The svm example (a data-parallel linear SVM, plain C++) on two agents;
# skips without Debian's python3-sklearn (the digits data).
ring_add_test(svm_e2e_test LABEL e2e TIMEOUT 300
  SOURCES e2e/svm_e2e_test.cc
  LIBS ring_test_support ring_common)
add_dependencies(svm_e2e_test ringmaster ringagent ring svm_model)
