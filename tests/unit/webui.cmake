# The web UI and what the master serves it: metric series (LTTB), the
# experiments list's query, conditional GET, gzip of kept answers and the
# response cache, static files, the routes the
# pages read; the UI's own unit tests (Vitest) and its end-to-end test in
# Debian's chromium against a real master, agents and search.
ring_add_test(webui_server_test LABEL unit
  SOURCES unit/metric_series_test.cc unit/experiment_query_test.cc unit/conditional_get_test.cc
          unit/content_encoding_test.cc unit/response_cache_test.cc unit/static_files_test.cc
  LIBS ring_master_http ZLIB::ZLIB)
ring_add_test(webui_api_test LABEL unit SOURCES unit/webui_api_test.cc LIBS ring_master_http ring_lifecycle_driver)

# Real HTTP: ETag/304 on the API, cache headers and the client-route fallback.
ring_add_test(webui_http_test LABEL integration TIMEOUT 120
  SOURCES integration/webui_http_test.cc
  LIBS ring_test_support ring_common)
add_dependencies(webui_http_test ringmaster)

if(RING_WEBUI_NPM)
  add_test(NAME webui_vitest COMMAND ${RING_WEBUI_NPM} run --silent test
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/webui)
  set_tests_properties(webui_vitest PROPERTIES LABELS "unit;webui" TIMEOUT 300)

  # Starts ringmaster and two ringagents from this build, runs a grid search of
  # the quadratic example, drives chromium through the four pages and saves
  # screenshots in test-artifacts/webui.
  add_test(NAME webui_e2e COMMAND ${RING_WEBUI_NODE} ${PROJECT_SOURCE_DIR}/webui/e2e/webui.e2e.mjs
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/webui)
  set_tests_properties(webui_e2e PROPERTIES LABELS "e2e;webui" TIMEOUT 300
    ENVIRONMENT "RING_BIN_DIR=${CMAKE_BINARY_DIR}/bin;RING_BUILD_DIR=${CMAKE_BINARY_DIR};RING_SOURCE_DIR=${PROJECT_SOURCE_DIR};RING_ARTIFACTS_DIR=${CMAKE_BINARY_DIR}/test-artifacts/webui")
endif()
