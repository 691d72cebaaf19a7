ring_add_test(lifecycle_test LABEL unit SOURCES unit/lifecycle_test.cc LIBS ring_master_core ring_lifecycle_driver)
ring_add_test(checkpoint_gc_test LABEL unit SOURCES unit/checkpoint_gc_test.cc LIBS ring_master_core)
ring_add_test(lifecycle_search_test LABEL unit
  SOURCES unit/lifecycle_search_test.cc LIBS ring_master_core ring_lifecycle_driver)
ring_add_test(cli_preview_test LABEL unit SOURCES unit/cli_preview_test.cc LIBS ring_cli_lib)
ring_add_test(master_config_test LABEL unit SOURCES unit/master_config_test.cc LIBS ring_master)
target_compile_definitions(master_config_test PRIVATE RING_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
ring_add_test(lifecycle_scheduling_test LABEL unit
  SOURCES unit/lifecycle_scheduling_test.cc LIBS ring_master_core ring_lifecycle_driver)
ring_add_test(log_limiter_test LABEL unit SOURCES unit/log_limiter_test.cc LIBS ring_master_core)
ring_add_test(cluster_token_test LABEL unit SOURCES unit/cluster_token_test.cc LIBS ring_master)
ring_add_test(master_tls_config_test LABEL unit
  SOURCES unit/master_tls_config_test.cc LIBS ring_master ring_test_support)
ring_add_test(accounts_test LABEL unit SOURCES unit/accounts_test.cc LIBS ring_master_core)
ring_add_test(openapi_test LABEL unit SOURCES unit/openapi_test.cc LIBS ring_master_http ring_lifecycle_driver)
ring_add_test(master_metrics_test LABEL unit SOURCES unit/master_metrics_test.cc LIBS ring_master_core)
ring_add_test(log_format_test LABEL unit SOURCES unit/log_format_test.cc LIBS ring_logging)
ring_add_test(retention_test LABEL unit SOURCES unit/retention_test.cc LIBS ring_master_core SQLite::SQLite3)
