# The lifecycle: why an allocation ended (EndCause) and what then happens to
# its trial (DecideOutcome, table-tested from tests/lifecycle/outcomes).
ring_add_test(end_cause_test LABEL unit SOURCES unit/end_cause_test.cc LIBS ring_common)
ring_add_test(allocation_outcome_scenario_test LABEL unit
  SOURCES unit/allocation_outcome_scenario_test.cc LIBS ring_allocation_outcome yaml-cpp)
target_compile_definitions(allocation_outcome_scenario_test PRIVATE
  RING_OUTCOME_SCENARIOS_DIR="${PROJECT_SOURCE_DIR}/tests/lifecycle/outcomes"
  RING_FAILURE_MODEL_DOC="${PROJECT_SOURCE_DIR}/docs/failure-model.md")
