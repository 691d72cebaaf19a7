# Tests of the master's store (master/store).
ring_add_test(store_conformance_test LABEL unit
  SOURCES unit/store_conformance_test.cc
  LIBS ring_master_store)
ring_add_test(store_sqlite_test LABEL unit
  SOURCES unit/store_sqlite_test.cc
  LIBS ring_master_store SQLite::SQLite3)
ring_add_test(store_checkpoints_test LABEL unit SOURCES unit/store_checkpoints_test.cc LIBS ring_master_store)
ring_add_test(store_searcher_test LABEL unit SOURCES unit/store_searcher_test.cc LIBS ring_master_store)
ring_add_test(store_scheduling_test LABEL unit SOURCES unit/store_scheduling_test.cc LIBS ring_master_store)
ring_add_test(store_users_test LABEL unit SOURCES unit/store_users_test.cc LIBS ring_master_store)
ring_add_test(store_metrics_test LABEL unit SOURCES unit/store_metrics_test.cc LIBS ring_master_store)
