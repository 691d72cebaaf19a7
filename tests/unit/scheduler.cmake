# The scheduler: unit tests of the core's pieces (water filling, never-fits,
# placement index), and the scenario files under tests/scheduler/scenarios run by a table-driven runner.
ring_add_test(scheduler_core_test LABEL unit SOURCES unit/scheduler_core_test.cc LIBS ring_scheduler)
ring_add_test(scheduler_scenario_test LABEL unit
  SOURCES unit/scheduler_scenario_test.cc LIBS ring_scheduler yaml-cpp)
target_compile_definitions(scheduler_scenario_test PRIVATE
  RING_SCHEDULER_SCENARIOS_DIR="${PROJECT_SOURCE_DIR}/tests/scheduler/scenarios")
