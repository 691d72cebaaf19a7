ring_add_test(scheduler_test LABEL unit SOURCES unit/scheduler_test.cc LIBS ring_master_core)
ring_add_test(experiment_controller_test LABEL unit SOURCES unit/experiment_controller_test.cc LIBS ring_master_core)
ring_add_test(checkpoint_gc_test LABEL unit SOURCES unit/checkpoint_gc_test.cc LIBS ring_master_core)
