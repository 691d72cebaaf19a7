# Data-parallel training helpers of the trial runtime (DistributedSampler,
# GradientReducer). sampler_test also pins the internal generators in
# trial_runtime/src; reducer_test runs over the in-process FakeThreadGroup.
set(ring_training_tests_dir ${CMAKE_CURRENT_LIST_DIR})

ring_add_test(sampler_test LABEL unit
  SOURCES ${ring_training_tests_dir}/sampler_test.cc
  LIBS ringtrial)
target_include_directories(sampler_test PRIVATE ${ring_training_tests_dir}/../../trial_runtime/src)

ring_add_test(reducer_test LABEL unit
  SOURCES ${ring_training_tests_dir}/reducer_test.cc
  LIBS ringtrial)
target_include_directories(reducer_test PRIVATE ${ring_training_tests_dir}/..)

# The svm example's core (examples/svm): hinge-loss gradients, the weights
# file, and two ranks over Gloo following one; the data-set tests skip
# without Debian's python3-sklearn.
ring_add_test(svm_model_test LABEL unit TIMEOUT 180 RESOURCE_LOCK gloo_loopback
  SOURCES ${ring_training_tests_dir}/svm_model_test.cc
  LIBS svm_core)
