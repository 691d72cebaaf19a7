# The lifecycle driven on the test's own thread (tests/support/lifecycle_driver.h),
# for the lifecycle's component tests and the API fuzz target.
if(NOT TARGET ring_lifecycle_driver)
  add_library(ring_lifecycle_driver STATIC ${PROJECT_SOURCE_DIR}/tests/support/lifecycle_driver.cc)
  target_include_directories(ring_lifecycle_driver PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(ring_lifecycle_driver PUBLIC ring_master_http PRIVATE ring_warnings)
endif()
