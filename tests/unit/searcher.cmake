# The searchers: scenario files under tests/searcher/scenarios, grid and
# sampling tables, and snapshot/restore at every step of simulated searches.
# Like ring_add_test, plus the "searcher." name prefix, so that
# `ctest -L unit -R searcher` selects every test of this binary.
add_executable(searcher_scenario_test
  unit/searcher_scenario_test.cc
  unit/searcher_scenario_file.cc
  unit/searcher_grid_test.cc
  unit/searcher_snapshot_test.cc
  unit/searcher_config_test.cc)
target_link_libraries(searcher_scenario_test PRIVATE ring_searcher yaml-cpp ring_warnings GTest::gtest_main)
target_include_directories(searcher_scenario_test PRIVATE ${PROJECT_SOURCE_DIR})
target_compile_definitions(searcher_scenario_test PRIVATE
  RING_SEARCHER_SCENARIOS_DIR="${PROJECT_SOURCE_DIR}/tests/searcher/scenarios")
gtest_discover_tests(searcher_scenario_test TEST_PREFIX "searcher."
  PROPERTIES LABELS unit TIMEOUT 120 DISCOVERY_TIMEOUT 30)
